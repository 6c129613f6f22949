"""Gradients that are 0 where an op's mask says so: torch writes them as ``where(mask, grad, 0)``
(relu/threshold_backward, clamp_backward, maximum/minimum's masked_fill_), so a NaN or infinite
incoming gradient gives 0 there, the zero is +0, and a NaN input takes the branch torch's
comparison gives it. A product by the mask gave NaN, -0 and the wrong branch. Also sign(NaN) = 0,
and the nodes these backwards record under create_graph."""
import math

import numpy as np
import pytest

import tapegrad as tg

NAN, INF = float("nan"), float("inf")
XS = [-2.0, -0.5, 0.0, -0.0, 0.5, 2.0, NAN]
GS = [NAN, INF, -3.0, -1.0, -2.0, 5.0, 1.0]


def _torch():
    return pytest.importorskip("torch")


def _same(a, b):
    """Equal element by element, NaN equal to NaN, and the sign of each zero the same."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and all(
        (math.isnan(u) and math.isnan(v)) or (u == v and math.copysign(1, u) == math.copysign(1, v))
        for u, v in zip(a.ravel(), b.ravel()))


OPS = {
    "relu": lambda L, x: L.relu(x),
    "F.relu": lambda L, x: L.nn.functional.relu(x),
    "relu_": lambda L, x: L.relu_(x * 1),
    "F.relu(inplace)": lambda L, x: L.nn.functional.relu(x * 1, inplace=True),
    "nn.ReLU": lambda L, x: L.nn.ReLU()(x),
    "clamp": lambda L, x: L.clamp(x, -1, 1),
    "clamp(min)": lambda L, x: L.clamp(x, min=0),
    "clamp(max)": lambda L, x: x.clamp(max=0),
    "clamp(tensor bounds)": lambda L, x: L.clamp(x, L.full_like(x, -1.0), L.full_like(x, 1.0)),
    "maximum": lambda L, x: L.maximum(x, L.zeros_like(x)),
    "minimum": lambda L, x: L.minimum(x, L.zeros_like(x)),
    "abs": lambda L, x: x.abs(),
}


def _grad(L, op, dtype):
    x = L.tensor(XS, dtype=dtype, requires_grad=True)
    OPS[op](L, x).backward(L.tensor(GS, dtype=dtype))
    return x.grad.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", list(OPS))
def test_masked_gradient_with_nan_inf_and_negative_incoming_gradients_as_torch(op, dtype):
    torch = _torch()
    assert _same(_grad(tg, op, getattr(tg, dtype)), _grad(torch, op, getattr(torch, dtype)))


@pytest.mark.parametrize("op", ["relu", "clamp", "maximum"])
def test_masked_gradient_values_without_torch(op):
    # the values torch gives (checked above when it is installed): +0 where masked, whatever
    # the incoming gradient
    g = _grad(tg, op, tg.float64)
    want = {"relu": [0.0, 0.0, 0.0, 0.0, -2.0, 5.0, 1.0],
            "clamp": [0.0, INF, -3.0, -1.0, -2.0, 0.0, 0.0],
            "maximum": [0.0, 0.0, -1.5, -0.5, -2.0, 5.0, 1.0]}[op]
    assert _same(g, want)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_double_backward_masks_as_torch(dtype):
    torch = _torch()

    def run(L):
        dt = getattr(L, dtype)
        x = L.tensor([-1.0, 0.0, 2.0, NAN], dtype=dt, requires_grad=True)
        g = L.tensor([NAN, -1.0, 3.0, 2.0], dtype=dt, requires_grad=True)
        gx, = L.autograd.grad(L.relu(x), x, g, create_graph=True)
        gg, = L.autograd.grad((gx * L.tensor([1.0, 2.0, 3.0, 4.0], dtype=dt)).sum(), g)
        return gx.tolist(), gx.grad_fn.name(), gg.tolist()

    a, b = run(tg), run(torch)
    assert _same(a[0], b[0]) and a[1] == b[1] and _same(a[2], b[2])


def test_relu_backward_of_a_zero_dim_tensor_with_an_infinite_gradient():
    x = tg.tensor(-2.0, requires_grad=True)
    tg.relu(x).backward(tg.tensor(INF))
    assert _same(x.grad.tolist(), 0.0)


def test_relu_backward_of_a_transposed_gradient_keeps_the_values():
    # a gradient that is a transposed view of the engine's own array (the in-place path)
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((3, 4)))
    y = tg.relu(x)
    (y @ w).sum().backward()
    want = np.where(x.detach().numpy() > 0, np.ones((5, 4)) @ w.numpy().T, 0.0)
    np.testing.assert_array_equal(x.grad.numpy(), want)


@pytest.mark.parametrize("lo_above_hi", [False, True])
def test_clamp_with_tensor_bounds_gives_bound_gradients_as_torch(lo_above_hi):
    torch = _torch()

    def run(L):
        x = L.tensor([-2.0, 0.0, 2.0, 0.5], requires_grad=True)
        lo = L.tensor([1.0 if lo_above_hi else -1.0] * 4, requires_grad=True)
        hi = L.tensor([-1.0 if lo_above_hi else 1.0] * 4, requires_grad=True)
        L.clamp(x, lo, hi).backward(L.tensor([NAN, 2.0, -3.0, 4.0]))
        return [t.grad.tolist() for t in (x, lo, hi)]

    for a, b in zip(run(tg), run(torch)):
        assert _same(a, b)


@pytest.mark.parametrize("fn", ["maximum", "minimum"])
def test_maximum_minimum_ties_broadcasting_and_nan_as_torch(fn):
    torch = _torch()

    def run(L):
        a = L.tensor([[1.0, NAN, 3.0], [0.0, 2.0, -1.0]], requires_grad=True)
        b = L.tensor([1.0, 0.5, 3.0], requires_grad=True)
        getattr(L, fn)(a, b).backward(L.tensor([[2.0, 4.0, -6.0], [NAN, 1.0, 1.0]]))
        return a.grad.tolist(), b.grad.tolist()

    for u, v in zip(run(tg), run(torch)):
        assert _same(u, v)


def _chain(fn, depth=4):
    if fn is None or depth == 0:
        return None
    return (fn.name(), tuple(_chain(n, depth - 1) for n, _ in fn.next_functions
                             if n is not None and type(n).__name__ != "AccumulateGrad"))


@pytest.mark.parametrize("op", ["clamp", "clamp(min)", "clamp(tensor bounds)", "maximum",
                                "minimum", "abs", "relu"])
def test_masked_backward_records_torch_s_nodes_under_create_graph(op):
    torch = _torch()

    def run(L):
        x = L.tensor([-1.0, 0.2, 0.7, 0.0], requires_grad=True)
        g = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        gx, = L.autograd.grad(OPS[op](L, x), x, g, create_graph=True)
        return _chain(gx.grad_fn), gx.tolist()

    assert run(tg) == run(torch)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64"])
def test_sign_of_nan_and_zeros_as_torch(dtype):
    torch = _torch()
    vals = [NAN, -0.0, 0.0, -2.5, 3.0] if dtype != "int64" else [0, -2, 3]

    def run(L):
        return L.sign(L.tensor(vals, dtype=getattr(L, dtype))).tolist()

    assert _same(run(tg), run(torch))


def test_sign_of_nan_is_zero_without_torch():
    assert _same(tg.sign(tg.tensor([NAN, -0.0, -4.0])).tolist(), [0.0, 0.0, -1.0])


def _slice_set(L, x):
    y = x * 1
    y[1:3] = L.tensor([5.0, 6.0])
    return y


def _copy_into_view(L, x):
    y = x * 1
    y[:2].copy_(L.tensor([1.0, 2.0]))
    return y


def _fill_view(L, x):
    y = x * 1
    y[2:].fill_(0.0)
    return y


def _zero_view(L, x):
    y = x * 1
    y[::2].zero_()
    return y


def _mask_set(L, x):
    y = x * 1
    y[x > 0] = 0.0
    return y


OVERWRITES = {
    "slice assignment": _slice_set,
    "copy_ into a view": _copy_into_view,
    "fill_ of a view": _fill_view,
    "zero_ of a view": _zero_view,
    "mask assignment": _mask_set,
    "index_put": lambda L, x: x.index_put((L.tensor([0, 2]),), L.tensor([5.0, 6.0])),
}


def _overwrite_grad(L, op):
    x = L.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    OVERWRITES[op](L, x).backward(L.tensor([NAN, INF, -1.0, -2.0]))
    return x.grad.tolist()


@pytest.mark.parametrize("op", list(OVERWRITES))
def test_overwritten_elements_get_a_positive_zero_gradient_as_torch(op):
    torch = _torch()
    assert _same(_overwrite_grad(tg, op), _overwrite_grad(torch, op))


def test_overwritten_elements_get_a_positive_zero_gradient_without_torch():
    assert _same(_overwrite_grad(tg, "slice assignment"), [NAN, 0.0, 0.0, -2.0])
    assert _same(_overwrite_grad(tg, "fill_ of a view"), [NAN, INF, 0.0, 0.0])


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_of_negative_zero_is_negative_zero_as_torch(dtype):
    x = tg.tensor([-0.0, 0.0, -1.0, 2.0], dtype=getattr(tg, dtype))
    assert np.signbit(tg.relu(x).numpy()).tolist() == [True, False, False, False]
    assert repr(tg.relu(tg.tensor(-0.0))) == "tensor(-0.)"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_in_place_backward_masks_nan_and_inf_as_torch(dtype):
    # the gradient reaching relu here is the engine's own (a product's), so relu's backward
    # masks it in place: the path a gradient passed in by the user does not take
    def run(L):
        x = L.tensor([-1.0, 0.0, -2.0, 3.0, NAN], dtype=getattr(L, dtype), requires_grad=True)
        w = L.tensor([INF, -1.0, NAN, 2.0, 5.0], dtype=getattr(L, dtype))
        (L.relu(x) * w).sum().backward()
        return x.grad.tolist()

    assert _same(run(tg), [0.0, 0.0, 0.0, 2.0, 5.0])
    torch = pytest.importorskip("torch")
    assert _same(run(tg), run(torch))
