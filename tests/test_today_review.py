"""Review of bc46547, a0735b4, 99e10d8, 6c2f22c and c9af649 against torch 2.13: backward()/grad()
binding their names at first call, the 0-d Expand view (and sum/mean backward through it),
nll_loss's target check and +0 rows for ignored targets, max pools and gather-like ops saving
their input. Passing tests document what was verified; xfail(strict) tests assert torch's
behaviour where tapegrad differs (the reason names the cause, and whether it is older)."""
import re
import subprocess
import sys
import textwrap
import warnings
import weakref

import numpy as np
import pytest

import tapegrad as tg

F = tg.nn.functional


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """(torch's thread pool costs milliseconds per tiny op here; restored afterwards)"""
    try:
        import torch
    except ImportError:
        torch = None
    n = torch.get_num_threads() if torch else 0
    if torch:
        torch.set_num_threads(1)
    yield
    if torch:
        torch.set_num_threads(n)


def _run(L, fn):
    try:
        return fn(L)
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e).__name__


def _same(a, b):
    """Equal values and equal signs of zero (nan equal to nan)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    np.testing.assert_array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b))


# ---- 1. backward()/grad() bind _Tensor, _make, run_backward at first call --------------------
_FRESH = textwrap.dedent("""
    import sys, threading
    sys.setswitchinterval(1e-6)
    {imports}
    import tapegrad as tg
    import tapegrad.autograd as A
    assert A.run_backward is None and A._Tensor is None     # nothing ran backward yet
    n = 24; bar = threading.Barrier(n); out = [None] * n
    xs = [tg.ones(3, requires_grad=True) for _ in range(n)]
    def work(i):
        try:
            y = (xs[i] * float(i)).sum(); bar.wait()
            if i % 3 == 0: y.backward(); out[i] = xs[i].grad.tolist()
            elif i % 3 == 1: out[i] = tg.autograd.grad(y, xs[i])[0].tolist()
            else: A.backward([y], grad_variables=[tg.tensor(1.0)]); out[i] = xs[i].grad.tolist()
        except Exception as e: out[i] = repr(e)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    [t.start() for t in ts]; [t.join() for t in ts]
    assert out == [[float(i)] * 3 for i in range(n)], out
    {extra}
    print("ok")
""")


@pytest.mark.parametrize("imports,extra", [
    ("import tapegrad.autograd", ""),
    ("from tapegrad.autograd import grad, backward", "assert grad is A.grad"),
    ("import tapegrad.autograd.functional as AF",
     "assert AF.jacobian(lambda x: x * x, tg.ones(2)).tolist() == [[2.0, 0.0], [0.0, 2.0]]"),
    ("import tapegrad.optim.optimizer, tapegrad.nn.modules.module", ""),
])
def test_first_backward_from_threads_in_a_fresh_process(imports, extra):
    code = _FRESH.format(imports=imports, extra=extra)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_0d_root_gradient_is_fresh_and_of_the_output_dtype(dt, torch):
    def f(L):
        x = L.tensor(1.5, dtype=getattr(L, dt), requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: g.mul_(5))       # mutates the incoming root gradient in place
        y.backward(retain_graph=True)
        first = (y.grad.item(), x.grad.item())
        y.backward()                               # a second root: not the mutated one
        g1, = L.autograd.grad(x, x)
        g1.add_(1)
        g2, = L.autograd.grad(x, x)
        return first, y.grad.item(), x.grad.item(), str(x.grad.dtype)[-7:], g1.item(), g2.item()
    assert f(tg) == f(torch) == ((5.0, 15.0), 10.0, 30.0, dt[-7:], 2.0, 1.0)


BACKWARD_CASES = {
    "int_gradient": lambda L, a, b: (a * b).backward(L.tensor([1, 2])),
    "bool_gradient": lambda L, a, b: (a * b).backward(L.tensor([True, False])),
    "f64_gradient": lambda L, a, b: (a * b).backward(L.tensor([1.5, 2.0], dtype=L.float64)),
    "f16_gradient": lambda L, a, b: (a * b).backward(L.tensor([1.5, 2.0], dtype=L.float16)),
    "grad_variables": lambda L, a, b: L.autograd.backward([(a * b).sum()],
                                                           grad_variables=[L.tensor(2.0)]),
    "inputs_tensor": lambda L, a, b: (a * b).sum().backward(inputs=b),
    "inputs_nonleaf": lambda L, a, b: ((a * 2) * b).sum().backward(inputs=[a]),
    "create_graph": lambda L, a, b: (a * a * b).sum().backward(create_graph=True),
    "wrong_shape": lambda L, a, b: (a * b).backward(L.tensor([1.0])),
    "no_gradient": lambda L, a, b: (a * b).backward(),
    "empty_inputs": lambda L, a, b: (a * b).sum().backward(inputs=[]),
    "input_no_grad": lambda L, a, b: (a * b).sum().backward(inputs=[a, L.tensor(1.0)]),
    "number_gradient": lambda L, a, b: L.autograd.backward([(a * b).sum()], [2.0]),
    "saved_changed": lambda L, a, b: _changed_then_backward(a, b * 1),
}


def _changed_then_backward(a, c):
    y = (a * c).sum()
    c.add_(1)
    y.backward()


@pytest.mark.parametrize("name", sorted(BACKWARD_CASES))
def test_backward_arguments_and_errors_as_torch(name, torch):
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        a.grad = L.tensor([7.0, 7.0])               # an error must leave it as it is
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            err = _run(L, lambda L: BACKWARD_CASES[name](L, a, b))
        return (err, a.grad.tolist(), str(a.grad.dtype)[-7:],
                None if b.grad is None else b.grad.tolist())
    assert f(tg) == f(torch)


def test_tensor_backward_goes_through_autograd_backward(monkeypatch):
    calls = []
    orig = tg.autograd.backward
    monkeypatch.setattr(tg.autograd, "backward", lambda *a, **k: (calls.append(1), orig(*a, **k)))
    (tg.ones(2, requires_grad=True) * 2).sum().backward()
    assert calls == [1]


# ---- 2. Expand of a 0-d tensor (np.ndarray view) and sum/mean backward through it -------------
_RO = np.array([1.0, 2.0])
_RO.flags.writeable = False
_T2, _SET = (lambda L: L.tensor(2.0)), (lambda v: lambda x: x.__setitem__(2, v))
EXPANDS = {     # (source, the expansion, then done to the source)
    "view_of_bigger": (lambda L: L.tensor([1.0, 2, 3, 4]), lambda x: x[2].expand(3), _SET(9.0)),
    "int64": (lambda L: L.tensor([1, 2, 3]), lambda x: x[2].expand(2), _SET(7)),
    "2d_element_then_mul_": (lambda L: L.arange(12.0).reshape(3, 4),
                             lambda x: x[1, 2].expand(2, 2), lambda x: x.mul_(2)),
    "negative_strides": (lambda L: L.arange(6.0).reshape(2, 3).t().flip(0),
                         lambda x: x[1, 1].expand(4), None),
    "float16": (lambda L: L.tensor([1, 2.5], dtype=L.float16), lambda x: x[1].expand(2, 2), None),
    "bool": (lambda L: L.tensor([True, False]), lambda x: x[0].expand(3), None),
    "read_only_numpy": (lambda L: L.from_numpy(_RO), lambda x: x[1].expand(2, 2), None),
    "zero_size": (_T2, lambda x: x.expand(3, 0), None),
    "expand_of_expand": (_T2, lambda x: x.expand(2).expand(3, 2), None),
    "contiguous": (_T2, lambda x: x.expand(2, 3).contiguous().add_(1), None),
    "clone": (_T2, lambda x: x.expand(2, 3).clone().mul_(2), None),
    "inplace_raises": (_T2, lambda x: x.expand(3).add_(1), None),
    "expand_as": (_T2, lambda x: x.expand_as(x.new_zeros(2, 1)), None),
    "broadcast_to": (_T2, lambda x: x.broadcast_to((1, 3)), None),
}


def _expanded(L, name):
    src, view, then = EXPANDS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (both warn about the read-only array)
        x = src(L)
    e = view(x)
    if then is not None:
        then(x)
    return e.tolist(), tuple(e.shape), e.stride(), e.is_contiguous()


@pytest.mark.parametrize("name", sorted(EXPANDS))
def test_expand_0d_as_torch(name, torch):
    assert _run(tg, lambda L: _expanded(L, name)) == _run(torch, lambda L: _expanded(L, name))


SUMS = {
    "sum": lambda L, x: x.sum(), "mean": lambda L, x: x.mean(),
    "sum_f64": lambda L, x: x.sum(dtype=L.float64),
    "mean_f64": lambda L, x: x.mean(dtype=L.float64), "sum_dim": lambda L, x: x.sum(1),
    "mean_keepdim": lambda L, x: x.mean((0, 1), keepdim=True),
}


@pytest.mark.parametrize("name", sorted(SUMS))
@pytest.mark.parametrize("shape", [(2, 3), (1, 1), (0, 3)])
def test_sum_mean_backward_hooks_and_higher_orders_as_torch(name, shape, torch):
    def f(L):
        x = L.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1,
                     requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append((g.tolist(), str(g.dtype)[-7:])) or g * 2)
        y = SUMS[name](L, (x * x))
        y.retain_grad()
        y.backward(L.ones_like(y), retain_graph=True)
        y.backward(L.ones_like(y) * 3)
        v = L.ones_like(y).requires_grad_()
        g, = L.autograd.grad(SUMS[name](L, x.pow(3)), x, v, create_graph=True)
        gg, hv = L.autograd.grad((g * g).sum(), (x, v), create_graph=True)
        ggg, = L.autograd.grad(gg.sum() + hv.sum(), x)
        return (seen, x.grad.tolist(), str(x.grad.dtype)[-7:], y.grad.tolist(), g.tolist(),
                gg.tolist(), hv.tolist(), ggg.tolist())
    ours, ref = f(tg), f(torch)
    assert [d for _, d in ours[0]] == [d for _, d in ref[0]] and ours[2] == ref[2]
    for a, b in zip([v for v, _ in ours[0]] + [ours[1]] + list(ours[3:]),
                    [v for v, _ in ref[0]] + [ref[1]] + list(ref[3:])):
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-5)


def _in_place_on_expansion(name):
    if name == "hook_adds_in_place":    # x 0-d: its gradient from x.sum() is g.expand(())
        x = tg.tensor(1.0, requires_grad=True)
        x.register_hook(lambda g: g.add_(1))
        y = x.sum()
        y.retain_grad()
        y.backward()
        return x.grad.item(), y.grad.item()
    if name == "zero_grad_of_sum_gradient":     # (ValueError: assignment destination is read-only)
        p = tg.ones(3, requires_grad=True)
        p.grad, = tg.autograd.grad(p.sum(), p)
        tg.optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
        return p.grad.tolist()
    if name in ("grad_of_1x1_mean_add_", "grad_of_empty_sum_add_"):
        x = tg.ones(1, 1, requires_grad=True) if name[8] == "1" else tg.zeros(0, requires_grad=True)
        return tg.autograd.grad(x.mean() if name[8] == "1" else x.sum(), x)[0].add_(1).tolist()
    s = tg.tensor(2.0)
    s.expand(3).fill_(5.0) if name == "fill_expanded" else s.expand(1).add_(1)
    return s.item()


ONE_ELEMENT = {"hook_adds_in_place": (2.0, 1.0), "zero_grad_of_sum_gradient": [0.0, 0.0, 0.0],
               "grad_of_1x1_mean_add_": [[2.0]], "grad_of_empty_sum_add_": [],
               "fill_expanded": 5.0, "expand_size_1_add_": 3.0}     # torch 2.13's results


@pytest.mark.xfail(strict=True, reason="older (a0735b4 keeps it): every expansion is read-only; "
                   "torch writes one without repeated elements, and fill_/zero_ any")
@pytest.mark.parametrize("name", sorted(ONE_ELEMENT))
def test_in_place_on_expansions_torch_allows(name):
    assert _in_place_on_expansion(name) == ONE_ELEMENT[name]


def test_hook_changing_the_gradient_size_raises():
    x = tg.ones(3, requires_grad=True)
    y = x.sum()
    y.register_hook(lambda g: g.reshape(1))
    with pytest.raises(RuntimeError, match="changed the size"):
        y.backward()


@pytest.mark.xfail(strict=True, reason="older: mean's gradient is Expand(g / n) and "
                   "sum_to_size to () SumBackward1 (torch: DivBackward1(Expand), SumBackward0)")
def test_mean_and_sum_double_backward_nodes_as_torch():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    v = tg.ones((), requires_grad=True)
    g, = tg.autograd.grad(x.mean(), x, v, create_graph=True)
    assert (g.grad_fn.name(), g.grad_fn.next_functions[0][0].name()) == \
        ("DivBackward1", "ExpandBackward0")
    g, = tg.autograd.grad(x.sum(), x, v, create_graph=True)
    h, = tg.autograd.grad(g, v, tg.ones(2, 2, requires_grad=True), create_graph=True)
    assert h.grad_fn.name() == "SumBackward0"


# ---- 3. nll_loss / cross_entropy targets and ignore_index --------------------------------------
def _nll(L, fn, x, target, tdtype="int64", tslice=None, weight=None, **kw):
    z = L.tensor(x, requires_grad=True)
    t = L.tensor(np.asarray(target).astype(tdtype))
    t = t if tslice is None else t[tslice]
    if weight is not None:
        kw["weight"] = L.tensor(np.asarray(weight, x.dtype))
    inp = z.log_softmax(1 if z.ndim > 1 else 0) if fn == "nll_loss" else z
    try:
        loss = getattr(L.nn.functional, fn)(inp, t, **kw)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).split(" (")[0].split(":")[0].rstrip(".")
    g, = L.autograd.grad(loss, z, L.ones_like(loss))
    return loss.detach().numpy().copy(), g.numpy().copy()


_R = np.random.RandomState(0)
X2, X1 = _R.standard_normal((5, 3)).astype(np.float32), _R.standard_normal(3)
X3, X4 = _R.standard_normal((2, 3, 4)), _R.standard_normal((2, 3, 2, 2)).astype(np.float32)
TARGETS = {
    "valid": (X2, [0, 1, 2, 2, 1], {}), "some_ignored": (X2, [0, -100, 2, -100, 1], {}),
    "all_ignored": (X2, [-100] * 5, {}), "minus_1": (X2, [0, -1, 2, 1, 1], {}),
    "eq_C": (X2, [0, 3, 1, 2, 0], {}),
    "huge": (X2, [0, 2 ** 40, 1, 2, 0], {}), "int64_min": (X2, [0, -2 ** 63, 1, 2, 0], {}),
    "uint8": (X2, [0, 1, 2, 255, 1], {"tdtype": "uint8"}),
    "strided": (X2, [0, 9, 1, -100, 2, 9, 2, 9, 1, 9], {"tslice": slice(None, None, 2)}),
    "column": (X2, [[0, 5], [2, 5], [-100, 5], [1, 5], [1, 5]], {"tslice": (slice(None), 0)}),
    "0d": (X1, 2, {}), "0d_ignored": (X1, -100, {}), "0d_bad": (X1, 3, {}),
    "3d": (X3, [[0, -100, 2, 1], [2, 2, 1, 0]], {}),
    "4d": (X4, [[[0, 3], [2, 1]], [[1, 1], [3, 0]]], {}),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("ignore_index", [-100, 0, 2, 3, -1, 255, 10 ** 12])
@pytest.mark.parametrize("weight", [None, [0.5, 0.0, 2.0], [0.0, 0.0, 0.0], [1.0, -1.0, 0.0]])
def test_nll_and_cross_entropy_targets_as_torch(target, ignore_index, weight, torch):
    x, t, kw = TARGETS[target]
    flat = np.asarray(t)[kw.get("tslice", ...)].reshape(-1)
    kept = flat[flat != ignore_index]
    in_range = ((kept >= 0) & (kept < 3)).all()
    mass = len(kept) if weight is None else np.asarray(weight)[kept].sum() if in_range else 1
    for fn, red, ls in (("nll_loss", "none", 0.0), ("nll_loss", "mean", 0.0),
                        ("cross_entropy", "sum", 0.0), ("cross_entropy", "mean", 0.3)):
        if ls and (mass == 0 or kw.get("tdtype") == "uint8" and weight is not None):
            # a smoothed mean over no weight: see test_label_smoothing_with_every_target_ignored
            # (and torch 2.13's smoothing refuses a uint8 target with weights: gather() wants
            # int64)
            continue
        args = dict(kw, weight=weight, ignore_index=ignore_index, reduction=red)
        if ls:
            args["label_smoothing"] = ls
        ours, ref = _nll(tg, fn, x, t, **args), _nll(torch, fn, x, t, **args)
        if isinstance(ref[0], str) or isinstance(ours[0], str):
            # (torch 2.13 itself fails to format "Target 255 ..." for a uint8 target with 'none')
            assert ours == ref or ref[0] == "UnicodeDecodeError" and ours[0] == "IndexError"
        else:
            _same(ours[0], ref[0])
            _same(ours[1], ref[1])


def test_nll_double_backward_as_torch(torch):
    def f(L, target):
        z = L.tensor(X2.astype(np.float64), requires_grad=True)
        g, = L.autograd.grad(L.nn.functional.cross_entropy(z, L.tensor(target)), z,
                             create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), z)
        return g.detach().numpy(), gg.numpy()
    for target in ([0, 1, 2, 2, 1], [0, -100, 2, 1, -100]):
        for a, b in zip(f(tg, target), f(torch, target)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# torch 2.13's results (nll_loss of raw log-probabilities, targets [-100, 1])
_LP = [[1.0, -1.0, -2.0], [-0.5, -1.0, -2.0]]


@pytest.mark.parametrize("gout", [-1.0, float("inf"), float("nan")])
def test_nll_gradient_off_the_targets_is_plus_zero(gout):
    lp = tg.tensor(_LP, requires_grad=True)
    loss = F.nll_loss(lp, tg.tensor([-100, 1]), reduction="none")
    loss.backward(tg.tensor([1.0, gout]))
    expect = np.zeros((2, 3))
    expect[1, 1] = -gout
    _same(lp.grad.numpy(), expect)


def test_ignored_row_loss_is_plus_zero_whatever_its_input():
    loss = F.nll_loss(tg.tensor(_LP), tg.tensor([-100, 1]), reduction="none")
    _same(loss.numpy(), [0.0, 1.0])
    z = tg.tensor([[float("-inf"), 1.0, 2.0], [0.5, 1.0, 2.0]])
    assert F.cross_entropy(z, tg.tensor([-100, 1])).item() == pytest.approx(1.4643688, rel=1e-6)


def test_nll_mean_over_no_targets_double_backward_wrt_grad_output():
    lp = tg.tensor(_LP, requires_grad=True)
    loss = F.nll_loss(lp, tg.tensor([-100, -100]))
    v = tg.ones((), requires_grad=True)
    g, = tg.autograd.grad(loss, lp, v, create_graph=True)
    h, = tg.autograd.grad((g * tg.tensor(_LP)).sum(), v)
    assert np.isnan(h.item())


@pytest.mark.parametrize("case", ["cross_entropy", "masked_fill"])
def test_label_smoothing_with_every_target_ignored(case):
    if case == "cross_entropy":
        z = tg.tensor(X2, requires_grad=True)
        F.cross_entropy(z, tg.tensor([-100] * 5), label_smoothing=0.3).backward()
        assert z.grad.tolist() == np.zeros((5, 3)).tolist()
    else:
        x = tg.tensor([1.0, 2.0], requires_grad=True)
        x.masked_fill(tg.tensor([True, False]), 0.0).backward(tg.tensor([float("inf"), 1.0]))
        assert x.grad.tolist() == [0.0, 1.0]


NLL_EDGES = {   # torch 2.13: nan for an empty (0, C, d) batch
    "empty_3d_batch": lambda: np.isnan(F.cross_entropy(tg.zeros(0, 3, 4, requires_grad=True),
                                                        tg.zeros(0, 4, dtype=tg.int64)).item()),
}


@pytest.mark.parametrize("shape", [(2,), (4,), (3, 1), ()])
def test_nll_loss_weight_must_cover_every_class(shape):
    # torch 2.13: RuntimeError "weight tensor should be defined either for all 3 classes or no
    # classes but got weight tensor of shape: [2]" (any shape but (C,))
    x = tg.tensor(_LP, requires_grad=True)
    for fn in (lambda w: F.nll_loss(x, tg.tensor([0, 1]), weight=w),
               lambda w: F.cross_entropy(x, tg.tensor([0, 1]), weight=w)):
        with pytest.raises(RuntimeError, match=r"weight tensor should be defined either for all "
                           r"3 classes or no classes but got weight tensor of shape: "
                           + re.escape(str(list(shape)))):
            fn(tg.ones(*shape) if shape else tg.tensor(1.0))
        assert x.grad is None


@pytest.mark.parametrize("name", sorted(NLL_EDGES))
def test_nll_loss_edge_inputs_as_torch(name):
    assert NLL_EDGES[name]()


# ---- 4. max pools and gather-like ops saving their data input ----------------------------------
XP = np.random.default_rng(0).standard_normal((2, 3, 8, 8))
SAVING = {
    "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x, 2),
    "max_pool2d_overlap": lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, 1),
    "max_pool2d_unbatched": lambda L, x: L.nn.functional.max_pool2d(x[0], 2),
    "max_pool1d": lambda L, x: L.nn.functional.max_pool1d(x.reshape(6, 64), 3, 2),
    "gather": lambda L, x: L.gather(x, 3, L.zeros(2, 3, 8, 2, dtype=L.int64)),
    "take": lambda L, x: L.take(x, L.tensor([0, 5, 5])),
    "masked_select": lambda L, x: L.masked_select(x, L.tensor(XP[0, 0] > 0)),
    "nan_to_num": lambda L, x: L.nan_to_num(x),
    "index_add": lambda L, x: L.zeros(2, 3, 8, 9, dtype=L.float64).index_add(
        3, L.tensor([0, 1, 2, 3, 4, 5, 6, 8]), x),
}


@pytest.mark.parametrize("name", sorted(SAVING))
def test_saved_input_lives_only_with_the_graph(name):
    for retain in (False, True):
        p = tg.tensor(XP, requires_grad=True)
        x = p.relu()
        ref = weakref.ref(x._data)
        y = SAVING[name](tg, x[:, :, :, :])       # a view of an intermediate as the input
        del x
        assert ref() is not None
        y.sum().backward(retain_graph=retain)
        assert (ref() is not None) == retain
        del y
        assert ref() is None


@pytest.mark.parametrize("name", sorted(SAVING))
def test_changing_the_input_after_backward_and_retained_graphs_as_torch(name, torch):
    def f(L):
        p = L.tensor(XP, requires_grad=True)
        x = p * 1
        y = SAVING[name](L, x)
        y.sum().backward(retain_graph=True)
        y.sum().backward(retain_graph=True)       # twice through a retained graph
        g = p.grad.numpy().copy()
        x.mul_(2)                                 # after backward: fine
        err = _run(L, lambda L: y.sum().backward())   # then backward again: torch raises
        with L.no_grad():
            q = p * 1                             # made under no_grad, then a leaf with grad
        q.requires_grad_()
        z = SAVING[name](L, q)
        q_err = _run(L, lambda L: q.add_(1))      # a leaf requiring grad: refused
        z.sum().backward()
        with L.no_grad():
            q.add_(1)                             # after backward, under no_grad: fine
        with L.inference_mode():
            inf = L.tensor(XP) * 1
        w = L.tensor(2.0, requires_grad=True)
        inf_err = _run(L, lambda L: SAVING[name](L, inf * w).sum().backward())
        return g, err, q_err, q.grad.numpy().copy(), inf_err, w.grad is None
    ours, ref = f(tg), f(torch)
    np.testing.assert_allclose(ours[0], ref[0])
    np.testing.assert_allclose(ours[3], ref[3])
    assert ours[1:3] + ours[4:] == pytest.approx(ref[1:3] + ref[4:])


@pytest.mark.xfail(strict=True, reason="older (6c2f22c left it): torch saves the indices "
                   "output, so changing it in place raises")
def test_max_pool_indices_changed_in_place_raises():
    x = tg.tensor(XP, requires_grad=True) * 1
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    idx.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
