"""How many objects a recorded op leaves for Python's garbage collector to track: every one of
them is scanned again by each collection while the graph lives, which is a sixth of a small op's
forward in a long chain (issue 4, W2). A node keeps its edges in one flat tuple (no tuple per
edge), so a product by a number leaves the node and its edges; a result saved for backward
(tanh) adds its saved entry and the output's version counter. Counted after a collection, which
untracks what holds no tracked object (shape tuples, source-line records)."""
import gc

import numpy as np
import pytest

import tapegrad as tg


def _tracked_per_op(make, shape, n=200):
    x = tg.tensor(np.full(shape, 0.5), requires_grad=True)
    keep = []
    gc.collect()
    before = len(gc.get_objects())
    y = x
    for _ in range(n):
        y = make(y)
        keep.append(y.grad_fn)
    gc.collect()
    after = len(gc.get_objects())
    del keep, y
    return (after - before) / n


@pytest.mark.parametrize("shape", [(), (4,)])
@pytest.mark.parametrize("name, make, expected", [
    ("mul by a number", lambda y: y * 1.0001, 2),    # node, edges
    ("add a number", lambda y: y + 0.001, 2),
    ("tanh", lambda y: y.tanh(), 5),                 # + saved list, saved entry, version counter
])
def test_objects_a_recorded_op_leaves_tracked(shape, name, make, expected):
    assert _tracked_per_op(make, shape) == pytest.approx(expected, abs=0.05)


def test_edges_are_one_flat_tuple_and_next_functions_reads_them():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    assert type(y.grad_fn._edges) is tuple and len(y.grad_fn._edges) == 8
    assert y.grad_fn.next_functions == ((x._accumulator(), 0), (None, 0))
    z = tg.tensor([1.0, 2.0]) + y       # a tensor that needs no gradient, then one that does
    assert z.grad_fn.next_functions == ((None, 0), (y.grad_fn, 0))
