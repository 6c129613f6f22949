"""torch.linalg's real decompositions: svd / svdvals and the legacy torch.svd, eigh / eigvalsh,
qr and the legacy torch.qr, on (*, m, n) float32/float64 batches. They appear in
``tapegrad.linalg`` (registered with ``linalg=``) and, where torch has them, at the top level and
as Tensor methods (``svd``, ``qr``).

One Function per decomposition, recorded under torch's node name: :class:`Svd`
(LinalgSvdBackward0, also behind the 'nuc' / 2 / -2 matrix norms of ops/linalg_extra.py),
:class:`Eigh` (LinalgEighBackward0), :class:`Qr` (LinalgQrBackward0). Their derivatives are
derivatives.yaml's real-case formulas (_linalg_svd: svd_backward; _linalg_eigh:
linalg_eig_backward with is_hermitian=true; linalg_qr: linalg_qr_backward), written with Tensor
ops so that double backward follows from them.

Singular vectors, eigenvectors and the columns of Q are unique only up to sign; the signs here
are those of NumPy's LAPACK and may differ from torch's. Derivatives through singular vectors or
eigenvectors assume distinct singular values / eigenvalues, as torch's: where two coincide the
formulas divide by zero and give inf or NaN, as torch's do.

Layout as torch's LAPACK results: U, Vh, eigenvectors, Q and R are column-major in their last two
dims (``stride()`` (..., 1, m)); S and the eigenvalues are C-ordered.

tapegrad has no complex dtype, so linalg.eig and linalg.eigvals (complex results) are not here.
"""
from __future__ import annotations

import warnings

import numpy as np

from .._memory_format import _c_strides, _empty_view
from ..autograd.function import ArrayFunction
from ..autograd.grad_mode import state as _grad_state
from ._registry import op
from ._util import _make
from .linalg_extra import (
    LinAlgError,
    Solve,
    _batch_prefix,
    _check_float,
    _dtype_name,
    _return_type,
)
from .shape import cat


# ---- layout and argument checks -----------------------------------------------------------------
def _lapack_layout(x):
    """``x`` laid out as torch's LAPACK results: each matrix column-major, the batch dims in C
    order, every dim counting as at least 1 (torch's batched column-major strides)."""
    if x.size:
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    st = list(_c_strides(x.shape))
    st[-2], st[-1] = 1, max(x.shape[-2], 1)
    return _empty_view(x.shape, st, x.dtype)


def _check_matrix(a, name):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")


_BOOL = (bool, np.bool_)


def _check_type(value, types, fn, arg):
    """torch's argument parser's TypeError for an argument of the wrong Python type (``types``:
    _BOOL or (str,))."""
    if not isinstance(value, types):
        want = "bool" if types is _BOOL else "str"
        raise TypeError(f"{fn}(): argument '{arg}' must be {want}, not {type(value).__name__}")


# ---- svd ----------------------------------------------------------------------------------------
class Svd(ArrayFunction, name="LinalgSvdBackward0"):
    """(U, S, Vh) of a (*, m, n) batch, S descending; ``full_matrices``: U (*, m, m) and
    Vh (*, n, n), else the reduced U (*, m, k), Vh (*, k, n), k = min(m, n).

    derivatives.yaml _linalg_svd: svd_backward (real case, distinct singular values assumed), fed
    only the first k columns of U and rows of Vh and of their gradients when ``full_matrices``:
    a gradient reaching the other columns is dropped, as torch drops it. Outputs that got no
    gradient are left out of the formula (not materialized as zeros, which would put 0 / 0 in
    the m != n terms of a rank-deficient matrix); with S's gradient alone it is
    U diag(gS) Vh."""

    @staticmethod
    def forward(ctx, a, full_matrices=False):
        u, s, vh = _svd_arrays(a, full_matrices, True)
        u, vh = _lapack_layout(u), _lapack_layout(vh)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(u, s, vh)
        return u, s, vh

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        U, S, Vh = ctx.saved_tensors
        if gu is None and gs is None and gvh is None:
            return None, None
        m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
        if U.shape[-1] != k:
            U = U[..., :k]
            gu = None if gu is None else gu[..., :k]
        if Vh.shape[-2] != k:
            Vh = Vh[..., :k, :]
            gvh = None if gvh is None else gvh[..., :k, :]
        if gu is None and gvh is None:
            ga = U @ (gs.unsqueeze(-1) * Vh) if m >= n else (U * gs.unsqueeze(-2)) @ Vh
            return ga, None
        s2 = S * S
        # E[i, j] = s_j^2 - s_i^2; its diagonal is never used (the skew parts vanish there): 1
        # avoids 0 / 0
        e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _make(np.eye(k, dtype=S._data.dtype))
        uhgu = None if gu is None else _skew(U.mT @ gu)
        vhgv = None if gvh is None else _skew(Vh @ gvh.mT)
        if uhgu is not None and vhgv is not None:
            ga = (uhgu * S.unsqueeze(-2) + S.unsqueeze(-1) * vhgv) / e
        elif uhgu is not None:
            ga = uhgu / e * S.unsqueeze(-2)
        else:
            ga = S.unsqueeze(-1) * vhgv / e
        if gs is not None:
            ga = ga + gs.diag_embed()
        if m > n and gu is not None:
            ga = U @ ga
            gu_sinv = gu / S.unsqueeze(-2)
            ga = (ga + gu_sinv - U @ (U.mT @ gu_sinv)) @ Vh
        elif m < n and gvh is not None:
            ga = ga @ Vh
            sinv_gvh = gvh / S.unsqueeze(-1)
            ga = U @ (ga + sinv_gvh - (sinv_gvh @ Vh.mT) @ Vh)
        else:
            ga = U @ (ga @ Vh)
        return ga, None


def _skew(x):
    return x - x.mT


def _svd_arrays(a, full_matrices, compute_uv):
    """NumPy's SVD of ``a``, with torch's LinAlgError where LAPACK refuses: NaN input (an
    infinite entry gives NaN factors, in both), or no convergence."""
    nan = np.isnan(a).any((-1, -2)).reshape(-1)
    if nan.any():
        raise LinAlgError(f"linalg.svd: {_batch_prefix(a, int(np.flatnonzero(nan)[0]))}The "
                          f"algorithm failed to converge because the input matrix contained "
                          f"non-finite values.")
    try:
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.svd: The algorithm failed to converge because the input "
                          "matrix is ill-conditioned or has too many repeated singular values "
                          "(NumPy's LAPACK gives no error code).") from None


def _records(A):
    """Whether an op on ``A`` records a node (torch then computes the vectors that its
    derivative needs, else only the values)."""
    return _grad_state.grad_enabled and A.requires_grad


def _check_svd_input(A, driver, fn):
    """linalg.svd's checks in torch's order: rank, a floating dtype (RuntimeError), the CPU
    refusal of any ``driver``, then the kernel's refusal of float16 (NotImplementedError)."""
    a = A._data
    _check_matrix(a, "linalg.svd")
    if driver is not None:
        _check_type(driver, (str,), fn, "driver")
    if a.dtype.kind != "f":
        _check_float(a, "linalg.svd", "linalg_svd_cpu")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    _check_float(a, "linalg.svd", "linalg_svd_cpu")


@op("linalg_svd", method=False, namespace=False, linalg="svd")
def linalg_svd(A, full_matrices=True, *, driver=None):
    """Named tuple ``(U, S, Vh)`` with A = U diag(S) Vh for a (*, m, n) float32/float64 batch:
    S (*, k) descending, k = min(m, n); ``full_matrices`` (default): U (*, m, m), Vh (*, n, n),
    else U (*, m, k), Vh (*, k, n). The signs of the singular vectors are NumPy's LAPACK's (a
    pair u_i, v_i may both be negated relative to torch's). Empty matrices give identity U / Vh
    where full. LinalgSvdBackward0 on all three (derivatives.yaml _linalg_svd: svd_backward,
    distinct singular values assumed: through U or Vh, repeated ones give NaN as torch; with
    ``full_matrices`` the gradient of the columns of U / rows of Vh past k is dropped, as torch).

    Raises TypeError for a non-bool ``full_matrices`` or a non-str ``driver``; RuntimeError for
    fewer than 2 dims, non-floating input, and any ``driver`` (torch's CPU refusal);
    NotImplementedError for float16 ("linalg_svd_cpu"); LinAlgError for input with NaN."""
    _check_type(full_matrices, _BOOL, "linalg_svd", "full_matrices")
    _check_svd_input(A, driver, "linalg_svd")
    U, S, Vh = Svd.apply(A, bool(full_matrices))
    return _return_type("linalg_svd", ("U", "S", "Vh"))(U, S, Vh)


@op("svdvals", method=False, namespace=False, linalg="svdvals")
def svdvals(A, *, driver=None):
    """The singular values (*, k), k = min(m, n), of a (*, m, n) float32/float64 batch,
    descending. LinalgSvdBackward0 when A requires grad (torch then computes U and Vh too, for
    derivatives.yaml svd_backward's U diag(gS) Vh); otherwise only S is computed.

    Raises as :func:`linalg_svd` (messages prefixed "linalg.svd", as torch's)."""
    _check_svd_input(A, driver, "linalg_svdvals")
    if not _records(A):
        return _make(_svd_arrays(A._data, False, False))
    return Svd.apply(A, False)[1]


@op("svd")
def svd(input, some=True, compute_uv=True):
    """torch.svd (legacy): named tuple ``(U, S, V)`` with input = U diag(S) V^T, V = Vh^T of
    :func:`linalg_svd` with ``full_matrices=not some`` (a transpose: TransposeBackward0, C
    contiguous). ``compute_uv=False``: U (*, m, m) and V (*, n, n) are zeros with no history,
    whatever ``some``, as torch's; S still records LinalgSvdBackward0. Also ``Tensor.svd``.

    Raises as :func:`linalg_svd`, except RuntimeError "linalg.svd: input should have at least 2
    dimensions, but has N dimensions instead" for fewer than 2 dims; TypeError for a non-bool
    ``some`` / ``compute_uv``."""
    _check_type(some, _BOOL, "svd", "some")
    _check_type(compute_uv, _BOOL, "svd", "compute_uv")
    a = input._data
    if a.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{a.ndim} dimensions instead")
    _check_float(a, "linalg.svd", "linalg_svd_cpu")
    rt = _return_type("svd", ("U", "S", "V"))
    if not compute_uv:
        S = svdvals(input)
        m, n = a.shape[-2:]
        U = _make(np.zeros(a.shape[:-2] + (m, m), a.dtype))
        V = _make(_lapack_layout(np.zeros(a.shape[:-2] + (n, n), a.dtype)))
        return rt(U, S, V)
    U, S, Vh = Svd.apply(input, not some)
    return rt(U, S, Vh.mT)


# ---- eigh ---------------------------------------------------------------------------------------
class Eigh(ArrayFunction, name="LinalgEighBackward0"):
    """(eigenvalues ascending, eigenvectors) of a (*, n, n) batch of symmetric matrices, read
    from the ``uplo`` triangle only. derivatives.yaml _linalg_eigh: linalg_eig_backward with
    is_hermitian=true: gA = V (diag(gL) + skew(V^T gV) / 2 / E) V^T, E[i, j] = L_j - L_i (distinct
    eigenvalues assumed); with gL alone V diag(gL) V^T. The result is symmetric: it has entries
    in the triangle that was not read, as torch's."""

    @staticmethod
    def forward(ctx, a, uplo):
        w, v = _eigh_arrays(a, uplo, True)
        v = _lapack_layout(v)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(w, v)
        return w, v

    @staticmethod
    def backward(ctx, gl, gv):
        L, V = ctx.saved_tensors
        if gl is None and gv is None:
            return None, None
        if gv is None:
            return (V * gl.unsqueeze(-2)) @ V.mT, None
        vhgv = V.mT @ gv
        # the diagonal of E is never used (the skew part vanishes there): 1 avoids 0 / 0
        e = L.unsqueeze(-2) - L.unsqueeze(-1) + _make(np.eye(L.shape[-1], dtype=L._data.dtype))
        ga = 0.5 * (vhgv - vhgv.mT) / e
        if gl is not None:
            ga = ga + gl.diag_embed()
        return V @ (ga @ V.mT), None


def _eigh_arrays(a, uplo, vectors):
    """NumPy's eigh (``vectors``) or eigvalsh of ``a``, with torch's LinAlgError where LAPACK
    does not converge."""
    try:
        return np.linalg.eigh(a, UPLO=uplo) if vectors else np.linalg.eigvalsh(a, UPLO=uplo)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.eigh: The algorithm failed to converge because the input "
                          "matrix is ill-conditioned or has too many repeated eigenvalues "
                          "(NumPy's LAPACK gives no error code).") from None


def _eigh(A, UPLO, fn):
    _check_type(UPLO, (str,), fn, "UPLO")
    a = A._data
    _check_matrix(a, "linalg.eigh")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.eigh: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if a.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_dtype_name(a)}'")
    return UPLO.upper()


@op("eigh", method=False, namespace=False, linalg="eigh")
def eigh(A, UPLO="L"):
    """Named tuple ``(eigenvalues, eigenvectors)`` of a (*, n, n) float32/float64 batch of
    symmetric matrices, read from the lower (``UPLO='L'``) or upper (``'U'``) triangle only:
    eigenvalues (*, n) ascending, eigenvectors (*, n, n) as columns (signs NumPy's LAPACK's).
    LinalgEighBackward0 (derivatives.yaml _linalg_eigh: linalg_eig_backward, is_hermitian=true;
    distinct eigenvalues assumed when the eigenvectors get a gradient: repeated ones give NaN,
    as torch). The gradient is symmetric, as torch's, although only one triangle is read.

    Raises TypeError for a non-str ``UPLO``; RuntimeError for fewer than 2 dims, non-square
    input or a ``UPLO`` other than 'L' / 'U'; NotImplementedError ("linalg_eigh_cpu") for any
    dtype but float32 / float64 (integers included, as torch)."""
    uplo = _eigh(A, UPLO, "linalg_eigh")
    w, v = Eigh.apply(A, uplo)
    return _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))(w, v)


@op("eigvalsh", method=False, namespace=False, linalg="eigvalsh")
def eigvalsh(A, UPLO="L"):
    """The eigenvalues (*, n), ascending, of a (*, n, n) batch of symmetric matrices read from
    the ``UPLO`` triangle. LinalgEighBackward0 when A requires grad (torch then computes the
    eigenvectors too, for V diag(gL) V^T); otherwise only the eigenvalues are computed.

    Raises as :func:`eigh` (messages prefixed "linalg.eigh", as torch's)."""
    uplo = _eigh(A, UPLO, "linalg_eigvalsh")
    if not _records(A):
        return _make(_eigh_arrays(A._data, uplo, False))
    return Eigh.apply(A, uplo)[0]


# ---- qr -----------------------------------------------------------------------------------------
_QR_MODES = ("reduced", "complete", "r")


class Qr(ArrayFunction, name="LinalgQrBackward0"):
    """(Q, R) of a (*, m, n) batch by Householder reflections (R's diagonal may be negative, as
    LAPACK's); mode 'reduced': Q (*, m, k), R (*, k, n); 'complete': Q (*, m, m), R (*, m, n);
    'r': Q empty (0,), R (*, k, n).

    derivatives.yaml linalg_qr: linalg_qr_backward, with torch's refusals (mode 'r', and
    'complete' with m > n, raise in backward). For m >= n: gA = (gQ + Q copyltu(M)) R^{-T} with
    M = R gR^T - gQ^T Q (copyltu: the lower triangle mirrored); for m < n, A = Q [X | Y]: the
    square case for X with gQ + Q Y gY^T, and Q gY for the columns of Y (H.-J. Liao, J.-G. Liu,
    L. Wang, T. Xiang, "Differentiable Programming Tensor Networks", PRX 9, 031041 (2019))."""

    @staticmethod
    def forward(ctx, a, mode):
        if mode == "r":
            q = np.empty((0,), a.dtype)
            r = np.linalg.qr(a, mode="r") if a.size else _qr_empty(a, "r")[1]
        else:
            q, r = np.linalg.qr(a, mode=mode) if a.size else _qr_empty(a, mode)
            q = _lapack_layout(q)
        r = _lapack_layout(np.asarray(r, a.dtype))
        ctx.mode = mode
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(q, r)
        return q, r

    @staticmethod
    def backward(ctx, gq, gr):
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        if gq is None and gr is None:
            return None, None
        if m >= n:
            return _qr_backward_tall(gq, gr, Q, R), None
        X, Y = R[..., :m], R[..., m:]
        gx = None if gr is None else gr[..., :m]
        gy = None if gr is None else gr[..., m:]
        if gy is not None:
            qygy = Q @ (Y @ gy.mT)
            gq = qygy if gq is None else gq + qygy
        ga1 = _qr_backward_tall(gq, gx, Q, X)
        ga2 = _zeros_like(Y) if gy is None else Q @ gy
        return cat([ga1, ga2], -1), None


def _zeros_like(t):
    return _make(np.zeros(t.shape, t._data.dtype))


def _qr_backward_tall(gq, gr, Q, R):
    """linalg_qr_backward for m >= n (R square): (gQ + Q copyltu(M)) R^{-T},
    M = R gR^T - gQ^T Q."""
    if gr is not None:
        M = R @ gr.mT
        if gq is not None:
            M = M - gq.mT @ Q
    else:
        M = -(gq.mT @ Q)
    b = Q @ (M.tril() + M.tril(-1).mT)
    if gq is not None:
        b = b + gq
    # X R^T = b: R^T is lower triangular; the general solve gives the same X
    return Solve.apply(R.mT, b, False, False)


def _qr_empty(a, mode):
    """NumPy's QR of an array with no elements: Q the identity where it has columns (as
    torch's), R zeros."""
    m, n = a.shape[-2:]
    k = min(m, n)
    qc = m if mode == "complete" else k
    q = np.zeros(a.shape[:-2] + (m, qc), a.dtype)
    q[..., range(min(m, qc)), range(min(m, qc))] = 1
    r = np.zeros(a.shape[:-2] + ((m if mode == "complete" else k), n), a.dtype)
    return q, r


def _qr(A, mode, name):
    a = A._data
    _check_matrix(a, "linalg.qr")
    if a.dtype.kind != "f":
        _check_float(a, "linalg.qr", "geqrf_cpu")
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    _check_float(a, "linalg.qr", "geqrf_cpu")
    Q, R = Qr.apply(A, mode)
    return _return_type(name, ("Q", "R"))(Q, R)


@op("linalg_qr", method=False, namespace=False, linalg="qr")
def linalg_qr(A, mode="reduced"):
    """Named tuple ``(Q, R)``, A = Q R, of a (*, m, n) float32/float64 batch, k = min(m, n):
    mode 'reduced' Q (*, m, k) with orthonormal columns and R (*, k, n) upper triangular;
    'complete' Q (*, m, m), R (*, m, n); 'r' R only (Q an empty (0,) tensor). R's diagonal may
    be negative (Householder, as LAPACK's; the signs of Q's columns and R's rows are NumPy's
    LAPACK's). LinalgQrBackward0 (derivatives.yaml linalg_qr: linalg_qr_backward; singular R
    raises LinAlgError in backward, where torch's triangular solve gives inf / NaN).

    Raises TypeError for a non-str ``mode``; RuntimeError for fewer than 2 dims, non-floating
    input, an unknown mode; NotImplementedError for float16 ("geqrf_cpu"); in backward,
    RuntimeError for mode 'r' and for 'complete' with m > n, as torch."""
    _check_type(mode, (str,), "linalg_qr", "mode")
    return _qr(A, mode, "linalg_qr")


@op("qr")
def qr(input, some=True):
    """torch.qr (deprecated for linalg.qr, with torch's UserWarning): named tuple ``(Q, R)`` of
    :func:`linalg_qr` with mode 'reduced' (``some=True``) or 'complete'. Also ``Tensor.qr``.
    LinalgQrBackward0.

    Raises TypeError for a non-bool ``some``, otherwise as :func:`linalg_qr`."""
    _check_type(some, _BOOL, "qr", "some")
    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning, stacklevel=2)
    return _qr(input, "reduced" if some else "complete", "qr")
