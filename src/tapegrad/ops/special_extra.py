"""heaviside (+ ``Tensor.heaviside_``), float_power (+ ``Tensor.float_power_``), aminmax, kthvalue,
erfc (+ ``erfc_``) and erfinv (+ ``Tensor.erfinv_``), matching torch's names and surface (torch
has ``torch.erfc_`` as a function, but ``heaviside_``, ``float_power_`` and ``erfinv_`` only as
methods).

Derivatives (tools/autograd/derivatives.yaml): heaviside: none (torch records a ``NotImplemented``
node whose backward raises). float_power: torch's composite ``pow(input.to(double),
exponent.to(double))``, so its nodes are pow's (PowBackward0/1/2, after ToCopyBackward0 for a
non-float64 input). aminmax: each output's gradient is spread evenly over the elements equal to
that output (``scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim),
restore_reduced_dims(result, dim, keepdim) == self, dim)``, as amax/amin), the two summed.
kthvalue: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim). erfc:
-2. / sqrt(M_PI) * exp(-(self.pow(2))) * grad. erfinv: 0.5 * sqrt(M_PI) *
exp(self.erfinv().pow(2)) * grad. Each is written with tapegrad ops, so it is differentiable
again (create_graph=True).
"""
from __future__ import annotations

import numbers
from math import isnan

import numpy as np

from .. import _dtype
from ..autograd.function import ArrayFunction
from . import pointwise as P
from ._registry import op
from ._util import Tensor, _make, _wrap_dim, broadcast_error, coerce_operand, to_float
from .inplace import inplace
from .pointwise import _erf_array, _horner, exp, pow
from .reduction import IndexSelectScatter, _return_type
from .scatter import _need_tensor

_F64 = np.dtype(np.float64)


# ---- heaviside ----------------------------------------------------------------------------------
class Heaviside(ArrayFunction, name="NotImplemented"):
    """``values`` where input == 0, else 1 where input > 0 and 0 elsewhere (NaN included, as
    torch's kernel ``a == 0 ? b : a > 0``). torch has no derivative (derivatives.yaml heaviside:
    not_implemented): a ``NotImplemented`` node whose backward raises."""

    @staticmethod
    def forward(ctx, x, v):
        if x.dtype != v.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different "
                               f"dtypes. (heaviside: input is {_dtype.from_numpy_dtype(x.dtype)}, "
                               f"values is {_dtype.from_numpy_dtype(v.dtype)}; convert one, e.g. "
                               f"values.to(input.dtype))")
        return np.where(x == 0, v, x > 0).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


@op("heaviside")
def heaviside(input, values):
    """The Heaviside step function: ``values`` where ``input`` is 0 (either zero), 1 where
    ``input > 0``, 0 where ``input < 0`` or is NaN (as torch's kernel, unlike NumPy's, which
    gives NaN).

    Result: the broadcast shape; the common dtype, which must be both tensors' (torch does not
    promote here). Not differentiable: with an input that requires grad the result is recorded
    on a ``NotImplemented`` node (as torch), whose backward raises RuntimeError ("derivative for
    aten::heaviside is not implemented").

    Raises:
        TypeError: input or values is not a Tensor (a number is refused, as torch).
        RuntimeError: input and values of different dtypes (checked first, as torch); shapes
            that do not broadcast (naming the op and the shapes)."""
    _need_tensor(input, "heaviside", "input", 1)
    _need_tensor(values, "heaviside", "values", 2)
    if input._data.dtype == values._data.dtype:     # (else forward's dtype error comes first)
        _check_broadcast("heaviside", input, values)
    return Heaviside.apply(input, values)


@op("heaviside_", namespace=False)
def heaviside_(self, values):
    """In-place :func:`heaviside` (a method only, as in torch); returns self. Raises as
    :func:`heaviside`, and RuntimeError when the broadcast shape is not self's, and for what any
    in-place op refuses (see ``add_``)."""
    _need_tensor(values, "heaviside_", "values", 1)
    return inplace(self, Heaviside, (values,), "heaviside_")


# ---- float_power --------------------------------------------------------------------------------
def _check_broadcast(op_name, a, b):
    """torch's RuntimeError, naming ``op_name``, for tensors whose shapes do not broadcast."""
    try:
        np.broadcast_shapes(a._data.shape, b._data.shape)
    except ValueError as e:
        raise broadcast_error(op_name, a, b, reason=str(e)) from None


def _double_number(v, op_name, arg):
    """A number operand of float_power as the Python float torch converts it to (a NumPy scalar
    as coerce_operand reads it; bool is 0.0/1.0)."""
    if isinstance(v, np.generic):
        v = coerce_operand(v)
    if isinstance(v, complex):
        raise TypeError(f"{op_name}(): tapegrad has no complex dtypes (got {arg}={v!r})")
    if not isinstance(v, numbers.Real):
        raise TypeError(f"{op_name}(): argument '{arg}' must be Tensor or Number, not "
                        f"{type(v).__name__}")
    if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 64:
        raise OverflowError(f"{op_name}: int too big to convert ({arg}={v})")
    return float(v)


def _double(t):
    return t if t._data.dtype == _F64 else t.to(_dtype.float64)


@op("float_power")
def float_power(input, exponent):
    """``input ** exponent`` computed in float64, whatever the operands' dtypes: a float64
    result of the broadcast shape. Either operand may be a number (not both). Recorded as torch
    records its composite, ``pow(input.double(), exponent.double())``: PowBackward0 (tensor **
    number), PowBackward1 (tensor ** tensor), PowBackward2 (number ** tensor), after a
    ToCopyBackward0 for a tensor that is not float64, so each gradient comes back in its input's
    dtype. A negative base to a non-integer power is NaN; 0 to a negative power is inf (integer
    operands included: unlike ``pow``, nothing is refused).

    Derivatives (derivatives.yaml pow.Tensor_Scalar / pow.Tensor_Tensor / pow.Scalar, through
    _to_copy): pow_backward, pow_backward_self, pow_backward_exponent.

    Raises:
        TypeError: neither operand is a Tensor; an operand that is not a number or a Tensor; a
            complex number (tapegrad has no complex dtypes).
        OverflowError: an int beyond 64 bits.
        RuntimeError: shapes that do not broadcast (naming the op and the shapes)."""
    if isinstance(input, Tensor):
        base = _double(input)
        if isinstance(exponent, Tensor):
            _check_broadcast("float_power", input, exponent)
            return pow(base, _double(exponent))
        return pow(base, _double_number(exponent, "float_power", "exponent"))
    if isinstance(exponent, Tensor):
        return pow(_double_number(input, "float_power", "input"), _double(exponent))
    raise TypeError(f"float_power(): expected a Tensor as input or exponent, got "
                    f"{type(input).__name__} and {type(exponent).__name__}")


@op("float_power_", namespace=False)
def float_power_(self, exponent):
    """In-place :func:`float_power` (a method only, as in torch): ``self.pow_(exponent)`` in
    float64; returns self (PowBackward0 for a number, PowBackward1 for a tensor).

    Raises:
        RuntimeError: self is not float64 (torch: "the base given to float_power_ has dtype
            Float but the operation's result requires dtype Double"); and as ``pow_``.
        TypeError, OverflowError: as :func:`float_power`."""
    if self._data.dtype != _F64:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_dtype.scalar_name(self._data.dtype)} but the operation's result "
                           f"requires dtype Double (float_power_ writes float64: call "
                           f"self.double() first, or use float_power)")
    if isinstance(exponent, Tensor):
        return self.pow_(_double(exponent))
    return self.pow_(_double_number(exponent, "float_power_", "exponent"))


# ---- aminmax ------------------------------------------------------------------------------------
_aminmax_type = None


def _aminmax_return_type():
    """torch.return_types.aminmax's twin: a named tuple (min, max)."""
    global _aminmax_type
    if _aminmax_type is None:
        import collections
        rt = collections.namedtuple("aminmax", ["min", "max"])
        rt.__module__ = "tapegrad.return_types"
        rt.__repr__ = lambda self: (f"tapegrad.return_types.aminmax(\nmin={self.min!r},\n"
                                    f"max={self.max!r})")
        _aminmax_type = rt
    return _aminmax_type


class Aminmax(ArrayFunction, name="AminmaxBackward0"):
    """(min, max) over all elements (``axis`` None) or one axis. derivatives.yaml aminmax: each
    output's gradient spread evenly over the elements equal to it (scale_grad_by_count), summed.
    """

    @staticmethod
    def forward(ctx, x, axis, keepdim):
        if axis is None:
            if x.size == 0:
                raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                                   "the operation has no identity.")
            mn, mx = np.min(x), np.max(x)
            shape = (1,) * x.ndim if keepdim else ()
            mn, mx = np.reshape(mn, shape), np.reshape(mx, shape)
        else:
            if x.shape[axis] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {axis} to have non-zero size.")
            mn = np.min(x, axis=axis, keepdims=keepdim)
            mx = np.max(x, axis=axis, keepdims=keepdim)
        mn, mx = np.asarray(mn), np.asarray(mx)
        ctx.axis, ctx.keepdim, ctx.in_shape = axis, keepdim, x.shape
        ctx.save_for_backward(x, mn, mx)
        return mn, mx

    @staticmethod
    def backward(ctx, g_min, g_max):
        x, mn, mx = ctx.saved_tensors
        axis, keepdim, shape = ctx.axis, ctx.keepdim, ctx.in_shape
        total = None
        for g, r in ((g_min, mn), (g_max, mx)):
            if g is None:
                continue
            rd = r._data
            if axis is not None and not keepdim:
                rd = np.expand_dims(rd, axis)
                g = g.unsqueeze(axis)
            mask = x._data == rd
            count = mask.sum(axis=axis, keepdims=True) if axis is not None else \
                np.asarray(mask.sum()).reshape((1,) * x._data.ndim)
            if g._data.shape != count.shape and axis is None:
                g = g.reshape(count.shape)
            # torch's order: (grad / count) * mask, a NaN extremum (count 0) giving NaN
            part = (g / _make(count)).expand(shape) * _make(mask.astype(g._data.dtype))
            total = part if total is None else total + part
        return total, None, None


@op("aminmax")
def aminmax(input, *, dim=None, keepdim=False):
    """The minimum and maximum of ``input`` in one call: a named tuple ``(min, max)`` (as
    ``torch.return_types.aminmax``), over all elements (``dim=None``: 0-d results, or all dims
    kept as size 1 with ``keepdim``) or over one int ``dim`` (negative counts from the end; a 0-d
    input takes 0 or -1). Both in input's dtype (bool and integers included). NaN wins: a slice
    holding NaN gives NaN for both.

    Derivatives (derivatives.yaml aminmax, one AminmaxBackward0 node for both outputs): each
    output's gradient is spread evenly over the elements equal to it (ties share it, as amax /
    amin; a NaN result gives NaN gradients to its slice), the two summed.

    Raises:
        TypeError: input is not a Tensor; ``dim`` is not an int (a tuple included); positional
            ``dim`` (keyword-only, as torch).
        IndexError: ``dim`` out of range; a ``dim`` of size 0.
        RuntimeError: ``dim=None`` on an empty input (no identity)."""
    _need_tensor(input, "aminmax", "input", 1)
    nd = input._data.ndim
    if dim is not None:
        dim = _int_arg(dim, "aminmax", "dim")
        axis = _wrap_dim(dim, nd, "aminmax")
        if nd == 0:
            axis = None
    else:
        axis = None
    mn, mx = Aminmax.apply(input, axis, bool(keepdim))
    return _aminmax_return_type()(mn, mx)


def _int_arg(v, op_name, arg, pos=None):
    """An int argument as torch's parser takes it (a NumPy integer too; bool and float are
    refused)."""
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        where = f" (position {pos})" if pos is not None else ""
        raise TypeError(f"{op_name}(): argument '{arg}'{where} must be int, not "
                        f"{type(v).__name__}")
    return v


# ---- kthvalue -----------------------------------------------------------------------------------
def _gt_or_nan(a, b):
    return (isnan(a) and not isnan(b)) or a > b


def _quickselect(row, k):
    """The (value, index) torch's CPU kthvalue picks for 0-based ``k`` in a 1-d list: its
    quick_select_template (median-of-three Hoare partition, NaN largest), step for step, so
    ties and signed zeros resolve to the same element."""
    arr = list(row)
    idx = list(range(len(arr)))

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]

    gt = _gt_or_nan
    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap((lo + hi) >> 1, lo + 1)
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(piv, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return arr[k], idx[k]


def _kth_along_last(xm, k):
    """(values, int64 indices) of the ``k``-th smallest (0-based) along the last axis of
    ``xm``, as torch picks them. The k-th value is unique but for ties (and +-0): rows where it
    is tied run torch's quickselect; the others take the one matching element."""
    rows = xm.reshape(-1, xm.shape[-1])
    vals = np.partition(rows, k, axis=-1)[:, k]     # (NumPy sorts NaN last, as torch)
    if rows.dtype.kind == "f":
        nan = np.isnan(vals)
        hit = np.where(nan[:, None], np.isnan(rows), rows == vals[:, None])
    else:
        hit = rows == vals[:, None]
    idx = np.argmax(hit, axis=-1).astype(np.int64)
    vals = rows[np.arange(rows.shape[0]), idx]
    for r in np.nonzero(hit.sum(-1) > 1)[0]:
        _, idx[r] = _quickselect(rows[r].tolist(), k)
        vals[r] = rows[r, idx[r]]
    shape = xm.shape[:-1]
    return vals.reshape(shape), idx.reshape(shape)


class Kthvalue(ArrayFunction, name="KthvalueBackward0"):
    """(values, int64 indices) of the k-th smallest along ``axis``. derivatives.yaml kthvalue:
    value_selecting_reduction_backward: grad goes to the returned index."""

    @staticmethod
    def forward(ctx, x, k, axis, keepdim):
        size = x.shape[axis] if axis is not None else 1
        dim = axis if axis is not None else 0
        if size == 0:
            raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim} "
                               f"(k={k}, size {size}: k must be in [1, {size}])")
        if x.dtype == np.bool_:
            raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
        ctx.in_shape, ctx.axis, ctx.keepdim = x.shape, axis, keepdim
        if axis is None:
            vals, idx = x.copy(), np.zeros((), np.int64)
        elif x.size == 0:
            out = x.shape[:axis] + ((1,) if keepdim else ()) + x.shape[axis + 1:]
            vals, idx = np.empty(out, x.dtype), np.empty(out, np.int64)
        else:
            vals, idx = _kth_along_last(np.moveaxis(x, axis, -1), k - 1)
            if keepdim:
                vals, idx = np.expand_dims(vals, axis), np.expand_dims(idx, axis)
        vals, idx = np.asarray(vals), np.asarray(idx)
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        return vals, idx

    @staticmethod
    def backward(ctx, g, g_idx=None):
        idx, = ctx.saved_tensors
        if ctx.axis is None:
            return g, None, None, None
        return IndexSelectScatter.apply(g, ctx.in_shape, ctx.axis, idx._data, ctx.keepdim), \
            None, None, None


@op("kthvalue")
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element (1-based) along ``dim`` (default the last) and its int64
    index: a named tuple ``(values, indices)`` (as ``torch.return_types.kthvalue``), input's
    shape without ``dim`` (size 1 with ``keepdim``); values in input's dtype. NaN counts as the
    largest value. Where the k-th value is tied (or is a zero of either sign among both), the
    element is the one torch's CPU quickselect picks (its algorithm, step for step).

    Derivative (derivatives.yaml kthvalue, KthvalueBackward0): value_selecting_reduction_backward,
    the gradient goes to the returned index; indices are not differentiable.

    Raises:
        TypeError: input is not a Tensor; ``k`` or ``dim`` is not an int (bool, float and
            tuples refused, as torch).
        IndexError: ``dim`` out of range; a ``dim`` of size 0 (checked before ``k``).
        RuntimeError: ``k`` outside [1, size of dim].
        NotImplementedError: a bool input (torch has no bool kernel)."""
    _need_tensor(input, "kthvalue", "input", 1)
    k = _int_arg(k, "kthvalue", "k", 2)
    dim = _int_arg(dim, "kthvalue", "dim")
    nd = input._data.ndim
    axis = _wrap_dim(dim, nd, "kthvalue")
    vals, idx = Kthvalue.apply(input, k, axis if nd else None, bool(keepdim))
    return _return_type("kthvalue")(vals, idx)


# ---- erfc ---------------------------------------------------------------------------------------
def _erfc_array(x):
    """erfc of an array, computed in float64 with fdlibm's s_erf.c erfc (the coefficient tables
    erf uses; accurate to about 1 ulp, also where erfc is tiny: 1 - erf(x) would lose every
    digit for x beyond about 6). A float input comes back in its own dtype and shape; a non-float
    one as float64. NaN stays NaN; erfc(inf) = 0, erfc(-inf) = 2; 0 beyond x = 28 (underflow)."""
    x = np.asarray(x)
    xd = x.astype(np.float64)
    a = np.abs(xd)
    out = np.empty_like(xd)
    with np.errstate(all="ignore"):
        small = a < 0.84375
        if small.any():
            xs = xd[small]
            z = xs * xs
            y = _horner(z, P._PP) / _horner(z, P._QQ)
            quarter = xs < 0.25
            # x < 1/4 (negative x included): 1 - (x + x*y); else 1/2 - (x*y + (x - 1/2))
            out[small] = np.where(quarter, 1 - (xs + xs * y), 0.5 - (xs * y + (xs - 0.5)))
        mid = (a >= 0.84375) & (a < 1.25)
        if mid.any():
            s = a[mid] - 1
            pq = _horner(s, P._PA) / _horner(s, P._QA)
            out[mid] = np.where(xd[mid] >= 0, (1 - P._ERX) - pq, 1 + (P._ERX + pq))
        big = (a >= 1.25) & (a < 28)
        if big.any():
            ab = a[big]
            s = 1 / (ab * ab)
            near = ab < 1 / 0.35
            r = np.where(near, _horner(s, P._RA), _horner(s, P._RB))
            q = np.where(near, _horner(s, P._SA), _horner(s, P._SB))
            z = (ab.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
            tail = np.exp(-z * z - 0.5625) * np.exp((z - ab) * (z + ab) + r / q) / ab
            neg = xd[big] < 0
            out[big] = np.where(neg, np.where(ab >= 6, 2.0, 2 - tail), tail)
        huge = a >= 28
        out[huge] = np.where(xd[huge] > 0, 0.0, 2.0)
        nan = np.isnan(xd)
        out[nan] = np.nan
    return out.astype(x.dtype, copy=False) if x.dtype.kind == "f" else out


_TWO_OVER_SQRT_PI = 1.1283791670955126
_HALF_SQRT_PI = 0.88622692545275801


class Erfc(ArrayFunction, name="ErfcBackward0"):
    """1 - erf(x), accurate in the tail. derivatives.yaml erfc: -2. / sqrt(M_PI) *
    exp(-(self.pow(2))) * grad."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _erfc_array(to_float(x))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * exp(x * x * -1.0) * -_TWO_OVER_SQRT_PI


@op("erfc")
def erfc(input):
    """The complementary error function 1 - erf(input), accurate where it is tiny (erfc(10) =
    2.09e-45, not 0). Result: input's shape; a float input keeps its dtype, an integer or bool
    input gives the default float dtype (float32 unless set_default_dtype changed it), as torch.
    erfc(+inf) = 0, erfc(-inf) = 2, NaN stays NaN. Computed in float64 (fdlibm's erfc) and
    rounded to the input's dtype.

    Derivative (derivatives.yaml erfc, ErfcBackward0): -2 / sqrt(pi) * exp(-input ** 2) * grad.

    Raises TypeError when input is not a Tensor."""
    _need_tensor(input, "erfc", "input", 1)
    return Erfc.apply(input)


@op("erfc_")
def erfc_(input):
    """In-place :func:`erfc` (a function and a method, as in torch); returns input
    (ErfcBackward0). RuntimeError for an integer or bool tensor (the result is floating) and for
    what any in-place op refuses (see ``add_``)."""
    _need_tensor(input, "erfc_", "input", 1)
    return inplace(input, Erfc, (), "erfc_")


# ---- erfinv -------------------------------------------------------------------------------------
# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single-precision
# version: a start good to about 1e-7 relative where float32 reaches (|x| < 1 - 6e-8), which
# Newton steps on erf / log(erfc) refine to float64 round-off.
_GILES_CENTRAL = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087,
                  -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_GILES_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
               -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257)


def _erfinv_numpy(x):
    """erfinv in float64 without SciPy: Giles' approximation, then Newton steps on erf(y) = x
    for |x| <= 1/2 and on log(erfc(y)) = log(1 - |x|) beyond (1 - |x| is exact there, and erfc
    is accurate in its tail, where erf(y) - x would cancel). +-1 gives +-inf, |x| > 1 and NaN give
    NaN, -0.0 stays -0.0."""
    xd = np.asarray(x, np.float64)
    a = np.abs(xd)
    out = np.full(xd.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = a < 1
        if ok.any():
            v = a[ok]
            w = -np.log1p(-v * v)
            central = w < 5
            p = np.where(central, _horner(w - 2.5, _GILES_CENTRAL),
                         _horner(np.sqrt(w) - 3.0, _GILES_TAIL))
            y = p * v
            inner = v <= 0.5
            comp = 1 - v
            for _ in range(5):
                dens = _TWO_OVER_SQRT_PI * np.exp(-y * y)
                # inner: Newton on erf(y) = v; tail: Newton on log(erfc(y)) = log(1 - v),
                # nearly linear in y there, so a start far out in the tail still converges fast
                e = np.where(inner, _erf_array(y), _erfc_array(y))
                step = np.where(inner, (e - v) / dens, -np.log1p((e - comp) / comp) * e / dens)
                y = np.where(dens > 0, y - step, y)
            out[ok] = y
        out[a == 1] = np.inf
    return np.copysign(out, xd)


def _erfinv_float64(x):
    """erfinv in float64: scipy.special.erfinv when SciPy is installed (-0.0 kept), else
    :func:`_erfinv_numpy` (the same values to a few ulps)."""
    try:
        from scipy.special import erfinv as sp_erfinv
    except ImportError:
        return _erfinv_numpy(x)
    xd = np.asarray(x, np.float64)
    # (SciPy gives +0.0 for -0.0; torch keeps the sign, as erfinv is odd)
    return np.where(xd == 0, xd, np.asarray(sp_erfinv(xd), np.float64))


def _erfinv_array(x):
    """erfinv of a float array in its own dtype (computed in float64)."""
    return _erfinv_float64(x).astype(x.dtype, copy=False)


class Erfinv(ArrayFunction, name="ErfinvBackward0"):
    """The inverse of erf on (-1, 1). derivatives.yaml erfinv: 0.5 * sqrt(M_PI) *
    exp(self.erfinv().pow(2)) * grad."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _erfinv_array(to_float(x))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        y = Erfinv.apply(x)
        return _HALF_SQRT_PI * exp(y * y) * g


@op("erfinv")
def erfinv(input):
    """The inverse error function: y with erf(y) = input, for input in [-1, 1]; +-inf at +-1,
    NaN outside [-1, 1] and for NaN; -0.0 stays -0.0. Result: input's shape; a float input keeps
    its dtype, an integer or bool input gives the default float dtype, as torch. Computed in
    float64 (scipy.special.erfinv when SciPy is installed, else Giles' approximation refined by
    Newton steps on erf/erfc, to float64 round-off) and rounded to the input's dtype.

    Derivative (derivatives.yaml erfinv, ErfinvBackward0): 0.5 * sqrt(pi) *
    exp(erfinv(input) ** 2) * grad (inf at +-1).

    Raises TypeError when input is not a Tensor."""
    _need_tensor(input, "erfinv", "input", 1)
    return Erfinv.apply(input)


@op("erfinv_", namespace=False)
def erfinv_(self):
    """In-place :func:`erfinv` (a method only, as in torch); returns self (ErfinvBackward0).
    RuntimeError for an integer or bool tensor (the result is floating) and for what any
    in-place op refuses (see ``add_``)."""
    return inplace(self, Erfinv, (), "erfinv_")

