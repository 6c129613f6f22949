"""SGD rounds each ``add(x, alpha=a)`` once, as torch's fused CPU kernel does (an FMA): the
update, weight decay, momentum with dampening and Nesterov's look-ahead. With SciPy that is BLAS
axpy; without it, float32 is computed in float64 and rounded once. float16 is computed in float32
and rounded once, as torch. Rounding twice (a product, then a sum) differed from torch in the
last bit for about one element in a hundred."""
import numpy as np
import pytest

import tapegrad as tg
from tapegrad.optim import _helpers

CONFIGS = {
    "plain": {},
    "momentum": {"momentum": 0.9},
    "dampening": {"momentum": 0.9, "dampening": 0.3},
    "nesterov": {"momentum": 0.8, "nesterov": True},
    "weight_decay": {"weight_decay": 0.05, "momentum": 0.5},
    "maximize": {"maximize": True, "weight_decay": 0.01},
}


@pytest.fixture(params=["scipy", "numpy"])
def path(request, monkeypatch):
    """Each test runs with BLAS axpy (when SciPy is installed) and with the NumPy fallback."""
    if request.param == "scipy":
        pytest.importorskip("scipy")
        monkeypatch.setattr(_helpers, "_AXPY", None)
    else:
        monkeypatch.setattr(_helpers, "_AXPY", {})
    return request.param


def _data(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.standard_normal(n).astype(dtype)
    grads = [(rng.standard_normal(n) * 10.0 ** rng.integers(-3, 1)).astype(dtype)
             for _ in range(3)]
    return p, grads


def _run(lib, p0, grads, kw, lr=0.01):
    p = lib.tensor(p0.copy(), requires_grad=True)
    opt = lib.optim.SGD([p], lr=lr, **kw)
    for g in grads:
        p.grad = lib.tensor(g.copy())
        opt.step()
    return p.detach().numpy().copy()


def _fma32(y, x, alpha):
    """y + alpha * x for float32 arrays, rounded once (float64 holds the product exactly)."""
    return (y.astype(np.float64) + np.float64(np.float32(alpha)) * x.astype(np.float64)) \
        .astype(np.float32)


@pytest.mark.parametrize("n", [1, 7, 1000, 70_001])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("config", list(CONFIGS))
def test_sgd_step_matches_torch_to_the_bit(config, dtype, n, path):
    torch = pytest.importorskip("torch")
    p0, grads = _data(n, dtype)
    ours = _run(tg, p0, grads, CONFIGS[config])
    theirs = _run(torch, p0, grads, CONFIGS[config])
    _check(ours, theirs, dtype, path)


def _check(ours, theirs, dtype, path):
    if path == "numpy" and dtype == "float64":
        # float64 without SciPy rounds twice: the last bit of each operation may differ (the
        # values are of order 1, so a few units in the last place of that)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-14)
    elif dtype == "float16":
        # float32 arithmetic rounded once to float16 is torch's vectorized loop; its scalar loop
        # (short tensors, the ends of each thread's share) and its out-of-place add (weight
        # decay, Nesterov) round otherwise, so the last bit differs for some elements
        np.testing.assert_allclose(ours.astype(np.float32), theirs.astype(np.float32),
                                   rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("n", [5, 70_001])
def test_sgd_float32_update_is_rounded_once_without_torch(n, path):
    p0, grads = _data(n, np.float32, seed=3)
    ours = _run(tg, p0, grads[:1], {})
    np.testing.assert_array_equal(ours, _fma32(p0, grads[0], -0.01))
    if n > 1000:    # (for this many numbers, rounding twice gives something else somewhere)
        assert (ours != p0 + np.float32(-0.01) * grads[0]).any()


def test_sgd_uses_blas_axpy_when_scipy_is_installed(monkeypatch):
    pytest.importorskip("scipy")
    monkeypatch.setattr(_helpers, "_AXPY", None)
    p = tg.zeros(3, requires_grad=True)
    p.grad = tg.ones(3)
    tg.optim.SGD([p], lr=0.5).step()
    assert set(_helpers._AXPY) == {np.dtype(np.float32), np.dtype(np.float64)}
    np.testing.assert_array_equal(p.detach().numpy(), [-0.5] * 3)
    calls = []
    saxpy = _helpers._AXPY[np.dtype(np.float32)]
    monkeypatch.setitem(_helpers._AXPY, np.dtype(np.float32),
                        lambda *a, **k: calls.append(a[1].shape) or saxpy(*a, **k))
    w = tg.zeros((4, 5), requires_grad=True)
    w.grad = tg.ones(5, 4).t()      # a gradient in the other layout: a contiguous copy
    tg.optim.SGD([p, w], lr=0.25).step()
    assert calls == [(128,), (128,)]    # (each zero-padded: see the next tests)
    np.testing.assert_array_equal(w.detach().numpy(), np.full((4, 5), -0.25, np.float32))


@pytest.mark.parametrize("threads", [2, 1])
def test_a_large_axpy_goes_in_pieces_below_openblas_threading(monkeypatch, threads):
    # OpenBLAS threads an axpy of more than 10,000 elements; SciPy's pool then spins against
    # NumPy's (a W3 step took 16 ms instead of 4.6 on two cores). Every piece stays below that,
    # unless OpenBLAS has one thread: then the pieces only cost calls, and it is one call.
    pytest.importorskip("scipy")
    monkeypatch.setattr(_helpers, "_AXPY", None)
    monkeypatch.setattr(_helpers, "_openblas_threads", lambda: threads)
    monkeypatch.setattr(_helpers, "_AXPY_CHUNK", _helpers._AXPY_CHUNK)  # (restored after)
    _helpers.add_scaled_(np.zeros(1, np.float32), np.zeros(1, np.float32), 1.0)   # loads _AXPY
    sizes = []
    for dt in (np.float32, np.float64):
        real = _helpers._AXPY[np.dtype(dt)]
        monkeypatch.setitem(_helpers._AXPY, np.dtype(dt),
                            lambda x, y, real=real, **k: sizes.append(x.size) or real(x, y, **k))
    rng = np.random.default_rng(3)
    for dt, order in ((np.float32, "C"), (np.float64, "F")):
        x = rng.standard_normal((300, 91)).astype(dt)
        y0 = rng.standard_normal((300, 91)).astype(dt)
        y = y0.copy(order=order)    # a non-contiguous y (through a contiguous copy) in the second
        sizes.clear()
        _helpers.add_scaled_(y, x, -0.37)
        # 3 pieces of 8,192, 2,688 and the last 36 elements padded to 128
        assert sizes == ([8192, 8192, 8192, 2688, 128] if threads > 1 else [27264, 128])
        if dt is np.float32:
            np.testing.assert_array_equal(y, _fma32(y0, x, -0.37))
        else:
            np.testing.assert_allclose(y, y0 + -0.37 * x, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("env, cpus, want", [
    ({}, 4, 4),
    ({"OMP_NUM_THREADS": "1"}, 4, 1),
    ({"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "1"}, 4, 2),  # (OpenBLAS's own first)
    ({"OPENBLAS_NUM_THREADS": "0", "GOTO_NUM_THREADS": "1"}, 4, 1),  # (0: not set)
    ({"OPENBLAS_NUM_THREADS": "x", "OMP_NUM_THREADS": "3"}, 4, 3),
    ({"OPENBLAS_NUM_THREADS": "8"}, 1, 1),                          # (at most the CPUs)
])
def test_openblas_threads_read_as_openblas_reads_them(monkeypatch, env, cpus, want):
    for var in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    monkeypatch.setattr(_helpers.os, "sched_getaffinity", lambda pid: set(range(cpus)),
                        raising=False)
    assert _helpers._openblas_threads() == want


@pytest.mark.parametrize("threads", [2, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axpy_rounds_every_element_once_whatever_the_length(dtype, threads, monkeypatch):
    # OpenBLAS's Haswell/Zen axpy kernels fuse only in their vector loop (blocks of 32 floats,
    # 16 doubles): the last n % 32 elements were multiplied and added apart, so a 7-element bias
    # differed from torch in the last bit on those CPUs (not on AVX512 ones). The exact sum of
    # the exact product, rounded once, is the reference.
    pytest.importorskip("scipy")
    monkeypatch.setattr(_helpers, "_AXPY", None)
    monkeypatch.setattr(_helpers, "_openblas_threads", lambda: threads)
    monkeypatch.setattr(_helpers, "_AXPY_CHUNK", _helpers._AXPY_CHUNK)  # (restored after)
    from fractions import Fraction
    rng = np.random.default_rng(5)
    alpha = -0.0123
    a = Fraction(float(dtype(alpha)))
    for n in list(range(1, 70)) + [127, 128, 129, 255, 8191, 8192 + 129]:
        x = rng.standard_normal(n).astype(dtype)
        y0 = rng.standard_normal(n).astype(dtype)
        y = y0.copy()
        _helpers.add_scaled_(y, x, alpha)
        if n > 300:     # (Fractions for the pieces' ends only: each piece starts a new call)
            idx = np.unique(np.r_[0:40, 8150:min(8230, n), n - 140:n])
        else:
            idx = np.arange(n)
        want = np.array([float(a * Fraction(float(x[i])) + Fraction(float(y0[i])))
                         for i in idx]).astype(dtype)
        assert np.array_equal(y[idx], want), (n, np.flatnonzero(y[idx] != want))


def test_a_broken_scipy_is_tried_once_and_the_update_still_happens(monkeypatch):
    import builtins
    real_import = builtins.__import__
    tries = []

    def broken(name, *args, **kwargs):
        if name.startswith("scipy"):
            tries.append(name)
            raise OSError("libopenblas.so: cannot open shared object file")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", broken)
    monkeypatch.setattr(_helpers, "_AXPY", None)
    p = tg.zeros(3, requires_grad=True)
    p.grad = tg.ones(3)
    opt = tg.optim.SGD([p], lr=0.5)
    opt.step()
    opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), [-1.0] * 3)
    assert len(tries) == 1 and _helpers._AXPY == {}


def test_add_scaled_of_an_unaligned_array_updates_it(path):
    buf = bytearray(4 * 6 + 1)
    y = np.frombuffer(buf, np.float32, count=6, offset=1)
    assert not y.flags.aligned
    y[...] = 1.0
    _helpers.add_scaled_(y, np.ones(6, np.float32), 2.0)
    np.testing.assert_array_equal(y, [3.0] * 6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_add_scaled_writes_into_a_strided_array(dtype, path):
    base = np.arange(24, dtype=dtype).reshape(4, 6)
    y = base[:, ::2]           # strided: neither BLAS nor the block loop can reshape it
    x = np.full(y.shape, 0.5, dtype)
    want = (y.astype(np.float64) + 2.0 * 0.5).astype(dtype)
    _helpers.add_scaled_(y, x, 2.0)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(base[:, 1::2], np.arange(24, dtype=dtype).reshape(4, 6)[:, 1::2])


def test_add_scaled_refuses_a_read_only_array_and_leaves_it(path):
    y = np.ones(10, np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _helpers.add_scaled_(y, np.ones(10, np.float32), 1.0)
    np.testing.assert_array_equal(y, np.ones(10, np.float32))


def test_add_scaled_of_an_empty_array_is_a_no_op(path):
    y = np.ones((0, 3), np.float32)
    _helpers.add_scaled_(y, np.ones((0, 3), np.float32), 1.0)
    assert y.shape == (0, 3)


def test_add_scaled_float16_computes_in_float32_and_rounds_once(path):
    rng = np.random.default_rng(1)
    y = rng.standard_normal(100).astype(np.float16)
    x = rng.standard_normal(100).astype(np.float16)
    want = (y.astype(np.float32) + x.astype(np.float32) * np.float32(np.float16(0.3))) \
        .astype(np.float16)
    _helpers.add_scaled_(y, x, 0.3)
    np.testing.assert_array_equal(y, want)




def test_sgd_of_a_non_contiguous_parameter_updates_it_in_place(path):
    w = tg.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    p = w.t().detach().requires_grad_()    # a transposed leaf: not C-contiguous
    p.grad = tg.ones(4, 3)
    tg.optim.SGD([p], lr=0.25).step()
    np.testing.assert_array_equal(w.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4) - 0.25)
    assert p._version == 1


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("layout", ["transposed parameter", "fortran gradient"])
def test_sgd_of_other_layouts_matches_torch_to_the_bit(layout, dtype, path):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    w0 = rng.standard_normal((30, 40)).astype(dtype)
    g0 = rng.standard_normal((40, 30) if layout == "transposed parameter" else (30, 40))

    def run(lib):
        if layout == "transposed parameter":
            p = lib.tensor(w0.copy()).t().detach().requires_grad_()
            p.grad = lib.tensor(g0.astype(dtype))
        else:
            p = lib.tensor(w0.copy(), requires_grad=True)
            p.grad = lib.from_numpy(np.asfortranarray(g0.astype(dtype)))
        lib.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01).step()
        p.grad = lib.tensor(g0.astype(dtype)) if layout == "transposed parameter" else p.grad
        lib.optim.SGD([p], lr=0.1).step()
        return p.detach().numpy().copy()

    _check(run(tg), run(torch), dtype, path)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_scale_is_torch_s_mul_by_a_number(dtype):
    rng = np.random.default_rng(2)
    y = rng.standard_normal(1000).astype(dtype)
    ours = y.copy()
    _helpers.scale_(ours, 0.9)
    want = (y.astype(np.float32) * np.float32(0.9)).astype(dtype) if dtype == "float16" \
        else y * np.dtype(dtype).type(0.9)
    np.testing.assert_array_equal(ours, want)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(ours, torch.from_numpy(y.copy()).mul_(0.9).numpy())
