"""Pooling layers: MaxPool1d/2d, AvgPool1d/2d and AdaptiveAvgPool1d/2d over the
``nn.functional`` ops of the same names."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d"]


def _single(v):
    # torch's nn.modules.utils._single: an iterable kept as a tuple, a number as a 1-tuple
    try:
        return tuple(v)
    except TypeError:
        return (v,)


class MaxPool2d(Module):
    """Max over ``kernel_size`` windows of (N, C, H, W) or (C, H, W) input; ``stride`` defaults
    to ``kernel_size``. With ``return_indices`` the layer returns (values, indices)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(MaxPool2d):
    """Max over ``kernel_size`` windows of (N, C, L) or (C, L) input (``F.max_pool1d``);
    ``stride`` defaults to ``kernel_size``. With ``return_indices`` it returns (values,
    indices)."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool1d(Module):
    """Average over ``kernel_size`` windows of (N, C, L) or (C, L) input (``F.avg_pool1d``);
    kernel_size, stride (default kernel_size) and padding are kept as 1-tuples, as torch."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """Average over ``kernel_size`` windows of (N, C, H, W) or (C, H, W) input
    (``F.avg_pool2d``); ``stride`` defaults to ``kernel_size``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Adaptive average pooling of (N, C, L) or (C, L) input to ``output_size``
    (``F.adaptive_avg_pool1d``)."""

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Adaptive average pooling of (N, C, H, W) or (C, H, W) input to ``output_size`` (an int or
    a pair; None keeps that input size) (``F.adaptive_avg_pool2d``)."""

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)
