"""torch.linalg's triangular and Cholesky solvers and its rank-revealing ops: solve_triangular,
cholesky_solve, cholesky_inverse, matrix_rank, pinv, lstsq. They appear in ``tapegrad.linalg``
(registered with ``linalg=``) and, where torch has them, at the top level and as Tensor methods
(``cholesky_solve``, ``cholesky_inverse``).

Derivatives (derivatives.yaml, real case): linalg_solve_triangular
(linalg_solve_triangular_backward: gB = solve_triangular(A^H, gX, !upper), gA = -gB X^H or
-X^H gB, masked to A's triangle); cholesky_solve (cholesky_solve_backward); cholesky_inverse
(cholesky_inverse_backward); linalg_pinv (pinv_backward); linalg_lstsq (linalg_lstsq_backward,
through pinv). Each is written with the ops themselves, so double backward needs no second
formula.

``out=``: every function here and inv, det, solve, cholesky and the norms of linalg_extra.py
take torch's ``out`` (:func:`write_out`, :func:`copy_out`, :func:`write_out_tuple` for the
named-tuple ones), with torch's resize, dtype and autograd rules per op. An out that is resized
takes C order (torch's keeps LAPACK's column-major layout there).

The factorizations run in NumPy's LAPACK (no SciPy). Where torch's LAPACK result is laid out
column-major (solve_triangular, cholesky_solve, cholesky_inverse: each matrix's columns are
contiguous), the result here is laid out the same, so ``.stride()`` agrees.
"""
from __future__ import annotations

import numpy as np

from .._dtype import cpp_name as _cpp_name
from .._dtype import scalar_name
from ..autograd.function import ArrayFunction
from ._out import exact_dtype_error
from ._registry import op
from ._util import _make
from .linalg_extra import (
    LinAlgError,
    _batch_prefix,
    _batch_size,
    _check_broadcast,
    _colmajor,
    _dtype_name,
    _return_type,
)

__all__ = ["cholesky_inverse", "cholesky_solve", "solve_triangular"]


def _need_lapack_float(a, kernel):
    """torch's NotImplementedError naming the CPU ``kernel`` for an array LAPACK cannot take
    (integer, bool, float16)."""
    if a.dtype.kind != "f" or a.dtype == np.float16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype_name(a)}'")


def _triangle(a, upper, unit):
    """The triangle of ``a`` that LAPACK's triangular routines read (``unit``: 1 on the
    diagonal, whatever ``a`` holds there)."""
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        n = a.shape[-1]
        t[..., np.arange(n), np.arange(n)] = 1
    return t


def _trsolve(a, b, upper, left=True, unit=False):
    """X with T X = B (``left``) or X T = B for T the triangle of ``a`` (batch dims broadcast).
    A zero on T's diagonal gives infinities and NaNs, as LAPACK's trsm (no error)."""
    t = _triangle(a, upper, unit)
    if not left:
        t, b, upper = np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), not upper
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(t, batch + t.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    n = t.shape[-1]
    diag = np.diagonal(t, axis1=-2, axis2=-1)
    if n == 0 or b.shape[-1] == 0 or diag.all():
        x = np.linalg.solve(t, b) if t.size and b.size else np.zeros(b.shape, t.dtype)
    else:
        # a singular triangle: substitution, as trsm, so its infinities and NaNs appear where
        # LAPACK's do (np.linalg.solve refuses the matrix)
        x = np.zeros(b.shape, t.dtype)
        order = range(n - 1, -1, -1) if upper else range(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            for i in order:
                rest = slice(i + 1, n) if upper else slice(0, i)
                r = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, rest], x[..., rest, :])
                x[..., i, :] = r / t[..., i, i, None]
    return np.swapaxes(x, -1, -2) if not left else x


# ---- solve_triangular ---------------------------------------------------------------------------
_REQUIRED = object()   # (torch's upper has no default, and its TypeError names the C++ op)


class SolveTriangular(ArrayFunction, name="LinalgSolveTriangularBackward0"):
    """X with A X = B (``left``) or X A = B, A read as its upper or lower triangle (``unit``:
    with 1 on the diagonal). derivatives.yaml linalg_solve_triangular
    (linalg_solve_triangular_backward): gB = solve_triangular(A^H, gX, !upper, left, unit),
    gA = -gB X^H (left) or -X^H gB, then triu / tril of it (offset 1 when ``unit``)."""

    @staticmethod
    def forward(ctx, a, b, upper, left, unit):
        x = _colmajor(_trsolve(a, b.astype(a.dtype, copy=False), upper, left, unit))
        ctx.conf = (upper, left, unit, b.dtype)
        ctx.save_for_backward(a, x if ctx.needs(0) else None)
        return x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        upper, left, unit, b_dtype = ctx.conf
        gb = SolveTriangular.apply(a.mT, g, not upper, left, unit)
        ga = None
        if ctx.needs(0):
            ga = -(gb @ x.mT) if left else -(x.mT @ gb)
            k = int(unit)
            ga = ga.triu(k) if upper else ga.tril(-k)
        if not ctx.needs(1):
            gb = None
        elif gb._data.dtype != b_dtype:
            gb = gb.to(_make(np.zeros((), b_dtype)).dtype)
        return ga, gb, None, None, None


@op("solve_triangular", method=False, namespace=False, linalg="solve_triangular")
def solve_triangular(A, B, *, upper=_REQUIRED, left=True, unitriangular=False, out=None):
    """X with A X = B (``left=False``: X A = B) for a triangular A (*, n, n) and B (*, n, k)
    (``left=False``: (*, k, n)); only A's upper (``upper=True``) or lower triangle is read, and
    with ``unitriangular`` its diagonal is taken as 1. Batch dims broadcast. The result has A's
    floating dtype (B is converted to it, as torch), each matrix laid out column-major as
    torch's. A zero on the diagonal gives infinities / NaNs, not an error (as torch).
    LinalgSolveTriangularBackward0 (derivatives.yaml linalg_solve_triangular).

    Raises RuntimeError for A or B with fewer than 2 dims, non-square A, shapes that do not fit
    or batch dims that do not broadcast; NotImplementedError ("triangular_solve_cpu") for
    integer, bool or float16 A; TypeError without ``upper`` (a keyword-only argument)."""
    if upper is _REQUIRED:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    a, b = A._data, B._data
    name = "linalg.solve_triangular"
    if b.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    n = a.shape[-1]
    if (b.shape[-2] if left else b.shape[-1]) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    _check_broadcast(b.shape[:-2], a.shape[:-2])
    _need_lapack_float(a, "triangular_solve_cpu")
    return _out(out, SolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular)),
                "linalg_solve_triangular", "linalg_solve_triangular", (A, B), "scalar_type")


# ---- cholesky_solve / cholesky_inverse ----------------------------------------------------------
class CholeskySolve(ArrayFunction, name="CholeskySolveBackward0"):
    """X with (L L^H) X = B (``upper``: (U^H U) X = B), L read as its triangle.
    derivatives.yaml cholesky_solve (cholesky_solve_backward): gB = cholesky_solve(gX, L),
    C = gB X^H + X gB^H, gL = -C L (``upper``: -U C); gL is the full matrix, as torch's."""

    @staticmethod
    def forward(ctx, b, f, upper):
        lo = np.swapaxes(f, -1, -2) if upper else f     # L, or U^T: A = L L^T
        x = _trsolve(np.swapaxes(lo, -1, -2), _trsolve(lo, b, False), True)
        x = _colmajor(x)
        ctx.upper = upper
        ctx.save_for_backward(f, x if ctx.needs(1) else None)
        return x

    @staticmethod
    def backward(ctx, g):
        f, x = ctx.saved_tensors
        upper = ctx.upper
        gb = CholeskySolve.apply(g, f, upper)
        gf = None
        if ctx.needs(1):
            c = gb @ x.mT
            c = c + c.mT
            gf = -(f @ c) if upper else -(c @ f)
        return (gb if ctx.needs(0) else None), gf, None


@op("cholesky_solve")
def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = B for B = ``input`` (*, n, k) and A = L L^T given by its Cholesky factor
    L = ``input2`` (*, n, n), lower (``upper=True``: A = U^T U, U upper); only that triangle of
    the factor is read. Batch dims broadcast; same floating dtype for both; each matrix of the
    result column-major as torch's. Also ``Tensor.cholesky_solve``. CholeskySolveBackward0
    (derivatives.yaml cholesky_solve: cholesky_solve_backward; the factor's gradient is a full
    matrix, as torch's).

    Raises RuntimeError for fewer than 2 dims, a non-square factor, sizes that do not fit, batch
    dims that do not broadcast or different dtypes; NotImplementedError ("cholesky_solve_cpu")
    for integer, bool or float16 input."""
    b, f = input._data, input2._data
    if b.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {b.ndim} dimensions "
                           f"instead")
    if f.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {f.ndim} dimensions "
                           f"instead")
    if b.dtype != f.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype_name(b)} and A of type {_dtype_name(f)} instead.")
    if f.shape[-1] != f.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {f.shape[-2]} "
                           f"by {f.shape[-1]} matrices")
    if f.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{f.shape[-1]} by {f.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    _check_broadcast(b.shape[:-2], f.shape[:-2])
    _need_lapack_float(b, "cholesky_solve_cpu")
    return _out(out, CholeskySolve.apply(input, input2, bool(upper)), "cholesky_solve",
                "cholesky_solve", (input, input2), "castable")


class CholeskyInverse(ArrayFunction, name="CholeskyInverseBackward0"):
    """(L L^H)^{-1} (``upper``: (U^H U)^{-1}) from the triangle of the factor.
    derivatives.yaml cholesky_inverse (cholesky_inverse_backward): C = R (g + g^H) R for R the
    result, gL = -C L (``upper``: -U C)."""

    @staticmethod
    def forward(ctx, f, upper):
        lo = np.swapaxes(f, -1, -2) if upper else f     # L, or U^T: A = L L^T
        linv = _trsolve(lo, np.broadcast_to(np.eye(f.shape[-1], dtype=f.dtype), f.shape), False)
        inv = np.swapaxes(linv, -1, -2) @ linv
        inv = _colmajor(inv)
        ctx.upper = upper
        ctx.save_for_backward(f, inv)
        return inv

    @staticmethod
    def backward(ctx, g):
        f, inv = ctx.saved_tensors
        c = inv @ ((g + g.mT) @ inv)
        return (-(f @ c) if ctx.upper else -(c @ f)), None


@op("cholesky_inverse")
def cholesky_inverse(input, upper=False, *, out=None):
    """(L L^T)^{-1} for L = ``input`` (*, n, n), the lower Cholesky factor of A (``upper=True``:
    (U^T U)^{-1}); only that triangle is read. Same shape and dtype, each matrix column-major
    as torch's. Also ``Tensor.cholesky_inverse``. CholeskyInverseBackward0 (derivatives.yaml
    cholesky_inverse: cholesky_inverse_backward; a full-matrix gradient, as torch's).

    Raises RuntimeError for fewer than 2 dims or a non-square input; NotImplementedError
    ("cholesky_inverse_out_cpu") for integer, bool or float16 input; LinAlgError for a zero on
    the factor's diagonal, naming the batch element and the diagonal element as torch."""
    f = input._data
    name = "cholesky_inverse"
    if f.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if f.shape[-1] != f.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{f.shape[-2]} by {f.shape[-1]} matrices")
    _need_lapack_float(f, "cholesky_inverse_out_cpu")
    zero = (np.diagonal(f, axis1=-2, axis2=-1) == 0).reshape(_batch_size(f), f.shape[-1])
    if zero.any():
        k = int(np.flatnonzero(zero.any(-1))[0])
        raise LinAlgError(f"{name}: {_batch_prefix(f, k)}The diagonal element "
                          f"{int(np.argmax(zero[k])) + 1} is zero, the inversion could not be "
                          f"completed because the input matrix is singular.")
    return _out(out, CholeskyInverse.apply(input, bool(upper)), "cholesky_inverse",
                "cholesky_inverse", (input,), "castable")


# ---- tolerances of matrix_rank / pinv -----------------------------------------------------------
def _tol_array(t, dt):
    """A tolerance as an array: a Tensor's data (its own dtype), a number in ``dt``."""
    from .._tensor import Tensor
    return np.asarray(t._data) if isinstance(t, Tensor) else np.asarray(t, dt)


def _tolerance(a, s_max, atol, rtol):
    """torch's get_atol_rtol and threshold: atol defaults to 0; rtol to eps * max(m, n) unless
    atol is given, where it is 0 wherever atol > 0; the threshold is max(atol, rtol * s_max),
    broadcast against the batch (atol and rtol get a trailing unit dim, as torch's unsqueeze)."""
    dt = a.dtype
    default = np.asarray(np.finfo(dt).eps * max(a.shape[-1], a.shape[-2]), dt)
    atol_a = np.zeros((), dt) if atol is None else _tol_array(atol, dt)
    if rtol is not None:
        rtol_a = _tol_array(rtol, dt)
    elif atol is not None:
        rtol_a = np.where(atol_a > 0, np.zeros((), dt), default)
    else:
        rtol_a = default
    return np.maximum(atol_a[..., None], rtol_a[..., None] * s_max)


def _check_tol_grad(t, name, arg):
    if getattr(t, "requires_grad", False):
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


def _spectrum(a, hermitian):
    """(S, largest) for the tolerance: the singular values (descending) and S[..., :1], or, for
    ``hermitian``, |eigenvalues| of the lower triangle and their max."""
    if hermitian:
        s = np.abs(np.linalg.eigvalsh(a))
        return s, s.max(-1, keepdims=True)
    s = np.linalg.svd(a, compute_uv=False)
    return s, s[..., :1]


# ---- matrix_rank --------------------------------------------------------------------------------
def _check_real_float(a, name_dims):
    if a.ndim < 2:
        raise RuntimeError(f"{name_dims}: The input tensor input must have at least 2 dimensions.")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")


@op("matrix_rank", method=False, namespace=False, linalg="matrix_rank")
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """The numerical rank of each matrix of a (*, m, n) float32/float64 batch: int64 of the batch
    shape, no gradient. The number of singular values (``hermitian``: |eigenvalues| of the lower
    triangle) above max(atol, rtol * the largest), as torch: atol defaults to 0, rtol to
    eps * max(m, n), or to 0 where a given atol is > 0. atol / rtol are numbers or tensors
    broadcasting against the batch. ``tol`` (torch's deprecated overload) is atol with rtol 0.
    An empty matrix has rank 0.

    Raises RuntimeError for fewer than 2 dims, a dtype other than float32/float64, batch
    tolerances that do not broadcast, or (``hermitian``) non-square input as linalg.eigh;
    TypeError for ``tol`` together with atol / rtol."""
    a = A._data
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of arguments: "
                            "tol cannot be given with atol or rtol")
        atol, rtol = tol, 0.0
    _check_real_float(a, "torch.linalg.matrix_rank")
    if hermitian and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.eigh: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return _out(out, _make(np.zeros(a.shape[:-2], np.int64)), "linalg_matrix_rank", "sum", (),
                    "any")
    s, s_max = _spectrum(a, hermitian)
    tol_ = _broadcast_tol(_tolerance, a, s_max, atol, rtol)
    return _out(out, _make(np.asarray((s > tol_).sum(-1), np.int64)), "linalg_matrix_rank", "sum",
                (), "any")


def _broadcast_tol(f, *args):
    """``f(*args)``, NumPy's broadcasting error as torch's infer_size message."""
    try:
        return f(*args)
    except ValueError as e:
        raise RuntimeError(f"The size of the tolerance must broadcast to the batch of A: {e}") \
            from None


# ---- pinv ---------------------------------------------------------------------------------------
class Pinv(ArrayFunction, name="LinalgPinvBackward0"):
    """The pseudoinverse from the SVD (``hermitian``: eigh), singular values at or below the
    tolerance dropped. derivatives.yaml linalg_pinv (pinv_backward)."""

    @staticmethod
    def forward(ctx, a, atol, rtol, hermitian):
        m, n = a.shape[-2:]
        if m == 0 or n == 0:
            p = np.zeros(a.shape[:-2] + (n, m), a.dtype)
        elif hermitian:
            w, u = np.linalg.eigh(a)
            tol = _tolerance(a, np.abs(w).max(-1, keepdims=True), atol, rtol)
            with np.errstate(divide="ignore"):
                winv = np.where(np.abs(w) > tol, 1 / w, 0).astype(a.dtype)
            p = (u * winv[..., None, :]) @ np.swapaxes(u, -1, -2)
        else:
            u, s, vh = np.linalg.svd(a, full_matrices=False)
            tol = _tolerance(a, s[..., :1], atol, rtol)
            with np.errstate(divide="ignore"):
                sinv = np.where(s > tol, 1 / s, 0).astype(a.dtype)
            p = (np.swapaxes(vh, -1, -2) * sinv[..., None, :]) @ np.swapaxes(u, -1, -2)
        ctx.save_for_backward(a, p)
        return p

    @staticmethod
    def backward(ctx, g):
        a, p = ctx.saved_tensors
        return _pinv_backward(g, p, a), None, None, None


def _pinv_backward(g, p, a):
    """derivatives.yaml linalg_pinv's pinv_backward (real case; Golub and Pereyra, 1973, the
    derivative of the pseudoinverse at constant rank), in the order that keeps the products
    smallest for wide (m <= n) or tall A."""
    m, n = a.shape[-2], a.shape[-1]
    ph, gh = p.mT, g.mT
    if m <= n:
        k = gh @ p
        kph = k @ ph
        return -(p @ k).mT + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a)
    k = p @ gh
    phk = ph @ k
    return -(k @ p).mT + ((gh - a @ k) @ p) @ ph + phk - (phk @ p) @ a


@op("pinv", method=False, namespace=False, linalg="pinv")
def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudoinverse of each matrix of a (*, m, n) float32/float64 batch:
    (*, n, m), the input's dtype. Singular values (``hermitian``: eigenvalues of the lower
    triangle, by absolute value) at or below max(atol, rtol * the largest) are dropped, with
    torch's defaults (atol 0; rtol eps * max(m, n), or 0 where a given atol is > 0); ``rcond``
    (torch's older overload, also positional) is rtol. Tolerance tensors broadcast against the
    batch as torch's (with a trailing unit dim). LinalgPinvBackward0 (derivatives.yaml
    linalg_pinv: pinv_backward), valid where the rank does not change.

    Raises RuntimeError for fewer than 2 dims or a dtype other than float32/float64 (torch's
    "expected a tensor with 2 or more dimensions" message), for (``hermitian``) non-square input
    as linalg.eigh, and for a tolerance tensor that requires grad; TypeError for ``rcond``
    together with atol / rtol."""
    a = A._data
    if a.ndim < 2 or a.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"linalg.pinv({_dtype_name(a)}{{{list(a.shape)}}}): expected a "
                           f"tensor with 2 or more dimensions of float, double, cfloat or cdouble "
                           f"types")
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_pinv() received an invalid combination of arguments: rcond "
                            "cannot be given with atol or rtol")
        rtol = rcond
    if hermitian and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.eigh: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    _check_tol_grad(atol, "linalg_pinv", "atol")
    _check_tol_grad(rtol, "linalg_pinv", "rtol")
    atol = None if atol is None else _tol_array(atol, a.dtype)
    rtol = None if rtol is None else _tol_array(rtol, a.dtype)
    try:
        p = Pinv.apply(A, atol, rtol, bool(hermitian))
    except ValueError as e:
        raise RuntimeError(f"linalg.pinv: the tolerances do not broadcast against the batch of "
                           f"A {list(a.shape[:-2])}: {e}") from None
    return _out(out, p, "linalg.pinv", "linalg_pinv", (A,), "castable")


# ---- lstsq --------------------------------------------------------------------------------------
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


class Lstsq(ArrayFunction, name="LinalgLstsqBackward0"):
    """(solution, residuals, rank, singular_values) of min ||A X - B||_F, the minimum-norm
    solution of the problem truncated to the singular values above rcond * the largest (the
    solution LAPACK's gelsy / gelsd / gelss give; gels assumes full rank and truncates nothing).
    Which fields are filled follows the driver as torch's (see :func:`lstsq`); rank and
    singular_values have no gradient. derivatives.yaml linalg_lstsq (linalg_lstsq_backward):
    gA = pinv_backward(gX B^H, pinv(A), A), gB = pinv(A)^H gX; the residuals r = ||A X - B||^2
    add 2 R gr X^H to gA and -2 R gr to gB (R = A X - B: X is stationary, so only the explicit
    dependence counts)."""

    @staticmethod
    def forward(ctx, a, b, vector, rcond, driver):
        bm = b[..., None] if vector else b
        batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
        a_ = np.broadcast_to(a, batch + a.shape[-2:])
        bm = np.broadcast_to(bm, batch + bm.shape[-2:])
        m, n, k = a.shape[-2], a.shape[-1], bm.shape[-1]
        dt = a.dtype
        if rcond is None:
            rcond = np.finfo(dt).eps * max(m, n)
        # torch's solution is the top n rows of a column-major (max(m, n), k) LAPACK buffer
        buf = np.zeros(batch + (k, max(m, n)), dt)
        x = np.swapaxes(buf, -1, -2)[..., :n, :]
        if min(m, n) == 0:
            s = np.zeros(a.shape[:-2] + (0,), dt)
            rank = np.zeros(a.shape[:-2], np.int64)
        else:
            # rank and singular values are A's (its batch shape), the solution the broadcast one
            u, s, vh = np.linalg.svd(a, full_matrices=False)
            keep = s > rcond * s[..., :1] if driver != "gels" else np.ones(s.shape, bool)
            rank = keep.sum(-1).astype(np.int64)
            with np.errstate(divide="ignore"):
                sinv = np.where(keep, 1 / s, 0).astype(dt)
            x[...] = np.swapaxes(vh, -1, -2) @ (sinv[..., None] * (np.swapaxes(u, -1, -2) @ bm))
        full = m > n and (driver == "gels" or bool((rank == n).all()))
        if driver != "gelsy" and full:
            res = ((a_ @ x - bm) ** 2).sum(-2)
        else:
            res = np.zeros((0,), dt)
        if driver == "gels":
            rank = np.zeros((0,), np.int64)
        if driver not in ("gelsd", "gelss"):
            s = np.zeros((0,), dt)
        ctx.conf = (vector, res.size > 0)
        ctx.save_for_backward(a, b, x)
        ctx.mark_non_differentiable(rank, s)
        return (x[..., 0] if vector else x), res, rank, s

    @staticmethod
    def backward(ctx, gx, gres, _grank=None, _gs=None):
        a, b, x = ctx.saved_tensors
        vector, with_res = ctx.conf
        bm = b.unsqueeze(-1) if vector else b
        gxm = gx.unsqueeze(-1) if vector else gx
        p = Pinv.apply(a, None, None, False)
        ga = _pinv_backward(gxm @ bm.mT, p, a) if ctx.needs(0) else None
        gb = p.mT @ gxm if ctx.needs(1) else None
        if with_res:
            r2 = 2 * (a @ x - bm) * gres.unsqueeze(-2)
            ga = None if ga is None else ga + r2 @ x.mT
            gb = None if gb is None else gb - r2
        if gb is not None and vector:
            gb = gb.squeeze(-1)
        return ga, gb, None, None, None


@op("lstsq", method=False, namespace=False, linalg="lstsq")
def lstsq(A, B, rcond=None, *, driver=None, out=None):
    """Named tuple ``(solution, residuals, rank, singular_values)`` of the least-squares problem
    min ||A X - B|| for A (*, m, n) and B (*, m, k), or B with one dim fewer than A (vectors
    (*, m), read as columns, as torch); batch dims broadcast (rank and singular_values keep A's
    batch shape); float32/float64, the same for both. ``driver`` as torch's CPU
    drivers: 'gelsy' (the default) fills solution and rank; 'gelsd' / 'gelss' also
    singular_values (*, min(m, n)) and, when m > n and every matrix has full rank, residuals
    (the squared residual norm of each column, (*, k)); 'gels' (full rank assumed) fills
    solution and, when m > n, residuals. Empty fields are shape (0,). ``rcond`` (default
    eps * max(m, n)): singular values at or below rcond * the largest count as zero.

    Where this differs from torch: the rank here is the count of singular values above the
    threshold; gelsy's own rank comes from a QR with column pivoting and may differ near the
    threshold. The solution is laid out as torch's (the top rows of a column-major
    (max(m, n), k) buffer). LinalgLstsqBackward0 on solution and residuals (derivatives.yaml
    linalg_lstsq, see :class:`Lstsq`). ``out``: four tensors of the results' dtypes, written as
    torch's (tuple type linalg_lstsq_out).

    Raises RuntimeError for A with fewer than 2 dims or B with none, B with more dims than A or
    two fewer, different dtypes, a dtype other than float32 / float64, an unknown driver, row
    counts that differ or batch dims that do not broadcast."""
    a, b = A._data, B._data
    name = "torch.linalg.lstsq"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if b.ndim < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {_dtype_name(a)} and other's dtype {_dtype_name(b)}")
    if not 0 <= a.ndim - b.ndim <= 1:
        raise RuntimeError(f"{name}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1")
    vector = b.ndim == a.ndim - 1     # (torch's rule for lstsq: B one dim short is vectors)
    _check_broadcast(a.shape[:-2], (b.shape[:-1] if vector else b.shape[:-2]))
    if a.shape[-2] != (b.shape[-1] if vector else b.shape[-2]):
        raise RuntimeError(f"{name}: input.size(-2) should match other.size("
                           f"{-1 if vector else -2})")
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of "
                           f"({', '.join(_DRIVERS)})")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")
    res = Lstsq.apply(A, B, vector, rcond, driver)
    fields = ("solution", "residuals", "rank", "singular_values")
    if out is None:
        return _return_type("linalg_lstsq", fields)(*res)
    return write_out_tuple(out, res, "linalg_lstsq", "linalg_lstsq", (A, B), "linalg_lstsq_out",
                           fields, castable=name)


# ---- products and composites (as torch's, node for node) ----------------------------------------
@op("cross", method=False, namespace=False, linalg="cross")
def linalg_cross(input, other, *, dim=-1, out=None):
    """torch.linalg.cross: :func:`tapegrad.cross` with ``dim`` keyword-only and defaulting to -1
    (no search for a size-3 dim). LinalgCrossBackward0 (derivatives.yaml linalg_cross).

    Raises as tapegrad.cross: RuntimeError for different ranks, a ``dim`` not of length 3 in
    both, different dtypes or shapes that do not broadcast; IndexError for ``dim`` out of
    range."""
    from .extra import cross
    return _out(out, cross(input, other, dim), "linalg_cross", "linalg_cross", (input, other),
                "same")




class _Vdot(ArrayFunction, name="VdotBackward0"):
    """The dot product of two 1-D tensors of one dtype, as torch's vdot for real input.
    derivatives.yaml vdot: self: grad * other, other: grad * self."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs(1) else None, b if ctx.needs(0) else None)
        return np.asarray(np.dot(a, b), a.dtype)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (g * b if ctx.needs(0) else None), (g * a if ctx.needs(1) else None)


@op("vecdot", method=False, namespace=False, linalg="vecdot")
def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of ``x`` and ``y`` along ``dim`` (the other dims broadcast), as torch's
    composite for real tensors: two 1-D tensors through vdot (VdotBackward0), otherwise
    (x * y).sum(dim) (SumBackward1 over MulBackward0). Same floating dtype for both.

    Raises RuntimeError for non-floating x, different dtypes, or shapes that do not broadcast
    (1-D: torch's "inconsistent tensor size"); IndexError for ``dim`` out of range."""
    a, b = x._data, y._data
    if a.dtype.kind != "f":
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_dtype_name(a)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {_dtype_name(a)} and y of type {_dtype_name(b)} instead")
    if a.ndim == 1 and b.ndim == 1:
        if a.size != b.size:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.size}] and src "
                               f"[{b.size}] to have the same number of elements, but got "
                               f"{a.size} and {b.size} elements respectively")
        r = _Vdot.apply(x, y)
    else:
        r = (x * y).sum(dim)
    if out is not None and getattr(out, "dtype", r.dtype) != r.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected out of dtype{_dtype_name(r._data)} but found "
                           f"{_dtype_name(out._data)}")
    return _out(out, r, "linalg_vecdot", "sum", (x, y), "any")


def _chain_order(dims):
    """torch's matrix_chain_order: the split of each sub-chain that multiplies it most cheaply
    (the first such split where costs tie), for matrices dims[i] x dims[i + 1]."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(ts, split, i, j):
    from .linalg import mm
    if i == j:
        return ts[i]
    k = split[i][j]
    return mm(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))


@op("multi_dot", method=False, namespace=False, linalg="multi_dot")
def multi_dot(tensors, *, out=None):
    """The product of a list of 2-D tensors (the first may be 1-D, a row; the last 1-D, a
    column), multiplied in the cheapest order as torch picks it (for three, torch's two-cost
    comparison; for more, its matrix-chain order), with mm (MmBackward0), the result viewed to
    its final shape (ViewBackward0), as torch's. Any one dtype, integers included.

    Raises RuntimeError for fewer than 2 tensors, a first / last tensor that is not 1-D or
    2-D, a middle one that is not 2-D, different dtypes, or sizes that do not chain."""
    from .linalg import mm
    ts = list(tensors)
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = ts[0]._data.ndim, ts[-1]._data.ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if ts[i]._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got "
                               f"{ts[i]._data.ndim}D")
    out_shape = ([ts[0]._data.shape[0]] if first == 2 else []) + \
        ([ts[-1]._data.shape[1]] if last == 2 else [])
    if first == 1:
        ts[0] = ts[0].unsqueeze(0)
    if last == 1:
        ts[-1] = ts[-1].unsqueeze(-1)
    dt = ts[0]._data.dtype
    for i in range(1, n):
        if ts[i]._data.dtype != dt:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_cpp_name(dt)} and tensor {i} "
                               f"{_cpp_name(ts[i]._data.dtype)}")
        if ts[i - 1]._data.shape[1] != ts[i]._data.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(ts[i - 1]._data.shape)} and {list(ts[i]._data.shape)} "
                               f"cannot be multiplied")
    if n == 2:
        res = mm(ts[0], ts[1])
    elif n == 3:
        a, b = ts[0]._data.shape
        c, d = ts[2]._data.shape
        # (a x b)(b x c) first, or (b x c)(c x d) first: torch's comparison, ties to the left
        if (a * c) * (b + d) > (b * d) * (a + c):
            res = mm(ts[0], mm(ts[1], ts[2]))
        else:
            res = mm(mm(ts[0], ts[1]), ts[2])
    else:
        dims = [t._data.shape[0] for t in ts] + [ts[-1]._data.shape[1]]
        res = _chain(ts, _chain_order(dims), 0, n - 1)
    r = res.view(*out_shape)
    if out is not None and getattr(out, "dtype", r.dtype) != r.dtype:
        raise RuntimeError(f"multi_dot(): expected out tensor to have dtype "
                           f"{_cpp_name(r._data.dtype)} but got "
                           f"{_cpp_name(out._data.dtype)}")
    return _out(out, r, "linalg_multi_dot", "mm", ts, "any")


@op("matmul", method=False, namespace=False, linalg="matmul")
def linalg_matmul(input, other, *, out=None):
    """torch.linalg.matmul: :func:`tapegrad.matmul` (the same products, nodes and errors)."""
    from .linalg import matmul
    return _out(out, matmul(input, other), "matmul", "matmul", (input, other), "same")


@op("diagonal", method=False, namespace=False, linalg="diagonal")
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal: :func:`tapegrad.diagonal` of the last two dims by default
    (keyword-only arguments), a view (DiagonalBackward0)."""
    from .scatter import diagonal
    return diagonal(A, offset, dim1, dim2)


@op("vander", method=False, namespace=False, linalg="vander")
def vander(x, *, N=None):
    """The Vandermonde matrix of ``x`` (*, n): (*, n, N) with columns x^0, x^1, ..., x^(N-1)
    (N defaults to n; a 0-d x counts as (1,)). torch's composite: ones, then cumprod of x
    expanded N - 1 times (CumprodBackward0), concatenated (CatBackward0). Floating or integer
    input (integers give int64, as cumprod).

    Raises RuntimeError for bool input and for N < 2."""
    from .scatter import cumprod
    from .shape import cat
    a = x._data
    if a.dtype.kind not in "fiu":
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_dtype_name(a)}")
    x_ = x.unsqueeze(-1) if a.ndim == 0 else x
    shape = list(x_._data.shape)
    n = shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = cumprod(x_.unsqueeze(-1).expand(*shape, n - 1), -1)
    return cat([powers.new_ones((*shape, 1)), powers], -1)


def _prod(shape):
    return int(np.prod(shape, dtype=np.int64))


@op("tensorinv", method=False, namespace=False, linalg="tensorinv")
def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` as a linear map from its last dims to its first ``ind`` dims: shape
    A.shape[ind:] + A.shape[:ind], with tensordot(result, A, ind) the identity. torch's
    composite: linalg.inv_ex of A reshaped to a square matrix, its result reshaped
    (LinalgInvExBackward0 under the reshape's node; see op_db_linalg_solvers for the
    reshape's name).

    Raises RuntimeError for ``ind`` <= 0, for prod(A.shape[ind:]) != prod(A.shape[:ind]) and
    for non-floating input (linalg.inv's message); LinAlgError ("inv: ...") when that matrix
    is singular."""
    from .linalg_extra import _raise_singular_inv, inv_ex
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    head, tail = shape[:ind], shape[ind:]
    if _prod(tail) != _prod(head):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {_prod(tail)} != {_prod(head)}")
    inv, info = inv_ex(A.reshape(_prod(head), _prod(tail)))
    if info._data.any():
        _raise_singular_inv(info._data[..., None, None], info._data, "inv")
    r = inv.reshape(*tail, *head)
    return r if out is None else copy_out(out, r, "tensorinv", "castable")


@op("tensorsolve", method=False, namespace=False, linalg="tensorsolve")
def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B: X has shape A.shape[B.ndim:] (after the dims in
    ``dims`` are moved to the end of A). torch's composite: movedim, reshape to a square
    matrix, linalg.solve with B flattened (LinalgSolveExBackward0), the result reshaped
    (ViewBackward0).

    Raises RuntimeError when prod(A.shape[B.ndim:]) != B.numel(), and linalg.solve's errors
    (LinAlgError for a singular matrix)."""
    from .linalg_extra import solve
    if dims is not None:
        dims = (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
        nd = A._data.ndim
        A = A.movedim(dims, tuple(range(nd - len(dims), nd)))
    shape = A._data.shape
    res_shape = shape[B._data.ndim:]
    p, q = _prod(res_shape), B._data.size
    if p != q:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {p} != {q}")
    r = solve(A.reshape(p, p), B.flatten()).reshape(*res_shape)
    return r if out is None else copy_out(out, r, "tensorsolve", "castable")


# ---- out= ---------------------------------------------------------------------------------------
def write_out(out, result, name, cpp_name, inputs, rule):
    """torch.linalg's ``out=``: ``result`` (computed by the op, nothing recorded) written into
    ``out`` and ``out`` returned, as torch's structured kernels do. Checks in torch's order:
    TypeError for a non-tensor out; RuntimeError "<cpp_name>(): functions with out=...
    arguments don't support automatic differentiation" when an input or out requires grad in
    grad mode; RuntimeError for an out whose elements share memory (an expanded tensor: torch's
    internal-overlap check); then the dtype ``rule``: "same" (out's dtype must be the result's: torch's
    "Expected out tensor to have dtype float, but got double instead"), "scalar_type" (the
    same, as "expected scalar type Float but found Double"), "castable" (any dtype the result
    casts to safely: float32 into float64, not into an integer). An out of another shape is
    resized (torch's deprecation UserWarning when it had elements) and takes the result's
    layout; one of the right shape keeps its strides. The write bumps out's version."""
    from .._factories import _write_out
    from .._tensor import Tensor
    from ..autograd.grad_mode import state as grad_state
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_state.record and (out.requires_grad or any(
            isinstance(t, Tensor) and t.requires_grad for t in inputs)):
        raise RuntimeError(f"{cpp_name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")
    from .inplace import check_storage_writable
    check_storage_writable(out, name)
    rd, od = result._data.dtype, out._data.dtype
    if rule == "same" and rd != od:
        raise exact_dtype_error(rd, od)
    if rule == "scalar_type" and rd != od:
        raise RuntimeError(f"expected scalar type {scalar_name(rd)} but found {scalar_name(od)}")
    if rule == "castable" and not np.can_cast(rd, od, "same_kind"):
        raise RuntimeError(f"{name}: Expected result to be safely castable from "
                           f"{scalar_name(rd)} dtype, but got result with dtype "
                           f"{scalar_name(od)}")
    return _write_out(out, result._data, name, warn_resize=True)


def _out(out, result, name, cpp_name, inputs, rule):
    return result if out is None else write_out(out, result, name, cpp_name, inputs, rule)


def copy_out(out, result, name, rule="same"):
    """``out=`` of torch's composite linalg functions (matrix_norm, norm, tensorinv,
    tensorsolve): out resized when its shape differs (torch's UserWarning when it had
    elements), then ``out.copy_(result)``, so the write is recorded when the result requires
    grad (CopyBackwards) and refused for a leaf out that requires grad, as torch. ``rule``:
    "same" (RuntimeError for an out of another dtype: "<name> expected out tensor dtype Float
    but got: Double") or "castable" (any dtype the result casts to safely, as
    :func:`write_out`). The checks run before anything is written."""
    import warnings

    from .._tensor import Tensor
    from ..autograd.grad_mode import state as grad_state
    from ..autograd.graph import user_stacklevel
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    rd, od = result._data.dtype, out._data.dtype
    if rule == "same" and rd != od:
        raise RuntimeError(f"{name} expected out tensor dtype {scalar_name(rd)} but got: "
                           f"{scalar_name(od)}")
    if rule == "castable" and not np.can_cast(rd, od, "same_kind"):
        raise RuntimeError(f"{name}: Expected result to be safely castable from "
                           f"{scalar_name(rd)} dtype, but got result with dtype "
                           f"{scalar_name(od)}")
    if out.requires_grad and out.grad_fn is None and grad_state.grad_enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if out._data.shape != result._data.shape:
        if out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(result._data.shape)}. This behavior is deprecated, and in a future "
                f"PyTorch release outputs will not be resized unless they have zero elements. "
                f"You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                f"elements with t.resize_(0).", UserWarning, stacklevel=user_stacklevel())
        out._data = np.empty(result._data.shape, od)
    return out.copy_(result)


def write_out_tuple(outs, results, name, cpp_name, inputs, type_name, fields, castable=None):
    """``out=`` of the linalg functions returning named tuples (inv_ex, solve_ex, cholesky_ex,
    slogdet, lstsq), as torch's: ``outs`` a tuple or list of tensors, one per result, each of
    the result's exact dtype (info int32, rank int64; ``castable``, a message prefix: any dtype
    each result casts to safely, as lstsq), resized as :func:`write_out`; every
    check runs before anything is written. Returns torch's ``<type_name>`` named tuple of the
    outs. TypeError for a non-sequence or a sequence of another length; RuntimeError for an
    input or out that requires grad in grad mode, or an out of another dtype."""
    from .._factories import _write_out
    from .._tensor import Tensor
    from ..autograd.grad_mode import state as grad_state
    if not isinstance(outs, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(outs).__name__}")
    if len(outs) != len(results):
        raise TypeError(f"expected tuple of {len(results)} elements but got {len(outs)}")
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                            f"{type(o).__name__}")
    if grad_state.record and any(t.requires_grad for t in (*outs, *inputs)
                                 if isinstance(t, Tensor)):
        raise RuntimeError(f"{cpp_name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")
    for o, r in zip(outs, results):
        rd, od = r._data.dtype, o._data.dtype
        if castable is not None:
            # (torch's lstsq names every out "solution" in this message)
            if not np.can_cast(rd, od, "same_kind"):
                raise RuntimeError(f"{castable}: Expected solution to be safely castable from "
                                   f"{scalar_name(rd)} dtype, but got solution with dtype "
                                   f"{scalar_name(od)}")
        elif rd != od:
            raise exact_dtype_error(rd, od)
    from .inplace import check_storage_writable
    for o in outs:
        # (every out before any is written)
        check_storage_writable(o, name)
    for o, r in zip(outs, results):
        _write_out(o, r._data, name, warn_resize=True)
    return _return_type(type_name, fields)(*outs)
