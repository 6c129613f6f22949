"""A node called by hand (``y.grad_fn(g)``) runs as torch's call: the formula alone, so no hooks
run and a gradient keeps the shape and dtype the formula gives (the engine's sum to a broadcast
input's shape and cast to its dtype are not applied); all None when no gradient is given."""
import numpy as np
import pytest

import tapegrad as tg


def _plain(r):
    r = r if isinstance(r, tuple) else (r,)
    return [None if t is None else (tuple(t.shape), str(t.dtype).split(".")[-1], t.tolist())
            for t in r]


_CASES = {
    "add broadcast": lambda L: (L.ones(4, 3, requires_grad=True)
                                + L.ones(3, requires_grad=True)).grad_fn(L.ones(4, 3)),
    "mul broadcast": lambda L: (L.full((4, 3), 2.0, requires_grad=True)
                                * L.full((1,), 3.0, requires_grad=True)).grad_fn(L.ones(4, 3)),
    "add mixed dtypes": lambda L: (L.ones(3, dtype=L.float16, requires_grad=True)
                                   + L.ones(3, requires_grad=True)).grad_fn(L.ones(3)),
    "add float64 gradient": lambda L: (L.ones(3, requires_grad=True) + 1).grad_fn(
        L.ones(3, dtype=L.float64)),
    "addmm bias": lambda L: L.addmm(L.ones(3, requires_grad=True), L.ones(4, 5, requires_grad=True),
                                    L.ones(5, 3, requires_grad=True)).grad_fn(L.ones(4, 3)),
    "linear bias": lambda L: L.nn.functional.linear(
        L.ones(4, 5), L.ones(3, 5, requires_grad=True),
        L.zeros(3, requires_grad=True)).grad_fn(L.ones(4, 3)),
    "sum of None": lambda L: L.ones(2, 3, requires_grad=True).sum(0).grad_fn(None),
    "unbind, one None": lambda L: L.ones(2, 3, requires_grad=True).unbind(0)[0].grad_fn(
        L.ones(3), None),
    "unbind, all None": lambda L: L.ones(2, 3, requires_grad=True).unbind(0)[0].grad_fn(None, None),
    "expand": lambda L: L.ones(1, 3, requires_grad=True).expand(2, 3).grad_fn(L.ones(2, 3)),
    "one input without grad": lambda L: (L.ones(2, requires_grad=True) * L.ones(2)).grad_fn(
        L.ones(2)),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_calling_a_node_as_torch(name):
    torch = pytest.importorskip("torch")
    assert _plain(_CASES[name](tg)) == _plain(_CASES[name](torch))


def test_calling_a_node_gives_the_formulas_gradients_without_torch():
    assert _plain(_CASES["mul broadcast"](tg)) == [((4, 3), "float32", [[3.0] * 3] * 4),
                                                  ((4, 3), "float32", [[2.0] * 3] * 4)]
    assert _plain(_CASES["add mixed dtypes"](tg)) == [((3,), "float32", [1.0] * 3)] * 2
    assert _plain(_CASES["sum of None"](tg)) == [None]
    assert _plain(_CASES["linear bias"](tg))[0] == ((4, 3), "float32", [[1.0] * 3] * 4)


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_calling_a_node_runs_none_of_its_hooks(lib_name):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    x = L.ones(2, 3, requires_grad=True)
    y = x * 2
    seen = []
    y.grad_fn.register_prehook(lambda go: seen.append("pre"))
    y.grad_fn.register_hook(lambda gi, go: seen.append("post"))
    y.register_hook(lambda g: seen.append("tensor"))
    r = y.grad_fn(L.ones(2, 3))
    assert seen == [] and r[0].tolist() == [[2.0] * 3] * 2
    y.sum().backward()      # (a backward runs them)
    assert seen == ["tensor", "pre", "post"]


def test_a_backward_still_sums_and_casts_each_gradient():
    a = tg.ones(4, 3, requires_grad=True)
    b = tg.ones(3, dtype=tg.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == tg.float32 and b.grad.dtype == tg.float64
    np.testing.assert_array_equal(b.grad.numpy(), [4.0] * 3)


def test_a_formula_returning_a_non_tensor_raises_type_error():
    class Bad(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return 1.5

    y = Bad.apply(tg.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="BadBackward returned a gradient of type float"):
        y.grad_fn(tg.ones(2))


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_calling_a_node_with_the_wrong_arguments_is_a_type_error(lib_name):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    node = (L.ones(2, requires_grad=True) * 2).grad_fn
    with pytest.raises(TypeError, match="expected 1 arguments, got 0 instead"):
        node()
    with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
        node(L.ones(2), L.ones(2))
    with pytest.raises(TypeError, match="argument 0 is not a Variable"):
        node(3.0)
