"""MaxPool2d: 2-D max pooling over ``nn.functional.max_pool2d``."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool2d"]


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
