"""Indexing as torch does it, beyond the values: the strides of an advanced index's result, the
exception an out-of-range index raises, the nodes an index write records, and as_strided; each
case run on tapegrad and on torch."""
import numpy as np
import pytest
from torch_compare import caught, node_chain

import tapegrad as tg


def _x(L, shape, perm=None):
    x = L.tensor(np.arange(float(np.prod(shape))).reshape(shape))
    return x if perm is None else x.permute(*perm)


def _mask(L, v):
    return L.tensor(np.array(v, dtype=bool))


# ---- 1. the layout of an advanced index's result ------------------------------------------
LAYOUTS = [
    lambda L: _x(L, (3, 4, 5))[:, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[..., [0, 2]],
    lambda L: _x(L, (3, 4, 5))[[0, 1], :, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[:, [0, 1], [0, 2]],
    lambda L: _x(L, (3, 4, 5))[[[0], [1]], :, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[:, [[0], [1]], [0, 2]],
    lambda L: _x(L, (3, 4, 5))[1:, [0, 2], ::2],
    lambda L: _x(L, (3, 4, 5))[0, :, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[None, :, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[:, :, [[0, 1], [2, 3]]],
    lambda L: _x(L, (3, 4, 5))[:, [[0, 1], [2, 3]], :],
    lambda L: _x(L, (3, 4, 5))[:, _mask(L, [1, 0, 1, 1])],
    lambda L: _x(L, (3, 4, 5))[:, :, _mask(L, [1, 0, 1, 1, 0])],
    lambda L: _x(L, (3, 4, 5))[:, _mask(L, np.eye(4, 5))],
    lambda L: _x(L, (3, 4, 5), (2, 0, 1))[:, [0, 2]],
    lambda L: _x(L, (3, 4, 5), (1, 2, 0))[[0, 2]],
    lambda L: _x(L, (3, 4, 5, 6), (3, 1, 0, 2))[:, [1, 2]],
    lambda L: _x(L, (3, 4, 5, 6), (3, 1, 0, 2))[:, [1, 2], :, [0, 1]],
    lambda L: _x(L, (3, 4, 5)).transpose(0, 2)[:, L.tensor([[0, 1], [2, 3]]).t()],
    lambda L: _x(L, (1, 4, 5))[:, [0, 2]],
    lambda L: _x(L, (3, 4, 1))[:, [0, 2]],
    lambda L: _x(L, (3, 1, 5))[:, [0]],
    lambda L: _x(L, (2, 3), (1, 0))[None, [[0], [0]]],
    lambda L: _x(L, (4, 3))[[[2], [2]], ...],
    lambda L: _x(L, (4, 2, 1, 2), (3, 1, 2, 0))[1::2, [1, 1], None, ...],
    lambda L: _x(L, (3, 4, 5)).expand(2, 3, 4, 5)[:, :, [0, 3]],
]


@pytest.mark.parametrize("make", LAYOUTS)
def test_an_advanced_index_has_torchs_strides(torch, make):
    """torch's index kernel lays its result out by TensorIterator's rules (the source restrided,
    the indices reshaped), where NumPy puts the index's dims outermost."""
    t, r = make(tg), make(torch)
    assert t.shape == tuple(r.shape)
    assert t.stride() == r.stride()
    assert t.is_contiguous() == r.is_contiguous()
    assert np.array_equal(t.numpy(), r.numpy())


def test_index_strides_fuzzed_against_torch(torch):
    """Random shapes (size-1 dims included), permutations and mixes of ints, slices, None,
    Ellipsis, integer arrays and masks, adjacent and apart; results with elements."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        nd = int(rng.integers(1, 5))
        shape = [int(n) for n in rng.integers(1, 5, nd)]
        perm = [int(p) for p in rng.permutation(nd)]
        sh = [shape[p] for p in perm]
        idx = []
        for d in range(nd):
            c = rng.random()
            if c < 0.35:
                ishape = [(2,), (1, 2), (2, 1), (2, 3)][int(rng.integers(4))]
                idx.append(rng.integers(0, sh[d], ishape))
            elif c < 0.45:
                idx.append(rng.random(sh[d]) < 0.6)
            elif c < 0.6:
                idx.append(int(rng.integers(-sh[d], sh[d])))
            elif c < 0.7:
                idx.append(slice(1, None, 2))
            elif c < 0.75:
                idx.append(None)
            else:
                idx.append(slice(None))
        if rng.random() < 0.2 and nd > 1:
            idx[-1] = Ellipsis
        if not any(isinstance(i, np.ndarray) for i in idx):
            continue

        def f(L, idx=idx, shape=shape, perm=perm):
            return _x(L, shape, perm)[tuple(L.tensor(i) if isinstance(i, np.ndarray) else i
                                            for i in idx)]
        if caught(torch, f) is not None or f(torch).numel() == 0:
            continue
        t, r = f(tg), f(torch)
        assert (t.shape, t.stride()) == (tuple(r.shape), r.stride()), (shape, perm, idx)
        checked += 1
    assert checked > 150
