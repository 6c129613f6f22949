"""Index-driven writes (scatter, index_add, index_put, masked_scatter, take, ...), triangular,
rolling, flipping and diagonal ops, stacking helpers, cumprod / diff / repeat_interleave, and a
few binary and unary elementwise ops (atan2, hypot, logaddexp, xlogy, lerp, nan_to_num, logit,
sinc).

Every derivative is written with Tensor ops (or Functions whose own backward is again an op here
or in selection.py), so double backward works. Each Function cites its ``derivatives.yaml`` entry
(PyTorch's formula file) or the identity it uses. Index and mask tensors are ``nondiff``
arguments: passed as Tensors, saved (so changing one in place before backward raises, as
torch), and never an edge of the graph.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from .. import _dtype
from .._memory_format import contiguous_format
from ..autograd.function import ArrayFunction
from ..autograd.graph import user_stacklevel
from ._registry import op
from ._util import (
    Tensor,
    _make,
    _wrap_dim,
    broadcast_error,
    need_float,
    float_result,
    promote,
    to_float,
)
from .indexing import (AdvancedIndex, Alias, check_index_range, convert_index, in_range,
                       ints_first_index)
from .inplace import IndexPut, copy_, inplace, masked_fill
from .pointwise import where
from .reduction import ReverseCumsum, _cast_for_dtype
from .selection import Gather, IndexSelect
from .shape import Permute, cat, repeat


# ---- helpers ------------------------------------------------------------------------------------
def _at1(a):
    """A 0-d array (or Tensor) as a 1-element 1-D one (torch treats a 0-d self, index or src of
    the scatter/index ops as having one dim of size 1)."""
    if isinstance(a, Tensor):
        return a.reshape(1) if a._data.ndim == 0 else a
    return a.reshape(1) if a.ndim == 0 else a


def _coords(idx, axis):
    """Full coordinates: ``idx`` along ``axis``, the position in every other dim."""
    co = list(np.indices(idx.shape, sparse=True))
    co[axis] = idx
    return tuple(co)


def _region(shape):
    return tuple(slice(0, n) for n in shape)


def _name(arr):
    return _dtype.scalar_name(arr.dtype)


def _need_tensor(x, fn, arg, pos):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _gather(t, axis, idx):
    """``t.gather(axis, idx)`` for the backward formulas (0-d t or idx read as 1-element)."""
    return Gather.apply(_at1(t), axis, _at1(idx))


def _mask(arr, dtype):
    """A constant Tensor of ``arr`` (a bool array) as 0/1 of ``dtype``."""
    return _make(arr.astype(dtype))


# ---- scatter, scatter_add, scatter_reduce --------------------------------------------------------
def _check_scatter(fn, input, dim, index, src):
    """torch's checks of scatter/scatter_add/scatter_reduce; returns the non-negative dim."""
    _need_tensor(index, fn, "index", 3)
    idx = index._data
    if idx.dtype.name not in ("int64", "int32"):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    x = input._data
    axis = _wrap_dim(dim, x.ndim, fn)
    if max(idx.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    i1, x1 = _at1(idx), _at1(x)
    s1 = None
    if isinstance(src, Tensor):
        s = src._data
        if 0 < s.ndim < i1.ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-s.ndim}, "
                             f"{s.ndim - 1}], but got {s.ndim})")
        if max(s.ndim, 1) != i1.ndim:
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        s1 = _at1(s)
        if s.dtype != x.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if i1.size:
        big_self = any(i1.shape[d] > x1.shape[d] for d in range(i1.ndim) if d != axis)
        big_src = s1 is not None and any(i1.shape[d] > s1.shape[d] for d in range(i1.ndim))
        if big_self or big_src:
            msg = (f"Expected index {list(i1.shape)} to be no larger than self "
                   f"{list(x1.shape)} apart from dimension {axis}")
            if s1 is not None:
                msg += f" and to be no larger size than src {list(s1.shape)}"
            raise RuntimeError(msg)
        size = x1.shape[axis]
        lo, hi = idx.min(), idx.max()
        if lo < 0 or hi >= size:
            raise RuntimeError(f"index {lo if lo < 0 else hi} is out of bounds for dimension "
                               f"{axis} with size {size}")
    return axis


def _scatter_into(out, axis, idx, src, ufunc=None):
    """Write (or with ``ufunc``, combine) src's leading block (index's shape), or a number, into
    ``out`` at index along axis."""
    o, i = _at1(out), _at1(idx)
    if not i.size:
        return
    co = _coords(i, axis)
    s = _at1(src)[_region(i.shape)] if isinstance(src, np.ndarray) else src
    if ufunc is None:
        o[co] = s
    else:
        ufunc.at(o, co, np.asarray(s).astype(o.dtype, copy=False))


class Scatter(ArrayFunction, name="ScatterBackward0", nondiff=(2,)):
    """self with src's values written at index along dim. derivatives.yaml scatter.src:
    self: grad.scatter(dim, index, 0); src: grad.gather(dim, index)."""

    @staticmethod
    def forward(ctx, x, axis, idx, src):
        ctx.axis = axis
        ctx.save_for_backward(idx)
        out = x.copy()
        _scatter_into(out, axis, idx, src)
        return out

    @staticmethod
    def backward(ctx, g):
        idx, = ctx.saved_tensors
        gx = ScatterValue.apply(g, ctx.axis, idx, 0) if ctx.needs(0) else None
        gs = _gather(g, ctx.axis, idx) if ctx.needs(3) else None
        return gx, None, None, gs


class ScatterValue(Scatter, name="ScatterBackward1"):
    """self with a number written at index along dim (Scatter's forward, the number in place of
    src). derivatives.yaml scatter.value: self: grad.scatter(dim, index, 0)."""

    @staticmethod
    def backward(ctx, g):
        idx, = ctx.saved_tensors
        return ScatterValue.apply(g, ctx.axis, idx, 0), None, None, None


class ScatterLegacyReduce(ArrayFunction, name="NotImplemented", nondiff=(2,)):
    """scatter with the legacy ``reduce='add'|'multiply'``: torch records a node without a
    derivative (named NotImplemented); its backward raises."""

    @staticmethod
    def forward(ctx, x, axis, idx, src, ufunc):
        out = x.copy()
        _scatter_into(out, axis, idx, src, ufunc)
        return out

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::scatter is not implemented")


class ScatterAdd(ArrayFunction, name="ScatterAddBackward0", nondiff=(2,)):
    """self with src's values added at index along dim (repeats accumulate). derivatives.yaml
    scatter_add: self: grad; src: grad.gather(dim, index)."""

    @staticmethod
    def forward(ctx, x, axis, idx, src):
        ctx.axis = axis
        ctx.save_for_backward(idx)
        out = x.copy()
        _scatter_into(out, axis, idx, src, np.add)
        return out

    @staticmethod
    def backward(ctx, g):
        idx, = ctx.saved_tensors
        gs = _gather(g, ctx.axis, idx) if ctx.needs(3) else None
        return g, None, None, gs


_REDUCE_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
                 "amin": np.minimum}


def _reduce_identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind == "f" else (np.iinfo(dtype).max if dtype.kind in "iu" else True)
    small = -np.inf if dtype.kind == "f" else (np.iinfo(dtype).min if dtype.kind in "iu" else False)
    return small if reduce == "amax" else big


class ScatterReduce(ArrayFunction, name="ScatterReduceBackward0", nondiff=(2,)):
    """self with src reduced into it at index along dim (sum, prod, mean, amax, amin), self's
    own value included unless ``include_self`` is False. derivatives.yaml scatter_reduce.two
    (scatter_reduce_backward): sum: self: grad, src: grad.gather; mean: both grad / count;
    prod: self: grad * (product of what was scattered there), src: grad times the product of
    everything else reduced at its place (result / src, with a lone zero handled by reducing
    again with it replaced by 1; two or more zeros give 0); amax/amin: grad split evenly among
    self and the src values equal to the result. Without include_self, self's grad is zero where
    anything was scattered. ``reduce`` 'max'/'min' (torch's legacy names) compute as amax/amin,
    but backward raises RuntimeError, as torch's scatter_reduce_backward."""

    @staticmethod
    def forward(ctx, x, axis, idx, src, reduce, include_self):
        ctx.legacy = reduce if reduce in _REDUCE_ALIASES else None
        reduce = _REDUCE_ALIASES.get(reduce, reduce)
        out = x.copy()
        o, i1 = _at1(out), _at1(idx)
        hit = np.zeros(o.shape, bool)
        if i1.size:
            hit[_coords(i1, axis)] = True
        if not include_self:
            o[hit] = _reduce_identity(reduce, o.dtype)
        _scatter_into(out, axis, idx, src, _REDUCE_UFUNC[reduce])
        count = None
        if reduce == "mean":
            count = np.full(o.shape, 1 if include_self else 0, np.int64)
            if i1.size:
                np.add.at(count, _coords(i1, axis), 1)
            count = np.maximum(count, 1)
            if o.dtype.kind == "f":
                o /= count
            else:
                np.floor_divide(o, count, out=o, casting="unsafe")
        ctx.axis, ctx.reduce, ctx.include_self = axis, reduce, include_self
        ctx.hit, ctx.count = hit, count
        ctx.save_for_backward(idx, x, src, out)
        return out

    @staticmethod
    def backward(ctx, g):
        if ctx.legacy is not None:
            raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                               f"'amin' but got {ctx.legacy}.")
        idx, x, src, res = ctx.saved_tensors
        axis, reduce, inc = ctx.axis, ctx.reduce, ctx.include_self
        dt = g._data.dtype
        g1, i1, x1, r1 = _at1(g), _at1(idx), _at1(x), _at1(res)
        s1 = _at1(src)
        if s1._data.shape != i1._data.shape:
            s1 = s1[_region(i1._data.shape)]
        co = _coords(i1._data, axis) if i1._data.size else None
        gx = gs = None
        if reduce == "sum":
            gx, gs = g1, (_gather(g1, axis, i1) if ctx.needs(3) else None)
        elif reduce == "mean":
            gn = g1 / _make(ctx.count.astype(dt))
            gx, gs = gn, (_gather(gn, axis, i1) if ctx.needs(3) else None)
        elif reduce == "prod":
            if ctx.needs(0):
                if inc:
                    # the product of what was scattered at each place (1 where nothing was)
                    ones = _make(np.ones(x1._data.shape, dt))
                    gx = g1 * ScatterReduce.apply(ones, axis, i1, s1, "prod", True)
                else:
                    gx = g1
            if ctx.needs(3):
                zero = s1._data == 0
                zeros_at = np.zeros(x1._data.shape, np.int64)
                if co is not None:
                    np.add.at(zeros_at, co, zero)
                single = zero & ((zeros_at[co] if co is not None else 0) == 1)
                safe = masked_fill(s1, _make(zero), 1.0)
                gs = _gather(g1 * r1, axis, i1) / safe
                if single.any():
                    # a lone zero: everything else reduced there, that zero taken as 1
                    other = ScatterReduce.apply(x1, axis, i1, masked_fill(s1, _make(single), 1.0),
                                                "prod", inc)
                    gs = where(_make(single), _gather(g1 * other, axis, i1), gs)
        else:   # amax / amin: split evenly among the values equal to the result
            self_is = x1._data == r1._data
            src_is = s1._data == (r1._data[co] if co is not None else np.zeros(0, dt))
            n = self_is.astype(dt)
            if co is not None:
                np.add.at(n, co, src_is.astype(dt))
            gd = g1 / _make(n)
            gx = gd * _mask(self_is, dt)
            gs = _gather(gd, axis, i1) * _mask(src_is, dt) if ctx.needs(3) else None
        if gx is not None and not inc:
            gx = gx * _mask(~ctx.hit, dt)
        if gx is not None and g._data.ndim == 0:
            gx = gx.reshape(())
        return (gx if ctx.needs(0) else None), None, None, gs, None, None


@op("scatter")
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``input`` with values written at ``index`` along ``dim`` (for dim 0:
    ``out[index[i][j]][j] = src[i][j]``); ``src`` is a Tensor or a number (also as ``value=``).
    Repeated indices: one of the values wins (the last, here).

    ``index``: int64 or int32, with input's number of dims (a 0-d tensor counts as 1-D), no
    larger than ``src`` in any dim and than ``input`` in the dims other than ``dim``; only src's
    leading block of index's shape is read. Result: input's shape and dtype (a number is cast).
    ``reduce='add'|'multiply'`` (legacy) combines instead of writing; torch records a node
    without derivative (NotImplemented) whose backward raises RuntimeError, and warns for a
    Tensor src (UserWarning: deprecated).

    Derivatives (derivatives.yaml scatter.src / scatter.value): self: grad.scatter(dim, index,
    0); src: grad.gather(dim, index) (ScatterBackward0; ScatterBackward1 for a number). A src
    larger than index gets a gradient of index's shape: backward raises RuntimeError, as torch.

    Raises:
        TypeError: ``index`` not a Tensor; neither src nor value given.
        IndexError: ``dim`` out of range.
        RuntimeError: index not int64/int32; a rank or size mismatch; an index < 0 or >= the
            dim's size; src of another dtype; a 0-d Tensor src with a >= 1-D index; ``reduce``
            other than 'add'/'multiply'."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' (a Tensor) or 'value' (a "
                        "number)")
    axis = _check_scatter("scatter", input, dim, index, src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                          "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                          "instead for more reduction options.", UserWarning,
                          stacklevel=user_stacklevel())
        return ScatterLegacyReduce.apply(input, axis, index, src,
                                         np.add if reduce == "add" else np.multiply)
    if isinstance(src, Tensor):
        return Scatter.apply(input, axis, index, src)
    return ScatterValue.apply(input, axis, index, src)


@op("scatter_add")
def scatter_add(input, dim, index, src):
    """``input`` with ``src``'s values added at ``index`` along ``dim`` (repeated indices add
    up). Index and shape rules, result shape and dtype as :func:`scatter`; src must be a Tensor
    of input's dtype.

    Derivative (derivatives.yaml scatter_add): self: grad; src: grad.gather(dim, index)
    (ScatterAddBackward0).

    Raises TypeError (src or index not a Tensor), IndexError (dim out of range) and
    RuntimeError (index dtype, rank, size or bounds; src dtype) as :func:`scatter`."""
    _need_tensor(src, "scatter_add", "src", 4)
    axis = _check_scatter("scatter_add", input, dim, index, src)
    return ScatterAdd.apply(input, axis, index, src)


_REDUCE_ALIASES = {"max": "amax", "min": "amin"}


@op("scatter_reduce")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with ``src``'s values reduced into it at ``index`` along ``dim``: ``reduce``
    is 'sum', 'prod', 'mean', 'amax' or 'amin' ('max'/'min' are computed as amax/amin, as
    torch does, but their backward raises RuntimeError, as torch's); ``include_self=False`` leaves input's own value out where anything is scattered.
    'mean' divides by the number of values (at least 1); on integer tensors it floors. Index and
    shape rules, result shape and dtype as :func:`scatter_add`.

    Derivative: see :class:`ScatterReduce` (derivatives.yaml scatter_reduce.two;
    ScatterReduceBackward0). Divergence from torch: for 'prod' with two or more zeros scattered
    to one place, the src gradient there is 0 also under create_graph (torch raises then).

    Raises TypeError, IndexError and RuntimeError as :func:`scatter_add`; RuntimeError for an
    unknown ``reduce``, and in backward for 'max'/'min'."""
    _need_tensor(src, "scatter_reduce", "src", 4)
    red = _REDUCE_ALIASES.get(reduce, reduce)
    if red not in _REDUCE_UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    axis = _check_scatter("scatter_reduce", input, dim, index, src)
    return ScatterReduce.apply(input, axis, index, src, reduce, bool(include_self))


# ---- index_add, index_copy, index_fill -----------------------------------------------------------
def _slices(a, axis):
    """``a`` (at least 1-D) with ``axis`` first, for writes along it."""
    return np.moveaxis(_at1(a), axis, 0)


class IndexAddTo(ArrayFunction, name="IndexAddBackward0", nondiff=(2,)):
    """self with alpha * source's slices added at index along dim (repeats accumulate).
    derivatives.yaml index_add: self: grad; source: grad.index_select(dim, index) * alpha.
    Source is saved when it needs a gradient, as torch saves it (for expand_as(source)), so
    changing it in place before backward raises then."""

    @staticmethod
    def forward(ctx, x, axis, idx, src, alpha):
        ctx.axis, ctx.alpha = axis, alpha
        ctx.save_for_backward(idx, src if ctx.needs(3) else None)
        out = x.copy()
        vals = _slices(src, axis) if alpha == 1 else _slices(src, axis) * alpha
        np.add.at(_slices(out, axis), idx.reshape(-1), vals.astype(out.dtype, copy=False))
        return out

    @staticmethod
    def backward(ctx, g):
        idx, _ = ctx.saved_tensors
        gs = None
        if ctx.needs(3):
            gs = IndexSelect.apply(_at1(g), ctx.axis, idx)
            if ctx.alpha != 1:
                gs = gs * ctx.alpha
        return g, None, None, gs, None


class IndexCopy(ArrayFunction, name="IndexCopyBackward0", nondiff=(2,)):
    """self with source's slices written at index along dim. derivatives.yaml index_copy:
    self: grad.index_fill(dim, index, 0); source: grad.index_select(dim, index)."""

    @staticmethod
    def forward(ctx, x, axis, idx, src):
        ctx.axis = axis
        ctx.save_for_backward(idx)
        out = x.copy()
        _slices(out, axis)[idx.reshape(-1)] = _slices(src, axis)
        return out

    @staticmethod
    def backward(ctx, g):
        idx, = ctx.saved_tensors
        gx = IndexFill.apply(g, ctx.axis, idx, 0) if ctx.needs(0) else None
        gs = IndexSelect.apply(_at1(g), ctx.axis, idx) if ctx.needs(3) else None
        return gx, None, None, gs


class IndexFill(ArrayFunction, name="IndexFillBackward0", nondiff=(2,)):
    """self with the slices at index along dim set to a number. derivatives.yaml
    index_fill.int_Scalar: self: grad.index_fill(dim, index, 0)."""

    @staticmethod
    def forward(ctx, x, axis, idx, value):
        ctx.axis, ctx.size = axis, _at1(x).shape[axis]
        ctx.save_for_backward(idx)
        out = x.copy()
        _slices(out, axis)[idx.reshape(-1)] = value
        return out

    @staticmethod
    def backward(ctx, g):
        idx, = ctx.saved_tensors
        gx = IndexFill.apply(g, ctx.axis, idx, 0) if ctx.needs(0) else None
        gv = None
        if ctx.needs(3):
            # each filled slice once (derivatives.yaml: index_select at the unique indices)
            uniq = _make(np.unique(idx._data.reshape(-1) % max(ctx.size, 1)))
            gv = IndexSelect.apply(_at1(g), ctx.axis, uniq).sum()
        return gx, None, None, gv


class IndexFillTensor(IndexFill, name="IndexFillBackward1"):
    """index_fill with a 0-d tensor value. derivatives.yaml index_fill.int_Tensor: self as
    IndexFillBackward0; value: grad.index_select(dim, unique(index)).sum()."""


def _index_vector(fn, index, allowed, dtype_error, ndim_error):
    """The checks of index_add/index_copy/index_fill on ``index``; returns it flat (int64)."""
    _need_tensor(index, fn, "index", 3)
    idx = index._data
    if idx.dtype.name not in allowed:
        raise dtype_error(idx)
    if idx.ndim > 1:
        raise ndim_error(idx)
    return idx.reshape(-1).astype(np.int64, copy=False)


def _check_source(fn, input, axis, flat, source, slice_error, count_error):
    x1, s1 = _at1(input._data), _at1(source._data)
    if (input._data.ndim == 0 and source._data.ndim) or s1.ndim != x1.ndim or any(s1.shape[d] != x1.shape[d] for d in range(x1.ndim)
                                 if d != axis):
        raise slice_error(x1, s1)
    if flat.size != s1.shape[axis]:
        raise count_error(flat.size, s1.shape[axis])


@op("index_add")
def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source`` added, slice by slice, at ``index`` along ``dim``
    (``out.select(dim, index[i]) += alpha * source.select(dim, i)``; repeats accumulate).

    ``index``: a 0-d or 1-D int64/int32 tensor; ``source``: input's dtype and shape except
    ``index.numel()`` along dim. Result: input's shape and dtype (alpha is cast to an integer
    input's type). Derivative (derivatives.yaml index_add): self: grad; source:
    grad.index_select(dim, index) * alpha (IndexAddBackward0).

    Raises:
        TypeError: index or source not a Tensor.
        IndexError: ``dim`` out of range; an index of more than one dim.
        RuntimeError: index not int64/int32; source of another dtype or slice shape; a count
            of indices other than source.size(dim); an index < 0 or >= the dim's size."""
    axis, alpha = _index_add_checks(input, dim, index, source, alpha)
    return IndexAddTo.apply(input, axis, index, source, alpha)


def _index_add_checks(input, dim, index, source, alpha):
    """index_add's checks; returns (dim, alpha cast for an integer input)."""
    flat = _index_vector(
        "index_add", index, ("int64", "int32"),
        lambda i: RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                               f"{_name(i)}"),
        lambda i: IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                             f"{i.ndim} with type: {_name(i)} and size: {list(i.shape)}"))
    _need_tensor(source, "index_add", "source", 4)
    axis = _wrap_dim(dim, input._data.ndim, "index_add")
    _check_source("index_add", input, axis, flat, source,
                  lambda x1, s1: RuntimeError(
                      f"source tensor shape must match self tensor shape, excluding the "
                      f"specified dimension. Got self.shape = {list(input._data.shape)} "
                      f"source.shape = {list(source._data.shape)}"),
                  lambda n, m: RuntimeError(
                      f"index_add_(): Number of indices ({n}) should be equal to "
                      f"source.size(dim): ({m}), for dim: {axis}"))
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_add_(): self ({_name(input._data)}) and source "
                           f"({_name(source._data)}) must have the same scalar type")
    size = _at1(input._data).shape[axis]
    if flat.size and (flat.min() < 0 or flat.max() >= size):
        bad = flat.min() if flat.min() < 0 else flat.max()
        raise RuntimeError(f"index {bad} is out of bounds for dimension {axis} with size {size}")
    if input._data.dtype.kind in "biu":
        alpha = int(alpha)
    return axis, alpha


@op("index_copy")
def index_copy(input, dim, index, source):
    """``input`` with ``source``'s slices written at ``index`` along ``dim``
    (``out.select(dim, index[i]) = source.select(dim, i)``; with repeated indices the last
    wins here, torch leaves it unspecified).

    ``index``: a 0-d or 1-D int64 tensor; ``source``: input's dtype and shape except
    ``index.numel()`` along dim. Result: input's shape and dtype. Derivative (derivatives.yaml
    index_copy): self: grad.index_fill(dim, index, 0); source: grad.index_select(dim, index)
    (IndexCopyBackward0).

    Raises:
        TypeError: index or source not a Tensor.
        IndexError: ``dim`` out of range; an index of more than one dim; a count of indices
            other than source.size(dim); an index < 0 or >= the dim's size.
        RuntimeError: index not int64; source of another dtype or slice shape."""
    axis = _index_copy_checks(input, dim, index, source)
    return IndexCopy.apply(input, axis, index, source)


def _index_copy_checks(input, dim, index, source):
    """index_copy's checks; returns the non-negative dim."""
    flat = _index_vector(
        "index_copy", index, ("int64",),
        lambda i: RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                               f"{_name(i)}"),
        lambda i: IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                             f"{i.ndim})"))
    _need_tensor(source, "index_copy", "source", 4)
    axis = _wrap_dim(dim, input._data.ndim, "index_copy")

    def slice_error(x1, s1):
        d = next((d for d in range(min(x1.ndim, s1.ndim)) if d != axis and
                  x1.shape[d] != s1.shape[d]), 0)
        return RuntimeError(
            f"index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {x1.shape[d] if d < x1.ndim else 1} at dimension {d} and source "
            f"slice shape: {s1.shape[d] if d < s1.ndim else 1} at dimension {d}.")
    _check_source("index_copy", input, axis, flat, source, slice_error,
                  lambda n, m: IndexError(f"index_copy_(): Number of indices ({n}) should be "
                                          f"equal to source.size(dim) ({m})"))
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_name(input._data)} and (source) "
                           f"{_name(source._data)}")
    size = _at1(input._data).shape[axis]
    if flat.size and (flat.min() < 0 or flat.max() >= size):
        bad = flat.min() if flat.min() < 0 else flat.max()
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {axis} "
                         f"with size {size}")
    return axis


def _fill_args(input, dim, index, value):
    flat = _index_vector(
        "index_fill", index, ("int64",),
        lambda i: IndexError("index_fill_(): Expected dtype int64 for index."),
        lambda i: RuntimeError("Index has to be a vector/scalar"))
    axis = _wrap_dim(dim, input._data.ndim, "index_fill")
    size = _at1(input._data).shape[axis]
    if flat.size and (flat.min() < -size or flat.max() >= size):
        bad = flat.min() if flat.min() < -size else flat.max()
        raise IndexError(f"index {bad} is out of bounds for dimension {axis} with size {size}")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        return axis, IndexFillTensor
    if not isinstance(value, (int, float, bool, np.number)):
        raise TypeError(f"index_fill(): argument 'value' must be Number or Tensor, not "
                        f"{type(value).__name__}")
    return axis, IndexFill


@op("index_fill")
def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or a 0-d
    tensor, cast to input's dtype); negative indices count from the end.

    ``index``: a 0-d or 1-D int64 tensor. Result: input's shape and dtype. Derivatives
    (derivatives.yaml index_fill.int_Scalar / int_Tensor): self: grad.index_fill(dim, index, 0);
    value: grad.index_select(dim, unique(index)).sum() (IndexFillBackward0 for a number,
    IndexFillBackward1 for a tensor).

    Raises:
        TypeError: index not a Tensor; value neither a number nor a Tensor.
        IndexError: ``dim`` out of range; index not int64; an index outside [-size, size).
        RuntimeError: an index of more than one dim; a value tensor that is not 0-d."""
    axis, F = _fill_args(input, dim, index, value)
    return F.apply(input, axis, index, value)


# ---- index_put -----------------------------------------------------------------------------------
class IndexPutAccumulate(ArrayFunction, name="IndexPutBackward0", nondiff=range(3, 1 << 62)):
    """self with values added at an advanced index (repeats accumulate). derivatives.yaml
    index_put (accumulate=True): self: grad; values: grad.index(indices), summed back to the
    values' shape."""

    @staticmethod
    def forward(ctx, x, values, idx, *tensors):
        ctx.save_for_backward(idx, *tensors)
        out = x.copy()
        target = out[idx].shape
        np.add.at(out, idx, np.broadcast_to(values, target).astype(out.dtype, copy=False))
        return out

    @staticmethod
    def backward(ctx, g):
        idx, *tensors = ctx.saved_tensors
        gv = AdvancedIndex.apply(g, idx, *tensors) if ctx.needs(1) else None
        return (g, gv, None) + (None,) * len(tensors)


def _index_put_args(fn, input, indices, values):
    """(NumPy index, index Tensors) of index_put, after torch's checks."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'indices' (position 2) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    for k, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got "
                            f"{type(t).__name__}")
    _need_tensor(values, fn, "values", 3)
    items = []
    for t in indices:
        arr = t._data
        if arr.dtype == np.uint8:
            arr = arr.astype(bool)
        elif arr.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        items.append(arr)
    shape = input._data.shape
    idx, _, _ = convert_index(tuple(items), shape)
    if values._data.dtype != input._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_name(input._data)} for the destination and {_name(values._data)} "
                           f"for the source.")
    target = np.broadcast_to(np.empty((), bool), shape)[ints_first_index(in_range(idx, shape),
                                                                          shape)].shape
    vshape = values._data.shape
    try:
        ok = np.broadcast_shapes(vshape, target) == target
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                           f"broadcast to indexing result of shape {list(target)}")
    return ints_first_index(check_index_range(idx, shape, fn), shape), tuple(indices)


@op("index_put")
def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` written at ``input[indices]`` (``indices``: a tuple or list of
    integer or bool tensors, read as advanced indexing, one per leading dim); with
    ``accumulate=True`` added instead (repeated indices add up).

    ``values``: a Tensor of input's dtype that broadcasts to the indexed shape. Result: input's
    shape and dtype. Derivative (derivatives.yaml index_put): self: grad with zeros at the
    indices (grad itself when accumulating); values: grad.index(indices), summed back to the
    values' shape (IndexPutBackward0).

    Raises:
        TypeError: indices not a tuple/list of Tensors (None included); values not a Tensor.
        IndexError: a float index; too many indices; an index out of range; a mask whose shape
            does not match.
        RuntimeError: values of another dtype, or of a shape that does not broadcast."""
    idx, tensors = _index_put_args("index_put", input, indices, values)
    F = IndexPutAccumulate if accumulate else IndexPut
    return F.apply(input, values, idx, *tensors)


# ---- take_along_dim, take -------------------------------------------------------------------------
@op("take_along_dim")
def take_along_dim(input, indices, dim=None):
    """Values of ``input`` at ``indices`` along ``dim``: ``gather`` after broadcasting input and
    indices against each other in every dim but ``dim``; with ``dim=None`` both are flattened
    first. As torch 2.13, indices are read modulo the dim's size (an index past the end or below
    -size wraps around instead of raising).

    ``indices``: int64, with input's number of dims (any shape when dim is None). Result:
    input's dtype; the broadcast shape with indices' size along dim (1-D of indices.numel()
    when dim is None). Derivative: gather's (derivatives.yaml gather: scatter_add into zeros)
    through expand (GatherBackward0 after ExpandBackward0; ViewBackward0 for dim=None).

    Raises:
        TypeError: indices not a Tensor.
        IndexError: ``dim`` out of range.
        RuntimeError: indices not int64 (a non-integer dtype: gather's message); a rank other
            than input's; shapes that do not broadcast."""
    from .shape import expand, reshape
    _need_tensor(indices, "take_along_dim", "indices", 2)
    idx = indices._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if idx.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_name(idx)}")
    x = input._data
    if dim is None:
        flat_x = reshape(input, -1)
        flat_i = reshape(indices, -1)
        return _wrapped_gather(flat_x, 0, flat_i)
    axis = _wrap_dim(dim, x.ndim, "take_along_dim")
    if idx.ndim != x.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {x.ndim} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices")
    if x.ndim == 0:
        return _wrapped_gather(reshape(input, 1), 0, reshape(indices, 1)).reshape(())
    xs, ids = list(x.shape), list(idx.shape)
    xs[axis] = ids[axis] = 1
    try:
        b = list(np.broadcast_shapes(tuple(xs), tuple(ids)))
    except ValueError:
        raise broadcast_error("take_along_dim", _make(np.empty(xs)), _make(np.empty(ids))) \
            from None
    bx, bi = list(b), list(b)
    bx[axis], bi[axis] = x.shape[axis], idx.shape[axis]
    return _wrapped_gather(expand(input, bx), axis, expand(indices, bi))


def _wrapped_gather(x, axis, index):
    """gather with the indices taken modulo the dim's size. As torch 2.13, the gather reads a new
    index tensor, so changing ``indices`` in place after the call does not make backward raise."""
    size = x._data.shape[axis]
    idx = index._data
    if idx.size and size == 0:
        raise RuntimeError(f"index {idx.reshape(-1)[0]} is out of bounds for dimension {axis} "
                           f"with size 0")
    return Gather.apply(x, axis, _make(idx % size if idx.size else idx.copy()))


class Take(ArrayFunction, name="TakeBackward0", nondiff=(1,)):
    """input.flatten()[index], in index's shape. derivatives.yaml take: self:
    zeros_like(self).put_(index, grad, accumulate=True). Input and index are saved, as torch
    saves self and index, so changing either in place before backward raises."""

    @staticmethod
    def forward(ctx, x, idx):
        ctx.shape = x.shape
        ctx.save_for_backward(idx, x)
        return x.reshape(-1)[idx]

    @staticmethod
    def backward(ctx, g):
        idx, _ = ctx.saved_tensors
        return Put.apply(g, ctx.shape, idx), None


class Put(ArrayFunction, name="PutBackward0", nondiff=(2,)):
    """zeros(shape) with g added at the flat positions idx (take's gradient). Its own
    derivative: take at idx."""

    @staticmethod
    def forward(ctx, g, shape, idx):
        ctx.save_for_backward(idx)
        z = np.zeros(int(np.prod(shape)), g.dtype)
        np.add.at(z, idx.reshape(-1), g.reshape(-1))
        return z.reshape(shape)

    @staticmethod
    def backward(ctx, gg):
        idx, = ctx.saved_tensors
        return Take.apply(gg, idx), None, None


@op("take")
def take(input, index):
    """``input`` read as 1-D at ``index`` (an int64 tensor; negative values count from the end),
    in index's shape and input's dtype. Derivative (derivatives.yaml take): grad put-added into
    zeros at the indices, so repeats add up (TakeBackward0).

    Raises:
        TypeError: index not a Tensor.
        RuntimeError: index not int64.
        IndexError: an index outside [-numel, numel); any index into an empty input."""
    _need_tensor(index, "take", "index", 2)
    idx = index._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_name(idx)}")
    n = input._data.size
    if idx.size:
        if n == 0:
            raise IndexError("take(): tried to take from an empty tensor")
        lo, hi = idx.min(), idx.max()
        if lo < -n or hi >= n:
            raise IndexError(f"out of range: tried to access index {lo if lo < -n else hi} on a "
                             f"tensor of {n} elements.")
    return Take.apply(input, index)


# ---- masked_select, masked_scatter ----------------------------------------------------------------
class MaskedSelect(ArrayFunction, name="MaskedSelectBackward0", nondiff=(1,)):
    """The elements of input where mask is True (both broadcast), as 1-D. derivatives.yaml
    masked_select: zeros(broadcast shape).masked_scatter(mask, grad), summed back to self.
    Input and mask are saved, as torch saves self and mask, so changing either in place before
    backward raises."""

    @staticmethod
    def forward(ctx, x, m):
        shape = np.broadcast_shapes(x.shape, m.shape)
        ctx.shape = shape
        ctx.save_for_backward(m, x)
        return np.broadcast_to(x, shape)[np.broadcast_to(m, shape)]

    @staticmethod
    def backward(ctx, g):
        m, _ = ctx.saved_tensors
        return MaskedSelectGrad.apply(g, ctx.shape, m), None


class MaskedSelectGrad(ArrayFunction, name="MaskedScatterBackward0", nondiff=(2,)):
    """zeros(shape) with g written where the mask is True (masked_select's gradient). Its own
    derivative: masked_select of the grad."""

    @staticmethod
    def forward(ctx, g, shape, m):
        ctx.save_for_backward(m)
        z = np.zeros(shape, g.dtype)
        z[np.broadcast_to(m, shape)] = g
        return z

    @staticmethod
    def backward(ctx, gg):
        m, = ctx.saved_tensors
        return MaskedSelect.apply(gg, m), None, None


def _check_mask(fn, mask, msg):
    _need_tensor(mask, fn, "mask", 2)
    if mask._data.dtype != np.bool_:
        raise RuntimeError(msg.format(_name(mask._data)))


@op("masked_select")
def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` (a bool tensor) is True, input and mask
    broadcast together, as a new 1-D tensor of input's dtype (row-major order).

    Derivative (derivatives.yaml masked_select): grad scattered into zeros at the mask, summed
    back to input's shape (MaskedSelectBackward0).

    Raises:
        TypeError: mask not a Tensor.
        RuntimeError: mask not bool; shapes that do not broadcast."""
    _check_mask("masked_select", mask, "masked_select: expected BoolTensor for mask")
    try:
        np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        raise broadcast_error("masked_select", input, mask) from None
    return MaskedSelect.apply(input, mask)


class MaskedScatter(ArrayFunction, name="MaskedScatterBackward0", nondiff=(1,)):
    """input (broadcast with mask) with source's leading elements written, in order, where mask
    is True. derivatives.yaml masked_scatter: self: grad.masked_fill(mask, 0); source:
    masked_scatter_backward (grad.masked_select(mask), zero-padded to source's numel, in
    source's shape)."""

    @staticmethod
    def forward(ctx, x, m, src):
        shape = np.broadcast_shapes(x.shape, m.shape)
        mb = np.broadcast_to(m, shape)
        out = np.array(np.broadcast_to(x, shape))
        n = int(mb.sum())
        out[mb] = src.reshape(-1)[:n]
        ctx.src_shape, ctx.n = src.shape, n
        ctx.save_for_backward(m)
        return out

    @staticmethod
    def backward(ctx, g):
        m, = ctx.saved_tensors
        gx = masked_fill(g, m, 0.0) if ctx.needs(0) else None
        gs = None
        if ctx.needs(2):
            gs = MaskedSelect.apply(g, m)
            pad = int(np.prod(ctx.src_shape)) - ctx.n
            if pad:
                gs = cat([gs, _make(np.zeros(pad, g._data.dtype))])
            gs = gs.reshape(ctx.src_shape)
        return gx, None, gs


def _masked_scatter_checks(fn, input, mask, source, inplace_op=False):
    _check_mask(fn, mask, "masked_scatter_ only supports boolean masks, but got mask with dtype "
                          "{}")
    _need_tensor(source, fn, "source", 3)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_name(input._data)} and {_name(source._data)}")
    try:
        shape = np.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        raise broadcast_error(fn, input, mask) from None
    if inplace_op and shape != input._data.shape:
        raise RuntimeError(f"{fn}: the mask of shape {list(mask._data.shape)} must broadcast to "
                           f"self's shape {list(input._data.shape)}")
    if int(np.broadcast_to(mask._data, shape).sum()) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")


@op("masked_scatter")
def masked_scatter(input, mask, source):
    """``input`` (broadcast with ``mask``) with ``source``'s elements copied, in row-major order,
    to the places where ``mask`` (bool) is True; source needs at least as many elements as the
    mask has True values, and input's dtype. Result: the broadcast shape, input's dtype.

    Derivative (derivatives.yaml masked_scatter): self: grad.masked_fill(mask, 0); source: the
    masked grad values, zero-padded to source's shape (MaskedScatterBackward0).

    Raises:
        TypeError: mask or source not a Tensor.
        RuntimeError: mask not bool; source of another dtype; shapes that do not broadcast;
            fewer source elements than True values."""
    _masked_scatter_checks("masked_scatter", input, mask, source)
    return MaskedScatter.apply(input, mask, source)


# ---- nonzero, argwhere, count_nonzero -------------------------------------------------------------
@op("nonzero")
def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements of ``input`` (any dtype), in row-major order: an int64
    tensor of shape (n, ndim) (a 0-d input gives (1, 0) or (0, 0)), or with ``as_tuple=True`` a
    tuple of ndim 1-D int64 tensors (one 1-D tensor for a 0-d input). No gradient."""
    x = input._data
    if as_tuple:
        if x.ndim == 0:
            return (_make(np.zeros(1 if x != 0 else 0, np.int64)),)
        return tuple(_make(np.ascontiguousarray(a, np.int64)) for a in np.nonzero(x))
    if x.ndim == 0:
        return _make(np.zeros((1 if x != 0 else 0, 0), np.int64))
    return _make(np.argwhere(x).astype(np.int64, copy=False))


@op("argwhere")
def argwhere(input):
    """``nonzero(input)``: an int64 tensor (n, ndim) of the indices of the nonzero elements."""
    return nonzero(input)


@op("count_nonzero")
def count_nonzero(input, dim=None):
    """The number of nonzero elements of ``input``, over all dims or over ``dim`` (an int, or a
    tuple/list of ints): an int64 tensor of input's shape without those dims. No gradient.

    Raises IndexError for a dim out of range; RuntimeError for a dim given twice."""
    x = input._data
    if dim is None:
        axes = None
    else:
        ds = [dim] if isinstance(dim, (int, np.integer)) else list(dim)
        axes = tuple(_wrap_dim(int(d), x.ndim, "count_nonzero") for d in ds)
        for a in axes:
            if axes.count(a) > 1:
                raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        if x.ndim == 0:
            axes = None
    return _make(np.asarray(np.count_nonzero(x, axis=axes), np.int64))


# ---- tril, triu ----------------------------------------------------------------------------------
class Tril(ArrayFunction, name="TrilBackward0"):
    """The lower triangle (elements with col - row <= k) of the last two dims, the rest 0.
    derivatives.yaml tril: grad.tril(diagonal)."""
    _np = staticmethod(np.tril)

    @classmethod
    def forward(cls, ctx, x, k):
        ctx.k = k
        return cls._np(x, k)

    @classmethod
    def backward(cls, ctx, g):
        return cls.apply(g, ctx.k), None


class Triu(Tril, name="TriuBackward0"):
    """The upper triangle (col - row >= k). derivatives.yaml triu: grad.triu(diagonal)."""
    _np = staticmethod(np.triu)


def _check_matrix(fn, input):
    if input._data.ndim < 2:
        raise RuntimeError(f"{fn}: input tensor must have at least 2 dimensions")


@op("tril")
def tril(input, diagonal=0):
    """The lower triangle of each matrix (the last two dims) of ``input``: elements with
    ``col - row <= diagonal`` kept, the others 0. Result: input's shape and dtype (a copy).
    Derivative (derivatives.yaml tril): grad.tril(diagonal) (TrilBackward0). RuntimeError for
    an input of fewer than 2 dims."""
    _check_matrix("tril", input)
    return Tril.apply(input, int(diagonal))


@op("triu")
def triu(input, diagonal=0):
    """The upper triangle of each matrix: elements with ``col - row >= diagonal`` kept, the
    others 0. Result: input's shape and dtype (a copy). Derivative (derivatives.yaml triu):
    grad.triu(diagonal) (TriuBackward0). RuntimeError for an input of fewer than 2 dims."""
    _check_matrix("triu", input)
    return Triu.apply(input, int(diagonal))


# ---- roll, flip, rot90 ---------------------------------------------------------------------------
class Roll(ArrayFunction, name="RollBackward0"):
    """Elements shifted cyclically along dims (or the flattened tensor when dims is None).
    derivatives.yaml roll: grad.roll(-shifts, dims)."""

    @staticmethod
    def forward(ctx, x, shifts, axes):
        ctx.shifts, ctx.axes = shifts, axes
        if axes is None:
            return np.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
        return np.roll(x, shifts, axes)

    @staticmethod
    def backward(ctx, g):
        return Roll.apply(g, tuple(-s for s in ctx.shifts), ctx.axes), None, None


def _int_tuple(v):
    return (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(e) for e in v)


@op("roll")
def roll(input, shifts, dims=None):
    """``input`` with its elements shifted cyclically by ``shifts`` along ``dims`` (ints or
    tuples of equal length; a dim may repeat, its shifts add up). With ``dims=None`` the
    flattened tensor is rolled and the shape restored. Result: input's shape and dtype (a copy).
    Derivative (derivatives.yaml roll): grad.roll(-shifts, dims) (RollBackward0).

    Raises:
        RuntimeError: no shifts; shifts and dims of different lengths (more than one shift
            without dims).
        IndexError: a dim out of range (any dim for a 0-d input)."""
    sh = _int_tuple(shifts)
    if not sh:
        raise RuntimeError("`shifts` required")
    nd = input._data.ndim
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:0")
        return Roll.apply(input, sh, None)
    ds = _int_tuple(dims)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    if nd == 0:
        raise IndexError(f"Dimension specified as {ds[0]} but tensor has no dimensions")
    return Roll.apply(input, sh, tuple(_wrap_dim(d, nd, "roll") for d in ds))


class Flip(ArrayFunction, name="FlipBackward0"):
    """The order of the elements reversed along dims (a copy). derivatives.yaml flip:
    grad.flip(dims)."""

    @staticmethod
    def forward(ctx, x, axes):
        ctx.axes = axes
        return np.flip(x, axes).copy() if axes and x.ndim else x.copy()

    @staticmethod
    def backward(ctx, g):
        return Flip.apply(g, ctx.axes), None


def _flip_dims(input, dims, fn):
    nd = input._data.ndim
    axes = tuple(_wrap_dim(int(d), nd, fn) for d in dims)
    for a in axes:
        if axes.count(a) > 1:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    return axes


@op("flip", method=False)
def flip(input, dims):
    """``input`` with the order of its elements reversed along each dim of ``dims`` (a tuple or
    list of ints). Result: input's shape and dtype, a copy (unlike NumPy's view).
    Derivative (derivatives.yaml flip): grad.flip(dims) (FlipBackward0).

    Raises TypeError for an int ``dims`` (the method takes ``x.flip(0)``), IndexError for a dim
    out of range, RuntimeError for a dim given twice."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    return Flip.apply(input, _flip_dims(input, dims, "flip"))


def _flip_method(self, *dims):
    """``x.flip(dims)`` or ``x.flip(d0, d1, ...)``: see :func:`flip`."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    return Flip.apply(self, _flip_dims(self, dims, "flip"))


op("flip", namespace=False)(_flip_method)


@op("fliplr")
def fliplr(input):
    """``flip(input, (1,))``: columns in reverse order. RuntimeError for fewer than 2 dims."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return Flip.apply(input, (1,))


@op("flipud")
def flipud(input):
    """``flip(input, (0,))``: rows in reverse order. RuntimeError for a 0-d input."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return Flip.apply(input, (0,))


class Rot90(ArrayFunction, name="Rot90Backward0"):
    """Rotation by k * 90 degrees in the plane of two dims (a copy). derivatives.yaml rot90:
    grad.rot90(-k, dims)."""

    @staticmethod
    def forward(ctx, x, k, axes):
        ctx.k, ctx.axes = k, axes
        return np.rot90(x, k, axes).copy()

    @staticmethod
    def backward(ctx, g):
        return Rot90.apply(g, (-ctx.k) % 4, ctx.axes), None, None


@op("rot90")
def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by ``k`` * 90 degrees from the first toward the second dim of ``dims``
    (k may be negative or above 3). Result: input's dtype, the two dims swapped for odd k, a
    copy. Derivative (derivatives.yaml rot90): grad.rot90(-k, dims) (Rot90Backward0).

    Raises RuntimeError for dims not of length 2, an input of fewer than 2 dims, or equal
    dims; IndexError for a dim out of range."""
    dims = tuple(dims)
    nd = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = (_wrap_dim(int(d), nd, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return Rot90.apply(input, int(k) % 4, (d0, d1))


# ---- diagonal, diag, diag_embed, trace ------------------------------------------------------------
def _diag_view(x, offset, d1, d2):
    """NumPy's diagonal view (diagonal dim last, as torch), writable when x is."""
    d = np.diagonal(x, offset, d1, d2)
    if x.flags.writeable:
        d.flags.writeable = True
    return d


class Diagonal(ArrayFunction, name="DiagonalBackward0", view=True):
    """The diagonal (offset, dim1, dim2) as a view, appended as the last dim. derivatives.yaml
    diagonal: diagonal_backward (grad written into zeros on that diagonal)."""

    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.in_shape, ctx.args = x.shape, (offset, d1, d2)
        return _diag_view(x, offset, d1, d2)

    @staticmethod
    def backward(ctx, g):
        return (DiagonalGrad.apply(g, ctx.in_shape, *ctx.args),) + (None,) * 3


class DiagonalCopy(Diagonal, name="DiagonalBackward0_copy", view=False):
    """torch.diag of a matrix: the diagonal as a copy (torch names the node
    DiagonalBackward0_copy)."""

    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.in_shape, ctx.args = x.shape, (offset, d1, d2)
        return np.diagonal(x, offset, d1, d2).copy()


class DiagonalGrad(ArrayFunction, name="DiagonalBackwardBackward0"):
    """zeros(shape) with g written on the diagonal (offset, dim1, dim2). Its own derivative:
    the diagonal of the grad."""

    @staticmethod
    def forward(ctx, g, shape, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        z = np.zeros(shape, g.dtype)
        _diag_view(z, offset, d1, d2)[...] = g
        return z

    @staticmethod
    def backward(ctx, gg):
        return (Diagonal.apply(gg, *ctx.args),) + (None,) * 4


def _two_dims(nd, dim1, dim2, fn):
    d1, d2 = _wrap_dim(dim1, nd, fn), _wrap_dim(dim2, nd, fn)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@op("diagonal")
def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of ``input`` in the plane (dim1, dim2): offset 0 the main
    diagonal, > 0 above it, < 0 below. Both dims are removed and the diagonal appended as the
    last dim (empty when the offset is past the edge); input's dtype, shared storage.
    Derivative (derivatives.yaml diagonal: diagonal_backward): grad written into zeros on that
    diagonal (DiagonalBackward0).

    Raises IndexError for a dim out of range (input of fewer than 2 dims), RuntimeError for
    equal dims."""
    d1, d2 = _two_dims(input._data.ndim, dim1, dim2, "diagonal")
    return Diagonal.apply(input, int(offset), d1, d2)


class DiagEmbed(ArrayFunction, name="DiagEmbedBackward0"):
    """A tensor whose diagonals (offset, dim1, dim2) hold the last dim of input, zeros
    elsewhere. derivatives.yaml diag_embed: grad.diagonal(offset, dim1, dim2)."""

    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        n = (x.shape[-1] if x.ndim else 1) + abs(offset)
        shape = list(x.shape[:-1])
        for d in sorted((d1, d2)):
            shape.insert(d, n)
        z = np.zeros(shape, x.dtype)
        _diag_view(z, offset, d1, d2)[...] = x
        return z

    @staticmethod
    def backward(ctx, g):
        return (Diagonal.apply(g, *ctx.args),) + (None,) * 3


@op("diag_embed")
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor of one more dim whose diagonals in the plane (dim1, dim2) (dims of the result)
    hold the last dim of ``input`` (offset as :func:`diagonal`), zeros elsewhere; those two dims
    have size n + |offset|. Input's dtype. Derivative (derivatives.yaml diag_embed):
    grad.diagonal(offset, dim1, dim2) (DiagEmbedBackward0).

    Raises IndexError for a dim out of range (any dims for a 0-d input), RuntimeError for equal
    dims."""
    d1, d2 = _two_dims(input._data.ndim + 1, dim1, dim2, "diag_embed")
    return DiagEmbed.apply(input, int(offset), d1, d2)


@op("diag")
def diag(input, diagonal=0):
    """A 1-D input: a square matrix with it on the diagonal ``diagonal`` (DiagEmbedBackward0);
    a 2-D input: that diagonal as a 1-D copy (torch names the node DiagonalBackward0_copy).
    Input's dtype. RuntimeError for other ranks."""
    nd = input._data.ndim
    if nd == 1:
        return DiagEmbed.apply(input, int(diagonal), 0, 1)
    if nd == 2:
        return DiagonalCopy.apply(input, int(diagonal), 0, 1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")


@op("diagflat")
def diagflat(input, offset=0):
    """A square matrix with the flattened ``input`` on its diagonal ``offset`` (above the main
    one for offset > 0, below for < 0), zeros elsewhere: n + |offset| rows for n elements.
    Input's dtype. Recorded as torch's composite: ``input.contiguous().view(-1)``
    (CloneBackward0 for a non-contiguous input, then ViewBackward0) and DiagEmbedBackward0
    (derivatives.yaml diag_embed: the diagonal of grad).

    Raises:
        TypeError: input not a Tensor; ``offset`` not an int (a bool or float included), as
            torch's argument parser."""
    _need_tensor(input, "diagflat", "input", 1)
    if isinstance(offset, bool) or not hasattr(offset, "__index__"):
        raise TypeError(f"diagflat(): argument 'offset' (position 2) must be int, not "
                        f"{type(offset).__name__}")
    flat = input.contiguous().view(-1)
    return DiagEmbed.apply(flat, operator.index(offset), 0, 1)


class Trace(ArrayFunction, name="TraceBackward0"):
    """Sum of the main diagonal of a matrix. derivatives.yaml trace: trace_backward (grad on the
    diagonal of zeros)."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return np.asarray(np.trace(x, dtype=np.int64 if x.dtype.kind in "iu" else None))

    @staticmethod
    def backward(ctx, g):
        n = min(ctx.shape)
        return DiagonalGrad.apply(g.expand(n), ctx.shape, 0, 0, 1)


@op("trace")
def trace(input):
    """Sum of the main diagonal of a matrix: a 0-d tensor of input's dtype (int64 for integer
    inputs). Derivative (derivatives.yaml trace): grad on the diagonal of zeros
    (TraceBackward0). RuntimeError unless input is 2-D; NotImplementedError for bool."""
    nd = input._data.ndim
    if nd != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {nd}")
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return Trace.apply(input)


# ---- movedim, tile, stacking, meshgrid -------------------------------------------------------------
@op("movedim", aliases=("moveaxis",))
def movedim(input, source, destination):
    """``input`` with dims ``source`` (an int or a sequence) moved to ``destination`` (same
    length), the other dims keeping their order: a view (PermuteBackward0, derivatives.yaml
    permute: the inverse permutation; AliasBackward0 for a 0-d input, as torch).

    Raises IndexError for a dim out of range; RuntimeError for sequences of different lengths
    or a repeated dim."""
    nd = input._data.ndim
    src, dst = _int_tuple(source), _int_tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    src = tuple(_wrap_dim(d, nd, "movedim") for d in src)
    dst = tuple(_wrap_dim(d, nd, "movedim") for d in dst)
    for name, ds in (("source", src), ("destination", dst)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(ds)})")
    if nd == 0:
        return Alias.apply(input, (Ellipsis,))    # torch: an alias, not a permute
    perm = [-1] * nd
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    perm = [p if p >= 0 else next(rest) for p in perm]
    return Permute.apply(input, tuple(perm))


def _tile(input, dims):
    reps = tuple(int(d) for d in dims)
    nd = input._data.ndim
    if len(reps) < nd:
        reps = (1,) * (nd - len(reps)) + reps
    return repeat(input, reps)


@op("tile", method=False)
def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along each dim; ``dims`` shorter than input's rank is
    padded with leading 1s, longer adds leading dims (``repeat`` then). Result: a copy of
    input's dtype (RepeatBackward0, derivatives.yaml repeat). TypeError for an int ``dims``
    (the method takes ``x.tile(2, 3)``); RuntimeError for a negative count."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    return _tile(input, dims)


def _tile_method(self, *dims):
    """``x.tile(dims)`` or ``x.tile(d0, d1, ...)``: see :func:`tile`."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    return _tile(self, dims)


op("tile", namespace=False)(_tile_method)


def _tensor_list(tensors, fn):
    """``tensors`` (a list or tuple of Tensors) as a list: TypeError for a single Tensor, any
    other type or a non-Tensor element (as torch's argument parser), RuntimeError when empty."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    tensors = list(tensors)
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type(t).__name__}")
    if not tensors:
        raise RuntimeError(f"{fn} expects a non-empty TensorList")
    return tensors


def _atleast(t, n):
    nd = t._data.ndim
    if nd >= n:
        return t
    if nd == 0:
        return t.reshape((1,) * n)
    if n == 2 or nd == 2:       # (k,) -> (1, k); (a, b) -> (a, b, 1)
        return t.unsqueeze(0) if nd == 1 else t.unsqueeze(-1)
    return t.unsqueeze(0).unsqueeze(-1)      # (k,) -> (1, k, 1)


@op("hstack", method=False)
def hstack(tensors):
    """Concatenate along dim 1 (dim 0 when the first tensor is 0-d or 1-D, 0-d read as 1-D),
    with cat's dtype promotion (CatBackward0). RuntimeError for an empty list, as cat's;
    TypeError unless ``tensors`` is a list or tuple (a single Tensor included), as torch."""
    ts = [_atleast(t, 1) for t in _tensor_list(tensors, "hstack")]
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


@op("vstack", method=False)
def vstack(tensors):
    """Concatenate along dim 0 after making each tensor at least 2-D ((k,) -> (1, k))
    (CatBackward0). RuntimeError for an empty list, as cat's; TypeError
    unless ``tensors`` is a list or tuple (a single Tensor included), as torch."""
    return cat([_atleast(t, 2) for t in _tensor_list(tensors, "vstack")], 0)


@op("row_stack", method=False)
def row_stack(tensors):
    """torch.row_stack: :func:`vstack` under another name (CatBackward0), without a warning, as
    torch 2.13. RuntimeError for an empty list; TypeError unless ``tensors`` is a list or tuple
    of Tensors (a single Tensor included), as torch."""
    return cat([_atleast(t, 2) for t in _tensor_list(tensors, "row_stack")], 0)


@op("dstack", method=False)
def dstack(tensors):
    """Concatenate along dim 2 after making each tensor at least 3-D ((k,) -> (1, k, 1),
    (a, b) -> (a, b, 1)) (CatBackward0). RuntimeError for an empty list, as cat's; TypeError
    unless ``tensors`` is a list or tuple (a single Tensor included), as torch."""
    return cat([_atleast(t, 3) for t in _tensor_list(tensors, "dstack")], 2)


@op("column_stack", method=False)
def column_stack(tensors):
    """Concatenate along dim 1, 0-d and 1-D tensors taken as columns (reshaped to (n, 1))
    (CatBackward0). RuntimeError for an empty list, as cat's; TypeError
    unless ``tensors`` is a list or tuple (a single Tensor included), as torch."""
    ts = _tensor_list(tensors, "column_stack")
    return cat([t.reshape(t._data.size, 1) if t._data.ndim <= 1 else t for t in ts], 1)


@op("meshgrid", method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-d or 1-D tensors (given as arguments or one list): output i has
    every tensor's length as its shape and tensor i's values along dim i (``indexing='ij'``) or
    with the first two dims swapped (``'xy'``). Each output is an expanded view of its input
    (ExpandBackward0; its gradient sums back). Without ``indexing`` torch warns (UserWarning)
    and uses 'ij'.

    Raises RuntimeError for no tensors, a tensor of more than 1 dim, different dtypes, or an
    unknown ``indexing``."""
    from .shape import expand
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=user_stacklevel())
        indexing = "ij"
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    ts = _tensor_list(tensors, "meshgrid")
    for t in ts:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got a tensor of shape {list(t._data.shape)}")
        if t._data.dtype != ts[0]._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    n = len(ts)
    pos = list(range(n))
    if indexing == "xy" and n >= 2:
        pos[0], pos[1] = 1, 0
    shape = [1] * n
    for p, t in zip(pos, ts):
        shape[p] = t._data.size
    outs = []
    for p, t in zip(pos, ts):
        vs = [1] * n
        vs[p] = -1
        outs.append(expand(t.reshape(vs), shape))
    return tuple(outs)


# ---- cumprod, diff, repeat_interleave ----------------------------------------------------------------
class Cumprod(ArrayFunction, name="CumprodBackward0"):
    """Running product along a dim. derivatives.yaml cumprod (cumprod_backward): without zeros,
    the running sum from the far end of grad * result, divided by input; with zeros, the exact
    sum over later outputs of grad times the product of the other factors (computed with each
    factor replaced by 1 in turn), so it stays right and differentiable."""

    @staticmethod
    def forward(ctx, x, axis, np_dtype):
        ctx.axis = axis
        out = np.array(x, dtype=np_dtype or x.dtype) if x.ndim == 0 else \
            np.cumprod(x, axis, dtype=np_dtype)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        if x._data.ndim == 0 or x._data.size == 0:
            return g, None, None
        axis = ctx.axis
        if not (x._data == 0).any():
            return ReverseCumsum.apply(g * out, axis, None) / x, None, None
        return _cumprod_grad_with_zeros(g, x, axis), None, None


def _cumprod_grad_with_zeros(g, x, axis):
    """grad_i = sum over k >= i of g_k * prod_{j <= k, j != i} x_j, along ``axis``."""
    n = x._data.shape[axis]
    dt = g._data.dtype
    last = x._data.ndim - 1
    xt = movedim(x, axis, last)
    gt = movedim(g, axis, last)
    rows = xt.unsqueeze(-2).expand(*xt._data.shape[:-1], n, n)    # rows[..., i, j] = x_j
    others = where(_make(np.eye(n, dtype=bool)), 1.0, rows)       # x_i taken as 1 in row i
    prods = Cumprod.apply(others, last + 1, None)                 # prod_{j <= k, j != i}
    later = _make(np.triu(np.ones((n, n), dt)))                   # k >= i
    gxt = (prods * later * gt.unsqueeze(-2)).sum(-1)
    return movedim(gxt, last, axis)


@op("cumprod")
def cumprod(input, dim, *, dtype=None):
    """Running product along ``dim``: ``out[i] = input[0] * ... * input[i]``. Result: input's
    shape; dtype ``dtype`` when given (a float input is converted first), else int64 for integer
    and bool inputs, else input's. Derivative: see :class:`Cumprod` (derivatives.yaml cumprod;
    CumprodBackward0), exact where the input has zeros. IndexError for a dim out of range."""
    input, npd = _cast_for_dtype(input, dtype)
    axis = _wrap_dim(dim, input._data.ndim, "cumprod") if input._data.ndim else 0
    return Cumprod.apply(input, axis, npd)


@op("diff")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``out[i] = x[i + 1] - x[i]``, applied n
    times; logical xor for bool), after concatenating ``prepend`` and ``append`` (tensors of
    input's rank) along dim. Each step shrinks dim by 1 (to no less than 0). Result dtype: the
    promoted dtype of the concatenated tensors. Recorded as its pieces: SubBackward0 of two
    SliceBackward0 (derivatives.yaml sub, slice); ``n=0`` gives a copy of the input
    (CopyBackwards), without prepend/append (as torch; they are still checked).

    Raises:
        RuntimeError: a 0-d input; n < 0; prepend/append of another rank, or of another size
            than input's in a dim other than ``dim``.
        TypeError: prepend/append not a Tensor.
        IndexError: ``dim`` out of range."""
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    axis = _wrap_dim(dim, nd, "diff")
    parts = []
    for name, t in (("prepend", prepend), ("append", append)):
        if t is not None:
            _need_tensor(t, "diff", name, 4 if name == "prepend" else 5)
            if t._data.ndim != nd:
                raise RuntimeError("diff expects prepend or append to be the same dimension as "
                                   "input")
            for d in range(nd):
                if d != axis and t._data.shape[d] != input._data.shape[d]:
                    raise RuntimeError(
                        f"diff expects the shape of tensor to prepend or append to match that "
                        f"of input except along the differencing dimension; input.size({d}) = "
                        f"{input._data.shape[d]}, but got tensor.size({d}) = {t._data.shape[d]}")
    if n == 0:      # a copy of the input: prepend/append are checked, not used (as torch)
        out = _make(np.empty_like(input._data))
        return copy_(out, input)
    if prepend is not None:
        parts.append(prepend)
    parts.append(input)
    if append is not None:
        parts.append(append)
    a = cat(parts, axis) if len(parts) > 1 else input
    pre = (slice(None),) * axis
    for _ in range(n):
        hi, lo = a[pre + (slice(1, None),)], a[pre + (slice(None, -1),)]
        a = hi.logical_xor(lo) if a._data.dtype == np.bool_ else hi - lo
    return a


@op("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (``dim=None``: of the flattened input) or each slice along ``dim`` repeated
    ``repeats`` times in place: ``[a, b]`` with 2 gives ``[a, a, b, b]``. ``repeats``: an int, or
    an integer tensor (0-d, or 1-D with one count per slice; one count is broadcast).
    ``torch.repeat_interleave(counts)`` alone gives ``arange(len(counts))`` repeated by counts
    (counts' dtype). Result: input's dtype. Recorded as torch does: an int count is an
    unsqueeze/expand/clone/view chain (ViewBackward0); a tensor count an index_select
    (IndexSelectBackward0).

    Raises:
        TypeError: repeats neither an int nor a Tensor.
        RuntimeError: a negative count; counts of more than 1 dim or of the wrong length;
            ``output_size`` other than the result's size.
        NotImplementedError: float counts.
        IndexError: ``dim`` out of range."""
    from .shape import expand
    if repeats is None:
        counts = input._data
        if counts.ndim != 1 or counts.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave: repeats must be 1-d integer tensor")
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        return _make(np.repeat(np.arange(counts.size, dtype=counts.dtype), counts))
    if dim is None:
        input = input.reshape(-1)
        axis = 0
    else:
        axis = _wrap_dim(dim, input._data.ndim, "repeat_interleave")
    if isinstance(repeats, Tensor):
        r = repeats._data
        if r.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if r.dtype.kind not in "iu":
            raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_name(r)}'")
        size = _at1(input._data).shape[axis]
        r = r.reshape(-1)
        if r.size == 1:
            r = np.repeat(r, size)
        elif r.size != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {r.size} and input.size({axis}) = {size}")
        if r.size and r.min() < 0:
            raise RuntimeError("repeats can not be negative")
        index = np.repeat(np.arange(size, dtype=np.int64), r)
        if output_size is not None and output_size != index.size:
            raise RuntimeError("allocated size does not match required size")
        return IndexSelect.apply(input, axis, _make(index))
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be int or Tensor, not "
                        f"{type(repeats).__name__}")
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = input._data.shape
    if output_size is not None and output_size != (shape[axis] if shape else 1) * repeats:
        raise RuntimeError("allocated size does not match required size")
    u = input.unsqueeze(axis + 1)
    big = list(u._data.shape)
    big[axis + 1] = int(repeats)
    new = list(shape)
    new[axis] = new[axis] * int(repeats)
    # (C order, whatever input's layout: the view below needs it)
    return expand(u, big).clone(memory_format=contiguous_format).view(new)


# ---- binary elementwise: atan2, hypot, logaddexp, xlogy, lerp ----------------------------------------
def _binary_tensors(fn, input, other):
    _need_tensor(input, fn, "input", 1)
    _need_tensor(other, fn, "other", 2)


def _check_broadcast(fn, *tensors):
    """torch's RuntimeError for shapes that do not broadcast (checked before the dtype, as
    torch's TensorIterator)."""
    shapes = [t._data.shape for t in tensors if isinstance(t, Tensor)]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise broadcast_error(fn, *tensors) from None


def _float_only(kernel, input, other):
    _check_broadcast(kernel.replace("_cpu", ""), input, other)
    need_float(_dtype.result_type(input, other).np, kernel)


class Atan2(ArrayFunction, name="Atan2Backward0"):
    """atan2(self, other), the angle of (other, self). derivatives.yaml atan2 (atan2_backward):
    self: grad * other / (self^2 + other^2); other: grad * -self / (self^2 + other^2), both 0
    where self = other = 0."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.arctan2(*float_result(a, b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        den = a * a + b * b
        nz = den._data != 0
        recip = _mask(nz, den._data.dtype) / (den + _mask(~nz, den._data.dtype))
        ga = g * b * recip if ctx.needs(0) else None
        gb = g * -a * recip if ctx.needs(1) else None
        return ga, gb


@op("atan2", aliases=("arctan2",))
def atan2(input, other):
    """The angle of the point (other, input) in radians, in [-pi, pi], elementwise with
    broadcasting. Result: the promoted dtype, the default float dtype for integer inputs.
    Derivative (derivatives.yaml atan2): see :class:`Atan2` (Atan2Backward0). TypeError unless
    both are Tensors; RuntimeError for shapes that do not broadcast."""
    _binary_tensors("atan2", input, other)
    return Atan2.apply(input, other)


class Hypot(ArrayFunction, name="HypotBackward0"):
    """sqrt(self^2 + other^2). derivatives.yaml hypot: self: grad * self / result; other:
    grad * other / result."""

    @staticmethod
    def forward(ctx, a, b):
        out = np.hypot(*promote(a, b))
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, r = ctx.saved_tensors
        return (g * a / r if ctx.needs(0) else None), (g * b / r if ctx.needs(1) else None)


@op("hypot")
def hypot(input, other):
    """sqrt(input^2 + other^2) elementwise with broadcasting, without overflow for large values.
    Result: the promoted (floating) dtype. Derivative (derivatives.yaml hypot): grad * input /
    result and grad * other / result (HypotBackward0; nan at (0, 0), as torch).
    TypeError unless both are Tensors; RuntimeError for shapes that do not broadcast (checked
    first, as torch); NotImplementedError when the promoted dtype is not floating."""
    _binary_tensors("hypot", input, other)
    _float_only("hypot_cpu", input, other)
    return Hypot.apply(input, other)


class Logaddexp(ArrayFunction, name="LogaddexpBackward0"):
    """log(exp(self) + exp(other)). derivatives.yaml logaddexp: self: grad / (1 + exp(other -
    self)); other: grad / (1 + exp(self - other))."""
    _np = staticmethod(np.logaddexp)

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a, b)
        return cls._np(*promote(a, b))

    @classmethod
    def backward(cls, ctx, g):
        a, b = ctx.saved_tensors
        ga = g / (cls._pow(b - a) + 1) if ctx.needs(0) else None
        gb = g / (cls._pow(a - b) + 1) if ctx.needs(1) else None
        return ga, gb

    @staticmethod
    def _pow(t):
        return t.exp()


class Logaddexp2(Logaddexp, name="Logaddexp2Backward0"):
    """log2(2^self + 2^other). derivatives.yaml logaddexp2: self: grad / (1 + 2^(other - self));
    other: grad / (1 + 2^(self - other))."""
    _np = staticmethod(np.logaddexp2)

    @staticmethod
    def _pow(t):
        return 2.0 ** t


@op("logaddexp")
def logaddexp(input, other):
    """log(exp(input) + exp(other)) elementwise with broadcasting, computed stably. Result: the
    promoted (floating) dtype. Derivative (derivatives.yaml logaddexp): grad / (1 + exp(other -
    input)) and its mirror (LogaddexpBackward0). TypeError unless both are Tensors;
    RuntimeError for shapes that do not broadcast (checked first, as torch);
    NotImplementedError for a non-floating promoted dtype."""
    _binary_tensors("logaddexp", input, other)
    _float_only("logaddexp_cpu", input, other)
    return Logaddexp.apply(input, other)


@op("logaddexp2")
def logaddexp2(input, other):
    """log2(2^input + 2^other) elementwise with broadcasting, computed stably. Result: the
    promoted (floating) dtype. Derivative (derivatives.yaml logaddexp2): grad / (1 + 2^(other -
    input)) and its mirror (Logaddexp2Backward0). Raises as :func:`logaddexp`."""
    _binary_tensors("logaddexp2", input, other)
    _float_only("logaddexp2_cpu", input, other)
    return Logaddexp2.apply(input, other)


def _xlogy_array(a, b, rdt):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((a == 0) & ~np.isnan(b), 0, a * np.log(b))
    return np.asarray(out).astype(rdt, copy=False)


def _xlogy_dtype(x, y):
    rt = _dtype.result_type(x, y)
    return rt.np if rt.is_floating_point else _dtype.get_default_dtype().np


def _log_other(x, y):
    """d xlogy / d self as torch 2.x has it: log(other), taken as 0 where self == 0 and
    other <= 0 (the self-derivative of xlogy.Tensor in derivatives.yaml)."""
    zero = (x._data == 0) & (y._data <= 0)
    return where(_make(zero), 0.0, y.log()) if zero.any() else y.log()


class Xlogy(ArrayFunction, name="XlogyBackward0"):
    """self * log(other), 0 where self == 0 unless other is nan. derivatives.yaml xlogy.Tensor:
    self: grad * log(other) (0 where self == 0 and other <= 0); other: grad * self / other."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        rdt = _xlogy_dtype(x, y)
        return _xlogy_array(*float_result(x, y), rdt)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        gx = gy = None
        if ctx.needs(0):
            gx = g * _log_other(x, y)
        if ctx.needs(1):
            gy = g * x / y
        return gx, gy


class XlogyNumberSelf(ArrayFunction, name="XlogyBackward1"):
    """number * log(other). derivatives.yaml xlogy.Scalar_Self: other: grad * self / other."""

    @staticmethod
    def forward(ctx, c, y):
        ctx.c = c
        ctx.save_for_backward(y)
        return _xlogy_array(*float_result(c, y), _xlogy_dtype(c, y))

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return None, g * ctx.c / y


class XlogyNumberOther(ArrayFunction, name="XlogyBackward2"):
    """self * log(number). derivatives.yaml xlogy.Scalar_Other: self: grad * log(other), 0
    where self == 0 and other <= 0."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        ctx.save_for_backward(x)
        return _xlogy_array(*float_result(x, c), _xlogy_dtype(x, c))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        c = ctx.c
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.where((x._data == 0) & (c <= 0), 0.0, np.log(float(c)))
        return g * _make(d.astype(g._data.dtype)), None


def _number(v):
    return isinstance(v, (int, float, bool, np.number)) and not isinstance(v, Tensor)


@op("xlogy")
def xlogy(input, other):
    """``input * log(other)`` elementwise with broadcasting, 0 where input is 0 (unless other is
    nan); either argument may be a number (not both). Result: the promoted dtype, the default
    float dtype for integer/bool operands. Derivatives (derivatives.yaml xlogy.Tensor /
    Scalar_Self / Scalar_Other): input: grad * log(other), 0 where input == 0 and other <= 0;
    other: grad * input / other (XlogyBackward0; XlogyBackward1 for a number input; XlogyBackward2 for a number
    other). TypeError for two numbers or a non-number operand; RuntimeError for shapes that do
    not broadcast."""
    return by_operands("xlogy", input, other, Xlogy, XlogyNumberOther, XlogyNumberSelf)


def by_operands(name, input, other, both, number_other, number_self):
    """``input`` and ``other`` through the Function that takes their kinds, as torch's Tensor /
    Scalar overloads: ``both`` for two Tensors, ``number_other`` for (Tensor, number),
    ``number_self`` for (number, Tensor); TypeError, naming op ``name``, for anything else."""
    if isinstance(input, Tensor):
        if isinstance(other, Tensor):
            return both.apply(input, other)
        if _number(other):
            return number_other.apply(input, other)
    elif _number(input) and isinstance(other, Tensor):
        return number_self.apply(input, other)
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({type(input).__name__}, {type(other).__name__}): expected (Tensor, "
                    f"Tensor), (Number, Tensor) or (Tensor, Number)")




def _lerp_value(x, e, w):
    """torch's lerp formula: x + w (e - x) for |w| < 0.5, else e - (e - x)(1 - w)."""
    d = e - x
    if isinstance(w, np.ndarray):
        return np.where(np.abs(w) < 0.5, x + w * d, e - d * (1 - w))
    return x + w * d if abs(w) < 0.5 else e - d * (1 - w)


class LerpScalar(ArrayFunction, name="LerpBackward0"):
    """self + weight * (end - self) for a number weight. derivatives.yaml lerp.Scalar:
    self: grad * (1 - weight); end: grad * weight."""

    @staticmethod
    def forward(ctx, x, e, w):
        ctx.w = w
        return np.asarray(_lerp_value(x, e, w)).astype(np.result_type(x, e), copy=False)

    @staticmethod
    def backward(ctx, g):
        w = ctx.w
        return (g * (1 - w) if ctx.needs(0) else None), (g * w if ctx.needs(1) else None), None


class LerpTensor(ArrayFunction, name="LerpBackward1"):
    """self + weight * (end - self) for a tensor weight. derivatives.yaml lerp.Tensor:
    self: grad * (1 - weight); end: grad * weight; weight: grad * (end - self)."""

    @staticmethod
    def forward(ctx, x, e, w):
        ctx.save_for_backward(x, e, w)
        rdt = np.result_type(x, e)
        return np.asarray(_lerp_value(x, e, w.astype(rdt, copy=False))).astype(rdt, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, e, w = ctx.saved_tensors
        gx = g * (1 - w) if ctx.needs(0) else None
        ge = g * w if ctx.needs(1) else None
        gw = g * (e - x) if ctx.needs(2) else None
        return gx, ge, gw


def _lerp_checks(input, end, weight):
    _need_tensor(input, "lerp", "input", 1)
    if not isinstance(end, Tensor) or not (isinstance(weight, Tensor) or _number(weight)):
        raise TypeError(f"lerp() received an invalid combination of arguments - got (Tensor, "
                        f"{type(end).__name__}, {type(weight).__name__})")
    xd = input._data.dtype
    c = _dtype.cpp_name(xd)
    if end._data.dtype != xd:
        raise RuntimeError(f"expected dtype {c} for `end` but got dtype "
                           f"{_dtype.cpp_name(end._data.dtype)}")
    if isinstance(weight, Tensor) and weight._data.ndim and weight._data.dtype != xd:
        wd = weight._data.dtype.name
        raise RuntimeError(f"expected dtype {c} for `weight` but got dtype "
                           f"{_dtype.cpp_name(wd)}")
    if xd.kind != "f":
        _check_broadcast("lerp", input, end, weight)
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_name(input._data)}'")
    return LerpTensor if isinstance(weight, Tensor) else LerpScalar


@op("lerp")
def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)`` elementwise with broadcasting
    (computed as torch does: from ``end`` when |weight| >= 0.5). ``end``: a Tensor of input's
    (floating) dtype; ``weight``: a number (LerpBackward0) or a Tensor of input's dtype (a 0-d
    one may be of any dtype; LerpBackward1). Result: input's dtype, the broadcast shape.

    Derivatives (derivatives.yaml lerp.Scalar / lerp.Tensor): input: grad * (1 - weight); end:
    grad * weight; weight: grad * (end - input).

    Raises TypeError (end not a Tensor, weight neither number nor Tensor); RuntimeError (end or
    a non-0-d weight of another dtype; then shapes that do not broadcast); NotImplementedError
    for a non-floating input (after those checks, as torch)."""
    F = _lerp_checks(input, end, weight)
    return F.apply(input, end, weight)


# ---- unary: nan_to_num, isinf, isposinf, isneginf, logit, sinc ------------------------------------
class NanToNum(ArrayFunction, name="NanToNumBackward0"):
    """nan, +inf and -inf replaced by numbers. derivatives.yaml nan_to_num: grad *
    isfinite(self). The input is saved, as torch saves self, so changing it in place before
    backward raises."""

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        ctx.save_for_backward(x)
        if x.dtype.kind != "f":
            return x.copy()
        return np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * _mask(np.isfinite(x._data), g._data.dtype), None, None, None


@op("nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """``input`` with nan replaced by ``nan`` and +inf / -inf by ``posinf`` / ``neginf`` (default:
    the dtype's largest / lowest finite value); integer and bool inputs are copied. Result:
    input's shape and dtype. Derivative (derivatives.yaml nan_to_num): grad * isfinite(input)
    (NanToNumBackward0)."""
    return NanToNum.apply(input, 0.0 if nan is None else nan, posinf, neginf)


@op("isinf")
def isinf(input):
    """Elementwise test for +inf or -inf: a bool tensor of input's shape (False for integer
    inputs), no gradient. TypeError for a non-Tensor input, as torch."""
    return _make(np.isinf(_need_tensor(input, "isinf", "input", 1)._data))


@op("isposinf")
def isposinf(input):
    """Elementwise test for +inf: a bool tensor of input's shape, no gradient. TypeError for a
    non-Tensor input, as torch."""
    _need_tensor(input, "isposinf", "input", 1)
    return _make(np.isposinf(input._data) if input._data.dtype.kind == "f"
                 else np.zeros(input._data.shape, bool))


@op("isneginf")
def isneginf(input):
    """Elementwise test for -inf: a bool tensor of input's shape, no gradient. TypeError for a
    non-Tensor input, as torch."""
    _need_tensor(input, "isneginf", "input", 1)
    return _make(np.isneginf(input._data) if input._data.dtype.kind == "f"
                 else np.zeros(input._data.shape, bool))


class Logit(ArrayFunction, name="LogitBackward0"):
    """log(z / (1 - z)), z = input clamped to [eps, 1 - eps] when eps >= 0 is given.
    derivatives.yaml logit (logit_backward): grad / (x (1 - x)), 0 outside [eps, 1 - eps] with
    eps, nan outside [0, 1] without."""

    @staticmethod
    def forward(ctx, x, eps):
        ctx.eps = eps
        ctx.save_for_backward(x)
        z = to_float(x)
        if eps is not None and eps >= 0:
            lo, hi = z.dtype.type(eps), z.dtype.type(1 - eps)
            z = np.where(z < lo, lo, np.where(z > hi, hi, z)).astype(z.dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(np.log(z / (1 - z)))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        eps = ctx.eps
        xd = x._data
        r = g / (x * (1 - x))
        if eps is None or eps < 0:
            out = (xd < 0) | (xd > 1)
            return (where(_make(out), float("nan"), r) if out.any() else r), None
        out = (xd < eps) | (xd > 1 - eps)
        return (where(_make(out), 0.0, r) if out.any() else r), None


@op("logit")
def logit(input, eps=None):
    """log(p / (1 - p)) elementwise, p = input clamped to [eps, 1 - eps] when ``eps`` (>= 0) is
    given; without it values outside [0, 1] give nan. Result: input's shape; floating dtype (the
    default one for integer inputs). Derivative (derivatives.yaml logit): grad / (p (1 - p)),
    0 where input was clamped, nan outside [0, 1] without eps (LogitBackward0)."""
    return Logit.apply(input, eps)


class Sinc(ArrayFunction, name="SincBackward0"):
    """sin(pi x) / (pi x), 1 at 0. derivatives.yaml sinc: grad * (cos(pi x) pi x - sin(pi x)) /
    (pi x^2), 0 at x = 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        xf = to_float(x)
        px = xf * xf.dtype.type(math.pi)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(xf == 0, xf.dtype.type(1), np.sin(px) / px).astype(xf.dtype,
                                                                              copy=False)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        zero = x._data == 0
        px = x * math.pi
        den = px * x + _mask(zero, g._data.dtype)
        r = g * (px * px.cos() - px.sin()) / den
        return where(_make(zero), 0.0, r) if zero.any() else r


@op("sinc")
def sinc(input):
    """The normalized sinc, sin(pi x) / (pi x), 1 at x = 0, elementwise. Result: input's shape;
    floating dtype (the default one for integer inputs). Derivative (derivatives.yaml sinc):
    grad * (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at 0 (SincBackward0)."""
    return Sinc.apply(input)


# ---- in-place forms ---------------------------------------------------------------------------------
_INPLACE = (" Writes into self and returns it; raises as the out-of-place op, and as every "
            "in-place op (RuntimeError): a leaf that requires grad with grad mode on, a result "
            "of a dtype self cannot hold or of another shape, an expanded (read-only) self, an "
            "operand partly overlapping self.")


def _inplace_op(name, namespace=False):
    def deco(fn):
        fn.__name__ = name
        fn.__doc__ = (fn.__doc__ or f"In-place ``{name[:-1]}``.") + _INPLACE
        return op(name, namespace=namespace)(fn)
    return deco


@_inplace_op("scatter_")
def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    """In-place :func:`scatter` (ScatterBackward0 / ScatterBackward1; NotImplemented with the
    legacy ``reduce``)."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter_() missing required argument 'src' (a Tensor) or 'value' (a "
                        "number)")
    axis = _check_scatter("scatter_", self, dim, index, src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        return inplace(self, ScatterLegacyReduce,
                       (axis, index, src, np.add if reduce == "add" else np.multiply),
                       "scatter_")
    F = Scatter if isinstance(src, Tensor) else ScatterValue
    return inplace(self, F, (axis, index, src), "scatter_")


@_inplace_op("scatter_add_")
def scatter_add_(self, dim, index, src):
    """In-place :func:`scatter_add` (ScatterAddBackward0)."""
    _need_tensor(src, "scatter_add_", "src", 3)
    axis = _check_scatter("scatter_add_", self, dim, index, src)
    return inplace(self, ScatterAdd, (axis, index, src), "scatter_add_")


@_inplace_op("scatter_reduce_")
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In-place :func:`scatter_reduce` (ScatterReduceBackward0)."""
    _need_tensor(src, "scatter_reduce_", "src", 3)
    red = _REDUCE_ALIASES.get(reduce, reduce)
    if red not in _REDUCE_UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    axis = _check_scatter("scatter_reduce_", self, dim, index, src)
    return inplace(self, ScatterReduce, (axis, index, src, reduce, bool(include_self)),
                   "scatter_reduce_")


@_inplace_op("index_add_")
def index_add_(self, dim, index, source, *, alpha=1):
    """In-place :func:`index_add` (IndexAddBackward0)."""
    axis, alpha = _index_add_checks(self, dim, index, source, alpha)
    return inplace(self, IndexAddTo, (axis, index, source, alpha), "index_add_")


@_inplace_op("index_copy_")
def index_copy_(self, dim, index, source):
    """In-place :func:`index_copy` (IndexCopyBackward0)."""
    axis = _index_copy_checks(self, dim, index, source)
    return inplace(self, IndexCopy, (axis, index, source), "index_copy_")


@_inplace_op("index_fill_")
def index_fill_(self, dim, index, value):
    """In-place :func:`index_fill` (IndexFillBackward0 / IndexFillBackward1)."""
    axis, F = _fill_args(self, dim, index, value)
    return inplace(self, F, (axis, index, value), "index_fill_")


@_inplace_op("index_put_", namespace=True)
def index_put_(input, indices, values, accumulate=False):
    """In-place :func:`index_put` (IndexPutBackward0)."""
    idx, tensors = _index_put_args("index_put_", input, indices, values)
    F = IndexPutAccumulate if accumulate else IndexPut
    return inplace(input, F, (values, idx, *tensors), "index_put_")


@_inplace_op("masked_scatter_")
def masked_scatter_(self, mask, source):
    """In-place :func:`masked_scatter` (MaskedScatterBackward0); the mask must broadcast to
    self's shape."""
    _masked_scatter_checks("masked_scatter_", self, mask, source, inplace_op=True)
    return inplace(self, MaskedScatter, (mask, source), "masked_scatter_")


@_inplace_op("tril_")
def tril_(self, diagonal=0):
    """In-place :func:`tril` (TrilBackward0)."""
    _check_matrix("tril", self)
    return inplace(self, Tril, (int(diagonal),), "tril_")


@_inplace_op("triu_")
def triu_(self, diagonal=0):
    """In-place :func:`triu` (TriuBackward0)."""
    _check_matrix("triu", self)
    return inplace(self, Triu, (int(diagonal),), "triu_")


@_inplace_op("cumprod_")
def cumprod_(self, dim, *, dtype=None):
    """In-place :func:`cumprod` (CumprodBackward0)."""
    axis = _wrap_dim(dim, self._data.ndim, "cumprod_") if self._data.ndim else 0
    npd = None if dtype is None else _dtype.to_dtype(dtype).np
    return inplace(self, Cumprod, (axis, npd), "cumprod_")


def _atan2_(self, other):
    """In-place :func:`atan2` (Atan2Backward0)."""
    _binary_tensors("atan2_", self, other)
    return inplace(self, Atan2, (other,), "atan2_")


atan2_ = _inplace_op("atan2_")(_atan2_)
op("arctan2_", namespace=False)(atan2_)


@_inplace_op("hypot_")
def hypot_(self, other):
    """In-place :func:`hypot` (HypotBackward0)."""
    _binary_tensors("hypot_", self, other)
    _float_only("hypot_cpu", self, other)
    return inplace(self, Hypot, (other,), "hypot_")


@_inplace_op("xlogy_", namespace=True)
def xlogy_(input, other):
    """In-place :func:`xlogy` (XlogyBackward0, or XlogyBackward2 for a number other)."""
    _need_tensor(input, "xlogy_", "input", 1)
    if isinstance(other, Tensor):
        return inplace(input, Xlogy, (other,), "xlogy_")
    if not _number(other):
        raise TypeError(f"xlogy_() received an invalid combination of arguments - got (Tensor, "
                        f"{type(other).__name__})")
    return inplace(input, XlogyNumberOther, (other,), "xlogy_")


@_inplace_op("lerp_")
def lerp_(self, end, weight):
    """In-place :func:`lerp` (LerpBackward0 / LerpBackward1)."""
    F = _lerp_checks(self, end, weight)
    return inplace(self, F, (end, weight), "lerp_")


@_inplace_op("nan_to_num_", namespace=True)
def nan_to_num_(input, nan=0.0, posinf=None, neginf=None):
    """In-place :func:`nan_to_num` (NanToNumBackward0)."""
    return inplace(input, NanToNum, (0.0 if nan is None else nan, posinf, neginf), "nan_to_num_")


@_inplace_op("logit_", namespace=True)
def logit_(input, eps=None):
    """In-place :func:`logit` (LogitBackward0)."""
    return inplace(input, Logit, (eps,), "logit_")


@_inplace_op("sinc_", namespace=True)
def sinc_(input):
    """In-place :func:`sinc` (SincBackward0)."""
    return inplace(input, Sinc, (), "sinc_")
