"""A node called by hand (``y.grad_fn(g)``) runs as torch's call: the formula alone, so no hooks
run and a gradient keeps the shape and dtype the formula gives (the engine's sum to a broadcast
input's shape and cast to its dtype are not applied); all None when no gradient is given. It
takes exactly one gradient per differentiable output (max(dim), sort, topk: one), softmax's
checks the gradient's dtype and shape, mean's returns a C-order gradient; a custom Function's
node is not callable (its ``apply`` runs backward); an AccumulateGrad node accumulates into
``.grad`` and returns ``()`` (compared with torch)."""
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


def _custom(L):
    class Bad(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            i = L.tensor([1, 2])
            ctx.mark_non_differentiable(i)
            return x * 2, i

        @staticmethod
        def backward(ctx, g, gi):
            return 1.5, None

    return Bad.apply(L.ones(2, requires_grad=True), 5.0)[0].grad_fn


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_a_custom_functions_node_is_not_callable_and_apply_runs_its_backward(lib_name):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    node = _custom(L)
    for args in ((L.ones(2),), (L.ones(2), None), (None,)):
        with pytest.raises(TypeError, match="'BadBackward' object is not callable"):
            node(*args)
    assert node.apply(L.ones(2), None) == (1.5, None)    # (backward's result as it is)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        node.apply(L.ones(2))


def test_a_custom_functions_node_says_what_to_call():
    with pytest.raises(TypeError, match=r"custom autograd.Function; call its apply\(\*grads\)"):
        _custom(tg)(tg.ones(2))


def _selecting(L):
    x = L.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], requires_grad=True)
    return {"max": x.max(1), "min": x.min(1), "max dim 0": x.max(0), "topk": x.topk(2, 1),
            "sort": x.sort(1), "kthvalue": x.kthvalue(2, 1), "median": x.median(1),
            "mode": x.mode(1), "cummax": x.cummax(1)}


_SELECTING = sorted(_selecting(tg))


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
@pytest.mark.parametrize("op", _SELECTING)
def test_an_op_with_indices_takes_one_gradient_by_hand(lib_name, op):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    values, _ = _selecting(L)[op]
    node = values.grad_fn
    g = L.ones_like(values)
    for args in ((g, L.ones_like(values)), (g, None)):
        with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
            node(*args)
    assert node(None) is None
    assert node(g).shape == (2, 3)


@pytest.mark.parametrize("op", _SELECTING)
def test_an_op_with_indices_by_hand_as_torch(op):
    torch = pytest.importorskip("torch")
    ours, theirs = (_selecting(L)[op][0] for L in (tg, torch))
    r = ours.grad_fn(tg.ones_like(ours))
    e = theirs.grad_fn(torch.ones_like(theirs))
    assert (r.tolist(), r.stride()) == (e.tolist(), e.stride())


def test_the_count_error_says_the_indices_take_none():
    values = tg.ones(2, 3, requires_grad=True).max(1).values
    with pytest.raises(TypeError, match=r"MaxBackward0 called by hand takes one gradient.*its 1 "
                                        r"output\(s\) without a gradient \(indices\) take none"):
        values.grad_fn(tg.ones(2), None)


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_a_multi_output_node_takes_one_gradient_per_output(lib_name):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    node = L.ones(2, 3, requires_grad=True).unbind(0)[0].grad_fn
    for args in ((L.ones(3),), (None,)):
        with pytest.raises(TypeError, match="expected 2 arguments, got 1 instead"):
            node(*args)


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


def _acc(L, *shape):
    a = L.ones(*shape, requires_grad=True)
    return a, (a * 2).grad_fn.next_functions[0][0]


def _grad(t):
    g = t.grad
    return None if g is None else (g.tolist(), str(g.dtype).split(".")[-1], g.stride(), g._version)


def _acc_story(L):
    """What a hand-called AccumulateGrad does to .grad, step by step."""
    a, acc = _acc(L, 3)
    g = L.ones(3)
    log = [acc(g), _grad(a), a.grad is g]
    first = a.grad
    log += [acc(L.full((3,), 2.0)), _grad(a), a.grad is first]        # grad mode on: a new sum
    held = a.grad
    with L.no_grad():
        log += [acc(g), _grad(a), a.grad is held]                       # no_grad: in place
        log += [acc(L.ones(3, dtype=L.float64)), _grad(a), acc(L.ones(1)), _grad(a)]
    log += [acc(L.ones(3, dtype=L.float64)), _grad(a)]                  # promoted, as torch
    log += [acc(None), _grad(a)]
    b, accb = _acc(L, 3)
    log += [accb(L.ones(3, dtype=L.float64)), _grad(b)]                 # a first one: its dtype
    w = L.ones(4, 3).t().detach().requires_grad_()
    accw = (w * 2).grad_fn.next_functions[0][0]
    log += [accw(L.ones(3, 4)), _grad(w)]                               # laid out as the leaf
    c, accc = _acc(L, 3)
    c.requires_grad_(False)
    log += [accc(L.ones(3)), _grad(c)]                                  # no longer requires grad
    d, accd = _acc(L, 3)
    h = L.ones(3, requires_grad=True) * 2
    accd(h)
    log.append((type(d.grad.grad_fn).__name__, d.grad.requires_grad))
    accd(h)
    log.append((type(d.grad.grad_fn).__name__, d.grad.requires_grad))
    return log


def test_an_accumulate_grad_node_called_by_hand_as_torch():
    torch = pytest.importorskip("torch")
    assert _acc_story(tg) == _acc_story(torch)


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_an_accumulate_grad_node_by_hand_runs_post_accumulate_hooks_only(lib_name):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    a, acc = _acc(L, 3)
    seen = []
    a.register_hook(lambda g: seen.append("tensor"))
    acc.register_prehook(lambda g: seen.append("pre"))
    acc.register_hook(lambda gi, go: seen.append("post"))
    a.register_post_accumulate_grad_hook(lambda t: seen.append(("post_acc", t.grad.tolist())))
    assert acc(L.ones(3)) == ()
    assert seen == [("post_acc", [1.0, 1.0, 1.0])]


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_an_accumulate_grad_node_by_hand_errors(lib_name):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    a, acc = _acc(L, 3)
    with pytest.raises(RuntimeError):
        acc(L.ones(4))
    assert a.grad is None
    acc(L.ones(3))
    with pytest.raises(RuntimeError, match="The size of tensor a \\(3\\) must match"):
        acc(L.ones(4))
    with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
        acc(L.ones(3), None)
    with pytest.raises(TypeError, match="argument 0 is not a Variable"):
        acc(3.0)
    assert a.grad.tolist() == [1.0] * 3


def test_an_accumulate_grad_node_by_hand_without_torch():
    a, acc = _acc(tg, 3)
    g = tg.ones(3)
    assert acc(g) == () and a.grad.tolist() == [1.0] * 3 and a.grad is not g
    with tg.no_grad():
        held = a.grad
        acc(g)
    assert a.grad is held and a.grad.tolist() == [2.0] * 3


_SOFTMAX = {
    "softmax float64": lambda L: L.ones(2, 3, requires_grad=True).softmax(1).grad_fn(
        L.ones(2, 3, dtype=L.float64)),
    "softmax float16": lambda L: L.ones(2, 3, requires_grad=True).softmax(1).grad_fn(
        L.ones(2, 3, dtype=L.float16)),
    "softmax float32 into float64": lambda L: L.ones(2, 3, dtype=L.float64, requires_grad=True)
    .softmax(1).grad_fn(L.ones(2, 3)),
    "log_softmax float64": lambda L: L.ones(2, 3, requires_grad=True).log_softmax(1).grad_fn(
        L.ones(2, 3, dtype=L.float64)),
    "softmax shape": lambda L: L.ones(2, 3, requires_grad=True).softmax(1).grad_fn(L.ones(3)),
    # (zero gradients: results exact in both)
    "softmax same dtype": lambda L: L.ones(2, 3, requires_grad=True).softmax(1).grad_fn(
        L.zeros(2, 3)),
    "log_softmax same dtype": lambda L: L.ones(2, 3, requires_grad=True).log_softmax(1).grad_fn(
        L.zeros(2, 3)),
}


def _outcome(fn, L):
    try:
        return _plain(fn(L))
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__


@pytest.mark.parametrize("name", sorted(_SOFTMAX))
def test_softmax_nodes_by_hand_as_torch(name):
    torch = pytest.importorskip("torch")
    assert _outcome(_SOFTMAX[name], tg) == _outcome(_SOFTMAX[name], torch)


def test_softmax_node_by_hand_says_what_to_pass():
    y = tg.ones(2, 3, requires_grad=True).softmax(1)
    with pytest.raises(RuntimeError, match=r"SoftmaxBackward0 called by hand takes a gradient of "
                                           r"its output's dtype, Float, and got one of Double: "
                                           r"pass grad.to\(output.dtype\)"):
        y.grad_fn(tg.ones(2, 3, dtype=tg.float64))


def _strided(r):
    r = r if isinstance(r, tuple) else (r,)
    return [None if t is None else (t.tolist(), t.stride(), str(t.dtype).split(".")[-1])
            for t in r]


_REDUCTIONS = {
    "mean": lambda L: L.ones(2, 3, requires_grad=True).mean().grad_fn(L.tensor(1.0)),
    "mean float64 gradient": lambda L: L.ones(2, 3, requires_grad=True).mean().grad_fn(
        L.tensor(1.0, dtype=L.float64)),
    "mean dim": lambda L: L.ones(2, 3, requires_grad=True).mean(1).grad_fn(L.ones(2)),
    "mean dims keepdim": lambda L: L.ones(2, 3, 4, requires_grad=True).mean(
        (0, 2), keepdim=True).grad_fn(L.ones(1, 3, 1)),
    "mean of a 1-D": lambda L: L.ones(5, requires_grad=True).mean().grad_fn(L.tensor(2.0)),
    "sum (a broadcast view)": lambda L: L.ones(2, 3, requires_grad=True).sum().grad_fn(
        L.tensor(1.0)),
    "sum dim": lambda L: L.ones(2, 3, requires_grad=True).sum(1).grad_fn(L.ones(2)),
}


@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_reduction_nodes_by_hand_strides_as_torch(name):
    torch = pytest.importorskip("torch")
    assert _strided(_REDUCTIONS[name](tg)) == _strided(_REDUCTIONS[name](torch))


def test_mean_node_by_hand_is_c_order_without_torch():
    r = tg.ones(2, 3, requires_grad=True).mean().grad_fn(tg.tensor(1.0))
    assert r.stride() == (3, 1) and r.is_contiguous()


def _mean_history(L):
    g = L.tensor(1.0, requires_grad=True)
    r = L.ones(2, 3, requires_grad=True).mean().grad_fn(g)
    r1 = L.ones(2, 3, requires_grad=True).mean(1).grad_fn(L.ones(2, requires_grad=True))
    return [(type(t.grad_fn).__name__, t.stride()) for t in (r, r1)]


def test_mean_node_by_hand_records_torchs_formula():
    torch = pytest.importorskip("torch")
    assert _mean_history(tg) == _mean_history(torch)
