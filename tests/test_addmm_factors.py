"""addmm with beta or alpha other than 1: one AddmmBackward0 node and BLAS's beta 0 (input's
values ignored, NaN included), as torch's addmm."""
import numpy as np
import pytest

import tapegrad as tg


def _run(lib):
    b = lib.tensor([float("nan"), 1.0, float("inf")], requires_grad=True)
    m1 = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    m2 = lib.tensor([[1.0, 0.5, -1.0], [2.0, 0.0, 1.0]], requires_grad=True)
    y = lib.addmm(b, m1, m2, beta=0, alpha=2.0)
    y.backward(lib.ones(2, 3))
    return (y.grad_fn.name(), y.detach().numpy().tolist(), b.grad.numpy().tolist(),
            m1.grad.numpy().tolist(), m2.grad.numpy().tolist())


def test_beta_zero_ignores_nan_input_and_records_one_node():
    name, y, gb, gm1, gm2 = _run(tg)
    assert name == "AddmmBackward0"
    assert y == [[10.0, 1.0, 2.0], [22.0, 3.0, 2.0]]
    assert gb == [0.0, 0.0, 0.0]
    assert gm1 == [[1.0, 6.0], [1.0, 6.0]] and gm2 == [[8.0] * 3, [12.0] * 3]


def test_beta_zero_as_torch():
    torch = pytest.importorskip("torch")
    assert _run(tg) == _run(torch)


@pytest.mark.parametrize("beta,alpha", [(0.5, 2.0), (2, 1), (1, -0.25)])
def test_factors_double_backward_as_torch(beta, alpha):
    torch = pytest.importorskip("torch")

    def run(lib):
        rng = np.random.default_rng(0)
        b, m1, m2 = (lib.tensor(rng.standard_normal(s), requires_grad=True)
                     for s in ((3,), (2, 4), (4, 3)))
        y = lib.addmm(b, m1, m2, beta=beta, alpha=alpha)
        g, = lib.autograd.grad((y * y).sum(), m1, create_graph=True)
        g.sum().backward()
        return [t.detach().numpy() for t in (y, g, b.grad, m2.grad)], y.grad_fn.name()

    (ours, on), (theirs, tn) = run(tg), run(torch)
    assert on == tn == "AddmmBackward0"
    for a, r in zip(ours, theirs):
        np.testing.assert_allclose(a, r, rtol=1e-12)


def test_factor_products_record_mul_backward1_as_torch():
    def run(lib):
        m1 = lib.ones(2, 4, dtype=lib.float64, requires_grad=True)
        m2 = lib.ones(4, 3, dtype=lib.float64, requires_grad=True)
        y = lib.addmm(lib.ones(3, dtype=lib.float64), m1, m2, alpha=2.0)
        g, = lib.autograd.grad(y.sum(), m1, create_graph=True)
        return g.grad_fn.name(), g.detach().numpy().tolist()

    assert run(tg)[0] == "MulBackward1"
    torch = pytest.importorskip("torch")
    assert run(tg) == run(torch)
