"""What this stop's per-call speed-ups must keep, checked against torch where it has an answer:
the engine's direct grad-mode switch and NumPy error state, Addmm summing its own bias gradient,
nll_loss's single reduce and single bounds check, linear's fast path."""
import numpy as np
import pytest

import tapegrad as tg


def _torch():
    return pytest.importorskip("torch")


# ---- the engine puts grad mode and NumPy's error state back, whatever happens ----------------
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("outer_grad", [True, False])
def test_backward_restores_grad_mode_and_numpy_errstate(create_graph, outer_grad):
    seen = []
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3.0).sum()
    y.grad_fn.register_hook(lambda gi, go: seen.append(tg.is_grad_enabled()))
    old = np.seterr(all="raise")
    try:
        with tg.set_grad_enabled(outer_grad):
            y.backward(retain_graph=True, create_graph=create_graph)
            assert tg.is_grad_enabled() is outer_grad
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise",
                               "invalid": "raise"}
        # a backward that fails (the graph was freed) puts both back too
        y.backward()
        with tg.set_grad_enabled(outer_grad):
            with pytest.raises(RuntimeError, match="second time"):
                y.backward()
            assert tg.is_grad_enabled() is outer_grad
        assert np.geterr()["invalid"] == "raise"
    finally:
        np.seterr(**old)
    # inside the walk, grad mode is create_graph (as torch); later walks ran without it
    assert seen == [create_graph, False, False]


def test_backward_is_quiet_about_inf_and_nan():
    x = tg.tensor([0.0, -1.0], requires_grad=True)
    old = np.seterr(all="raise")
    try:
        x.log().sum().backward()    # 1/0 and a log of a negative: no FloatingPointError
    finally:
        np.seterr(**old)
    assert np.isinf(x.grad.numpy()[0])


# ---- Addmm's bias gradient, summed by Addmm itself ---------------------------------------------
_BIASES = [(5,), (1, 5), (), (4, 5), (1,)]


def _addmm_grads(lib, bias_shape):
    rng = np.random.RandomState(1)
    b = lib.tensor(np.asarray(rng.randn(*bias_shape)), requires_grad=True)
    m1 = lib.tensor(rng.randn(4, 3), requires_grad=True)
    m2 = lib.tensor(rng.randn(3, 5), requires_grad=True)
    out = lib.addmm(b, m1, m2)
    w = lib.tensor(rng.randn(4, 5))
    gb, gm1 = lib.autograd.grad((out * w).sum() ** 2, (b, m1), create_graph=True)
    names = (type(gb.grad_fn).__name__ if gb.grad_fn is not None else None)
    # a second derivative through the bias gradient
    gg, = lib.autograd.grad((gb ** 2).sum(), m1)
    return [gb.detach().numpy().copy(), gm1.detach().numpy().copy(), gg.numpy().copy()], names


@pytest.mark.parametrize("bias_shape", _BIASES)
def test_addmm_bias_gradient_sums_to_the_bias_shape(bias_shape):
    got, _ = _addmm_grads(tg, bias_shape)
    assert got[0].shape == bias_shape
    torch = _torch()
    want, _ = _addmm_grads(torch, bias_shape)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_linear_bias_gradient_and_graph_as_torch():
    rng = np.random.RandomState(2)
    arrays = [rng.randn(6, 4).astype(np.float32), rng.randn(3, 4).astype(np.float32),
              rng.randn(3).astype(np.float32)]

    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        y = lib.nn.functional.linear(x, w, b)
        fns = [type(f).__name__ for f, _ in y.grad_fn.next_functions if f is not None]
        (y * y).sum().backward()
        return fns, [t.grad.numpy().copy() for t in (x, w, b)], w.grad.is_contiguous()

    fns, grads, contiguous = run(tg)
    assert fns == ["AccumulateGrad", "AccumulateGrad", "TBackward0"] and contiguous
    torch = _torch()
    want = run(torch)
    assert fns == want[0]
    for g, w in zip(grads, want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_linear_fast_path_keeps_the_general_errors():
    x32 = tg.ones(2, 3)
    with pytest.raises(RuntimeError, match="same dtype"):
        tg.nn.functional.linear(x32, tg.ones(4, 3, dtype=tg.float64), tg.ones(4))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        tg.nn.functional.linear(x32, tg.ones(4, 2), tg.ones(4))


# ---- nll_loss: one reduce for mean and sum, one bounds check ---------------------------------
_LOGP = np.log(np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3], [0.25, 0.25, 0.5], [1.0, 1e-30, 1e-30]]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target", [[2, 0, 1, 0], [0, 0, 0, 0]])
def test_nll_loss_values_and_gradients_match_torch(dtype, reduction, target):
    def run(lib):
        lp = lib.tensor(_LOGP.astype(dtype), requires_grad=True)
        loss = lib.nn.functional.nll_loss(lp, lib.tensor(target), reduction=reduction)
        loss.sum().backward()
        return loss.detach().numpy().copy(), lp.grad.numpy().copy(), str(loss.dtype)

    got = run(tg)
    torch = _torch()
    want = run(torch)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2].split(".")[-1] == want[2].split(".")[-1]


@pytest.mark.parametrize("target,dtype", [([0, 3], "int64"), ([-1, 0], "int64"),
                                          ([0, 7], "uint8"), ([-100, 0], "int64")])
def test_nll_loss_out_of_range_targets_raise_index_error(target, dtype):
    lp = tg.zeros(2, 3, requires_grad=True)
    t = tg.tensor(np.array(target).astype(dtype))
    if target[0] == -100:       # the default ignore_index: not out of range
        assert tg.nn.functional.nll_loss(lp, t).item() == 0.0
        return
    with pytest.raises(IndexError, match="out of bounds"):
        tg.nn.functional.nll_loss(lp, t)
    assert lp.grad is None


def test_nll_loss_of_an_empty_batch_is_nan_as_torch():
    z = tg.zeros((0, 3), requires_grad=True)
    loss = tg.nn.functional.cross_entropy(z, tg.zeros(0, dtype=tg.int64))
    loss.backward()
    assert np.isnan(loss.item()) and z.grad.shape == (0, 3)


# ---- a number where an op takes a tensor: torch's TypeError, not NumPy's AttributeError -------
@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "relu", "sin", "neg", "sqrt", "log",
                                  "floor", "nn.functional.relu"])
@pytest.mark.parametrize("value", [3, 2.5])
def test_unary_op_of_a_number_raises_torch_type_error(name, value):
    def call(lib):
        f = lib
        for part in name.split("."):
            f = getattr(f, part)
        with pytest.raises(TypeError) as info:
            f(value)
        return str(info.value)

    msg = call(tg)
    op = name.split(".")[-1]
    assert msg.startswith(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                          f"{type(value).__name__}")
    torch = pytest.importorskip("torch")
    assert call(torch) == msg


# ---- found by this stop's review -------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("outer,create_graph,switch_to", [(True, True, False), (False, False, True),
                                                          (True, False, False)])
def test_backward_puts_back_grad_mode_a_hook_switched(outer, create_graph, switch_to):
    """torch restores the caller's grad mode after backward even when a hook set it (without a
    with block) to something else."""
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = (x * 2).sum()
        y.grad_fn.register_hook(lambda gi, go: lib.set_grad_enabled(switch_to) and None)
        with lib.set_grad_enabled(outer):
            y.backward(create_graph=create_graph)
            return lib.is_grad_enabled()

    assert run(tg) is outer
    torch = pytest.importorskip("torch")
    assert run(torch) is outer


def test_backward_keeps_numpy_buffer_size_and_error_callback():
    seen = []

    def hook(gi, go):
        seen.append((np.getbufsize(), np.geterrcall(), np.geterr()["invalid"]))

    def callback(kind, flag):
        pass

    x = tg.ones(3, requires_grad=True)
    y = (x * 2).sum()
    y.grad_fn.register_hook(hook)
    old_size, old_call = np.getbufsize(), np.geterrcall()
    try:
        np.setbufsize(16384)
        np.seterrcall(callback)
        y.backward(retain_graph=True)
        np.setbufsize(8192 * 3)
        y.backward()
    finally:
        np.setbufsize(old_size)
        np.seterrcall(old_call)
    assert seen == [(16384, callback, "ignore"), (8192 * 3, callback, "ignore")]


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("shape", [(3, 1), (0, 3)])
def test_nll_loss_zero_is_positive_zero_as_torch(reduction, shape):
    """One class (log-probability 0) or no rows: the loss is +0.0 (or nan), never -0.0."""
    def run(lib):
        lp = lib.zeros(shape)
        loss = lib.nn.functional.nll_loss(lp, lib.zeros(shape[0], dtype=lib.int64),
                                          reduction=reduction)
        return loss.item()

    got = run(tg)
    torch = pytest.importorskip("torch")
    want = run(torch)
    if np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == want == 0.0 and np.copysign(1.0, got) == np.copysign(1.0, want) == 1.0


# ---- linear's and addmm's added term: torch's type and dtype checks --------------------------
def _bias_cases(lib):
    F = lib.nn.functional
    x, w = lib.ones(2, 3), lib.ones(4, 3)
    f64 = lib.ones(4, dtype=lib.float64)
    return {
        "linear f64 bias": lambda: F.linear(x, w, f64),
        "linear float bias": lambda: F.linear(x, w, 1.0),
        "linear list bias": lambda: F.linear(x, w, [1.0] * 4),
        "linear 3-d f64 bias": lambda: F.linear(lib.ones(2, 2, 3), w, f64),
        "linear 1-d f64 bias": lambda: F.linear(lib.ones(3), w, f64),
        "addmm f64 input": lambda: lib.addmm(f64, x, w.t()),
        "addmm int input": lambda: lib.addmm(lib.ones(4, dtype=lib.int64), x, w.t()),
        "addmm float input": lambda: lib.addmm(1.0, x, w.t()),
    }


@pytest.mark.parametrize("case", list(_bias_cases(tg)))
def test_bias_of_another_type_or_dtype_raises_as_torch(case):
    def run(lib):
        with pytest.raises((TypeError, RuntimeError)) as info:
            _bias_cases(lib)[case]()
        return info.type, str(info.value)

    kind, msg = run(tg)
    if kind is TypeError:
        assert "must be Tensor, not" in msg
    else:
        assert msg.startswith("self and mat2 must have the same dtype, but got ")
        assert "convert it" in msg      # (and says what to do)
    torch = pytest.importorskip("torch")
    want_kind, want_msg = run(torch)
    assert kind is want_kind
    assert msg.startswith(want_msg)


def test_linear_with_parameters_takes_the_usual_path():
    lin = tg.nn.Linear(3, 4)
    y = lin(tg.ones(2, 3))
    assert type(y.grad_fn).__name__ == "AddmmBackward0"


# ---- masked_fill's backward as derivatives.yaml: grad.masked_fill(mask, 0) ----------------------
@pytest.mark.parametrize("tensor_value", [False, True])
def test_masked_fill_backward_with_inf_gradient_as_torch(tensor_value):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = lib.tensor(5.0, requires_grad=True)
        mask = lib.tensor([True, False, True])
        y = x.masked_fill(mask, v if tensor_value else 5.0)
        g = lib.tensor([float("inf"), 1.0, float("nan")], requires_grad=True)
        gx, = lib.autograd.grad(y, x, g, create_graph=True, retain_graph=True)
        name = type(gx.grad_fn).__name__
        y.backward(g.detach())
        return x.grad.tolist(), (v.grad.item() if tensor_value else None), name

    got = run(tg)
    assert got[0] == [0.0, 1.0, 0.0]
    assert got[2] == "MaskedFillBackward0"
    torch = pytest.importorskip("torch")
    want = run(torch)
    assert got[:2] == want[:2] or (np.isnan(got[1]) and np.isnan(want[1]) and got[0] == want[0])
    assert got[2] == want[2]


# ---- an optimizer takes the user's line once per step, for every version it bumps --------------
@pytest.mark.parametrize("opt_name,kw", [("SGD", {}), ("SGD", {"momentum": 0.9}),
                                         ("Adam", {}), ("AdamW", {"amsgrad": True})])
def test_optimizer_step_names_its_line_in_the_version_error(opt_name, kw):
    import inspect
    w = tg.nn.Parameter(tg.ones(3))
    opt = getattr(tg.optim, opt_name)([w], lr=0.1, **kw)
    (w * w).sum().backward()
    loss = (w * w).sum()            # saves w
    opt.step(); line = inspect.currentframe().f_lineno  # noqa: E702
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        loss.backward()
    assert f"test_step_overhead.py:{line}" in str(info.value).split("modified in place at:")[1]


# ---- linear of other ranks with a bias: torch's _flatten_nd_linear --------------------------
def _chain(fn, depth=4):
    out, level = [], [fn]
    for _ in range(depth):
        out.append([type(f).__name__ for f in level if f is not None])
        level = [g for f in level if f is not None for g, _ in f.next_functions]
    return out


@pytest.mark.parametrize("shape", [(2, 5, 3), (3,), (2, 2, 2, 3), (0, 5, 3)])
def test_linear_flattens_contiguous_input_with_bias_as_torch(shape):
    def run(lib):
        rng = np.random.RandomState(0)
        x = lib.tensor(rng.randn(*shape), requires_grad=True)
        w = lib.tensor(rng.randn(4, 3), requires_grad=True)
        b = lib.tensor(rng.randn(4), requires_grad=True)
        y = lib.nn.functional.linear(x, w, b)
        (y * y).sum().backward()
        return _chain(y.grad_fn), tuple(y.shape), [t.grad.numpy().copy() for t in (x, w, b)]

    chain, out_shape, grads = run(tg)
    assert chain[:2] == [["ViewBackward0"], ["AddmmBackward0"]]
    assert out_shape == shape[:-1] + (4,)
    torch = pytest.importorskip("torch")
    want = run(torch)
    assert (chain, out_shape) == want[:2]
    for g, w in zip(grads, want[2]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bias_shape,x_shape", [((3, 5), (2, 3, 4)), ((2, 1, 5), (2, 3, 4)),
                                                ((), (2, 3, 4)), ((5,), (2, 3, 4)),
                                                ((1, 5), (3, 4)), ((1, 5), (2, 2, 3, 4)),
                                                ((1, 5), (4,)), ((1, 1, 5), (2, 2, 3, 4)),
                                                ((3, 5), (0, 3, 4))])
def test_linear_bias_shapes_take_torch_s_path(bias_shape, x_shape):
    """torch 2.13 flattens into one addmm only for a bias of one row (every dim but the last of
    size 1) and contiguous input; any other bias is added to the product in place."""
    def run(lib):
        x = lib.tensor(np.arange(np.prod(x_shape), dtype=np.float64).reshape(x_shape) / 7,
                       requires_grad=True)
        w = lib.tensor(np.arange(20, dtype=np.float64).reshape(5, 4) / 11, requires_grad=True)
        b = lib.tensor(np.ones(bias_shape), requires_grad=True)
        try:
            y = lib.nn.functional.linear(x, w, b)
        except RuntimeError:
            return "RuntimeError"
        (y * y).sum().backward()
        return _chain(y.grad_fn, 2), y.detach().numpy().copy(), [
            t.grad.numpy().copy() for t in (x, w, b)]

    got = run(tg)
    torch = pytest.importorskip("torch")
    want = run(torch)
    if want == "RuntimeError" or got == "RuntimeError":
        assert got == want
        return
    assert got[0] == want[0]
    for g, w in zip([got[1]] + got[2], [want[1]] + want[2]):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_linear_adds_a_bias_of_another_dtype_in_place_as_torch():
    x = tg.ones(2, 2, 3, 4).transpose(0, 1)    # (not contiguous: the matmul path)
    y = tg.nn.functional.linear(x, tg.ones(5, 4), tg.ones(5, dtype=tg.float64))
    assert y.dtype == tg.float32


def test_masked_fill_value_gradient_is_masked_select_sum_as_torch():
    x = tg.randn(3, 4, requires_grad=True)
    v = tg.tensor(1.5, requires_grad=True)
    m = tg.tensor(np.arange(12).reshape(3, 4) % 3 == 0)
    gx, gv = tg.autograd.grad(x.masked_fill(m, v), [x, v], tg.ones(3, 4, requires_grad=True),
                              create_graph=True)
    assert _chain(gv.grad_fn, 2) == [["SumBackward0"], ["MaskedSelectBackward0"]]
    assert gv.item() == 4.0


# ---- the saved-at line, however the op was reached (the walk now starts above apply) ----------
class _Twice(tg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * 2.0


_SAVERS = {
    "mul dunder": lambda a, w: a * a,
    "exp method": lambda a, w: a.exp(),
    "F.relu": lambda a, w: tg.nn.functional.relu(a),
    "F.linear": lambda a, w: tg.nn.functional.linear(a, w, tg.ones(4)),
    "F.nll_loss": lambda a, w: tg.nn.functional.nll_loss(a, tg.tensor([0, 1])),
    "nn.Linear": lambda a, w: _LIN(a),
    "Function": lambda a, w: _Twice.apply(a),
}
_LIN = tg.nn.Linear(3, 4)


@pytest.mark.parametrize("name", list(_SAVERS))
def test_version_error_names_the_line_that_saved(name):
    """The line named is the innermost one outside the package: here each lambda's own line."""
    x = tg.ones(2, 3, requires_grad=True)
    w = tg.ones(4, 3, requires_grad=True)
    a = x * 1.0
    y = _SAVERS[name](a, w)
    if name in ("exp method", "F.relu"):
        y.mul_(2)       # (these save their result)
    else:
        a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
        y.sum().backward()
    saved_at = str(info.value).split("saved by the forward op at:")[1].split("\n")[0]
    line = _SAVERS[name].__code__.co_firstlineno
    assert f"test_step_overhead.py:{line} (in <lambda>)" in saved_at
