"""Shape ops: views (reshape, transpose, permute, squeeze, unsqueeze, expand), cat, stack, clone,
split / chunk / unbind.

A view's output shares its input's storage and version counter (``view=True``), as in torch; the
outputs of split / chunk / unbind are all views from one multi-output node (see ``_as_views``).
Derivatives are the inverse shape op (derivatives.yaml: view -> reshape back, permute -> inverse
permute, expand -> sum_to_size, cat -> slices, stack -> unbind).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype
from .._memory_format import (
    _CHANNELS_LAST,
    check_format,
    contiguous_format,
    empty_in_format,
    in_format,
    plain_c_order,
    preserve_format,
)
from ..autograd.function import ArrayFunction, _share_version, _untracked_view
from ..autograd.function import short_node_name as _short
from ..autograd.grad_mode import state as _grad_state
from ..autograd.graph import user_stacklevel
from ._registry import op
from ._util import Tensor, _make, _wrap_dim, dims, sum_array


def _shape_arg(shape, fn):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)):
            raise TypeError(f"{fn}(): argument 'size' must be a tuple of ints, but found element of "
                            f"type {type(s).__name__}")
        out.append(int(s))
    return tuple(out)


def infer_shape(shape, numel, fn):
    """Resolve one -1 in ``shape`` against ``numel`` (RuntimeError as torch when impossible)."""
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(f"{fn}: only one dimension can be inferred (got shape {list(shape)})")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"{fn}: invalid shape dimension {min(shape)} in {list(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class View(ArrayFunction, name="ViewBackward0", view=True):
    """Reshape without copying. derivatives.yaml: grad.reshape(self.sizes())."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape), None


class UnsafeView(ArrayFunction, name="UnsafeViewBackward0"):
    """The new shape of a reshape's C-order copy (reshape calls it on the input's clone, as
    torch's ``_unsafe_view(self.clone(contiguous_format), shape)``): the copy's array in that
    shape, not a view to autograd. derivatives.yaml _unsafe_view: grad.reshape(self.sizes())."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return x.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape), None


class ReshapeAlias(View, name="ReshapeAliasBackward0"):
    """Reshape of a non-contiguous input whose strides allow a view (torch's _reshape_alias).
    derivatives.yaml _reshape_alias: grad.reshape(self.sizes())."""


@op("reshape")
def reshape(input, *shape):
    """Same values in a new shape (one dim may be -1), as torch's reshape: a view when the
    strides allow one (ViewBackward0 for a contiguous input, ReshapeAliasBackward0 for another,
    e.g. a transpose reshaped to its own shape), else a C-order copy (CloneBackward0, then
    UnsafeViewBackward0, as torch). Result: input's dtype, ``shape``'s shape. Derivative
    (derivatives.yaml view, _reshape_alias, _unsafe_view): the gradient reshaped back to the
    input's shape. RuntimeError when the element count does not match."""
    shape = infer_shape(_shape_arg(shape, "reshape"), input._data.size, "reshape")
    arr = input._data
    if arr.flags.c_contiguous:
        return View.apply(input, shape)
    if _viewable(arr, shape):
        return ReshapeAlias.apply(input, shape)
    return UnsafeView.apply(Clone.apply(input), shape)


def view(input, *shape):
    """A view with a new shape; RuntimeError (use reshape) when the strides do not allow one.
    ``view(dtype)`` is not supported."""
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        raise NotImplementedError("view(dtype) is not supported by tapegrad")
    shape = infer_shape(_shape_arg(shape, "view"), input._data.size, "view")
    if not _viewable(input._data, shape):
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least one dimension "
            f"spans across two contiguous subspaces): input shape {list(input._data.shape)} is not "
            f"contiguous, so it cannot be viewed as {list(shape)}. Use .reshape(...) instead.")
    return View.apply(input, shape)


# reshape(copy=False) (NumPy 2.1+) says whether strides allow a view; before it, setting .shape
# (deprecated since NumPy 2.5) was the way
_RESHAPE_COPY_ARG = np.lib.NumpyVersion(np.__version__) >= "2.1.0"


def _viewable(arr, shape):
    """Whether ``arr`` can take ``shape`` without a copy (its strides allow it)."""
    if _RESHAPE_COPY_ARG:
        try:
            arr.reshape(shape, copy=False)
        except ValueError:
            return False
        return True
    probe = arr.view()
    try:
        probe.shape = shape
    except AttributeError:
        return False
    return True


Tensor.view = view


@op("flatten")
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim``..``end_dim`` (inclusive, negative counting from the end) into one
    of their product's size.

    Result: input's dtype; shape ``shape[:start] + (prod(shape[start:end + 1]),) + shape[end +
    1:]``, by :func:`reshape` (a view when the layout allows, ViewBackward0; derivatives.yaml
    view: grad.reshape(self.sizes())). The input itself when start == end; a 0-d input gives
    shape (1,).

    Raises:
        IndexError: ``start_dim`` or ``end_dim`` outside [-ndim, ndim - 1] (ndim at least 1), as
            torch.
        RuntimeError: ``start_dim`` comes after ``end_dim`` once both are made non-negative
            ("start_dim cannot come after end_dim", as torch; never for a 0-d input)."""
    nd = input._data.ndim
    if nd == 0:
        _wrap_dim(start_dim, nd, "flatten")
        _wrap_dim(end_dim, nd, "flatten")
        return reshape(input, 1)
    s = _wrap_dim(start_dim, nd, "flatten")
    e = _wrap_dim(end_dim, nd, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input._data.shape
    return reshape(input, shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:])


@op("unflatten")
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one may be -1): a view (ViewBackward0, as torch's,
    whatever the input's strides: one dim split always has strides). RuntimeError when the
    sizes do not multiply to the dim's size."""
    d = _wrap_dim(dim, input._data.ndim, "unflatten")
    shp = input._data.shape
    sizes = infer_shape(tuple(sizes), shp[d], "unflatten")
    return View.apply(input, shp[:d] + sizes + shp[d + 1:])


class Permute(ArrayFunction, name="PermuteBackward0", view=True):
    """Reorder dims. derivatives.yaml: permute_backwards (the inverse permutation)."""

    @staticmethod
    def forward(ctx, x, perm):
        ctx.perm = perm
        return x.transpose(perm)

    @staticmethod
    def backward(ctx, g):
        return g.permute(tuple(np.argsort(ctx.perm).tolist())), None


class Transpose(ArrayFunction, name="TransposeBackward0", view=True):
    """Swap two dims. derivatives.yaml: grad.transpose(dim0, dim1)."""

    @staticmethod
    def forward(ctx, x, d0, d1):
        ctx.d = (d0, d1)
        return x.swapaxes(d0, d1) if x.ndim else x.view()

    @staticmethod
    def backward(ctx, g):
        return (g.transpose(*ctx.d) if g._data.ndim else g), None, None


class T(ArrayFunction, name="TBackward0", view=True):
    """Transpose of a <= 2-D tensor. derivatives.yaml: grad.t()."""

    @staticmethod
    def forward(ctx, x):
        return x.T

    @staticmethod
    def backward(ctx, g):
        return T.apply(g)


@op("permute")
def permute(input, *dims_):
    """Reorder the dims (a view). RuntimeError unless ``dims`` is a permutation of range(ndim)."""
    perm = _shape_arg(dims_, "permute")
    nd = input._data.ndim
    if len(perm) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() "
                           f"= {nd} is not equal to len(dims) = {len(perm)}")
    perm = tuple(_wrap_dim(p, nd, "permute") for p in perm)
    if len(set(perm)) != nd:
        raise RuntimeError(f"permute(): duplicate dims are not allowed (got {list(dims_)})")
    return Permute.apply(input, perm)


@op("transpose", aliases=("swapaxes", "swapdims"))
def transpose(input, dim0, dim1):
    """Swap dims ``dim0`` and ``dim1`` (a view; negative dims allowed)."""
    nd = input._data.ndim
    d0 = _wrap_dim(dim0, nd, "transpose")
    d1 = _wrap_dim(dim1, nd, "transpose")
    return Transpose.apply(input, d0, d1)


@op("t")
def t(input):
    """Transpose a 2-D tensor (0-D and 1-D are returned as a view unchanged)."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return T.apply(input)


def _T(self):
    nd = self._data.ndim
    # torch's deprecation UserWarnings (torch shows each once per process; here Python's warning
    # filters decide, by default once per calling line)
    # (torch's text, which programs may filter on)
    if nd == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                      "these cases.", UserWarning, stacklevel=user_stacklevel())
    elif nd != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                      "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=user_stacklevel())
    # a view even for 0-d/1-d (torch records PermuteBackward0 there too, never returns self)
    return Permute.apply(self, tuple(range(nd - 1, -1, -1)))


def _mT(self):
    if self._data.ndim == 0:
        # torch: deprecated, and the identity (the same tensor object)
        warnings.warn("Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                      "these cases.", UserWarning, stacklevel=user_stacklevel())
        return self
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor.")
    return Transpose.apply(self, self._data.ndim - 2, self._data.ndim - 1)


Tensor.T = property(_T, doc="All dims reversed (a view); PermuteBackward0 as in torch.")
Tensor.mT = property(_mT, doc="""The last two dims swapped (a view, TransposeBackward0): (*, m, n)
becomes (*, n, m). On a 0-d tensor it is the tensor itself, with torch's deprecation UserWarning;
on a 1-d tensor it raises RuntimeError, as torch.""")


class Squeeze(ArrayFunction, name="SqueezeBackward0", view=True):
    """Drop size-1 dims. derivatives.yaml: unsqueeze back to self.sizes()."""

    @staticmethod
    def forward(ctx, x, axes):
        ctx.in_shape = x.shape
        return x.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape), None


class SqueezeDim(Squeeze, name="SqueezeBackward1", view=True):
    pass


class SqueezeDims(Squeeze, name="SqueezeBackward2", view=True):
    pass


@op("squeeze")
def squeeze(input, dim=None):
    """Remove dims of size 1: all of them, or only those named by ``dim`` (an int, or a tuple /
    list of ints); a named dim whose size is not 1 is kept, without error.

    Result: a view of input (same dtype, shared storage) with those dims dropped;
    SqueezeBackward0 / 1 / 2 for no dim / an int / a tuple (derivatives.yaml squeeze:
    unsqueeze_to(grad, ...), i.e. grad reshaped back to the input's shape). A 0-d input accepts
    dim 0 or -1 and is returned as a 0-d view.

    Raises:
        IndexError: a dim outside [-ndim, ndim - 1] (ndim at least 1), as torch.
        RuntimeError: the same dim named twice in a tuple, also as ``(0, -2)`` on a 2-d input
            ("dim ... appears multiple times in the list of dims", as torch).
        TypeError: ``dim`` neither an int nor an iterable of ints (a float), as torch."""
    shp = input._data.shape
    if dim is None:
        return Squeeze.apply(input, tuple(i for i, s in enumerate(shp) if s == 1))
    ds = dims(dim, len(shp), "squeeze")
    F = SqueezeDim if isinstance(dim, (int, np.integer)) else SqueezeDims
    return F.apply(input, tuple(d for d in ds if shp[d] == 1))


class Unsqueeze(ArrayFunction, name="UnsqueezeBackward0", view=True):
    """Insert a size-1 dim. derivatives.yaml: grad.squeeze(dim)."""

    @staticmethod
    def forward(ctx, x, d):
        ctx.d = d
        out = np.expand_dims(x, d)
        # torch's strides (inferUnsqueezeGeometry): the new dim's is 1 at the end, else the next
        # dim's size times its stride, the other dims keeping theirs; NumPy's reshape picks its
        # own for size-1 dims
        st = x.itemsize if d == x.ndim else x.shape[d] * x.strides[d]
        strides = x.strides[:d] + (st,) + x.strides[d:]
        if out.strides != strides:
            out = np.lib.stride_tricks.as_strided(out, out.shape, strides)
        return out

    @staticmethod
    def backward(ctx, g):
        return g.squeeze(ctx.d), None


@op("unsqueeze")
def unsqueeze(input, dim):
    """Insert a dim of size 1 at ``dim`` (in range [-ndim-1, ndim])."""
    d = _wrap_dim(dim, input._data.ndim + 1, "unsqueeze")
    return Unsqueeze.apply(input, d)


class Expand(ArrayFunction, name="ExpandBackward0", view=True):
    """Broadcast to a larger shape without copying. derivatives.yaml: grad.sum_to_size(self)."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        if x.ndim == 0 and shape:
            # a 0-d x (the gradient of every sum and mean): the read-only zero-stride view made
            # directly, for a third of what np.broadcast_to costs
            out = np.ndarray(shape, x.dtype, x, 0, (0,) * len(shape))
            out.flags.writeable = False
            return out
        return np.broadcast_to(x, shape)

    @staticmethod
    def backward(ctx, g):
        return sum_to_size(g, ctx.in_shape), None


@op("expand")
def expand(input, *sizes):
    """Broadcast singleton dims to ``sizes`` (-1 keeps a dim); a read-only view, no copy."""
    sizes = _shape_arg(sizes, "expand")
    shp = input._data.shape
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(shp)})")
    lead = len(sizes) - len(shp)
    target = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension "
                                   f"(sizes {list(sizes)})")
            target.append(s)
            continue
        cur = shp[i - lead]
        if s == -1:
            s = cur
        if cur != s and cur != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(shp)}")
        target.append(s)
    return Expand.apply(input, tuple(target))


def _expand_as(self, other):
    return expand(self, other._data.shape)


Tensor.expand_as = _expand_as


@op("broadcast_to")
def broadcast_to(input, size):
    """``expand(input, size)``: a read-only broadcast view (RuntimeError when not broadcastable)."""
    return expand(input, tuple(size))


class SumToSize(ArrayFunction, name="SumBackward1"):
    """Sum a broadcast gradient back to ``shape``. Derivative: expand back (derivatives.yaml
    sum_to_size)."""

    @staticmethod
    def forward(ctx, x, shape):
        xs = ctx.in_shape = x.shape
        lead = x.ndim - len(shape)
        if lead and xs[lead:] == shape:
            # only leading dims to sum (a bias's gradient): the sum has the shape already
            return sum_array(x, tuple(range(lead)))
        axes = tuple(range(lead)) + tuple(
            lead + i for i, s in enumerate(shape) if s == 1 and xs[lead + i] != 1)
        out = sum_array(x, axes) if axes else x
        return out.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.expand(ctx.in_shape), None


def sum_to_size(input, *shape):
    """Sum ``input`` down to ``shape`` (which it must broadcast from)."""
    shape = _shape_arg(shape, "sum_to_size")
    if tuple(input._data.shape) == shape:
        return input
    return SumToSize.apply(input, shape)


Tensor.sum_to_size = sum_to_size


class Clone(ArrayFunction, name="CloneBackward0"):
    """A copy: C-contiguous, or laid out as memory format ``fmt`` asks. derivatives.yaml: grad."""

    @staticmethod
    def forward(ctx, x, fmt=None):
        if fmt is None:
            return np.array(x, copy=True, order="C")
        out = empty_in_format(x, x.dtype, fmt, "clone")
        np.copyto(out, x)
        return out

    @staticmethod
    def backward(ctx, g):
        return g, None


@op("clone")
def clone(input, *, memory_format=None):
    """A copy with its own storage; recorded as CloneBackward0, so gradients flow through it.
    ``memory_format`` (default ``preserve_format``): the copy keeps input's strides when input
    is dense, else the same order of dims without gaps; ``contiguous_format``: C order;
    ``channels_last`` / ``channels_last_3d``: channels innermost. TypeError for a memory_format
    that is not one; RuntimeError for a channels-last format of the wrong rank (4 / 5)."""
    fmt = check_format(memory_format, "clone")
    if fmt is contiguous_format or fmt is preserve_format and plain_c_order(input._data):
        return Clone.apply(input)
    return Clone.apply(input, fmt)


def contiguous(self, *, memory_format=contiguous_format):
    """self if already laid out as ``memory_format`` asks (C order by default;
    ``channels_last`` / ``channels_last_3d``: channels innermost), else a copy that is
    (CloneBackward0). RuntimeError for ``preserve_format`` on a tensor not in C order (as
    torch) and for a channels-last format of the wrong rank; TypeError for a memory_format that
    is not one."""
    fmt = check_format(memory_format, "contiguous", contiguous_format)
    if fmt is contiguous_format or fmt is preserve_format:
        if self._data.flags.c_contiguous:
            return self
        if fmt is contiguous_format:
            return Clone.apply(self)
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator "
                           "(contiguous: use contiguous_format, channels_last or "
                           "channels_last_3d; clone() preserves a layout)")
    if in_format(self._data, fmt, "contiguous"):
        return self
    return Clone.apply(self, fmt)


def is_contiguous(self, *, memory_format=contiguous_format):
    """Whether the elements lie in memory in ``memory_format``'s order without gaps (C order by
    default and for ``preserve_format``, as torch; a channels-last format asked of a tensor of
    another rank gives False, as torch). TypeError for a memory_format that is not one."""
    fmt = check_format(memory_format, "is_contiguous", contiguous_format)
    if fmt is contiguous_format or fmt is preserve_format:
        return self._data.flags.c_contiguous
    if self._data.ndim != len(_CHANNELS_LAST[fmt]):
        return False
    return in_format(self._data, fmt, "is_contiguous")


Tensor.is_contiguous = is_contiguous


Tensor.contiguous = contiguous


def _promote_all(arrays, op_name):
    if not arrays:
        raise RuntimeError(f"{op_name}(): expected a non-empty list of Tensors")
    target = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype != target:
            target = _dtype.promote_types(_dtype.from_numpy_dtype(target),
                                          _dtype.from_numpy_dtype(a.dtype)).np
    return [a if a.dtype == target else a.astype(target) for a in arrays]


class Cat(ArrayFunction, name="CatBackward0"):
    """Join along an existing dim. derivatives.yaml: the matching slice of grad for each input.
    Arguments: the tensors, then the (non-negative) dim."""

    @staticmethod
    def forward(ctx, *args):
        arrays, d = list(args[:-1]), args[-1]
        ctx.d = d
        ctx.sizes = [a.shape[d] if a.ndim else 0 for a in arrays]
        ctx.skipped = [a.ndim == 1 and a.shape[0] == 0 for a in arrays]
        kept = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)] or arrays[:1]
        return np.concatenate(_promote_all(kept, "cat"), axis=d)

    @staticmethod
    def backward(ctx, g):
        out = []
        start = 0
        d = ctx.d
        for n, skipped in zip(ctx.sizes, ctx.skipped):
            if skipped:   # an empty 1-D input: a fresh empty gradient, as torch (not a slice)
                out.append(_make(np.zeros((0,), g._data.dtype)))
                continue
            idx = (slice(None),) * d + (slice(start, start + n),)
            out.append(g[idx] if n or g._data.ndim > d else None)
            start += n
        return (*out, None)


@op("cat", method=False, aliases=("concat", "concatenate"))
def cat(tensors, dim=0):
    """Concatenate along ``dim``; every other dim must match (RuntimeError naming both sizes).
    1-D empty tensors are skipped, as in torch."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    ref = next((x for x in tensors if not (x._data.ndim == 1 and x._data.shape[0] == 0)), tensors[0])
    nd = ref._data.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _wrap_dim(dim, nd, "cat")
    for i, x in enumerate(tensors):
        if x._data.ndim == 1 and x._data.shape[0] == 0:
            continue
        if x._data.ndim != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and "
                               f"{x._data.ndim}")
        for k in range(nd):
            if k != d and x._data.shape[k] != ref._data.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref._data.shape[k]} but got size {x._data.shape[k]} for tensor number {i} in "
                    f"the list.")
    return Cat.apply(*tensors, d)


class Stack(ArrayFunction, name="StackBackward0"):
    """Join along a new dim. derivatives.yaml: grad.unbind(dim)."""

    @staticmethod
    def forward(ctx, *args):
        arrays, d = list(args[:-1]), args[-1]
        ctx.d = d
        return np.stack(_promote_all(arrays, "stack"), axis=d)

    @staticmethod
    def backward(ctx, g):
        n = g._data.shape[ctx.d]
        idx = (slice(None),) * ctx.d
        return (*(g[idx + (i,)] for i in range(n)), None)


@op("stack", method=False)
def stack(tensors, dim=0):
    """Stack equal-shaped tensors along a new dim ``dim`` (RuntimeError naming shapes otherwise)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shp = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != shp:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shp)} at "
                               f"entry 0 and {list(x._data.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shp) + 1, "stack")
    return Stack.apply(*tensors, d)


# ---- split / chunk / unbind: one multi-output view node ------------------------------------------
class Split(ArrayFunction, name="SplitBackward0"):
    """Pieces of sizes ``sizes`` along dim ``d``, each a slice of the input (made views of it by
    :func:`_as_views`). derivatives.yaml split_backward: the pieces' gradients (zeros for those
    that got none, materialized by the engine) concatenated along ``d`` (CatBackward0 under
    create_graph, as torch)."""

    @staticmethod
    def forward(ctx, x, sizes, d):
        ctx.d = d
        pre = (slice(None),) * d
        out = []
        start = 0
        for s in sizes:
            out.append(x[pre + (slice(start, start + s),)])
            start += s
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        return Cat.apply(*grads, ctx.d), None, None


class SplitWithSizes(Split, name="SplitWithSizesBackward0"):
    """:class:`Split` with explicit section sizes (torch's split_with_sizes)."""


class Unbind(ArrayFunction, name="UnbindBackward0"):
    """The slices at each index of dim ``d`` (views of the input, see :func:`_as_views`).
    derivatives.yaml unbind_backward: the gradients (zeros for those that got none) stacked along
    ``d`` (StackBackward0 under create_graph, as torch)."""

    @staticmethod
    def forward(ctx, x, d):
        ctx.d = d
        pre = (slice(None),) * d
        # (a trailing Ellipsis: NumPy gives a 0-d view, not a scalar copy)
        return tuple(x[pre + (i, Ellipsis)] for i in range(x.shape[d]))

    @staticmethod
    def backward(ctx, *grads):
        return Stack.apply(*grads, ctx.d), None


class MultiOutputView:
    """One step of the ``_view_chain`` of an output of split / chunk / unbind (and so of every
    view taken from one): ``(MultiOutputView, (index, output_nr, node_name))``.

    ``forward(ctx, x, index, ...)`` is the output's slice of ``x``. ``apply`` is what re-derives a
    view whose base was written in place since (``refresh_view``): torch cannot regenerate the
    history of an output of a multi-output view node, and raises instead, naming the view's own
    node, as here. ``multi_output_view`` marks the step for code that scans a view chain (an
    in-place write through a view of such an output is refused by torch too)."""

    multi_output_view = True

    @staticmethod
    def forward(ctx, x, index, output_nr, node_name, recorded):
        return x[index]

    @classmethod
    def apply(cls, x, index, output_nr, node_name, recorded):
        what = (f"Output {output_nr} of {_short(node_name)} is a view" if recorded else
                "A view was created in no_grad mode")
        raise RuntimeError(
            f"{what} and its base or another view of its base has been modified inplace"
            f"{'' if recorded else ' with grad mode enabled'}. This view is the output of a "
            f"function that returns multiple views. Such functions do not allow the output views "
            f"to be modified inplace. You should replace the inplace operation by an out-of-place "
            f"one. (tapegrad: .clone() the outputs that must survive the in-place write.)")


def _as_views(outs, input, node_name, index):
    """Make the outputs of a split / unbind node views of ``input``: they share its storage and
    version counter, ``_base`` is the root base, and each gets a ``_view_chain`` step
    (:class:`MultiOutputView`) plus ``_extra`` {"multi_output_view": node_name,
    "multi_output_index": i}, the mark an in-place write on them checks (torch refuses it). A
    view made without recording follows torch's rules for that (``_untracked_view``)."""
    untracked = not (_grad_state.record and input._requires_grad)
    for i, t in enumerate(outs):
        _share_version(t, MultiOutputView, (input, index(i), i, node_name, not untracked))
        if untracked:
            _untracked_view(t, input)
        ex = t._extra
        if ex is None:
            t._extra = {"multi_output_view": node_name, "multi_output_index": i}
        else:
            ex["multi_output_view"] = node_name
            ex["multi_output_index"] = i
    return outs


def _dim_arg(dim, fn):
    if isinstance(dim, Tensor) and dim._data.ndim == 0 and dim._data.dtype.kind in "iu":
        return int(dim._data)
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    return int(dim)


def _split_sizes(sizes):
    """torch's parsing of split_with_sizes' ``split_sizes``: a list or tuple of ints (0-d integer
    tensors count as ints)."""
    if not isinstance(sizes, (list, tuple)):
        mod = type(sizes).__module__
        name = type(sizes).__name__ if mod == "builtins" else f"{mod}.{type(sizes).__name__}"
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                        f"of ints, not {name}")
    out = []
    for k, s in enumerate(sizes):
        if isinstance(s, Tensor) and s._data.ndim == 0 and s._data.dtype.kind in "iu":
            s = int(s._data)
        elif isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be "
                            f"tuple of ints, but found element of type {type(s).__name__} at pos "
                            f"{k}")
        out.append(int(s))
    return out


def _split_int(tensor, s, dim):
    nd = tensor._data.ndim
    if nd == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if s < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
    d = _wrap_dim(dim, nd, "split")
    n = tensor._data.shape[d]
    if s == 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}")
    sizes = [min(s, n - i) for i in range(0, n, s)] if n else [0]
    return _split_apply(tensor, Split, sizes, d)


def _split_with_sizes(tensor, sizes, dim):
    nd = tensor._data.ndim
    if nd == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, nd, "split_with_sizes")
    n = tensor._data.shape[d]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={sizes}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes={sizes}")
    return _split_apply(tensor, SplitWithSizes, sizes, d)


def _split_apply(tensor, F, sizes, d):
    if not sizes:
        return ()
    outs = F.apply(tensor, tuple(sizes), d)
    starts = [0]
    for s in sizes:
        starts.append(starts[-1] + s)
    pre = (slice(None),) * d
    return _as_views(outs, tensor, F._backward_cls.__name__,
                     lambda i: pre + (slice(starts[i], starts[i + 1]),))


def _split_size_arg(split_size):
    if isinstance(split_size, Tensor) and split_size._data.size == 1 and \
            split_size._data.dtype.kind in "iuf":
        return int(split_size._data.reshape(()))
    return split_size


@op("split", method=False)
def split(tensor, split_size_or_sections, dim=0):
    """Split ``tensor`` along ``dim`` into pieces of ``split_size`` (an int: the last may be
    smaller) or of the given section sizes (a list or tuple of ints).

    Result: a tuple of views of ``tensor`` (shared storage and version counter), all outputs of
    one node, as torch: SplitBackward0 for an int, SplitWithSizesBackward0 for sizes, with
    ``output_nr`` 0..n-1. Its derivative concatenates the pieces' gradients (zeros for pieces
    that got none) along ``dim``. The pieces may not be modified in place, and one whose base (or
    a sibling) was modified in place since can no longer be used in a recorded op (RuntimeError,
    as torch). A size-0 dim gives one empty piece (for an int) or the given empty pieces.

    Raises:
        RuntimeError: a 0-d tensor; a negative split size or section; split size 0 for a
            non-empty dim; sections that do not sum to the dim's size; as torch.
        IndexError: ``dim`` out of range.
        TypeError: a split size that is neither an int nor a list / tuple of ints."""
    s = _split_size_arg(split_size_or_sections)
    dim = _dim_arg(dim, "split")
    if isinstance(s, int) and not isinstance(s, bool):
        return _split_int(tensor, s, dim)
    return _split_with_sizes(tensor, _split_sizes(s), dim)


def _split_method(self, split_size, dim=0):
    return split(self, split_size, dim)


_split_method.__doc__ = split.__doc__
op("split", namespace=False)(_split_method)


@op("chunk")
def chunk(input, chunks, dim=0):
    """Split into ``chunks`` nearly equal pieces along ``dim``: pieces of ceil(size / chunks)
    (so there may be fewer than ``chunks``, the last smaller), as ``split(input, that, dim)``
    (SplitBackward0); for a size-0 dim, ``chunks`` empty pieces (SplitWithSizesBackward0), as
    torch. Views of ``input``, see :func:`split`.

    Raises:
        RuntimeError: a 0-d input; ``chunks`` not positive.
        IndexError: ``dim`` out of range.
        TypeError: ``chunks`` or ``dim`` not an int."""
    if isinstance(chunks, Tensor) and chunks._data.ndim == 0 and chunks._data.dtype.kind in "iu":
        chunks = int(chunks._data)
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)):
        raise TypeError(f"chunk(): argument 'chunks' (position 1) must be int, not "
                        f"{type(chunks).__name__}")
    chunks = int(chunks)
    dim = _dim_arg(dim, "chunk")
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, nd, "chunk")
    n = input._data.shape[d]
    size = -(-n // chunks)
    if n == 0:
        return _split_apply(input, SplitWithSizes, [0] * chunks, d)
    return _split_int(input, size, d)


@op("unbind")
def unbind(input, dim=0):
    """The slices of ``input`` at each index of ``dim`` (a tuple of ``input.shape[dim]`` views,
    each without that dim; empty for a size-0 dim). All are outputs of one UnbindBackward0 node
    (``output_nr`` 0..n-1), whose derivative stacks their gradients (zeros for those that got
    none) along ``dim``; see :func:`split` for the in-place rules.

    Raises:
        IndexError: a 0-d input ("Dimension specified as 0 but tensor has no dimensions") or
            ``dim`` out of range.
        TypeError: ``dim`` not an int."""
    dim = _dim_arg(dim, "unbind")
    nd = input._data.ndim
    d = _wrap_dim(dim, nd, "unbind")
    if nd == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if not input._data.shape[d]:
        return ()
    outs = Unbind.apply(input, d)
    pre = (slice(None),) * d
    return _as_views(outs, input, "UnbindBackward0", lambda i: pre + (i, Ellipsis))


# ---- repeat, view_as, reshape_as, narrow ---------------------------------------------------------
class Repeat(ArrayFunction, name="RepeatBackward0"):
    """Tile the tensor ``reps`` times along each dim (leading reps add new dims).
    derivatives.yaml repeat_backward: grad viewed as (rep, size) pairs, summed over the reps."""

    @staticmethod
    def forward(ctx, x, reps):
        ctx.in_shape, ctx.reps = x.shape, reps
        return np.tile(x, reps) if x.size or not x.ndim else np.zeros(
            tuple(r * s for r, s in zip(reps, (1,) * (len(reps) - x.ndim) + x.shape)), x.dtype)

    @staticmethod
    def backward(ctx, g):
        shp, reps = ctx.in_shape, ctx.reps
        padded = (1,) * (len(reps) - len(shp)) + tuple(shp)
        inter = []
        for r, s in zip(reps, padded):
            inter += [r, s]
        summed = g.reshape(inter).sum(tuple(range(0, 2 * len(reps), 2))) if reps else g
        return summed.reshape(shp), None


def repeat(input, *sizes):
    """Tile ``input``: ``x.repeat(2, 3)`` repeats it twice along dim 0 and 3 times along dim 1.
    ``sizes`` are ints (or one tuple / list, or 0-d int tensors); more sizes than dims add
    leading dims of size 1 before tiling.

    Result: a new tensor (a copy) of input's dtype whose shape is sizes[i] * padded_shape[i],
    padded_shape being input's shape with leading 1s up to len(sizes); a size 0 gives an empty
    dim. Derivative (derivatives.yaml repeat: repeat_backward): grad viewed as (rep, size) pairs
    and summed over the reps (RepeatBackward0).

    Raises:
        TypeError: no sizes ('repeat() missing 1 required positional arguments: "repeats"'), or
            a size that is not an int (a float), as torch.
        RuntimeError: fewer sizes than input's dims; a negative size ("Trying to create tensor
            with negative dimension", as torch; torch's message names the size times the dim)."""
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = _shape_arg(sizes, "repeat")
    if len(reps) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(reps)}: "
                           f"{list(reps)}")
    return Repeat.apply(input, reps)


op("repeat", namespace=False)(repeat)


def view_as(self, other):
    """``self.view(other.shape)``."""
    return view(self, other._data.shape)


def reshape_as(self, other):
    """``self.reshape(other.shape)``."""
    return reshape(self, other._data.shape)


op("view_as", namespace=False)(view_as)
op("reshape_as", namespace=False)(reshape_as)


@op("narrow")
def narrow(input, dim, start, length):
    """``length`` elements of dim ``dim`` from ``start`` (an int or a 0-d tensor; negative counts
    from the end): ``input[..., start:start + length, ...]``.

    Result: a view of input (same dtype, shared storage) whose dim ``dim`` has size ``length``.
    Derivative (derivatives.yaml slice: slice_backward_wrapper): grad written into zeros of the
    input's shape at the slice (SliceBackward0).

    Raises:
        RuntimeError: a 0-d input ("narrow() cannot be applied to a 0-dim tensor."); a negative
            ``length``; ``start + length`` past the end of the dim; as torch.
        IndexError: ``dim`` outside [-ndim, ndim - 1]; ``start`` outside [-size, size], as
            torch."""
    from .indexing import BasicIndex
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, nd, "narrow")
    if isinstance(start, Tensor):
        start = start.item()
    start, length = int(start), int(length)
    size = input._data.shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    idx = (slice(None),) * d + (slice(start, start + length),)
    return BasicIndex.apply(input, idx)
