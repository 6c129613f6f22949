"""Tensors of no elements report torch's strides: C order's, each dim counting as at least 1
(``empty(0, 3).stride() == (3, 1)``), for factories, reshapes and op results; a slice or a
transpose keeps its base's, and clone, contiguous and the *_like factories preserve them
(compared with torch)."""
import pytest

import tapegrad as tg

_CASES = {
    "factories": lambda L: [f(*s).stride() for f in (L.empty, L.zeros, L.ones, L.randn)
                            for s in ((0, 3), (3, 0), (0,), (0, 3, 4), (2, 0, 3), (0, 0), (0, 1))],
    "full, arange, tensor": lambda L: (L.full((0, 2, 3), 1.0).stride(), L.arange(0).stride(),
                                       L.tensor([]).stride(), L.tensor([[]]).stride()),
    "new_zeros, new_empty": lambda L: (L.ones(2).new_zeros(0, 3).stride(),
                                       L.ones(2).new_empty((3, 0)).stride()),
    "reshape, view": lambda L: (L.ones(0).reshape(0, 3).stride(),
                                L.ones(0, 3).reshape(3, 0).stride(),
                                L.ones(0, 3).view(3, 0, 1).stride(),
                                L.arange(6.0).reshape(6, 1)[:0].stride()),
    "slices": lambda L: (L.ones(4, 5)[:0].stride(), L.ones(4, 5)[:, :0].stride(),
                         L.ones(4, 5)[:, 2:2].stride(), L.ones(4, 5).narrow(1, 0, 0).stride(),
                         L.ones(4, 5).t()[:0].stride()),
    "transposed": lambda L: (L.empty(0, 3).t().stride(), L.ones(2, 0, 3).transpose(0, 2).stride(),
                             L.ones(2, 0, 3).permute(2, 0, 1).stride(),
                             L.zeros(0, 3).t().detach().stride(),
                             L.empty(0, 3).t().reshape(3, 0).stride(),
                             L.zeros(0, 3).t().is_contiguous()),
    "*_like of transposed": lambda L: [f(L.empty(0, 3).t()).stride() for f in (
        L.empty_like, L.zeros_like, L.ones_like, lambda x: L.full_like(x, 2.0))]
        + [L.ones_like(L.ones(2, 0, 3).permute(2, 0, 1)).stride()],
    "*_like of a slice": lambda L: L.empty_like(L.ones(4, 5)[:, :0]).stride(),
    "clone, contiguous": lambda L: (L.empty(0, 3).t().clone().stride(),
                                    L.empty(0, 3).t().contiguous().stride(),
                                    L.ones(4, 5)[:, :0].clone().stride(),
                                    L.ones(4, 5)[:, :0].contiguous().stride()),
    "op results": lambda L: (L.ones(0, 3).sum(0).stride(), L.ones(0, 3).sum(1).stride(),
                             L.cat([L.ones(0, 3), L.ones(0, 3)]).stride(),
                             (L.ones(0, 3) @ L.ones(3, 4)).stride(),
                             L.ones(1, 3).expand(0, 3).stride()),
    "channels_last of an empty": lambda L: L.zeros_like(
        L.empty(2, 0, 4, 5), memory_format=L.channels_last).stride(),
    "a leaf's gradient": lambda L: _grad_strides(L),
    "expanded (stride 0, as torch)": lambda L: [f(L.tensor(1.0).expand(3, 0)) for f in (
        lambda e: e.stride(), lambda e: e.clone().stride(), lambda e: L.empty_like(e).stride(),
        lambda e: e.contiguous().stride(), lambda e: e.to(L.float64).stride(),
        lambda e: e.is_contiguous())],
    "contiguous(channels_last) of an empty": lambda L: [
        (L.empty(*s).is_contiguous(memory_format=L.channels_last),
         L.empty(*s).contiguous(memory_format=L.channels_last).stride())
        for s in ((2, 3, 0, 5), (0, 3, 4, 5), (2, 0, 4, 5), (1, 3, 0, 1), (2, 1, 0, 5))]
        + [L.empty(2, 3, 0, 5, 6).contiguous(memory_format=L.channels_last_3d).stride()],
}


def _grad_strides(L):
    x = L.zeros(0, 3, requires_grad=True)
    (x.t() * 2).sum().backward()
    return x.grad.stride()


@pytest.mark.parametrize("name", sorted(_CASES))
def test_empty_strides_as_torch(name):
    torch = pytest.importorskip("torch")
    assert _CASES[name](tg) == _CASES[name](torch)


def test_empty_strides_without_torch():
    assert tg.empty(0, 3).stride() == (3, 1)
    assert tg.zeros(3, 0).stride() == (1, 1)
    assert tg.ones(2, 0, 3).stride() == (3, 3, 1)
    assert tg.empty(0, 3).t().stride() == (1, 3)
    assert tg.empty_like(tg.empty(0, 3).t()).stride() == (1, 3)
    assert tg.ones(4, 5)[:, :0].clone().stride() == (5, 1)
