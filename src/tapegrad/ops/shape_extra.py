"""More shape ops as torch 2.13 has them: tensor_split / hsplit / vsplit / dsplit, atleast_1d/2d/3d,
broadcast_tensors, block_diag, cartesian_prod, Tensor.unfold, and the non-differentiable
tril_indices / triu_indices, isin and unique_consecutive.

Most are built from existing view ops, so they record the nodes torch records: the pieces of
tensor_split are separate slices (SliceBackward0 each, unlike split's one multi-output node),
atleast_* reshape or unsqueeze, broadcast_tensors expands, cartesian_prod stacks a meshgrid.
block_diag and unfold are primitives with torch's node names and derivatives.yaml formulas.
"""
from __future__ import annotations

import itertools

import numpy as np

from .. import _dtype
from .._factories import _check_pin_memory, _write_out
from .._memory_format import check_layout
from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import Tensor, _make, _wrap_dim
from .indexing import BasicIndex
from .scatter import _atleast, _tensor_list, meshgrid
from .shape import expand, stack


# ---- tensor_split, hsplit, vsplit, dsplit ---------------------------------------------------------
def _slices(input, bounds, d):
    """The views ``input[..., a:b, ...]`` along ``d`` for consecutive (a, b) in ``bounds``, each
    its own SliceBackward0 node, as torch's tensor_split (Python slice rules: a negative bound
    counts from the end, and an end before its start gives an empty piece)."""
    pre = (slice(None),) * d
    return tuple(BasicIndex.apply(input, pre + (slice(a, b),)) for a, b in
                 itertools.pairwise(bounds))


def _int_of(v):
    """``v`` as torch's int parser reads it (an int, a NumPy integer, or an integer tensor of one
    element, bool excluded), or None."""
    if isinstance(v, Tensor):
        a = v._data
        return int(a.reshape(-1)[0]) if a.size == 1 and a.dtype.kind in "iu" else None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        return None
    return int(v)


def _int_list(v, fn, arg):
    out = []
    for k, s in enumerate(v):
        n = _int_of(s)
        if n is None and isinstance(s, Tensor) and s._data.size == 1 and \
                s._data.dtype.kind == "b":
            # (torch's parser takes it as a scalar, then finds it is not integral)
            raise RuntimeError(f"{fn}(): element {k} of '{arg}' is a bool tensor; an index "
                               f"must be integral (convert it with .long())")
        if n is None:
            what = (f"a {s.numel()}-element {s.dtype} Tensor" if isinstance(s, Tensor) else
                    type(s).__name__)
            raise TypeError(f"{fn}(): argument '{arg}' must be tuple of ints, but found element "
                            f"of type {what} at pos {k} (an element may be an int or an "
                            f"integer tensor of one element)")
        out.append(n)
    return out


def _invalid(fn, input, given, expected):
    got = ", ".join([type(input).__name__] + [f"{k}={type(v).__name__}" if k else
                                              type(v).__name__ for k, v in given])
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), but "
                     f"expected {expected}")


_NOT_GIVEN = object()


def _split_spec(fn, input, spec, sections, indices, tensor=_NOT_GIVEN, *, takes_tensor=False):
    """Which of torch's overloads a split call picks: ("sections", n), ("indices", list) or
    ("tensor", Tensor); TypeError as torch's parser for a non-Tensor input, a value the keyword's
    overload does not take, or not exactly one of them (``indices_or_sections=`` is no keyword
    of torch's: the parameter is positional-only). ``takes_tensor``: tensor_split's tensor
    overload exists (``tensor`` its keyword's value)."""
    with_tensor = takes_tensor
    expected = ("(Tensor input, int sections | tuple of ints indices"
                f"{' | Tensor tensor_indices_or_sections, int dim=0' if with_tensor else ''}); "
                f"the keywords are sections=, indices="
                f"{' and tensor_indices_or_sections=' if with_tensor else ''}")
    given = [(k, v) for k, v in ((None, spec), ("sections", sections), ("indices", indices),
                                 ("tensor_indices_or_sections", tensor))
             if v is not _NOT_GIVEN]
    if not isinstance(input, Tensor) or len(given) != 1:
        raise _invalid(fn, input, given, expected)
    kind, v = given[0]
    # (a count may be a 0-d integer tensor; a positional tensor to tensor_split is its own
    # overload, checked there)
    as_int = _int_of(v) if not isinstance(v, Tensor) or v._data.ndim == 0 else None
    if kind in (None, "tensor_indices_or_sections") and with_tensor and isinstance(v, Tensor):
        return "tensor", v
    if kind in (None, "sections") and as_int is not None:
        return "sections", as_int
    if kind in (None, "indices") and isinstance(v, (list, tuple)):
        return "indices", _int_list(v, fn, "indices")
    raise _invalid(fn, input, given, expected)


def _by_sections(input, sections, d, fn):
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections} ({fn}: "
                           f"split a dim of size {input._data.shape[d]} into at least 1 piece)")
    n = input._data.shape[d]
    small, extra = divmod(n, sections)
    # (torch's rule: the first n % sections pieces get one element more)
    bounds = [0]
    for k in range(sections):
        bounds.append(bounds[-1] + small + (k < extra))
    return _slices(input, bounds, d)


@op("tensor_split")
def tensor_split(input, indices_or_sections=_NOT_GIVEN, /, dim=0, *, sections=_NOT_GIVEN,
                 indices=_NOT_GIVEN, tensor_indices_or_sections=_NOT_GIVEN):
    """Split ``input`` along ``dim`` into views, as numpy.array_split.

    ``indices_or_sections`` (positional; as keywords torch's overloads take ``sections=`` an
    int, ``indices=`` a list / tuple, ``tensor_indices_or_sections=`` a tensor) is either an
    int n (or a 0-d integer tensor, for ``sections=``): n pieces, the first ``size % n`` of
    them one element longer (pieces past the end are empty); or a list / tuple of ints (an
    element may be an integer tensor of one element): the pieces ``[0:i0], [i0:i1], ...,
    [ik:]`` with Python slice rules (negative indices count from the end; an index before the
    previous gives an empty piece); or an int64 tensor, 0-d (as an int) or 1-D (as a list).

    Result: a tuple of views of ``input`` (its dtype; shared storage and version counter), each
    with its own SliceBackward0 node, as torch. Derivative (derivatives.yaml slice:
    slice_backward_wrapper): each piece's gradient written into zeros of the input's shape.

    Raises:
        RuntimeError: a 0-d input; sections <= 0; a tensor of indices that is not int64 or has
            more than 1 dim; a one-element bool tensor in an index list; as torch.
        IndexError: ``dim`` out of range.
        TypeError: a non-Tensor input; indices or sections of another type (a float, say), or
            of a type its keyword does not take (``indices=3``, ``sections=[3]``), as torch."""
    kind, spec = _split_spec("tensor_split", input, indices_or_sections, sections, indices,
                             tensor_indices_or_sections, takes_tensor=True)
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"tensor_split(): argument 'dim' must be int, not {type(dim).__name__}")
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims (reshape it to 1-D first, e.g. x.reshape(1))")
    d = _wrap_dim(int(dim), nd, "tensor_split")
    if kind == "tensor":
        t = spec._data
        if t.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {t.ndim} dims")
        if t.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_dtype.scalar_name(t.dtype)} (convert it "
                               f"with .long())")
        kind, spec = ("sections", int(t)) if t.ndim == 0 else ("indices", [int(v) for v in t])
    if kind == "sections":
        return _by_sections(input, spec, d, "tensor_split")
    return _slices(input, [0, *spec, None], d)


def _directional_split(fn, min_dims, dim_of, input, spec, sections, indices):
    kind, spec = _split_spec(fn, input, spec, sections, indices)
    nd = input._data.ndim
    if nd < min_dims:
        raise RuntimeError(f"torch.{fn} requires a tensor with at least {min_dims} dimension, but "
                           f"got a tensor with {nd} dimensions!")
    d = dim_of(nd)
    if kind == "sections":
        n = input._data.shape[d]
        if spec == 0 or n % spec:
            raise RuntimeError(f"torch.{fn} attempted to split along dimension {d}, but the size "
                               f"of the dimension {n} is not divisible by the split_size {spec}! "
                               f"(tensor_split allows uneven pieces)")
        return _by_sections(input, spec, d, fn)
    return _slices(input, [0, *spec, None], d)


_DIRECTIONAL = """{what}: ``tensor_split(input, indices_or_sections, dim={dim})`` for an int
    ``indices_or_sections`` (or a 0-d integer tensor) that divides the dim's size, or a list /
    tuple of indices. As keywords, torch's overloads take ``sections=`` (the int) and
    ``indices=`` (the list); ``indices_or_sections`` is positional only. A tuple of views with a
    SliceBackward0 node each, as torch (see :func:`tensor_split`).

    Raises:
        RuntimeError: an input of fewer than {nd} dims; an int that does not divide the dim's
            size (0 included), as torch.
        TypeError: a non-Tensor input; anything but an int or a list / tuple of ints (a tensor
            of more than one element included), or a value its keyword does not take."""


@op("hsplit")
def hsplit(input, indices_or_sections=_NOT_GIVEN, /, *, sections=_NOT_GIVEN, indices=_NOT_GIVEN):
    return _directional_split("hsplit", 1, lambda nd: 1 if nd > 1 else 0, input,
                              indices_or_sections, sections, indices)


@op("vsplit")
def vsplit(input, indices_or_sections=_NOT_GIVEN, /, *, sections=_NOT_GIVEN, indices=_NOT_GIVEN):
    return _directional_split("vsplit", 2, lambda nd: 0, input, indices_or_sections, sections,
                              indices)


@op("dsplit")
def dsplit(input, indices_or_sections=_NOT_GIVEN, /, *, sections=_NOT_GIVEN, indices=_NOT_GIVEN):
    return _directional_split("dsplit", 3, lambda nd: 2, input, indices_or_sections, sections,
                              indices)


hsplit.__doc__ = _DIRECTIONAL.format(what="Split along dim 1 (dim 0 for a 1-D input)",
                                     dim="1 if input.dim() > 1 else 0", nd=1)
vsplit.__doc__ = _DIRECTIONAL.format(what="Split along dim 0 (rows)", dim=0, nd=2)
dsplit.__doc__ = _DIRECTIONAL.format(what="Split along dim 2 (depth)", dim=2, nd=3)


# ---- atleast_1d / 2d / 3d, broadcast_tensors -------------------------------------------------------
def _atleast_nd(n, tensors):
    fn = f"atleast_{n}d"
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _atleast(tensors[0], n)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
        if not tensors:
            return ()
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}() expects Tensors (or one list or tuple of them), but got "
                            f"{type(t).__name__} at position {k}")
    return tuple(_atleast(t, n) for t in tensors)


_ATLEAST = """``input`` with at least {n} dims: {how}; a tensor with {n} or more dims is returned
    as is (the same object). Several tensors (as arguments or one list / tuple) give a tuple.
    The new dims are views: ViewBackward0 for a 0-d input, UnsqueezeBackward0 otherwise, as
    torch (derivatives.yaml view / unsqueeze: the gradient reshaped or squeezed back). TypeError
    for an argument that is not a Tensor."""


@op("atleast_1d", method=False)
def atleast_1d(*tensors):
    return _atleast_nd(1, tensors)


@op("atleast_2d", method=False)
def atleast_2d(*tensors):
    return _atleast_nd(2, tensors)


@op("atleast_3d", method=False)
def atleast_3d(*tensors):
    return _atleast_nd(3, tensors)


atleast_1d.__doc__ = _ATLEAST.format(n=1, how="a 0-d tensor becomes shape (1,)")
atleast_2d.__doc__ = _ATLEAST.format(n=2, how="() -> (1, 1), (k,) -> (1, k)")
atleast_3d.__doc__ = _ATLEAST.format(n=3, how="() -> (1, 1, 1), (k,) -> (1, k, 1), "
                                          "(a, b) -> (a, b, 1)")


@op("broadcast_tensors", method=False)
def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape: a tuple, each of its own dtype. A
    tensor already of that shape is returned as is (the same object); the others are read-only
    expanded views (ExpandBackward0; derivatives.yaml expand: grad.sum_to_size(self)), as
    torch. No tensors give (). The tensors are separate arguments (a list is refused,
    as torch).

    Raises:
        RuntimeError: shapes that do not broadcast (naming the first mismatching dim and every
            shape).
        TypeError: an argument that is not a Tensor."""
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type(t).__name__} (broadcast_tensors takes the tensors as "
                            f"separate arguments)")
    shapes = [t._data.shape for t in tensors]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise _broadcast_error(shapes) from None
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


def _broadcast_error(shapes):
    desc = ", ".join(str(list(s)) for s in shapes)
    nd = max(len(s) for s in shapes)
    padded = [(1,) * (nd - len(s)) + tuple(s) for s in shapes]
    # (broadcast_shapes failed, so some dim holds two sizes other than 1)
    k, a, b = next((k, sizes[0], b) for k in range(nd)
                   for sizes in [[p[k] for p in padded if p[k] != 1]]
                   for b in sizes if b != sizes[0])
    return RuntimeError(
        f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
        f"dimension {k} (broadcast_tensors: shapes {desc} do not broadcast; each dim must be 1 "
        f"or the same size)")


# ---- block_diag, cartesian_prod --------------------------------------------------------------------
class BlockDiag(ArrayFunction, name="BlockDiagBackward0"):
    """The 2-D block matrix with the inputs (as 2-D) on its diagonal. derivatives.yaml
    block_diag (block_diag_backward): each input's block of the gradient, in its own shape and
    dtype. The last argument is the result's NumPy dtype (torch's result_type of the inputs)."""

    @staticmethod
    def forward(ctx, *args):
        arrays, dt = args[:-1], args[-1]
        blocks = [a.reshape(_as_2d(a.shape)) for a in arrays]
        out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dt)
        r = c = 0
        spans = []
        for a, b in zip(arrays, blocks):
            h, w = b.shape
            out[r:r + h, c:c + w] = b
            spans.append((r, h, c, w, a.shape))
            r, c = r + h, c + w
        ctx.spans = spans
        return out

    @staticmethod
    def backward(ctx, g):
        # (the engine casts each block to its input's dtype, as torch's)
        return (*(_block_grad(g, *span) for span in ctx.spans), None)


def _block_grad(g, r, h, c, w, shape):
    """One input's block of the gradient, built from the ops torch's block_diag_backward uses,
    so that create_graph records its nodes: a slice per dim (SliceBackward0 twice), then for a
    0-d input two squeeze(-1) (SqueezeBackward1); a 1-D input's (1, k) block is summed to (k,)
    as torch's engine does for a gradient of another shape (SumBackward1, ViewBackward0); an
    empty 1-D input gets fresh zeros (no node), as torch."""
    if shape == (0,):
        return _make(np.zeros(0, g._data.dtype))
    block = BasicIndex.apply(BasicIndex.apply(g, (slice(r, r + h),)),
                             (slice(None), slice(c, c + w)))
    if len(shape) == 0:
        return block.squeeze(-1).squeeze(-1)
    if len(shape) == 1:
        return block.squeeze(-1).sum(0, keepdim=True).view(shape)
    return block


def _as_2d(shape):
    return (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape


@op("block_diag", method=False)
def block_diag(*tensors):
    """The block-diagonal matrix of ``tensors`` (0-d read as (1, 1), 1-D (k,) as (1, k), 2-D as
    is): shape (sum of rows, sum of columns), zeros off the blocks, in the inputs' promoted dtype
    (torch's result_type: a 0-d input does not widen a dimensioned one of its category);
    no tensors give an empty (1, 0) matrix of the default dtype. Derivative (derivatives.yaml
    block_diag_backward): each input gets its block of the gradient, in its own shape and dtype
    (BlockDiagBackward0).

    Raises:
        RuntimeError: a tensor of more than 2 dims.
        TypeError: an argument that is not a Tensor (a list included), as torch."""
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type(t).__name__}")
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {t._data.ndim} dimensions (shape "
                               f"{list(t._data.shape)}; flatten or reshape it to 2-D first)")
    if not tensors:
        return _make(np.zeros((1, 0), _dtype.get_default_dtype().np))
    return BlockDiag.apply(*tensors, _dtype.result_type(*tensors).np)


@op("cartesian_prod", method=False)
def cartesian_prod(*tensors):
    """The Cartesian product of 1-D tensors of one dtype, as itertools.product: shape
    (prod of lengths, number of tensors), the last tensor varying fastest; a single tensor is
    returned as is (the same object), as torch. Built as torch builds it, from a meshgrid
    (indexing 'ij') whose flattened grids are stacked along dim 1 (StackBackward0; an expanded
    grid is flattened through CloneBackward0 and UnsafeViewBackward0, as torch's reshape), so
    the derivative sums each input's entries over the rows they appear in.

    Raises:
        RuntimeError: no tensors; a tensor that is not 1-D; tensors of different dtypes.
        TypeError: an argument that is not a Tensor."""
    ts = _tensor_list(tensors, "cartesian_prod")
    for t in ts:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)} "
                               f"(cartesian_prod takes 1-D tensors; flatten the others first)")
    if len(ts) == 1:
        return ts[0]
    return stack([g.flatten() for g in meshgrid(*ts, indexing="ij")], 1)


# ---- tril_indices, triu_indices -------------------------------------------------------------------
def _triangle(row, col, offset, lower):
    """The (rows, cols) of the triangle, built row by row from each row's column range, so the
    work is the result's size (np.tril_indices builds a row x col mask first: 8 TiB for
    ``tril_indices(2**40, 0)``, whose result is empty)."""
    if row == 0 or col == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # rows that hold at least one entry: lower, col j <= i + offset; upper, j >= i + offset
    first, stop = (max(0, -offset), row) if lower else (0, min(row, col - offset))
    i = np.arange(first, max(first, stop), dtype=np.int64)
    lo = np.zeros_like(i) if lower else np.maximum(i + offset, 0)
    hi = np.minimum(i + offset + 1, col) if lower else np.full_like(i, col)
    counts = hi - lo
    rows = np.repeat(i, counts)
    row_start = np.repeat(np.cumsum(counts) - counts, counts)
    return rows, np.arange(rows.size, dtype=np.int64) - row_start + np.repeat(lo, counts)


def _index_pairs(fn, row, col, offset, dtype, pin_memory, requires_grad, lower):
    args = []
    for pos, (name, v) in enumerate((("row", row), ("col", col), ("offset", offset)), 1):
        # (torch's int parser also takes a 0-d integer tensor)
        n = int(v._data) if (isinstance(v, Tensor) and v._data.ndim == 0 and
                             v._data.dtype.kind in "iu") else v
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                            f"{type(v).__name__}")
        args.append(int(n))
    row, col, offset = args
    if not isinstance(requires_grad, bool):
        raise TypeError(f"{fn}(): argument 'requires_grad' must be bool, not "
                        f"{type(requires_grad).__name__}")
    # (torch's order: the sizes, then pin_memory, then the dtype, then requires_grad)
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v} ({fn}: the matrix shape is "
                               f"({row}, {col}))")
    _check_pin_memory(pin_memory)
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.to_dtype("int64")
    if dt.np not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise NotImplementedError(f"\"{fn}\" not implemented for '{_dtype.scalar_name(dt.np)}' "
                                  f"(dtype must be tapegrad.int64 or tapegrad.int32, got "
                                  f"tapegrad.{dt.name})")
    if requires_grad:
        raise RuntimeError(f"Only Tensors of floating point and complex dtype can require "
                           f"gradients ({fn} gives integer indices: drop requires_grad=True)")
    r, c = _triangle(row, col, offset, lower)
    return _make(np.stack([r, c]).astype(dt.np))


@op("tril_indices", method=False)
def tril_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=False,
                 requires_grad=False):
    check_layout(layout, "tril_indices")
    return _index_pairs("tril_indices", row, col, offset, dtype, pin_memory, requires_grad, True)


@op("triu_indices", method=False)
def triu_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=False,
                 requires_grad=False):
    check_layout(layout, "triu_indices")
    return _index_pairs("triu_indices", row, col, offset, dtype, pin_memory, requires_grad,
                        False)


_INDICES = """The (row, column) coordinates of the {part} triangle of a row x col matrix (on and
    {side} diagonal ``offset``; > 0 above the main one, < 0 below), as a (2, N) tensor in
    row-major order, int64 unless ``dtype`` (int32 or int64) says otherwise. row, col and
    offset may be ints or 0-d integer tensors. The work is the result's size, so a huge matrix
    with an empty triangle (``{fn}(2**40, 0)``) costs nothing. Not differentiable.

    Raises:
        RuntimeError: a negative row or col; ``pin_memory=True`` (no accelerator);
            ``requires_grad=True`` (an integer result); checked in that order, as torch.
        NotImplementedError: a dtype other than int32 / int64 (as torch), checked after
            pin_memory and before requires_grad.
        TypeError: a row, col or offset that is not an int; a non-bool requires_grad."""
tril_indices.__doc__ = _INDICES.format(part="lower", side="below", fn="tril_indices")
triu_indices.__doc__ = _INDICES.format(part="upper", side="above", fn="triu_indices")


# ---- isin ---------------------------------------------------------------------------------------
def _isin_number(v):
    return isinstance(v, (bool, int, float, np.integer, np.floating)) and not isinstance(v, Tensor)


def _isin_operands(args, kw):
    """``elements`` and ``test_elements`` from a call's arguments, by torch's three overloads:
    (Tensor elements, Tensor test_elements), (Tensor elements, Scalar test_element) and
    (Scalar element, Tensor test_elements); a keyword must be the name its value's overload
    uses (``isin(x, test_element=2.)``, ``isin(element=2., test_elements=x)``)."""
    def bad():
        got = ", ".join([type(a).__name__ for a in args] +
                        [f"{k}={type(v).__name__}" for k, v in kw.items()])
        return TypeError(f"isin() received an invalid combination of arguments - got ({got}), "
                         f"but expected (Tensor elements, Tensor test_elements), (Tensor "
                         f"elements, Number test_element) or (Number element, Tensor "
                         f"test_elements), each with keywords assume_unique, invert (bool) and "
                         f"out")
    if len(args) > 2:
        raise bad()
    vals, used = [], 0
    for pos, names in enumerate((("elements", "element"), ("test_elements", "test_element"))):
        given = [n for n in names if n in kw]
        if pos < len(args) and not given:
            vals.append(args[pos])
        elif pos >= len(args) and len(given) == 1:
            v = kw[given[0]]
            # (the plural names a Tensor's overload, the singular a number's)
            if given[0] != names[0 if isinstance(v, Tensor) else 1]:
                raise bad()
            vals.append(v)
            used += 1
        else:
            raise bad()
    if used != len(kw):
        raise bad()
    a, b = vals
    if not ((isinstance(a, Tensor) and (isinstance(b, Tensor) or _isin_number(b))) or
            (_isin_number(a) and isinstance(b, Tensor))):
        raise bad()
    return a, b


@op("isin", method=False)
def isin(*args, assume_unique=False, invert=False, out=None, **kw):
    """isin(elements, test_elements, *, assume_unique=False, invert=False, out=None)

    Whether each element of ``elements`` is in ``test_elements`` (either, not both, may be a
    number; as torch's overloads, the keyword for a number is ``element`` / ``test_element``):
    a bool tensor of ``elements``' shape, ``~`` that with ``invert=True``. The values compare in
    the two operands' promoted dtype; NaN is in nothing. ``assume_unique`` is a speed hint (the
    result is the same). ``out``: a bool tensor the result is written into and returned. Not
    differentiable.

    Raises:
        TypeError: two numbers, an operand that is neither a Tensor nor a number, a keyword
            that is not its overload's, a non-bool ``assume_unique`` / ``invert``, a non-Tensor
            ``out``.
        RuntimeError: a bool operand, Python's True / False included ("Unsupported input type
            encountered for isin(): Bool", as torch); an ``out`` that is not bool."""
    elements, test_elements = _isin_operands(args, kw)
    for name, v in (("assume_unique", assume_unique), ("invert", invert)):
        if not isinstance(v, (bool, np.bool_)):
            raise TypeError(f"isin(): argument '{name}' must be bool, not {type(v).__name__}")
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"isin(): argument 'out' must be Tensor, not {type(out).__name__}")
    dt = _dtype.result_type(elements, test_elements).np
    for v in (elements, test_elements):
        if isinstance(v, (bool, np.bool_)) or (isinstance(v, Tensor) and
                                                v._data.dtype.kind == "b"):
            raise RuntimeError("Unsupported input type encountered for isin(): Bool (convert "
                               "the bool operand to an integer first, e.g. .long() or int())")
    a, b = (np.asarray(v._data if isinstance(v, Tensor) else v).astype(dt, copy=False)
            for v in (elements, test_elements))
    r = np.asarray(np.isin(a, b, assume_unique=bool(assume_unique), invert=bool(invert)))
    if out is None:
        return _make(r)
    if out._data.dtype != np.bool_:
        raise RuntimeError(f"Expected out tensor to have dtype bool, but got "
                           f"tapegrad.{_dtype.from_numpy_dtype(out._data.dtype).name} instead "
                           f"(isin(out=...) takes a bool tensor)")
    return _write_out(out, r, "isin", warn_resize=True)


# ---- unique_consecutive ---------------------------------------------------------------------------
class UniqueConsecutive(ArrayFunction, name="UniqueConsecutiveBackward0"):
    """The first of each run of equal elements (or of equal slices along dim ``d``), with the
    inverse indices and run lengths. torch records the values' node but has no derivative
    (derivatives.yaml unique_consecutive: not_implemented): backward raises
    NotImplementedError."""

    @staticmethod
    def forward(ctx, x, d):
        if d is None:
            flat = x.reshape(-1)
            rows = flat.reshape(-1, 1)
        else:
            moved = np.moveaxis(x, d, 0)
            # (the row length spelled out: -1 cannot be inferred for 0 rows)
            rows = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))
        n = rows.shape[0]
        # (!= keeps NaNs apart, as torch's equality does)
        starts = np.ones(n, bool)
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        inv = np.cumsum(starts, dtype=np.int64) - 1
        cnt = np.diff(np.append(np.flatnonzero(starts), n)).astype(np.int64)
        if d is None:
            vals = np.ascontiguousarray(flat[starts])
            inv = inv.reshape(x.shape)
        else:
            # (torch's layout: contiguous with dim d first, then moved back into place, so for
            # d != 0 the result is not contiguous: shape (2, 3, 4), d=2 has strides (3, 1, 6))
            vals = np.moveaxis(np.ascontiguousarray(moved[starts]), 0, d)
        ctx.mark_non_differentiable(inv, cnt)
        return vals, inv, cnt

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


@op("unique_consecutive")
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal consecutive elements of ``input`` (flattened) to one: 1-D of
    input's dtype (a 0-d input gives shape (1,)). With ``dim``: runs of equal slices along
    ``dim``, the result keeping the other dims. With ``return_inverse``: also the int64 index of
    each element's run (input's shape; for ``dim``, 1-D of that dim's length); with
    ``return_counts``: the int64 run lengths; the result is then a tuple. NaNs never compare
    equal. With ``dim``, the values are laid out as torch's: contiguous with ``dim`` first, then
    moved into place (so not contiguous for dim != 0). Not differentiable: an input that
    requires grad gives values with a UniqueConsecutiveBackward0 node whose backward raises
    NotImplementedError, as torch.

    Raises:
        IndexError: ``dim`` out of range, or any ``dim`` for a 0-d input.
        RuntimeError: with ``dim``, a size-0 dim other than ``dim`` ("There are 0 sized
            dimensions, and they aren't selected"), as torch.
        TypeError: ``input`` not a Tensor; ``return_inverse`` / ``return_counts`` not a bool
            (so ``unique_consecutive(x, 0)`` is refused: dim is the fourth argument); ``dim``
            not an int (a bool included)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"unique_consecutive(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    for name, v in (("return_inverse", return_inverse), ("return_counts", return_counts)):
        if not isinstance(v, bool):
            raise TypeError(f"unique_consecutive(): argument '{name}' must be bool, not "
                            f"{type(v).__name__} (the dim is the fourth argument: pass it as "
                            f"dim=...)")
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, (int, np.integer))):
        raise TypeError(f"unique_consecutive(): argument 'dim' must be int, not "
                        f"{type(dim).__name__}")
    d = None
    if dim is not None:
        if input._data.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions "
                             "(unique_consecutive of a 0-d tensor takes no dim)")
        d = _wrap_dim(int(dim), input._data.ndim, "unique_consecutive")
        shape = input._data.shape
        if any(n == 0 for k, n in enumerate(shape) if k != d):
            raise RuntimeError(f"There are 0 sized dimensions, and they aren't selected, so "
                               f"unique cannot be applied (unique_consecutive: dim={d} of shape "
                               f"{list(shape)}; runs along dim {d} of an empty slice are "
                               f"undefined)")
    vals, inv, cnt = UniqueConsecutive.apply(input, d)
    out = (vals,) + ((inv,) if return_inverse else ()) + ((cnt,) if return_counts else ())
    return out[0] if len(out) == 1 else out


# ---- Tensor.unfold --------------------------------------------------------------------------------
def _windows(x, d, size, step):
    if x.ndim == 0:
        # (torch: shape (size,), so size 0 gives an empty window list, size 1 the element)
        return x.reshape(1)[:size]
    n = (x.shape[d] - size) // step + 1
    st = x.strides
    return np.lib.stride_tricks.as_strided(
        x, x.shape[:d] + (n,) + x.shape[d + 1:] + (size,),
        st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],), writeable=x.flags.writeable)


class Unfold(ArrayFunction, name="UnfoldBackward0", view=True):
    """Every window of ``size`` elements along dim ``d``, ``step`` apart, as a new last dim: a
    strided view. derivatives.yaml unfold: unfold_backward(grad, self.sizes(), dimension, size,
    step), the windows' gradients added back where they came from (:class:`UnfoldGrad`)."""

    @staticmethod
    def forward(ctx, x, d, size, step):
        ctx.args = (x.shape, d, size, step)
        return _windows(x, d, size, step)

    @staticmethod
    def backward(ctx, g):
        return UnfoldGrad.apply(g, *ctx.args), None, None, None


class UnfoldGrad(ArrayFunction, name="UnfoldBackwardBackward0"):
    """unfold_backward: the windows' gradients summed into zeros of the input's shape.
    derivatives.yaml unfold_backward: grad_in: grad.unfold(dim, size, step) (it is linear)."""

    @staticmethod
    def forward(ctx, g, shape, d, size, step):
        ctx.args = (d, size, step)
        out = np.zeros(shape, g.dtype)
        if not shape:
            # (g has shape (size,): the element, or nothing for size 0)
            out[()] = g.sum()
            return out
        n = g.shape[d]
        pre = (slice(None),) * d
        for k in range(size):
            out[pre + (slice(k, k + step * (n - 1) + 1, step),)] += g[..., k]
        return out

    @staticmethod
    def backward(ctx, gg):
        return (Unfold.apply(gg, *ctx.args), None, None, None, None)


def unfold(self, dimension, size, step):
    """The windows of ``size`` elements along ``dimension``, ``step`` apart, as a new last dim:
    shape ``(..., (n - size) // step + 1, ..., size)`` with n the dim's size (a 0-d tensor gives
    shape (size,), size 0 or 1, as torch). A view of self sharing its storage (windows overlap when step < size).
    Derivative (derivatives.yaml unfold: unfold_backward): each window's gradient added back
    into zeros of self's shape (UnfoldBackward0; UnfoldBackwardBackward0 under create_graph).

    Raises:
        RuntimeError: size larger than the dim ("maximum size for tensor at dimension d is n but
            size is s"); a negative size; step not positive; as torch.
        IndexError: ``dimension`` out of range."""
    for name, v in (("dimension", dimension), ("size", size), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"unfold(): argument '{name}' must be int, not {type(v).__name__}")
    nd = self._data.ndim
    d = _wrap_dim(int(dimension), nd, "unfold")
    n = self._data.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size} "
                           f"(unfold: a window cannot be longer than the dim)")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return Unfold.apply(self, d, int(size), int(step))


op("unfold", namespace=False)(unfold)
