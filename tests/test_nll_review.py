"""nll_loss / cross_entropy faithfulness to torch: uint8 targets by input rank, an ignored target
with label smoothing (zero gradients, not nan), and float16 reductions (torch's CPU cascade of
half partial sums, and its backward rounding)."""
import numpy as np
import pytest

import tapegrad as tg
import tapegrad.nn.functional as F

H, F32 = np.float16, np.float32


def _run(mod, fn, x, t, grad=True, **kw):
    """(loss array, input grad array or None, exception type or None) of mod's F.<fn>."""
    xt = mod.tensor(x, requires_grad=grad)
    tt = mod.tensor(t)
    if "weight" in kw and kw["weight"] is not None:
        kw = dict(kw, weight=mod.tensor(kw["weight"]))
    try:
        loss = getattr(mod.nn.functional, fn)(xt, tt, **kw)
    except Exception as e:      # noqa: BLE001 - the exception type is what is compared
        return None, None, type(e)
    g = None
    if loss.requires_grad:
        loss.backward(mod.ones_like(loss))
        g = xt.grad.numpy()
    return loss.detach().numpy(), g, None


# ---------------------------------------------------------------------------------------------
# 1. uint8 targets: accepted for (C,) and (N, C) inputs, RuntimeError for (N, C, d1, ...)

_U8_SHAPES = [((5,), ()), ((3, 5), (3,)), ((3, 5, 4), (3, 4)), ((3, 5, 4, 2), (3, 4, 2)),
              ((3, 5, 4, 2, 2), (3, 4, 2, 2))]


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("shape,tshape", _U8_SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_uint8_target_by_rank(fn, shape, tshape, reduction):
    rs = np.random.RandomState(0)
    x = rs.randn(*shape).astype(F32)
    t = rs.randint(0, 5, tshape).astype(np.uint8)
    if len(shape) <= 2:
        u8 = getattr(F, fn)(tg.tensor(x), tg.tensor(t), reduction=reduction)
        i64 = getattr(F, fn)(tg.tensor(x), tg.tensor(t.astype(np.int64)), reduction=reduction)
        np.testing.assert_array_equal(u8.numpy(), i64.numpy())
    else:
        with pytest.raises(RuntimeError, match=r"expected scalar type Long but found Byte.*\.long\(\)"):
            getattr(F, fn)(tg.tensor(x), tg.tensor(t), reduction=reduction)
    torch = pytest.importorskip("torch")
    a = _run(torch, fn, x, t, reduction=reduction)
    b = _run(tg, fn, x, t, reduction=reduction)
    assert a[2] is b[2]
    if a[2] is None:    # (log_softmax's backward may differ from torch's in the last bit)
        np.testing.assert_allclose(a[0], b[0], rtol=1e-6)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-6, atol=1e-7)


def test_uint8_target_high_rank_edge_cases():
    x3 = np.zeros((3, 5, 4), F32)
    # an out-of-range uint8 target fails on its dtype first, as torch (not IndexError)
    with pytest.raises(RuntimeError, match="Long but found Byte"):
        F.nll_loss(tg.tensor(x3), tg.tensor(np.full((3, 4), 9, np.uint8)))
    # torch returns early for an empty input reduced by 'mean'/'sum' (no dtype check there)
    e = tg.tensor(np.zeros((0, 5, 4), F32))
    et = tg.tensor(np.zeros((0, 4), np.uint8))
    assert np.isnan(F.nll_loss(e, et).item())
    assert F.nll_loss(e, et, reduction="sum").item() == 0.0
    with pytest.raises(RuntimeError, match="Long but found Byte"):
        F.nll_loss(e, et, reduction="none")
    torch = pytest.importorskip("torch")
    for x, t, red in [(x3, np.full((3, 4), 9, np.uint8), "mean"),
                      (np.zeros((0, 5, 4), F32), np.zeros((0, 4), np.uint8), "mean"),
                      (np.zeros((0, 5, 4), F32), np.zeros((0, 4), np.uint8), "sum"),
                      (np.zeros((0, 5, 4), F32), np.zeros((0, 4), np.uint8), "none"),
                      (np.zeros((2, 5, 0), F32), np.zeros((2, 0), np.uint8), "mean"),
                      (np.zeros((2, 5, 0, 3), F32), np.zeros((2, 0, 3), np.uint8), "none")]:
        # (forward only: torch's backward of the empty uint8 case raises, tapegrad's does not)
        a = _run(torch, "nll_loss", x, t, grad=False, reduction=red)
        b = _run(tg, "nll_loss", x, t, grad=False, reduction=red)
        assert a[2] is b[2], (x.shape, red, a[2], b[2])
        if a[2] is None:
            np.testing.assert_array_equal(a[0], b[0])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 1, 2])
@pytest.mark.parametrize("batched", [False, True])
def test_uint8_target_weighted_label_smoothing(reduction, ignore_index, batched):
    # torch's 'mean' label smoothing gathers the weights with the target: a uint8 target fails
    # there (unless every target is ignored), as torch
    rs = np.random.RandomState(1)
    x = rs.randn(3, 5).astype(F32) if batched else rs.randn(5).astype(F32)
    t = np.array([1, 2, 3], np.uint8) if batched else np.array(1, np.uint8)
    w = np.arange(1, 6).astype(F32)
    kw = dict(weight=w, label_smoothing=0.1, reduction=reduction, ignore_index=ignore_index)
    b = _run(tg, "cross_entropy", x, t, **kw)
    all_ignored = bool((t == ignore_index).all())
    if reduction == "mean" and not all_ignored:
        assert b[2] is RuntimeError
    else:
        assert b[2] is None
    torch = pytest.importorskip("torch")
    a = _run(torch, "cross_entropy", x, t, **kw)
    assert a[2] is b[2]
    if a[2] is None:
        np.testing.assert_allclose(a[0], b[0], rtol=1e-6)
        np.testing.assert_allclose(a[1], b[1], rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# 2. label smoothing with every target ignored: nan 'mean' loss but zero gradients, as torch

@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape,target", [((5,), 2), ((2, 5), [2, 2])])
def test_ignored_target_label_smoothing_grads(reduction, weighted, shape, target):
    x = np.random.RandomState(0).randn(*shape).astype(F32)
    t = np.array(target)
    kw = dict(ignore_index=2, label_smoothing=0.1, reduction=reduction,
              weight=np.arange(1, 6).astype(F32) if weighted else None)
    loss, grad, err = _run(tg, "cross_entropy", x, t, **kw)
    assert err is None
    if reduction == "mean":
        assert np.isnan(loss)
    else:
        assert (loss == 0).all()
    np.testing.assert_array_equal(grad, np.zeros(shape, F32))
    torch = pytest.importorskip("torch")
    a = _run(torch, "cross_entropy", x, t, **kw)
    np.testing.assert_array_equal(a[0], loss)
    np.testing.assert_array_equal(a[1], grad)


def test_ignored_and_zero_weight_label_smoothing_matches_torch():
    # the kept targets have zero total weight: torch's gradient is nan on the kept rows and 0 on
    # the ignored one
    x = np.arange(15, dtype=F32).reshape(3, 5)
    t = np.array([2, 0, 0])
    kw = dict(weight=np.array([0, 1, 1, 1, 1], F32), ignore_index=2, label_smoothing=0.1)
    loss, grad, _ = _run(tg, "cross_entropy", x, t, **kw)
    assert np.isnan(loss)
    assert (grad[0] == 0).all() and np.isnan(grad[1:]).all()
    torch = pytest.importorskip("torch")
    a = _run(torch, "cross_entropy", x, t, **kw)
    np.testing.assert_array_equal(a[0], loss)
    np.testing.assert_array_equal(a[1], grad)


# ---------------------------------------------------------------------------------------------
# 3. float16 reductions: torch's CPU nll_loss adds half partial sums in a cascade of levels
# (16 terms a level), rounding to half at every step, and divides by a half total weight

def _torch_half_nll(p, w, ignored, reduction):
    """A scalar transcription of torch's nll_loss_out_frame for Half (LossNLL.cpp)."""
    b_size = len(p)
    levels = 8
    power = max(4, (b_size - 1).bit_length() // levels if b_size > 1 else 0)
    mask = (1 << power) - 1
    ls, ws = [H(0)] * levels, [H(0)] * levels
    n_ign = 0
    for b in range(b_size):
        if ignored[b]:
            n_ign += 1
            continue
        if w is not None:
            ls[0] = H(F32(ls[0]) - F32(H(F32(p[b]) * F32(w[b]))))
            ws[0] = H(F32(ws[0]) + F32(w[b]))
        else:
            ls[0] = H(F32(ls[0]) - F32(p[b]))
        for j in range(levels - 1):
            if b & (mask << (j * power)):
                break
            ws[j + 1], ls[j + 1] = H(F32(ws[j + 1]) + F32(ws[j])), H(F32(ls[j + 1]) + F32(ls[j]))
            ws[j], ls[j] = H(0), H(0)
    tw = H(b_size - n_ign)
    if w is not None:
        tw = H(0)
        for v in ws:
            tw = H(F32(tw) + F32(v))
    out = H(0)
    for v in ls:
        out = H(F32(out) + F32(v))
    return H(F32(out) / F32(tw)) if reduction == "mean" else out


def _half_case(n=3000, c=7, seed=0):
    rs = np.random.RandomState(seed)
    lp = (-rs.rand(n, c) * 5).astype(H)
    t = rs.randint(0, c, n)
    w = (rs.rand(c) * 3).astype(H)
    return lp, t, w


def test_half_nll_sum_known_value():
    # log-probabilities -k/8 (k = 0..15 cycling), exact in half; 3000 rows
    n = 3000
    lp = np.zeros((n, 2), H)
    lp[:, 0] = -(np.arange(n) % 16).astype(H) / H(8)
    t = np.zeros(n, np.int64)
    exact = float((np.arange(n) % 16).sum()) / 8
    s = F.nll_loss(tg.tensor(lp), tg.tensor(t), reduction="sum")
    assert s.dtype == tg.float16
    ref = _torch_half_nll(lp[:, 0], None, np.zeros(n, bool), "sum")
    assert s.item() == float(ref)
    assert abs(s.item() - exact) <= 1e-3 * exact      # (half rounding, not a wrong sum)
    torch = pytest.importorskip("torch")
    a = torch.nn.functional.nll_loss(torch.tensor(lp), torch.tensor(t), reduction="sum")
    assert a.item() == s.item()


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 3])
def test_half_nll_matches_torch_cascade(reduction, weighted, ignore_index):
    lp, t, w = _half_case()
    kw = dict(reduction=reduction, ignore_index=ignore_index, weight=w if weighted else None)
    loss, grad, err = _run(tg, "nll_loss", lp, t, **kw)
    assert err is None and loss.dtype == H and grad.dtype == H
    ref = _torch_half_nll(lp[np.arange(len(t)), t], w[t] if weighted else None,
                          t == ignore_index, reduction)
    assert loss == ref
    torch = pytest.importorskip("torch")
    a = _run(torch, "nll_loss", lp, t, **kw)
    assert a[0] == loss
    np.testing.assert_array_equal(a[1], grad)


# (nll_loss only: tapegrad's float16 log_softmax is not yet torch's, so cross_entropy differs)
@pytest.mark.parametrize("fn", ["nll_loss"])
@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 3])
@pytest.mark.parametrize("spatial", [False, True])
def test_half_nll_forward_backward_vs_torch(fn, reduction, weighted, ignore_index, spatial):
    torch = pytest.importorskip("torch")
    lp, t, w = _half_case(n=2000)
    if spatial:     # (20, C, 10, 10) against (20, 10, 10): nll_loss2d
        lp = np.ascontiguousarray(lp.reshape(20, 100, -1).transpose(0, 2, 1).reshape(20, -1, 10, 10))
        t = t.reshape(20, 10, 10)
    kw = dict(reduction=reduction, ignore_index=ignore_index, weight=w if weighted else None)
    gout = None
    res = []
    for mod in (torch, tg):
        x = mod.tensor(lp, requires_grad=True)
        kw2 = dict(kw, weight=mod.tensor(w) if weighted else None)
        loss = getattr(mod.nn.functional, fn)(x, mod.tensor(t), **kw2)
        if gout is None:
            gout = np.asarray(np.random.RandomState(5).rand(*loss.shape)).astype(H) + H(0.5)
        loss.backward(mod.tensor(gout))
        res.append((loss.detach().numpy(), x.grad.numpy()))
    (la, ga), (lb, gb) = res
    assert la.dtype == lb.dtype == H and ga.dtype == gb.dtype == H
    np.testing.assert_array_equal(la, lb)
    np.testing.assert_array_equal(ga, gb)


@pytest.mark.parametrize("dtype", [F32, np.float64])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_weighted_mean_backward_rounding_vs_torch(dtype, reduction):
    # torch's nll_loss_backward: weight * -(grad / total_weight), in that order
    torch = pytest.importorskip("torch")
    rs = np.random.RandomState(3)
    lp = rs.randn(50, 7).astype(dtype)
    t = rs.randint(0, 7, 50)
    w = (rs.randint(1, 12, 7) / 4).astype(dtype)    # (total weights exact either way)
    res = []
    for mod in (torch, tg):
        x = mod.tensor(lp, requires_grad=True)
        loss = mod.nn.functional.nll_loss(x, mod.tensor(t), weight=mod.tensor(w), reduction=reduction)
        loss.backward(mod.tensor(np.array(0.7, dtype)))
        res.append(x.grad.numpy())
    np.testing.assert_array_equal(res[0], res[1])
