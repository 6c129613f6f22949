"""conv2d and max_pool2d: forward and gradients against torch, gradcheck / gradgradcheck in
float64, node names, error messages.

Torch comparisons call ``pytest.importorskip("torch")`` inside the test, so the file runs (and
those tests skip) without torch.
"""
import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck

try:
    import tapegrad.nn.functional as F
except ImportError:  # pragma: no cover - nn.functional is another engineer's module
    from tapegrad.ops import nn_ops as F

TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def _rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _tg(a, grad=True):
    return tg.tensor(a, requires_grad=grad)


def _close(actual, expected, dtype, scale=1.0):
    tol = TOL[dtype]
    np.testing.assert_allclose(actual, expected, rtol=tol["rtol"], atol=tol["atol"] * scale)


# ---- conv2d against torch ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("stride", [1, 2, (2, 1)])
@pytest.mark.parametrize("padding", [0, 1, (1, 0)])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_matches_torch(dtype, stride, padding, bias):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = _rand(rng, (2, 3, 7, 6), dtype)          # non-square image
    w = _rand(rng, (4, 3, 3, 2), dtype)          # non-square kernel
    b = _rand(rng, (4,), dtype) if bias else None
    xt, wt = _tg(x), _tg(w)
    bt = _tg(b) if bias else None
    y = F.conv2d(xt, wt, bt, stride=stride, padding=padding)
    X = torch.tensor(x, requires_grad=True)
    W = torch.tensor(w, requires_grad=True)
    B = torch.tensor(b, requires_grad=True) if bias else None
    Y = torch.nn.functional.conv2d(X, W, B, stride=stride, padding=padding)
    assert y.shape == tuple(Y.shape)
    assert y.dtype == getattr(tg, dtype)
    assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
    _close(y._data, Y.detach().numpy(), dtype, 10)
    g = _rand(rng, y.shape, dtype)
    y.backward(tg.tensor(g))
    Y.backward(torch.tensor(g))
    _close(xt.grad._data, X.grad.numpy(), dtype, 10)
    _close(wt.grad._data, W.grad.numpy(), dtype, 10)
    if bias:
        _close(bt.grad._data, B.grad.numpy(), dtype, 10)
    assert xt.grad.dtype == xt.dtype and wt.grad.dtype == wt.dtype


def test_conv2d_second_derivatives_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 2, 6, 5)), rng.standard_normal((3, 2, 3, 3))
    v = rng.standard_normal((2, 3, 3, 3))
    out = {}
    for lib, mod, fn in ((tg, tg, F.conv2d), (torch, torch, torch.nn.functional.conv2d)):
        X = mod.tensor(x, requires_grad=True)
        Wt = mod.tensor(w, requires_grad=True)
        y = fn(X, Wt, stride=2, padding=1)
        gx, gw = mod.autograd.grad((y * mod.tensor(v)).sum() ** 2, (X, Wt), create_graph=True)
        if lib is tg:
            assert type(gx.grad_fn).__name__ == "ConvolutionBackwardBackward0"
        hx, hw = mod.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (X, Wt))
        out[lib.__name__] = [t.detach().numpy() if lib is torch else t._data
                             for t in (gx, gw, hx, hw)]
    for a, b in zip(out["tapegrad"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


def test_conv2d_unbatched_and_strings():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 5, 4)), rng.standard_normal((2, 3, 3, 3)), rng.standard_normal(2)
    for padding in (0, "valid", "same", (1, 1)):
        y = F.conv2d(_tg(x), _tg(w), _tg(b), padding=padding)
        Y = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b),
                                       padding=padding)
        assert y.shape == tuple(Y.shape)
        np.testing.assert_allclose(y._data, Y.numpy(), rtol=1e-12, atol=1e-12)


def test_conv2d_no_graph_without_grad():
    x = tg.tensor(np.ones((1, 1, 4, 4), np.float32))
    w = tg.tensor(np.ones((1, 1, 2, 2), np.float32))
    y = F.conv2d(x, w)
    assert y.grad_fn is None and not y.requires_grad
    np.testing.assert_array_equal(y._data, np.full((1, 1, 3, 3), 4.0, np.float32))
    with tg.no_grad():
        y = F.conv2d(x, tg.tensor(w._data, requires_grad=True))
    assert y.grad_fn is None


def test_conv2d_graph_shape():
    x, w, b = _tg(np.ones((1, 2, 4, 4))), _tg(np.ones((3, 2, 3, 3))), _tg(np.ones(3))
    y = F.conv2d(x, w, b)
    names = [type(f).__name__ for f, _ in y.grad_fn.next_functions]
    assert names == ["AccumulateGrad"] * 3
    y2 = F.conv2d(tg.tensor(np.ones((1, 2, 4, 4))), w)      # input needs no grad
    y2.sum().backward()
    assert w.grad is not None


def test_conv2d_empty_batch():
    y = F.conv2d(_tg(np.ones((0, 2, 5, 5))), _tg(np.ones((3, 2, 3, 3))))
    assert y.shape == (0, 3, 3, 3)


# ---- gradcheck / gradgradcheck (float64 central differences) ----------------------------------
@pytest.mark.parametrize("stride,padding", [(1, 0), (2, 1), ((1, 2), (0, 1))])
def test_conv2d_gradcheck(stride, padding):
    rng = np.random.default_rng(3)
    x = _tg(rng.standard_normal((2, 2, 5, 4)))
    w = _tg(rng.standard_normal((3, 2, 2, 3)))
    b = _tg(rng.standard_normal(3))
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride, padding), (x, w, b))


@pytest.mark.parametrize("stride,padding", [(1, 1), (2, 0)])
def test_conv2d_gradgradcheck(stride, padding):
    rng = np.random.default_rng(4)
    x = _tg(rng.standard_normal((1, 2, 4, 4)))
    w = _tg(rng.standard_normal((2, 2, 2, 2)))
    b = _tg(rng.standard_normal(2))
    assert gradgradcheck(lambda x, w, b: F.conv2d(x, w, b, stride, padding), (x, w, b))


def test_conv2d_third_order():
    # the backward primitives differentiate into each other, so any order works
    rng = np.random.default_rng(5)
    x = _tg(rng.standard_normal((1, 1, 4, 4)))
    w = _tg(rng.standard_normal((1, 1, 2, 2)))

    def f(x, w):
        y = F.conv2d(x, w, padding=1)
        gx, = tg.autograd.grad((y ** 2).sum(), x, create_graph=True)
        return gx
    assert gradgradcheck(f, (x, w))


# ---- max_pool2d against torch ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel,stride,padding", [
    (2, None, 0), (2, 2, 1), (3, 1, 1), ((3, 2), (2, 1), (1, 0)), (3, 2, 0)])
def test_max_pool2d_matches_torch(dtype, kernel, stride, padding):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    # integer-valued data: many ties inside windows, which torch resolves to the first maximum
    x = rng.integers(-3, 4, (2, 3, 7, 6)).astype(dtype)
    xt = _tg(x)
    X = torch.tensor(x, requires_grad=True)
    y, idx = F.max_pool2d(xt, kernel, stride, padding, return_indices=True)
    Y, IDX = torch.nn.functional.max_pool2d(X, kernel, stride, padding, return_indices=True)
    assert type(y.grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    np.testing.assert_array_equal(y._data, Y.detach().numpy())
    np.testing.assert_array_equal(idx._data, IDX.numpy())
    assert idx.dtype == tg.int64 and not idx.requires_grad
    g = _rand(rng, y.shape, dtype)
    y.backward(tg.tensor(g))
    Y.backward(torch.tensor(g))
    _close(xt.grad._data, X.grad.numpy(), dtype)


def test_max_pool2d_nan_inf_and_unbatched():
    torch = pytest.importorskip("torch")
    nan, inf = float("nan"), float("inf")
    cases = [
        (np.array([[[[nan, 1.0], [nan, 1.0]]]]), 2, None, 0),            # last NaN wins
        (np.full((1, 1, 3, 3), -inf), 2, None, 1),                       # padding never wins
        (np.array([[[[1.0, nan, 3.0], [-inf, 2.0, nan], [0.0, 5.0, 5.0]]]]), 2, 1, 1),
        (np.arange(24.0).reshape(2, 3, 4)[:, ::-1].copy(), 2, 1, 0),     # unbatched (C, H, W)
    ]
    for x, k, s, p in cases:
        y, i = F.max_pool2d(_tg(x), k, s, p, return_indices=True)
        Y, I = torch.nn.functional.max_pool2d(torch.tensor(x), k, s, p, return_indices=True)
        np.testing.assert_array_equal(y._data, Y.numpy())
        np.testing.assert_array_equal(i._data, I.numpy())
    x = np.random.default_rng(7).standard_normal((3, 5, 4))
    xt, X = _tg(x), torch.tensor(x, requires_grad=True)
    F.max_pool2d(xt, 2, 1).sum().backward()
    torch.nn.functional.max_pool2d(X, 2, 1).sum().backward()
    np.testing.assert_allclose(xt.grad._data, X.grad.numpy())


def test_max_pool2d_int_input():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(8).integers(-5, 5, (1, 2, 5, 5))
    y = F.max_pool2d(tg.tensor(x), 3, 2, 1)
    Y = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1)
    np.testing.assert_array_equal(y._data, Y.numpy())
    assert y.dtype == tg.int64


def test_max_pool2d_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(9)
    # distinct values, well separated: finite differences never cross a tie
    x = _tg(rng.permutation(2 * 2 * 5 * 6).reshape(2, 2, 5, 6) * 0.1)
    for k, s, p in ((2, None, 0), (3, 1, 1), ((2, 3), (1, 2), (1, 0))):
        assert gradcheck(lambda x: F.max_pool2d(x, k, s, p), (x,))
        assert gradgradcheck(lambda x: F.max_pool2d(x, k, s, p) ** 2, (x,))
    y = F.max_pool2d(x, 3, 1, 1)
    gx, = tg.autograd.grad((y ** 2).sum(), x, create_graph=True)
    assert type(gx.grad_fn).__name__ in ("MaxPool2DWithIndicesBackwardBackward0", "MulBackward0")


# ---- argument errors ---------------------------------------------------------------------------
def _err(exc, match, fn, *args, **kwargs):
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)


def test_conv2d_errors():
    x = tg.zeros(1, 3, 8, 8)
    w = tg.zeros(2, 4, 3, 3)
    _err(RuntimeError, r"Given groups=1, weight of size \[2, 4, 3, 3\], expected "
                       r"input\[1, 3, 8, 8\] to have 4 channels, but got 3 channels instead",
         F.conv2d, x, w)
    _err(RuntimeError, r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got "
                       r"input of size: \[3, 8\]", F.conv2d, tg.zeros(3, 8), w)
    _err(RuntimeError, r"expected weight to be 4-D", F.conv2d, tg.zeros(1, 4, 8, 8),
         tg.zeros(2, 4, 3))
    _err(RuntimeError, r"expected bias to be 1-dimensional with 2 elements, but got bias of "
                       r"size \[3\]", F.conv2d, tg.zeros(1, 4, 8, 8), w, tg.zeros(3))
    _err(RuntimeError, r"expected scalar type Float but found Double", F.conv2d,
         tg.zeros(1, 4, 8, 8), tg.zeros(2, 4, 3, 3, dtype=tg.float64))
    _err(RuntimeError, r"Calculated padded input size per channel: \(2 x 2\). Kernel size: "
                       r"\(3 x 3\)", F.conv2d, tg.zeros(1, 4, 2, 2), w)
    _err(RuntimeError, r"non-positive stride", F.conv2d, tg.zeros(1, 4, 8, 8), w, stride=0)
    _err(RuntimeError, r"negative padding", F.conv2d, tg.zeros(1, 4, 8, 8), w, padding=-1)
    _err(RuntimeError, r"a list of 2 values .* stride=\[1, 2, 3\]", F.conv2d,
         tg.zeros(1, 4, 8, 8), w, stride=(1, 2, 3))
    _err(RuntimeError, r"padding='same' is not supported for strided", F.conv2d,
         tg.zeros(1, 4, 8, 8), w, stride=2, padding="same")
    _err(NotImplementedError, r"groups", F.conv2d, tg.zeros(1, 4, 8, 8), w, groups=2)
    _err(NotImplementedError, r"dilation", F.conv2d, tg.zeros(1, 4, 8, 8), w, dilation=2)


def test_max_pool2d_errors():
    _err(RuntimeError, r"pad should be at most half of effective kernel size, but got pad=2, "
                       r"kernel_size=2 and dilation=1", F.max_pool2d, tg.zeros(1, 4, 8, 8), 2,
         padding=2)
    _err(RuntimeError, r"Given input size: \(4x1x1\). Calculated output size: \(4x0x0\). Output "
                       r"size is too small", F.max_pool2d, tg.zeros(1, 4, 1, 1), 2)
    _err(RuntimeError, r"non-empty 3D or 4D \(batch mode\) tensor expected for input",
         F.max_pool2d, tg.zeros(4, 8), 2)
    _err(RuntimeError, r"stride should not be zero", F.max_pool2d, tg.zeros(1, 4, 8, 8), 2,
         stride=0)
    _err(RuntimeError, r"kernel_size must be greater than zero", F.max_pool2d,
         tg.zeros(1, 4, 8, 8), 0)
    _err(NotImplementedError, r"ceil_mode", F.max_pool2d, tg.zeros(1, 4, 8, 8), 2,
         ceil_mode=True)


@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 1, 1)])
def test_max_pool2d_nonfinite_grad_stays_at_maxima(kernel, stride, padding):
    # inf / NaN in the incoming gradient must reach only the arg-max positions (as torch's
    # scatter-add), not leak through 0 * inf elsewhere
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 2, 6, 6))
    xt, X = _tg(x), torch.tensor(x, requires_grad=True)
    y = F.max_pool2d(xt, kernel, stride, padding)
    g = rng.standard_normal(y.shape)
    g[0, 0, 0, 0], g[1, 1, 1, 1] = np.inf, np.nan
    y.backward(tg.tensor(g))
    torch.nn.functional.max_pool2d(X, kernel, stride, padding).backward(torch.tensor(g))
    np.testing.assert_array_equal(np.isnan(xt.grad._data), np.isnan(X.grad.numpy()))
    np.testing.assert_allclose(xt.grad._data, X.grad.numpy())


def test_conv2d_many_channels_small_output():
    # more output channels than output pixels: the weight gradient takes its single-product
    # (tensordot) path
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    x, w, b = rng.standard_normal((3, 2, 3, 4)), rng.standard_normal((8, 2, 3, 3)), rng.standard_normal(8)
    xt, wt, bt = _tg(x), _tg(w), _tg(b)
    X, Wt, B = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    F.conv2d(xt, wt, bt).pow(2).sum().backward()
    torch.nn.functional.conv2d(X, Wt, B).pow(2).sum().backward()
    for a, t in ((xt, X), (wt, Wt), (bt, B)):
        np.testing.assert_allclose(a.grad._data, t.grad.numpy(), rtol=1e-10, atol=1e-10)
    assert gradcheck(lambda x, w: F.conv2d(x, w, stride=(1, 2)), (xt, wt))
