"""``tapegrad.nn.functional``: the stateless forms of the layers, as ``torch.nn.functional``.

Everything registered with ``functional=True`` in :mod:`tapegrad.ops` (linear, softmax,
log_softmax, nll_loss, cross_entropy, mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div,
poisson_nll_loss, ...) is exposed here under its name, plus the activations relu, tanh and
sigmoid.
"""

import numpy as _np

from .. import ops as _ops
from .._tensor import Tensor as _Tensor
from ..autograd.graph import sole_holder as _sole_holder
from ..ops._registry import FUNCTIONAL as _FUNCTIONAL, METHODS as _METHODS, PUBLIC as _PUBLIC

globals().update(_FUNCTIONAL)
_relu_apply = _ops.pointwise.Relu.apply
_relu_over_apply = _ops.pointwise.ReluOver.apply
_FLOATS = frozenset(_np.dtype(t) for t in (_np.float16, _np.float32, _np.float64))


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
    # a temporary (references: this frame's, sole_holder's parameter, getrefcount's argument)
    # is written over: nobody can see its array change
    if type(input) is _Tensor and input._data.dtype in _FLOATS and \
            _sole_holder(input, None, None, 3):
        return _relu_over_apply(input)
    return _relu_apply(input)


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
