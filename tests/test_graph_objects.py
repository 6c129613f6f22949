"""How many objects a recorded op leaves for Python's garbage collector to track: every one of
them is scanned again by each collection while the graph lives, which is a sixth of a small op's
forward in a long chain (issue 4, W2). A node keeps its edges in one flat tuple (no tuple per
edge), so a product by a number leaves the node and its edges. So does tanh, whose result is
saved: the node keeps that one entry itself (no list), and the entry gets a version counter only
once one is needed. Counted after a collection, which untracks what holds no tracked object
(shape tuples, saved entries, source-line records)."""
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
    gc.collect()    # (a tuple is untracked once what it holds is: a second pass finishes nested ones)
    after = len(gc.get_objects())
    del keep, y
    return (after - before) / n


@pytest.mark.parametrize("shape", [(), (4,)])
@pytest.mark.parametrize("name, make, expected", [
    ("mul by a number", lambda y: y * 1.0001, 2),    # node, edges
    ("add a number", lambda y: y + 0.001, 2),
    ("tanh", lambda y: y.tanh(), 2),                 # its saved entry holds no tracked object
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


def _no_gradient_in_either(run):
    """``run(lib)`` (which expects its backward to raise) leaves no gradient, in tapegrad and, when
    it is installed, in torch."""
    assert run(tg) is None
    try:
        import torch
    except ImportError:
        return
    assert run(torch) is None


# A result saved without a version counter gets one on first need; every way to write its
# storage afterwards must still be seen by the op's backward, as torch sees it.
def _write_through_view(lib, y):
    y.view(-1)[:1].mul_(2)


def _write_through_detach(lib, y):
    y.detach().zero_()


def _write_after_detach_(lib, y):
    y.detach_()
    y.add_(1)


def _write_in_place(lib, y):
    y.add_(1)


def _write_after_unpack(lib, y):
    # a create_graph backward unpacks the saved result first (it gets the counter), then the
    # output itself is written
    lib.autograd.grad(y.sum(), y.grad_fn.next_functions[0][0].variable, create_graph=True)
    y.add_(1)


@pytest.mark.parametrize("op", ["tanh", "exp", "sigmoid"])
@pytest.mark.parametrize("write", [_write_in_place, _write_through_view, _write_through_detach,
                                   _write_after_detach_, _write_after_unpack])
def test_a_lazily_counted_result_written_later_still_fails_backward(op, write):
    def run(lib):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        y = getattr(x, op)()
        z = y * 2.0                 # keeps the op's node reachable after a detach_
        write(lib, y)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
        return x.grad, y._version
    grad, version = run(tg)
    assert grad is None and version >= 1
    try:
        import torch
    except ImportError:
        return
    tgrad, tversion = run(torch)
    assert tgrad is None and version == tversion


def test_a_lazily_counted_result_reads_as_version_zero_then_counts():
    torch = pytest.importorskip("torch")
    for lib in (tg, torch):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        y = x.exp()
        assert y._version == 0
        d = y.detach()
        d.add_(1)
        assert (y._version, d._version) == (1, 1)


def test_a_result_saved_alone_then_rebased_in_place_keeps_torchs_checks():
    # exp_ records exp's node (its result saved alone, as the entry itself) and moves that entry
    # onto x's storage and counter: a later write to x is caught, the gradient is torch's
    def run(lib):
        w = lib.tensor([0.5, -1.0], requires_grad=True)
        x = w * 1.0
        x.exp_()
        y = x * 2.0
        g, = lib.autograd.grad(y.sum(), w, retain_graph=True)
        x.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        return g.numpy()
    g = run(tg)
    np.testing.assert_allclose(g, 2 * np.exp([0.5, -1.0]), rtol=1e-6)
    try:
        import torch
    except ImportError:
        return
    np.testing.assert_allclose(g, run(torch), rtol=1e-6)


@pytest.mark.parametrize("op", ["tanh", "exp", "sigmoid"])
def test_a_result_written_after_its_graph_was_freed_fails_the_second_order_graph(op):
    # found by the breaker: a create_graph backward unpacks the saved result (it gets the
    # counter), an ordinary backward then frees the entry; the output's later write must still
    # reach the unpacked tensor in the second-order graph, or its gradient is silently wrong
    def run(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        w = lib.tensor([2.0, 3.0], requires_grad=True)
        y = getattr(x, op)()
        loss = (y * w).sum()
        gx, = lib.autograd.grad(loss, x, create_graph=True)
        loss.backward()
        with lib.no_grad():
            y.mul_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            lib.autograd.grad(gx.sum(), w)
        return y._version
    version = run(tg)
    try:
        import torch
    except ImportError:
        return
    assert version == run(torch)


@pytest.mark.parametrize("op", ["tanh", "exp", "relu"])
def test_a_result_given_new_data_then_written_still_fails_backward(op):
    # found by the breaker: torch keeps a tensor's version counter across ``.data = ...``
    def run(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = getattr(x, op)()
        y.data = lib.tensor([7.0, 7.0])
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        return x.grad, y._version
    grad, version = run(tg)
    assert grad is None
    try:
        import torch
    except ImportError:
        return
    assert version == run(torch)[1]


def _unpacked_result(y):
    # the saved result as a tensor of its own, as torch's grad_fn._saved_result gives it
    return y.grad_fn._saved_result if hasattr(y.grad_fn, "_saved_result") \
        else y.grad_fn.saved_tensors[0]


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "relu"])
def test_a_write_through_the_unpacked_result_is_the_outputs_too(op):
    # found by the second breaker: the unpacked tensor made the counter, the output did not see
    # it (its _version stayed 0), and a product that had saved the output missed the write
    def run(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        w = lib.tensor([2.0, 3.0], requires_grad=True)
        y = getattr(x, op)()
        t = _unpacked_result(y)
        z = y * w
        with lib.no_grad():
            t.add_(1)
        versions = (y._version, t._version)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            lib.autograd.grad(z.sum(), w)
        return versions
    assert run(tg) == (1, 1)
    try:
        import torch
    except ImportError:
        return
    assert run(torch) == (1, 1)


def test_a_product_saving_a_result_written_before_records_that_version():
    # the other way round: written through the unpacked tensor first, then saved by a product,
    # which must record version 1 and so raise nothing
    def run(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        w = lib.tensor([2.0, 3.0], requires_grad=True)
        y = x.exp()
        with lib.no_grad():
            _unpacked_result(y).add_(0)
        z = y * w
        y.detach()
        return lib.autograd.grad(z.sum(), w)[0].numpy()
    g = run(tg)
    np.testing.assert_allclose(g, np.exp([0.5, 1.0]), rtol=1e-6)
    try:
        import torch
    except ImportError:
        return
    np.testing.assert_allclose(g, run(torch), rtol=1e-6)


def test_a_result_whose_array_a_module_replaced_still_counts_its_writes():
    # found by the second breaker: Module.double() swaps a .grad's array in place of .data
    def run(lib):
        m = lib.nn.Linear(2, 2, bias=False)
        x = lib.tensor([[0.5, 1.0], [0.2, 0.3]], requires_grad=True)
        y = x.exp()
        m.weight.grad = y
        m.double()
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        return x.grad
    _no_gradient_in_either(run)


@pytest.mark.parametrize("op", ["tanh", "exp", "relu", "softmax"])
@pytest.mark.parametrize("write", ["mul_", "div_"])
def test_an_in_place_op_on_a_result_saves_a_copy_with_its_own_counter(op, write):
    # found by the third breaker: mul_'s saved pre-write copy took the result's counter through
    # grad_fn, so a gradient that never needs the result raised; torch's gradient for w, and
    # the full backward's error blames the result's own node
    def run(lib):
        x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = getattr(x, op)(0) if op == "softmax" else getattr(x, op)()
        getattr(y, write)(w)
        g = lib.autograd.grad(y.sum(), w, retain_graph=True)[0].detach().numpy()
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            y.sum().backward()
        return g, str(info.value)
    g, message = run(tg)
    assert {"tanh": "TanhBackward0", "exp": "ExpBackward0", "relu": "ReluBackward0",
            "softmax": "SoftmaxBackward0"}[op] in message
    try:
        import torch
    except ImportError:
        return
    np.testing.assert_allclose(g, run(torch)[0], rtol=1e-6)


@pytest.mark.parametrize("outputs", [1, 2])
def test_a_custom_function_returning_a_result_made_elsewhere_keeps_its_counter(outputs):
    # found by the fourth breaker: the Function's node took over y's grad_fn, the only way back
    # to exp's saved entry, so y's later write went unseen and exp's gradient was wrong
    def run(lib):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        y = x.exp()
        first = y.sum()

        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return y if outputs == 1 else (y, a * 2)

            @staticmethod
            def backward(ctx, *grads):
                return grads[0]

        Fn.apply(lib.tensor([1.0, 2.0], requires_grad=True))
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            first.backward()
        return x.grad
    _no_gradient_in_either(run)
