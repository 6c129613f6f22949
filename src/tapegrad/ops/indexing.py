"""``tensor[index]``: basic indexing (ints, slices, None, Ellipsis) gives a view; advanced indexing
(boolean masks, integer tensors/lists) gives a copy, as in torch.

Derivatives (derivatives.yaml select/slice/index): the gradient is scattered into zeros of the
input's shape at the indexed positions, *accumulating* where an integer index repeats.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np

from .._memory_format import _c_strides, _empty_view, sorted_dims, strides_of
from ..autograd.function import ArrayFunction
from ..autograd.graph import user_stacklevel
from ._util import Tensor
from .shape import Unsqueeze

_BASIC = (int, slice, type(None), type(Ellipsis), np.integer)


def _index_error(msg):
    return IndexError(msg)


def _is_byte_mask(item):
    a = item._data if isinstance(item, Tensor) else item if isinstance(item, np.ndarray) else None
    return a is not None and a.dtype == np.uint8 and a.ndim > 0


def has_byte_mask(index):
    """Whether ``index`` holds a uint8 tensor (or array) of at least one dim: a mask, as torch
    reads it (deprecated there)."""
    items = index if isinstance(index, tuple) else (index,)
    return any(_is_byte_mask(i) for i in items)


def warn_byte_mask():
    warnings.warn("indexing with dtype tapegrad.uint8 is now deprecated, please use a dtype "
                  "tapegrad.bool instead.", UserWarning, stacklevel=user_stacklevel())


def convert_index(index, shape, warn=True):
    """Turn a user index into a NumPy index; returns (np_index, basic, steps): for a basic index,
    the views torch records for it (:func:`_basic_steps`), else None. A uint8 tensor or array
    is a mask, as torch reads it, with torch's deprecation UserWarning (when ``warn``) for one
    of at least one dim. An advanced index is NumPy's (:func:`ints_first_index` lays it out as
    torch's), its integer arrays not yet checked for range (:func:`check_index_range`)."""
    single_slice = isinstance(index, slice)
    if not isinstance(index, tuple):
        index = (index,)
    if warn and has_byte_mask(index):
        warn_byte_mask()
    out = []
    basic = True
    for item in index:
        if isinstance(item, Tensor):
            arr = item._data
            if arr.dtype == np.uint8:
                arr = arr.astype(np.bool_)
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors "
                                 f"(got {item.dtype})")
            if arr.ndim == 0 and arr.dtype.kind in "iu":
                out.append(int(arr))
                continue
            out.append(arr)
            basic = False
        elif isinstance(item, (list, np.ndarray)):
            arr = np.asarray(item)
            if isinstance(item, np.ndarray) and arr.dtype == np.uint8:
                arr = arr.astype(np.bool_)
            if arr.size == 0 and arr.dtype != np.bool_:
                arr = arr.astype(np.int64)   # [] is an empty integer index, as torch reads it
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if arr.dtype == object:
                raise IndexError("an index list must hold only integers or booleans")
            out.append(arr if arr.size or arr.dtype == np.bool_ else arr.astype(np.int64))
            basic = False
        elif isinstance(item, (bool, np.bool_)):
            out.append(bool(item))
            basic = False
        elif isinstance(item, _BASIC):
            if isinstance(item, slice) and item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero (negative steps are not "
                                 "supported by torch tensors; use tensor.flip(dim))")
            out.append(item)
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(item).__name__})")
    _check_bounds(out, shape)
    if basic and Ellipsis not in out:
        # a trailing Ellipsis makes NumPy return a 0-d view instead of a scalar copy
        out.append(Ellipsis)
    idx = tuple(out)
    if not basic:
        return idx, False, None
    return idx, True, _basic_steps(idx, shape, single_slice)


def ints_first_index(idx, shape):
    """NumPy index ``idx`` (with arrays) read as torch reads it: torch selects its ints first and
    then indexes the rest with the arrays, where NumPy counts an int among the arrays, so that
    ``x[1, :, [0, 1]]`` of a (2, 3, 4) x is (3, 2) in torch and (2, 3) in NumPy (the int and the
    array, apart, put their dim first). Where that differs (an int apart from the arrays), the
    index becomes one integer array per dim, laid out as torch's result."""
    kinds = ["a" if isinstance(i, (np.ndarray, bool)) else
             "i" if isinstance(i, (int, np.integer)) else "b" for i in idx]
    group = [k for k, c in enumerate(kinds) if c != "b"]
    if "i" not in kinds or group[-1] - group[0] + 1 == len(group):
        return idx      # no int, or NumPy's advanced items are together: the same result
    first, then = [], []
    for item, c in zip(idx, kinds):
        if c == "i":
            first.append(item)
        elif c == "a":
            # (the dims it reads: a mask's, one for integers, none for a bool)
            n = 0 if isinstance(item, bool) else item.ndim if item.dtype == np.bool_ else 1
            first.extend([slice(None)] * n)
            then.append(item)
        else:
            first.append(item)
            then.append(item if item is Ellipsis else slice(None))
    positions = np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)
    return np.unravel_index(positions[tuple(first)][tuple(then)], shape)


def index_tensors(index):
    """The Tensors of a user index that index by their values (all but 0-d integer ones, which
    act as ints). The nodes save them, so that one changed in place before backward raises, as
    torch."""
    items = index if isinstance(index, tuple) else (index,)
    return tuple(i for i in items if isinstance(i, Tensor) and
                 (i._data.ndim or i._data.dtype.kind == "b"))


# the trailing index tensors of an advanced-index node, however many: no edges
INDEX_TENSORS = range(2, sys.maxsize)


def _basic_steps(idx, shape, single_slice):
    """The views torch records for basic index ``idx`` (NumPy's, on ``shape``), in its order: one
    per int (SelectBackward0), per None (UnsqueezeBackward0, with torch's stride for the new dim,
    as ``unsqueeze``) and per slice (SliceBackward0), each as (op, its argument on the previous
    step's result: a NumPy index, or unsqueeze's dim). Inside a tuple torch skips a slice that
    covers its whole dim, and records an alias (AliasBackward0) when nothing is left; a lone
    slice is always recorded."""
    if single_slice:
        return [(BasicIndex, idx)]
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
    steps = []
    dim = 0     # the input's dim the item reads
    at = 0      # the dim of the result so far that it acts on
    for item in idx:
        if item is Ellipsis:
            dim += len(shape) - consumed
            at += len(shape) - consumed
        elif item is None:
            steps.append((Unsqueeze, at))
            at += 1
        elif isinstance(item, slice):
            # torch skips only a slice written from the start (start None or 0), step 1, to the end
            _, stop, step = item.indices(shape[dim])
            if not (item.start in (None, 0) and stop == shape[dim] and step == 1):
                steps.append((BasicIndex, (slice(None),) * at + (item, Ellipsis)))
            dim += 1
            at += 1
        else:
            steps.append((Select, (slice(None),) * at + (item, Ellipsis)))
            dim += 1
    return steps or [(Alias, idx)]


def _check_bounds(items, shape):
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis and not isinstance(i, bool)
                   and not (isinstance(i, np.ndarray) and i.dtype == np.bool_))
    consumed += sum(i.ndim for i in items if isinstance(i, np.ndarray) and i.dtype == np.bool_)
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    # walk dims to name the dim an out-of-range integer index hits
    n_ell = sum(1 for i in items if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += len(shape) - consumed
            continue
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            for k in range(item.ndim):
                if dim + k < len(shape) and item.shape[k] != shape[dim + k]:
                    raise IndexError(
                        f"The shape of the mask {list(item.shape)} at index {k} does not match the "
                        f"shape of the indexed tensor {list(shape)} at index {dim + k}")
            dim += item.ndim
            continue
        size = shape[dim]
        # (an integer array's range is checked later, by check_index_range)
        if isinstance(item, (int, np.integer)) and not -size <= item < size:
            raise IndexError(f"index {item} is out of bounds for dimension {dim} with size {size}")
        dim += 1


def _walk(idx, shape):
    """(item, the input's dim it reads) for each integer array of NumPy index ``idx``."""
    consumed = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == np.bool_ else
                   0 if i is None or i is Ellipsis or isinstance(i, bool) else 1 for i in idx)
    dim = 0
    for item in idx:
        if item is Ellipsis:
            dim += len(shape) - consumed
        elif isinstance(item, np.ndarray):
            if item.dtype != np.bool_:
                yield item, dim
            dim += item.ndim if item.dtype == np.bool_ else 1
        elif item is not None and not isinstance(item, bool):
            dim += 1


def in_range(idx, shape):
    """``idx`` with each integer array's values replaced by zeros (where its dim has elements):
    an index that selects the same shape, for the checks torch makes before it reads the
    values."""
    bad = {id(a) for a, d in _walk(idx, shape) if shape[d]}
    return tuple(np.zeros(i.shape, np.intp) if id(i) in bad else i for i in idx)


def check_index_range(idx, shape, op):
    """IndexError for an integer array of NumPy index ``idx`` (on ``shape``) with a value out of
    range, as torch's index kernels raise it: last, after every other check of the op, and only
    when the op reads or writes an element (``x[:, [5]]`` of a (0, 3) x is an empty result); an
    index into a dim of size 0 always. Returns the index to use: ``idx``, or one in range
    (:func:`in_range`) where nothing is read."""
    safe = None
    for item, dim in _walk(idx, shape):
        size = shape[dim]
        if not item.size:
            continue
        if not size:
            raise IndexError(f"index {item.flat[0]} is out of bounds for dimension {dim} with size "
                             f"0 ({op})")
        out = (item >= size) | (item < -size)
        if out.any():
            if safe is None:
                safe = in_range(idx, shape)
                if not np.broadcast_to(np.empty((), bool), shape)[safe].size:
                    return safe
            bad = item.flat[int(np.flatnonzero(out)[0])]
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size} "
                             f"({op})")
    return idx


def _index_operands(src, idx):
    """The operands torch's index kernel iterates (TensorAdvancedIndexing.cpp's AdvancedIndex:
    the source restrided, each index reshaped) as (shape, strides) in elements, result first
    (its shape). ``idx``: arrays, full slices, an Ellipsis (NumPy's, as AdvancedIndex reads)."""
    shape = list(src.shape)
    strides = list(strides_of(src))
    items = []
    for item in idx:
        if item is Ellipsis:
            n = len(shape) - sum(i.ndim if i.dtype == np.bool_ else 1 for i in idx
                                 if isinstance(i, np.ndarray)) - sum(
                1 for i in idx if isinstance(i, slice))
            items.extend([None] * n)
        elif isinstance(item, np.ndarray) and item.dtype == np.bool_:
            # a mask is its nonzero() columns: (N, k) in C order, each of stride k
            n = int(np.count_nonzero(item))
            items.extend([((n,), (item.ndim,))] * item.ndim)
        elif isinstance(item, np.ndarray):
            items.append((item.shape, tuple(s // item.itemsize for s in item.strides)))
        else:
            items.append(None)
    items.extend([None] * (len(shape) - len(items)))
    at = [d for d, i in enumerate(items) if i is not None]
    if at[-1] - at[0] + 1 != len(at):
        # apart: the indexed dims go first (transposeToFront)
        order = at + [d for d, i in enumerate(items) if i is None]
        shape, strides = [shape[d] for d in order], [strides[d] for d in order]
        items = [items[d] for d in order]
        at = list(range(len(at)))
    bshape = np.broadcast_shapes(*(items[d][0] for d in at))
    before, after = at[0], len(shape) - at[-1] - 1
    out = shape[:before] + list(bshape) + shape[at[-1] + 1:]
    ops = [(out, strides[:before] + [0] * len(bshape) + strides[at[-1] + 1:])]
    for d in at:
        # broadcast (expand_outplace), then reshaped to the result's rank (reshape_indexer),
        # whose strides for the new size-1 dims order the dims where the result has size 1
        ishape, ist = items[d]
        pad = len(bshape) - len(ishape)
        ist = [0] * pad + [0 if n == 1 and b != 1 else s
                           for n, b, s in zip(ishape, bshape[pad:], ist)]
        new = [1] * before + list(bshape) + [1] * after
        ops.append((new, _view_strides(bshape, ist, new)))
    return out, ops




def _contiguous(shape, strides):
    """torch's is_contiguous for (shape, strides): C order, size-1 dims aside; any geometry of no
    elements."""
    if 0 in shape:
        return True
    step = 1
    for n, st in zip(shape[::-1], strides[::-1]):
        if n != 1:
            if st != step:
                return False
            step *= n
    return True


def _dense(shape, strides):
    """torch's is_non_overlapping_and_dense for (shape, strides)."""
    if 0 in shape:
        return True
    step = 1
    for st, n in sorted((st, n) for st, n in zip(strides, shape) if n != 1):
        if st != step:
            return False
        step *= n
    return True


def _view_strides(shape, strides, new):
    """The strides torch's reshape gives (shape, strides) reshaped to ``new`` (c10's
    computeStride, or C order where that finds no view and reshape copies)."""
    shape, strides, new = list(shape), list(strides), list(new)
    if not shape:
        return [1] * len(new)
    if 0 in shape:
        return strides if shape == new else list(_c_strides(new))
    out = [0] * len(new)
    view_d, base, numel, view_numel = len(new) - 1, strides[-1], 1, 1
    for d in range(len(shape) - 1, -1, -1):
        numel *= shape[d]
        if d == 0 or shape[d - 1] != 1 and strides[d - 1] != numel * base:
            while view_d >= 0 and (view_numel < numel or new[view_d] == 1):
                out[view_d] = view_numel * base
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != numel:
                return list(_c_strides(new))
            if d > 0:
                base, numel, view_numel = strides[d - 1], 1, 1
    return out if view_d == -1 else list(_c_strides(new))


def torch_index_strides(src, idx):
    """The strides (in elements) torch's index gives ``src[idx]``: its TensorIterator's output
    layout (TensorIterator.cpp reorder_dimensions over the operands of
    :func:`_index_operands`, then allocate_or_resize_outputs): C order when the dims keep their
    order, else dense in the order the operands' strides sort them (a stride of 0 says nothing,
    equal strides put the smaller dim first)."""
    out, ops = _index_operands(src, idx)
    if all(shape == out for shape, _ in ops):
        # (fast_set_up: operands of one shape, all contiguous, or all dense with one layout)
        if all(_contiguous(out, st) for _, st in ops):
            return _c_strides(out)
        if all(_dense(out, st) and st == ops[0][1] for _, st in ops):
            return tuple(ops[0][1])
    # (compute_strides: a dim an operand broadcasts has stride 0)
    ops = [[0 if n == 1 and m != 1 else st for n, m, st in zip(shape, out, sts)]
           for shape, sts in ops]
    ndim = len(out)

    def should_swap(d0, d1):
        for st in ops:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if out[d0] > out[d1]:
                return 1
        return 0

    perm = sorted_dims(ndim, should_swap)
    if perm == list(range(ndim - 1, -1, -1)):
        return _c_strides(out)
    strides, step = [0] * ndim, 1
    for d in perm:
        strides[d] = step
        step *= out[d]
    return tuple(strides)


def _in_torch_layout(src, idx, r):
    """``r = src[idx]`` (NumPy's) laid out as torch's index lays it out
    (:func:`torch_index_strides`), so that stride() and is_contiguous() agree: NumPy puts the
    index's dims outermost (``x[:, [0, 2]]`` of a (3, 4, 5) x: (5, 15, 1), torch's (10, 5, 1)).
    An index holding ints, Nones or bools (an index_put's, which torch applies as views first)
    keeps NumPy's."""
    if not all(isinstance(i, np.ndarray) or i is Ellipsis or i == slice(None) for i in idx):
        return r
    strides = torch_index_strides(src, idx)
    if strides == strides_of(r):
        return r
    if r.size:
        isz = r.itemsize
        out = np.ndarray(r.shape, r.dtype, buffer=np.empty(r.size, r.dtype),
                         strides=[st * isz for st in strides])
    else:
        out = _empty_view(r.shape, strides, r.dtype)
    out[...] = r
    return out


class BasicIndex(ArrayFunction, name="SliceBackward0", view=True):
    """x[ints, slices, None, ...]: a view. Derivative: grad written into zeros at the slice."""

    @staticmethod
    def forward(ctx, x, idx):
        ctx.in_shape = x.shape
        ctx.idx = idx
        return x[idx]

    @staticmethod
    def backward(ctx, g):
        return SliceGrad.apply(g, ctx.in_shape, ctx.idx), None


class Select(BasicIndex, name="SelectBackward0", view=True):
    @staticmethod
    def backward(ctx, g):
        return SelectGrad.apply(g, ctx.in_shape, ctx.idx), None


class Alias(BasicIndex, name="AliasBackward0", view=True):
    """x[...] (or only full slices): derivatives.yaml alias: the gradient itself."""

    @staticmethod
    def backward(ctx, g):
        return g, None


class AdvancedIndex(ArrayFunction, name="IndexBackward0", nondiff=INDEX_TENSORS):
    """x[mask] / x[int_tensor]: a copy. ``idx``: the NumPy index; ``tensors``: the index Tensors
    in it (:func:`index_tensors`). Derivative (derivatives.yaml index): zeros with grad
    accumulated at the indices (repeated indices add up)."""

    @staticmethod
    def forward(ctx, x, idx, *tensors):
        ctx.in_shape = x.shape
        # saved: freed by backward, and the tensors version-checked, as torch's indices
        ctx.save_for_backward(idx, *tensors)
        return _in_torch_layout(x, idx, x[idx])

    @staticmethod
    def backward(ctx, g):
        idx, *tensors = ctx.saved_tensors
        return (IndexPutAccumulate.apply(g, ctx.in_shape, idx, *tensors), None) + \
            (None,) * len(tensors)


class IndexScatter(ArrayFunction, name="SliceScatterBackward0"):
    """zeros(shape) with ``g`` written at a basic index. Derivative: the same index of the grad."""

    @staticmethod
    def forward(ctx, g, shape, idx):
        ctx.idx = idx
        z = np.zeros(shape, g.dtype)
        z[idx] = g
        return z

    @staticmethod
    def backward(ctx, gg):
        return gg[ctx.idx], None, None


class SliceGrad(IndexScatter, name="SliceBackwardBackward0"):
    """The gradient of a slice (derivatives.yaml slice: slice_backward), as torch names its node
    under create_graph."""


class SelectGrad(IndexScatter, name="SelectBackwardBackward0"):
    """The gradient of a select (derivatives.yaml select: select_backward), as torch names its
    node under create_graph."""


class IndexPutAccumulate(ArrayFunction, name="IndexPutBackward0", nondiff=range(3, sys.maxsize)):
    """zeros(shape) with ``g`` added at an advanced index ``idx`` (np.add.at: repeats
    accumulate); ``tensors`` as :class:`AdvancedIndex`'s. Derivative: the same index of the
    grad."""

    @staticmethod
    def forward(ctx, g, shape, idx, *tensors):
        ctx.save_for_backward(idx, *tensors)
        z = np.zeros(shape, g.dtype)
        np.add.at(z, idx, g)
        return z

    @staticmethod
    def backward(ctx, gg):
        idx, *tensors = ctx.saved_tensors
        return (AdvancedIndex.apply(gg, idx, *tensors), None, None) + (None,) * len(tensors)


def getitem(self, index):
    """``tensor[index]`` as in torch: ints, slices, None, Ellipsis, bool masks, integer tensors and
    lists. IndexError (naming the dim and size) for an out-of-range index."""
    idx, basic, steps = convert_index(index, self._data.shape)
    out = self
    if not basic:
        # torch's order: the ints, slices, Nones (and a bool as a new dim) as views first, then
        # the arrays on the result (x[1:, [0, 2]]: IndexBackward0 over SliceBackward0)
        steps, idx = _views_first(idx, self._data.shape)
    # one view per step, as torch records them (x[1:, ::2]: two SliceBackward0 nodes)
    for view, arg in steps:
        out = view.apply(out, arg)
    if basic:
        return out
    idx = check_index_range(idx, out._data.shape, "index")
    return AdvancedIndex.apply(out, idx, *index_tensors(index))


def _views_first(idx, shape):
    """An advanced NumPy index split as torch applies it: the views of its basic items
    (:func:`_basic_steps`; none when there is nothing but arrays and full slices), and the index
    of the arrays on their result (an int gone, a slice or None a full slice, a bool a
    one-element mask on the new dim it made)."""
    first, then = [], []
    for item in idx:
        if isinstance(item, bool) or isinstance(item, np.ndarray) and item.ndim == 0:
            first.append(None)
            then.append(np.array([bool(item)]))
        elif isinstance(item, np.ndarray):
            first.extend([slice(None)] * (item.ndim if item.dtype == np.bool_ else 1))
            then.append(item)
        elif isinstance(item, (int, np.integer)):
            first.append(item)
        else:
            first.append(item)
            then.append(item if item is Ellipsis else slice(None))
    steps = _basic_steps(tuple(first), shape, False)
    if steps[0][0] is Alias:
        return [], idx
    return steps, tuple(then)


Tensor.__getitem__ = getitem
