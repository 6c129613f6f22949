"""Activation layers: ReLU, Tanh, Sigmoid, GELU, Softmax, LogSoftmax."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["ReLU", "Tanh", "Sigmoid", "GELU", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """max(x, 0) elementwise."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x) elementwise."""

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise."""

    def forward(self, input):
        return F.sigmoid(input)


class GELU(Module):
    """x * Phi(x) (exact, with erf), or its tanh approximation with ``approximate='tanh'``."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    """softmax along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log_softmax along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"
