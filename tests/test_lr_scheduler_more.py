"""tapegrad.optim.lr_scheduler: MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR,
CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR, ReduceLROnPlateau, SequentialLR and
ChainedScheduler.

Against torch (skipped without it): every rate (and cycled momentum) of a run, bit for bit;
``step(epoch)``; resuming with ``last_epoch``; errors; warnings; state_dict keys. Without torch:
closed-form values, state_dict round trips, plateau logic.
"""
import math
import warnings

import pytest

import tapegrad
from tapegrad.optim import lr_scheduler as S


def _opt(lib, kind="SGD"):
    p1 = lib.nn.Parameter(lib.ones(2))
    p2 = lib.nn.Parameter(lib.ones(3))
    groups = [{"params": [p1]}, {"params": [p2], "lr": 0.03}]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


def _groups(opt):
    return [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]


def _L(lib):
    return lib.optim.lr_scheduler


M = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85,
     0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5]

CASES = {
    "Multiplicative": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.95),
    "Multiplicative-list": lambda L, o: L.MultiplicativeLR(o, [lambda e: 0.95,
                                                               lambda e: 1 + e / 100]),
    "Constant": lambda L, o: L.ConstantLR(o),
    "Constant-0.7-3": lambda L, o: L.ConstantLR(o, 0.7, 3),
    "Linear": lambda L, o: L.LinearLR(o),
    "Linear-down": lambda L, o: L.LinearLR(o, 1.0, 0.1, 7),
    "Polynomial": lambda L, o: L.PolynomialLR(o),
    "Polynomial-9-2.5": lambda L, o: L.PolynomialLR(o, 9, 2.5),
    "CAWR": lambda L, o: L.CosineAnnealingWarmRestarts(o, 3),
    "CAWR-mult": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, 3, 0.001),
    "Cyclic": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 4),
    "Cyclic-triangular2": lambda L, o: L.CyclicLR(o, [0.01, 0.001], [0.1, 0.05], 3, 5,
                                                  "triangular2"),
    "Cyclic-exp_range": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 3, mode="exp_range", gamma=0.9),
    "Cyclic-no-momentum": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 3, cycle_momentum=False),
    "Cyclic-scale_fn": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 3, scale_fn=lambda x: 1 / (x + 1),
                                               scale_mode="iterations"),
    "OneCycle": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=25),
    "OneCycle-linear-3phase": lambda L, o: L.OneCycleLR(
        o, [1.0, 0.5], epochs=5, steps_per_epoch=5, anneal_strategy="linear", three_phase=True),
    "OneCycle-no-momentum": lambda L, o: L.OneCycleLR(o, 0.5, total_steps=30,
                                                      cycle_momentum=False),
    "Sequential": lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=4),
                                                  L.CosineAnnealingLR(o, 10)], [5]),
    "Sequential-3": lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, 10), L.ExponentialLR(o, 0.9),
            L.MultiplicativeLR(o, lambda e: 1.05)], [3, 8]),
    "Sequential-warm-restarts": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.5, total_iters=3), L.CosineAnnealingWarmRestarts(o, 4, 2)], [3]),
    "Sequential-cyclic": lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, 10), L.CyclicLR(o, 0.01, 0.1, 2)], [4]),
    "Chained": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.1, 3),
                                                L.ExponentialLR(o, 0.9)]),
    "Chained-3": lambda L, o: L.ChainedScheduler([L.LinearLR(o, 0.5, total_iters=4),
                                                  L.StepLR(o, 3, 0.5), L.PolynomialLR(o, 20)],
                                                 o),
}
ADAM_CASES = {
    "Cyclic-adam": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 3, base_momentum=0.7,
                                           max_momentum=[0.95, 0.9]),
    "OneCycle-adam": lambda L, o: L.OneCycleLR(o, 0.5, total_steps=25, pct_start=0.25,
                                               div_factor=10.0, final_div_factor=100.0),
}
PLATEAU = {
    "Plateau": lambda L, o: L.ReduceLROnPlateau(o, patience=2),
    "Plateau-max-abs-cooldown": lambda L, o: L.ReduceLROnPlateau(o, "max", 0.5, 1, 0.01, "abs", 2,
                                                                 [0.01, 0.02]),
    "Plateau-max-rel-min": lambda L, o: L.ReduceLROnPlateau(o, "max", 0.5, 0, min_lr=0.02),
    "Plateau-min-abs": lambda L, o: L.ReduceLROnPlateau(o, threshold=0.06,
                                                        threshold_mode="abs", patience=1),
}


def _run(lib, make, kind="SGD", steps=25, metric=None, epochs=None):
    o = _opt(lib, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = make(_L(lib), o)
        trace = [(s.get_last_lr(), _groups(o))]
        for i in range(steps):
            o.step()
            if metric is not None:
                s.step(metric(lib, i))
            elif epochs is not None:
                s.step(epochs[i])
            else:
                s.step()
            trace.append((s.get_last_lr(), _groups(o), getattr(s, "last_epoch", None)))
    return trace, s


def _compare(torch, make, **kw):
    theirs, ts = _run(torch, make, **kw)
    ours, os_ = _run(tapegrad, make, **kw)
    for i, (a, b) in enumerate(zip(theirs, ours)):
        assert b == a, f"step {i}"             # floats compared exactly: bit for bit
    tsd, osd = ts.state_dict(), os_.state_dict()
    assert list(osd) == list(tsd)
    return ts, os_


@pytest.mark.parametrize("name", list(CASES))
def test_trajectory_matches_torch(torch, name):
    _compare(torch, CASES[name])


@pytest.mark.parametrize("name", list(ADAM_CASES))
def test_momentum_cycles_adam_beta1_like_torch(torch, name):
    _compare(torch, ADAM_CASES[name], kind="Adam")


@pytest.mark.parametrize("name", list(PLATEAU))
def test_plateau_matches_torch(torch, name):
    def metric(lib, i):
        return lib.tensor(M[i]) if i % 3 == 0 else M[i]     # tensors and floats both accepted
    ts, os_ = _compare(torch, PLATEAU[name], metric=metric)
    assert os_.state_dict() == ts.state_dict()


EPOCHS = [3, 1, 7, 0, 12, 5, 5, 2]


@pytest.mark.parametrize("name", ["Constant-0.7-3", "Linear-down", "Polynomial-9-2.5",
                                  "Multiplicative", "Cyclic", "OneCycle"])
def test_step_with_epoch_matches_torch(torch, name):
    _compare(torch, CASES[name], steps=len(EPOCHS), epochs=EPOCHS)


def test_warm_restarts_fractional_epochs_match_torch(torch):
    make = CASES["CAWR-mult"]
    _compare(torch, make, steps=8, epochs=[0.5, 1.25, 3, 7.5, 2, 0, 15.1, 30])
    _compare(torch, CASES["CAWR"], steps=6, epochs=[0.2, 3.7, 6, 9.99, 1, 4])


RESUMABLE = {
    "Constant": lambda L, o, le: L.ConstantLR(o, 0.4, 4, last_epoch=le),
    "Linear": lambda L, o, le: L.LinearLR(o, 0.2, 0.9, 4, last_epoch=le),
    "Polynomial": lambda L, o, le: L.PolynomialLR(o, 4, 1.5, last_epoch=le),
    "Multiplicative": lambda L, o, le: L.MultiplicativeLR(o, lambda e: 0.9, last_epoch=le),
    "CAWR": lambda L, o, le: L.CosineAnnealingWarmRestarts(o, 3, 2, last_epoch=le),
    "Cyclic": lambda L, o, le: L.CyclicLR(o, 0.01, 0.1, 3, last_epoch=le),
    "OneCycle": lambda L, o, le: L.OneCycleLR(o, 0.1, total_steps=20, last_epoch=le),
}


@pytest.mark.parametrize("name", list(RESUMABLE))
@pytest.mark.parametrize("last_epoch", [0, 2, 3, 4, 7])
def test_resume_with_last_epoch_matches_torch(torch, name, last_epoch):
    def make(L, o):
        for g in o.param_groups:
            g.update(initial_lr=g["lr"] * 2, max_lr=0.5, min_lr=1e-4, max_momentum=0.95,
                     base_momentum=0.85)
        return RESUMABLE[name](L, o, last_epoch)
    _compare(torch, make, steps=10)


# ---- errors -------------------------------------------------------------------------------------

def _rprop(lib):
    return lib.optim.Rprop([lib.nn.Parameter(lib.ones(1))])


ERRORS = {
    "Constant factor > 1": lambda L, o, lib: L.ConstantLR(o, 1.5),
    "Constant factor < 0": lambda L, o, lib: L.ConstantLR(o, -0.1),
    "Linear start 0": lambda L, o, lib: L.LinearLR(o, 0.0),
    "Linear start > 1": lambda L, o, lib: L.LinearLR(o, 1.1),
    "Linear end > 1": lambda L, o, lib: L.LinearLR(o, 0.5, 1.1),
    "Multiplicative count": lambda L, o, lib: L.MultiplicativeLR(o, [lambda e: 1.0]),
    "CAWR T_0 = 0": lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, 0),
    "CAWR T_0 float": lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, 2.0),
    "CAWR T_mult = 0": lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, 2, 0),
    "CAWR T_mult float": lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, 2, 1.5),
    "CAWR eta_min str": lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, 2, 1, "a"),
    "CAWR negative epoch": lambda L, o, lib: L.CosineAnnealingWarmRestarts(o, 2).step(-1),
    "Cyclic mode": lambda L, o, lib: L.CyclicLR(o, 0.01, 0.1, mode="foo"),
    "Cyclic base_lr count": lambda L, o, lib: L.CyclicLR(o, [0.01], 0.1),
    "Cyclic max_lr count": lambda L, o, lib: L.CyclicLR(o, 0.01, [0.1, 0.2, 0.3]),
    "Cyclic no momentum": lambda L, o, lib: L.CyclicLR(_rprop(lib), 0.01, 0.1),
    "Cyclic momentum count": lambda L, o, lib: L.CyclicLR(o, 0.01, 0.1, base_momentum=[0.1]),
    "OneCycle no length": lambda L, o, lib: L.OneCycleLR(o, 0.1),
    "OneCycle total_steps 0": lambda L, o, lib: L.OneCycleLR(o, 0.1, total_steps=0),
    "OneCycle total_steps float": lambda L, o, lib: L.OneCycleLR(o, 0.1, total_steps=5.0),
    "OneCycle epochs": lambda L, o, lib: L.OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=3),
    "OneCycle steps_per_epoch": lambda L, o, lib: L.OneCycleLR(o, 0.1, epochs=2,
                                                              steps_per_epoch=-3),
    "OneCycle pct_start": lambda L, o, lib: L.OneCycleLR(o, 0.1, total_steps=5, pct_start=1.5),
    "OneCycle pct_start int": lambda L, o, lib: L.OneCycleLR(o, 0.1, total_steps=5,
                                                            pct_start=1),
    "OneCycle anneal": lambda L, o, lib: L.OneCycleLR(o, 0.1, total_steps=5,
                                                     anneal_strategy="exp"),
    "OneCycle max_lr count": lambda L, o, lib: L.OneCycleLR(o, [0.1], total_steps=5),
    "OneCycle no momentum": lambda L, o, lib: L.OneCycleLR(_rprop(lib), 0.1, total_steps=5),
    "OneCycle past the end": lambda L, o, lib: [s := L.OneCycleLR(o, 0.1, total_steps=3),
                                                [s.step() for _ in range(4)]],
    "OneCycle not an optimizer": lambda L, o, lib: L.OneCycleLR(object(), 0.1, total_steps=3),
    "Plateau factor": lambda L, o, lib: L.ReduceLROnPlateau(o, factor=1.0),
    "Plateau mode": lambda L, o, lib: L.ReduceLROnPlateau(o, mode="foo"),
    "Plateau threshold_mode": lambda L, o, lib: L.ReduceLROnPlateau(o, threshold_mode="foo"),
    "Plateau min_lr count": lambda L, o, lib: L.ReduceLROnPlateau(o, min_lr=[0.1]),
    "Plateau not an optimizer": lambda L, o, lib: L.ReduceLROnPlateau(None),
    "Plateau bad metric": lambda L, o, lib: L.ReduceLROnPlateau(o).step("x"),
    "Plateau group added": lambda L, o, lib: [
        s := L.ReduceLROnPlateau(o, patience=0, min_lr=[0, 0]),
        o.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))]}), s.step(1.0),
        s.step(2.0)],
    "Sequential empty": lambda L, o, lib: L.SequentialLR(o, [], []),
    "Sequential milestones": lambda L, o, lib: L.SequentialLR(o, [L.StepLR(o, 2)], [3]),
    "Sequential plateau": lambda L, o, lib: L.SequentialLR(
        o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], [3]),
    "Sequential non-scheduler": lambda L, o, lib: L.SequentialLR(o, [L.StepLR(o, 2), 3], [3]),
    "Sequential other optimizer": lambda L, o, lib: L.SequentialLR(
        o, [L.StepLR(o, 2), L.StepLR(_opt(lib), 2)], [3]),
    "Chained empty": lambda L, o, lib: L.ChainedScheduler([]),
    "Chained plateau": lambda L, o, lib: L.ChainedScheduler([L.StepLR(o, 2),
                                                             L.ReduceLROnPlateau(o)]),
    "Chained non-scheduler": lambda L, o, lib: L.ChainedScheduler([L.StepLR(o, 2), 3]),
    "Chained other optimizer": lambda L, o, lib: L.ChainedScheduler(
        [L.StepLR(o, 2), L.StepLR(_opt(lib), 2)]),
    "Linear total_iters 0": lambda L, o, lib: [o.step(), L.LinearLR(o, 0.5, 1.0, 0).step()],
    "Polynomial total_iters 0": lambda L, o, lib: [o.step(), L.PolynomialLR(o, 0).step(),
                                                   L.PolynomialLR(o, 0).step(0)],
}


def _outcome(fn):
    try:
        value = fn()
        return "no error" if value is None else value
    except Exception as e:  # noqa: BLE001 - the exception type and text are what is compared
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_torch(torch, case):
    got = []
    for lib in (torch, tapegrad):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got.append(_outcome(lambda: [ERRORS[case](_L(lib), _opt(lib), lib), None][1]))
    assert got[1] == got[0]


# ---- warnings -----------------------------------------------------------------------------------

def _messages(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message)[:100] for x in w]


@pytest.mark.parametrize("name", list(CASES))
def test_step_before_optimizer_step_warns_like_torch(torch, name):
    got = []
    for lib in (torch, tapegrad):
        o = _opt(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = CASES[name](_L(lib), o)
        msgs = [_messages(s.step) for _ in range(5)]   # the optimizer never steps
        got.append(msgs)
    assert got[1] == got[0]


def test_warnings_match_torch(torch):
    for lib in (torch, tapegrad):
        L, o = _L(lib), _opt(lib)
        s = L.LinearLR(o)
        assert any("get_last_lr" in m for m in _messages(s.get_lr))
        o.step()
        assert _messages(s.step) == []
        plateau = L.ReduceLROnPlateau(o)
        assert any("epoch parameter" in m for m in _messages(lambda: plateau.step(1.0, 3)))
        assert plateau.last_epoch == 3
        cawr = L.CosineAnnealingWarmRestarts(o, 3)
        assert _messages(lambda: cawr.step(1.5)) == []       # fractional epochs are supported
        seq = L.SequentialLR(o, [L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)], [2])
        assert [_messages(seq.step) for _ in range(4)] == [[]] * 4   # milestone: no warning


@pytest.mark.parametrize("name", list(CASES))
def test_get_lr_outside_step_matches_torch(torch, name):
    """A scheduler's get_lr() called directly warns (and computes from the current rates); the
    composite schedulers have none (NotImplementedError), as torch."""
    got = []
    for lib in (torch, tapegrad):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = CASES[name](_L(lib), _opt(lib))
        result = []
        got.append((_messages(lambda: result.append(_outcome(s.get_lr))), result))
    assert got[1] == got[0]


# ---- state_dict ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES) + list(PLATEAU))
def test_state_dict_round_trip_resumes_identically(name):
    make = CASES.get(name) or PLATEAU[name]

    def metric(i):
        return M[i % len(M)]

    def steps(o, s, start, n):
        out = []
        for i in range(start, start + n):
            o.step()
            s.step(metric(i)) if name in PLATEAU else s.step()
            out.append((s.get_last_lr(), _groups(o)))
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o1 = _opt(tapegrad)
        ref = steps(o1, make(S, o1), 0, 12)
        o2 = _opt(tapegrad)
        s2 = make(S, o2)
        steps(o2, s2, 0, 5)
        sd, osd = s2.state_dict(), o2.state_dict()
        o3 = _opt(tapegrad)
        s3 = make(S, o3)
        o3.load_state_dict(osd)
        s3.load_state_dict(sd)
        assert steps(o3, s3, 5, 7) == ref[5:]
    assert "optimizer" not in sd


def test_nested_state_dicts(torch):
    for lib in (torch, tapegrad):
        o = _opt(lib)
        seq = CASES["Sequential-3"](_L(lib), o)
        sd = seq.state_dict()
        assert list(sd) == ["_milestones", "last_epoch", "_last_lr", "_schedulers"]
        assert [list(s) for s in sd["_schedulers"]][0][:2] == ["factor", "total_iters"]
        ch = CASES["Chained"](_L(lib), o)
        assert list(ch.state_dict()) == ["_last_lr", "_schedulers"]


def test_cyclic_custom_scale_fn_state():
    class Halving:
        def __init__(self):
            self.k = 0.5

        def __call__(self, x):
            return self.k ** x

    o = _opt(tapegrad)
    fn = Halving()
    s = S.CyclicLR(o, 0.01, 0.1, 2, scale_fn=fn)
    fn.k = 0.25
    sd = s.state_dict()
    assert sd["_scale_fn_custom"] == {"k": 0.25} and "_scale_fn_ref" not in sd
    fn2 = Halving()
    s2 = S.CyclicLR(_opt(tapegrad), 0.01, 0.1, 2, scale_fn=fn2)
    s2.load_state_dict(sd)
    assert fn2.k == 0.25 and "_scale_fn_custom" in sd
    s3 = S.CyclicLR(_opt(tapegrad), 0.01, 0.1, 2, scale_fn=lambda x: 1.0)
    assert s3.state_dict()["_scale_fn_custom"] is None


# ---- closed forms (no torch needed) -------------------------------------------------------------

def _lrs(make, steps, kind="SGD"):
    o = _opt(tapegrad, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = make(S, o)
        out = [s.get_last_lr()[0]]
        for _ in range(steps):
            o.step()
            s.step()
            out.append(s.get_last_lr()[0])
    return out, o, s


def test_linear_constant_polynomial_closed_forms():
    lrs, _, _ = _lrs(lambda L, o: L.LinearLR(o, 0.25, 1.0, 3), 5)
    assert lrs == pytest.approx([0.025, 0.05, 0.075, 0.1, 0.1, 0.1], rel=1e-12)
    lrs, _, _ = _lrs(lambda L, o: L.ConstantLR(o, 0.5, 2), 4)
    assert lrs == pytest.approx([0.05, 0.05, 0.1, 0.1, 0.1], rel=1e-12)
    lrs, _, _ = _lrs(lambda L, o: L.PolynomialLR(o, 4, 2.0), 6)
    assert lrs == pytest.approx([0.1 * (1 - min(e, 4) / 4) ** 2 for e in range(7)], abs=1e-15)
    lrs, _, _ = _lrs(lambda L, o: L.MultiplicativeLR(o, lambda e: 0.5), 3)
    assert lrs == pytest.approx([0.1, 0.05, 0.025, 0.0125], rel=1e-12)


def test_warm_restarts_closed_form():
    lrs, _, s = _lrs(lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, 2, 0.0), 7)
    # cycles of 2, 4, ...: T_cur = 0 1 | 0 1 2 3 | 0 1
    tc = [(0, 2), (1, 2), (0, 4), (1, 4), (2, 4), (3, 4), (0, 8), (1, 8)]
    assert lrs == pytest.approx([0.1 * (1 + math.cos(math.pi * c / t)) / 2 for c, t in tc],
                                rel=1e-12)
    assert (s.T_cur, s.T_i, s._step_count) == (1, 8, 0)


def test_cyclic_triangle_closed_form():
    lrs, o, _ = _lrs(lambda L, o: L.CyclicLR(o, 0.0, 0.4, 2, 2), 8)
    assert lrs == pytest.approx([0.0, 0.2, 0.4, 0.2, 0.0, 0.2, 0.4, 0.2, 0.0], abs=1e-15)
    assert o.param_groups[0]["momentum"] == pytest.approx(0.9)   # back at max_momentum
    lrs, _, _ = _lrs(lambda L, o: L.CyclicLR(o, 0.0, 0.4, 2, 2, "triangular2"), 8)
    assert lrs == pytest.approx([0.0, 0.2, 0.4, 0.2, 0.0, 0.1, 0.2, 0.1, 0.0], abs=1e-15)


def test_one_cycle_endpoints():
    lrs, o, s = _lrs(lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10, pct_start=0.3,
                                               anneal_strategy="linear"), 9, kind="Adam")
    g = o.param_groups[0]
    assert g["initial_lr"] == 1.0 / 25 and g["max_lr"] == 1.0 and g["min_lr"] == 0.04 / 1e4
    assert lrs[0] == pytest.approx(0.04) and lrs[2] == pytest.approx(1.0)
    assert lrs[9] == pytest.approx(0.04 / 1e4)
    assert g["betas"][0] == pytest.approx(0.95) and g["betas"][1] == 0.999
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        o.step()
        s.step()
        s.step()


def test_plateau_reduces_after_patience_and_cools_down():
    o = _opt(tapegrad)
    s = S.ReduceLROnPlateau(o, patience=1, cooldown=1, factor=0.5, min_lr=[0.02, 0.0])
    seen = []
    for m in [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5]:
        s.step(m)
        seen.append(s.get_last_lr())
    assert seen == [[0.1, 0.03], [0.1, 0.03], [0.05, 0.015], [0.05, 0.015], [0.05, 0.015],
                    [0.025, 0.0075], [0.025, 0.0075]]
    assert s.best == 0.5 and s.num_bad_epochs == 0 and not s.in_cooldown
    for _ in range(4):
        s.step(1.0)
    assert s.get_last_lr()[0] == 0.02            # floored at min_lr
    assert isinstance(s, S.LRScheduler)


def test_plateau_with_tensor_lr():
    p = tapegrad.nn.Parameter(tapegrad.ones(1))
    o = tapegrad.optim.RMSprop([p], lr=tapegrad.tensor(0.1))
    s = S.ReduceLROnPlateau(o, patience=0)
    s.step(1.0)
    s.step(2.0)
    lr = o.param_groups[0]["lr"]
    assert isinstance(lr, tapegrad.Tensor) and lr.item() == pytest.approx(0.01)


def test_sequential_and_chained_compose():
    lrs, _, s = _lrs(lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, 10), L.ExponentialLR(o, 0.5)], [2]), 4)
    assert lrs == pytest.approx([0.05, 0.05, 0.1, 0.05, 0.025], rel=1e-12)
    assert s.last_epoch == 4
    lrs, _, _ = _lrs(lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.5, 2),
                                                      L.ExponentialLR(o, 0.5)]), 3)
    assert lrs == pytest.approx([0.05, 0.025, 0.025, 0.0125], rel=1e-12)


def test_new_schedulers_have_docstrings():
    for cls in (S.MultiplicativeLR, S.ConstantLR, S.LinearLR, S.PolynomialLR,
                S.CosineAnnealingWarmRestarts, S.CyclicLR, S.OneCycleLR, S.ReduceLROnPlateau,
                S.SequentialLR, S.ChainedScheduler):
        assert cls.__doc__ and len(cls.__doc__) > 80, cls
        assert cls.__name__ in S.__all__
