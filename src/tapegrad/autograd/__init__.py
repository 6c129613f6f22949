"""Reverse-mode automatic differentiation: backward, grad, Function, grad modes, gradcheck."""
from __future__ import annotations

import warnings

import numpy as np

from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .graph import Node, user_stacklevel

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "Node", "gradcheck", "gradgradcheck", "functional"]


# _tensor and engine import this package, so what backward and grad need from them is bound at
# their first call (an import statement inside a function costs about a microsecond per call)
_Tensor = _make = run_backward = None


def _bind():
    global _Tensor, _make, run_backward
    from .._tensor import Tensor as _Tensor, _make
    from .engine import run_backward


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs, create_graph, api):
    Tensor = _Tensor
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    for i, g in enumerate(grad_outputs):
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__} ({api}: gradient {i} must be a tensor of its "
                            f"output's shape, e.g. tapegrad.ones_like(output))")
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{api}: got {len(grad_outputs)} gradients for {len(outputs)} outputs; "
                           "pass one gradient (or None for a scalar output) per output")
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor):
            raise TypeError(f"{api}: expected a Tensor as output {i}, got {type(out).__name__}")
        if not out.requires_grad:     # (a stale view's history is refreshed by this read)
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn "
                f"({api}: this output of shape {list(out._data.shape)} was computed from tensors "
                f"that do not require grad, or under no_grad(); create the inputs with "
                f"requires_grad=True, or call x.requires_grad_() before the forward ops)")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs: {api} was called on "
                    f"a tensor of shape {list(out._data.shape)} without a gradient. Reduce it to a "
                    f"scalar first (out.sum().backward() or out.mean().backward()), or pass "
                    f"gradient=<tensor of shape {list(out._data.shape)}> (the vector in the "
                    f"vector-Jacobian product).")
            # (np.array makes a 0-d one several times faster than np.ones)
            arr = out._data
            g = _make(np.array(1, arr.dtype) if arr.ndim == 0 else np.ones(arr.shape, arr.dtype))
        else:
            if g._data.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g._data.shape)} and "
                    f"output[{i}] has a shape of {tuple(out._data.shape)} ({api}: the gradient must "
                    f"have exactly the output's shape)")
            # (torch casts an integer or bool gradient to the output's dtype too)
            if g._data.dtype != out._data.dtype:
                g = g.to(out.dtype)
            if not create_graph:
                g = g.detach()
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the leaves of their graph.

    ``tensors``: Tensor or sequence; ``grad_tensors``: matching gradients (None allowed for
    one-element outputs). ``retain_graph`` defaults to ``create_graph``. ``inputs``: only these
    tensors accumulate (leaves or non-leaves). Raises RuntimeError on a missing or mis-shaped
    gradient, an output that does not require grad, a freed graph, or an in-place-modified saved
    tensor; when it raises, no ``.grad`` was changed and the graph is not freed.
    """
    if run_backward is None:
        _bind()
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors)
    if isinstance(grad_tensors, _Tensor):
        grad_tensors = (grad_tensors,)
    elif grad_tensors is not None:
        grad_tensors = tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and is_grad_enabled():   # (torch warns only with grad mode on)
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.", UserWarning, stacklevel=user_stacklevel())
    ins = _as_tuple(inputs)
    if ins is not None:
        if len(ins) == 0:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty")
        for t in ins:
            if not t.requires_grad:
                raise RuntimeError("backward: one of the differentiated Tensors in inputs does not "
                                   "require grad")
    grads = _make_grads(outputs, grad_tensors, create_graph, "backward()")
    run_backward(list(outputs), grads, retain_graph, create_graph, inputs=ins, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) as a tuple, without touching any ``.grad``.

    ``grad_outputs``: the vector of the vector-Jacobian product (one per output; None for a
    one-element output). ``allow_unused``: return None (or zeros with ``materialize_grads``) for an
    input the outputs do not depend on instead of raising RuntimeError. ``create_graph``: the
    result is itself differentiable.
    """
    if run_backward is None:
        _bind()
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    if isinstance(grad_outputs, type(outs[0])) if outs else False:
        grad_outputs = (grad_outputs,)
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors does not require grad (input "
                               f"{i}, shape {list(t._data.shape)}): create it with "
                               f"requires_grad=True or call .requires_grad_() on it")
    grads = _make_grads(outs, None if grad_outputs is None else tuple(grad_outputs), create_graph,
                        "autograd.grad()")
    result = run_backward(list(outs), grads, retain_graph, create_graph, inputs=ins,
                          accumulate=False)
    final = []
    for i, (t, g) in enumerate(zip(ins, result)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors appears to not have been used in the graph "
                    f"(input {i}, shape {list(t._data.shape)}, {t.dtype}). Set allow_unused=True if "
                    f"this is the desired behavior.")
            if materialize_grads:
                g = _make(np.zeros(t._data.shape, t._data.dtype))
        elif not create_graph and g.grad_fn is not None:
            g = g.detach()
        final.append(g)
    return tuple(final)


def __getattr__(name):
    # function.py and engine.py import Tensor, which imports this package: load them lazily
    if name in ("Function", "FunctionCtx", "once_differentiable"):
        from . import function
        return getattr(function, name)
    if name in ("gradcheck", "gradgradcheck"):
        # `from . import gradcheck` would recurse (it asks this __getattr__ first), and importing
        # the submodule binds the name to the module: bind the functions, as torch does
        import importlib
        _gc = importlib.import_module(".gradcheck", __name__)
        globals().update(gradcheck=_gc.gradcheck, gradgradcheck=_gc.gradgradcheck)
        return getattr(_gc, name)
    if name == "functional":
        import importlib
        return importlib.import_module(".functional", __name__)
    raise AttributeError(f"module 'tapegrad.autograd' has no attribute {name!r}")
