"""Tensor layouts (tapegrad.layout): every tensor is ``strided`` as in torch, the factories take
``layout=`` as torch's do (strided passes, a non-layout is a TypeError; tensor() and new_tensor()
take none), refuse the sparse and jagged layouts tapegrad lacks with a NotImplementedError naming
the op, and the is_sparse family of flags reads False, as for a dense torch tensor."""
import copy
import pickle

import pytest
from torch_compare import raises_as_torch

import tapegrad as tg

_LAYOUTS = ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc",
            "jagged")

# each factory that takes layout=, called with it
_FACTORIES = {
    "zeros": lambda L, lay: L.zeros(2, 3, layout=lay),
    "ones": lambda L, lay: L.ones(2, layout=lay),
    "empty": lambda L, lay: L.empty(2, layout=lay),
    "full": lambda L, lay: L.full((2,), 1.5, layout=lay),
    "arange": lambda L, lay: L.arange(3, layout=lay),
    "linspace": lambda L, lay: L.linspace(0, 1, 3, layout=lay),
    "eye": lambda L, lay: L.eye(2, layout=lay),
    "rand": lambda L, lay: L.rand(2, layout=lay),
    "randn": lambda L, lay: L.randn(2, layout=lay),
    "randint": lambda L, lay: L.randint(0, 5, (2,), layout=lay),
    "randperm": lambda L, lay: L.randperm(4, layout=lay),
    "zeros_like": lambda L, lay: L.zeros_like(L.ones(2), layout=lay),
    "ones_like": lambda L, lay: L.ones_like(L.ones(2), layout=lay),
    "empty_like": lambda L, lay: L.empty_like(L.ones(2), layout=lay),
    "full_like": lambda L, lay: L.full_like(L.ones(2), 3.0, layout=lay),
    "rand_like": lambda L, lay: L.rand_like(L.ones(2), layout=lay),
    "randn_like": lambda L, lay: L.randn_like(L.ones(2), layout=lay),
    "randint_like": lambda L, lay: L.randint_like(L.ones(2), 5, layout=lay),
    "normal": lambda L, lay: L.normal(0.0, 1.0, (2,), layout=lay),
    "new_zeros": lambda L, lay: L.ones(2).new_zeros(3, layout=lay),
    "new_ones": lambda L, lay: L.ones(2).new_ones(3, layout=lay),
    "new_empty": lambda L, lay: L.ones(2).new_empty(3, layout=lay),
    "new_full": lambda L, lay: L.ones(2).new_full((3,), 2.0, layout=lay),
    "tril_indices": lambda L, lay: L.tril_indices(3, 3, layout=lay),
    "triu_indices": lambda L, lay: L.triu_indices(3, 3, layout=lay),
}


def _torch():
    return pytest.importorskip("torch")


def test_the_layouts_print_and_pickle_as_the_module_constants():
    for name in _LAYOUTS:
        lay = getattr(tg, name)
        assert isinstance(lay, tg.layout)
        assert repr(lay) == str(lay) == f"tapegrad.{name}"
        assert pickle.loads(pickle.dumps(lay)) is lay
        assert copy.deepcopy(lay) is lay
    assert len({id(getattr(tg, n)) for n in _LAYOUTS}) == len(_LAYOUTS)


def test_the_layouts_are_torch_s():
    torch = _torch()
    for name in _LAYOUTS:
        assert isinstance(getattr(torch, name), torch.layout)
        assert repr(getattr(torch, name)) == f"torch.{name}"


@pytest.mark.parametrize("make", [
    lambda L: L.ones(2, 3),
    lambda L: L.ones(2, 3, requires_grad=True) * 2,
    lambda L: L.ones(2, 3).t(),
    lambda L: L.ones(4)[::2],
    lambda L: L.ones(1).expand(3),
    lambda L: L.zeros(0, 3),
    lambda L: L.tensor(1.5),
    lambda L: L.arange(24.0).reshape(1, 2, 3, 4).contiguous(memory_format=L.channels_last),
], ids=["plain", "result", "transpose", "slice", "expanded", "empty", "0-d", "channels_last"])
def test_every_tensor_is_strided_and_dense_as_in_torch(make):
    x = make(tg)
    assert x.layout is tg.strided
    flags = ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mkldnn")
    assert [getattr(x, f) for f in flags] == [False] * len(flags)
    torch = _torch()
    t = make(torch)
    assert t.layout is torch.strided
    assert [getattr(t, f) for f in flags] == [False] * len(flags)


@pytest.mark.parametrize("name", sorted(_FACTORIES))
def test_factories_take_the_strided_layout_as_torch(name):
    make = _FACTORIES[name]
    x = make(tg, tg.strided)
    assert x.layout is tg.strided
    torch = _torch()
    t = make(torch, torch.strided)
    assert tuple(x.shape) == tuple(t.shape)
    assert str(x.dtype).split(".")[1] == str(t.dtype).split(".")[1]


@pytest.mark.parametrize("name", sorted(_FACTORIES))
def test_a_layout_that_is_not_one_is_a_type_error_naming_the_op(name):
    make = _FACTORIES[name]
    with pytest.raises(TypeError, match="'layout' must be tapegrad.layout"):
        make(tg, "strided")
    torch = _torch()
    raises_as_torch(torch, lambda L: make(L, "strided"))


@pytest.mark.parametrize("name", sorted(_FACTORIES))
@pytest.mark.parametrize("layout", [n for n in _LAYOUTS if n != "strided"])
def test_sparse_and_jagged_layouts_are_refused_naming_the_op(name, layout):
    make = _FACTORIES[name]
    with pytest.raises(NotImplementedError) as info:
        make(tg, getattr(tg, layout))
    msg = str(info.value)
    assert msg.startswith(f"{name}(): ") and f"layout=tapegrad.{layout}" in msg
    assert "tapegrad.strided" in msg


@pytest.mark.parametrize("make", [lambda L: L.tensor([1.0], layout=L.strided),
                                  lambda L: L.ones(2).new_tensor([1.0], layout=L.strided)],
                         ids=["tensor", "new_tensor"])
def test_tensor_and_new_tensor_take_no_layout_as_in_torch(make):
    with pytest.raises(TypeError, match="unexpected keyword argument 'layout'"):
        make(tg)
    raises_as_torch(_torch(), make)
