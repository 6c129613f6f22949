"""The regression and divergence losses of ``tapegrad/ops/losses.py`` (l1_loss, smooth_l1_loss,
huber_loss, kl_div, poisson_nll_loss), mse_loss's ``weight=``, and their nn modules.

Against torch (skipped cleanly without it): the whole recorded graph (node names and edges, not
only the output's grad_fn), values, gradients and second derivatives; warnings; the exception
type and message of bad input; dtypes for every pair of input/target dtypes; the legacy
``size_average``/``reduce`` flags; the modules. Without torch: closed forms of the values and
of the first and second derivatives, gradcheck/gradgradcheck in float64, and the exception
types with messages that name the op. (``tests/test_ops.py`` runs the op_db rows on top.)
"""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck

F = tg.nn.functional
_LOSSES = ("l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "poisson_nll_loss", "mse_loss")
_DEPRECATION = "size_average and reduce args will be deprecated, please use reduction='{}' instead."


# ---- helpers ------------------------------------------------------------------------------------
def _graph(t):
    """The graph behind ``t`` as nested (node name, (inputs...)) tuples; 'Acc' for a leaf's
    AccumulateGrad, None for an input that needs no gradient."""
    def node(fn):
        if fn is None:
            return None
        name = type(fn).__name__
        if name == "AccumulateGrad":
            return "Acc"
        kids = tuple(node(f) for f, _ in fn.next_functions)
        return (name, kids) if kids else name
    return node(t.grad_fn)


def _dtype_name(dt):
    return str(dt).rsplit(".", 1)[-1]


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(_np(a), np.float64), np.asarray(_np(b), np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _outcome(fn):
    """The call's result, or the exception it raises (with its warnings silenced)."""
    try:
        return _quiet(fn)
    except Exception as e:   # noqa: BLE001 - the exception is the outcome being compared
        return e


_RNG = np.random.default_rng(20240607)
_X = _RNG.uniform(-2, 2, (3, 4))
_Y = _RNG.uniform(-2, 2, (3, 4))
_P = _RNG.uniform(0.1, 2.0, (3, 4))      # positive: probabilities, rates, counts
_Y4 = _RNG.uniform(0.1, 2.0, (4,))
_W = _RNG.uniform(0.5, 2.0, (3, 4))
_W4 = _RNG.uniform(0.5, 2.0, (4,))

# (name, function, positional arrays, keyword arrays/values): each config is run in both
# frameworks with every array a float64 leaf requiring grad
_CONFIGS = []
for _red in ("mean", "sum", "none"):
    _CONFIGS += [
        ("l1", "l1_loss", (_X, _Y), {"reduction": _red}),
        ("l1_bcast", "l1_loss", (_X, _Y4), {"reduction": _red}),
        ("l1_weight", "l1_loss", (_X, _Y), {"reduction": _red, "weight": _W}),
        ("l1_weight_bcast", "l1_loss", (_Y4, _X), {"reduction": _red, "weight": _W4}),
        ("smooth_l1", "smooth_l1_loss", (_X, _Y), {"reduction": _red}),
        ("smooth_l1_beta", "smooth_l1_loss", (_X, _Y4), {"reduction": _red, "beta": 0.3}),
        ("smooth_l1_beta0", "smooth_l1_loss", (_X, _Y), {"reduction": _red, "beta": 0.0}),
        ("huber", "huber_loss", (_X, _Y), {"reduction": _red}),
        ("huber_delta", "huber_loss", (_Y4, _X), {"reduction": _red, "delta": 0.4}),
        ("huber_weight", "huber_loss", (_X, _Y), {"reduction": _red, "weight": _W,
                                                  "delta": 1.5}),
        ("kl", "kl_div", (_X, _P), {"reduction": _red}),
        ("kl_log_target", "kl_div", (_X, _Y), {"reduction": _red, "log_target": True}),
        ("kl_bcast", "kl_div", (_X, _Y4), {"reduction": _red}),
        ("poisson", "poisson_nll_loss", (_X, _P), {"reduction": _red}),
        ("poisson_rate", "poisson_nll_loss", (_P, _P * 2), {"reduction": _red,
                                                             "log_input": False}),
        ("poisson_full", "poisson_nll_loss", (_X, _P * 2), {"reduction": _red, "full": True}),
        ("poisson_full_rate", "poisson_nll_loss", (_P, _P * 2),
         {"reduction": _red, "full": True, "log_input": False, "eps": 0.1}),
        ("mse", "mse_loss", (_X, _Y), {"reduction": _red}),
        ("mse_bcast", "mse_loss", (_X, _Y4), {"reduction": _red}),
        ("mse_weight", "mse_loss", (_X, _Y), {"reduction": _red, "weight": _W}),
        ("mse_weight_bcast", "mse_loss", (_Y4, _X), {"reduction": _red, "weight": _W4}),
    ]
_CONFIGS += [
    ("kl_batchmean", "kl_div", (_X, _P), {"reduction": "batchmean"}),
    ("kl_batchmean_log_target", "kl_div", (_X, _Y), {"reduction": "batchmean",
                                                      "log_target": True}),
    ("kl_batchmean_0d", "kl_div", (_X[0, 0], _P[0, 0]), {"reduction": "batchmean"}),
]
_CONFIG_IDS = [f"{c[0]}-{c[3].get('reduction', 'mean')}" for c in _CONFIGS]


def _build(L, fn, args, kwargs, target_grad=True):
    """Leaves for ``args``/``kwargs`` (arrays become float64 tensors requiring grad; the second
    positional one only when ``target_grad``), and the loss."""
    leaves = []

    def leaf(a, requires_grad=True):
        t = L.tensor(np.asarray(a), dtype=L.float64)
        if requires_grad:
            t.requires_grad_(True)
            leaves.append(t)
        return t
    pos = [leaf(a, i != 1 or target_grad) for i, a in enumerate(args)]
    kw = {k: leaf(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    out = _quiet(lambda: getattr(L.nn.functional, fn)(*pos, **kw))
    return out, leaves


# ---- the graph, values, gradients and second derivatives against torch --------------------------
@pytest.mark.parametrize("target_grad", [True, False], ids=["target_grad", "target_const"])
@pytest.mark.parametrize("config", _CONFIGS, ids=_CONFIG_IDS)
def test_graph_values_and_derivatives_match_torch(config, target_grad, torch):
    _, fn, args, kwargs = config
    ours, leaves = _build(tg, fn, args, kwargs, target_grad)
    theirs, ref_leaves = _build(torch, fn, args, kwargs, target_grad)
    assert _graph(ours) == _graph(theirs)
    assert _dtype_name(ours.dtype) == _dtype_name(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    _close(ours, theirs)
    cot = np.linspace(-1.0, 1.5, max(ours.numel(), 1)).reshape(tuple(ours.shape))
    grads = tg.autograd.grad((ours * tg.tensor(cot)).sum(), leaves, create_graph=True)
    ref = torch.autograd.grad((theirs * torch.tensor(cot)).sum(), ref_leaves, create_graph=True)
    for g, r in zip(grads, ref):
        _close(g, r)
    assert [g.requires_grad for g in grads] == [r.requires_grad for r in ref]
    if not any(r.requires_grad for r in ref):
        return
    # second derivatives: of a weighted sum of the squared first derivatives
    s = sum((g * g).sum() * (k + 1) for k, g in enumerate(grads) if g.requires_grad)
    rs = sum((r * r).sum() * (k + 1) for k, r in enumerate(ref) if r.requires_grad)
    hh = tg.autograd.grad(s, leaves, allow_unused=True)
    rh = torch.autograd.grad(rs, ref_leaves, allow_unused=True, materialize_grads=True)
    for h, r in zip(hh, rh):
        _close(np.zeros(tuple(r.shape)) if h is None else h, r.numpy(force=True))


def test_kinks_match_torch_including_repr(torch):
    """At d == 0 and |d| == beta (delta) the first derivatives are torch's, printed the same
    (+0 for the target where input == target), and the second derivative is 0 on the boundary
    (torch's strict |d| < beta)."""
    def run(L, fn, **kw):
        x = L.tensor([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0], dtype=L.float64, requires_grad=True)
        t = L.zeros(7, dtype=L.float64, requires_grad=True)
        out = getattr(L.nn.functional, fn)(x, t, reduction="none", **kw)
        g = L.linspace(0.5, 1.5, 7, dtype=L.float64)
        gx, gt = L.autograd.grad(out, (x, t), g, create_graph=True)
        hx, ht = L.autograd.grad((gx * gx).sum() + gt.sum(), (x, t))
        return [repr(v.detach()).replace("torch.", "").replace("tapegrad.", "")
                for v in (out, gx, gt, hx, ht)]
    for fn, kw in (("smooth_l1_loss", {"beta": 1.0}), ("smooth_l1_loss", {"beta": 0.5}),
                   ("huber_loss", {"delta": 1.0}), ("huber_loss", {"delta": 2.0})):
        assert run(tg, fn, **kw) == run(torch, fn, **kw), (fn, kw)


@pytest.mark.parametrize("fn,node", [("smooth_l1_loss", "SmoothL1LossBackward0"),
                                     ("huber_loss", "HuberLossBackward0"),
                                     ("mse_loss", "MseLossBackward0")])
def test_primitive_node_names(fn, node):
    x = tg.tensor([0.5, -1.0, 3.0], requires_grad=True)
    out = getattr(F, fn)(x, tg.zeros(3))
    assert type(out.grad_fn).__name__ == node
    assert repr(out).endswith(f"grad_fn=<{node}>)")


def test_composite_graphs_without_torch():
    """The graphs torch records for the composites, written out (checked against torch above)."""
    x = tg.tensor([[0.5, -1.0]], requires_grad=True)
    t = tg.tensor([[0.2, 0.7]], requires_grad=True)
    w = tg.tensor([[1.0, 2.0]], requires_grad=True)
    sub = ("SubBackward0", ("Acc", "Acc"))
    assert _graph(F.l1_loss(x, t)) == ("MeanBackward0", (("AbsBackward0", (sub,)),))
    assert _graph(F.l1_loss(x, t, weight=w)) == (
        "DivBackward0", (("SumBackward0", (("MulBackward0", (("AbsBackward0", (sub,)), "Acc")),)),
                         ("SumBackward0", ("Acc",))))
    assert _graph(F.mse_loss(x, t, weight=w, reduction="sum")) == (
        "SumBackward0", (("MulBackward0", (("PowBackward0", (sub,)), "Acc")),))
    assert _graph(F.huber_loss(x, t, weight=w)) == (
        "MeanBackward0", (("MulBackward0", (("HuberLossBackward0", ("Acc", "Acc")), "Acc")),))
    assert _graph(F.smooth_l1_loss(x, t, beta=0)) == ("MeanBackward0",
                                                       (("AbsBackward0", (sub,)),))
    kl = _quiet(lambda: F.kl_div(x, t, reduction="batchmean"))
    assert _graph(kl) == ("DivBackward0", (("SumBackward0", (("SubBackward0", (
        ("XlogyBackward0", ("Acc", "Acc")), ("MulBackward0", ("Acc", "Acc")))),)), None))
    assert _graph(F.poisson_nll_loss(x, t, log_input=False, reduction="sum")) == (
        "SumBackward0", (("SubBackward0", ("Acc", ("MulBackward0", (
            "Acc", ("LogBackward0", (("AddBackward1", ("Acc",)),)))))),))
    # a target already of the broadcast shape is not expanded (torch.broadcast_tensors)
    wide = tg.zeros(3, 2)
    assert _graph(_quiet(lambda: F.mse_loss(x, wide))) == ("MseLossBackward0", (("ExpandBackward0", ("Acc",)),
                                                                None))


# ---- closed forms, without torch ---------------------------------------------------------------
def _smooth_l1_ref(d, beta):
    ad = np.abs(d)
    return np.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)


def _huber_ref(d, delta):
    ad = np.abs(d)
    return np.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))


@pytest.mark.parametrize("beta", [0.25, 1.0, 3.0])
def test_smooth_l1_and_huber_closed_forms(beta):
    x = tg.tensor(_X, requires_grad=True)
    t = tg.tensor(_Y)
    d = _X - _Y
    for fn, ref, deriv, curv, kw in (
            (F.smooth_l1_loss, _smooth_l1_ref(d, beta), np.clip(d / beta, -1, 1),
             (np.abs(d) < beta) / beta, {"beta": beta}),
            (F.huber_loss, _huber_ref(d, beta), np.clip(d, -beta, beta),
             (np.abs(d) < beta) * 1.0, {"delta": beta})):
        for red, agg in (("none", lambda a: a), ("sum", np.sum), ("mean", np.mean)):
            out = fn(x, t, reduction=red, **kw)
            _close(out, agg(ref))
        out = fn(x, t, reduction="mean", **kw)
        g, = tg.autograd.grad(out, x, create_graph=True)
        _close(g, deriv / d.size)
        h, = tg.autograd.grad(g.sum(), x)
        _close(h, curv / d.size)
    # huber is smooth_l1 scaled by delta
    _close(F.huber_loss(x, t, delta=beta), F.smooth_l1_loss(x, t, beta=beta) * beta, rtol=1e-12)


def test_l1_closed_form_and_zero_subgradient():
    x = tg.tensor([1.0, -0.5, 2.0], dtype=tg.float64, requires_grad=True)
    t = tg.tensor([1.0, 0.5, -2.0], dtype=tg.float64)
    out = F.l1_loss(x, t, reduction="sum")
    _close(out, 5.0)
    out.backward()
    _close(x.grad, [0.0, -1.0, 1.0])          # abs'(0) = 0, as torch
    _close(F.l1_loss(x, t), 5.0 / 3)


def test_weighted_reductions_closed_forms():
    """mse and l1: 'mean' is sum(w * loss) / sum(w); huber: the plain mean of w * loss."""
    x, t, w = tg.tensor(_X), tg.tensor(_Y), tg.tensor(_W)
    d = _X - _Y
    _close(F.mse_loss(x, t, weight=w), (_W * d * d).sum() / _W.sum())
    _close(F.l1_loss(x, t, weight=w), (_W * np.abs(d)).sum() / _W.sum())
    _close(F.huber_loss(x, t, weight=w), (_W * _huber_ref(d, 1.0)).mean())
    _close(F.mse_loss(x, t, weight=w, reduction="none"), _W * d * d)
    _close(F.l1_loss(x, t, weight=w, reduction="sum"), (_W * np.abs(d)).sum())
    # the weight has the input's shape and broadcasts against a larger target
    x4, w4 = tg.tensor(_Y4), tg.tensor(_W4)
    with pytest.warns(UserWarning, match="different to the input size"):
        _close(F.mse_loss(x4, t, weight=w4, reduction="sum"), (_W4 * (_Y4 - _Y) ** 2).sum())
    with pytest.warns(UserWarning, match="different to the input size"):
        _close(F.mse_loss(x4, t, weight=w4), (_W4 * (_Y4 - _Y) ** 2).sum() / _W4.sum())


def test_weight_gradient_closed_form():
    x, t = tg.tensor(_X), tg.tensor(_Y)
    w = tg.tensor(_W, requires_grad=True)
    F.mse_loss(x, t, weight=w).backward()
    se = (_X - _Y) ** 2
    _close(w.grad, se / _W.sum() - (_W * se).sum() / _W.sum() ** 2)


def test_kl_div_closed_forms():
    logq = np.log(np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]))
    p = np.array([[0.1, 0.0, 0.9], [0.5, 0.25, 0.25]])
    per = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - logq), 0.0)
    x = tg.tensor(logq, requires_grad=True)
    with pytest.warns(UserWarning, match="batchmean"):
        _close(F.kl_div(x, tg.tensor(p)), per.mean())
    _close(F.kl_div(x, tg.tensor(p), reduction="batchmean"), per.sum() / 2)
    _close(F.kl_div(x, tg.tensor(p), reduction="sum"), per.sum())
    _close(F.kl_div(x, tg.tensor(np.log(np.where(p > 0, p, 1e-300))), reduction="none",
                    log_target=True), per, atol=1e-12)
    F.kl_div(x, tg.tensor(p), reduction="batchmean").backward()
    _close(x.grad, -p / 2)
    # a 0-dim input: 'batchmean' is the sum
    _close(F.kl_div(tg.tensor(-1.0, dtype=tg.float64), tg.tensor(0.5, dtype=tg.float64),
                    reduction="batchmean"),
           0.5 * (math.log(0.5) + 1.0))


def test_kl_div_target_gradient_is_nan_at_zero_like_xlogy():
    t = tg.tensor([0.0, 0.5], dtype=tg.float64, requires_grad=True)
    x = tg.tensor([-1.0, -2.0], dtype=tg.float64)
    F.kl_div(x, t, reduction="sum").backward()
    assert math.isnan(float(t.grad[0]))
    _close(t.grad[1], math.log(0.5) + 1 + 2.0)


def test_poisson_nll_loss_closed_forms():
    x = np.array([0.5, 1.0, 2.0, 0.3])
    y = np.array([0.0, 1.0, 2.0, 5.0])
    xt, yt = tg.tensor(x, requires_grad=True), tg.tensor(y)
    _close(F.poisson_nll_loss(xt, yt, reduction="none"), np.exp(x) - y * x)
    _close(F.poisson_nll_loss(xt, yt, log_input=False, eps=0.25, reduction="none"),
           x - y * np.log(x + 0.25))
    with np.errstate(divide="ignore", invalid="ignore"):
        stirling = y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y)
    stirling = np.where(y > 1, stirling, 0.0)
    _close(F.poisson_nll_loss(xt, yt, full=True, reduction="sum"),
           (np.exp(x) - y * x + stirling).sum())
    F.poisson_nll_loss(xt, yt).backward()
    _close(xt.grad, (np.exp(x) - y) / 4)


def test_reductions_of_empty_tensors_are_nan_and_zero():
    e = tg.zeros(0, 3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")    # no NumPy warning for the mean of nothing
        for fn in (F.l1_loss, F.smooth_l1_loss, F.huber_loss, F.poisson_nll_loss):
            assert math.isnan(float(fn(e, e.detach()).detach()))
            assert float(fn(e, e.detach(), reduction="sum").detach()) == 0.0
            fn(e, e.detach()).backward()
            assert tuple(e.grad.shape) == (0, 3)


# ---- gradcheck / gradgradcheck in float64 (no torch) --------------------------------------------
_GRADCHECK = [
    (F.l1_loss, {}), (F.l1_loss, {"reduction": "sum"}),
    (F.smooth_l1_loss, {}), (F.smooth_l1_loss, {"beta": 0.3, "reduction": "none"}),
    (F.huber_loss, {"delta": 0.6}), (F.huber_loss, {"reduction": "sum"}),
    (F.kl_div, {"reduction": "batchmean"}), (F.kl_div, {"log_target": True, "reduction": "sum"}),
    (F.poisson_nll_loss, {}), (F.poisson_nll_loss, {"log_input": False, "full": True}),
    (F.mse_loss, {}),
]


@pytest.mark.parametrize("fn,kw", _GRADCHECK, ids=[f"{f.__name__}-{k}" for f, k in _GRADCHECK])
def test_gradcheck_and_gradgradcheck(fn, kw):
    x = tg.tensor(_P if kw.get("log_input") is False else _X, requires_grad=True)
    t = tg.tensor(_P * 1.7, requires_grad=True)
    assert gradcheck(lambda a, b: fn(a, b, **kw), (x, t))
    assert gradgradcheck(lambda a, b: fn(a, b, **kw), (x, t))


@pytest.mark.parametrize("fn,kw", [(F.mse_loss, {}), (F.l1_loss, {"reduction": "sum"}),
                                   (F.huber_loss, {"delta": 0.5})])
def test_weighted_gradcheck_and_gradgradcheck(fn, kw):
    x, t = tg.tensor(_X, requires_grad=True), tg.tensor(_Y, requires_grad=True)
    w = tg.tensor(_W, requires_grad=True)
    assert gradcheck(lambda a, b, c: fn(a, b, weight=c, **kw), (x, t, w))
    assert gradgradcheck(lambda a, b, c: fn(a, b, weight=c, **kw), (x, t, w))


# ---- warnings -----------------------------------------------------------------------------------
def _warnings_of(L, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.suppress(Exception):    # only the warnings before it matter here
            call(L)
    return caught


_WARNING_CASES = {
    "l1_size": lambda L: L.nn.functional.l1_loss(L.zeros(3, 4), L.zeros(4)),
    "smooth_l1_size": lambda L: L.nn.functional.smooth_l1_loss(L.zeros(4), L.zeros(3, 4)),
    "huber_size": lambda L: L.nn.functional.huber_loss(L.zeros(3, 1), L.zeros(4)),
    "mse_weight_size": lambda L: L.nn.functional.mse_loss(L.zeros(4), L.zeros(3, 4),
                                                          weight=L.ones(4)),
    "size_then_legacy": lambda L: L.nn.functional.l1_loss(L.zeros(3, 4), L.zeros(4),
                                                          reduce=False),
    "size_before_shape_error": lambda L: L.nn.functional.smooth_l1_loss(L.zeros(3), L.zeros(2)),
    "kl_mean": lambda L: L.nn.functional.kl_div(L.zeros(2), L.ones(2)),
    "kl_mean_bad_dtype": lambda L: L.nn.functional.kl_div(L.zeros(2), L.ones(2, dtype=L.int64)),
    "kl_batchmean": lambda L: L.nn.functional.kl_div(L.zeros(2), L.ones(2),
                                                     reduction="batchmean"),
    "kl_legacy": lambda L: L.nn.functional.kl_div(L.zeros(2), L.ones(2), size_average=False),
    "kl_elementwise_mean": lambda L: L.nn.functional.kl_div(L.zeros(2), L.ones(2),
                                                            reduction="elementwise_mean"),
    "poisson_legacy": lambda L: L.nn.functional.poisson_nll_loss(L.zeros(2), L.ones(2),
                                                                 reduce=False),
    "poisson_broadcast_is_silent": lambda L: L.nn.functional.poisson_nll_loss(L.zeros(3, 2),
                                                                              L.ones(2)),
    "elementwise_mean_l1": lambda L: L.nn.functional.l1_loss(L.zeros(2), L.ones(2),
                                                             reduction="elementwise_mean"),
    "elementwise_mean_huber": lambda L: L.nn.functional.huber_loss(L.zeros(2), L.ones(2),
                                                                   reduction="elementwise_mean"),
    "module_legacy": lambda L: L.nn.SmoothL1Loss(size_average=False),
    "module_kl_mean": lambda L: L.nn.KLDivLoss()(L.zeros(2), L.ones(2)),
}


@pytest.mark.parametrize("case", sorted(_WARNING_CASES))
def test_warnings_match_torch(case, torch):
    ours = _warnings_of(tg, _WARNING_CASES[case])
    theirs = _warnings_of(torch, _WARNING_CASES[case])
    assert [(w.category, str(w.message).replace("tapegrad.", "torch.")) for w in ours] == \
           [(w.category, str(w.message)) for w in theirs]
    for w in ours:     # ours point at the caller's line
        assert w.filename == __file__, (w.filename, str(w.message))


def test_kl_div_mean_warns_every_call_without_torch():
    for _ in range(2):
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            F.kl_div(tg.zeros(2), tg.ones(2))


# ---- bad input ----------------------------------------------------------------------------------
def _f(name, make, **kw):
    return lambda L: getattr(L.nn.functional, name)(*make(L), **kw)


def _pair(shape_a=(3, 4), shape_b=(3, 4), da="float32", db="float32"):
    return lambda L: (L.full(shape_a, 0.5).to(getattr(L, da)),
                      L.ones(*shape_b).to(getattr(L, db)))


_ERRORS = {
    # (call, the op name our message must contain)
    # (mse_loss keeps torch's exact message here: tests/test_functional_review.py asks for it)
    **{f"{n}_bad_reduction": (_f(n, _pair(), reduction="bogus"), n if n != "mse_loss" else "")
       for n in _LOSSES},
    **{f"{n}_none_reduction": (_f(n, _pair(), reduction=None), n if n != "mse_loss" else "")
       for n in _LOSSES},
    **{f"{n}_shapes": (_f(n, _pair((3, 4), (3, 5))), n) for n in _LOSSES},
    **{f"{n}_weight_bad_reduction": (lambda L, n=n: getattr(L.nn.functional, n)(
        L.ones(2), L.zeros(2), reduction="bogus", weight=L.ones(2)), n)
       for n in ("l1_loss", "mse_loss", "huber_loss")},
    **{f"{n}_weight_elementwise_mean": (lambda L, n=n: getattr(L.nn.functional, n)(
        L.ones(2), L.zeros(2), reduction="elementwise_mean", weight=L.ones(2)), n)
       for n in ("l1_loss", "mse_loss", "huber_loss")},
    **{f"{n}_weight_shape": (lambda L, n=n: getattr(L.nn.functional, n)(
        L.ones(3, 4), L.zeros(3, 4), weight=L.ones(4)), n)
       for n in ("l1_loss", "mse_loss", "huber_loss")},
    **{f"{n}_weight_broadcast_shape": (lambda L, n=n: getattr(L.nn.functional, n)(
        L.ones(4), L.zeros(3, 4), weight=L.ones(3, 4)), n)
       for n in ("l1_loss", "mse_loss", "huber_loss")},
    **{f"{n}_weight_not_tensor": (lambda L, n=n: getattr(L.nn.functional, n)(
        L.ones(2), L.zeros(2), weight=2.0), n) for n in ("l1_loss", "mse_loss", "huber_loss")},
    **{f"{n}_target_not_tensor": (lambda L, n=n: getattr(L.nn.functional, n)(L.ones(2), 1.0), n)
       for n in _LOSSES},
    **{f"{n}_input_not_tensor": (lambda L, n=n: getattr(L.nn.functional, n)(1.0, L.ones(2)), n)
       for n in _LOSSES},
    "smooth_l1_negative_beta": (_f("smooth_l1_loss", _pair(), beta=-1.0), "smooth_l1_loss"),
    "smooth_l1_nan_beta": (_f("smooth_l1_loss", _pair(), beta=float("nan")), "smooth_l1_loss"),
    "smooth_l1_str_beta": (_f("smooth_l1_loss", _pair(), beta="1"), "smooth_l1_loss"),
    "smooth_l1_none_beta": (_f("smooth_l1_loss", _pair(), beta=None), "smooth_l1_loss"),
    "huber_zero_delta": (_f("huber_loss", _pair(), delta=0.0), "huber_loss"),
    "huber_negative_delta_weight": (lambda L: L.nn.functional.huber_loss(
        L.ones(2), L.zeros(2), delta=-1.0, weight=L.ones(2)), "huber_loss"),
    "huber_str_delta": (_f("huber_loss", _pair(), delta="1"), "huber_loss"),
    "huber_bad_reduction_before_delta": (_f("huber_loss", _pair(), delta=-1.0,
                                            reduction="bogus"), "huber_loss"),
    "kl_batchmean_bad_dtype": (_f("kl_div", _pair(db="int64"), reduction="batchmean"), "kl_div"),
    "kl_log_target_int": (_f("kl_div", _pair(), log_target=1), "kl_div"),
    "kl_int_before_shapes": (_f("kl_div", _pair((3, 4), (5,), db="int64"), reduction="sum"),
                             "kl_div"),
    "poisson_elementwise_mean": (_f("poisson_nll_loss", _pair(), reduction="elementwise_mean"),
                                 "poisson_nll_loss"),
    "poisson_log_input_int": (_f("poisson_nll_loss", _pair(), log_input=1), "poisson_nll_loss"),
    "poisson_full_none": (_f("poisson_nll_loss", _pair(), full=None), "poisson_nll_loss"),
    "poisson_eps_str": (_f("poisson_nll_loss", _pair(), eps="a"), "poisson_nll_loss"),
    "poisson_bool_bool": (_f("poisson_nll_loss", _pair(da="bool", db="bool")),
                          "poisson_nll_loss"),
    "poisson_bool_rate": (_f("poisson_nll_loss", _pair(da="bool"), log_input=False),
                          "poisson_nll_loss"),
    "poisson_bool_target_full": (_f("poisson_nll_loss", _pair(db="bool"), full=True),
                                 "poisson_nll_loss"),
    "l1_bool_target": (_f("l1_loss", _pair(db="bool")), "l1_loss"),
    "l1_bool_bool": (_f("l1_loss", _pair(da="bool", db="bool")), "l1_loss"),
    "mse_weight_bool": (lambda L: L.nn.functional.mse_loss(
        L.ones(2, dtype=L.bool), L.zeros(2), weight=L.ones(2)), "mse_loss"),
    "huber_module_str_delta": (lambda L: L.nn.HuberLoss(delta="1"), "delta"),
    "module_bad_reduction": (lambda L: L.nn.L1Loss(reduction="bogus")(L.ones(2), L.ones(2)),
                             "l1_loss"),
}


@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_bad_input_raises_like_torch(case, torch):
    """The exception type is torch's; our message starts with torch's and names the op (or the
    argument)."""
    call, name = _ERRORS[case]
    theirs = _outcome(lambda: call(torch))
    ours = _outcome(lambda: call(tg))
    assert isinstance(theirs, Exception), f"torch does not raise: {theirs!r}"
    assert type(ours) is type(theirs), (ours, theirs)
    assert str(ours).startswith(str(theirs)), (str(ours), str(theirs))
    assert name in str(ours)


_DTYPES = ["float32", "float64", "float16", "int64", "int32", "bool"]


def _dtype_call(L, fn, input_dtype, target_dtype, weighted):
    x = L.tensor([0.25, 1.5, -0.75, 2.0]).to(getattr(L, input_dtype))
    t = L.tensor([0.5, 1.0, 0.0, 3.0]).to(getattr(L, target_dtype))
    kw = {"weight": L.tensor([1.0, 2.0, 0.5, 1.0])} if weighted else {}
    if fn == "kl_div":
        kw["reduction"] = "batchmean"
    if fn in ("l1_loss", "poisson_nll_loss") and not (input_dtype.startswith("float")
                                                      or target_dtype.startswith("float")):
        kw["reduction"] = "sum"     # (the mean of integers is an error of its own)
    if x.is_floating_point():
        x.requires_grad_()
    out = getattr(L.nn.functional, fn)(x, t, **kw)
    if out.requires_grad:
        out.backward()
    return out.detach(), x.grad


@pytest.mark.parametrize("fn,weighted", [(n, False) for n in _LOSSES] +
                         [(n, True) for n in ("l1_loss", "huber_loss", "mse_loss")])
@pytest.mark.parametrize("input_dtype", _DTYPES)
@pytest.mark.parametrize("target_dtype", _DTYPES)
def test_dtypes_match_torch(fn, weighted, input_dtype, target_dtype, torch):
    """Result dtype (promoted; huber_loss the input's) and values, or the same exception type
    (with torch's message at the start of ours), for every pair of dtypes."""
    ours = _outcome(lambda: _dtype_call(tg, fn, input_dtype, target_dtype, weighted))
    theirs = _outcome(lambda: _dtype_call(torch, fn, input_dtype, target_dtype, weighted))
    if isinstance(theirs, Exception):
        assert type(ours) is type(theirs), (ours, theirs)
        if not str(theirs).startswith("mean(): could not infer"):
            assert str(ours).startswith(str(theirs)), (str(ours), str(theirs))
        return
    assert not isinstance(ours, Exception), ours
    assert _dtype_name(ours[0].dtype) == _dtype_name(theirs[0].dtype)
    tol = 2e-3 if "float16" in (input_dtype, target_dtype) else 1e-6
    _close(ours[0], theirs[0], rtol=tol, atol=tol)
    if theirs[1] is None:
        assert ours[1] is None
    else:
        assert _dtype_name(ours[1].dtype) == _dtype_name(theirs[1].dtype)
        _close(ours[1], theirs[1], rtol=tol, atol=tol)


@pytest.mark.parametrize("case", ["beta", "delta", "weight", "reduction", "shape", "dtype"])
def test_errors_without_torch(case):
    """The exception types alone (torch's, as compared above), with messages naming the op."""
    a, b = tg.ones(3), tg.zeros(3)
    expected = {
        "beta": (RuntimeError, "smooth_l1_loss", lambda: F.smooth_l1_loss(a, b, beta=-0.5)),
        "delta": (RuntimeError, "huber_loss", lambda: F.huber_loss(a, b, delta=0)),
        "weight": (ValueError, "mse_loss", lambda: F.mse_loss(a, b, weight=tg.ones(1))),
        "reduction": (ValueError, "kl_div", lambda: F.kl_div(a, b, reduction="avg")),
        "shape": (RuntimeError, "poisson_nll_loss", lambda: F.poisson_nll_loss(a, tg.ones(2))),
        "dtype": (NotImplementedError, "smooth_l1_loss",
                  lambda: F.smooth_l1_loss(a.long(), b.long())),
    }[case]
    with pytest.raises(expected[0]) as e:
        _quiet(expected[2])
    assert expected[1] in str(e.value)


# ---- the legacy flags ---------------------------------------------------------------------------
_LEGACY = {
    "l1_loss": lambda L, x, kw: L.nn.functional.l1_loss(x, L.tensor(_Y), **kw),
    "smooth_l1_loss": lambda L, x, kw: L.nn.functional.smooth_l1_loss(x, L.tensor(_Y), beta=0.5,
                                                                      **kw),
    "kl_div": lambda L, x, kw: L.nn.functional.kl_div(x, L.tensor(_P), **kw),
    "poisson_nll_loss": lambda L, x, kw: L.nn.functional.poisson_nll_loss(x, L.tensor(_P), **kw),
    "mse_loss_weight": lambda L, x, kw: L.nn.functional.mse_loss(x, L.tensor(_Y),
                                                                 weight=L.tensor(_W), **kw),
}


@pytest.mark.parametrize("case", sorted(_LEGACY))
@pytest.mark.parametrize("size_average", [None, True, False])
@pytest.mark.parametrize("reduce", [None, True, False])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean", "bogus"])
def test_legacy_flags_match_torch(case, size_average, reduce, reduction, torch):
    """Either flag not None picks the reduction (with torch's deprecation warning) and
    ``reduction`` is otherwise ignored, except kl_div's 'batchmean', which still divides by the
    batch size, as torch. Values, gradients, warnings, or the exception."""
    kw = {"size_average": size_average, "reduce": reduce, "reduction": reduction}

    def run(L):
        x = L.tensor(_X, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = _LEGACY[case](L, x, kw)
            except Exception as e:   # noqa: BLE001 - the exception is the outcome compared
                return e, None, caught
        cot = np.linspace(0.5, 1.5, max(out.numel(), 1)).reshape(tuple(out.shape))
        (out * L.tensor(cot)).sum().backward()
        return out.detach(), x.grad, [(w.category, str(w.message)) for w in caught]
    ours, theirs = run(tg), run(torch)
    if isinstance(theirs[0], Exception):
        assert type(ours[0]) is type(theirs[0]), ours[0]
        assert str(ours[0]).startswith(str(theirs[0]))
        return
    assert not isinstance(ours[0], Exception), ours[0]
    _close(ours[0], theirs[0])
    _close(ours[1], theirs[1])
    assert ours[2] == theirs[2]
    if size_average is not None or reduce is not None:
        expected = "none" if reduce is False else "sum" if size_average is False else "mean"
        assert (UserWarning, _DEPRECATION.format(expected)) in ours[2]


# ---- modules ------------------------------------------------------------------------------------
_MODULES = {
    "L1Loss": ({}, "l1_loss"),
    "L1Loss_sum": ({"reduction": "sum"}, "l1_loss"),
    "SmoothL1Loss": ({"beta": 0.5}, "smooth_l1_loss"),
    "HuberLoss": ({"delta": 2}, "huber_loss"),
    "KLDivLoss": ({"reduction": "batchmean", "log_target": True}, "kl_div"),
    "PoissonNLLLoss": ({"log_input": False, "full": True, "eps": 1e-6}, "poisson_nll_loss"),
    "PoissonNLLLoss_legacy": ({"size_average": False}, "poisson_nll_loss"),
}


@pytest.mark.parametrize("case", sorted(_MODULES))
def test_modules_match_torch(case, torch):
    kw, _ = _MODULES[case]
    cls = case.split("_")[0]

    def run(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = getattr(L.nn, cls)(**kw)
            x = L.tensor(_P, requires_grad=True)
            out = m(x, L.tensor(_P * 2))
        out.sum().backward()
        attrs = {k: getattr(m, k) for k in ("reduction", "beta", "delta", "log_target",
                                              "log_input", "full", "eps") if hasattr(m, k)}
        return repr(m), attrs, out.detach(), x.grad, [str(w.message) for w in caught]
    ours, theirs = run(tg), run(torch)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    _close(ours[2], theirs[2])
    _close(ours[3], theirs[3])
    assert ours[4] == theirs[4]


@pytest.mark.parametrize("case", sorted(_MODULES))
def test_modules_are_their_functional(case):
    kw, fn = _MODULES[case]
    cls = case.split("_")[0]
    m = _quiet(lambda: getattr(tg.nn, cls)(**kw))
    x, t = tg.tensor(_P), tg.tensor(_P * 2)
    fkw = {k: v for k, v in kw.items() if k not in ("size_average",)}
    fkw["reduction"] = m.reduction
    np.testing.assert_array_equal(_np(m(x, t)), _np(_quiet(lambda: getattr(F, fn)(x, t, **fkw))))
    assert cls in tg.nn.__all__ and isinstance(m, tg.nn.Module)


def test_huber_module_checks_delta_type():
    with pytest.raises(TypeError, match="delta must be a float or int"):
        tg.nn.HuberLoss(delta=None)
