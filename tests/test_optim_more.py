"""tapegrad.optim: RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD.

Against torch (skipped without it): parameter and state values after several steps fed the same
gradients (float32 and float64), trajectories of a small model, hyperparameter errors, repr,
state_dict layout, loading torch-shaped state. Without torch: one step against its closed form,
state bookkeeping, state_dict round trips.
"""
import itertools
import math
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import nn, optim
from tapegrad.nn import Parameter

NAMES = ["RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"]

CASES = {
    "RMSprop": [dict(), dict(lr=0.05, alpha=0.9, weight_decay=0.1), dict(momentum=0.9),
                dict(centered=True), dict(centered=True, momentum=0.5, maximize=True, eps=1e-3),
                dict(lr=0.02, weight_decay=0.05, maximize=True, foreach=False)],
    "Adagrad": [dict(), dict(lr=0.05, lr_decay=0.1, weight_decay=0.1,
                             initial_accumulator_value=0.3),
                dict(maximize=True, eps=1e-3, weight_decay=0.01)],
    "Adamax": [dict(), dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1),
               dict(maximize=True, eps=1e-3)],
    "NAdam": [dict(), dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1),
              dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01),
              dict(maximize=True, eps=1e-3, weight_decay=0.02)],
    "RAdam": [dict(), dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1),
              dict(weight_decay=0.1, decoupled_weight_decay=True),
              dict(lr=0.01, betas=(0.5, 0.6), maximize=True, eps=1e-3)],
    "Adadelta": [dict(), dict(lr=0.5, rho=0.8, weight_decay=0.1),
                 dict(maximize=True, eps=1e-3)],
    "Rprop": [dict(), dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2)),
              dict(maximize=True)],
    "ASGD": [dict(), dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1),
             dict(lr=0.02, maximize=True, t0=0)],
}
ALL_CASES = [(name, kw) for name in NAMES for kw in CASES[name]]


def _case_id(case):
    name, kw = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items())


def _tol(dtype):
    return 2e-6 if dtype == np.float32 else 1e-13


def _close(ours, theirs, rtol):
    """Within ``rtol`` relative to the tensor's largest magnitude (torch's CPU kernels fuse some
    multiply-adds and its sqrt may differ in the last bit, so exact equality is not expected)."""
    t = np.asarray(theirs)
    assert ours.dtype == t.dtype
    np.testing.assert_allclose(ours, t, rtol=rtol, atol=rtol * max(np.abs(t).max(), 1e-30))


def _same_grads(torch, name, kwargs, dtype, steps=8, seed=5):
    """Step a torch and a tapegrad optimizer with identical gradients; compare parameters and
    every state entry after each step. Returns both optimizers and parameter lists."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in [(6, 4), (6,), (40,)]]
    tps = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in init]
    ops = [Parameter(tapegrad.tensor(a.copy())) for a in init]
    topt = getattr(torch.optim, name)(tps, **kwargs)
    oopt = getattr(optim, name)(ops, **kwargs)
    rtol = _tol(dtype)
    for _ in range(steps):
        for tp, op in zip(tps, ops):
            g = rng.standard_normal(tp.shape).astype(dtype)
            tp.grad = torch.from_numpy(g.copy())
            op.grad = tapegrad.tensor(g.copy())
        topt.step()
        oopt.step()
        for tp, op in zip(tps, ops):
            _close(op._data, tp.detach().numpy(), rtol)
            tstate, ostate = topt.state[tp], oopt.state[op]
            assert list(ostate) == list(tstate)
            for key, tv in tstate.items():
                ov = ostate[key]
                assert ov.dtype.name == str(tv.dtype).replace("torch.", "")
                assert ov.shape == tuple(tv.shape)
                _close(ov._data, tv.numpy(), rtol)
    return topt, oopt, tps, ops


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_update_arithmetic_matches_torch(torch, case, dtype):
    name, kwargs = case
    _same_grads(torch, name, kwargs, dtype)


def test_many_steps_stay_close_to_torch(torch):
    """Long runs: the rounding differences do not grow (RAdam crosses its rho > 5 switch, ASGD
    starts averaging at t0, NAdam's float32 mu_product keeps being rounded)."""
    for name, kw in [("RAdam", dict(lr=0.01)), ("ASGD", dict(t0=5, lambd=0.01)),
                     ("NAdam", dict(lr=0.01)), ("Rprop", dict()),
                     ("RMSprop", dict(centered=True, momentum=0.9))]:
        _same_grads(torch, name, kw, np.float32, steps=40)


def _models(torch, dtype):
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s).astype(dtype) * 0.5 for s in [(8, 5), (8,), (3, 8), (3,)]]
    x = rng.standard_normal((16, 5)).astype(dtype)
    y = rng.integers(0, 3, 16)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    om = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    if dtype == np.float64:
        tm.double()
        om.double()
    with torch.no_grad():
        for tp, op, a in zip(tm.parameters(), om.parameters(), params, strict=True):
            tp.copy_(torch.from_numpy(a))
            op._data[...] = a
    return tm, om, x, y


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_model_trajectory_matches_torch(torch, name, dtype):
    tm, om, x, y = _models(torch, dtype)
    kw = CASES[name][1]
    topt = getattr(torch.optim, name)(tm.parameters(), **kw)
    oopt = getattr(optim, name)(om.parameters(), **kw)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    ox, oy = tapegrad.tensor(x), tapegrad.tensor(y)
    rtol = 1e-5 if dtype == np.float32 else 1e-11
    for _ in range(6):
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tm(tx), ty).backward()
        topt.step()
        oopt.zero_grad()
        nn.functional.cross_entropy(om(ox), oy).backward()
        oopt.step()
        for op, tp in zip(om.parameters(), tm.parameters()):
            _close(op._data, tp.detach().numpy(), rtol)


def test_param_groups_with_own_options_match_torch(torch):
    rng = np.random.default_rng(3)
    a0, b0 = rng.standard_normal(5).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    for name, group_kw in [("RMSprop", dict(lr=0.1, centered=True)),
                           ("Adagrad", dict(lr_decay=0.5)), ("NAdam", dict(betas=(0.5, 0.6))),
                           ("Rprop", dict(etas=(0.2, 2.0))), ("ASGD", dict(t0=1))]:
        res = []
        for lib in (torch, tapegrad):
            a, b = lib.nn.Parameter(lib.tensor(a0.copy())), lib.nn.Parameter(lib.tensor(b0))
            opt = getattr(lib.optim, name)([{"params": [a]}, {"params": [b], **group_kw}])
            for i in range(4):
                a.grad = lib.tensor(np.sin(a0 * (i + 1)))
                b.grad = None if i == 1 else lib.tensor(np.cos(b0 * (i + 1)))  # b skips a step
                opt.step()
            res.append((a.detach().numpy().copy() if lib is torch else a._data.copy(),
                        b.detach().numpy().copy() if lib is torch else b._data.copy()))
        for t, o in zip(*res):
            _close(o, t, 2e-6)


# ---- errors -------------------------------------------------------------------------------------

INVALID = [
    ("RMSprop", dict(lr=-1)), ("RMSprop", dict(eps=-1)), ("RMSprop", dict(momentum=-1)),
    ("RMSprop", dict(weight_decay=-1)), ("RMSprop", dict(alpha=-1)),
    ("RMSprop", dict(lr=-1, eps=-1, alpha=-1)),
    ("Adagrad", dict(lr=-1)), ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(weight_decay=-1)),
    ("Adagrad", dict(initial_accumulator_value=-1)), ("Adagrad", dict(eps=-1)),
    ("Adagrad", dict(lr_decay=-1, eps=-1)),
    ("Adamax", dict(lr=-1)), ("Adamax", dict(eps=-1)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, 1.0))), ("Adamax", dict(betas=(-0.1, 0.9))),
    ("Adamax", dict(weight_decay=-1)),
    ("NAdam", dict(lr=-1)), ("NAdam", dict(eps=-1)), ("NAdam", dict(betas=(1.0, 0.9))),
    ("NAdam", dict(betas=(0.9, 1.5))), ("NAdam", dict(weight_decay=-1)),
    ("NAdam", dict(momentum_decay=-1)),
    ("RAdam", dict(lr=-1)), ("RAdam", dict(eps=-1)), ("RAdam", dict(betas=(1.0, 0.9))),
    ("RAdam", dict(betas=(0.9, 1.0))), ("RAdam", dict(weight_decay=-1)),
    ("Adadelta", dict(lr=-1)), ("Adadelta", dict(rho=-0.1)), ("Adadelta", dict(rho=1.1)),
    ("Adadelta", dict(eps=-1)), ("Adadelta", dict(weight_decay=-1)),
    ("Rprop", dict(lr=-1)), ("Rprop", dict(etas=(1.1, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))),
    ("Rprop", dict(etas=(0, 1.2))),
    ("ASGD", dict(lr=-1)), ("ASGD", dict(weight_decay=-1)),
]


@pytest.mark.parametrize("name,kwargs", INVALID, ids=[f"{n}-{k}" for n, k in INVALID])
def test_invalid_hyperparameters_match_torch(torch, name, kwargs):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([Parameter(tapegrad.ones(1))], **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name,kwargs", [
    ("RMSprop", dict(alpha=1.5)), ("Adadelta", dict(rho=0.0)), ("Adadelta", dict(rho=1.0)),
    ("Rprop", dict(step_sizes=(1, 0.5))), ("ASGD", dict(lambd=-1, alpha=-1, t0=-1)),
    ("Adagrad", dict(fused=True)), ("Adagrad", dict(fused=False, foreach=True)),
])
def test_accepted_edge_values_match_torch(torch, name, kwargs):
    getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kwargs)
    getattr(optim, name)([Parameter(tapegrad.ones(1))], **kwargs)


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the exception type and text are what is compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("name", NAMES)
def test_flag_errors_and_tensor_lr_match_torch(torch, name):
    """capturable=True fails at step on the CPU, differentiable=True fails on a leaf at step;
    a Tensor lr must have one element and stays a Tensor in the group."""
    variants = [dict(differentiable=True), dict(lr="tensor"), dict(lr="tensor2")]
    if name != "Adagrad":
        variants.append(dict(capturable=True))
    else:
        variants += [dict(fused=True, foreach=True), dict(fused=True, differentiable=True)]
    for extra in variants:
        outs = []
        for lib in (torch, tapegrad):
            kw = dict(extra)
            if kw.get("lr") == "tensor":
                kw["lr"] = lib.tensor(0.02)
            elif kw.get("lr") == "tensor2":
                kw["lr"] = lib.tensor([0.02, 0.03])
            p = lib.nn.Parameter(lib.ones(3))

            def run():
                opt = getattr(lib.optim, name)([p], **kw)
                p.grad = lib.ones(3)
                opt.step()
                return repr(opt), p.tolist()
            outs.append(_outcome(run))
        assert outs[0] == outs[1], extra


def test_repr_matches_torch(torch):
    for name in NAMES:
        for kw in CASES[name]:
            ours = getattr(optim, name)([Parameter(tapegrad.ones(1))], **kw)
            theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kw)
            assert repr(ours) == repr(theirs)
            assert ours.defaults == theirs.defaults
            assert list(ours.defaults) == list(theirs.defaults)


# ---- state_dict ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_state_dict_layout_matches_torch(torch, name):
    kw = CASES[name][-1]
    topt, oopt, _, _ = _same_grads(torch, name, kw, np.float32, steps=2)
    tsd, osd = topt.state_dict(), oopt.state_dict()
    assert osd["param_groups"] == tsd["param_groups"]
    assert list(osd["state"]) == list(tsd["state"])
    for k, tstate in tsd["state"].items():
        assert list(osd["state"][k]) == list(tstate)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_loading_torch_state_continues_like_torch(torch, name, dtype):
    """A torch state_dict, converted to tapegrad tensors, loads into a tapegrad optimizer over
    the same parameters; both then take the same steps (state dtypes are cast as torch casts
    them: to the parameter's dtype, except 'step')."""
    kw = CASES[name][1]
    topt, _, tps, _ = _same_grads(torch, name, kw, dtype, steps=3)
    sd = topt.state_dict()
    conv = {"param_groups": sd["param_groups"],
            "state": {k: {key: tapegrad.tensor(v.numpy()) for key, v in st.items()}
                      for k, st in sd["state"].items()}}
    ops = [Parameter(tapegrad.tensor(tp.detach().numpy().copy())) for tp in tps]
    oopt = getattr(optim, name)(ops, **CASES[name][0])
    oopt.load_state_dict(conv)
    topt.load_state_dict(sd)   # torch casts on load too
    rng = np.random.default_rng(11)
    for _ in range(3):
        for tp, op in zip(tps, ops):
            g = rng.standard_normal(tp.shape).astype(dtype)
            tp.grad = torch.from_numpy(g.copy())
            op.grad = tapegrad.tensor(g.copy())
        topt.step()
        oopt.step()
    for tp, op in zip(tps, ops):
        _close(op._data, tp.detach().numpy(), _tol(dtype) * 5)
        for key, tv in topt.state[tp].items():
            assert oopt.state[op][key].dtype.name == str(tv.dtype).replace("torch.", "")


def _grads(shapes, i):
    return [tapegrad.tensor(np.sin(np.arange(np.prod(s), dtype=np.float32).reshape(s) + i))
            for s in shapes]


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_resumes_identically(name):
    kw = CASES[name][1]
    shapes = [(3, 2), (4,)]

    def make():
        ps = [Parameter(tapegrad.tensor(np.cos(np.arange(np.prod(s), dtype=np.float32))
                                        .reshape(s))) for s in shapes]
        return ps, getattr(optim, name)(ps, **kw)

    def steps(ps, opt, start, n):
        for i in range(start, start + n):
            for p, g in zip(ps, _grads(shapes, i)):
                p.grad = g
            opt.step()

    ref_ps, ref_opt = make()
    steps(ref_ps, ref_opt, 0, 6)
    ps, opt = make()
    steps(ps, opt, 0, 3)
    saved = opt.state_dict()
    ps2, opt2 = make()
    for p2, p in zip(ps2, ps):
        p2._data[...] = p._data
    opt2.load_state_dict(saved)
    steps(ps2, opt2, 3, 3)
    for a, b in zip(ps2, ref_ps):
        assert np.array_equal(a._data, b._data)
    # the loaded state is a copy
    k = next(iter(opt.state[ps[0]]))
    assert opt2.state[ps2[0]][k] is not opt.state[ps[0]][k]


# ---- closed forms of one step (no torch needed) --------------------------------------------------

def _one_step(name, p0, g, **kw):
    p = Parameter(tapegrad.tensor(np.array(p0, dtype=np.float64)))
    opt = getattr(optim, name)([p], **kw)
    p.grad = tapegrad.tensor(np.array(g, dtype=np.float64))
    opt.step()
    return p._data, opt


P0 = [0.5, -1.0, 2.0, 0.0]
G = [0.3, -0.2, 0.0, 1.5]


def test_rmsprop_first_step_closed_form():
    lr, alpha, eps = 0.01, 0.9, 1e-8
    g = np.array(G)
    p, opt = _one_step("RMSprop", P0, G, lr=lr, alpha=alpha, eps=eps)
    np.testing.assert_allclose(p, P0 - lr * g / (np.sqrt((1 - alpha) * g * g) + eps), rtol=1e-14)
    # centered: v - ga**2 = (1-a) g^2 - (1-a)^2 g^2 = a (1-a) g^2
    p, opt = _one_step("RMSprop", P0, G, lr=lr, alpha=alpha, eps=eps, centered=True)
    np.testing.assert_allclose(p, P0 - lr * g / (np.sqrt(alpha * (1 - alpha) * g * g) + eps),
                               rtol=1e-12)
    assert list(opt.state[opt.param_groups[0]["params"][0]]) == ["step", "square_avg",
                                                                 "grad_avg"]


def test_adagrad_first_steps_closed_form():
    g = np.array(G)
    p, _ = _one_step("Adagrad", P0, G, lr=0.1, initial_accumulator_value=0.5, eps=0.0)
    np.testing.assert_allclose(p, P0 - 0.1 * g / np.sqrt(0.5 + g * g), rtol=1e-14)
    # lr_decay: the second step uses lr / (1 + lr_decay)
    q = Parameter(tapegrad.zeros(1, dtype=tapegrad.float64))
    opt = optim.Adagrad([q], lr=1.0, lr_decay=1.0, eps=0.0)
    for _ in range(2):
        q.grad = tapegrad.ones(1, dtype=tapegrad.float64)
        opt.step()
    np.testing.assert_allclose(q._data, [-1.0 - 0.5 / math.sqrt(2)], rtol=1e-15)


def test_adamax_and_radam_and_rprop_first_step_closed_form():
    g = np.array(G)
    p, _ = _one_step("Adamax", P0, G, lr=0.1, eps=1e-8)
    np.testing.assert_allclose(p, P0 - 0.1 * g / (np.abs(g) + 1e-8), rtol=1e-14)
    p, _ = _one_step("RAdam", P0, G, lr=0.1)          # rho_1 <= 5: plain momentum step
    np.testing.assert_allclose(p, P0 - 0.1 * g, rtol=1e-14)
    p, _ = _one_step("Rprop", P0, G, lr=0.1)          # first step: lr * sign(g)
    np.testing.assert_allclose(p, P0 - 0.1 * np.sign(g), rtol=0)


def test_nadam_first_step_closed_form():
    g = np.array(G)
    lr, b1, eps, psi = 0.1, 0.9, 1e-8, 4e-3
    mu1 = b1 * (1 - 0.5 * 0.96 ** psi)
    mu2 = b1 * (1 - 0.5 * 0.96 ** (2 * psi))
    mu1_f32 = float(np.float32(mu1))            # mu_product is a float32 tensor
    denom = np.sqrt(g * g) + eps                # v_hat = (1 - beta2) g^2 / (1 - beta2)
    expect = (np.array(P0) - lr * (1 - mu1) / (1 - mu1_f32) * g / denom
              - lr * mu2 / (1 - mu1_f32 * mu2) * (1 - b1) * g / denom)
    p, opt = _one_step("NAdam", P0, G, lr=lr)
    np.testing.assert_allclose(p, expect, rtol=1e-12)
    st = opt.state[opt.param_groups[0]["params"][0]]
    assert st["mu_product"]._data.dtype == np.float32 and st["mu_product"].item() == mu1_f32


def test_adadelta_and_asgd_first_step_closed_form():
    g = np.array(G)
    rho, eps = 0.9, 1e-6
    p, _ = _one_step("Adadelta", P0, G, lr=1.0, rho=rho, eps=eps)
    delta = np.sqrt(eps) / np.sqrt((1 - rho) * g * g + eps) * g
    np.testing.assert_allclose(p, P0 - delta, rtol=1e-13)
    lr, lambd = 0.1, 0.01
    p, opt = _one_step("ASGD", P0, G, lr=lr, lambd=lambd, alpha=0.75, t0=1e6)
    eta0 = float(np.float32(lr))                 # eta is stored in a float32 tensor
    np.testing.assert_allclose(p, np.array(P0) * (1 - lambd * eta0) - eta0 * g, rtol=1e-14)
    st = opt.state[opt.param_groups[0]["params"][0]]
    assert np.array_equal(st["ax"]._data, p)    # mu == 1: ax copies the parameter
    np.testing.assert_allclose(st["eta"].item(), lr / (1 + lambd * lr) ** 0.75, rtol=1e-7)
    assert st["mu"].item() == 1.0


@pytest.mark.parametrize("name", NAMES)
def test_maximize_is_minimizing_the_negated_gradient(name):
    kw = dict(CASES[name][1])
    kw.pop("weight_decay", None)
    a, b = Parameter(tapegrad.tensor(P0)), Parameter(tapegrad.tensor(P0))
    oa = getattr(optim, name)([a], **kw)
    ob = getattr(optim, name)([b], maximize=True, **kw)
    for i in range(3):
        g = np.sin(np.arange(4, dtype=np.float32) + i)
        a.grad, b.grad = tapegrad.tensor(g), tapegrad.tensor(-g)
        oa.step()
        ob.step()
    assert np.array_equal(a._data, b._data)


# ---- bookkeeping --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_float32_stays_float32_and_versions_bump(name):
    p = Parameter(tapegrad.ones(3))
    opt = getattr(optim, name)([p])
    out = (p * p).sum()
    for _ in range(2):
        p.grad = tapegrad.tensor([0.5, -1.0, 2.0])
        opt.step()
    assert p._data.dtype == np.float32
    for st in opt.state[p].values():
        assert st._data.dtype == np.float32
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_step_state_follows_default_dtype():
    old = tapegrad.get_default_dtype()
    tapegrad.set_default_dtype(tapegrad.float64)
    try:
        p = Parameter(tapegrad.ones(2, dtype=tapegrad.float32))
        opt = optim.ASGD([p])
        p.grad = tapegrad.ones(2, dtype=tapegrad.float32)
        opt.step()
        st = opt.state[p]
        assert [st[k]._data.dtype for k in ("step", "eta", "mu", "ax")] == \
            [np.float64, np.float64, np.float64, np.float32]
    finally:
        tapegrad.set_default_dtype(old)


def test_params_without_grad_are_skipped_and_closure_runs():
    a, b = Parameter(tapegrad.ones(2)), Parameter(tapegrad.ones(2))
    for name in NAMES:
        opt = getattr(optim, name)([a, b])
        a.grad, b.grad = tapegrad.ones(2), None
        before = b._data.copy()
        opt.step()
        assert np.array_equal(b._data, before)
        if name == "Adagrad":      # Adagrad builds every state at construction, as torch
            assert opt.state[b]["step"].item() == 0.0
        else:
            assert b not in opt.state
        assert opt.state[a]["step"].item() == 1.0

        def closure():
            opt.zero_grad()
            loss = (a * a).sum()
            loss.backward()
            return loss
        expected = float((a._data.astype(np.float64) ** 2).sum())   # the loss before the step
        with tapegrad.no_grad():
            assert opt.step(closure).item() == pytest.approx(expected, rel=1e-6)


def test_adagrad_state_at_construction_and_added_groups():
    a, b = Parameter(tapegrad.ones(2)), Parameter(tapegrad.ones(3))
    opt = optim.Adagrad([a], initial_accumulator_value=0.25)
    assert opt.state[a]["sum"].tolist() == [0.25, 0.25]
    opt.add_param_group({"params": [b], "initial_accumulator_value": 0.5})
    assert b not in opt.state
    b.grad = tapegrad.ones(3)
    opt.step()
    assert opt.state[b]["sum"].tolist() == [1.5, 1.5, 1.5]


def test_rprop_step_sizes_clamp_and_sign_flip():
    p = Parameter(tapegrad.zeros(3, dtype=tapegrad.float64))
    opt = optim.Rprop([p], lr=0.1, etas=(0.5, 2.0), step_sizes=(0.04, 0.3))
    seq = [[1.0, 1.0, 1.0], [1.0, -1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    for g in seq:
        p.grad = tapegrad.tensor(g, dtype=tapegrad.float64)
        opt.step()
    st = opt.state[p]
    # elem 0: 0.1 -> 0.2 -> 0.3 (clamped) -> 0.3 ; elem 1: 0.1 -> 0.05 (flip, no move) -> 0.05
    # (prev was zeroed) -> 0.1 ; elem 2: 0.1 -> 0.1 (g == 0) -> 0.1 (prev 0) -> 0.2
    np.testing.assert_allclose(st["step_size"]._data, [0.3, 0.1, 0.2])
    np.testing.assert_allclose(p._data, [-(0.1 + 0.2 + 0.3 + 0.3), -(0.1 + 0.05 + 0.1),
                                         -(0.1 + 0.1 + 0.2)])
    np.testing.assert_allclose(st["prev"]._data, [1.0, 1.0, 1.0])


def test_flags_are_accepted_and_recorded():
    p = Parameter(tapegrad.ones(1))
    for name in NAMES:
        opt = getattr(optim, name)([p], foreach=True, maximize=True)
        g = opt.param_groups[0]
        assert g["foreach"] is True and g["maximize"] is True
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        optim.Adagrad([p], fused=True, foreach=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optim.Adagrad([p], fused=True)


@pytest.mark.parametrize("name,kwargs", list(itertools.product(
    ["RMSprop", "Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"],
    [dict(capturable=True)])))
def test_capturable_is_rejected_at_step(name, kwargs):
    p = Parameter(tapegrad.ones(1))
    opt = getattr(optim, name)([p], **kwargs)       # accepted at construction, as torch
    p.grad = tapegrad.ones(1)
    with pytest.raises(AssertionError, match="^If capturable=True"):
        opt.step()


def test_optimizers_train_a_model():
    tapegrad.manual_seed(0)
    x = tapegrad.randn(64, 2)
    y = (x[:, 0] * x[:, 1] > 0).long()
    for name, kw in [("RMSprop", dict(lr=0.01)), ("Adagrad", dict(lr=0.1)),
                     ("Adamax", dict(lr=0.05)), ("NAdam", dict(lr=0.02)),
                     ("RAdam", dict(lr=0.1)), ("Adadelta", dict(lr=1.0)),
                     ("Rprop", dict(lr=0.01)), ("ASGD", dict(lr=0.3))]:
        tapegrad.manual_seed(1)
        model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
        opt = getattr(optim, name)(model.parameters(), **kw)
        first = None
        for _ in range(60):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
        assert loss.item() < 0.9 * first, name


# ---- LBFGS --------------------------------------------------------------------------------------

def _rosen(x):
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


def _lbfgs_run(lib, x0, kw, steps, problem):
    x = lib.nn.Parameter(lib.tensor(x0.copy()))
    opt = lib.optim.LBFGS([x], **kw)
    n = len(x0)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n)).astype(x0.dtype)
    A, b = lib.tensor(a @ a.T / n + np.eye(n, dtype=x0.dtype)), lib.tensor(x0[::-1].copy())

    def closure():
        opt.zero_grad()
        loss = _rosen(x) if problem == "rosen" else 0.5 * (x * (A @ x)).sum() - (b * x).sum()
        loss.backward()
        return loss

    rows = []
    for _ in range(steps):
        loss = opt.step(closure)
        st = opt.state[x]
        rows.append((float(loss.detach()), np.array(x.detach().tolist()), st["func_evals"],
                     st["n_iter"]))
    return rows, opt


@pytest.mark.parametrize("kw", [dict(), dict(line_search_fn="strong_wolfe"),
                                dict(lr=0.1, history_size=3, max_iter=7),
                                dict(line_search_fn="strong_wolfe", history_size=2, max_iter=5)],
                         ids=["plain", "wolfe", "small-history", "wolfe-history2"])
@pytest.mark.parametrize("problem", ["rosen", "quadratic"])
def test_lbfgs_matches_torch_float64(torch, kw, problem):
    x0 = np.random.default_rng(0).standard_normal(6)
    theirs, _ = _lbfgs_run(torch, x0, kw, 4, problem)
    ours, _ = _lbfgs_run(tapegrad, x0, kw, 4, problem)
    for t, o in zip(theirs, ours):
        assert o[2:] == t[2:]                               # evaluations and iterations
        np.testing.assert_allclose(o[1], t[1], rtol=1e-9, atol=1e-9)
        assert o[0] == pytest.approx(t[0], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(line_search_fn="strong_wolfe")])
def test_lbfgs_matches_torch_float32(torch, kw):
    """float32: torch's dot products (MKL) and the objective itself round differently, so only
    float32-level agreement on a well-conditioned problem, and only before convergence (there
    the line search compares losses equal up to rounding, and the two may branch apart)."""
    x0 = np.random.default_rng(0).standard_normal(6).astype(np.float32)
    theirs, _ = _lbfgs_run(torch, x0, dict(kw, max_iter=3), 2, "quadratic")
    ours, _ = _lbfgs_run(tapegrad, x0, dict(kw, max_iter=3), 2, "quadratic")
    for t, o in zip(theirs, ours):
        assert o[2:] == t[2:]
        np.testing.assert_allclose(o[1], t[1], rtol=1e-4, atol=1e-5)


def test_lbfgs_state_dict_layout_and_repr_match_torch(torch):
    x0 = np.array([1.5, -0.5, 2.0, 0.3])
    _, topt = _lbfgs_run(torch, x0, dict(history_size=4, max_iter=6), 1, "rosen")
    _, oopt = _lbfgs_run(tapegrad, x0, dict(history_size=4, max_iter=6), 1, "rosen")
    tsd, osd = topt.state_dict(), oopt.state_dict()
    assert osd["param_groups"] == tsd["param_groups"] and repr(oopt) == repr(topt)
    tst, ost = tsd["state"][0], osd["state"][0]
    assert list(ost) == list(tst)
    for k, tv in tst.items():
        ov = ost[k]
        if isinstance(tv, list):
            assert len(ov) == len(tv)
            assert [v is None for v in ov] == [v is None for v in tv]
        elif isinstance(tv, torch.Tensor):
            assert isinstance(ov, tapegrad.Tensor) and ov.shape == tuple(tv.shape)
        else:
            assert type(ov) is type(tv)


@pytest.mark.parametrize("make", [
    lambda L, p: L.optim.LBFGS([p], lr=-1),
    lambda L, p: L.optim.LBFGS([p], lr=L.tensor([1.0, 2.0])),
    lambda L, p: L.optim.LBFGS([{"params": [p]}, {"params": [L.nn.Parameter(L.ones(1))]}]),
    lambda L, p: L.optim.LBFGS([p]).step(),
    lambda L, p: L.optim.LBFGS([p], line_search_fn="foo").step(
        lambda: (p * p).sum().backward() or (p * p).sum()),
    lambda L, p: L.optim.LBFGS([p], max_iter=0, history_size=0).defaults,
])
def test_lbfgs_errors_match_torch(torch, make):
    got = []
    for L in (torch, tapegrad):
        p = L.nn.Parameter(L.ones(2))
        got.append(_outcome(lambda: make(L, p)))
    assert got[0][0] == got[1][0]
    if got[0][0] != "TypeError":                 # the missing-argument text names the method
        assert got[0] == got[1]


def test_lbfgs_solves_a_quadratic_and_counts_evaluations():
    A = np.array([[3.0, 0.5], [0.5, 1.0]])
    b = np.array([1.0, -2.0])
    x = Parameter(tapegrad.zeros(2, dtype=tapegrad.float64))
    At, bt = tapegrad.tensor(A), tapegrad.tensor(b)
    opt = optim.LBFGS([x], line_search_fn="strong_wolfe", tolerance_change=1e-15,
                      tolerance_grad=1e-12)
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = 0.5 * (x * (At @ x)).sum() - (bt * x).sum()
        loss.backward()
        return loss

    first = opt.step(closure)
    assert first.item() == 0.0                         # the loss at the starting point
    np.testing.assert_allclose(x._data, np.linalg.solve(A, b), rtol=1e-8)
    assert opt.state[x]["func_evals"] == len(calls)
    # at the optimum the gradient test returns at once, after one evaluation
    opt.step(closure)
    assert opt.state[x]["func_evals"] == len(calls)


def test_lbfgs_state_dict_round_trip_resumes_identically():
    x0 = np.array([1.5, -0.5, 2.0, 0.3], dtype=np.float64)

    def make():
        x = Parameter(tapegrad.tensor(x0.copy()))
        opt = optim.LBFGS([x], max_iter=3, history_size=5)

        def closure():
            opt.zero_grad()
            loss = _rosen(x)
            loss.backward()
            return loss
        return x, opt, closure

    x, opt, closure = make()
    for _ in range(6):
        opt.step(closure)
    x1, opt1, closure1 = make()
    for _ in range(3):
        opt1.step(closure1)
    x2, opt2, closure2 = make()
    x2._data[...] = x1._data
    opt2.load_state_dict(opt1.state_dict())
    for _ in range(3):
        opt2.step(closure2)
    np.testing.assert_array_equal(x2._data, x._data)
