"""Basic indexing records one view per step, as torch's: an int is a SelectBackward0, a None an
UnsqueezeBackward0, a slice a SliceBackward0 (inside a tuple only one that does not cover its
whole dim), in the order of the index, each node over the previous one (``x[1:, ::2]`` is two
SliceBackward0 nodes); nothing left is an AliasBackward0. Values, gradients, the views' base and
writes through them are checked against torch as well."""
import numpy as np
import pytest
from torch_compare import node_chain

import tapegrad as tg

_INDEXES = {
    "two slices": lambda x: x[1:, ::2],
    "two ints": lambda x: x[0, 1],
    "int then slice": lambda x: x[1, 1:3],
    "slice then int": lambda x: x[1:, 2],
    "full slice then int": lambda x: x[:, 2],
    "None then int": lambda x: x[None, 1],
    "int, None, slice": lambda x: x[1, None, ::3],
    "ellipsis and int": lambda x: x[..., 1],
    "ellipsis, None, slice": lambda x: x[..., None, 1:],
    "three steps": lambda x: x[1:3, None, 0:4:2],
    "full slices only": lambda x: x[:, :],
    "ellipsis only": lambda x: x[...],
    "lone full slice": lambda x: x[:],
    "lone slice": lambda x: x[1:],
    "lone int": lambda x: x[2],
    "lone None": lambda x: x[None],
    "0-d int tensor": lambda x: x[tg.tensor(1) if isinstance(x, tg.Tensor) else
                                 __import__("torch").tensor(1), 1:],
    "slice to the end from 0": lambda x: x[0:, 1],
    "slice past the end": lambda x: x[:10, 1],
}


def _leaf(L):
    return L.tensor(np.arange(20.0).reshape(4, 5), requires_grad=True)


@pytest.mark.parametrize("name", sorted(_INDEXES))
def test_each_step_is_its_own_view_node_as_in_torch(name):
    torch = pytest.importorskip("torch")
    index = _INDEXES[name]
    x, tx = _leaf(tg), _leaf(torch)
    y, ty = index(x), index(tx)
    assert node_chain(y) == [n.replace("torch::autograd::", "") for n in node_chain(ty)]
    assert y.shape == tuple(ty.shape) and y.stride() == ty.stride()
    assert np.array_equal(y.detach().numpy(), ty.detach().numpy())
    assert y._base is x and ty._base is tx
    w = np.arange(1.0, 1.0 + y.numel()).reshape(y.shape)
    (y * tg.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    assert np.array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("name", ["two slices", "int then slice", "three steps"])
def test_a_write_through_a_view_of_several_steps_reaches_the_base(name):
    torch = pytest.importorskip("torch")
    index = _INDEXES[name]
    out = []
    for L in (tg, torch):
        x = L.tensor(np.arange(20.0).reshape(4, 5), requires_grad=True)
        b = x * 1
        v = index(b)
        v.mul_(3)
        (b * b).sum().backward()
        out.append((b.detach().numpy(), x.grad.numpy(), type(b.grad_fn).__name__))
    assert np.array_equal(out[0][0], out[1][0])
    assert np.array_equal(out[0][1], out[1][1])
    assert out[0][2] == out[1][2]


def test_gradcheck_through_several_steps():
    x = tg.tensor(np.random.RandomState(0).rand(4, 5), dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda t: t[1:, None, ::2] * 2, (x,))
    assert tg.autograd.gradgradcheck(lambda t: t[1:3, 2] ** 2, (x,))
