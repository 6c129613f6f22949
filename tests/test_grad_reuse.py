"""Backward kernels that reuse buffers: a pointwise backward may write its result into the incoming
gradient only when nothing but the engine can see that gradient; linear, mm and log_softmax
gradients keep their values and memory layouts; SGD's blocked update matches the plain one."""
import weakref

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd import Function, gradcheck, gradgradcheck
from tapegrad.autograd.graph import EXACT_REFCOUNTS

# the in-place fast paths exist only where reference counts are calibrated (CPython 3.11-3.13)
FAST_PATHS = pytest.mark.skipif(not EXACT_REFCOUNTS, reason="no refcount fast paths on this Python")

DERIVATIVE = {"exp": np.exp, "log": lambda y: 1 / y, "relu": lambda y: (y > 0) * 1.0}


def _leaves(name):
    rng = np.random.default_rng(0)
    low = 0.1 if name == "log" else -1.0
    return (tg.tensor(rng.uniform(low, 1, 6), requires_grad=True),
            tg.tensor(rng.uniform(0.5, 2, 6), requires_grad=True))


class _Probe(Function):
    """Identity on ``a``; its backward passes a's gradient on in a fresh array (remembered by a
    weak reference, which adds no reference count) and gives ``b`` a gradient last, so the engine
    keeps no other reference to the one it passes on."""
    seen = []

    @staticmethod
    def forward(ctx, a, b):
        return a * 1.0

    @staticmethod
    def backward(ctx, g):
        out = tg.tensor(g.numpy() * 1.0)
        _Probe.seen.append(weakref.ref(out._data))
        return out, g * 0.0


@FAST_PATHS
@pytest.mark.parametrize("name", sorted(DERIVATIVE))
def test_plain_backward_writes_into_the_engines_gradient(name):
    # a gradient only the engine holds is reused: the leaf ends up with the probe's very array
    x, w = _leaves(name)
    _Probe.seen.clear()
    _Probe.apply(getattr(x, name)(), w).sum().backward()
    assert _Probe.seen[0]() is x.grad._data
    np.testing.assert_allclose(x.grad._data, DERIVATIVE[name](x._data), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(DERIVATIVE))
def test_gradients_held_elsewhere_are_not_written(name):
    x, w = _leaves(name)
    three = np.full(6, 3.0)

    def check(grad_of_x):
        y = x._data * w._data
        np.testing.assert_allclose(grad_of_x, DERIVATIVE[name](y) * 3 * w._data, rtol=1e-12)

    # retained: the gradient arriving at the op's output is also that output's .grad
    u = getattr(x * w, name)()
    u.retain_grad()
    (u * 3).sum().backward()
    np.testing.assert_array_equal(u.grad._data, three)
    check(x.grad._data)
    # kept by a tensor hook
    x.grad = None
    kept = []
    u = getattr(x * w, name)()
    u.register_hook(kept.append)
    (u * 3).sum().backward()
    np.testing.assert_array_equal(kept[0]._data, three)
    check(x.grad._data)
    # seen by a hook on the node after its backward ran (torch's grad_outputs)
    x.grad = None
    outs = []
    u = getattr(x * w, name)()
    u.grad_fn.register_hook(lambda grad_inputs, grad_outputs: outs.append(grad_outputs[0]))
    (u * 3).sum().backward()
    np.testing.assert_array_equal(outs[0]._data, three)
    check(x.grad._data)
    # captured by autograd.grad
    u = getattr(x * w, name)()
    gu, gx = tg.autograd.grad((u * 3).sum(), [u, x])
    np.testing.assert_array_equal(gu._data, three)
    check(gx._data)
    # the user's own gradient
    x.grad = None
    g = tg.tensor(three)
    getattr(x * w, name)().backward(g)
    np.testing.assert_array_equal(g._data, three)
    check(x.grad._data)


def test_one_gradient_fanned_out_to_two_ops():
    x, w = _leaves("exp")
    a = x * w
    ((a.exp() + a.relu()) * 3).sum().backward()
    y = a._data
    np.testing.assert_allclose(x.grad._data, (np.exp(y) + (y > 0)) * 3 * w._data, rtol=1e-12)


@pytest.mark.parametrize("name", ["exp", "log", "relu", "tanh", "sigmoid"])
def test_second_order_unchanged(name):
    x = tg.tensor(np.linspace(0.2, 1.5, 5), requires_grad=True)
    fn = getattr(tg, name)
    assert gradcheck(lambda t: fn(t * 1.5).sum(), (x,))
    assert gradgradcheck(lambda t: fn(t * 1.5), (x,))


@pytest.mark.parametrize("x_t,w_t", [(False, False), (False, True), (True, False), (True, True)])
def test_linear_gradients_and_layouts(x_t, w_t):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)

    def leaf(shape, transposed):
        a = rng.standard_normal(shape[::-1] if transposed else shape)
        return tg.from_numpy(a.T if transposed else a).requires_grad_()

    x, w, b = leaf((3, 4), x_t), leaf((5, 4), w_t), leaf((5,), False)
    assert gradcheck(F.linear, (x, w, b)) and gradgradcheck(F.linear, (x, w, b))
    y = F.linear(x, w, b)
    assert type(y.grad_fn).__name__ == "AddmmBackward0"
    g = rng.standard_normal((3, 5))
    y.backward(tg.tensor(g))
    tx, tw, tb = (torch.tensor(np.array(t._data), requires_grad=True) for t in (x, w, b))
    torch.nn.functional.linear(tx, tw, tb).backward(torch.tensor(g))
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(ours.grad._data, theirs.grad.numpy(), rtol=1e-12)
    # a transposed input gets a transposed gradient (stored without a copy once transposed back)
    assert w.grad._data.flags.c_contiguous != w_t and x.grad._data.flags.c_contiguous != x_t


def test_mm_double_backward_with_transposed_operands():
    rng = np.random.default_rng(2)
    a = tg.from_numpy(rng.standard_normal((4, 3)).T).requires_grad_()
    c = tg.from_numpy(rng.standard_normal((2, 4)).T).requires_grad_()
    bias = tg.tensor(rng.standard_normal(2), requires_grad=True)
    assert gradgradcheck(lambda a, c: a @ c, (a, c))
    assert gradgradcheck(tg.addmm, (bias, a, c))


@pytest.mark.parametrize("shape,dim", [((300, 10), 1), ((300, 10), 0), ((4, 10), 1),
                                       ((40, 3, 8), 2), ((40, 3, 8), 1)])
def test_softmax_short_axis_matches_torch(shape, dim):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32) * 30
    for name in ("softmax", "log_softmax"):
        ours = getattr(F, name)(tg.tensor(x), dim)._data
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), dim).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-6)


def test_cross_entropy_fast_path_matches_weighted_path():
    rng = np.random.default_rng(4)
    z = rng.standard_normal((64, 10))
    y = tg.tensor(rng.integers(0, 10, 64))
    a, b = tg.tensor(z, requires_grad=True), tg.tensor(z, requires_grad=True)
    F.cross_entropy(a, y).backward()
    F.cross_entropy(b, y, weight=tg.ones(10, dtype=tg.float64)).backward()
    np.testing.assert_allclose(a.grad._data, b.grad._data, rtol=1e-12)
    y5 = tg.tensor(y._data[:5])
    assert gradgradcheck(lambda t: F.cross_entropy(t, y5), (tg.tensor(z[:5], requires_grad=True),))


@pytest.mark.parametrize("shape", [(300, 500), (7,), (500, 300)])
def test_sgd_update_is_rounded_once_in_both_gradient_layouts(shape):
    rng = np.random.default_rng(5)
    p0 = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    p = tg.tensor(p0, requires_grad=True)
    if len(shape) == 2 and shape[0] > shape[1]:
        g = np.asfortranarray(g)                 # a gradient in the other layout
    p.grad = tg.from_numpy(g)
    tg.optim.SGD([p], lr=0.01).step()
    # rounded once, as torch's fused add (float64 holds the float32 product exactly)
    want = (p0.astype(np.float64) + np.float64(np.float32(-0.01)) * g.astype(np.float64))
    np.testing.assert_array_equal(p._data, want.astype(np.float32))
    np.testing.assert_array_equal(p.grad._data, g)   # the gradient itself is left alone


@FAST_PATHS
def test_mul_backward_reuses_only_an_unshared_gradient():
    x, w = _leaves("exp")
    c = tg.tensor(np.linspace(1.0, 2.0, 6))
    _Probe.seen.clear()
    _Probe.apply(x * c, w).sum().backward()
    assert _Probe.seen[0]() is x.grad._data           # written into the probe's array
    np.testing.assert_allclose(x.grad._data, c._data, rtol=1e-12)
    # x * x: both gradients come from one incoming gradient, computed before it is reused
    x.grad = None
    _Probe.apply(x * x, w).sum().backward()
    np.testing.assert_allclose(x.grad._data, 2 * x._data, rtol=1e-12)
    # a retained gradient is never written through
    x.grad = None
    u = x * c
    u.retain_grad()
    v = u * c
    v.retain_grad()
    (v * 3.0).sum().backward()
    np.testing.assert_allclose(v.grad._data, np.full(6, 3.0))
    np.testing.assert_allclose(u.grad._data, 3.0 * c._data)
    np.testing.assert_allclose(x.grad._data, 3.0 * c._data ** 2)


@FAST_PATHS
def test_mul_by_number_reuses_only_an_unshared_gradient():
    x, w = _leaves("exp")
    _Probe.seen.clear()
    _Probe.apply(x * 2.5, w).sum().backward()
    assert _Probe.seen[0]() is x.grad._data           # written into the probe's array
    np.testing.assert_array_equal(x.grad._data, np.full(6, 2.5))
    three = np.full(6, 3.0)
    # retained, kept by a hook, captured by autograd.grad, or the user's own: never written
    x.grad = None
    u = x * 2.5
    u.retain_grad()
    (u * 3.0).sum().backward()
    np.testing.assert_array_equal(u.grad._data, three)
    np.testing.assert_array_equal(x.grad._data, np.full(6, 7.5))
    x.grad = None
    kept = []
    u = x * 2.5
    u.register_hook(kept.append)
    (u * 3.0).sum().backward()
    np.testing.assert_array_equal(kept[0]._data, three)
    u = x * 2.5
    gu, gx = tg.autograd.grad((u * 3.0).sum(), [u, x])
    np.testing.assert_array_equal(gu._data, three)
    np.testing.assert_array_equal(gx._data, np.full(6, 7.5))
    g = tg.tensor(three)
    (x * 2.5).backward(g)
    np.testing.assert_array_equal(g._data, three)


@pytest.mark.parametrize("number", [1.0001, 3, True, 1e-8])
def test_mul_by_number_gradient_dtype_and_value_match_torch(number):
    torch = pytest.importorskip("torch")
    # x's gradient is (g * c) * number, written into the buffer of g * c (elementwise products
    # in float32, so equal to the last bit)
    v = np.linspace(-1, 1, 5).astype(np.float32)
    c = np.linspace(0.3, 3.1, 5).astype(np.float32)
    x = tg.tensor(v, requires_grad=True)
    tx = torch.tensor(v, requires_grad=True)
    (x * number * tg.tensor(c)).sum().backward()
    (tx * number * torch.tensor(c)).sum().backward()
    assert x.grad.dtype == tg.float32
    np.testing.assert_array_equal(x.grad._data, tx.grad.numpy())
