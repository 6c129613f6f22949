"""heaviside, float_power, aminmax, kthvalue, erfc and erfinv beyond the op database (which checks
values, gradients, node names, gradcheck and gradgradcheck against torch sample by sample): bad
input (exception types against torch, messages naming the op), the named-tuple results, kthvalue's
choice among ties, erfc's tail, erfinv without SciPy, and special values. Tests taking the
``torch`` fixture skip cleanly without torch; the others do not import it."""
import math
import sys

import numpy as np
import pytest
from torch_compare import error_of

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.ops import special_extra as SE

_NAN, _INF = float("nan"), float("inf")


# ---- bad input: the same exception type as torch, a message naming the op ----------------------
BAD = {
    "heaviside_dtypes": ("heaviside", lambda L: L.heaviside(L.ones(3), L.ones(3, dtype=L.int64))),
    "heaviside_0d_dtype": ("heaviside",
                           lambda L: L.heaviside(L.ones(3), L.tensor(1.0, dtype=L.float64))),
    "heaviside_number": ("heaviside", lambda L: L.heaviside(L.ones(3), 0.5)),
    "heaviside_shapes": ("heaviside", lambda L: L.heaviside(L.ones(2, 3), L.ones(4))),
    "heaviside_inplace_shape": ("heaviside_", lambda L: L.ones(1, 3).heaviside_(L.ones(2, 3))),
    "float_power_numbers": ("float_power", lambda L: L.float_power(2, 3)),
    "float_power_str": ("float_power", lambda L: L.float_power(L.ones(2), "a")),
    "float_power_bigint": ("float_power", lambda L: L.float_power(L.ones(2), 2 ** 70)),
    "float_power_shapes": ("float_power", lambda L: L.float_power(L.ones(2, 3), L.ones(4))),
    "float_power_inplace_float32": ("float_power_", lambda L: L.ones(2).float_power_(2)),
    "float_power_inplace_int": ("float_power_", lambda L: L.tensor([1, 2]).float_power_(2)),
    "aminmax_empty": ("aminmax", lambda L: L.aminmax(L.zeros(0, 3))),
    "aminmax_empty_dim": ("aminmax", lambda L: L.aminmax(L.zeros(0, 3), dim=0)),
    "aminmax_dim_range": ("aminmax", lambda L: L.aminmax(L.zeros(2, 3), dim=2)),
    "aminmax_dim_tuple": ("aminmax", lambda L: L.aminmax(L.zeros(2, 3), dim=(0,))),
    "aminmax_dim_float": ("aminmax", lambda L: L.aminmax(L.zeros(2, 3), dim=1.0)),
    "aminmax_positional": ("aminmax", lambda L: L.aminmax(L.zeros(2, 3), 0)),
    "kthvalue_k0": ("kthvalue", lambda L: L.kthvalue(L.ones(2, 4), 0)),
    "kthvalue_k_big": ("kthvalue", lambda L: L.kthvalue(L.ones(2, 4), 5)),
    "kthvalue_k_neg": ("kthvalue", lambda L: L.kthvalue(L.ones(2, 4), -1)),
    "kthvalue_0d_k2": ("kthvalue", lambda L: L.kthvalue(L.tensor(1.0), 2)),
    "kthvalue_dim_range": ("kthvalue", lambda L: L.kthvalue(L.ones(2, 4), 1, dim=2)),
    "kthvalue_k_float": ("kthvalue", lambda L: L.kthvalue(L.ones(2, 4), 1.5)),
    "kthvalue_k_bool": ("kthvalue", lambda L: L.kthvalue(L.ones(2, 4), True)),
    "kthvalue_dim_tuple": ("kthvalue", lambda L: L.kthvalue(L.ones(2, 4), 1, dim=(0,))),
    "kthvalue_bool": ("kthvalue", lambda L: L.kthvalue(L.tensor([True, False]), 1)),
    "kthvalue_empty_dim": ("kthvalue", lambda L: L.kthvalue(L.zeros(3, 0), 1, dim=1)),
    "kthvalue_empty_k_first": ("kthvalue", lambda L: L.kthvalue(L.zeros(0, 3), 5, dim=1)),
    "erfc_int_inplace": ("erfc_", lambda L: L.tensor([1, 2]).erfc_()),
    "erfinv_int_inplace": ("erfinv_", lambda L: L.tensor([1, 2]).erfinv_()),
    "erfc_leaf_inplace": ("erfc_", lambda L: L.ones(2, requires_grad=True).erfc_()),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_raises_as_torch(torch, case):
    name, fn = BAD[case]
    got, msg = error_of(tg, fn)
    ref, _ = error_of(torch, fn)
    assert ref is not None, "torch accepts this: the case is wrong"
    assert got == ref, (got, msg, ref)
    if case.endswith(("_bigint", "_leaf_inplace", "_int_inplace", "_inplace_int")):
        return      # (messages of shared machinery, checked for their type only)
    assert name.rstrip("_") in msg, msg


def test_bad_input_without_torch():
    with pytest.raises(RuntimeError, match="kthvalue.*out of range"):
        tg.kthvalue(tg.ones(2, 4), 5)
    with pytest.raises(IndexError, match="kthvalue"):
        tg.kthvalue(tg.zeros(3, 0), 1, dim=1)
    with pytest.raises(RuntimeError, match="aminmax"):
        tg.aminmax(tg.zeros(0))
    with pytest.raises(RuntimeError, match="heaviside.*different dtypes"):
        tg.heaviside(tg.ones(2), tg.ones(2, dtype=tg.float64))
    with pytest.raises(RuntimeError, match="float_power_.*Double"):
        tg.ones(2).float_power_(2)
    with pytest.raises(TypeError, match="complex"):
        tg.float_power(tg.ones(2), 1 + 2j)


# ---- heaviside: no derivative, as torch ---------------------------------------------------------
def test_heaviside_records_a_node_whose_backward_raises():
    x = tg.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = tg.heaviside(x, tg.tensor([0.5]))
    assert y.requires_grad and type(y.grad_fn).__name__ == "NotImplemented"
    np.testing.assert_array_equal(y.detach().numpy(), [0.0, 0.5, 1.0])
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        y.sum().backward()
    with tg.no_grad():
        assert tg.heaviside(x, tg.tensor([0.5])).grad_fn is None


def test_heaviside_nan_is_zero_not_nan():
    y = tg.heaviside(tg.tensor([_NAN, -0.0, 0.0, _INF]), tg.tensor([3.0]))
    np.testing.assert_array_equal(y.numpy(), [0.0, 3.0, 3.0, 1.0])


def test_heaviside_method_and_inplace(torch):
    for lib in (tg, torch):
        x = lib.tensor([[0.0, -2.0, 3.0]])
        assert lib.heaviside(x, lib.tensor([7.0])).tolist() == [[7.0, 0.0, 1.0]]
        assert x.heaviside(lib.tensor(7.0)).tolist() == [[7.0, 0.0, 1.0]]
        assert x.heaviside_(lib.tensor([7.0])) is x and x.tolist() == [[7.0, 0.0, 1.0]]
    assert not hasattr(tg, "heaviside_") and not hasattr(torch, "heaviside_")


# ---- float_power --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "int32", "uint8",
                                   "bool"])
@pytest.mark.parametrize("exponent", [2, -1, 2.5, True, "tensor_f32", "tensor_i64"])
def test_float_power_is_float64_and_matches_torch(torch, dtype, exponent):
    base = np.array([1, 2, 3, 0]).astype(dtype)

    def run(lib):
        e = exponent
        if e == "tensor_f32":
            e = lib.tensor([0.5, 2.0, -1.0, 3.0])
        elif e == "tensor_i64":
            e = lib.tensor([1, 2, 3, 0])
        return lib.float_power(lib.from_numpy(base.copy()), e)

    ours, ref = run(tg), run(torch)
    assert ours.dtype is tg.float64 and ref.dtype == torch.float64
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_float_power_graph_matches_torch(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.float_power(x, 2)
        first = type(y.grad_fn.next_functions[0][0]).__name__
        y.sum().backward()
        z = lib.float_power(2.0, x)
        w = lib.float_power(x.double(), lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64))
        return (type(y.grad_fn).__name__, first, type(z.grad_fn).__name__,
                type(w.grad_fn).__name__, str(x.grad.dtype).rpartition(".")[2],
                x.grad.tolist())

    assert run(tg) == run(torch)


def test_float_power_inplace(torch):
    for lib in (tg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True).clone()
        assert x.float_power_(2) is x
        assert type(x.grad_fn).__name__ == "PowBackward0"
        y = lib.tensor([1.0, 2.0], dtype=lib.float64).float_power_(lib.tensor([3, 2]))
        assert y.tolist() == [1.0, 4.0]
    assert not hasattr(tg, "float_power_")


# ---- aminmax ------------------------------------------------------------------------------------
def test_aminmax_named_tuple():
    r = tg.aminmax(tg.tensor([[1.0, 5.0], [-2.0, 3.0]]), dim=0)
    assert type(r).__name__ == "aminmax" and r._fields == ("min", "max")
    mn, mx = r
    assert mn is r.min and mx is r.max and r[0] is r.min
    assert mn.tolist() == [-2.0, 3.0] and mx.tolist() == [1.0, 5.0]
    assert repr(r).startswith("tapegrad.return_types.aminmax(\nmin=tensor(")
    assert tg.tensor([1, 4]).aminmax() == (tg.tensor(1), tg.tensor(4))


def test_aminmax_ties_share_gradient_like_torch(torch):
    def run(lib, **kw):
        x = lib.tensor([[1.0, 3.0, 3.0], [2.0, -1.0, -1.0]], requires_grad=True)
        r = lib.aminmax(x, **kw)
        (r.min.sum() * 2 + r.max.sum() * 3).backward()
        return x.grad.tolist()

    for kw in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
        assert run(tg, **kw) == run(torch, **kw)
    assert run(tg) == [[0.0, 1.5, 1.5], [0.0, 1.0, 1.0]]


def test_aminmax_one_output_used_and_nan(torch):
    def run(lib, data, out):
        x = lib.tensor(data, requires_grad=True)
        getattr(lib.aminmax(x, dim=-1), out).sum().backward()
        return x.grad.numpy()

    for data in ([[1.0, 3.0, 3.0], [2.0, -1.0, 0.0]], [[1.0, _NAN, 2.0], [0.0, 1.0, 1.0]]):
        for out in ("min", "max"):
            np.testing.assert_array_equal(run(tg, data, out), run(torch, data, out))


def test_aminmax_gradgradcheck():
    x = tg.tensor([[0.3, -1.2, 2.0], [1.5, 0.1, -0.7]], dtype=tg.float64, requires_grad=True)

    def f(t):
        return tuple(tg.aminmax(t, dim=1))

    assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))


# ---- kthvalue -----------------------------------------------------------------------------------
def test_kthvalue_named_tuple_and_gradient():
    x = tg.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, -1.0, -1.0, 5.0]], requires_grad=True)
    r = tg.kthvalue(x, 3, dim=1, keepdim=True)
    assert type(r).__name__ == "kthvalue" and r._fields == ("values", "indices")
    assert type(r.values.grad_fn).__name__ == "KthvalueBackward0"
    assert r.indices.dtype is tg.int64 and not r.indices.requires_grad
    assert r.values.shape == (2, 1)
    r.values.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
    assert repr(r).startswith("tapegrad.return_types.kthvalue(\nvalues=tensor(")


def test_kthvalue_ties_pick_torchs_element(torch):
    rng = np.random.default_rng(0)
    pool = np.array([0.0, -0.0, 1.0, 2.0, np.nan, -1.0])
    for _ in range(300):
        n = int(rng.integers(1, 30))
        x = rng.choice(pool[:int(rng.integers(1, 7))], (2, n))
        k = int(rng.integers(1, n + 1))
        ours = tg.kthvalue(tg.from_numpy(x.copy()), k)
        ref = torch.kthvalue(torch.from_numpy(x.copy()), k)
        np.testing.assert_array_equal(ours.indices.numpy(), ref.indices.numpy(), err_msg=str(x))
        assert (np.signbit(ours.values.numpy()) == np.signbit(ref.values.numpy())).all()


def test_quickselect_is_a_selection():
    rng = np.random.default_rng(1)
    for _ in range(200):
        row = rng.integers(0, 5, int(rng.integers(1, 25))).tolist()
        k = int(rng.integers(0, len(row)))
        v, i = SE._quickselect(row, k)
        assert v == sorted(row)[k] and row[i] == v


def test_kthvalue_large_input_matches_sort():
    x = np.random.default_rng(2).standard_normal((50, 301))
    r = tg.kthvalue(tg.from_numpy(x), 150, dim=1)
    np.testing.assert_array_equal(r.values.numpy(), np.sort(x, 1)[:, 149])
    np.testing.assert_array_equal(x[np.arange(50), r.indices.numpy()], r.values.numpy())


# ---- erfc ---------------------------------------------------------------------------------------
def test_erfc_tail_is_accurate():
    # (1 - erf(x) is 0 for all of these)
    got = tg.erfc(tg.tensor([6.0, 10.0], dtype=tg.float64)).numpy()
    np.testing.assert_allclose(got, [2.1519736712498913e-17, 2.0884875837625448e-45], rtol=1e-15)
    # erfc(x) = exp(-x^2) / (x sqrt(pi)) * (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + ...)
    x = np.array([20.0, 26.0])
    series = np.exp(-x * x) / (x * math.sqrt(math.pi)) * (
        1 - 1 / (2 * x**2) + 3 / (4 * x**4) - 15 / (8 * x**6) + 105 / (16 * x**8))
    np.testing.assert_allclose(tg.erfc(tg.from_numpy(x)).numpy(), series, rtol=1e-11)
    assert tg.erfc(tg.tensor([30.0], dtype=tg.float64)).item() == 0.0


def test_erfc_special_values():
    y = tg.erfc(tg.tensor([_INF, -_INF, _NAN, 0.0, -0.0, -30.0], dtype=tg.float64)).numpy()
    assert y[0] == 0.0 and y[1] == 2.0 and math.isnan(y[2])
    assert y[3] == 1.0 and y[4] == 1.0 and y[5] == 2.0
    assert tg.erfc(tg.tensor([1, 2])).dtype is tg.float32


def test_erfc_matches_torch_on_a_grid(torch):
    x = np.linspace(-30, 30, 20001)
    ours = tg.erfc(tg.from_numpy(x)).numpy()
    ref = torch.erfc(torch.from_numpy(x)).numpy()
    normal = ref > 1e-300
    assert _ulps(ours[normal], ref[normal]) <= 2


def test_erfc_inplace_function_and_method(torch):
    for lib in (tg, torch):
        x = lib.tensor([0.5, -1.0])
        assert lib.erfc_(x) is x
        assert x.erfc_() is x
    np.testing.assert_allclose(tg.erfc(tg.erfc(tg.tensor([0.5, -1.0]))).numpy(),
                               torch.erfc(torch.erfc(torch.tensor([0.5, -1.0]))).numpy())


# ---- erfinv -------------------------------------------------------------------------------------
_GRID = np.concatenate([np.linspace(-1, 1, 20001)[1:-1], 1 - np.logspace(-16, -1, 300),
                        -1 + np.logspace(-16, -1, 300), np.logspace(-300, -1, 300),
                        [np.nextafter(1.0, 0.0), -np.nextafter(1.0, 0.0)]])


def _ulps(a, b):
    return float(np.max(np.abs(a - b) / np.spacing(np.abs(b))))


def test_fallback_is_used_without_scipy(monkeypatch):
    calls = []
    real = SE._erfinv_numpy
    monkeypatch.setattr(SE, "_erfinv_numpy", lambda x: calls.append(1) or real(x))
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    tg.erfinv(tg.tensor([0.5]))
    assert calls


def test_erfinv_round_trips_through_erf(kernel_path):
    y = tg.erfinv(tg.from_numpy(_GRID)).numpy()
    inner = np.abs(_GRID) <= 0.5
    back = tg.erf(tg.from_numpy(y[inner])).numpy()
    np.testing.assert_allclose(back, _GRID[inner], rtol=4e-16, atol=0)
    # in the tail, through erfc: 1 - |x| exactly
    tail = ~inner
    comp = tg.erfc(tg.from_numpy(np.abs(y[tail]))).numpy()
    np.testing.assert_allclose(comp, 1 - np.abs(_GRID[tail]), rtol=2e-14)


def test_erfinv_numpy_fallback_agrees_with_scipy():
    ss = pytest.importorskip("scipy.special")
    assert _ulps(SE._erfinv_numpy(_GRID), ss.erfinv(_GRID)) <= 4


def test_erfinv_matches_torch(torch, kernel_path):
    ours = tg.erfinv(tg.from_numpy(_GRID)).numpy()
    assert _ulps(ours, torch.erfinv(torch.from_numpy(_GRID)).numpy()) <= 4
    x32 = _GRID.astype(np.float32)
    x32 = x32[np.abs(x32) < 1]
    np.testing.assert_allclose(tg.erfinv(tg.from_numpy(x32)).numpy(),
                               torch.erfinv(torch.from_numpy(x32)).numpy(), rtol=2e-6)


def test_erfinv_special_values(kernel_path):
    y = tg.erfinv(tg.tensor([1.0, -1.0, 0.0, -0.0, _NAN, 1.5, -2.0, _INF],
                            dtype=tg.float64)).numpy()
    assert y[0] == _INF and y[1] == -_INF
    assert y[2] == 0.0 and not np.signbit(y[2]) and y[3] == 0.0 and np.signbit(y[3])
    assert np.isnan(y[4:]).all()
    assert tg.erfinv(tg.tensor([1, 0])).tolist() == [_INF, 0.0]
    assert tg.erfinv(tg.tensor([1, 0])).dtype is tg.float32


def test_erfinv_gradients(kernel_path):
    x = tg.tensor([0.3, -0.9, 0.0, 0.999], dtype=tg.float64, requires_grad=True)
    assert gradcheck(tg.erfinv, (x,)) and gradgradcheck(tg.erfinv, (x,))
    x = tg.tensor([1.0, -1.0], dtype=tg.float64, requires_grad=True)
    tg.erfinv(x).sum().backward()
    assert x.grad.tolist() == [_INF, _INF]


def test_erfinv_inplace_is_a_method_only(torch):
    for lib in (tg, torch):
        x = lib.tensor([0.5, -0.25])
        assert x.erfinv_() is x
        assert not hasattr(lib, "erfinv_")
