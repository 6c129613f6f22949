"""Loss modules: CrossEntropyLoss, NLLLoss, MSELoss, BCELoss, BCEWithLogitsLoss, L1Loss,
SmoothL1Loss, HuberLoss, KLDivLoss, PoissonNLLLoss (thin wrappers over nn.functional)."""
from __future__ import annotations

import warnings

from .. import functional as F
from .module import Module
from ...autograd.graph import user_stacklevel

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss", "L1Loss",
           "SmoothL1Loss", "HuberLoss", "KLDivLoss", "PoissonNLLLoss"]


def _legacy_reduction(size_average, reduce, emit_warning=True):
    """torch's _Reduction.legacy_get_string: the old size_average/reduce flags as a reduction."""
    warning = ("size_average and reduce args will be deprecated, please use reduction='{}' "
               "instead.")
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(warning.format(ret), stacklevel=user_stacklevel())
    return ret


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight = weight


class MSELoss(_Loss):
    """Mean squared error between input and target ('mean', 'sum' or 'none')."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class-index targets, given log-probabilities."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of raw logits against class indices (log_softmax then nll_loss), with
    optional class ``weight``, ``ignore_index`` and ``reduction``."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy between probabilities and targets of the same shape, with an
    optional ``weight`` (broadcast against the input) and ``reduction``."""

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of raw logits (a sigmoid and BCELoss in one stable op), with
    optional ``weight`` and ``pos_weight`` buffers."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.weight = weight
        self.pos_weight = pos_weight

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|`` ('mean', 'sum' or 'none'); see
    ``nn.functional.l1_loss`` for shapes, dtypes and errors."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Smooth L1 loss: quadratic (0.5 d**2 / beta) where |input - target| < ``beta``, linear
    (|d| - 0.5 beta) elsewhere; ``beta=0`` is the L1 loss. See ``nn.functional.smooth_l1_loss``
    (RuntimeError for a negative beta, at the forward)."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Huber loss: quadratic (0.5 d**2) where |input - target| < ``delta``, linear
    (delta (|d| - 0.5 delta)) elsewhere; the result has the input's dtype. TypeError (at
    construction, as torch) for a ``delta`` that is not a float or int; RuntimeError at the
    forward for delta <= 0. See ``nn.functional.huber_loss``."""

    def __init__(self, reduction="mean", delta=1.0):
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities ``input`` against ``target``
    (probabilities, or log-probabilities with ``log_target=True``). ``reduction='batchmean'``
    gives the divergence per sample; the default 'mean' divides by every element and warns, as
    torch. See ``nn.functional.kl_div``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood of ``target`` given a rate (``log_input=False``) or
    log-rate (``log_input=True``, the default) ``input``, with Stirling's term when ``full``
    and ``eps`` guarding log(0). See ``nn.functional.poisson_nll_loss``."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)
