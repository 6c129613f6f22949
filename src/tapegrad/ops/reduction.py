"""Reductions: sum, mean, max/min, amax/amin, logsumexp, argmax/argmin, all/any, prod, cumsum,
var/std, norm; and sort/topk/argsort.

Derivatives (derivatives.yaml): sum/mean expand the gradient back (mean divides by the count);
max()/min() over the whole tensor and amax/amin split the gradient evenly among ties
(evenly_distribute_backward); max(dim)/min(dim) send it to the returned index
(value_selecting_reduction_backward); logsumexp: grad * exp(self - result).
"""
from __future__ import annotations

import builtins  # this module defines sum/max/min/all/any ops
import collections

import numpy as np

from .. import _dtype
from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import Tensor, _make, dims, sum_array, to_float
from .shape import Expand

_return_types = {}


def _return_type(name):
    rt = _return_types.get(name)
    if rt is None:
        rt = collections.namedtuple(name, ["values", "indices"])
        rt.__module__ = "tapegrad.return_types"
        rt.__repr__ = lambda self: (f"tapegrad.return_types.{name}(\nvalues={self.values!r},\n"
                                    f"indices={self.indices!r})")
        _return_types[name] = rt
    return rt


def _extremum_dims(input, dim, name):
    dim = _all_if_empty(dim)
    if dim is None and input._data.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return dims(dim, input._data.ndim, name)


def _all_if_empty(dim):
    """torch reads an empty dim list (``dim=()`` or ``[]``) as every dim for these reductions."""
    return None if isinstance(dim, (tuple, list)) and len(dim) == 0 else dim


def _keep_shape(shape, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _expand_back(g, in_shape, axes, keepdim):
    """Broadcast a reduced gradient back over the reduced ``axes`` (differentiably). (Expand
    directly: the shape needs none of expand()'s checks, which cost more than the view.)"""
    if not keepdim and axes:
        g = g.reshape(_keep_shape(in_shape, axes))
    return Expand.apply(g, in_shape)


class SumAll(ArrayFunction, name="SumBackward0"):
    """Sum of all elements. derivatives.yaml: grad.expand(self.sizes())."""

    @staticmethod
    def forward(ctx, x, np_dtype):
        ctx.in_shape = x.shape
        return sum_array(x, dtype=np_dtype)

    @staticmethod
    def backward(ctx, g):
        return Expand.apply(g, ctx.in_shape), None


class SumDim(ArrayFunction, name="SumBackward1"):
    """Sum over ``axes``. derivatives.yaml sum_backward: unsqueeze and expand grad."""

    @staticmethod
    def forward(ctx, x, axes, keepdim, np_dtype):
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        return sum_array(x, axes, keepdim, np_dtype)

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g, ctx.in_shape, ctx.axes, ctx.keepdim), None, None, None


def _sum_dtype(x, dtype):
    """NumPy accumulation dtype for sum/prod/cumsum: ``dtype``'s, else int64 for integer and
    bool inputs (as torch), else None (the input's own)."""
    if dtype is not None:
        return _dtype.to_dtype(dtype).np
    if x._data.dtype.kind in "biu":
        return np.int64
    return None


def _cast_for_dtype(x, dtype):
    """``(input, accumulation dtype)`` for prod/cumsum's ``dtype=``: a floating input with a
    different ``dtype`` is converted first (``x.to(dtype)``, so the gradient flows back through
    the cast) and needs no accumulation dtype; otherwise the input as is with :func:`_sum_dtype`."""
    npd = _sum_dtype(x, dtype)
    if dtype is not None and x._data.dtype.kind == "f" and npd != x._data.dtype:
        return x.to(dtype), None
    return x, npd


def _axis_alias(dim, axis, name):
    """torch accepts NumPy's ``axis=`` keyword for ``dim``."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{name}() got both 'dim' and its alias 'axis'")
        return axis
    return dim


@op("sum")
def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None):  # noqa: A001
    """Sum of all elements (0-d result), or over ``dim`` (int or tuple, negative allowed; an
    empty tuple means every dim; ``axis=`` is an alias). The result has the input's shape without
    the reduced dims (kept as size 1 with ``keepdim=True``). dtype: ``dtype=`` when given (the
    sum is accumulated in it), else int64 for integer and bool inputs, else the input's. An
    empty input sums to 0. Gradient: expanded back (derivatives.yaml sum_backward).

    Raises IndexError for a dim out of range; RuntimeError for a dim repeated in ``dim``;
    TypeError for both ``dim`` and ``axis``."""
    dim = _axis_alias(dim, axis, "sum")
    npd = _sum_dtype(input, dtype)
    if dim is None:
        return SumAll.apply(input, npd)
    return SumDim.apply(input, dims(_all_if_empty(dim), input._data.ndim, "sum"), bool(keepdim),
                        npd)


class MeanAll(ArrayFunction, name="MeanBackward0"):
    """Mean of all elements. derivatives.yaml: grad.expand(self.sizes()) / self.numel()."""

    @staticmethod
    def forward(ctx, x):
        ctx.in_shape, ctx.n = x.shape, x.size
        return np.asarray(x.mean() if x.size else np.array(np.nan, x.dtype)).astype(x.dtype)

    @staticmethod
    def backward(ctx, g):
        if ctx.n == 0:  # empty input: nothing to divide (g / 0 would make double backward nan)
            return Expand.apply(g, ctx.in_shape)
        # (the 0-d quotient expanded, a broadcast view: torch divides after expanding, a
        # full-size pass and array, which a backward then copies or reads; see backward_by_hand)
        return Expand.apply(g / ctx.n, ctx.in_shape)

    @staticmethod
    def _backward_by_hand(ctx, g):
        """torch's formula as written (a new C-order gradient, DivBackward1), for the node
        called by hand, where backward's broadcast view would show."""
        from .pointwise import DivScalar
        g = Expand.apply(g, ctx.in_shape)
        return DivScalar.apply(g, ctx.n) if ctx.n else g


class MeanDim(ArrayFunction, name="MeanBackward1"):
    """Mean over ``axes``. derivatives.yaml mean_backward: expanded grad / count."""

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        n = 1
        for a in axes:
            n *= x.shape[a]
        ctx.n = n
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(x.mean(axis=axes, keepdims=keepdim)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        # an empty reduction (n == 0) expands to an empty gradient: no division (see MeanAll)
        return _expand_back(g / ctx.n if ctx.n else g, ctx.in_shape, ctx.axes, ctx.keepdim), \
            None, None

    @staticmethod
    def _backward_by_hand(ctx, g):
        """torch's formula as written, divided after expanding (see MeanAll)."""
        from .pointwise import DivScalar
        g = _expand_back(g, ctx.in_shape, ctx.axes, ctx.keepdim)
        return (DivScalar.apply(g, ctx.n) if ctx.n else g), None, None


@op("mean")
def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Arithmetic mean of all elements (0-d result) or over ``dim`` (int or tuple; ``axis=`` is
    an alias). Shape as :func:`sum`. dtype: the input's, or ``dtype=`` (the input is converted
    first). An empty reduction gives NaN. Gradient: expanded back / count (derivatives.yaml
    mean_backward).

    Raises RuntimeError for integer/bool inputs without a floating ``dtype=`` (as torch: pass
    dtype=tapegrad.float32 or call .float() first); IndexError for a dim out of range;
    TypeError for both ``dim`` and ``axis``."""
    dim = _axis_alias(dim, axis, "mean")
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {input.dtype} (call .float() "
                           f"first or pass dtype=tapegrad.float32)")
    if dim is None:
        return MeanAll.apply(input)
    return MeanDim.apply(input, dims(_all_if_empty(dim), input._data.ndim, "mean"), bool(keepdim))


class ExtremumAll(ArrayFunction, name="MaxBackward1"):
    """max()/min() of all elements. derivatives.yaml evenly_distribute_backward: grad split
    evenly among the elements equal to the result."""

    @staticmethod
    def forward(ctx, x, is_max):
        if x.size == 0:
            raise RuntimeError(f"{'max' if is_max else 'min'}(): Expected reduction dim to be "
                               "specified for input.numel() == 0. Specify the reduction dim with "
                               "the 'dim' argument.")
        y = np.asarray(x.max() if is_max else x.min())
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        mask = x._data == y._data
        if np.isnan(y._data):
            mask = np.isnan(x._data)
        share = (mask / mask.sum()).astype(g._data.dtype)
        return g * _make(share), None


class MinAll(ExtremumAll, name="MinBackward1"):
    pass


class ExtremumDim(ArrayFunction, name="MaxBackward0"):
    """max(dim)/min(dim): (values, indices). derivatives.yaml value_selecting_reduction_backward:
    grad goes to the returned index only."""

    @staticmethod
    def forward(ctx, x, axis, keepdim, is_max):
        ctx.in_shape, ctx.axis, ctx.keepdim = x.shape, axis, keepdim
        if axis is None:   # a 0-d input: its own max, at index 0
            vals, idx = x.copy(), np.zeros((), np.int64)
        else:
            if x.shape[axis] == 0:
                raise IndexError(f"{'max' if is_max else 'min'}(): Expected reduction dim {axis} "
                                 "to have non-zero size.")
            idx = np.argmax(x, axis=axis, keepdims=True) if is_max else \
                np.argmin(x, axis=axis, keepdims=True)
            vals = np.take_along_axis(x, idx, axis=axis)
            if not keepdim:
                vals = vals.squeeze(axis)
                idx = idx.squeeze(axis)
            idx = idx.astype(np.int64)
        ctx.save_for_backward(idx)   # the indices output, freed by backward as in torch
        ctx.mark_non_differentiable(idx)
        return vals, idx

    @staticmethod
    def backward(ctx, g, g_idx=None):
        # unpacked before the 0-d return too: the unpacking is what raises, as torch, when the
        # indices were changed in place or the graph was already freed by an earlier backward
        idx, = ctx.saved_tensors
        if ctx.in_shape == ():
            return g, None, None, None
        return IndexSelectScatter.apply(g, ctx.in_shape, ctx.axis, idx._data, ctx.keepdim), \
            None, None, None


class MinDim(ExtremumDim, name="MinBackward0"):
    pass


class IndexSelectScatter(ArrayFunction, name="ValueSelectingReductionBackward0"):
    """zeros(shape) with ``g`` put at ``idx`` along ``axis``. Derivative: gather at idx."""

    @staticmethod
    def forward(ctx, g, shape, axis, idx, keepdim):
        ctx.axis, ctx.keepdim = axis, keepdim
        ctx.save_for_backward(idx)
        z = np.zeros(shape, g.dtype)
        if not keepdim:
            g, idx = np.expand_dims(g, axis), np.expand_dims(idx, axis)
        np.put_along_axis(z, idx, g, axis=axis)
        return z

    @staticmethod
    def backward(ctx, gg):
        idx, = ctx.saved_tensors
        return GatherAlong.apply(gg, ctx.axis, idx._data, ctx.keepdim), None, None, None, None


class GatherAlong(ArrayFunction, name="GatherBackward0"):
    """Values of ``x`` at ``idx`` along ``axis``. Derivative: scatter back (IndexSelectScatter)."""

    @staticmethod
    def forward(ctx, x, axis, idx, keepdim):
        ctx.in_shape, ctx.axis, ctx.keepdim = x.shape, axis, keepdim
        ctx.save_for_backward(idx)
        i = idx if keepdim else np.expand_dims(idx, axis)
        out = np.take_along_axis(x, i, axis=axis)
        return out if keepdim else out.squeeze(axis)

    @staticmethod
    def backward(ctx, g):
        idx, = ctx.saved_tensors
        return IndexSelectScatter.apply(g, ctx.in_shape, ctx.axis, idx._data, ctx.keepdim), \
            None, None, None


def _extremum(input, dim, keepdim, is_max, other):
    name = "max" if is_max else "min"
    if isinstance(dim, Tensor):
        other, dim = dim, None
    if other is not None:
        from .pointwise import maximum, minimum
        return maximum(input, other) if is_max else minimum(input, other)
    if dim is None:
        return (ExtremumAll if is_max else MinAll).apply(input, is_max)
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(dim={type(dim).__name__}), but expected (int dim, bool keepdim = False)")
    nd = input._data.ndim
    axes = dims(dim, nd, name)
    axis = axes[0] if nd else None
    vals, idx = (ExtremumDim if is_max else MinDim).apply(input, axis, bool(keepdim), is_max)
    return _return_type(name)(vals, idx)


@op("max")
def max(input, dim=None, keepdim=False, *, other=None, axis=None):  # noqa: A001
    """``max()``: the largest element as a 0-d tensor of the input's dtype; ties share the
    gradient evenly (derivatives.yaml evenly_distribute_backward). NaN is the largest value.

    ``max(dim, keepdim=False)`` (``axis=`` is an alias): a named tuple ``(values, indices)`` over
    one int ``dim``; both have the input's shape without ``dim`` (kept as size 1 with
    ``keepdim=True``), values in the input's dtype, indices int64 (non-differentiable; the first
    maximum). The gradient goes to the returned index only (derivatives.yaml
    value_selecting_reduction_backward). ``max(other_tensor)`` (or ``other=``): :func:`maximum`.

    Raises IndexError for ``dim`` out of range or a ``dim`` of size 0; RuntimeError for an empty
    input without ``dim``; TypeError for both ``dim`` and ``axis``, or a tuple/list ``dim``."""
    return _extremum(input, _axis_alias(dim, axis, "max"), keepdim, True, other)


@op("min")
def min(input, dim=None, keepdim=False, *, other=None, axis=None):  # noqa: A001
    """``min()``: the smallest element (0-d); ``min(dim, keepdim=False)``: named tuple
    ``(values, indices)`` with int64 indices; ``min(other_tensor)``: :func:`minimum`. Shapes,
    gradients (derivatives.yaml evenly_distribute_backward / value_selecting_reduction_backward)
    and errors as :func:`max`."""
    return _extremum(input, _axis_alias(dim, axis, "min"), keepdim, False, other)


class Amax(ArrayFunction, name="AmaxBackward0"):
    """Max over ``axes`` (values only). derivatives.yaml scale_grad_by_count: grad split evenly
    among the maxima."""

    @staticmethod
    def forward(ctx, x, axes, keepdim, is_max):
        name = "amax" if is_max else "amin"
        for a in axes:
            if x.shape[a] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")
        y = np.asarray(x.max(axis=axes, keepdims=True) if is_max else x.min(axis=axes, keepdims=True))
        ctx.axes, ctx.keepdim = axes, keepdim
        if not keepdim:
            y = y.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))
        # self and result, as torch: the maxima are found again in backward, so changing the
        # result in place is caught there
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        y = y._data if ctx.keepdim else np.expand_dims(y._data, ctx.axes)
        mask = x._data == y
        share = (mask / mask.sum(axis=ctx.axes, keepdims=True)).astype(g._data.dtype)
        return _expand_back(g, x._data.shape, ctx.axes, ctx.keepdim) * _make(share), None, None, None


class Amin(Amax, name="AminBackward0"):
    pass


@op("amax")
def amax(input, dim=(), keepdim=False):
    """Max over ``dim`` (int or tuple; every dim when empty, the default), values only, in the
    input's dtype. The result has the input's shape without the reduced dims (kept as size 1
    with ``keepdim=True``); 0-d when reducing every dim. The gradient is split evenly among ties
    (derivatives.yaml scale_grad_by_count).

    Raises IndexError for a dim out of range or a reduced dim of size 0; RuntimeError for an
    empty input reduced over every dim."""
    ds = _extremum_dims(input, dim, "amax")
    return Amax.apply(input, ds, bool(keepdim), True)


@op("amin")
def amin(input, dim=(), keepdim=False):
    """Min over ``dim`` (int or tuple; every dim when empty); see :func:`amax` for shapes, the
    gradient (derivatives.yaml scale_grad_by_count) and errors."""
    ds = _extremum_dims(input, dim, "amin")
    return Amin.apply(input, ds, bool(keepdim), False)


class Logsumexp(ArrayFunction, name="LogsumexpBackward0"):
    """log(sum(exp(x))) over ``axes``, shifted by the max so logits in the thousands do not
    overflow. derivatives.yaml logsumexp_backward: grad * exp(self - result)."""

    @staticmethod
    def forward(ctx, x, axes, keepdim):
        x = to_float(x)
        m = np.max(x, axis=axes, keepdims=True) if x.size else np.zeros((1,) * x.ndim, x.dtype)
        m = np.where(np.isfinite(m), m, 0)
        with np.errstate(divide="ignore"):
            y = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
        y = y.astype(x.dtype, copy=False)
        ctx.axes, ctx.keepdim = axes, keepdim
        out = y if keepdim else y.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g, *_):
        x, y = ctx.saved_tensors
        if not ctx.keepdim:
            shp = _keep_shape(x._data.shape, ctx.axes)
            y, g = y.reshape(shp), g.reshape(shp)
        from .pointwise import exp
        return g * exp(x - y), None, None


@op("logsumexp")
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over ``dim``, numerically stable."""
    return Logsumexp.apply(input, dims(dim, input._data.ndim, "logsumexp"), bool(keepdim))


def _arg(input, dim, keepdim, fn, name):
    x = input._data
    if dim is None:
        if x.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        r = np.asarray(fn(x.reshape(-1)))
        return _make(r.reshape((1,) * x.ndim if keepdim else ()).astype(np.int64))
    axis = dims(dim, x.ndim, name)[0] if x.ndim else None
    if axis is None:
        return _make(np.zeros((), np.int64))
    if x.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
    return _make(np.asarray(fn(x, axis=axis, keepdims=bool(keepdim))).astype(np.int64))


@op("argmax")
def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (flattened when dim is None); int64, no gradient."""
    return _arg(input, dim, keepdim, np.argmax, "argmax")


@op("argmin")
def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (flattened when dim is None); int64, no gradient."""
    return _arg(input, dim, keepdim, np.argmin, "argmin")


@op("all")
def all(input, dim=None, keepdim=False):  # noqa: A001
    """True where every element (over ``dim``, or all) is nonzero; a bool tensor, no gradient."""
    axes = None if dim is None else dims(dim, input._data.ndim, "all")
    return _make(np.asarray(np.all(input._data, axis=axes, keepdims=keepdim)))


@op("any")
def any(input, dim=None, keepdim=False):  # noqa: A001
    """True where some element (over ``dim``, or all) is nonzero; a bool tensor, no gradient."""
    axes = None if dim is None else dims(dim, input._data.ndim, "any")
    return _make(np.asarray(np.any(input._data, axis=axes, keepdims=keepdim)))


# ---- prod ---------------------------------------------------------------------------------------
def _prod_others(x, axis):
    """For each element, the product of the others along ``axis`` (exclusive products from both
    ends, as torch's prod_safe_zeros_backward), so zeros in x are handled exactly."""
    n = x.shape[axis]
    ones = np.ones_like(np.take(x, [0], axis=axis))
    left = np.cumprod(np.concatenate([ones, np.take(x, range(n - 1), axis=axis)], axis), axis)
    xr = np.flip(x, axis)
    right = np.cumprod(np.concatenate([ones, np.take(xr, range(n - 1), axis=axis)], axis), axis)
    return left * np.flip(right, axis)


def _prod_others_tensor(x, axis):
    """The same as a differentiable composite (used when the backward itself is recorded):
    each row repeated n times with the diagonal set to 1, then multiplied out."""
    from .pointwise import where
    n = x._data.shape[axis]
    xt = x.transpose(axis, -1) if axis != x._data.ndim - 1 else x
    shp = xt._data.shape
    m = xt.unsqueeze(-2).expand(*shp[:-1], n, n)
    eye = np.eye(n, dtype=bool)
    others = ProdDim.apply(where(_make(eye), 1.0, m), m._data.ndim - 1, False, None)
    return others.transpose(axis, -1) if axis != x._data.ndim - 1 else others


def _prod_backward(g, x, y, axis, keepdim):
    """derivatives.yaml prod_backward: grad * result / input when the input has no zero, else
    grad times the product of the other elements (so a single zero gets the right gradient)."""
    from ..autograd.grad_mode import is_grad_enabled
    xd = x._data
    if xd.ndim == 0:
        return g
    if axis is None:
        g = g.reshape((1,) * xd.ndim)
        y = y.reshape((1,) * xd.ndim)
    elif not keepdim:
        g = g.unsqueeze(axis)
        y = y.unsqueeze(axis)
    if not (xd == 0).any():
        return g * (y / x)
    if axis is None:
        flat = x.reshape(-1)
        if is_grad_enabled():
            others = _prod_others_tensor(flat, 0)
        else:
            others = _make(_prod_others(flat._data, 0))
        return g * others.reshape(xd.shape)
    others = _prod_others_tensor(x, axis) if is_grad_enabled() else _make(_prod_others(xd, axis))
    return g * others


class ProdAll(ArrayFunction, name="ProdBackward0"):
    """Product of all elements. derivatives.yaml prod_backward (zeros handled exactly)."""

    @staticmethod
    def forward(ctx, x, np_dtype):
        y = np.asarray(x.prod(dtype=np_dtype))
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return _prod_backward(g, x, y, None, False), None


class ProdDim(ArrayFunction, name="ProdBackward1"):
    """Product along one dim. derivatives.yaml prod_backward (zeros handled exactly)."""

    @staticmethod
    def forward(ctx, x, axis, keepdim, np_dtype):
        if x.ndim == 0:
            y = np.asarray(x, dtype=np_dtype).copy()
        else:
            y = np.asarray(x.prod(axis=axis, keepdims=keepdim, dtype=np_dtype))
        ctx.axis, ctx.keepdim = axis, keepdim
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return _prod_backward(g, x, y, ctx.axis, ctx.keepdim), None, None, None


@op("prod")
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements (0-d result) or along one int ``dim`` (the input's shape without
    it; kept as size 1 with ``keepdim=True``). dtype: ``dtype=`` when given (a floating input is
    converted to it first), else int64 for integer and bool inputs, else the input's. An empty
    input multiplies to 1. The gradient handles zeros exactly (derivatives.yaml prod_backward).

    Raises IndexError for ``dim`` out of range; TypeError for a tuple/list ``dim``."""
    input, npd = _cast_for_dtype(input, dtype)
    if dim is None:
        return ProdAll.apply(input, npd)
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    nd = input._data.ndim
    axis = dims(dim, nd, "prod")
    return ProdDim.apply(input, axis[0] if axis else 0, bool(keepdim), npd)


# ---- cumsum -------------------------------------------------------------------------------------
class Cumsum(ArrayFunction, name="CumsumBackward0"):
    """Running sum along ``axis``. derivatives.yaml cumsum_backward: the running sum of grad
    taken from the other end (flip, cumsum, flip)."""
    _reverse = False

    @classmethod
    def forward(cls, ctx, x, axis, np_dtype):
        ctx.axis = axis
        if x.ndim == 0:
            return np.array(x, dtype=np_dtype or x.dtype, copy=True)
        half = np_dtype is None and x.dtype == np.float16    # (accumulated in float32, as torch)
        acc = np.float32 if half else np_dtype
        if cls._reverse:
            y = np.ascontiguousarray(np.flip(np.cumsum(np.flip(x, axis), axis, dtype=acc), axis))
        else:
            y = np.cumsum(x, axis, dtype=acc)
        return y.astype(np.float16) if half else y

    @classmethod
    def backward(cls, ctx, g):
        back = ReverseCumsum if not cls._reverse else Cumsum
        return back.apply(g, ctx.axis, None), None, None


class ReverseCumsum(Cumsum, name="CumsumBackward0"):
    """Running sum from the far end (cumsum's gradient); its own gradient is a plain cumsum."""
    _reverse = True


@op("cumsum")
def cumsum(input, dim, *, dtype=None):
    """Running sum along ``dim`` (required), the input's shape. dtype: ``dtype=`` when given (a
    floating input is converted to it first), else int64 for integer and bool inputs, else the
    input's. Gradient: the running sum of grad from the other end (derivatives.yaml
    cumsum_backward).

    Raises IndexError for ``dim`` out of range; TypeError when ``dim`` is missing."""
    input, npd = _cast_for_dtype(input, dtype)
    ax = dims(dim, input._data.ndim, "cumsum")
    return Cumsum.apply(input, ax[0] if ax else 0, npd)


# ---- var / std ----------------------------------------------------------------------------------
def _correction(unbiased, correction, name):
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: cannot specify "
                        f"both 'unbiased' and 'correction'")
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _var_args(input, dim, unbiased, keepdim, correction, name):
    if isinstance(dim, bool):  # the legacy std(input, unbiased) overload
        dim, unbiased = None, dim
    if input._data.dtype.kind != "f":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    corr = _correction(unbiased, correction, name)
    axes = dims(dim, input._data.ndim, name)
    return axes, corr, bool(keepdim)


def _var_numpy(x, axes, corr, keepdim):
    n = 1
    for a in axes:
        n *= x.shape[a]
    ax = axes if axes else None
    with np.errstate(invalid="ignore", divide="ignore"):
        m = x.mean(axis=ax, keepdims=True) if x.size else np.zeros((1,) * x.ndim, x.dtype)
        d = x - m
        ss = np.sum(d * d, axis=ax, keepdims=keepdim)
        v = np.asarray(ss / np.float64(builtins.max(n - corr, 0))).astype(x.dtype, copy=False)
    return v, n


def _var_backward(g, x, axes, corr, keepdim, n):
    """derivatives.yaml var_backward: (2 / (N - correction)) * grad * (self - self.mean(dim))."""
    xd = x._data
    if not keepdim and axes and xd.ndim:
        g = g.reshape(_keep_shape(xd.shape, axes))
    with np.errstate(divide="ignore"):
        scale = float(np.float64(2.0) / np.float64(builtins.max(n - corr, 0)))
    centered = x - (x.mean(axes, keepdim=True) if axes else x.mean())
    return g * centered * scale


class Var(ArrayFunction, name="VarBackward0"):
    """Variance over ``axes`` with ``correction`` (1: unbiased). derivatives.yaml var_backward."""

    @staticmethod
    def forward(ctx, x, axes, corr, keepdim):
        y, n = _var_numpy(x, axes, corr, keepdim)
        ctx.conf = (axes, corr, keepdim, n)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return _var_backward(g, x, *ctx.conf), None, None, None


class Std(ArrayFunction, name="StdBackward0"):
    """Standard deviation: sqrt(var). derivatives.yaml std_backward: var_backward of
    grad / (2 result), zero where the result is 0."""

    @staticmethod
    def forward(ctx, x, axes, corr, keepdim):
        v, n = _var_numpy(x, axes, corr, keepdim)
        with np.errstate(invalid="ignore"):
            y = np.sqrt(v)
        ctx.conf = (axes, corr, keepdim, n)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        from .pointwise import where
        x, y = ctx.saved_tensors
        gv = where(_make(y._data == 0), 0.0, g / (y * 2))
        return _var_backward(gv, x, *ctx.conf), None, None, None


@op("var")
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over all elements (0-d result) or ``dim`` (int or tuple; shape as :func:`sum`,
    ``keepdim`` keeps the reduced dims as size 1), in the input's dtype, dividing by
    N - correction (correction 1 by default; ``unbiased=False`` means 0; ``var(x, False)`` is the
    legacy ``unbiased`` overload). N - correction <= 0 gives inf/NaN, as torch. Gradient:
    derivatives.yaml var_backward.

    Raises RuntimeError for integer/bool inputs; IndexError for a dim out of range; TypeError for
    both ``unbiased`` and ``correction``."""
    return Var.apply(input, *_var_args(input, dim, unbiased, keepdim, correction, "var"))


@op("std")
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation, sqrt(:func:`var`): same arguments, shapes, dtype and errors. Gradient:
    derivatives.yaml std_backward (0 where the result is 0)."""
    return Std.apply(input, *_var_args(input, dim, unbiased, keepdim, correction, "std"))


# ---- vector norm --------------------------------------------------------------------------------
class VectorNorm(ArrayFunction, name="LinalgVectorNormBackward0"):
    """(sum |x| ** p) ** (1 / p) over ``axes`` (p = inf: max |x|, -inf: min |x|, 0: count of
    nonzeros). derivatives.yaml linalg_vector_norm_backward (torch's norm_backward)."""

    @staticmethod
    def forward(ctx, x, p, axes, keepdim):
        ax = axes if axes else None
        a = np.abs(x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if p == 2:
                y = np.sqrt(np.sum(x * x, axis=ax, keepdims=keepdim))
            elif p == 1:
                y = np.sum(a, axis=ax, keepdims=keepdim)
            elif p == np.inf:
                y = np.max(a, axis=ax, keepdims=keepdim)
            elif p == -np.inf:
                y = np.min(a, axis=ax, keepdims=keepdim)
            elif p == 0:
                y = np.sum(a != 0, axis=ax, keepdims=keepdim)
            else:
                y = np.sum(a ** p, axis=ax, keepdims=keepdim) ** (1.0 / p)
        y = np.asarray(y).astype(x.dtype, copy=False)
        ctx.conf = (p, axes, keepdim)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        from .pointwise import abs as _abs, sign, where
        x, y = ctx.saved_tensors   # unpacked first even for p == 0: it checks them, as torch
        p, axes, keepdim = ctx.conf
        if p == 0:   # torch returns an undefined gradient: the input's .grad stays None
            return None, None, None, None
        xd = x._data
        if not keepdim and xd.ndim:   # the reduced dims back as size 1, to broadcast over x
            shp = _keep_shape(xd.shape, axes)
            g, y = g.reshape(shp), y.reshape(shp)
        if p == 1:
            return sign(x) * g, None, None, None
        if p == 2:
            return g * where(_make(y._data == 0), 0.0, x / y), None, None, None
        if p in (np.inf, -np.inf):
            ad = np.abs(xd)
            mask = (ad == y._data) | np.isnan(ad)
            count = mask.sum(axis=axes if axes else None, keepdims=True)
            return sign(x) * ((g / _make(count.astype(g._data.dtype))) *
                              _make(mask.astype(g._data.dtype))), None, None, None
        if p < 1:
            scaled = sign(x) * where(_make(xd == 0), 0.0, _abs(x) ** (p - 1))
            return scaled * g * y ** (1 - p), None, None, None
        scaled = sign(x) * _abs(x) ** (p - 1) if p < 2 else x * _abs(x) ** (p - 2)
        scale = where(_make(y._data == 0), 0.0, g / y ** (p - 1))
        return scaled * scale, None, None, None


@op("norm")
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector p-norm over all elements (0-d result) or ``dim`` (int or tuple;
    shape as :func:`sum`, ``keepdim`` keeps the reduced dims as size 1) for p = 'fro' (the
    default; over at most two dims), None or 2 (the 2-norm), any number, inf (max |x|), -inf
    (min |x|) or 0 (count of nonzeros, no gradient); for p = 'nuc' (or 'fro' over more than two
    dims), :func:`tapegrad.linalg.matrix_norm` over ``dim`` (all dims when None, so a 2-D input
    for 'nuc'), as torch.norm chooses. dtype: the input's, or ``dtype=`` (a floating dtype at
    least as wide as the input's; the input is converted first). Recorded as
    LinalgVectorNormBackward0 (derivatives.yaml linalg_vector_norm_backward), or as
    matrix_norm records 'nuc'.

    Raises RuntimeError for integer/bool inputs, a non-floating or narrowing ``dtype=``, and
    matrix_norm's errors ('fro' over more than two dims, 'nuc' over other than two, an unknown
    order); IndexError for a dim out of range. ``out``: written with torch's out= rules
    (:mod:`tapegrad.ops._out`)."""
    if out is not None:
        from ._out import call_out
        return call_out(norm, "norm", None, (input, p, dim, keepdim), {"dtype": dtype}, out)
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, (int, np.integer)) or len(dim) <= 2):
            return vector_norm_checked(input, 2, dim, keepdim, dtype)
        from .linalg_extra import matrix_norm  # (it imports this module)
        return matrix_norm(input, p, tuple(range(input._data.ndim)) if dim is None else dim,
                           keepdim, dtype=dtype)
    return vector_norm_checked(input, 2 if p is None else p, dim, keepdim, dtype)


def vector_norm_checked(input, p, dim, keepdim, dtype, node=None):
    """:class:`VectorNorm` of ``input`` after torch's linalg.vector_norm checks (shared by
    ``tapegrad.norm``, ``tapegrad.linalg.vector_norm`` and the norms built on it); ``node``: a
    subclass recording another node name (frobenius_norm's NormBackward1)."""
    names = _dtype.SCALAR_NAMES
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {names[input._data.dtype.name]}")
    if dtype is not None:
        input = input.to(check_norm_dtype(input, dtype, "linalg.vector_norm"))
    axes = dims(dim, input._data.ndim, "norm")
    return (node or VectorNorm).apply(input, float(p), axes, bool(keepdim))


def check_norm_dtype(input, dtype, name):
    """torch's check_linalg_norm_dtype: a norm's ``dtype=`` must be floating and at least as wide
    as the input's (RuntimeError naming the op ``name`` otherwise); returns it as a dtype."""
    names = _dtype.SCALAR_NAMES
    d = _dtype.to_dtype(dtype)
    if not d.is_floating_point:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{names[d.name]}")
    if _dtype.promote_types(input.dtype, d) is not d:
        raise RuntimeError(f"{name}: the dtype of the input ({names[input._data.dtype.name]}) "
                           f"should be convertible without narrowing to the specified dtype "
                           f"({names[d.name]})")
    return d


# ---- sort / topk / argsort ----------------------------------------------------------------------
def _argsort_array(x, axis, descending):
    """Stable argsort along ``axis`` (ties keep their order, also descending; NaN counts as the
    largest value, as in torch)."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    idx = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.ascontiguousarray(np.flip(n - 1 - idx, axis))


class Sort(ArrayFunction, name="SortBackward0"):
    """Values sorted along ``axis`` and their int64 indices (non-differentiable).
    derivatives.yaml value_selecting_reduction_backward: grad back to the indices."""

    @staticmethod
    def forward(ctx, x, axis, descending, k=None):
        zero_d = x.ndim == 0
        xx = x.reshape(1) if zero_d else x
        idx = _argsort_array(xx, axis, descending)
        if k is not None:
            idx = np.ascontiguousarray(np.take(idx, range(k), axis=axis))
        idx = idx.astype(np.int64, copy=False)
        vals = np.take_along_axis(xx, idx, axis=axis)
        if zero_d:
            vals, idx = vals.reshape(()), idx.reshape(())
        ctx.meta = (xx.shape, axis, zero_d)
        ctx.save_for_backward(idx)   # the indices output, freed by backward as in torch
        ctx.mark_non_differentiable(idx)
        return vals, idx

    @staticmethod
    def backward(ctx, g, _gidx=None):
        idx, = ctx.saved_tensors
        shape, axis, zero_d = ctx.meta
        if zero_d:
            return g, None, None, None
        return IndexSelectScatter.apply(g, shape, axis, idx._data, True), None, None, None


class SortStable(Sort, name="SortBackward1"):
    """:class:`Sort` recorded as SortBackward1, torch's node for ``sort(stable=...)``."""


class Topk(Sort, name="TopkBackward0"):
    """:class:`Sort` keeping the first ``k`` along ``axis``, recorded as TopkBackward0."""


@op("sort")
def sort(input, dim=-1, descending=False, stable=None):
    """Sort along ``dim`` (default the last), ascending unless ``descending``: a named tuple
    ``(values, indices)``, both of the input's shape; values in the input's dtype, indices int64
    (non-differentiable). The sort is always stable (ties keep their order, also descending), so
    ``stable`` only picks the recorded node: SortBackward0, or SortBackward1 when given, as
    torch's overloads. NaN sorts as the largest value. The gradient goes back to the indices
    (derivatives.yaml value_selecting_reduction_backward).

    Raises IndexError for ``dim`` out of range."""
    ax = dims(dim, input._data.ndim, "sort")
    F = Sort if stable is None else SortStable
    vals, idx = F.apply(input, ax[0] if ax else 0, bool(descending))
    return _return_type("sort")(vals, idx)


@op("topk")
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - torch's name
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` (default the
    last): a named tuple ``(values, indices)`` of the input's shape with ``dim`` of size ``k``;
    values in the input's dtype, indices int64 (non-differentiable). Always in sorted order
    (``sorted=False`` is accepted and ignored; torch leaves that order unspecified); ties keep
    their order. The gradient goes back to the indices (derivatives.yaml
    value_selecting_reduction_backward).

    Raises RuntimeError when ``k`` is negative or exceeds the dim's size; IndexError for ``dim``
    out of range."""
    ax = dims(dim, input._data.ndim, "topk")
    axis = ax[0] if ax else 0
    n = input._data.shape[axis] if input._data.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    vals, idx = Topk.apply(input, axis, bool(largest), int(k))
    return _return_type("topk")(vals, idx)


@op("argsort")
def argsort(input, dim=-1, descending=False, stable=False):
    """The int64 indices that sort ``input`` along ``dim`` (default the last; ascending unless
    ``descending``), of the input's shape; no gradient. The sort is always stable, so
    ``stable=False`` is ignored (torch may then order ties differently).

    Raises IndexError for ``dim`` out of range."""
    x = input._data
    ax = dims(dim, x.ndim, "argsort")
    if x.ndim == 0:
        return _make(np.zeros((), np.int64))
    return _make(_argsort_array(x, ax[0], bool(descending)).astype(np.int64, copy=False))
