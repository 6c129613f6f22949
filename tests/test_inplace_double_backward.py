"""An in-place op whose derivative needs the pre-write value keeps that value with its history,
so a gradient taken with create_graph=True through it stays connected (as torch's
original_self): double backward through in-place ops gives torch's second derivatives."""
import numpy as np
import pytest

import tapegrad as tg

CASES = {
    "mul_": lambda y, w: y.mul_(w),
    "div_": lambda y, w: y.div_(w),
    "sin_": lambda y, w: y.sin_().mul(w),
    "exp_": lambda y, w: y.exp_().mul(w),
    "pow_": lambda y, w: y.pow_(3).mul(w),
    "atan2_": lambda y, w: y.atan2_(w),
    "lerp_": lambda y, w: y.lerp_(w, w),
    "sinc_": lambda y, w: y.sinc_().mul(w),
}


def _second(lib, name):
    x = lib.tensor([0.5, 1.5], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([2.0, -1.25], dtype=lib.float64, requires_grad=True)
    y = CASES[name](x * 1, w)
    gx, gw = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True)
    assert gx.requires_grad and gw.requires_grad
    hx, hw = lib.autograd.grad((gx * gx).sum() + gw.sum(), (x, w))
    return gx.tolist(), gw.tolist(), hx.tolist(), hw.tolist()


@pytest.mark.parametrize("name", list(CASES))
def test_gradient_through_an_inplace_op_is_differentiable(name):
    _second(tg, name)


@pytest.mark.parametrize("name", list(CASES))
def test_second_derivative_through_an_inplace_op_as_torch(name):
    torch = pytest.importorskip("torch")
    for a, b in zip(_second(tg, name), _second(torch, name)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck_through_an_inplace_op(name):
    def f(x, w):
        return CASES[name](x * 1, w)
    x = tg.tensor([0.5, 1.5], dtype=tg.float64, requires_grad=True)
    w = tg.tensor([2.0, -1.25], dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradgradcheck(f, (x, w))
