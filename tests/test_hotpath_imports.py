"""No import statement runs on the per-call hot paths.

On CPython 3.11 an ``import`` inside a function costs about 1.2 µs per call when it names a module
that is not a package: the import machinery looks up ``__path__`` on it, and the module raises and
drops an AttributeError each time. Four of them made a tiny ``backward()`` cost a third more than
it needed. These tests read the bytecode, so they fail as soon as such a statement comes back,
without timing anything."""
import dis

import numpy as np
import pytest

import tapegrad as tg
import tapegrad.autograd as autograd
from tapegrad._tensor import Tensor
from tapegrad.autograd import engine
from tapegrad.optim.optimizer import Optimizer
from tapegrad.ops import losses, nn_ops, pointwise, reduction, shape

HOT = {
    "Tensor.shape": Tensor.shape.fget,
    "Tensor.device": Tensor.device.fget,
    "Tensor.size": Tensor.size,
    "Tensor.backward": Tensor.backward,
    "Tensor.detach": Tensor.detach,
    "autograd.backward": autograd.backward,
    "autograd.grad": autograd.grad,
    "autograd._make_grads": autograd._make_grads,
    "autograd._as_tuple": autograd._as_tuple,
    "engine.run_backward": engine.run_backward,
    "engine._commit": engine._commit,
    "engine._owned": engine._owned,
    "Optimizer.zero_grad": Optimizer.zero_grad,
    "SumAll.backward": reduction.SumAll.backward,
    "MeanAll.backward": reduction.MeanAll.backward,
    "Expand.forward": shape.Expand.forward,
    "linear": nn_ops.linear,
    "log_softmax": nn_ops.log_softmax,
    "nll_loss": nn_ops.nll_loss,
    "NllLoss.forward": nn_ops.NllLoss.forward,
    "NllLoss.backward": nn_ops.NllLoss.backward,
    "mse_loss": losses.mse_loss,
    "Tensor.to": pointwise._to,
}


@pytest.mark.parametrize("name", sorted(HOT))
def test_no_import_statement(name):
    imports = [i.argval for i in dis.get_instructions(HOT[name]) if i.opname == "IMPORT_NAME"]
    assert not imports, f"{name} imports {imports} on every call: import at module level"


def test_backward_binds_its_names_once():
    # backward()/grad() bind what they need from modules that import the package at first use
    x = tg.ones(3, requires_grad=True)
    (x * 2.0).sum().backward()
    assert autograd.run_backward is engine.run_backward and autograd._Tensor is Tensor
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    g, = autograd.grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("dtype", [tg.float32, tg.float64, tg.float16, tg.int64, tg.bool])
@pytest.mark.parametrize("size", [(3,), (2, 3), (0,), (1, 4, 1)])
def test_expand_of_0d_is_a_read_only_zero_stride_view(dtype, size):
    # a 0-d tensor expands without np.broadcast_to; the view must be the same as its
    src = tg.tensor(1, dtype=dtype)
    e = src.expand(*size)
    ref = np.broadcast_to(src._data, size)
    assert e._data.shape == ref.shape and e._data.strides == ref.strides
    assert e._data.dtype == ref.dtype and not e._data.flags.writeable
    assert np.shares_memory(e._data, src._data) or e._data.size == 0
    src._data[()] = 0
    assert not e._data.any()    # (a view: sees the write)


def test_sum_and_mean_backward_through_the_0d_expand():
    torch = pytest.importorskip("torch")
    res = []
    for lib in (tg, torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(x.sin().sum() + x.mean(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        res.append((g.detach().numpy(), gg.numpy(), g.grad_fn.name()))
    (g1, gg1, n1), (g2, gg2, n2) = res
    np.testing.assert_allclose(g1, g2)
    np.testing.assert_allclose(gg1, gg2)
    assert n1 == n2
