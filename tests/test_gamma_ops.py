"""lgamma, digamma, polygamma and mvlgamma beyond the op database: the NumPy kernels (SciPy made
unimportable) against torch and against mpmath, special values at the poles and infinities in
float64 on both paths, bad input (exception types against torch, messages naming the op), the
in-place surface and the graphs of the double backward. Tests taking the ``torch`` fixture skip
cleanly without torch; the others do not import it."""
import sys
import warnings

import numpy as np
import pytest
from torch_compare import raises_as_torch

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.ops import gamma as G
from tapegrad.testing import make_tensors, op_db_gamma

_NAN, _INF = float("nan"), float("inf")


def _no_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.special", None)


@pytest.mark.parametrize("kernel", ["_lgamma_numpy", "_digamma_numpy", "_zeta_numpy"])
def test_fallback_is_used_without_scipy(monkeypatch, kernel):
    calls = []
    real = getattr(G, kernel)
    monkeypatch.setattr(G, kernel, lambda *a: calls.append(1) or real(*a))
    _no_scipy(monkeypatch)
    x = tg.tensor([0.7, 2.5])
    tg.lgamma(x), tg.digamma(x), tg.polygamma(1, x), tg.polygamma(3, x)
    assert calls


# ---- the op database's samples on the NumPy path ------------------------------------------------
_ROWS = {r.name: r for r in op_db_gamma.rows}
_CASES = [(name, i) for name, r in _ROWS.items() for i in range(len(r.sample_inputs()))]


def _run(fn, sample, lib, leaves=None):
    inp = make_tensors(sample.input, lib, leaves is not None, leaves)
    args = make_tensors(sample.args, lib, leaves is not None, leaves)
    kwargs = make_tensors(sample.kwargs, lib, leaves is not None, leaves)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(inp, *args, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name,i", _CASES, ids=[f"{n}-{i}" for n, i in _CASES])
def test_numpy_path_matches_torch_on_the_op_db_samples(torch, monkeypatch, name, i, dtype):
    _no_scipy(monkeypatch)
    row = _ROWS[name]
    sample = row.sample_inputs(dtype)[i]
    ours_leaves, ref_leaves = [], []
    out = _run(row.get_op(), sample, tg, ours_leaves)
    ref = _run(row.get_torch_op(torch), sample, torch, ref_leaves)
    assert str(out.dtype).rpartition(".")[2] == str(ref.dtype).rpartition(".")[2]
    # (torch.testing's tolerances for the result's dtype: an integer sample gives float32)
    rtol, atol = (1e-7, 1e-7) if ref.dtype == torch.float64 else (1.3e-6, 1e-5)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)
    if ours_leaves and out.numel():
        cot = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)).astype(dtype)
        (out * tg.from_numpy(cot)).sum().backward()
        (ref * torch.from_numpy(cot)).sum().backward()
        for a, b in zip(ours_leaves, ref_leaves):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol,
                                       equal_nan=True)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma", "mvlgamma"])
def test_numpy_path_gradcheck_and_gradgradcheck(monkeypatch, name):
    _no_scipy(monkeypatch)
    x = tg.tensor([0.7, 1.5, 3.2, -0.4, -2.6], dtype=tg.float64, requires_grad=True)
    fn = {"lgamma": tg.lgamma, "digamma": tg.digamma,
          "polygamma": lambda t: tg.polygamma(2, t), "mvlgamma": lambda t: tg.mvlgamma(t + 3, 3)}
    assert gradcheck(fn[name], (x,)) and gradgradcheck(fn[name], (x,))


# ---- grids against torch, float64, both paths ---------------------------------------------------
_POS = np.concatenate([np.linspace(1e-3, 30, 3001), np.logspace(-200, 200, 401),
                       1 + np.linspace(-1e-3, 1e-3, 101), 2 + np.linspace(-1e-3, 1e-3, 101)])
_NEG = -np.linspace(0.01, 20, 2000) + 0.0037   # (no integer among them)


def _close(ours, ref, rtol, atol=0.0):
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol, equal_nan=True)


def test_lgamma_grid_matches_torch(torch, kernel_path):
    for x, atol in ((_POS, 0.0), (_NEG, 1e-13)):
        # (atol: the zeros of lgamma left of -2, where neither side is accurate relatively)
        _close(tg.lgamma(tg.from_numpy(x)).numpy(), torch.lgamma(torch.from_numpy(x)).numpy(),
               rtol=1e-12, atol=atol)


def test_digamma_grid_matches_torch(torch, kernel_path):
    for x in (_POS, _NEG):
        # (atol: digamma's zero at 1.4616..., where torch's own kernel is off by 4e-16)
        _close(tg.digamma(tg.from_numpy(x)).numpy(), torch.digamma(torch.from_numpy(x)).numpy(),
               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_polygamma_grid_matches_torch(torch, kernel_path, n):
    x = np.concatenate([_POS[_POS < 1e40], _NEG])
    # torch's trigamma is a short asymptotic series, good to about 1e-9 relative
    rtol = 2e-9 if n == 1 else 1e-12
    _close(tg.polygamma(n, tg.from_numpy(x)).numpy(),
           torch.polygamma(n, torch.from_numpy(x)).numpy(), rtol=rtol, atol=1e-14)


@pytest.mark.parametrize("p", [1, 2, 5])
def test_mvlgamma_grid_matches_torch(torch, kernel_path, p):
    x = np.linspace((p - 1) / 2 + 1e-3, 40, 2001)
    _close(tg.mvlgamma(tg.from_numpy(x), p).numpy(), torch.mvlgamma(torch.from_numpy(x), p).numpy(),
           rtol=1e-12, atol=1e-13)


# ---- accuracy of the NumPy kernels against mpmath ------------------------------------------------
def _mp(fn, xs):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    return np.array([float(fn(mpmath, mpmath.mpf(float(x)))) for x in xs])


def _rel(ours, ref):
    return float(np.max(np.abs(ours - ref) / np.abs(ref)))


def test_numpy_lgamma_accuracy():
    x = np.concatenate([np.linspace(0.01, 25, 400), 1 + np.linspace(-1e-3, 1e-3, 41),
                        2 + np.linspace(-1e-3, 1e-3, 41), [1e-300, 1e5, 1e15, 0.999999999]])
    x = x[(x != 1) & (x != 2)]
    assert _rel(G._lgamma_numpy(x), _mp(lambda m, v: m.loggamma(v), x)) < 1e-14
    neg = -np.linspace(0.05, 9.95, 100) + 0.013
    ref = _mp(lambda m, v: m.re(m.loggamma(v)), neg)
    assert _rel(G._lgamma_numpy(neg), ref) < 1e-12


def test_numpy_digamma_accuracy():
    x = np.concatenate([np.linspace(0.01, 25, 400), -np.linspace(0.05, 9.95, 100) + 0.013,
                        [1e-300, 1e5, 1e15]])
    x = x[np.abs(x - 1.4616321449683622) > 1e-2]
    assert _rel(G._digamma_numpy(x), _mp(lambda m, v: m.digamma(v), x)) < 1e-12


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_numpy_polygamma_accuracy(monkeypatch, n):
    x = np.concatenate([np.linspace(0.05, 40, 200), -np.linspace(0.05, 9.95, 100) + 0.013])
    ref = _mp(lambda m, v: m.polygamma(n, v), x)
    _no_scipy(monkeypatch)
    assert _rel(G._polygamma_f64(n, x), ref) < 1e-12


# ---- special values, float64, both paths --------------------------------------------------------
_SPECIAL = [0.0, -0.0, -1.0, -2.0, -3.0, -2.5, 1.0, 2.0, _INF, -_INF, _NAN, 5e-324, -5e-324,
            1e-300, 1e20, -1e20 - 0.5, 3e305]


@pytest.mark.parametrize("name", ["lgamma", "digamma", "polygamma0", "polygamma1", "polygamma2",
                                  "polygamma3", "polygamma4"])
def test_special_values_match_torch(torch, kernel_path, name):
    def run(lib):
        x = lib.tensor(_SPECIAL, dtype=lib.float64)
        if name.startswith("polygamma"):
            return lib.polygamma(int(name[-1]), x).numpy()
        return getattr(lib, name)(x).numpy()

    ours, ref = run(tg), run(torch)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(ref))
    np.testing.assert_array_equal(np.sign(ours), np.sign(ref))
    fin = np.isfinite(ref)
    np.testing.assert_allclose(ours[fin], ref[fin], rtol=1e-9)


def test_poles_and_signed_zeros(kernel_path):
    x = tg.tensor([0.0, -0.0, -4.0, _INF, -_INF, _NAN], dtype=tg.float64)
    assert tg.lgamma(x).tolist()[:5] == [_INF] * 5
    d = tg.digamma(x).numpy()
    assert d[0] == -_INF and d[1] == _INF and np.isnan(d[2]) and d[3] == _INF
    assert np.isnan(d[4]) and np.isnan(d[5])
    t = tg.polygamma(1, x).numpy()
    # torch's trigamma: huge but finite at a negative integer, 0 at +inf, NaN at -inf
    assert t[0] == _INF and 1e30 < t[2] < _INF and t[3] == 0.0 and np.isnan(t[4])
    assert np.isnan(tg.polygamma(2, x).numpy()[3])


def test_mvlgamma_below_its_domain_is_not_refused(torch):
    # torch 2.x dropped the check that input > (p - 1) / 2: the terms give lgamma's values
    for p in (2, 3):
        x = np.array([0.5, 0.25, -0.7, 1.0, 0.0])
        ours = tg.mvlgamma(tg.from_numpy(x), p).numpy()
        ref = torch.mvlgamma(torch.from_numpy(x), p).numpy()
        np.testing.assert_allclose(ours, ref, rtol=1e-12)


# ---- dtypes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16", "float32",
                                   "float64"])
def test_result_dtypes_match_torch(torch, dtype):
    x = np.array([1, 2, 3]).astype(dtype)
    fns = [lambda L, t: L.lgamma(t), lambda L, t: L.digamma(t), lambda L, t: L.polygamma(2, t)]
    if dtype != "bool":     # (refused by both: see BAD)
        fns.append(lambda L, t: L.mvlgamma(t, 1))
    for fn in fns:
        ours = fn(tg, tg.from_numpy(x.copy()))
        ref = fn(torch, torch.from_numpy(x.copy()))
        assert str(ours.dtype).rpartition(".")[2] == str(ref.dtype).rpartition(".")[2]
        rtol = 2e-3 if dtype == "float16" else 1e-6
        np.testing.assert_allclose(ours.numpy().astype(float), ref.numpy().astype(float),
                                   rtol=rtol)


def test_integer_input_follows_the_default_dtype():
    old = tg.get_default_dtype()
    tg.set_default_dtype(tg.float64)
    try:
        assert tg.lgamma(tg.tensor([1, 2])).dtype is tg.float64
        assert tg.mvlgamma(tg.tensor([3, 4]), 2).dtype is tg.float64
    finally:
        tg.set_default_dtype(old)
    assert tg.digamma(tg.tensor([1, 2])).dtype is tg.float32


# ---- bad input ----------------------------------------------------------------------------------
BAD = {
    "polygamma_negative_n": ("polygamma", lambda L: L.polygamma(-1, L.ones(2))),
    "polygamma_float_n": ("polygamma", lambda L: L.polygamma(1.5, L.ones(2))),
    "polygamma_bool_n": ("polygamma", lambda L: L.polygamma(True, L.ones(2))),
    "polygamma_tensor_n": ("polygamma", lambda L: L.polygamma(L.tensor([1]), L.ones(2))),
    "polygamma_huge_n": ("polygamma", lambda L: L.polygamma(2 ** 70, L.ones(2))),
    "polygamma_number_input": ("polygamma", lambda L: L.polygamma(1, 2.0)),
    "polygamma_method_negative": ("polygamma", lambda L: L.ones(2).polygamma(-2)),
    "polygamma_inplace_negative": ("polygamma_", lambda L: L.ones(2).polygamma_(-1)),
    "mvlgamma_p0": ("mvlgamma", lambda L: L.mvlgamma(L.ones(2) * 3, 0)),
    "mvlgamma_p_negative": ("mvlgamma", lambda L: L.mvlgamma(L.ones(2) * 3, -2)),
    "mvlgamma_float_p": ("mvlgamma", lambda L: L.mvlgamma(L.ones(2) * 3, 1.5)),
    "mvlgamma_bool_p": ("mvlgamma", lambda L: L.mvlgamma(L.ones(2) * 3, True)),
    "mvlgamma_inplace_p0": ("mvlgamma_", lambda L: (L.ones(2) * 3).mvlgamma_(0)),
    "lgamma_number": ("lgamma", lambda L: L.lgamma(3.0)),
    "digamma_number": ("digamma", lambda L: L.digamma(3)),
    "mvlgamma_number": ("mvlgamma", lambda L: L.mvlgamma(3.0, 1)),
    "mvlgamma_bool": ("mvlgamma", lambda L: L.mvlgamma(L.tensor([True, False]), 1)),
    "lgamma_int_inplace": ("lgamma_", lambda L: L.tensor([1, 2]).lgamma_()),
    "digamma_int_inplace": ("digamma_", lambda L: L.tensor([1, 2]).digamma_()),
    "polygamma_int_inplace": ("polygamma_", lambda L: L.tensor([1, 2]).polygamma_(1)),
    "mvlgamma_int_inplace": ("mvlgamma_", lambda L: L.tensor([3, 4]).mvlgamma_(1)),
    "lgamma_leaf_inplace": ("lgamma_", lambda L: L.ones(2, requires_grad=True).lgamma_()),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_raises_as_torch(torch, case):
    name, fn = BAD[case]
    msg = raises_as_torch(torch, fn)
    if case.endswith(("_leaf_inplace", "_int_inplace")):
        return      # (messages of shared machinery, checked for their type only)
    assert name.rstrip("_") in msg, msg


def test_bad_input_without_torch():
    with pytest.raises(RuntimeError, match="polygamma.*negative n"):
        tg.polygamma(-1, tg.ones(2))
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1.*mvlgamma"):
        tg.mvlgamma(tg.ones(2), 0)
    with pytest.raises(TypeError, match="polygamma.*'n'.*must be int, not float"):
        tg.polygamma(1.0, tg.ones(2))
    with pytest.raises(TypeError, match="mvlgamma.*'p'.*must be int, not bool"):
        tg.mvlgamma(tg.ones(2), True)
    with pytest.raises(TypeError, match="lgamma.*must be Tensor"):
        tg.lgamma([1.0])


def test_int_params_as_torch_parses_them(torch):
    for lib in (tg, torch):
        x = lib.tensor([2.5, 3.0])
        a = lib.polygamma(lib.tensor(2), x)
        b = lib.mvlgamma(x, lib.tensor(2, dtype=lib.uint8))
        c = x.polygamma(n=2)
        assert a.tolist() == c.tolist() and a.tolist() == lib.polygamma(2, x).tolist()
        assert b.tolist() == lib.mvlgamma(x, 2).tolist()


# ---- surface and graphs -------------------------------------------------------------------------
def test_inplace_forms_are_methods_only(torch):
    for lib in (tg, torch):
        for name in ("lgamma_", "digamma_", "polygamma_", "mvlgamma_"):
            assert not hasattr(lib, name) and hasattr(lib.Tensor, name)
        x = lib.tensor([2.5, 3.0])
        assert x.lgamma_() is x and x.digamma_() is x
        assert x.polygamma_(1) is x and (x + 3).mvlgamma_(2) is not x


def test_inplace_values_and_nodes_match_torch(torch):
    def run(lib):
        leaf = lib.tensor([2.5, 3.25, 4.0], dtype=lib.float64, requires_grad=True)
        out = []
        for call in (lambda t: t.lgamma_(), lambda t: t.digamma_(), lambda t: t.polygamma_(2),
                     lambda t: t.mvlgamma_(3)):
            y = leaf.clone() + 1.5
            assert call(y) is y
            g, = lib.autograd.grad(y.sum(), leaf)
            out.append((type(y.grad_fn).__name__, y.tolist(), g.tolist()))
        return out

    for (n1, v1, g1), (n2, v2, g2) in zip(run(tg), run(torch)):
        assert n1 == n2
        np.testing.assert_allclose(v1, v2, rtol=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-9)


def test_double_backward_graphs_match_torch(torch):
    def run(lib):
        x = lib.tensor([1.5, 0.3], dtype=lib.float64, requires_grad=True)
        out = []
        for f in (lib.lgamma, lib.digamma, lambda t: lib.polygamma(2, t),
                  lambda t: lib.mvlgamma(t + 2, 3)):
            g, = lib.autograd.grad(f(x).sum(), x, create_graph=True)
            h, = lib.autograd.grad(g.sum(), x)
            nxt = [type(n).__name__ if n is not None else None
                   for n, _ in g.grad_fn.next_functions]
            out.append((type(g.grad_fn).__name__, nxt, g.tolist(), h.tolist()))
        return out

    for (n1, x1, g1, h1), (n2, x2, g2, h2) in zip(run(tg), run(torch)):
        assert (n1, x1) == (n2, x2)
        # (rtol: torch's trigamma, the first derivative of digamma, is good to about 1e-9)
        np.testing.assert_allclose(g1, g2, rtol=1e-8)
        np.testing.assert_allclose(h1, h2, rtol=1e-8)
