"""This stop's per-call speed-ups, checked against torch: nll_loss's one-comparison target check
and its skipped ignore_index scan, W8's tiny MLP step end to end."""
import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F


def _run(lib, logits, target, **kw):
    z = lib.tensor(logits, requires_grad=True)
    t = lib.tensor(target)
    out = {}
    for fn in ("nll_loss", "cross_entropy"):
        fx = getattr(lib.nn.functional, fn)
        x = z.log_softmax(1) if fn == "nll_loss" and z.ndim > 1 else z
        try:
            loss = fx(x, t, **kw)
        except Exception as e:  # noqa: BLE001 - the type and start of the message are compared
            out[fn] = (type(e).__name__, str(e).split(" (")[0][:40])
            continue
        g, = lib.autograd.grad(loss.sum(), z)
        out[fn] = (loss.detach().numpy().copy(), g.numpy().copy())
    return out


_RNG = np.random.RandomState(0)
_LOGITS = _RNG.standard_normal((6, 4)).astype(np.float32)
CASES = [
    ([0, 1, 2, 3, 0, 1], {}),                          # every target a class, none ignored
    ([0, -100, 2, 3, -100, 1], {}),                    # some ignored by the default index
    ([0, 1, 2, 3, 0, 1], {"ignore_index": 1}),          # an ignore_index that is a class
    ([-100] * 6, {}),                                   # all ignored: mean of nothing
    ([0, 1, 2, 3, 0, 1], {"reduction": "none"}),
    ([0, -100, 2, 3, 0, 1], {"reduction": "sum"}),
    ([0, 1, 2, 3, 0, 1], {"weight": np.array([1.0, 2.0, 0.5, 0.0], np.float32)}),
    ([0, 1, 7, 3, 0, 1], {}),                           # out of range: IndexError
    ([0, 1, -3, 3, 0, 1], {}),                          # negative, not ignore_index
    ([0, 1, 4, 3, 0, 1], {"ignore_index": 4}),          # == C but ignored: fine
    ([-100] * 6, {"reduction": "sum"}),                 # ignored rows: +0 loss and gradient
    ([-100, 1, -100, 3, 0, 1], {"reduction": "none"}),
    ([0, -100, 2, 3, 0, 1], {"weight": np.array([0.0, 0.0, 0.0, 1.0], np.float32)}),  # 0/0
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_nll_and_cross_entropy_targets_match_torch(k):
    target, kw = CASES[k]
    target = np.array(target, np.int64)
    ours = _run(tg, _LOGITS, target, **{**kw, **({"weight": tg.tensor(kw["weight"])}
                                               if "weight" in kw else {})})
    if k in (7, 8):
        assert ours["nll_loss"][0] == "IndexError" and ours["cross_entropy"][0] == "IndexError"
    torch = pytest.importorskip("torch")
    theirs = _run(torch, _LOGITS, target, **{**kw, **({"weight": torch.tensor(kw["weight"])}
                                                     if "weight" in kw else {})})
    for fn in ours:
        if isinstance(ours[fn][0], str):
            assert isinstance(theirs[fn][0], str) and ours[fn][0] == theirs[fn][0]
            continue
        for a, b in zip(ours[fn], theirs[fn]):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
            # (the sign of a zero too: an ignored row's gradient is +0, as torch's)
            np.testing.assert_array_equal(np.signbit(a) & ~np.isnan(a), np.signbit(b) & ~np.isnan(b))


def test_uint8_and_strided_targets():
    t = np.array([3, 0, 2, 1, 1, 0, 2, 3], np.int64)
    z = tg.tensor(_RNG.standard_normal((4, 4)).astype(np.float64), requires_grad=True)
    a = F.nll_loss(z, tg.tensor(t)[::2])          # a strided int64 target
    b = F.nll_loss(z, tg.tensor(t[::2].astype(np.uint8)))
    assert a.item() == b.item() == pytest.approx(-z._data[np.arange(4), t[::2]].mean())


def test_w8_step_matches_torch():
    torch = pytest.importorskip("torch")
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    import benchmarks.workloads as W
    res = {}
    for name in ("tapegrad", "torch", "numpy"):
        res[name] = W.build("W8", name).check()
    for key in res["numpy"]:
        np.testing.assert_allclose(res["tapegrad"][key], res["torch"][key], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(res["tapegrad"][key], res["numpy"][key], rtol=1e-5, atol=1e-6)
    assert torch is not None


def _nll_graph(L, shape, target, **kw):
    lp = L.tensor(np.random.RandomState(0).standard_normal(shape), requires_grad=True)
    g, = L.autograd.grad(L.nn.functional.nll_loss(lp, L.tensor(target), **kw).sum(), lp,
                         create_graph=True)
    nf = [None if n is None else n.name().replace("torch::autograd::", "")
          for n, _ in g.grad_fn.next_functions]
    gg, = L.autograd.grad((g * g).sum(), lp, allow_unused=True)
    return g.grad_fn.name(), nf, g.is_contiguous(), g.detach().numpy().copy(), \
        None if gg is None else gg.numpy().copy()


@pytest.mark.parametrize("case", [((3, 4), [0, 1, 2], {}), ((4,), 2, {}),
                                  ((2, 4, 3, 3), np.zeros((2, 3, 3), np.int64), {}),
                                  ((3, 4), [0, -100, 2], {"reduction": "none"}),
                                  ((3, 4), [0, -100, 2], {"reduction": "sum"})])
def test_nll_gradient_node_as_torch(case):
    # NllLossBackwardBackward0 / NllLoss2DBackwardBackward0 take self (a zero derivative), as
    # torch's, so a gradient penalty differentiates back to the log-probabilities
    shape, target, kw = case
    ours = _nll_graph(tg, shape, target, **kw)
    assert ours[0] in ("NllLossBackwardBackward0", "NllLoss2DBackwardBackward0")
    assert ours[1] == [None, "AccumulateGrad"] and ours[2]
    torch = pytest.importorskip("torch")
    theirs = _nll_graph(torch, shape, target, **kw)
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-12)


def test_nll_loss_input_changed_in_place_raises():
    # torch saves nll_loss's self: changing it in place before backward is an error
    for L in (tg, pytest.importorskip("torch")):
        lp = L.tensor([[-1.0, -2.0], [-0.5, -1.5]], requires_grad=True)
        lq = lp * 1
        loss = L.nn.functional.nll_loss(lq, L.tensor([0, 1]))
        lq.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
        assert lp.grad is None
