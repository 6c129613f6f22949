"""addcmul/addcdiv, fmax/fmin and copysign, with the in-place forms torch has (``addcmul_``,
``addcdiv_``, ``copysign_``; torch has no ``fmax_``/``fmin_``).

Derivatives (tools/autograd/derivatives.yaml): addcmul: self: grad; tensor1: grad * (tensor2 *
value); tensor2: grad * (tensor1 * value). addcdiv: self: grad; tensor1: grad * (value /
tensor2); tensor2: -grad * (value * tensor1 / (tensor2 * tensor2)). fmax (fmin with <=): self:
grad.masked_fill((self >= other).logical_or_(other.isnan()).logical_not_(), 0); other:
grad.masked_fill((self >= other).logical_or_(other.isnan()), 0). copysign.Tensor / .Scalar: self:
copysign_tensor_self_backward(grad, self, result), i.e. grad * (result / self) with 0 where self
== 0; other (a tensor): zeros_like(other). Each is written with tapegrad ops, so it is
differentiable again (create_graph=True).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype
from .._dtype import overflow_error, overflows, wrapped
from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import _F32, _HALF, Tensor, _make, coerce_operand, float_result, promote, to_float
from .inplace import inplace
from .scatter import _need_tensor

_BOOL = np.dtype(np.bool_)


# ---- addcmul / addcdiv --------------------------------------------------------------------------
def _value_number(value, op_name):
    """``value`` of addcmul/addcdiv as the Python number torch's argument parser reads: a NumPy
    scalar as coerce_operand reads it, a 0-d tensor as its value. TypeError for anything else
    (a tensor of one or more dims too), OverflowError for an int no 64-bit integer holds."""
    if isinstance(value, np.generic):
        value = coerce_operand(value)
    elif isinstance(value, Tensor) and value._data.ndim == 0:
        value = value.item()
    if not isinstance(value, numbers.Number):
        raise TypeError(f"{op_name}(): argument 'value' must be Number, not "
                        f"{type(value).__name__}")
    _check_int_range(value, op_name, "value")
    return value


def _check_int_range(v, op_name, what):
    # torch parses a Python int as int64 or, above that, uint64; anything else does not convert
    if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 64:
        raise OverflowError(f"{op_name}: int too big to convert ({what}={v})")


def _value_in(value, dt, op_name):
    """``value`` as torch's kernel for common dtype ``dt`` reads it (value.to<scalar_t>(); float
    for float16, which is computed in float): a float truncated toward zero for an integer
    dtype, a negative int wrapped for an unsigned one. RuntimeError for a number that dtype does
    not hold (and for a complex one)."""
    compute = _F32 if dt == _HALF else dt
    if isinstance(value, complex) or overflows(value, compute):
        raise overflow_error(value, compute, f"{op_name}'s value")
    if compute.kind == "f":
        return compute.type(value)
    return compute.type(wrapped(int(value), compute))


def _addc(x, t1, t2, value, op_name, combine):
    """``x + combine(value * t1, t2)`` in the common dtype of the three arrays, in torch's order
    of operations, float16 computed in float32 and rounded once (as torch's CPU kernel)."""
    # shapes first, as torch: NumPy's ValueError becomes apply's RuntimeError naming the op
    np.broadcast_shapes(x.shape, t1.shape, t2.shape)
    dt = _dtype.result_type(x, t1, t2).np
    if dt == _BOOL:
        raise NotImplementedError(f"\"{op_name}_cpu_out\" not implemented for 'Bool'")
    v = _value_in(value, dt, op_name)
    compute = _F32 if dt == _HALF else dt
    x, t1, t2 = (a.astype(dt, copy=False).astype(compute, copy=False) for a in (x, t1, t2))
    # torch is silent on a division by zero and on integer wrap-around
    with np.errstate(all="ignore"):
        out = x + combine(v * t1, t2)
    return np.asarray(out).astype(dt, copy=False)


class Addcmul(ArrayFunction, name="AddcmulBackward0"):
    """input + value * tensor1 * tensor2. derivatives.yaml addcmul: self: grad; tensor1: grad *
    (tensor2 * value); tensor2: grad * (tensor1 * value)."""

    @staticmethod
    def forward(ctx, x, t1, t2, value):
        ctx.value = value
        ctx.save_for_backward(t1 if ctx.needs(2) else None, t2 if ctx.needs(1) else None)
        return _addc(x, t1, t2, value, "addcmul", np.multiply)

    @staticmethod
    def backward(ctx, g):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        return ((g if ctx.needs(0) else None), (g * (t2 * v) if ctx.needs(1) else None),
                (g * (t1 * v) if ctx.needs(2) else None), None)


_INT_DIVISION = (
    "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
    "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * tapegrad.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


class Addcdiv(ArrayFunction, name="AddcdivBackward0"):
    """input + value * tensor1 / tensor2. derivatives.yaml addcdiv: self: grad; tensor1: grad *
    (value / tensor2); tensor2: -grad * (value * tensor1 / (tensor2 * tensor2))."""

    @staticmethod
    def forward(ctx, x, t1, t2, value):
        # (checked before the shapes, as torch's addcdiv meta function does)
        if t1.dtype.kind in "biu" and t2.dtype.kind in "biu":
            d1, d2 = (_dtype.from_numpy_dtype(t.dtype) for t in (t1, t2))
            raise RuntimeError(
                f"{_INT_DIVISION} (addcdiv: tensor1 is {d1} and tensor2 is {d2}; convert one of "
                f"them to a floating dtype, e.g. tensor1.float(), for a true division, or use "
                f"the historic formula above for an integer quotient)")
        ctx.value = value
        ctx.save_for_backward(t1 if ctx.needs(2) else None,
                              t2 if ctx.needs(1) or ctx.needs(2) else None)
        return _addc(x, t1, t2, value, "addcdiv", np.true_divide)

    @staticmethod
    def backward(ctx, g):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        g1 = g * (v / t2) if ctx.needs(1) else None
        g2 = -g * (v * t1 / (t2 * t2)) if ctx.needs(2) else None
        return (g if ctx.needs(0) else None), g1, g2, None


def _addc_args(op_name, input, tensor1, tensor2, value):
    _need_tensor(input, op_name, "input", 1)
    _need_tensor(tensor1, op_name, "tensor1", 2)
    _need_tensor(tensor2, op_name, "tensor2", 3)
    return tensor1, tensor2, _value_number(value, op_name)


@op("addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, elementwise with broadcasting.

    Result: the broadcast shape of the three tensors; their promoted dtype (torch's rules over
    three tensors: int64 with float32 is float32, a 0-d float64 tensor does not widen a float32
    one). ``value`` (a number, default 1) is read in that dtype: a float ``value`` is truncated
    toward zero for an integer result, as torch. float16 is computed in float32 and rounded
    once. Integer results wrap around on overflow, as torch. torch's vectorized CPU kernel (AVX2
    and up) fuses the last multiply and the add into one FMA; NumPy rounds twice, so float32 and
    float64 results may differ from torch's in the last bit (about one element in seven).

    Derivatives (derivatives.yaml addcmul, AddcmulBackward0): input: grad; tensor1: grad *
    (tensor2 * value); tensor2: grad * (tensor1 * value).

    Raises:
        TypeError: input, tensor1 or tensor2 is not a Tensor; ``value`` is not a number (a
            NumPy scalar or a 0-d tensor counts as one).
        OverflowError: an int ``value`` beyond 64 bits.
        RuntimeError: shapes that do not broadcast (naming the op and the shapes); a ``value``
            the result dtype cannot hold (1e300 for float32 or float16, -1.0 or nan for an
            integer dtype).
        NotImplementedError: three bool tensors (torch has no bool kernel)."""
    tensor1, tensor2, value = _addc_args("addcmul", input, tensor1, tensor2, value)
    return Addcmul.apply(input, tensor1, tensor2, value)


@op("addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2`` (true division), elementwise with broadcasting.

    Result: the broadcast shape of the three tensors; their promoted dtype, which is floating
    (tensor1 or tensor2 must be: see below). float16 is computed in float32 and rounded once; a
    division by zero gives inf or nan without a warning, as torch.

    Derivatives (derivatives.yaml addcdiv, AddcdivBackward0): input: grad; tensor1: grad *
    (value / tensor2); tensor2: -grad * (value * tensor1 / (tensor2 * tensor2)).

    Raises:
        TypeError: input, tensor1 or tensor2 is not a Tensor; ``value`` is not a number (a
            NumPy scalar or a 0-d tensor counts as one).
        OverflowError: an int ``value`` beyond 64 bits.
        RuntimeError: tensor1 and tensor2 both of integer or bool dtype (torch's "Integer
            division with addcdiv is no longer supported", checked first, as torch; the
            message names addcdiv and the fix: make one of them floating); shapes that do not
            broadcast (naming the op and the shapes); a ``value`` the result dtype cannot hold
            (1e300 for float32 or float16)."""
    tensor1, tensor2, value = _addc_args("addcdiv", input, tensor1, tensor2, value)
    return Addcdiv.apply(input, tensor1, tensor2, value)


@op("addcmul_", namespace=False)
def addcmul_(self, tensor1, tensor2, *, value=1):
    """In-place :func:`addcmul`: writes ``self + value * tensor1 * tensor2`` into self and
    returns self (AddcmulBackward0). Raises as :func:`addcmul`, and RuntimeError, as any
    in-place op, when the broadcast shape is not self's or the result dtype is of a higher
    category than self's (float operands into an integer self), for a leaf that requires grad,
    and for a tensor that cannot be written (see ``add_``)."""
    tensor1, tensor2, value = _addc_args("addcmul_", self, tensor1, tensor2, value)
    return inplace(self, Addcmul, (tensor1, tensor2, value), "addcmul_")


@op("addcdiv_", namespace=False)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    """In-place :func:`addcdiv`: writes ``self + value * tensor1 / tensor2`` into self and
    returns self (AddcdivBackward0). Raises as :func:`addcdiv`, and as :func:`addcmul_` for
    what an in-place op refuses (an integer self: the result is floating)."""
    tensor1, tensor2, value = _addc_args("addcdiv_", self, tensor1, tensor2, value)
    return inplace(self, Addcdiv, (tensor1, tensor2, value), "addcdiv_")


# ---- fmax / fmin --------------------------------------------------------------------------------
class Fmax(ArrayFunction, name="FmaxBackward0"):
    """Elementwise max ignoring NaN (np.fmax). derivatives.yaml fmax: the gradient goes to self
    where self >= other or other is NaN (ties included), to other elsewhere."""

    _ufunc = staticmethod(np.fmax)
    _self_wins = staticmethod(np.greater_equal)

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.save_for_backward(a, b)
        return cls._ufunc(*promote(a, b))

    @classmethod
    def backward(cls, ctx, g):
        a, b = ctx.saved_tensors
        ad, bd = promote(a._data, b._data)
        to_self = cls._self_wins(ad, bd) | np.isnan(bd)
        ga = g.masked_fill(_make(~to_self), 0) if ctx.needs(0) else None
        gb = g.masked_fill(_make(to_self), 0) if ctx.needs(1) else None
        return ga, gb


class Fmin(Fmax, name="FminBackward0"):
    """Elementwise min ignoring NaN (np.fmin). derivatives.yaml fmin: the gradient goes to self
    where self <= other or other is NaN (ties included), to other elsewhere."""

    _ufunc = staticmethod(np.fmin)
    _self_wins = staticmethod(np.less_equal)


@op("fmax")
def fmax(input, other):
    """Elementwise maximum of ``input`` and ``other`` that ignores NaN (C's fmax): where exactly
    one of them is NaN the result is the other one; where both are, NaN.

    Result: the broadcast shape; the promoted dtype (integer and bool tensors stay integer and
    bool, as torch). Derivative (derivatives.yaml fmax, FmaxBackward0): the gradient goes to
    input where input >= other or other is NaN (a tie goes to input alone), to other
    elsewhere; so where input is NaN and other is not, other gets it.

    Raises:
        TypeError: input or other is not a Tensor (a number is refused, as torch).
        RuntimeError: shapes that do not broadcast (naming the op and the shapes)."""
    _need_tensor(input, "fmax", "input", 1)
    _need_tensor(other, "fmax", "other", 2)
    return Fmax.apply(input, other)


@op("fmin")
def fmin(input, other):
    """Elementwise minimum of ``input`` and ``other`` that ignores NaN (C's fmin): where exactly
    one of them is NaN the result is the other one; where both are, NaN.

    Result: the broadcast shape; the promoted dtype (integer and bool tensors stay integer and
    bool, as torch). Derivative (derivatives.yaml fmin, FminBackward0): the gradient goes to
    input where input <= other or other is NaN (a tie goes to input alone), to other
    elsewhere; so where input is NaN and other is not, other gets it.

    Raises:
        TypeError: input or other is not a Tensor (a number is refused, as torch).
        RuntimeError: shapes that do not broadcast (naming the op and the shapes)."""
    _need_tensor(input, "fmin", "input", 1)
    _need_tensor(other, "fmin", "other", 2)
    return Fmin.apply(input, other)


# ---- copysign -----------------------------------------------------------------------------------
def _copysign_self_backward(g, x, result):
    """derivatives.yaml's copysign_tensor_self_backward: grad * (result / self), the ratio set
    to 0 where self == 0 (so both zeros get a zero gradient, as torch)."""
    with np.errstate(divide="ignore", invalid="ignore"):    # (0 / 0 where self == 0: masked)
        ratio = result / x
    return g * ratio.masked_fill(_make(x._data == 0), 0)


class Copysign(ArrayFunction, name="CopysignBackward0"):
    """|self| with the sign bit of other (a tensor). derivatives.yaml copysign.Tensor: self:
    copysign_tensor_self_backward(grad, self, result); other: zeros_like(other)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.other = (b.shape, b.dtype)
        out = np.copysign(*float_result(a, b))
        if ctx.needs(0):
            ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        ga = _copysign_self_backward(g, *ctx.saved_tensors) if ctx.needs(0) else None
        return ga, (_make(np.zeros(*ctx.other)) if ctx.needs(1) else None)


class CopysignScalar(ArrayFunction, name="CopysignBackward1"):
    """|self| with the sign of a number, given as +-1.0 (the sign bit of the number, -0.0 and a
    negative NaN included). derivatives.yaml copysign.Scalar: self:
    copysign_tensor_self_backward(grad, self, result)."""

    @staticmethod
    def forward(ctx, a, sign):
        x = to_float(a)
        out = np.copysign(x, x.dtype.type(sign))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        return _copysign_self_backward(g, *ctx.saved_tensors), None


def _copysign_args(other, op_name):
    """The Function and second argument for copysign's ``other``: a Tensor as is, a number (or a
    NumPy scalar) as the +-1.0 carrying its sign bit."""
    if isinstance(other, Tensor):
        return Copysign, other
    if isinstance(other, np.generic):
        other = coerce_operand(other)
    if isinstance(other, (int, float)):     # (bool is an int)
        _check_int_range(other, op_name, "other")
        return CopysignScalar, math.copysign(1.0, other)
    raise TypeError(f"{op_name}(): argument 'other' must be Tensor or a real number, not "
                    f"{type(other).__name__}")


@op("copysign")
def copysign(input, other):
    """``input``'s magnitude with ``other``'s sign bit, elementwise (C's copysign): -0.0 and a
    NaN whose sign bit is set count as negative, +0.0 and NaN as positive. ``other``: a Tensor
    (CopysignBackward0) or a Python or NumPy number (CopysignBackward1).

    Result: the broadcast shape; floating: the promoted dtype when that is floating (float16
    with an int64 tensor stays float16), else the default float dtype (integer and bool inputs,
    as torch); a number never widens input's float dtype.

    Derivatives (derivatives.yaml copysign.Tensor / copysign.Scalar): input: grad * (result /
    input), 0 where input == 0 (either zero) and nan where input is +-inf or nan, as torch;
    other: zeros_like(other) (a zero gradient, not None).

    Raises:
        TypeError: input is not a Tensor; other is neither a Tensor nor a real number (a NumPy
            array included, as torch). OverflowError: an int ``other`` beyond 64 bits.
        RuntimeError: shapes that do not broadcast (naming the op and the shapes)."""
    _need_tensor(input, "copysign", "input", 1)
    F, other = _copysign_args(other, "copysign")
    return F.apply(input, other)


@op("copysign_", namespace=False)
def copysign_(self, other):
    """In-place :func:`copysign`; returns self (CopysignBackward0, or CopysignBackward1 for a
    number). Raises as :func:`copysign`, and RuntimeError for an integer or bool self (the
    result is floating) and for what any in-place op refuses (see ``add_``)."""
    F, other = _copysign_args(other, "copysign_")
    return inplace(self, F, (other,), "copysign_")
