"""``tapegrad.nn.functional``: the stateless forms of the layers, as ``torch.nn.functional``.

Everything registered with ``functional=True`` in :mod:`tapegrad.ops` (linear, softmax,
log_softmax, nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div,
poisson_nll_loss, ...) is exposed here under its name, plus the activations relu, tanh and
sigmoid.
"""

from .. import ops as _ops
from ..ops._registry import FUNCTIONAL as _FUNCTIONAL, METHODS as _METHODS, PUBLIC as _PUBLIC

globals().update(_FUNCTIONAL)
_relu_apply_for = _ops.pointwise.relu_apply_for


def relu(input, inplace=False):
    """max(input, 0) elementwise (relu'(0) = 0; ReluBackward0). ``inplace=True`` is
    ``tapegrad.relu_(input)``: writes into input and returns it (ReluBackward0 on the rebased
    history), with the in-place rules of ops/inplace.py (RuntimeError for a leaf that requires
    grad with grad mode on, for a view made under no_grad written with grad mode on, ...).
    Without it, a floating input that nothing but this call holds (a temporary, as in
    ``F.relu(F.linear(x, w, b))``) has its array written over rather than a new one made, as
    hand-written NumPy updates its pre-activations in place; nobody can see the difference
    (:class:`~tapegrad.ops.pointwise.ReluOver`)."""
    if inplace:
        return _PUBLIC["relu_"](input)
    # (the op's apply called from here, one frame below the caller: it finds the caller's line
    # for the saved result without walking the stack)
    return _relu_apply_for(input)(input)


def tanh(input):
    """Hyperbolic tangent, elementwise."""
    return _METHODS["tanh"](input)


def sigmoid(input):
    """1 / (1 + exp(-input)), elementwise."""
    return _METHODS["sigmoid"](input)


def __getattr__(name):
    # ops registered after this module was imported
    fn = _FUNCTIONAL.get(name)
    if fn is not None:
        return fn
    raise AttributeError(f"module 'tapegrad.nn.functional' has no attribute {name!r}")


del _ops
