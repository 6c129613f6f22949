"""gradcheck / gradgradcheck: they pass on correct derivatives and name what is wrong otherwise."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import Function, gradcheck, gradgradcheck

GradcheckError = sys.modules["tapegrad.autograd.gradcheck"].GradcheckError


def _t(*shape, seed=0, low=-1.0, high=1.0, requires_grad=True):
    rng = np.random.default_rng(seed)
    return tapegrad.tensor(rng.uniform(low, high, size=shape), dtype=tapegrad.float64,
                           requires_grad=requires_grad)


# ---- custom Functions with deliberately wrong (or odd) derivatives ------------------------------
class WrongCube(Function):
    """x ** 3 with the derivative of x ** 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2 * x


class MulWrongOther(Function):
    """a * b whose gradient for b (input 1) is wrong."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a * 1.5


class TwoOutputsWrongSecond(Function):
    """(sin x, cos x) with a wrong derivative for the second output."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), x.cos()

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        x, = ctx.saved_tensors
        return g_sin * x.cos() + g_cos * x.sin()  # should be -sin


class SquareDetachedBackward(Function):
    """x ** 2 with a first derivative that is right but not differentiable (x is detached)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2 * x.detach()


class IgnoresGradOutput(Function):
    """sum(x) whose backward returns ones whatever grad_output is."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = tuple(x.shape)
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        return tapegrad.ones(ctx.shape, dtype=tapegrad.float64)


class NoisyBackward(Function):
    """2x whose backward adds a little noise: right on average, not deterministic."""
    rng = np.random.default_rng(0)

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        noise = NoisyBackward.rng.normal(0, 1e-9, size=tuple(g.shape))
        return g * (tapegrad.tensor(noise, dtype=tapegrad.float64) + 2)


class SlightlyOff(Function):
    """3x with derivative 3 * (1 + 1e-4)."""

    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * (3 * (1 + 1e-4))


# ---- passing cases -------------------------------------------------------------------------------
def test_gradcheck_is_the_function_not_the_module():
    import tapegrad.autograd as A
    assert callable(A.gradcheck) and callable(A.gradgradcheck)
    assert A.gradcheck.__name__ == "gradcheck" and A.gradgradcheck.__name__ == "gradgradcheck"
    assert issubclass(GradcheckError, RuntimeError)


@pytest.mark.parametrize("fn,shapes", [
    (lambda x: x.exp(), [(3,)]),
    (lambda x: x.tanh().sum(), [(2, 3)]),
    (lambda x, y: x * y, [(3, 1), (4,)]),
    (lambda x, y: (x @ y).sigmoid(), [(2, 3), (3, 2)]),
    (lambda x: tapegrad.softmax(x, dim=1), [(2, 4)]),
    (lambda x: (x.sin(), x.cos() * 2), [(3,)]),
    (lambda x: x.max(1), [(2, 3)]),
])
def test_gradcheck_passes_on_correct_ops(fn, shapes):
    inputs = tuple(_t(*s, seed=k) for k, s in enumerate(shapes))
    assert gradcheck(fn, inputs) is True


def test_gradcheck_accepts_a_single_tensor_non_tensor_args_and_lists():
    x = _t(2, 3)
    assert gradcheck(lambda x: x * 2.0, x)
    assert gradcheck(lambda x, p: x ** p, (x.abs() + 0.5, 3))
    a, b = _t(2, 3, seed=1), _t(1, 3, seed=2)
    assert gradcheck(lambda ts: tapegrad.cat(ts, 0), ([a, b],))


def test_inputs_that_do_not_require_grad_are_constants():
    x, c = _t(3), _t(3, seed=5, requires_grad=False)
    assert gradcheck(lambda x, c: x * c, (x, c))


def test_unused_input_has_zero_jacobian():
    x, y = _t(3), _t(2, seed=1)
    assert gradcheck(lambda x, y: x * 2, (x, y))


def test_inputs_are_restored_exactly():
    x = _t(2, 3)
    before = x._data.copy()
    gradcheck(lambda x: x.exp(), (x,))
    np.testing.assert_array_equal(x._data, before)
    assert x.grad is None  # gradcheck uses autograd.grad: no .grad is touched


def test_non_differentiable_outputs_are_skipped():
    x = _t(2, 3)
    assert gradcheck(lambda x: (x.exp(), x.argmax(), x > 0), (x,))
    assert gradcheck(lambda x: x > 0, (x,))  # no differentiable output, locally constant


def test_custom_function_with_correct_backward_passes():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x * x

    assert gradcheck(Cube.apply, (_t(4),))
    assert gradgradcheck(Cube.apply, (_t(4),))


# ---- failures name what is wrong -----------------------------------------------------------------
def test_wrong_derivative_raises_naming_input_and_output():
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongCube.apply, (_t(3),))
    msg = str(info.value)
    assert "Jacobian mismatch for output 0 with respect to input 0" in msg
    assert "numerical:" in msg and "analytical:" in msg


def test_wrong_derivative_of_second_input_names_input_1():
    with pytest.raises(GradcheckError, match="output 0 with respect to input 1"):
        gradcheck(MulWrongOther.apply, (_t(3), _t(3, seed=1)))


def test_wrong_derivative_of_second_output_names_output_1():
    with pytest.raises(GradcheckError, match="output 1 with respect to input 0"):
        gradcheck(TwoOutputsWrongSecond.apply, (_t(3),))


def test_input_index_counts_only_inputs_that_require_grad():
    c = _t(3, seed=3, requires_grad=False)
    with pytest.raises(GradcheckError, match="output 0 with respect to input 0"):
        gradcheck(lambda c, x: WrongCube.apply(x) + c, (c, _t(3)))


def test_raise_exception_false_returns_false():
    assert gradcheck(WrongCube.apply, (_t(3),), raise_exception=False) is False
    assert gradgradcheck(SquareDetachedBackward.apply, (_t(3),), raise_exception=False) is False


def test_tolerances_are_respected():
    x = _t(3)
    assert gradcheck(SlightlyOff.apply, (x,))  # rtol 1e-3 accepts a 1e-4 relative error
    with pytest.raises(GradcheckError):
        gradcheck(SlightlyOff.apply, (x,), rtol=1e-6, atol=1e-9)


def test_backward_ignoring_grad_output_is_caught():
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(IgnoresGradOutput.apply, (_t(3),))


def test_nondeterministic_backward_is_caught():
    with pytest.raises(GradcheckError, match="not reentrant"):
        gradcheck(NoisyBackward.apply, (_t(3),))
    assert gradcheck(NoisyBackward.apply, (_t(3),), nondet_tol=1e-6)


def test_output_that_ignores_autograd_but_changes_is_caught():
    with pytest.raises(GradcheckError, match="expected to be zero"):
        gradcheck(lambda x: x.detach() * 2, (_t(3),))


def test_argument_errors():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda x: x * 2, (_t(3, requires_grad=False),))
    x = tapegrad.tensor([1.0], dtype=tapegrad.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="stride 0"):
        gradcheck(lambda e: e * 2, (x.detach().expand(3).requires_grad_(),))
    with pytest.raises(NotImplementedError):
        gradcheck(lambda x: x * 2, (_t(3),), check_forward_ad=True)


def test_float32_input_warns():
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        gradcheck(lambda x: x * 2, (x,), raise_exception=False)


# ---- gradgradcheck -------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,shapes", [
    (lambda x: x.tanh(), [(3,)]),
    (lambda x, y: x * y, [(3, 1), (4,)]),
    (lambda x, y: x @ y, [(2, 3), (3, 2)]),
    (lambda x: tapegrad.log_softmax(x, dim=1), [(2, 3)]),
    (lambda x: (x.exp(), x.sin()), [(3,)]),
    (lambda x: x.sum(), [(2, 2)]),
])
def test_gradgradcheck_passes_on_correct_ops(fn, shapes):
    tapegrad.manual_seed(0)
    inputs = tuple(_t(*s, seed=k) for k, s in enumerate(shapes))
    assert gradgradcheck(fn, inputs) is True


def test_gradgradcheck_with_given_grad_outputs():
    x = _t(3)
    v = _t(3, seed=9)
    assert gradgradcheck(lambda x: x ** 3, (x,), (v,))
    assert gradgradcheck(lambda x: x ** 3, (x,), (v.detach(),))  # v need not require grad


def test_gradgradcheck_non_contiguous_grad_outputs():
    tapegrad.manual_seed(0)
    assert gradgradcheck(lambda x: x.exp(), (_t(2, 3),), gen_non_contig_grad_outputs=True)


def test_gradgradcheck_catches_a_backward_that_is_not_differentiable():
    x = _t(3)
    assert gradcheck(SquareDetachedBackward.apply, (x,))  # the first derivative is right
    with pytest.raises(GradcheckError, match="output 0 with respect to input 0"):
        gradgradcheck(SquareDetachedBackward.apply, (x,))


def test_gradgradcheck_checks_the_backward_not_the_forward():
    # WrongCube's backward (2 g x) is a wrong first derivative but a differentiable function
    # whose own derivatives autograd gets right: that is gradcheck's failure, not gradgradcheck's
    # (the same in torch)
    tapegrad.manual_seed(0)
    assert gradgradcheck(WrongCube.apply, (_t(3),))
    with pytest.raises(GradcheckError):
        gradcheck(WrongCube.apply, (_t(3),))


# ---- the same verdicts as torch's gradcheck ------------------------------------------------------
def test_verdicts_match_torch(torch):
    def torch_wrong_cube():
        class TWrongCube(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * 2 * x
        return TWrongCube.apply

    tx = torch.tensor(_t(3)._data, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.autograd.gradcheck(torch_wrong_cube(), (tx,), raise_exception=False) is False
        assert torch.autograd.gradcheck(torch.tanh, (tx,)) is True
    assert gradcheck(WrongCube.apply, (_t(3),), raise_exception=False) is False
    assert gradcheck(tapegrad.tanh, (_t(3),)) is True
