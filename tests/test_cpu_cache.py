"""tapegrad.cpu: torch.cpu's queries, and the cache of large result buffers (a result of 1 MiB or
more reuses the buffer of a dead one). The cache changes no value, dtype, shape or stride; a
buffer someone still holds is never handed out again."""
import gc
import threading

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd.graph import EXACT_REFCOUNTS, sole_holder
from tapegrad.cpu import MIN_BYTES, _free, out_like

needs_cache = pytest.mark.skipif(not EXACT_REFCOUNTS,
                                 reason="results are cached on CPython 3.11-3.13 with the GIL")
SHAPE = (512, 512)      # float32: 1 MiB, the smallest cached size


@pytest.fixture(autouse=True)
def fresh_cache():
    limit = tg.cpu.cache_limit()
    tg.cpu.empty_cache()
    yield
    tg.cpu.set_cache_limit(limit)
    tg.cpu.empty_cache()


def _big(seed=0, dtype=np.float32, shape=SHAPE):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _buffer(t):
    """The cache buffer under tensor ``t``'s array (None: NumPy's own memory)."""
    return t._data.base


def test_cpu_queries_match_torch(torch):
    assert tg.cpu.is_available() is torch.cpu.is_available() is True
    assert tg.cpu.device_count() == torch.cpu.device_count() == 1
    assert tg.cpu.current_device() == torch.cpu.current_device() == "cpu"
    assert tg.cpu.synchronize() is None and torch.cpu.synchronize() is None


def test_min_bytes_is_one_mebibyte():
    assert MIN_BYTES == 1 << 20
    assert SHAPE[0] * SHAPE[1] * 4 == MIN_BYTES


@needs_cache
def test_a_dead_result_buffer_is_reused():
    x = tg.tensor(_big())
    y = x.exp()
    buf = _buffer(y)
    assert buf is not None and buf.dtype == np.uint8 and buf.nbytes == MIN_BYTES
    addr = y._data.__array_interface__["data"][0]
    del buf
    assert tg.cpu.cached_memory() == 0
    del y
    assert tg.cpu.cached_memory() == MIN_BYTES
    z = x.tanh()
    assert z._data.__array_interface__["data"][0] == addr
    assert tg.cpu.cached_memory() == 0
    np.testing.assert_array_equal(z.numpy(), np.tanh(x.numpy()))


@needs_cache
def test_small_and_strided_results_come_from_numpy():
    small = tg.tensor(_big(shape=(511, 512))).exp()     # one row under 1 MiB
    assert _buffer(small) is None
    xt = tg.tensor(_big()).t()
    y = xt.exp()    # NumPy's order follows the input's, as torch's strides do
    assert _buffer(y) is None
    assert y.stride() == xt.stride() == (1, 512)


@needs_cache
def test_a_buffer_someone_holds_is_not_handed_out():
    x = tg.tensor(_big())
    y = x.exp()
    kept = y.numpy()                # the user's array: the same memory
    base = _buffer(y)               # and its buffer, taken by hand
    expected = kept.copy()
    del y, kept
    gc.collect()
    assert tg.cpu.cached_memory() == 0      # base is held: the buffer stays out of the cache
    for _ in range(3):
        x.tanh()
    np.testing.assert_array_equal(base.view(np.float32).reshape(SHAPE), expected)

    v = x.exp()[::2]     # a view keeps its base tensor's buffer
    gc.collect()
    assert tg.cpu.cached_memory() == 0
    expected = v.numpy().copy()
    x.tanh()
    np.testing.assert_array_equal(v.numpy(), expected)


@needs_cache
@pytest.mark.parametrize("name, fn", [
    ("add", lambda a, b: a + b), ("add number", lambda a, b: a + 0.5),
    ("sub", lambda a, b: a - b), ("sub number", lambda a, b: a - 0.5),
    ("mul", lambda a, b: a * b), ("mul number", lambda a, b: a * 1.5),
    ("div", lambda a, b: a / b), ("div number", lambda a, b: a / 3.0),
    ("neg", lambda a, b: -a), ("exp", lambda a, b: a.exp()), ("log", lambda a, b: a.abs().log()),
    ("tanh", lambda a, b: a.tanh()), ("sigmoid", lambda a, b: a.sigmoid()),
    ("relu", lambda a, b: a.relu()),
    ("sqrt", lambda a, b: a.abs().sqrt()), ("rsqrt", lambda a, b: a.abs().rsqrt()),
    ("abs", lambda a, b: a.abs()), ("sin", lambda a, b: a.sin()), ("cos", lambda a, b: a.cos()),
    ("tan", lambda a, b: a.tan()), ("asinh", lambda a, b: a.asinh()),
    ("log2", lambda a, b: a.abs().log2()), ("reciprocal", lambda a, b: a.reciprocal()),
    ("pow", lambda a, b: a ** 3), ("square", lambda a, b: a.square()),
    ("log1p", lambda a, b: a.abs().log1p()), ("expm1", lambda a, b: a.expm1()),
    ("clamp", lambda a, b: a.clamp(-0.5, 0.5)), ("clamp max", lambda a, b: a.clamp(max=0.5)),
    ("maximum", lambda a, b: tg.maximum(a, b)), ("minimum", lambda a, b: tg.minimum(a, b)),
    ("sign", lambda a, b: a.sign()),
])
def test_covered_ops_use_the_cache(name, fn):
    a, b = tg.tensor(_big(1)), tg.tensor(_big(2))
    out = fn(a, b)
    assert _buffer(out) is not None, name
    assert out.dtype == tg.float32 and out.shape == SHAPE and out.stride() == (512, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_match_torch(torch, dtype):
    """The W4 kind of chain on cached buffers, through backward and a second derivative: the
    same values as torch (and as with the cache off)."""
    an, bn = _big(3, dtype), _big(4, dtype)

    def run(lib):
        a = lib.tensor(an, requires_grad=True)
        b = lib.tensor(bn, requires_grad=True)
        c = (a * b + a).tanh() - b
        c = (c * 0.5).exp() * a
        c = (c.sigmoid() / (b * b + 1.0)).relu() - (-a).exp().log1p()
        g, = lib.autograd.grad(c.sum(), a, create_graph=True)
        (g * g).sum().backward()
        return c.detach().numpy(), g.detach().numpy(), a.grad.numpy(), b.grad.numpy()

    ours = run(tg)
    tg.cpu.set_cache_limit(0)
    plain = run(tg)
    theirs = run(torch)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for mine, off, ref in zip(ours, plain, theirs):
        np.testing.assert_array_equal(mine, off)
        np.testing.assert_allclose(mine, ref, rtol=tol, atol=tol)


# (name, function, whether x must be positive): the ops the cache covers beyond W4's, each with
# the ops of its backward
MORE_OPS = [
    ("sqrt", lambda lib, x, y: x.sqrt(), True), ("rsqrt", lambda lib, x, y: x.rsqrt(), True),
    ("abs", lambda lib, x, y: x.abs(), False), ("sin", lambda lib, x, y: x.sin(), False),
    ("cos", lambda lib, x, y: x.cos(), False), ("tan", lambda lib, x, y: x.tan(), False),
    ("atan", lambda lib, x, y: x.atan(), False), ("log10", lambda lib, x, y: x.log10(), True),
    ("reciprocal", lambda lib, x, y: x.reciprocal(), True),
    ("pow", lambda lib, x, y: x ** 3, False), ("pow float", lambda lib, x, y: x ** 1.5, True),
    ("log1p", lambda lib, x, y: x.log1p(), True), ("expm1", lambda lib, x, y: x.expm1(), False),
    ("clamp", lambda lib, x, y: x.clamp(-0.5, 0.5), False),
    ("clamp min", lambda lib, x, y: x.clamp(min=-0.5), False),
    ("clamp max", lambda lib, x, y: x.clamp(max=0.5), False),
    ("maximum", lambda lib, x, y: lib.maximum(x, y), False),
    ("minimum", lambda lib, x, y: lib.minimum(x, y), False),
    ("maximum 0-d", lambda lib, x, y: lib.maximum(x, y[0, 0]), False),
    ("sign", lambda lib, x, y: x.sign() * x, False),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, fn, positive", MORE_OPS, ids=[m[0] for m in MORE_OPS])
def test_more_ops_values_gradients_and_strides_match_torch(torch, name, fn, positive, dtype):
    """Each op the cache covers beyond W4's: a C-ordered input (cached result) and a transposed
    one (NumPy's own, in the input's order), through backward and a second derivative: the
    values bit for bit as with the cache off, torch's within rounding, and torch's strides."""
    xn, yn = _big(5, dtype), _big(6, dtype)
    if positive:
        xn = np.abs(xn) + 0.25

    def run(lib, transposed):
        # (both transposed: tapegrad gives a binary op of mixed layouts C order, unlike torch)
        x = lib.tensor(xn.T.copy() if transposed else xn, requires_grad=True)
        y = lib.tensor(yn.T.copy() if transposed else yn, requires_grad=True)
        out = fn(lib, x.t(), y.t()) if transposed else fn(lib, x, y)
        g, = lib.autograd.grad((out * out).sum(), x, create_graph=True)
        (g * g).sum().backward()
        grad_y = None if y.grad is None else y.grad.numpy()
        return (out.stride(), out.detach().numpy(), g.detach().numpy(), x.grad.numpy(), grad_y)

    for transposed in (False, True):
        ours = run(tg, transposed)
        tg.cpu.set_cache_limit(0)
        plain = run(tg, transposed)
        tg.cpu.set_cache_limit(256 << 20)
        theirs = run(torch, transposed)
        assert ours[0] == plain[0] == theirs[0], (name, transposed)
        tol = 2e-5 if dtype == np.float32 else 1e-12
        for mine, off, ref in zip(ours[1:], plain[1:], theirs[1:]):
            assert (mine is None) == (off is None) == (ref is None), name
            if mine is not None:
                np.testing.assert_array_equal(mine, off)
                np.testing.assert_allclose(mine, ref, rtol=tol, atol=tol)


def test_clamp_of_an_integer_tensor_by_float_bounds_matches_torch(torch):
    """Clamp writes its upper bound into the lower bound's result, or into x's promoted copy
    (an integer x with a float bound), never into x itself."""
    xn = np.arange(-(1 << 18), 1 << 18, dtype=np.int32).reshape(512, 1024)
    for kw in ({"min": -3.5, "max": 2.5}, {"max": 2.5}, {"min": -3.5}, {"max": 7}):
        x, xt = tg.tensor(xn), torch.tensor(xn)
        got, want = x.clamp(**kw), xt.clamp(**kw)
        assert got.dtype.__repr__() == repr(want.dtype).replace("torch", "tapegrad"), kw
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        np.testing.assert_array_equal(x.numpy(), xn)    # x unchanged


@needs_cache
def test_a_cached_result_may_be_written_in_place_by_backward():
    """The in-place paths (sole_holder) treat a cached result as an array of its own, and refuse
    it once another holder appears. (References to t: the local, sole_holder's parameter,
    getrefcount's argument.)"""
    t = tg.tensor(_big()).exp()
    assert _buffer(t) is not None
    dt = t._data.dtype
    # (each result is named before its assert: pytest's rewritten asserts hold what they show)
    alone = sole_holder(t, SHAPE, dt, 3)
    assert alone
    other = t._data[:1]     # another view of the same buffer
    shared = sole_holder(t, SHAPE, dt, 3)
    assert not shared
    del other
    base = _buffer(t)
    shared = sole_holder(t, SHAPE, dt, 3)
    assert not shared
    del base
    alone = sole_holder(t, SHAPE, dt, 3)
    assert alone


@needs_cache
def test_limit_and_empty_cache():
    x = tg.tensor(_big())
    ys = [x.exp() for _ in range(3)]
    del ys
    assert tg.cpu.cached_memory() == 3 * MIN_BYTES
    tg.cpu.set_cache_limit(2 * MIN_BYTES)
    assert tg.cpu.cache_limit() == 2 * MIN_BYTES
    assert tg.cpu.cached_memory() == 2 * MIN_BYTES
    ys = [x.exp() for _ in range(4)]    # two from the cache, two new
    assert tg.cpu.cached_memory() == 0
    del ys
    assert tg.cpu.cached_memory() == 2 * MIN_BYTES   # the other two are freed
    tg.cpu.empty_cache()
    assert tg.cpu.cached_memory() == 0
    tg.cpu.set_cache_limit(0)
    y = x.exp()
    assert _buffer(y) is None and out_like(x._data) is None
    del y
    assert tg.cpu.cached_memory() == 0


def test_set_cache_limit_rejects_bad_values():
    with pytest.raises(TypeError, match=r"set_cache_limit\(\): nbytes must be an int, got float"):
        tg.cpu.set_cache_limit(1.5)
    with pytest.raises(TypeError, match="got bool"):
        tg.cpu.set_cache_limit(True)
    with pytest.raises(ValueError, match=r"set_cache_limit\(\): nbytes must be >= 0, got -1"):
        tg.cpu.set_cache_limit(-1)
    limit = tg.cpu.cache_limit()
    assert limit == ((1 << 28) if EXACT_REFCOUNTS else 0)    # (unchanged by the refusals)


@pytest.mark.skipif(EXACT_REFCOUNTS, reason="this Python caches")
def test_no_cache_where_reference_counts_differ():
    assert tg.cpu.cache_limit() == 0
    assert _buffer(tg.tensor(_big()).exp()) is None
    with pytest.raises(RuntimeError, match="cannot cache results"):
        tg.cpu.set_cache_limit(1 << 20)
    tg.cpu.set_cache_limit(0)


@needs_cache
def test_results_dying_in_threads_keep_the_count():
    x = tg.tensor(_big())

    def work():
        for _ in range(40):
            y = x.exp()
            z = y.tanh() * 2.0
            del y, z

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    idle = sum(b.nbytes for buffers in _free.values() for b in buffers)
    assert 0 < idle == tg.cpu.cached_memory() <= tg.cpu.cache_limit()


@needs_cache
def test_lowering_the_limit_skips_a_size_whose_buffers_were_all_taken():
    """out_like leaves an emptied size's list in the cache: set_cache_limit popped from it
    (IndexError), leaving the limit set and the buffers held. (Found by a breaker.)"""
    x = tg.tensor(_big())
    x2 = tg.tensor(_big(shape=(1024, 512)))
    y = x.exp()
    del y
    y = x.exp()     # the 1 MiB buffer taken back: its size's list is now empty
    z = x2.exp()
    del z
    assert tg.cpu.cached_memory() == 2 * MIN_BYTES
    tg.cpu.set_cache_limit(MIN_BYTES)
    assert tg.cpu.cached_memory() == 0
    del y
    assert tg.cpu.cached_memory() == MIN_BYTES
    tg.cpu.set_cache_limit(0)
    assert tg.cpu.cached_memory() == 0 and tg.cpu.cache_limit() == 0


def _shared_rows_backward(lib, from_numpy):
    """x.grad through relu, where the gradient reaching relu is a writeable (512, 512) view
    whose rows all are one 512-float buffer (stride 0) and whose base only it holds."""
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return from_numpy(np.ndarray((512, 512), np.float32, np.ones(512, np.float32), 0,
                                         (0, 4)))
    x = lib.linspace(-1, 1, 512 * 512).reshape(512, 512).requires_grad_()
    F.apply(x.relu()).sum().backward()
    return x.grad.numpy()


def test_a_view_whose_elements_share_memory_is_not_written_in_place():
    """relu's backward wrote into such a gradient, giving every row the last row's result.
    (Found by a breaker.)"""
    x = np.linspace(-1, 1, 512 * 512, dtype=np.float32).reshape(512, 512)
    np.testing.assert_array_equal(_shared_rows_backward(tg, tg.from_numpy),
                                  (x > 0).astype(np.float32))
    t = tg.from_numpy(np.ndarray((4, 4), np.float32, np.ones(4, np.float32), 0, (0, 4)))
    shared = sole_holder(t, None, None, 3)
    assert not shared


def test_a_view_whose_elements_share_memory_matches_torch(torch):
    np.testing.assert_array_equal(_shared_rows_backward(tg, tg.from_numpy),
                                  _shared_rows_backward(torch, torch.from_numpy))


@needs_cache
def test_relu_of_a_large_temporary_takes_a_cached_result():
    """A temporary's relu writes over the temporary under 1 MiB (ReluOver), and from 1 MiB takes
    a result from the cache (written over, the temporary's buffer lived until backward, and
    W5's step faulted its memory in again: benchmarks/README.md)."""
    from tapegrad.ops.pointwise import Relu, ReluOver
    x = tg.tensor(_big(), requires_grad=True)
    small = tg.nn.functional.relu(x[:256] * 2.0)     # 512 KiB
    large = tg.nn.functional.relu(x * 2.0)
    assert type(small.grad_fn)._forward_cls is ReluOver and _buffer(small) is None
    assert type(large.grad_fn)._forward_cls is Relu and _buffer(large) is not None
    np.testing.assert_array_equal(large.detach().numpy(), np.maximum(x.detach().numpy() * 2, 0))


@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("n", [8, 1024])
def test_bool_pow_bool_matches_torch(torch, n, cache):
    """bool ** bool is bool, as torch's (NumPy computes it in int8). With the cache on, a 1 MiB
    bool tensor raised NumPy's casting error instead. (Found by a breaker.)"""
    if not cache:
        tg.cpu.set_cache_limit(0)
    xn = np.arange(n * n).reshape(n, n) % 3 == 0
    for e in (True, False):
        got, want = tg.tensor(xn).pow(e), torch.tensor(xn).pow(e)
        assert str(got.dtype) == str(want.dtype).replace("torch", "tapegrad") == "tapegrad.bool"
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("n", [8, 1024])
def test_clamp_by_numpy_scalars_matches_torch(torch, n, cache):
    """A NumPy scalar bound counts as the Python number it holds, as in torch: float32 stays
    float32 under np.float64(0.1), int8 under np.int64(3), and np.int64(300) is refused for int8.
    The result's dtype had followed the scalar's (and, with the cache, the input's size).
    (Found by a breaker.)"""
    if not cache:
        tg.cpu.set_cache_limit(0)
    x, xt = tg.ones(n, n), torch.ones(n, n)
    i8, i8t = tg.ones(n, n, dtype=tg.int8), torch.ones(n, n, dtype=torch.int8)
    h, ht = tg.ones(n, n, dtype=tg.float16), torch.ones(n, n, dtype=torch.float16)
    pairs = [(x.clamp(min=np.float64(0.1), max=np.float64(0.5)),
              xt.clamp(min=np.float64(0.1), max=np.float64(0.5))),
             (i8.clamp_min(np.int64(3)), i8t.clamp_min(np.int64(3))),
             (i8.clamp_max(np.int64(-3)), i8t.clamp_max(np.int64(-3))),
             (h.clamp(np.float32(0.5)), ht.clamp(np.float32(0.5))),
             (x.clamp(np.bool_(True)), xt.clamp(np.bool_(True)))]
    for got, want in pairs:
        assert str(got.dtype) == str(want.dtype).replace("torch", "tapegrad")
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(RuntimeError, match="int8"):
        i8.clamp(np.int64(300))
    with pytest.raises(RuntimeError, match="int8_t"):
        i8t.clamp(np.int64(300))
    y = tg.ones(n, n)
    y.clamp_(np.float64(0.25), np.float64(0.5))
    assert y.dtype == tg.float32 and y[0, 0].item() == 0.5
