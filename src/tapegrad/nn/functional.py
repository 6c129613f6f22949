"""``tapegrad.nn.functional``: the stateless forms of the layers, as ``torch.nn.functional``.

Everything registered with ``functional=True`` in :mod:`tapegrad.ops` (linear, softmax,
log_softmax, nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div,
poisson_nll_loss, ...) is exposed here under its name, plus the activations relu, tanh and
sigmoid.
"""

from .. import ops as _ops
from ..ops._registry import FUNCTIONAL as _FUNCTIONAL, PUBLIC as _PUBLIC

globals().update(_FUNCTIONAL)


def relu(input, inplace=False):
    """max(input, 0) elementwise (relu'(0) = 0). ``inplace=True`` needs ``Tensor.relu_``."""
    if inplace:
        fn = getattr(input, "relu_", None)
        if fn is None:
            raise NotImplementedError("relu(inplace=True): tapegrad has no in-place relu_ yet; "
                                      "use inplace=False")
        return fn()
    return _PUBLIC["relu"](input)


def tanh(input):
    """Hyperbolic tangent, elementwise."""
    return _PUBLIC["tanh"](input)


def sigmoid(input):
    """1 / (1 + exp(-input)), elementwise."""
    return _PUBLIC["sigmoid"](input)


def __getattr__(name):
    # ops registered after this module was imported
    fn = _FUNCTIONAL.get(name)
    if fn is not None:
        return fn
    raise AttributeError(f"module 'tapegrad.nn.functional' has no attribute {name!r}")


del _ops
