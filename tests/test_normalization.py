"""Normalization layers and embedding: LayerNorm, BatchNorm1d/2d, GroupNorm, RMSNorm, Embedding
and their functional forms.

Against torch (the ``torch`` fixture skips cleanly without it): the same weights give the same
outputs, gradients, running statistics over several steps, eval-mode outputs, state_dict keys,
reprs, graph node names (first and second order) and exception types. Without torch: gradcheck
and gradgradcheck, third derivatives, version-counter behaviour, and the cases where torch 2.13
itself is wrong or fails (group_norm with a bias and no weight; embedding's double backward with
scale_grad_by_freq; third derivatives of layer_norm).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import nn
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.nn import functional as F

RTOL, ATOL = 1e-5, 1e-5


def _np(t):
    return t.detach().numpy()


def _close(a, b, rtol=RTOL, atol=ATOL, what=""):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, err_msg=what)


def _randomize(module, torch, seed=0):
    """Random values for a torch module's floating parameters and buffers (positive running
    variances), so that copied weights are not all ones and zeros."""
    g = np.random.default_rng(seed)
    with torch.no_grad():
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            if not t.dtype.is_floating_point:
                continue
            v = g.uniform(0.5, 1.5, t.shape) if "var" in name else g.normal(size=t.shape)
            t.copy_(torch.from_numpy(v.astype(np.float32)))


def _copy_from(torch_module, ours):
    """Load torch's state_dict into ours (values shared by key, as a checkpoint would)."""
    res = ours.load_state_dict({k: tg.tensor(v.numpy()) for k, v in
                                torch_module.state_dict().items()})
    assert not res.missing_keys and not res.unexpected_keys


def _pair(torch, make, seed=0):
    """``make(lib)`` in both libraries, torch's weights randomized and copied into ours."""
    theirs = make(torch)
    _randomize(theirs, torch, seed)
    ours = make(tg)
    _copy_from(theirs, ours)
    return ours, theirs


def _run_both(ours, theirs, x, torch, cot_seed=1):
    """Forward both on array ``x`` (requires grad), backward a random cotangent; returns the
    two inputs and outputs."""
    xo = tg.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    cot = np.random.default_rng(cot_seed).normal(size=tuple(yt.shape)).astype(np.float32)
    (yo * tg.tensor(cot)).sum().backward()
    (yt * torch.tensor(cot)).sum().backward()
    return xo, xt, yo, yt


def _check_grads(ours, theirs, xo, xt):
    _close(xo.grad, xt.grad, what="input grad")
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        if tp[name].grad is None:
            assert p.grad is None, name
        else:
            _close(p.grad, tp[name].grad, what=f"grad of {name}")


# ---- modules against torch: values and gradients ------------------------------------------------
LAYERS = {
    "LayerNorm": (lambda lib: lib.nn.LayerNorm(4), (2, 3, 4)),
    "LayerNorm_2dims_eps": (lambda lib: lib.nn.LayerNorm([3, 4], eps=1e-3), (2, 3, 4)),
    "LayerNorm_no_bias": (lambda lib: lib.nn.LayerNorm(4, bias=False), (5, 4)),
    "LayerNorm_no_affine": (lambda lib: lib.nn.LayerNorm(4, elementwise_affine=False), (2, 4)),
    "GroupNorm": (lambda lib: lib.nn.GroupNorm(2, 6), (3, 6, 5)),
    "GroupNorm_4d": (lambda lib: lib.nn.GroupNorm(3, 6, eps=1e-3), (2, 6, 2, 3)),
    "GroupNorm_no_affine": (lambda lib: lib.nn.GroupNorm(1, 4, affine=False), (2, 4)),
    "RMSNorm": (lambda lib: lib.nn.RMSNorm(4), (2, 3, 4)),
    "RMSNorm_2dims_eps": (lambda lib: lib.nn.RMSNorm((3, 4), eps=1e-4), (2, 3, 4)),
    "RMSNorm_no_affine": (lambda lib: lib.nn.RMSNorm(4, elementwise_affine=False), (3, 4)),
    "BatchNorm1d_2d": (lambda lib: lib.nn.BatchNorm1d(3), (6, 3)),
    "BatchNorm1d_3d": (lambda lib: lib.nn.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
    "BatchNorm1d_no_affine": (lambda lib: lib.nn.BatchNorm1d(3, affine=False), (4, 3)),
    "BatchNorm1d_no_bias": (lambda lib: lib.nn.BatchNorm1d(3, bias=False), (4, 3)),
    "BatchNorm2d": (lambda lib: lib.nn.BatchNorm2d(3, eps=1e-3), (2, 3, 4, 4)),
    "BatchNorm2d_no_stats": (lambda lib: lib.nn.BatchNorm2d(3, track_running_stats=False),
                             (2, 3, 2, 3)),
}


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("key", list(LAYERS))
def test_layer_matches_torch(key, mode, torch):
    make, shape = LAYERS[key]
    ours, theirs = _pair(torch, make)
    if mode == "eval":
        ours.eval()
        theirs.eval()
    x = np.random.default_rng(2).normal(size=shape).astype(np.float32) * 2 + 0.5
    xo, xt, yo, yt = _run_both(ours, theirs, x, torch)
    assert str(yo.dtype) == "tapegrad.float32" and tuple(yo.shape) == tuple(yt.shape)
    assert type(yo.grad_fn).__name__ == type(yt.grad_fn).__name__
    _close(yo, yt, what="output")
    _check_grads(ours, theirs, xo, xt)
    for name, b in theirs.named_buffers():
        _close(getattr(ours, name), b, what=name)


def test_batchnorm_running_stats_over_steps(torch):
    for momentum in (0.1, None, 0.5):
        ours, theirs = _pair(torch, lambda lib: lib.nn.BatchNorm1d(4, momentum=momentum))
        rng = np.random.default_rng(3)
        for step in range(5):
            x = (rng.normal(size=(8, 4, 3)) * (step + 1) + step).astype(np.float32)
            _run_both(ours, theirs, x, torch, cot_seed=step)
            _close(ours.running_mean, theirs.running_mean, what=f"mean step {step}")
            _close(ours.running_var, theirs.running_var, what=f"var step {step}")
            assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == step + 1
            _close(ours.weight.grad, theirs.weight.grad)
        ours.eval()
        theirs.eval()
        x = rng.normal(size=(2, 4, 3)).astype(np.float32)
        xo, xt, yo, yt = _run_both(ours, theirs, x, torch)
        _close(yo, yt, what="eval output")
        _close(xo.grad, xt.grad, what="eval input grad")
        assert int(ours.num_batches_tracked) == 5   # eval does not count


def test_batchnorm2d_steps_and_state_dict_roundtrip(torch):
    ours, theirs = _pair(torch, lambda lib: lib.nn.BatchNorm2d(2, momentum=None))
    rng = np.random.default_rng(4)
    for _ in range(3):
        _run_both(ours, theirs, rng.normal(size=(3, 2, 2, 2)).astype(np.float32), torch)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd)
    for k in tsd:
        np.testing.assert_allclose(sd[k].numpy(), tsd[k].numpy(), rtol=1e-5, atol=1e-6)
    fresh = nn.BatchNorm2d(2)
    fresh.load_state_dict(sd)
    assert int(fresh.num_batches_tracked) == 3
    back = torch.nn.BatchNorm2d(2)
    back.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in sd.items()})
    np.testing.assert_allclose(back.running_var.numpy(), theirs.running_var.numpy(), rtol=1e-6)


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval(torch):
    ours, theirs = _pair(torch, lambda lib: lib.nn.BatchNorm1d(3, track_running_stats=False))
    ours.eval()
    theirs.eval()
    x = np.random.default_rng(5).normal(size=(5, 3)).astype(np.float32)
    xo, xt, yo, yt = _run_both(ours, theirs, x, torch)
    _close(yo, yt)
    _close(xo.grad, xt.grad)
    assert ours.running_mean is None and ours.num_batches_tracked is None


def test_batchnorm_reset_running_stats():
    bn = nn.BatchNorm1d(2)
    bn(tg.randn(4, 2) * 3 + 1)
    bn.reset_running_stats()
    assert bn.running_mean.tolist() == [0.0, 0.0] and bn.running_var.tolist() == [1.0, 1.0]
    assert int(bn.num_batches_tracked) == 0


# ---- embedding against torch --------------------------------------------------------------------
EMBEDDINGS = {
    "plain": dict(),
    "padding": dict(padding_idx=2),
    "padding_negative": dict(padding_idx=-1),
    "scale_grad_by_freq": dict(scale_grad_by_freq=True, padding_idx=0),
    "max_norm": dict(max_norm=1.0),
    "max_norm_l1": dict(max_norm=2.0, norm_type=1.0),
}


@pytest.mark.parametrize("key", list(EMBEDDINGS))
def test_embedding_matches_torch(key, torch):
    kw = EMBEDDINGS[key]
    ours, theirs = _pair(torch, lambda lib: lib.nn.Embedding(6, 3, **kw))
    idx = np.array([[0, 2, 2, 5], [1, 5, 5, 5]], np.int64)
    yo, yt = ours(tg.tensor(idx)), theirs(torch.tensor(idx))
    assert type(yo.grad_fn).__name__ == type(yt.grad_fn).__name__ == "EmbeddingBackward0"
    _close(yo, yt)
    _close(ours.weight, theirs.weight, what="weight after the forward (max_norm renorm)")
    assert ours.weight._version == theirs.weight._version
    cot = np.random.default_rng(6).normal(size=tuple(yt.shape)).astype(np.float32)
    (yo * tg.tensor(cot)).sum().backward()
    (yt * torch.tensor(cot)).sum().backward()
    _close(ours.weight.grad, theirs.weight.grad)


def test_embedding_padding_row_init_and_zero_grad():
    emb = nn.Embedding(5, 4, padding_idx=-2)
    assert emb.padding_idx == 3
    assert not emb.weight._data[3].any() and emb.weight._data[[0, 1, 2, 4]].all()
    emb(tg.tensor([[3, 1], [3, 3]])).sum().backward()
    assert not emb.weight.grad._data[3].any() and (emb.weight.grad._data[1] == 1).all()


def test_embedding_from_pretrained(torch):
    w = tg.randn(4, 3)
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad and np.shares_memory(emb.weight._data, w._data)
    assert emb(tg.tensor([1, 1])).grad_fn is None
    emb = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1)
    assert emb.weight.requires_grad and emb.padding_idx == 1
    assert emb.weight._data[1].any()            # the given row is kept, as torch
    tw = torch.from_numpy(w.numpy().copy())
    assert repr(emb) == repr(torch.nn.Embedding.from_pretrained(tw, freeze=False, padding_idx=1))
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.Embedding.from_pretrained(tg.randn(4))
    with pytest.raises(AssertionError, match="Shape of weight"):
        nn.Embedding(3, 3, _weight=tg.randn(4, 3))


def test_embedding_shapes_and_dtypes():
    w = tg.randn(5, 2, dtype=tg.float64, requires_grad=True)
    assert F.embedding(tg.tensor(4), w).shape == (2,)
    y = F.embedding(tg.tensor([[1, 2, 3]], dtype=tg.int32), w)
    assert y.shape == (1, 3, 2) and y.dtype == tg.float64
    assert F.embedding(tg.tensor([1]), tg.tensor([[1, 2], [3, 4]])).tolist() == [[3, 4]]


def test_embedding_sparse_raises_when_a_gradient_would_be_recorded():
    emb = nn.Embedding(4, 2, sparse=True)
    assert "sparse=True" in repr(emb)
    with pytest.raises(NotImplementedError, match="sparse"):
        emb(tg.tensor([1, 2]))
    with tg.no_grad():
        assert emb(tg.tensor([1, 2])).shape == (2, 2)


# ---- repr, parameters, buffers, state_dict keys -------------------------------------------------
CONFIGS = [
    lambda lib: lib.nn.LayerNorm(4),
    lambda lib: lib.nn.LayerNorm((2, 3), eps=1e-3, elementwise_affine=False),
    lambda lib: lib.nn.LayerNorm(4, bias=False),
    lambda lib: lib.nn.BatchNorm1d(3),
    lambda lib: lib.nn.BatchNorm1d(3, momentum=None, affine=False),
    lambda lib: lib.nn.BatchNorm1d(3, bias=False, track_running_stats=False),
    lambda lib: lib.nn.BatchNorm2d(5, eps=1e-3, momentum=0.2),
    lambda lib: lib.nn.GroupNorm(2, 4),
    lambda lib: lib.nn.GroupNorm(1, 3, affine=False),
    lambda lib: lib.nn.GroupNorm(3, 3, bias=False),
    lambda lib: lib.nn.RMSNorm(4),
    lambda lib: lib.nn.RMSNorm([2, 3], eps=1e-6, elementwise_affine=False),
    lambda lib: lib.nn.Embedding(10, 3),
    lambda lib: lib.nn.Embedding(10, 3, padding_idx=-1, max_norm=2, norm_type=1.0,
                                 scale_grad_by_freq=True),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3),
                                  lib.nn.LayerNorm(3)),
]


def _dtype_name(t):
    return str(t.dtype).rpartition(".")[2]


@pytest.mark.parametrize("k", range(len(CONFIGS)))
def test_repr_parameters_buffers_state_dict_like_torch(k, torch):
    ours, theirs = CONFIGS[k](tg), CONFIGS[k](torch)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert list(ours._parameters) == list(theirs._parameters)
    assert list(ours._buffers) == list(theirs._buffers)
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == tn and tuple(p.shape) == tuple(tp.shape) and p.requires_grad
    for (n, b), (tn, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        assert n == tn and _dtype_name(b) == _dtype_name(tb)
        np.testing.assert_array_equal(b.numpy(), tb.numpy())
    for name in ("eps", "momentum", "affine", "track_running_stats", "normalized_shape",
                 "elementwise_affine", "num_groups", "num_channels", "num_features",
                 "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"):
        if hasattr(theirs, name):
            assert getattr(ours, name) == getattr(theirs, name), name


def test_init_values():
    ln, bn, gn, rms = nn.LayerNorm(3), nn.BatchNorm2d(3), nn.GroupNorm(1, 3), nn.RMSNorm(3)
    for m in (ln, bn, gn, rms):
        assert m.weight.tolist() == [1.0, 1.0, 1.0]
    for m in (ln, bn, gn):
        assert m.bias.tolist() == [0.0, 0.0, 0.0]
    assert bn.num_batches_tracked.dtype == tg.int64 and bn.num_batches_tracked.shape == ()
    tg.manual_seed(0)
    w = nn.Embedding(200, 50).weight._data
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02


def test_double_converts_buffers_but_not_the_batch_count():
    bn = nn.BatchNorm1d(2).double()
    assert bn.running_mean.dtype == tg.float64 and bn.num_batches_tracked.dtype == tg.int64
    y = bn(tg.randn(3, 2, dtype=tg.float64))
    assert y.dtype == tg.float64 and int(bn.num_batches_tracked) == 1


# ---- graph structure against torch --------------------------------------------------------------
def _names(fn):
    return [None if f is None else type(f).__name__ for f, _ in fn.next_functions]


def _graph_cases(lib, x, w, b, rm, rv):
    Fn = lib.nn.functional
    return [
        lambda: Fn.layer_norm(x, (4,), w, b),
        lambda: Fn.layer_norm(x, (4,), None, b),
        lambda: Fn.layer_norm(x.detach(), (4,), w, None),
        lambda: Fn.batch_norm(x, rm, rv, w, b, True),
        lambda: Fn.batch_norm(x, rm, rv, None, None, False),
        lambda: Fn.batch_norm(x.detach(), None, None, w, None, True),
        lambda: Fn.group_norm(x, 2, w, b),
        lambda: Fn.group_norm(x, 4),
        lambda: Fn.rms_norm(x, (4,), w),
        lambda: Fn.rms_norm(x, (4, 4)),
        lambda: Fn.embedding(lib.tensor([[1, 2], [2, 3]]), x[0]),
        lambda: lib.layer_norm(x, [4], w, b, 1e-5, False),
        lambda: lib.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, False),
        lambda: lib.group_norm(x, 1, w, b, 1e-5, False),
        lambda: lib.rms_norm(x, [4], None, 1e-3),
        lambda: lib.embedding(x[0], lib.tensor([1, 2]), 1),
    ]


def _inputs(lib):
    rng = np.random.default_rng(7)
    x = lib.tensor(rng.normal(size=(2, 4, 3, 4)).astype(np.float32)[:, :, 0], requires_grad=True)
    w = lib.tensor(rng.normal(size=4).astype(np.float32), requires_grad=True)
    b = lib.tensor(rng.normal(size=4).astype(np.float32), requires_grad=True)
    return x, w, b, lib.zeros(4), lib.ones(4)


def test_graph_nodes_match_torch(torch):
    ours = _graph_cases(tg, *_inputs(tg))
    theirs = _graph_cases(torch, *_inputs(torch))
    for k, (fo, ft) in enumerate(zip(ours, theirs)):
        yo, yt = fo(), ft()
        assert type(yo.grad_fn).__name__ == type(yt.grad_fn).__name__, k
        assert _names(yo.grad_fn) == _names(yt.grad_fn), k
        if type(yt.grad_fn).__name__ == "MulBackward0":     # rms_norm's composite, two deep
            fo2, ft2 = yo.grad_fn.next_functions[0][0], yt.grad_fn.next_functions[0][0]
            if fo2 is not None and ft2 is not None:
                assert _names(fo2) == _names(ft2), k
        _close(yo, yt, what=str(k))


def test_second_order_nodes_match_torch(torch):
    for lib in (tg, torch):
        x, w, b, rm, rv = _inputs(lib)
        Fn = lib.nn.functional
        names = []
        for y in (Fn.layer_norm(x, (4,), w, b), Fn.batch_norm(x, rm, rv, w, b, True),
                  Fn.batch_norm(x, rm, rv, w, b, False), Fn.group_norm(x, 2, w, b),
                  Fn.embedding(lib.tensor([1, 0, 1]), w.reshape(2, 2))):
            leaves = [t for t in (x, w, b) if t is not None]
            gs = lib.autograd.grad((y * y * y).sum(), leaves, create_graph=True,
                                   allow_unused=True)
            names.append([None if g is None else type(g.grad_fn).__name__ for g in gs])
        if lib is tg:
            ours = names
    assert ours == names


def test_double_backward_values_match_torch(torch):
    """Second derivatives (through the backward primitives) against torch's double backward."""
    res = []
    for lib in (tg, torch):
        x, w, b, rm, rv = _inputs(lib)
        x = x.double().detach().requires_grad_()
        w, b = w.double().detach().requires_grad_(), b.double().detach().requires_grad_()
        rm, rv = rm.double(), rv.double()
        Fn = lib.nn.functional
        out = []
        for fn in (lambda: Fn.layer_norm(x, (4,), w, b), lambda: Fn.batch_norm(x, rm, rv, w, b,
                                                                               True),
                   lambda: Fn.batch_norm(x, rm, rv, w, b, False),
                   lambda: Fn.group_norm(x, 2, w, b)):
            y = fn()
            gx, gw, gb = lib.autograd.grad((y * y * y).sum(), (x, w, b), create_graph=True)
            out.append([_np(t) for t in lib.autograd.grad(
                (gx * gx).sum() + (gw * gw * gw).sum() + (gb * gw).sum(), (x, w, b))])
        res.append(out)
    for k, (a, t) in enumerate(zip(*res)):
        for i, (u, v) in enumerate(zip(a, t)):
            np.testing.assert_allclose(u, v, rtol=1e-9, atol=1e-9, err_msg=f"case {k} input {i}")


# ---- versions and in-place semantics -------------------------------------------------------------
def test_running_stats_update_keeps_versions_and_saved_stats_are_checked(torch):
    for lib in (tg, torch):
        x = lib.randn(4, 3, requires_grad=True)
        rm, rv = lib.zeros(3), lib.ones(3)
        y = lib.nn.functional.batch_norm(x, rm, rv, training=True)
        assert rm._version == 0 and rv._version == 0 and rm.abs().sum() > 0
        y.sum().backward()
        y = lib.nn.functional.batch_norm(x, rm, rv, training=True)
        with lib.no_grad():
            rm.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        y = lib.nn.functional.batch_norm(x, rm, rv, training=False)
        with lib.no_grad():
            rv.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_two_training_forwards_then_one_backward(torch):
    versions = []
    for lib in (tg, torch):
        bn = lib.nn.BatchNorm1d(3)
        x = lib.randn(5, 3, requires_grad=True)
        (bn(x).sum() + bn(x * 2).pow(2).sum()).backward()
        assert int(bn.num_batches_tracked) == 2
        # reset_running_stats bumps each buffer once; the kernel's update does not, and each
        # batch count is one add_
        versions.append((bn.running_mean._version, bn.running_var._version,
                         bn.num_batches_tracked._version))
    assert versions[0] == versions[1] == (1, 1, 3)


def test_embedding_indices_and_max_norm_versions(torch):
    for lib in (tg, torch):
        w = lib.randn(5, 3, requires_grad=True)
        i = lib.tensor([1, 2])
        y = lib.nn.functional.embedding(i, w)
        i.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        w2 = lib.randn(5, 3, requires_grad=True)
        lib.nn.functional.embedding(lib.tensor([0, 1]), w2, max_norm=0.1)
        lib.nn.functional.embedding(lib.tensor([0, 1]), w2, max_norm=0.1)
        assert w2._version == 2
        assert float(w2.detach()[0].norm()) <= 0.1 + 1e-6
    # a graph that saved the weight sees the renorm as an in-place change
    w = tg.randn(4, 2, requires_grad=True)
    y = (w * w).sum()
    F.embedding(tg.tensor([0]), w, max_norm=0.01)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


# ---- gradcheck, double and third derivatives (no torch) -----------------------------------------
def _t(*shape, seed=0, low=-2.0, high=2.0):
    a = np.random.default_rng(seed).uniform(low, high, size=shape)
    return tg.tensor(a, requires_grad=True)


def test_group_norm_bias_without_weight_gradcheck():
    # torch 2.13's backward fails here ("tensor does not have a device"); ours is checked
    x, b = _t(3, 4, 2, seed=1), _t(4, seed=2)
    assert gradcheck(lambda x, b: F.group_norm(x, 2, None, b), (x, b))
    assert gradgradcheck(lambda x, b: F.group_norm(x, 2, None, b), (x, b))
    y = F.group_norm(x, 2, None, b)
    y.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 6.0))


@pytest.mark.parametrize("case", ["layer_norm", "batch_norm_train", "batch_norm_eval",
                                  "group_norm"])
def test_third_derivatives(case):
    """gradgradcheck of the first-order gradient function: third derivatives. (torch 2.13 fails
    this for layer_norm: its double backward treats the saved statistics as constants.)"""
    x, w = _t(4, 3, 2, seed=3), _t(3, seed=4)
    rm, rv = tg.tensor(np.zeros(3)), tg.tensor(np.full(3, 1.5))

    def f(x, w):
        if case == "layer_norm":
            return F.layer_norm(x, (3, 2), w.unsqueeze(1).expand(3, 2))
        if case == "group_norm":
            return F.group_norm(x, 1, w)
        return F.batch_norm(x, rm, rv, w, None, case == "batch_norm_train")

    def first(x, w):
        y = f(x, w)
        return tg.autograd.grad((y * y * y).sum(), (x, w), create_graph=True)

    assert gradcheck(first, (x, w))
    assert gradgradcheck(first, (x, w))


def test_embedding_double_backward_is_exact_with_scale_grad_by_freq():
    # torch's embedding_dense_double_backward leaves out the 1/count scale; ours keeps it
    w = _t(5, 2, seed=5)
    idx = tg.tensor([[1, 2, 1], [3, 1, 0]])
    assert gradgradcheck(lambda w: F.embedding(idx, w, padding_idx=3, scale_grad_by_freq=True),
                         (w,))
    y = F.embedding(idx, w, scale_grad_by_freq=True)
    g, = tg.autograd.grad((y * y).sum(), (w,), create_graph=True)
    gg, = tg.autograd.grad(g.sum(), (w,))
    # the cotangent's rows read back at the indices keep the 1/count scale (1/3 for row 1,
    # at 3 positions), and y's backward scales again: 3 * (2 / 3) / 3 (torch gives 2 here,
    # leaving out the first scale, which its own gradgradcheck flags)
    np.testing.assert_allclose(gg.numpy()[1], [2 / 3, 2 / 3])
    np.testing.assert_allclose(gg.numpy()[4], [0.0, 0.0])


def test_rms_norm_gradgradcheck_and_float16(torch):
    x, w = _t(2, 3, 4, seed=6), _t(4, seed=7)
    assert gradgradcheck(lambda x, w: F.rms_norm(x, (3, 4), w.expand(3, 4)), (x, w))
    a = np.random.default_rng(8).normal(size=(3, 4)).astype(np.float16)
    for lib in (tg, torch):
        xs = lib.tensor(a, requires_grad=True)
        y = lib.nn.functional.rms_norm(xs, [4])
        y.sum().backward()
        if lib is tg:
            ours = (y, xs.grad, type(y.grad_fn).__name__)
    assert ours[2] == type(y.grad_fn).__name__ == "ToCopyBackward0"
    assert ours[0].dtype == tg.float16
    np.testing.assert_allclose(_np(ours[0]).astype(np.float32), _np(y).astype(np.float32),
                               rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(_np(ours[1]).astype(np.float32), _np(xs.grad).astype(np.float32),
                               rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("op", ["layer_norm", "batch_norm", "group_norm"])
def test_float16_input_with_float32_parameters(op, torch):
    a = np.random.default_rng(9).normal(size=(4, 4)).astype(np.float16)
    outs = []
    for lib in (tg, torch):
        x = lib.tensor(a, requires_grad=True)
        w = lib.ones(4, requires_grad=True)
        Fn = lib.nn.functional
        y = {"layer_norm": lambda: Fn.layer_norm(x, (4,), w),
             "batch_norm": lambda: Fn.batch_norm(x, None, None, w, None, True),
             "group_norm": lambda: Fn.group_norm(x, 2, w)}[op]()
        (y.float() * lib.arange(16.0).reshape(4, 4)).sum().backward()
        outs.append((y, x.grad, w.grad))
    for a_, b_ in zip(*outs):
        assert _dtype_name(a_) == _dtype_name(b_)
        np.testing.assert_allclose(_np(a_).astype(np.float32), _np(b_).astype(np.float32),
                                   rtol=2e-3, atol=2e-3)


def test_empty_inputs(torch):
    for lib in (tg, torch):
        Fn = lib.nn.functional
        x = lib.zeros(0, 3, requires_grad=True)
        rm, rv = lib.zeros(3), lib.ones(3)
        assert Fn.batch_norm(x, rm, rv, training=True).shape == (0, 3)
        assert rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3
        y = Fn.layer_norm(x, (3,), lib.ones(3, requires_grad=True))
        y.sum().backward()
        assert x.grad.shape == (0, 3)
        assert Fn.group_norm(lib.zeros(0, 4), 2).shape == (0, 4)


# ---- errors: torch's exception types ------------------------------------------------------------
def _bn_train(lib, shape):
    return lib.nn.functional.batch_norm(lib.randn(*shape), lib.zeros(shape[1]),
                                        lib.ones(shape[1]), training=True)


ERRORS = {
    "layer_norm_shape": lambda lib: lib.nn.functional.layer_norm(lib.randn(2, 3, 5), (4,)),
    "layer_norm_long_shape": lambda lib: lib.nn.functional.layer_norm(lib.randn(3, 5),
                                                                      (2, 3, 5)),
    "layer_norm_int_shape": lambda lib: lib.nn.functional.layer_norm(lib.randn(3, 5), 5),
    "layer_norm_float_shape": lambda lib: lib.nn.functional.layer_norm(lib.randn(3, 5),
                                                                       (5.0,)),
    "layer_norm_empty_shape": lambda lib: lib.nn.functional.layer_norm(lib.randn(3, 5), ()),
    "layer_norm_weight": lambda lib: lib.nn.functional.layer_norm(lib.randn(3, 5), (5,),
                                                                  lib.ones(4)),
    "layer_norm_bias": lambda lib: lib.nn.functional.layer_norm(lib.randn(3, 5), (5,), None,
                                                                lib.ones(4)),
    "layer_norm_list_weight": lambda lib: lib.nn.functional.layer_norm(lib.randn(3, 2), (2,),
                                                                       [1.0, 1.0]),
    "layer_norm_int_input": lambda lib: lib.nn.functional.layer_norm(
        lib.ones(2, 3, dtype=lib.int64), (3,)),
    "layer_norm_mixed_dtype": lambda lib: lib.nn.functional.layer_norm(
        lib.randn(2, 3), (3,), lib.ones(3, dtype=lib.float64)),
    "LayerNorm_wrong_input": lambda lib: lib.nn.LayerNorm(4)(lib.randn(2, 3)),
    "batch_norm_running_mean_size": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(2, 3), lib.zeros(4), lib.ones(3)),
    "batch_norm_running_var_size": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(2, 3), lib.zeros(3), lib.ones(4)),
    "batch_norm_weight_size": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(2, 3), lib.zeros(3), lib.ones(3), lib.ones(2)),
    "batch_norm_eval_no_mean": lambda lib: lib.nn.functional.batch_norm(lib.randn(2, 3), None,
                                                                        None),
    "batch_norm_eval_no_var": lambda lib: lib.nn.functional.batch_norm(lib.randn(2, 3),
                                                                       lib.zeros(3), None),
    "batch_norm_batch_1": lambda lib: _bn_train(lib, (1, 3)),
    "batch_norm_batch_1_3d": lambda lib: _bn_train(lib, (1, 3, 1)),
    "batch_norm_1d_train": lambda lib: lib.nn.functional.batch_norm(lib.randn(3), None, None,
                                                                    training=True),
    "batch_norm_int_input": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(2, 3, dtype=lib.int64), lib.zeros(3), lib.ones(3)),
    "batch_norm_list_stats": lambda lib: lib.nn.functional.batch_norm(lib.randn(2, 3),
                                                                      [0.0] * 3, None),
    "batch_norm_mixed_dtype": lambda lib: lib.nn.functional.batch_norm(
        lib.randn(2, 3), None, None, lib.ones(3, dtype=lib.float64), training=True),
    "BatchNorm1d_4d": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 3, 2, 2)),
    "BatchNorm1d_1d": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(3)),
    "BatchNorm2d_3d": lambda lib: lib.nn.BatchNorm2d(3)(lib.randn(3, 2, 2)),
    "BatchNorm2d_batch_1": lambda lib: lib.nn.BatchNorm2d(3)(lib.randn(1, 3, 1, 1)),
    "BatchNorm1d_batch_1": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(1, 3)),
    "BatchNorm1d_channels": lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 4)),
    "group_norm_divisible": lambda lib: lib.nn.functional.group_norm(lib.randn(2, 3, 5), 2),
    "group_norm_weight": lambda lib: lib.nn.functional.group_norm(lib.randn(2, 3, 5), 3,
                                                                  lib.ones(4)),
    "group_norm_1d": lambda lib: lib.nn.functional.group_norm(lib.randn(3), 3),
    "group_norm_int_input": lambda lib: lib.nn.functional.group_norm(
        lib.ones(2, 4, dtype=lib.int64), 2),
    "GroupNorm_ctor": lambda lib: lib.nn.GroupNorm(2, 3),
    "GroupNorm_channels": lambda lib: lib.nn.GroupNorm(1, 3)(lib.randn(2, 4)),
    "rms_norm_shape": lambda lib: lib.nn.functional.rms_norm(lib.randn(2, 3, 5), (4,)),
    "rms_norm_weight": lambda lib: lib.nn.functional.rms_norm(lib.randn(2, 5), (5,),
                                                              lib.ones(4)),
    "rms_norm_empty_shape": lambda lib: lib.nn.functional.rms_norm(lib.randn(2, 5), []),
    "rms_norm_int_input": lambda lib: lib.nn.functional.rms_norm(
        lib.ones(2, 3, dtype=lib.int64), (3,)),
    "RMSNorm_wrong_input": lambda lib: lib.nn.RMSNorm(4)(lib.randn(2, 3)),
    "embedding_out_of_range": lambda lib: lib.nn.functional.embedding(lib.tensor([5]),
                                                                      lib.randn(5, 2)),
    "embedding_negative": lambda lib: lib.nn.functional.embedding(lib.tensor([-1]),
                                                                  lib.randn(5, 2)),
    "embedding_float_indices": lambda lib: lib.nn.functional.embedding(lib.tensor([1.0]),
                                                                       lib.randn(5, 2)),
    "embedding_uint8_indices": lambda lib: lib.nn.functional.embedding(
        lib.tensor([1], dtype=lib.uint8), lib.randn(5, 2)),
    "embedding_list_indices": lambda lib: lib.nn.functional.embedding([1, 2], lib.randn(5, 2)),
    "embedding_weight_1d": lambda lib: lib.nn.functional.embedding(lib.tensor([1]),
                                                                   lib.randn(5)),
    "embedding_padding_too_big": lambda lib: lib.nn.functional.embedding(
        lib.tensor([1]), lib.randn(5, 2), padding_idx=5),
    "embedding_padding_too_small": lambda lib: lib.nn.functional.embedding(
        lib.tensor([1]), lib.randn(5, 2), padding_idx=-6),
    "Embedding_padding": lambda lib: lib.nn.Embedding(5, 2, padding_idx=5),
    "Embedding_out_of_range": lambda lib: lib.nn.Embedding(5, 2)(lib.tensor([[0, 7]])),
}


@pytest.mark.parametrize("key", list(ERRORS))
def test_error_types_match_torch(key, torch):
    fn = ERRORS[key]
    with pytest.raises(Exception) as ref:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(torch)
    with pytest.raises(Exception) as got:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(tg)
    assert type(got.value) is type(ref.value), (got.value, ref.value)


def test_error_messages_name_what_is_wrong():
    with pytest.raises(RuntimeError, match=r"normalized_shape=\[4\].*\[\*, 4\]"):
        F.layer_norm(tg.randn(2, 3), (4,))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(tg.randn(1, 3))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(tg.randn(3, 2, 2))
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(tg.randn(2, 3), tg.zeros(4), tg.ones(3))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(tg.randn(2, 3), 2)
    with pytest.raises(ValueError, match=r"num_channels \(3\) must be divisible"):
        nn.GroupNorm(2, 3)
    with pytest.raises(RuntimeError, match="'indices'.*embedding"):
        F.embedding(tg.tensor([1.0]), tg.randn(3, 2))
    with pytest.raises(NotImplementedError, match="LayerNormKernelImpl"):
        F.layer_norm(tg.ones(2, 3, dtype=tg.int64), (3,))
    with pytest.raises(RuntimeError, match="mixed dtype.*layer_norm"):
        F.layer_norm(tg.randn(2, 3), (3,), tg.ones(3, dtype=tg.float64))


def test_batch_norm_namespace_form_skips_the_batch_size_check(torch):
    for lib in (tg, torch):
        y = lib.batch_norm(lib.ones(1, 3), None, None, None, None, True, 0.1, 1e-5, False)
        assert y.abs().sum() == 0


def test_functional_names_are_exposed():
    for name in ("layer_norm", "batch_norm", "group_norm", "rms_norm", "embedding"):
        assert callable(getattr(F, name)) and callable(getattr(tg, name))
    assert tg.rms_norm is F.rms_norm
    assert set(["LayerNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "RMSNorm",
                "Embedding"]) <= set(nn.__all__)
