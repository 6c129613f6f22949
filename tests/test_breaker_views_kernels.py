"""Breaker findings on today's commits (views per index step, layouts, norms, integer kernels),
each compared with torch."""
import numpy as np
import pytest

import tapegrad as tg


def _both(fn):
    torch = pytest.importorskip("torch")
    return fn(tg), fn(torch)


def _t_view(L, shape):
    """A transposed (non-contiguous) view of a leaf."""
    n = int(np.prod(shape))
    return L.tensor(np.arange(float(n)).reshape(shape[::-1])).t()


@pytest.mark.parametrize("make", [
    lambda L: _t_view(L, (4, 5))[..., None],
    lambda L: _t_view(L, (4, 5)).unsqueeze(-1),
    lambda L: _t_view(L, (4, 5))[None, ..., None],
    lambda L: L.tensor(np.arange(20.0).reshape(4, 5))[None, 1, None, 2, None],
    lambda L: _t_view(L, (4, 5))[None, 1, None, 2, None],
    lambda L: L.tensor(np.arange(24.0).reshape(2, 3, 4))[None, 1, ..., None, 2],
    lambda L: L.tensor(np.arange(20.0).reshape(4, 5))[..., 1, None],
    lambda L: L.tensor(np.arange(20.0).reshape(4, 5))[None][:, 1][:, None],
    lambda L: L.zeros(0, 3)[None],
    lambda L: L.zeros(0, 3).unsqueeze(0),
])
def test_a_new_dim_has_torchs_stride_and_the_others_keep_theirs(make):
    t, r = _both(make)
    assert t.shape == tuple(r.shape)
    assert t.stride() == r.stride()
    assert np.array_equal(t.numpy(), r.numpy())
