"""Normalization layers: LayerNorm, BatchNorm1d, BatchNorm2d, GroupNorm, RMSNorm.

Each holds torch's parameters and buffers under torch's names (``weight``, ``bias``,
``running_mean``, ``running_var``, ``num_batches_tracked``), initialized as torch initializes them
(weight ones, bias zeros, running mean zeros, running variance ones, 0 batches), so state_dicts
load across the two libraries; the forward is the matching op of ``nn.functional``.
"""
from __future__ import annotations

import numbers

import numpy as np

from ... import _factories
from ..._tensor import _make
from .. import functional as F
from .. import init
from .._inplace import write_
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "RMSNorm"]


def _normalized_shape(normalized_shape):
    """An int as a 1-tuple, a sequence as a tuple (as torch's LayerNorm / RMSNorm)."""
    if isinstance(normalized_shape, (numbers.Integral, np.integer)):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


def _affine(module, shape, weight, bias, device, dtype):
    """Register ``weight`` (ones) and ``bias`` (zeros) of ``shape``, each or None."""
    if weight:
        module.weight = Parameter(_factories.empty(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if bias:
        module.bias = Parameter(_factories.empty(shape, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def _reset_affine(module):
    """weight to ones and bias to zeros, those of them the module has."""
    if module.weight is not None:
        init.ones_(module.weight)
    if getattr(module, "bias", None) is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Layer normalization over the last dims (``F.layer_norm``).

    ``normalized_shape``: an int or a sequence, the trailing shape of the input (*,
    *normalized_shape) normalized to mean 0 and variance 1 (biased, plus ``eps``). With
    ``elementwise_affine`` a ``weight`` (ones) and, if ``bias``, a ``bias`` (zeros) of that
    shape follow; otherwise they are None. The output has the input's shape and dtype; the
    input must end in ``normalized_shape`` (RuntimeError from F.layer_norm otherwise).
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine(self, self.normalized_shape, elementwise_affine, elementwise_affine and bias,
                device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalization over the last dims (``F.rms_norm``).

    ``normalized_shape``: an int or a sequence, the input's trailing shape; ``eps`` None uses
    the machine epsilon of the computation dtype. With ``elementwise_affine`` a ``weight`` (ones)
    of that shape multiplies the result (else it is None). The output has the input's shape and
    dtype; RuntimeError from F.rms_norm for an input not ending in ``normalized_shape``.
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_factories.empty(self.normalized_shape, device=device,
                                                     dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Group normalization (``F.group_norm``) of (N, C, *) input: the ``num_channels`` channels
    are split into ``num_groups`` groups, each normalized per sample. With ``affine`` a
    per-channel ``weight`` (ones) and, if ``bias``, ``bias`` (zeros), both (C,); else None.
    ValueError when ``num_channels`` is not divisible by ``num_groups`` (as torch)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None,
                 *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine(self, (num_channels,), affine, affine and bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _BatchNorm(Module):
    """The batch-norm layers' shared state and forward (see BatchNorm1d)."""

    _expected_dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine(self, (num_features,), affine, affine and bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _factories.zeros(num_features, device=device,
                                                                  dtype=dtype))
            self.register_buffer("running_var", _factories.ones(num_features, device=device,
                                                                dtype=dtype))
            self.register_buffer("num_batches_tracked", _make(np.array(0, np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Running mean to zeros, running variance to ones, batch count to 0 (in place)."""
        if self.track_running_stats:
            write_(self.running_mean, 0)
            write_(self.running_var, 1)
            write_(self.num_batches_tracked, 0)

    def reset_parameters(self):
        """reset_running_stats(), then weight to ones and bias to zeros."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        nd = input.dim()
        if nd not in self._expected_dims:
            raise ValueError(f"expected {self._dims_text} input (got {nd}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            nbt = self.num_batches_tracked
            write_(nbt, nbt._data + 1)
            # momentum None: the cumulative average, 1 / (batches seen so far)
            factor = 1.0 / float(nbt._data) if self.momentum is None else self.momentum
        # in eval mode, batch statistics only when there are no running ones
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization (``F.batch_norm``) of (N, C) or (N, C, L) input per channel C.

    Parameters (with ``affine``): ``weight`` (C,) ones and, if ``bias``, ``bias`` (C,) zeros.
    Buffers (with ``track_running_stats``): ``running_mean`` (C,) zeros, ``running_var`` (C,)
    ones, ``num_batches_tracked`` () int64 0; otherwise all three are None. In training the
    batch's statistics normalize the input and the running ones are updated in place
    (``momentum``, or for ``momentum=None`` the cumulative average 1 / num_batches_tracked;
    the unbiased variance for running_var), and num_batches_tracked counts the batches; in
    eval mode the running statistics normalize (batch statistics if there are none).

    Raises ValueError for an input that is not 2-D or 3-D, and (from F.batch_norm) in training
    for one value per channel (N * L == 1); RuntimeError for another number of channels.
    """

    _expected_dims = (2, 3)
    _dims_text = "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """Batch normalization (``F.batch_norm``) of (N, C, H, W) input per channel C; everything
    else as BatchNorm1d. Raises ValueError for an input that is not 4-D, and in training for
    one value per channel (N * H * W == 1)."""

    _expected_dims = (4,)
    _dims_text = "4D"
