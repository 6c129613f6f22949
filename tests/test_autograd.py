"""Engine rules: recording, backward, autograd.grad, accumulation, freeing, errors, grad modes."""
import sys
import threading
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import autograd
from tapegrad.autograd.graph import EXACT_REFCOUNTS

# the in-place fast paths exist only where reference counts are calibrated (CPython 3.11-3.13)
FAST_PATHS = pytest.mark.skipif(not EXACT_REFCOUNTS, reason="no refcount fast paths on this Python")


def _torch():
    return pytest.importorskip("torch")


# ---- recording ---------------------------------------------------------------------------------
def test_tape_records_named_nodes_and_edges():
    x = tg.tensor([2.0], requires_grad=True)
    y = x * x + 3 * x
    assert repr(y) == "tensor([10.], grad_fn=<AddBackward0>)"
    names = [type(n).__name__ for n, _ in y.grad_fn.next_functions]
    assert names == ["MulBackward0", "MulBackward0"]
    m2 = y.grad_fn.next_functions[1][0]
    acc, nr = m2.next_functions[0]
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x and nr == 0
    assert m2.next_functions[1] == (None, 0)  # the Python scalar 3
    assert x.is_leaf and not y.is_leaf and y.requires_grad


def test_same_accumulate_grad_node_for_each_use():
    x = tg.tensor([1.0], requires_grad=True)
    a, b = x * 2, x * 3
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]


def test_nothing_recorded_without_requires_grad_or_in_no_grad():
    x = tg.tensor([1.0])
    assert (x * 2).grad_fn is None
    w = tg.tensor([1.0], requires_grad=True)
    with tg.no_grad():
        y = w * 2
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    with tg.set_grad_enabled(False):
        assert (w * 2).grad_fn is None
        with tg.enable_grad():
            assert (w * 2).grad_fn is not None
    assert tg.is_grad_enabled()


def test_grad_modes_as_decorators_and_set_grad_enabled_call():
    w = tg.tensor([1.0], requires_grad=True)

    @tg.no_grad()
    def f():
        return w * 2

    assert f().grad_fn is None
    tg.set_grad_enabled(False)
    try:
        assert not tg.is_grad_enabled()
    finally:
        tg.set_grad_enabled(True)
    assert tg.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = {}
    ready, done = threading.Event(), threading.Event()

    def other():
        ready.wait()
        seen["other"] = tg.is_grad_enabled()
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with tg.no_grad():
        ready.set()
        done.wait()
        assert not tg.is_grad_enabled()
    th.join()
    assert seen["other"] is True


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        tg.tensor([1, 2]).requires_grad_()


# ---- backward ----------------------------------------------------------------------------------
def test_backward_value_and_accumulation():
    x = tg.tensor([2.0], requires_grad=True)
    (x * x + 3 * x).backward()
    assert x.grad.tolist() == [7.0]
    (x * x + 3 * x).backward()
    assert x.grad.tolist() == [14.0]
    x.grad = None
    (x * x).backward()
    assert x.grad.tolist() == [4.0]


def test_grad_buffer_is_updated_in_place_like_torch():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert g is x.grad and g.tolist() == [5.0, 5.0]


def test_shared_pass_through_gradient_is_not_aliased():
    a = tg.tensor([1.0], requires_grad=True)
    b = tg.tensor([1.0], requires_grad=True)
    (a + b).sum().backward()
    (a * 5).sum().backward()
    assert a.grad.tolist() == [6.0] and b.grad.tolist() == [1.0]
    gout = tg.tensor([1.0, 1.0])
    c = tg.tensor([0.0, 0.0], requires_grad=True)
    (c + 0).backward(gout)
    (c * 2).backward(gout)
    assert gout.tolist() == [1.0, 1.0]


def test_deep_chain_is_iterative():
    limit = sys.getrecursionlimit()
    x = tg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0
    assert sys.getrecursionlimit() == limit


def test_diamond_gets_each_path_once():
    x = tg.tensor(3.0, requires_grad=True)
    a = x * 2
    b = a * a          # uses a twice
    c = a + b
    c.backward()
    # c = 2x + 4x^2 -> 2 + 8x
    assert x.grad.item() == pytest.approx(26.0)


def test_non_leaf_grad_is_none_with_warning():
    x = tg.tensor([1.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None


def test_retain_grad_fills_non_leaf_grad():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    assert y.retains_grad and y.grad.tolist() == [6.0, 12.0]


def test_second_backward_raises_graph_freed_with_fix():
    x = tg.tensor([2.0], requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError) as e:
        y.backward()
    msg = str(e.value)
    assert "second time" in msg and "retain_graph=True" in msg and "detach()" in msg
    assert "MulBackward0" in msg


def test_retain_graph_allows_two_passes():
    x = tg.tensor([2.0], requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [8.0]


def test_nodes_without_saved_tensors_can_rerun():
    x = tg.tensor([2.0], requires_grad=True)
    y = x + 1
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0]


def test_non_scalar_backward_needs_gradient():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        (x * 2).backward()
    msg = str(e.value)
    assert "scalar outputs" in msg and "[2]" in msg and ".sum()" in msg and ".mean()" in msg
    (x * 2).backward(tg.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 20.0]


def test_gradient_of_wrong_shape_names_both_shapes():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(2,\)"):
        (x * 2).backward(tg.tensor([1.0, 1.0, 1.0]))
    assert x.grad is None


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        tg.tensor([1.0]).sum().backward()


def test_backward_inputs_limits_accumulation():
    a = tg.tensor([1.0], requires_grad=True)
    b = tg.tensor([2.0], requires_grad=True)
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


def test_autograd_grad_returns_without_touching_grad():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    (g,) = autograd.grad(y, x)
    assert g.tolist() == [2.0, 4.0] and x.grad is None


def test_autograd_grad_allow_unused():
    x = tg.tensor([1.0], requires_grad=True)
    z = tg.tensor([1.0], requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="not have been used"):
        autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None and gx.tolist() == [2.0]


def test_autograd_grad_of_non_leaf_and_grad_outputs():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = h * h
    (gh,) = autograd.grad(y, h, grad_outputs=tg.tensor([1.0, 1.0]))
    assert gh.tolist() == [6.0, 12.0]


def test_create_graph_second_derivative():
    x = tg.tensor(3.0, requires_grad=True)
    y = x * x * x
    (g,) = autograd.grad(y, x, create_graph=True)
    assert g.item() == 27.0 and g.requires_grad
    (g2,) = autograd.grad(g, x)
    assert g2.item() == 18.0


def test_broadcast_gradient_is_reduced_to_input_shape():
    a = tg.tensor([[1.0], [2.0], [3.0]], requires_grad=True)   # (3, 1)
    b = tg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)     # (4,)
    (a * b).sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    assert a.grad.reshape(-1).tolist() == [10.0, 10.0, 10.0]
    assert b.grad.tolist() == [6.0, 6.0, 6.0, 6.0]


def test_mixed_dtype_gradients_match_input_dtype():
    a = tg.tensor([1.0, 2.0], requires_grad=True)                      # float32
    b = tg.tensor([3.0, 4.0], dtype=tg.float64, requires_grad=True)
    c = a * b
    assert c.dtype is tg.float64
    c.sum().backward()
    assert a.grad.dtype is tg.float32 and b.grad.dtype is tg.float64


def test_numpy_refuses_requires_grad_with_fix():
    x = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    assert isinstance(x.detach().numpy(), np.ndarray)


# ---- against torch -----------------------------------------------------------------------------
def test_engine_matches_torch_on_shared_subexpressions():
    torch = _torch()
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((3, 4))
    wa = rng.standard_normal((4, 2))

    def run(lib, x, w):
        h = (x @ w).tanh()
        out = (h * h).sum() + h.sum(0).max() + (x * x).mean()
        out.backward()
        return out.item(), x.grad.numpy(), w.grad.numpy()

    r1 = run(tg, tg.tensor(xa, requires_grad=True), tg.tensor(wa, requires_grad=True))
    r2 = run(torch, torch.tensor(xa, requires_grad=True), torch.tensor(wa, requires_grad=True))
    assert r1[0] == pytest.approx(r2[0], rel=1e-12)
    np.testing.assert_allclose(r1[1], r2[1], rtol=1e-10)
    np.testing.assert_allclose(r1[2], r2[2], rtol=1e-10)


def test_exception_types_match_torch():
    torch = _torch()
    for lib in (tg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError):
            (x * 2).backward()
        with pytest.raises(RuntimeError):
            lib.tensor([1, 2]).requires_grad_()
        y = x * x
        y.sum().backward()
        with pytest.raises(RuntimeError):
            y.sum().backward()


@FAST_PATHS
def test_leaf_gradient_is_stolen_not_copied_when_unshared():
    w = tg.randn(3, 4, requires_grad=True)
    tg.nn.functional.linear(tg.randn(5, 4), w).sum().backward()
    # the weight gradient arrives as the transpose of a fresh matmul result: kept as is (a copy
    # would own its memory), and contiguous thanks to the layout-following matmul gradient
    assert w.grad._data.base is not None and w.grad._data.flags.c_contiguous
    g = tg.ones(2)
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    (a + 0).backward(g)          # the user's gradient passes through: must be copied
    assert a.grad._data is not g._data


def test_in_place_buffer_accumulation_keeps_values_right():
    torch = _torch()
    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        a = x * 2
        b = a.tanh() + a * a + a.sigmoid()   # a's buffer collects three gradients
        c = b + b * x + x                    # x's buffer: several paths
        c.sum().backward()
        return x.grad.numpy().copy()
    np.testing.assert_allclose(run(tg), run(torch), rtol=1e-12)
