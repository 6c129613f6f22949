"""Differences from torch 2.13 found in review, now matched; each test checks tapegrad on its
own first and then (skipped without torch) against torch itself.

1. max_pool1d / max_pool2d (their return_indices forms and the MaxPool modules) under
   ``create_graph=True``: the first-order gradient requires grad even when the incoming gradient
   does not, as torch's max_pool2d_with_indices_backward takes the input (derivative: zeros), so a
   gradient penalty differentiates; the input is saved (changing it in place raises), as torch.
   The average and adaptive pools already behaved so, and are checked alongside.
2. The norms' double backward leaves out the terms of a first-order gradient that was not used,
   so a second derivative that only those terms would give is None (allow_unused), not zeros;
   layer_norm's first-order gradients are tied to its bias, and group_norm's bias gradient
   requires grad only when the incoming gradient does, as torch.
3. gather, take (and take_along_dim), masked_select and nan_to_num save their data input, and
   index_add its source when the source needs a gradient: changing one in place before backward
   raises, as torch; index_add's self and a source not requiring grad still do not.
"""
from __future__ import annotations

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.autograd.graph import FREED


def _lib_of(t):
    import importlib
    return importlib.import_module(type(t).__module__.split(".")[0])


# ---- 1. pools under create_graph ----------------------------------------------------------------
POOLS = {
    "max_pool2d": lambda L, x: L.nn.functional.max_pool2d(x, 2),
    "max_pool2d_overlap_pad": lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, 1),
    "max_pool2d_indices": lambda L, x: L.nn.functional.max_pool2d(x, 2, return_indices=True)[0],
    "max_pool2d_unbatched": lambda L, x: L.nn.functional.max_pool2d(x[0], 2, 1),
    "max_pool1d": lambda L, x: L.nn.functional.max_pool1d(x.reshape(2, 3, 16), 3, 2, 1),
    "max_pool1d_indices": lambda L, x: L.nn.functional.max_pool1d(x.reshape(2, 3, 16), 2,
                                                                  return_indices=True)[0],
    "MaxPool2d": lambda L, x: L.nn.MaxPool2d(2, 1)(x),
    "MaxPool2d_indices": lambda L, x: L.nn.MaxPool2d(2, return_indices=True)(x)[0],
    "MaxPool1d": lambda L, x: L.nn.MaxPool1d(2)(x.reshape(6, 16)),
    "avg_pool2d": lambda L, x: L.nn.functional.avg_pool2d(x, 2),
    "avg_pool1d": lambda L, x: L.nn.functional.avg_pool1d(x.reshape(2, 3, 16), 3, 1, 1),
    "adaptive_avg_pool2d": lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 3),
    "adaptive_avg_pool1d": lambda L, x: L.nn.functional.adaptive_avg_pool1d(x.reshape(6, 16), 3),
}
X4 = np.random.default_rng(0).standard_normal((2, 3, 4, 4))


def _penalty(L, name):
    """A gradient penalty through the pool alone: the first-order gradient, its graph (the node
    and its inputs' nodes), and the penalty's gradient w.r.t. the input."""
    x = L.tensor(X4, requires_grad=True)
    gx, = L.autograd.grad(POOLS[name](L, x).sum(), x, create_graph=True)
    graph = (gx.requires_grad, type(gx.grad_fn).__name__,
             [type(f).__name__ if f is not None else None for f, _ in gx.grad_fn.next_functions])
    pen, = L.autograd.grad((gx * gx).sum(), x)
    return graph, pen.detach().numpy()


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool_gradient_penalty_differentiates(name):
    """Was: max pools raised "does not require grad" here (the gradient depended only on the
    incoming gradient, which does not require grad)."""
    (req, _, _), pen = _penalty(tg, name)
    assert req
    assert pen.shape == X4.shape and not pen.any()     # the gradient does not depend on x


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool_gradient_penalty_as_torch(name, torch):
    ours, ref = _penalty(tg, name), _penalty(torch, name)
    assert ours[0] == ref[0]
    np.testing.assert_array_equal(ours[1], ref[1])


def test_unbatched_max_pool_gradient_graph_as_torch(torch):
    """torch's kernel pools a (C, H, W) input itself: no unsqueeze/squeeze around the node."""
    out = []
    for L in (tg, torch):
        x = L.tensor(X4[0], requires_grad=True)
        gx, = L.autograd.grad(L.nn.functional.max_pool2d(x, 2).sum(), x, create_graph=True)
        out.append((type(gx.grad_fn).__name__,
                    [type(f).__name__ if f is not None else None
                     for f, _ in gx.grad_fn.next_functions]))
    assert out[0] == out[1] == ("MaxPool2DWithIndicesBackwardBackward0", [None, "AccumulateGrad"])


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool_first_gradient_checks(name):
    """gradcheck of x -> d pool(x).sum() / dx (constant in x: its Jacobian is zero), and
    gradgradcheck of the pool, in float64."""
    x = tg.tensor(X4, requires_grad=True)

    def first(x):
        return tg.autograd.grad(POOLS[name](tg, x).sum(), x, create_graph=True)[0]

    assert gradcheck(first, (x,))
    assert gradgradcheck(lambda x: POOLS[name](tg, x), (x,))
    assert gradgradcheck(lambda x: POOLS[name](tg, x) ** 2, (x,))


def test_max_pool_third_derivative():
    x = tg.tensor(X4, requires_grad=True)
    g = tg.tensor(np.random.default_rng(1).standard_normal((2, 3, 2, 2)), requires_grad=True)
    y = tg.nn.functional.max_pool2d(x, 2)
    gx, = tg.autograd.grad(y, x, g, create_graph=True)
    gg, = tg.autograd.grad((gx ** 2).sum(), g, create_graph=True)
    ggg, = tg.autograd.grad((gg ** 2).sum(), g)
    assert type(gg.grad_fn).__name__ == "MaxPoolDoubleBackwardBackward0"
    np.testing.assert_allclose(ggg.numpy(), 8 * g.detach().numpy())  # windows do not overlap


def _pool_input_changed(L, name):
    x = L.tensor(X4, requires_grad=True)
    a = x * 1
    y = POOLS[name](L, a)
    a.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "ok", None


@pytest.mark.parametrize("name", [n for n in sorted(POOLS) if "max" in n.lower()])
def test_max_pool_input_changed_in_place_raises(name):
    kind, msg = _pool_input_changed(tg, name)
    assert kind == "RuntimeError"
    assert "modified by an inplace operation" in msg and "MaxPool2DWithIndicesBackward0" in msg


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool_input_changed_in_place_as_torch(name, torch):
    assert _pool_input_changed(tg, name)[0] == _pool_input_changed(torch, name)[0]


# ---- 2. None, not zeros, from the norms' double backward ----------------------------------------
# (norm, first-order gradient(s) differentiated, whether the incoming gradient g requires grad)
# -> which of (x, weight, bias, g) get a gradient: torch 2.13's answers, None marked "-"
NORM_CASES = {
    ("layer", "w", False): "x---", ("layer", "b", False): "----", ("layer", "x", False): "xw--",
    ("layer", "w", True): "x--g", ("layer", "b", True): "---g", ("layer", "x", True): "xw-g",
    ("layer", "xwb", True): "xw-g",
    ("batch", "w", False): "x---", ("batch", "b", False): "----", ("batch", "x", False): "xw--",
    ("batch", "w", True): "x--g", ("batch", "b", True): "---g", ("batch", "xwb", True): "xw-g",
    ("batch_eval", "w", True): "x--g", ("batch_eval", "x", True): "-w-g",
    ("batch_eval", "x", False): "-w--",
    ("group", "w", True): "x--g", ("group", "b", True): "---g", ("group", "x", False): "xw--",
    ("group", "xwb", True): "xw-g",
    ("layer_empty", "w", True): "x--g", ("layer_empty", "b", True): "---g",
    ("layer_empty", "x", True): "xw-g",
}


def _norm(L, kind, x, w, b):
    F = L.nn.functional
    if kind.startswith("layer"):
        return F.layer_norm(x, x.shape[-1:], w, b)
    if kind == "group":
        return F.group_norm(x, 2, w, b)
    if kind == "batch":
        return F.batch_norm(x, None, None, w, b, training=True)
    c = x.shape[1]
    return F.batch_norm(x, L.linspace(-1, 1, c, dtype=L.float64), L.linspace(0.5, 2, c,
                        dtype=L.float64), w, b)


def _second(L, kind, which, g_grad):
    rng = np.random.default_rng(3)
    shape = (0, 3, 4) if kind == "layer_empty" else (2, 4, 3)
    c = shape[-1] if kind.startswith("layer") else shape[1]
    x = L.tensor(rng.standard_normal(shape), requires_grad=True)
    w = L.tensor(rng.standard_normal(c) + 1, requires_grad=True)
    b = L.tensor(rng.standard_normal(c), requires_grad=True)
    y = _norm(L, kind, x, w, b)
    g = L.tensor(rng.standard_normal(shape), requires_grad=g_grad)
    first = dict(zip("xwb", L.autograd.grad(y, (x, w, b), g, create_graph=True)))
    s = sum((first[k] * L.tensor(rng.standard_normal(first[k].shape))).sum() for k in which)
    targets = (x, w, b, g) if g_grad else (x, w, b)
    out = L.autograd.grad(s, targets, allow_unused=True)
    pattern = "".join("-" if t is None else k for t, k in zip(out, "xwbg"))
    return pattern.ljust(4, "-"), [None if t is None else t.numpy() for t in out]


@pytest.mark.parametrize("case", sorted(NORM_CASES), ids=lambda c: "-".join(map(str, c)))
def test_norm_double_backward_gives_none_where_torch_does(case):
    """Was: zeros (a first-order gradient nobody used was filled with zeros, then differentiated)
    e.g. for d grad_weight / d weight, d grad_bias / d input."""
    assert _second(tg, *case)[0] == NORM_CASES[case]


@pytest.mark.parametrize("case", sorted(NORM_CASES), ids=lambda c: "-".join(map(str, c)))
def test_norm_double_backward_as_torch(case, torch):
    ours, ref = _second(tg, *case), _second(torch, *case)
    assert ours[0] == ref[0]
    for a, r in zip(ours[1], ref[1]):
        if a is not None:
            np.testing.assert_allclose(a, r, rtol=1e-7, atol=1e-9)


def _layer_norm_bias_only(L):
    x = L.tensor(np.arange(6.0).reshape(2, 3) ** 2)
    w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64)
    b = L.tensor([0.5, 0.0, -0.5], dtype=L.float64, requires_grad=True)
    y = L.nn.functional.layer_norm(x, (3,), w, b)
    gb, = L.autograd.grad(y.sum(), b, create_graph=True)
    return gb.requires_grad, L.autograd.grad(gb.sum(), b, allow_unused=True)


def test_layer_norm_gradients_are_tied_to_the_bias():
    """torch's native_layer_norm_backward takes the bias (derivative: none), so under
    create_graph its results require grad when the bias does, and give None for it."""
    assert _layer_norm_bias_only(tg) == (True, (None,))


def test_layer_norm_gradients_are_tied_to_the_bias_as_torch(torch):
    assert _layer_norm_bias_only(torch) == (True, (None,))


def _group_norm_bias_grad(L, g_grad):
    x = L.tensor(np.random.default_rng(4).standard_normal((2, 4, 3)), requires_grad=True)
    w = L.ones(4, dtype=L.float64, requires_grad=True)
    b = L.zeros(4, dtype=L.float64, requires_grad=True)
    y = L.nn.functional.group_norm(x, 2, w, b)
    g = L.ones(2, 4, 3, dtype=L.float64, requires_grad=g_grad)
    return [t.requires_grad for t in L.autograd.grad(y, (x, w, b), g, create_graph=True)]


@pytest.mark.parametrize("g_grad", [False, True])
def test_group_norm_bias_gradient_requires_grad_only_with_the_incoming_gradient(g_grad):
    assert _group_norm_bias_grad(tg, g_grad) == [True, True, g_grad]


@pytest.mark.parametrize("g_grad", [False, True])
def test_group_norm_bias_gradient_requires_grad_as_torch(g_grad, torch):
    assert _group_norm_bias_grad(tg, g_grad) == _group_norm_bias_grad(torch, g_grad)


@pytest.mark.parametrize("kind", ["layer", "batch", "batch_eval"])
def test_norm_bias_without_weight_keeps_the_true_second_derivative(kind):
    """Kept as is on purpose: with a bias and no weight, torch 2.13 drops d grad_bias / d grad
    (None; its own gradgradcheck fails) or raises "Expected a proper Tensor" when grad_input is
    used too; tapegrad gives the derivative (grad_bias = grad summed, so d/dgrad is the
    cotangent broadcast), which gradgradcheck confirms."""
    x = tg.tensor(np.random.default_rng(5).standard_normal((3, 4)))
    b = tg.tensor([0.1, 0.2, -0.3, 0.4], dtype=tg.float64, requires_grad=True)
    assert gradgradcheck(lambda b: _norm(tg, kind, x, None, b), (b,))
    xr = x.clone().requires_grad_()
    assert gradgradcheck(lambda x, b: _norm(tg, kind, x, None, b), (xr, b))


# ---- 3. data inputs changed in place before backward --------------------------------------------
# name -> (the op on (a, s), given a (3, 4) and s (2, 4), both non-leaf; which to change)
SAVES = {
    "gather_input": (lambda L, a, s: a.gather(0, L.tensor([[0, 1, 2, 0], [2, 1, 0, 0]])), "a"),
    "take_input": (lambda L, a, s: L.take(a, L.tensor([0, 5, 11, 5])), "a"),
    "take_along_dim_input": (lambda L, a, s: L.take_along_dim(a, L.tensor([[2, 0, 1, -1]]), 1),
                             "a"),
    "masked_select_input": (lambda L, a, s: L.masked_select(a, a.detach() > 0), "a"),
    "masked_select_broadcast": (lambda L, a, s: L.masked_select(
        a[0], L.tensor([[True, False, True, True], [False] * 4])), "a"),
    "nan_to_num_input": (lambda L, a, s: L.nan_to_num(a), "a"),
    "index_add_source": (lambda L, a, s: a.index_add(0, L.tensor([0, 2]), s), "s"),
    "index_add_source_alpha": (lambda L, a, s: a.index_add(0, L.tensor([2, 2]), s, alpha=2.5),
                               "s"),
    "index_add__source": (lambda L, a, s: (a * 1).index_add_(0, L.tensor([0, 2]), s), "s"),
}
# torch saves neither of these: changing them is fine
NOT_SAVED = {
    "index_add_self": (lambda L, a, s: a.index_add(0, L.tensor([0, 2]), s), "a"),
    "index_add_source_no_grad": (lambda L, a, s: a.index_add(0, L.tensor([0, 2]), s.detach()),
                                 "s"),
}


def _changed(L, make, which, change=True):
    x = L.tensor(np.random.default_rng(6).standard_normal((3, 4)), requires_grad=True)
    z = L.tensor(np.random.default_rng(7).standard_normal((2, 4)), requires_grad=True)
    a, s = x * 1, z * 1
    y = make(L, a, s)
    if change:
        (a if which == "a" else s).mul_(2)
    try:
        (y * y.detach()).sum().backward()
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "ok", (x.grad.numpy(), None if z.grad is None else z.grad.numpy())


@pytest.mark.parametrize("name", sorted(SAVES))
def test_saved_data_input_changed_in_place_raises(name):
    kind, msg = _changed(tg, *SAVES[name])
    assert kind == "RuntimeError"
    assert "modified by an inplace operation" in msg and "an input of the op" in msg
    assert "is at version 1; expected version 0" in msg


@pytest.mark.parametrize("name", sorted(NOT_SAVED))
def test_unsaved_input_changed_in_place_is_fine(name):
    assert _changed(tg, *NOT_SAVED[name])[0] == "ok"


@pytest.mark.parametrize("name", sorted(SAVES) + sorted(NOT_SAVED))
def test_input_changed_in_place_as_torch(name, torch):
    make, which = {**SAVES, **NOT_SAVED}[name]
    assert _changed(tg, make, which)[0] == _changed(torch, make, which)[0]


@pytest.mark.parametrize("name", sorted(SAVES) + sorted(NOT_SAVED))
def test_unchanged_inputs_give_torchs_gradients(name, torch):
    make, which = {**SAVES, **NOT_SAVED}[name]
    ours, ref = _changed(tg, make, which, False), _changed(torch, make, which, False)
    assert ours[0] == ref[0] == "ok"
    for a, r in zip(ours[1], ref[1]):
        assert (a is None) == (r is None)
        if a is not None:
            np.testing.assert_allclose(a, r, rtol=1e-12)


def test_nan_to_num_gradient_masks_non_finite():
    x = tg.tensor([1.0, float("nan"), float("inf"), -float("inf"), 2.0], requires_grad=True)
    y = tg.nan_to_num(x, nan=0.5, posinf=10.0, neginf=-10.0)
    (y * tg.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 0.0, 5.0]
    gx, = tg.autograd.grad(tg.nan_to_num(x).sum(), x, create_graph=True)
    assert gx.tolist() == [1.0, 0.0, 0.0, 0.0, 1.0]


def test_accumulate_grad_name_is_torch_s():
    x = tg.ones(2, requires_grad=True)
    acc = x.sum().grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert type(acc).__name__ == "AccumulateGrad" and repr(acc).startswith("<AccumulateGrad object")
    torch = pytest.importorskip("torch")
    t = torch.ones(2, requires_grad=True)
    tacc = t.sum().grad_fn.next_functions[0][0]
    assert acc.name() == tacc.name() and type(acc).__name__ == type(tacc).__name__


# ---- CopySlices wraps the in-place op's node, as torch's -------------------------------------
def _graph(fn, depth=4):
    if fn is None or depth == 0:
        return None
    return (type(fn).__name__, tuple(_graph(n, depth - 1) for n, _ in fn.next_functions))


def _write_cases():
    def setitem_number(L, x, t):
        y = x * 1
        y[0] = 5.0
        return y

    def setitem_tensor(L, x, t):
        y = x * 1
        y[1:3] = t[:2] * 2
        return y

    def fill_view(L, x, t):
        y = x * 1
        y[2:].fill_(0.0)
        return y

    def mul_view_by_tensor(L, x, t):
        y = x * 1
        y[1:][::2].mul_(t[0])
        return y

    def two_writes(L, x, t):
        y = x * 1
        y[:2].mul_(t[:2])
        y[1:3].add_(t[1:3] * 2)
        return y

    def view_of_view(L, x, t):
        y = x * 1
        v = y[1:]
        v[0:2].sub_(t[:2])
        return y

    def whole_tensor_number(L, x, t):
        y = x * 1
        y[...] = 5.0
        return y

    return {f.__name__: f for f in (setitem_number, setitem_tensor, fill_view, mul_view_by_tensor,
                                     two_writes, view_of_view, whole_tensor_number)}


WRITES = _write_cases()


def _write_run(L, case):
    x = L.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    t = L.tensor([0.5, 2.0, -1.5, 3.0], requires_grad=True)
    y = WRITES[case](L, x, t)
    g = L.tensor([1.0, -0.0, float("nan"), 2.0], requires_grad=True)
    gx, gt = L.autograd.grad(y, (x, t), g, create_graph=True, allow_unused=True)
    second = None
    if gt is not None and gt.requires_grad:
        second = [None if h is None else h.tolist() for h in
                  L.autograd.grad((gt * L.tensor([1.0, 2.0, 3.0, 4.0])).sum(), (x, t, g),
                                  allow_unused=True)]
    return (_graph(y.grad_fn), y.grad_fn.name(), np.asarray(gx.tolist()),
            None if gt is None else np.asarray(gt.tolist()), second)


@pytest.mark.parametrize("case", list(WRITES))
def test_write_through_a_view_records_torch_s_graph_and_gradients(case):
    torch = pytest.importorskip("torch")
    ours, theirs = _write_run(tg, case), _write_run(torch, case)
    assert ours[:2] == theirs[:2]
    for a, b in ((ours[2], theirs[2]), (ours[3], theirs[3])):
        if b is None:
            assert a is None
        else:
            # signs of zeros and NaNs too: a -0 gradient outside the written region stays -0
            np.testing.assert_array_equal(a, b)
            assert (np.signbit(a) == np.signbit(b)).all()
    assert str(ours[4]) == str(theirs[4])


def test_copy_slices_next_functions_without_torch():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y[0] = 5.0
    assert [type(n).__name__ if n is not None else None for n, _ in y.grad_fn.next_functions] \
        == ["MulBackward0", None]
    assert y.grad_fn.name() == "torch::autograd::CopySlices" and "grad_fn=<CopySlices>" in repr(y)
    y.backward(tg.tensor([1.0, -0.0, 2.0]))
    assert np.signbit(x.grad.numpy()).tolist() == [False, True, False]


@pytest.mark.parametrize("write", ["fill_", "mul_"])
def test_second_backward_through_a_write_into_a_view_raises(write):
    x = tg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x + 1
    getattr(y[1:], write)(2.0)
    z = y.sum()
    z.backward(retain_graph=True)
    z.backward()
    assert x.grad.tolist() == ([2.0, 0.0, 0.0] if write == "fill_" else [2.0, 4.0, 4.0])
    with pytest.raises(RuntimeError, match="second time"):
        z.backward()


def test_copy_slices_hook_sees_next_functions_gradients():
    x = tg.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    t = tg.tensor([0.5, 2.0], requires_grad=True)
    y = x * 1
    y[1:3].mul_(t)
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append([g.tolist() for g in gi]))
    y.sum().backward()
    assert seen == [[[1.0, 0.5, 2.0, 1.0], [-2.0, 3.0]]]
    assert x.grad.tolist() == [1.0, 0.5, 2.0, 1.0] and t.grad.tolist() == [-2.0, 3.0]


@pytest.mark.parametrize("op", ["exp_", "sigmoid_", "tanh_", "reciprocal_", "sqrt_"])
def test_second_derivative_through_an_op_that_saved_its_result_in_a_view(op):
    # the saved result's history runs through the op's own node, which CopySlices wraps: it
    # keeps its saved tensors until the CopySlices node is freed
    def run(L):
        x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x * 1
        getattr(y[1:], op)()
        gx, = L.autograd.grad((y * y).sum(), x, create_graph=True)
        return gx.tolist(), L.autograd.grad(gx.sum(), x)[0].tolist()

    ours = run(tg)
    assert all(np.isfinite(ours[1]))
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(ours, run(torch), rtol=1e-6, atol=1e-6)


def test_freeing_a_copy_slices_node_frees_the_wrapped_node():
    x = tg.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x * 1
    y[1:].exp_()
    fn = y.grad_fn.fn
    assert fn._saved is not None
    y.sum().backward()
    assert y.grad_fn._saved is FREED and fn._saved is FREED


# ---- numbers written into a tensor: torch's overflow checks -----------------------------------
NUMBER_WRITES = [("float32", 1e40), ("float32", 3.5e38), ("float32", float("inf")),
                 ("float32", float("nan")), ("float16", 70000.0), ("int64", 2 ** 63),
                 ("int64", 2 ** 64 + 5), ("int64", 1e40), ("int64", float("nan")),
                 ("int32", 2 ** 31), ("uint8", 300), ("uint8", -1), ("uint8", -256),
                 ("int8", 200), ("int16", -40000), ("bool", 5), ("int64", 2.7),
                 ("uint8", -1.0), ("uint8", -0.5), ("uint8", -255)]


def _write_number(L, dtype, value, how):
    if how == "recorded":
        if dtype not in ("float32", "float16"):
            return "not float"
        y = L.zeros(2, dtype=getattr(L, dtype), requires_grad=True) * 1
    else:
        y = L.zeros(2, dtype=getattr(L, dtype))
    try:
        if how == "fill_":
            y.fill_(value)
        else:
            y[0] = value
    except (RuntimeError, ValueError, OverflowError) as e:
        return type(e).__name__
    return str(y.tolist())


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("how", ["fill_", "setitem", "recorded"])
@pytest.mark.parametrize("dtype,value", NUMBER_WRITES)
def test_number_written_into_a_tensor_is_checked_as_torch(dtype, value, how):
    torch = pytest.importorskip("torch")
    assert _write_number(tg, dtype, value, how) == _write_number(torch, dtype, value, how)


def test_number_overflow_errors_without_torch():
    y = tg.zeros(3)
    with pytest.raises(RuntimeError, match="without overflow: fill_'s value=1e\\+40"):
        y.fill_(1e40)
    with pytest.raises(RuntimeError, match="the value written=1e\\+40"):
        y[1] = 1e40
    assert y.tolist() == [0.0, 0.0, 0.0] and y._version == 0
    u = tg.zeros(2, dtype=tg.uint8)
    u[0] = -1
    assert u.tolist() == [255, 0]
    assert tg.zeros(2, dtype=tg.uint8).fill_(-1).tolist() == [255, 255]
