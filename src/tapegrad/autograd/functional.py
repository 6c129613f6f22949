"""Higher-level transforms on functions of tensors: vjp, jvp, jacobian, hessian, vhp, hvp.

All are built on :func:`tapegrad.autograd.grad`, as in ``torch.autograd.functional``: a jvp is
computed with the double-vjp trick (the vjp is linear in its vector, so differentiating it with
respect to that vector gives J @ v); jacobians are one vjp per output element.

Common conventions (as torch): ``inputs`` (and ``v``) is a Tensor or a tuple of Tensors, and each
result keeps that form (a Tensor for a Tensor, a tuple for a tuple, even of one). Gradients have
the dtype of the tensor they are taken with respect to. Without ``create_graph`` every returned
tensor is detached; with it, the results are differentiable (inputs that require grad are used as
they are, so the graph reaches back to them). TypeError when ``inputs``, ``v`` or the outputs of
``func`` are not Tensors (or tuples of Tensors); RuntimeError when ``v`` is omitted where it cannot
default to a single ``1`` or has the wrong shape. Accepted for torch compatibility and, with
``strict=False``, ignored, with the same values as torch for any of them: ``vectorize``,
``strategy`` and ``outer_jacobian_strategy`` (everything is computed in reverse mode, one vjp at
a time).

``strict`` (default False) is torch's. With False, an output that does not depend on an input
gives zeros, never an error. With ``strict=True`` each function raises RuntimeError, as torch
does, where a result would be such an independent zero: an output of ``func`` that does not
require grad (a constant, a detached tensor); an output independent of an input (vjp, jvp, and
jacobian element by element); for hessian/vhp/hvp a gradient that does not require grad
(``func`` linear in an input, or not using it) or that does not depend on an input; for jvp/hvp
a part that does not reach the inputs (torch's double-backward trick cannot see through it).
With ``create_graph=True`` as well, a result that would not be differentiable (its derivative is
constant: a linear function's vjp, jvp or jacobian, a quadratic function's hessian, vhp or hvp)
raises RuntimeError too. Strict mode also checks ``v`` as torch does before any gradient is
computed (its length and shapes, RuntimeError). jacobian/hessian with ``strict=True`` raise
RuntimeError with ``vectorize=True`` (after ``func`` has run) and with
``strategy``/``outer_jacobian_strategy="forward-mode"`` (before it runs; NotImplementedError
instead when ``create_graph=True`` too). Each message starts with torch's text, then says in
parentheses which output/input it is about, its shape and what to do (usually ``strict=False``
to get the zeros). Like torch's, the checks look at the autograd graph, not at values, so they
follow each op's backward formula (derivatives.yaml's, as torch's).
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make, _zeros_of
from ..ops.shape import stack
from . import grad as _grad
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single "
                  "Tensor with a single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
                 "single Tensor with a single element.")

# torch's strict-mode texts; tapegrad's messages start with them and add details in parentheses
_OUTPUT_NO_GRAD = ("Output {} of the user-provided function does not require gradients. The "
                   "outputs must be computed in a differentiable manner from the input when "
                   "running in strict mode.")
_OUTPUT_INDEPENDENT = ("The output of the user-provided function is independent of input {}. "
                       "This is not allowed in strict mode.")
_GRAD_INDEPENDENT = ("The gradient with respect to input {} is independent of the inputs of the "
                     "user-provided function. This is not allowed in strict mode.")
_JACOBIAN_INDEPENDENT = ("Output {} of the user-provided function is independent of input {}. "
                         "This is not allowed in strict mode.")
_JACOBIAN_CONSTANT = ("The jacobian of the user-provided function is independent of input {}. "
                      "This is not allowed in strict mode when create_graph=True.")
_BACK_TRICK = ("The gradient with respect to the input is independent of entry {} in the "
               "grad_outputs when using the double backward trick to compute forward mode "
               "gradients. This is not allowed in strict mode.")
_HESSIAN_JACOBIAN = ("While computing the hessian, found that the jacobian of the user-provided "
                     "function with respect to input {} is independent of the input. This is not "
                     "allowed in strict mode. You should ensure that your function is twice "
                     "differentiable and that the jacobian depends on the inputs (this would be "
                     "violated by a linear function for example).")
_DOUBLE_BACK = ("The jacobian of the user-provided function is independent of input {}. This is "
                "not allowed in strict mode.")
_HESSIAN_CONSTANT = ("The hessian of the user-provided function is independent of input {}. This "
                     "is not allowed in strict mode when create_graph=True.")
_DOUBLE_BACK_TRICK = ("The hessian of the user-provided function is independent of entry {} in "
                      "the grad_jacobian. This is not allowed in strict mode as it prevents from "
                      "using the double backward trick to replace forward mode AD.")
_STRICT_VECTORIZE = ("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                     "not supported together. Please either set `strict=False` or "
                     "`vectorize=False`.")
_STRICT_FORWARD = ('torch.autograd.functional.jacobian: `strict=True` and '
                   '`strategy="forward-mode"` are not supported together (yet). Please either '
                   'set `strict=False` or `strategy="reverse-mode"`.')
_CREATE_GRAPH_FORWARD = ('torch.autograd.functional.jacobian: `create_graph=True` and '
                         '`strategy="forward-mode"` are not supported together (yet). Please '
                         'either set `create_graph=False` or `strategy="reverse-mode"`.')
_NOT_DIFFERENTIABLE = ("so with create_graph=True the result could not be differentiated further; "
                       "use create_graph=False, or strict=False to return it without a graph")


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


def _ones_like(t):
    return _make(np.ones(t._data.shape, t._data.dtype))


def _shape(t):
    return list(t._data.shape)


def _vectors(v, like, message):
    """``v`` as a tuple of Tensors; for ``v=None`` a single ``1`` shaped like ``like[0]``, allowed
    (as torch) only when ``like`` is one Tensor with one element, else RuntimeError(message)."""
    if v is not None:
        return _tuple(v, "v")[0]
    if len(like) != 1 or like[0]._data.size != 1:
        raise RuntimeError(message)
    return (_ones_like(like[0]),)


def _check_v(vs, refs, single, api, of):
    """Strict mode only: torch's checks of ``v`` against ``refs`` (``of``: "output" or "input"),
    one Tensor of the same shape per entry, else RuntimeError with torch's text."""
    hint = (f"{api}: v must hold one Tensor per {of} of the function, of that {of}'s shape; "
            f"the {of} shapes are {[_shape(r) for r in refs]}")
    if len(vs) != len(refs):
        if single:
            raise RuntimeError(f"The given v should contain a single Tensor. ({hint}; got "
                               f"{len(vs)} Tensors)")
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got "
                           f"{len(vs)}. ({hint})")
    for i, (t, r) in enumerate(zip(vs, refs)):
        if t._data.shape != r._data.shape:
            head = "v" if single else f"Entry {i} in v"
            raise RuntimeError(f"{head} has invalid size: should be torch.Size({_shape(r)}) but "
                               f"got torch.Size({_shape(t)}). ({hint})")


def _check_outputs(outs, api, zeros):
    """Strict mode: RuntimeError for the first output that does not require grad."""
    for i, o in enumerate(outs):
        if not o.requires_grad:
            raise RuntimeError(
                f"{_OUTPUT_NO_GRAD.format(i)} ({api}: output {i}, of shape {_shape(o)}, has no "
                f"autograd path back to the inputs: a constant, a detached tensor or a result "
                f"computed under no_grad(); use strict=False to get {zeros} for it)")


def _check_hessian_jacobian(gs, xs, api):
    """Strict mode, hessian/vhp/hvp: the gradient of the scalar output with respect to each input
    must exist (else torch's "independent of input" text) and require grad."""
    for i, (g, x) in enumerate(zip(gs, xs)):
        if g is None:
            raise RuntimeError(
                f"{_OUTPUT_INDEPENDENT.format(i)} ({api}: the output does not depend on input "
                f"{i} of shape {_shape(x)}; use strict=False to get zeros for it)")
        if not g.requires_grad:
            raise RuntimeError(
                f"{_HESSIAN_JACOBIAN.format(i)} ({api}: the gradient with respect to input {i} "
                f"of shape {_shape(x)} is constant (the function is linear in it, or does not use "
                f"it), so its second derivatives are zeros; use strict=False to get them)")


def _raw_grads(outputs, inputs, grad_outputs, create_graph):
    """Gradients of ``outputs`` (weighted by ``grad_outputs``, None for implicit ones) with
    respect to ``inputs``, None for an input they do not depend on. As torch's _autograd_grad,
    outputs that are None or do not require grad (a constant, the zero gradient of an unused
    input, the gradient of a linear function) are left out, contributing nothing."""
    gos = (None,) * len(outputs) if grad_outputs is None else tuple(grad_outputs)
    live = [(o, go) for o, go in zip(outputs, gos) if o is not None and o.requires_grad]
    if not live:
        return (None,) * len(inputs)
    outs, gos = zip(*live)
    return tuple(_grad(outs, inputs, grad_outputs=None if grad_outputs is None else gos,
                       create_graph=create_graph, retain_graph=True, allow_unused=True))


def _filled(gs, inputs):
    return tuple(_zeros_of(x) if g is None else g for g, x in zip(gs, inputs))


def _grads(outputs, inputs, grad_outputs, create_graph):
    """:func:`_raw_grads` with zeros for an input the outputs do not depend on."""
    return _filled(_raw_grads(outputs, inputs, grad_outputs, create_graph), inputs)


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
    ``create_graph=True`` makes both results differentiable. ``strict=True`` (torch's) raises
    RuntimeError, in this order, for an output of ``func`` that does not require grad, for a
    ``v`` of the wrong length or shapes, and, input by input, for an input no output depends on
    or (with ``create_graph=True``) whose product does not require grad (``func`` linear in it);
    with ``strict=False`` those give zeros / a result without a graph."""
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        if strict:
            _check_outputs(outs, "vjp", "zeros")
        vs = _vectors(v, outs, _V_NONE_OUTPUT)
        if not strict:
            res = _grads(outs, xs, vs, create_graph)
            return _result(outs, single_out, res, single_in, create_graph)
        _check_v(vs, outs, single_out, "vjp", "output")
        raw = _raw_grads(outs, xs, vs, create_graph)
        for i, (g, x) in enumerate(zip(raw, xs)):
            if g is None:
                raise RuntimeError(
                    f"{_OUTPUT_INDEPENDENT.format(i)} (vjp: no output depends on input {i} of "
                    f"shape {_shape(x)}; use strict=False to get zeros for it)")
            if create_graph and not g.requires_grad:
                raise RuntimeError(
                    f"{_JACOBIAN_CONSTANT.format(i)} (vjp: the product for input {i} of shape "
                    f"{_shape(x)} does not depend on the inputs (the function is linear in it), "
                    f"{_NOT_DIFFERENTIABLE})")
    return _result(outs, single_out, raw, single_in, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Jacobian-vector product: ``(func(*inputs), J v)``, via the double-vjp trick.

    ``v``: a Tensor or tuple of Tensors shaped like ``inputs``; it may be None only when
    ``inputs`` is a single Tensor with a single element (then it is a ``1`` of that shape and
    dtype). Returns the outputs of ``func`` (a Tensor or tuple, as ``func`` returned them) and the
    product shaped like those outputs (same form, each entry with its output's shape and dtype;
    zeros for an output that does not depend on the inputs). Raises RuntimeError for ``v=None``
    with several inputs or a multi-element input, or for a ``v`` of another shape; TypeError for
    non-Tensor inputs, outputs or ``v``. ``create_graph=True`` makes both results differentiable.
    ``strict=True`` (torch's) raises RuntimeError, in this order, for a ``v`` of the wrong length
    or shapes (before ``func`` runs), for an output of ``func`` that does not require grad, for an
    input no output depends on (or whose backward ignores its gradient), and, output by output,
    for an output that does not reach the inputs (it requires grad through other tensors only) or
    (with ``create_graph=True``) whose product does not require grad (``func`` linear); with
    ``strict=False`` those give zeros / a result without a graph."""
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        vs = _vectors(v, xs, _V_NONE_INPUT)
        if strict:
            _check_v(vs, xs, single_in, "jvp", "input")
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        us = tuple(_zeros_of(o).requires_grad_(True) for o in outs)
        if not strict:
            g = _grads(outs, xs, us, True)
            res = _grads(g, us, vs, create_graph)
            return _result(outs, single_out, res, single_out, create_graph)
        _check_outputs(outs, "jvp", "zeros")
        g = _raw_grads(outs, xs, us, True)
        for i, (gi, x) in enumerate(zip(g, xs)):
            if gi is None:
                raise RuntimeError(
                    f"{_OUTPUT_INDEPENDENT.format(i)} (jvp: no output depends on input {i} of "
                    f"shape {_shape(x)}; use strict=False to ignore its entry of v)")
            if not gi.requires_grad:
                raise RuntimeError(
                    f"{_GRAD_INDEPENDENT.format(i)} (jvp: the backward pass to input {i} of shape "
                    f"{_shape(x)} ignores the gradient it is given, e.g. a custom Function whose "
                    f"backward returns a constant, so the double-backward trick cannot compute "
                    f"J v; use strict=False to get zeros for it)")
        raw = _raw_grads(g, us, vs, create_graph)
        for i, (r, o) in enumerate(zip(raw, outs)):
            if r is None:
                raise RuntimeError(
                    f"{_BACK_TRICK.format(i)} (jvp: output {i} of shape {_shape(o)} does not "
                    f"depend on the inputs, only on other tensors that require grad; use "
                    f"strict=False to get zeros for it)")
            if create_graph and not r.requires_grad:
                raise RuntimeError(
                    f"{_JACOBIAN_CONSTANT.format(i)} (jvp: the product for output {i} of shape "
                    f"{_shape(o)} does not depend on the inputs (the output is linear in them), "
                    f"{_NOT_DIFFERENTIABLE})")
    return _result(outs, single_out, raw, single_out, create_graph)


def _jacobian(func, inputs, create_graph, strict, vectorize, strategy, api, name):
    """jacobian, for ``api`` ("jacobian" or "hessian"); ``name(i)`` says what output ``i`` of
    ``func`` is in strict-mode messages."""
    if strict and strategy == "forward-mode":
        arg = "outer_jacobian_strategy" if api == "hessian" else "strategy"
        if create_graph:
            raise NotImplementedError(
                f"{_CREATE_GRAPH_FORWARD} ({api}: {arg}=\"reverse-mode\" gives the same values)")
        raise RuntimeError(f"{_STRICT_FORWARD} ({api}: {arg}=\"reverse-mode\" gives the same "
                           f"values, with the strict checks)")
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        if strict:
            _check_outputs(outs, api, "zero blocks")
            if vectorize:
                raise RuntimeError(f"{_STRICT_VECTORIZE} ({api}: vectorize=False gives the same "
                                   f"values, with the strict checks)")
        table = []
        for i, o in enumerate(outs):
            rows = [[] for _ in xs]
            flat = o._data.size
            for k in range(flat):
                e = np.zeros(flat, o._data.dtype)
                e[k] = 1
                e = _make(e.reshape(o._data.shape))
                if strict:
                    gs = _raw_grads((o,), xs, (e,), create_graph)
                    _check_jacobian_row(gs, xs, i, k, o, create_graph, api, name)
                else:
                    gs = _grads((o,), xs, (e,), create_graph)
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


def _element(k, shape):
    """Element ``k`` (flat index) of a tensor of ``shape``, as words."""
    if len(shape) <= 1:
        return f"element {k}"
    return f"element {tuple(int(n) for n in np.unravel_index(k, shape))}"


def _check_jacobian_row(gs, xs, i, k, o, create_graph, api, name):
    """Strict mode: the gradients of element ``k`` of output ``i`` (``o``) with respect to each
    input must exist and, with ``create_graph``, require grad."""
    what = f"{_element(k, o._data.shape)} of {name(i)} (shape {_shape(o)})"
    for j, (g, x) in enumerate(zip(gs, xs)):
        if g is None:
            raise RuntimeError(
                f"{_JACOBIAN_INDEPENDENT.format(i, j)} ({api}: {what} does not depend on input "
                f"{j} (shape {_shape(x)}); use strict=False to get zeros there)")
        if create_graph and not g.requires_grad:
            raise RuntimeError(
                f"{_JACOBIAN_CONSTANT.format(i)} ({api}: the derivatives of {what} with respect "
                f"to input {j} (shape {_shape(x)}) are constant, {_NOT_DIFFERENTIABLE})")


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, computed with one vjp per output element.

    For one input and one output (both Tensors) a Tensor of shape ``output.shape +
    input.shape`` and the input's dtype. With a tuple of inputs and/or outputs, nested tuples:
    ``result[i][j]`` (i over outputs, j over inputs) has shape ``outputs[i].shape +
    inputs[j].shape``; a level that was a single Tensor is not wrapped in a tuple (so one output
    and a tuple of inputs gives a tuple over the inputs). A block is zeros where the output does
    not depend on the input. TypeError for non-Tensor inputs or outputs. ``create_graph=True``
    makes the result differentiable. ``strict=True`` (torch's) raises RuntimeError, in this order:
    with ``strategy="forward-mode"`` before ``func`` runs (NotImplementedError if
    ``create_graph=True`` too); for an output of ``func`` that does not require grad; with
    ``vectorize=True``; then, output element by element and input by input, where the element
    does not depend on the input or (with ``create_graph=True``) its derivatives do not require
    grad (the output is linear in that input). With ``strict=False`` those give zero blocks /
    a result without a graph, and ``vectorize`` and ``strategy`` are ignored (always reverse
    mode, one vjp per output element; the values equal torch's for any of them, though torch's
    forward mode returns lists and the output's dtype)."""
    return _jacobian(func, inputs, create_graph, strict, vectorize, strategy, "jacobian",
                     lambda i: f"output {i}")


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs`` (the jacobian of its gradient).

    ``func`` must return a single Tensor with a single element. For one input (a Tensor) a Tensor
    of shape ``input.shape + input.shape`` and the input's dtype; for a tuple of inputs a tuple of
    tuples with ``result[i][j]`` of shape ``inputs[i].shape + inputs[j].shape``. RuntimeError when
    ``func`` returns anything else (a tuple, or a Tensor with more or fewer than one element);
    TypeError for non-Tensor inputs. ``create_graph=True`` makes the result differentiable.
    ``strict=True`` (torch's) raises RuntimeError, in this order: with
    ``outer_jacobian_strategy="forward-mode"`` before ``func`` runs (NotImplementedError if
    ``create_graph=True`` too); when the output of ``func`` does not require grad (TypeError if it
    is not a Tensor); input by input, when the gradient does not require grad (``func`` linear in
    that input or not using it); with ``vectorize=True``; then, gradient element by element and
    input by input, where the element does not depend on the input (e.g. the gradient of
    ``(a * b).sum()`` with respect to ``a`` is ``b``) or (with ``create_graph=True``) the second
    derivatives do not require grad (``func`` quadratic there). With ``strict=False`` those give
    zero blocks / a result without a graph, and ``vectorize`` and ``outer_jacobian_strategy`` are
    ignored (reverse mode throughout, same values as torch)."""
    xs, single_in = _tuple(inputs, "inputs")

    def grad_fn(*ys):
        out = func(*ys)
        if strict:
            _check_outputs(_tuple(out, "outputs of the user-provided function")[0], "hessian",
                           "zeros")
        if not isinstance(out, Tensor) or out._data.size != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor "
                               "with a single element")
        if not strict:
            return _grads((out,), ys, None, True)
        gs = _filled(_raw_grads((out,), ys, None, True), ys)
        _check_hessian_jacobian(gs, ys, "hessian")
        return gs

    return _jacobian(lambda *ys: _out(grad_fn(*ys), single_in), _out(xs, single_in),
                     create_graph, strict, vectorize, outer_jacobian_strategy, "hessian",
                     lambda i: f"the gradient with respect to input {i}")


def _vhp(func, inputs, v, create_graph, strict, name):
    with enable_grad():
        xs, single_in = _prepare(inputs, create_graph)
        vs = _vectors(v, xs, _V_NONE_INPUT)
        if strict:
            _check_v(vs, xs, single_in, name, "input")
        outs, single_out = _tuple(func(*xs), "outputs of the user-provided function")
        if strict:
            _check_outputs(outs, name, "zeros")
        if not single_out:
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outs[0]._data.size != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                               f"contain a single element")
        if not strict:
            gs = _grads(outs, xs, None, True)
            res = _grads(gs, xs, vs, create_graph)
            return _result(outs, True, res, single_in, create_graph)
        gs = _raw_grads(outs, xs, None, True)
        _check_hessian_jacobian(gs, xs, name)
        if name == "vhp":
            raw = _raw_grads(gs, xs, vs, create_graph)
            missing = _DOUBLE_BACK
        else:   # torch's double-backward trick, so that the strict checks are torch's
            us = tuple(_zeros_of(x).requires_grad_(True) for x in xs)
            raw = _raw_grads(_raw_grads(gs, xs, us, True), us, vs, create_graph)
            missing = _DOUBLE_BACK_TRICK
        for i, (r, x) in enumerate(zip(raw, xs)):
            if r is None:
                raise RuntimeError(
                    f"{missing.format(i)} ({name}: the gradient with respect to input {i} of "
                    f"shape {_shape(x)} depends on other tensors that require grad but not on "
                    f"the inputs; use strict=False to get zeros for it)"
                    if name == "hvp" else
                    f"{missing.format(i)} ({name}: the gradient does not depend on input {i} of "
                    f"shape {_shape(x)} (only on other tensors that require grad); use "
                    f"strict=False to get zeros for it)")
            if create_graph and not r.requires_grad:
                raise RuntimeError(
                    f"{_HESSIAN_CONSTANT.format(i)} ({name}: the product for input {i} of shape "
                    f"{_shape(x)} does not depend on the inputs (the function is quadratic in "
                    f"them), {_NOT_DIFFERENTIABLE})")
    return _result(outs, True, raw, single_in, create_graph)


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
    inputs, outputs or ``v``. ``create_graph=True`` makes both results differentiable.
    ``strict=True`` (torch's) raises RuntimeError, in this order: for a ``v`` of the wrong length
    or shapes (before ``func`` runs); when the output of ``func`` does not require grad; input by
    input, when the output does not depend on the input or the gradient does not require grad
    (``func`` linear in that input); input by input, when the gradient does not depend on the
    input or (with ``create_graph=True``) the product does not require grad (``func``
    quadratic). With ``strict=False`` those give zeros / a result without a graph."""
    return _vhp(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Hessian-vector product ``(func(*inputs), H v)`` for a scalar ``func``.

    The Hessian of a (twice differentiable) scalar function is symmetric, so with
    ``strict=False`` this is computed as :func:`vhp` (one double-backward instead of torch's
    double-back trick); values, shapes, dtypes, the ``v=None`` rule and the errors raised are
    those of :func:`vhp` (messages name ``hvp``). ``strict=True`` raises as :func:`vhp` does,
    except that the last checks follow torch's double-backward trick (which strict mode then
    uses): RuntimeError, input by input, when the gradient with respect to that input does not
    reach any input (it depends on other tensors that require grad only) or (with
    ``create_graph=True``) the product does not require grad (``func`` quadratic)."""
    return _vhp(func, inputs, v, create_graph, strict, "hvp")
