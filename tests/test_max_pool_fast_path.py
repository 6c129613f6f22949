"""max_pool2d's forward without padding takes the maxima first and the arg-max by equality
(nn_ops._max_pool_by_equality): the same maxima and arg-maxes as the exact path (torch's rule:
a later element wins only when greater, or when NaN), ties, signed zeros and infinities
included; a NaN sends the call to the exact path. Values, indices and gradients against
torch."""
import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.ops import nn_ops


def _data(rng, shape, dtype):
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.3] = 0.0                  # ties (a relu's zeros)
    x[rng.random(shape) < 0.05] = -0.0
    x[rng.random(shape) < 0.02] = np.inf
    x[rng.random(shape) < 0.02] = -np.inf
    x[0, 0, :4, :4] = -np.inf                          # whole windows of -inf
    x[0, 1, :4, :4] = 1.5                              # whole windows tied
    return np.round(x, 1).astype(dtype)


def _exact(x, k, s):
    # the exact path: the fast one refused by a padding of zero width taken as none
    offsets = nn_ops._pool_offsets
    saved = nn_ops._max_pool_by_equality
    nn_ops._max_pool_by_equality = lambda *a: None
    try:
        return nn_ops._max_pool_forward(x, k, s, (0, 0))
    finally:
        nn_ops._max_pool_by_equality = saved
        assert nn_ops._pool_offsets is offsets


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("k, s", [((2, 2), (2, 2)), ((3, 3), (2, 2)), ((2, 3), (1, 2)),
                                  ((1, 2), (1, 1))])
def test_fast_path_is_the_exact_path(dtype, k, s):
    x = _data(np.random.default_rng(0), (2, 3, 9, 10), dtype)
    fast = nn_ops._max_pool_by_equality(
        x, nn_ops._pool_offsets(k, s, (9 - k[0]) // s[0] + 1, (10 - k[1]) // s[1] + 1),
        np.int8)
    assert fast is not None
    best, am = _exact(x, k, s)
    np.testing.assert_array_equal(fast[0], best)
    np.testing.assert_array_equal(np.signbit(fast[0]), np.signbit(best))
    np.testing.assert_array_equal(fast[1], am)


def test_a_nan_takes_the_exact_path():
    x = _data(np.random.default_rng(1), (1, 2, 4, 4), np.float32)
    x[0, 0, 1, 1] = np.nan
    assert nn_ops._max_pool_by_equality(x, nn_ops._pool_offsets((2, 2), (2, 2), 2, 2),
                                        np.int8) is None
    out, idx = F.max_pool2d(tg.tensor(x), 2, return_indices=True)
    assert np.isnan(out.numpy()[0, 0, 0, 0]) and idx.numpy()[0, 0, 0, 0] == 5


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_indices_and_gradient_match_torch(dtype, torch):
    x = _data(np.random.default_rng(2), (2, 3, 8, 8), getattr(np, dtype))
    w = np.random.default_rng(3).standard_normal((2, 3, 4, 4))
    t = tg.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(t, 2, return_indices=True)
    (out * tg.tensor(w, dtype=out.dtype)).sum().backward()
    tt = torch.tensor(x, requires_grad=True)
    out_t, idx_t = torch.nn.functional.max_pool2d(tt, 2, return_indices=True)
    (out_t * torch.tensor(w, dtype=out_t.dtype)).sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), out_t.detach().numpy())
    np.testing.assert_array_equal(idx.numpy(), idx_t.numpy())
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())
