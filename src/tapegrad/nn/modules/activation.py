"""Activation layers: ReLU, Tanh, Sigmoid, GELU, Softmax, LogSoftmax, and LeakyReLU, ELU, SELU,
CELU, SiLU, Mish, Softplus, Softsign, Hardtanh, ReLU6, Hardsigmoid, Hardswish, LogSigmoid, Softmin,
Threshold, GLU, Tanhshrink, Softshrink, Hardshrink, PReLU: torch's constructor arguments,
attributes and printed form; each forward calls the op of the same name in nn.functional (see
tapegrad.ops.activations for values, gradients and errors)."""
from __future__ import annotations

import warnings

from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["ReLU", "Tanh", "Sigmoid", "GELU", "Softmax", "LogSoftmax",
           "LeakyReLU", "ELU", "SELU", "CELU", "SiLU", "Mish", "Softplus", "Softsign", "Hardtanh",
           "ReLU6", "Hardsigmoid", "Hardswish", "LogSigmoid", "Softmin", "Threshold", "GLU",
           "Tanhshrink", "Softshrink", "Hardshrink", "PReLU"]


def _inplace_str(inplace, first=False):
    """The ``inplace`` part of an extra_repr: shown only when True."""
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


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


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x (F.leaky_relu). ``inplace=True`` writes into the
    input (leaky_relu_)."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_str(self.inplace)}"


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1) (F.elu); ``inplace=True``: elu_."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class SELU(Module):
    """scale * elu(x, alpha) with torch's fixed alpha and scale (F.selu); ``inplace=True``:
    selu_."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, first=True)


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (F.celu); ``inplace=True``: celu_.
    alpha == 0 raises RuntimeError when called (as torch)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_str(self.inplace)}"


class SiLU(Module):
    """x * sigmoid(x) (F.silu); ``inplace=True`` writes into the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, first=True)


class Mish(Module):
    """x * tanh(softplus(x)) (F.mish); ``inplace=True`` writes into the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, first=True)


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold (F.softplus)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    """x / (1 + |x|) (F.softsign)."""

    def forward(self, input):
        return F.softsign(input)


class Hardtanh(Module):
    """clamp(x, min_val, max_val) (F.hardtanh); ``inplace=True``: hardtanh_. ``min_value`` /
    ``max_value`` are the deprecated names of the bounds (FutureWarning, as torch).
    AssertionError unless max_val > min_val."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        assert self.max_val > self.min_val, \
            f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_str(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6): a Hardtanh with min_val 0.0 and max_val 6.0."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace, first=True)


class Hardsigmoid(Module):
    """min(max(x + 3, 0), 6) / 6 (F.hardsigmoid); ``inplace=True`` writes into the input (not
    shown in the repr, as torch)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Module):
    """x * min(max(x + 3, 0), 6) / 6 (F.hardswish); ``inplace=True`` writes into the input (not
    shown in the repr, as torch)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class LogSigmoid(Module):
    """log(sigmoid(x)) (F.logsigmoid)."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softmin(Module):
    """softmax(-x) along ``dim`` (F.softmin; ``dim=None``: torch's implicit dim, with a
    warning)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Threshold(Module):
    """``value`` where x <= threshold, else x (F.threshold); ``inplace=True``: threshold_."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_str(self.inplace)}"


class GLU(Module):
    """a * sigmoid(b), a and b the halves of x along ``dim`` (F.glu)."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Tanhshrink(Module):
    """x - tanh(x) (F.tanhshrink)."""

    def forward(self, input):
        return F.tanhshrink(input)


class Softshrink(Module):
    """x -+ lambd outside [-lambd, lambd], 0 inside (F.softshrink)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Module):
    """x outside [-lambd, lambd], 0 inside (F.hardshrink)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    """x where x > 0, else weight * x (F.prelu). ``weight``: a Parameter of shape
    (num_parameters,), every element ``init``; num_parameters is 1 (one shared slope) or the
    number of channels (dim 1 of the input). ``device`` / ``dtype`` as for tapegrad.empty."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_factories.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
