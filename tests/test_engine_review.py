"""Gradient bookkeeping at the end of a backward, checked against torch: retained gradients with
``inputs=`` and in ``autograd.grad``, what ``create_graph=True`` stores in ``.grad``, and a
gradient a hook kept."""
import math
import warnings

import numpy as np
import pytest

import tapegrad as tg


def _libs():
    torch = pytest.importorskip("torch")
    return (tg, torch)


def _retained(lib):
    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    s = (y * y).sum()
    out = []
    for wrt in (x, y):
        g, = lib.autograd.grad(s, wrt, retain_graph=True)
        out.append((g.tolist(), y.grad.tolist()))   # grad() fills a retained .grad too
        y.grad = None
    s.backward(inputs=[y], retain_graph=True)        # retained and an input: counted once
    out.append((y.grad.tolist(), x.grad))
    y.grad = None
    s.backward(inputs=[x], retain_graph=True)
    out.append((y.grad.tolist(), x.grad.tolist()))
    s.backward()
    out.append((y.grad.tolist(), x.grad.tolist()))
    return out


def test_retained_gradient_counted_once_and_filled_by_grad():
    ours = _retained(tg)
    assert ours[2] == ([2.0, -4.0, 8.0], None)
    assert ours[0] == ([4.0, -8.0, 16.0], [2.0, -4.0, 8.0])
    torch = pytest.importorskip("torch")
    assert ours == _retained(torch)


def _create_graph_grads(lib):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # torch's reference-cycle warning
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        for _ in range(2):
            (x * w).sum().backward(create_graph=True)
            out.append((x.grad.tolist(), type(x.grad.grad_fn).__name__, w.grad.tolist()))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (a + b).backward(lib.ones(2), create_graph=True)
        out.append((a.grad is b.grad, a.grad.grad_fn is None))
        with lib.no_grad():
            a.grad.add_(10)           # a copy: b.grad stays
        out.append((a.grad.tolist(), b.grad.tolist()))
        g = lib.tensor([5.0, 6.0])
        c = lib.tensor([1.0, 2.0], requires_grad=True)
        c.view(2).backward(g, create_graph=True)
        with lib.no_grad():
            c.grad.mul_(0)            # not the user's gradient
        out.append((c.grad is g, g.tolist()))
        d = lib.tensor([1.0, 2.0], requires_grad=True)
        (d + w).sum().backward(create_graph=True)
        with lib.no_grad():
            d.grad.zero_()            # writable, though the gradient was a broadcast one
        out.append(d.grad.tolist())
    return out


def test_create_graph_stores_a_copy_in_grad():
    ours = _create_graph_grads(tg)
    assert ours[0] == ([3.0, 4.0], "CopyBackwards", [1.0, 2.0])
    assert ours[1][1] == "AddBackward0"
    assert ours[2] == (False, True)
    torch = pytest.importorskip("torch")
    assert ours == _create_graph_grads(torch)


def _hook_keeps_gradient(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(seen.append)
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    return seen[0].tolist(), seen[1].tolist(), x.grad.tolist()


def test_gradient_kept_by_a_hook_is_not_changed_by_the_next_backward():
    ours = _hook_keeps_gradient(tg)
    assert ours == ([3.0, 3.0], [3.0, 3.0], [6.0, 6.0])
    torch = pytest.importorskip("torch")
    assert ours == _hook_keeps_gradient(torch)


def _non_differentiable_outputs(lib):
    seen = []

    class ThreeOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            i = x.argmax()
            b = x * 3
            ctx.mark_non_differentiable(i, b)
            return x * 2, i, b, 7

        @staticmethod
        def backward(ctx, ga, gi, gb, g7):
            seen.append((gi.tolist(), str(gi.dtype).split(".")[-1], gb.tolist(), g7))
            return ga * 2

    class Unmaterialized(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            i = x.argmax()
            ctx.mark_non_differentiable(i)
            return x * 2, i

        @staticmethod
        def backward(ctx, ga, gi):
            seen.append(gi)
            return ga * 2

    for fn in (ThreeOut, Unmaterialized):
        fn.apply(lib.tensor([1.0, 5.0, 3.0], requires_grad=True))[0].sum().backward()
    return seen


def test_custom_function_backward_gets_zeros_for_non_differentiable_outputs():
    # zeros of each tensor output's shape and dtype (None for a non-tensor output), unless
    # set_materialize_grads(False)
    ours = _non_differentiable_outputs(tg)
    assert ours == [(0, "int64", [0.0, 0.0, 0.0], None), None]
    torch = pytest.importorskip("torch")
    assert ours == _non_differentiable_outputs(torch)


def _gradient_arguments(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    out = []
    for g in (lib.tensor([3, 1]), lib.tensor([True, False]), lib.tensor([1.0, 2.0], dtype=lib.float64),
              [1.0, 1.0], (1.0, 1.0), 1.0):
        x.grad = None
        try:
            x.tanh().backward(g)
        except Exception as e:   # noqa: BLE001 (the type is what is compared)
            out.append(type(e).__name__)
            continue
        out.append(([round(v, 4) for v in x.grad.tolist()], str(x.grad.dtype).split(".")[-1]))
    out.append([round(v, 4) for v in lib.autograd.grad(x.tanh(), x, lib.tensor([3, 1]))[0].tolist()])
    try:
        lib.autograd.grad(x.tanh(), x, [1.0, 1.0])
    except TypeError:
        out.append("TypeError")
    return out


def test_gradient_argument_types():
    # an integer or bool gradient is cast to the output's dtype; a non-tensor is a TypeError
    ours = _gradient_arguments(tg)
    assert ours[3:6] == ["TypeError"] * 3 and ours[-1] == "TypeError"
    assert ours[0] == ([1.2599, 0.0707], "float32")
    torch = pytest.importorskip("torch")
    assert ours == _gradient_arguments(torch)


def _function_returning_its_input(lib):
    class Id(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        y = Id.apply(x)
    z = Id.apply(lib.tensor([1.0, 2.0]))
    w = Id.apply(x)
    y.add_(1)     # an alias: writes through to x and bumps the shared version
    return (y is x, y.requires_grad, z.requires_grad, w is x, w.requires_grad, x.tolist(),
            x._version == y._version == 1)


def test_custom_function_returning_its_input_gives_an_alias():
    ours = _function_returning_its_input(tg)
    assert ours == (False, False, False, False, True, [2.0, 3.0], True)
    torch = pytest.importorskip("torch")
    assert ours == _function_returning_its_input(torch)


def _custom_function_saving_nothing(lib):
    out = []
    for reads in (True, False):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g, reads=reads):
                if reads:
                    ctx.saved_tensors   # noqa: B018 (the access is what is tested)
                return g * 2

        y = Double.apply(lib.tensor([1.0, 2.0], requires_grad=True))
        y.sum().backward()
        for again in (lambda: y.sum().backward(), lambda: y.grad_fn.saved_tensors):
            try:
                again()
                out.append("ok")
            except RuntimeError:
                out.append("RuntimeError")
    return out


def test_custom_function_saving_nothing_is_freed_too():
    # a second backward fails only where backward reads saved_tensors; reading them after the
    # free fails either way
    ours = _custom_function_saving_nothing(tg)
    assert ours == ["RuntimeError", "RuntimeError", "ok", "RuntimeError"]
    torch = pytest.importorskip("torch")
    assert ours == _custom_function_saving_nothing(torch)


def _create_graph_warning_and_inference_save(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    out = []
    for mode in ("on", "no_grad", "inference"):
        y = (x * x).sum()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ctx = {"on": lib.enable_grad(), "no_grad": lib.no_grad(),
                   "inference": lib.inference_mode()}[mode]
            with ctx:
                y.backward(create_graph=True)
            out.append((mode, sum("reference cycle" in str(m.message) for m in w)))
        x.grad = None
    with lib.inference_mode():
        a = lib.ones(2)
    try:
        (x * a).sum().backward()
    except RuntimeError as e:
        out.append(str(e)[:47])
    return out


def test_create_graph_warning_only_with_grad_mode_on_and_inference_save_message():
    ours = _create_graph_warning_and_inference_save(tg)
    assert ours == [("on", 1), ("no_grad", 0), ("inference", 0),
                    "Inference tensors cannot be saved for backward."]
    torch = pytest.importorskip("torch")
    # (torch warns once per process, so only the cases where it must stay silent compare)
    assert ours[1:] == _create_graph_warning_and_inference_save(torch)[1:]


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "log1p"])
def test_float16_values_and_gradients_match_torch_bitwise(name):
    # torch computes sigmoid, log1p and tanh's backward for half in float32 and rounds once, and
    # sigmoid's backward in half in the order grad * (1 - y) * y
    torch = pytest.importorskip("torch")
    import numpy as np
    x = np.linspace(-8, 8, 2001).astype(np.float16)
    if name == "log1p":
        x = np.abs(x)
    w = np.linspace(-2, 2, 2001).astype(np.float16)
    res = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib, name)(t)
        (y * lib.tensor(w)).sum().backward()
        res.append((y.detach().numpy(), t.grad.numpy()))
    assert np.array_equal(res[0][0], res[1][0]) and np.array_equal(res[0][1], res[1][1])


@pytest.mark.xfail(strict=True, reason="open: torch's rsqrt kernel rounds the half square root "
                   "first in its element-at-a-time loop (the last elements of a contiguous run, "
                   "or a strided one): 5 of 2001 values differ by an ulp; see "
                   "test_float16_numerics.py")
def test_float16_rsqrt_matches_torch_bitwise():
    torch = pytest.importorskip("torch")
    import numpy as np
    x = np.linspace(0.01, 8, 2001).astype(np.float16)
    res = []
    for lib in (tg, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.rsqrt(t)
        y.sum().backward()
        res.append((y.detach().numpy(), t.grad.numpy()))
    assert np.array_equal(res[0][0], res[1][0]) and np.array_equal(res[0][1], res[1][1])


def _index_modified_before_backward(lib, op):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    i = lib.tensor([1, 0])
    y = {"index_select": lambda: x.index_select(0, i), "getitem": lambda: x[i],
         "gather": lambda: x.gather(0, i.reshape(1, 2))}[op]()
    i.mul_(0)
    try:
        (y * lib.tensor(2.0)).sum().backward()
    except RuntimeError as e:
        return "RuntimeError: " + str(e)[:40]
    return x.grad.tolist()


@pytest.mark.parametrize("op", ["index_select", "getitem", "gather"])
def test_index_modified_in_place_before_backward_raises_as_torch(op):
    torch = pytest.importorskip("torch")
    assert _index_modified_before_backward(tg, op) == _index_modified_before_backward(torch, op)


def _shared_multiplier_case(lib):
    """Nodes that multiply by the same Python float share one saved entry: in-place products on
    copies and a repeated backward still give torch's gradients, a graph freed by one backward
    raises at the next, and a -0.0 multiplier keeps its sign in the gradient (not shared with
    0.0)."""
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    a = x * 2.5
    b = (x * 2.5).mul_(2.5)
    c = a.clone().mul_(2.5) * 2.5
    s = (a + b + c).sum()
    s.backward(retain_graph=True)
    first = x.grad.tolist()
    s.backward()
    second = x.grad.tolist()
    try:
        s.backward()
        freed = None
    except RuntimeError as e:
        freed = type(e).__name__
    signs = []
    for m in (0.0, -0.0, 0.0):
        w = lib.tensor([1.0], requires_grad=True)
        (w * m).sum().backward()
        signs.append(math.copysign(1.0, w.grad.item()))
    return first, second, freed, signs


def test_a_shared_multiplier_entry_gives_torch_gradients():
    got = _shared_multiplier_case(tg)
    # d/dx: 2.5 + 6.25 + 15.625 = 24.375
    assert got[0] == [24.375, 24.375, 24.375] and got[1] == [48.75, 48.75, 48.75]
    assert got[2] == "RuntimeError" and got[3] == [1.0, -1.0, 1.0]
    torch = pytest.importorskip("torch")
    assert got == _shared_multiplier_case(torch)


class _Half(float):
    pass


def _operand_case(lib, grad):
    """+ and * with operands that are not tensors or plain numbers, recorded and not."""
    x = lib.tensor([1.0, -2.0], requires_grad=True)
    out = []
    ctx = lib.enable_grad() if grad else lib.no_grad()
    with ctx:
        for other in (np.float32(2.5), np.int64(3), True, _Half(0.5)):
            for r in (x * other, other * x, x + other, other + x):
                out.append((r.tolist(), str(r.dtype), r.requires_grad))
        for bad in (None, object(), "s"):
            try:
                x + bad
                out.append("no error")
            except TypeError:
                out.append("TypeError")
    return out


@pytest.mark.parametrize("grad", [True, False])
def test_dunder_operands_as_torch(grad):
    got = _operand_case(tg, grad)
    assert got[-3:] == ["TypeError"] * 3
    assert got[0] == ([2.5, -5.0], "tapegrad.float32", grad)
    torch = pytest.importorskip("torch")
    want = _operand_case(torch, grad)
    assert [g if isinstance(g, str) else (g[0], g[1].replace("tapegrad", "torch"), g[2])
            for g in got] == want
