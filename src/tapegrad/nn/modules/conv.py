"""Conv2d: a 2-D convolution layer over ``nn.functional.conv2d``."""
from __future__ import annotations

import math

from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv2d"]


def _pair(v):
    # torch's nn.modules.utils._pair: a sequence is kept as given (a wrong length is an error when
    # the layer runs, from F.conv2d), a number is doubled
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(Module):
    """2-D convolution (cross-correlation) of (N, C_in, H, W) or (C_in, H, W) input.

    ``weight``: (out_channels, in_channels // groups, kh, kw); ``bias``: (out_channels,) or None;
    both start as torch's (kaiming_uniform_(a=sqrt(5)) for the weight, U(-1/sqrt(fan_in),
    1/sqrt(fan_in)) for the bias), drawn from tapegrad's default generator. ``padding`` may be an
    int, a pair, 'valid' or 'same'. Only padding_mode='zeros' is supported; dilation and groups
    other than 1 raise NotImplementedError from ``F.conv2d`` when the layer runs.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _pair(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                             f"'circular'], but got padding_mode='{padding_mode}'")
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d: padding_mode='{padding_mode}' is not supported "
                                      f"by tapegrad (only 'zeros')")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.dilation = _pair(dilation)
        self.transposed = False
        self.output_padding = (0, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(_factories.empty(
            (out_channels, in_channels // groups, *self.kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_factories.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s
