"""Neural-network ops: linear, softmax, log_softmax, nll_loss, cross_entropy, mse_loss.

Derivatives (derivatives.yaml): softmax: y * (grad - sum(grad * y)); log_softmax:
grad - exp(y) * sum(grad); nll_loss: -weight[target] * grad at the target class (divided by the
total weight for 'mean'); mse_loss: 2 (input - target) grad / n. cross_entropy is log_softmax
followed by nll_loss, recorded as those two nodes, as in torch.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import Tensor, _make, _wrap_dim, to_float
from .linalg import Addmm, matmul

_REDUCTIONS = ("mean", "sum", "none")


def _softmax_dim(input, dim, name):
    if dim is None:
        # torch's legacy implicit choice (with a warning): dim 0 for 0-D, 1-D and 3-D, else 1
        import warnings
        nd = input.data.ndim
        dim = 0 if nd in (0, 1, 3) else 1
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                      f"to include dim=X as an argument.", UserWarning, stacklevel=3)
    return _wrap_dim(dim, input.data.ndim, name)


class Softmax(ArrayFunction, name="SoftmaxBackward0"):
    """exp(x) / sum(exp(x)) along ``dim``, shifted by the max (no overflow).
    derivatives.yaml _softmax_backward_data: y * (grad - (grad * y).sum(dim, keepdim))."""

    @staticmethod
    def forward(ctx, x, d):
        x = to_float(x)
        e = np.exp(x - np.max(x, axis=d, keepdims=True)) if x.size else x.copy()
        y = e / np.sum(e, axis=d, keepdims=True)
        ctx.d = d
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g, *_):
        y, = ctx.saved_tensors
        return y * (g - (g * y).sum(ctx.d, keepdim=True)), None


class LogSoftmax(ArrayFunction, name="LogSoftmaxBackward0"):
    """x - logsumexp(x) along ``dim``, stable for logits in the thousands.
    derivatives.yaml _log_softmax_backward_data: grad - exp(y) * grad.sum(dim, keepdim)."""

    @staticmethod
    def forward(ctx, x, d):
        x = to_float(x)
        if x.size:
            s = x - np.max(x, axis=d, keepdims=True)
            y = s - np.log(np.sum(np.exp(s), axis=d, keepdims=True))
        else:
            y = x.copy()
        ctx.d = d
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g, *_):
        y, = ctx.saved_tensors
        from .pointwise import exp
        return g - exp(y) * g.sum(ctx.d, keepdim=True), None


@op("softmax", functional=True)
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` (floating result; int inputs become the default float)."""
    if dtype is not None:
        input = input.to(dtype)
    return Softmax.apply(input, _softmax_dim(input, dim, "softmax"))


@op("log_softmax", functional=True)
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input)) along ``dim``, computed stably (no log of 0 for large logits)."""
    if dtype is not None:
        input = input.to(dtype)
    return LogSoftmax.apply(input, _softmax_dim(input, dim, "log_softmax"))


class NllLoss(ArrayFunction, name="NllLossBackward0"):
    """Negative log-likelihood of class indices. Arguments: log-probabilities (N, C) or (C,),
    targets (N,) / () as an int64 array, class weights array or None, reduction, ignore_index."""

    @staticmethod
    def forward(ctx, logp, target, weight, reduction, ignore_index):
        batched = logp.ndim == 2
        lp = logp if batched else logp[None]
        tg = target.reshape(-1)
        n, c = lp.shape
        valid = tg != ignore_index
        safe = np.where(valid, tg, 0)
        w = (weight[safe] if weight is not None else np.ones(n, lp.dtype)) * valid
        w = w.astype(lp.dtype, copy=False)
        picked = lp[np.arange(n), safe]
        losses = -picked * w
        ctx.meta = (lp.shape, safe, w, reduction, batched)
        if reduction == "none":
            return losses if batched else losses.reshape(())
        total = losses.sum()
        if reduction == "sum":
            return np.asarray(total, lp.dtype)
        denom = w.sum()
        ctx.denom = denom
        return np.asarray(total / denom, lp.dtype)

    @staticmethod
    def backward(ctx, g):
        shape, safe, w, reduction, batched = ctx.meta
        coef = -w
        if reduction == "mean":
            coef = coef / ctx.denom
        onehot = np.zeros(shape, g.data.dtype)
        onehot[np.arange(shape[0]), safe] = coef
        if reduction == "none":
            gi = g.reshape(-1, 1) * _make(onehot)
        else:
            gi = g * _make(onehot)
        return (gi if batched else gi.reshape(shape[1:])), None, None, None, None


@op("nll_loss", functional=True, method=False, namespace=False)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood loss. ``input``: (N, C) or (C,) log-probabilities; ``target``: (N,)
    or () int64 class indices in [0, C). ``reduction``: 'mean' (weighted mean over non-ignored
    targets), 'sum' or 'none'. IndexError for a target out of range, RuntimeError for shape/dtype
    mismatches and unknown reductions."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction (use 'mean', 'sum' or "
                         f"'none')")
    if not isinstance(target, Tensor):
        raise TypeError(f"nll_loss(): argument 'target' must be Tensor, not {type(target).__name__}")
    if target.data.dtype.kind not in "iu":
        raise RuntimeError(f"nll_loss: expected target of an integer dtype (class indices), got "
                           f"{target.dtype}; for class probabilities use cross_entropy with a "
                           f"floating target of the input's shape")
    nd = input.data.ndim
    if nd not in (1, 2):
        raise ValueError(f"nll_loss: expected input of 1 or 2 dimensions (N, C), got {nd}-D input "
                         f"of shape {list(input.data.shape)}")
    n = input.data.shape[0] if nd == 2 else 1
    tshape = target.data.shape
    if (nd == 2 and tshape != (n,)) or (nd == 1 and tshape != ()):
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size "
                         f"({tshape[0] if tshape else 0}): input shape {list(input.data.shape)}, "
                         f"target shape {list(tshape)}")
    c = input.data.shape[-1]
    t = target.data.astype(np.int64, copy=False)
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds: nll_loss targets "
                         f"must be class indices in [0, {c - 1}] (input has {c} classes)")
    w = weight.data if isinstance(weight, Tensor) else weight
    return NllLoss.apply(input, t, w, reduction, ignore_index)


@op("cross_entropy", functional=True, method=False, namespace=False)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross-entropy of raw logits ``input`` (N, C) or (C,) against class indices ``target``;
    computed as nll_loss(log_softmax(input, 1), target), stable for logits in the thousands.
    A floating ``target`` of the input's shape is read as class probabilities."""
    if label_smoothing:
        raise NotImplementedError("cross_entropy: label_smoothing is not supported yet")
    d = 1 if input.data.ndim == 2 else 0
    logp = log_softmax(input, d)
    if isinstance(target, Tensor) and target.data.dtype.kind == "f":
        if target.data.shape != input.data.shape:
            raise RuntimeError(f"cross_entropy: class-probability target shape "
                               f"{list(target.data.shape)} must equal input shape "
                               f"{list(input.data.shape)}")
        per = -(logp * target)
        if weight is not None:
            per = per * weight
        per = per.sum(d)
        if reduction == "none":
            return per
        return per.sum() if reduction == "sum" else per.mean() if per.data.ndim else per
    return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)


class MseLoss(ArrayFunction, name="MseLossBackward0"):
    """Mean/sum/none of (input - target) ** 2. derivatives.yaml mse_loss_backward:
    2 (input - target) grad / n (n = numel for 'mean')."""

    @staticmethod
    def forward(ctx, a, b, reduction):
        ctx.save_for_backward(a, b)
        ctx.reduction = reduction
        d = a - b
        sq = d * d
        if reduction == "none":
            return sq
        return np.asarray(sq.sum() if reduction == "sum" else sq.mean(), sq.dtype)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        diff = a - b
        scale = 2.0 / diff.data.size if ctx.reduction == "mean" else 2.0
        gd = g * diff * scale
        return (gd if ctx.needs(0) else None), (-gd if ctx.needs(1) else None), None


@op("mse_loss", functional=True, method=False, namespace=False)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Mean squared error. Shapes broadcast (torch warns when they differ; so do we)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if input.data.shape != target.data.shape:
        import warnings
        warnings.warn(f"Using a target size ({tuple(target.data.shape)}) that is different to the "
                      f"input size ({tuple(input.data.shape)}). This will likely lead to incorrect "
                      f"results due to broadcasting. Please ensure they have the same size.",
                      UserWarning, stacklevel=2)
        input, target = (input.expand(np.broadcast_shapes(input.data.shape, target.data.shape)),
                         target.expand(np.broadcast_shapes(input.data.shape, target.data.shape)))
    return MseLoss.apply(input, target, reduction)


@op("linear", functional=True, method=False, namespace=False)
def linear(input, weight, bias=None):
    """input @ weight.T + bias. ``input``: (*, in_features), ``weight``: (out_features,
    in_features), ``bias``: (out_features,). 2-D input with bias records AddmmBackward0 as torch."""
    if input.data.shape[-1:] != weight.data.shape[-1:]:
        sa = input.data.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({int(np.prod(sa[:-1]))}x{sa[-1]} and {weight.data.shape[-1]}x"
                           f"{weight.data.shape[0]}): linear got input of shape {list(sa)} and "
                           f"weight of shape {list(weight.data.shape)} (in_features must match)")
    if input.data.ndim == 2 and bias is not None:
        return Addmm.apply(bias, input, weight.t())
    out = matmul(input, weight.t())
    return out if bias is None else out + bias
