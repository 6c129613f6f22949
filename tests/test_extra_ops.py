"""The ops of tapegrad.ops.extra beyond what the op_db rows check: return types, errors, the
graphs torch records, double backward, and the ``.T`` deprecation warning."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import gradcheck, gradgradcheck

NAN = float("nan")


def _t(values, requires_grad=False, dtype=tapegrad.float64):
    return tapegrad.tensor(values, dtype=dtype, requires_grad=requires_grad)


def _rand(*shape, seed=0):
    return tapegrad.from_numpy(np.random.default_rng(seed).standard_normal(shape))


# ---- return types --------------------------------------------------------------------------------
@pytest.mark.parametrize("name,args", [("median", (1,)), ("nanmedian", (1,)), ("mode", (1,)),
                                       ("cummax", (1,)), ("cummin", (1,))])
def test_named_tuple_results(name, args):
    x = _rand(3, 4)
    r = getattr(tapegrad, name)(x, *args)
    assert type(r).__name__ == name
    assert type(r).__module__ == "tapegrad.return_types"
    assert r.values is r[0] and r.indices is r[1]
    assert r.indices.dtype == tapegrad.int64 and not r.indices.requires_grad
    assert repr(r).startswith(f"tapegrad.return_types.{name}(\nvalues=")
    m = getattr(x, name)(*args)       # the Tensor method
    np.testing.assert_array_equal(m.values._data, r.values._data)


def test_var_mean_is_a_plain_tuple_sharing_one_node():
    x = _rand(3, 4).requires_grad_()
    v, m = tapegrad.var_mean(x, 1)
    r = tapegrad.std_mean(x)
    assert type(r) is tuple and len(r) == 2
    assert v.grad_fn is m.grad_fn and type(v.grad_fn).__name__ == "VarMeanBackward0"
    assert type(r[0].grad_fn).__name__ == "StdMeanBackward0" and r[0].grad_fn is r[1].grad_fn
    assert not hasattr(tapegrad.Tensor, "var_mean")    # torch has no such method either
    np.testing.assert_allclose(v._data, x._data.var(1, ddof=1))
    np.testing.assert_allclose(m._data, x._data.mean(1))


def test_var_mean_one_output_used():
    x = _rand(3, 4).requires_grad_()
    v, m = tapegrad.var_mean(x, 0)
    m.sum().backward()
    np.testing.assert_allclose(x.grad._data, np.full((3, 4), 1 / 3))
    x.grad = None
    v, m = tapegrad.var_mean(x, 0)
    v.sum().backward()
    xd = x._data
    np.testing.assert_allclose(x.grad._data, 2 * (xd - xd.mean(0)) / 2)


# ---- values --------------------------------------------------------------------------------------
def test_median_values_and_ties():
    x = _t([[2.0, 1.0, 2.0, 1.0, 3.0, 1.0], [5.0, 5.0, 4.0, 4.0, 3.0, 3.0]])
    r = tapegrad.median(x, 1)
    assert r.values.tolist() == [1.0, 4.0] and r.indices.tolist() == [5, 2]
    assert tapegrad.median(_t([1.0, 2.0, 3.0, 4.0])).item() == 2.0     # the lower middle
    assert math.isnan(tapegrad.median(_t([1.0, NAN, 2.0])).item())
    assert tapegrad.nanmedian(_t([1.0, NAN, 2.0, NAN, 0.0])).item() == 1.0
    assert math.isnan(tapegrad.median(_t([])).item())
    r = tapegrad.nanmedian(_t([[NAN, NAN]]), 1)
    assert math.isnan(r.values.item()) and r.indices.item() == 0


def test_median_ties_share_gradient():
    x = _t([1.0, 2.0, 2.0, 3.0, 0.0], requires_grad=True)
    tapegrad.median(x).backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0, 0.0]


def test_mode_values():
    r = tapegrad.mode(_t([[1.0, 2.0, 2.0, 1.0, 3.0]]))
    assert r.values.tolist() == [1.0] and r.indices.tolist() == [3]   # smallest, last position


def test_cummax_cummin_indices():
    r = tapegrad.cummax(_t([1.0, 3.0, 3.0, 2.0, NAN, 5.0, NAN]), 0)
    assert r.indices.tolist() == [0, 1, 2, 2, 4, 4, 6]
    r = tapegrad.cummin(_t([3.0, 1.0, 1.0, 2.0]), 0)
    assert r.values.tolist() == [3.0, 1.0, 1.0, 1.0] and r.indices.tolist() == [0, 1, 2, 2]


def test_logcumsumexp_is_stable():
    y = tapegrad.logcumsumexp(_t([1000.0, 1000.0, -1000.0], dtype=tapegrad.float32), 0)
    np.testing.assert_allclose(y._data, [1000.0, 1000.0 + math.log(2), 1000.0 + math.log(2)])


def test_quantile_values_match_numpy():
    x = _rand(4, 7)
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        q = tapegrad.quantile(x, _t([0.1, 0.5, 0.95]), dim=1, interpolation=interp)
        ref = np.quantile(x._data, [0.1, 0.5, 0.95], axis=1, method=interp)
        np.testing.assert_allclose(q._data, ref)
    assert tapegrad.quantile(x, 0.3, dim=0, keepdim=True).shape == (1, 7)
    assert tapegrad.quantile(x, _t([0.2, 0.4]), keepdim=True).shape == (2, 1, 1)


def test_nan_reductions():
    x = _t([[1.0, NAN], [NAN, NAN]])
    assert tapegrad.nansum(x).item() == 1.0
    m = tapegrad.nanmean(x, 1)
    assert m[0].item() == 1.0 and math.isnan(m[1].item())
    assert tapegrad.nansum(tapegrad.tensor([1, 2])).dtype == tapegrad.int64
    assert tapegrad.exp2(tapegrad.tensor([3])).tolist() == [8.0]


# ---- errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize("call,exc", [
    (lambda: tapegrad.var_mean(tapegrad.tensor([1, 2])), RuntimeError),
    (lambda: tapegrad.std_mean(_rand(3), unbiased=True, correction=1), TypeError),
    (lambda: tapegrad.var_mean(_rand(3), 1), IndexError),
    (lambda: tapegrad.median(_rand(0, 3), 0), IndexError),
    (lambda: tapegrad.mode(_rand(0, 3), 0), IndexError),
    (lambda: tapegrad.median(_rand(2, 3), 2), IndexError),
    (lambda: tapegrad.quantile(tapegrad.tensor([1, 2]), 0.5), RuntimeError),
    (lambda: tapegrad.quantile(_rand(3), 1.5), RuntimeError),
    (lambda: tapegrad.quantile(_rand(3), _t([[0.5]])), RuntimeError),
    (lambda: tapegrad.quantile(_rand(3), _t([0.5], dtype=tapegrad.float32)), RuntimeError),
    (lambda: tapegrad.quantile(_rand(3), 0.5, interpolation="foo"), RuntimeError),
    (lambda: tapegrad.quantile(_rand(2, 0), 0.5, dim=1), RuntimeError),
    (lambda: tapegrad.quantile(_rand(2, 3), 0.5, dim=2), IndexError),
    (lambda: tapegrad.logcumsumexp(tapegrad.tensor([1, 2]), 0), NotImplementedError),
    (lambda: tapegrad.cummax(_rand(2, 3), 2), IndexError),
    (lambda: tapegrad.nanmean(tapegrad.tensor([1, 2])), RuntimeError),
    (lambda: tapegrad.nansum(_rand(2, 3), (0, 0)), RuntimeError),
])
def test_errors(call, exc):
    with pytest.raises(exc):
        call()


# ---- gradients, no torch needed ------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda x: tapegrad.var_mean(x, 1),
    lambda x: tapegrad.std_mean(x, (0, 1), keepdim=True),
    lambda x: tapegrad.median(x, 0).values,
    lambda x: tapegrad.nanmedian(x),
    lambda x: tapegrad.quantile(x, 0.35, dim=1),
    lambda x: tapegrad.nanquantile(x, 0.8),
    lambda x: tapegrad.cummax(x, 1).values,
    lambda x: tapegrad.cummin(x, -2).values,
    lambda x: tapegrad.logcumsumexp(x, 1),
    lambda x: tapegrad.nansum(x, 1),
    lambda x: tapegrad.nanmean(x, 0),
    lambda x: tapegrad.exp2(x),
])
def test_grad_and_gradgrad(fn):
    x = _rand(3, 4, seed=3).requires_grad_()
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_quantile_gradient_reaches_q():
    x = _rand(3, 5).requires_grad_()
    q = _t([0.2, 0.7], requires_grad=True)
    assert gradcheck(lambda x, q: tapegrad.quantile(x, q, dim=1), (x, q))


# ---- the .T deprecation warning ------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4)])
def test_T_warns_when_not_2d(shape):
    x = tapegrad.zeros(shape)
    with pytest.warns(UserWarning):
        y = x.T
    assert y.shape == tuple(reversed(shape))


def test_T_silent_on_2d():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tapegrad.zeros(2, 3).T.shape == (3, 2)


# ---- against torch -------------------------------------------------------------------------------
def _run_both(fn, arr, torch):
    out = []
    for m in (tapegrad, torch):
        x = m.from_numpy(arr.copy()).requires_grad_()
        r = fn(m, x)
        rs = list(r) if isinstance(r, tuple) else [r]
        diff = [o for o in rs if o.requires_grad]
        sum((o * (i + 1)).sum() for i, o in enumerate(diff)).backward()
        out.append(([np.asarray(o.detach().numpy() if m is torch else o._data) for o in rs],
                    [type(o.grad_fn).__name__ for o in rs],
                    np.asarray(x.grad.numpy() if m is torch else x.grad._data)))
    return out


@pytest.mark.parametrize("fn", [
    lambda m, x: m.var_mean(x, -1, correction=0, keepdim=True),
    lambda m, x: m.std_mean(x, 0),
    lambda m, x: m.median(x, -1, True),
    lambda m, x: m.nanmedian(x, 0),
    lambda m, x: m.mode(x.round(), 1),
    lambda m, x: m.quantile(x, 0.25, dim=1, interpolation="higher"),
    lambda m, x: m.nanquantile(x, m.tensor([0.3, 0.9], dtype=m.float64), dim=0),
    lambda m, x: m.cummax(x, 0),
    lambda m, x: m.logcumsumexp(x, -1),
    lambda m, x: m.nanmean(x, 1, True),
    lambda m, x: x.exp2(),
])
def test_against_torch(fn):
    torch = pytest.importorskip("torch")
    arr = np.random.default_rng(5).standard_normal((4, 5))
    arr[1, 2] = NAN
    (vals, names, grad), (tvals, tnames, tgrad) = _run_both(fn, arr, torch)
    assert names == tnames
    for a, b in zip(vals, tvals):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-10, equal_nan=True)
    np.testing.assert_allclose(grad, tgrad, rtol=1e-10, equal_nan=True)


# ---- unique / bincount / histc / searchsorted / bucketize ----------------------------------------
def test_unique_has_no_derivative():
    x = _t([3.0, 1.0, 3.0], requires_grad=True)
    vals, inv, cnt = tapegrad.unique(x, return_inverse=True, return_counts=True)
    assert type(vals.grad_fn).__name__ == "Unique2Backward0"
    assert not inv.requires_grad and not cnt.requires_grad
    assert inv.tolist() == [1, 0, 1] and cnt.tolist() == [1, 2]
    with pytest.raises(NotImplementedError):
        vals.sum().backward()
    with pytest.raises(NotImplementedError):
        tapegrad.unique(x, dim=0)
    assert tapegrad.unique(tapegrad.tensor(2.0), return_inverse=True)[1].shape == ()


def test_bincount():
    idx = tapegrad.tensor([1, 1, 3])
    assert tapegrad.bincount(idx).tolist() == [0, 2, 0, 1]
    assert idx.bincount(minlength=5).tolist() == [0, 2, 0, 1, 0]
    w = _t([0.5, 1.0, 2.0], requires_grad=True, dtype=tapegrad.float32)
    r = tapegrad.bincount(idx, w)
    assert r.dtype == tapegrad.float32 and r.tolist() == [0.0, 1.5, 0.0, 2.0]
    assert type(r.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError):
        r.sum().backward()
    assert tapegrad.bincount(idx, tapegrad.tensor([1, 2, 3])).dtype == tapegrad.float64
    for bad, exc in ((tapegrad.tensor([-1]), RuntimeError), (tapegrad.tensor([[1]]), RuntimeError),
                     (tapegrad.tensor([1.0]), NotImplementedError)):
        with pytest.raises(exc):
            tapegrad.bincount(bad)


def test_histc():
    x = _t([0.0, 1.0, 2.0, 3.0, 4.0, NAN, 5.0], requires_grad=True)
    r = tapegrad.histc(x, bins=4, min=0, max=4)
    assert r.tolist() == [1.0, 1.0, 1.0, 2.0] and not r.requires_grad and r.dtype == x.dtype
    assert tapegrad.histc(_t([2.0, 2.0]), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]
    with pytest.raises(RuntimeError):
        tapegrad.histc(x, bins=0)
    with pytest.raises(RuntimeError):
        tapegrad.histc(x, bins=3, min=3, max=1)
    with pytest.raises(NotImplementedError):
        tapegrad.histc(tapegrad.tensor([1, 2]))


def test_searchsorted_and_bucketize():
    b = _t([1.0, 2.0, 3.0])
    v = _t([0.5, 2.0, 3.5])
    assert tapegrad.searchsorted(b, v).tolist() == [0, 1, 3]
    assert tapegrad.searchsorted(b, v, right=True).tolist() == [0, 2, 3]
    assert tapegrad.searchsorted(b, v, side="right", out_int32=True).dtype == tapegrad.int32
    assert tapegrad.searchsorted(_t([3.0, 1.0, 2.0]), 2.5, sorter=tapegrad.tensor([1, 2, 0])).item() == 2
    assert tapegrad.bucketize(v, b).tolist() == [0, 1, 3]
    assert tapegrad.bucketize(2.0, b, right=True).item() == 2
    with pytest.raises(RuntimeError):
        tapegrad.searchsorted(b, v, side="left", right=True)
    with pytest.raises(RuntimeError):
        tapegrad.searchsorted(_t([[1.0, 2.0], [3.0, 4.0]]), _t([1.5]))
    with pytest.raises(RuntimeError):
        tapegrad.searchsorted(b, v, sorter=tapegrad.tensor([0]))
    with pytest.raises(RuntimeError):
        tapegrad.bucketize(v, _t([[1.0, 2.0]]))
    assert not hasattr(tapegrad.Tensor, "searchsorted") and not hasattr(tapegrad.Tensor, "bucketize")


# ---- logspace / baddbmm / addbmm / tensordot / kron / cross ------------------------------------------
def _names(t):
    return type(t.grad_fn).__name__, [type(n).__name__ for n, _ in t.grad_fn.next_functions]


def test_logspace_dtypes_and_errors():
    assert tapegrad.logspace(0, 2, 5).dtype == tapegrad.float32
    r = tapegrad.logspace(0, 2, 5, base=2, dtype=tapegrad.int64)
    assert r.tolist() == [1, 1, 2, 2, 4]
    assert tapegrad.logspace(0, 1, 3, dtype=tapegrad.float64, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError):
        tapegrad.logspace(0, 2, -1)
    with pytest.raises(TypeError):
        tapegrad.logspace(0, 2, 2.0)
    with pytest.raises(RuntimeError):
        tapegrad.logspace(0, 2, 3, dtype=tapegrad.int64, requires_grad=True)


def test_batched_products_graph_and_double_backward():
    i, b1, b2 = _rand(3, 4).requires_grad_(), _rand(2, 3, 5, seed=1).requires_grad_(), \
        _rand(2, 5, 4, seed=2).requires_grad_()
    y = tapegrad.baddbmm(i, b1, b2, beta=0.5, alpha=2.0)
    assert _names(y) == ("BaddbmmBackward0", ["AccumulateGrad"] * 3)
    assert i.baddbmm(b1, b2).shape == (2, 3, 4)
    assert gradgradcheck(lambda a, b, c: tapegrad.baddbmm(a, b, c, beta=0.5, alpha=2.0),
                         (i, b1, b2))
    z = tapegrad.addbmm(i, b1, b2, alpha=3.0)
    assert _names(z) == ("AddbmmBackward0", ["AccumulateGrad"] * 3)
    assert gradgradcheck(lambda a, b, c: tapegrad.addbmm(a, b, c, beta=2.0), (i, b1, b2))
    nan = tapegrad.full((3, 4), NAN, dtype=tapegrad.float64)
    assert not tapegrad.baddbmm(nan, b1, b2, beta=0).isnan().any()


@pytest.mark.parametrize("fn,args", [
    ("baddbmm", ((2, 3, 4), (2, 3), (2, 3, 4))),
    ("baddbmm", ((2, 3, 4), (2, 3, 5), (3, 5, 4))),
    ("baddbmm", ((2, 3, 3), (2, 3, 5), (2, 5, 4))),
    ("addbmm", ((3, 4), (2, 3, 5), (3, 5, 4))),
    ("addbmm", ((2, 3, 4), (2, 3, 5), (2, 5, 4)))])
def test_batched_products_errors(fn, args):
    with pytest.raises(RuntimeError):
        getattr(tapegrad, fn)(*(_rand(*s) for s in args))


def test_batched_products_dtype_error():
    with pytest.raises(RuntimeError):
        tapegrad.baddbmm(_rand(2, 3, 4).float(), _rand(2, 3, 5), _rand(2, 5, 4))


def test_tensordot_kron_graphs_and_double_backward():
    a, b = _rand(2, 3, 4).requires_grad_(), _rand(4, 2, 5, seed=1).requires_grad_()
    y = tapegrad.tensordot(a, b, dims=([0, 2], [1, 0]))
    assert _names(y) == ("ViewBackward0", ["MmBackward0"])
    assert gradgradcheck(lambda x, z: tapegrad.tensordot(x, z, dims=([0, 2], [1, 0])), (a, b))
    x, z = _rand(2, 3).requires_grad_(), _rand(4, seed=3).requires_grad_()
    k = tapegrad.kron(x, z)
    assert _names(k) == ("UnsafeViewBackward0", ["MulBackward0"])
    assert k.shape == (2, 12) and x.kron(z).shape == (2, 12)
    assert gradgradcheck(tapegrad.kron, (x, z))
    assert not hasattr(tapegrad.Tensor, "tensordot")


@pytest.mark.parametrize("dims,exc", [(-1, RuntimeError), (3, RuntimeError),
                                      (([1, 0], [0]), RuntimeError), (([1], [1]), RuntimeError),
                                      (([5], [0]), IndexError)])
def test_tensordot_errors(dims, exc):
    with pytest.raises(exc):
        tapegrad.tensordot(_rand(2, 3), _rand(3, 5), dims=dims)


def test_cross_default_dim_warns_and_double_backward():
    a, b = _rand(4, 3).requires_grad_(), _rand(1, 3, seed=1).requires_grad_()
    with pytest.warns(UserWarning, match="without specifying the dim"):
        y = tapegrad.cross(_rand(3, 3), _rand(3, 3, seed=1))
    np.testing.assert_allclose(y._data, np.cross(_rand(3, 3)._data, _rand(3, 3, seed=1)._data,
                                                 axis=0))
    y = a.cross(b, dim=1)
    assert _names(y) == ("LinalgCrossBackward0", ["AccumulateGrad"] * 2)
    assert gradcheck(lambda p, q: tapegrad.cross(p, q, dim=1), (a, b))
    assert gradgradcheck(lambda p, q: tapegrad.cross(p, q, dim=-1), (a, b))


@pytest.mark.parametrize("sa,sb,dim,exc", [((2, 3), (2, 4), 1, RuntimeError),
                                           ((2, 4), (2, 4), None, RuntimeError),
                                           ((2, 3), (2, 3), 0, RuntimeError),
                                           ((2, 3), (2, 3), 5, IndexError),
                                           ((2, 3), (3,), -1, RuntimeError)])
def test_cross_errors(sa, sb, dim, exc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc):
            tapegrad.cross(_rand(*sa), _rand(*sb), dim=dim)


def test_new_ops_errors_match_torch():
    torch = pytest.importorskip("torch")
    cases = [("tensordot", ((2, 3), (4, 5)), {"dims": 1}),
             ("cross", ((2, 3), (2, 3)), {"dim": 0}),
             ("baddbmm", ((2, 3, 3), (2, 3, 5), (2, 5, 4)), {}),
             ("addbmm", ((3, 4), (2, 3, 5), (3, 5, 4)), {})]
    for name, shapes, kw in cases:
        errs = []
        for mod in (tapegrad, torch):
            try:
                getattr(mod, name)(*(mod.zeros(*s, dtype=mod.float64) for s in shapes), **kw)
            except Exception as e:   # noqa: BLE001
                errs.append(type(e))
        assert len(errs) == 2 and errs[0] is errs[1], (name, errs)
