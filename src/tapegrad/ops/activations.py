"""Activation functions: leaky_relu, elu / selu / celu, silu, mish, softplus, softsign, hardtanh /
relu6, hardsigmoid, hardswish, logsigmoid, softmin, threshold, glu, tanhshrink, softshrink,
hardshrink and prelu, with the in-place forms torch has (``leaky_relu_``, ``elu_``, ``selu_``,
``celu_``, ``hardtanh_``, ``threshold_`` and ``inplace=True``).

Where torch records a primitive (``LeakyReluBackward0``, ``EluBackward0``, ...), so does this
module, with torch's node name; its gradient is a second primitive named as torch names the
double-backward node (``LeakyReluBackwardBackward0``, ...) whose own derivative is written with
Tensor ops, so every order of derivative is available. silu and mish take their gradient as Tensor
ops directly (torch does the same when a graph of the backward is recorded). softsign, tanhshrink
and softmin are composites, as in torch. Formulas: PyTorch's ``tools/autograd/derivatives.yaml``
entries named in each docstring; kinks take torch's subgradient (noted per op).

float16 inputs are computed in float32 and rounded once, as torch's CPU kernels do. Ops torch
refuses for integer or bool tensors raise NotImplementedError naming torch's kernel
(``"leaky_relu_cpu" not implemented for 'Long'``); hardtanh / relu6 / threshold keep integer
tensors (their bounds are truncated to integers, as torch converts them).
"""
from __future__ import annotations

import numpy as np

from .._dtype import scalar_name
from ..autograd.function import ArrayFunction
from ..autograd.grad_mode import state as _grad_state
from . import inplace as _inplace_mod
from ._registry import op
from ._util import _F32, _HALF, Tensor, _half_in_f32, _make, _wrap_dim, _zeros_of, need_float
from .nn_ops import _softmax_dim, softmax
from .pointwise import Neg, sigmoid, tanh, where


# ---- helpers ------------------------------------------------------------------------------------
def _c(v, dt):
    """The number ``v`` as a scalar of float dtype ``dt`` (the precision torch's kernel uses)."""
    return dt.type(v)


def _number(v, op_name, arg):
    """A Scalar argument: a Python number, a NumPy scalar or a one-element tensor, as a Python
    number (TypeError otherwise, as torch)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, Tensor) and v._data.size == 1:
        return v._data.item()
    raise TypeError(f"{op_name}(): argument '{arg}' must be Number, not {type(v).__name__}")


def _mask(x, fn):
    """A constant bool tensor ``fn(x's array)``."""
    return _make(np.asarray(fn(x._data)))


def _check_fits(x, op_name, **values):
    """torch refuses a finite Scalar that the float tensor's dtype cannot hold."""
    if x.dtype.kind != "f":
        return
    top = float(np.finfo(x.dtype).max)
    for name, v in values.items():
        if abs(v) > top and abs(v) != float("inf") and v == v:
            raise RuntimeError(f"value cannot be converted to type {scalar_name(x.dtype)} without "
                               f"overflow ({op_name}: {name}={v!r} is beyond the largest "
                               f"{x.dtype}, {top:g})")


def _int_bound(v):
    """A bound as torch converts it for an integer tensor: truncated toward zero."""
    return int(v) if v == v and abs(v) != float("inf") else v


def _inplace(x, F, args, opname):
    """Run ``F`` in place on ``x`` (see ops/inplace.py: version counter, rebased history,
    CopySlices for a view, the leaf / view errors)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{opname}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return _inplace_mod.inplace(x, F, args, opname)


def _tensor_arg(x, op_name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op_name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


# ---- leaky_relu ---------------------------------------------------------------------------------
def _leaky_array(x, slope):
    need_float(x.dtype, "leaky_relu_cpu")

    def f(a):
        return np.where(a > 0, a, a * _c(slope, a.dtype))
    return _half_in_f32(f, x)


class LeakyRelu(ArrayFunction, name="LeakyReluBackward0"):
    """x where x > 0, else x * negative_slope. derivatives.yaml leaky_relu: self:
    leaky_relu_backward(grad, self, negative_slope, false) (slope at 0: leaky_relu'(0) =
    negative_slope)."""

    @staticmethod
    def forward(ctx, x, slope):
        ctx.slope = slope
        ctx.save_for_backward(x)
        return _leaky_array(x, slope)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return LeakyReluGrad.apply(g, x, ctx.slope, False), None


_LEAKY_INPLACE_NEG = ("In-place leakyReLu backward calculation is triggered with a negative slope "
                      "which is not supported. (leaky_relu_ saved its result, from which the input "
                      "cannot be recovered when negative_slope < 0: call the out-of-place "
                      "leaky_relu instead.)")


class LeakyReluInplace(ArrayFunction, name="LeakyReluBackward1", saves_result=True):
    """leaky_relu_: the same values, gradient from the saved result (derivatives.yaml leaky_relu_:
    leaky_relu_backward(grad, result, negative_slope, true)). A negative slope raises
    RuntimeError in backward, as torch."""

    @staticmethod
    def forward(ctx, x, slope):
        y = _leaky_array(x, slope)
        ctx.slope = slope
        return y

    @staticmethod
    def backward(ctx, g):
        if ctx.slope < 0:
            raise RuntimeError(_LEAKY_INPLACE_NEG)
        y, = ctx.saved_tensors
        return LeakyReluGrad.apply(g, y, ctx.slope, True), None


class _MaskGrad(ArrayFunction):
    """Base of the gradient ops that pass grad where a mask of x holds (leaky_relu, hardtanh,
    threshold, softshrink/hardshrink): a subclass's forward(ctx, g, x, *numbers) keeps the numbers
    in ``ctx.params`` and saves x. Derivative: the same mask applied to the incoming gradient;
    zero for x (the mask is piecewise constant; zeros, not None, as torch's zeros_like)."""

    @staticmethod
    def backward(ctx, gg):
        x, = ctx.saved_tensors
        p = ctx.params
        return (type(ctx)._forward_cls.apply(gg, x, *p) if ctx.needs(0) else None,
                _zeros_of(x) if ctx.needs(1) else None) + (None,) * len(p)


class LeakyReluGrad(_MaskGrad, name="LeakyReluBackwardBackward0"):
    """leaky_relu_backward(grad, self_or_result): grad where self > 0, else grad * slope.
    derivatives.yaml: grad_output: the same op on the incoming grad; self: zeros_like(grad)."""

    @staticmethod
    def forward(ctx, g, x, slope, is_result):
        ctx.params = (slope, is_result)
        ctx.save_for_backward(x)
        return _half_in_f32(lambda g2, x2: np.where(x2 > 0, g2, g2 * _c(slope, g2.dtype)), g, x)


# ---- elu, selu, celu ----------------------------------------------------------------------------
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _elu_array(x, alpha, scale, input_scale, kernel="elu_cpu"):
    need_float(x.dtype, kernel)

    def f(a):
        dt = a.dtype
        neg = _c(alpha, dt) * _c(scale, dt)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(a > 0, a * _c(scale, dt), np.expm1(a * _c(input_scale, dt)) * neg)
    return _half_in_f32(f, x)


class Elu(ArrayFunction, name="EluBackward0"):
    """scale * x where x > 0, else alpha * scale * (exp(x * input_scale) - 1) (expm1). elu is
    (alpha, 1, 1), selu (1.6733, 1.0507, 1). derivatives.yaml elu: self: elu_backward(grad,
    alpha, scale, input_scale, is_result=false, self) (at 0 the exponential side:
    alpha * scale * input_scale)."""

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        ctx.params = (alpha, scale, input_scale)
        ctx.save_for_backward(x)
        return _elu_array(x, alpha, scale, input_scale)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return (EluGrad.apply(g, x, *ctx.params, False), None, None, None)


_ELU_INPLACE_NEG = ("In-place elu backward calculation is triggered with a negative slope which is "
                    "not supported. ({} saved its result, from which the input cannot be "
                    "recovered when alpha < 0: call the out-of-place {} instead.)")


class EluInplace(ArrayFunction, name="EluBackward1", saves_result=True):
    """elu_ / selu_: the same values, gradient from the saved result (derivatives.yaml elu_:
    elu_backward(grad, alpha, scale, input_scale, is_result=true, result)). A negative alpha
    raises RuntimeError in backward, as torch."""

    @staticmethod
    def forward(ctx, x, alpha, scale, input_scale):
        y = _elu_array(x, alpha, scale, input_scale)
        ctx.params = (alpha, scale, input_scale)
        return y

    @staticmethod
    def backward(ctx, g):
        if ctx.params[0] < 0:
            raise RuntimeError(_ELU_INPLACE_NEG.format("elu_", "elu"))
        y, = ctx.saved_tensors
        return (EluGrad.apply(g, y, *ctx.params, True), None, None, None)


def _celu_backward_scale(alpha):
    # derivatives.yaml celu: input_scale = 1.0 / alpha.toFloat() (alpha through float32)
    return 1.0 / float(np.float32(alpha))


class Celu(ArrayFunction, name="CeluBackward0"):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): elu with scale 1 and input_scale
    1 / alpha. derivatives.yaml celu: self: elu_backward(grad, alpha, 1, 1.0 / float(alpha),
    false, self)."""

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        ctx.save_for_backward(x)
        return _elu_array(x, alpha, 1.0, 1.0 / alpha)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        a = ctx.alpha
        return EluGrad.apply(g, x, a, 1.0, _celu_backward_scale(a), False), None


class CeluInplace(ArrayFunction, name="CeluBackward1", saves_result=True):
    """celu_: gradient from the saved result (derivatives.yaml celu_: elu_backward(grad, alpha,
    1, 1.0 / float(alpha), true, result)); RuntimeError in backward for alpha < 0."""

    @staticmethod
    def forward(ctx, x, alpha):
        y = _elu_array(x, alpha, 1.0, 1.0 / alpha)
        ctx.alpha = alpha
        return y

    @staticmethod
    def backward(ctx, g):
        a = ctx.alpha
        if a < 0:
            raise RuntimeError(_ELU_INPLACE_NEG.format("celu_", "celu"))
        y, = ctx.saved_tensors
        return EluGrad.apply(g, y, a, 1.0, _celu_backward_scale(a), True), None


def _elu_grad_array(g, sr, alpha, scale, input_scale, is_result):
    def f(g2, s2):
        dt = g2.dtype
        neg, pos, ins = _c(alpha, dt) * _c(scale, dt), _c(scale, dt), _c(input_scale, dt)
        if is_result:
            return np.where(s2 <= 0, g2 * ins * (s2 + neg), g2 * pos)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(s2 <= 0, g2 * ins * neg * np.exp(s2 * ins), g2 * pos)
    return _half_in_f32(f, g, sr)


class EluGrad(ArrayFunction, name="EluBackwardBackward0"):
    """elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result): where
    self_or_result <= 0, grad * input_scale * alpha * scale * exp(x * input_scale) (from the
    input) or grad * input_scale * (result + alpha * scale) (from the result); elsewhere
    grad * scale. derivatives.yaml elu_backward: grad_output: the same op on the incoming grad;
    self_or_result: elu_double_backward (its derivative where self_or_result < 0, else 0)."""

    @staticmethod
    def forward(ctx, g, sr, alpha, scale, input_scale, is_result):
        ctx.params = (alpha, scale, input_scale, is_result)
        ctx.save_for_backward(g if ctx.needs(1) else None, sr)
        return _elu_grad_array(g, sr, alpha, scale, input_scale, is_result)

    @staticmethod
    def backward(ctx, gg):
        g, sr = ctx.saved_tensors
        alpha, scale, ins, is_result = ctx.params
        ggo = EluGrad.apply(gg, sr, *ctx.params) if ctx.needs(0) else None
        gsr = None
        if ctx.needs(1):
            # torch's elu_double_backward: nonzero only where self_or_result < 0 (not at 0)
            neg_side = _mask(sr, lambda a: a < 0)
            if is_result:
                gsr = where(neg_side, gg * g * ins, 0.0)
            else:
                gsr = where(neg_side, EluGrad.apply(gg * g * ins, sr, alpha, scale, ins, False),
                            0.0)
        return ggo, gsr, None, None, None, None


# ---- silu, mish ---------------------------------------------------------------------------------
def _silu_array(x):
    need_float(x.dtype, "silu_cpu")

    def f(a):
        with np.errstate(over="ignore"):
            return a / (1 + np.exp(-a))
    return _half_in_f32(f, x)


class Silu(ArrayFunction, name="SiluBackward0"):
    """x * sigmoid(x), as x / (1 + exp(-x)). derivatives.yaml silu: self:
    grad * sigmoid(x) * (1 + x * (1 - sigmoid(x))) (torch's infinitely differentiable form when a
    graph is recorded: Tensor ops here, ending in MulBackward0 as torch's)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _silu_array(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        if not _grad_state.record:
            def f(g2, x2):
                with np.errstate(over="ignore"):
                    s = 1 / (1 + np.exp(-x2))
                return g2 * (s * (1 + x2 * (1 - s)))
            return _make(_half_in_f32(f, g._data, x._data))
        s = sigmoid(x)
        return g * (s * (1 + x * (1 - s)))


def _mish_array(x):
    need_float(x.dtype, "mish_cpu")

    def f(a):
        with np.errstate(over="ignore"):
            return a * np.tanh(np.log1p(np.exp(a)))
    return _half_in_f32(f, x)


class Mish(ArrayFunction, name="MishBackward0"):
    """x * tanh(softplus(x)). derivatives.yaml mish: self: grad * (tanh(softplus(x)) +
    x * sigmoid(x) * (1 - tanh(softplus(x)) ** 2)) (Tensor ops when a graph is recorded, ending
    in MulBackward0 as torch's)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _mish_array(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        if not _grad_state.record:
            def f(g2, x2):
                with np.errstate(over="ignore"):
                    t = np.tanh(np.log1p(np.exp(x2)))
                    s = 1 / (1 + np.exp(-x2))
                return g2 * (t + x2 * s * (1 - t * t))
            return _make(_half_in_f32(f, g._data, x._data))
        t = tanh(Softplus.apply(x, 1, 20))
        return g * (t + x * sigmoid(x) * (1 - t * t))


# ---- softplus -----------------------------------------------------------------------------------
def _softplus_array(x, beta, threshold):
    need_float(x.dtype, "softplus_cpu")

    def f(a):
        dt = a.dtype
        b = _c(beta, dt)
        z = a * b
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return np.where(z > _c(threshold, dt), a, np.log1p(np.exp(z)) / b)
    return _half_in_f32(f, x)


class Softplus(ArrayFunction, name="SoftplusBackward0"):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
    derivatives.yaml softplus: self: softplus_backward(grad, self, beta, threshold)."""

    @staticmethod
    def forward(ctx, x, beta, threshold):
        ctx.params = (beta, threshold)
        ctx.save_for_backward(x)
        return _softplus_array(x, beta, threshold)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return SoftplusGrad.apply(g, x, *ctx.params), None, None


class SoftplusGrad(ArrayFunction, name="SoftplusBackwardBackward0"):
    """softplus_backward(grad, x, beta, threshold): grad where beta * x > threshold, else
    grad * z / (z + 1) with z = exp(beta * x). derivatives.yaml softplus_backward: grad_output:
    the same op on the incoming grad; self: softplus_double_backward: grad * grad_output * beta *
    sigmoid(beta x) * (1 - sigmoid(beta x)) where beta * x < threshold, else 0 (a strict ``<``,
    as torch's softplus_double_backward, so at beta * x == threshold the first derivative takes
    the log1p branch and the second derivative is 0)."""

    @staticmethod
    def forward(ctx, g, x, beta, threshold):
        ctx.params = (beta, threshold)
        ctx.save_for_backward(g if ctx.needs(1) else None, x)

        def f(g2, x2):
            dt = x2.dtype
            zb = x2 * _c(beta, dt)
            with np.errstate(over="ignore", invalid="ignore"):
                z = np.exp(zb)
                return np.where(zb > _c(threshold, dt), g2, g2 * z / (z + 1))
        return _half_in_f32(f, g, x)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        beta, threshold = ctx.params
        ggo = SoftplusGrad.apply(gg, x, beta, threshold) if ctx.needs(0) else None
        gx = None
        if ctx.needs(1):
            s = sigmoid(x * beta)
            inside = _mask(x, lambda a: a * _c(beta, a.dtype) < _c(threshold, a.dtype))
            gx = where(inside, gg * g * beta * (s * (1 - s)), 0.0)
        return ggo, gx, None, None


# ---- hardtanh, relu6 ----------------------------------------------------------------------------
def _hardtanh_array(x, lo, hi):
    if x.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if x.dtype.kind == "u" and (lo < 0 or hi < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if x.dtype.kind in "iu":
        info = np.iinfo(x.dtype)

        def fit(v):     # truncated, and kept within the type (a bound beyond it clamps to it)
            v = _int_bound(v)
            return x.dtype.type(min(max(v, int(info.min)), int(info.max)))
        return np.minimum(fit(hi), np.maximum(fit(lo), x))

    def f(a):
        dt = a.dtype
        # the bound first: NumPy returns its second argument on a tie, and torch keeps x (a
        # -0.0 input stays -0.0 at a bound of 0)
        return np.minimum(_c(hi, dt), np.maximum(_c(lo, dt), a))
    return _half_in_f32(f, x)


class Hardtanh(ArrayFunction, name="HardtanhBackward0"):
    """clamp(x, min_val, max_val). derivatives.yaml hardtanh: self: hardtanh_backward(grad,
    self, min_val, max_val): grad where min_val < x < max_val, 0 at and beyond the bounds (so
    relu6'(0) = relu6'(6) = 0)."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.bounds = (lo, hi)
        ctx.save_for_backward(x)
        return _hardtanh_array(x, lo, hi)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return HardtanhGrad.apply(g, x, *ctx.bounds), None, None


class HardtanhGrad(_MaskGrad, name="HardtanhBackwardBackward0"):
    """hardtanh_backward(grad, x, min_val, max_val): grad where min_val < x < max_val, else 0.
    derivatives.yaml hardtanh_backward: grad_output: the same op; self: zeros_like(grad)."""

    @staticmethod
    def forward(ctx, g, x, lo, hi):
        ctx.params = (lo, hi)
        ctx.save_for_backward(x)

        def f(g2, x2):
            dt = x2.dtype
            return np.where((x2 <= _c(lo, dt)) | (x2 >= _c(hi, dt)), _c(0, g2.dtype), g2)
        return _half_in_f32(f, g, x)


# ---- hardsigmoid, hardswish ---------------------------------------------------------------------
def _hardsigmoid_array(x):
    need_float(x.dtype, "hardsigmoid_cpu")

    def f(a):
        dt = a.dtype
        return np.minimum(np.maximum(a + _c(3, dt), _c(0, dt)), _c(6, dt)) / _c(6, dt)
    return _half_in_f32(f, x)


class Hardsigmoid(ArrayFunction, name="HardsigmoidBackward0"):
    """min(max(x + 3, 0), 6) / 6. derivatives.yaml hardsigmoid: self: hardsigmoid_backward(grad,
    self): grad / 6 where -3 < x < 3, else 0 (0 at +-3)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _hardsigmoid_array(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return HardsigmoidGrad.apply(g, x)


_SIXTH32 = float(np.float32(1) / np.float32(6))


class HardsigmoidGrad(ArrayFunction, name="NotImplemented"):
    """hardsigmoid_backward(grad, x) = grad / 6 where -3 < x < 3, else 0. torch has no derivative
    for it: a double backward through hardsigmoid reaches this ``NotImplemented`` node, whose
    backward raises RuntimeError, as in torch."""

    @staticmethod
    def forward(ctx, g, x):
        def f(g2, x2):
            dt = x2.dtype
            # torch multiplies by 1/6 taken in float32, in every dtype
            return np.where((x2 > _c(-3, dt)) & (x2 < _c(3, dt)), g2 * _c(_SIXTH32, dt),
                            _c(0, dt))
        return _half_in_f32(f, g, x)

    @staticmethod
    def backward(ctx, gg):
        raise RuntimeError("derivative for aten::hardsigmoid_backward is not implemented")


def _hardswish_array(x):
    need_float(x.dtype, "hardswish_cpu")

    def f(a):
        dt = a.dtype
        return a * np.minimum(np.maximum(a + _c(3, dt), _c(0, dt)), _c(6, dt)) / _c(6, dt)
    return _half_in_f32(f, x)


class Hardswish(ArrayFunction, name="HardswishBackward0"):
    """x * min(max(x + 3, 0), 6) / 6. derivatives.yaml hardswish: self: hardswish_backward(grad,
    self): 0 where x <= -3, grad * (x / 3 + 0.5) where -3 < x < 3, grad where x >= 3 (so 0 at
    -3 and grad at 3, as torch)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _hardswish_array(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return HardswishGrad.apply(g, x)


class HardswishGrad(ArrayFunction, name="HardswishBackwardBackward0"):
    """hardswish_backward(grad, x). derivatives.yaml hardswish_backward: grad_output: the same op
    on the incoming grad; self: grad * grad_output / 3 where -3 < x < 3, else 0."""

    @staticmethod
    def forward(ctx, g, x):
        ctx.save_for_backward(g if ctx.needs(1) else None, x)

        def f(g2, x2):
            dt = x2.dtype
            mid = g2 * (x2 / _c(3, dt) + _c(0.5, dt))
            return np.where(x2 <= _c(-3, dt), _c(0, dt), np.where(x2 < _c(3, dt), mid, g2))
        return _half_in_f32(f, g, x)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        ggo = HardswishGrad.apply(gg, x) if ctx.needs(0) else None
        gx = None
        if ctx.needs(1):
            gx = where(_mask(x, lambda a: (a > -3) & (a < 3)), gg * g / 3.0, 0.0)
        return ggo, gx


# ---- logsigmoid ---------------------------------------------------------------------------------
def _logsigmoid_array(x):
    need_float(x.dtype, "log_sigmoid_cpu")

    def f(a):
        return np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
    return _half_in_f32(f, x)


class LogSigmoid(ArrayFunction, name="LogSigmoidBackward0"):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for any |x|. derivatives.yaml
    log_sigmoid_forward: self: log_sigmoid_backward(grad, self, buffer) = grad * sigmoid(-x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _logsigmoid_array(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return LogSigmoidGrad.apply(g, x)


class LogSigmoidGrad(ArrayFunction, name="LogSigmoidBackwardBackward0"):
    """log_sigmoid_backward(grad, x) = grad * sigmoid(-x), as z / (1 + z) with z = exp(-|x|)
    (no overflow). derivatives.yaml log_sigmoid_backward: grad_output: the same op; self:
    log_sigmoid_double_backward(grad * grad_output, self) = -grad * grad_output * sigmoid(x) *
    (1 - sigmoid(x))."""

    @staticmethod
    def forward(ctx, g, x):
        ctx.save_for_backward(g if ctx.needs(1) else None, x)

        def f(g2, x2):
            z = np.exp(-np.abs(x2))
            q = z / (1 + z)
            return g2 * np.where(x2 < 0, 1 - q, q)
        return _half_in_f32(f, g, x)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        ggo = LogSigmoidGrad.apply(gg, x) if ctx.needs(0) else None
        gx = None
        if ctx.needs(1):
            s = sigmoid(x)
            gx = gg * g * (s * (s - 1))
        return ggo, gx


# ---- threshold ----------------------------------------------------------------------------------
def _threshold_array(x, th, value):
    if x.dtype == np.bool_:
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if x.dtype.kind in "iu":
        t = x.dtype.type
        return np.where(x <= t(_int_bound(th)), t(_int_bound(value)), x)
    return _half_in_f32(lambda a: np.where(a <= _c(th, a.dtype), _c(value, a.dtype), a), x)


class Threshold(ArrayFunction, name="ThresholdBackward0"):
    """value where x <= threshold, else x (NaN stays NaN). derivatives.yaml threshold: self:
    threshold_backward(grad, self, threshold): 0 where x <= threshold, else grad."""

    @staticmethod
    def forward(ctx, x, th, value):
        ctx.th = th
        ctx.save_for_backward(x)
        return _threshold_array(x, th, value)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return ThresholdGrad.apply(g, x, ctx.th), None, None


class ThresholdGrad(_MaskGrad, name="ThresholdBackwardBackward0"):
    """threshold_backward(grad, x, threshold): 0 where x <= threshold, else grad.
    derivatives.yaml threshold_backward: grad_output: the same op; self: zeros_like(grad)."""

    @staticmethod
    def forward(ctx, g, x, th):
        ctx.params = (th,)
        ctx.save_for_backward(x)
        return _half_in_f32(lambda g2, x2: np.where(x2 <= _c(th, x2.dtype), _c(0, g2.dtype), g2),
                            g, x)


# ---- softshrink, hardshrink ---------------------------------------------------------------------
class Softshrink(ArrayFunction, name="SoftshrinkBackward0"):
    """x - lambd where x > lambd, x + lambd where x < -lambd, else 0 (x * 0: NaN stays NaN).
    derivatives.yaml softshrink: self: softshrink_backward(grad, self, lambd): 0 where
    -lambd <= x <= lambd (the kinks included), else grad."""

    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        ctx.save_for_backward(x)

        def f(a):
            dt = a.dtype
            lo = _c(lambd, dt)
            return np.where(a > lo, a - lo, np.where(a < -lo, a + lo, a * 0))
        return _half_in_f32(f, x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return ShrinkGrad.apply(g, x, ctx.lambd), None


class Hardshrink(ArrayFunction, name="HardshrinkBackward0"):
    """0 where -lambd <= x <= lambd, else x. derivatives.yaml hardshrink: self:
    hardshrink_backward(grad, self, lambd): 0 where -lambd <= x <= lambd, else grad."""

    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        ctx.save_for_backward(x)

        def f(a):
            dt = a.dtype
            lo = _c(lambd, dt)
            return np.where((a >= -lo) & (a <= lo), _c(0, dt), a)
        return _half_in_f32(f, x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return HardshrinkGrad.apply(g, x, ctx.lambd), None


class ShrinkGrad(_MaskGrad, name="SoftshrinkBackwardBackward0"):
    """softshrink_backward(grad, x, lambd): 0 where -lambd <= x <= lambd, else grad.
    derivatives.yaml softshrink_backward: grad_output: the same op; self: zeros_like(grad)."""

    @staticmethod
    def forward(ctx, g, x, lambd):
        ctx.params = (lambd,)
        ctx.save_for_backward(x)

        def f(g2, x2):
            lo = _c(lambd, x2.dtype)
            return np.where((x2 >= -lo) & (x2 <= lo), _c(0, g2.dtype), g2)
        return _half_in_f32(f, g, x)


class HardshrinkGrad(ShrinkGrad, name="HardshrinkBackwardBackward0"):
    """hardshrink_backward(grad, x, lambd): the same mask as softshrink_backward.
    derivatives.yaml hardshrink_backward: grad_out: the same op; self: zeros_like(grad)."""


# ---- glu ----------------------------------------------------------------------------------------
def _sigmoid_array(b):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-b))


def _halves(x, d):
    n = x.shape[d] // 2
    idx_a = [slice(None)] * x.ndim
    idx_b = [slice(None)] * x.ndim
    idx_a[d], idx_b[d] = slice(0, n), slice(n, None)
    return x[tuple(idx_a)], x[tuple(idx_b)]


class Glu(ArrayFunction, name="GluBackward0"):
    """a * sigmoid(b), where a and b are the first and second halves of x along ``dim``.
    derivatives.yaml glu: self: glu_backward(grad, self, dim) = cat(grad * sigmoid(b),
    grad * a * sigmoid(b) * (1 - sigmoid(b)))."""

    @staticmethod
    def forward(ctx, x, d):
        ctx.d = d
        ctx.save_for_backward(x)

        def f(a):
            first, second = _halves(a, d)
            return first * _sigmoid_array(second)
        return _half_in_f32(f, x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return GluGrad.apply(g, x, ctx.d), None


class GluGrad(ArrayFunction, name="GluBackwardBackward0"):
    """glu_backward(grad, x, dim): the gradient of glu with respect to x (x's shape).
    derivatives.yaml glu_backward: grad_output: glu_double_backward_grad_output; self:
    glu_double_backward (the derivatives of the two halves below, as Tensor ops)."""

    @staticmethod
    def forward(ctx, g, x, d):
        ctx.d = d
        ctx.save_for_backward(g if ctx.needs(1) else None, x)

        def f(g2, x2):
            a, b = _halves(x2, d)
            s = _sigmoid_array(b)
            if x.dtype == _HALF:    # torch rounds sigmoid(b) to float16 first
                s = s.astype(_HALF).astype(_F32)
            return np.concatenate([s * g2, (1 - s) * s * a * g2], axis=d)
        return _half_in_f32(f, g, x)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        d = ctx.d
        from .shape import cat
        a, b = x.chunk(2, d)
        gga, ggb = gg.chunk(2, d)
        s = sigmoid(b)
        ds = s * (1 - s)
        ggo = gga * s + ggb * a * ds if ctx.needs(0) else None
        gx = None
        if ctx.needs(1):
            gx = cat([ggb * g * ds, (gga * g + ggb * g * a * (1 - s * 2)) * ds], d)
        return ggo, gx, None


# ---- prelu --------------------------------------------------------------------------------------
class PreluKernel(ArrayFunction, name="PreluKernelBackward0"):
    """x where x > 0, else weight * x (weight already shaped to broadcast against x).
    derivatives.yaml _prelu_kernel: self, weight: _prelu_kernel_backward(grad, self, weight):
    grad where x > 0 else weight * grad; for weight, 0 where x > 0 else x * grad (summed to the
    weight's shape)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return _half_in_f32(lambda a, b: np.where(a > 0, a, b * a), x, w)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return PreluKernelGrad.apply(g, x, w)


class PreluKernelGrad(ArrayFunction, name="PreluKernelBackwardBackward0"):
    """_prelu_kernel_backward(grad, x, weight) -> (grad_x, grad_weight), the second of x's
    (broadcast) shape (the engine sums it to the weight's shape). derivatives.yaml
    _prelu_kernel_backward: grad_output: A * where(x > 0, 1, w) + B * where(x > 0, 0, x);
    self: B * grad where x <= 0; weight: A * grad where x <= 0 (A, B: the incoming gradients of
    grad_x and grad_weight)."""

    @staticmethod
    def forward(ctx, g, x, w):
        ctx.save_for_backward(g if (ctx.needs(1) or ctx.needs(2)) else None, x, w)

        half = x.dtype == _HALF
        g2, x2, w2 = (a.astype(_F32) for a in (g, x, w)) if half else (g, x, w)
        pos = x2 > 0
        zero = _c(0, x2.dtype)
        gx = np.where(pos, g2, w2 * g2)
        gw = np.where(pos, zero, x2 * g2)
        if half:
            gx, gw = gx.astype(_HALF), gw.astype(_HALF)
        return gx, gw

    @staticmethod
    def backward(ctx, ga, gb):
        g, x, w = ctx.saved_tensors
        pos = _mask(x, lambda a: a > 0)
        ggo = where(pos, ga, ga * w) + where(pos, 0.0, gb * x) if ctx.needs(0) else None
        gx = where(pos, 0.0, gb * g) if ctx.needs(1) else None
        gw = where(pos, 0.0, ga * g) if ctx.needs(2) else None
        return ggo, gx, gw


# ---- in-place forms whose gradient needs the input ---------------------------------------------
# (ops/inplace.py keeps the input's pre-write value with its history, torch's original self, so a
# double backward through it reaches the graph before the write)
class ThresholdInplace(Threshold, name="ThresholdBackward1"):
    """threshold_: :class:`Threshold` in place, recorded as torch's ThresholdBackward1."""


# ---- public functions ---------------------------------------------------------------------------
_INPLACE_RAISES = (" In place: writes into input and returns it; RuntimeError, before writing, for "
                   "a leaf that requires grad (grad mode on), a view made under no_grad / "
                   "inference mode written with grad mode on, an inference tensor outside "
                   "inference_mode(), an expanded (read-only) tensor (see ops/inplace.py).")


@op("leaky_relu", functional=True, method=False, namespace=False)
def leaky_relu(input, negative_slope=0.01, inplace=False):
    """input where input > 0, else input * negative_slope (LeakyReluBackward0; with
    ``inplace=True`` the in-place leaky_relu_, LeakyReluBackward1). Result: input's shape and
    float dtype. Derivative at 0: negative_slope. Raises NotImplementedError for an integer or
    bool input, TypeError for a non-number slope."""
    input = _tensor_arg(input, "leaky_relu")
    s = _number(negative_slope, "leaky_relu", "negative_slope")
    if inplace:
        return _inplace(input, LeakyReluInplace, (s,), "leaky_relu_")
    return LeakyRelu.apply(input, s)


@op("leaky_relu_", functional=True, method=False, namespace=False)
def leaky_relu_(input, negative_slope=0.01):
    """In-place leaky_relu; returns input (LeakyReluBackward1, which saves the result: its
    backward raises RuntimeError when negative_slope < 0, as torch's)."""
    return leaky_relu(input, negative_slope, inplace=True)


def _alpha(alpha, name):
    return _number(alpha, name, "alpha")


@op("elu", functional=True, method=False, namespace=False)
def elu(input, alpha=1.0, inplace=False):
    """input where input > 0, else alpha * (exp(input) - 1) (EluBackward0; ``inplace=True``:
    elu_, EluBackward1). Result: input's shape and float dtype. Derivative at 0: alpha.
    NotImplementedError for an integer or bool input."""
    input = _tensor_arg(input, "elu")
    a = _alpha(alpha, "elu")
    if inplace:
        return _inplace(input, EluInplace, (a, 1.0, 1.0), "elu_")
    return Elu.apply(input, a, 1.0, 1.0)


@op("elu_", functional=True, method=False, namespace=False)
def elu_(input, alpha=1.0):
    """In-place elu; returns input (EluBackward1: backward from the saved result, RuntimeError
    there when alpha < 0)."""
    return elu(input, alpha, inplace=True)


def _selu(input, inplace):
    input = _tensor_arg(input, "selu")
    if inplace:
        return _inplace(input, EluInplace, (_SELU_ALPHA, _SELU_SCALE, 1.0), "selu_")
    return Elu.apply(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


@op("selu", functional=True, method=False, namespace=False)
def selu(input, inplace=False):
    """scale * elu(input, alpha) with alpha = 1.6732632423543772, scale = 1.0507009873554805:
    recorded as torch does, EluBackward0 (``inplace=True``: selu_, EluBackward1). Result:
    input's shape and float dtype. NotImplementedError for an integer or bool input."""
    return _selu(input, inplace)


@op("selu_", functional=True, method=False, namespace=False)
def selu_(input):
    """In-place selu; returns input (EluBackward1)."""
    return _selu(input, True)


@op("selu", method=False)
def _torch_selu(input):
    """``tapegrad.selu(input)``: :func:`selu` without the ``inplace`` argument (as torch.selu)."""
    return _selu(input, False)


@op("selu_", method=False)
def _torch_selu_(input):
    """``tapegrad.selu_(input)``: in-place selu; returns input (EluBackward1)."""
    return _selu(input, True)


def _celu(input, alpha, inplace):
    input = _tensor_arg(input, "celu")
    a = _alpha(alpha, "celu")
    if a == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    if inplace:
        return _inplace(input, CeluInplace, (a,), "celu_")
    return Celu.apply(input, a)


@op("celu", functional=True, method=False, namespace=False)
def celu(input, alpha=1.0, inplace=False):
    """max(0, input) + min(0, alpha * (exp(input / alpha) - 1)) (CeluBackward0; ``inplace=True``:
    celu_, CeluBackward1). Result: input's shape and float dtype. RuntimeError for alpha == 0,
    NotImplementedError for an integer or bool input."""
    return _celu(input, alpha, inplace)


@op("celu_", functional=True, method=False, namespace=False)
def celu_(input, alpha=1.0):
    """In-place celu; returns input (CeluBackward1: RuntimeError in backward when alpha < 0)."""
    return _celu(input, alpha, True)


@op("celu", method=False)
def _torch_celu(input, alpha=1.0):
    """``tapegrad.celu(input, alpha=1.0)``: :func:`celu` without ``inplace`` (as torch.celu)."""
    return _celu(input, alpha, False)


@op("celu_", method=False)
def _torch_celu_(input, alpha=1.0):
    """``tapegrad.celu_(input, alpha=1.0)``: in-place celu; returns input (CeluBackward1)."""
    return _celu(input, alpha, True)


@op("silu", functional=True, method=False, namespace=False)
def silu(input, inplace=False):
    """input * sigmoid(input) (SiluBackward0, also with ``inplace=True``, which writes into
    input). Result: input's shape and float dtype. NotImplementedError for an integer or bool
    input."""
    input = _tensor_arg(input, "silu")
    if inplace:
        return _inplace(input, Silu, (), "silu_")
    return Silu.apply(input)


@op("mish", functional=True, method=False, namespace=False)
def mish(input, inplace=False):
    """input * tanh(softplus(input)) (MishBackward0, also with ``inplace=True``). Result: input's
    shape and float dtype. NotImplementedError for an integer or bool input."""
    input = _tensor_arg(input, "mish")
    if inplace:
        return _inplace(input, Mish, (), "mish_")
    return Mish.apply(input)


@op("softplus", functional=True, method=False, namespace=False)
def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * input)) / beta, reverting to input where beta * input > threshold
    (SoftplusBackward0). Result: input's shape and float dtype. NotImplementedError for an
    integer or bool input; TypeError for non-number beta / threshold."""
    input = _tensor_arg(input, "softplus")
    return Softplus.apply(input, _number(beta, "softplus", "beta"),
                          _number(threshold, "softplus", "threshold"))


@op("softsign", functional=True, method=False, namespace=False)
def softsign(input):
    """input / (1 + |input|): a composite, as torch (DivBackward0). Result: input's shape;
    an integer input gives the default float dtype. NotImplementedError for a bool input (torch's
    abs refuses it)."""
    input = _tensor_arg(input, "softsign")
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
    return input / (input.abs() + 1)


def _hardtanh(input, min_val, max_val, inplace, name):
    input = _tensor_arg(input, name)
    lo = _number(min_val, name, "min_val")
    hi = _number(max_val, name, "max_val")
    if inplace:
        return _inplace(input, Hardtanh, (lo, hi), "hardtanh_")
    return Hardtanh.apply(input, lo, hi)


@op("hardtanh", functional=True, method=False, namespace=False)
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(input, min_val, max_val) (HardtanhBackward0, also with ``inplace=True``). Gradient:
    grad strictly between the bounds, 0 at and beyond them. Result: input's shape and dtype
    (integer tensors are clamped to the truncated bounds). Raises ValueError when
    min_val > max_val; RuntimeError for a bool input, or an unsigned one with a negative
    bound."""
    if _number(min_val, "hardtanh", "min_val") > _number(max_val, "hardtanh", "max_val"):
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh(input, min_val, max_val, inplace, "hardtanh")


@op("hardtanh_", functional=True, method=False, namespace=False)
def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place hardtanh; returns input (HardtanhBackward0). Unlike :func:`hardtanh`, bounds in
    the wrong order are not checked (as torch's hardtanh_): every element becomes max_val."""
    return _hardtanh(input, min_val, max_val, True, "hardtanh_")


@op("relu6", functional=True, method=False, namespace=False)
def relu6(input, inplace=False):
    """min(max(input, 0), 6): hardtanh(input, 0, 6), recorded as HardtanhBackward0 as in torch
    (relu6'(0) = relu6'(6) = 0). Result: input's shape and dtype. RuntimeError for a bool
    input."""
    return _hardtanh(input, 0.0, 6.0, inplace, "relu6")


@op("hardsigmoid", functional=True, method=False, namespace=False)
def hardsigmoid(input, inplace=False):
    """min(max(input + 3, 0), 6) / 6 (HardsigmoidBackward0, also with ``inplace=True``).
    Gradient 1/6 strictly inside (-3, 3), 0 elsewhere. As torch, its gradient has no derivative:
    a double backward raises RuntimeError. Result: input's shape and float dtype.
    NotImplementedError for an integer or bool input."""
    input = _tensor_arg(input, "hardsigmoid")
    if inplace:
        return _inplace(input, Hardsigmoid, (), "hardsigmoid_")
    return Hardsigmoid.apply(input)


@op("hardswish", functional=True, method=False, namespace=False)
def hardswish(input, inplace=False):
    """input * min(max(input + 3, 0), 6) / 6 (HardswishBackward0, also with ``inplace=True``).
    Result: input's shape and float dtype. NotImplementedError for an integer or bool input."""
    input = _tensor_arg(input, "hardswish")
    if inplace:
        return _inplace(input, Hardswish, (), "hardswish_")
    return Hardswish.apply(input)


@op("logsigmoid", functional=True, method=False, namespace=False)
def logsigmoid(input):
    """log(sigmoid(input)), stable for large |input| (LogSigmoidBackward0). Result: input's shape
    and float dtype. NotImplementedError for an integer or bool input."""
    input = _tensor_arg(input, "logsigmoid")
    return LogSigmoid.apply(input)


@op("softmin", functional=True, method=False, namespace=False)
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input, dim): a composite, as torch (SoftmaxBackward0 after NegBackward0; with
    ``dtype``, the negated input is converted first, ToCopyBackward0). ``dim=None`` picks torch's
    legacy implicit dim with a UserWarning. Result: input's shape, float dtype (``dtype`` if
    given). Raises IndexError for a dim out of range; RuntimeError for a bool input (negation);
    NotImplementedError for an integer input without ``dtype`` (torch's softmax kernel refuses
    it)."""
    input = _tensor_arg(input, "softmin")
    if dim is None:     # (torch warns before negating)
        dim = _softmax_dim(input, None, "softmin")
    neg = Neg.apply(input)
    d = _softmax_dim(neg, dim, "softmin")
    if dtype is None:
        need_float(neg._data.dtype, "softmax_lastdim_kernel_impl"
                   if d == max(input._data.ndim - 1, 0) else "softmax_kernel_impl")
    return softmax(neg, d, dtype=dtype)


def _threshold(input, threshold, value, inplace, name):
    input = _tensor_arg(input, name)
    th = _number(threshold, name, "threshold")
    v = _number(value, name, "value")
    _check_fits(input._data, name, threshold=th, value=v)
    if inplace:
        return _inplace(input, ThresholdInplace, (th, v), "threshold_")
    return Threshold.apply(input, th, v)


@op("threshold", functional=True, method=False, namespace=False)
def threshold(input, threshold, value, inplace=False):
    """``value`` where input <= threshold, else input (ThresholdBackward0; ``inplace=True``:
    threshold_, ThresholdBackward1). Gradient: 0 where input <= threshold. Result: input's shape
    and dtype (an integer tensor compares with, and takes, the truncated numbers).
    NotImplementedError for a bool input; RuntimeError for a finite threshold or value that
    input's float dtype cannot hold."""
    return _threshold(input, threshold, value, inplace, "threshold")


@op("threshold_", functional=True, method=False, namespace=False)
def threshold_(input, threshold, value):
    """In-place threshold; returns input (ThresholdBackward1)."""
    return _threshold(input, threshold, value, True, "threshold_")


@op("threshold", method=False)
def _torch_threshold(input, threshold, value):
    """``tapegrad.threshold(input, threshold, value)``: :func:`threshold` without ``inplace``."""
    return _threshold(input, threshold, value, False, "threshold")


@op("threshold_", method=False)
def _torch_threshold_(input, threshold, value):
    """``tapegrad.threshold_(input, threshold, value)``: in-place threshold; returns input."""
    return _threshold(input, threshold, value, True, "threshold_")


@op("glu", functional=True, method=False, namespace=False)
def glu(input, dim=-1):
    """a * sigmoid(b) with a, b the two halves of input along ``dim`` (GluBackward0). Result:
    input's shape with ``dim`` halved, input's float dtype. Raises RuntimeError for a 0-d input
    or an odd size along ``dim``; IndexError for a dim out of range; NotImplementedError for an
    integer or bool input."""
    input = _tensor_arg(input, "glu")
    x = input._data
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(int(dim), x.ndim, "glu")
    if x.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{x.shape[d]} (glu: the input is split in two halves along dim)")
    need_float(x.dtype, "glu_cpu")
    return Glu.apply(input, d)


@op("tanhshrink", functional=True, method=False, namespace=False)
def tanhshrink(input):
    """input - tanh(input): a composite, as torch (SubBackward0). Result: input's shape; an
    integer input gives the default float dtype. RuntimeError for a bool input (torch's
    subtraction refuses it)."""
    input = _tensor_arg(input, "tanhshrink")
    if input._data.dtype == np.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return input - tanh(input)


@op("softshrink", functional=True, method=False, namespace=False)
def softshrink(input, lambd=0.5):
    """input - lambd above lambd, input + lambd below -lambd, 0 between (SoftshrinkBackward0;
    gradient 0 on [-lambd, lambd], its ends included). Result: input's shape and float dtype.
    Raises RuntimeError for lambd < 0 (or beyond the dtype's range); NotImplementedError for an
    integer or bool input."""
    input = _tensor_arg(input, "softshrink")
    lam = _number(lambd, "softshrink", "lambd")
    x = input._data
    need_float(x.dtype, "softshrink_check")
    top = float(np.finfo(x.dtype).max)
    if not 0 <= lam <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{scalar_name(x.dtype)}, but found {lam:g} (softshrink)")
    return Softshrink.apply(input, lam)


@op("hardshrink", functional=True)
def hardshrink(input, lambd=0.5):
    """0 where -lambd <= input <= lambd, else input (HardshrinkBackward0; gradient 0 on that
    closed interval). Also ``tapegrad.hardshrink`` and ``Tensor.hardshrink``. Result: input's
    shape and float dtype. NotImplementedError for an integer or bool input (a negative lambd
    is allowed, as torch: nothing is zeroed)."""
    input = _tensor_arg(input, "hardshrink")
    lam = _number(lambd, "hardshrink", "lambd")
    need_float(input._data.dtype, "hardshrink_cpu")
    return Hardshrink.apply(input, lam)


@op("prelu", functional=True)
def prelu(input, weight):
    """input where input > 0, else weight * input, with one weight per channel (dim 1 of input;
    a 0-d or 1-d input has one channel) or one shared weight. ``weight``: a 0-d or 1-d tensor
    of 1 or C elements, of input's dtype. Recorded as torch does: PreluKernelBackward0, the
    weight reshaped to broadcast (ViewBackward0, except for a weight already of the right
    shape on a 0-d / 1-d input). Also ``tapegrad.prelu`` and ``Tensor.prelu``. Result: input's
    shape and dtype.

    Raises RuntimeError for a weight of dtype other than input's ("Type promoting not
    supported"), of more than one dim, or whose size is neither 1 nor the channel count;
    NotImplementedError for an integer or bool input; TypeError for a weight that is not a
    Tensor."""
    input = _tensor_arg(input, "prelu")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    x, w = input._data, weight._data
    if x.dtype != w.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {scalar_name(x.dtype)} and "
                           f"{scalar_name(w.dtype)}")
    if w.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {w.ndim}")
    channels = x.shape[1] if x.ndim >= 2 else 1
    if w.size != 1 and w.size != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {w.size} and channel size = {channels}.")
    need_float(x.dtype, "prelu_cpu")
    if x.ndim >= 2:
        weight = weight.view((w.size,) + (1,) * (x.ndim - 2))
    elif w.ndim != x.ndim:
        weight = weight.view((1,) * x.ndim)
    return PreluKernel.apply(input, weight)


# torch.nn.functional.relu_ (tapegrad.relu_ and Tensor.relu_ are in ops/inplace.py)
op("relu_", functional=True, method=False, namespace=False)(_inplace_mod.relu_)

_all_inplace = (leaky_relu_, elu_, selu_, celu_, hardtanh_, threshold_, _torch_selu_,
                _torch_celu_, _torch_threshold_)
for _f in _all_inplace:
    _f.__doc__ = _f.__doc__.rstrip() + _INPLACE_RAISES
del _f
