"""A leaf's new ``.grad`` follows torch's layout contract (AccumulateGrad): the leaf's own
strides when the leaf is dense, else C-contiguous; a gradient that does not obey is copied into
that layout (a transposed gradient taken as is made ``.grad.view(-1)`` fail)."""
import numpy as np
import pytest

import tapegrad as tg


def _leaf(lib, kind):
    base = lib.arange(24.0).reshape(2, 3, 4)
    if kind == "contiguous":
        x = base.reshape(6, 4)
    elif kind == "transposed":
        x = base.reshape(6, 4).t()
    elif kind == "permuted":
        x = base.permute(2, 0, 1)
    elif kind == "size1":
        x = base.reshape(1, 6, 4)
    elif kind == "strided":        # (gaps: not dense)
        x = base.reshape(6, 4)[:, ::2]
    return x.detach().requires_grad_()


_LOSSES = {
    "t mul": lambda x: (x.t() * 2).t().sum() if x.dim() == 2 else (x * 2).sum(),
    "transposed upstream": lambda x: (x.reshape(-1, x.shape[-1]).t() ** 2).sum(),
    "permuted upstream": lambda x: x.unsqueeze(0).transpose(0, -1).sum(),
    "mul by a transposed tensor": lambda x: (x * x.detach().mT.contiguous().mT).sum()
    if x.dim() >= 2 else (x * x).sum(),
    "plain": lambda x: (x * 3).sum(),
}


def _layout(lib, kind, loss):
    x = _leaf(lib, kind)
    _LOSSES[loss](x).backward()
    g = x.grad
    return tuple(x.stride()), tuple(g.stride()), g.is_contiguous(), g.detach().numpy().tolist()


@pytest.mark.parametrize("loss", sorted(_LOSSES))
@pytest.mark.parametrize("kind", ["contiguous", "transposed", "permuted", "size1", "strided"])
def test_new_grad_layout_as_torch(kind, loss):
    torch = pytest.importorskip("torch")
    assert _layout(tg, kind, loss) == _layout(torch, kind, loss)


def test_transposed_gradient_of_a_contiguous_leaf_is_copied_contiguous():
    d = tg.ones(3, 4, requires_grad=True)
    (d.t() * 2).backward(tg.ones(4, 3))
    assert d.grad.stride() == (4, 1) and d.grad.is_contiguous()
    assert d.grad.view(-1).tolist() == [2.0] * 12
    assert d.grad._version == 1      # (a copy, as torch's clone: one write)


def test_transposed_leaf_keeps_its_layout_in_grad():
    w = tg.ones(5, 3).t().requires_grad_()
    (w * 2).sum().backward()
    assert w.grad.stride() == (1, 3) and not w.grad.is_contiguous()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 5), 2.0))


def test_accumulation_keeps_the_existing_grads_layout():
    d = tg.ones(3, 4, requires_grad=True)
    (d.t() * 2).backward(tg.ones(4, 3))
    (d.t() * 3).backward(tg.ones(4, 3))
    assert d.grad.stride() == (4, 1)
    np.testing.assert_array_equal(d.grad.numpy(), np.full((3, 4), 5.0))


def _graph_layout(lib, kind, loss):
    x = _leaf(lib, kind)
    _LOSSES[loss](x * x).backward(create_graph=True)
    g = x.grad
    return tuple(g.stride()), g.grad_fn.name(), g.detach().numpy().tolist()


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("loss", ["plain", "t mul"])
@pytest.mark.parametrize("kind", ["contiguous", "transposed", "permuted", "strided"])
def test_create_graph_grad_layout_as_torch(kind, loss):
    torch = pytest.importorskip("torch")
    assert _graph_layout(tg, kind, loss) == _graph_layout(torch, kind, loss)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_grad_of_a_transposed_leaf_keeps_its_layout():
    w = tg.ones(5, 3).t().requires_grad_()
    (w * w).sum().backward(create_graph=True)
    assert w.grad.stride() == (1, 3) and w.grad.grad_fn.name() == "torch::autograd::CopyBackwards"


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_grads_come_c_ordered_where_torch_clones_contiguous():
    # (a non-dense leaf and a retained non-leaf: torch's clone(contiguous_format))
    def run(lib):
        x = lib.arange(24.0).reshape(3, 8)[:, ::2].requires_grad_()
        w = lib.ones(4, 3, requires_grad=True)
        (x * w.t()).sum().backward(create_graph=True)
        z = lib.ones(3, 4, requires_grad=True)
        y = z * 2
        y.retain_grad()
        (y * lib.ones(4, 3).t()).sum().backward(create_graph=True)
        return (x.grad.stride(), x.grad.grad_fn.name(), list(x.grad.view(-1).shape),
                y.grad.stride())

    assert run(tg) == ((4, 1), "CloneBackward0", [12], (4, 1))
    torch = pytest.importorskip("torch")
    assert run(tg) == run(torch)


@pytest.mark.parametrize("kw", [{"momentum": 0.9, "weight_decay": 0.1}, {"momentum": 0.9},
                                {"momentum": 0.9, "weight_decay": 0.1, "nesterov": True},
                                {"momentum": 0.9, "weight_decay": 0.1, "maximize": True}],
                         ids=["wd", "plain", "nesterov", "maximize"])
def test_sgd_momentum_buffer_keeps_a_transposed_parameters_layout_as_torch(kw):
    def run(lib):
        p = lib.nn.Parameter(lib.arange(12.0).reshape(3, 4).t().clone())
        opt = lib.optim.SGD([p], lr=0.1, **kw)
        for _ in range(2):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
        return p.stride(), opt.state[p]["momentum_buffer"].stride(), p.detach().numpy()

    ours = run(tg)
    assert ours[:2] == ((1, 4), (1, 4))
    torch = pytest.importorskip("torch")
    theirs = run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
