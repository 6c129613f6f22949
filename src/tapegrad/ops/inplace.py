"""In-place ops (``add_``, ``mul_``, ``x[i] = v``, ...), version counters and history rebasing.

An in-place op reuses the out-of-place op's Function (one derivative per op): it computes the
result out of place, writes it into the tensor's storage, bumps the storage's version counter
(recording the user's source line), and, when recording, *rebases* the tensor's history so that its
``grad_fn`` is the new node (``AddBackward0`` after ``add_``). If that node saved the old value of
the tensor, a copy of the old value is kept instead (torch's ``original_self``), since the storage
now holds the new one.

Writing through a view of a tensor that is recorded rebases the *base* onto a ``CopySlices`` node
(gradient: the view's region comes from the in-place op's node, the rest passes through) and the
view onto a fresh view of the new base, as torch does.
"""
from __future__ import annotations

import sys

import numpy as np

from .. import _dtype
from .._dtype import overflow_error, overflows, wrapped
from .._memory_format import contiguous_format, dense_layout
from ..autograd.engine import call_node
from ..autograd.function import (NULL_CTX, ArrayFunction, forward_error, freed_error,
                                  refresh_if_stale, refresh_view)
from ..autograd import function as _function_module
from ..autograd.function import short_node_name as _short
from ..autograd.grad_mode import state as _state
from ..autograd.graph import hooked_threads as _hooked_threads
from ..autograd.graph import (FREED, AccumulateGrad, Node, bump, new_version_counter,
                              saved_entries, set_saved_entry, version_counter)
from . import pointwise as P
from ._registry import op
from ._util import Tensor, _make, _zeros_of, broadcast_error, check_operand, dims, promote
from .indexing import (AdvancedIndex, check_index_range, convert_index, has_byte_mask,
                       in_range, index_tensors, ints_first_index, warn_byte_mask)
from .linalg import Addmm, AddmmScaled, check_addmm
from .reduction import Cumsum


def _name(x):
    return f"a tensor of shape {list(x._data.shape)} and dtype {x.dtype}"


def check_writable(x, opname, operands=()):
    """Raise before anything changes: torch's view rules and leaf/view-of-leaf rules (with grad
    mode on) and storage that cannot be written (an expanded tensor). ``operands``: the op's
    other arguments (a view made in no_grad / inference mode, or output by split, chunk or
    unbind, may be written with grad mode on unless the view or one of them requires grad)."""
    if _state.record:    # (inference mode checks nothing here, as torch)
        if x._base is not None or x._extra is not None:
            meta = _view_creation(x)
            if meta and x._data.dtype.kind == "f" and _requires_grad(x, operands):
                raise RuntimeError(_view_creation_message(x, meta, opname))
        if x.grad_fn is None and x._requires_grad:
            raise RuntimeError(
                f"a leaf Variable that requires grad is being used in an in-place operation. "
                f"({opname} on {_name(x)}.) For a parameter update, wrap it in "
                f"`with tapegrad.no_grad():`; otherwise call .clone() first and modify the copy.")
        b = x._base
        # (torch's check: the view requires grad and its base is a leaf; a base that does not
        # require grad counts too, as a view of it requires grad only below a leaf made of a
        # view, ``a.reshape(2, 3).requires_grad_()``, whose gradient would be lost)
        if b is not None and b.grad_fn is None and (b._requires_grad or x._requires_grad):
            raise RuntimeError(
                f"a view of a leaf Variable that requires grad is being used in an in-place "
                f"operation. ({opname} on a view of shape {list(x._data.shape)} of a leaf of shape "
                f"{list(b._data.shape)} and dtype {b.dtype}.) Wrap it in `with tapegrad.no_grad():` "
                f"for a parameter update, or .clone() the leaf first.")
    check_storage_writable(x, opname)


def check_storage_writable(x, opname):
    """RuntimeError for a tensor whose elements share memory (an expanded view): torch's
    internal-overlap check, the one check of :func:`check_writable` that is not autograd's."""
    if not x._data.flags.writeable:
        raise RuntimeError(
            f"unsupported operation: more than one element of the written-to tensor refers to a "
            f"single memory location. Please clone() the tensor before performing the operation. "
            f"({opname} on {_name(x)}, which is an expanded view or otherwise read-only.)")


def _view_creation(x):
    """x's creation mode (see Tensor._view_creation). A view taken with recording inherits its
    base's, as in torch, but carries no mark of its own: a view of an output of split / chunk /
    unbind has that output's step in its view chain (the step's class has
    ``multi_output_view``), and a view of a view made in no_grad / inference mode (which requires
    grad and has no history) reaches that view's AccumulateGrad through view nodes only."""
    meta = x._view_creation() if x._extra is not None else None
    if meta is None and x._base is not None:
        if x._from_multi_output():
            return "multi"
        fn = x.grad_fn
        while fn is not None:
            if type(fn) is AccumulateGrad:
                ex = fn.variable._extra
                return ex.get("no_grad_view") if ex is not None else None
            cls = getattr(fn, "_forward_cls", None)
            if cls is None or not cls._view:
                break
            fn = fn._edges[0] if fn._edges else None
    return meta


def _requires_grad(x, operands):
    """Whether an in-place op on view ``x`` with these operands needs grad (torch's
    compute_requires_grad): x (or its base) or any tensor operand requires grad."""
    if x._requires_grad:
        return True
    b = x._base
    if b is not None and b._requires_grad:
        return True
    return any(isinstance(a, Tensor) and a._requires_grad for a in operands)


_MULTI_OUTPUT = (" This view is the output of a function that returns multiple views. Such "
                 "functions do not allow the output views to be modified inplace. You should "
                 "replace the inplace operation by an out-of-place one.")


def _view_creation_message(x, meta, opname):
    """torch's error for an in-place op on a view that may not be written with grad mode on:
    made in no_grad / inference mode (``meta`` is the mode), or output by a function returning
    several views (``meta`` is "multi")."""
    fn = x.grad_fn
    if meta == "multi":
        ex = x._extra
        if fn is None:
            head = ("A view was created in no_grad mode and is being modified inplace with grad "
                    "mode enabled.")
        elif ex is not None and "multi_output_index" in ex:
            head = (f"Output {ex['multi_output_index']} of {_short(ex['multi_output_view'])} is a "
                    f"view and is being modified inplace.")
        else:
            head = f"Output {x._output_nr} of {_short(fn.name())} is a view and is being " \
                   f"modified inplace."
        return (f"{head}{_MULTI_OUTPUT} ({opname} on {_name(x)}, an output of split(), chunk() "
                f"or unbind() or a view of one: use the out-of-place op, or .clone() the output "
                f"first.)")
    inference = meta == "inference mode"
    where = (f"Output {x._output_nr} of {_short(fn.name())} is a view of a view which was"
             if fn is not None else "A view was")
    return (
        f"{where} created in {meta} and is being modified inplace "
        f"{'in normal mode' if inference else 'with grad mode enabled'}. Given that this "
        f"use case is ambiguous and error-prone, it is forbidden. You can clarify your "
        f"code by moving both the view and the inplace either both inside the "
        f"{'inference_mode' if inference else 'no_grad'} block (if you don't want the "
        f"inplace to be tracked) or both outside (if you want the inplace to be tracked). "
        f"({opname} on {_name(x)})")


def _check_inference_write(x, opname):
    """RuntimeError for an in-place write to an inference tensor without a version counter,
    outside inference mode (torch refuses it: its version cannot be bumped)."""
    if x._extra is not None and x._no_version() and not _state.inference:
        raise RuntimeError(
            f"Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            f"make a clone to get a normal tensor before doing inplace update.See "
            f"https://github.com/pytorch/rfcs/pull/17 for more details. ({opname} on "
            f"{_name(x)}, made under tapegrad.inference_mode() or a view of such a tensor: write "
            f"a .clone() of it, or do the update inside inference_mode().)")




def _check_result(result, x, opname):
    """The result must fit x: same shape (no broadcasting x itself) and a castable dtype."""
    if result.shape != x._data.shape:
        raise RuntimeError(f"output with shape {list(x._data.shape)} doesn't match the broadcast "
                           f"shape {list(result.shape)} ({opname}: an in-place op cannot change "
                           f"the tensor's shape; use the out-of-place op)")
    rd = _dtype.from_numpy_dtype(result.dtype)
    xd = _dtype.from_numpy_dtype(x._data.dtype)
    if rd._cat > xd._cat:
        raise RuntimeError(
            f"result type {_dtype.SCALAR_NAMES[rd.name]} can't be cast to the desired output type "
            f"{_dtype.SCALAR_NAMES[xd.name]} ({opname} on {_name(x)}: the result is {rd}; use the "
            f"out-of-place op, or convert the tensor first, e.g. x = x.float())")


def _dense(a):
    """Non-overlapping and dense (torch's term): the elements fill a block of memory exactly, in
    some order of the dims (a transpose of a contiguous array is dense, a slice with a step not)."""
    expected = a.itemsize
    for stride, n in sorted((st, n) for n, st in zip(a.shape, a.strides) if n != 1):
        if stride != expected:
            return False
        expected *= n
    return True


def _check_overlap(x, args, opname, allow_full=True):
    """torch refuses an in-place op whose input shares part, but not all, of the memory written
    (x.add_(x.t()), x.add_(x[0])): the result would depend on the order elements are written in.
    As torch, only dense operands are compared (others are 'too hard' and pass), and an operand
    on exactly x's memory with x's strides is fine (x.mul_(x)) unless ``allow_full`` is False
    (index_put: x[mask] = x)."""
    out = x._data
    for a in args:
        if not isinstance(a, Tensor):
            continue
        src = a._data
        if not src.size or not out.size or not np.may_share_memory(src, out):
            continue
        if src is out or a is x:
            if allow_full:
                continue
        elif not (_dense(src) and _dense(out)):
            continue
        else:
            same_start = out.__array_interface__["data"][0] == src.__array_interface__["data"][0]
            if allow_full and same_start and out.nbytes == src.nbytes and \
                    out.strides == src.strides:
                continue
        raise RuntimeError(
            f"unsupported operation: some elements of the input tensor and the written-to tensor "
            f"refer to a single memory location. Please clone() the tensor before performing the "
            f"operation. ({opname}: the input of shape {list(src.shape)} overlaps part of the "
            f"tensor written, of shape {list(out.shape)})")


def inplace(x, F, args, opname):
    """Run Function ``F`` as an in-place op on ``x``: ``F(x, *args)`` is written into x.
    TypeError, as torch's argument parser, when x is not a Tensor (``tapegrad.neg_(3)``)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{opname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    check_writable(x, opname, args)
    _check_overlap(x, args, opname)
    refresh_if_stale(x)   # x's base may have changed since x's history was recorded
    recording = _state.record and (
        x._requires_grad or any(isinstance(a, Tensor) and a._requires_grad for a in args))
    if not recording:
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        try:
            r = np.asarray(F.forward(NULL_CTX, x._data, *arrays))
        except ValueError as e:
            raise forward_error(F, (x, *args), e) from None
        _check_result(r, x, opname)
        _check_inference_write(x, opname)
        np.copyto(x._data, r, casting="unsafe")
        bump(x)
        return x
    old = _alias(x)
    r = F.apply(old, *args)
    _check_result(r._data, x, opname)
    _check_inference_write(x, opname)
    _write_and_rebase(x, old, r)
    return x


def _alias(x):
    """A tensor standing for x's current (pre-write) value and history: inside a
    saved_tensors_hooks block, a copy (torch's clone of the original self), as the pack hook may
    keep the very tensor it is given, which the write must not change."""
    if _hooked_threads:
        return _with_history(_make(x._data.copy(), new_version_counter()), x)
    return _with_history(_make(x._data, version_counter(x)), x)


def _with_history(a, x):
    """``a`` given x's history (grad_fn, output_nr, requires_grad, a leaf's AccumulateGrad), so
    that a derivative computed from ``a`` is connected to x's graph (create_graph)."""
    a.grad_fn = x.grad_fn
    a._output_nr = x._output_nr
    a._requires_grad = x._requires_grad
    if x.grad_fn is None and x._requires_grad:
        a._acc = x._acc
    return a


def _write_and_rebase(x, old, r):
    node = r.grad_fn
    saved = saved_entries(node) if node is not None else ()
    for k, e in enumerate(saved):
        # the node saved the pre-write value of x: keep a copy (torch's original_self), with
        # its history, so a double backward through it reaches x's graph; a storage of its
        # own, so a counter of its own (through grad_fn it would find x's: version_counter)
        if e is not None and e[0] == "i" and e[1] is old:
            copy = _with_history(_make(x._data.copy(), new_version_counter()), old)
            set_saved_entry(node, k, ("i", copy, 0, e[3]))
    np.copyto(x._data, r._data, casting="unsafe")
    vc = bump(x)
    for k, e in enumerate(saved):
        # a saved result now lives in x's storage: tie it to x's version counter, as torch
        if e is not None and e[0] == "o":
            set_saved_entry(node, k, ("o", x._data, vc, vc.v, e[4], e[5]))
    if x._base is not None:
        _copy_slices(x, r)
    else:
        x._set_history(node, r._output_nr)
        x._requires_grad = r._requires_grad


class CopySlices(ArrayFunction, name="CopySlices"):
    """The base of a view that was written in place, as torch's CopySlices: it wraps the in-place
    op's node ``fn`` (which saw the view) and stands for it in the graph. Arguments: the base
    (its values already updated), the op's result (whose node is ``fn``), the view chain
    (:func:`_copy_slices` then sets ``fn`` and the edges). Its edges are the base's old history
    followed by ``fn``'s other inputs, so next_functions is torch's ``(base's grad_fn,
    *fn.next_functions[1:])``. Gradient (torch's CopySlices::apply): ``fn`` runs on the view's
    region of grad; the base gets grad with that region replaced by what ``fn`` gives the view's
    old values, and ``fn``'s other inputs get the rest. ``fn`` keeps its saved tensors (a
    saved result's history, under create_graph, runs through ``fn`` as in torch); freeing this
    node frees them too, as torch's CopySlices drops ``fn`` (the engine never runs ``fn`` as a
    node of its own)."""

    @staticmethod
    def forward(ctx, base, view_values, chain):
        ctx.chain = chain
        # an as_strided step reads memory positions: replayed on arrays laid out as the base
        # (torch's new_empty_strided(base.sizes(), base.strides())), outermost dim first
        ctx.order = None
        if any(cls is AsStridedView for cls, _ in chain) and dense_layout(base):
            order = sorted(range(base.ndim), key=lambda d: -base.strides[d])
            ctx.order = order if order != sorted(order) else None
        return base

    @staticmethod
    def backward(ctx, g):
        fn = ctx.fn
        if ctx._saved is FREED:     # (torch's CopySlices drops fn once a backward freed it)
            raise freed_error(ctx)
        order = ctx.order
        if order is not None:
            back = tuple(np.argsort(order))
            g = g.permute(*order).contiguous().permute(*back)
        gv = g
        for cls, extra in ctx.chain:
            gv = cls.apply(gv, *extra)
        # fn sees a contiguous copy of the view's gradient, as torch's CopySlices passes it (the
        # layout of the gradients fn gives its other inputs follows)
        res = call_node(fn, [gv.clone(memory_format=contiguous_format)])
        # grad with the region replaced: a where over the region's mask (grad's own values,
        # -0 and NaN included, outside it), its values written into the region of zeros through
        # the same views (recorded as a CopySlices itself under create_graph)
        keep = np.ones(g._data.shape, bool)
        if order is not None:
            keep = np.ones([g._data.shape[d] for d in order], bool).transpose(back)
        region = keep
        for cls, extra in ctx.chain:
            region = cls.forward(NULL_CTX, region, *extra)
        region[...] = False
        inside = _make(np.zeros_like(keep, g._data.dtype))
        if res[0] is not None:
            v = inside
            for cls, extra in ctx.chain:
                v = cls.apply(v, *extra)
            v.copy_(res[0])
        return (P.where(_make(keep), g, inside), *res[1:])


def _copy_slices_shown(node):
    # next_functions: the base, then what fn shows after its first argument (the view)
    return [0] + [i for i in node.fn._shown() if i > 0]


def _set_copy_slices_saved(node, value):
    _SAVED_SLOT.__set__(node, value)
    fn = node.__dict__.get("fn")
    if value is FREED and fn is not None and fn._saved is not None:
        fn._saved = FREED


_SAVED_SLOT = Node.__dict__["_saved"]
CopySlices._backward_cls._saved = property(_SAVED_SLOT.__get__, _set_copy_slices_saved)
CopySlices._backward_cls._shown = _copy_slices_shown
# (torch's name() includes the C++ namespace; the class prints as CopySlices in both)
CopySlices._backward_cls.name = lambda self: "torch::autograd::CopySlices"


class _Interface:
    """An object NumPy reads as an array (``__array_interface__``) keeping ``base`` alive."""

    def __init__(self, interface, base):
        self.__array_interface__ = interface
        self.base = base


def _strided(arr, size, stride, offset, writeable):
    """A NumPy view of the memory under ``arr`` (no copy): ``size``, ``stride`` (in elements)
    starting ``offset`` elements from arr's first element (negative: before it, inside its
    storage; the caller checked the bounds)."""
    isz = arr.itemsize
    return np.asarray(_Interface({
        "shape": tuple(size), "strides": tuple(st * isz for st in stride),
        "typestr": arr.__array_interface__["typestr"], "version": 3,
        "data": (arr.__array_interface__["data"][0] + offset * isz, not writeable)}, arr))


def _maybe_overlapping(size, stride):
    """torch's _maybe_overlapping_memory: whether some element of the geometry may share its
    memory with another (a stride of 0 on any dim counts)."""
    reach = 0
    for st, n in sorted(zip(stride, size)):
        if st <= reach:
            return True
        reach += st * (n - 1)
    return False


def _storage_size(size, stride, offset):
    """torch's _min_storage_size: the elements a storage needs for the geometry."""
    if 0 in size:
        return offset
    return offset + 1 + sum((n - 1) * st for n, st in zip(size, stride))


def _positions(size, stride, offset):
    """The storage position of each element of the geometry, as an array of ``size``."""
    pos = np.full(tuple(size), offset, np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        pos += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(size) - d - 1))
    return pos


class AsStridedView(ArrayFunction, name="AsStridedBackward0", view=True):
    """x.as_strided(size, stride, offset): a view of x's storage (``offset`` counted from x's
    first element). Also the node autograd.function.refresh_view records for a view whose base
    was written in place (as torch regenerates that view's grad_fn). Gradient (derivatives.yaml
    as_strided: as_strided_backward): grad laid into zeros of a storage that holds both x's
    geometry and the view's (summed where the view's elements overlap), read back through x's
    geometry (averaged over the elements of x that share a location)."""

    @staticmethod
    def forward(ctx, x, size, stride, offset):
        ctx.geometry = (x.shape, tuple(st // x.itemsize for st in x.strides), size, stride,
                        offset)
        return _strided(x, size, stride, offset, not _maybe_overlapping(size, stride))

    @staticmethod
    def backward(ctx, g):
        in_size, in_stride, size, stride, offset = ctx.geometry
        # both offsets from the first location either geometry reads
        in_off, out_off = max(-offset, 0), max(offset, 0)
        n = max(_storage_size(in_size, in_stride, in_off), _storage_size(size, stride, out_off))
        storage = _make(np.zeros(n, g._data.dtype))
        if _maybe_overlapping(size, stride):
            storage = storage.index_add(0, _make(_positions(size, stride, out_off).ravel()),
                                        g.reshape(-1))
        else:
            AsStridedView.apply(storage, size, stride, out_off).copy_(g)
        if _maybe_overlapping(in_size, in_stride):
            count = np.zeros(n, g._data.dtype)
            np.add.at(count, _positions(in_size, in_stride, in_off).ravel(), 1)
            storage = storage / _make(count)
        return AsStridedView.apply(storage, in_size, in_stride, in_off), None, None, None


def _storage(x):
    """(first location, number of elements) of the storage under tensor ``x``: its root base's
    memory (as it was before an as_strided_), from its lowest address."""
    r = (x._base if x._base is not None else x)._data
    while isinstance(r.base, _Interface):     # (a tensor that as_strided_ restrided)
        r = r.base.base
    lo = r.__array_interface__["data"][0] + sum(
        (n - 1) * st for n, st in zip(r.shape, r.strides) if st < 0)
    span = (1 + sum((n - 1) * abs(st) // r.itemsize for n, st in zip(r.shape, r.strides))
            if r.size else 0)
    return lo, span


@op("storage_offset", namespace=False)
def storage_offset(self):
    """The position of the first element in the storage shared with the tensor's base, in
    elements (0 for a tensor that is not a view, as torch)."""
    lo, _ = _storage(self)
    return (self._data.__array_interface__["data"][0] - lo) // self._data.itemsize


def _int_list(v, fn, arg, pos):
    if isinstance(v, Tensor) or not isinstance(v, (tuple, list)) or not all(
            isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in v):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                        f"not {type(v).__name__}")
    return tuple(int(i) for i in v)


def _as_strided_args(input, size, stride, storage_offset, fn):
    """(size, stride, offset from input's first element) of ``fn``, after torch's checks."""
    size = _int_list(size, fn, "size", 1)
    stride = _int_list(stride, fn, "stride", 2)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape ({fn}: size has "
                           f"{len(size)} dims, stride {len(stride)})")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)} ({fn}: a negative size)")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    here = input.storage_offset()
    offset = here if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    _, span = _storage(input)
    need = _storage_size(size, stride, offset)
    if 0 not in size and need > span:
        isz = input._data.itemsize
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {isz} requiring a storage size of {need * isz} are out of bounds for "
            f"storage of size {span * isz}")
    return size, stride, offset - here


@op("as_strided")
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage (shared with its base) with the given ``size`` and ``stride``
    (tuples of ints, in elements), its first element ``storage_offset`` elements from the
    storage's start (default: ``input.storage_offset()``). Elements may overlap (a stride of 0,
    windows); such a view is read-only (an in-place write raises, as torch). Result: ``size``,
    input's dtype.

    Derivative (derivatives.yaml as_strided: as_strided_backward; AsStridedBackward0): the
    gradient laid out in a zeroed storage through the view's geometry, summed where the view's
    elements overlap, read back through input's geometry.

    Raises:
        TypeError: size or stride not a tuple or list of ints.
        RuntimeError: size and stride of different lengths; a negative size, stride or
            storage_offset; a view (with elements) reaching past the storage's end (torch's
            setStorage error, in bytes)."""
    return AsStridedView.apply(input, *_as_strided_args(input, size, stride, storage_offset,
                                                         "as_strided"))


class AsStridedInPlace(AsStridedView, name="AsStridedBackward1", view=False):
    """as_strided_: the tensor itself takes the new geometry. Gradient: as_strided's."""


@op("as_strided_")
def as_strided_(input, size, stride, storage_offset=None):
    """In-place :func:`as_strided`: ``input`` itself takes the geometry (its values are those of
    its storage there), its version bumped; returns it. AsStridedBackward1 over its history, as
    torch. Raises as :func:`as_strided`, and RuntimeError for a leaf that requires grad (grad
    mode on)."""
    geometry = _as_strided_args(input, size, stride, storage_offset, "as_strided_")
    check_writable(input, "as_strided_")
    refresh_if_stale(input)
    if _state.record and input._requires_grad:
        r = AsStridedInPlace.apply(_alias(input), *geometry)
        input._set_history(r.grad_fn, r._output_nr)
        arr = r._data
    else:
        arr = AsStridedView.forward(NULL_CTX, input._data, *geometry)
    input._data = arr
    if input._base is not None:
        # (its chain, replayed on its base's gradient, now ends with the new geometry)
        input._view_chain += ((AsStridedView, geometry),)
    bump(input)
    return input


_function_module.AS_STRIDED[0] = AsStridedView


def _copy_slices(view, r):
    base = view._base
    balias = _alias(base)
    cs = CopySlices.apply(balias, r, view._view_chain)
    node, fn = cs.grad_fn, r.grad_fn
    node.fn = fn
    node._edges = node._edges[:4] + fn._edges[4:]
    # not None: freed by a backward even when fn saved nothing (torch drops fn itself then)
    node._saved = ()
    base._set_history(node, 0)
    base._requires_grad = cs._requires_grad
    # the view now reads from the new base: re-derive its history from it
    refresh_view(view)


# ---- Functions only in-place ops need ----------------------------------------------------------
class Copy(ArrayFunction, name="CopyBackwards"):
    """self.copy_(src): src's values, broadcast. Gradient: zero to self, grad to src (summed back
    to src's shape and cast to its dtype by the engine). The zeros of this and the other
    overwrites (zero_, fill_) are derivatives.yaml's zeros_like(grad): +0 whatever grad holds (a
    product by 0 gave NaN for an infinite grad and -0 for a negative one), outside the graph."""

    @staticmethod
    def forward(ctx, x, src):
        return np.broadcast_to(src, x.shape).astype(x.dtype)

    @staticmethod
    def backward(ctx, g):
        return _zeros_of(g), g


# (as CopySlices: torch's name() includes the C++ namespace; the class prints as CopyBackwards)
Copy._backward_cls.name = lambda self: "torch::autograd::CopyBackwards"


class Zero(ArrayFunction, name="ZeroBackward0"):
    """self.zero_(). Gradient: zero."""

    @staticmethod
    def forward(ctx, x):
        return np.zeros_like(x)

    @staticmethod
    def backward(ctx, g):
        return _zeros_of(g)


class Fill(ArrayFunction, name="FillBackward2"):
    """self.fill_(number). Gradient: zero. RuntimeError, as torch, for a number the dtype cannot
    hold (1e40 for float32, 300 for uint8, NaN for an integer dtype)."""

    @staticmethod
    def forward(ctx, x, value):
        if overflows(value, x.dtype):
            raise overflow_error(value, x.dtype, "fill_'s value")
        return np.full_like(x, wrapped(value, x.dtype))

    @staticmethod
    def backward(ctx, g):
        return _zeros_of(g), None


class FillTensor(ArrayFunction, name="FillBackward3"):
    """self.fill_(0-d tensor). Gradient: zero to self, the sum of grad to the value."""

    @staticmethod
    def forward(ctx, x, value):
        return np.full_like(x, value)

    @staticmethod
    def backward(ctx, g):
        return _zeros_of(g), g.sum()


class MaskedFill(ArrayFunction, name="MaskedFillBackward0", nondiff=(1,)):
    """self.masked_fill_(mask, value). Gradient: grad where not mask to self (the engine sums it
    back to self's shape where self was broadcast up to the mask's, out of place); sum of grad
    where mask to a tensor value. ``mask``: a bool Tensor (no edge) or array. The result has the
    broadcast shape of self and mask (an in-place caller checks that it is self's)."""

    @staticmethod
    def forward(ctx, x, mask, value):
        # saved: version-checked and freed by backward, as torch's mask
        ctx.save_for_backward(mask)
        return np.where(mask, value, x).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        # derivatives.yaml: self: grad.masked_fill(mask, 0) (so 0, not inf * 0, where masked);
        # value: grad.masked_select(mask).sum() (its CPU form)
        m, = ctx.saved_tensors
        m = _make(np.broadcast_to(m._data, g._data.shape))
        gv = g.masked_select(m).sum() if ctx.needs(2) else None
        return g.masked_fill(m, 0.0), None, gv


class MaskedFillTensor(MaskedFill, name="MaskedFillBackward1"):
    """masked_fill with a 0-d tensor value (torch's masked_fill.Tensor)."""


class IndexPut(ArrayFunction, name="IndexPutBackward0", nondiff=range(3, sys.maxsize)):
    """self[idx] = values (advanced index ``idx``; ``tensors``: the index Tensors in it, see
    indexing.index_tensors). Gradient: grad with zeros at idx to self; grad[idx] (summed back to
    the values' shape) to the values."""

    @staticmethod
    def forward(ctx, x, values, idx, *tensors):
        # saved: freed by backward, and the tensors version-checked, as torch's indices
        ctx.save_for_backward(idx, *tensors)
        out = x.copy()
        out[idx] = values
        return out

    @staticmethod
    def backward(ctx, g):
        idx, *tensors = ctx.saved_tensors
        keep = np.ones(g._data.shape, bool)
        keep[idx] = False
        # +0 where written, whatever grad is: the values of derivatives.yaml's
        # grad.index_put(indices, zeros) (recorded as a where under create_graph)
        return (P.where(_make(keep), g, 0.0), AdvancedIndex.apply(g, idx, *tensors), None) + \
            (None,) * len(tensors)


class _Comparison(ArrayFunction):
    """self.lt_(number) and the other comparisons written into self: 1 where the comparison holds,
    0 elsewhere, in self's dtype (a float self stays float, and keeps requiring grad). Gradient:
    zeros to self (derivatives.yaml lt_.Scalar: zeros_like(self))."""
    _ufunc = None

    @classmethod
    def forward(cls, ctx, x, other):
        return np.asarray(cls._ufunc(*promote(x, other))).astype(x.dtype)

    @staticmethod
    def backward(ctx, g):
        return _zeros_of(g), None


class _ComparisonTensor(_Comparison):
    """A comparison with a tensor, written into self. Gradient: zeros to both (derivatives.yaml
    lt_.Tensor: zeros_like(self), zeros_like(other); the engine sums other's to its shape)."""

    @staticmethod
    def backward(ctx, g):
        return _zeros_of(g), _zeros_of(g)


def _comparison_functions(stem, ufunc):
    """The (number, tensor) Functions of one comparison: ``LtBackward0`` and ``LtBackward1``."""
    class Number(_Comparison, name=f"{stem}Backward0"):
        _ufunc = staticmethod(ufunc)

    class WithTensor(_ComparisonTensor, name=f"{stem}Backward1"):
        _ufunc = staticmethod(ufunc)
    return Number, WithTensor


# ---- public in-place ops ------------------------------------------------------------------------
# what every in-place op may raise before it changes anything (torch's rules)
_RAISES = (
    "Self keeps its shape and dtype: the result is cast to self's dtype within a category "
    "(float64 into float32), and an operand must broadcast to self's shape. Raises RuntimeError, "
    "before writing, when the result's shape is not self's or its dtype is of a higher category "
    "(a float result into an integer tensor); for a leaf that requires grad (with grad mode on); for a view made under "
    "no_grad or inference mode, or an output of split/chunk/unbind (or a view of one), written "
    "with grad mode on by an op that requires grad; for an inference tensor outside "
    "inference_mode(); for an expanded (read-only) tensor; and for an operand that partly "
    "overlaps self's memory.")


def _binary_inplace(name, F):
    def f(self, other, *, alpha=1):
        other = check_operand(other, name)
        args = (other,) if alpha == 1 else (other, alpha)
        return inplace(self, F, args, name)
    f.__name__ = name
    f.__doc__ = f"In-place ``{name[:-1]}``: writes the result into self and returns self. " + _RAISES
    return op(name, namespace=False)(f)


add_ = _binary_inplace("add_", P.Add)
sub_ = _binary_inplace("sub_", P.Sub)


@op("mul_", namespace=False)
def mul_(self, other):
    """In-place multiply; returns self."""
    return inplace(self, P.Mul, (check_operand(other, "mul_"),), "mul_")


@op("div_", namespace=False)
def div_(self, other, *, rounding_mode=None):
    """In-place division; returns self. True division (DivBackward0): RuntimeError on an integer
    tensor, whose float result cannot be written back. ``rounding_mode`` 'trunc' or 'floor': the
    rounded quotient (DivBackward2, zero gradient), integer tensors included; RuntimeError for
    any other mode, as torch."""
    other = check_operand(other, "div_")
    if rounding_mode is None:
        return inplace(self, P.Div, (other,), "div_")
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}' (div_: pass rounding_mode=None for true "
                           f"division)")
    return inplace(self, P.DivMode, (other, rounding_mode), "div_")


@op("pow_", namespace=False)
def pow_(self, exponent):
    """In-place power; returns self."""
    exponent = check_operand(exponent, "pow_")
    F = P.PowTensor if isinstance(exponent, Tensor) else P.PowScalar
    return inplace(self, F, (exponent,), "pow_")


# the unary in-place ops torch has as Tensor methods only; the others are functions too
# (tapegrad.exp_(x)), with their aliases (tapegrad.arcsin_)
_METHODS_ONLY = ("sign_", "sgn_")


def _unary_inplace(name, F, aliases=()):
    def f(self):
        return inplace(self, F, (), name)
    f.__name__ = name
    f.__doc__ = f"In-place ``{name[:-1]}``; returns self."
    return op(name, namespace=name not in _METHODS_ONLY, aliases=aliases)(f)


neg_ = _unary_inplace("neg_", P.Neg)
exp_ = _unary_inplace("exp_", P.Exp)
log_ = _unary_inplace("log_", P.Log)
sqrt_ = _unary_inplace("sqrt_", P.Sqrt)
abs_ = _unary_inplace("abs_", P.Abs)
sin_ = _unary_inplace("sin_", P.Sin)
cos_ = _unary_inplace("cos_", P.Cos)
relu_ = _unary_inplace("relu_", P.Relu)
sigmoid_ = _unary_inplace("sigmoid_", P.Sigmoid)
tanh_ = _unary_inplace("tanh_", P.Tanh)
reciprocal_ = _unary_inplace("reciprocal_", P.Reciprocal)
tan_ = _unary_inplace("tan_", P.Tan)
asin_ = _unary_inplace("asin_", P.Asin, aliases=("arcsin_",))
acos_ = _unary_inplace("acos_", P.Acos, aliases=("arccos_",))
atan_ = _unary_inplace("atan_", P.Atan, aliases=("arctan_",))
sinh_ = _unary_inplace("sinh_", P.Sinh)
cosh_ = _unary_inplace("cosh_", P.Cosh)
asinh_ = _unary_inplace("asinh_", P.AsinhInplace, aliases=("arcsinh_",))
acosh_ = _unary_inplace("acosh_", P.AcoshInplace, aliases=("arccosh_",))
atanh_ = _unary_inplace("atanh_", P.AtanhInplace, aliases=("arctanh_",))
log10_ = _unary_inplace("log10_", P.Log10)
log2_ = _unary_inplace("log2_", P.Log2)
deg2rad_ = _unary_inplace("deg2rad_", P.Deg2rad)
rad2deg_ = _unary_inplace("rad2deg_", P.Rad2deg)
floor_ = _unary_inplace("floor_", P.Floor)
ceil_ = _unary_inplace("ceil_", P.Ceil)
trunc_ = _unary_inplace("trunc_", P.Trunc)
rsqrt_ = _unary_inplace("rsqrt_", P.Rsqrt)
sign_ = _unary_inplace("sign_", P.Sign)
sgn_ = _unary_inplace("sgn_", P.Sgn)
erf_ = _unary_inplace("erf_", P.Erf)
expm1_ = _unary_inplace("expm1_", P.Expm1)
log1p_ = _unary_inplace("log1p_", P.Log1p)


@op("round_")
def round_(self, *, decimals=0):
    """In-place ``round`` (halves to even; ``decimals`` places, RoundBackward1, when not 0);
    returns self. NotImplementedError for ``decimals != 0`` on a non-float tensor, as torch."""
    if decimals:
        return inplace(self, P.RoundDecimals, (int(decimals),), "round_")
    return inplace(self, P.Round, (), "round_")


@op("square_")
def square_(self):
    """In-place ``square``; returns self. Recorded as torch records it, ``pow_(2)``
    (PowBackward0)."""
    return inplace(self, P.PowScalar, (2,), "square_")


def _clamp_one_side_(self, bound, side, number_fn, tensor_fn):
    name = f"clamp_{side}_"
    if bound is None:    # torch: no overload takes None here (clamp_ does)
        raise TypeError(f"{name}() expected a number or a Tensor as {side}, got None")
    F = tensor_fn if isinstance(bound, Tensor) else number_fn
    return inplace(self, F, (bound, None) if side == "min" else (None, bound), name)


@op("clamp_min_")
def clamp_min_(self, min):  # noqa: A002
    """In-place ``clamp_min``: max(self, min) for a number (ClampMinBackward0) or a tensor
    broadcastable to self (ClampMinBackward1); returns self. TypeError when ``min`` is None;
    OverflowError / RuntimeError for a number bound out of range, as :func:`tapegrad.clamp`."""
    return _clamp_one_side_(self, min, "min", P.ClampMin, P.ClampMinTensor)


@op("clamp_max_")
def clamp_max_(self, max):  # noqa: A002
    """In-place ``clamp_max``: min(self, max) for a number (ClampMaxBackward0) or a tensor
    broadcastable to self (ClampMaxBackward1); returns self. TypeError when ``max`` is None;
    OverflowError / RuntimeError for a number bound out of range, as :func:`tapegrad.clamp`."""
    return _clamp_one_side_(self, max, "max", P.ClampMax, P.ClampMaxTensor)


@op("clamp_", aliases=("clip_",))
def clamp_(self, min=None, max=None):  # noqa: A002
    """In-place clamp; returns self."""
    if min is None and max is None:
        raise RuntimeError("clamp_: at least one of 'min' or 'max' must not be None")
    F = P.ClampTensor if isinstance(min, Tensor) or isinstance(max, Tensor) else P.Clamp
    return inplace(self, F, (min, max), "clamp_")


@op("zero_")
def zero_(self):
    """Fill with zeros in place; returns self."""
    return inplace(self, Zero, (), "zero_")


@op("fill_")
def fill_(self, value):
    """Fill with ``value`` (a number or a 0-d tensor) in place; returns self. OverflowError for
    an int beyond 64 bits, RuntimeError for a number the dtype cannot hold (as torch; a negative
    int wraps around for an unsigned dtype)."""
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError(f"fill_(): value {value} does not fit 64 bits")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return inplace(self, FillTensor, (value,), "fill_")
    return inplace(self, Fill, (value,), "fill_")


@op("copy_", namespace=False)
def copy_(self, src, non_blocking=False):
    """Copy ``src``'s values (broadcast, cast to self's dtype) into self; returns self.
    RuntimeError when ``src`` does not broadcast to self's shape, and as every in-place op: a leaf
    that requires grad (grad mode on), a view made under no_grad/inference mode or an output of
    split/chunk/unbind written with grad mode on by a src that requires grad, an inference tensor
    outside inference_mode(), an expanded (read-only) self, a src partly overlapping self."""
    if not isinstance(src, Tensor):
        src = check_operand(src, "copy_")   # a number is copied like a 0-d tensor, as torch
        src = _make(np.asarray(src, dtype=self._data.dtype))
    try:
        if np.broadcast_shapes(src._data.shape, self._data.shape) != self._data.shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"copy_: the size of src {list(src._data.shape)} must be broadcastable "
                           f"to self's size {list(self._data.shape)}") from None
    if self._data.dtype.kind != "f" and src._requires_grad and _state.record:
        return _plain_write(self, src)
    return inplace(self, Copy, (src,), "copy_")


def _plain_write(x, src):
    check_writable(x, "copy_", (src,))
    _check_inference_write(x, "copy_")
    arr = src._data
    np.copyto(x._data, np.broadcast_to(arr, x._data.shape), casting="unsafe")
    bump(x)
    return x




def _masked_fill_args(mask, value):
    """The mask as a Tensor or array, after torch's checks, in its order: a Tensor value must be
    0-d, then the mask must be bool (RuntimeError each)."""
    if isinstance(value, Tensor) and value._data.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_dtype.cpp_name(m.dtype)}")
    return mask if isinstance(mask, Tensor) else m


@op("masked_fill_", namespace=False)
def masked_fill_(self, mask, value):
    """Set elements where ``mask`` (bool, broadcastable to self) is True to ``value`` (a number,
    MaskedFillBackward0, or a 0-d Tensor, MaskedFillBackward1, as torch); returns self.

    Raises:
        RuntimeError: a value Tensor of more than 0 dims; a mask that is not bool; a mask that
            does not broadcast to self's shape (as torch)."""
    F = MaskedFillTensor if isinstance(value, Tensor) else MaskedFill
    return inplace(self, F, (_masked_fill_args(mask, value), value), "masked_fill_")


@op("masked_fill")
def masked_fill(input, mask, value):
    """Out-of-place masked_fill: a copy of ``input`` broadcast with ``mask`` (the result has
    their broadcast shape, as torch), with elements where ``mask`` is True set to ``value`` (a
    number, MaskedFillBackward0, or a 0-d Tensor, MaskedFillBackward1).

    Raises:
        RuntimeError: a value Tensor of more than 0 dims; a mask that is not bool; input and
            mask shapes that do not broadcast (as torch)."""
    m = _masked_fill_args(mask, value)
    mt = m if isinstance(m, Tensor) else _make(m)
    if input._data.shape != mt._data.shape:
        try:
            np.broadcast_shapes(input._data.shape, mt._data.shape)
        except ValueError:
            raise broadcast_error("masked_fill", mt, input) from None
    return (MaskedFillTensor if isinstance(value, Tensor) else MaskedFill).apply(input, m, value)


def _masked_fill_path(idx, value):
    """Whether torch writes ``x[idx] = value`` through masked_fill rather than index_put: one
    bool mask of at least one dim, and a single value."""
    arrays = [i for i in idx if isinstance(i, np.ndarray)]
    return (len(arrays) == 1 and arrays[0].dtype == np.bool_ and arrays[0].ndim >= 1
            and np.size(value._data if isinstance(value, Tensor) else value) == 1)


def _index_put_dtype_error(self, value):
    """torch's index_put does not cast: a tensor value of another dtype is an error (off the
    masked_fill path)."""
    return RuntimeError(
        f"Index put requires the source and destination dtypes match, got "
        f"{self.dtype} for the destination and {value.dtype} for the source (tensor[index] = "
        f"value with an integer-array or mask index does not cast: use value.to({self.dtype}))")


def _check_index_put_shape(self, idx, value):
    """The value must broadcast to the elements an advanced index selects (torch's RuntimeError;
    NumPy would raise TypeError or ValueError, or not at all for a mask with a 2-d value)."""
    vshape = np.shape(value._data if isinstance(value, Tensor) else value)
    # the selected shape, from a zero-strided stand-in (no copy of the tensor's data)
    target = np.broadcast_to(np.empty((), bool), self._data.shape)[idx].shape
    try:
        ok = np.broadcast_shapes(vshape, target) == target
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to indexing "
            f"result of shape {list(target)} (tensor[index] = value: the value must broadcast to "
            f"the elements the index selects)")


def setitem(self, index, value):
    """``tensor[index] = value`` (a number or a tensor, broadcast): an in-place write, recorded as
    CopySlices (basic index) or IndexPutBackward0 (masks, integer arrays) as in torch. A tensor
    value of another dtype is cast for a basic index and raises RuntimeError for an advanced one
    (as torch's index_put), unless it is one value written through a single bool mask.
    IndexError for an index out of range; RuntimeError for a value whose shape does not fit the
    indexed region, and as every in-place op: a leaf that requires grad (grad mode on), a view
    made under no_grad/inference mode or an output of split/chunk/unbind written with grad mode
    on by a value that requires grad, an inference tensor outside inference_mode(), an expanded
    (read-only) self, a value overlapping self's memory."""
    idx, basic, _ = convert_index(index, self._data.shape, warn=False)
    byte_mask = has_byte_mask(index)
    if not isinstance(value, Tensor):
        if isinstance(value, (list, tuple, np.ndarray)):
            value = _make(np.asarray(value, dtype=self._data.dtype))
        else:
            value = _checked_number(self, value)
    if not basic:
        fill = _masked_fill_path(idx, value)
        if byte_mask:
            if fill:
                raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                                   "dtype unsigned char (tensor[mask] = value: pass mask.bool())")
            warn_byte_mask()
        if not fill and isinstance(value, Tensor) and value._data.dtype != self._data.dtype:
            raise _index_put_dtype_error(self, value)
        if isinstance(value, Tensor) and value._data.ndim and value._data.shape[0] == 1:
            # torch drops a value's leading size-1 dims first (a view: ViewBackward0)
            shape = value._data.shape
            k = next((i for i, n in enumerate(shape) if n != 1), len(shape))
            value = value.view(shape[k:])
        if not fill:
            # index_put refuses a value in the written memory at all, even all of it (x[m] = x)
            _check_overlap(self, (value,), "__setitem__", allow_full=False)
        shape_idx = in_range(idx, self._data.shape)
        _check_index_put_shape(
            self, shape_idx if fill else ints_first_index(shape_idx, self._data.shape), value)
    recording = _state.record and (
        self._requires_grad or (isinstance(value, Tensor) and value._requires_grad))
    if not recording:
        check_writable(self, "__setitem__", (value,))
        v = value._data if isinstance(value, Tensor) else value
        try:
            if self._extra is not None and self._no_version():
                # (torch's shape error comes first: try the write on a copy of the region)
                np.array(self._data[in_range(idx, self._data.shape)])[...] = v
                _check_inference_write(self, "__setitem__")
            if not basic:
                idx = _written_index(idx, self._data.shape, fill)
            self._data[idx] = v
        except ValueError:
            target = self._data[idx].shape
            raise RuntimeError(
                f"The expanded size of the tensor ({target[-1] if target else 1}) must match the "
                f"existing size ({np.shape(v)[-1] if np.ndim(v) else 1}) at non-singleton "
                f"dimension {max(len(target) - 1, 0)}.  Target sizes: {list(target)}.  Tensor "
                f"sizes: {list(np.shape(v))} (__setitem__: the value must broadcast to the "
                f"indexed region)") from None
        bump(self)
        return
    if basic and all(i is Ellipsis or i == slice(None) for i in idx):
        target = self
    elif basic:
        target = self[index]
        if self._extra is not None or self._base is not None:
            _view_creation_to_target(self, target, value)
    if basic:
        if isinstance(value, Tensor):
            _copy_to(target, value)
        else:
            # torch wraps the number as a 0-d tensor of self's dtype and fills with that
            # (FillBackward3, its value shown as (None, 0) in next_functions)
            fill_(target, _make(np.asarray(value, dtype=self._data.dtype)))
        if target is not self:
            # self reads the storage just written through a view of it: its history is
            # regenerated now, as torch's is when its grad_fn is next read
            refresh_if_stale(self)
        return
    check_writable(self, "__setitem__", (value,))
    if not isinstance(value, Tensor):
        value = _make(np.asarray(value, dtype=self._data.dtype))
    idx = _written_index(idx, self._data.shape, fill)
    old = _alias(self)
    r = IndexPut.apply(old, value, idx, *index_tensors(index))
    _check_inference_write(self, "__setitem__")
    _write_and_rebase(self, old, r)


def _copy_to(dst, src):
    """``dst[...] = src`` for the region ``dst`` of a basic index, recorded as torch's copy_to
    (TensorIndexing.h): copy_ (CopyBackwards) for a src of dst's shape, fill_ (FillBackward3)
    for a 0-d one, else src's leading size-1 dims dropped by a view (ViewBackward0, made even
    when there are none) and src expanded to dst's shape (ExpandBackward0, when it differs)
    before the copy_."""
    shape = src._data.shape
    if shape == dst._data.shape:
        return copy_(dst, src)
    if not shape:
        return fill_(dst, src)
    k = next((i for i, n in enumerate(shape) if n != 1), len(shape))
    src = src.view(shape[k:])
    if src._data.shape != dst._data.shape:
        src = src.expand(dst._data.shape)
    return copy_(dst, src)


def _written_index(idx, shape, fill):
    """The advanced index ``self[idx] = value`` writes, once every other check passed: its range
    checked (last, as torch's kernel checks it), laid out as torch's unless written by
    masked_fill (the same positions)."""
    idx = check_index_range(idx, shape, "index_put_")
    return idx if fill else ints_first_index(idx, shape)


def _checked_number(self, value):
    """A number written by ``tensor[index] = number``, checked as torch checks it before anything
    is written: an int outside int64 is a ValueError (torch cannot unpack it), one the dtype
    cannot hold a RuntimeError, except for float16, which torch rounds to inf here; a negative
    int wraps around for an unsigned dtype."""
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError(f"Overflow when unpacking long long (tensor[index] = {value}: the "
                         f"value does not fit int64)")
    dt = self._data.dtype
    if isinstance(value, (int, float)) and dt != np.float16 and overflows(value, dt):
        raise overflow_error(value, dt, "the value written")
    return wrapped(value, dt)


def _view_creation_to_target(self, target, value):
    """``self[index] = value`` writes through the view ``target = self[index]``: as in torch,
    that view keeps the way ``self`` was created (in no_grad / inference mode, or by split, chunk
    or unbind), so writing it raises the same kind of error, naming the view. An index covering
    all of self writes self itself (torch indexes nothing then)."""
    meta = _view_creation(self)
    if not meta:
        return
    a, b = target._data, self._data
    if a.shape == b.shape and a.strides == b.strides and \
            a.__array_interface__["data"][0] == b.__array_interface__["data"][0]:
        check_writable(self, "__setitem__", (value,))
    elif target._extra is None and meta != "multi":
        # (a view of a multi-output view is found by its view chain)
        target._extra = {"untracked_view": meta}


Tensor.__setitem__ = setitem


# ---- comparisons and logic written into self ----------------------------------------------------
def _comparison_inplace(name, ufunc, aliases):
    stem = name.capitalize()
    number, tensor = _comparison_functions(stem, ufunc)

    def f(self, other):
        other = check_operand(other, name + "_")
        return inplace(self, tensor if isinstance(other, Tensor) else number, (other,), name + "_")
    f.__name__ = name + "_"
    f.__doc__ = (f"In-place ``{name}``: 1 where ``self {name} other`` holds, else 0, written in "
                 f"self's dtype (a float self gets 1.0 / 0.0 and keeps requiring grad); returns "
                 f"self. Recorded as torch records it: {stem}Backward0 for a number, "
                 f"{stem}Backward1 for a tensor (broadcastable to self), zero gradient to "
                 f"both. TypeError for an operand that is neither a tensor nor a number. "
                 + _RAISES)
    return op(name + "_", namespace=False, aliases=aliases)(f)


eq_ = _comparison_inplace("eq", np.equal, ())
ne_ = _comparison_inplace("ne", np.not_equal, ("not_equal_",))
lt_ = _comparison_inplace("lt", np.less, ("less_",))
le_ = _comparison_inplace("le", np.less_equal, ("less_equal_",))
gt_ = _comparison_inplace("gt", np.greater, ("greater_",))
ge_ = _comparison_inplace("ge", np.greater_equal, ("greater_equal_",))


def _untracked_inplace(x, ufunc, args, opname):
    """Write ``ufunc(x, *args)`` into x for an op torch has no derivative for (logical_and_, ...):
    as torch, autograd checks nothing and x keeps its history (it is not rebased). A leaf that
    requires grad, or a view of one, may be written; so may a view made in no_grad mode or an
    output of split / chunk / unbind (torch raises only when such a view is used afterwards, as
    an output of split / chunk / unbind does here when an op records it). What is not autograd's
    is checked before writing, as every in-place op checks it."""
    check_storage_writable(x, opname)
    _check_overlap(x, args, opname)
    try:
        r = np.asarray(ufunc(x._data, *(a._data for a in args)))
    except ValueError:
        raise broadcast_error(opname, x, *args) from None
    _check_result(r, x, opname)
    _check_inference_write(x, opname)
    np.copyto(x._data, r, casting="unsafe")
    bump(x)
    return x


_UNTRACKED_RAISES = (
    "RuntimeError, before writing, when the result's shape is not self's (an operand must "
    "broadcast to self), for an expanded (read-only) self, an operand that partly overlaps "
    "self's memory, and an inference tensor outside inference_mode().")


def _logical_inplace(name, ufunc):
    def f(self, other):
        if not isinstance(other, Tensor):    # (torch has no number overload here)
            raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return _untracked_inplace(self, ufunc, (other,), name)
    f.__name__ = name
    f.__doc__ = (f"In-place ``{name[:-1]}`` of self and ``other`` (a Tensor of any dtype, "
                 f"broadcastable to self; nonzero is true): 1 or 0 written in self's dtype; "
                 f"returns self. Not differentiable: as torch, self's history is left as it "
                 f"was (no node is recorded), and a leaf that requires grad may be written. "
                 f"TypeError when ``other`` is not a Tensor; " + _UNTRACKED_RAISES)
    return op(name, namespace=False)(f)


logical_and_ = _logical_inplace("logical_and_", np.logical_and)
logical_or_ = _logical_inplace("logical_or_", np.logical_or)
logical_xor_ = _logical_inplace("logical_xor_", np.logical_xor)


@op("logical_not_", namespace=False)
def logical_not_(self):
    """In-place ``logical_not``: 1 where self is zero, else 0, in self's dtype; returns self.
    Not differentiable: self's history is left as it was and a leaf that requires grad may be
    written (as torch). RuntimeError, before writing, for an expanded (read-only) self and an
    inference tensor outside inference_mode()."""
    return _untracked_inplace(self, np.logical_not, (), "logical_not_")


# ---- cumsum_, addmm_ ---------------------------------------------------------------------------
@op("cumsum_", namespace=False)
def cumsum_(self, dim, *, dtype=None):
    """In-place ``cumsum`` along ``dim`` (CumsumBackward0); returns self. An integer self sums
    in int64 and is written back in its own dtype, as torch.

    Raises:
        RuntimeError: ``dtype`` given and not self's (torch's 'Bad in-place call').
        NotImplementedError: a bool self (torch's cumsum has no bool kernel).
        IndexError: ``dim`` out of range."""
    if dtype is not None and dtype != self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype "
                           f"{_dtype.cpp_name(self.dtype)} and output tensor dtype {_dtype.cpp_name(dtype)} should match (cumsum_ "
                           f"writes self's dtype: use the out-of-place cumsum(dtype=...))")
    if self._data.dtype == np.bool_:
        raise NotImplementedError("\"cumsum_out_cpu\" not implemented for 'Bool' (cumsum_ of a "
                                  "bool tensor: use the out-of-place cumsum, which gives int64)")
    ax = dims(dim, self._data.ndim, "cumsum_")
    return inplace(self, Cumsum, (ax[0] if ax else 0, None), "cumsum_")


@op("addmm_", namespace=False)
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """self = beta * self + alpha * (mat1 @ mat2), in place (AddmmBackward0, as torch's one
    kernel; beta 0 ignores self's old values, NaN included); returns self. mat1 (n, m) and mat2
    (m, p) of self's dtype; self (n, p).

    Raises:
        TypeError: mat1 or mat2 not a Tensor.
        RuntimeError: a dtype other than self's; mat1 or mat2 not 2-D, or their inner sizes
            differ; self not of shape (n, p); an int beta or alpha that an integer dtype
            cannot hold."""
    check_addmm(self, mat1, mat2, "addmm_", position=1, beta=beta, alpha=alpha)
    if beta == 1 and alpha == 1:
        return inplace(self, Addmm, (mat1, mat2), "addmm_")
    return inplace(self, AddmmScaled, (mat1, mat2, beta, alpha), "addmm_")


def _iop(fn):
    def method(self, other):
        if not isinstance(other, (Tensor, int, float, bool, np.number, np.ndarray)):
            return NotImplemented
        return fn(self, other)
    return method


@op("fmod_", namespace=False)
def fmod_(self, other):
    """In-place ``fmod`` (the remainder with the sign of self); returns self. FmodBackward0 for a
    number, FmodBackward1 for a tensor. RuntimeError for an integer division by zero, as
    :func:`tapegrad.fmod`."""
    other = check_operand(other, "fmod_")
    F = P.FmodTensor if isinstance(other, Tensor) else P.Fmod
    return inplace(self, F, (other,), "fmod_")


@op("floor_divide_", namespace=False)
def floor_divide_(self, other):
    """In-place ``//``; returns self."""
    return inplace(self, P.FloorDivide, (check_operand(other, "floor_divide_"),), "floor_divide_")


@op("remainder_", namespace=False)
def remainder_(self, other):
    """In-place ``%``; returns self."""
    other = check_operand(other, "remainder_")
    F = P.RemainderTensor if isinstance(other, Tensor) else P.Remainder
    return inplace(self, F, (other,), "remainder_")


Tensor.__iadd__ = _iop(add_)
Tensor.__ifloordiv__ = _iop(floor_divide_)
Tensor.__imod__ = _iop(remainder_)
Tensor.__isub__ = _iop(sub_)
Tensor.__imul__ = _iop(mul_)
Tensor.__itruediv__ = _iop(div_)


for _f in (mul_, div_, pow_, zero_, fill_, masked_fill_, floor_divide_, remainder_, round_, square_,
           clamp_min_, clamp_max_, fmod_, cumsum_, addmm_):
    _f.__doc__ = _f.__doc__.rstrip() + " " + _RAISES
