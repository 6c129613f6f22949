"""Fixes from a review of autograd.functional and the binary cross-entropy / dropout ops, each
compared with torch (skipped cleanly without it): vhp/hvp with ``v=None``, vjp's ``v=None`` rule,
the outputs vhp/hvp accept, jacobian/hessian with tuples, mixed dtypes and the arguments accepted
only for compatibility, the shared reduction check of every loss, loss weights that do not
broadcast to the input, higher derivatives of the BCE losses (no needless scale node), and dropout
of integer tensors."""

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.ops import nn_extra, nn_ops


def _np(t):
    return t.detach().numpy()


def _outcome(fn):
    """What ``fn()`` returns, or the exception it raises."""
    try:
        return fn()
    except Exception as e:   # noqa: BLE001 - the exception is the outcome being compared
        return e


def _assert_same(ours, theirs, messages=False, rtol=1e-6, atol=1e-7):
    """The same nesting of tuples/lists; tensors of the same shape, dtype and requires_grad with
    close values; exceptions of the same type (and message, with ``messages``)."""
    if isinstance(theirs, BaseException):
        assert isinstance(ours, BaseException), (ours, theirs)
        assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
        if messages:
            assert str(ours) == str(theirs)
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b, messages, rtol, atol)
    elif hasattr(theirs, "detach"):
        assert hasattr(ours, "detach"), (ours, theirs)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert ours.requires_grad == theirs.requires_grad
        np.testing.assert_allclose(_np(ours).astype(np.float64), _np(theirs).astype(np.float64),
                                   rtol=rtol, atol=atol)
    else:
        assert ours == theirs


def _same(case, torch, **kw):
    _assert_same(case(tg), case(torch), **kw)


# ---- autograd.functional ------------------------------------------------------------------------
def _cube(x):
    return (x ** 3).sum()


_V_NONE_CASES = {
    "0d": lambda L: L.tensor(1.5),
    "1": lambda L: L.tensor([1.5]),
    "1x1": lambda L: L.tensor([[1.5]]),
    "float64": lambda L: L.tensor([1.5], dtype=L.float64),
    "tuple_of_one": lambda L: (L.tensor([1.5]),),
    "two_elements": lambda L: L.tensor([1.5, 2.0]),
    "two_inputs": lambda L: (L.tensor([1.5]), L.tensor([2.0])),
}


@pytest.mark.parametrize("name", ["vhp", "hvp"])
@pytest.mark.parametrize("case", sorted(_V_NONE_CASES))
@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp_default_v_matches_torch(name, case, create_graph, torch):
    """Was a bug: v=None raised TypeError ('NoneType' object is not iterable). As torch, it is a
    single 1 for an input of one element, RuntimeError (before func runs) otherwise."""
    def run(L):
        calls = []

        def f(*xs):
            calls.append(1)
            return sum((x ** 3).sum() for x in xs)
        out = _outcome(lambda: getattr(L.autograd.functional, name)(
            f, _V_NONE_CASES[case](L), create_graph=create_graph))
        return out, len(calls)
    _same(run, torch, messages=True)


@pytest.mark.parametrize("name", ["vhp", "hvp"])
@pytest.mark.parametrize("func", ["tuple", "two_elements", "shape_1"])
def test_vhp_hvp_output_checks_match_torch(name, func, torch):
    fns = {"tuple": lambda x: ((x ** 3).sum(),), "two_elements": lambda x: x ** 3,
           "shape_1": lambda x: (x ** 3).sum().reshape(1)}

    def run(L):
        x, v = L.tensor([1.5, -0.5]), L.tensor([1.0, 2.0])
        return _outcome(lambda: getattr(L.autograd.functional, name)(fns[func], x, v))
    _same(run, torch, messages=True)


def test_vhp_hvp_values_and_forms_match_torch(torch):
    def run(L):
        F = L.autograd.functional
        x = L.tensor([0.3, -1.2, 2.0], dtype=L.float64)
        y = L.tensor([[0.5, 1.5]])
        v = (L.tensor([1.0, 0.0, -2.0], dtype=L.float64), L.tensor([[2.0, -1.0]]))

        def f(a, b):
            return (a.sin() * a).sum() * (b * b).sum() + b.exp().sum()
        return [_outcome(lambda: F.vhp(f, (x, y), v)), _outcome(lambda: F.hvp(f, (x, y), v)),
                _outcome(lambda: F.vhp(f, (x, y), v, create_graph=True)),
                _outcome(lambda: F.hvp(_cube, x, v[0])),
                # an input the output does not depend on: zeros of its shape and dtype
                _outcome(lambda: F.vhp(lambda a, b: _cube(a), (x, y), v))]
    _same(run, torch)


@pytest.mark.parametrize("case", ["two_scalar_outputs", "one_output", "vector_output"])
def test_vjp_default_v_matches_torch(case, torch):
    """Was a bug: vjp accepted v=None for several single-element outputs; torch raises."""
    fns = {"two_scalar_outputs": lambda x: (x * 2, x * 3), "one_output": lambda x: x * 2,
           "vector_output": lambda x: x.expand(2) * 2}

    def run(L):
        return _outcome(lambda: L.autograd.functional.vjp(fns[case], L.tensor([1.5])))
    _same(run, torch, messages=True)


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp_forms_and_dtypes_match_torch(create_graph, torch):
    def run(L):
        F = L.autograd.functional
        a = L.tensor([0.5, -1.0, 2.0])
        b = L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64)

        def f(x, y):
            return x.tanh() * y.sum(), (y * y).sum()
        va = (L.tensor([1.0, 2.0, 3.0], dtype=L.float64), L.tensor(2.0, dtype=L.float64))
        vj = (L.tensor([1.0, 0.0, -1.0]), L.ones(2, 2, dtype=L.float64))
        return [_outcome(lambda: F.vjp(f, (a, b), va, create_graph=create_graph)),
                _outcome(lambda: F.jvp(f, (a, b), vj, create_graph=create_graph)),
                _outcome(lambda: F.jvp(lambda x: x.exp(), L.tensor([0.5]))),
                _outcome(lambda: F.jvp(lambda x: x.exp(), L.tensor([0.5, 1.0]))),
                _outcome(lambda: F.vjp(lambda x: x.exp(), a, L.ones(4)))]
    _same(run, torch)


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_forms_dtypes_and_ignored_arguments_match_torch(create_graph, torch):
    def run(L):
        F = L.autograd.functional
        x = L.tensor([0.5, -1.0])
        y = L.tensor([[1.0, 2.0, 3.0]], dtype=L.float64)
        z = L.tensor([4.0])

        def f(a, b, c):   # c is unused: its blocks are zeros
            return a * b.sum(), b.sin(), (a * a).sum()
        res = [_outcome(lambda: F.jacobian(f, (x, y, z), create_graph=create_graph)),
               _outcome(lambda: F.jacobian(lambda a: a.exp(), x, create_graph=create_graph)),
               _outcome(lambda: F.jacobian(lambda a: (a.exp(),), (x,)))]
        if not create_graph:   # (torch's vectorized zero blocks then carry a graph)
            res.append(_outcome(lambda: F.jacobian(f, (x, y, z), vectorize=True)))
        return res
    _same(run, torch)


def test_strict_raises_for_an_independent_input():
    """strict=True raises RuntimeError for an input the output does not depend on, as torch
    (strict=False gives zeros); the cases are in test_functional_strict.py."""
    F = tg.autograd.functional
    x, z = tg.tensor([0.5, -1.0]), tg.tensor([4.0])
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.jacobian(lambda a, b: a * 2, (x, z), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(lambda a, b: a * 2, (x, z), tg.ones(2), strict=True)
    assert F.jacobian(lambda a, b: a * 2, (x, z))[1].tolist() == [[0.0], [0.0]]


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_jacobian_strategy_is_ignored(torch):
    """strategy='forward-mode' (torch: needs vectorize=True) gives the same values; torch then
    returns a list and the output's dtype, so only values are compared."""
    def run(L):
        x = L.tensor([0.5, -1.0])
        y = L.tensor([[1.0, 2.0, 3.0]])
        return L.autograd.functional.jacobian(lambda a, b: (a * b.sum(), b.sin()), (x, y),
                                              vectorize=True, strategy="forward-mode")
    ours, theirs = run(tg), run(torch)
    assert len(ours) == len(theirs) == 2
    for a, b in zip(ours, theirs):
        assert len(a) == len(b) == 2
        for u, w in zip(a, b):
            np.testing.assert_allclose(_np(u), _np(w), rtol=1e-6, atol=1e-7)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_forms_and_ignored_arguments_match_torch(create_graph, torch):
    def run(L):
        F = L.autograd.functional
        x = L.tensor([0.5, -1.0, 0.25], dtype=L.float64)
        y = L.tensor([[2.0], [1.5]], dtype=L.float64)

        def f(a, b):
            return (a.sin() * a).sum() * (b * b).sum()
        # (torch's forward-mode outer jacobian leaves requires_grad set: compare values only)
        ignored = F.hessian(lambda a: (a ** 4).sum(), x, vectorize=True,
                            outer_jacobian_strategy="forward-mode")
        return [_outcome(lambda: F.hessian(f, (x, y), create_graph=create_graph)),
                _np(ignored)]
    ours, theirs = run(tg), run(torch)
    _assert_same(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_hessian_of_non_scalar_raises_like_torch(torch):
    def run(L):
        F = L.autograd.functional
        x = L.tensor([0.5, -1.0])
        return [_outcome(lambda: F.hessian(f, x))
                for f in (lambda a: a * 2, lambda a: ((a * a).sum(),))]
    ours = run(tg)
    _same(run, torch)
    assert all(isinstance(e, RuntimeError) for e in ours)


_CONSTANT_CASES = {
    "jvp_unused_input": lambda F, L, x, y: F.jvp(lambda a, b: a * 2, (x, y),
                                                 (L.ones(2), L.ones(1))),
    "jvp_constant_output": lambda F, L, x, y: F.jvp(lambda a: L.ones(2) * 1, x, L.ones(2)),
    "vjp_unused_input": lambda F, L, x, y: F.vjp(lambda a, b: a * 2, (x, y), L.ones(2)),
    "vhp_linear": lambda F, L, x, y: F.vhp(lambda a: a.sum() * 2, x, L.ones(2)),
    "hvp_linear": lambda F, L, x, y: F.hvp(lambda a: a.sum() * 2, x, L.ones(2)),
    "vhp_unused_input": lambda F, L, x, y: F.vhp(lambda a, b: (a * a).sum(), (x, y),
                                                 (L.ones(2), L.ones(1))),
    "hessian_unused_input": lambda F, L, x, y: F.hessian(lambda a, b: (a * a).sum(), (x, y)),
    "hessian_linear": lambda F, L, x, y: F.hessian(lambda a: a.sum() * 2, x),
    "jacobian_constant": lambda F, L, x, y: F.jacobian(lambda a: L.ones(2), x),
    "jacobian_unused_input": lambda F, L, x, y: F.jacobian(lambda a, b: a * 2, (x, y)),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(_CONSTANT_CASES))
def test_independent_parts_give_zeros_like_torch(case, create_graph, torch):
    """Was a bug: a gradient that does not require grad (an unused input's zeros, a linear
    function's constant gradient, a constant output) was passed on to autograd.grad, which
    raised RuntimeError; torch (strict=False) leaves it out and returns zeros."""
    def run(L):
        F = L.autograd.functional
        x, y = L.tensor([1.0, 2.0]), L.tensor([3.0])
        if create_graph:
            return _outcome(lambda: _CONSTANT_CASES[case](
                _with_create_graph(F), L, x, y))
        return _outcome(lambda: _CONSTANT_CASES[case](F, L, x, y))
    _same(run, torch)


class _with_create_graph:
    def __init__(self, F):
        self.F = F

    def __getattr__(self, name):
        fn = getattr(self.F, name)
        return lambda *a, **k: fn(*a, create_graph=True, **k)


# ---- reductions ---------------------------------------------------------------------------------
def test_reduction_helpers_have_one_definition():
    assert not hasattr(nn_extra, "_REDUCTIONS")
    assert nn_extra._reduction is nn_ops._reduction
    assert nn_extra._reduce_array is nn_ops._reduce_array
    assert nn_ops._REDUCTIONS == ("mean", "sum", "none")


_BAD_REDUCTION = {
    "nll_loss": lambda L: L.nn.functional.nll_loss(L.zeros(2, 3), L.tensor([0, 1]),
                                                   reduction="bad"),
    "mse_loss": lambda L: L.nn.functional.mse_loss(L.zeros(2), L.zeros(2), reduction="bad"),
    "bce": lambda L: L.nn.functional.binary_cross_entropy(L.zeros(2), L.zeros(2),
                                                          reduction="bad"),
    "bce_logits": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.zeros(2), L.zeros(2), reduction="bad"),
    "cross_entropy": lambda L: L.nn.functional.cross_entropy(L.zeros(2, 3), L.tensor([0, 1]),
                                                             reduction="bad"),
}


@pytest.mark.parametrize("case", sorted(_BAD_REDUCTION))
def test_unknown_reduction_raises_like_torch(case, torch):
    with pytest.raises(ValueError) as theirs:
        _BAD_REDUCTION[case](torch)
    with pytest.raises(ValueError) as ours:
        _BAD_REDUCTION[case](tg)
    assert str(ours.value).startswith(str(theirs.value))
    if case != "nll_loss" and case != "cross_entropy":   # those add a hint
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_values_unchanged(reduction, torch):
    def run(L):
        a = L.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        loss = L.nn.functional.mse_loss(a, L.tensor([[1.0, 0.0], [1.0, 1.0]]),
                                        reduction=reduction)
        loss.sum().backward()
        return loss.detach(), a.grad
    _same(run, torch)


# ---- binary cross-entropy -----------------------------------------------------------------------
_WEIGHT_CASES = {
    "bce_weight_grows": lambda L: L.nn.functional.binary_cross_entropy(
        L.full((3,), 0.5), L.full((3,), 0.5), weight=L.ones(3, 1), reduction="none"),
    "bce_weight_mismatch": lambda L: L.nn.functional.binary_cross_entropy(
        L.full((3,), 0.5), L.full((3,), 0.5), weight=L.ones(2)),
    "logits_weight_grows": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.zeros(3), L.zeros(3), weight=L.ones(3, 1), reduction="none"),
    "logits_weight_mismatch": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.zeros(3), L.zeros(3), weight=L.ones(2)),
    "logits_pos_weight_grows": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.zeros(3), L.zeros(3), pos_weight=L.ones(3, 1), reduction="none"),
    "logits_pos_weight_mismatch": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.zeros(3), L.zeros(3), pos_weight=L.ones(2)),
}


@pytest.mark.parametrize("case", sorted(_WEIGHT_CASES))
def test_loss_weight_must_broadcast_to_input_like_torch(case, torch):
    """Was a bug: a weight that broadcast to a larger shape grew the loss ((3,) -> (3, 3)), and
    one that did not broadcast raised ValueError; torch raises RuntimeError for both."""
    with pytest.raises(RuntimeError) as theirs:
        _WEIGHT_CASES[case](torch)
    with pytest.raises(RuntimeError) as ours:
        _WEIGHT_CASES[case](tg)
    if "grows" in case:
        assert str(ours.value) == str(theirs.value)


def test_loss_weights_that_broadcast_still_match_torch(torch):
    def run(L):
        F = L.nn.functional
        x = L.tensor([[0.2, 0.7, 0.5], [0.9, 0.1, 0.4]], requires_grad=True)
        t = L.tensor([[0.0, 1.0, 0.5], [1.0, 0.0, 0.25]])
        out = [F.binary_cross_entropy(x, t, weight=L.tensor([1.0, 2.0, 3.0]), reduction="none"),
               F.binary_cross_entropy(x, t, weight=L.tensor([[2.0], [0.5]])),
               F.binary_cross_entropy_with_logits(x, t, weight=L.tensor([[2.0], [0.5]]),
                                                  pos_weight=L.tensor([1.0, 3.0, 0.5]),
                                                  reduction="sum")]
        return [o.detach() for o in out]
    _same(run, torch)


def _graph_size(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        todo.extend(n for n, _ in node.next_functions)
    return len(seen)


_BCE = {
    "bce": lambda L, x, t, w, r: L.nn.functional.binary_cross_entropy(
        x.sigmoid(), t, weight=w, reduction=r),
    "bce_logits": lambda L, x, t, w, r: L.nn.functional.binary_cross_entropy_with_logits(
        x, t, weight=w, reduction=r),
    "bce_logits_pos_weight": lambda L, x, t, w, r: L.nn.functional.binary_cross_entropy_with_logits(
        x, t, weight=w, reduction=r, pos_weight=L.tensor([2.0, 0.5], dtype=L.float64)),
}


@pytest.mark.parametrize("loss", sorted(_BCE))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_second_derivatives_match_torch(loss, reduction, weighted, torch):
    """The gradients are built without a multiplication by 1 ('sum'/'none') or by an absent
    weight: values of first and second derivatives (input and target) are unchanged."""
    def run(L):
        x = L.tensor([[0.3, -1.2], [2.0, 0.1]], dtype=L.float64, requires_grad=True)
        t = L.tensor([[0.0, 1.0], [0.25, 0.75]], dtype=L.float64, requires_grad=True)
        w = L.tensor([1.5, 0.5], dtype=L.float64) if weighted else None
        out = _BCE[loss](L, x, t, w, reduction)
        gx, gt = L.autograd.grad(out.sum(), (x, t), create_graph=True)
        hx = L.autograd.grad((gx * gx).sum() + (gt * x).sum(), (x, t))
        return [out.detach(), gx.detach(), gt.detach(), hx[0], hx[1]]
    _same(run, torch, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("loss", sorted(_BCE))
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_gradient_graph_has_no_scale_by_one(loss, weighted):
    """'mean' needs one more node than 'sum' in the gradient's graph (the 1 / n scale); before,
    'sum' and 'none' also recorded a multiplication by 1.0."""
    sizes = {}
    for reduction in ("mean", "sum", "none"):
        x = tg.tensor([[0.3, -1.2], [2.0, 0.1]], dtype=tg.float64, requires_grad=True)
        t = tg.tensor([[0.0, 1.0], [0.25, 0.75]], dtype=tg.float64)
        w = tg.tensor([1.5, 0.5], dtype=tg.float64) if weighted else None
        out = _BCE[loss](tg, x, t, w, reduction)
        g = tg.ones(out.shape, dtype=tg.float64)
        gx, = tg.autograd.grad(out, x, g, create_graph=True)
        sizes[reduction] = _graph_size(gx)
    assert sizes["mean"] == sizes["sum"] + 1
    assert sizes["none"] == sizes["sum"]


# ---- dropout ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16", "float64"])
@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
def test_dropout_dtypes_match_torch(dtype, p, torch):
    """Was a bug: an integer or bool input with 0 < p < 1 raised NumPy's UFuncTypeError; torch
    raises RuntimeError."""
    def run(L):
        x = L.ones(4, dtype=getattr(L, dtype))
        out = _outcome(lambda: L.nn.functional.dropout(x, p))
        if isinstance(out, BaseException) or p == 1.0 or p == 0.0:
            return out
        kept = _np(out).astype(np.float64)
        assert set(kept.tolist()) <= {0.0, 2.0}   # the mask is random
        return tuple(out.shape), str(out.dtype).split(".")[-1]   # dropout's own shape and dtype
    _same(run, torch, messages=True)
    x = tg.ones(4, dtype=getattr(tg, dtype))
    assert tg.nn.functional.dropout(x, p, training=False) is x
