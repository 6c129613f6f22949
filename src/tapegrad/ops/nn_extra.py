"""More neural-network ops: gelu, dropout, one_hot, binary cross-entropy (on probabilities and on
logits). (cross_entropy, with its label smoothing, nll_loss and mse_loss are in nn_ops.py, as are
the reduction helpers shared by every loss.)

Derivatives (derivatives.yaml): gelu_backward (exact erf form, or the tanh approximation);
binary_cross_entropy_backward: grad * (x - y) / max(x (1 - x), 1e-12) * weight, and for the
target -logit(x) * grad * weight; binary_cross_entropy_with_logits_backward:
grad * ((pos_weight y + 1 - y) sigmoid(x) - pos_weight y) * weight, and for the target
grad * (log_sigmoid(-x) - pos_weight log_sigmoid(x)) * weight ('mean' divides by numel).
dropout is ``input * mask / (1 - p)`` (MulBackward0, as torch on the CPU).
"""
from __future__ import annotations

import math

import numpy as np

from .._dtype import scalar_name
from .._tensor import _make
from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import broadcast_error
from .nn_ops import _reduce_array, _reduction
from .pointwise import Mul, _erf_array, clamp, erf, exp, log, sigmoid, tanh

_SQRT1_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_K = math.sqrt(2.0 / math.pi)
_C = 0.044715


# ---- gelu ---------------------------------------------------------------------------------------
def _gelu_d1_array(x, approximate):
    if approximate == "tanh":
        t = np.tanh(_K * (x + _C * x * x * x))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * (_K * (1 + 3 * _C * x * x))
    cdf = 0.5 * (1 + _erf_array(x * _SQRT1_2))
    return cdf + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _gelu_d1(x, approximate):
    """gelu'(x) with Tensor ops (differentiable)."""
    if approximate == "tanh":
        t = tanh((x + x * x * x * _C) * _K)
        return (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * ((x * x * (3 * _C) + 1) * _K)
    return (erf(x * _SQRT1_2) + 1) * 0.5 + x * exp(x * x * -0.5) * _INV_SQRT_2PI


def _gelu_d2(x, approximate):
    """gelu''(x) with Tensor ops."""
    if approximate == "tanh":
        t = tanh((x + x * x * x * _C) * _K)
        du = (x * x * (3 * _C) + 1) * _K
        d2u = x * (6 * _K * _C)
        return (1 - t * t) * (du + x * 0.5 * (d2u - t * du * du * 2))
    return exp(x * x * -0.5) * _INV_SQRT_2PI * (2 - x * x)


def _in_float32(a):
    """A float16 array as float32 (torch computes half gelu and its gradient in float32 and
    rounds once); other arrays as they are."""
    return a.astype(np.float32) if a.dtype == np.float16 else a


class Gelu(ArrayFunction, name="GeluBackward0"):
    """x * Phi(x) (Phi: the standard normal CDF, via erf), or its tanh approximation.
    derivatives.yaml gelu_backward."""

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.approximate = approximate
        ctx.save_for_backward(x)
        dt = x.dtype
        x = _in_float32(x)
        if approximate == "tanh":
            inner = _K * (x + _C * x * x * x)
            return (0.5 * x * (1 + np.tanh(inner))).astype(dt, copy=False)
        return (x * (0.5 * (1 + _erf_array(x * x.dtype.type(_SQRT1_2))))).astype(dt, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return GeluGrad.apply(g, x, ctx.approximate), None


class GeluGrad(ArrayFunction, name="GeluBackwardBackward0"):
    """gelu_backward(grad, x) = grad * gelu'(x) as one primitive. derivatives.yaml
    gelu_backward: grad_output: grad * gelu'(x); self: grad * grad_output * gelu''(x)."""

    @staticmethod
    def forward(ctx, g, x, approximate):
        ctx.approximate = approximate
        ctx.save_for_backward(g, x)
        return (_in_float32(g) * _gelu_d1_array(_in_float32(x), approximate)).astype(x.dtype,
                                                                                    copy=False)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        a = ctx.approximate
        return (gg * _gelu_d1(x, a) if ctx.needs(0) else None,
                gg * g * _gelu_d2(x, a) if ctx.needs(1) else None, None)


@op("gelu", functional=True, method=False, namespace=False)
def gelu(input, approximate="none"):
    """Gaussian error linear unit: input * Phi(input) with the exact normal CDF (erf), or the
    tanh approximation with ``approximate='tanh'``. RuntimeError for another ``approximate``,
    NotImplementedError for a non-floating input (as torch)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f"\"GeluKernelImpl\" not implemented for "
                                  f"'{scalar_name(input._data.dtype)}'")
    return Gelu.apply(input, approximate)


# ---- dropout ------------------------------------------------------------------------------------
@op("dropout", functional=True, method=False, namespace=False)
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p), the mask drawn
    from tapegrad's default generator (so ``manual_seed`` makes it reproducible, though not
    equal to torch's draws).

    The result has the input's shape and dtype. Returns ``input`` itself (no new node) when not
    ``training``, when p == 0 or for an empty input, as torch; p == 1 gives zeros. Otherwise it
    is ``input * mask / (1 - p)`` recorded as MulBackward0 (as torch on the CPU), so the
    derivative is derivatives.yaml mul.Tensor's: grad * mask / (1 - p). ``inplace=True`` multiplies
    ``input`` in place (``mul_``, bumping its version; RuntimeError where an in-place op is
    not allowed, e.g. on a leaf that requires grad) and returns it. ValueError for p outside
    [0, 1]; RuntimeError for an integer or bool input with 0 < p < 1 (its scaled values would
    not be whole), as torch."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input._data.size == 0:
        return input
    dt = input._data.dtype
    if p == 1:
        noise = np.zeros((), dt)
    else:
        if dt.kind != "f":
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{scalar_name(dt)}")
        from .._factories import _np_generator
        keep = _np_generator(None).random(input._data.shape) < (1.0 - p)
        noise = keep.astype(dt)
        noise /= dt.type(1.0 - p)
    if inplace:
        return input.mul_(_make(noise))
    return Mul.apply(input, _make(noise))


# ---- one_hot ------------------------------------------------------------------------------------
@op("one_hot", functional=True, method=False, namespace=False)
def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding: shape ``tensor.shape + (num_classes,)``; ``num_classes=-1`` uses
    max + 1. RuntimeError (as torch) for a non-int64 input, negative classes, classes >=
    num_classes, or an empty input without num_classes."""
    idx = tensor._data
    if idx.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size:
        if idx.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if idx.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return _make((idx[..., None] == np.arange(num_classes)).astype(np.int64))


# ---- binary cross-entropy -----------------------------------------------------------------------
def _weighted(grad, w, scale):
    """``grad * w * scale`` for a loss's backward, leaving out the product with an absent weight
    (``w`` None) and with ``scale == 1`` ('sum' and 'none'), so that no needless node is recorded
    under create_graph."""
    if w is not None:
        grad = grad * w
    return grad if scale == 1.0 else grad * scale


def _loss_weight(weight, input, op_name):
    """The array of a loss's ``weight`` (or ``pos_weight``) Tensor, None for None. As torch, it must
    broadcast to the input's shape without growing it: RuntimeError otherwise."""
    if weight is None:
        return None
    shape = input._data.shape
    try:
        full = np.broadcast_shapes(weight._data.shape, shape)
    except ValueError:
        raise broadcast_error(op_name, input, weight) from None
    if full != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(full)}")
    return weight._data


class BinaryCrossEntropy(ArrayFunction, name="BinaryCrossEntropyBackward0"):
    """-w (y log x + (1 - y) log(1 - x)) with each log clamped at -100, as torch. Arguments:
    probabilities x, targets y (same shape), weight array or None, reduction."""

    @staticmethod
    def forward(ctx, x, y, w, reduction):
        if ((x < 0) | (x > 1)).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
        if ((y < 0) | (y > 1)).any():
            raise RuntimeError("all elements of target should be between 0 and 1")
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = (y - 1) * np.maximum(np.log1p(-x), -100) - y * np.maximum(np.log(x), -100)
        if w is not None:
            loss = loss * w
        ctx.w, ctx.reduction, ctx.n = w, reduction, x.size
        ctx.save_for_backward(x, y)
        return _reduce_array(loss.astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        w = None if ctx.w is None else _make(ctx.w)
        scale = 1.0 / ctx.n if ctx.reduction == "mean" else 1.0
        gx = gy = None
        if ctx.needs(0):
            gx = _weighted(g * (x - y) / clamp((1 - x) * x, min=1e-12), w, scale)
        if ctx.needs(1):
            gy = _weighted(-g * log(x / (1 - x)), w, scale)
        return gx, gy, None, None


@op("binary_cross_entropy", functional=True, method=False, namespace=False)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross-entropy ``-weight * (target log(input) + (1 - target) log(1 - input))``
    between probabilities ``input`` (in [0, 1]) and ``target`` of the same shape, each log
    clamped at -100 (so p = 0 or 1 gives a finite loss), as torch.

    ``weight`` (optional) must broadcast to the input's shape. The result has the input's dtype
    and, by ``reduction``: 'none' the input's shape, 'mean' (the mean over all elements) and
    'sum' a 0-dim tensor; the legacy ``size_average``/``reduce`` flags, when given, choose the
    reduction instead (with torch's deprecation warning). Records BinaryCrossEntropyBackward0,
    whose derivatives follow derivatives.yaml binary_cross_entropy_backward (input:
    grad * (input - target) / max(input (1 - input), 1e-12) * weight) and
    binary_cross_entropy_target_backward (target: -grad * logit(input) * weight), divided by the
    number of elements for 'mean'; they are built of differentiable ops, so create_graph gives
    higher derivatives.

    The legacy flags follow torch's _Reduction.legacy_get_string: when either is not None,
    reduce=False gives 'none', else size_average=False 'sum', else 'mean' (a None flag counts as
    True), with torch's deprecation UserWarning, and ``reduction`` is then ignored. torch's
    deprecated reduction 'elementwise_mean' is read as 'mean', with its UserWarning.

    Raises, in torch's order: ValueError for an unknown reduction (when no legacy flag is given)
    or a target of another shape; RuntimeError for a weight that does not broadcast to the
    input's shape; RuntimeError ("Found dtype ... but expected ...") for a target whose dtype is
    not the input's (torch does not promote here: an integer or bool input with a floating
    target lands here too); NotImplementedError for an integer or bool input (with a target of
    its dtype), which is not probabilities; RuntimeError for input or target values outside
    [0, 1]."""
    reduction = _reduction(size_average, reduce, reduction)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         f"size.")
    w = _loss_weight(weight, input, "binary_cross_entropy")
    if w is not None:
        w = np.broadcast_to(w, input._data.shape)
    xd, yd = input._data.dtype, target._data.dtype
    if yd != xd:
        raise RuntimeError(f"Found dtype {scalar_name(yd)} but expected {scalar_name(xd)}: "
                           f"binary_cross_entropy needs a target of the input's dtype "
                           f"({input.dtype}, got {target.dtype}); convert it with "
                           f"target.to(input.dtype)")
    if xd.kind != "f":
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for "
                                  f"'{scalar_name(xd)}': the input must be floating-point "
                                  f"probabilities in [0, 1] (got {input.dtype}); convert input "
                                  f"and target with .float()")
    return BinaryCrossEntropy.apply(input, target, w, reduction)


def _log_sigmoid(z):
    """log(sigmoid(z)) computed stably with Tensor ops: min(z, 0) - log1p(exp(-|z|))."""
    from .pointwise import abs as _abs, log1p
    return clamp(z, max=0.0) - log1p(exp(-_abs(z)))


class BinaryCrossEntropyWithLogits(ArrayFunction, name="BinaryCrossEntropyWithLogitsBackward0"):
    """Binary cross-entropy of logits, stable for any magnitude:
    (1 - y) x + (1 + (pw - 1) y) (log(1 + e^-|x|) + max(-x, 0)), times weight. Arguments:
    logits x, targets y, weight array or None, pos_weight array or None, reduction."""

    @staticmethod
    def forward(ctx, x, y, w, pw, reduction):
        softplus_neg = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)  # -log(sigmoid(x))
        if pw is not None:
            loss = (1 - y) * x + ((pw - 1) * y + 1) * softplus_neg
        else:
            loss = (1 - y) * x + softplus_neg
        if w is not None:
            loss = loss * w
        ctx.w, ctx.pw, ctx.reduction, ctx.n = w, pw, reduction, x.size
        ctx.save_for_backward(x, y)
        # the target's dtype, as torch (which computes (1 - target).mul_(input) in place)
        return _reduce_array(np.asarray(loss).astype(y.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        w = None if ctx.w is None else _make(ctx.w)
        pw = None if ctx.pw is None else _make(ctx.pw)
        scale = 1.0 / ctx.n if ctx.reduction == "mean" else 1.0
        gx = gy = None
        if ctx.needs(0):
            s = sigmoid(x)
            if pw is not None:
                t = pw * y
                gx = g * ((t + 1 - y) * s - t)
            else:
                gx = g * (s - y)
            gx = _weighted(gx, w, scale)
        if ctx.needs(1):
            if pw is not None:
                gy = g * (_log_sigmoid(-x) - _log_sigmoid(x) * pw)
            else:
                gy = -g * x
            gy = _weighted(gy, w, scale)
        return gx, gy, None, None, None


@op("binary_cross_entropy_with_logits", functional=True, method=False, namespace=False)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross-entropy of raw logits ``input`` against ``target`` of the same shape,
    ``-weight * (pos_weight * target * log_sigmoid(input) + (1 - target) * log_sigmoid(-input))``,
    computed stably (logits in the thousands give finite losses).

    ``weight`` and ``pos_weight`` (the positive class's weight, typically of shape (C,) for the
    last dim) are optional and must broadcast to the input's shape. The result has the
    target's dtype (as torch, which computes ``(1 - target) * input`` in place in it: a float16
    target with float64 logits gives a float16 loss; the gradients have their tensors' dtypes)
    and, by ``reduction``: 'none' the input's shape, 'mean' (the mean over all elements)
    and 'sum' a 0-dim tensor; the legacy ``size_average``/``reduce`` flags, when given, choose the
    reduction instead (with torch's deprecation warning). Records
    BinaryCrossEntropyWithLogitsBackward0, whose derivatives follow derivatives.yaml
    binary_cross_entropy_with_logits_backward (input: grad * ((pos_weight target + 1 - target)
    sigmoid(input) - pos_weight target) * weight) and
    binary_cross_entropy_with_logits_target_backward (target: grad * (log_sigmoid(-input) -
    pos_weight log_sigmoid(input)) * weight), divided by the number of elements for 'mean'; they
    are built of differentiable ops, so create_graph gives higher derivatives.

    The legacy flags follow torch's _Reduction.legacy_get_string: when either is not None,
    reduce=False gives 'none', else size_average=False 'sum', else 'mean' (a None flag counts as
    True), with torch's deprecation UserWarning, and ``reduction`` is then ignored. torch's
    deprecated reduction 'elementwise_mean' is read as 'mean', with its UserWarning.

    Raises, in torch's order: ValueError for an unknown reduction (when no legacy flag is given)
    or a target of another shape; NotImplementedError for an integer or bool input, whatever the
    target (torch's log_sigmoid has no integer kernel); RuntimeError for a bool pos_weight or
    one that does not broadcast to the input's shape, for an integer or bool target (torch
    computes ``1 - target`` in the target's dtype and cannot store the loss there), or for a
    weight that does not broadcast to the input's shape."""
    reduction = _reduction(size_average, reduce, reduction)
    if target._data.shape != input._data.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    xd, yd = input._data.dtype, target._data.dtype
    if xd.kind != "f":
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{scalar_name(xd)}': "
                                  f"binary_cross_entropy_with_logits needs floating-point logits "
                                  f"(got {input.dtype}); convert the input with .float()")
    if pos_weight is not None and pos_weight._data.dtype == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported: "
                           "binary_cross_entropy_with_logits computes pos_weight - 1, so "
                           "pos_weight must be numeric, not bool; convert it with "
                           "pos_weight.to(input.dtype)")
    pw = _loss_weight(pos_weight, input, "binary_cross_entropy_with_logits")
    if yd == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported: binary_cross_entropy_with_logits computes 1 - target, so "
                           "the target must be floating-point, not bool; convert it with "
                           "target.to(input.dtype)")
    if yd.kind != "f":
        raise RuntimeError(f"result type {scalar_name(xd)} can't be cast to the desired output "
                           f"type {scalar_name(yd)}: binary_cross_entropy_with_logits needs a "
                           f"floating-point target (got {target.dtype}); convert it with "
                           f"target.to(input.dtype)")
    w = _loss_weight(weight, input, "binary_cross_entropy_with_logits")
    return BinaryCrossEntropyWithLogits.apply(input, target, w, pw, reduction)

