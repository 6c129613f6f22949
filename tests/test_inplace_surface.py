"""torch's in-place names tapegrad added: the in-place functions in the namespace (tapegrad.neg_,
clamp_, fill_, detach_, ...), comparisons written into self (lt_, ...), the untracked logical_*_,
fmod_, cumsum_, addmm_; the errors on bool tensors (ceil, floor, trunc, round, abs) and on div's
rounding_mode. Against torch where it is installed: values, dtype, grad_fn name, version, the
gradient that flows back, exception types."""
import numpy as np
import pytest

import tapegrad as tg
from torch_compare import same_as_torch

# every in-place name torch has as a function that tapegrad now has as one too
NAMESPACE = ("abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
             "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "clamp_", "clip_", "cos_", "cosh_",
             "deg2rad_", "detach_", "fill_", "log10_", "log2_", "log_", "neg_", "rad2deg_",
             "reciprocal_", "sin_", "sinh_", "tan_", "zero_")
# the Tensor methods added, none a function in torch
METHODS = ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_",
           "less_equal_", "not_equal_", "logical_and_", "logical_or_", "logical_xor_",
           "logical_not_", "fmod_", "cumsum_", "addmm_")


@pytest.mark.parametrize("name", NAMESPACE)
def test_function_is_the_method(name):
    assert getattr(tg, name) is getattr(tg.Tensor, name) or name == "detach_"
    assert hasattr(tg.Tensor, name)


@pytest.mark.parametrize("name", METHODS)
def test_method_only(name):
    assert hasattr(tg.Tensor, name) and not hasattr(tg, name)


@pytest.mark.parametrize("name", NAMESPACE + METHODS)
def test_names_are_where_torch_has_them(name):
    torch = pytest.importorskip("torch")
    assert hasattr(torch.Tensor, name)
    assert hasattr(torch, name) == (name in NAMESPACE)


def test_torch_has_no_other_inplace_function_tapegrad_could_have():
    """Every torch.NAME_ that tapegrad lacks needs an op tapegrad does not have."""
    torch = pytest.importorskip("torch")
    missing = {n for n in dir(torch) if n.endswith("_") and not n.startswith("_")
               and not hasattr(tg, n)}
    assert all(not hasattr(tg, n[:-1]) for n in missing), sorted(missing)


# ---- the graph an in-place op leaves ------------------------------------------------------------
def _run(lib, fn):
    """fn(lib, x, b) on x = a * 1 (a, b leaves): x's values, dtype, grad_fn name, whether it
    requires grad, version, and the gradients of a and b for the loss (x * [1, 2, 3]).sum()."""
    a = lib.tensor([0.5, 1.5, 2.5], requires_grad=True)
    b = lib.tensor([1.0, 1.5, 3.0], requires_grad=True)
    x = a * 1
    assert fn(lib, x, b) is x
    node = x.grad_fn
    out = [x.detach().numpy().tolist(), str(x.dtype).split(".")[-1],
           type(node).__name__ if node is not None else None, x.requires_grad, x._version]
    (x * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    return out + [[None if t.grad is None else t.grad.tolist() for t in (a, b)]]


GRAPHS = {
    "lt_tensor": lambda L, x, b: x.lt_(b),
    "lt_number": lambda L, x, b: x.lt_(1.0),
    "le_0d_tensor": lambda L, x, b: x.le_(L.tensor(1.5)),
    "gt_broadcast": lambda L, x, b: x.gt_(b[1:2]),
    "ge_": lambda L, x, b: x.ge_(b),
    "eq_": lambda L, x, b: x.eq_(b * 1),
    "ne_number": lambda L, x, b: x.ne_(1.5),
    "greater_": lambda L, x, b: x.greater_(b),
    "greater_equal_": lambda L, x, b: x.greater_equal_(1.5),
    "less_": lambda L, x, b: x.less_(b),
    "less_equal_": lambda L, x, b: x.less_equal_(b),
    "not_equal_": lambda L, x, b: x.not_equal_(b),
    "lt_other_without_grad": lambda L, x, b: x.lt_(L.tensor([1.0, 2.0, 2.0])),
    "lt_through_view": lambda L, x, b: (x[1:].lt_(b[1:]), x)[1],
    "logical_and_": lambda L, x, b: x.logical_and_(b),
    "logical_or_int": lambda L, x, b: x.logical_or_(L.tensor([0, 0, 1])),
    "logical_xor_": lambda L, x, b: x.logical_xor_(L.tensor([True, False, True])),
    "logical_not_": lambda L, x, b: x.logical_not_(),
    "logical_not_view": lambda L, x, b: (x[1:].logical_not_(), x)[1],
    "fmod_tensor": lambda L, x, b: x.fmod_(b),
    "fmod_number": lambda L, x, b: x.fmod_(1.0),
    "cumsum_": lambda L, x, b: x.cumsum_(0),
    "cumsum_view": lambda L, x, b: (x[1:].cumsum_(dim=-1), x)[1],
    "addmm_": lambda L, x, b: (x.view(1, 3).addmm_(b[:1].view(1, 1) * 1, b.view(1, 3)), x)[1],
    "addmm_beta_alpha": lambda L, x, b: (x.view(3, 1).addmm_(b.view(3, 1), b[:1].view(1, 1),
                                                            beta=0.5, alpha=2), x)[1],
    "addmm_beta_0": lambda L, x, b: (x.view(3, 1).addmm_(b.view(3, 1), b[:1].view(1, 1),
                                                        beta=0, alpha=2), x)[1],
    "neg_": lambda L, x, b: L.neg_(x),
    "abs_": lambda L, x, b: L.abs_(x.sub_(1)),
    "log_": lambda L, x, b: L.log_(x),
    "log2_": lambda L, x, b: L.log2_(x),
    "log10_": lambda L, x, b: L.log10_(x),
    "sin_": lambda L, x, b: L.sin_(x),
    "cos_": lambda L, x, b: L.cos_(x),
    "tan_": lambda L, x, b: L.tan_(x.mul_(0.5)),
    "sinh_": lambda L, x, b: L.sinh_(x),
    "cosh_": lambda L, x, b: L.cosh_(x),
    "asin_": lambda L, x, b: L.asin_(x.mul_(0.3)),
    "arcsin_": lambda L, x, b: L.arcsin_(x.mul_(0.3)),
    "acos_": lambda L, x, b: L.acos_(x.mul_(0.3)),
    "arccos_": lambda L, x, b: L.arccos_(x.mul_(0.3)),
    "atan_": lambda L, x, b: L.atan_(x),
    "arctan_": lambda L, x, b: L.arctan_(x),
    "reciprocal_": lambda L, x, b: L.reciprocal_(x),
    "deg2rad_": lambda L, x, b: L.deg2rad_(x),
    "rad2deg_": lambda L, x, b: L.rad2deg_(x),
    "clamp_": lambda L, x, b: L.clamp_(x, 1.0, 2.0),
    "clamp_tensor": lambda L, x, b: L.clamp_(x, min=b),
    "clip_": lambda L, x, b: L.clip_(x, max=1.0),
    "zero_": lambda L, x, b: L.zero_(x),
    "fill_": lambda L, x, b: L.fill_(x, 2),
    "fill_tensor": lambda L, x, b: L.fill_(x, b[0]),
}


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_graph_matches_torch(case):
    torch = pytest.importorskip("torch")
    ours = _run(tg, GRAPHS[case])
    ref = _run(torch, GRAPHS[case])
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-6)
    assert ours[1:5] == ref[1:5]
    for g, r in zip(ours[5], ref[5]):
        assert (g is None) == (r is None)
        if r is not None:
            np.testing.assert_allclose(g, r, rtol=1e-6)


# torch has no derivative for these in place: recording works, backward raises
@pytest.mark.parametrize("name", ["asinh_", "arcsinh_", "acosh_", "arccosh_", "atanh_",
                                  "arctanh_"])
def test_inverse_hyperbolic_functions_have_no_derivative_in_place(name):
    torch = pytest.importorskip("torch")
    out = []
    for lib in (tg, torch):
        a = lib.tensor([1.5, 2.5], requires_grad=True)
        x = a * (0.3 if "tanh" in name else 1)
        getattr(lib, name)(x)
        with pytest.raises(NotImplementedError) as e:
            x.sum().backward()
        out.append((x.detach().numpy().tolist(), type(x.grad_fn).__name__))
        assert name[:-1].replace("arc", "a") in str(e.value)
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-6)
    assert out[0][1] == out[1][1]


# ---- values and errors --------------------------------------------------------------------------
def _leaf_write(L, name, *args):
    a = L.tensor([0.5, 0.0], requires_grad=True)
    getattr(a, name)(*args)
    return a.detach(), a.requires_grad, a.grad_fn is None, a._version


def _no_grad_view_write(L, name, *args):
    y = L.tensor([0.5, 1.5, 3.0], requires_grad=True) * 1
    with L.no_grad():
        v = y[1:]
    getattr(v, name)(*args)
    return y.detach(), y._version


VALUES = {
    "lt_float": lambda L: L.tensor([0.5, 1.5, 2.5]).lt_(1.0),
    "lt_int_by_float": lambda L: L.tensor([1, 2, 3]).lt_(2.5),
    "le_int_by_float_tensor": lambda L: L.tensor([1, 2, 3]).le_(L.tensor([2.5])),
    "ge_bool_by_float": lambda L: L.tensor([True, False]).ge_(L.tensor([1.5, -0.5])),
    "eq_nan": lambda L: L.tensor([float("nan"), 2.0]).eq_(L.tensor([float("nan"), 2.0])),
    "ne_float16": lambda L: L.tensor([1.0, 2.0], dtype=L.float16).ne_(1),
    "gt_float64_by_float32": lambda L: L.tensor([1.0, 2.0], dtype=L.float64).gt_(
        L.tensor([1.5, 1.5])),
    "lt_self": lambda L: [x.lt_(x) for x in [L.arange(4.0).reshape(2, 2)]],
    "lt_leaf_no_grad_mode": lambda L: _lt_leaf_in_no_grad(L),
    "logical_and_uint8_by_float": lambda L: L.tensor([1, 2, 0], dtype=L.uint8).logical_and_(
        L.tensor([0.0, 1.0, 1.0])),
    "logical_not_int8": lambda L: L.tensor([1, 0], dtype=L.int8).logical_not_(),
    "logical_and_bool": lambda L: L.tensor([True, False]).logical_and_(L.tensor([0.5, 0.0])),
    "logical_xor_broadcast": lambda L: L.tensor([[1.0, 0.0], [0.0, 0.0]]).logical_xor_(
        L.tensor([1.0, 0.0])),
    "logical_not_leaf": lambda L: _leaf_write(L, "logical_not_"),
    "logical_and_leaf": lambda L: _leaf_write(L, "logical_and_", L.tensor([1.0, 1.0])),
    "logical_not_view_of_leaf": lambda L: [
        (a[1:].logical_not_(), a.detach(), a._version)[1:]
        for a in [L.tensor([0.5, 0.0], requires_grad=True)]],
    "logical_not_no_grad_view": lambda L: _no_grad_view_write(L, "logical_not_"),
    "logical_and_other_requires_grad": lambda L: [
        (x.logical_and_(L.tensor([1.5, 0.0], requires_grad=True)), x.requires_grad)
        for x in [L.tensor([1.0, 2.0])]],
    "fmod_int": lambda L: L.tensor([7, -7]).fmod_(3),
    "fmod_int_by_float": lambda L: L.tensor([7, -7]).fmod_(2.5),
    "fmod_signs": lambda L: L.tensor([-7.5, 7.5]).fmod_(L.tensor([2.0, -2.0])),
    "cumsum_int32": lambda L: L.tensor([1, 2], dtype=L.int32).cumsum_(0),
    "cumsum_same_dtype": lambda L: L.tensor([1.0, 2.0]).cumsum_(0, dtype=L.float32),
    "cumsum_0d": lambda L: L.tensor(3.0).cumsum_(0),
    "cumsum_rows": lambda L: L.arange(6.0).reshape(2, 3).cumsum_(1),
    "cumsum_float16": lambda L: L.tensor([0.1] * 20, dtype=L.float16).cumsum_(0),
    "addmm_int": lambda L: L.ones(2, 2, dtype=L.int64).addmm_(
        L.ones(2, 2, dtype=L.int64), L.ones(2, 2, dtype=L.int64), beta=2, alpha=3),
    "addmm_beta_0_ignores_nan": lambda L: L.tensor([[float("nan")]]).addmm_(
        L.ones(1, 2), L.ones(2, 1), beta=0),
    "ceil_int": lambda L: L.ceil(L.tensor([3, -2])),
    "abs_int8": lambda L: L.abs_(L.tensor([-3, 4], dtype=L.int8)),
    "clip_int": lambda L: L.clip_(L.tensor([1, 5]), 2, 3),
    "detach_non_view": lambda L: [(L.detach_(y), y.requires_grad, y.grad_fn is None)[1:]
                                  for y in [L.ones(2, requires_grad=True) * 2]],
    "round_decimals": lambda L: L.tensor([1.234, -5.678]).round_(decimals=2),
    "round_negative_decimals": lambda L: L.tensor([1234.0, -5678.0]).round_(decimals=-2),
}


def _lt_leaf_in_no_grad(L):
    x = L.tensor([0.5, 2.0], requires_grad=True)
    with L.no_grad():
        x.lt_(1.0)
    return x, x.requires_grad, x._version


@pytest.mark.parametrize("case", sorted(VALUES))
def test_values_match_torch(case):
    same_as_torch(VALUES[case], exact=False)


BOOL = ("ceil", "floor", "trunc", "fix", "round", "abs", "absolute")



def _on_bool(name, function=False):
    if function:
        return lambda L: getattr(L, name)(L.tensor(True))
    return lambda L: getattr(L.tensor([True, False]), name)()


ERRORS = {
    **{f"{n}_bool": _on_bool(n) for n in BOOL},
    **{f"{n}__bool": _on_bool(n + "_") for n in BOOL},
    **{f"{n}_function_bool": _on_bool(n, function=True) for n in BOOL},
    "abs__function_bool": lambda L: L.abs_(L.tensor([True])),
    "div_bad_mode": lambda L: L.div(L.ones(2), 2, rounding_mode="bad"),
    "divide_bad_mode": lambda L: L.divide(L.ones(2), L.ones(2), rounding_mode="up"),
    "div_method_bad_mode": lambda L: L.ones(2).div(2, rounding_mode="Floor"),
    "leaf_lt_": lambda L: L.tensor([1.0, 2.0], requires_grad=True).lt_(1.5),
    "leaf_fmod_": lambda L: L.tensor([1.0, 2.0], requires_grad=True).fmod_(1.5),
    "leaf_cumsum_": lambda L: L.tensor([1.0, 2.0], requires_grad=True).cumsum_(0),
    "leaf_addmm_": lambda L: L.ones(2, 2, requires_grad=True).addmm_(L.ones(2, 2), L.ones(2, 2)),
    "leaf_neg_": lambda L: L.neg_(L.ones(2, requires_grad=True)),
    "leaf_clamp_": lambda L: L.clamp_(L.ones(2, requires_grad=True), 0.0),
    "leaf_zero_": lambda L: L.zero_(L.ones(2, requires_grad=True)),
    "lt_no_grad_view": lambda L: _no_grad_view_write(L, "lt_", 1.0),
    "split_output_used_after_logical_not_": lambda L: [
        (p.logical_not_(), p * 1) for p in
        (L.tensor([0.5, 1.5, 3.0], requires_grad=True) * 1).split(1)[:1]],
    "expanded_logical_not_": lambda L: L.ones(1).expand(3).logical_not_(),
    "expanded_lt_": lambda L: L.ones(1).expand(3).lt_(0.5),
    "overlap_logical_and_": lambda L: [x.logical_and_(x.t())
                                       for x in [L.arange(4.0).reshape(2, 2)]],
    "overlap_lt_": lambda L: [x.lt_(x.t()) for x in [L.arange(4.0).reshape(2, 2)]],
    "inference_logical_not_": lambda L: _inference_tensor(L).logical_not_(),
    "logical_and_number": lambda L: L.tensor([1, 0]).logical_and_(2),
    "logical_or_bad_shape": lambda L: L.tensor([1.0, 2.0]).logical_or_(L.ones(3)),
    "logical_or_grows_self": lambda L: L.tensor([1.0, 2.0]).logical_or_(L.ones(2, 2)),
    "lt_str": lambda L: L.tensor([1.0, 2.0]).lt_("a"),
    "lt_grows_self": lambda L: L.tensor([1.0, 2.0]).lt_(L.ones(2, 2)),
    "lt_bad_shape": lambda L: L.tensor([1.0, 2.0]).lt_(L.ones(3)),
    "fmod_int_by_zero": lambda L: L.tensor([7, -7]).fmod_(0),
    "cumsum_bool": lambda L: L.tensor([True, True]).cumsum_(0),
    "relu_bool": lambda L: L.relu(L.tensor([True, False])),
    "relu__bool": lambda L: L.tensor([True, False]).relu_(),
    "cumsum_other_dtype": lambda L: L.tensor([1.0, 2.0]).cumsum_(0, dtype=L.float64),
    "cumsum_int_to_float": lambda L: L.tensor([1, 2]).cumsum_(0, dtype=L.float32),
    "cumsum_bad_dim": lambda L: L.tensor([1.0, 2.0]).cumsum_(2),
    "addmm_1d_self": lambda L: L.ones(2).addmm_(L.ones(2, 2), L.ones(2, 2)),
    "addmm_row_self": lambda L: L.ones(1, 2).addmm_(L.ones(2, 2), L.ones(2, 2)),
    "addmm_self_dtype": lambda L: L.ones(2, 2, dtype=L.float64).addmm_(L.ones(2, 2),
                                                                       L.ones(2, 2)),
    "addmm_inner_sizes": lambda L: L.ones(2, 2).addmm_(L.ones(2, 3), L.ones(2, 2)),
    "addmm_1d_mat": lambda L: L.ones(2, 2).addmm_(L.ones(2), L.ones(2, 2)),
    "addmm_list_mat": lambda L: L.ones(2, 2).addmm_(L.ones(2, 2), [[1.0, 1.0], [1.0, 1.0]]),
    "addmm_function_list_mat": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 2), [[1.0, 1.0]]),
    "addmm_function_1d_mat": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 2), L.ones(2)),
    "neg__number": lambda L: L.neg_(3),
    "exp__list": lambda L: L.exp_([1.0]),
    "zero__number": lambda L: L.zero_(3),
    "detach__number": lambda L: L.detach_(3),
    "detach__view": lambda L: L.detach_(L.ones(2, requires_grad=True)[0:1]),
    "fill__int_too_big": lambda L: L.fill_(L.ones(2), 2 ** 70),
    "fill__no_value": lambda L: L.fill_(L.ones(2)),
    "clamp__no_bounds": lambda L: L.clamp_(L.ones(2)),
    "clip__float_into_int": lambda L: L.clip_(L.tensor([1, 5]), 2.5),
    "sin__int": lambda L: L.sin_(L.tensor([1, 5])),
}


def _inference_tensor(L):
    with L.inference_mode():
        return L.ones(2)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as ref:
        ERRORS[case](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[case](tg)
    assert isinstance(ours.value, type(ref.value)), (ours.value, ref.value)


@pytest.mark.parametrize("name", BOOL)
def test_bool_error_names_the_op_and_says_what_to_do(name):
    op = {"fix": "trunc", "absolute": "abs"}.get(name, name)
    for fn in (lambda: getattr(tg, name)(tg.tensor([True])),
               lambda: getattr(tg.tensor([True]), name + "_")()):
        with pytest.raises(NotImplementedError, match=rf"'Bool' \({op} of a bool tensor: "
                                                      rf"convert it first, e\.g\. x\.float\(\)"):
            fn()


def test_relu_of_bool_raises_and_names_the_fix():
    # (NumPy's maximum(0, bool array) gave an int64 tensor)
    x = tg.tensor([True, False])
    for fn in (lambda: tg.relu(x), lambda: x.relu(), lambda: x.relu_()):
        with pytest.raises(RuntimeError, match=r"Boolean inputs not supported for relu .*"
                                               r"x\.float\(\)"):
            fn()
    assert x.tolist() == [True, False] and x._version == 0
    assert tg.relu(tg.tensor([-1, 2])).tolist() == [0, 2]


def test_bool_error_leaves_the_tensor_alone():
    x = tg.tensor([True, False])
    with pytest.raises(NotImplementedError):
        x.round_()
    assert x.tolist() == [True, False] and x._version == 0


def test_div_rounding_mode_error_names_the_op_and_the_choices():
    with pytest.raises(RuntimeError, match=r"div expected rounding_mode to be one of None, "
                                           r"'trunc', or 'floor' but found 'up'"):
        tg.div(tg.ones(2), 2, rounding_mode="up")


def test_errors_name_the_op():
    cases = ((RuntimeError, "cumsum_", lambda: tg.ones(2).cumsum_(0, dtype=tg.float64)),
             (NotImplementedError, "cumsum_", lambda: tg.tensor([True]).cumsum_(0)),
             (TypeError, "logical_and_", lambda: tg.ones(2).logical_and_(1)),
             (TypeError, "neg_", lambda: tg.neg_(3)),
             (RuntimeError, "lt_", lambda: tg.ones(2, requires_grad=True).lt_(0.5)),
             (RuntimeError, "addmm_", lambda: tg.ones(2, 2).addmm_(tg.ones(2), tg.ones(2, 2))),
             (TypeError, "addmm_", lambda: tg.ones(2, 2).addmm_(tg.ones(2, 2), [[1.0]])))
    for exc, name, fn in cases:
        with pytest.raises(exc, match=name):
            fn()


def test_errors_leave_self_unchanged():
    x = tg.tensor([1.0, 2.0])
    for fn in (lambda: x.lt_(tg.ones(2, 2)), lambda: x.logical_or_(tg.ones(3)),
               lambda: x.cumsum_(0, dtype=tg.float64), lambda: x.fmod_("a")):
        with pytest.raises((RuntimeError, TypeError)):
            fn()
    assert x.tolist() == [1.0, 2.0] and x._version == 0


# ---- without torch -----------------------------------------------------------------------------
def test_comparison_writes_self_dtype_and_zero_gradient():
    a = tg.tensor([0.5, 1.5, 2.5], requires_grad=True)
    b = tg.tensor([1.0, 1.0, 3.0], requires_grad=True)
    x = a * 1
    x.lt_(b)
    assert x.tolist() == [1.0, 0.0, 1.0] and x.dtype == tg.float32
    assert type(x.grad_fn).__name__ == "LtBackward1" and x._version == 1
    x.sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0] and b.grad.tolist() == [0.0, 0.0, 0.0]


def test_logical_inplace_keeps_history_and_writes_a_leaf():
    a = tg.tensor([0.5, 0.0, 2.0], requires_grad=True)
    x = a * 2
    x.logical_not_()
    assert x.tolist() == [0.0, 1.0, 0.0] and type(x.grad_fn).__name__ == "MulBackward0"
    x.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]
    a.logical_and_(tg.tensor([1, 0, 1]))
    assert a.tolist() == [1.0, 0.0, 1.0] and a.requires_grad and a.grad_fn is None


def test_addmm_scaled_gradients():
    m1 = tg.tensor([[1.0, 2.0]], requires_grad=True)
    m2 = tg.tensor([[3.0], [4.0]], requires_grad=True)
    s = tg.tensor([[10.0]], requires_grad=True)
    x = s * 1
    x.addmm_(m1, m2, beta=0.5, alpha=2.0)
    assert x.tolist() == [[27.0]] and type(x.grad_fn).__name__ == "AddmmBackward0"
    x.sum().backward()
    assert s.grad.tolist() == [[0.5]]
    assert m1.grad.tolist() == [[6.0, 8.0]] and m2.grad.tolist() == [[2.0], [4.0]]
