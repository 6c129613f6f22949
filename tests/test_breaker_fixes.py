"""Regressions found by comparing tapegrad with torch 2.13 (a tester's repro scripts):

1. layer_norm's double backward with a weight when ``normalized_shape`` is the whole input
   (and an empty input), 2. mse_loss 'mean' of no elements, 3. diff with n=0 and
   prepend/append, 4. softplus's second derivative at beta * x == threshold, 5. masked_fill's
   argument checks and out-of-place broadcasting, 6. group_norm's one-value-per-group and
   num_groups=0 errors, batch_norm's running statistics that require grad, 7. the *stack ops
   given one Tensor, broadcast errors before dtype errors in hypot/logaddexp/lerp, scatter_reduce's
   legacy 'max'/'min' backward, 8. diagflat and row_stack; later breakers' findings: add's and
   the factories' out=, .grad's version counts (accumulation in place, copies, the engine's
   buffer), calling a node by hand, next_functions of number ** x and clamp, a custom Function
   dirtying a view, backward(inputs=) on a non-leaf, .grad that cannot be added to in place,
   Python ints beyond 64 bits, a bool tensor clamped by numbers, maximum/minimum given a number.

Each has a tapegrad-only check of the right value or exception, and a comparison with torch
(the ``torch`` fixture skips cleanly without it).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd.graph import EXACT_REFCOUNTS

F = tg.nn.functional


def _np(t):
    return None if t is None else t.detach().numpy()


def _outcome(lib, fn):
    """('ok', value as an array or a Python object) or ('exc', exception type name)."""
    try:
        r = fn(lib)
    except Exception as e:          # noqa: BLE001 - the type is what is compared
        return ("exc", type(e).__name__, str(e))
    if isinstance(r, tuple):
        return ("ok", tuple(_np(t) if hasattr(t, "detach") else t for t in r))
    return ("ok", _np(r) if hasattr(r, "detach") else r)


def _same(a, b):
    assert a[0] == b[0], (a, b)
    if a[0] == "exc":
        assert a[1] == b[1], (a, b)
        return
    va, vb = a[1], b[1]
    if isinstance(va, tuple):
        assert len(va) == len(vb)
        for x, y in zip(va, vb):
            _same(("ok", x), ("ok", y))
        return
    if isinstance(va, np.ndarray):
        assert va.shape == vb.shape and va.dtype == vb.dtype, (va, vb)
        np.testing.assert_allclose(va, vb, rtol=1e-6, atol=1e-7, equal_nan=True)
    else:
        assert str(va) == str(vb).replace("torch.", "tapegrad."), (va, vb)


def _compare(torch, fn):
    _same(_outcome(tg, fn), _outcome(torch, fn))


# ---- 1. layer_norm double backward ----------------------------------------------------------------
def _ln_double(lib, shape, full, data):
    x = lib.tensor(np.array(data, np.float64).reshape(shape), requires_grad=True)
    ns = tuple(x.shape) if full else tuple(x.shape[-1:])
    n = int(np.prod(ns))
    w = lib.tensor(np.arange(1.0, 1.0 + n).reshape(ns), requires_grad=True)
    b = lib.tensor(np.zeros(ns), requires_grad=True)
    y = F.layer_norm(x, ns, w, b) if lib is tg else lib.nn.functional.layer_norm(x, ns, w, b)
    go = lib.tensor(np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape))
    gs = lib.autograd.grad((y * go).sum(), (x, w, b), create_graph=True)
    s = sum((g * g).sum() for g in gs if g.requires_grad)
    return tuple(gs) + tuple(lib.autograd.grad(s, (x, w), allow_unused=True))


_LN_CASES = [((3,), True, [1.0, 2.0, 4.0]), ((2, 3), True, [1.0, 2.0, 4.0, 0.0, -1.0, 3.0]),
             ((0, 3), True, []), ((0, 3), False, []),
             ((2, 3), False, [1.0, 2.0, 4.0, 0.0, -1.0, 3.0])]


@pytest.mark.parametrize("shape,full,data", _LN_CASES)
def test_layer_norm_double_backward_whole_input(shape, full, data):
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # no NumPy warning for an empty group
        out = _ln_double(tg, shape, full, data)
    assert all(o is not None for o in out)
    assert tuple(out[1].shape) == (tuple(shape) if full else tuple(shape[-1:]))
    assert tuple(out[4].shape) == tuple(out[1].shape)


def test_layer_norm_double_backward_whole_input_value():
    # the second derivatives against finite differences of the first (float64)
    x = tg.tensor([1.0, 2.0, 4.0], dtype=tg.float64, requires_grad=True)
    w = tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradgradcheck(lambda a, c: F.layer_norm(a, (3,), c), (x, w))


@pytest.mark.parametrize("shape,full,data", _LN_CASES)
def test_layer_norm_double_backward_whole_input_torch(torch, shape, full, data):
    _compare(torch, lambda lib: _ln_double(lib, shape, full, data))


def test_layer_norm_double_backward_repro_torch(torch):
    def f(lib):
        x = lib.tensor([1.0, 2.0, 4.0], requires_grad=True)
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.nn.functional.layer_norm(x, (3,), w)
        gx, gw = lib.autograd.grad((y * lib.tensor([1.0, -1.0, 2.0])).sum(), (x, w),
                                   create_graph=True)
        return lib.autograd.grad(gx.sum() + gw.sum(), (x, w))
    a, b = _outcome(tg, f), _outcome(torch, f)
    assert a[0] == b[0] == "ok"
    for u, v in zip(a[1], b[1]):
        np.testing.assert_allclose(u, v, atol=1e-5)


# ---- 2. mse_loss of nothing ----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (0, 2)])
def test_mse_loss_empty_mean(shape):
    a = tg.zeros(*shape, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.mse_loss(a, tg.zeros(*shape))
        loss.backward()
    assert np.isnan(loss.item()) and loss.dtype == tg.float32
    assert a.grad.shape == shape
    assert F.mse_loss(a, tg.zeros(*shape), reduction="sum").item() == 0.0


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_empty_torch(torch, reduction):
    def f(lib):
        a = lib.zeros(0, 2, requires_grad=True)
        loss = lib.nn.functional.mse_loss(a, lib.zeros(0, 2), reduction=reduction)
        g, = lib.autograd.grad(loss.sum(), a)
        return loss, g
    _compare(torch, f)


# ---- 3. diff n=0 ---------------------------------------------------------------------------------
def test_diff_n0_ignores_prepend_append():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = tg.diff(x, n=0, prepend=tg.tensor([9.0]), append=tg.tensor([5.0]))
    assert y.tolist() == [1.0, 2.0]
    assert y.grad_fn.name() == "torch::autograd::CopyBackwards"     # (torch's name)
    with pytest.raises(RuntimeError, match="match that of input except along"):
        tg.diff(tg.ones(2, 3), n=0, dim=0, prepend=tg.ones(1, 4))


_DIFF_CASES = [
    lambda L: L.diff(L.tensor([1.0, 2.0]), n=0, prepend=L.tensor([9.0])),
    lambda L: L.diff(L.tensor([1.0, 2.0]), n=0, append=L.tensor([9.0, 3.0])),
    lambda L: L.diff(L.tensor([1, 2]), n=0, prepend=L.tensor([9.0])),
    lambda L: L.diff(L.tensor([1.0, 2.0]), n=0, prepend=L.tensor(9.0)),
    lambda L: L.diff(L.ones(2, 3), n=0, dim=0, prepend=L.ones(1, 4)),
    lambda L: L.diff(L.ones(2, 3), n=1, dim=0, prepend=L.ones(1, 4)),
    lambda L: L.diff(L.tensor([1.0, 4.0]), n=2, prepend=L.tensor([9.0])),
]


@pytest.mark.parametrize("k", range(len(_DIFF_CASES)))
def test_diff_n0_torch(torch, k):
    _compare(torch, _DIFF_CASES[k])


# ---- 4. softplus second derivative at the threshold -----------------------------------------------
def _softplus_derivs(lib, v):
    x = lib.tensor([v], dtype=lib.float64, requires_grad=True)
    y = lib.nn.functional.softplus(x, beta=2, threshold=1)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    g2, = lib.autograd.grad(g.sum(), x)
    return y, g, g2


def test_softplus_second_derivative_at_threshold():
    y, g, g2 = _softplus_derivs(tg, 0.5)        # beta * x == threshold: the log1p branch
    assert y.item() == pytest.approx(np.log1p(np.e) / 2)
    assert g.item() == pytest.approx(1 / (1 + np.exp(-1.0)))
    assert g2.item() == 0.0                      # torch's strict `<` in the double backward
    _, _, g2 = _softplus_derivs(tg, 0.25)
    s = 1 / (1 + np.exp(-0.5))
    assert g2.item() == pytest.approx(2 * s * (1 - s))


@pytest.mark.parametrize("v", [-1.0, 0.0, 0.25, 0.5, 0.6, 1.0])
def test_softplus_second_derivative_torch(torch, v):
    _compare(torch, lambda L: _softplus_derivs(L, v))


# ---- 5. masked_fill ------------------------------------------------------------------------------
def test_masked_fill_checks_and_broadcast():
    with pytest.raises(RuntimeError, match="only supports boolean masks.*long int"):
        tg.zeros(3).masked_fill(tg.tensor([1, 0, 1]), 1.0)
    with pytest.raises(RuntimeError, match="only supports boolean masks.*long int"):
        tg.zeros(3).masked_fill_(tg.tensor([1, 0, 1]), 1.0)
    with pytest.raises(RuntimeError, match="0-dimensional value tensor.*1 dimension"):
        tg.zeros(3).masked_fill(tg.tensor([True, False, True]), tg.tensor([5.0]))
    with pytest.raises(RuntimeError, match="0-dimensional value tensor.*2 dimension"):
        tg.zeros(3).masked_fill_(tg.tensor([True, False, True]), tg.ones(1, 1))
    x = tg.zeros(2, 1, requires_grad=True)
    v = tg.tensor(2.0, requires_grad=True)
    y = tg.masked_fill(x, tg.tensor([[True, False]] * 2), v)
    assert y.shape == (2, 2) and y.tolist() == [[2.0, 0.0], [2.0, 0.0]]
    y.backward(tg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert x.grad.tolist() == [[2.0], [4.0]] and v.grad.item() == 4.0
    with pytest.raises(RuntimeError):
        tg.zeros(2, 1).masked_fill_(tg.tensor([[True, False]] * 2), 1.0)


_MF_CASES = [
    lambda L: L.zeros(3).masked_fill(L.tensor([1, 0, 1]), 1.0),
    lambda L: L.zeros(3).masked_fill(L.tensor([1, 0, 1], dtype=L.uint8), 1.0),
    lambda L: L.zeros(3).masked_fill(L.tensor([1.0, 0, 1]), 1.0),
    lambda L: L.zeros(3).masked_fill_(L.tensor([1, 0, 1]), 1.0),
    lambda L: L.zeros(3).masked_fill_(L.tensor([1, 0, 1]), L.tensor([1.0])),
    lambda L: L.zeros(3).masked_fill(L.tensor([True, False, True]), L.ones(2, 2)),
    lambda L: L.zeros(3).masked_fill(L.tensor([True, False]), 1.0),
    lambda L: L.zeros(2, 1).masked_fill_(L.tensor([[True, False]] * 2), 1.0),
    lambda L: L.masked_fill(L.zeros(2, 1), L.tensor([[True, False]] * 2), 1.0),
    lambda L: L.masked_fill(L.zeros(3), L.tensor([[True, False, True]] * 2), L.tensor(2.0)),
]


@pytest.mark.parametrize("k", range(len(_MF_CASES)))
def test_masked_fill_torch(torch, k):
    a, b = _outcome(tg, _MF_CASES[k]), _outcome(torch, _MF_CASES[k])
    _same(a, b)
    if a[0] == "exc" and b[2].startswith("masked_fill_"):
        assert a[2] == b[2]


@pytest.mark.parametrize("tensor_value", [False, True])
def test_masked_fill_inplace_node_torch(torch, tensor_value):
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        v = lib.tensor(2.0, dtype=lib.float64, requires_grad=True) if tensor_value else 2.0
        y = (x * 1).masked_fill_(lib.tensor([True, False, True]), v)
        gs = lib.autograd.grad(y.sum(), (x, v) if tensor_value else (x,))
        return (y,) + tuple(gs) + (type(y.grad_fn).__name__,)
    _compare(torch, f)


@pytest.mark.parametrize("tensor_value", [False, True])
def test_masked_fill_broadcast_input_grad_torch(torch, tensor_value):
    def f(lib):
        x = lib.tensor([[1.0], [2.0]], requires_grad=True)
        v = lib.tensor(3.0, requires_grad=True) if tensor_value else 3.0
        y = lib.masked_fill(x, lib.tensor([[True, False], [False, False]]), v)
        go = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        gs = lib.autograd.grad(y, (x, v) if tensor_value else (x,), go, create_graph=True)
        return (y,) + tuple(gs) + (type(y.grad_fn).__name__,)
    _compare(torch, f)


# ---- 6. group_norm / batch_norm errors -----------------------------------------------------------
def test_group_norm_errors():
    with pytest.raises(ValueError, match=r"more than 1 value per channel.*\[1, 3\]"):
        F.group_norm(tg.ones(1, 3), 3)
    with pytest.raises(ValueError, match=r"\[1, 2\]"):
        F.group_norm(tg.ones(1, 3), 2)
    with pytest.raises(ZeroDivisionError):
        F.group_norm(tg.ones(2, 3, 4), 0)
    with pytest.raises(RuntimeError, match="greater than 0"):
        tg.group_norm(tg.ones(2, 3, 4), 0)
    assert F.group_norm(tg.ones(1, 6, 1), 3).shape == (1, 6, 1)
    assert tg.group_norm(tg.ones(1, 3), 3).tolist() == [[0.0, 0.0, 0.0]]


def test_batch_norm_running_stat_requires_grad():
    for kw in ({"running_mean": tg.zeros(3, requires_grad=True), "running_var": tg.ones(3)},
               {"running_mean": tg.zeros(3), "running_var": tg.ones(3, requires_grad=True)}):
        name = next(k for k, v in kw.items() if v.requires_grad)
        for training in (True, False):
            with pytest.raises(RuntimeError, match=f"with respect to argument '{name}'"):
                F.batch_norm(tg.ones(4, 3), kw["running_mean"], kw["running_var"],
                             training=training)
        with tg.no_grad():
            assert F.batch_norm(tg.ones(4, 3), kw["running_mean"], kw["running_var"],
                                training=True).shape == (4, 3)


_NORM_CASES = [
    lambda L: L.nn.functional.group_norm(L.ones(1, 3), 3),
    lambda L: L.nn.functional.group_norm(L.ones(1, 3, 1, 1), 3),
    lambda L: L.nn.functional.group_norm(L.ones(1, 6, 1), 3),
    lambda L: L.nn.functional.group_norm(L.ones(1, 3), 2),
    lambda L: L.nn.functional.group_norm(L.ones(1, 3), 4),
    lambda L: L.nn.functional.group_norm(L.ones(2, 3, 4), 0),
    lambda L: L.nn.functional.group_norm(L.ones(2, 3, 4), -1),
    lambda L: L.nn.functional.group_norm(L.ones(1, 3), 3, L.ones(2)),
    lambda L: L.nn.functional.group_norm(L.ones(0, 3), 3),
    lambda L: L.group_norm(L.ones(1, 3), 3),
    lambda L: L.group_norm(L.ones(1, 3), 0),
    lambda L: L.nn.GroupNorm(3, 3)(L.ones(1, 3)),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(3, requires_grad=True),
                                         L.ones(3), training=True),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(3),
                                         L.ones(3, requires_grad=True), training=False),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3, dtype=L.long),
                                         L.zeros(3, requires_grad=True), L.ones(3),
                                         training=True),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(2, requires_grad=True),
                                         L.ones(3), training=True),
    lambda L: L.batch_norm(L.ones(4, 3), None, None, L.zeros(3, requires_grad=True), L.ones(3),
                           True, 0.1, 1e-5, False),
]


@pytest.mark.parametrize("k", range(len(_NORM_CASES)))
def test_norm_errors_torch(torch, k):
    _compare(torch, _NORM_CASES[k])


def test_batch_norm_no_grad_torch(torch):
    def f(lib):
        with lib.no_grad():
            return lib.nn.functional.batch_norm(
                lib.tensor([[1.0, 2.0], [3.0, 5.0]]), lib.zeros(2, requires_grad=True),
                lib.ones(2), training=True)
    _compare(torch, f)


# ---- 7. *stack of one Tensor, broadcast before dtype, scatter_reduce 'max' ----------------------
@pytest.mark.parametrize("fn", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
def test_stack_of_one_tensor(fn):
    with pytest.raises(TypeError, match=f"{fn}\\(\\): argument 'tensors'.*not Tensor"):
        getattr(tg, fn)(tg.ones(2, 2))
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        getattr(tg, fn)([tg.ones(2), 3])


_STACK_CASES = [
    lambda L, fn: getattr(L, fn)(L.ones(2, 2)),
    lambda L, fn: getattr(L, fn)(3),
    lambda L, fn: getattr(L, fn)([L.ones(2), 3]),
    lambda L, fn: getattr(L, fn)(x for x in [L.ones(2)]),
    lambda L, fn: getattr(L, fn)([]),
    lambda L, fn: getattr(L, fn)((L.ones(2), L.ones(2))),
]


@pytest.mark.parametrize("fn", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
@pytest.mark.parametrize("k", range(len(_STACK_CASES)))
def test_stack_args_torch(torch, fn, k):
    _compare(torch, lambda L: _STACK_CASES[k](L, fn))


def test_binary_broadcast_before_dtype():
    L = tg.long
    for f in (tg.hypot, tg.logaddexp, tg.logaddexp2):
        with pytest.raises(RuntimeError, match="size of tensor a"):
            f(tg.ones(2, dtype=L), tg.ones(3, dtype=L))
        with pytest.raises(NotImplementedError):
            f(tg.ones(2, dtype=L), tg.ones(2, dtype=L))
    with pytest.raises(RuntimeError, match="size of tensor a"):
        tg.lerp(tg.ones(2, dtype=L), tg.ones(3, dtype=L), 0.5)
    with pytest.raises(NotImplementedError):
        tg.lerp(tg.ones(2, dtype=L), tg.ones(2, dtype=L), 0.5)


_BINARY_CASES = [
    lambda L: L.hypot(L.ones(2, dtype=L.long), L.ones(3, dtype=L.long)),
    lambda L: L.hypot(L.ones(2, dtype=L.long), L.ones(3)),
    lambda L: L.hypot(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)),
    lambda L: L.logaddexp(L.ones(2, dtype=L.long), L.ones(3, dtype=L.long)),
    lambda L: L.logaddexp2(L.ones(2, dtype=L.bool), L.ones(3, dtype=L.bool)),
    lambda L: L.lerp(L.ones(2, dtype=L.long), L.ones(3, dtype=L.long), 0.5),
    lambda L: L.lerp(L.ones(2, dtype=L.long), L.ones(3, dtype=L.long), L.ones(3, dtype=L.long)),
    lambda L: L.lerp(L.ones(2, dtype=L.long), L.ones(3), 0.5),
    lambda L: L.lerp(L.ones(2), L.ones(3), 0.5),
    lambda L: L.ones(2, dtype=L.long).hypot_(L.ones(3, dtype=L.long)),
]


@pytest.mark.parametrize("k", range(len(_BINARY_CASES)))
def test_binary_broadcast_before_dtype_torch(torch, k):
    _compare(torch, _BINARY_CASES[k])


@pytest.mark.parametrize("red", ["max", "min"])
def test_scatter_reduce_legacy_backward_raises(red):
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = tg.tensor([5.0, -1.0], requires_grad=True)
    y = tg.scatter_reduce(x, 0, tg.tensor([0, 0]), s, red)
    assert y.tolist() == ([5.0, 2.0, 3.0] if red == "max" else [-1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=f"Expected 'reduce' to be one of .* but got {red}"):
        y.sum().backward()
    y = (x * 1).scatter_reduce_(0, tg.tensor([0, 0]), s, red)
    with pytest.raises(RuntimeError, match="Expected 'reduce'"):
        y.sum().backward()
    assert x.grad is None and s.grad is None
    # amax/amin still differentiate
    tg.scatter_reduce(x, 0, tg.tensor([0, 0]), s, "a" + red).sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("red", ["max", "min", "amax"])
@pytest.mark.parametrize("inplace", [False, True])
def test_scatter_reduce_legacy_torch(torch, red, inplace):
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = lib.tensor([5.0, -1.0], requires_grad=True)
        if inplace:
            y = (x * 1).scatter_reduce_(0, lib.tensor([0, 0]), s, red)
        else:
            y = lib.scatter_reduce(x, 0, lib.tensor([0, 0]), s, red)
        return lib.autograd.grad(y.sum(), (x, s))
    _compare(torch, f)
    _compare(torch, lambda L: L.scatter_reduce(L.tensor([1.0, 2.0]), 0, L.tensor([1]),
                                               L.tensor([7.0]), red))


# ---- 8. diagflat, row_stack ------------------------------------------------------------------------
def test_diagflat_and_row_stack():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = tg.diagflat(x, -1)
    assert y.shape == (5, 5) and y.grad_fn.name() == "DiagEmbedBackward0"
    assert np.array_equal(y.detach().numpy(), np.diagflat([1.0, 2.0, 3.0, 4.0], -1))
    y.backward(tg.ones(5, 5))
    assert x.grad.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert x.diagflat().shape == (4, 4)
    with pytest.raises(TypeError):
        tg.diagflat(x, 1.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = tg.row_stack([tg.ones(2), tg.zeros(1, 2)])
    assert r.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert not hasattr(tg.Tensor, "row_stack")


_DIAGFLAT_CASES = [
    lambda L: L.diagflat(L.tensor([[1.0, 2.0], [3.0, 4.0]]).t(), -1),
    lambda L: L.diagflat(L.tensor(5.0), 2),
    lambda L: L.diagflat(L.zeros(0), 2),
    lambda L: L.diagflat(L.tensor([1, 2]), 1),
    lambda L: L.diagflat(L.tensor([True, False])),
    lambda L: L.diagflat([1, 2]),
    lambda L: L.diagflat(L.ones(2), True),
    lambda L: L.diagflat(L.ones(2), np.int64(1)),
    lambda L: L.ones(2).diagflat(offset=-2),
]


@pytest.mark.parametrize("k", range(len(_DIAGFLAT_CASES)))
def test_diagflat_torch(torch, k):
    _compare(torch, _DIAGFLAT_CASES[k])


def test_diagflat_row_stack_graph_torch(torch):
    def f(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = lib.diagflat(x.t(), 1)
        r = lib.row_stack([x, lib.ones(2)])
        g = lib.autograd.grad((y * y).sum() + (r * r).sum(), x, create_graph=True)[0]
        names = []
        fn = y.grad_fn
        while fn is not None:
            names.append(type(fn).__name__)
            fn = fn.next_functions[0][0] if fn.next_functions else None
        return y, r, g, tuple(names), type(r.grad_fn).__name__
    _compare(torch, f)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("fn", ["binary_cross_entropy", "smooth_l1_loss", "huber_loss",
                                "l1_loss", "mse_loss"])
def test_mean_of_an_empty_loss_is_nan_without_a_warning(fn):
    x = tg.zeros(0, requires_grad=True)
    assert np.isnan(float(getattr(tg.nn.functional, fn)(x, tg.zeros(0)).detach()))
    torch = pytest.importorskip("torch")
    assert np.isnan(float(getattr(torch.nn.functional, fn)(torch.zeros(0), torch.zeros(0))))


# ---- add(out=...): it was accepted and ignored (out left unwritten, its version unchanged) ------
def _add_out_cases():
    def into_fresh(lib):
        out = lib.empty(2)
        r = lib.add(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 1.0]), alpha=2, out=out)
        return r is out, out, out._version

    def under_no_grad(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        out = lib.empty(2)
        with lib.no_grad():
            lib.add(a, a, out=out)
        return out, out._version, out.requires_grad

    def requires_grad_in_grad_mode(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        return lib.add(a, a, out=lib.empty(2))

    def float_into_long(lib):
        return lib.add(lib.tensor([1.5]), lib.tensor([1.0, 2.0]), out=lib.zeros(2, dtype=lib.int64))

    def into_a_saved_result(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = x.exp()
        with lib.no_grad():
            lib.add(lib.tensor([1.0, 1.0]), lib.tensor([2.0, 2.0]), out=y)
        y.sum().backward()      # exp's saved result was overwritten: the in-place error
        return x.grad

    return [into_fresh, under_no_grad, requires_grad_in_grad_mode, float_into_long,
            into_a_saved_result]


@pytest.mark.parametrize("case", _add_out_cases(), ids=lambda f: f.__name__)
def test_add_out_writes_out_as_torch(case):
    outcome = _outcome(tg, case)
    expected = {"into_fresh": "ok", "under_no_grad": "ok", "requires_grad_in_grad_mode": "exc",
                "float_into_long": "exc", "into_a_saved_result": "exc"}[case.__name__]
    assert outcome[0] == expected, outcome
    if case.__name__ == "into_fresh":
        same, out, version = outcome[1]
        assert same and version == 1
        np.testing.assert_array_equal(out, [3.0, 4.0])
    torch = pytest.importorskip("torch")
    _compare(torch, case)


def test_add_out_resizes_with_torchs_warning():
    out = tg.empty(3)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        r = tg.add(tg.tensor([1.0, 2.0]), 1, out=out)
    assert r is out and out.shape == (2,)
    np.testing.assert_array_equal(out.numpy(), [2.0, 3.0])


def _grad_accumulation_cases():
    def saved_then_accumulated(lib):
        x = lib.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        g = x.grad
        w = lib.ones(2, requires_grad=True)
        z = (w * g).sum()           # saves g, the tensor .grad is
        (x * 3).sum().backward()    # accumulated into that same tensor, in place
        z.backward()                # the in-place error, as torch
        return w.grad

    def versions_only(lib):
        x = lib.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        g = x.grad
        for _ in range(2):
            (x * 3).sum().backward()
        return g, g._version, x.grad is g

    def after_create_graph(lib):
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # torch's reference-cycle warning
            (x * x).sum().backward(create_graph=True)
        g = x.grad                  # a copy recorded as CopyBackwards, at version 1
        (x * 3).sum().backward()
        return g, g._version, x.grad is g, type(g.grad_fn).__name__

    return [saved_then_accumulated, versions_only, after_create_graph]


@pytest.mark.parametrize("case", _grad_accumulation_cases(), ids=lambda f: f.__name__)
def test_grad_accumulated_in_place_counts_as_a_write(case):
    # found by the fifth breaker: .grad was added to in place without a version bump, so a graph
    # that saved it used the new values silently
    outcome = _outcome(tg, case)
    if case.__name__ == "saved_then_accumulated":
        assert outcome[0] == "exc" and outcome[1] == "RuntimeError", outcome
        assert "modified by an inplace operation" in outcome[2]
    else:
        assert outcome[0] == "ok"
        assert outcome[1][2] is True
        if EXACT_REFCOUNTS:     # (elsewhere the first .grad is always a copy: one write more)
            assert outcome[1][1] == 2   # two writes each: accumulations, or copy_ and one
    torch = pytest.importorskip("torch")
    _compare(torch, case)


def _factory_out_cases():
    def no_grad_into_a_leaf(lib):
        t = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            r = lib.zeros(3, out=t)
        return t.detach(), t._version, r is t, t.requires_grad

    def no_grad_resizes(lib):
        t = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            lib.full((4,), 2.0, out=t)
        return t.detach(), t._version, t.requires_grad

    def inference_mode(lib):
        t = lib.ones(3, requires_grad=True)
        with lib.inference_mode():
            lib.arange(3.0, out=t)
        return t.detach(), t._version, t.requires_grad

    def requires_grad_given(lib):
        u = lib.ones(3)
        lib.zeros(3, out=u, requires_grad=True)
        return u.detach(), u._version, u.requires_grad

    def plain_out_counts_a_write(lib):
        u = lib.ones(3)
        lib.zeros(3, out=u)
        return u, u._version

    def non_leaf_keeps_its_history(lib):
        x = lib.ones(2, requires_grad=True)
        y = x.exp()
        with lib.no_grad():
            lib.zeros(2, out=y)
        return y.detach(), y._version, y.requires_grad, y.grad_fn is None

    def saved_result_overwritten(lib):
        x = lib.ones(2, requires_grad=True)
        y = x.exp()
        with lib.no_grad():
            lib.zeros(2, out=y)
        y.sum().backward()          # exp's saved result was overwritten: the in-place error
        return x.grad

    def grad_mode_refuses(lib):
        return lib.zeros(3, out=lib.ones(3, requires_grad=True))

    def int_out_cannot_require_grad(lib):
        return lib.zeros(3, out=lib.ones(3, dtype=lib.int64), requires_grad=True)

    def randn_refuses_in_any_mode(lib):     # torch's randn resizes out first: refused
        t = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            lib.randn(3, out=t)

    return [no_grad_into_a_leaf, no_grad_resizes, inference_mode, requires_grad_given,
            plain_out_counts_a_write, non_leaf_keeps_its_history, saved_result_overwritten,
            grad_mode_refuses, int_out_cannot_require_grad, randn_refuses_in_any_mode]


@pytest.mark.parametrize("case", _factory_out_cases(), ids=lambda f: f.__name__)
def test_factory_out_as_torch(case):
    # the factories' out= refused every tensor that requires grad, under no_grad too, and counted
    # no write on a tensor without a version counter yet
    outcome = _outcome(tg, case)
    raises = case.__name__ in ("saved_result_overwritten", "grad_mode_refuses",
                               "int_out_cannot_require_grad", "randn_refuses_in_any_mode")
    assert outcome[0] == ("exc" if raises else "ok"), outcome
    if not raises:
        assert outcome[1][1] == 1   # the version: one write
    torch = pytest.importorskip("torch")
    _compare(torch, case)


_NODE_CALL_CASES = [
    ("tanh", lambda x: x.tanh()),                   # one input: a Tensor
    ("mul by a number", lambda x: x * 2.0),         # (x, the number): a tuple (Tensor, None)
    ("mul", lambda x: x * x.detach().exp()),        # two tensors, one without grad
    ("sum", lambda x: x.sum()),                     # one tensor input (dims not shown)
    ("add", lambda x: x + x),
]


@pytest.mark.parametrize("name, make", _NODE_CALL_CASES, ids=[c[0] for c in _NODE_CALL_CASES])
def test_calling_a_node_returns_one_gradient_per_next_function(name, make):
    # a node called by hand returned a list with an entry per forward argument; torch gives one per
    # next_functions entry: a single Tensor for one, a tuple otherwise
    def run(lib):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        y = make(x)
        r = y.grad_fn(lib.ones_like(y))
        return r if isinstance(r, tuple) else (r,), isinstance(r, tuple), \
            len(y.grad_fn.next_functions)
    (grads, is_tuple, n) = run(tg)
    assert is_tuple == (n != 1) and len(grads) == n
    torch = pytest.importorskip("torch")
    tgrads, tis_tuple, tn = run(torch)
    assert (is_tuple, n) == (tis_tuple, tn)
    for a, b in zip(grads, tgrads):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


_NEXT_FUNCTIONS_CASES = [
    ("number ** x", lambda lib, x, lo: 2.0 ** x),
    ("pow(number, x)", lambda lib, x, lo: lib.pow(2, x)),
    ("clamp(min=tensor)", lambda lib, x, lo: lib.clamp(x, min=lo)),
    ("clamp(max=tensor)", lambda lib, x, lo: lib.clamp(x, max=lo)),
    ("clamp(min=tensor without grad)", lambda lib, x, lo: lib.clamp(x, min=lo.detach())),
    ("clamp(both)", lambda lib, x, lo: lib.clamp(x, min=lo, max=lo + 1)),
]


@pytest.mark.parametrize("name, make", _NEXT_FUNCTIONS_CASES,
                         ids=[c[0] for c in _NEXT_FUNCTIONS_CASES])
def test_next_functions_and_hook_inputs_as_torch(name, make):
    # number ** x showed an entry for the number, and clamp with a tensor bound left out its
    # None bound: torch shows the exponent alone, and clamp's three arguments always
    def run(lib):
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        lo = lib.tensor([1.0, 1.0], requires_grad=True)
        y = make(lib, x, lo)
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append([g is None for g in gi]))
        y.sum().backward()
        return [(None if f is None else type(f).__name__, n) for f, n in
                y.grad_fn.next_functions], seen, x.grad.numpy().tolist()
    ours = run(tg)
    assert len(ours[1][0]) == len(ours[0])
    torch = pytest.importorskip("torch")
    assert ours == run(torch)


def _grad_version_cases():
    def sum_twice(lib):             # an expanded gradient is copied: a write into a new tensor
        x = lib.ones(2, requires_grad=True)
        x.sum().backward()
        first = x.grad._version
        x.sum().backward()
        return first, x.grad._version

    def taken_as_is(lib):
        x = lib.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        return x.grad._version

    def users_gradient(lib):        # the caller's gradient is copied
        x = lib.ones(2, requires_grad=True)
        gr = lib.ones(2)
        x.backward(gr)
        return x.grad._version, x.grad is gr

    def zero_d_square_three_times(lib):    # two gradients summed in place in the input buffer
        x = lib.tensor(2.0, requires_grad=True)
        versions = []
        for _ in range(3):
            (x * x).backward()
            versions.append(x.grad._version)
        return versions

    def two_uses(lib):
        x = lib.ones(2, requires_grad=True)
        (x * 2 + x * 3).sum().backward()
        return x.grad._version, x.grad

    def x_plus_x(lib):              # the same gradient twice: summed out of place
        x = lib.ones(2, requires_grad=True)
        (x + x).sum().backward()
        return x.grad._version, x.grad

    def with_a_post_accumulate_hook(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.ones(2, requires_grad=True)
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad._version))
        (x * 2).sum().backward()
        g = x.grad
        z = (w * x.grad).sum()
        (x * 2).sum().backward()    # into the same .grad, in place, hooks or not
        same = x.grad is g
        try:
            z.backward()
            raised = False
        except RuntimeError:
            raised = True
        return same, g._version, seen, raised

    return [sum_twice, taken_as_is, users_gradient, zero_d_square_three_times, two_uses,
            x_plus_x, with_a_post_accumulate_hook]


@pytest.mark.parametrize("case", _grad_version_cases(), ids=lambda f: f.__name__)
def test_grad_versions_as_torch(case):
    # .grad's version counts the writes torch makes: a copied gradient is at 1, a gradient
    # summed in place in the engine's buffer at 1, and accumulation with hooks is in place too
    _runs_as_torch(case)


def _runs_as_torch(case):
    """``case(lib)`` runs without an exception in tapegrad, and gives torch's outcome."""
    outcome = _outcome(tg, case)
    assert outcome[0] == "ok", outcome
    torch = pytest.importorskip("torch")
    _compare(torch, case)


def test_a_failing_post_accumulate_hook_leaves_grad_values_as_they_were():
    # (tapegrad's promise, beyond torch, which keeps the accumulated values)
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    x.register_post_accumulate_grad_hook(lambda t: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        (x * 3).sum().backward()
    assert x.grad is g
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def _dirty_view_cases():
    def scaled_in_place(lib):
        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = lib.ones(2, requires_grad=True)
        y = x * 1
        Dirty.apply(y[:1])
        names = type(y.grad_fn).__name__
        (y * 2.5).sum().backward()
        return x.grad, names

    def times_a_parameter(lib):
        class DirtyMul(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, w):
                ctx.save_for_backward(a.clone(), w)
                a.mul_(w)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                a0, w = ctx.saved_tensors
                return g * w, (g * a0).sum(0, keepdim=True).reshape(w.shape)

        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor([4.0], requires_grad=True)
        y = x * 1
        DirtyMul.apply(y[1:], w)
        shown = [None if f is None else type(f).__name__ for f, _ in y.grad_fn.next_functions]
        (y * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
        return x.grad, w.grad, y.detach(), shown

    return [scaled_in_place, times_a_parameter]


@pytest.mark.parametrize("case", _dirty_view_cases(), ids=lambda f: f.__name__)
def test_custom_function_dirtying_a_view_rebases_the_base(case):
    # a custom Function that wrote its first argument, a view, in place (mark_dirty) left the
    # base's history alone: the base's gradient skipped the Function (silently wrong); torch
    # rebases the base onto CopySlices
    _runs_as_torch(case)


def _inputs_node_cases():
    def backward_runs_the_inputs_node(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        calls = []
        y.grad_fn.register_hook(lambda gi, go: calls.append("post"))
        y.grad_fn.register_prehook(lambda go: calls.append("pre"))
        (y * 2).sum().backward(inputs=[y])
        return y.grad, x.grad, calls

    def and_frees_it(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        (y * 2).sum().backward(inputs=[y])
        (y * 2).sum().backward(inputs=[y])     # exp's saved result is gone: torch's error

    def grad_does_not(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        lib.autograd.grad((y * 2).sum(), [y])
        return lib.autograd.grad((y * 3).sum(), [y])

    return [backward_runs_the_inputs_node, and_frees_it, grad_does_not]


@pytest.mark.parametrize("case", _inputs_node_cases(), ids=lambda f: f.__name__)
def test_backward_with_inputs_runs_a_non_leaf_inputs_node_as_torch(case):
    # backward(inputs=[y]) for a non-leaf y runs y.grad_fn too in torch (hooks, freed saved
    # tensors); tapegrad skipped it, so a second backward through it did not raise
    outcome = _outcome(tg, case)
    assert outcome[0] == ("exc" if case.__name__ == "and_frees_it" else "ok"), outcome
    torch = pytest.importorskip("torch")
    _compare(torch, case)


def _unaccumulable_grad_cases():
    def expanded_grad(lib):
        x = lib.ones(2, requires_grad=True)
        x.grad = lib.zeros(1).expand(2)
        (x * 2).sum().backward()

    def inference_grad(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            g = lib.zeros(2)
        x.grad = g
        (x * 2).sum().backward()

    return [expanded_grad, inference_grad]


@pytest.mark.parametrize("case", _unaccumulable_grad_cases(), ids=lambda f: f.__name__)
def test_a_grad_that_cannot_be_added_to_in_place_raises_as_torch(case):
    outcome = _outcome(tg, case)
    assert outcome[:2] == ("exc", "RuntimeError"), outcome
    torch = pytest.importorskip("torch")
    _compare(torch, case)


def test_a_refused_accumulation_writes_no_other_grad():
    a = tg.ones(2, requires_grad=True)
    b = tg.ones(2, requires_grad=True)
    a.grad = tg.ones(2)
    b.grad = tg.zeros(1).expand(2)
    with pytest.raises(RuntimeError, match="more than one element"):
        (a * 2 + b * 3).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 1.0])
    assert a.grad._version == 0


_BIG_INT_CASES = {
    "mul": lambda lib, x, v: x * v, "rmul": lambda lib, x, v: v * x, "add": lambda lib, x, v: x + v,
    "sub": lambda lib, x, v: x - v, "rsub": lambda lib, x, v: v - x, "div": lambda lib, x, v: x / v,
    "mul_": lambda lib, x, v: x.clone().mul_(v), "pow": lambda lib, x, v: x ** v,
}


@pytest.mark.parametrize("value", [2 ** 70, -2 ** 70, 2 ** 64 - 1, -2 ** 63, 2 ** 63])
@pytest.mark.parametrize("op", sorted(_BIG_INT_CASES))
def test_a_python_int_beyond_64_bits_overflows_as_torch(op, value):
    # a float tensor times an int torch cannot take as a C integer computed a value; torch raises
    # OverflowError (ints in [-2**63, 2**64 - 1] are taken)
    def run(lib):
        return _BIG_INT_CASES[op](lib, lib.tensor([1.0, 2.0]), value)
    outcome = _outcome(tg, run)
    if -2 ** 63 <= value <= 2 ** 64 - 1:
        assert outcome[0] == "ok", outcome
    else:
        assert outcome[:2] == ("exc", "OverflowError"), outcome
    torch = pytest.importorskip("torch")
    _compare(torch, run)


_DRAWS = {"rand": lambda lib, o: lib.rand(3, out=o), "randn": lambda lib, o: lib.randn(3, out=o),
          "normal": lambda lib, o: lib.normal(0.0, 1.0, (3,), out=o),
          "normal of a tensor": lambda lib, o: lib.normal(lib.zeros(3), 1.0, out=o)}


@pytest.mark.parametrize("dtype", ["int64", "bool", "float64"])
@pytest.mark.parametrize("draw", sorted(_DRAWS))
def test_random_draws_into_a_non_floating_out_raise_as_torch(draw, dtype):
    def run(lib):
        o = lib.zeros(3, dtype=getattr(lib, dtype))
        _DRAWS[draw](lib, o)
        return str(o.dtype).split(".")[-1], o._version
    outcome = _outcome(tg, run)
    assert outcome[0] == ("ok" if dtype == "float64" else "exc"), outcome
    torch = pytest.importorskip("torch")
    _compare(torch, run)


def _retained_grad_history(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch's reference-cycle warning
        (y * y).sum().backward(create_graph=True)
    first = type(y.grad.grad_fn).__name__
    (y * 3).sum().backward()                # a plain backward: the sum is not recorded
    return y.grad, first, y.grad.grad_fn is None, y.grad.requires_grad


def test_a_retained_gradient_has_torchs_history():
    # under create_graph a retained gradient is a clone (CloneBackward0; it was CopyBackwards),
    # and a later plain backward replaced it by a recorded sum (AddBackward0)
    grad, first, no_history, requires_grad = _retained_grad_history(tg)
    assert first == "CloneBackward0" and no_history and not requires_grad
    _runs_as_torch(_retained_grad_history)


def test_a_read_only_grad_is_refused_by_name():
    # (no torch counterpart: a NumPy array marked read-only, shared through from_numpy)
    arr = np.zeros(2)
    arr.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # from_numpy's warning about a read-only array
        g = tg.from_numpy(arr)
    x = tg.ones(2, dtype=tg.float64, requires_grad=True)
    x.grad = g
    with pytest.raises(RuntimeError, match="read-only"):
        (x * 2).sum().backward()
    assert x.grad is g
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


LEAF_VIEW_WRITES = {
    "row": lambda b: b[0],
    "transpose": lambda b: b.t(),
    "reshape of the transpose": lambda b: b.t().reshape(3, 2),
    "flat": lambda b: b.reshape(6),
}


def _write_into_a_view_of_a_leaf_made_of_a_view(lib, view):
    b = lib.arange(6.0).reshape(2, 3).requires_grad_()     # (a leaf that is itself a view)
    try:
        view(b).mul_(2)
    except RuntimeError as e:
        return "raised", str(e).split(".")[0]
    (b * 1).sum().backward()
    return "ran", b.grad


@pytest.mark.parametrize("case", list(LEAF_VIEW_WRITES))
def test_in_place_on_a_view_of_a_leaf_that_is_a_view_raises_as_torch(case):
    # (it ran, and the leaf's gradient was lost: the write went to the base's graph)
    expected = ("raised", ("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation"))
    assert _write_into_a_view_of_a_leaf_made_of_a_view(tg, LEAF_VIEW_WRITES[case]) == expected
    torch = pytest.importorskip("torch")
    assert _write_into_a_view_of_a_leaf_made_of_a_view(torch, LEAF_VIEW_WRITES[case]) == expected


_BOOL_CLAMPS = [
    ("clamp_min_scalar_cpu", lambda L, b: b.clamp(True)),
    ("clamp_max_scalar_cpu", lambda L, b: b.clamp(max=True)),
    ("clamp_scalar_cpu", lambda L, b: b.clamp(False, True)),
    ("clamp_min_scalar_cpu", lambda L, b: L.clamp_min(b, True)),
    ("clamp_scalar_cpu", lambda L, b: b.clamp_(False, True)),
]


@pytest.mark.parametrize("kernel, fn", _BOOL_CLAMPS)
def test_clamp_of_a_bool_tensor_by_numbers_is_refused(kernel, fn):
    """torch has no bool clamp by numbers (by tensors it has one); tapegrad returned the values.
    The message names torch's kernel, and an in-place clamp leaves the tensor as it was."""
    b = tg.tensor([True, False, True])
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for .Bool.*clamp'):
        fn(tg, b)
    assert b.tolist() == [True, False, True] and b._version == 0
    assert b.clamp(tg.tensor(False), tg.tensor(True)).tolist() == [True, False, True]


@pytest.mark.parametrize("kernel, fn", _BOOL_CLAMPS)
def test_clamp_of_a_bool_tensor_by_numbers_is_refused_as_in_torch(torch, kernel, fn):
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for .Bool'):
        fn(torch, torch.tensor([True, False, True]))


@pytest.mark.parametrize("name, other, fix", [
    ("maximum", 0.5, "clamp_min(input, 0.5)"), ("minimum", 2, "clamp_max(input, 2)"),
    ("maximum", np.ones(3), "as_tensor"), ("minimum", [1.0, 2.0, 3.0], "as_tensor"),
])
def test_maximum_and_minimum_take_two_tensors(name, other, fix):
    """torch's maximum/minimum take no number; tapegrad took one. TypeError with torch's words,
    then the call that does the job."""
    x = tg.ones(3)
    for call in (lambda: getattr(tg, name)(x, other), lambda: getattr(x, name)(other)):
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'other' must be Tensor") as e:
            call()
        assert fix in str(e.value)


@pytest.mark.parametrize("name, other", [("maximum", 0.5), ("minimum", 2), ("maximum", np.ones(3))])
def test_maximum_and_minimum_take_two_tensors_as_in_torch(torch, name, other):
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'other' .*must be Tensor"):
        getattr(torch, name)(torch.ones(3), other)
