"""Higher-level transforms on functions of tensors: vjp, jvp, jacobian, hessian, vhp, hvp.

All are built on :func:`tapegrad.autograd.grad`, as in ``torch.autograd.functional``: a jvp is
computed with the double-vjp trick (the vjp is linear in its vector, so differentiating it with
respect to that vector gives J @ v); jacobians are one vjp per output element.

Common conventions (as torch): ``inputs`` (and ``v``) is a Tensor or a tuple of Tensors, and each
result keeps that form (a Tensor for a Tensor, a tuple for a tuple, even of one). Gradients have
the dtype of the tensor they are taken with respect to; an output that does not depend on an input
gives zeros (torch's ``strict=False``). Without ``create_graph`` every returned tensor is detached;
with it, the results are differentiable (inputs that require grad are used as they are, so the
graph reaches back to them). TypeError when ``inputs``, ``v`` or the outputs of ``func`` are not
Tensors (or tuples of Tensors); RuntimeError when ``v`` is omitted where it cannot default to a
single ``1`` or has the wrong shape. Accepted for torch compatibility and ignored: ``strict``
(always the behaviour of torch's default ``strict=False``: zeros where torch with
``strict=True`` raises RuntimeError), and ``vectorize``, ``strategy`` and
``outer_jacobian_strategy`` (everything is computed in reverse mode, one vjp at a time, with
the same values as torch for any of them).
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make
from ..ops.shape import stack
from . import grad as _grad
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single "
                  "Tensor with a single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
                 "single Tensor with a single element.")


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


def _ones_like(t):
    return _make(np.ones(t._data.shape, t._data.dtype))


def _vectors(v, like, message):
    """``v`` as a tuple of Tensors; for ``v=None`` a single ``1`` shaped like ``like[0]``, allowed
    (as torch) only when ``like`` is one Tensor with one element, else RuntimeError(message)."""
    if v is not None:
        return _tuple(v, "v")[0]
    if len(like) != 1 or like[0]._data.size != 1:
        raise RuntimeError(message)
    return (_ones_like(like[0]),)


def _grads(outputs, inputs, grad_outputs, create_graph):
    """Gradients of ``outputs`` (weighted by ``grad_outputs``, None for implicit ones) with
    respect to ``inputs``, zeros for an input they do not depend on. As torch's _autograd_grad,
    outputs that do not require grad (a constant, the zero gradient of an unused input, the
    gradient of a linear function) are left out, contributing zeros."""
    gos = (None,) * len(outputs) if grad_outputs is None else tuple(grad_outputs)
    live = [(o, go) for o, go in zip(outputs, gos) if o.requires_grad]
    if live:
        outs, gos = zip(*live)
        gs = _grad(outs, inputs, grad_outputs=None if grad_outputs is None else gos,
                   create_graph=create_graph, retain_graph=True, allow_unused=True)
    else:
        gs = (None,) * len(inputs)
    return tuple(_zeros_like(x) if g is None else g for g, x in zip(gs, inputs))


def _out(xs, single):
    return xs[0] if single else xs


def _finish(ts, create_graph):
    """The tensors ``ts`` as returned to the user: detached unless ``create_graph``."""
    return tuple(ts) if create_graph else tuple(t.detach() for t in ts)


def _result(outs, single_out, res, single_res, create_graph):
    """The ``(func_output, result)`` pair of vjp/jvp/vhp/hvp, each in its caller's form."""
    return (_out(_finish(outs, create_graph), single_out),
            _out(_finish(res, create_graph), single_res))


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Vector-Jacobian product: ``(func(*inputs), v^T J)``.

    ``inputs``: a Tensor or tuple of Tensors. ``v``: a Tensor or tuple of Tensors shaped like the
    outputs of ``func``; it may be None only when ``func`` returns a single Tensor with a single
    element (then it is a ``1`` of that shape and dtype). Returns the outputs of ``func`` (a Tensor
    or tuple, as ``func`` returned them) and the product, shaped like ``inputs`` (a Tensor or tuple
    as given), each entry with its input's shape and dtype (zeros for an input the outputs do not
    depend on). Raises RuntimeError for ``v=None`` with several outputs or a multi-element output,
    or for a ``v`` of another shape; TypeError for non-Tensor inputs, outputs or ``v``.
    ``create_graph=True`` makes both results differentiable. ``strict`` is accepted for torch
    compatibility and ignored (always torch's default, False: zeros, never an error, for an
    independent input)."""
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        vs = _vectors(v, outs, _V_NONE_OUTPUT)
        res = _grads(outs, xs, vs, create_graph)
    return _result(outs, single_out, res, single_in, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Jacobian-vector product: ``(func(*inputs), J v)``, via the double-vjp trick.

    ``v``: a Tensor or tuple of Tensors shaped like ``inputs``; it may be None only when
    ``inputs`` is a single Tensor with a single element (then it is a ``1`` of that shape and
    dtype). Returns the outputs of ``func`` (a Tensor or tuple, as ``func`` returned them) and the
    product shaped like those outputs (same form, each entry with its output's shape and dtype;
    zeros for an output that does not depend on the inputs). Raises RuntimeError for ``v=None``
    with several inputs or a multi-element input, or for a ``v`` of another shape; TypeError for
    non-Tensor inputs, outputs or ``v``. ``create_graph=True`` makes both results differentiable.
    ``strict`` is accepted for torch compatibility and ignored (always torch's default, False:
    zeros, never an error, for an independent output)."""
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        vs = _vectors(v, xs, _V_NONE_INPUT)
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        us = tuple(_zeros_like(o).requires_grad_(True) for o in outs)
        g = _grads(outs, xs, us, True)
        res = _grads(g, us, vs, create_graph)
    return _result(outs, single_out, res, single_out, create_graph)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, computed with one vjp per output element.

    For one input and one output (both Tensors) a Tensor of shape ``output.shape +
    input.shape`` and the input's dtype. With a tuple of inputs and/or outputs, nested tuples:
    ``result[i][j]`` (i over outputs, j over inputs) has shape ``outputs[i].shape +
    inputs[j].shape``; a level that was a single Tensor is not wrapped in a tuple (so one output
    and a tuple of inputs gives a tuple over the inputs). A block is zeros where the output does
    not depend on the input. TypeError for non-Tensor inputs or outputs. ``create_graph=True``
    makes the result differentiable. Accepted for torch compatibility and ignored: ``strict``
    (always torch's default, False: zero blocks, never an error), ``vectorize`` and ``strategy``
    (always reverse mode, one vjp per output element; the values equal torch's for any of
    them, though torch's forward mode returns lists and the output's dtype)."""
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
                shape = tuple(o._data.shape) + tuple(x._data.shape)
                if rows[j]:
                    per_input.append(stack(rows[j]).reshape(shape))
                else:
                    per_input.append(_make(np.zeros(shape, x._data.dtype)))
            table.append(_out(_finish(per_input, create_graph), single_in))
    return _out(tuple(table), single_out)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs`` (the jacobian of its gradient).

    ``func`` must return a single Tensor with a single element. For one input (a Tensor) a Tensor
    of shape ``input.shape + input.shape`` and the input's dtype; for a tuple of inputs a tuple of
    tuples with ``result[i][j]`` of shape ``inputs[i].shape + inputs[j].shape``. RuntimeError when
    ``func`` returns anything else (a tuple, or a Tensor with more or fewer than one element);
    TypeError for non-Tensor inputs. ``create_graph=True`` makes the result differentiable.
    Accepted for torch compatibility and ignored: ``strict`` (always False: zero blocks, never
    an error), ``vectorize`` and ``outer_jacobian_strategy`` (reverse mode throughout, same
    values as torch)."""
    xs, single_in = _tuple(inputs, "inputs")

    def grad_fn(*ys):
        out = func(*ys)
        if not isinstance(out, Tensor) or out._data.size != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element")
        return _grads((out,), ys, None, True)

    return jacobian(lambda *ys: _out(grad_fn(*ys), single_in), _out(xs, single_in),
                    create_graph=create_graph)


def _vhp(func, inputs, v, create_graph, name):
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        vs = _vectors(v, xs, _V_NONE_INPUT)
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        if not single_out:
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outs[0]._data.size != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                               f"contain a single element")
        gs = _grads(outs, xs, None, True)
        res = _grads(gs, xs, vs, create_graph)
    return _result(outs, True, res, single_in, create_graph)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Vector-Hessian product ``(func(*inputs), v^T H)`` for a scalar ``func``.

    ``func`` must return a single Tensor with a single element (any shape, e.g. ``()`` or
    ``(1,)``); that Tensor is the first result. ``v``: a Tensor or tuple of Tensors shaped like
    ``inputs``; it may be None only when ``inputs`` is a single Tensor with a single element (then
    it is a ``1`` of that shape and dtype), as torch. The product is shaped like ``inputs`` (a
    Tensor or tuple as given), each entry with its input's shape and dtype (zeros where the
    gradient does not depend on that input). Raises RuntimeError for ``v=None`` with several
    inputs or a multi-element input (before ``func`` is called), when ``func`` returns a tuple or
    a Tensor with more than one element, or for a ``v`` of another shape; TypeError for non-Tensor
    inputs, outputs or ``v``. ``create_graph=True`` makes both results differentiable. ``strict``
    is accepted for torch compatibility and ignored (always torch's default, False: zeros, never
    an error, where the gradient does not depend on an input)."""
    return _vhp(func, inputs, v, create_graph, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Hessian-vector product ``(func(*inputs), H v)`` for a scalar ``func``.

    The Hessian of a (twice differentiable) scalar function is symmetric, so this is computed as
    :func:`vhp` (one double-backward instead of torch's double-back trick); values, shapes,
    dtypes, the ``v=None`` rule and the errors raised are those of :func:`vhp` (messages name
    ``hvp``). ``strict`` is accepted for torch compatibility and ignored."""
    return _vhp(func, inputs, v, create_graph, "hvp")
