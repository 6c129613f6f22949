"""``strict=True`` in autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp), compared with
torch 2.13: the same values where torch returns, the same exception type where it raises, with
torch's text at the start of our message (tapegrad then adds, in parentheses, which
output/input, its shape and what to do). Also torch's errors for ``strict=True`` with
``vectorize=True`` and with a forward-mode strategy, ``create_graph=True`` with strict, the
order of the checks, and that ``strict=False`` still gives zeros. Tests taking the ``torch``
fixture skip cleanly without torch; the others run on tapegrad alone."""
import warnings

import numpy as np
import pytest

import tapegrad as tg


def _outcome(fn):
    """What ``fn()`` returns, or the exception it raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Exception as e:   # noqa: BLE001 - the exception is the outcome being compared
        return e


def _values(t):
    t = t.detach()
    if getattr(t, "_is_zerotensor", lambda: False)():   # torch's unmaterialized zeros
        return np.zeros(tuple(t.shape))
    return np.asarray(t.numpy(), dtype=np.float64)


def _assert_same(ours, theirs):
    """Exceptions of the same type, ours starting with torch's message; otherwise the same nesting
    of tuples and tensors of the same shape, dtype and requires_grad with close values."""
    if isinstance(theirs, BaseException):
        assert isinstance(ours, BaseException), (ours, theirs)
        assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
        assert str(ours).startswith(str(theirs)), (str(ours), str(theirs))
        return
    assert not isinstance(ours, BaseException), (ours, theirs)
    if isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_allclose(_values(ours), _values(theirs), rtol=1e-6, atol=1e-7)


def _setup(L):
    """The functional module and the tensors the cases use, for ``L`` = tapegrad or torch."""
    return (L.autograd.functional, L.tensor([1.0, 2.0]), L.tensor([3.0]),
            L.tensor([5.0, 6.0], requires_grad=True))


# Each case: (L, F, x, y, w, kw) -> a call with strict=True (kw: create_graph).
# x (2,), y (1,) are the inputs; w requires grad and is not an input.
_CASES = {
    # ---- vjp
    "vjp_constant_output": lambda L, F, x, y, w, kw: F.vjp(lambda a: L.ones(2), x, L.ones(2), **kw),
    "vjp_detached_output": lambda L, F, x, y, w, kw: F.vjp(lambda a: a.detach() * 2, x,
                                                           L.ones(2), **kw),
    "vjp_second_output_constant": lambda L, F, x, y, w, kw: F.vjp(
        lambda a: (a * a, L.ones(2)), x, (L.ones(2), L.ones(2)), **kw),
    "vjp_unused_input": lambda L, F, x, y, w, kw: F.vjp(lambda a, b: a * a, (x, y), L.ones(2),
                                                        **kw),
    "vjp_unused_first_input": lambda L, F, x, y, w, kw: F.vjp(lambda a, b: b * 2, (x, y),
                                                              L.ones(1), **kw),
    "vjp_linear": lambda L, F, x, y, w, kw: F.vjp(lambda a: a * 2, x, L.ones(2), **kw),
    "vjp_identity": lambda L, F, x, y, w, kw: F.vjp(lambda a: a, x, L.ones(2), **kw),
    "vjp_linear_then_unused": lambda L, F, x, y, w, kw: F.vjp(lambda a, b: a * 2, (x, y),
                                                              L.ones(2), **kw),
    "vjp_linear_v_requires_grad": lambda L, F, x, y, w, kw: F.vjp(
        lambda a: a * 2, x, L.ones(2, requires_grad=True), **kw),
    "vjp_linear_input_requires_grad": lambda L, F, x, y, w, kw: F.vjp(
        lambda a: a * 2, x.clone().requires_grad_(), L.ones(2), **kw),
    "vjp_quadratic": lambda L, F, x, y, w, kw: F.vjp(lambda a: a * a, x, L.ones(2), **kw),
    "vjp_other_leaf": lambda L, F, x, y, w, kw: F.vjp(lambda a: (a * a, w * 2), x,
                                                      (L.ones(2), L.ones(2)), **kw),
    "vjp_only_other_leaf": lambda L, F, x, y, w, kw: F.vjp(lambda a: w * 2, x, L.ones(2), **kw),
    "vjp_empty_input": lambda L, F, x, y, w, kw: F.vjp(lambda a, b: a * a, (x, L.ones(0)),
                                                       L.ones(2), **kw),
    "vjp_float64_input": lambda L, F, x, y, w, kw: F.vjp(
        lambda a, b: (a * b.sum()).float(), (x, L.tensor([2.0], dtype=L.float64)), L.ones(2),
        **kw),
    "vjp_bad_v_constant_output": lambda L, F, x, y, w, kw: F.vjp(lambda a: L.ones(2), x,
                                                                 L.ones(3), **kw),
    "vjp_v_none_constant_output": lambda L, F, x, y, w, kw: F.vjp(lambda a: L.ones(2), x, None,
                                                                  **kw),
    "vjp_v_none_two_elements": lambda L, F, x, y, w, kw: F.vjp(lambda a: a * a, x, None, **kw),
    "vjp_v_too_short": lambda L, F, x, y, w, kw: F.vjp(lambda a, b: (a * a, b * b), (x, y),
                                                       (L.ones(2),), **kw),
    "vjp_v_tensor_for_two_outputs": lambda L, F, x, y, w, kw: F.vjp(
        lambda a, b: (a * a, b * b), (x, y), L.ones(2), **kw),
    "vjp_v_entry_shape": lambda L, F, x, y, w, kw: F.vjp(lambda a, b: (a * a, b * b), (x, y),
                                                         (L.ones(2), L.ones(2)), **kw),
    "vjp_v_shape": lambda L, F, x, y, w, kw: F.vjp(lambda a: a * a, x, L.ones(1, 2), **kw),
    "vjp_v_shape_0d": lambda L, F, x, y, w, kw: F.vjp(lambda a: a.sum(), x, L.ones(1), **kw),
    "vjp_v_tuple_of_one": lambda L, F, x, y, w, kw: F.vjp(lambda a: a * a, x, (L.ones(3),),
                                                          **kw),
    "vjp_v_too_long_for_tuple_output": lambda L, F, x, y, w, kw: F.vjp(
        lambda a: (a * a,), x, (L.ones(2), L.ones(2)), **kw),
    "vjp_v_bad_then_unused": lambda L, F, x, y, w, kw: F.vjp(lambda a, b: a * a, (x, y),
                                                             L.ones(3), **kw),
    # ---- jvp
    "jvp_constant_output": lambda L, F, x, y, w, kw: F.jvp(lambda a: L.ones(2), x, L.ones(2), **kw),
    "jvp_second_output_constant": lambda L, F, x, y, w, kw: F.jvp(
        lambda a: (a * a, L.ones(2)), x, L.ones(2), **kw),
    "jvp_unused_input": lambda L, F, x, y, w, kw: F.jvp(lambda a, b: a * a, (x, y),
                                                        (L.ones(2), L.ones(1)), **kw),
    "jvp_unused_first_input": lambda L, F, x, y, w, kw: F.jvp(lambda a, b: b * b, (x, y),
                                                              (L.ones(2), L.ones(1)), **kw),
    "jvp_linear": lambda L, F, x, y, w, kw: F.jvp(lambda a: a * 2, x, L.ones(2), **kw),
    "jvp_identity": lambda L, F, x, y, w, kw: F.jvp(lambda a: a, x, L.ones(2), **kw),
    "jvp_second_output_linear": lambda L, F, x, y, w, kw: F.jvp(lambda a: (a * a, a * 3), x,
                                                                L.ones(2), **kw),
    "jvp_linear_v_requires_grad": lambda L, F, x, y, w, kw: F.jvp(
        lambda a: a * 2, x, L.ones(2, requires_grad=True), **kw),
    "jvp_quadratic": lambda L, F, x, y, w, kw: F.jvp(lambda a: a * a, x, L.ones(2), **kw),
    "jvp_other_leaf_second": lambda L, F, x, y, w, kw: F.jvp(lambda a: (a * a, w * 2), x,
                                                             L.ones(2), **kw),
    "jvp_other_leaf_first": lambda L, F, x, y, w, kw: F.jvp(lambda a: (w * 2, a * a), x,
                                                            L.ones(2), **kw),
    "jvp_other_leaf_and_unused": lambda L, F, x, y, w, kw: F.jvp(
        lambda a, b: (w * 2, a * a), (x, y), (L.ones(2), L.ones(1)), **kw),
    "jvp_bad_v_constant_output": lambda L, F, x, y, w, kw: F.jvp(lambda a: L.ones(2), x,
                                                                 L.ones(3), **kw),
    "jvp_v_none_constant_output": lambda L, F, x, y, w, kw: F.jvp(lambda a: L.ones(2), x, None,
                                                                  **kw),
    "jvp_v_none_scalar": lambda L, F, x, y, w, kw: F.jvp(lambda a: (a.exp(), a * a),
                                                         L.tensor([0.5]), None, **kw),
    "jvp_v_too_short": lambda L, F, x, y, w, kw: F.jvp(lambda a, b: (a * a, b * b), (x, y),
                                                       (L.ones(2),), **kw),
    "jvp_v_two_for_one_input": lambda L, F, x, y, w, kw: F.jvp(lambda a: a * a, x,
                                                               (L.ones(2), L.ones(2)), **kw),
    # ---- jacobian
    "jacobian_constant": lambda L, F, x, y, w, kw: F.jacobian(lambda a: L.ones(2), x, **kw),
    "jacobian_empty_constant": lambda L, F, x, y, w, kw: F.jacobian(lambda a: L.ones(0), x, **kw),
    "jacobian_unused_input": lambda L, F, x, y, w, kw: F.jacobian(lambda a, b: a * a, (x, y),
                                                                  **kw),
    "jacobian_unused_first_input": lambda L, F, x, y, w, kw: F.jacobian(lambda a, b: b * b,
                                                                        (x, y), **kw),
    "jacobian_empty_input": lambda L, F, x, y, w, kw: F.jacobian(lambda a, b: a * a,
                                                                 (x, L.ones(0)), **kw),
    "jacobian_second_output_partial": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a, b: (a * b, b * 3), (x, y), **kw),
    "jacobian_linear": lambda L, F, x, y, w, kw: F.jacobian(lambda a: a * 2, x, **kw),
    "jacobian_quadratic": lambda L, F, x, y, w, kw: F.jacobian(lambda a: a * a, x, **kw),
    "jacobian_second_output_linear": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a: (a * a, a * 3), x, **kw),
    "jacobian_three_outputs": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a, b: (a * b.sum(), a.sum() * b * b * b, a * 2 * b.sum()), (x, y), **kw),
    "jacobian_other_leaf": lambda L, F, x, y, w, kw: F.jacobian(lambda a: (a * a, w * 2), x, **kw),
    "jacobian_only_other_leaf": lambda L, F, x, y, w, kw: F.jacobian(lambda a: w * 2, x, **kw),
    "jacobian_index": lambda L, F, x, y, w, kw: F.jacobian(lambda a: a[0] * a[0] * L.ones(2), x,
                                                           **kw),
    "jacobian_cat_of_inputs": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a, b: L.cat([a * a, b * b]), (x, y), **kw),
    "jacobian_cat_linear_part": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a: L.cat([a * a, a * 3]), x, **kw),
    "jacobian_cat_two_outputs": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a, b: (a * b, L.cat([a * a, b * b])), (x, y), **kw),
    "jacobian_2d_output": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a, b: L.stack([a * a, a * b]), (x, y), **kw),
    "jacobian_many_ops": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a: (a.exp(), a.sin(), a.tanh(), a.sigmoid(), a.relu(), a.abs(), a.sqrt(), a.log(),
                   a.sum(), a.mean(), a @ a, a.max(), a.softmax(0), a.norm()), x, **kw),
    "jacobian_vectorize": lambda L, F, x, y, w, kw: F.jacobian(lambda a: a * a, x, vectorize=True,
                                                               **kw),
    "jacobian_vectorize_constant": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a: L.ones(2), x, vectorize=True, **kw),
    "jacobian_vectorize_unused": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a, b: a * a, (x, y), vectorize=True, **kw),
    "jacobian_forward_mode": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a: a * a, x, strategy="forward-mode", **kw),
    "jacobian_forward_mode_vectorize": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a: a * a, x, vectorize=True, strategy="forward-mode", **kw),
    "jacobian_forward_mode_constant": lambda L, F, x, y, w, kw: F.jacobian(
        lambda a: L.ones(2), x, strategy="forward-mode", **kw),
    # ---- hessian
    "hessian_constant": lambda L, F, x, y, w, kw: F.hessian(lambda a: L.ones(()), x, **kw),
    "hessian_constant_tuple": lambda L, F, x, y, w, kw: F.hessian(lambda a: (L.ones(()),), x,
                                                                  **kw),
    "hessian_constant_two_elements": lambda L, F, x, y, w, kw: F.hessian(lambda a: L.ones(2), x,
                                                                         **kw),
    "hessian_tuple_output": lambda L, F, x, y, w, kw: F.hessian(lambda a: ((a * a).sum(),), x,
                                                                **kw),
    "hessian_linear": lambda L, F, x, y, w, kw: F.hessian(lambda a: a.sum() * 2, x, **kw),
    "hessian_linear_second_input": lambda L, F, x, y, w, kw: F.hessian(
        lambda a, b: (a ** 3).sum() + b.sum(), (x, y), **kw),
    "hessian_unused_input": lambda L, F, x, y, w, kw: F.hessian(lambda a, b: (a ** 3).sum(),
                                                                (x, y), **kw),
    "hessian_unused_first_input": lambda L, F, x, y, w, kw: F.hessian(
        lambda a, b: (b ** 3).sum(), (x, y), **kw),
    "hessian_cubic": lambda L, F, x, y, w, kw: F.hessian(lambda a: (a ** 3).sum(), x, **kw),
    "hessian_cubic_tuple": lambda L, F, x, y, w, kw: F.hessian(lambda a: (a ** 3).sum(), (x,),
                                                               **kw),
    "hessian_quadratic": lambda L, F, x, y, w, kw: F.hessian(lambda a: (a * a).sum(), x, **kw),
    "hessian_bilinear": lambda L, F, x, y, w, kw: F.hessian(lambda a, b: (a * b).sum(), (x, y),
                                                            **kw),
    "hessian_linear_in_first": lambda L, F, x, y, w, kw: F.hessian(
        lambda a, b: (a * b * b * b).sum(), (x, y), **kw),
    "hessian_mixed_cubic": lambda L, F, x, y, w, kw: F.hessian(
        lambda a, b: (a * a * a * b * b * b).sum(), (x, y), **kw),
    "hessian_separable": lambda L, F, x, y, w, kw: F.hessian(
        lambda a, b: (a ** 3).sum() + (b ** 3).sum(), (x, y), **kw),
    "hessian_other_leaf": lambda L, F, x, y, w, kw: F.hessian(lambda a: (a * w).sum(), x, **kw),
    "hessian_only_other_leaf": lambda L, F, x, y, w, kw: F.hessian(lambda a: (w * w).sum(), x,
                                                                   **kw),
    "hessian_vectorize": lambda L, F, x, y, w, kw: F.hessian(lambda a: (a ** 3).sum(), x,
                                                             vectorize=True, **kw),
    "hessian_vectorize_constant": lambda L, F, x, y, w, kw: F.hessian(
        lambda a: L.ones(()), x, vectorize=True, **kw),
    "hessian_vectorize_linear": lambda L, F, x, y, w, kw: F.hessian(
        lambda a: a.sum(), x, vectorize=True, **kw),
    "hessian_forward_mode": lambda L, F, x, y, w, kw: F.hessian(
        lambda a: (a ** 3).sum(), x, outer_jacobian_strategy="forward-mode", **kw),
    "hessian_forward_mode_vectorize_linear": lambda L, F, x, y, w, kw: F.hessian(
        lambda a: a.sum(), x, vectorize=True, outer_jacobian_strategy="forward-mode", **kw),
}

# scalar functions of x for hessian, vhp and hvp
_SCALAR_FUNCTIONS = {
    "quadratic": lambda L, a: (a * a).sum(),
    "cubic": lambda L, a: (a ** 3).sum(),
    "linear": lambda L, a: a.sum() * 2,
    "exp": lambda L, a: a.exp().sum(),
    "sin": lambda L, a: a.sin().sum(),
    "tanh": lambda L, a: a.tanh().sum(),
    "sigmoid": lambda L, a: a.sigmoid().sum(),
    "log": lambda L, a: a.log().sum(),
    "sqrt": lambda L, a: a.sqrt().sum(),
    "reciprocal": lambda L, a: (1 / a).sum(),
    "relu": lambda L, a: a.relu().sum(),
    "relu_squared": lambda L, a: (a.relu() ** 3).sum(),
    "abs": lambda L, a: a.abs().sum(),
    "matmul": lambda L, a: a @ a,
    "mean_of_squares": lambda L, a: (a * a).mean(),
    "norm": lambda L, a: a.norm(),
    "softmax": lambda L, a: a.softmax(0)[0],
    "index_squared": lambda L, a: a[0] * a[0],
    "index_cubed": lambda L, a: a[0] ** 3,
    "max_cubed": lambda L, a: a.max() ** 3,
    "prod": lambda L, a: a.prod(),
    "dot": lambda L, a: a.dot(a),
    "cat": lambda L, a: L.cat([a, a * a]).sum(),
    "where": lambda L, a: L.where(a > 1, a * a * a, a).sum(),
    "constant_weights": lambda L, a: (a * L.tensor([2.0, 3.0]) * a).sum(),
    "var": lambda L, a: a.var(),
    "logsumexp": lambda L, a: a.logsumexp(0),
    "sqrt_power": lambda L, a: (a ** 0.5).sum(),
    "outer": lambda L, a: (a.reshape(2, 1) * a.reshape(1, 2)).sum(),
    "tensor_power": lambda L, a: (a ** L.tensor(2.0)).sum(),
}

for _name in ("vhp", "hvp"):
    _CASES.update({
        f"{_name}_constant": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: L.ones(()), x, L.ones(2), **kw),
        f"{_name}_constant_tuple": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: (L.ones(()),), x, L.ones(2), **kw),
        f"{_name}_constant_two_elements": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: L.ones(2), x, L.ones(2), **kw),
        f"{_name}_two_elements": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: a * a, x, L.ones(2), **kw),
        f"{_name}_unused_input": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a ** 3).sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_unused_first_input": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (b ** 3).sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_linear_second_input": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a ** 3).sum() + b.sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_linear_then_unused": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: a.sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_unused_then_linear": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: b.sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_bilinear": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a * b).sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_linear_in_first": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a * b * b * b).sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_bilinear_plus_cubic": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a * b).sum() + (b ** 3).sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_other_leaf": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: (a * w).sum(), x, L.ones(2), **kw),
        f"{_name}_other_leaf_first": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a * w).sum() + (b ** 3).sum(), (x, y), (L.ones(2), L.ones(1)), **kw),
        f"{_name}_other_leaf_second": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a ** 3).sum() + (b * w[0]).sum(), (x, y), (L.ones(2), L.ones(1)),
            **kw),
        f"{_name}_only_other_leaf": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: (w * w).sum(), x, L.ones(2), **kw),
        f"{_name}_v_requires_grad": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: (a * a).sum(), x, L.ones(2, requires_grad=True), **kw),
        f"{_name}_float64": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a.sin() * b.double()).sum(), (x.double(), y),
            (L.ones(2, dtype=L.float64), L.ones(1)), **kw),
        f"{_name}_v_none_constant": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: L.ones(()), x, None, **kw),
        f"{_name}_v_none_scalar": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: (a ** 3).sum(), L.tensor([1.5]), None, **kw),
        f"{_name}_bad_v_constant": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: L.ones(()), x, L.ones(3), **kw),
        f"{_name}_v_two_for_one_input": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a: (a * a).sum(), x, (L.ones(2), L.ones(2)), **kw),
        f"{_name}_v_too_short": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a * a).sum() * b.sum(), (x, y), (L.ones(2),), **kw),
        f"{_name}_v_entry_shape": lambda L, F, x, y, w, kw, n=_name: getattr(F, n)(
            lambda a, b: (a * a).sum() * b.sum(), (x, y), (L.ones(2), L.ones(2)), **kw),
    })
for _fname in _SCALAR_FUNCTIONS:
    _CASES[f"hessian_of_{_fname}"] = lambda L, F, x, y, w, kw, f=_fname: F.hessian(
        lambda a: _SCALAR_FUNCTIONS[f](L, a), x, **kw)
    for _name in ("vhp", "hvp"):
        _CASES[f"{_name}_of_{_fname}"] = lambda L, F, x, y, w, kw, f=_fname, n=_name: getattr(
            F, n)(lambda a: _SCALAR_FUNCTIONS[f](L, a), x, L.tensor([1.0, -0.5]), **kw)


def _run(L, case, create_graph):
    F, x, y, w = _setup(L)
    return _outcome(lambda: _CASES[case](L, F, x, y, w,
                                         {"strict": True, "create_graph": create_graph}))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(_CASES))
def test_strict_matches_torch(case, create_graph, torch):
    _assert_same(_run(tg, case, create_graph), _run(torch, case, create_graph))


_POW2_CASES = {
    "pow2": lambda L, a: (a ** 2).sum(),
    "square": lambda L, a: a.square().sum(),
    "shifted_pow2": lambda L, a: ((a - 1) ** 2).sum(),
    "clamped_pow2": lambda L, a: (a.clamp(0, 1.5) ** 2).sum(),
}


@pytest.mark.parametrize("name", ["hessian", "vhp", "hvp"])
@pytest.mark.parametrize("fn", sorted(_POW2_CASES))
def test_strict_create_graph_of_a_square_matches_torch(fn, name, torch):
    def run(L):
        F, x = L.autograd.functional, L.tensor([1.0, 2.0])
        f = _POW2_CASES[fn]
        args = () if name == "hessian" else (L.tensor([1.0, -0.5]),)
        return _outcome(lambda: getattr(F, name)(lambda a: f(L, a), x, *args, strict=True,
                                                 create_graph=True))
    _assert_same(run(tg), run(torch))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", ["hessian", "vhp", "hvp"])
@pytest.mark.parametrize("fn", sorted(_POW2_CASES))
def test_square_otherwise_matches_torch(fn, name, create_graph, torch):
    """Squares without strict, or strict without create_graph, match torch too (x ** 2's
    backward goes through x ** 1, as torch's, so its own derivative stays connected)."""
    def run(L):
        F, x = L.autograd.functional, L.tensor([1.0, 2.0])
        f = _POW2_CASES[fn]
        args = () if name == "hessian" else (L.tensor([1.0, -0.5]),)
        return _outcome(lambda: getattr(F, name)(lambda a: f(L, a), x, *args,
                                                 strict=not create_graph,
                                                 create_graph=create_graph))
    ours, theirs = run(tg), run(torch)
    if not create_graph:
        _assert_same(ours, theirs)
        return
    ours, theirs = _flatten(ours), _flatten(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(_values(a), _values(b), rtol=1e-6)


@pytest.mark.parametrize("name", ["jacobian", "hessian"])
@pytest.mark.parametrize("strategy", ["forward-mode", "reverse-mode"])
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("create_graph", [False, True])
def test_strict_with_vectorize_and_strategies_matches_torch(name, strategy, vectorize,
                                                            create_graph, torch):
    def run(L):
        F, x = L.autograd.functional, L.tensor([0.5, -1.0, 2.0])
        key = "strategy" if name == "jacobian" else "outer_jacobian_strategy"
        f = (lambda a: a.sin() * a) if name == "jacobian" else (lambda a: (a.sin() * a).sum())
        return _outcome(lambda: getattr(F, name)(f, x, strict=True, vectorize=vectorize,
                                                 create_graph=create_graph, **{key: strategy}))
    _assert_same(run(tg), run(torch))


# ---- tapegrad alone ----------------------------------------------------------------------------
def _raises(fn, exc=RuntimeError):
    with pytest.raises(exc) as info:
        fn()
    return str(info.value)


def _F():
    return tg.autograd.functional


def test_messages_start_with_torch_text_and_say_what_to_do():
    F = _F()
    x, y = tg.tensor([1.0, 2.0]), tg.tensor([3.0])
    msg = _raises(lambda: F.vjp(lambda a, b: a * a, (x, y), tg.ones(2), strict=True))
    assert msg.startswith("The output of the user-provided function is independent of input 1. "
                          "This is not allowed in strict mode. (vjp: ")
    assert "shape [1]" in msg and "strict=False" in msg
    msg = _raises(lambda: F.jacobian(lambda a: tg.ones(2), x, strict=True))
    assert msg.startswith("Output 0 of the user-provided function does not require gradients.")
    assert "(jacobian: output 0, of shape [2]" in msg and "strict=False" in msg
    msg = _raises(lambda: F.jacobian(lambda a, b: tg.stack([a * a, a * 2]), (x, y), strict=True))
    assert msg.startswith("Output 0 of the user-provided function is independent of input 1.")
    assert "element (0, 0) of output 0 (shape [2, 2]) does not depend on input 1" in msg
    msg = _raises(lambda: F.hessian(lambda a, b: (a * b).sum(), (x, y), strict=True))
    assert "element 0 of the gradient with respect to input 0" in msg
    msg = _raises(lambda: F.jvp(lambda a: (a * a, a * 3), x, tg.ones(2), strict=True,
                                create_graph=True))
    assert msg.startswith("The jacobian of the user-provided function is independent of input 1. "
                          "This is not allowed in strict mode when create_graph=True. (jvp: ")
    assert "output 1" in msg and "create_graph=False" in msg
    msg = _raises(lambda: F.vhp(lambda a: a.sum(), x, tg.ones(2), strict=True))
    assert msg.startswith("While computing the hessian, found that the jacobian")
    assert "(vhp: the gradient with respect to input 0 of shape [2] is constant" in msg
    msg = _raises(lambda: F.vjp(lambda a: a * a, x, tg.ones(3), strict=True))
    assert msg.startswith("v has invalid size: should be torch.Size([2]) but got "
                          "torch.Size([3]). (vjp: ")


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"])
def test_strict_false_still_gives_zeros(name):
    """Where strict=True raises, strict=False (the default) returns zeros."""
    F = _F()
    x, y = tg.tensor([1.0, 2.0]), tg.tensor([3.0])
    two = (tg.ones(2), tg.ones(1))
    calls = {
        "vjp": lambda **kw: F.vjp(lambda a, b: a * a, (x, y), tg.ones(2), **kw)[1][1],
        "jvp": lambda **kw: F.jvp(lambda a, b: (a * a, tg.ones(1)), (x, y), two, **kw)[1][1],
        "jacobian": lambda **kw: F.jacobian(lambda a, b: a * a, (x, y), **kw)[1],
        "hessian": lambda **kw: F.hessian(lambda a, b: (a ** 3).sum() + b.sum(), (x, y),
                                          **kw)[1][1],
        "vhp": lambda **kw: F.vhp(lambda a, b: (a ** 3).sum(), (x, y), two, **kw)[1][1],
        "hvp": lambda **kw: F.hvp(lambda a, b: (a ** 3).sum(), (x, y), two, **kw)[1][1],
    }
    with pytest.raises(RuntimeError, match="strict mode"):
        calls[name](strict=True)
    for kw in ({}, {"strict": False}, {"strict": False, "create_graph": True}):
        zeros = calls[name](**kw)
        assert not zeros.detach().numpy().any()


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "vhp", "hvp"])
def test_strict_create_graph_of_a_linear_part(name):
    """With create_graph=True, strict raises where the result would carry no graph (a linear
    function for vjp/jvp/jacobian, a quadratic one for vhp/hvp); strict=False returns it
    without one."""
    F = _F()
    x = tg.tensor([1.0, 2.0])
    calls = {
        "vjp": lambda **kw: F.vjp(lambda a: a * 2, x, tg.ones(2), **kw)[1],
        "jvp": lambda **kw: F.jvp(lambda a: a * 2, x, tg.ones(2), **kw)[1],
        "jacobian": lambda **kw: F.jacobian(lambda a: a * 2, x, **kw),
        "vhp": lambda **kw: F.vhp(lambda a: (a * a).sum(), x, tg.ones(2), **kw)[1],
        "hvp": lambda **kw: F.hvp(lambda a: (a * a).sum(), x, tg.ones(2), **kw)[1],
    }
    msg = _raises(lambda: calls[name](strict=True, create_graph=True))
    assert "when create_graph=True" in msg
    assert not calls[name](strict=False, create_graph=True).requires_grad
    assert not calls[name](strict=True).requires_grad   # without create_graph: no error


def test_strict_results_equal_non_strict_results():
    F = _F()
    x = tg.tensor([0.5, -1.0, 2.0], dtype=tg.float64)
    y = tg.tensor([[1.5, 0.25]], dtype=tg.float64)

    def f(a, b):
        return (a.sin() * a).sum() * (b.exp() * b).sum()
    v = (tg.tensor([1.0, 2.0, -1.0], dtype=tg.float64), tg.tensor([[0.5, -2.0]], dtype=tg.float64))
    for cg in (False, True):
        for fn, args in ((F.vhp, (v,)), (F.hvp, (v,)), (F.hessian, ()), (F.jacobian, ()),
                         (F.vjp, (tg.tensor(1.0, dtype=tg.float64),)), (F.jvp, (v,))):
            fun = (lambda a, b: (f(a, b), a * b.sum())) if fn is F.jacobian else f
            if fn is F.jvp:
                fun = (lambda a, b: (a.exp() * b.sum(), (b * b).sum() * a.sum()))
            got = fn(fun, (x, y), *args, strict=True, create_graph=cg)
            ref = fn(fun, (x, y), *args, create_graph=cg)
            flat_g, flat_r = _flatten(got), _flatten(ref)
            assert len(flat_g) == len(flat_r)
            for a, b in zip(flat_g, flat_r):
                assert a.shape == b.shape and a.dtype == b.dtype
                assert a.requires_grad == b.requires_grad == cg
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                           atol=1e-12)


def _flatten(r):
    if isinstance(r, tuple):
        return [t for item in r for t in _flatten(item)]
    return [r]


def test_strict_hvp_equals_vhp_for_a_symmetric_hessian():
    F = _F()
    x = tg.tensor([0.3, -0.7], dtype=tg.float64)
    v = tg.tensor([1.0, 0.5], dtype=tg.float64)

    def f(a):
        return (a.tanh() * a.exp()).sum() + a[0] * a[1] ** 3
    _, hv = F.hvp(f, x, v, strict=True)
    _, vh = F.vhp(f, x, v, strict=True)
    np.testing.assert_allclose(hv.numpy(), vh.numpy(), rtol=1e-12)
    h = F.hessian(f, x, strict=True)
    np.testing.assert_allclose(hv.numpy(), h.numpy() @ v.numpy(), rtol=1e-12)


def test_order_of_checks():
    """torch's order: jvp/vhp/hvp check v before calling func, vjp after; the forward-mode
    errors come before func is called (NotImplementedError first with create_graph), the
    vectorize error after it (and after the output checks)."""
    F = _F()
    x = tg.tensor([1.0, 2.0])
    calls = []

    def const(a):
        calls.append(1)
        return tg.ones(())

    for fn in (F.jvp, F.vhp, F.hvp):
        msg = _raises(lambda: fn(const, x, tg.ones(3), strict=True))
        assert msg.startswith("v has invalid size")
    assert calls == []
    msg = _raises(lambda: F.vjp(const, x, tg.ones(3), strict=True))
    assert msg.startswith("Output 0 of the user-provided function does not require gradients")
    assert calls == [1]
    del calls[:]
    msg = _raises(lambda: F.jacobian(const, x, strict=True, strategy="forward-mode"))
    assert msg.startswith('torch.autograd.functional.jacobian: `strict=True` and '
                          '`strategy="forward-mode"`')
    _raises(lambda: F.jacobian(const, x, strict=True, strategy="forward-mode", create_graph=True),
            NotImplementedError)
    _raises(lambda: F.hessian(const, x, strict=True, outer_jacobian_strategy="forward-mode",
                              create_graph=True), NotImplementedError)
    assert calls == []
    msg = _raises(lambda: F.jacobian(const, x, strict=True, vectorize=True))
    assert msg.startswith("Output 0 of the user-provided function does not require gradients")
    msg = _raises(lambda: F.jacobian(lambda a: a * a, x, strict=True, vectorize=True))
    assert msg.startswith("torch.autograd.functional.jacobian: `strict=True` and "
                          "`vectorized=True`")
    msg = _raises(lambda: F.hessian(lambda a: a.sum(), x, strict=True, vectorize=True))
    assert msg.startswith("While computing the hessian")


def test_non_strict_forward_mode_and_vectorize_are_still_ignored():
    F = _F()
    x = tg.tensor([0.5, -1.0])
    ref = F.jacobian(lambda a: a.sin() * a, x)
    for kw in ({"vectorize": True}, {"strategy": "forward-mode"},
               {"vectorize": True, "strategy": "forward-mode", "create_graph": True}):
        got = F.jacobian(lambda a: a.sin() * a, x, **kw)
        np.testing.assert_allclose(got.detach().numpy(), ref.numpy())
    h = F.hessian(lambda a: (a ** 3).sum(), x, vectorize=True,
                  outer_jacobian_strategy="forward-mode", create_graph=True)
    np.testing.assert_allclose(h.detach().numpy(), np.diag(6 * x.numpy()))


def test_strict_v_checks():
    """strict mode checks v's length and shapes as torch (strict=False leaves them to
    autograd.grad, as before)."""
    F = _F()
    x, y = tg.tensor([1.0, 2.0]), tg.tensor([3.0])
    msg = _raises(lambda: F.vjp(lambda a, b: (a * a, b * b), (x, y), (tg.ones(2),), strict=True))
    assert msg.startswith("v is a tuple of invalid length: should be 2 but got 1.")
    msg = _raises(lambda: F.jvp(lambda a: a * a, x, (tg.ones(2), tg.ones(2)), strict=True))
    assert msg.startswith("The given v should contain a single Tensor.")
    msg = _raises(lambda: F.hvp(lambda a, b: (a * a).sum() * b.sum(), (x, y),
                                (tg.ones(2), tg.ones(2)), strict=True))
    assert msg.startswith("Entry 1 in v has invalid size: should be torch.Size([1]) but got "
                          "torch.Size([2]).")
    # a one-Tensor tuple for a single output is accepted, as torch
    out, res = F.vjp(lambda a: a * a, x, (tg.ones(2),), strict=True)
    assert res.tolist() == [2.0, 4.0]


def test_strict_with_other_leaves():
    """A part that requires grad only through a tensor that is not an input (here w)."""
    F = _F()
    x = tg.tensor([1.0, 2.0])
    w = tg.tensor([5.0, 6.0], requires_grad=True)
    msg = _raises(lambda: F.jvp(lambda a: (a * a, w * 2), x, tg.ones(2), strict=True))
    assert msg.startswith("The gradient with respect to the input is independent of entry 1 in "
                          "the grad_outputs")
    msg = _raises(lambda: F.hvp(lambda a: (a * w).sum(), x, tg.ones(2), strict=True))
    assert msg.startswith("The hessian of the user-provided function is independent of entry 0 "
                          "in the grad_jacobian.")
    msg = _raises(lambda: F.vhp(lambda a: (a * w).sum(), x, tg.ones(2), strict=True))
    assert msg.startswith("The jacobian of the user-provided function is independent of input 0. "
                          "This is not allowed in strict mode. (vhp: ")
    # vjp only needs a path to each input
    _, res = F.vjp(lambda a: (a * a, w * 2), x, (tg.ones(2), tg.ones(2)), strict=True)
    assert res.tolist() == [2.0, 4.0]
