"""gradcheck and gradgradcheck: analytical gradients against float64 central finite differences.

``gradcheck(func, inputs)`` builds, for every input tensor that requires grad and every
differentiable output of ``func``, two Jacobians:

* numerical: each input element is perturbed in place by ``+eps`` and ``-eps`` and
  ``(f(x + eps) - f(x - eps)) / (2 eps)`` is taken in float64;
* analytical: one row per output element, from :func:`tapegrad.autograd.grad` with a one-hot
  ``grad_outputs`` (run twice, to catch a non-deterministic backward).

They must agree elementwise within ``atol + rtol * |numerical|`` (``numpy.allclose`` with the
numerical Jacobian as reference, as ``torch.allclose`` in torch's gradcheck). The layout follows
torch: ``J[k, m]`` is d output[m] / d input[k] over the flattened (row-major) elements.

``gradgradcheck`` runs gradcheck on the vector-Jacobian product ``(inputs, v) -> grad(func(inputs),
inputs, v, create_graph=True)``, which checks that every backward is itself differentiable.
"""
from __future__ import annotations

import warnings

import numpy as np
from .graph import user_stacklevel

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` / :func:`gradgradcheck` when a check fails."""


# ---- helpers ------------------------------------------------------------------------------------
def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _iter_tensors(x, only_requiring_grad=False):
    """Tensors in ``x`` (a Tensor or a nested list/tuple of them), in order, as torch walks them."""
    Tensor = _tensor_cls()
    if isinstance(x, Tensor):
        if x.requires_grad or not only_requiring_grad:
            yield x
    elif isinstance(x, (list, tuple)):
        for e in x:
            yield from _iter_tensors(e, only_requiring_grad)


def _differentiable_outputs(out):
    """(position in the returned tuple, tensor) of each output that requires grad."""
    Tensor = _tensor_cls()
    return [(p, o) for p, o in enumerate(_as_tuple(out))
            if isinstance(o, Tensor) and o.requires_grad]


def _float_outputs(out):
    Tensor = _tensor_cls()
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and o._data.dtype.kind == "f"]


def _fmt(jac):
    from .._tensor import _make
    return repr(_make(np.asarray(jac, np.float64)))


def _check_inputs(tupled_inputs):
    """At least one input requires grad; warn for non-float64; refuse overlapping memory."""
    any_grad = False
    for idx, inp in enumerate(_iter_tensors(tupled_inputs)):
        if not inp.requires_grad:
            continue
        any_grad = True
        if inp._data.dtype != np.float64:
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating "
                          f"point ({inp.dtype}). This check will likely fail if all the inputs are "
                          f"not of double precision floating point.", UserWarning, stacklevel=user_stacklevel())
        arr = inp._data
        if arr.size > 1 and (any(st == 0 and sz > 1 for st, sz in zip(arr.strides, arr.shape))
                             or not arr.flags.writeable):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0 (or is a read-only view, e.g. "
                f"from expand()). gradcheck only supports inputs that are non-overlapping to be "
                f"able to compute the numerical gradients correctly. You should call .contiguous() "
                f"(or .clone()) on the input before passing it to gradcheck.")
    if not any_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


# ---- the two Jacobians --------------------------------------------------------------------------
def get_numerical_jacobian(fn, inputs, outputs=None, eps=1e-6):
    """Numerical Jacobians of ``fn(*inputs)`` by central differences.

    Returns ``jac[j][i]``: a float64 array of shape ``(input_j.numel(), output_i.numel())`` for the
    j-th input that requires grad and the i-th floating output. Inputs are perturbed in place and
    restored exactly.
    """
    tupled = _as_tuple(inputs)
    if outputs is None:
        outputs = _float_outputs(fn(*tupled))
    diff_inputs = list(_iter_tensors(tupled, True))
    jacobians = []
    for inp in diff_inputs:
        arr = inp._data
        per_out = [np.zeros((arr.size, o._data.size), np.float64) for o in outputs]
        for k, idx in enumerate(np.ndindex(arr.shape)):
            orig = arr[idx].copy()
            try:
                arr[idx] = orig - eps
                lo = [np.array(o._data, np.float64) for o in _float_outputs(fn(*tupled))]
                arr[idx] = orig + eps
                hi = [np.array(o._data, np.float64) for o in _float_outputs(fn(*tupled))]
            finally:
                arr[idx] = orig
            if len(lo) != len(outputs) or len(hi) != len(outputs):
                raise GradcheckError(
                    f"gradcheck: the function returned {len(outputs)} floating outputs, but "
                    f"{len(lo)} when input {len(jacobians)} was perturbed")
            for i, (a, b) in enumerate(zip(lo, hi)):
                if a.shape != outputs[i]._data.shape:
                    raise GradcheckError(
                        f"gradcheck: output {i} changed shape from "
                        f"{list(outputs[i]._data.shape)} to {list(a.shape)} when input "
                        f"{len(jacobians)} was perturbed")
                per_out[i][k] = ((b - a) / (2 * eps)).reshape(-1)
        jacobians.append(per_out)
    return jacobians


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, check_grad_dtypes=False):
    """Analytical Jacobians of one ``output`` with respect to the inputs that require grad.

    Returns a list (one per input requiring grad) of float64 arrays of shape
    ``(input.numel(), output.numel())``. Every row is computed twice; raises GradcheckError when the
    two runs differ by more than ``nondet_tol``, when a gradient has the wrong shape, or (with
    ``check_grad_dtypes``) the wrong dtype.
    """
    from . import grad as _grad
    from .._tensor import _make
    diff_inputs = list(_iter_tensors(_as_tuple(inputs), True))
    n_out = output._data.size
    runs = []
    for _ in range(2):
        jacs = [np.zeros((t._data.size, n_out), np.float64) for t in diff_inputs]
        types_ok = sizes_ok = True
        for m in range(n_out):
            onehot = np.zeros(n_out, output._data.dtype)
            onehot[m] = 1
            gos = _make(onehot.reshape(output._data.shape))
            grads = _grad(output, diff_inputs, gos, retain_graph=True, allow_unused=True)
            for j, (g, t) in enumerate(zip(grads, diff_inputs)):
                if g is None:
                    continue
                if g._data.shape != t._data.shape:
                    sizes_ok = False
                    continue
                if g._data.dtype != t._data.dtype:
                    types_ok = False
                jacs[j][:, m] = np.asarray(g._data, np.float64).reshape(-1)
        if not sizes_ok:
            raise GradcheckError("Analytical gradient has incorrect size: autograd.grad returned a "
                                 "gradient whose shape differs from its input's")
        if check_grad_dtypes and not types_ok:
            raise GradcheckError("Gradient has dtype mismatch")
        runs.append(jacs)
    for j, (a, b) in enumerate(zip(*runs)):
        if a.shape != b.shape or (a.size and np.max(np.abs(a - b)) > nondet_tol):
            raise GradcheckError(
                f"Backward is not reentrant, i.e., running backward with same input and "
                f"grad_output multiple times gives different values (input {j}), although "
                f"analytical gradient matches numerical gradient. The tolerance for "
                f"nondeterminism was {nondet_tol}.")
    return runs[0]


def _mismatch_msg(a, n, out_idx, inp_idx, out_pos, inp_pos, atol, rtol):
    extra = ""
    where = ""
    if out_pos != out_idx:
        extra += f" (position {out_pos} among func's outputs)"
    if inp_pos != inp_idx:
        extra += f" (argument tensor #{inp_pos} of inputs)"
    if a.size:
        diff = np.abs(a - n) - (atol + rtol * np.abs(n))
        k, m = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))), a.shape)
        where = (f"largest violation at input element {k}, output element {m}: numerical "
                 f"{n[k, m]!r}, analytical {a[k, m]!r} (atol={atol}, rtol={rtol})\n")
    return (f"Jacobian mismatch for output {out_idx:d} with respect to input {inp_idx:d},{extra}\n"
            f"numerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n{where}")


def _test_backward_mul_by_grad_output(outputs, tupled_inputs):
    from . import grad as _grad
    from .._tensor import _make
    diff_inputs = list(_iter_tensors(tupled_inputs, True))
    zeros = [_make(np.zeros(o._data.shape, o._data.dtype)) for o in outputs]
    grads = _grad(outputs, diff_inputs, zeros, retain_graph=True, allow_unused=True)
    for j, (gi, di) in enumerate(zip(grads, diff_inputs)):
        if gi is None:
            continue
        if not np.all(gi._data == 0):
            raise GradcheckError(f"backward not multiplied by grad_output: the gradient of input "
                                 f"{j} is nonzero for an all-zero grad_output")
        if gi._data.dtype != di._data.dtype:
            raise GradcheckError(f"grad is incorrect type: input {j} is {di.dtype}, its gradient "
                                 f"{gi.dtype}")
        if gi._data.shape != di._data.shape:
            raise GradcheckError(f"grad is incorrect size: input {j} has shape "
                                 f"{list(di._data.shape)}, its gradient {list(gi._data.shape)}")


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes):
    tupled = _as_tuple(inputs)
    _check_inputs(tupled)
    func_out = func(*tupled)
    diff = _differentiable_outputs(func_out)
    all_inputs = list(_iter_tensors(tupled))
    positions = [p for p, t in enumerate(all_inputs) if t.requires_grad]
    if not diff:
        # no differentiable output: the function must be locally constant in its inputs
        for j, per_out in enumerate(get_numerical_jacobian(func, tupled, _float_outputs(func_out),
                                                           eps)):
            for i, n in enumerate(per_out):
                if np.count_nonzero(n):
                    raise GradcheckError(
                        f"Numerical gradient for function expected to be zero: output {i} does not "
                        f"require grad but changes with input {j}\nnumerical:{_fmt(n)}\n")
        return True
    outputs = [o for _, o in diff]
    # the numerical Jacobian is taken for every floating output, then the differentiable ones kept
    float_outs = _float_outputs(func_out)
    numerical = get_numerical_jacobian(func, tupled, float_outs, eps)  # [input][float output]
    for i, (pos, o) in enumerate(diff):
        k = next(m for m, f in enumerate(float_outs) if f is o)
        analytical = get_analytical_jacobian(tupled, o, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][k]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_mismatch_msg(a, n, i, j, pos, positions[j], atol, rtol))
    _test_backward_mul_by_grad_output(outputs, tupled)
    return True


# ---- public API ---------------------------------------------------------------------------------
def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    ``func`` takes the ``inputs`` (a Tensor or a tuple; nested lists of tensors are walked, as in
    torch) and returns a Tensor or a tuple of Tensors. Every input tensor with ``requires_grad``
    is checked (use float64: float32 inputs warn and will likely fail) against every output that
    requires grad. Returns True when everything agrees.

    Raises:
        GradcheckError (a RuntimeError): when, for output ``i`` and input ``j`` (both numbered among
            the differentiable outputs / the inputs requiring grad), the analytical Jacobian and
            the numerical one differ by more than ``atol + rtol * |numerical|`` anywhere (the
            message names both indices and shows both Jacobians); when backward is not
            deterministic within ``nondet_tol``; when a gradient has the wrong shape (or dtype,
            with ``check_grad_dtypes``); when a zero grad_output does not give zero gradients;
            or, with no differentiable output at all, when the outputs still change with the
            inputs. With ``raise_exception=False`` these return False instead.
        ValueError: no input tensor requires grad (always raised).
        RuntimeError: an input requiring grad has overlapping memory (a stride-0 dim, as from
            ``expand``), so it cannot be perturbed one element at a time (always raised).
        NotImplementedError: ``check_forward_ad`` / ``check_batched_forward_grad``: tapegrad has no
            forward-mode AD.

    ``fast_mode`` and ``check_batched_grad`` are accepted for compatibility and run the full
    (slow-mode) check; ``check_undefined_grad`` is always satisfied in tapegrad, whose engine
    materialises a missing output gradient as zeros (each output is checked with the others'
    gradients left undefined). ``masked`` concerns sparse tensors, which tapegrad does not have.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to "
                             "be True")
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: check_forward_ad/check_batched_forward_grad need "
                                  "forward-mode AD, which tapegrad does not implement")
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of ``(inputs, v) -> autograd.grad(func(inputs), inputs,
    v, create_graph=True)``.

    ``grad_outputs`` (the ``v``, one per differentiable output of ``func``) default to random
    uniform(-1, 1) tensors of each output's shape and dtype that require grad (drawn from
    tapegrad's default generator, so ``tapegrad.manual_seed`` makes them reproducible); they are
    themselves checked as inputs. Gradients that come back None (an input the outputs do not use)
    are dropped, as in torch.

    Raises what :func:`gradcheck` raises (GradcheckError naming the output — a gradient, numbered
    among the inputs requiring grad — and the input — an original input requiring grad or, after
    them, one of the grad_outputs that requires grad); also a RuntimeError from ``autograd.grad``
    when ``func``'s graph cannot be differentiated with ``create_graph=True``.
    NotImplementedError for ``check_fwd_over_rev`` (no forward-mode AD).
    """
    from . import grad as _grad
    from .._tensor import _make
    if check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck: check_fwd_over_rev needs forward-mode AD, which "
                                  "tapegrad does not implement")
    if not check_rev_over_rev:
        return True
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        from .. import _dtype, _factories
        outs = [o for _, o in _differentiable_outputs(func(*tupled_inputs))]
        gos = []
        for o in outs:
            dt = o.dtype if o._data.dtype.kind == "f" else _dtype.float64
            v = _factories.rand(tuple(o._data.shape), dtype=dt)._data * 2 - 1
            if gen_non_contig_grad_outputs and v.ndim >= 1 and v.size > 1:
                big = np.zeros(v.shape[:-1] + (2 * v.shape[-1],), v.dtype)
                big[..., ::2] = v
                v = big[..., ::2]
            t = _make(v)
            t.requires_grad_(True)
            gos.append(t)
        tupled_grad_outputs = tuple(gos)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    n_out = len(tupled_grad_outputs)

    def new_func(*args):
        input_args = args[:len(args) - n_out]
        go_args = args[len(args) - n_out:]
        outputs = [o for _, o in _differentiable_outputs(func(*input_args))]
        diff_input_args = [t for t in _iter_tensors(input_args, True)]
        if not outputs or not diff_input_args:
            return ()
        grads = _grad(outputs, diff_input_args, list(go_args), create_graph=True,
                      allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, masked=masked)
