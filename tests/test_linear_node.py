"""F.linear's one-node record (ops.linalg.Linear): an AddmmBackward0 whose TBackward0 node is made
only when something looks for it. Whatever looks (next_functions, hooks, calling the node, a
backward that records a graph, autograd.grad with inputs), the graph, the gradients, their
layouts and the errors are torch's; a plain backward gives the two-node record's bits."""
import numpy as np
import pytest

import tapegrad as tg

RNG = np.random.RandomState(7)
X = RNG.randn(6, 4).astype(np.float32)
W = RNG.randn(3, 4).astype(np.float32)
B = RNG.randn(3).astype(np.float32)


def _torch():
    return pytest.importorskip("torch")


def _names(fn):
    return [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


def _grads(*ts):
    return [None if t.grad is None else t.grad.numpy().copy() for t in ts]


def _same(got, want, rtol=1e-5, atol=1e-6):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(g, (list, tuple)) and not isinstance(g, np.ndarray):
            _same(g, w, rtol, atol)
        elif g is None or w is None or isinstance(g, (str, int, bool)):
            assert g == w
        else:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


@pytest.mark.parametrize("need", ["xwb", "wb", "xb", "b", "xw"])
def test_plain_backward_gives_the_two_node_records_bits(need):
    def run(two_nodes):
        x, w, b = (tg.tensor(a, requires_grad=k in need) for a, k in ((X, "x"), (W, "w"), (B, "b")))
        y = tg.addmm(b, x, w.t()) if two_nodes else tg.nn.functional.linear(x, w, b)
        assert type(y.grad_fn).__name__ == "AddmmBackward0"
        (y * y).sum().backward()
        return [None if g is None else (g.tobytes(), g.strides) for g in _grads(x, w, b)]

    assert run(False) == run(True)


@pytest.mark.parametrize("bshape", [(3,), (1, 3), (6, 3), (), (1,), (6, 1), (1, 1)])
def test_bias_of_any_broadcast_shape_as_torch_and_the_two_node_bits(bshape):
    # a plain backward sums a (3,) bias's gradient itself; every other shape is left to the
    # engine's sum: both must give the two-node record's bits and torch's values
    bias = np.asarray(RNG.randn(*bshape), np.float32)

    def run(lib, two_nodes=False):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, bias))
        y = lib.addmm(b, x, w.t()) if two_nodes else lib.nn.functional.linear(x, w, b)
        (y * y).sum().backward()
        return _grads(x, w, b)

    got = run(tg)
    assert [(g.tobytes(), g.shape, g.dtype) for g in got] == \
        [(g.tobytes(), g.shape, g.dtype) for g in run(tg, two_nodes=True)]
    _same(got, run(_torch()), rtol=1e-5, atol=1e-5)


def test_a_weight_with_history_keeps_its_own_transpose_node():
    w0 = tg.tensor(W, requires_grad=True)
    w = w0 * 2.0
    y = tg.nn.functional.linear(tg.tensor(X), w, tg.tensor(B, requires_grad=True))
    t = y.grad_fn.next_functions[2][0]
    assert type(t).__name__ == "TBackward0" and t.next_functions[0][0] is w.grad_fn
    y.sum().backward()
    np.testing.assert_allclose(w0.grad.numpy(), 2 * np.tile(X.sum(0), (3, 1)), rtol=1e-5)


@pytest.mark.parametrize("look", [False, True])
def test_graph_and_transpose_node_hooks_as_torch(look):
    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, B))
        y = lib.nn.functional.linear(x, w, b)
        seen, order = [], []
        # (the leaves' order among themselves: tapegrad runs these hooks after the walk, torch
        # among the nodes, so the two lists are kept apart)
        for name, p in (("x", x), ("w", w), ("b", b)):
            p.register_post_accumulate_grad_hook(lambda t, name=name: order.append(name))
        if look:
            fns = _names(y.grad_fn)
            t = y.grad_fn.next_functions[2][0]
            assert t.next_functions[0][0].variable is w
            t.register_hook(lambda gi, go: seen.append([list(g.shape) for g in gi + go]))
            t.register_prehook(lambda go: seen.append(go[0].stride()))
        (y * y).sum().backward()
        if not look:
            fns = _names(y.grad_fn)
        return fns, seen, _grads(x, w, b), w.grad.stride(), order

    got = run(tg)
    assert got[0] == ["AccumulateGrad", "AccumulateGrad", "TBackward0"]
    assert got[3] == (4, 1)
    want = run(_torch())
    assert got[0] == want[0] and got[1] == want[1] and got[3] == want[3] and got[4] == want[4]
    _same(got[2], want[2])


def test_hook_on_the_addmm_node_before_anything_looked_as_torch():
    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, B))
        y = lib.nn.functional.linear(x, w, b)
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append([list(v.shape) for v in gi]))
        (y * y).sum().backward()
        return seen, _grads(x, w, b)

    got, want = run(tg), run(_torch())
    assert got[0] == want[0] == [[[3], [6, 4], [4, 3]]]
    _same(got[1], want[1])


def test_hook_on_the_addmm_node_and_calling_it_as_torch():
    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, B))
        y = lib.nn.functional.linear(x, w, b)
        g = lib.ones(6, 3)
        direct = y.grad_fn(g)
        seen = []
        y.grad_fn.register_hook(
            lambda gi, go: seen.append([None if v is None else list(v.shape) for v in gi]))
        y.sum().backward()
        # (called directly, the bias's gradient comes unsummed, (6, 3), as torch's)
        return [list(v.shape) for v in direct], [v.detach().numpy() for v in direct], \
            seen, _grads(x, w, b)

    got, want = run(tg), run(_torch())
    assert got[0] == want[0] == [[6, 3], [6, 4], [4, 3]]
    assert got[2] == want[2]
    _same(got[1], want[1])
    _same(got[3], want[3])


@pytest.mark.parametrize("look", [False, True])
def test_create_graph_records_torchs_graph(look):
    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, B))
        y = lib.nn.functional.linear(x, w, b)
        if look:
            _names(y.grad_fn)
        gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        shape = [_names(gx.grad_fn), type(gw.grad_fn).__name__, _names(gw.grad_fn),
                 _names(gw.grad_fn.next_functions[0][0])]
        ((gx * gx).sum() + (gw * gw).sum()).backward()
        return shape, [gx.detach().numpy(), gw.detach().numpy()], _grads(x, w, b)

    got, want = run(tg), run(_torch())
    assert got[0] == want[0]
    assert got[0][1:] == ["TBackward0", ["TBackward0"], ["MmBackward0"]]
    _same(got[1], want[1])
    _same(got[2], want[2], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("need", ["xwb", "wb", "xb", "b", "xw", "x"])
def test_which_inputs_need_a_gradient_as_torch(need):
    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=k in need) for a, k in ((X, "x"), (W, "w"), (B, "b")))
        y = lib.nn.functional.linear(x, w, b)
        fns = _names(y.grad_fn)
        (y.exp() * 0.1).sum().backward()
        return fns, _grads(x, w, b)

    got, want = run(tg), run(_torch())
    assert got[0] == want[0]
    _same(got[1], want[1])


@pytest.mark.parametrize("case", ["x transposed", "w transposed", "both"])
def test_gradient_layouts_of_non_contiguous_inputs_as_torch(case):
    def run(lib):
        xs = lib.tensor(np.ascontiguousarray(X.T)) if "x" in case or case == "both" else None
        ws = lib.tensor(np.ascontiguousarray(W.T)) if "w" in case or case == "both" else None
        x = (xs.t() if xs is not None else lib.tensor(X)).detach().requires_grad_()
        w = (ws.t() if ws is not None else lib.tensor(W)).detach().requires_grad_()
        b = lib.tensor(B, requires_grad=True)
        y = lib.nn.functional.linear(x, w, b)
        (y * y).sum().backward()
        return _grads(x, w, b), x.grad.stride(), w.grad.stride()

    got, want = run(tg), run(_torch())
    assert got[1:] == want[1:]
    _same(got[0], want[0])


def test_weight_written_in_place_after_forward_is_refused():
    x, w, b = (tg.tensor(a, requires_grad=True) for a in (X, W, B))
    y = tg.nn.functional.linear(x, w, b)
    with tg.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="AddmmBackward0.*modified|modified.*AddmmBackward0"):
        y.sum().backward()
    assert x.grad is None and w.grad is None and b.grad is None
    # torch raises the same type
    torch = _torch()
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (X, W, B))
    yt = torch.nn.functional.linear(xt, wt, bt)
    with torch.no_grad():
        wt.mul_(2.0)
    with pytest.raises(RuntimeError):
        yt.sum().backward()


@pytest.mark.parametrize("look", [False, True])
def test_weight_data_replaced_after_forward_uses_the_forward_weight_as_torch(look):
    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, B))
        y = lib.nn.functional.linear(x, w, b)
        w.data = lib.tensor(W * 10.0)
        if look:
            _names(y.grad_fn)
        (y * y).sum().backward()
        return _grads(x, w, b)

    _same(run(tg), run(_torch()))


def test_retain_graph_and_a_second_backward():
    x, w, b = (tg.tensor(a, requires_grad=True) for a in (X, W, B))
    y = tg.nn.functional.linear(x, w, b).sum()
    y.backward(retain_graph=True)
    first = _grads(x, w, b)
    y.backward()
    _same(_grads(x, w, b), [2 * g for g in first])
    np.testing.assert_allclose(first[1], np.tile(X.sum(0), (3, 1)), rtol=1e-5)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_two_layers_leaf_hook_order_and_grad_inputs_as_torch():
    w2a = RNG.randn(2, 3).astype(np.float32)

    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, B))
        w2, b2 = lib.tensor(w2a, requires_grad=True), lib.zeros(2, requires_grad=True)
        order = []
        for name, p in (("w", w), ("b", b), ("w2", w2), ("b2", b2), ("x", x)):
            p.register_post_accumulate_grad_hook(lambda t, name=name: order.append(name))
        F = lib.nn.functional
        out = F.linear(F.relu(F.linear(x, w, b)), w2, b2)
        (out * out).sum().backward()
        got = lib.autograd.grad(F.linear(x, w, b).pow(2).sum(), (w, b))
        return order, _grads(x, w, b, w2, b2), [g.numpy() for g in got]

    got, want = run(tg), run(_torch())
    assert got[0] == want[0]
    _same(got[1], want[1])
    _same(got[2], want[2])


RNG_FIXED = (np.random.RandomState(3).randn(5, 4).astype(np.float32),
             np.random.RandomState(4).randn(4, 3).astype(np.float32))
_BIAS_OPS = {
    "linear": lambda lib, b, m1, m2: lib.nn.functional.linear(m1, m2.t(), b),
    "addmm": lambda lib, b, m1, m2: lib.addmm(b, m1, m2),
    "baddbmm": lambda lib, b, m1, m2: lib.baddbmm(b, m1.expand(2, 5, 4), m2.expand(2, 4, 3)),
    "addbmm": lambda lib, b, m1, m2: lib.addbmm(b, m1.expand(2, 5, 4), m2.expand(2, 4, 3)),
    "addmm_": lambda lib, b, m1, m2: b.expand(5, 3).clone().addmm_(m1, m2, beta=2.0, alpha=0.5),
}


@pytest.mark.parametrize("op", sorted(_BIAS_OPS))
@pytest.mark.parametrize("need", ["b", "bm1", "bm2"])
def test_second_backward_when_only_the_bias_needs_a_gradient_as_torch(op, need):
    # torch's node saves no tensor when only the bias needs a gradient, so a second backward
    # runs; once a matrix needs one, the saved matrices are freed and it raises
    def run(lib):
        b = lib.tensor(B, requires_grad=True)
        m1 = lib.tensor(RNG_FIXED[0], requires_grad="m1" in need)
        m2 = lib.tensor(RNG_FIXED[1], requires_grad="m2" in need)
        loss = _BIAS_OPS[op](lib, b, m1, m2).sum()
        loss.backward()
        try:
            loss.backward()
        except RuntimeError as e:
            return "raises", "second time" in str(e)
        return b.grad.numpy().copy(), None

    got, want = run(tg), run(_torch())
    if isinstance(want[0], str):
        assert got == want
    else:
        _same([got[0]], [want[0]])

