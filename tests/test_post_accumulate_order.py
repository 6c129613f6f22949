"""Post-accumulate-grad hooks and AccumulateGrad node hooks run right after their own leaf's
``.grad`` is written, before the next leaf's, as torch's AccumulateGrad runs them: a hook sees
the gradients of the leaves (and retained non-leaves) torch settled before its leaf, and not
those after. A failing hook still puts every ``.grad`` back (tapegrad's rule)."""
import pytest

import tapegrad as tg


def _what_each_hook_sees(lib):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    c = lib.ones(2, requires_grad=True)
    m = a * b
    m.retain_grad()
    y = (m * c).sum() + (b * 3).sum()
    log = []

    def state():
        return tuple(n for n, t in (("a", a), ("b", b), ("c", c), ("m", m)) if t.grad is not None)

    for n, t in (("a", a), ("b", b), ("c", c)):
        t.register_post_accumulate_grad_hook(lambda t, n=n: log.append(("post", n, state())))
    acc_b = (b * 1).grad_fn.next_functions[0][0]
    acc_b.register_hook(lambda gi, go: log.append(("node", "b", state())))
    y.backward()
    return log


def test_each_hook_sees_the_grads_written_before_its_leaf_only():
    # (torch settles c first, then m's retained gradient, then a, then b)
    assert _what_each_hook_sees(tg) == [("post", "c", ("c",)), ("post", "a", ("a", "c", "m")),
                                        ("post", "b", ("a", "b", "c", "m")),
                                        ("node", "b", ("a", "b", "c", "m"))]
    torch = pytest.importorskip("torch")
    assert _what_each_hook_sees(torch) == _what_each_hook_sees(tg)


def _values_seen_while_accumulating(lib):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    log = []
    a.register_post_accumulate_grad_hook(
        lambda t: log.append(("a sees b", None if b.grad is None else b.grad.tolist())))
    b.register_post_accumulate_grad_hook(
        lambda t: log.append(("b sees a", None if a.grad is None else a.grad.tolist())))
    for _ in range(2):
        ((a * 2).sum() + (b * 3).sum()).backward()
    return log


def test_a_later_leafs_grad_is_seen_before_this_backward_adds_to_it():
    assert _values_seen_while_accumulating(tg) == [
        ("b sees a", None), ("a sees b", [3.0, 3.0]), ("b sees a", [2.0, 2.0]),
        ("a sees b", [6.0, 6.0])]
    torch = pytest.importorskip("torch")
    assert _values_seen_while_accumulating(torch) == _values_seen_while_accumulating(tg)


def _registered_by_an_earlier_hook(lib):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    log = []

    def first(t):
        log.append("first")
        (b if t is a else a).register_post_accumulate_grad_hook(lambda t: log.append("late"))

    a.register_post_accumulate_grad_hook(first)
    b.register_post_accumulate_grad_hook(first)
    (a * b).sum().backward()
    return log


def test_a_hook_registered_by_an_earlier_leafs_hook_runs_in_the_same_backward():
    assert _registered_by_an_earlier_hook(tg) == ["first", "first", "late"]
    torch = pytest.importorskip("torch")
    assert _registered_by_an_earlier_hook(torch) == ["first", "first", "late"]


def test_a_failing_hook_on_a_later_leaf_puts_back_the_grads_written_before_it():
    a = tg.ones(2, requires_grad=True)
    b = tg.ones(2, requires_grad=True)
    a.grad = tg.full((2,), 5.0)
    seen = []
    b.register_post_accumulate_grad_hook(lambda t: seen.append(a.grad.tolist()))

    def fail(t):
        raise ValueError("hook failed")

    a.register_post_accumulate_grad_hook(fail)
    with pytest.raises(ValueError, match="hook failed"):
        ((a * 2).sum() + (b * 3).sum()).backward()
    assert seen == [[5.0, 5.0]]     # (b first: a not yet written)
    assert a.grad.tolist() == [5.0, 5.0] and b.grad is None


def _grad_mode_in_hooks(lib):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * a
    acc = y.grad_fn.next_functions[0][0]
    log = []
    a.register_post_accumulate_grad_hook(lambda t: log.append(("post", lib.is_grad_enabled(),
                                                                 (t * 2).requires_grad)))
    acc.register_hook(lambda gi, go: log.append(("node", lib.is_grad_enabled())))
    y.sum().backward()
    return log


def test_hooks_run_in_the_backwards_grad_mode():
    assert _grad_mode_in_hooks(tg) == [("post", False, False), ("node", False)]
    torch = pytest.importorskip("torch")
    assert _grad_mode_in_hooks(torch) == _grad_mode_in_hooks(tg)
    assert tg.is_grad_enabled()     # (the caller's mode is back)


def _step_in_backward(lib):
    # the optimizer-in-backward pattern of torch's tutorials: an in-place update of the leaf
    p = lib.tensor([1.0, 2.0], requires_grad=True)

    def step(t):
        t.add_(t.grad, alpha=-0.1)
        t.grad = None

    p.register_post_accumulate_grad_hook(step)
    (p * p).sum().backward()
    return p.detach().tolist(), p.grad


def test_an_optimizer_step_in_a_post_accumulate_hook_runs_as_in_torch():
    assert _step_in_backward(tg) == ([0.800000011920929, 1.600000023841858], None)
    torch = pytest.importorskip("torch")
    assert _step_in_backward(torch) == _step_in_backward(tg)


def test_a_create_graph_backward_runs_its_hooks_with_grad_mode_on():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    a.register_post_accumulate_grad_hook(lambda t: seen.append(tg.is_grad_enabled()))
    with pytest.warns(UserWarning, match="reference cycle"):
        (a * a).sum().backward(create_graph=True)
    assert seen == [True]


def test_an_accumulate_grad_node_hook_returning_a_value_raises_as_torch():
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a * 3
        y.grad_fn.next_functions[0][0].register_hook(lambda gi, go: (lib.zeros(2),))
        y.sum().backward()

    with pytest.raises(RuntimeError, match=r"incorrect number of values \(got 1, but expected 0"):
        run(tg)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=r"incorrect number of values \(got 1, but expected 0"):
        run(torch)


@pytest.mark.parametrize("kind", ["expanded", "inference"])
def test_a_grad_an_earlier_hook_set_is_checked_before_backward_adds_to_it(kind):
    def run(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)

        def set_b(t):
            if kind == "expanded":
                b.grad = lib.tensor(7.0).expand(2)
            else:
                with lib.inference_mode():
                    b.grad = lib.ones(2)

        a.register_post_accumulate_grad_hook(set_b)
        (a * b).sum().backward()

    match = "single memory location" if kind == "expanded" else "Inplace update to inference"
    with pytest.raises(RuntimeError, match=match):
        run(tg)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=match):
        run(torch)
