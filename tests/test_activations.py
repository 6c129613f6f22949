"""The activation functions of tapegrad.ops.activations and their layers in nn.

op_db (tests/test_ops.py) already compares every function sample by sample with torch and runs
gradcheck / gradgradcheck; this file covers what a row cannot: the layers (constructor arguments,
attributes, printed form), the in-place forms (``inplace=True``, ``X_``: the same tensor back, its
version, the node torch records, what a later backward sees), double backward against torch at
the kinks, float16, the errors, and torch's namespace / Tensor-method forms. Tests taking the
``torch`` fixture skip cleanly without torch; the gradcheck tests need none.
"""
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck

F = tg.nn.functional

# values covering every piece and every kink of the functions below
KINKS = [-7.0, -3.5, -3.0, -2.0, -1.0, -0.5, -0.25, -0.0, 0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 3.5,
         6.0, 7.0, 25.0]
_RNG = np.random.default_rng(7)
POINTS = np.concatenate([KINKS, _RNG.uniform(-8, 8, 30)])

# name -> f(L, x) with L the framework (tapegrad or torch)
FUNCS = {
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.2),
    "elu": lambda L, x: L.nn.functional.elu(x, 1.3),
    "selu": lambda L, x: L.nn.functional.selu(x),
    "celu": lambda L, x: L.nn.functional.celu(x, 0.7),
    "silu": lambda L, x: L.nn.functional.silu(x),
    "mish": lambda L, x: L.nn.functional.mish(x),
    "softplus": lambda L, x: L.nn.functional.softplus(x, 2.0, 3.0),
    "softsign": lambda L, x: L.nn.functional.softsign(x),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x, -2.0, 3.0),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "hardsigmoid": lambda L, x: L.nn.functional.hardsigmoid(x),
    "hardswish": lambda L, x: L.nn.functional.hardswish(x),
    "logsigmoid": lambda L, x: L.nn.functional.logsigmoid(x),
    "softmin": lambda L, x: L.nn.functional.softmin(x.reshape(6, -1), 1),
    "threshold": lambda L, x: L.nn.functional.threshold(x, 0.5, -2.0),
    "glu": lambda L, x: L.nn.functional.glu(x.reshape(6, -1), 0),
    "tanhshrink": lambda L, x: L.nn.functional.tanhshrink(x),
    "softshrink": lambda L, x: L.nn.functional.softshrink(x, 0.5),
    "hardshrink": lambda L, x: L.nn.functional.hardshrink(x, 0.5),
    "prelu": lambda L, x: L.nn.functional.prelu(
        x.reshape(2, 4, -1), L.tensor([0.1, -0.2, 0.3, 0.25], dtype=x.dtype)),
}

NODE = {
    "leaky_relu": "LeakyReluBackward0", "elu": "EluBackward0", "selu": "EluBackward0",
    "celu": "CeluBackward0", "silu": "SiluBackward0", "mish": "MishBackward0",
    "softplus": "SoftplusBackward0", "softsign": "DivBackward0", "hardtanh": "HardtanhBackward0",
    "relu6": "HardtanhBackward0", "hardsigmoid": "HardsigmoidBackward0",
    "hardswish": "HardswishBackward0", "logsigmoid": "LogSigmoidBackward0",
    "softmin": "SoftmaxBackward0", "threshold": "ThresholdBackward0", "glu": "GluBackward0",
    "tanhshrink": "SubBackward0", "softshrink": "SoftshrinkBackward0",
    "hardshrink": "HardshrinkBackward0", "prelu": "PreluKernelBackward0",
}

TOL = {"float64": (1e-7, 1e-7), "float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5)}


def _np(t):
    return t.detach().numpy().astype(np.float64)


def _orders(L, f, dt, order):
    """f's value, its vjp with a fixed cotangent, and (order 2) the vjp of that, with respect to
    the input."""
    x = L.tensor(POINTS, dtype=getattr(L, dt), requires_grad=True)
    y = f(L, x)
    out = [_np(y)]
    if order >= 1:
        v = L.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)), dtype=getattr(L, dt))
        gx, = L.autograd.grad(y, x, v, create_graph=order >= 2)
        out.append(_np(gx))
        if order >= 2:
            w = L.tensor(np.sin(np.arange(gx.numel())).reshape(tuple(gx.shape)),
                         dtype=getattr(L, dt))
            ggx, = L.autograd.grad(gx, x, w, allow_unused=True)
            out.append(None if ggx is None else _np(ggx))
    return out, type(y.grad_fn).__name__


# ---- values, gradients and double backward against torch, at the kinks ---------------------
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_double_backward_matches_torch_at_kinks(torch, name, dt):
    order = 1 if name == "hardsigmoid" else 2
    ours, node = _orders(tg, FUNCS[name], dt, order)
    theirs, tnode = _orders(torch, FUNCS[name], dt, order)
    assert node == tnode == NODE[name]
    rtol, atol = TOL[dt]
    for k, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{name} derivative order {k}")


# float16: torch's CPU kernels compute in float32 and round once. softmin (softmax's float16
# rounding) and softsign (div's float16 backward) are composites whose pieces live elsewhere.
HALF = sorted(set(FUNCS) - {"softmin", "softsign"})


@pytest.mark.parametrize("name", HALF)
def test_float16_values_and_gradients_match_torch(torch, name):
    ours, _ = _orders(tg, FUNCS[name], "float16", 1)
    theirs, _ = _orders(torch, FUNCS[name], "float16", 1)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        # within one float16 rounding of torch (most are bitwise equal)
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5, err_msg=f"{name} order {k}")


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "selu", "hardtanh", "relu6",
                                  "hardsigmoid", "threshold", "softshrink", "hardshrink", "prelu",
                                  "glu", "silu"])
def test_float16_values_bitwise(torch, name):
    x = np.linspace(-8, 8, 257)
    ours = FUNCS[name](tg, tg.tensor(x[:240], dtype=tg.float16))
    theirs = FUNCS[name](torch, torch.tensor(x[:240], dtype=torch.float16))
    assert ours.dtype is tg.float16
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_double_backward_node_names_match_torch(torch):
    names = {}
    for L in (tg, torch):
        out = []
        for name in sorted(FUNCS):
            if name in ("softmin", "softsign", "tanhshrink"):
                continue
            x = L.tensor(POINTS, requires_grad=True)
            y = FUNCS[name](L, x)
            gx, = L.autograd.grad(y.sum(), x, create_graph=True)
            out.append((name, type(gx.grad_fn).__name__ if gx.grad_fn is not None else None))
        names[L.__name__] = out
    assert names["tapegrad"] == names["torch"]


def test_hardsigmoid_double_backward_raises_as_torch(torch):
    for L in (tg, torch):
        x = L.tensor([-4.0, 0.5, 4.0], requires_grad=True)
        gx, = L.autograd.grad(L.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        assert type(gx.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="hardsigmoid_backward is not implemented"):
            gx.sum().backward()


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_third_order_runs(name):
    """Each derivative is written with Tensor ops: a third derivative can be taken (zero or not)."""
    if name == "hardsigmoid":
        pytest.skip("torch has no second derivative for hardsigmoid")
    x = tg.tensor(POINTS, dtype=tg.float64, requires_grad=True)
    y = FUNCS[name](tg, x)
    g1, = tg.autograd.grad(y.sum(), x, create_graph=True)
    g2, = tg.autograd.grad(g1.sum(), x, create_graph=True, allow_unused=True)
    if g2 is None or not g2.requires_grad:
        return
    g3, = tg.autograd.grad(g2.sum(), x, allow_unused=True)
    assert g3 is None or g3.shape == x.shape


# ---- gradcheck of the parameters and forms op_db does not reach (no torch) -------------------
def _dbl(*shape, seed=0, low=-2.0, high=2.0):
    a = np.random.default_rng(seed).uniform(low, high, size=shape)
    return tg.tensor(a, dtype=tg.float64, requires_grad=True)


@pytest.mark.parametrize("fn", [
    lambda x: F.elu(x, -0.7), lambda x: F.celu(x, -1.5), lambda x: F.leaky_relu(x, -2.0),
    lambda x: F.softplus(x, -1.0), lambda x: F.softplus(x, 0.5, 0.25),
    lambda x: F.hardtanh(x, -0.3, 0.4), lambda x: F.glu(x.reshape(2, 2, 3), 1),
    lambda x: F.softmin(x.reshape(3, 4), 0, dtype=tg.float64),
], ids=["elu_neg_alpha", "celu_neg_alpha", "leaky_neg_slope", "softplus_neg_beta",
        "softplus_low_threshold", "hardtanh_narrow", "glu_dim1", "softmin_dtype"])
def test_gradcheck_parameters(fn):
    x = _dbl(12, seed=1)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_gradcheck_prelu_weight_broadcast():
    x, w = _dbl(2, 3, 4, seed=2), _dbl(3, seed=3, low=-1, high=1)
    assert gradcheck(F.prelu, (x, w))
    assert gradgradcheck(F.prelu, (x, w))
    w1 = _dbl(1, seed=4)
    assert gradcheck(F.prelu, (x, w1))
    assert gradgradcheck(F.prelu, (x, w1))


INPLACE_FNS = {
    "leaky_relu_": lambda x: F.leaky_relu_(x, 0.3),
    "leaky_relu(inplace)": lambda x: F.leaky_relu(x, 0.3, inplace=True),
    "elu_": lambda x: F.elu_(x, 1.5),
    "selu_": lambda x: tg.selu_(x),
    "selu(inplace)": lambda x: F.selu(x, inplace=True),
    "celu_": lambda x: F.celu_(x, 0.8),
    "celu(inplace)": lambda x: F.celu(x, 2.0, True),
    "silu(inplace)": lambda x: F.silu(x, inplace=True),
    "mish(inplace)": lambda x: F.mish(x, inplace=True),
    "hardtanh_": lambda x: F.hardtanh_(x, -0.5, 0.75),
    "relu6(inplace)": lambda x: F.relu6(x * 4, inplace=True),
    "hardsigmoid(inplace)": lambda x: F.hardsigmoid(x * 3, inplace=True),
    "hardswish(inplace)": lambda x: F.hardswish(x * 3, inplace=True),
    "threshold_": lambda x: tg.threshold_(x, 0.1, -1.0),
    "threshold(inplace)": lambda x: F.threshold(x, 0.1, -1.0, True),
    "relu_": lambda x: tg.relu_(x),
    "relu(inplace)": lambda x: F.relu(x, inplace=True),
    "Tensor.relu_": lambda x: x.relu_(),
    "F.relu_": lambda x: F.relu_(x),
}


@pytest.mark.parametrize("name", sorted(INPLACE_FNS))
def test_gradcheck_inplace_forms(name):
    fn = INPLACE_FNS[name]

    def f(x):
        return fn(x * 1)
    x = _dbl(7, seed=5)
    assert gradcheck(f, (x,))
    if "hardsigmoid" not in name:
        assert gradgradcheck(f, (x,))


# ---- in-place forms ------------------------------------------------------------------------------
# name -> (f(L, x) writing into x, torch's node name)
INPLACE = {
    "leaky_relu_": (lambda L, x: L.nn.functional.leaky_relu_(x, 0.2), "LeakyReluBackward1"),
    "leaky_relu(inplace)": (lambda L, x: L.nn.functional.leaky_relu(x, 0.2, True),
                            "LeakyReluBackward1"),
    "elu_": (lambda L, x: L.nn.functional.elu_(x), "EluBackward1"),
    "elu(inplace)": (lambda L, x: L.nn.functional.elu(x, 0.5, inplace=True), "EluBackward1"),
    "selu_": (lambda L, x: L.selu_(x), "EluBackward1"),
    "F.selu_": (lambda L, x: L.nn.functional.selu_(x), "EluBackward1"),
    "selu(inplace)": (lambda L, x: L.nn.functional.selu(x, True), "EluBackward1"),
    "celu_": (lambda L, x: L.celu_(x, 1.5), "CeluBackward1"),
    "F.celu_": (lambda L, x: L.nn.functional.celu_(x), "CeluBackward1"),
    "celu(inplace)": (lambda L, x: L.nn.functional.celu(x, 0.5, True), "CeluBackward1"),
    "silu(inplace)": (lambda L, x: L.nn.functional.silu(x, inplace=True), "SiluBackward0"),
    "mish(inplace)": (lambda L, x: L.nn.functional.mish(x, inplace=True), "MishBackward0"),
    "hardtanh_": (lambda L, x: L.nn.functional.hardtanh_(x), "HardtanhBackward0"),
    "hardtanh(inplace)": (lambda L, x: L.nn.functional.hardtanh(x, -2., 3., True),
                          "HardtanhBackward0"),
    "relu6(inplace)": (lambda L, x: L.nn.functional.relu6(x, inplace=True), "HardtanhBackward0"),
    "hardsigmoid(inplace)": (lambda L, x: L.nn.functional.hardsigmoid(x, True),
                             "HardsigmoidBackward0"),
    "hardswish(inplace)": (lambda L, x: L.nn.functional.hardswish(x, True),
                           "HardswishBackward0"),
    "threshold_": (lambda L, x: L.threshold_(x, 0.5, -3.0), "ThresholdBackward1"),
    "F.threshold_": (lambda L, x: L.nn.functional.threshold_(x, 0.5, -3.0),
                     "ThresholdBackward1"),
    "threshold(inplace)": (lambda L, x: L.nn.functional.threshold(x, 0.5, -3.0, True),
                           "ThresholdBackward1"),
    "relu_": (lambda L, x: L.relu_(x), "ReluBackward0"),
    "F.relu_": (lambda L, x: L.nn.functional.relu_(x), "ReluBackward0"),
    "relu(inplace)": (lambda L, x: L.nn.functional.relu(x, inplace=True), "ReluBackward0"),
    "Tensor.relu_": (lambda L, x: x.relu_(), "ReluBackward0"),
}


def _inplace_run(L, name, dt="float32"):
    f, _ = INPLACE[name]
    x = L.tensor(POINTS, dtype=getattr(L, dt), requires_grad=True)
    y = x * 1.0
    v0 = y._version
    r = f(L, y)
    same = r is y
    bumped = y._version - v0
    node = type(r.grad_fn).__name__
    v = L.tensor(np.cos(np.arange(len(POINTS))), dtype=getattr(L, dt))
    gx, = L.autograd.grad(r, x, v, create_graph=True)
    ggx, = L.autograd.grad(gx, x, v, allow_unused=True) if gx.requires_grad and \
        "hardsigmoid" not in name else (None,)
    nexts = [type(n).__name__ for n, _ in r.grad_fn.next_functions]
    return same, bumped, (node, nexts), _np(r), _np(gx), (None if ggx is None else _np(ggx))


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_matches_torch(torch, name):
    ours = _inplace_run(tg, name, "float64")
    theirs = _inplace_run(torch, name, "float64")
    assert ours[0] and theirs[0], "an in-place op returns its input"
    assert ours[1] == theirs[1] == 1, "one version bump"
    assert ours[2] == theirs[2] and ours[2][0] == INPLACE[name][1]   # node and next_functions
    for a, b in zip(ours[3:], theirs[3:]):
        if a is None or b is None:
            assert b is None or not np.any(b), (a, b)
            assert a is None or not np.any(a), (a, b)
            continue
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_on_leaf_requiring_grad_raises(name):
    f, _ = INPLACE[name]
    x = tg.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        f(tg, x)
    with tg.no_grad():      # allowed under no_grad, as torch
        assert f(tg, x) is x


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_without_grad_writes(torch, name):
    a = np.array([-2.0, -0.5, 0.0, 0.5, 4.0, 7.0], np.float32)
    x, t = tg.tensor(a), torch.tensor(a)
    rx, rt = INPLACE[name][0](tg, x), INPLACE[name][0](torch, t)
    assert rx is x and rt is t and x._version == t._version == 1
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1.3e-6, atol=1e-6)


@pytest.mark.parametrize("fn,slope", [
    (lambda x: F.leaky_relu_(x, -0.1), "leakyReLu"), (lambda x: F.elu_(x, -1.0), "elu"),
    (lambda x: F.celu_(x, -1.0), "elu")])
def test_inplace_negative_slope_backward_raises_as_torch(fn, slope):
    x = tg.tensor([-2.0, 1.0], requires_grad=True)
    y = fn(x * 1)     # the forward runs; its backward refuses
    assert type(y.grad_fn).__name__ in ("LeakyReluBackward1", "EluBackward1", "CeluBackward1")
    with pytest.raises(RuntimeError, match=f"In-place {slope} backward calculation is triggered "
                                           f"with a negative slope"):
        y.sum().backward()


def test_inplace_zero_slope_is_fine():
    x = tg.tensor([-2.0, 0.0, 1.0], requires_grad=True)
    F.leaky_relu_(x * 1, 0.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 1.0])


@pytest.mark.parametrize("name", ["leaky_relu_", "elu_", "celu_", "selu_"])
def test_inplace_saved_result_then_modified_raises(name):
    """The result-based backward saved the result: changing it again is the in-place error."""
    x = tg.tensor([-1.0, 2.0], requires_grad=True)
    y = INPLACE[name][0](tg, x * 1)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_saved_input_is_kept():
    """Ops whose gradient needs the input (silu, hardtanh_, threshold_) keep the value before
    the write, as torch's original self: the gradient is that of the input."""
    a = np.array([-1.5, -0.2, 0.3, 2.0])
    for f, ref in [(lambda y: F.silu(y, True), F.silu), (lambda y: F.hardtanh_(y), F.hardtanh),
                   (lambda y: F.threshold_(y, 0.0, 5.0), lambda y: F.threshold(y, 0.0, 5.0))]:
        x1, x2 = tg.tensor(a, requires_grad=True), tg.tensor(a, requires_grad=True)
        f(x1 * 1).sum().backward()
        ref(x2 * 1).sum().backward()
        np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy())


def test_inplace_through_a_view_records_copyslices(torch):
    for L in (tg, torch):
        x = L.tensor([[-1.0, 2.0], [0.5, -3.0]], requires_grad=True)
        y = x * 1
        L.nn.functional.leaky_relu_(y[0], 0.5)
        assert type(y.grad_fn).__name__ == "CopySlices"
        y.sum().backward()
        assert x.grad.tolist() == [[0.5, 1.0], [1.0, 1.0]]


def test_inplace_integer_tensor_keeps_dtype(torch):
    for L in (tg, torch):
        x = L.tensor([-3, 0, 9])
        assert L.nn.functional.relu6(x, inplace=True) is x
        assert x.tolist() == [0, 0, 6] and x.dtype == L.int64
        y = L.tensor([-1, 0, 1, 2])
        L.threshold_(y, 0.5, 7)
        assert y.tolist() == [7, 7, 1, 2]


def test_inplace_of_non_float_torch_refuses():
    with pytest.raises(NotImplementedError, match="leaky_relu_cpu"):
        F.leaky_relu_(tg.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="elu_cpu"):
        tg.selu_(tg.tensor([1, 2]))


# ---- layers --------------------------------------------------------------------------------------
# (name, args, kwargs)
LAYERS = [
    ("LeakyReLU", (), {}), ("LeakyReLU", (0.2,), {}), ("LeakyReLU", (0.2, True), {}),
    ("ELU", (), {}), ("ELU", (2.0,), {"inplace": True}), ("ELU", (), {"alpha": 1}),
    ("SELU", (), {}), ("SELU", (True,), {}),
    ("CELU", (), {}), ("CELU", (0.5, True), {}),
    ("SiLU", (), {}), ("SiLU", (True,), {}), ("Mish", (), {}), ("Mish", (), {"inplace": True}),
    ("Softplus", (), {}), ("Softplus", (2, 10), {}), ("Softplus", (), {"beta": 2.5}),
    ("Softsign", (), {}),
    ("Hardtanh", (), {}), ("Hardtanh", (-2, 3, True), {}), ("Hardtanh", (-2.0, 3.0), {}),
    ("ReLU6", (), {}), ("ReLU6", (True,), {}),
    ("Hardsigmoid", (), {}), ("Hardsigmoid", (True,), {}),
    ("Hardswish", (), {}), ("Hardswish", (True,), {}),
    ("LogSigmoid", (), {}),
    ("Softmin", (1,), {}), ("Softmin", (), {"dim": -1}),
    ("Threshold", (0.1, 20.0), {}), ("Threshold", (1, 2, True), {}),
    ("GLU", (), {}), ("GLU", (0,), {}),
    ("Tanhshrink", (), {}),
    ("Softshrink", (), {}), ("Softshrink", (1,), {}), ("Hardshrink", (), {}),
    ("Hardshrink", (0.25,), {}),
    ("PReLU", (), {}), ("PReLU", (4,), {}), ("PReLU", (4, 0.1), {}),
]
_LAYER_IDS = [f"{n}-{i}" for i, (n, _, _) in enumerate(LAYERS)]


@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=_LAYER_IDS)
def test_layer_matches_torch(torch, name, args, kwargs):
    ours, theirs = getattr(tg.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    pub = {k: v for k, v in vars(theirs).items() if not k.startswith("_")}
    for k, v in pub.items():
        assert getattr(ours, k) == v, k
    a = np.random.default_rng(3).uniform(-4, 4, size=(2, 4, 6)).astype(np.float32)
    a[0, 0, :4] = [0.0, -3.0, 3.0, 0.5]
    ox, tx = tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    oy, ty = ours(ox * 1), theirs(tx * 1)
    np.testing.assert_allclose(oy.detach().numpy(), ty.detach().numpy(), rtol=1.3e-6, atol=1e-5)
    assert type(oy.grad_fn).__name__ == type(ty.grad_fn).__name__
    c = np.cos(np.arange(oy.numel())).reshape(tuple(oy.shape)).astype(np.float32)
    (oy * tg.tensor(c)).sum().backward()
    (ty * torch.tensor(c)).sum().backward()
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1.3e-6, atol=1e-5)
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == tn
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1.3e-6, atol=1e-5)


def test_layers_are_exported():
    new = ["LeakyReLU", "ELU", "SELU", "CELU", "SiLU", "Mish", "Softplus", "Softsign", "Hardtanh",
           "ReLU6", "Hardsigmoid", "Hardswish", "LogSigmoid", "Softmin", "Threshold", "GLU",
           "Tanhshrink", "Softshrink", "Hardshrink", "PReLU"]
    for n in new:
        cls = getattr(tg.nn, n)
        assert n in tg.nn.__all__ and issubclass(cls, tg.nn.Module)
        assert cls.__doc__
    assert issubclass(tg.nn.ReLU6, tg.nn.Hardtanh)


def test_prelu_layer_parameter():
    m = tg.nn.PReLU(3, init=0.1, dtype=tg.float64)
    assert isinstance(m.weight, tg.nn.Parameter) and m.weight.requires_grad
    assert m.weight.dtype is tg.float64 and tuple(m.weight.shape) == (3,)
    assert m.weight.tolist() == [0.1, 0.1, 0.1]
    assert list(m.state_dict()) == ["weight"] and m.num_parameters == 3 and m.init == 0.1
    x = tg.tensor(np.arange(-6.0, 6.0).reshape(2, 3, 2), requires_grad=True)
    m(x).sum().backward()
    # weight gradient: the sum of the negative inputs of its channel
    assert m.weight.grad.tolist() == [-6.0 - 5.0, -4.0 - 3.0, -2.0 - 1.0]
    with tg.no_grad():
        m.weight.fill_(0.5)
    m.reset_parameters()
    assert m.weight.tolist() == [0.1, 0.1, 0.1]
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers"):
        m(tg.zeros(2, 4, dtype=tg.float64))


def test_prelu_optimizer_step():
    m = tg.nn.PReLU()
    opt = tg.optim.SGD(m.parameters(), lr=0.5)
    m(tg.tensor([-2.0, 1.0])).sum().backward()
    opt.step()
    assert m.weight.tolist() == [pytest.approx(0.25 + 1.0)]


def test_hardtanh_layer_checks_and_deprecated_names(torch):
    for L in (tg, torch):
        with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val"):
            L.nn.Hardtanh(1, 1)
        with pytest.warns(FutureWarning, match="min_value"):
            m = L.nn.Hardtanh(min_value=-2.0)
        assert m.min_val == -2.0
        with pytest.warns(FutureWarning, match="max_value"):
            assert L.nn.Hardtanh(max_value=2.5).max_val == 2.5


def test_layer_inplace_writes_input():
    for m in (tg.nn.LeakyReLU(inplace=True), tg.nn.ELU(inplace=True), tg.nn.SELU(True),
              tg.nn.CELU(inplace=True), tg.nn.SiLU(True), tg.nn.Mish(True),
              tg.nn.Hardtanh(inplace=True), tg.nn.ReLU6(True), tg.nn.Hardsigmoid(True),
              tg.nn.Hardswish(True), tg.nn.Threshold(0.0, 1.0, True), tg.nn.ReLU(True)):
        x = tg.tensor([-1.0, 2.0])
        assert m(x) is x and x._version == 1


def test_softmin_layer_implicit_dim_warns(torch):
    for L in (tg, torch):
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            y = L.nn.Softmin()(L.tensor([[1.0, 2.0], [3.0, 5.0]]))
        assert y.sum(1).tolist() == pytest.approx([1.0, 1.0])


# ---- torch's namespace and Tensor forms ----------------------------------------------------------
def test_public_forms_exist_as_in_torch(torch):
    for n in ("selu", "selu_", "celu", "celu_", "threshold", "threshold_", "hardshrink", "prelu",
              "relu_"):
        assert hasattr(tg, n) == hasattr(torch, n) is True, n
    for n in ("leaky_relu", "elu", "silu", "mish", "softplus", "hardtanh", "glu", "softshrink"):
        assert not hasattr(tg, n) and not hasattr(torch, n), n
    for n in ("hardshrink", "prelu", "relu_"):
        assert callable(getattr(tg.Tensor, n)), n
    for n in ("leaky_relu", "selu", "threshold", "glu", "softmin"):
        assert not hasattr(tg.Tensor, n) and not hasattr(torch.Tensor, n), n
    for n in ("leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_",
              "silu", "mish", "softplus", "softsign", "hardtanh", "hardtanh_", "relu6",
              "hardsigmoid", "hardswish", "logsigmoid", "softmin", "threshold", "threshold_",
              "glu", "tanhshrink", "softshrink", "hardshrink", "prelu", "relu_"):
        assert callable(getattr(F, n)) and callable(getattr(torch.nn.functional, n)), n


def test_torch_namespace_signatures(torch):
    x = np.array([-1.5, -0.2, 0.0, 0.4, 2.0], np.float32)
    cases = [lambda L, t: L.selu(t), lambda L, t: L.celu(t, alpha=2.0),
             lambda L, t: L.threshold(t, 0.3, 9.0), lambda L, t: L.hardshrink(t, lambd=0.3),
             lambda L, t: t.hardshrink(0.3), lambda L, t: t.prelu(L.tensor([0.3])),
             lambda L, t: L.prelu(t, L.tensor(0.3))]
    for f in cases:
        np.testing.assert_allclose(f(tg, tg.tensor(x)).numpy(), f(torch, torch.tensor(x)).numpy(),
                                   rtol=1e-6)
    for L in (tg, torch):
        with pytest.raises(TypeError):
            L.selu(L.tensor(x), True)     # no inplace argument in the namespace form


# ---- errors, as torch ---------------------------------------------------------------------------
def _outcome(fn, L):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(L)
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e)
    return "ok", (tuple(r.shape), str(r.dtype).rpartition(".")[2], r.tolist())


ERRORS = {
    "leaky_relu_int": lambda L: L.nn.functional.leaky_relu(L.tensor([1, -2])),
    "elu_int": lambda L: L.nn.functional.elu(L.tensor([1, -2])),
    "selu_bool": lambda L: L.nn.functional.selu(L.tensor([True])),
    "celu_int": lambda L: L.nn.functional.celu(L.tensor([1])),
    "celu_alpha0": lambda L: L.nn.functional.celu(L.tensor([1.0]), 0.0),
    "silu_int": lambda L: L.nn.functional.silu(L.tensor([1])),
    "mish_int": lambda L: L.nn.functional.mish(L.tensor([1])),
    "softplus_int": lambda L: L.nn.functional.softplus(L.tensor([1])),
    "softsign_int": lambda L: L.nn.functional.softsign(L.tensor([-2, 0, 3])),
    "softsign_bool": lambda L: L.nn.functional.softsign(L.tensor([True])),
    "hardtanh_int": lambda L: L.nn.functional.hardtanh(L.tensor([-3, 0, 3]), -1.9, 2.9),
    "hardtanh_uint8_neg": lambda L: L.nn.functional.hardtanh(L.tensor([1], dtype=L.uint8)),
    "hardtanh_bool": lambda L: L.nn.functional.hardtanh(L.tensor([True])),
    "hardtanh_order": lambda L: L.nn.functional.hardtanh(L.tensor([1.0]), 2.0, 1.0),
    "hardtanh__order": lambda L: L.nn.functional.hardtanh_(L.tensor([0.0, 5.0]), 2.0, 1.0),
    "relu6_uint8": lambda L: L.nn.functional.relu6(L.tensor([200, 3], dtype=L.uint8)),
    "relu6_int8": lambda L: L.nn.functional.relu6(L.tensor([-3, 0, 9], dtype=L.int8)),
    "hardsigmoid_int": lambda L: L.nn.functional.hardsigmoid(L.tensor([1])),
    "hardswish_int": lambda L: L.nn.functional.hardswish(L.tensor([1])),
    "logsigmoid_int": lambda L: L.nn.functional.logsigmoid(L.tensor([1])),
    "softmin_int": lambda L: L.nn.functional.softmin(L.tensor([1, 2]), 0),
    "softmin_int_dim0": lambda L: L.nn.functional.softmin(L.tensor([[1, 2]]), 0),
    "softmin_int_dtype": lambda L: L.nn.functional.softmin(L.tensor([1, 2]), 0, dtype=L.float64),
    "softmin_bool": lambda L: L.nn.functional.softmin(L.tensor([True]), 0),
    "softmin_dim": lambda L: L.nn.functional.softmin(L.ones(2, 3), 2),
    "threshold_int": lambda L: L.nn.functional.threshold(L.tensor([-1, 0, 1, 2]), -1.5, 9),
    "threshold_bool": lambda L: L.nn.functional.threshold(L.tensor([True]), 0, 1),
    "threshold_half_overflow": lambda L: L.nn.functional.threshold(
        L.tensor([1.0], dtype=L.float16), 0.5, 70000.0),
    "glu_0d": lambda L: L.nn.functional.glu(L.tensor(1.0)),
    "glu_odd": lambda L: L.nn.functional.glu(L.ones(2, 3)),
    "glu_dim": lambda L: L.nn.functional.glu(L.ones(2, 4), 2),
    "glu_neg_dim": lambda L: L.nn.functional.glu(L.ones(2, 4), -3),
    "glu_int": lambda L: L.nn.functional.glu(L.ones(2, 4, dtype=L.int64)),
    "tanhshrink_int": lambda L: L.nn.functional.tanhshrink(L.tensor([1, 2])),
    "tanhshrink_bool": lambda L: L.nn.functional.tanhshrink(L.tensor([True])),
    "softshrink_neg": lambda L: L.nn.functional.softshrink(L.ones(2), -1.0),
    "softshrink_neg_double": lambda L: L.nn.functional.softshrink(L.ones(2, dtype=L.float64), -0.5),
    "softshrink_int": lambda L: L.nn.functional.softshrink(L.tensor([1])),
    "hardshrink_neg": lambda L: L.nn.functional.hardshrink(L.tensor([-0.5, 0.0, 2.0]), -1.0),
    "hardshrink_int": lambda L: L.nn.functional.hardshrink(L.tensor([1])),
    "prelu_int": lambda L: L.nn.functional.prelu(L.ones(2, 3, dtype=L.int64),
                                                 L.ones(1, dtype=L.int64)),
    "prelu_dtypes": lambda L: L.nn.functional.prelu(L.ones(2, 3), L.ones(1, dtype=L.float64)),
    "prelu_2d_weight": lambda L: L.nn.functional.prelu(L.ones(2, 3), L.ones(3, 1)),
    "prelu_mismatch": lambda L: L.nn.functional.prelu(L.ones(2, 3), L.ones(2)),
    "prelu_1d_mismatch": lambda L: L.nn.functional.prelu(L.ones(4), L.ones(4)),
    "prelu_empty_channels": lambda L: L.nn.functional.prelu(L.ones(2, 0), L.ones(0)),
    "prelu_number_weight": lambda L: L.nn.functional.prelu(L.ones(2), 0.25),
    "leaky_relu_tensor_slope": lambda L: L.nn.functional.leaky_relu(L.tensor([-1.0, 2.0]),
                                                                    L.tensor(0.5)),
    "softplus_beta0": lambda L: L.nn.functional.softplus(L.tensor([-1.0, 1.0]), 0),
    "elu_nan": lambda L: L.nn.functional.elu(L.tensor([float("nan"), -1.0])),
    "softshrink_nan": lambda L: L.nn.functional.softshrink(L.tensor([float("nan"), -0.25])),
    "hardshrink_nan": lambda L: L.nn.functional.hardshrink(L.tensor([float("nan"), -0.25])),
    "threshold_nan": lambda L: L.nn.functional.threshold(L.tensor([float("nan"), 0.0]), 0.5, 7.0),
    "hardtanh_nan": lambda L: L.nn.functional.hardtanh(L.tensor([float("nan"), 5.0])),
    "relu6_neg_zero": lambda L: L.signbit(L.nn.functional.relu6(L.tensor([-0.0, 1e-45]))),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_and_edge_values_match_torch(torch, case):
    if case == "relu6_neg_zero" and not hasattr(tg, "signbit"):
        x = tg.nn.functional.relu6(tg.tensor([-0.0, 1e-45]))
        assert np.signbit(x.numpy()).tolist() == [True, False]
        return
    ours, theirs = _outcome(ERRORS[case], tg), _outcome(ERRORS[case], torch)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        assert ours[1][:2] == theirs[1][:2]
        np.testing.assert_allclose(np.array(ours[1][2], float), np.array(theirs[1][2], float),
                                   rtol=1e-6, equal_nan=True)
    else:
        # torch's message is kept (tapegrad may add a clause naming the op; a dtype is named
        # as tapegrad names it, not as C++ does: c10::Half)
        head = theirs[1].split("\n")[0].rstrip(".").replace("c10::", "")
        assert head[:40].lower() in ours[1].lower(), (ours[1], theirs[1])


def test_error_messages_name_the_op():
    with pytest.raises(IndexError, match="glu"):
        F.glu(tg.ones(2, 4), 2)
    with pytest.raises(IndexError, match="softmin"):
        F.softmin(tg.ones(2, 3), 3)
    with pytest.raises(RuntimeError, match="glu"):
        F.glu(tg.ones(2, 3))
    with pytest.raises(RuntimeError, match="softshrink"):
        F.softshrink(tg.ones(2), -1.0)
    with pytest.raises(RuntimeError, match="threshold"):
        F.threshold(tg.ones(2, dtype=tg.float16), 1e6, 0.0)
    with pytest.raises(TypeError, match="leaky_relu"):
        F.leaky_relu(tg.ones(2), "0.1")
    with pytest.raises(TypeError, match="prelu"):
        F.prelu(tg.ones(2), 0.25)
    with pytest.raises(TypeError, match="softplus"):
        F.softplus([1.0, 2.0])


# ---- shapes, dtypes and graph details ------------------------------------------------------------
def test_prelu_weight_view_as_torch(torch):
    """torch reshapes the weight to broadcast (a ViewBackward0 between it and the kernel), except
    when a 0-d / 1-d input already has a weight of its own number of dims."""
    for xs, ws in [((2, 3, 4), (3,)), ((2, 3), (3,)), ((2, 3), ()), ((4,), (1,)), ((4,), ()),
                   ((), (1,)), ((), ())]:
        names = []
        for L in (tg, torch):
            x = L.ones(xs, requires_grad=True)
            w = L.full(ws, 0.25, requires_grad=True)
            y = L.nn.functional.prelu(x, w)
            assert tuple(y.shape) == xs
            names.append([type(n).__name__ if n is not None else None
                          for n, _ in y.grad_fn.next_functions])
        assert names[0] == names[1], (xs, ws, names)


def test_glu_shapes_and_dtype():
    x = tg.zeros(2, 6, 4, dtype=tg.float64)
    assert tuple(F.glu(x, 1).shape) == (2, 3, 4) and F.glu(x, 1).dtype is tg.float64
    assert tuple(F.glu(x).shape) == (2, 6, 2)
    assert tuple(F.glu(tg.zeros(0, 4), 0).shape) == (0, 4)


def test_softmin_is_softmax_of_negation(torch):
    a = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float32)
    for L in (tg, torch):
        x = L.tensor(a, requires_grad=True)
        y = L.nn.functional.softmin(x, dim=1)
        assert type(y.grad_fn).__name__ == "SoftmaxBackward0"
        assert type(y.grad_fn.next_functions[0][0]).__name__ == "NegBackward0"
        yd = L.nn.functional.softmin(x, 1, dtype=L.float64)
        assert yd.dtype == L.float64
        assert type(yd.grad_fn.next_functions[0][0]).__name__ == "ToCopyBackward0"
    np.testing.assert_allclose(F.softmin(tg.tensor(a), 1).numpy(),
                               torch.nn.functional.softmin(torch.tensor(a), 1).numpy(), rtol=1e-6)


def test_selu_values_and_constants():
    x = tg.tensor([-1.0, 1.0], dtype=tg.float64)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    np.testing.assert_allclose(F.selu(x).numpy(), [scale * alpha * (np.exp(-1) - 1), scale],
                               rtol=1e-15)


def test_stable_tails():
    x = tg.tensor([-1000.0, -100.0, 100.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")     # no overflow warnings from NumPy
        assert F.logsigmoid(x).tolist()[0] == -1000.0
        assert F.softplus(x).tolist()[3] == 1000.0
        assert F.silu(x).tolist() == [-0.0, -0.0, 100.0, 1000.0]
        assert F.mish(x).tolist()[2:] == [100.0, 1000.0]
        x2 = x.clone().requires_grad_()
        F.logsigmoid(x2).sum().backward()
        g = x2.grad.tolist()
        assert g[:2] == [1.0, 1.0] and 0 <= g[2] < 1e-40 and g[3] == 0.0


def test_subgradients_at_kinks():
    def grad(f, v):
        x = tg.tensor(v, dtype=tg.float64, requires_grad=True)
        f(x).sum().backward()
        return x.grad.tolist()
    assert grad(lambda x: F.leaky_relu(x, 0.1), [0.0]) == [pytest.approx(0.1)]
    assert grad(lambda x: F.elu(x, 2.0), [0.0]) == [2.0]
    assert grad(F.hardtanh, [-1.0, 1.0]) == [0.0, 0.0]
    assert grad(F.relu6, [0.0, 6.0]) == [0.0, 0.0]
    assert grad(F.hardsigmoid, [-3.0, 3.0]) == [0.0, 0.0]
    assert grad(F.hardswish, [-3.0, 3.0]) == [0.0, 1.0]
    assert grad(lambda x: F.threshold(x, 1.0, 0.0), [1.0]) == [0.0]
    assert grad(F.softshrink, [-0.5, 0.5]) == [0.0, 0.0]
    assert grad(F.hardshrink, [-0.5, 0.5]) == [0.0, 0.0]
    assert grad(lambda x: F.prelu(x, tg.tensor([0.3], dtype=tg.float64)), [0.0]) == \
        [pytest.approx(0.3)]


def test_docstrings_present():
    for n in ("leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_",
              "silu", "mish", "softplus", "softsign", "hardtanh", "hardtanh_", "relu6",
              "hardsigmoid", "hardswish", "logsigmoid", "softmin", "threshold", "threshold_",
              "glu", "tanhshrink", "softshrink", "hardshrink", "prelu"):
        doc = getattr(F, n).__doc__
        assert doc and ("Raises" in doc or "Error" in doc or "In place" in doc), n
