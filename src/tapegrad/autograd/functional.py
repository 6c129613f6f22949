"""Higher-level transforms on functions of tensors: vjp, jvp, jacobian, hessian, vhp, hvp.

All are built on :func:`tapegrad.autograd.grad`, as in ``torch.autograd.functional``: a jvp is
computed with the double-vjp trick (the vjp is linear in its vector, so differentiating it with
respect to that vector gives J @ v); jacobians are one vjp per output element.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make
from . import grad as _grad
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _tuple(x, what):
    single = isinstance(x, Tensor)
    xs = (x,) if single else tuple(x)
    for i, t in enumerate(xs):
        if not isinstance(t, Tensor):
            raise TypeError(f"The {what} given to the function must be either a Tensor or a tuple "
                            f"of Tensors but the value at index {i} has type {type(t).__name__}.")
    return xs, single


def _prepare(inputs, create_graph):
    xs, single = _tuple(inputs, "inputs")
    return tuple(x if (create_graph and x.requires_grad) else x.detach().requires_grad_(True)
                 for x in xs), single


def _zeros_like(t):
    return _make(np.zeros(t._data.shape, t._data.dtype))


def _grads(outputs, inputs, grad_outputs, create_graph):
    gs = _grad(outputs, inputs, grad_outputs=grad_outputs, create_graph=create_graph,
               retain_graph=True, allow_unused=True)
    return tuple(_zeros_like(x) if g is None else g for g, x in zip(gs, inputs))


def _out(xs, single):
    return xs[0] if single else xs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``. ``v`` matches the outputs' shapes (None for a 1-element output).
    Raises RuntimeError when ``v`` is missing for an output with more than one element."""
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        if v is None:
            for o in outs:
                if o._data.size != 1:
                    raise RuntimeError("The vector v can only be None if the user-provided "
                                       "function returns a single Tensor with a single element.")
            vs = tuple(_make(np.ones(o._data.shape, o._data.dtype)) for o in outs)
        else:
            vs, _ = _tuple(v, "v")
        res = _grads(outs, xs, vs, create_graph)
    if not create_graph:
        outs = tuple(o.detach() for o in outs)
        res = tuple(r.detach() for r in res)
    return _out(outs, single_out), _out(res, single_in)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` via the double-vjp trick. ``v`` matches the inputs' shapes."""
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        if v is None:
            if len(xs) != 1 or xs[0]._data.size != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            vs = (_make(np.ones(xs[0]._data.shape, xs[0]._data.dtype)),)
        else:
            vs, _ = _tuple(v, "v")
        us = tuple(_zeros_like(o).requires_grad_(True) for o in outs)
        g = _grads(outs, xs, us, True)
        res = _grads(g, us, vs, create_graph)
    if not create_graph:
        outs = tuple(o.detach() for o in outs)
        res = tuple(r.detach() for r in res)
    return _out(outs, single_out), _out(res, single_out)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for one input and one output a tensor of shape
    ``output.shape + input.shape``; nested tuples (outputs x inputs) otherwise."""
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        table = []
        for o in outs:
            rows = [[] for _ in xs]
            flat = o._data.size
            for k in range(flat):
                e = np.zeros(flat, o._data.dtype)
                e[k] = 1
                gs = _grads((o,), xs, (_make(e.reshape(o._data.shape)),), create_graph)
                for j, g in enumerate(gs):
                    rows[j].append(g)
            per_input = []
            for j, x in enumerate(xs):
                if rows[j]:
                    from ..ops.shape import stack
                    J = stack(rows[j]).reshape(tuple(o._data.shape) + tuple(x._data.shape))
                else:
                    J = _make(np.zeros(tuple(o._data.shape) + tuple(x._data.shape),
                                       x._data.dtype))
                per_input.append(J if create_graph else J.detach())
            table.append(_out(tuple(per_input), single_in))
    return _out(tuple(table), single_out)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: shape ``input.shape + input.shape`` for one input."""
    xs, single_in = _tuple(inputs, "inputs")

    def grad_fn(*ys):
        out = func(*ys)
        if not isinstance(out, Tensor) or out._data.size != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element")
        return _grads((out,), ys, None, True)

    return jacobian(lambda *ys: _out(grad_fn(*ys), single_in), _out(xs, single_in),
                    create_graph=create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar ``func``."""
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        out = func(*xs)
        gs = _grads((out,), xs, None, True)
        vs, _ = _tuple(v, "v")
        res = _grads(gs, xs, vs, create_graph)
    if not create_graph:
        out, res = out.detach(), tuple(r.detach() for r in res)
    return out, _out(res, single_in)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar ``func`` (H is symmetric, so the same as vhp)."""
    return vhp(func, inputs, v, create_graph, strict)
