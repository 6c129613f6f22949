"""A retained non-leaf gradient accumulates out of place across backward calls, as torch (a leaf's
accumulates in place, as torch): a .grad the user kept keeps its value."""
import numpy as np
import pytest

import tapegrad as tg


def _kept_and_now(lib, leaf):
    x = lib.tensor(np.ones(3), requires_grad=True)
    u = x if leaf else x * 2.0
    if not leaf:
        u.retain_grad()
    (u * 3).sum().backward(retain_graph=True)
    kept = u.grad
    (u * 5).sum().backward()
    return kept.tolist(), u.grad.tolist(), kept is u.grad


def test_retained_grad_of_a_non_leaf_is_replaced_not_written():
    assert _kept_and_now(tg, leaf=False) == ([3.0] * 3, [8.0] * 3, False)


def test_leaf_grad_accumulates_in_place():
    assert _kept_and_now(tg, leaf=True) == ([8.0] * 3, [8.0] * 3, True)


@pytest.mark.parametrize("leaf", [False, True])
def test_accumulation_as_torch(leaf):
    torch = pytest.importorskip("torch")
    assert _kept_and_now(tg, leaf) == _kept_and_now(torch, leaf)
