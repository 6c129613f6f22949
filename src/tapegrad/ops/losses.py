"""Regression and divergence losses: mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div,
poisson_nll_loss, and the helpers they share.

Which are primitives follows torch 2.13, so that the recorded graphs match its graphs:

* mse_loss without a weight is one node, MseLossBackward0 (derivatives.yaml
  mse_loss_backward: 2 (input - target) grad, / numel for 'mean').
* smooth_l1_loss (beta > 0) and huber_loss are one node each, SmoothL1LossBackward0 and
  HuberLossBackward0. Their derivatives are those of derivatives.yaml
  (smooth_l1_loss_backward / huber_loss_backward for the input, the same with the arguments
  swapped, i.e. negated, for the target; mean divides by the number of elements), written with
  Tensor ops so that create_graph gives second derivatives. The second derivative is zero
  outside the quadratic zone, which is the open interval |input - target| < beta (resp. delta),
  as torch's smooth_l1_loss_double_backward / huber_loss_double_backward. As torch's,
  huber_loss's backward refuses an input and a target of different dtypes.
* l1_loss (and smooth_l1_loss with beta == 0) is |input - target| then mean or sum
  (SubBackward0, AbsBackward0, MeanBackward0 / SumBackward0).
* kl_div is xlogy(target, target) - target * input, or exp(target) * (target - input) with
  log_target, then the reduction; 'batchmean' is the sum divided by the batch size
  (DivBackward0).
* poisson_nll_loss is exp(input) - target * input, or input - target * log(input + eps), plus,
  with ``full``, Stirling's term masked where target <= 1, then the reduction.
* a ``weight`` (l1_loss, huber_loss, mse_loss) multiplies the elementwise loss and is reduced by
  ordinary sum/mean/div nodes.

Two small primitives exist here only to give those composites torch's node names: the
Tensor-with-number forms MulBackward1 / AddBackward1 that torch's C++ composites record
(derivatives.yaml mul.Scalar: grad * other; add.Scalar: grad). kl_div's XlogyBackward0 is
tapegrad.xlogy's (ops/scatter.py).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype
from .._dtype import scalar_name
from ..autograd.function import ArrayFunction
from ..autograd.graph import user_stacklevel
from ._registry import op
from ._util import Tensor, _make, broadcast_error, promote
from .nn_ops import _check_reduction, _reduce_array, _reduction, _reduction_hint
from .pointwise import exp, log
from .pointwise import pow as _pow
from .scatter import Xlogy

_TWO_PI = 2.0 * math.pi


# ---- shared helpers -----------------------------------------------------------------------------
def _need_tensors(input, target, op_name):
    """torch's Python losses read ``target.size()`` then ``input.size()`` first: a non-Tensor
    gives AttributeError there. Ours names the op."""
    for x, what in ((target, "target"), (input, "input")):
        if not isinstance(x, Tensor):
            msg = (f"'{type(x).__name__}' object has no attribute 'size' ({op_name}: the {what} "
                   f"must be a Tensor)")
            raise AttributeError(msg)  # noqa: TRY004 - torch's exception type here


def _parsed_tensor(x, op_name, name, pos):
    """torch's argument parser: TypeError for a non-Tensor argument."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op_name}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _parsed_float(x, op_name, name, pos):
    """torch's argument parser for a float: a number (or one-element Tensor) as a float,
    TypeError otherwise."""
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        return float(x)
    if isinstance(x, Tensor) and x._data.size == 1:
        return float(x._data.reshape(()))
    raise TypeError(f"{op_name}(): argument '{name}' (position {pos}) must be float, not "
                    f"{type(x).__name__}")


def _parsed_bool(x, op_name, name, pos=None):
    """torch's argument parser for a bool: only a bool is accepted (TypeError for 1, None...)."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    where_ = f" (position {pos})" if pos is not None else ""
    raise TypeError(f"{op_name}(): argument '{name}'{where_} must be bool, not {type(x).__name__}")


def _legacy_or(reduction, size_average, reduce):
    """The reduction torch's legacy flags choose (its _Reduction.legacy_get_string, with the
    deprecation UserWarning) when either is not None; ``reduction``, unchecked, otherwise."""
    if size_average is None and reduce is None:
        return reduction
    from ..nn.modules.loss import _legacy_reduction
    return _legacy_reduction(size_average, reduce)


def _warn_size(input, target):
    """torch's UserWarning when the shapes differ (they are then broadcast)."""
    if input._data.shape != target._data.shape:
        warnings.warn(f"Using a target size ({target.shape!r}) that is different to the input size "
                      f"({input.shape!r}). This will likely lead to incorrect results due to "
                      f"broadcasting. Please ensure they have the same size.",
                      UserWarning, stacklevel=user_stacklevel())


def _broadcast_pair(input, target, op_name):
    """``input`` and ``target`` expanded to their broadcast shape, as torch.broadcast_tensors:
    a tensor already of that shape is returned as is (no ExpandBackward0 node), the other is
    expanded. RuntimeError naming the op for shapes that do not broadcast."""
    xs, ys = input._data.shape, target._data.shape
    if xs == ys:
        return input, target
    try:
        shape = np.broadcast_shapes(xs, ys)
    except ValueError:
        raise broadcast_error(op_name, input, target) from None
    return (input if xs == shape else input.expand(shape),
            target if ys == shape else target.expand(shape))


def _check_broadcast(a, b, op_name):
    """RuntimeError naming the op when ``a`` and ``b`` do not broadcast (torch's message names
    the operands in the order its composite meets them)."""
    if a._data.shape != b._data.shape:
        try:
            np.broadcast_shapes(a._data.shape, b._data.shape)
        except ValueError:
            raise broadcast_error(op_name, a, b) from None


def _sub(a, b, op_name):
    """``a - b``, with torch's RuntimeError when either operand is bool (tapegrad's Sub refuses
    only two bools; torch refuses one already)."""
    ab, bb = a._data.dtype == np.bool_, b._data.dtype == np.bool_
    if ab and bb:
        raise RuntimeError(f"Subtraction, the `-` operator, with two bool tensors is not "
                           f"supported. Use the `^` or `logical_xor()` operator instead. "
                           f"({op_name} subtracts two bool tensors here; convert them with "
                           f".float())")
    if ab or bb:
        raise RuntimeError(f"Subtraction, the `-` operator, with a bool tensor is not supported. "
                           f"If you are trying to invert a mask, use the `~` or `logical_not()` "
                           f"operator instead. ({op_name} subtracts a bool tensor here; convert it "
                           f"with .float())")
    return a - b


def _check_weight(weight, input, op_name):
    """torch's weighted losses: the weight must be a Tensor of exactly the input's shape (not
    merely broadcastable; it is then broadcast against the input/target broadcast shape)."""
    if not isinstance(weight, Tensor):
        msg = (f"'{type(weight).__name__}' object has no attribute 'size' ({op_name}: weight "
               f"must be a Tensor of the input's shape)")
        raise AttributeError(msg)  # noqa: TRY004 - torch's exception type here
    if weight._data.shape != input._data.shape:
        raise ValueError(f"Weights and input must have the same size. ({op_name}: weight shape "
                         f"{list(weight._data.shape)}, input shape {list(input._data.shape)})")


def _weighted_reduce(loss, weight, reduction, op_name, mean_by_weight):
    """The reduction of a weighted elementwise loss, as torch's Python code does it after the
    loss is computed: 'none', 'sum', and 'mean' as sum(loss) / sum(weight)
    (``mean_by_weight``, l1/mse) or loss.mean() (huber). Any other string, 'elementwise_mean'
    included, is a ValueError."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     f"'sum'. ({op_name} with a weight)")


def _reduce(loss, reduction):
    """An elementwise loss Tensor reduced by an already checked reduction."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _float_operands(input, target, kernel, op_name):
    """The common dtype of an elementwise loss kernel over ``input`` and ``target`` (torch's
    promotion); NotImplementedError, in torch's words, when it is not floating."""
    common = _dtype.result_type(input, target)
    if not common.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(common.np)}' "
                                  f"({op_name} needs a floating-point input or target; convert "
                                  f"them with .float())")
    return common


# ---- primitives ---------------------------------------------------------------------------------
def _loss_grads(ctx, g, zone):
    """The gradients of an elementwise loss of d = input - target whose derivative is the odd,
    piecewise-linear ``slope(d) = d * inner + outer``, where ``zone(d_array)`` gives the arrays
    ``inner`` (the slope of the quadratic zone there, 0 outside) and ``outer`` (the constant
    slope outside, 0 inside). Only ``d`` is a Tensor in that product, so create_graph
    differentiates it to ``inner`` (0 outside, with the sign of zero torch's formulas give).
    The input's gradient is grad * slope(input - target), the target's grad *
    slope(target - input) (+0 where they are equal, as torch's), each divided by the element
    count for 'mean'."""
    x, y = ctx.saved_tensors
    scale = 1.0 / ctx.numel if ctx.reduction == "mean" and ctx.numel else 1.0
    grads = []
    for i, (a, b) in enumerate(((x, y), (y, x))):
        if ctx.needs(i):
            d = a - b
            inner, outer = zone(d._data)
            gi = g * (d * _make(inner) + _make(outer))
            grads.append(gi * scale if scale != 1.0 else gi)
        else:
            grads.append(None)
    return grads[0], grads[1], None, None


class SmoothL1Loss(ArrayFunction, name="SmoothL1LossBackward0"):
    """0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target), reduced.
    Arguments: input and target arrays of one shape, reduction, beta > 0. derivatives.yaml
    smooth_l1_loss: input: grad * (d / beta inside the quadratic zone, sign(d) outside);
    target: the negation."""

    @staticmethod
    def forward(ctx, x, y, reduction, beta):
        ctx.save_for_backward(x, y)
        ctx.reduction, ctx.beta, ctx.numel = reduction, beta, x.size
        a, b = promote(x, y)
        d = a - b
        ad = np.abs(d)
        with np.errstate(invalid="ignore", over="ignore"):
            loss = np.where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
        return _reduce_array(loss.astype(d.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):
        beta = ctx.beta

        def zone(d):
            inside = np.abs(d) < beta
            return inside / d.dtype.type(beta), np.where(inside, 0, np.sign(d))
        return _loss_grads(ctx, g, zone)


class HuberLoss(ArrayFunction, name="HuberLossBackward0"):
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target), computed
    in the promoted dtype and stored in the input's, then reduced. Arguments: input and target
    arrays of one shape, reduction, delta > 0. derivatives.yaml huber_loss: input:
    grad * (d inside the quadratic zone, delta sign(d) outside); target: the negation."""

    @staticmethod
    def forward(ctx, x, y, reduction, delta):
        ctx.save_for_backward(x, y)
        ctx.reduction, ctx.delta, ctx.numel = reduction, delta, x.size
        a, b = promote(x, y)
        d = a - b
        ad = np.abs(d)
        with np.errstate(invalid="ignore", over="ignore"):
            loss = np.where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
        return _reduce_array(loss.astype(x.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        if x._data.dtype != y._data.dtype:
            # torch's huber_loss_backward does not promote: it refuses a target whose dtype
            # differs from the input's (the input's gradient is computed first)
            want, got = (x, y) if ctx.needs(0) else (y, x)
            raise RuntimeError(
                f"Found dtype {scalar_name(got._data.dtype)} but expected "
                f"{scalar_name(want._data.dtype)} (huber_loss's backward, as torch's, needs input "
                f"and target of one dtype, got {x.dtype} and {y.dtype}; convert the target with "
                f"target.to(input.dtype))")
        delta = ctx.delta

        def zone(d):
            inside = np.abs(d) < delta
            return inside.astype(d.dtype), np.where(inside, 0, np.sign(d) * d.dtype.type(delta))
        return _loss_grads(ctx, g, zone)


class MulScalar(ArrayFunction, name="MulBackward1"):
    """tensor * number, as torch's C++ composites record it (mul.Scalar; one edge).
    derivatives.yaml mul.Scalar: self: grad * other."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        a, b = promote(x, c)
        return a * b

    @staticmethod
    def backward(ctx, g):
        return MulScalar.apply(g, ctx.c), None


class AddScalar(ArrayFunction, name="AddBackward1"):
    """tensor + number, as torch's C++ composites record it (add.Scalar; one edge).
    derivatives.yaml add.Scalar: self: grad."""

    @staticmethod
    def forward(ctx, x, c):
        a, b = promote(x, c)
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, None


# ---- l1_loss ------------------------------------------------------------------------------------
class MseLoss(ArrayFunction, name="MseLossBackward0"):
    """Mean/sum/none of (input - target) ** 2 ('mean' of no elements: nan, as torch).
    derivatives.yaml mse_loss_backward: 2 (input - target) grad / n (n = numel for 'mean')."""

    @staticmethod
    def forward(ctx, a, b, reduction):
        ctx.save_for_backward(a, b)
        ctx.reduction = reduction
        d = a - b
        if reduction == "mean" and d.size == 0:     # the mean of nothing: nan, as torch
            return np.asarray(np.nan, d.dtype)
        return _reduce_array(d * d, reduction)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        diff = a - b
        n = diff._data.size
        scale = 2.0 / n if ctx.reduction == "mean" and n else 2.0   # (n == 0: empty anyway)
        gd = g * diff * scale
        return (gd if ctx.needs(0) else None), (-gd if ctx.needs(1) else None), None


@op("mse_loss", functional=True, method=False, namespace=False)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target) ** 2`` (times ``weight``) reduced by ``reduction``:
    'mean' (over all elements), 'sum' or 'none' (torch's deprecated 'elementwise_mean' is read
    as 'mean', with its UserWarning). Shapes broadcast (torch warns with a UserWarning when they
    differ; so do we), and only an operand not already of the broadcast shape is expanded
    (ExpandBackward0), as torch.broadcast_tensors. The legacy ``size_average``/``reduce``
    flags, when either is not None, choose the reduction instead (torch's
    _Reduction.legacy_get_string: reduce=False gives 'none', else size_average=False 'sum',
    else 'mean'), with torch's deprecation UserWarning (after the size warning, as torch), and
    ``reduction`` is then ignored.

    Without a weight: the primitive MseLossBackward0 (derivatives.yaml mse_loss_backward:
    2 (input - target) grad, / numel for 'mean'); the result has the promoted dtype of input
    and target (a float32 input with an int64 target gives float32), which must be floating.

    ``weight`` (optional, torch 2.13) must have exactly the input's shape; it multiplies the
    squared errors (broadcasting against the target's shape) and 'mean' is then
    sum(weight * (input - target) ** 2) / sum(weight). As torch, this path is a composite
    (SubBackward0, PowBackward0, MulBackward0, then SumBackward0 and DivBackward0 for 'mean'),
    the weight may require grad, and integer input and target are accepted (the float weight
    makes the result floating).

    Raises, in torch's order: AttributeError for a non-Tensor input, target or weight;
    RuntimeError for shapes that do not broadcast; ValueError for a weight whose shape is not
    the input's; ValueError for an unknown reduction (when no legacy flag is given; with a
    weight after the loss is computed, 'elementwise_mean' included, as torch);
    NotImplementedError ("mse_cpu" not implemented) for integer or bool input and target
    without a weight; RuntimeError for a bool operand with a weight (torch cannot subtract
    bools)."""
    _need_tensors(input, target, "mse_loss")
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    ei, et = input, target
    if input._data.shape != target._data.shape:
        try:
            shape = np.broadcast_shapes(input._data.shape, target._data.shape)
        except ValueError:
            raise broadcast_error("mse_loss", input, target) from None
        if input._data.shape != shape:
            ei = input.expand(shape)
        if target._data.shape != shape:
            et = target.expand(shape)
    if weight is not None:
        _check_weight(weight, input, "mse_loss")
        loss = _pow(_sub(ei, et, "mse_loss"), 2) * weight
        return _weighted_reduce(loss, weight, reduction, "mse_loss", mean_by_weight=True)
    reduction = _check_reduction(reduction)
    common = _float_operands(ei, et, "mse_cpu", "mse_loss").np
    # an integer or bool operand (which cannot require grad) is cast to the floating result
    # dtype up front, so that MseLoss's NumPy arithmetic does not widen it (float32 - int64
    # would give float64 in NumPy; torch gives float32)
    if ei._data.dtype.kind != "f":
        ei = _make(ei._data.astype(common))
    if et._data.dtype.kind != "f":
        et = _make(et._data.astype(common))
    return MseLoss.apply(ei, et, reduction)


def _l1(input, target, reduction, op_name):
    """|input - target| reduced (torch's composite l1_loss: SubBackward0, AbsBackward0, then
    MeanBackward0 / SumBackward0); input and target already broadcast."""
    return _reduce(_sub(input, target, op_name).abs(), reduction)


@op("l1_loss", functional=True, method=False, namespace=False)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: ``|input - target|`` (times ``weight``), reduced.

    ``input`` and ``target`` broadcast (torch warns with a UserWarning when their shapes
    differ; so do we). The result has the promoted dtype of input and target and, by
    ``reduction``: 'none' the broadcast shape, 'mean' (over all elements; nan when there are
    none) or 'sum' a 0-dim tensor; torch's deprecated 'elementwise_mean' is read as 'mean' with
    its UserWarning. The legacy ``size_average``/``reduce`` flags, when either is not None,
    choose the reduction instead (torch's _Reduction.legacy_get_string, with its deprecation
    UserWarning), and ``reduction`` is then ignored.

    ``weight`` (optional) must have exactly the input's shape; it multiplies the elementwise
    loss (broadcasting against the target's shape), and 'mean' is then sum(loss) / sum(weight).
    It may require grad.

    Not a primitive in torch: recorded as SubBackward0 -> AbsBackward0 -> MeanBackward0 or
    SumBackward0 (ExpandBackward0 on an input that was broadcast; with a weight MulBackward0,
    SumBackward0 and DivBackward0), so the derivatives are those ops' (abs'(0) = 0).

    Raises, in torch's order: AttributeError for a non-Tensor input, target or weight;
    RuntimeError for shapes that do not broadcast; ValueError for a weight whose shape is not
    the input's; ValueError for an unknown reduction (with a weight: after the loss is computed,
    'elementwise_mean' included, as torch); RuntimeError for a bool input or target (torch
    cannot subtract bools); RuntimeError for an integer input and target with 'mean' (the mean
    of integers)."""
    _need_tensors(input, target, "l1_loss")
    _warn_size(input, target)
    reduction = _legacy_or(reduction, size_average, reduce)
    ei, et = _broadcast_pair(input, target, "l1_loss")
    if weight is not None:
        _check_weight(weight, input, "l1_loss")
        loss = _sub(ei, et, "l1_loss").abs() * weight
        return _weighted_reduce(loss, weight, reduction, "l1_loss", mean_by_weight=True)
    reduction = _check_reduction(reduction, _reduction_hint("l1_loss"))
    return _l1(ei, et, reduction, "l1_loss")


# ---- smooth_l1_loss -----------------------------------------------------------------------------
@op("smooth_l1_loss", functional=True, method=False, namespace=False)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Smooth L1 loss: with d = input - target, ``0.5 d**2 / beta`` where |d| < beta and
    ``|d| - 0.5 beta`` elsewhere, reduced. ``beta == 0`` is exactly l1_loss (and recorded as
    its composite, as torch).

    ``input`` and ``target`` broadcast (with torch's UserWarning when their shapes differ). The
    result has their promoted dtype (which must be floating) and, by ``reduction``: 'none' the
    broadcast shape, 'mean' (nan for no elements) or 'sum' a 0-dim tensor ('elementwise_mean'
    is read as 'mean' with torch's UserWarning; the legacy ``size_average``/``reduce`` flags
    choose the reduction instead, with torch's deprecation UserWarning).

    A primitive, SmoothL1LossBackward0, whose derivatives follow derivatives.yaml
    smooth_l1_loss_backward: grad * d / beta inside |d| < beta, grad * sign(d) outside (the
    target's is the negation), divided by the element count for 'mean'; written with Tensor
    ops, so create_graph gives the second derivative (1 / beta inside the open zone, 0 outside).

    Raises, in torch's order: AttributeError for a non-Tensor input or target; RuntimeError for
    shapes that do not broadcast; ValueError for an unknown reduction; TypeError for a ``beta``
    that is not a number; RuntimeError for a negative (or nan) beta; NotImplementedError when
    input and target are both integer or bool."""
    _need_tensors(input, target, "smooth_l1_loss")
    _warn_size(input, target)
    reduction = _legacy_or(reduction, size_average, reduce)
    ei, et = _broadcast_pair(input, target, "smooth_l1_loss")
    reduction = _check_reduction(reduction, _reduction_hint("smooth_l1_loss"))
    if beta == 0.0:     # (as torch, a Tensor beta of several elements is ambiguous here)
        return _l1(ei, et, reduction, "smooth_l1_loss")
    beta = _parsed_float(beta, "smooth_l1_loss", "beta", 4)
    if not beta >= 0:
        raise RuntimeError(f"smooth_l1_loss does not support negative values for beta. (got "
                           f"beta={beta}; use beta=0 for the L1 loss)")
    _float_operands(ei, et, "smooth_l1_cpu", "smooth_l1_loss")
    return SmoothL1Loss.apply(ei, et, reduction, beta)


# ---- huber_loss ---------------------------------------------------------------------------------
def _can_cast(src, dst):
    """torch's canCast: no floating -> integral/bool, no integral -> bool."""
    if src.is_floating_point:
        return dst.is_floating_point
    if dst.np == np.bool_:
        return src.np == np.bool_
    return True


def _huber(ei, et, reduction, delta):
    delta = _parsed_float(delta, "huber_loss", "delta", 4)
    if not delta > 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta. (got "
                           f"delta={delta}; it must be > 0)")
    common = _dtype.result_type(ei, et)
    if not _can_cast(common, ei.dtype):
        raise RuntimeError(f"result type {scalar_name(common.np)} can't be cast to the desired "
                           f"output type {scalar_name(ei._data.dtype)} (huber_loss returns the "
                           f"input's dtype; convert the input with .float())")
    _float_operands(ei, et, "huber_cpu", "huber_loss")
    return HuberLoss.apply(ei, et, reduction, delta)


@op("huber_loss", functional=True, method=False, namespace=False)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Huber loss: with d = input - target, ``0.5 d**2`` where |d| < delta and
    ``delta (|d| - 0.5 delta)`` elsewhere (times ``weight``), reduced. Equals smooth_l1_loss
    times delta for beta = delta.

    ``input`` and ``target`` broadcast (with torch's UserWarning when their shapes differ). The
    result has the input's dtype (computed in the promoted dtype, as torch: a float32 input with
    a float64 target gives float32) and, by ``reduction``: 'none' the broadcast shape, 'mean'
    (nan for no elements) or 'sum' a 0-dim tensor ('elementwise_mean' is read as 'mean' with
    torch's UserWarning). There are no legacy flags.

    ``weight`` (optional) must have exactly the input's shape; it multiplies the elementwise
    loss, and 'mean' is then the plain mean of the weighted loss (not divided by the weights'
    sum: torch's choice for huber_loss, unlike l1_loss and mse_loss). It may require grad.

    A primitive, HuberLossBackward0 (with a weight followed by MulBackward0 and the
    reduction's node), whose derivatives follow derivatives.yaml huber_loss_backward:
    grad * d inside |d| < delta, grad * delta * sign(d) outside (the target's is the negation),
    divided by the element count for 'mean'; written with Tensor ops, so create_graph gives
    the second derivative (1 inside the open zone, 0 outside).

    Raises, in torch's order: AttributeError for a non-Tensor input, target or weight;
    RuntimeError for shapes that do not broadcast; without a weight, ValueError for an unknown
    reduction; ValueError for a weight whose shape is not the input's; TypeError for a
    ``delta`` that is not a number; RuntimeError for delta <= 0 (or nan); RuntimeError when the
    promoted dtype cannot be stored in the input's (an integer input with a floating target);
    NotImplementedError when input and target are both integer or bool; with a weight,
    ValueError for an unknown reduction ('elementwise_mean' included, as torch). In backward,
    RuntimeError ("Found dtype ... but expected ...") when input and target have different
    dtypes: torch's huber_loss_backward does not promote, and neither do we."""
    _need_tensors(input, target, "huber_loss")
    _warn_size(input, target)
    ei, et = _broadcast_pair(input, target, "huber_loss")
    if weight is None:
        reduction = _check_reduction(reduction, _reduction_hint("huber_loss"))
        return _huber(ei, et, reduction, delta)
    _check_weight(weight, input, "huber_loss")
    loss = _huber(ei, et, "none", delta) * weight
    return _weighted_reduce(loss, weight, reduction, "huber_loss", mean_by_weight=False)


# ---- kl_div -------------------------------------------------------------------------------------
_KL_MEAN_WARNING = ("reduction: 'mean' divides the total loss by both the batch size and the "
                    "support size.'batchmean' divides only by the batch size, and aligns with the "
                    "KL div math definition.'mean' will be changed to behave the same as "
                    "'batchmean' in the next major release.")


@op("kl_div", functional=True, method=False, namespace=False)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence loss of log-probabilities ``input`` against ``target``
    (probabilities, or log-probabilities with ``log_target=True``): elementwise
    ``target * (log(target) - input)`` (0 where target == 0), or
    ``exp(target) * (target - input)``, reduced.

    ``input`` and ``target`` broadcast (no warning, as torch). They must be floating (float16,
    float32, float64); the result has their promoted dtype. ``reduction``: 'none' (the broadcast
    shape), 'sum', 'batchmean' (the sum divided by ``input.shape[0]``, the KL divergence per
    sample; just the sum for a 0-dim input) or 'mean' (the sum divided by the number of
    elements; torch warns with a UserWarning that this is not the KL divergence, and so do we).
    'elementwise_mean' is read as 'mean' with torch's deprecation UserWarning (and no 'mean'
    warning). The legacy ``size_average``/``reduce`` flags, when either is not None, choose the
    reduction instead, with torch's deprecation UserWarning; as torch, ``reduction='batchmean'``
    still divides that result by the batch size.

    Not a primitive in torch: recorded as XlogyBackward0 and MulBackward0 into SubBackward0 (or
    ExpBackward0 and SubBackward0 into MulBackward0 with log_target), then MeanBackward0 /
    SumBackward0, and DivBackward0 for 'batchmean'. The target may require grad; its gradient is
    nan where target == 0 (log_target=False), as torch.

    Raises, in torch's order: ValueError for an unknown reduction (when no legacy flag is
    given); TypeError for a non-Tensor input or target or a non-bool ``log_target``;
    RuntimeError for an integer or bool input or target; RuntimeError for shapes that do not
    broadcast."""
    if size_average is not None or reduce is not None:
        red = _legacy_or(reduction, size_average, reduce)
    else:
        if isinstance(reduction, str) and reduction == "mean":
            warnings.warn(_KL_MEAN_WARNING, UserWarning, stacklevel=user_stacklevel())
        if isinstance(reduction, str) and reduction == "batchmean":
            red = "sum"
        else:
            red = _check_reduction(reduction, " in kl_div (use 'mean', 'batchmean', 'sum' or "
                                              "'none')")
    _parsed_tensor(input, "kl_div", "input", 1)
    _parsed_tensor(target, "kl_div", "target", 2)
    log_target = _parsed_bool(log_target, "kl_div", "log_target")
    if input._data.dtype.kind != "f" or target._data.dtype.kind != "f":
        raise RuntimeError(f"kl_div: Integral inputs not supported. (got input {input.dtype} and "
                           f"target {target.dtype}; convert them with .float())")
    _check_broadcast(target, input, "kl_div")
    if log_target:
        out = exp(target) * (target - input)
    else:
        out = Xlogy.apply(target, target) - target * input
    out = _reduce(out, red)
    if isinstance(reduction, str) and reduction == "batchmean" and input._data.ndim != 0:
        out = out / input._data.shape[0]
    return out


# ---- poisson_nll_loss ---------------------------------------------------------------------------
@op("poisson_nll_loss", functional=True, method=False, namespace=False)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log-likelihood of ``target`` under a Poisson distribution of rate ``input``:
    ``exp(input) - target * input`` when ``log_input`` (input is the log-rate), else
    ``input - target * log(input + eps)``; with ``full``, Stirling's approximation of
    log(target!), ``target log(target) - target + 0.5 log(2 pi target)``, is added where
    target > 1. Then reduced.

    ``input`` and ``target`` broadcast (no warning, as torch). The result has the promoted dtype
    (an integer input gives the default float dtype, as exp/log do) and, by ``reduction``:
    'none' the broadcast shape, 'mean' (nan for no elements) or 'sum' a 0-dim tensor. Unlike
    the other losses, torch does not accept 'elementwise_mean' here. The legacy
    ``size_average``/``reduce`` flags choose the reduction instead, with torch's deprecation
    UserWarning.

    Not a primitive in torch: recorded as ExpBackward0 and MulBackward0 into SubBackward0 (or
    AddBackward1, LogBackward0, MulBackward0, SubBackward0 without log_input), with ``full``
    Stirling's term (MulBackward0, LogBackward0, SubBackward0, MulBackward1, AddBackward0,
    MaskedFillBackward0) added by AddBackward0, then MeanBackward0 / SumBackward0. The target
    may require grad.

    Raises, in torch's order: ValueError for an unknown reduction (TypeError for a reduction
    that is not a string, as torch); TypeError for a non-Tensor input or target, a non-bool
    ``log_input`` or ``full``, or a non-number ``eps``; RuntimeError for shapes that do not
    broadcast; RuntimeError where torch would subtract a bool tensor (both input and target bool
    with log_input; a bool input without it; a bool target with full)."""
    reduction = _legacy_or(reduction, size_average, reduce)
    if not isinstance(reduction, str):
        raise TypeError(f"unsupported operand type(s) for +: '{type(reduction).__name__}' and "
                        f"'str' (poisson_nll_loss: reduction must be 'mean', 'sum' or 'none')")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction in poisson_nll_loss "
                         f"(use 'mean', 'sum' or 'none')")
    name = "poisson_nll_loss"
    _parsed_tensor(input, name, "input", 1)
    _parsed_tensor(target, name, "target", 2)
    log_input = _parsed_bool(log_input, name, "log_input", 3)
    full = _parsed_bool(full, name, "full", 4)
    eps = _parsed_float(eps, name, "eps", 5)
    _check_broadcast(target, input, name)
    if log_input:
        loss = _sub(exp(input), target * input, name)
    else:
        loss = _sub(input, target * log(AddScalar.apply(input, eps)), name)
    if full:
        stirling = _sub(target * log(target), target, name) + \
            MulScalar.apply(log(MulScalar.apply(target, _TWO_PI)), 0.5)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)
