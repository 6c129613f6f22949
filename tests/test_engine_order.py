"""The backward walk's order, with and without counting each node's inputs first.

Without hooks on leaves (and without ``inputs=``), the engine runs nodes newest first and settles
the leaves after the walk; with them it counts dependencies so a leaf's node runs as soon as its
last gradient came. Both must give torch's order wherever a program can see it: hook calls,
which leaf is accumulated first (post-accumulate hooks, AccumulateGrad hooks), the gradients.
"""
import functools
import gc
import random

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import engine
from tapegrad.autograd.graph import EXACT_REFCOUNTS, leaf_prehooked


def _program(rng):
    """A random program over a few leaves: ``run(lib, log, hook_leaves)`` builds and runs it and
    returns the leaves, logging every hook call in ``log``."""
    n_leaves = rng.randint(1, 4)
    values = [[rng.uniform(-1, 1) for _ in range(3)] for _ in range(n_leaves)]
    steps = []
    for _ in range(rng.randint(1, 8)):
        kind = rng.choice(["mul", "add", "tanh", "exp", "scale", "split"])
        steps.append((kind, rng.random(), rng.random(), rng.random() < 0.3))
    roots = rng.sample(range(n_leaves + len(steps)), rng.randint(1, 2))
    leaf_root = rng.random() < 0.2

    def run(lib, log, hook_leaves):
        leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
        for i, t in enumerate(leaves):
            t.register_post_accumulate_grad_hook(lambda t, i=i: log.append(("post", i)))
            if hook_leaves:
                t.register_hook(lambda g, i=i: log.append(("leaf", i)))
        pool = list(leaves)
        for j, (kind, p, q, hooked) in enumerate(steps):
            a = pool[int(p * len(pool))]
            b = pool[int(q * len(pool))]
            if kind == "mul":
                r = a * b
            elif kind == "add":
                r = a + b
            elif kind == "tanh":
                r = a.tanh()
            elif kind == "exp":
                r = a.exp()
            elif kind == "scale":
                r = a * 0.5
            else:
                head, tail = a.split(2)    # (a node with two outputs)
                r = lib.cat([tail * b[:1], head])
            if hooked:
                r.register_hook(lambda g, j=j: log.append(("node", j)))
            pool.append(r)
        outs = [pool[k % len(pool)].sum() for k in roots]
        if leaf_root:
            outs.append(leaves[0])
        grads = [None if o.dim() == 0 else lib.ones_like(o) for o in outs]
        lib.autograd.backward(outs, grads)
        return leaves

    return run


def _outcome(lib, run, hook_leaves):
    log = []
    leaves = run(lib, log, hook_leaves)
    return log, [None if t.grad is None else t.grad.detach().numpy().tolist() for t in leaves]


@pytest.mark.parametrize("seed", range(150))
def test_random_programs_order_leaves_as_torch(seed):
    run = _program(random.Random(seed))
    plain = _outcome(tg, run, False)
    counted = _outcome(tg, run, True)
    # the same program, walked with counts (a leaf has a hook) and without: the same order of
    # everything the plain run logs, and the same gradients
    assert [e for e in counted[0] if e[0] != "leaf"] == plain[0]
    np.testing.assert_equal(counted[1], plain[1])
    torch = pytest.importorskip("torch")
    for hook_leaves, ours in ((False, plain), (True, counted)):
        theirs = _outcome(torch, run, hook_leaves)
        # (post-accumulate hooks run once every .grad is written, after the walk: tapegrad's
        # promise that a failing backward writes no .grad; torch runs them during it)
        for kinds in (("leaf", "node"), ("post",)):
            assert [e for e in ours[0] if e[0] in kinds] == \
                [e for e in theirs[0] if e[0] in kinds]
        for a, b in zip(ours[1], theirs[1]):
            if b is None:
                assert a is None
            else:
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def _without_counts(monkeypatch):
    def refuse(*args):
        raise AssertionError("the walk counted dependencies")
    monkeypatch.setattr(engine, "_collect", refuse)


def test_a_backward_without_leaf_hooks_counts_nothing(monkeypatch):
    gc.collect()
    assert not leaf_prehooked
    _without_counts(monkeypatch)
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    (y.tanh() * y + x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * (1 - np.tanh([3.0, 6.0]) ** 2) * [3, 6]
                               + 3 * np.tanh([3.0, 6.0]) + 1)


def test_a_leaf_hook_counts_only_while_its_leaf_lives(monkeypatch):
    x = tg.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: None)
    assert leaf_prehooked
    calls = []
    real = engine._collect
    monkeypatch.setattr(engine, "_collect", lambda *a: calls.append(1) or real(*a))
    (x * 2).sum().backward()
    assert calls == [1]
    del x
    gc.collect()
    assert not leaf_prehooked
    z = tg.tensor([1.0], requires_grad=True)
    (z * 2).sum().backward()
    assert calls == [1]


def test_an_accumulate_grad_prehook_counts_too(monkeypatch):
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    seen = []
    y.grad_fn.next_functions[0][0].register_prehook(lambda g: seen.append(g[0].tolist()))
    assert leaf_prehooked
    y.sum().backward()
    assert seen == [[2.0, 2.0]]
    del x, y
    gc.collect()
    assert not leaf_prehooked


def test_a_removed_leaf_hook_stops_the_counting(monkeypatch):
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    seen = []
    h1 = x.register_hook(lambda g: seen.append(g.tolist()))
    h2 = y.grad_fn.next_functions[1][0].register_prehook(lambda g: seen.append(g[0].tolist()))
    calls = []
    real = engine._collect
    monkeypatch.setattr(engine, "_collect", lambda *a: calls.append(1) or real(*a))
    y.sum().backward(retain_graph=True)
    assert calls == [1] and seen == [[3.0, 4.0], [1.0, 2.0]]
    h1.remove()
    y.sum().backward(retain_graph=True)      # (w's prehook still runs inside the walk)
    assert calls == [1, 1] and seen[2:] == [[1.0, 2.0]]
    h2.remove()
    _without_counts(monkeypatch)
    y.sum().backward()
    assert not leaf_prehooked and len(seen) == 3
    np.testing.assert_array_equal(x.grad.numpy(), [9.0, 12.0])
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 6.0])


def _stale_view_into_function(lib, log):
    """A custom Function given a view whose base was written since: the view's node is made
    again while the Function's edges are made, and must still run once, after the Function."""
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            return v * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 1
    v = b[:2]
    b.mul_(3)
    w = Twice.apply(v)
    v.grad_fn.register_hook(lambda gi, go: log.append("view"))
    u = v * 5
    (w.sum() + u.sum()).backward()
    return a.grad.tolist()


def test_a_function_given_a_stale_view_runs_the_view_node_once():
    log = []
    grad = _stale_view_into_function(tg, log)
    assert log == ["view"]
    assert grad == [21.0, 21.0, 0.0]
    torch = pytest.importorskip("torch")
    theirs = []
    assert _stale_view_into_function(torch, theirs) == grad
    assert theirs == log


def _added_mid_walk_on_a_settled_leaf(lib, on_node):
    """A hook on leaf x (a tensor hook, or a prehook on its AccumulateGrad: ``on_node``) that
    another hook adds after torch settled x."""
    x = lib.ones(2, requires_grad=True)
    q = lib.ones(2, requires_grad=True)
    a = q * 3
    b = x * 2     # newer: x's AccumulateGrad runs right after b's node, before a's
    acc = b.grad_fn.next_functions[0][0]
    log = []

    def on_a(g):
        log.append("a")
        if on_node:
            acc.register_prehook(lambda go: (log.append("x"), (go[0] * 100,))[1])
        else:
            x.register_hook(lambda g: log.append("x") or g * 100)
    a.register_hook(on_a)
    (a.sum() + b.sum()).backward()
    return log, x.grad.tolist()


def _hook_added_mid_walk_on_a_leaf_still_to_settle(lib):
    x = lib.ones(2, requires_grad=True)
    q = lib.ones(2, requires_grad=True)
    a_old = q * 3
    a_new = x * 2
    log = []
    a_old.register_hook(lambda g: log.append("a_old"))
    loss = a_old.sum() + a_new.sum()

    def on_loss(g):
        log.append("loss")
        x.register_hook(lambda g: log.append("x") or g * 10)
    loss.register_hook(on_loss)
    loss.backward()
    return log, x.grad.tolist()


@pytest.mark.parametrize("case, expected", [
    (functools.partial(_added_mid_walk_on_a_settled_leaf, on_node=False), (["a"], [2.0, 2.0])),
    (functools.partial(_added_mid_walk_on_a_settled_leaf, on_node=True), (["a"], [2.0, 2.0])),
    (_hook_added_mid_walk_on_a_leaf_still_to_settle, (["loss", "x", "a_old"], [20.0, 20.0])),
])
def test_a_leaf_hook_added_by_a_hook_runs_where_torch_runs_it(case, expected):
    # (torch had settled the leaf already in the first two: the new hook is not called)
    gc.collect()
    assert not leaf_prehooked     # (the walk starts without counts)
    assert case(tg) == expected
    torch = pytest.importorskip("torch")
    assert case(torch) == expected


def _shared_gradient_versions(lib):
    a = lib.ones(3, requires_grad=True)
    b = lib.ones(3, requires_grad=True)
    ((a + b) * 2).sum().backward()
    return a.grad._version, b.grad._version


@pytest.mark.skipif(not EXACT_REFCOUNTS, reason="gradients are always copied on this Python")
def test_two_leaves_given_one_gradient_the_last_takes_it():
    # torch: the first copies it (a write: version 1), the last takes the buffer as it is
    assert _shared_gradient_versions(tg) == (1, 0)
    torch = pytest.importorskip("torch")
    assert _shared_gradient_versions(torch) == (1, 0)


def _leaf_twice_among_roots(lib, tensor_hooks):
    x = lib.ones(2, requires_grad=True)
    w = lib.ones(2, requires_grad=True)
    log = []
    for name, t in (("x", x), ("w", w)):
        if tensor_hooks:
            t.register_hook(lambda g, name=name: log.append(name))
        else:
            t.register_post_accumulate_grad_hook(lambda t, name=name: log.append(name))
    lib.autograd.backward([x, w, x], [lib.ones(2)] * 3)
    return log, x.grad.tolist()


@pytest.mark.parametrize("tensor_hooks", [False, True])
def test_a_leaf_twice_among_the_roots_is_settled_at_its_last_place(tensor_hooks):
    assert _leaf_twice_among_roots(tg, tensor_hooks) == (["w", "x"], [2.0, 2.0])
    torch = pytest.importorskip("torch")
    assert _leaf_twice_among_roots(torch, tensor_hooks) == (["w", "x"], [2.0, 2.0])


def _retained_and_leaf_share_a_gradient(lib):
    x = lib.ones(2, requires_grad=True)
    y = x.clone()       # CloneBackward0 hands x the gradient y got
    y.retain_grad()
    (y * 2).sum().backward()
    return x.grad._version, y.grad._version


def _leaf_settled_before_a_retained_holder(lib):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    m = b * 1
    m.retain_grad()

    class Both(lib.autograd.Function):
        @staticmethod
        def forward(ctx, u, v):
            return u + v

        @staticmethod
        def backward(ctx, g):
            h = g * 2
            return h, h     # (a settles while m's node still holds h: a copies it)
    Both.apply(a, m).sum().backward()
    return a.grad._version, b.grad._version, m.grad._version


@pytest.mark.skipif(not EXACT_REFCOUNTS, reason="gradients are always copied on this Python")
@pytest.mark.parametrize("case, expected", [(_retained_and_leaf_share_a_gradient, (0, 0)),
                                            (_leaf_settled_before_a_retained_holder, (1, 0, 0))])
def test_a_retained_gradient_is_a_clone_and_the_last_holder_takes_the_buffer(case, expected):
    # (versions: a copy made by a write is at 1, a clone and a buffer taken as is at 0)
    assert case(tg) == expected
    torch = pytest.importorskip("torch")
    assert case(torch) == expected


def _leaf_with_an_accumulate_grad_hook(lib):
    x = lib.ones(2, requires_grad=True)
    b = x * 2
    b.grad_fn.next_functions[0][0].register_hook(lambda grad_inputs, grad_outputs: None)
    b.sum().backward()
    return x.grad._version


@pytest.mark.skipif(not EXACT_REFCOUNTS, reason="gradients are always copied on this Python")
def test_a_hook_on_accumulate_grad_does_not_make_the_gradient_a_copy():
    assert _leaf_with_an_accumulate_grad_hook(tg) == 0
    torch = pytest.importorskip("torch")
    assert _leaf_with_an_accumulate_grad_hook(torch) == 0
