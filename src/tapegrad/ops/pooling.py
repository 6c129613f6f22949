"""Padding and average pooling: ``nn.functional.pad`` (constant, reflect, replicate, circular),
``avg_pool1d`` / ``avg_pool2d``, ``adaptive_avg_pool1d`` / ``adaptive_avg_pool2d`` and
``max_pool1d``.

Node names are torch's: ConstantPadNdBackward0, ReflectionPad{1,2,3}DBackward0,
ReplicationPad{1,2,3}DBackward0, AvgPool2DBackward0, AdaptiveAvgPool2DBackward0; circular
padding is torch's composite of slice copies (CopySlices), the 1-D pools are the 2-D ones between
``unsqueeze(-2)`` and ``squeeze(-2)`` (SqueezeBackward1), and an adaptive average pool to (1, 1)
is ``mean`` over the last two dims (MeanBackward1), all as torch records them.

Every op here is linear in its input, so each is one primitive whose gradient is a second
primitive (its adjoint), and the adjoint's gradient is the first again: any order of derivative
works. derivatives.yaml entries: constant_pad_nd (constant_pad_nd_backward: the gradient cropped,
i.e. padded by the negated pads), reflection_padNd / replication_padNd (their _backward, whose own
grad_output derivative is the padding again), avg_pool2d (avg_pool2d_backward, grad_output:
avg_pool2d again), _adaptive_avg_pool2d (_adaptive_avg_pool2d_backward, grad: the pool again).

Average pooling is separable: each output row averages a window of input rows with a divisor
that is a product of a row count and a column count (count_include_pad either way), so a pool is
``A_h @ x @ A_w.T`` with two small window matrices: two matrix products per direction and no
Python loop over pixels. Reflection/replication padding is a gather along each padded dim
(``np.ix_`` indices) and its adjoint one 0/1 matrix product per dim.
"""
from __future__ import annotations

import numpy as np

from .._dtype import scalar_name
from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import Tensor, _half_in_f32, _make
from .nn_ops import max_pool2d



def _check_tensor(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _int_seq(value, name, arg, pos):
    """A sequence of ints (TypeError naming the op otherwise, as torch's argument parser)."""
    if isinstance(value, (int, np.integer)) or not isinstance(value, (tuple, list, Tensor)):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    vals = []
    for i, v in enumerate(value):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                            f"but found element of type {type(v).__name__} at pos {i}")
        vals.append(int(v))
    return vals


# ---- constant padding ---------------------------------------------------------------------------
def _constant_pad(x, pads, value):
    """x with ``pads`` ((left, right) for the last dim, then the one before, ...) of ``value``
    added (negative entries crop)."""
    nd = x.ndim
    shape = list(x.shape)
    src, dst = [slice(None)] * nd, [slice(None)] * nd
    for i, (lo, hi) in enumerate(pads):
        d = nd - 1 - i
        n = x.shape[d]
        shape[d] = n + lo + hi
        keep = n - max(-lo, 0) - max(-hi, 0)
        src[d] = slice(max(-lo, 0), max(-lo, 0) + keep)
        dst[d] = slice(max(lo, 0), max(lo, 0) + keep)
    if x.dtype.kind == "b":
        value = bool(value)
    elif x.dtype.kind in "iu":
        value = int(value)
    out = np.full(shape, value, x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return out


class ConstantPadNd(ArrayFunction, name="ConstantPadNdBackward0"):
    """x (any shape) padded by ``pads`` ((left, right) pairs from the last dim backwards; negative
    entries crop) with ``value``. derivatives.yaml constant_pad_nd: constant_pad_nd_backward, the
    gradient padded by the negated pads (a crop), which is this op again."""

    @staticmethod
    def forward(ctx, x, pads, value):
        ctx.pads = pads
        return _constant_pad(x, pads, value)

    @staticmethod
    def backward(ctx, g):
        return ConstantPadNd.apply(g, tuple((-lo, -hi) for lo, hi in ctx.pads), 0), None, None


# ---- reflection / replication padding -----------------------------------------------------------
def _pad_index(n, lo, hi, mode):
    """Input position of each output position along one dim of size ``n`` padded by (lo, hi)."""
    j = np.arange(n + lo + hi) - lo
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    j = np.abs(j)
    return np.where(j > n - 1, 2 * (n - 1) - j, j)


def _gather(x, idxs):
    """x read at ``idxs`` (one index array per trailing dim)."""
    return x[(Ellipsis,) + np.ix_(*idxs)]


def _scatter(g, idxs, in_shape):
    """The adjoint of :func:`_gather`: g added back to the positions read (one 0/1 matrix
    product per padded dim)."""
    k = len(idxs)
    out = g
    for i, idx in enumerate(idxs):
        ax = g.ndim - k + i
        n = in_shape[ax]
        m = np.zeros((idx.size, n), g.dtype)
        m[np.arange(idx.size), idx] = 1
        out = np.moveaxis(np.moveaxis(out, ax, -1) @ m, -1, ax)
    return np.ascontiguousarray(out)


class _IndexPad(ArrayFunction):
    """Reflection / replication padding of the last k dims: a gather at per-dim indices.
    derivatives.yaml reflection_padNd / replication_padNd: the _backward op (scatter-add). The
    input is saved (version-checked, as torch saves self)."""

    _grad_cls = None

    @staticmethod
    def forward(ctx, x, idxs):
        ctx.idxs = idxs
        ctx.save_for_backward(x)
        return _gather(x, idxs)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return ctx._forward_cls._grad_cls.apply(g, x, ctx.idxs), None


class _IndexPadGrad(ArrayFunction):
    """The gradient of a reflection / replication pad of x: grad added back to the positions each
    output element was read from (x gives only the shape, as torch's self argument).
    derivatives.yaml reflection_padNd_backward / replication_padNd_backward: grad_output: the
    padding again; self: zeros."""

    _pad_cls = None

    @staticmethod
    def forward(ctx, g, x, idxs):
        ctx.idxs = idxs
        ctx.shape = x.shape
        return _scatter(g, idxs, x.shape)

    @staticmethod
    def backward(ctx, u):
        gu = ctx._forward_cls._pad_cls.apply(u, ctx.idxs) if ctx.needs(0) else None
        gx = _make(np.zeros(ctx.shape, u.dtype.np)) if ctx.needs(1) else None
        return gu, gx, None


_INDEX_PADS = {}
for _mode, _kind in (("reflect", "Reflection"), ("replicate", "Replication")):
    for _k in (1, 2, 3):
        _fwd = type(f"{_kind}Pad{_k}D", (_IndexPad,), {"__doc__": _IndexPad.__doc__},
                    name=f"{_kind}Pad{_k}DBackward0")
        _bwd = type(f"{_kind}Pad{_k}DGrad", (_IndexPadGrad,), {"__doc__": _IndexPadGrad.__doc__},
                    name=f"{_kind}Pad{_k}DBackwardBackward0")
        _fwd._grad_cls, _bwd._pad_cls = _bwd, _fwd
        _INDEX_PADS[_mode, _k] = _fwd
del _mode, _kind, _k, _fwd, _bwd

_SIZES_HELP = ("Supported combinations for non-constant padding:\n"
               "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
               "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
               "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _index_pad(input, pads, mode):
    xs = input._data.shape
    k = len(pads)
    if 0 in (xs[1:] if len(xs) == k + 2 else xs):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{list(xs)}")
    idxs = []
    for i, (lo, hi) in enumerate(reversed(pads)):     # outermost padded dim first
        d = len(xs) - k + i
        n = xs[d]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #{4 + 2 * (k - 1 - i)}: Padding size should be less "
                               f"than the corresponding input dimension, but got: padding "
                               f"({lo}, {hi}) at dimension {d} of input {list(xs)} (pad "
                               f"mode='reflect')")
        if n + lo + hi < 1:
            raise RuntimeError(f"input (size {n} at dimension {d}) is too small. Calculated "
                               f"output size: {n + lo + hi} (pad mode='{mode}', padding "
                               f"({lo}, {hi}))")
        idxs.append(_pad_index(n, lo, hi, mode))
    return _INDEX_PADS[mode, k].apply(input, tuple(idxs))


def _circular_pad(input, pads):
    """torch's composite: an empty tensor, the input copied in, then each padded dim's wrapped
    borders copied from the opposite side (CopySlices nodes)."""
    xs = input._data.shape
    k = len(pads)
    nd = len(xs)
    shape = list(xs)
    for i, (lo, hi) in enumerate(pads):
        d = nd - 1 - i
        n = xs[d]
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        shape[d] = n + lo + hi
        if shape[d] <= 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
    out = _make(np.empty(shape, input._data.dtype))
    src, dst = [slice(None)] * nd, [slice(None)] * nd
    for i, (lo, hi) in enumerate(pads):
        d = nd - 1 - i
        keep = xs[d] - max(-lo, 0) - max(-hi, 0)
        src[d] = slice(max(-lo, 0), max(-lo, 0) + keep)
        dst[d] = slice(max(lo, 0), max(lo, 0) + keep)
    out[tuple(dst)] = input[tuple(src)]
    for i in range(k):               # the outermost padded dim first, as torch
        d = nd - k + i
        lo, hi = pads[k - 1 - i]
        m = shape[d]
        if lo > 0:
            a = [slice(None)] * nd
            b = [slice(None)] * nd
            a[d] = slice(0, lo)
            b[d] = slice(m - lo - max(hi, 0), m - max(hi, 0))
            out[tuple(a)] = out[tuple(b)]
        if hi > 0:
            a = [slice(None)] * nd
            b = [slice(None)] * nd
            a[d] = slice(m - hi, m)
            b[d] = slice(max(lo, 0), max(lo, 0) + hi)
            out[tuple(a)] = out[tuple(b)]
    return out


@op("pad", functional=True, method=False, namespace=False)
def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims of ``input`` (torch.nn.functional.pad).

    ``pad``: (left, right) for the last dim, then (top, bottom) for the one before, ...; ints,
    negative entries crop. ``mode``: 'constant' (any rank, any dtype; ``value`` default 0, cast
    to the input's dtype: truncated for integers), 'reflect' (mirror without repeating the edge;
    each pad must be smaller than its dim), 'replicate' (repeat the edge) or 'circular' (wrap
    around; each pad at most its dim). The non-constant modes take 2 entries for (N, C, W) or
    (C, W) input, 4 for (N, C, H, W) / (C, H, W), 6 for (N, C, D, H, W) / (C, D, H, W).
    The result has the input's dtype; it records ConstantPadNdBackward0,
    ReflectionPad{1,2,3}DBackward0, ReplicationPad{1,2,3}DBackward0, or CopySlices (circular),
    as torch.

    Raises:
        TypeError: ``pad`` not a sequence of ints.
        RuntimeError: odd ``len(pad)``, more pads than dims, a negative resulting size, a value
            given with a non-constant mode, a reflect pad not smaller than its dim, a circular pad
            larger than its dim, an empty non-batch dim with reflect / replicate.
        NotImplementedError: an unknown mode, or a pad length the non-constant mode does not
            support for the input's rank.
    """
    _check_tensor(input, "pad")
    p = _int_seq(pad, "pad", "pad", 2)
    xs = input._data.shape
    if len(p) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(p) // 2 > len(xs):
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(p)} and input of dimension "
                           f"{len(xs)}")
    pairs = tuple((p[2 * i], p[2 * i + 1]) for i in range(len(p) // 2))
    if mode == "constant":
        for i, (lo, hi) in enumerate(pairs):
            d = len(xs) - 1 - i
            n = xs[d]
            if n + lo + hi < 0 or n - max(-lo, 0) - max(-hi, 0) < 0:
                raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} "
                                   f"resulted in a negative output size, which is invalid. Check "
                                   f"dimension {d} of your input. (pad, mode='constant')")
        return ConstantPadNd.apply(input, pairs, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pairs)
    if k not in (1, 2, 3) or len(xs) not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(p)} is not supported for {len(xs)}D input "
                                  f"tensor.\n{_SIZES_HELP}")
    if mode in ("reflect", "replicate"):
        return _index_pad(input, pairs, mode)
    if mode == "circular":
        return _circular_pad(input, pairs)
    raise NotImplementedError(f"Unrecognised padding mode {mode}")


# ---- average pooling ----------------------------------------------------------------------------
class _SeparablePool(ArrayFunction):
    """``a @ x @ b.T`` over the last two dims of x (..., H, W), with window matrices a (Ho, H)
    and b (Wo, W): an average pool. x is saved (version-checked, as torch saves self); the
    gradient is the same product with the transposed matrices (``_grad_cls``)."""

    _grad_cls = None

    @staticmethod
    def forward(ctx, x, a, b):
        ctx.mats = (a, b)
        ctx.save_for_backward(x)
        return _sep(x, a, b)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        a, b = ctx.mats
        return ctx._forward_cls._grad_cls.apply(g, x, a.T, b.T), None, None


class _SeparablePoolGrad(ArrayFunction):
    """A pool's input gradient ``a @ g @ b.T`` (a, b: the pool's transposed window matrices);
    x gives only the shape, as torch's self argument. Its gradient: grad: the pool again; x:
    zeros."""

    _grad_cls = None

    @staticmethod
    def forward(ctx, g, x, a, b):
        ctx.mats = (a, b)
        ctx.shape = x.shape
        return _sep(g, a, b)

    @staticmethod
    def backward(ctx, u):
        a, b = ctx.mats
        gu = ctx._forward_cls._grad_cls.apply(u, a.T, b.T) if ctx.needs(0) else None
        gx = _make(np.zeros(ctx.shape, u.dtype.np)) if ctx.needs(1) else None
        return gu, gx, None, None


def _sep(x, a, b):
    """``a @ x @ b.T`` in x's dtype (float16 computed in float32, rounded once)."""
    def prod(x):
        return np.matmul(a.astype(x.dtype, copy=False),
                         np.matmul(x, b.astype(x.dtype, copy=False).T))
    return _half_in_f32(prod, x)


class AvgPool2D(_SeparablePool, name="AvgPool2DBackward0"):
    """avg_pool2d of (N, C, H, W) or (C, H, W): ``a @ x @ b.T`` with the window matrices (divisors
    folded in). derivatives.yaml avg_pool2d: avg_pool2d_backward (the transposed products)."""


class AvgPool2DGrad(_SeparablePoolGrad, name="AvgPool2DBackwardBackward0"):
    """avg_pool2d's input gradient ``a.T @ g @ b``. derivatives.yaml avg_pool2d_backward:
    grad_output: avg_pool2d(grad) (AvgPool2D again)."""


class AdaptiveAvgPool2D(_SeparablePool, name="AdaptiveAvgPool2DBackward0"):
    """adaptive_avg_pool2d as ``a @ x @ b.T`` with the adaptive window matrices.
    derivatives.yaml _adaptive_avg_pool2d: _adaptive_avg_pool2d_backward."""


class AdaptiveAvgPool2DGrad(_SeparablePoolGrad, name="AdaptiveAvgPool2DBackwardBackward0"):
    """adaptive_avg_pool2d's input gradient. derivatives.yaml _adaptive_avg_pool2d_backward:
    grad: _adaptive_avg_pool2d(grad) again."""


AvgPool2D._grad_cls, AvgPool2DGrad._grad_cls = AvgPool2DGrad, AvgPool2D
AdaptiveAvgPool2D._grad_cls, AdaptiveAvgPool2DGrad._grad_cls = AdaptiveAvgPool2DGrad, \
    AdaptiveAvgPool2D


def _pool_out(n, k, s, p, ceil_mode):
    """torch's pooling_output_shape (dilation 1)."""
    o = (n + 2 * p - k + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def _avg_windows(n, o, k, s, p, count_include_pad):
    """0/1 window matrix (o, n) and each window's divisor (o,)."""
    start = np.arange(o) * s - p
    end = np.minimum(start + k, n + p)
    size = end - start
    sc, ec = np.maximum(start, 0), np.minimum(end, n)
    r = np.arange(n)
    m = (r >= sc[:, None]) & (r < ec[:, None])
    return m, (size if count_include_pad else np.maximum(ec - sc, 1))


def _pool_arg(value, what, name, allow_empty=False):
    """An int or 1-2 ints -> a pair (torch's avg_pool2d message otherwise)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value), int(value)
    vals = list(value)
    if len(vals) == 1:
        return int(vals[0]), int(vals[0])
    if len(vals) == 2:
        return int(vals[0]), int(vals[1])
    omitted = "be omitted, " if allow_empty else ""
    raise RuntimeError(f"{name}: {what} must either {omitted}a single int, or a tuple of two ints")


@op("avg_pool2d", functional=True, method=False, namespace=False)
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling (torch.nn.functional.avg_pool2d).

    Shapes: ``input`` (N, C, H, W) or (C, H, W), floating (float16 computed in float32) or
    integer (integer result, the window sum divided with truncation, as torch);
    ``kernel_size``, ``stride`` (default ``kernel_size``) and ``padding`` an int or a pair.
    Output (N, C, Ho, Wo), Ho = floor((H + 2 padding - kh) / stride) + 1 (ceil with
    ``ceil_mode``, dropping a last window that would start in the right padding). Each window's
    divisor: ``divisor_override`` if given, else its size clipped to the padded input
    (``count_include_pad``) or to the input. Records AvgPool2DBackward0 (derivatives.yaml
    avg_pool2d), differentiable again (AvgPool2DBackwardBackward0).

    Raises:
        IndexError: input with fewer than 3 dims (as torch).
        RuntimeError: input of more than 4 dims or with an empty non-batch dim; kernel_size /
            stride / padding not 1 or 2 ints; kernel_size < 1; stride 0; padding negative or
            more than half the kernel; divisor_override 0; an output size below 1.
        NotImplementedError: bool input.
    """
    _check_tensor(input, "avg_pool2d")
    k = _pool_arg(kernel_size, "kernel_size", "avg_pool2d")
    if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0):
        s = k
    else:
        s = _pool_arg(stride, "stride", "avg_pool2d", allow_empty=True)
    p = _pool_arg(padding, "padding", "avg_pool2d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    xs = input._data.shape
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: "
                           f"{k[1]}")
    if min(s) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(p) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p[0] if p[0] == p[1] else list(p)}, kernel_size="
                           f"{k[0] if k[0] == k[1] else list(k)} and dilation=1")
    if len(xs) < 3:    # (torch reads dim -3 first)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(len(xs), 1)}, "
                         f"{max(len(xs), 1) - 1}], but got -3) (avg_pool2d expects (N, C, H, W) "
                         f"or (C, H, W) input, got {list(xs)})")
    if len(xs) not in (3, 4) or any(d == 0 for d in xs[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(xs)}")
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"avg_pool2d\" not implemented for 'Bool'")
    h, w = xs[-2:]
    ho, wo = _pool_out(h, k[0], s[0], p[0], ceil_mode), _pool_out(w, k[1], s[1], p[1], ceil_mode)
    if ho < 1 or wo < 1:
        raise RuntimeError(f"Given input size: ({xs[-3]}x{h}x{w}). Calculated output size: "
                           f"({xs[-3]}x{ho}x{wo}). Output size is too small")
    mh, dh = _avg_windows(h, ho, k[0], s[0], p[0], count_include_pad)
    mw, dw = _avg_windows(w, wo, k[1], s[1], p[1], count_include_pad)
    x = input._data
    if x.dtype.kind in "iu":   # integer sums divided with truncation, no gradient
        tot = np.matmul(mh.astype(np.int64), np.matmul(x.astype(np.int64), mw.T.astype(np.int64)))
        div = divisor_override if divisor_override is not None else np.outer(dh, dw)
        q = np.abs(tot) // np.abs(div) * np.sign(tot) * np.sign(div)
        return _make(q.astype(x.dtype))
    if divisor_override is not None:
        a = mh / float(divisor_override)
        b = mw.astype(np.float64)
    else:
        a, b = mh / dh[:, None], mw / dw[:, None]
    return AvgPool2D.apply(input, a, b)


@op("avg_pool1d", functional=True, method=False, namespace=False)
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling of (N, C, L) or (C, L) input (torch.nn.functional.avg_pool1d):
    ``kernel_size``, ``stride`` (default ``kernel_size``) and ``padding`` an int or one int;
    output (N, C, Lo) as :func:`avg_pool2d` computes it. As torch, this is avg_pool2d of
    ``input.unsqueeze(-2)`` with a (1, k) kernel, squeezed back: SqueezeBackward1 on top of
    AvgPool2DBackward0.

    Raises RuntimeError for input not 2-D/3-D, a kernel_size / stride / padding of more than
    one int, and avg_pool2d's errors (with the 2-D sizes in the message, as torch)."""
    _check_tensor(input, "avg_pool1d")
    nd = input._data.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for avg_pool1d)")
    k = _one(kernel_size, "avg_pool1d", "kernel_size")
    s = k if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0) \
        else _one(stride, "avg_pool1d", "stride")
    p = _one(padding, "avg_pool1d", "padding")
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return out.squeeze(-2)


def _one(value, name, arg):
    """An int or a one-int sequence -> the int (torch's 'should contain one int' otherwise)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if value is None:
        raise TypeError(f"{name}(): argument '{arg}' must be tuple of ints, not NoneType")
    vals = list(value)
    if len(vals) != 1:
        raise RuntimeError(f"{name}() argument '{arg}' should contain one int (got {len(vals)})")
    return int(vals[0])


def _adaptive_matrix(n, o):
    """(o, n) matrix averaging torch's adaptive windows [floor(i n / o), ceil((i + 1) n / o))."""
    i = np.arange(o)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    r = np.arange(n)
    m = (r >= start[:, None]) & (r < end[:, None])
    return m / np.maximum(end - start, 1)[:, None]


@op("adaptive_avg_pool2d", functional=True, method=False, namespace=False)
def adaptive_avg_pool2d(input, output_size):
    """Adaptive 2-D average pooling (torch.nn.functional.adaptive_avg_pool2d).

    ``input`` (N, C, H, W) or (C, H, W), floating (float16 computed in float32);
    ``output_size`` an int or a pair whose None entries keep the input's size. Output window i
    of a dim of size n averages input positions [floor(i n / Ho), ceil((i + 1) n / Ho)). Records
    AdaptiveAvgPool2DBackward0 (derivatives.yaml _adaptive_avg_pool2d), differentiable again; an
    output of (1, 1) is ``input.mean((-1, -2), keepdim=True)`` (MeanBackward1), as torch.

    Raises:
        RuntimeError: input not 3-D/4-D, an empty non-batch dim, output_size not 1 or 2
            entries, a negative output size.
        NotImplementedError: integer or bool input.
    """
    _check_tensor(input, "adaptive_avg_pool2d")
    xs = input._data.shape
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        osz = [output_size, output_size]
    else:
        osz = list(output_size)
        if len(osz) == 1:
            osz = osz * 2
    if len(osz) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if len(xs) not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(xs)}")
    for d in range(1 if len(xs) == 4 else 0, len(xs)):
        if xs[d] == 0:
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(xs)} with "
                               f"dimension {d} being empty")
    oh, ow = (xs[-2] if osz[0] is None else int(osz[0])), (xs[-1] if osz[1] is None
                                                           else int(osz[1]))
    if oh < 0 or ow < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{{oh}, {ow}}}")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for "
                                  f"'{scalar_name(input._data.dtype)}'")
    if (oh, ow) == (1, 1):
        return input.mean((-1, -2), keepdim=True)
    return AdaptiveAvgPool2D.apply(input, _adaptive_matrix(xs[-2], oh),
                                   _adaptive_matrix(xs[-1], ow))


@op("adaptive_avg_pool1d", functional=True, method=False, namespace=False)
def adaptive_avg_pool1d(input, output_size):
    """Adaptive 1-D average pooling of (N, C, L) or (C, L) input to ``output_size`` (an int or one
    int): adaptive_avg_pool2d of ``input.unsqueeze(-2)`` to (1, output_size), squeezed back
    (SqueezeBackward1), as torch.

    Raises TypeError for output_size None, RuntimeError for input not 2-D/3-D or output_size of
    more than one int, and adaptive_avg_pool2d's errors."""
    _check_tensor(input, "adaptive_avg_pool1d")
    nd = input._data.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {nd}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for "
                           f"adaptive_avg_pool1d)")
    o = _one(output_size, "adaptive_avg_pool1d", "output_size")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


@op("max_pool1d", functional=True, method=False, namespace=False)
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling of (N, C, L) or (C, L) input (torch.nn.functional.max_pool1d): max_pool2d
    of ``input.unsqueeze(-2)`` with a (1, k) kernel, squeezed back (SqueezeBackward1 over
    MaxPool2DWithIndicesBackward0, as torch records it for an input that requires grad); with
    ``return_indices`` also the int64 positions of the maxima along L.

    Raises RuntimeError for input not 2-D/3-D (or empty along C or L), a kernel_size / stride /
    padding of more than one int, and max_pool2d's errors; NotImplementedError for dilation != 1
    or ceil_mode=True (as tapegrad's max_pool2d)."""
    _check_tensor(input, "max_pool1d")
    xs = input._data.shape
    if len(xs) not in (2, 3) or any(d == 0 for d in xs[-2:]):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(xs)}")
    k = _one(kernel_size, "max_pool1d", "kernel_size")
    s = k if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0) \
        else _one(stride, "max_pool1d", "stride")
    p = _one(padding, "max_pool1d", "padding")
    d = _one(dilation, "max_pool1d", "dilation")
    out = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                     return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


__all__ = ["pad", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "max_pool1d"]
