"""Memory formats (torch.memory_format): how a new tensor lays out its elements in memory.

``preserve_format`` (the default of clone and the ``*_like`` factories) keeps the strides of a
source whose elements fill its memory without gaps or overlaps ("dense", in any order of
dimensions, a transposed matrix included), and otherwise the source's order of dimensions,
without the gaps; ``contiguous_format`` is C order; ``channels_last`` (4-D) and
``channels_last_3d`` (5-D) keep the channels innermost (N, H, W, C in memory). Values never
depend on the format, only ``stride()`` and ``is_contiguous()`` do, as in torch. The rules are
torch's (c10's empty_like / infer_dense_strides, suggest_memory_format and
is_channels_last_strides), ported.
"""
import numpy as np

__all__ = ["channels_last", "channels_last_3d", "contiguous_format", "jagged", "layout",
           "memory_format", "preserve_format", "sparse_bsc", "sparse_bsr", "sparse_coo",
           "sparse_csc", "sparse_csr", "strided"]


class _Constant:
    """A named module constant (a memory format, a layout): printed as ``tapegrad.<name>`` and
    pickled as the module's attribute of that name, so a copy is the constant itself."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"tapegrad.{self._name}"

    def __reduce__(self):
        return self._name


class memory_format(_Constant):
    """One of tapegrad's memory formats (the four module constants; not made by users)."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


class layout(_Constant):
    """A tensor layout (torch.layout; the module constants, not made by users). tapegrad's
    tensors are all ``strided`` (dense, with strides); the sparse and jagged layouts exist so
    that code naming them runs up to where it asks for one (:func:`check_layout`)."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")


def _no_new_layout(cls, *args, **kwargs):
    raise TypeError("cannot create 'tapegrad.layout' instances (the layouts are the module's "
                    "constants: tapegrad.strided, tapegrad.sparse_coo, ...)")


# (made here only: torch's layout type cannot be called either)
layout.__new__ = _no_new_layout


def check_layout(lay, op):
    """A factory's ``layout`` argument: None or ``strided`` pass; TypeError naming ``op`` for
    anything but a layout (as torch's argument parser); NotImplementedError (torch's error for
    an op its sparse backend lacks) for a sparse or jagged one, which tapegrad does not have."""
    if lay is None or lay is strided:
        return
    if type(lay) is not layout:
        raise TypeError(f"{op}(): argument 'layout' must be tapegrad.layout (tapegrad.strided), "
                        f"not {type(lay).__name__}")
    raise NotImplementedError(f"{op}(): tapegrad's tensors are all dense "
                              f"(layout=tapegrad.strided); layout={lay!r} is not supported")


# the order of a channels-last format's dims in memory, outermost first
_CHANNELS_LAST = {channels_last: (0, 2, 3, 1), channels_last_3d: (0, 2, 3, 4, 1)}


def strides_of(a):
    """Array ``a``'s strides in elements, as torch reports them. NumPy gives an array of no
    elements it allocates (one that owns its memory) all-zero strides, where torch gives C
    order's, each dim counting as at least 1 (``(3, 1)`` for shape (0, 3)); a view reports its
    own (a slice or a transpose of an empty made here keeps its base's; an expanded one has
    zeros, as in torch)."""
    st = tuple(s // a.itemsize for s in a.strides)
    if not a.size and a.base is None and not any(st):
        return _c_strides(a.shape)
    return st


def _c_strides(shape):
    st, step = [], 1
    for n in reversed(shape):
        st.append(step)
        step *= max(n, 1)
    return tuple(reversed(st))


def _empty_view(shape, strides, dtype):
    """An array of ``shape`` (with a dim of size 0) reporting these strides (in elements): a view
    of a one-element buffer, as NumPy zeroes the strides of an empty array it allocates, and a
    transpose of that would report no order."""
    isz = np.dtype(dtype).itemsize
    return np.lib.stride_tricks.as_strided(np.empty(1, dtype), shape, [s * isz for s in strides],
                                           writeable=True)


def with_strides(a):
    """Array ``a`` itself, or, when NumPy allocated it without elements (zeroing its strides),
    an empty array of its shape holding torch's C-order strides (:func:`strides_of`), which a
    later transpose or permute keeps as torch's does: what a factory hands its tensor."""
    if a.size or a.base is not None or any(a.strides):
        return a
    return _empty_view(a.shape, _c_strides(a.shape), a.dtype)


def plain_c_order(a):
    """Whether array ``a`` is C-contiguous with C strides on every dim, size-1 dims included
    (which NumPy's flag overlooks and torch's preserve_format keeps; NumPy's flag also holds for
    any array of no elements, whose strides here are C order's only when NumPy allocated it, see
    :func:`strides_of`): a copy in C order preserves its layout."""
    return a.flags.c_contiguous and 1 not in a.shape and (
        a.size != 0 or a.base is None and not any(a.strides))


def check_format(fmt, op, default=preserve_format):
    """``fmt`` (``default`` for None) after checking its type: TypeError naming ``op`` for
    anything but a memory_format."""
    if fmt is None:
        return default
    if type(fmt) is not memory_format:
        raise TypeError(f"{op}(): argument 'memory_format' must be tapegrad.memory_format (one of "
                        f"tapegrad.contiguous_format, preserve_format, channels_last, "
                        f"channels_last_3d), not {type(fmt).__name__}")
    return fmt


def dense_layout(a):
    """Whether array ``a``'s elements fill its memory without gaps or overlaps, in any order of
    dimensions (torch's is_non_overlapping_and_dense, which holds for any tensor of no
    elements)."""
    if not a.size:
        return True
    step = a.itemsize
    for stride, n in sorted((abs(st), n) for st, n in zip(a.strides, a.shape) if n != 1):
        if stride != step:
            return False
        step *= n
    return all(st >= 0 for st in a.strides)


def empty_with_strides(src, dtype):
    """An empty array of dense array ``src``'s shape and exactly its strides (in elements), in
    ``dtype``: torch's empty_strided, which keeps even a size-1 dim's stride, where NumPy's
    empty_like picks its own for those. For no elements, ``src``'s strides as reported."""
    if not src.size:
        return _empty_view(src.shape, strides_of(src), dtype)
    out = np.empty_like(src, dtype=dtype)
    if same_strides(out, src):
        return out
    isz, osz = src.itemsize, out.itemsize
    buf = np.empty(src.size, out.dtype)
    return np.ndarray(src.shape, out.dtype, buffer=buf,
                      strides=[si // isz * osz for si in src.strides])


def same_strides(a, b):
    """Whether arrays ``a`` and ``b`` (one shape) have the same strides counted in elements."""
    isz, osz = b.itemsize, a.itemsize
    return all(sa * isz == sb * osz for sa, sb in zip(a.strides, b.strides))


def _dense_order(shape, strides):
    """The dims of a layout that is not dense, fastest first, as torch's infer_dense_strides
    orders them (empty_like and clone of such a tensor): by stride, a dim of stride 0 (an
    expanded one) keeping its place in C order, equal strides putting the smaller size first."""
    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    return sorted_dims(len(shape), should_swap)


def sorted_dims(ndim, should_swap):
    """The dims, fastest first, in the order TensorIterator's reorder_dimensions sorts them:
    from C order, an insertion sort that moves a dim past another when ``should_swap(d0, d1)``
    (d0 the one now before) is positive and stops at a negative (zero: no opinion, look further
    back), so that an ambiguous pair keeps its C order."""
    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        j = i
        for k in range(i - 1, -1, -1):
            c = should_swap(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return perm


def _empty_ordered(shape, outer_first, dtype):
    """An empty array of ``shape`` whose dims lie in memory in the order ``outer_first``
    (outermost first), without gaps; with no elements, strides that multiply the sizes as they
    are, a 0 included, as torch's channels-last strides do."""
    if 0 in shape:
        strides, step = [0] * len(shape), 1
        for d in reversed(outer_first):
            strides[d] = step
            step *= shape[d]
        return _empty_view(shape, strides, dtype)
    outer = np.empty([shape[d] for d in outer_first], dtype)
    return outer.transpose(np.argsort(outer_first))


def _channels_last_order(fmt, ndim, op):
    order = _CHANNELS_LAST[fmt]
    if ndim != len(order):
        raise RuntimeError(f"required rank {len(order)} tensor to use {fmt._name} format ({op} "
                           f"got a {ndim}-D tensor)")
    return order


def empty_in_format(src, dtype, fmt, op):
    """An empty array of ``src``'s shape (an array) and ``dtype``, laid out as memory format
    ``fmt`` (already checked) asks; RuntimeError for a channels-last format of the wrong rank."""
    if fmt is preserve_format:
        if dense_layout(src):
            return empty_with_strides(src, dtype)
        return _empty_ordered(src.shape, _dense_order(src.shape, src.strides)[::-1], dtype)
    if fmt is contiguous_format:
        return np.empty(src.shape, dtype)
    return _empty_ordered(src.shape, _channels_last_order(fmt, src.ndim, op), dtype)


def _strides_like(sizes, strides, dims):
    """torch's is_channels_last_strides_2d / _3d: whether the strides order the dims as
    ``dims`` (innermost first), a size-1 or ambiguous case read as C order."""
    if strides[1] == 0:
        return False
    least = 0
    for d in dims:
        if sizes[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:
            return False
        least = strides[d] * max(1, sizes[d])
    return True


def suggest_format(arr):
    """The memory format ``arr``'s strides suggest, as torch's suggest_memory_format:
    channels_last (4-D) or channels_last_3d (5-D) when they order the dims so, else
    contiguous_format."""
    if arr.ndim in (4, 5):
        fmt = channels_last if arr.ndim == 4 else channels_last_3d
        strides = [s // arr.itemsize for s in arr.strides]
        if _strides_like(arr.shape, strides, _CHANNELS_LAST[fmt][::-1]):
            return fmt
    return contiguous_format


def in_format(arr, fmt, op):
    """Whether ``arr``'s layout already is what ``fmt`` (not preserve_format) asks, a size-1
    dim's stride aside (torch's is_contiguous(memory_format)); RuntimeError for a channels-last
    format of the wrong rank."""
    if fmt is contiguous_format:
        return arr.flags.c_contiguous
    order = _channels_last_order(fmt, arr.ndim, op)
    if not arr.size:
        # (NumPy calls any empty array contiguous; torch compares the strides, as reported)
        st, step = strides_of(arr), 1
        for d in reversed(order):
            if arr.shape[d] != 1:
                if st[d] != step:
                    return False
                step *= arr.shape[d]
        return True
    return arr.transpose(order).flags.c_contiguous
