"""Index-driven selection: gather and index_select.

Derivatives (derivatives.yaml): gather: grad scatter-added into zeros at the index
(gather_backward; repeated indices add up); index_select: grad index-added into zeros along the
dim (index_select_backward). Each scatter is itself a primitive whose derivative is the
selection again, so double backward works.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ..autograd.function import ArrayFunction
from ._registry import op


def _coords(idx, axis):
    """Full coordinates for np.add.at / fancy reads: ``idx`` along ``axis``, the position
    elsewhere."""
    co = list(np.indices(idx.shape, sparse=True))
    co[axis] = idx
    return tuple(co)


class Gather(ArrayFunction, name="GatherBackward0", nondiff=(2,)):
    """out[i][j] = x[index[i][j]][j] (for dim 0; likewise for other dims). derivatives.yaml
    gather_backward: zeros.scatter_add(dim, index, grad). ``idx``: the index Tensor. x and the
    index are saved, as torch saves self and index, so changing either in place before
    backward raises."""

    @staticmethod
    def forward(ctx, x, axis, idx):
        ctx.in_shape, ctx.axis = x.shape, axis
        # saved: version-checked and freed by backward, as torch's self and index
        ctx.save_for_backward(idx, x)
        if x.ndim == 0:
            return x.reshape(idx.shape).copy()
        return x[_coords(idx, axis)]

    @staticmethod
    def backward(ctx, g):
        idx, _ = ctx.saved_tensors
        return ScatterAdd.apply(g, ctx.in_shape, ctx.axis, idx), None, None


class ScatterAdd(ArrayFunction, name="ScatterAddBackward0", nondiff=(3,)):
    """zeros(shape) with ``g`` added at ``idx`` along ``axis``. Derivative: gather at idx."""

    @staticmethod
    def forward(ctx, g, shape, axis, idx):
        ctx.axis = axis
        ctx.save_for_backward(idx)
        z = np.zeros(shape, g.dtype)
        if not shape:
            z += g.sum()
            return z
        np.add.at(z, _coords(idx, axis), g)
        return z

    @staticmethod
    def backward(ctx, gg):
        idx, = ctx.saved_tensors
        return Gather.apply(gg, ctx.axis, idx), None, None, None


def _index_array(index, op_name, allowed=("int64",), msg=None):
    if not isinstance(index, Tensor):
        raise TypeError(f"{op_name}(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    idx = index._data
    if idx.dtype.name not in allowed:
        raise RuntimeError(msg or f"{op_name}(): Expected dtype int64 for index")
    return idx.astype(np.int64, copy=False)


@op("gather")
def gather(input, dim, index, *, sparse_grad=False):
    """Values of ``input`` at ``index`` along ``dim``: ``out[i][j] = input[index[i][j]][j]`` for
    dim 0 (likewise for other dims).

    ``index`` is an int64 Tensor with the input's number of dims (0-d and 1-D count as one) and
    no larger size than input in the dims other than ``dim``. Result: ``index``'s shape,
    ``input``'s dtype, a new tensor (not a view). ``sparse_grad`` is accepted and ignored: the
    gradient is always dense (torch makes a sparse one when it is True).

    Derivative (derivatives.yaml gather: gather_backward): zeros.scatter_add(dim, index, grad),
    so repeated indices add up (GatherBackward0); it is differentiable again.

    Raises:
        TypeError: ``index`` is not a Tensor (a list, a NumPy array), as torch.
        IndexError: ``dim`` out of range [-ndim, ndim - 1] (ndim at least 1), as torch.
        RuntimeError: ``index`` not int64; a rank that differs from input's; a size larger
            than input's in a dim other than ``dim``; an index < 0 or >= input.shape[dim]
            (torch: RuntimeError for each).
    Divergences from torch: an int32 index raises RuntimeError (torch 2.x accepts it); a 0-d
    input with an index of more than one element raises RuntimeError (torch repeats the value);
    a 1-D input with a 0-d index raises IndexError (torch returns a 0-d tensor)."""
    idx = _index_array(index, "gather")
    x = input._data
    nd = max(x.ndim, 1)
    axis = _wrap_dim(dim, nd, "gather")
    if max(idx.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if x.ndim:
        for d in range(x.ndim):
            if d != axis and idx.shape[d] > x.shape[d]:
                raise RuntimeError(f"Size does not match at dimension {d} expected index "
                                   f"{list(idx.shape)} to be no larger than self "
                                   f"{list(x.shape)} apart from dimension {axis}")
    size = x.shape[axis] if x.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise RuntimeError(f"index {bad} is out of bounds for dimension {axis} with size {size}")
    return Gather.apply(input, axis, index)


def _flat_index(index):
    """index_select's index (a 0-d or 1-D int64/int32 array) as a 1-D int64 array."""
    return index.reshape(-1).astype(np.int64, copy=False)


class IndexSelect(ArrayFunction, name="IndexSelectBackward0", nondiff=(2,)):
    """The slices ``index`` (the index Tensor, 0-d or 1-D) of ``x`` along ``axis``.
    derivatives.yaml index_select_backward: zeros.index_add(dim, index, grad)."""

    @staticmethod
    def forward(ctx, x, axis, index):
        ctx.in_shape, ctx.axis = x.shape, axis
        # saved: version-checked and freed by backward, as torch's index
        ctx.save_for_backward(index)
        idx = _flat_index(index)
        if x.ndim == 0:
            return x.reshape(idx.shape).copy()
        return np.take(x, idx, axis=axis)

    @staticmethod
    def backward(ctx, g):
        idx, = ctx.saved_tensors
        return IndexAdd.apply(g, ctx.in_shape, ctx.axis, idx), None, None


class IndexAdd(ArrayFunction, name="IndexAddBackward0", nondiff=(3,)):
    """zeros(shape) with the slices of ``g`` added at ``idx`` along ``axis``. Derivative:
    index_select at idx."""

    @staticmethod
    def forward(ctx, g, shape, axis, idx):
        ctx.axis = axis
        ctx.save_for_backward(idx)
        z = np.zeros(shape, g.dtype)
        if not shape:
            z += g.sum()
            return z
        zt = np.moveaxis(z, axis, 0)
        np.add.at(zt, _flat_index(idx), np.moveaxis(g, axis, 0))
        return z

    @staticmethod
    def backward(ctx, gg):
        idx, = ctx.saved_tensors
        return IndexSelect.apply(gg, ctx.axis, idx), None, None, None


@op("index_select")
def index_select(input, dim, index):
    """The slices ``index`` (a 1-D or 0-D int64/int32 tensor) of ``input`` along ``dim``, as a
    copy (not a view).

    Result: ``input``'s shape with dim ``dim`` replaced by ``index.numel()``; ``input``'s dtype.
    Derivative (derivatives.yaml index_select: index_select_backward): zeros.index_add(dim,
    index, grad), so repeated indices add up (IndexSelectBackward0); differentiable again.

    Raises:
        TypeError: ``index`` is not a Tensor (a list, a NumPy array), as torch.
        IndexError: ``dim`` out of range [-ndim, ndim - 1] (ndim at least 1); an index of more
            than one dim ("Index is supposed to be a vector"); an index < 0 or >= the dim's size
            ("index out of range in self"), as torch, except along dim 1:
        RuntimeError: an index out of range along dim 1 of an input of at least 2 dims (torch's
            kernel for that dim checks it so); ``index`` neither int64 nor int32, as torch.
    A 0-d input takes a one-element index only (RuntimeError for more, as torch). Divergence
    from torch: that result has shape (1,) here; torch returns a 0-d tensor."""
    idx = _index_array(index, "index_select", ("int64", "int32"),
                       "index_select(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    idx = _flat_index(idx)
    x = input._data
    axis = _wrap_dim(dim, max(x.ndim, 1), "index_select")
    size = x.shape[axis] if x.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        if axis == 1 and x.ndim > 1:
            bad = idx[(idx < 0) | (idx >= size)][0]
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size} "
                               f"(index_select along dim 1: index {bad} is out of range for its "
                               f"size {size})")
        raise IndexError("index out of range in self")
    return IndexSelect.apply(input, axis, index)
