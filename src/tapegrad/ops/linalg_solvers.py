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

The factorizations run in NumPy's LAPACK (no SciPy). Where torch's LAPACK result is laid out
column-major (solve_triangular, cholesky_solve, cholesky_inverse: each matrix's columns are
contiguous), the result here is laid out the same, so ``.stride()`` agrees.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import _make
from .linalg_extra import (
    LinAlgError,
    _batch_prefix,
    _batch_size,
    _check_broadcast,
    _dtype_name,
)

__all__ = ["cholesky_inverse", "cholesky_solve", "solve_triangular"]


def _need_lapack_float(a, kernel):
    """torch's NotImplementedError naming the CPU ``kernel`` for an array LAPACK cannot take
    (integer, bool, float16)."""
    if a.dtype.kind != "f" or a.dtype == np.float16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype_name(a)}'")


def _colmajor(x):
    """``x`` with each of its (*, m, n) matrices laid out column-major, as LAPACK returns them."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


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
def solve_triangular(A, B, *, upper=_REQUIRED, left=True, unitriangular=False):
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
    return SolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular))


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
def cholesky_solve(input, input2, upper=False):
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
    return CholeskySolve.apply(input, input2, bool(upper))


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
def cholesky_inverse(input, upper=False):
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
    return CholeskyInverse.apply(input, bool(upper))
