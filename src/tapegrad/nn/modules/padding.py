"""Padding layers over ``nn.functional.pad``: ZeroPad1d/2d, ConstantPad1d/2d, ReflectionPad1d/2d,
ReplicationPad1d/2d. ``padding`` is an int (the same on every side) or a tuple of 2 (1d:
left, right) or 4 (2d: left, right, top, bottom) ints, stored as that tuple."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d",
           "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d"]


def _ntuple(v, n):
    # torch's nn.modules.utils._ntuple: an iterable kept as a tuple, a number repeated n times
    try:
        return tuple(v)
    except TypeError:
        return (v,) * n


class _ConstantPadNd(Module):
    _n = 2

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _ntuple(padding, self._n)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim of (N, C, W) or (C, W) input with ``value`` (``padding``: int or
    (left, right)); records ConstantPadNdBackward0."""


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims of (N, C, H, W) or (C, H, W) input with ``value`` (``padding``: int
    or (left, right, top, bottom)); records ConstantPadNdBackward0."""

    _n = 4


class ZeroPad1d(ConstantPad1d):
    """:class:`ConstantPad1d` with value 0."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """:class:`ConstantPad2d` with value 0."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _IndexPadNd(Module):
    _n = 2
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_IndexPadNd):
    """Mirror-pad the last dim of (N, C, W) or (C, W) input (each pad < W);
    ReflectionPad1DBackward0."""


class ReflectionPad2d(_IndexPadNd):
    """Mirror-pad the last two dims of (N, C, H, W) or (C, H, W) input (each pad < its dim);
    ReflectionPad2DBackward0."""

    _n = 4


class ReplicationPad1d(_IndexPadNd):
    """Edge-pad the last dim of (N, C, W) or (C, W) input; ReplicationPad1DBackward0."""

    _mode = "replicate"


class ReplicationPad2d(_IndexPadNd):
    """Edge-pad the last two dims of (N, C, H, W) or (C, H, W) input;
    ReplicationPad2DBackward0."""

    _n = 4
    _mode = "replicate"
