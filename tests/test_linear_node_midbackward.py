"""F.linear's lazily made TBackward0 node (ops.linalg._with_t) asked for while a backward runs
(a hook looking at next_functions), by two threads at once, or after the weight stopped
requiring grad: the gradients, the hooks that run and the graph are torch's."""
import itertools
import threading

import numpy as np
import pytest

import tapegrad as tg


def _run(lib, where, mode, extra):
    F = lib.nn.functional
    log = []
    x = lib.tensor(np.sin(np.arange(12.)).reshape(3, 4)).requires_grad_()
    w = lib.tensor(np.cos(np.arange(8.)).reshape(2, 4)).requires_grad_()
    b = lib.tensor(np.arange(2.)).requires_grad_()
    y = F.linear(x, w, b)
    z = F.linear(y.tanh(), lib.ones(4, 2, dtype=lib.float64), None)
    loss = (z * z).sum() + (w * 3).sum()

    def look(*a):
        fns = y.grad_fn.next_functions
        log.append(("look", fns[2][0].name()))
        if extra == "T_hooks":
            fns[2][0].register_hook(lambda gi, go: log.append(("T_hook", tuple(gi[0].shape))))
            fns[2][0].register_prehook(lambda go: log.append(("T_pre", tuple(go[0].shape))))
        if extra == "w_hook_mid":
            w.register_hook(lambda g: log.append(("w_hook_mid", round(g.sum().item(), 8))))
    if extra == "w_hook":
        w.register_hook(lambda g: log.append(("w_hook", round(g.sum().item(), 8))))
    {"y": lambda: y.register_hook(look), "addmm_pre": lambda: y.grad_fn.register_prehook(look),
     "mul_pre": lambda: z.grad_fn.register_prehook(look), "x": lambda: x.register_hook(look),
     "b": lambda: b.register_hook(look)}[where]()
    if mode == "backward":
        loss.backward()
        r = [w.grad, x.grad, b.grad]
    elif mode == "backward_inputs":
        loss.backward(inputs=[w])
        r = [w.grad, x.grad, b.grad]
    elif mode == "grad_w":
        r = list(lib.autograd.grad(loss, [w]))
    else:
        r = list(lib.autograd.grad(loss, [w, x, b], create_graph=True))
        r += list(lib.autograd.grad(sum(t.pow(2).sum() for t in r), [w, x]))
    return [None if t is None else round(t.sum().item(), 8) for t in r], log


@pytest.mark.parametrize("where,mode,extra", list(itertools.product(
    ["y", "addmm_pre", "mul_pre", "x", "b"], ["backward", "backward_inputs", "grad_w", "grad_cg"],
    ["none", "w_hook", "T_hooks", "w_hook_mid"])))
def test_next_functions_looked_at_mid_backward(where, mode, extra):
    torch = pytest.importorskip("torch")
    assert _run(tg, where, mode, extra) == _run(torch, where, mode, extra)


def test_square_weight_gradient_not_transposed_by_a_prehook_looking():
    x = tg.tensor(np.sin(np.arange(12.)).reshape(3, 4))
    w = tg.tensor(np.arange(16.).reshape(4, 4)).requires_grad_()
    b = tg.zeros(4, dtype=tg.float64, requires_grad=True)
    y = tg.nn.functional.linear(x, w, b)
    def look(g):
        assert y.grad_fn.next_functions[2][0].name() == "TBackward0"
    y.grad_fn.register_prehook(look)
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.broadcast_to(x.numpy().sum(0), (4, 4)))


def test_weight_that_stopped_requiring_grad_still_shows_its_t_node():
    x = tg.ones(3, 4)
    w = tg.ones(2, 4, requires_grad=True)
    y = tg.nn.functional.linear(x, w, tg.zeros(2))
    w.requires_grad_(False)
    (t, _), = [e for e in y.grad_fn.next_functions if e[0] is not None][-1:]
    assert type(t).__name__ == "TBackward0"
    assert t.next_functions[0][0].variable is w


def test_threads_see_one_t_node():
    import sys
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(50):
            y = tg.nn.functional.linear(tg.ones(3, 4), tg.ones(2, 4, requires_grad=True),
                                        tg.zeros(2, requires_grad=True))
            res = [None] * 4
            bar = threading.Barrier(4)

            def f(i, y=y, res=res, bar=bar):
                bar.wait()
                res[i] = y.grad_fn.next_functions[2][0]
            ts = [threading.Thread(target=f, args=(i,)) for i in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            assert all(r is y.grad_fn.next_functions[2][0] for r in res)
    finally:
        sys.setswitchinterval(old)


def test_backward_lets_go_of_the_forward_weight_array():
    import gc
    import weakref
    for look in (False, True):
        w = tg.ones(2, 4, requires_grad=True)
        y = tg.nn.functional.linear(tg.ones(3, 4, requires_grad=True), w, tg.zeros(2))
        if look:
            assert y.grad_fn.next_functions[2][0].name() == "TBackward0"
        y.sum().backward()
        ref = weakref.ref(w._data)
        w.data = tg.zeros(2, 4)
        gc.collect()
        assert ref() is None
        assert type(y.grad_fn.next_functions[2][0]).__name__ == "TBackward0"
        with pytest.raises(RuntimeError, match="second time"):
            y.sum().backward()


@pytest.mark.parametrize("w_grad", [True, False])
@pytest.mark.parametrize("modified", ["w", "x"])
def test_input_modified_in_place_is_named_as_torch_saved_it(w_grad, modified):
    x = tg.ones(3, 4, requires_grad=True)
    w = tg.ones(2, 4, requires_grad=w_grad)
    y = tg.nn.functional.linear(x, w, tg.zeros(2))
    with tg.no_grad():
        (w if modified == "w" else x).add_(1)
    shape = r"\[4, 2\]" if modified == "w" else r"\[3, 4\]"
    k = 1 if modified == "w" else 0
    if modified == "x" and not w_grad:
        # (x is saved only for the weight's gradient: nothing to refuse)
        y.sum().backward()
        return
    for _ in range(2):     # (a second try raises the same)
        with pytest.raises(RuntimeError,
                           match=rf"saved tensor {k} of AddmmBackward0 .*shape {shape}"):
            y.sum().backward()
    assert x.grad is None and w.grad is None


@pytest.mark.parametrize("look", ["never", "before", "between"])
def test_kept_graph_uses_the_forward_weight_after_data_replaced_as_torch(look):
    def run(lib):
        x = lib.tensor(np.arange(12.).reshape(3, 4), requires_grad=True)
        w = lib.tensor(np.ones((2, 4)), requires_grad=True)
        b = lib.zeros(2, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.linear(x, w, b)
        if look == "before":
            assert y.grad_fn.next_functions[2][0].name() == "TBackward0"
        (y * y).sum().backward(retain_graph=True)
        w.data = lib.tensor(np.full((2, 4), 5.0))
        if look == "between":
            assert y.grad_fn.next_functions[2][0].name() == "TBackward0"
        x.grad = w.grad = None
        (y * y).sum().backward()
        return [t.grad.numpy().tolist() for t in (x, w, b)]

    got = run(tg)
    # (y was computed from the ones: 2 * y @ w with the forward's weight)
    assert got[0] == (2 * np.tile(np.arange(12.).reshape(3, 4).sum(1, keepdims=True), (1, 4)) * 2
                      ).tolist()
    assert got == run(pytest.importorskip("torch"))
