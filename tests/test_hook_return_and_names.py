"""Faithfulness fixes found by a breaker: a post-accumulate-grad hook that returns a value, and
the namespaced name() of CopyBackwards (values checked against torch where it is installed)."""
import numpy as np
import pytest

import tapegrad as tg


def _post_hook_returning(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([4.0, 5.0], requires_grad=True)
    w.grad = lib.tensor([1.0, 1.0])
    x.register_post_accumulate_grad_hook(lambda t: t * 2)
    loss = (x * 2).sum() + (w * w).sum()
    with pytest.raises(RuntimeError) as e:
        loss.backward()
    return x, w, str(e.value)


def test_post_accumulate_hook_returning_a_value_raises_and_keeps_grads():
    x, w, msg = _post_hook_returning(tg)
    assert "post accumulate grad hooks should return None" in msg
    assert "register_post_accumulate_grad_hook" in msg and "[3]" in msg
    # (a failing backward changes no gradient: torch would leave them written)
    assert x.grad is None
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])


def test_post_accumulate_hook_returning_a_value_raises_as_torch():
    torch = pytest.importorskip("torch")
    _, _, msg = _post_hook_returning(torch)
    assert "post accumulate grad hooks should return None" in msg


def test_post_accumulate_hook_returning_none_still_runs():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.numpy().tolist()))
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]


def _copy_names(lib):
    x = lib.ones(3, requires_grad=True)
    b = x.clone()
    b.copy_(lib.zeros(3))
    c = lib.zeros(3)
    c.copy_(x)
    y2 = lib.ones(2, requires_grad=True)
    (y2 * y2).sum().backward(create_graph=True)
    return [b.grad_fn.name(), c.grad_fn.name(), type(c.grad_fn).__name__,
            y2.grad.grad_fn.name()]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_copy_backwards_name_has_the_namespace():
    assert _copy_names(tg) == ["torch::autograd::CopyBackwards"] * 2 + ["CopyBackwards"] + \
        ["torch::autograd::CopyBackwards"]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_copy_backwards_name_as_torch():
    torch = pytest.importorskip("torch")
    assert _copy_names(tg) == _copy_names(torch)


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_post_accumulate_hook_may_return_the_leaf_itself(lib_name):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    a = L.ones(3, requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda t: t)
    (a * 3).sum().backward()
    assert a.grad.tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_post_accumulate_hook_returning_a_non_tensor_is_a_type_error(lib_name):
    L = tg if lib_name == "tapegrad" else pytest.importorskip("torch")
    a = L.ones(3, requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda t: 1)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        (a * 3).sum().backward()
