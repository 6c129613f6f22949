"""Review of the hot-path changes: process-wide grad-mode summary, per-class ``apply`` with
operand coercion for + and *, ``saves_result``, the shared ``x * float`` saved list, nodes and
version counters made without __init__. Each test checks tapegrad first, then torch (if present)."""
import contextlib
import copy
import math
import os
import subprocess
import sys
import threading
from fractions import Fraction

import numpy as np
import pytest

import tapegrad as tg


def _lib():
    return pytest.importorskip("torch")


def _np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


# ---- 1. grad modes across threads ---------------------------------------------------------------
def _mode_worker(L, seed, errors, n=40):
    import random
    rng = random.Random(seed)
    x = L.ones(2, requires_grad=True)
    makers = [(lambda: L.no_grad(), lambda g, i: (False, i)),
              (lambda: L.enable_grad(), lambda g, i: (True, i)),
              (lambda: L.inference_mode(), lambda g, i: (False, True)),
              (lambda: L.inference_mode(False), lambda g, i: (True, False)),
              (lambda: L.set_grad_enabled(False), lambda g, i: (False, i))]

    def check(depth, g, i):
        errors.extend((seed, depth, g, i) for y in (x * 2.0, x + 1, x.exp(), x * x)
                      if (y.requires_grad, y.is_inference(), L.is_grad_enabled(),
                          L.is_inference_mode_enabled()) != (g and not i, i, g, i))
        if depth < 3 and rng.random() < 0.7:
            make, nxt = makers[rng.randrange(len(makers))]
            with make():
                check(depth + 1, *nxt(g, i))
    for _ in range(n):
        check(0, True, False)


def _run_threads(targets):
    [t.start() for t in targets] + [t.join() for t in targets]


def _threads_run(L):
    old, errors, res = sys.getswitchinterval(), [], []
    sys.setswitchinterval(1e-5)
    try:
        # workers in random nested modes, plus threads that end inside a mode
        _run_threads([threading.Thread(target=_mode_worker, args=(L, s, errors)) for s in range(6)]
                     + [threading.Thread(target=lambda: L.inference_mode().__enter__()),
                        threading.Thread(target=L.set_grad_enabled, args=(False,))])
        fresh = lambda: res.append(  # noqa: E731 (idents of dead threads may be reused)
            ((L.ones(2, requires_grad=True) * 2.0).requires_grad, L.is_grad_enabled()))
        for _ in range(10):
            _run_threads([threading.Thread(target=fresh)])
        return errors, set(res), (L.ones(2, requires_grad=True) * 3.0).requires_grad
    finally:
        sys.setswitchinterval(old)


@pytest.mark.parametrize("lib", ["tapegrad", "torch"])
def test_modes_are_per_thread_under_concurrency(lib):
    L = tg if lib == "tapegrad" else _lib()
    try:
        assert _threads_run(L) == ([], {(True, True)}, True)
    finally:
        # two threads ended inside a mode and stay counted (ops take the thread-local read):
        # forget them, so the tests after this one run on the usual path
        modes = tg.autograd.grad_mode.modes
        with modes.lock:
            modes.threads.clear()
            modes.changed = False


def test_generator_decorator_and_nested_inference_false():
    def body(L):
        x = L.ones(1, requires_grad=True)

        @L.no_grad()
        def gen():
            yield (x * 2.0).requires_grad
            with L.inference_mode(False):
                yield (x * 2.0).requires_grad
        out = []
        for v in gen():
            out += [v, (x * 2.0).requires_grad]
        with L.no_grad(), L.inference_mode(False):
            out.append((x + 1).requires_grad)
        out.append((x + 1).requires_grad)
        return out
    assert body(tg) == [False, True, True, True, True, True]
    assert body(_lib()) == body(tg)


# ---- 2. + and * operands ------------------------------------------------------------------------
_R = type("_R", (), {"__radd__": lambda s, o: "radd", "__rmul__": lambda s, o: "rmul"})
_I = type("_I", (int,), {})
_OPERANDS = {
    "np.float64": lambda L: L.ones(2, requires_grad=True) + np.float64(2.5),
    "np.float64 left": lambda L: np.float64(2.5) * L.ones(2, requires_grad=True),
    "np.float32 int tensor": lambda L: L.ones(2, dtype=L.int64) * np.float32(2.5),
    "np.int64 int32": lambda L: np.int64(3) * L.ones(2, dtype=L.int32),
    "int subclass": lambda L: _I(3) + L.ones(2, requires_grad=True),
    "bool tensor * 2": lambda L: L.ones(2, dtype=L.bool) * 2,
    "bool tensor * 2.5": lambda L: L.ones(2, dtype=L.bool) * 2.5,
    "int + True": lambda L: L.ones(2, dtype=L.int64) + True,
    "f16 * f64 0-d": lambda L: L.ones(2, dtype=L.float16, requires_grad=True) * L.tensor(2.0, dtype=L.float64),
    "f16 * f64": lambda L: L.ones(2, dtype=L.float16, requires_grad=True) * L.ones(2, dtype=L.float64),
    "int * float tensor": lambda L: L.ones(2, dtype=L.int64) * L.ones(2, requires_grad=True),
    "param * 2": lambda L: L.nn.Parameter(L.ones(2)) * 2,
    "x * param": lambda L: L.ones(2) * L.nn.Parameter(L.ones(2)),
    "reflected object": lambda L: (L.ones(2) + _R(), L.ones(2) * _R(), _R() * L.ones(2)),
    "none": lambda L: L.ones(2) + None,
    "str": lambda L: L.ones(2) * "a",
    "list": lambda L: [1, 2] * L.ones(2),
    "tuple": lambda L: L.ones(2) + (1, 2),
    "Fraction": lambda L: Fraction(1, 2) + L.ones(2),
    "dunder str": lambda L: L.ones(2).__add__("a"),
}


def _summary(L, f, mode=None):
    try:
        with {"no_grad": L.no_grad, "inference": L.inference_mode}.get(mode, contextlib.nullcontext)():
            r = f(L)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    if isinstance(r, tuple):
        return r
    if not hasattr(r, "grad_fn"):
        return r
    return (str(r.dtype).split(".")[-1], r.requires_grad, r.is_inference(),
            type(r.grad_fn).__name__ if r.grad_fn is not None else None, _np(r).tolist())


@pytest.mark.parametrize("mode", [None, "no_grad", "inference"])
@pytest.mark.parametrize("name", list(_OPERANDS))
def test_add_mul_operands_match_torch(name, mode):
    got = _summary(tg, _OPERANDS[name], mode)
    if name in ("none", "str", "list", "tuple", "Fraction"):
        assert got == "TypeError"
    torch = _lib()
    assert got == _summary(torch, _OPERANDS[name], mode)


@pytest.mark.parametrize("call", [lambda: tg.add(tg.ones(2), 1.0, alpha="a"),
                                  lambda: tg.add(tg.ones(2), 1.0, alpha=None),
                                  lambda: tg.mul("a", tg.ones(2)), lambda: tg.add(None, tg.ones(2))])
def test_add_mul_functions_reject_bad_arguments(call):
    with pytest.raises(TypeError):
        call()


@pytest.mark.xfail(strict=True, reason="np.bool_ operand: torch promotes to the default float dtype")
def test_numpy_bool_operand_dtype():
    assert (tg.ones(2, dtype=tg.int64) + np.bool_(True)).dtype == tg.float32


@pytest.mark.xfail(strict=True, reason="float16 * Python float rounds the scalar to float16 first")
def test_float16_times_python_float_value():
    # torch: the scalar stays in opmath (float32), rounded once: 1.1259765625
    assert (tg.tensor([1.625], dtype=tg.float16) * math.log(2)).item() == 1.1259765625


# ---- 3. saves_result ----------------------------------------------------------------------------
_RESULT_OPS = {
    "exp": lambda L, x: x.exp(), "tanh": lambda L, x: x.tanh(), "sigmoid": lambda L, x: x.sigmoid(),
    "sqrt": lambda L, x: x.abs().sqrt(), "reciprocal": lambda L, x: x.reciprocal(),
    "relu": lambda L, x: x.relu(), "exp2": lambda L, x: L.exp2(x),
    "softmax": lambda L, x: L.softmax(x, 0), "log_softmax": lambda L, x: L.log_softmax(x, 0),
}


def _result_checks(L, op):
    f = _RESULT_OPS[op]
    out = {}
    x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
    w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64)
    y = f(L, x)
    y.mul_(2)
    try:
        out["inplace"] = (y * w).sum().backward()
    except RuntimeError:
        out["inplace"] = "RuntimeError"
    y = f(L, x)
    g, = L.autograd.grad((y * w).sum(), x, create_graph=True)
    g2, = L.autograd.grad((g * w).sum(), x, retain_graph=True)
    out["grads"] = (_np(g), _np(g2))
    x0, e = L.tensor(0.7, requires_grad=True), L.zeros(0, requires_grad=True)
    y0 = f(L, x0)
    out["0d"] = (y0.shape, _np(L.autograd.grad(y0, x0)[0]))
    out["empty"] = L.autograd.grad(f(L, e).sum(), e)[0].shape
    with L.inference_mode():
        yi = f(L, L.ones(3, requires_grad=True))
    out["inference"] = (yi.requires_grad, yi.is_inference())
    h = L.tensor([0.7, 3.0], dtype=L.float16, requires_grad=True)
    yh = f(L, h)
    out["f16"] = (str(yh.dtype), _np(L.autograd.grad(yh.sum(), h)[0]))
    return out


@pytest.mark.parametrize("op", list(_RESULT_OPS))
def test_saves_result_ops_match_torch(op):
    got = _result_checks(tg, op)
    assert got["inplace"] == "RuntimeError"     # the saved result was modified in place
    torch = _lib()
    want = _result_checks(torch, op)
    assert got["inplace"] == want["inplace"] and got["empty"] == want["empty"]
    assert got["inference"] == want["inference"] and tuple(got["0d"][0]) == tuple(want["0d"][0])
    for a, b in zip(got["grads"] + (got["0d"][1],), want["grads"] + (want["0d"][1],)):
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)
    assert got["f16"][0].split(".")[-1] == want["f16"][0].split(".")[-1]
    np.testing.assert_allclose(got["f16"][1], want["f16"][1], rtol=2e-3, atol=1e-3)


_INPLACE = {
    "exp_": lambda L, y: y.exp_(), "tanh_": lambda L, y: y.tanh_(),
    "sigmoid_": lambda L, y: y.sigmoid_(), "reciprocal_": lambda L, y: y.reciprocal_(),
    "relu_": lambda L, y: L.relu_(y), "F.relu inplace": lambda L, y: L.nn.functional.relu(y, inplace=True),
    "leaky_relu_": lambda L, y: L.nn.functional.leaky_relu_(y, 0.1),
    "elu_": lambda L, y: L.nn.functional.elu_(y), "celu_": lambda L, y: L.nn.functional.celu_(y),
}


def _inplace_checks(L, name):
    x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 1
    r = _INPLACE[name](L, y)
    (y * 3).sum().backward()
    first = (r is y, type(y.grad_fn).__name__, _np(x.grad))
    y = x * 1
    _INPLACE[name](L, y)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    return first


@pytest.mark.parametrize("name", list(_INPLACE))
def test_saves_result_inplace_forms(name):
    got, want = _inplace_checks(tg, name), _inplace_checks(_lib(), name)
    assert got[:2] == want[:2]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def _exp2_inplace_case(L):
    x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 1
    r = y.exp2_()
    r.sum().backward()
    return (r is y, type(y.grad_fn).__name__, r.tolist(), x.grad.tolist(),
            L.exp2_(L.tensor([1.0, 3.0])).tolist())


def test_exp2_inplace_exists():
    got = _exp2_inplace_case(tg)
    assert got[:2] == (True, "Exp2Backward0") and got[4] == [2.0, 8.0]
    assert got == _exp2_inplace_case(_lib())


def test_saves_result_apply_at_top_level():
    code = ("import tapegrad as tg\nfrom tapegrad.ops.pointwise import Exp\n"
            "y = Exp.apply(tg.ones(2, requires_grad=True))\nprint(y.grad_fn.name())\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.stdout.strip() == "ExpBackward0", r.stderr[-300:]


# ---- 4. x * <python float>: shared saved list ----------------------------------------------------
def _mul_float_checks(L):
    x = L.tensor([1.0, 0.0, -2.0], dtype=L.float64, requires_grad=True)
    ys = [x * (0.5 + i) for i in range(600)]     # more floats than the cache holds
    ys[3].sum().backward(retain_graph=True)
    g3, x.grad = _np(x.grad), None
    sum(y.sum() for y in ys).backward()
    specials = [_np(L.autograd.grad((x * s).sum(), x)[0]).tolist()
                for s in (-0.0, 0.0, float("inf"), 1e300, 5e-324)]
    nan = _np(L.autograd.grad((x * float("nan")).sum(), x)[0])
    a, b, seen = x * 0.25, x * 0.25, []
    a.grad_fn.register_hook(lambda gi, go: seen.append("a"))
    b.grad_fn.register_prehook(lambda go: (go[0] * 100,))
    x.grad = None
    (a.sum() + b.sum()).backward()
    hooked = _np(x.grad).tolist()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        a.sum().backward()
    y = (x * 0.5) * x * 0.5
    g, = L.autograd.grad(y.sum(), x, create_graph=True)
    g2, = L.autograd.grad(g.sum(), x)
    z = (x * 1).mul_(0.75).mul_(0.75)
    return (g3.tolist(), _np(x.grad).tolist(), specials, np.isnan(nan).all(), hooked, seen,
            _np(g).tolist(), _np(g2).tolist(), type(z.grad_fn).__name__)


def test_mul_by_float_shared_saved():
    got = _mul_float_checks(tg)
    assert got[0] == [3.5, 3.5, 3.5] and got[5] == ["a"]
    assert got == _mul_float_checks(_lib())


# ---- 5. nodes, version counters, copies ---------------------------------------------------------
def _graph_checks(L):
    p = L.nn.Parameter(L.ones(2))
    d = copy.deepcopy(p)
    m = copy.deepcopy(L.nn.Linear(2, 2))
    m(L.ones(1, 2)).sum().backward()
    x = L.ones(3, 2, requires_grad=True) * 1
    us = x.unbind(0)
    us[2].register_hook(lambda g: g * 10)
    a, b = (x * 1).reshape(-1).split(4)
    b.retain_grad()
    (sum(u.sum() for u in us) + (b * b).sum()).backward()
    nf = [(type(f).__name__, n) for f, n in (a[:2] * b).grad_fn.next_functions]
    base = L.arange(4.)
    base.detach().add_(1)   # detach shares the version counter

    def multi_fwd(ctx, t):
        idx = L.arange(t.shape[0])
        ctx.mark_non_differentiable(idx)
        return t * 2, idx, t * 3

    def dirty_fwd(ctx, t):
        ctx.mark_dirty(t.mul_(2))
        return t
    Multi = type("Multi", (L.autograd.Function,), {
        "forward": staticmethod(multi_fwd),
        "backward": staticmethod(lambda ctx, g1, gi, g2: g1 * 2 + g2 * 3)})
    Dirty = type("Dirty", (L.autograd.Function,), {
        "forward": staticmethod(dirty_fwd), "backward": staticmethod(lambda ctx, g: g * 2)})
    leaf = L.ones(3, requires_grad=True)
    o1, idx, o2 = Multi.apply(leaf)
    (o1.sum() + o2.sum()).backward()
    z = Dirty.apply(y := leaf * 1)
    return (type(d).__name__, d.requires_grad, d.is_leaf, d is not p,
            type(m.weight).__name__, m.weight.grad is not None, _np(b.grad).tolist(), nf,
            base._version, o1.grad_fn is o2.grad_fn, idx.requires_grad, _np(leaf.grad).tolist(),
            z is y, type(z.grad_fn).__name__, y._version)


def test_graph_objects_and_copies():
    got = _graph_checks(tg)
    assert got[6] == [2.0, 2.0]
    assert got == _graph_checks(_lib())


@pytest.mark.xfail(strict=True, reason="copy.copy(tensor) raises TypeError (torch copies)")
def test_copy_copy_tensor():
    c = copy.copy(tg.ones(2, requires_grad=True))
    assert c.requires_grad and c.tolist() == [1.0, 1.0]


@pytest.mark.xfail(strict=True, reason="deepcopy does not keep a view sharing its base's copy")
def test_deepcopy_keeps_view_sharing():
    x = tg.ones(3)
    a, v = copy.deepcopy([x, x[1:]])
    a.add_(1)
    assert v.tolist() == [2.0, 2.0]
