"""Random sampling: Tensor.normal_/uniform_/bernoulli_/exponential_/geometric_/log_normal_/
cauchy_/random_, tapegrad.normal/bernoulli/multinomial/poisson, and nn.init's random fills.

Streams differ from torch's, so torch is only compared on shapes, dtypes, node names and the
exception types raised; values are checked by their statistics on large samples."""
import math
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import nn


@pytest.fixture(autouse=True)
def _seeded():
    """Every test starts from the same default-generator state, so statistics are stable."""
    state = tapegrad.get_rng_state()
    tapegrad.manual_seed(20240601)
    yield
    tapegrad.set_rng_state(state)


def _stats(t):
    a = t._data.astype(np.float64)
    return a.mean(), a.std()


# ---- in-place samplers: values ----------------------------------------------------------------
def test_normal_uniform_statistics_and_dtype():
    for dt in (tapegrad.float32, tapegrad.float64, tapegrad.float16):
        x = tapegrad.empty(200_000, dtype=dt)
        assert x.normal_(2.0, 3.0) is x and x.dtype is dt and x.shape == (200_000,)
        m, s = _stats(x)
        assert abs(m - 2.0) < 0.05 and abs(s - 3.0) < 0.05
        x.uniform_(-1.0, 3.0)
        a = x._data.astype(np.float64)
        assert a.min() >= -1.0 and a.max() < 3.0 and x.dtype is dt
        assert abs(a.mean() - 1.0) < 0.02 and abs(a.var() - 16 / 12) < 0.03
    x = tapegrad.empty(3).uniform_(**{"from": 5, "to": 5})
    assert x.tolist() == [5.0, 5.0, 5.0]


def test_other_inplace_distributions():
    n = 200_000
    x = tapegrad.empty(n, dtype=tapegrad.float64)
    x.bernoulli_(0.3)
    assert set(np.unique(x._data)) <= {0.0, 1.0} and abs(x._data.mean() - 0.3) < 0.01
    x.exponential_(2.0)
    assert x._data.min() >= 0 and abs(x._data.mean() - 0.5) < 0.01
    x.geometric_(0.25)
    assert x._data.min() >= 1 and abs(x._data.mean() - 4.0) < 0.05
    x.log_normal_(0.0, 0.5)
    assert x._data.min() > 0 and abs(np.log(x._data).std() - 0.5) < 0.01
    x.cauchy_(1.0, 2.0)
    assert abs(np.median(x._data) - 1.0) < 0.05
    q = np.quantile(x._data, [0.25, 0.75])
    np.testing.assert_allclose(q, [-1.0, 3.0], atol=0.1)
    p = tapegrad.tensor([0.0, 1.0, 0.5]).expand(n, 3).contiguous()
    y = tapegrad.empty(n, 3).bernoulli_(p)
    np.testing.assert_allclose(y._data.mean(0), [0.0, 1.0, 0.5], atol=0.01)
    b = tapegrad.empty(n, dtype=tapegrad.bool).bernoulli_(0.5)
    assert b.dtype is tapegrad.bool and abs(b._data.mean() - 0.5) < 0.01
    i = tapegrad.empty(10, dtype=tapegrad.int64).geometric_(0.5)
    assert i.dtype is tapegrad.int64 and (i._data >= 1).all()


def test_random_ranges():
    x = tapegrad.empty(100_000)
    x.random_(5)
    assert set(np.unique(x._data)) == {0, 1, 2, 3, 4}
    x.random_(-3, 2)
    assert set(np.unique(x._data)) == {-3, -2, -1, 0, 1}
    x.random_(to=3)
    assert set(np.unique(x._data)) == {0, 1, 2}
    x.random_()
    assert x._data.min() >= 0 and x._data.max() <= 2 ** 24 and x._data.max() > 2 ** 23
    u = tapegrad.empty(10_000, dtype=tapegrad.uint8).random_()
    assert u.dtype is tapegrad.uint8 and u._data.max() > 200
    b = tapegrad.empty(1000, dtype=tapegrad.bool).random_()
    assert b._data.any() and not b._data.all()
    h = tapegrad.empty(10_000, dtype=tapegrad.float16).random_()
    assert h._data.max() <= 2048
    big = tapegrad.empty(10, dtype=tapegrad.int64).random_()
    assert (big._data >= 0).all()
    with pytest.warns(UserWarning, match="out of bounds"):
        tapegrad.empty(3).random_(0, 2 ** 25)


# ---- functions --------------------------------------------------------------------------------
def test_normal_overloads():
    r = tapegrad.normal(tapegrad.zeros(2, 3), tapegrad.ones(3))
    assert r.shape == (2, 3) and r.dtype is tapegrad.float32
    assert tapegrad.normal(tapegrad.zeros(2, dtype=tapegrad.float64), 2.0).dtype is \
        tapegrad.float64
    assert tapegrad.normal(1.0, tapegrad.ones(4, 5)).shape == (4, 5)
    assert tapegrad.normal(tapegrad.zeros(4)).shape == (4,)
    r = tapegrad.normal(1.0, 2.0, (400, 500))
    assert r.dtype is tapegrad.float32
    m, s = _stats(r)
    assert abs(m - 1.0) < 0.02 and abs(s - 2.0) < 0.02
    assert tapegrad.normal(0, 1, size=(), dtype=tapegrad.float64).dtype is tapegrad.float64
    assert tapegrad.normal(0.0, 1.0, (2,), requires_grad=True).requires_grad
    mean = tapegrad.full((100_000,), 5.0)
    std = tapegrad.tensor([0.0, 1.0]).repeat(50_000)
    r = tapegrad.normal(mean, std)._data.reshape(-1, 2)
    assert (r[:, 0] == 5.0).all() and abs(r[:, 1].std() - 1.0) < 0.02
    out = tapegrad.empty(3)
    assert tapegrad.normal(0.0, 1.0, (3,), out=out) is out


def test_normal_records_zero_gradient():
    m = tapegrad.zeros(3, requires_grad=True)
    s = tapegrad.ones(3, requires_grad=True)
    for r, name in ((tapegrad.normal(m, s), "NormalBackward3"),
                    (tapegrad.normal(m, 1.0), "NormalBackward1"),
                    (tapegrad.normal(0.0, s), "NormalBackward2")):
        assert type(r.grad_fn).__name__ == name
        r.sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3


def test_bernoulli_and_poisson():
    p = tapegrad.full((200_000,), 0.2)
    r = tapegrad.bernoulli(p)
    assert r.dtype is tapegrad.float32 and abs(r._data.mean() - 0.2) < 0.01
    assert p.bernoulli().shape == p.shape
    r = tapegrad.bernoulli(tapegrad.zeros(100_000, dtype=tapegrad.int64), 0.7)
    assert r.dtype is tapegrad.int64 and abs(r._data.mean() - 0.7) < 0.01
    q = tapegrad.full((3,), 0.5, requires_grad=True)
    b = tapegrad.bernoulli(q)
    assert type(b.grad_fn).__name__ == "BernoulliBackward0"
    b.sum().backward()
    assert q.grad.tolist() == [0.0] * 3
    rates = tapegrad.tensor([0.0, 1.0, 10.0], dtype=tapegrad.float64).repeat(100_000) \
        .reshape(100_000, 3)
    s = tapegrad.poisson(rates)
    assert s.dtype is tapegrad.float64
    np.testing.assert_allclose(s._data.mean(0), [0.0, 1.0, 10.0], atol=0.05)
    np.testing.assert_allclose(s._data.var(0), [0.0, 1.0, 10.0], atol=0.2)
    r = tapegrad.full((2,), 3.0, requires_grad=True)
    assert type(tapegrad.poisson(r).grad_fn).__name__ == "PoissonBackward0"


def test_multinomial():
    w = tapegrad.tensor([1.0, 0.0, 3.0, 4.0])
    s = tapegrad.multinomial(w, 100_000, replacement=True)
    assert s.dtype is tapegrad.int64 and s.shape == (100_000,)
    freq = np.bincount(s._data, minlength=4) / 100_000
    np.testing.assert_allclose(freq, [0.125, 0.0, 0.375, 0.5], atol=0.01)
    s = w.multinomial(3)
    assert sorted(s.tolist()) == [0, 2, 3]
    rows = tapegrad.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    s = tapegrad.multinomial(rows, 1)
    assert s.shape == (2, 1) and s[1].item() == 2 and s[0].item() in (0, 1)
    # zero-weight categories come last without replacement
    assert tapegrad.multinomial(tapegrad.tensor([1.0, 0.0, 0.0]), 3)[0].item() == 0
    # first draw without replacement follows the weights
    first = [tapegrad.multinomial(w, 2)[0].item() for _ in range(4000)]
    freq = np.bincount(first, minlength=4) / 4000
    np.testing.assert_allclose(freq, [0.125, 0.0, 0.375, 0.5], atol=0.03)
    assert tapegrad.multinomial(tapegrad.ones(0, 3), 2).shape == (0, 2)
    assert not tapegrad.multinomial(tapegrad.ones(3, requires_grad=True), 1).requires_grad


def test_like_factories_exist():
    x = tapegrad.zeros(2, 3, dtype=tapegrad.float64)
    assert tapegrad.rand_like(x).dtype is tapegrad.float64
    assert tapegrad.randn_like(x).shape == (2, 3)
    assert tapegrad.randint_like(x, 3, 7).dtype is tapegrad.float64


# ---- reproducibility ---------------------------------------------------------------------------
_DRAWS = [
    lambda g: tapegrad.empty(6).normal_(generator=g),
    lambda g: tapegrad.empty(6).uniform_(generator=g),
    lambda g: tapegrad.empty(6).bernoulli_(0.5, generator=g),
    lambda g: tapegrad.empty(6).exponential_(generator=g),
    lambda g: tapegrad.empty(6).geometric_(0.3, generator=g),
    lambda g: tapegrad.empty(6).log_normal_(generator=g),
    lambda g: tapegrad.empty(6).cauchy_(generator=g),
    lambda g: tapegrad.empty(6).random_(0, 100, generator=g),
    lambda g: tapegrad.normal(tapegrad.zeros(6), 1.0, generator=g),
    lambda g: tapegrad.normal(0.0, 1.0, (6,), generator=g),
    lambda g: tapegrad.bernoulli(tapegrad.full((6,), 0.5), generator=g),
    lambda g: tapegrad.multinomial(tapegrad.ones(10), 5, generator=g),
    lambda g: tapegrad.multinomial(tapegrad.ones(10), 5, True, generator=g),
    lambda g: tapegrad.poisson(tapegrad.full((6,), 4.0), generator=g),
    lambda g: nn.init.trunc_normal_(tapegrad.empty(6), generator=g),
    lambda g: nn.init.trunc_normal_(tapegrad.empty(6), a=1.5, b=2.0, generator=g),
    lambda g: nn.init.orthogonal_(tapegrad.empty(3, 4), generator=g),
    lambda g: nn.init.sparse_(tapegrad.empty(4, 3), 0.5, generator=g),
    lambda g: nn.init.xavier_normal_(tapegrad.empty(3, 4), generator=g),
    lambda g: nn.init.kaiming_normal_(tapegrad.empty(3, 4), generator=g),
]


@pytest.mark.parametrize("k", range(len(_DRAWS)))
def test_reproducible(k):
    draw = _DRAWS[k]
    tapegrad.manual_seed(123)
    a = draw(None)._data.copy()
    tapegrad.manual_seed(123)
    b = draw(None)._data.copy()
    assert np.array_equal(a, b)
    g = tapegrad.Generator().manual_seed(5)
    c = draw(g)._data.copy()
    tapegrad.manual_seed(999)     # the default generator does not affect generator=
    g.manual_seed(5)
    assert np.array_equal(draw(g)._data, c)


# ---- in-place rules ---------------------------------------------------------------------------
_INPLACE = {
    "normal_": (lambda t: t.normal_(), "NormalBackward0"),
    "uniform_": (lambda t: t.uniform_(), "UniformBackward0"),
    "bernoulli_": (lambda t: t.bernoulli_(0.5), "BernoulliBackward2"),
    "bernoulli_t": (lambda t: t.bernoulli_(tapegrad.full((3,), 0.5)), "BernoulliBackward1"),
    "exponential_": (lambda t: t.exponential_(), "ExponentialBackward0"),
    "geometric_": (lambda t: t.geometric_(0.5), "GeometricBackward0"),
    "log_normal_": (lambda t: t.log_normal_(), "LogNormalBackward0"),
    "cauchy_": (lambda t: t.cauchy_(), "CauchyBackward0"),
    "random_": (lambda t: t.random_(), "RandomBackward2"),
    "random_to": (lambda t: t.random_(5), "RandomBackward1"),
    "random_from_to": (lambda t: t.random_(1, 5), "RandomBackward0"),
}


@pytest.mark.parametrize("name", sorted(_INPLACE))
def test_inplace_rules(name):
    f, node = _INPLACE[name]
    x = tapegrad.zeros(3)
    v = x._version
    assert f(x) is x and x._version == v + 1 and x.dtype is tapegrad.float32
    leaf = tapegrad.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        f(leaf)
    with tapegrad.no_grad():
        f(leaf)
    assert leaf.requires_grad and leaf.grad_fn is None and leaf._version == 1
    # a non-leaf gets torch's node, with a zero gradient
    w = tapegrad.ones(3, requires_grad=True)
    y = w.clone()
    f(y)
    assert type(y.grad_fn).__name__ == node
    (y * 2).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0, 0.0]
    # a graph that saved the old value sees the write
    a = tapegrad.ones(3, requires_grad=True)
    b = a * 1
    c = b * b
    f(b)
    with pytest.raises(RuntimeError):
        c.sum().backward()


def test_inplace_on_view_and_expanded():
    base = tapegrad.zeros(4, 3)
    base[1].normal_()
    assert base._data[1].any() and not base._data[0].any() and base._version == 1
    with pytest.raises(RuntimeError):
        tapegrad.zeros(3).expand(2, 3).uniform_()
    w = tapegrad.ones(4, 3, requires_grad=True)
    y = w * 1
    y[0].uniform_()
    assert type(y.grad_fn).__name__ == "CopySlices"
    y.sum().backward()
    np.testing.assert_array_equal(w.grad._data, np.r_[np.zeros((1, 3)), np.ones((3, 3))])


# ---- nn.init -----------------------------------------------------------------------------------
def test_trunc_normal_():
    t = nn.init.trunc_normal_(tapegrad.empty(300, 300), mean=0.5, std=1.0, a=-1.0, b=1.5)
    a = t._data
    assert t.dtype is tapegrad.float32 and a.min() >= -1.0 and a.max() <= 1.5
    # the mean of N(0.5, 1) truncated to [-1, 1.5]
    from math import erf, exp, pi, sqrt
    al, be = -1.5, 1.0
    z = (1 + erf(be / sqrt(2))) / 2 - (1 + erf(al / sqrt(2))) / 2
    phi = lambda x: exp(-x * x / 2) / sqrt(2 * pi)  # noqa: E731
    assert abs(a.mean() - (0.5 + (phi(al) - phi(be)) / z)) < 0.01
    t = nn.init.trunc_normal_(tapegrad.empty(10_000, dtype=tapegrad.float64), a=1.5, b=2.0)
    assert t._data.min() >= 1.5 and t._data.max() <= 2.0 and t._data.mean() < 1.75
    with pytest.warns(UserWarning, match="more than 2 std"):
        nn.init.trunc_normal_(tapegrad.empty(5), mean=10.0)
    p = nn.Parameter(tapegrad.zeros(4))
    nn.init.trunc_normal_(p, std=0.02)
    # a and b are absolute bounds, not multiples of std (as torch)
    assert p.requires_grad and p.grad_fn is None and np.abs(p._data).max() <= 2.0
    assert p._version == 1


def test_orthogonal_():
    for shape in ((5, 3), (3, 5), (4, 2, 3)):
        t = nn.init.orthogonal_(tapegrad.empty(*shape), gain=2.0)
        m = t._data.reshape(shape[0], -1).astype(np.float64)
        gram = m @ m.T if shape[0] <= m.shape[1] else m.T @ m
        np.testing.assert_allclose(gram, 4 * np.eye(gram.shape[0]), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        nn.init.orthogonal_(tapegrad.empty(3))


def test_sparse_dirac_eye_():
    t = nn.init.sparse_(tapegrad.empty(10, 6), sparsity=0.3)
    assert ((t._data == 0).sum(0) == 3).all()
    with pytest.raises(ValueError):
        nn.init.sparse_(tapegrad.empty(3), 0.5)
    w = nn.init.dirac_(tapegrad.empty(6, 3, 3, 3), groups=2)
    x = tapegrad.randn(1, 3, 5, 5)
    out = nn.functional.conv2d(x, w, padding=1)
    np.testing.assert_allclose(out._data[0, :3], x._data[0], atol=1e-6)
    assert w._data.sum() == 6
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.init.dirac_(tapegrad.empty(5, 3, 3), groups=2)
    with pytest.raises(ValueError, match="3, 4, or 5"):
        nn.init.dirac_(tapegrad.empty(5, 3))
    e = nn.init.eye_(tapegrad.empty(2, 3))
    assert e.tolist() == [[1, 0, 0], [0, 1, 0]]


def test_calculate_gain_and_deprecated_aliases():
    g = nn.init.calculate_gain
    for name in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d", "sigmoid"):
        assert g(name) == 1
    assert g("tanh") == 5 / 3 and g("relu") == math.sqrt(2) and g("selu") == 0.75
    assert g("leaky_relu") == math.sqrt(2 / (1 + 0.01 ** 2))
    assert g("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError):
        g("leaky_relu", True)
    with pytest.raises(ValueError):
        g("gelu")
    with pytest.warns(FutureWarning):
        nn.init.normal(tapegrad.empty(3))
    for name in ("uniform", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                 "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"):
        assert callable(getattr(nn.init, name))


def test_init_int_tensor_raises_like_torch():
    with pytest.raises(NotImplementedError):
        nn.init.uniform_(tapegrad.zeros(3, dtype=tapegrad.int64))
    with pytest.raises(NotImplementedError):
        nn.init.normal_(tapegrad.zeros(3, dtype=tapegrad.int64))


# ---- exception types compared with torch -------------------------------------------------------
def _errors(L):
    z, o, f = L.zeros, L.ones, L.full
    i64 = L.int64
    return {
        "normal__neg_std": lambda: z(3).normal_(0, -1),
        "normal_nan_std": lambda: z(3).normal_(0, float("nan")),
        "normal_int": lambda: z(3, dtype=i64).normal_(),
        "normal__str": lambda: z(3).normal_("a"),
        "uniform_from_gt_to": lambda: z(3).uniform_(2, 1),
        "uniform_int": lambda: z(3, dtype=i64).uniform_(),
        "uniform_inf": lambda: z(3).uniform_(0, float("inf")),
        "uniform_overflow": lambda: z(3).uniform_(-3e38, 3e38),
        "uniform_3_positional": lambda: z(3).uniform_(0, 1, 2),
        "bernoulli_p_gt_1": lambda: z(3).bernoulli_(1.5),
        "bernoulli_tensor_p_gt_1": lambda: z(3).bernoulli_(f((3,), 1.5)),
        "bernoulli_tensor_bad_shape": lambda: z(3, 2).bernoulli_(f((3,), 0.5)),
        "bernoulli_int_p": lambda: z(3).bernoulli_(o(3, dtype=i64)),
        "exponential_zero": lambda: z(3).exponential_(0),
        "exponential_int": lambda: z(3, dtype=i64).exponential_(),
        "geometric_p0": lambda: z(3).geometric_(0),
        "geometric_p1": lambda: z(3).geometric_(1),
        "geometric_bool": lambda: z(3, dtype=L.bool).geometric_(0.5),
        "log_normal_std0": lambda: z(3).log_normal_(0, 0),
        "log_normal_int": lambda: z(3, dtype=i64).log_normal_(),
        "cauchy_int": lambda: z(3, dtype=i64).cauchy_(),
        "cauchy_sigma0": lambda: z(3).cauchy_(0, 0),
        "random_from_ge_to": lambda: z(3).random_(3, 2),
        "random_neg_to": lambda: z(3).random_(-1),
        "random_u8_300": lambda: z(3, dtype=L.uint8).random_(0, 300),
        "random_u8_neg": lambda: z(3, dtype=L.uint8).random_(-5, 0),
        "random_bool_3": lambda: z(3, dtype=L.bool).random_(0, 3),
        "random_f16_big": lambda: z(3, dtype=L.float16).random_(0, 70000),
        "random_float_from": lambda: z(3).random_(1.5, 3),
        "normal_tt_nbcast": lambda: L.normal(z(2, 3), o(2)),
        "normal_ff_nosize": lambda: L.normal(1.0, 2.0),
        "normal_ff_int_size": lambda: L.normal(0.0, 1.0, 3),
        "normal_str": lambda: L.normal("a", 1.0, (2,)),
        "normal_tensor_size": lambda: L.normal(z(2), 1.0, (2,)),
        "normal_neg_std": lambda: L.normal(z(2), -1.0),
        "normal_neg_std_tensor": lambda: L.normal(z(2), -o(2)),
        "normal_ff_neg": lambda: L.normal(0.0, -1.0, (2,)),
        "normal_int_mean": lambda: L.normal(z(2, dtype=i64), 1.0),
        "normal_int_std": lambda: L.normal(0.0, o(2, dtype=i64)),
        "normal_int_dtype": lambda: L.normal(1.0, 2.0, (2,), dtype=i64),
        "bernoulli_p_gt_1_fn": lambda: L.bernoulli(z(2, 3), 1.5),
        "bernoulli_input_gt_1": lambda: L.bernoulli(f((2,), 1.5)),
        "bernoulli_nan": lambda: L.bernoulli(L.tensor([float("nan")])),
        "bernoulli_int": lambda: L.bernoulli(o(2, dtype=i64)),
        "bernoulli_bool": lambda: L.bernoulli(o(2, dtype=L.bool)),
        "bernoulli_notensor": lambda: L.bernoulli(0.5),
        "bernoulli_tensor_p": lambda: L.bernoulli(f((2,), 0.5), f((2,), 0.5)),
        "poisson_neg": lambda: L.poisson(f((2,), -3.0)),
        "poisson_nan": lambda: L.poisson(L.tensor([float("nan")])),
        "poisson_int": lambda: L.poisson(f((2,), 3)),
        "poisson_notensor": lambda: L.poisson(3.0),
        "mn_0d": lambda: L.multinomial(L.tensor(1.0), 1),
        "mn_3d": lambda: L.multinomial(o(2, 2, 2), 1),
        "mn_too_many": lambda: L.multinomial(o(4), 5),
        "mn_zero_samples": lambda: L.multinomial(o(4), 0),
        "mn_neg_samples": lambda: L.multinomial(o(4), -1),
        "mn_neg_prob": lambda: L.multinomial(L.tensor([1.0, -1.0]), 1),
        "mn_zero_sum": lambda: L.multinomial(z(3), 1),
        "mn_zero_row": lambda: L.multinomial(L.tensor([[1.0, 1.0], [0.0, 0.0]]), 1),
        "mn_inf": lambda: L.multinomial(L.tensor([1.0, float("inf")]), 1),
        "mn_nan": lambda: L.multinomial(L.tensor([1.0, float("nan")]), 1),
        "mn_int": lambda: L.multinomial(o(3, dtype=i64), 1),
        "mn_bool": lambda: L.multinomial(o(3, dtype=L.bool), 1),
        "mn_empty": lambda: L.multinomial(o(0), 1),
        "mn_float_n": lambda: L.multinomial(o(3), 1.0),
        "mn_bool_n": lambda: L.multinomial(o(3), True),
        "leaf_normal_": lambda: o(3, requires_grad=True).normal_(),
        "leaf_random_": lambda: o(3, requires_grad=True).random_(3),
        "init_orthogonal_1d": lambda: L.nn.init.orthogonal_(z(3)),
        "init_sparse_3d": lambda: L.nn.init.sparse_(z(2, 2, 2), 0.5),
        "init_dirac_2d": lambda: L.nn.init.dirac_(z(2, 2)),
        "init_dirac_groups": lambda: L.nn.init.dirac_(z(5, 2, 3), 2),
        "init_gain": lambda: L.nn.init.calculate_gain("gelu"),
        "init_uniform_int": lambda: L.nn.init.uniform_(z(3, dtype=i64)),
        "init_normal_int": lambda: L.nn.init.normal_(z(3, dtype=i64)),
        "init_trunc_normal_std0": lambda: L.nn.init.trunc_normal_(z(3), std=0.0),
    }


def _raised(f):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f()
    except Exception as e:  # noqa: BLE001
        return e
    return None


@pytest.mark.parametrize("case", sorted(_errors(tapegrad)))
def test_exception_types_match_torch(case):
    torch = pytest.importorskip("torch")
    ours = _raised(_errors(tapegrad)[case])
    ref = _raised(_errors(torch)[case])
    assert ref is not None, f"torch does not raise for {case}"
    assert ours is not None, f"tapegrad does not raise for {case} (torch: {ref!r})"
    assert type(ours) is type(ref), f"{case}: tapegrad {ours!r}, torch {ref!r}"


def _shape_cases(L):
    return {
        "normal_tt": lambda: L.normal(L.zeros(2, 3), L.ones(3)),
        "normal_tf_f64": lambda: L.normal(L.zeros(2, dtype=L.float64), 2.0),
        "normal_ft_f16": lambda: L.normal(0.0, L.ones(2, dtype=L.float16)),
        "normal_tt_f64_f32": lambda: L.normal(L.zeros(2, dtype=L.float64), L.ones(2)),
        "normal_tt_f32_f16": lambda: L.normal(L.zeros(2), L.ones(2, dtype=L.float16)),
        "normal_ff": lambda: L.normal(0, 1, (2, 3)),
        "normal_ff_0d": lambda: L.normal(0.0, 1.0, ()),
        "bernoulli": lambda: L.bernoulli(L.full((2, 2), 0.5, dtype=L.float64)),
        "bernoulli_int_p": lambda: L.bernoulli(L.zeros(3, dtype=L.int64), 0.5),
        "bernoulli_f16": lambda: L.bernoulli(L.full((2,), 0.5, dtype=L.float16)),
        "poisson_f16": lambda: L.poisson(L.full((2,), 3.0, dtype=L.float16)),
        "mn_1d": lambda: L.multinomial(L.ones(4), 2),
        "mn_2d": lambda: L.multinomial(L.ones(3, 4, dtype=L.float64), 5, True),
        "mn_rows0": lambda: L.multinomial(L.ones(0, 3), 2),
        "mn_tensor_n": lambda: L.multinomial(L.ones(3), L.tensor(2)),
        "geometric_int": lambda: L.zeros(3, dtype=L.int64).geometric_(0.5),
        "bernoulli_bool": lambda: L.zeros(3, dtype=L.bool).bernoulli_(0.5),
        "random_u8": lambda: L.zeros(3, dtype=L.uint8).random_(),
        "exponential_f16": lambda: L.zeros(3, dtype=L.float16).exponential_(),
        "bernoulli_bcast": lambda: L.zeros(3, 2).bernoulli_(L.full((2,), 0.5)),
        "orthogonal": lambda: L.nn.init.orthogonal_(L.empty(2, 3, 4)),
        "trunc_normal": lambda: L.nn.init.trunc_normal_(L.empty(5, dtype=L.float64)),
    }


@pytest.mark.parametrize("case", sorted(_shape_cases(tapegrad)))
def test_shapes_and_dtypes_match_torch(case):
    torch = pytest.importorskip("torch")
    ours = _shape_cases(tapegrad)[case]()
    ref = _shape_cases(torch)[case]()
    assert tuple(ours.shape) == tuple(ref.shape)
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]


@pytest.mark.parametrize("name", sorted(_INPLACE))
def test_node_names_match_torch(name):
    torch = pytest.importorskip("torch")
    f, node = _INPLACE[name]
    f_torch = {
        "bernoulli_t": lambda t: t.bernoulli_(torch.full((3,), 0.5)),
    }.get(name, f)
    y = torch.ones(3, requires_grad=True).clone()
    f_torch(y)
    assert y.grad_fn.name() == node
