"""Dense linear algebra of torch.linalg on (*, n, n) batches: inv/inv_ex, det, slogdet, logdet,
solve, cholesky/cholesky_ex, matrix_power, vector_norm, matrix_norm (with an internal SVD for
'nuc', 2 and -2) and norm. They appear in
``tapegrad.linalg`` (registered with ``linalg=``) and, where torch has them, at the top level and
as Tensor methods (``inverse``, ``det``, ``logdet``, ``slogdet``, ``cholesky``, ``matrix_power``).

Derivatives (derivatives.yaml, real case): linalg_inv_ex: -A^{-T} grad A^{-T}; linalg_det:
linalg_det_backward; linalg_slogdet: slogdet_backward (logabsdet only; the sign has none);
linalg_solve_ex: linalg_solve_backward; linalg_cholesky_ex and cholesky: cholesky_backward;
_linalg_svd: svd_backward (the Svd Function of ops/linalg_decomp.py); logdet, matrix_power and
the matrix norms are composites, as in torch. A backward that needs a solve uses :class:`Solve` itself, so double backward follows
from the same formulas.

Factorizations run in NumPy's LAPACK (no SciPy). Where torch reports LAPACK's ``info`` (the
first zero pivot of an LU, the order of the first leading minor that is not positive-definite),
it is recomputed here only when NumPy reports a failure.
"""
from __future__ import annotations

import collections
import warnings

import numpy as np

from .. import _dtype
from ..autograd.function import ArrayFunction
from ..autograd.grad_mode import state as _grad_state
from ..autograd.graph import user_stacklevel
from ._registry import op
from ._util import _make, _wrap_dim
from .reduction import VectorNorm, amax, amin, check_norm_dtype, vector_norm_checked

__all__ = ["LinAlgError"]


class LinAlgError(RuntimeError):
    """A matrix a linear-algebra op cannot handle: singular for inv/solve, not positive-definite
    for cholesky (torch.linalg.LinAlgError, also a RuntimeError)."""


LinAlgError.__module__ = "tapegrad.linalg"

_return_types = {}


def _return_type(name, fields):
    """The named tuple torch.return_types.<name> with these fields, with torch's repr."""
    rt = _return_types.get(name)
    if rt is None:
        rt = collections.namedtuple(name, fields)
        rt.__module__ = "tapegrad.return_types"
        rt.__repr__ = lambda self: (f"tapegrad.return_types.{name}(\n" + ",\n".join(
            f"{f}={v!r}" for f, v in zip(fields, self)) + ")")
        _return_types[name] = rt
    return rt


# ---- checks -------------------------------------------------------------------------------------
def _dtype_name(a):
    return _dtype.scalar_name(a.dtype)


def _check_square(A, name, low_precision=None):
    """torch's checks, in torch's order: at least 2-D, square, floating. ``low_precision``: how
    the op refuses float16 ("lu_cpu": NotImplementedError naming that kernel; "msg": torch's
    "Low precision dtypes not supported" RuntimeError)."""
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    _check_float(a, name, low_precision)


def _check_float(a, name, low_precision):
    if a.dtype.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype_name(a)}")
    if a.dtype == np.float16:
        if low_precision == "msg":
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")
        raise NotImplementedError(f"\"{low_precision}\" not implemented for 'Half'")


def _batch_size(a):
    """The number of matrices in a (*, n, n) array (reshape(-1, n, n) fails for n = 0)."""
    return int(np.prod(a.shape[:-2], dtype=np.int64))


def _batch_prefix(a, k, matrix_dims=2):
    """torch's "(Batch element k): " for a batched ``a`` (whose last ``matrix_dims`` dims are the
    matrix), "" for a single one."""
    return f"(Batch element {k}): " if a.ndim > matrix_dims else ""


def _lu_info(m):
    """LAPACK getrf's info for one n x n matrix: 1 + the index of the first exactly zero pivot
    of its LU with partial pivoting, or 0."""
    m = np.array(m, dtype=m.dtype, copy=True)
    n = m.shape[-1]
    info = 0
    for k in range(n):
        p = k + int(np.argmax(np.abs(m[k:, k])))
        m[[k, p]] = m[[p, k]]
        if m[k, k] == 0:
            info = info or k + 1
            continue
        m[k + 1:, k] /= m[k, k]
        m[k + 1:, k + 1:] -= np.outer(m[k + 1:, k], m[k, k + 1:])
    return info


def _inv_batch(a):
    """(inverse, info) of the (*, n, n) array ``a``: info (int32, batch shape) is LAPACK's for
    the matrices NumPy found singular, whose inverse is NaN (torch leaves LAPACK's partial
    result there, which ``inv_ex`` documents as unspecified)."""
    try:
        return np.linalg.inv(a), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        # (our LU may round a pivot to nonzero where LAPACK's was zero: then blame the last)
        return _each_matrix(a, np.linalg.inv, lambda m: _lu_info(m) or a.shape[-1])


def _each_matrix(a, f, info_of):
    """``f`` over the (n, n) matrices of the (*, n, n) array ``a`` one at a time, once ``f`` of
    the whole batch failed: (results, info int32 of the batch shape), where a matrix ``f``
    refuses (LinAlgError) gives NaN and ``info_of(matrix)`` as its info, 0 elsewhere."""
    n = a.shape[-1]
    flat = a.reshape(_batch_size(a), n, n)
    out = np.empty_like(flat)
    info = np.zeros(len(flat), np.int32)
    for k, m in enumerate(flat):
        try:
            out[k] = f(m)
        except np.linalg.LinAlgError:
            out[k] = np.nan
            info[k] = info_of(m)
    return out.reshape(a.shape), info.reshape(a.shape[:-2])


def _raise_singular_inv(a, info, name):
    k = int(np.flatnonzero(info.reshape(-1))[0])
    raise LinAlgError(f"{name}: {_batch_prefix(a, k)}The diagonal element "
                      f"{int(info.reshape(-1)[k])} is zero, the inversion could not be completed "
                      f"because the input matrix is singular.")


def _inv_t_or_nan(a):
    """A^{-T} for each matrix of ``a``, NaN for a singular one (where torch's LU solve divides
    by a zero pivot)."""
    return np.swapaxes(_inv_batch(a)[0], -1, -2)


def _expand_diag(v, n):
    """diag_embed of ``v`` (batch shape) repeated n times: v * I, a differentiable (*, n, n)."""
    return v.unsqueeze(-1).expand(*v.shape, n).diag_embed()


# ---- inv ----------------------------------------------------------------------------------------
class InvEx(ArrayFunction, name="LinalgInvExBackward0"):
    """(A^{-1}, info) of a (*, n, n) batch; info is int32 and has no gradient. derivatives.yaml
    linalg_inv_ex: A: -A^{-H} grad A^{-H} (from the saved inverse)."""

    @staticmethod
    def forward(ctx, a):
        inv, info = _inv_batch(a)
        # (each matrix column-major, as torch's LAPACK result: strides, and the views a reshape
        # of it can be, follow)
        inv = _colmajor(inv)
        ctx.save_for_backward(inv)
        ctx.mark_non_differentiable(info)
        return inv, info

    @staticmethod
    def backward(ctx, g, _ginfo=None):
        inv, = ctx.saved_tensors
        it = inv.mT
        return -(it @ (g @ it))


def _inv_ex(A, check_errors, name):
    _check_square(A, "linalg.inv", "msg")
    inv, info = InvEx.apply(A)
    if check_errors and info._data.any():
        _raise_singular_inv(A._data, info._data, name)
    return inv, info


@op("inverse", linalg="inv")
def inverse(input, *, out=None):
    """The inverse of each matrix of a (*, n, n) float32/float64 batch, of the same shape and
    dtype (0 x 0: empty). Also ``tapegrad.linalg.inv``, ``Tensor.inverse``.
    LinalgInvExBackward0 (derivatives.yaml linalg_inv_ex: -A^{-H} grad A^{-H}).

    Raises RuntimeError for fewer than 2 dims, non-square or non-floating input (float16:
    "Low precision dtypes not supported"); LinAlgError (a RuntimeError) for a singular matrix
    (an exactly zero LU pivot), naming the batch element and the pivot as torch."""
    return _out(out, _inv_ex(input, True, "linalg.inv")[0], "linalg_inv", "linalg_inv_ex",
                (input,), "same")


@op("inv_ex", method=False, namespace=False, linalg="inv_ex")
def inv_ex(A, *, check_errors=False, out=None):
    """Named tuple ``(inverse, info)``: :func:`inverse` without the singularity error unless
    ``check_errors``; info (int32, the batch shape) is LAPACK's getrf info, nonzero for a
    singular matrix, whose inverse is then unspecified (NaN here). LinalgInvExBackward0.

    ``out``: a pair of tensors (float, int32) written as torch's (tuple type linalg_inv_ex_out).

    Raises as :func:`inverse` (LinAlgError only with ``check_errors=True``)."""
    inv, info = _inv_ex(A, check_errors, "linalg.inv_ex")
    return _tuple_out(out, (inv, info), "linalg_inv_ex", "linalg_inv_ex", (A,), "linalg_inv_ex",
                      ("inverse", "info"))


# ---- solve --------------------------------------------------------------------------------------
def _solve_arrays(a, b, vector, left, strict):
    """(X, info) for :class:`Solve`: batch dims broadcast; info (int32, A's batch shape: torch
    factors A before broadcasting) LAPACK getrf's for each matrix of A. ``strict``: a singular A
    raises LinAlgError (torch.linalg.solve's message); otherwise X is NaN where A is singular
    (torch leaves LAPACK's infinities and NaNs) and info nonzero there."""
    bm = b[..., None] if vector else b
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    a_ = np.broadcast_to(a, batch + a.shape[-2:])
    bm = np.broadcast_to(bm, batch + bm.shape[-2:])
    if not left:
        a_, bm = np.swapaxes(a_, -1, -2), np.swapaxes(bm, -1, -2)
    info = np.zeros(a.shape[:-2], np.int32)
    try:
        x = np.linalg.solve(a_, bm)
    except np.linalg.LinAlgError:
        if strict:
            raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix "
                              "is singular.") from None
        info = _inv_batch(a)[1]
        bad = np.broadcast_to(info != 0, batch)
        a_ = np.where(bad[..., None, None], np.eye(a.shape[-1], dtype=a.dtype), a_)
        x = np.linalg.solve(a_, bm)
        x[bad] = np.nan
    if vector:
        return x[..., 0], info
    # LAPACK's column-major X (of the transposed system for left=False: X^T then row-major)
    x = _colmajor(x)
    return (x if left else np.swapaxes(x, -1, -2)), info


def _colmajor(x):
    """``x`` with each of its (*, m, n) matrices laid out column-major, as LAPACK returns them
    (an empty ``x`` stays in C order, whose strides torch's empty results have)."""
    if x.size == 0:
        return x
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


class Solve(ArrayFunction, name="LinalgSolveExBackward0"):
    """X with A X = B (``left``) or X A = B, batch dims broadcast; ``vector``: B holds vectors
    (*, n). derivatives.yaml linalg_solve_ex (linalg_solve_backward): gB = solve(A^H, gX, left),
    gA = -gB X^H (left) or -X^H gB."""

    @staticmethod
    def forward(ctx, a, b, vector, left):
        x, _info = _solve_arrays(a, b, vector, left, True)
        ctx.conf = (vector, left)
        ctx.save_for_backward(a, x if ctx.needs(0) else None)
        return x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        vector, left = ctx.conf
        gb = Solve.apply(a.mT, g, vector, left)
        ga = None
        if ctx.needs(0):
            gbm, xm = (gb.unsqueeze(-1), x.unsqueeze(-1)) if vector else (gb, x)
            ga = -(gbm @ xm.mT) if left else -(xm.mT @ gbm)
        return ga, (gb if ctx.needs(1) else None), None, None


@op("solve", method=False, namespace=False, linalg="solve")
def solve(A, B, *, left=True, out=None):
    """X with A X = B (``left=False``: X A = B) for A (*, n, n) and B (*, n, k) (``left=False``:
    (*, k, n)), or, with ``left``, B (n,) / A's batch + (n,) for vectors. Batch dims broadcast;
    the result has the broadcast batch. Same floating dtype for both. LinalgSolveExBackward0
    (derivatives.yaml linalg_solve_ex: gB = solve(A^H, gX), gA = -gB X^H, or -X^H gB for
    ``left=False``).

    Raises RuntimeError for non-floating or different dtypes, non-square A, shapes that do not
    fit (vectors with ``left=False``, as torch); LinAlgError for a singular A."""
    _check_solve(A, B, left)
    x = Solve.apply(A, B, _is_vector_rhs(A._data, B._data), bool(left))
    return _out(out, x, "linalg_solve", "_linalg_solve_ex", (A, B), "same")


def _is_vector_rhs(a, b):
    """torch's linalg_solve_is_vector_rhs: B is then read as a column (*, n, 1), either side."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def _check_solve(A, B, left):
    """linalg.solve's (and solve_ex's) checks, in torch's order."""
    a, b = A._data, B._data
    _check_float(a, "linalg.solve", "lu_cpu")
    if a.dtype != b.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_dtype_name(a)} and B of type {_dtype_name(b)} instead")
    if a.ndim < 2:
        raise RuntimeError("linalg.solve: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.solve: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if b.ndim == 0:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    bm = b.shape + (1,) if _is_vector_rhs(a, b) else b.shape
    n = a.shape[-1]
    if (bm[-2] if left else bm[-1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {bm[-2]}x{bm[-1]})")
    _check_broadcast(bm[:-2], a.shape[:-2])


class SolveEx(Solve, name="LinalgSolveExBackward0"):
    """:class:`Solve` that also returns LAPACK's info (int32, no gradient) and does not raise
    for a singular A (its X is NaN there). Same node and formula as Solve
    (derivatives.yaml linalg_solve_ex)."""

    @staticmethod
    def forward(ctx, a, b, vector, left):
        x, info = _solve_arrays(a, b, vector, left, False)
        ctx.conf = (vector, left)
        ctx.save_for_backward(a, x if ctx.needs(0) else None)
        ctx.mark_non_differentiable(info)
        return x, info

    @staticmethod
    def backward(ctx, g, _ginfo=None):
        return Solve.backward(ctx, g)


@op("solve_ex", method=False, namespace=False, linalg="solve_ex")
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """Named tuple ``(result, info)``: :func:`solve` without the singularity error unless
    ``check_errors``. info (int32) is LAPACK getrf's for each matrix
    of A (A's batch shape, before broadcasting): 0, or 1 + the index of its first zero pivot,
    where the result is unspecified (NaN here). LinalgSolveExBackward0 on the result (derivatives.yaml linalg_solve_ex).

    Raises as :func:`solve`; with ``check_errors`` LinAlgError for a singular A, naming its
    batch element as torch."""
    _check_solve(A, B, left)
    x, info = SolveEx.apply(A, B, _is_vector_rhs(A._data, B._data), bool(left))
    if check_errors and info._data.any():
        k = int(np.flatnonzero(info._data.reshape(-1))[0])
        raise LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(info._data, k, 0)}The solver "
                          f"failed because the input matrix is singular.")
    return _tuple_out(out, (x, info), "linalg_solve_ex", "_linalg_solve_ex", (A, B),
                      "linalg_solve_ex", ("result", "info"))


def _out(out, result, name, cpp_name, inputs, rule):
    """``result``, or (with ``out``) :func:`tapegrad.ops.linalg_solvers.write_out` of it."""
    if out is None:
        return result
    from .linalg_solvers import write_out
    return write_out(out, result, name, cpp_name, inputs, rule)


def _tuple_out(out, results, name, cpp_name, inputs, type_name, fields):
    """The named tuple of ``results``, or (with ``out``) of the tensors of ``out`` they are
    written into (:func:`tapegrad.ops.linalg_solvers.write_out_tuple`; torch's type is then
    ``<type_name>_out``)."""
    if out is None:
        return _return_type(type_name, fields)(*results)
    from .linalg_solvers import write_out_tuple
    return write_out_tuple(out, results, name, cpp_name, inputs, type_name + "_out", fields)


def _check_broadcast(sa, sb):
    """torch's infer_size error for batch shapes that do not broadcast (B's is "tensor a")."""
    nd = max(len(sa), len(sb))
    for i in range(nd - 1, -1, -1):
        off = nd - 1 - i
        x = sa[len(sa) - 1 - off] if off < len(sa) else 1
        y = sb[len(sb) - 1 - off] if off < len(sb) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")


# ---- det / slogdet / logdet ---------------------------------------------------------------------
def _cofactors(A):
    """The cofactor matrix of each matrix of A (det(A) A^{-T} when A is invertible), from the
    determinants of the (n-1) x (n-1) minors, so it is differentiable at singular matrices too."""
    n = A.shape[-1]
    if n <= 1:
        return _make(np.ones_like(A._data))
    r = np.array([[j for j in range(n) if j != i] for i in range(n)])
    minors = A[..., r[:, None, :, None], r[None, :, None, :]]
    sign = (-1.0) ** np.add.outer(np.arange(n), np.arange(n))
    return _MinorDet.apply(minors) * _make(sign.astype(A._data.dtype))


class Det(ArrayFunction, name="LinalgDetBackward0"):
    """det of each matrix of a (*, n, n) batch (1 for 0 x 0). derivatives.yaml linalg_det
    (linalg_det_backward): grad * det * A^{-H}, with torch's two paths. Plain backward: torch
    solves with its LU, zero pivots replaced by eps, so the gradient is 0 where det is exactly 0;
    here grad * det * A^{-T} from NumPy's inverse, and 0 where det is exactly 0. With create_graph:
    solve(A^H, grad * det * I), or where |det| < 100 eps the cofactor matrix (torch: from the
    SVD; here from the minors' determinants, the same matrix, whose derivative is then also
    finite where torch's SVD formula is NaN: repeated singular values, e.g. the zero matrix)."""

    exact = False

    @staticmethod
    def forward(ctx, a):
        d = np.asarray(np.linalg.det(a), dtype=a.dtype)
        ctx.save_for_backward(a, d)
        return d

    @staticmethod
    def backward(ctx, g):
        A, det = ctx.saved_tensors
        if not (_grad_state.grad_enabled or ctx._forward_cls.exact):
            a, d = A._data, det._data
            gd = (g._data * d).reshape(-1)
            n = a.shape[-1]
            flat = a.reshape(_batch_size(a), n, n)
            out = np.zeros_like(flat)
            ok = gd != 0
            if ok.any():
                out[ok] = gd[ok, None, None] * _inv_t_or_nan(flat[ok])
            return _make(out.reshape(a.shape))
        eps = np.finfo(A._data.dtype).eps
        if (np.abs(det._data) < 100 * eps).any():
            return g.unsqueeze(-1).unsqueeze(-1) * _cofactors(A)
        return Solve.apply(A.mT, _expand_diag(g * det, A.shape[-1]), False, True)


class _MinorDet(Det, name="LinalgDetBackward0"):
    """:class:`Det` of the minors inside :func:`_cofactors`: its gradient is always the true
    cofactor matrix, as the second derivative of det needs (torch gets it from the SVD), never
    the plain path's zero at a singular minor."""

    exact = True


@op("det", linalg="det")
def det(input, *, out=None):
    """Determinant of each matrix of a (*, n, n) float32/float64 batch: shape (*), the input's
    dtype; 1 for 0 x 0; 0 (with a finite gradient, as torch's) for a singular matrix. Also
    ``tapegrad.linalg.det``, ``Tensor.det``. LinalgDetBackward0 (derivatives.yaml linalg_det,
    see :class:`Det`).

    Raises RuntimeError for fewer than 2 dims, non-square or non-floating input;
    NotImplementedError for float16 (torch's "lu_cpu")."""
    _check_square(input, "linalg.det", "lu_cpu")
    return _out(out, Det.apply(input), "linalg_det", "_linalg_det", (input,), "same")


class Slogdet(ArrayFunction, name="LinalgSlogdetBackward0"):
    """(sign, log|det|) of each matrix (sign 0 and -inf for a singular one). derivatives.yaml
    linalg_slogdet (slogdet_backward, real case): A: grad_logabsdet * A^{-H}; the sign gets none.
    At a singular matrix (not differentiable there) the gradient is NaN; torch's LU solve gives
    infinities whose signs are LAPACK's rounding."""

    @staticmethod
    def forward(ctx, a):
        sign, logabs = np.linalg.slogdet(a)
        ctx.save_for_backward(a)
        return np.asarray(sign, a.dtype), np.asarray(logabs, a.dtype)

    @staticmethod
    def backward(ctx, _gsign, glog):
        A, = ctx.saved_tensors
        if not _grad_state.grad_enabled:
            return _make(glog._data[..., None, None] * _inv_t_or_nan(A._data))
        return Solve.apply(A.mT, _expand_diag(glog, A.shape[-1]), False, True)


def _slogdet(A, name):
    _check_square(A, name, "msg")
    return Slogdet.apply(A)


@op("slogdet")
def slogdet(input):
    """Named tuple ``(sign, logabsdet)`` of each matrix of a (*, n, n) float32/float64 batch:
    det = sign * exp(logabsdet); sign 0 and logabsdet -inf for a singular matrix; (1, 0) for
    0 x 0. Also ``Tensor.slogdet``; ``tapegrad.linalg.slogdet`` is the same with torch's
    linalg_slogdet tuple type. LinalgSlogdetBackward0 on both outputs (derivatives.yaml
    linalg_slogdet: grad_logabsdet * A^{-H}).

    Raises RuntimeError for fewer than 2 dims, non-square, non-floating or float16 input."""
    return _return_type("slogdet", ("sign", "logabsdet"))(*_slogdet(input, "linalg.slogdet"))


@op("slogdet", method=False, namespace=False, linalg="slogdet")
def linalg_slogdet(A, *, out=None):
    """:func:`slogdet` as torch.linalg.slogdet (tuple type linalg_slogdet); ``out``: a pair of
    tensors written as torch's (tuple type linalg_slogdet_out)."""
    return _tuple_out(out, _slogdet(A, "linalg.slogdet"), "linalg_slogdet", "_linalg_slogdet",
                      (A,), "linalg_slogdet", ("sign", "logabsdet"))


@op("logdet")
def logdet(input):
    """log det of each matrix of a (*, n, n) float32/float64 batch: NaN where det < 0, -inf
    where it is 0. A composite as torch's: where(sign == -1, nan, logabsdet) of slogdet
    (WhereBackward0 over LinalgSlogdetBackward0).

    Raises RuntimeError for fewer than 2 dims, non-square, non-floating or float16 input."""
    from .pointwise import where
    sign, logabs = _slogdet(input, "logdet")
    return where(sign == -1.0, float("nan"), logabs)


# ---- cholesky -----------------------------------------------------------------------------------
def _cholesky_batch(a, upper):
    """(factor, info) for a (*, n, n) array: L from A's lower triangle (U from its upper one,
    as LAPACK's potrf); info (int32, batch shape) is the order of the first leading minor that
    is not positive-definite, where the factor is NaN (torch leaves LAPACK's partial result)."""
    m = np.swapaxes(a, -1, -2) if upper else a
    try:
        f, info = np.linalg.cholesky(m), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        n = a.shape[-1]
        f, info = _each_matrix(m, np.linalg.cholesky, lambda mk: next(
            (j for j in range(1, n + 1) if not _is_pd(mk[:j, :j])), n))
    return (np.swapaxes(f, -1, -2) if upper else f), info


def _is_pd(m):
    try:
        np.linalg.cholesky(m)
        return True
    except np.linalg.LinAlgError:
        return False


class CholeskyEx(ArrayFunction, name="LinalgCholeskyExBackward0"):
    """(L, info) with A = L L^H (``upper``: U with A = U^H U); info int32, no gradient.
    derivatives.yaml linalg_cholesky_ex: cholesky_backward(grad, upper, L) (Iain Murray, 2016)."""

    @staticmethod
    def forward(ctx, a, upper):
        f, info = _cholesky_batch(a, upper)
        ctx.upper = upper
        ctx.save_for_backward(f)
        ctx.mark_non_differentiable(info)
        return f, info

    @staticmethod
    def backward(ctx, g, _ginfo=None):
        L, = ctx.saved_tensors
        if ctx.upper:
            L, g = L.mT, g.mT
        # tril(L^H gL) only sees tril(gL), so gL needs no masking
        ga = (L.mT @ g).tril()
        ga = 0.5 * (ga + ga.tril(-1).mT)
        # the two triangular solves of torch's formula: L^{-H} ga, then (.) L^{-1}
        ga = Solve.apply(L.mT, ga, False, True)
        return Solve.apply(L, ga, False, False), None


class Cholesky(CholeskyEx, name="CholeskyBackward0"):
    """:class:`CholeskyEx` recorded as torch.cholesky's CholeskyBackward0 (derivatives.yaml
    cholesky: cholesky_backward)."""


def _cholesky(A, upper, name, cls):
    _check_square(A, name, "cholesky_cpu")
    f, info = cls.apply(A, bool(upper))
    return f, info


def _raise_not_pd(a, info, name):
    k = int(np.flatnonzero(info.reshape(-1))[0])
    raise LinAlgError(f"{name}: {_batch_prefix(a, k)}The factorization could not be completed "
                      f"because the input is not positive-definite (the leading minor of order "
                      f"{int(info.reshape(-1)[k])} is not positive-definite).")


@op("cholesky", method=False, namespace=False, linalg="cholesky")
def linalg_cholesky(A, *, upper=False, out=None):
    """L with A = L L^T for a (*, n, n) symmetric positive-definite float32/float64 batch, from
    A's lower triangle (``upper=True``: U = L^T with A = U^T U, from the upper triangle).
    LinalgCholeskyExBackward0 (derivatives.yaml linalg_cholesky_ex: cholesky_backward).

    Raises RuntimeError for fewer than 2 dims, non-square or non-floating input;
    NotImplementedError for float16 (torch's "cholesky_cpu"); LinAlgError for a matrix that is
    not positive-definite, naming the batch element and the leading minor as torch."""
    f, info = _cholesky(A, upper, "linalg.cholesky", CholeskyEx)
    if info._data.any():
        _raise_not_pd(A._data, info._data, "linalg.cholesky")
    return _out(out, f, "linalg_cholesky", "linalg_cholesky_ex", (A,), "same")


@op("cholesky_ex", method=False, namespace=False, linalg="cholesky_ex")
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """Named tuple ``(L, info)``: :func:`linalg_cholesky` without the positive-definiteness
    error unless ``check_errors``; info (int32, batch shape) is the order of the first leading
    minor that is not positive-definite (0: success), L is then unspecified (NaN here).
    LinalgCholeskyExBackward0."""
    f, info = _cholesky(A, upper, "linalg.cholesky", CholeskyEx)
    if check_errors and info._data.any():
        _raise_not_pd(A._data, info._data, "linalg.cholesky_ex")
    return _tuple_out(out, (f, info), "linalg_cholesky_ex", "linalg_cholesky_ex", (A,),
                      "linalg_cholesky_ex", ("L", "info"))


@op("cholesky")
def cholesky(input, upper=False):
    """torch.cholesky (deprecated for linalg.cholesky, with torch's UserWarning): L of
    :func:`linalg_cholesky`, or U = L^T with ``upper=True``. Also ``Tensor.cholesky``.
    CholeskyBackward0 (derivatives.yaml cholesky: cholesky_backward).

    Raises as linalg.cholesky with the "cholesky" prefix, except NotImplementedError
    ("cholesky_cpu") for any non-floating input, as torch."""
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
        "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results "
        "for all valid (symmetric positive definite) inputs.", UserWarning, stacklevel=2)
    a = input._data
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2] and a.dtype.kind != "f":
        raise NotImplementedError(f"\"cholesky_cpu\" not implemented for '{_dtype_name(a)}'")
    f, info = _cholesky(input, upper, "cholesky", Cholesky)
    if info._data.any():
        _raise_not_pd(a, info._data, "cholesky")
    return f


# ---- matrix_power -------------------------------------------------------------------------------
@op("matrix_power", linalg="matrix_power")
def matrix_power(input, n):
    """A^n for each matrix of a (*, m, m) batch and an integer n, as torch's composite: n = 0
    the identity (CopyBackwards, zero gradient), n = 1 a clone, n < 0 powers of
    :func:`inverse` (floating input only), otherwise repeated squaring with matmul (MmBackward0
    / the matmul nodes). Integer input works for n >= 0. Also ``tapegrad.linalg.matrix_power``,
    ``Tensor.matrix_power``.

    Raises RuntimeError for fewer than 2 dims or non-square input; inverse's errors for n < 0;
    TypeError for a non-integer n."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    a = input._data
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {a.shape[-2]} by {a.shape[-1]} matrices")
    n = int(n)
    if n == 0:
        # a clone copied over, so the result is in the graph (with a zero gradient) as torch's
        return input.clone().copy_(_make(np.eye(a.shape[-1], dtype=a.dtype)))
    if n == 1:
        return input.clone()
    x = inverse(input) if n < 0 else input
    n = abs(n)
    if n == 2:
        return x @ x
    if n == 3:
        return (x @ x) @ x
    z = result = None
    while n > 0:     # binary powering from the least significant bit, as torch
        bit, n = n % 2, n // 2
        z = x if z is None else z @ z
        if bit:
            result = z if result is None else result @ z
    return result


# ---- singular values (the 'nuc', 2 and -2 matrix norms) -----------------------------------------
def _svdvals_norm(A, ord, d0, d1, keepdim, dtype):
    """torch's 'nuc' / 2 / -2 matrix norm: the singular values of A with dims (d0, d1) moved to
    the end, summed or reduced by amax / amin; keepdim puts the two dims back by a permute."""
    from .linalg_decomp import Svd  # (it imports this module)
    from .reduction import sum as _sum
    if dtype is not None:
        A = A.to(dtype)
    nd = A._data.ndim
    perm = [d for d in range(nd) if d not in (d0, d1)] + [d0, d1]
    s = Svd.apply(A.permute(*perm), False)[1]
    if ord == "nuc":
        r = _sum(s, -1, keepdim)
    else:
        r = _max_or_min(s, -1, ord, keepdim)
    if keepdim:
        r = r.unsqueeze(-1).permute(*np.argsort(perm).tolist())
    return r


# ---- norms --------------------------------------------------------------------------------------
@op("vector_norm", method=False, namespace=False, linalg="vector_norm")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ord-norm of ``x`` as a vector: over all elements (dim=None) or over ``dim`` (int or
    tuple); ord any number, inf (max |x|), -inf (min |x|), 0 (count of nonzeros, no gradient).
    ``dtype``: compute in that floating dtype (no narrowing). LinalgVectorNormBackward0
    (derivatives.yaml linalg_vector_norm: linalg_vector_norm_backward).

    Raises RuntimeError for non-floating input or a non-floating / narrowing ``dtype``;
    IndexError for a dim out of range."""
    return _out(out, vector_norm_checked(x, ord, dim, keepdim, dtype), "linalg_vector_norm",
                "linalg_vector_norm", (x,), "same")


def _matrix_dims(A, dim, name):
    nd = A._data.ndim
    if isinstance(dim, (int, np.integer)) or len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in np.atleast_1d(dim))}")
    d0, d1 = (_wrap_dim(int(d), nd, name) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({d0}, {d1})")
    return d0, d1


@op("matrix_norm", method=False, namespace=False, linalg="matrix_norm")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The ord-norm of each matrix over dims ``dim`` (default the last two), composites as
    torch's: 'fro' (vector 2-norm of the entries: LinalgVectorNormBackward0); 1 / -1 (max / min
    column abs-sum) and inf / -inf (max / min row abs-sum): amax / amin (AmaxBackward0,
    AminBackward0) of a 1-norm vector_norm; 'nuc' (sum of the singular values: SumBackward1),
    2 / -2 (largest / smallest singular value: amax / amin) of the singular values
    (LinalgSvdBackward0, derivatives.yaml svd_backward). ``keepdim``: keep both dims as size 1
    (for the singular-value norms through a permute, PermuteBackward0, as torch). Over empty
    matrices the positive max-type orders (2, 1, inf) give 0, as torch's, and the min-type ones
    raise IndexError where their amin meets an empty dim.

    Raises RuntimeError, in torch's order, for an unsupported order, fewer than 2 dims, a
    non-floating input, a float16 one for 'nuc' / 2 / -2 (torch's SVD has no float16 kernel), a
    bad ``dim``, or a ``dtype`` that is not floating or narrows the input's.

    ``out``: written as torch's composite writes it (resized, then copied into with
    ``copy_``: see :func:`tapegrad.ops.linalg_solvers.copy_out`)."""
    r = _matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if out is None:
        return r
    from .linalg_solvers import copy_out
    return copy_out(out, r, "linalg.matrix_norm")


def _matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """:func:`matrix_norm` without ``out``."""
    # torch's order of checks: the order first, then A, dim and dtype
    # (_linalg_matrix_norm_checks; the singular-value norms have no float16 kernel)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        by_svd = ord == "nuc"
    else:
        if abs(ord) not in (1, 2, np.inf):
            raise RuntimeError(f"linalg.matrix_norm: Order {_fmt_ord(ord)} not supported.")
        by_svd = abs(ord) == 2
    a = A._data
    if a.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if a.dtype.kind != "f":
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_dtype_name(a)}")
    if by_svd and a.dtype == np.float16:
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got Half")
    d0, d1 = _matrix_dims(A, dim, "linalg.matrix_norm")
    if dtype is not None:
        check_norm_dtype(A, dtype, "linalg.matrix_norm")
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm_checked(A, 2, (d0, d1), keepdim, dtype)
        return _svdvals_norm(A, ord, d0, d1, keepdim, dtype)
    if abs(ord) == 2:
        return _svdvals_norm(A, ord, d0, d1, keepdim, dtype)
    if abs(ord) == np.inf:   # the inf-norm is the 1-norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    col = vector_norm_checked(A, 1, d0, keepdim, dtype)
    return _max_or_min(col, d1, ord, keepdim)


def _max_or_min(v, d, ord, keepdim):
    """amax (``ord`` > 0) or amin of ``v`` over dim ``d``, as torch's matrix_norm takes them: a
    largest-value norm over an empty dim is 0 (the norm of an empty matrix), a new tensor with
    no history as torch's; amin of an empty dim raises IndexError, as amin."""
    if ord > 0 and v._data.shape[d] == 0:
        shape = list(v._data.shape)
        if keepdim:
            shape[d] = 1
        else:
            del shape[d]
        return _make(np.zeros(shape, v._data.dtype))
    return (amax if ord > 0 else amin)(v, d, keepdim)


def _fmt_ord(o):
    """A Scalar as torch prints it in a message: 3, 1.5, inf."""
    if isinstance(o, float) and o.is_integer():
        return str(int(o))
    return str(o)


_DEPRECATED = ("{name} is deprecated and it is just left for JIT compatibility (as torch's "
               "at::{name}). It will be removed in a future PyTorch release. Please use "
               "`{instead}` instead")
_WARNED = set()     # the deprecated norms that warned already: once a process, as torch's


def _deprecated(name, instead):
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(_DEPRECATED.format(name=name, instead=instead), UserWarning,
                      stacklevel=user_stacklevel())


@op("nuclear_norm", method=False)
def nuclear_norm(input, dim=None, keepdim=False):
    """torch.nuclear_norm (deprecated, with torch's UserWarning, once a process): the sum of the singular values
    of each matrix over ``dim`` (the last two dims when None), as
    ``linalg.matrix_norm(input, 'nuc', dim, keepdim)`` computes and records it (SumBackward1;
    derivatives.yaml svd_backward). A bool second argument is ``keepdim``, as in torch's first
    overload. Raises as :func:`matrix_norm`."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    _deprecated("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


class FrobeniusNorm(VectorNorm, name="NormBackward1"):
    """The 2-norm over at most two dims, recorded as torch's frobenius_norm records it (its
    legacy norm op). derivatives.yaml norm.ScalarOpt_dim: norm_backward, as
    :class:`~tapegrad.ops.reduction.VectorNorm`."""


@op("frobenius_norm", method=False)
def frobenius_norm(input, dim, keepdim=False):
    """torch.frobenius_norm (deprecated, with torch's UserWarning, once a process): the 2-norm over ``dim`` (an
    int or at most two dims; the dtype is the input's), NormBackward1. Raises RuntimeError for
    more than two dims, non-floating input or a bad dim (IndexError out of range), as torch."""
    dl = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    _deprecated("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")
    if len(dl) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dl)} dimensions instead. "
                           f"(frobenius_norm: dim={list(dl)})")
    return vector_norm_checked(input, 2, dl, keepdim, None, FrobeniusNorm)


@op("norm", method=False, namespace=False, linalg="norm")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.norm: with ``ord`` None, the vector 2-norm over ``dim`` (all elements when
    None); with ``ord`` a string, :func:`matrix_norm` over ``dim`` (default (0, 1)); with ``ord``
    a number, :func:`matrix_norm` when ``dim`` has 2 entries or is None on a 2-D input, else
    :func:`vector_norm`.

    Raises RuntimeError for a ``dim`` of another length, for ``ord`` without ``dim`` on an input
    that is not 1-D or 2-D, and the errors of the norm it calls.

    ``out``: written as torch's composite writes it (resized, then copied into with
    ``copy_``: see :func:`tapegrad.ops.linalg_solvers.copy_out`)."""
    r = _norm(A, ord, dim, keepdim, dtype=dtype)
    if out is None:
        return r
    from .linalg_solvers import copy_out
    return copy_out(out, r, "linalg.norm")


def _norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """:func:`norm` without ``out``."""
    nd = A._data.ndim
    if dim is not None:
        dl = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
        if len(dl) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dl)}")
    elif ord is not None and nd not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {nd}D.")
    if isinstance(ord, str):
        return _matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    if ord is not None and ((dim is not None and len(dl) == 2) or (dim is None and nd == 2)):
        return _matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm_checked(A, 2 if ord is None else ord, dim, keepdim, dtype)
