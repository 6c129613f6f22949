"""The plain-backward shortcuts of tanh (its saved result read as an array, tanh_backward run
without apply) and of a product by a Python float (the packed constant read without unpacking)
keep every check and value of the general path: the in-place version error, the freed-graph
error, the graph recorded under create_graph, and torch's values."""
import numpy as np
import pytest

import tapegrad as tg


def _chain(lib, x):
    y = x
    for i in range(30):
        y = y * 1.0001 if i % 3 == 0 else (y + 0.001 if i % 3 == 1 else y.tanh())
    return y


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_chain_gradient_is_the_general_paths_and_torchs(dtype):
    data = np.linspace(-2, 2, 7)
    x = tg.tensor(data, dtype=getattr(tg, dtype), requires_grad=True)
    plain, = tg.autograd.grad(_chain(tg, x).sum(), x)
    # create_graph=True takes the general path (apply, saved_tensors): the same arithmetic
    general, = tg.autograd.grad(_chain(tg, x).sum(), x, create_graph=True)
    np.testing.assert_array_equal(plain.numpy(), general.detach().numpy())
    torch = pytest.importorskip("torch")
    xt = torch.tensor(data, dtype=getattr(torch, dtype), requires_grad=True)
    _chain(torch, xt).sum().backward()
    # (tanh itself differs from torch's in the last bit or two: NumPy's libm against SLEEF)
    tol = {"float16": 0, "float32": 2e-6, "float64": 1e-14}[dtype]
    np.testing.assert_allclose(plain.numpy(), xt.grad.numpy(), rtol=tol, atol=0)


def test_tanh_result_modified_in_place_still_raises():
    x = tg.tensor([0.5, 1.0], requires_grad=True)
    y = x.tanh()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*TanhBackward0"):
        y.sum().backward()
    assert x.grad is None


def test_second_backward_through_tanh_and_mul_still_raises():
    x = tg.tensor([0.5, 1.0], requires_grad=True)
    for make in (lambda: x.tanh(), lambda: x * 3.0):
        s = make().sum()
        s.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            s.backward()


def test_a_product_by_a_float_saves_no_tensor_yet_its_gradient_is_the_float():
    x = tg.tensor([0.5, -1.0], requires_grad=True)
    (x * -2.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-2.5, -2.5])


def test_create_graph_still_records_tanh_backward_as_torch():
    torch = pytest.importorskip("torch")
    names = []
    for lib in (tg, torch):
        x = lib.tensor([0.3, -0.7], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad((x * 2.0).tanh().sum(), x, create_graph=True)
        names.append([type(f).__name__ for f, _ in g.grad_fn.next_functions if f is not None])
        gg, = lib.autograd.grad(g.sum(), x)
        names.append(gg.numpy().tolist())
    assert names[0] == names[2] and names[0] == ["TanhBackwardBackward0"]
    np.testing.assert_allclose(names[1], names[3], rtol=1e-15)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_zero_d_chain_rounds_as_the_array_path(dtype):
    # 0-d products, sums, tanh and their gradients go through NumPy's scalars (a 0-d array costs
    # 3-6 times as much per ufunc call): each value and gradient is bit for bit that of a
    # one-element array, and still a 0-d tensor of the dtype
    for v in np.linspace(-3, 3, 61):
        out = []
        for shape in ((), (1,)):
            x = tg.tensor(np.full(shape, v), dtype=getattr(tg, dtype), requires_grad=True)
            y = _chain(tg, x)
            y.sum().backward()
            out.append((y.detach().numpy(), x.grad.numpy()))
        (y0, g0), (y1, g1) = out
        assert y0.shape == () and g0.shape == () and y0.dtype == g0.dtype == np.dtype(dtype)
        assert y0.tobytes() == y1.tobytes() and g0.tobytes() == g1.tobytes(), v


# A node whose one gradient arrives from one edge gets it handed on without the engine's gradient
# buffer; when a newer node is already queued it must still wait its turn (in its buffer). These
# graphs mix both, and compare the order nodes run in and every gradient with torch's.
def _branchy(lib, x, y, log):
    def tag(t, name):
        t.register_hook(lambda g: log.append(name))
        return t
    a = tag(x * 2.0, "a")               # older chain
    b = tag(y.tanh(), "b")              # newer, queued while a's chain is handed on
    c = tag(a + b, "c")
    d = tag(c * c, "d")                 # two edges into one node: summed in its buffer
    parts = tag(d, "d2").split(2)       # a multi-output node that gets one of two gradients
    e = tag(parts[1].exp(), "e")
    f = tag(a.sin() + e.sum(), "f")     # a, reached again after the split
    return f.sum()


def test_handed_on_gradients_keep_torchs_order_and_values():
    torch = pytest.importorskip("torch")
    xd, yd = np.linspace(-1, 1, 4), np.linspace(0.5, -0.5, 4)
    runs = []
    for lib in (tg, torch):
        x = lib.tensor(xd, requires_grad=True)
        y = lib.tensor(yd, requires_grad=True)
        log = []
        _branchy(lib, x, y, log).backward()
        runs.append((log, x.grad.numpy(), y.grad.numpy()))
    (log, gx, gy), (tlog, tgx, tgy) = runs
    assert log == tlog
    np.testing.assert_allclose(gx, tgx, rtol=1e-6)
    np.testing.assert_allclose(gy, tgy, rtol=1e-6)


def test_a_handed_on_gradient_the_user_holds_is_not_written():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    g = tg.tensor([1.0, 1.0])
    ((x * 3.0) * 2.0).backward(g)
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
