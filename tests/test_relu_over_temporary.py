"""relu (nn.functional.relu, the namespace function and the method) writes over its input's
array when nothing but the call holds the input (``F.relu(F.linear(...))``): the same values,
node and gradients as torch, and an input that anything else can see (a variable, a list, a
view, the array given to from_numpy, a result a node saved, a pack hook's copy) is never
written."""
import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.autograd.graph import EXACT_REFCOUNTS
from tapegrad.ops.pointwise import ReluOver

# (tiled past relu's threshold for the path, 1,024 elements: a smaller input never takes it)
DATA = np.tile([[-1.5, -0.0, 0.0, 2.0], [np.nan, -np.inf, np.inf, 0.25], [3.0, -2.0, 1.0, -0.5]],
               (1, 512))


SPELLINGS = {
    "functional": lambda lib: lib.nn.functional.relu,
    "namespace": lambda lib: lib.relu,
    "method": lambda lib: lambda t: t.relu(),
}


def _layer(lib, x, w, b, spelling="functional"):
    if spelling == "method":    # (called on the product itself: a lambda's parameter holds it)
        return lib.nn.functional.linear(x, w, b).relu()
    return SPELLINGS[spelling](lib)(lib.nn.functional.linear(x, w, b))


@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_of_a_product_matches_torch(dtype, spelling):
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(256, 4), rng.randn(8, 4), rng.randn(8)
    ts = [tg.tensor(a, dtype=getattr(tg, dtype), requires_grad=True) for a in (x, w, b)]
    y = _layer(tg, *ts, spelling)
    if EXACT_REFCOUNTS:
        assert type(y.grad_fn)._forward_cls is ReluOver
    assert type(y.grad_fn).__name__ == "ReluBackward0"
    (y * tg.arange(8.0, dtype=y.dtype)).sum().backward()
    torch = pytest.importorskip("torch")
    tt = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in (x, w, b)]
    yt = _layer(torch, *tt, spelling)
    (yt * torch.arange(8.0, dtype=yt.dtype)).sum().backward()
    tol = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    for a, at in zip(ts, tt):
        np.testing.assert_allclose(a.grad.numpy(), at.grad.numpy(), rtol=tol, atol=tol)


def test_signed_zero_nan_and_inf_as_torch():
    y = F.relu(tg.tensor(DATA) * 1.0)
    np.testing.assert_array_equal(y.numpy(), np.maximum(0.0, DATA))
    assert np.signbit(y.numpy()[0, 1])          # relu(-0.) is -0. in torch
    torch = pytest.importorskip("torch")
    yt = torch.nn.functional.relu(torch.tensor(DATA) * 1.0)
    np.testing.assert_array_equal(np.signbit(y.numpy()), np.signbit(yt.numpy()))
    np.testing.assert_array_equal(y.numpy(), yt.numpy())


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_an_input_held_elsewhere_is_left_alone(spelling):
    relu = SPELLINGS[spelling](tg)
    x = tg.tensor(DATA, requires_grad=True)
    a = x * 1.0
    kept = a.detach().numpy().copy()
    relu(a)                                     # a variable
    holders = [x * 1.0]
    relu(holders[0])                            # a list
    base = x * 1.0
    view = base[0]
    relu(base[1])                               # a view (its array is not its own)
    arr = DATA.copy()
    relu(tg.from_numpy(arr))                    # the array from_numpy was given
    a.relu()                                    # the method, called on each directly
    holders[0].relu()
    base[1].relu()
    tg.from_numpy(arr).relu()
    np.testing.assert_array_equal(a.detach().numpy(), kept)
    np.testing.assert_array_equal(holders[0].detach().numpy(), kept)
    np.testing.assert_array_equal(base.detach().numpy(), kept)
    np.testing.assert_array_equal(view.detach().numpy(), kept[0])
    np.testing.assert_array_equal(arr, DATA)


def test_a_result_its_node_saved_stays_for_backward():
    # exp saves its result: relu of it must not write that array, or exp's gradient goes wrong
    x = tg.tensor(DATA[2], requires_grad=True)
    F.relu(x.exp() - 2.0).sum().backward()
    y = tg.tensor(DATA[2], requires_grad=True)
    F.relu(y.exp()).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), np.exp(DATA[2]))
    torch = pytest.importorskip("torch")
    xt = torch.tensor(DATA[2], requires_grad=True)
    torch.nn.functional.relu(xt.exp() - 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_a_pack_hook_keeps_what_it_was_given():
    seen = []

    def pack(t):
        seen.append(t)
        return t

    x = tg.tensor(DATA[2], requires_grad=True)
    with tg.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = F.relu(x.exp())
    exp_result = seen[0].detach().numpy().copy()
    np.testing.assert_allclose(exp_result, np.exp(DATA[2]))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(DATA[2]))


def test_a_small_input_takes_the_usual_path():
    # below 1,024 elements a new array costs no more than writing over one: the plain path
    x = tg.tensor(DATA[:, :8], requires_grad=True)
    assert type(F.relu(x * 1.0).grad_fn)._forward_cls is not ReluOver


def test_integer_input_takes_the_usual_path():
    y = F.relu(tg.tensor([-2, 0, 3]) * 1)
    assert y.dtype == tg.int64
    np.testing.assert_array_equal(y.numpy(), [0, 0, 3])


def test_double_backward_through_the_written_over_relu():
    x = tg.tensor(DATA[2], requires_grad=True)
    y = F.relu(x * x)
    g, = tg.autograd.grad(y.sum(), x, create_graph=True)
    gg, = tg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), 2 * DATA[2])
    np.testing.assert_allclose(gg.numpy(), np.full(DATA.shape[1], 2.0))
