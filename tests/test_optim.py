"""tapegrad.optim: SGD, Adam and AdamW trajectories against torch, and the Optimizer API."""
import itertools

import numpy as np
import pytest

import tapegrad
from tapegrad import nn, optim
from tapegrad.nn import Parameter


def _data(dtype, seed=0):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s).astype(dtype) * 0.5 for s in [(8, 5), (8,), (3, 8), (3,)]]
    x = rng.standard_normal((16, 5)).astype(dtype)
    y = rng.integers(0, 3, 16)
    return params, x, y


def _models(torch, dtype):
    """The same MLP in torch and tapegrad, with identical starting weights."""
    params, x, y = _data(dtype)
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


def _assert_close(ours, theirs, rtol):
    """Within ``rtol`` relative to each tensor's scale (elements near 0 are compared against
    the tensor's largest magnitude, not their own)."""
    for op, tp in zip(ours, theirs, strict=True):
        t = tp.detach().numpy()
        assert op._data.dtype == t.dtype
        np.testing.assert_allclose(op._data, t, rtol=rtol, atol=rtol * np.abs(t).max())


def _trajectory(torch, name, kwargs, dtype, steps=5):
    """Run ``steps`` steps of the same model/data/optimizer in both libraries, comparing the
    parameters after every step."""
    tm, om, x, y = _models(torch, dtype)
    topt = getattr(torch.optim, name)(tm.parameters(), **kwargs)
    oopt = getattr(optim, name)(om.parameters(), **kwargs)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    ox, oy = tapegrad.tensor(x), tapegrad.tensor(y)
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    for _ in range(steps):
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tm(tx), ty).backward()
        topt.step()
        oopt.zero_grad()
        nn.functional.cross_entropy(om(ox), oy).backward()
        oopt.step()
        _assert_close(list(om.parameters()), list(tm.parameters()), rtol)
    return topt, oopt


def _same_grads_trajectory(torch, name, kwargs, dtype, steps=5):
    """Feed both optimizers identical gradients, so only the update arithmetic is compared."""
    rng = np.random.default_rng(5)
    init = [rng.standard_normal(s).astype(dtype) for s in [(6, 4), (6,)]]
    tps = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in init]
    ops = [Parameter(tapegrad.tensor(a.copy())) for a in init]
    topt = getattr(torch.optim, name)(tps, **kwargs)
    oopt = getattr(optim, name)(ops, **kwargs)
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    for _ in range(steps):
        for tp, op in zip(tps, ops):
            g = rng.standard_normal(tp.shape).astype(dtype)
            tp.grad = torch.from_numpy(g.copy())
            op.grad = tapegrad.tensor(g.copy())
        topt.step()
        oopt.step()
        _assert_close(ops, tps, rtol)
        for tp, op in zip(tps, ops):
            for key, tv in topt.state[tp].items():
                ov = oopt.state[op][key]
                if isinstance(tv, torch.Tensor):
                    assert ov.dtype.name == str(tv.dtype).replace("torch.", "")
                    np.testing.assert_allclose(ov._data, tv.numpy(), rtol=rtol,
                                               atol=rtol * max(np.abs(tv.numpy()).max(), 1e-30))


SGD_CASES = [
    dict(lr=0.1, momentum=m, dampening=d, weight_decay=wd, nesterov=n, maximize=mx)
    for m, d, wd, n, mx in itertools.product([0.0, 0.9], [0.0, 0.3], [0.0, 0.05],
                                             [False, True], [False, True])
    if not (n and (m == 0 or d != 0))
]
ADAM_CASES = [
    dict(lr=0.01, weight_decay=wd, amsgrad=a, maximize=mx)
    for wd, a, mx in itertools.product([0.0, 0.1], [False, True], [False, True])
] + [dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6)]
ADAMW_CASES = [dict(lr=0.01), dict(lr=0.01, weight_decay=0.3, amsgrad=True),
               dict(lr=0.02, weight_decay=0.0, maximize=True)]
ALL_CASES = ([("SGD", kw) for kw in SGD_CASES] + [("Adam", kw) for kw in ADAM_CASES]
             + [("AdamW", kw) for kw in ADAMW_CASES])


def _case_id(case):
    name, kw = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_trajectory_matches_torch(case, dtype):
    torch = pytest.importorskip("torch")
    name, kwargs = case
    _trajectory(torch, name, kwargs, dtype)


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_update_arithmetic_matches_torch(case, dtype):
    torch = pytest.importorskip("torch")
    name, kwargs = case
    _same_grads_trajectory(torch, name, kwargs, dtype)


def test_float32_stays_float32():
    p = Parameter(tapegrad.ones(3))
    for opt in (optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.1),
                optim.Adam([p], lr=0.1, weight_decay=0.1, amsgrad=True), optim.AdamW([p])):
        for _ in range(2):
            p.grad = tapegrad.ones(3)
            opt.step()
        assert p._data.dtype == np.float32
        for st in opt.state[p].values():
            if isinstance(st, tapegrad.Tensor) and st.ndim:
                assert st._data.dtype == np.float32


# ---- validation ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=-1)), ("SGD", dict(lr=0.1, momentum=-0.5)),
    ("SGD", dict(lr=0.1, weight_decay=-1e-3)), ("SGD", dict(lr=0.1, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)),
    ("Adam", dict(lr=-1)), ("Adam", dict(eps=-1e-8)), ("Adam", dict(betas=(1.0, 0.999))),
    ("Adam", dict(betas=(0.9, -0.1))), ("Adam", dict(weight_decay=-1.0)),
    ("AdamW", dict(lr=-0.5)), ("AdamW", dict(betas=(0.9, 1.5))),
])
def test_invalid_arguments_match_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(optim, name)([Parameter(tapegrad.ones(1))], **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_invalid_learning_rate_message():
    with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
        optim.SGD([Parameter(tapegrad.ones(1))], lr=-1)


def test_bad_params():
    p = Parameter(tapegrad.ones(2))
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


# ---- API: groups, state, state_dict -------------------------------------------------------------------

def test_param_groups_and_per_group_options():
    a, b = Parameter(tapegrad.ones(2)), Parameter(tapegrad.ones(2))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.0)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert len(opt.param_groups[1]["params"]) == 1 and opt.param_groups[1]["params"][0] is b
    a.grad, b.grad = tapegrad.ones(2), tapegrad.ones(2)
    opt.step()
    np.testing.assert_allclose(a._data, 0.9)
    np.testing.assert_allclose(b._data, 0.5)
    opt.param_groups[0]["lr"] = 1.0  # schedulers change options in place
    opt.step()
    np.testing.assert_allclose(a._data, -0.1, atol=1e-7)
    c = Parameter(tapegrad.ones(1))
    opt.add_param_group({"params": [c], "momentum": 0.9})
    g = opt.param_groups[2]
    assert g["lr"] == 0.1 and g["momentum"] == 0.9 and g["nesterov"] is False
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_params_without_grad_are_skipped():
    a, b = Parameter(tapegrad.ones(2)), Parameter(tapegrad.ones(2))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = tapegrad.ones(2)
    opt.step()
    assert b._data.tolist() == [1.0, 1.0] and b not in opt.state
    assert len(opt.state[a]) == 3 and opt.state[a]["step"].item() == 1.0


def test_zero_grad():
    p = Parameter(tapegrad.ones(2))
    opt = optim.SGD([p], lr=0.1)
    p.grad = tapegrad.ones(2)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_closure_returns_loss():
    p = Parameter(tapegrad.tensor([2.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with tapegrad.no_grad():
        loss = opt.step(closure)  # the closure runs with grad enabled
    assert loss.item() == 4.0
    assert p._data.tolist() == [1.0]


def test_step_bumps_version_like_torch():
    p = Parameter(tapegrad.ones(2))
    out = (p * p).sum()
    opt = optim.SGD([p], lr=0.1)
    out.backward(retain_graph=True)
    v = p._version
    opt.step()
    assert p._version > v
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_repr_matches_torch():
    torch = pytest.importorskip("torch")
    for name, kw in [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", {}), ("AdamW", dict(lr=3e-4))]:
        ours = getattr(optim, name)([Parameter(tapegrad.ones(1))], **kw)
        theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kw)
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("AdamW", dict(lr=0.01))])
def test_state_dict_layout_matches_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    topt, oopt = _trajectory(torch, name, kwargs, np.float32, steps=2)
    tsd, osd = topt.state_dict(), oopt.state_dict()
    assert osd["param_groups"] == tsd["param_groups"]
    assert list(osd["state"]) == list(tsd["state"])
    for k in tsd["state"]:
        assert list(osd["state"][k]) == list(tsd["state"][k])
        for key, tv in tsd["state"][k].items():
            ov = osd["state"][k][key]
            assert ov.shape == tuple(tv.shape)
            assert ov.dtype.name == str(tv.dtype).replace("torch.", "")


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                         ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("AdamW", dict(lr=0.01))])
def test_load_state_dict_resumes_identically(name, kwargs):
    def make():
        tapegrad.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        return model, getattr(optim, name)(model.parameters(), **kwargs)

    x = tapegrad.randn(8, 3)
    y = tapegrad.randn(8, 1)

    def steps(model, opt, n):
        for _ in range(n):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()

    ref_model, ref_opt = make()
    steps(ref_model, ref_opt, 6)

    model, opt = make()
    steps(model, opt, 3)
    saved_model, saved_opt = model.state_dict(), opt.state_dict()
    model2, opt2 = make()
    model2.load_state_dict(saved_model)
    opt2.load_state_dict(saved_opt)
    steps(model2, opt2, 3)
    for a, b in zip(model2.parameters(), ref_model.parameters()):
        assert np.array_equal(a._data, b._data)
    # the loaded state is a copy: stepping the new optimizer leaves the old one alone
    assert opt2.state[next(model2.parameters())] is not opt.state[next(model.parameters())]


def test_load_state_dict_mismatch_errors():
    a, b = Parameter(tapegrad.ones(1)), Parameter(tapegrad.ones(1))
    opt = optim.SGD([a, b], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).state_dict())
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(optim.SGD([a], lr=0.1).state_dict())


def test_optimizer_trains_model():
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    x = tapegrad.randn(128, 2)
    y = (x[:, 0] * x[:, 1] > 0).long()
    opt = optim.Adam(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(150):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    acc = (model(x).argmax(1) == y).float().mean().item()
    assert acc > 0.9


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_step_state_follows_the_default_dtype(name):
    # torch keeps 'step' in float64 under a float64 default dtype, float32 otherwise
    old = tapegrad.get_default_dtype()
    try:
        for dt in (tapegrad.float64, tapegrad.float32):
            tapegrad.set_default_dtype(dt)
            p = tapegrad.ones(2, requires_grad=True)
            opt = getattr(tapegrad.optim, name)([p])
            p.grad = tapegrad.ones(2)
            opt.step()
            assert opt.state[p]["step"].dtype == dt
    finally:
        tapegrad.set_default_dtype(old)
