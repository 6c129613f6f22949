"""Reductions: sum, mean, max/min, amax/amin, logsumexp, argmax/argmin.

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
from ._util import Tensor, _make, dims, to_float

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


def _keep_shape(shape, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _expand_back(g, in_shape, axes, keepdim):
    """Broadcast a reduced gradient back over the reduced ``axes`` (differentiably)."""
    if not keepdim and axes:
        g = g.reshape(_keep_shape(in_shape, axes))
    return g.expand(in_shape)


class SumAll(ArrayFunction, name="SumBackward0"):
    """Sum of all elements. derivatives.yaml: grad.expand(self.sizes())."""

    @staticmethod
    def forward(ctx, x, np_dtype):
        ctx.in_shape = x.shape
        return np.asarray(x.sum(dtype=np_dtype))

    @staticmethod
    def backward(ctx, g):
        return g.expand(ctx.in_shape), None


class SumDim(ArrayFunction, name="SumBackward1"):
    """Sum over ``axes``. derivatives.yaml sum_backward: unsqueeze and expand grad."""

    @staticmethod
    def forward(ctx, x, axes, keepdim, np_dtype):
        ctx.in_shape, ctx.axes, ctx.keepdim = x.shape, axes, keepdim
        return np.asarray(x.sum(axis=axes, keepdims=keepdim, dtype=np_dtype))

    @staticmethod
    def backward(ctx, g):
        return _expand_back(g, ctx.in_shape, ctx.axes, ctx.keepdim), None, None, None


def _sum_dtype(x, dtype):
    if dtype is not None:
        return _dtype.to_dtype(dtype).np
    if x._data.dtype.kind in "biu":
        return np.int64  # torch sums integers and bools in int64
    return None


@op("sum")
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    """Sum of all elements (0-d result), or over ``dim`` (int or tuple, negative allowed).
    Integer/bool inputs sum to int64. IndexError for a dim out of range."""
    npd = _sum_dtype(input, dtype)
    if dim is None:
        return SumAll.apply(input, npd)
    return SumDim.apply(input, dims(dim, input._data.ndim, "sum"), bool(keepdim), npd)


class MeanAll(ArrayFunction, name="MeanBackward0"):
    """Mean of all elements. derivatives.yaml: grad.expand(self.sizes()) / self.numel()."""

    @staticmethod
    def forward(ctx, x):
        ctx.in_shape, ctx.n = x.shape, x.size
        return np.asarray(x.mean() if x.size else np.array(np.nan, x.dtype)).astype(x.dtype)

    @staticmethod
    def backward(ctx, g):
        if ctx.n == 0:  # empty input: nothing to divide (g / 0 would make double backward nan)
            return g.expand(ctx.in_shape)
        return (g / ctx.n).expand(ctx.in_shape)


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


@op("mean")
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean of all elements or over ``dim``. RuntimeError for integer inputs
    (as torch: pass dtype=tapegrad.float32 or call .float() first)."""
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {input.dtype} (call .float() "
                           f"first or pass dtype=tapegrad.float32)")
    if dim is None:
        return MeanAll.apply(input)
    return MeanDim.apply(input, dims(dim, input._data.ndim, "mean"), bool(keepdim))


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
        if x.shape[axis] == 0:
            raise IndexError(f"{'max' if is_max else 'min'}(): Expected reduction dim {axis} to "
                             "have non-zero size.")
        idx = np.argmax(x, axis=axis, keepdims=True) if is_max else \
            np.argmin(x, axis=axis, keepdims=True)
        vals = np.take_along_axis(x, idx, axis=axis)
        if not keepdim:
            vals = vals.squeeze(axis)
            idx = idx.squeeze(axis)
        idx = idx.astype(np.int64)
        ctx.in_shape, ctx.axis, ctx.keepdim, ctx.idx = x.shape, axis, keepdim, idx
        ctx.mark_non_differentiable(idx)
        return vals, idx

    @staticmethod
    def backward(ctx, g, g_idx=None):
        return IndexSelectScatter.apply(g, ctx.in_shape, ctx.axis, ctx.idx, ctx.keepdim), \
            None, None, None


class MinDim(ExtremumDim, name="MinBackward0"):
    pass


class IndexSelectScatter(ArrayFunction, name="ValueSelectingReductionBackward0"):
    """zeros(shape) with ``g`` put at ``idx`` along ``axis``. Derivative: gather at idx."""

    @staticmethod
    def forward(ctx, g, shape, axis, idx, keepdim):
        ctx.axis, ctx.idx, ctx.keepdim = axis, idx, keepdim
        z = np.zeros(shape, g.dtype)
        if not keepdim:
            g, idx = np.expand_dims(g, axis), np.expand_dims(idx, axis)
        np.put_along_axis(z, idx, g, axis=axis)
        return z

    @staticmethod
    def backward(ctx, gg):
        return GatherAlong.apply(gg, ctx.axis, ctx.idx, ctx.keepdim), None, None, None, None


class GatherAlong(ArrayFunction, name="GatherBackward0"):
    """Values of ``x`` at ``idx`` along ``axis``. Derivative: scatter back (IndexSelectScatter)."""

    @staticmethod
    def forward(ctx, x, axis, idx, keepdim):
        ctx.in_shape, ctx.axis, ctx.idx, ctx.keepdim = x.shape, axis, idx, keepdim
        i = idx if keepdim else np.expand_dims(idx, axis)
        out = np.take_along_axis(x, i, axis=axis)
        return out if keepdim else out.squeeze(axis)

    @staticmethod
    def backward(ctx, g):
        return IndexSelectScatter.apply(g, ctx.in_shape, ctx.axis, ctx.idx, ctx.keepdim), \
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
    nd = input._data.ndim
    axis = dims(dim, nd, name)[0] if nd else 0
    if nd == 0:
        v = input.clone() if input.requires_grad else _make(input._data.copy())
        return _return_type(name)(v, _make(np.zeros((), np.int64)))
    vals, idx = (ExtremumDim if is_max else MinDim).apply(input, axis, bool(keepdim), is_max)
    return _return_type(name)(vals, idx)


@op("max")
def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """``max()``: largest element (0-d; ties share the gradient evenly). ``max(dim)``: named tuple
    (values, indices) along dim (gradient to the index). ``max(other_tensor)``: maximum()."""
    return _extremum(input, dim, keepdim, True, other)


@op("min")
def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """Smallest element(s); see :func:`max`."""
    return _extremum(input, dim, keepdim, False, other)


class Amax(ArrayFunction, name="AmaxBackward0"):
    """Max over ``axes`` (values only). derivatives.yaml scale_grad_by_count: grad split evenly
    among the maxima."""

    @staticmethod
    def forward(ctx, x, axes, keepdim, is_max):
        if builtins.any(x.shape[a] == 0 for a in axes) or (x.size == 0 and not axes):
            raise IndexError(f"{'amax' if is_max else 'amin'}(): Expected reduction dim to have "
                             "non-zero size.")
        y = np.asarray(x.max(axis=axes, keepdims=True) if is_max else x.min(axis=axes, keepdims=True))
        ctx.axes, ctx.keepdim = axes, keepdim
        ctx.save_for_backward(x)
        ctx.mask = x == y
        return y if keepdim else y.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        mask = ctx.mask
        share = (mask / mask.sum(axis=ctx.axes, keepdims=True)).astype(g._data.dtype)
        return _expand_back(g, x._data.shape, ctx.axes, ctx.keepdim) * _make(share), None, None, None


class Amin(Amax, name="AminBackward0"):
    pass


@op("amax")
def amax(input, dim=(), keepdim=False):
    """Max over ``dim`` (all dims when empty); gradient split evenly among ties."""
    ds = dims(dim if dim != () else None, input._data.ndim, "amax")
    return Amax.apply(input, ds, bool(keepdim), True)


@op("amin")
def amin(input, dim=(), keepdim=False):
    """Min over ``dim`` (all dims when empty); gradient split evenly among ties."""
    ds = dims(dim if dim != () else None, input._data.ndim, "amin")
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
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0.")
        r = np.asarray(fn(x.reshape(-1)))
        return _make(r.reshape((1,) * x.ndim if keepdim else ()).astype(np.int64))
    axis = dims(dim, x.ndim, name)[0] if x.ndim else None
    if axis is None:
        return _make(np.zeros((), np.int64))
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
    axes = None if dim is None else dims(dim, input._data.ndim, "all")
    return _make(np.asarray(np.all(input._data, axis=axes, keepdims=keepdim)))


@op("any")
def any(input, dim=None, keepdim=False):  # noqa: A001
    axes = None if dim is None else dims(dim, input._data.ndim, "any")
    return _make(np.asarray(np.any(input._data, axis=axes, keepdims=keepdim)))
