"""tan, asin/acos/atan, sinh/cosh, asinh/acosh/atanh, log10/log2, deg2rad/rad2deg beyond the op
database (which checks values, gradients, gradcheck and gradgradcheck against torch): values at
the edges of their domains, float16, integer inputs, and the in-place variants torch records
without a derivative."""
import warnings

import numpy as np
import pytest

import tapegrad as tg

NEW = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log10", "log2",
       "deg2rad", "rad2deg")
EDGES = np.array([-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, np.inf, -np.inf, np.nan, 1e30])


def _value_grad(lib, name, x, dtype="float64"):
    t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    y = getattr(lib, name)(t)
    g, = lib.autograd.grad(y, t, lib.ones_like(y))   # (not y.sum(): inf + -inf warns in NumPy)
    return y.detach().numpy(), g.numpy()


@pytest.mark.parametrize("name", NEW)
def test_edges_of_the_domain_match_torch_without_warnings(name):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = _value_grad(tg, name, EDGES)
    ref = _value_grad(torch, name, EDGES)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)
        assert (np.signbit(a) == np.signbit(b))[~np.isnan(b)].all()


@pytest.mark.parametrize("name", NEW)
def test_float16_values_match_torch(name):
    torch = pytest.importorskip("torch")
    x = np.linspace(-8, 8, 1001).astype(np.float16)
    a, ga = _value_grad(tg, name, x, "float16")
    b, gb = _value_grad(torch, name, x, "float16")
    np.testing.assert_array_equal(a, b)     # (nan == nan here)
    # a product of float16 roundings in torch's order: at most a few elements an ulp apart
    assert a.dtype == ga.dtype == np.float16
    assert int((~((ga == gb) | np.isnan(ga) & np.isnan(gb))).sum()) <= 4


@pytest.mark.parametrize("name", NEW)
def test_an_integer_input_gives_the_default_float_dtype(name):
    assert getattr(tg, name)(tg.tensor([1, 2])).dtype == tg.float32
    prev = tg.get_default_dtype()
    tg.set_default_dtype(tg.float64)
    try:
        assert getattr(tg, name)(tg.tensor([1, 2])).dtype == tg.float64
    finally:
        tg.set_default_dtype(prev)


def test_values_hand_checked():
    x = tg.tensor([180.0, 90.0, -45.0])
    np.testing.assert_allclose(tg.deg2rad(x).numpy(), [np.pi, np.pi / 2, -np.pi / 4], rtol=1e-6)
    np.testing.assert_allclose(tg.rad2deg(tg.deg2rad(x)).numpy(), x.numpy(), rtol=1e-6)
    np.testing.assert_allclose(tg.log10(tg.tensor([1000.0])).numpy(), [3.0])
    np.testing.assert_allclose(tg.log2(tg.tensor([0.125])).numpy(), [-3.0])
    t = tg.tensor([0.5], dtype=tg.float64, requires_grad=True)
    tg.atanh(t).backward()
    assert t.grad.item() == pytest.approx(1 / 0.75)


@pytest.mark.parametrize("name", ("asinh", "acosh", "atanh"))
def test_inplace_without_a_derivative_raises_at_backward_as_torch(name):
    a = tg.tensor([1.2, 1.6], requires_grad=True)
    x = a * 0.5 + (1.0 if name == "acosh" else 0.0)
    getattr(x, name + "_")()
    assert type(x.grad_fn).__name__ == name.capitalize() + "Backward1"
    assert x._version == 1
    with pytest.raises(NotImplementedError, match=f"inplace version of {name}'.*{name}\\(\\)"):
        x.sum().backward()
    assert a.grad is None
    # through a view: CopySlices runs the same node
    b = a * 0.5 + (1.0 if name == "acosh" else 0.0)
    getattr(getattr(b[0:1], name + "_"), "__call__")()
    assert type(b.grad_fn).__name__ == "CopySlices"
    with pytest.raises(NotImplementedError):
        b.sum().backward()
    # nothing to differentiate: in place as usual
    c = tg.tensor([1.5, 2.0])
    getattr(c, name + "_")()
    with np.errstate(invalid="ignore"):
        want = getattr(np, "arc" + name[1:])(np.float32([1.5, 2.0]))
    np.testing.assert_allclose(c.numpy(), want)


@pytest.mark.parametrize("name", ("asinh", "acosh", "atanh"))
def test_inplace_without_a_derivative_matches_torch(name):
    torch = pytest.importorskip("torch")
    res = {}
    for lib in (tg, torch):
        a = lib.tensor([1.2, 1.6], requires_grad=True)
        x = a * 0.5 + (1.0 if name == "acosh" else 0.0)
        getattr(x, name + "_")()
        with pytest.raises(NotImplementedError) as e:
            x.sum().backward()
        res[lib.__name__] = (x.detach().numpy(), type(x.grad_fn).__name__, x._version,
                             str(e.value).split(" (")[0])
    ours, ref = res["tapegrad"], res["torch"]
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-6)
    assert ours[1:] == ref[1:]


@pytest.mark.parametrize("name", ("tan", "asin", "atan", "sinh", "cosh", "log10", "log2",
                                  "deg2rad", "arcsin", "arctan"))
def test_inplace_with_a_derivative_matches_the_out_of_place_gradient(name):
    a = tg.tensor([0.3, 0.6], dtype=tg.float64, requires_grad=True)
    x = a * 1.0
    getattr(x, name + "_")()
    x.sum().backward()
    b = tg.tensor([0.3, 0.6], dtype=tg.float64, requires_grad=True)
    getattr(tg, name)(b * 1.0).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


SIGN_CASES = ([-1.5, 0.0, -0.0, 2.0, np.nan, -np.inf], [1, -2, 0], [True, False])


@pytest.mark.parametrize("name", ("sign", "sgn", "signbit"))
@pytest.mark.parametrize("vals", SIGN_CASES, ids=("float", "int", "bool"))
def test_sign_sgn_signbit_match_torch_for_each_kind_of_dtype(name, vals):
    # (sign of a bool tensor raised NumPy's _UFuncNoLoopError; torch gives the values back)
    torch = pytest.importorskip("torch")
    a = getattr(tg, name)(tg.tensor(vals))
    b = getattr(torch, name)(torch.tensor(vals))
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert (np.signbit(a.numpy().astype(float)) == np.signbit(b.numpy().astype(float))).all()


def test_sign_sgn_signbit_values():
    x = tg.tensor([-1.5, 0.0, -0.0, 2.0, float("nan")], requires_grad=True)
    assert tg.sign(tg.tensor([True, False])).tolist() == [True, False]
    assert tg.signbit(x).tolist() == [True, False, True, False, False]
    assert not tg.signbit(x).requires_grad
    assert tg.signbit(tg.tensor([True])).tolist() == [False]
    y = tg.sgn(x)
    assert type(y.grad_fn).__name__ == "SgnBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [0.0] * 5
    with pytest.raises(TypeError, match="signbit"):
        tg.signbit(3.0)


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
@pytest.mark.parametrize("name", ("deg2rad", "rad2deg"))
def test_deg2rad_rad2deg_match_torch_to_the_bit(name, dtype):
    # (the constant is cast to the dtype first, float16 multiplied in float32, as torch)
    torch = pytest.importorskip("torch")
    x = (np.random.default_rng(0).standard_normal(5000) * 500).astype(dtype)
    np.testing.assert_array_equal(getattr(tg, name)(tg.tensor(x)).numpy(),
                                  getattr(torch, name)(torch.tensor(x)).numpy())
