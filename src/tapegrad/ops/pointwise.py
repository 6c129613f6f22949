"""Elementwise ops and their derivatives.

Formulas follow PyTorch's ``tools/autograd/derivatives.yaml`` (cited per op). Broadcasting is not
handled here: the engine sums a gradient back to its input's shape in one place.
"""
from __future__ import annotations


import numbers
import types

import numpy as np

from .. import _dtype
from .._dtype import overflow_error, overflows, wrapped
from .._device import device as _device_cls
from .._factories import _check_device
from .._memory_format import (check_format, empty_in_format, memory_format, preserve_format,
                             same_strides, suggest_format)
from .._memory_format import layout as _layout
from ..autograd.function import (_FLOAT_DTYPES, NULL_CTX, ArrayFunction, saved_result,
                                 saved_result_tensor)
from ..autograd.grad_mode import state as _grad_state
from ..autograd.graph import sole_holder
from ..cpu import MIN_BYTES as _BIG, out_like, out_like2
from ._registry import op
from ._util import (_F32, _HALF, Tensor, _make, _weak, _zeros_of, broadcast_error,
                    check_operand, coerce_operand, float_result, half_scalar, promote, to_float)

_nd = np.ndarray


# ---- arithmetic ---------------------------------------------------------------------------------
_BOOL = np.dtype(np.bool_)
_TWO_BOOL_SUB = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                 "`^` or `logical_xor()` operator instead.")
_BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _sub_error(a, b):
    """torch's error for a subtraction with a bool operand: a bool array or a Python bool (torch
    wraps one as a bool tensor; a NumPy bool reaches here as a float, see coerce_operand). Sub
    and Rsub raise it for two bool operands, and for a bool operand with a number."""
    ab = a.dtype is _BOOL if type(a) is _nd else type(a) is bool
    bb = b.dtype is _BOOL if type(b) is _nd else type(b) is bool
    return RuntimeError(_TWO_BOOL_SUB if ab and bb else _BOOL_SUB)


def _alpha_number(alpha, op):
    """``alpha`` of add/sub/rsub as the Python number torch reads from it: a NumPy scalar as
    coerce_operand reads it (a NumPy bool as a float), a 0-d tensor as its value. TypeError for
    anything else, as torch; RuntimeError for a complex number (no tensor here is complex)."""
    if isinstance(alpha, np.generic):
        alpha = coerce_operand(alpha)
    elif isinstance(alpha, Tensor) and alpha._data.ndim == 0:
        alpha = alpha.item()
    if not isinstance(alpha, numbers.Number):
        raise TypeError(f"{op}(): argument 'alpha' must be Number, not {type(alpha).__name__}")
    if isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    return alpha


def _scaled(x, y, alpha, op, sign=1):
    """``x + sign * alpha * y`` for add (sign 1), sub and rsub (-1) given an ``alpha`` (a number,
    see _alpha_number), after torch's checks of alpha against the result dtype (x and y are
    promoted: the array among them has it). float16 is computed in float32 from alpha and the
    operands as float16 values and rounded once, as torch's kernel does."""
    dt = x.dtype if type(x) is _nd else y.dtype
    if type(alpha) is bool and dt is not _BOOL:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dt.kind != "f" and not isinstance(alpha, int):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if overflows(alpha, dt):
        raise overflow_error(alpha, dt, f"{op}'s alpha")
    if dt.kind == "f":
        if dt is _HALF:
            x32, y32 = (v.astype(_F32) if type(v) is _nd else np.float32(np.float16(v))
                        for v in (x, y))
            return (x32 + np.float32(np.float16(alpha)) * y32 * sign).astype(_HALF)
    elif dt is _BOOL:
        alpha = bool(alpha)     # (sub and rsub refused bool operands already)
    else:
        alpha = wrapped(alpha, dt)  # (a negative alpha wraps around for an unsigned dtype)
    return x + y * alpha if sign == 1 else x - y * alpha


class Add(ArrayFunction, name="AddBackward0", scalar_edges=2, operands=True):
    """a + alpha * b. derivatives.yaml: self: grad; other: grad * alpha."""

    @staticmethod
    def forward(ctx, a, b, alpha=None):
        if type(b) is float and type(a) is _nd and alpha is None:
            cache = _weak.get(a.dtype)    # (promote's hottest case, inlined, as in Mul)
            w = None if cache is None else cache.get(b)
            if w is not None:
                if a.nbytes >= _BIG:    # (a buffer from the cache: see tapegrad.cpu)
                    return np.add(a, w, out=out_like(a))
                # (0-d: NumPy's scalars add in the same precision for a third of the cost)
                return a + w if a.ndim else a[()] + w[()]
        a, b = promote(a, b)
        if alpha is None:
            if type(b) is _nd and type(a) is _nd and a.nbytes >= _BIG:
                return np.add(a, b, out=out_like2(a, b))
            return a + b
        ctx.alpha = alpha = _alpha_number(alpha, "add")
        return _scaled(a, b, alpha, "add")

    @staticmethod
    def backward(ctx, g):
        # a third argument (more than two arguments' four edge entries) means an alpha was
        # given (and kept in ctx.alpha)
        return (g, g) if len(ctx._edges) == 8 else (g, g * ctx.alpha, None)


class Sub(ArrayFunction, name="SubBackward0", scalar_edges=2):
    """a - alpha * b. derivatives.yaml: self: grad; other: -grad * alpha."""

    @staticmethod
    def forward(ctx, a, b, alpha=None):
        if type(b) is float and alpha is None:
            cache = _weak.get(a.dtype)    # (promote's hottest case, inlined, as in Mul)
            w = None if cache is None else cache.get(b)
            if w is not None:
                return np.subtract(a, w, out=out_like(a)) if a.nbytes >= _BIG else a - w
        if type(b) is _nd:
            # (one bool array and one of another dtype is let through: tapegrad's own formulas
            # subtract a bool tensor from a float one, the losses' gradients among them)
            if a.dtype is _BOOL and b.dtype is _BOOL:
                raise _sub_error(a, b)
        elif a.dtype is _BOOL or type(b) is bool:
            raise _sub_error(a, b)
        a, b = promote(a, b)
        if alpha is None:
            if type(b) is _nd and type(a) is _nd and a.nbytes >= _BIG:
                return np.subtract(a, b, out=out_like2(a, b))
            return a - b
        ctx.alpha = alpha = _alpha_number(alpha, "sub")
        return _scaled(a, b, alpha, "sub", -1)

    @staticmethod
    def backward(ctx, g):
        return (g, -g) if len(ctx._edges) == 8 else (g, g * -ctx.alpha, None)


class Rsub(ArrayFunction, name="RsubBackward1", scalar_edges=1):
    """number - alpha * tensor (``2 - x``, ``rsub(x, 2, alpha=3)``): the tensor's array comes
    first (or a number: ``sub(2, 3)``). derivatives.yaml rsub: self: -grad * alpha."""

    @staticmethod
    def forward(ctx, a, b, alpha=None):
        if type(a) is _nd:
            if type(b) is float and alpha is None:
                cache = _weak.get(a.dtype)    # (promote's hottest case, inlined, as in Mul)
                w = None if cache is None else cache.get(b)
                if w is not None:
                    return w - a
            if a.dtype is _BOOL:
                raise _sub_error(b, a)
        if type(b) is bool:
            raise _sub_error(b, a)
        a, b = promote(a, b)
        if alpha is None:
            return b - a
        ctx.alpha = alpha = _alpha_number(alpha, "rsub")
        return _scaled(b, a, alpha, "rsub", -1)

    @staticmethod
    def backward(ctx, g):
        if len(ctx._edges) == 8:
            return -g, None
        return g * -ctx.alpha, None, None


_MUL_SAVED: dict = {}


def _mul_saved(b):
    """What a product by the nonzero Python float ``b`` saves: ``b`` packed as a constant, in a
    list shared by every such product (a fresh list and tuple per op would be two more objects for
    the garbage collector to scan; nothing writes a packed constant entry). Zero is not shared:
    -0.0 == 0.0 as a key, and the sign reaches the gradient."""
    saved = _MUL_SAVED.get(b)
    if saved is None:
        if len(_MUL_SAVED) > 512:   # varying numbers: stay bounded
            _MUL_SAVED.clear()
        saved = _MUL_SAVED[b] = [None, ("c", b)]
    return saved


class Mul(ArrayFunction, name="MulBackward0", scalar_edges=2, operands=True):
    """a * b. derivatives.yaml: self: grad * other; other: grad * self."""

    @staticmethod
    def forward(ctx, a, b):
        tb = type(b)
        if tb is float and type(a) is _nd:
            # the hottest case first: a float array times a Python float seen before (promote's
            # lookup, inlined: the call costs more than a small product); zero is never cached
            cache = _weak.get(a.dtype)
            if cache is not None:
                w = cache.get(b)
                if w is not None:
                    if ctx is not NULL_CTX:
                        ctx._saved = _MUL_SAVED.get(b) or _mul_saved(b)
                    if a.nbytes >= _BIG:    # (as in Add)
                        return np.multiply(a, w, out=out_like(a))
                    return a * w if a.ndim else a[()] * w[()]   # (0-d: as in Add)
        if ctx is not NULL_CTX:
            if tb is not _nd:
                # times a number: only a's gradient is needed, and it needs the number, stored
                # packed (a constant has no version to check)
                ctx._saved = _mul_saved(b) if tb is float and b else [None, ("c", b)]
            else:
                # each gradient needs only the other operand: save just that (torch does the
                # same, so changing an operand in place is an error only when its value is needed)
                ctx.save_for_backward(a if ctx.needs(1) else None, b if ctx.needs(0) else None)
        # promote's other hot cases, inlined: a float array times an int seen before, and arrays
        # of one dtype
        if tb is float or tb is int:
            if type(a) is _nd:
                cache = _weak.get(a.dtype)
                if cache is not None:
                    w = cache.get(b)
                    if w is not None:
                        return a * w if a.ndim else a[()] * w[()]   # (0-d: as in Add)
                elif a.dtype is _HALF:  # (float16 has no table: torch multiplies in float32)
                    return half_scalar(np.multiply, a, b)
        elif tb is _nd and a.dtype is b.dtype:
            return np.multiply(a, b, out=out_like2(a, b)) if a.nbytes >= _BIG else a * b
        a, b = promote(a, b)
        if type(a) is _nd and type(b) is _nd and a.nbytes >= _BIG:
            return np.multiply(a, b, out=out_like2(a, b))
        return a * b

    @staticmethod
    def backward(ctx, g):
        saved = ctx._saved
        if type(saved) is list and (e := saved[1]) is not None and e[0] == "c":
            # times a number, saved packed (a constant: no version to check); a's gradient only,
            # into g's own buffer where only the engine holds g (see _spare), as the cached
            # array a Python float becomes (see promote)
            b = e[1]
            arr = _spare(g)
            if arr is not None:
                cache = _weak.get(arr.dtype)    # (inlined, as in forward; float16 has none)
                w = None if cache is None else cache.get(b)
                if w is not None:
                    if arr.ndim:
                        arr *= w
                    else:   # (0-d: an in-place ufunc costs six times NumPy's scalars)
                        arr[()] = arr[()] * w[()]
                    return g, None
            return Mul.apply(g, b), None
        # two tensors: forward saved each only where the other one needs its gradient
        a, b = ctx.saved_tensors
        gb = None if a is None else Mul.apply(g, a)
        if b is None:
            return None, gb
        arr = _spare(g, b._data)
        if arr is not None:     # g is the engine's alone: the product goes into its buffer
            arr *= b._data
            return g, gb
        return Mul.apply(g, b), gb


class Div(ArrayFunction, name="DivBackward0", scalar_edges=2):
    """a / b (true division). derivatives.yaml: self: grad / other;
    other: -grad * self / (other * other)."""

    @staticmethod
    def forward(ctx, a, b):
        if ctx is not NULL_CTX:
            ctx.save_for_backward(a if ctx.needs(1) else None, b)
        tb = type(b)    # (float_result's hottest cases, inlined, as in Mul)
        if tb is float or tb is int:
            if type(a) is _nd:
                cache = _weak.get(a.dtype)
                if cache is not None:
                    w = cache.get(b)
                    if w is not None:
                        return np.true_divide(a, w, out=out_like(a)) if a.nbytes >= _BIG else a / w
                elif a.dtype is _HALF:  # (float16 has no table: torch divides in float32)
                    return half_scalar(np.true_divide, a, b)
        elif tb is _nd and a.dtype is b.dtype and a.dtype.kind == "f":
            return np.true_divide(a, b, out=out_like2(a, b)) if a.nbytes >= _BIG else a / b
        a, b = float_result(a, b)
        if type(a) is _nd and type(b) is _nd and a.nbytes >= _BIG:
            return np.true_divide(a, b, out=out_like2(a, b))
        return a / b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g / b if ctx.needs(0) else None
        gb = -g * a / (b * b) if ctx.needs(1) else None
        return ga, gb


class Neg(ArrayFunction, name="NegBackward0"):
    """-x. derivatives.yaml: self: grad.neg()."""

    @staticmethod
    def forward(ctx, x):
        if x.dtype == np.bool_:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return np.negative(x, out=out_like(x)) if x.nbytes >= _BIG else np.negative(x)

    @staticmethod
    def backward(ctx, g):
        return -g


class Reciprocal(ArrayFunction, name="ReciprocalBackward0", saves_result=True):
    """1 / x. derivatives.yaml: self: -grad * (result * result)."""

    @staticmethod
    def forward(ctx, x):
        x = to_float(x)
        return np.reciprocal(x, out=out_like(x)) if x.nbytes >= _BIG else np.reciprocal(x)

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return -g * (y * y)


class PowScalar(ArrayFunction, name="PowBackward0", scalar_edges=1):
    """x ** e for a number e. derivatives.yaml pow_backward: grad * e * x ** (e - 1)
    (zero when e == 0)."""

    @staticmethod
    def forward(ctx, x, e):
        ctx.exponent = e
        ctx.save_for_backward(x)
        if type(e) is int and x.dtype.kind in "iu" and overflows(e, x.dtype):
            # (torch converts the exponent checked here, where + and * wrap a number around)
            raise overflow_error(e, x.dtype, "pow's exponent")
        x, e2 = promote(x, e)
        if x.dtype.kind in "iu" and isinstance(e, (int, np.integer)) and e < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if x.dtype.kind == "b":     # bool ** bool: NumPy has no bool power (it gives int8)
            return np.power(x, e2).astype(_BOOL)
        # (x has the result's dtype now)
        return np.power(x, e2, out=out_like(x)) if x.nbytes >= _BIG else np.power(x, e2)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        e = ctx.exponent
        if e == 0:
            # torch returns zeros_like(x): not connected to g's graph
            return _zeros_of(g), None
        # (x ** 1 for e == 2 too, as torch: its own derivative stays connected to x)
        return g * e * x ** (e - 1), None


class PowTensor(ArrayFunction, name="PowBackward1", scalar_edges=2):
    """x ** y for tensors. derivatives.yaml pow_backward_self: grad * y * x ** (y - 1), masked
    to 0 where y == 0 (so its own derivative is 0 there too); pow_backward_exponent:
    grad * result * log(x), taken as 0 where x == 0 and y >= 0."""

    @staticmethod
    def forward(ctx, x, y):
        r = np.power(*promote(x, y))
        ctx.save_for_backward(x, y, r)
        return r

    @staticmethod
    def backward(ctx, g):
        x, y, r = ctx.saved_tensors
        gx = gy = None
        if ctx.needs(0):
            gx = where(_make(y._data == 0), 0.0, g * y * x ** (y - 1))
        if ctx.needs(1):
            zero = (x._data == 0) & (y._data >= 0)
            gy = g * where(_make(zero), 0.0, r * log(x))
        return gx, gy


class RPow(ArrayFunction, name="PowBackward2"):
    """number ** tensor. derivatives.yaml: exponent: grad * result * log(base), 0 where base == 0
    and exponent >= 0."""

    @staticmethod
    def forward(ctx, y, base):
        y2, b = promote(y, base)
        r = np.power(b, y2)
        if type(r) is not _nd:
            r = np.asarray(r)
        ctx.base = base
        ctx.save_for_backward(y, r)
        return r

    @staticmethod
    def backward(ctx, g):
        y, r = ctx.saved_tensors
        base = ctx.base
        if base == 0:
            # d/dy 0 ** y is taken as 0 where y >= 0 (derivatives.yaml), -inf * result elsewhere
            return g * where(y >= 0, 0.0, r * float("-inf")), None
        with np.errstate(invalid="ignore"):
            lb = float(np.log(base)) if base > 0 else float("nan")
        return g * r * lb, None


# ---- unary math ---------------------------------------------------------------------------------
def _spare(g, like=None):
    """The array of gradient ``g`` when a backward may write its result there instead of into a
    new array (as hand-written code updates its gradient in place): only in a plain backward (no
    graph recorded), for a gradient nobody but the engine can see (``sole_holder``), with
    ``like``'s shape and dtype (without ``like``: a result shaped as g itself). While the engine's single-output path runs a backward, g is held
    by the node's gradient list, the backward's argument, this argument, sole_holder's and
    getrefcount's: five. Any more may be a holder that would see the change (a retained or
    captured gradient, one passed to several inputs or to hooks, the user's own, the engine's
    call_node path), so g is then left alone."""
    if _grad_state.record:
        return None
    if like is None:
        return g._data if sole_holder(g, None, None, 5) else None
    return g._data if sole_holder(g, like.shape, like.dtype, 5) else None


class Exp(ArrayFunction, name="ExpBackward0", saves_result=True):
    """e ** x. derivatives.yaml: self: grad * result."""

    @staticmethod
    def forward(ctx, x):
        x = to_float(x)
        return np.exp(x, out=out_like(x)) if x.nbytes >= _BIG else np.exp(x)

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        arr = _spare(g, y._data)
        if arr is None:
            return g * y
        arr *= y._data
        return g


class Log(ArrayFunction, name="LogBackward0"):
    """Natural log. derivatives.yaml: self: grad.div(self)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x = to_float(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x, out=out_like(x)) if x.nbytes >= _BIG else np.log(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        arr = _spare(g, x._data)
        if arr is None:
            return g / x
        with np.errstate(divide="ignore", invalid="ignore"):
            arr /= x._data
        return g


class Sqrt(ArrayFunction, name="SqrtBackward0", saves_result=True):
    """Square root. derivatives.yaml: self: grad / (2 * result)."""

    @staticmethod
    def forward(ctx, x):
        x = to_float(x)
        with np.errstate(invalid="ignore"):
            return np.sqrt(x, out=out_like(x)) if x.nbytes >= _BIG else np.sqrt(x)

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g / (y * 2)


def no_bool(x, kernel, name):
    """torch's NotImplementedError for a kernel (``kernel``, as torch names it) that has no bool
    version, for an array ``x`` of dtype bool; ``name``: the op, for the advice."""
    if x.dtype.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool' ({name} of a bool "
                                  f"tensor: convert it first, e.g. x.float() or x.long())")


class Abs(ArrayFunction, name="AbsBackward0"):
    """|x|. derivatives.yaml: self: grad * self.sgn() (so abs'(0) = 0). NotImplementedError for a
    bool x, as torch."""

    @staticmethod
    def forward(ctx, x):
        no_bool(x, "abs_cpu", "abs")
        ctx.save_for_backward(x)
        if x.nbytes >= _BIG and x.dtype.kind != "c":    # (|complex| is real)
            return np.abs(x, out=out_like(x))
        return np.abs(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        # sgn as an op on x (zero derivative), so a second derivative is connected zeros
        return g * Sgn.apply(x)


class Sin(ArrayFunction, name="SinBackward0"):
    """sin x. derivatives.yaml: self: grad * self.cos()."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x = to_float(x)
        return np.sin(x, out=out_like(x)) if x.nbytes >= _BIG else np.sin(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * cos(x)


class Cos(ArrayFunction, name="CosBackward0"):
    """cos x. derivatives.yaml: self: grad * -self.sin()."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x = to_float(x)
        return np.cos(x, out=out_like(x)) if x.nbytes >= _BIG else np.cos(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return -g * sin(x)


class Tanh(ArrayFunction, name="TanhBackward0", saves_result=True):
    """tanh x. derivatives.yaml tanh_backward: grad * (1 - result ** 2)."""

    @staticmethod
    def forward(ctx, x):
        x = to_float(x)
        return np.tanh(x, out=out_like(x)) if x.nbytes >= _BIG else np.tanh(x)

    @staticmethod
    def backward(ctx, g):
        if _grad_state.record is False:
            # a plain backward records nothing: tanh_backward's arithmetic on the arrays, without
            # apply's bookkeeping or a tensor for y (a fifth of this node's cost on small tensors)
            return _make(TanhGrad.forward(NULL_CTX, g._data, saved_result(ctx)))
        y, = ctx.saved_tensors
        return TanhGrad.apply(g, y)


def _not_ones(g, strides):
    """False when gradient ``g`` (of these ``strides``) is one 1 broadcast everywhere (what sum's
    backward hands on), where multiplying by it is a whole pass for nothing."""
    return not strides or any(strides) or not g.size or g.flat[0] != 1



# (y of tanh/sigmoid is always floating)
def _constants(v):
    """``v`` as a read-only 0-d array of each float dtype: NumPy converts a Python number on every
    ufunc call, which costs as much as the ufunc itself on small arrays."""
    out = {}
    for t in (np.float16, np.float32, np.float64):
        c = out[np.dtype(t)] = np.array(v, t)
        c.flags.writeable = False
    return out


_ONE, _ZERO = _constants(1.0), _constants(0.0)


def _out_shape(a, b):
    return a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape)


class TanhGrad(ArrayFunction, name="TanhBackwardBackward0"):
    """tanh_backward(grad, y) = grad * (1 - y ** 2), one primitive so a plain backward costs one
    op. derivatives.yaml tanh_backward: grad_output: grad * (1 - y ** 2);
    output: -2 * y * grad_output * grad."""

    @staticmethod
    def forward(ctx, g, y):
        if ctx is not NULL_CTX:
            ctx.save_for_backward(g, y)
        dt = y.dtype
        if dt is _HALF:     # computed in float32 and rounded once, as torch
            return TanhGrad.forward(NULL_CTX, g.astype(_F32), y.astype(_F32)).astype(_HALF)
        if y.ndim and g.shape == y.shape:
            t = np.multiply(y, y, out=out_like(y)) if y.nbytes >= _BIG else y * y
        elif not y.ndim and not g.ndim:
            # 0-d: NumPy's scalars, same rounding, for a quarter of the cost of 0-d arrays
            yv = y[()]
            return np.asarray((_ONE[dt][()] - yv * yv) * g[()])
        else:   # broadcast: an array of the result's shape
            t = np.multiply(y, y, out=np.empty(_out_shape(g, y), dt))
        # a 0-d one: NumPy converts a Python 1 on every call, which costs as much as the
        # subtraction itself on small arrays
        np.subtract(_ONE[dt], t, out=t)
        s = g.strides
        if s and s[-1] or _not_ones(g, s):   # (the usual gradient is settled inline)
            t *= g
        return t

    @staticmethod
    def backward(ctx, gg):
        g, y = ctx.saved_tensors
        return (gg * (1 - y * y) if ctx.needs(0) else None,
                gg * g * y * -2 if ctx.needs(1) else None)


class Sigmoid(ArrayFunction, name="SigmoidBackward0", saves_result=True):
    """1 / (1 + e ** -x). For very negative x, e ** -x overflows to inf and the result is exactly
    0, as in torch (the overflow warning is silenced). derivatives.yaml sigmoid_backward:
    grad * result * (1 - result)."""

    @staticmethod
    def forward(ctx, x):
        x = to_float(x)
        half = x.dtype is _HALF
        if half:    # computed in float32 and rounded once, as torch
            x = x.astype(_F32)
        y = out_like(x) if x.nbytes >= _BIG else None
        if y is None:
            y = np.empty_like(x)    # (an array even for 0-d input)
        np.negative(x, out=y)
        np.exp(y, out=y)
        y += 1
        np.reciprocal(y, out=y)
        return y.astype(_HALF) if half else y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return SigmoidGrad.apply(g, y)


class SigmoidGrad(ArrayFunction, name="SigmoidBackwardBackward0"):
    """sigmoid_backward(grad, y) = grad * y * (1 - y) as one primitive. derivatives.yaml
    sigmoid_backward: grad_output: grad * y * (1 - y); output: grad * grad_output * (1 - 2y)."""

    @staticmethod
    def forward(ctx, g, y):
        if ctx is not NULL_CTX:
            ctx.save_for_backward(g, y)
        dt = y.dtype    # (float16 stays float16 here: torch's CPU kernel computes it in half)
        if y.ndim and g.shape == y.shape:
            t = np.subtract(_ONE[dt], y, out=out_like(y)) if y.nbytes >= _BIG else _ONE[dt] - y
        else:   # 0-d (where NumPy gives a scalar) or broadcast: an array of the result's shape
            t = np.subtract(_ONE[dt], y, out=np.empty(_out_shape(g, y), dt))
        # torch's order, grad * (1 - y) * y, so the rounding is the same
        s = g.strides
        if s and s[-1] or _not_ones(g, s):   # (the usual gradient is settled inline)
            t *= g
        t *= y
        return t

    @staticmethod
    def backward(ctx, gg):
        g, y = ctx.saved_tensors
        return (gg * (y * (1 - y)) if ctx.needs(0) else None,
                gg * g * (1 - y * 2) if ctx.needs(1) else None)


class Relu(ArrayFunction, name="ReluBackward0", saves_result=True):
    """max(x, 0). derivatives.yaml threshold_backward(grad, result, 0): 0 where result <= 0, else
    grad (so relu'(0) = 0, and a NaN input passes its gradient)."""

    @staticmethod
    def forward(ctx, x, out=None):
        # relu(-0.) is -0. in torch: on a tie NumPy returns its second argument, except for
        # float16, where it returns the first. (``out``: ReluOver's x itself)
        if out is None and x.nbytes >= _BIG:
            out = out_like(x)
        if x.dtype == _HALF:
            return np.maximum(x, _ZERO[_HALF], out=out)
        zero = _ZERO.get(x.dtype)
        if zero is None:
            if x.dtype.kind == "b":     # (NumPy would give int64)
                raise RuntimeError("Boolean inputs not supported for relu (relu of a bool "
                                   "tensor: convert it first, e.g. x.float())")
            zero = 0
        return np.maximum(zero, x, out=out)

    @staticmethod
    def backward(ctx, g):
        yd = saved_result(ctx)
        arr = _spare(g, yd)
        if arr is None:
            return ReluGrad.apply(g, saved_result_tensor(ctx, yd))
        _relu_grad(arr, yd, arr)
        return g


class ReluOver(Relu, name="ReluBackward0"):
    """Relu written over its input's array: the path of ``relu`` (the function, the method and
    ``nn.functional.relu``) for a floating input under 1 MiB that nothing but the call holds
    (``F.relu(F.linear(...))``: the product is a temporary, see :func:`relu_apply_for` and
    :func:`~tapegrad.autograd.graph.sole_holder`), as hand-written code updates its
    pre-activations in place. The same node, values and derivative as :class:`Relu`; no new
    array, which in W3's step (benchmarks/) saves about 30 us per layer, the output of a 256x512
    float32 product no longer written to a fresh buffer."""

    @staticmethod
    def forward(ctx, x):
        return Relu.forward(ctx, x, x)


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _relu_grad(g, y, out):
    """threshold_backward(g, y, 0) into ``out`` (``g`` itself allowed), for ``y`` a relu result:
    0 where y <= 0, else g, as torch's ``where``, so a NaN or infinite gradient is zeroed too and
    the zero is +0, where a float product by a mask would give NaN and -0. A relu result is >= 0
    or NaN, so "not y <= 0" is ``y != 0``; g is kept where that holds by an integer product of
    its bits, which costs a tenth more than the float product (np.where and masked assignment
    cost 6-8x as much on a mask with no pattern, a relu's). ``g``, ``y`` and ``out`` have one
    shape, ``g`` and ``out`` one float dtype."""
    u = _UINT[g.dtype.itemsize]
    gu = g.view(u)
    np.multiply(gu, y != 0, out=gu if out is g else out.view(u))
    return out


class ReluGrad(ArrayFunction, name="ThresholdBackwardBackward0"):
    """threshold_backward(grad, y, 0): 0 where y <= 0, else grad, in one op. derivatives.yaml:
    grad_output: the same mask applied to the incoming grad; self: zero (piecewise constant)."""

    @staticmethod
    def forward(ctx, g, y):
        ctx.save_for_backward(y)
        if g.shape == y.shape and g.dtype is y.dtype:
            return _relu_grad(g, y, np.empty_like(g))
        return np.where(y <= 0, 0, g)

    @staticmethod
    def backward(ctx, gg):
        y, = ctx.saved_tensors
        # zeros (not None) for y: the derivative is connected, as torch's zeros_like
        return (ReluGrad.apply(gg, y) if ctx.needs(0) else None,
                _make(np.zeros_like(y._data)) if ctx.needs(1) else None)


def _check_bounds(x, lo, hi):
    """torch refuses a number bound that the tensor's dtype cannot hold (an infinite one is fine
    for a float dtype), rather than clamping to inf or wrapping it around; a float bound of an
    integer tensor makes the result floating, so nothing overflows there."""
    kind = x.dtype.kind
    if kind not in "fiu":
        return
    for which, v in (("min", lo), ("max", hi)):
        if isinstance(v, int) and not -2 ** 63 <= v < 2 ** 63:
            raise OverflowError(f"clamp: int too big to convert ({which}={v})")
        if (isinstance(v, int) or kind == "f" and isinstance(v, float)) and overflows(v, x.dtype):
            raise overflow_error(v, x.dtype, f"clamp's {which}")


class Clamp(ArrayFunction, name="ClampBackward1"):
    """clip(x, min, max) for numbers. derivatives.yaml clamp_backward:
    grad where min <= x <= max, else 0."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        # a NumPy scalar bound as the Python number torch reads from it: np.float64(0.1) keeps a
        # float32 x float32, and np.int64(300) is refused for int8, as 300 is
        if isinstance(lo, np.generic):
            lo = coerce_operand(lo)
        if isinstance(hi, np.generic):
            hi = coerce_operand(hi)
        no_bool(x, "clamp_scalar_cpu" if lo is not None and hi is not None else
                "clamp_min_scalar_cpu" if lo is not None else "clamp_max_scalar_cpu", "clamp")
        _check_bounds(x, lo, hi)
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        # the bound first: on a tie NumPy returns its second argument, and torch keeps x (the
        # sign of a zero x survives a zero bound)
        y = x
        if lo is not None:
            x2, lo = promote(x, lo)
            y = np.maximum(lo, x2, out=out_like(x2)) if x2.nbytes >= _BIG else \
                np.asarray(np.maximum(lo, x2))     # (0-d: NumPy's scalar back to an array)
        if hi is not None:
            y2, hi = promote(y, hi)
            # into the lower bound's result (or a promoted copy of x), which only this op holds
            if y2 is not x:
                y = np.minimum(hi, y2, out=y2)
            else:
                y = np.minimum(hi, y2, out=out_like(y2)) if y2.nbytes >= _BIG else \
                    np.minimum(hi, y2)
        return y if y is not x else x.copy()

    @staticmethod
    def backward(ctx, g):
        # torch's clamp_backward: where(lo <= x <= hi, grad, 0), so a NaN or infinite gradient
        # outside the bounds gives 0 (a product by the mask would give NaN), and the zero is +0
        x, = ctx.saved_tensors
        xd = x._data
        keep = None
        if ctx.lo is not None:
            keep = xd >= ctx.lo
        if ctx.hi is not None:
            keep = xd <= ctx.hi if keep is None else keep & (xd <= ctx.hi)
        return where(_make(keep), g, 0.0), None, None


class ClampMin(Clamp, name="ClampMinBackward0"):
    """clamp_min(x, number): Clamp with only a lower bound (torch names its node apart)."""


class ClampMax(Clamp, name="ClampMaxBackward0"):
    """clamp_max(x, number): Clamp with only an upper bound."""


class ClampTensor(ArrayFunction, name="ClampBackward0", scalar_edges=3):
    """clip(x, min, max) with tensor bounds. derivatives.yaml (clamp_backward,
    clamp_backward_min_max): self: grad where min <= x <= max; min: grad where x < min (and
    min < max when both are given); max: grad where x > max (or max < min, where the result is
    max); 0 elsewhere, as ``where``, so a NaN gradient does not leak into the zeros."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x, lo, hi)
        y = x
        if lo is not None:
            y, lo = promote(y, lo)
            y = np.maximum(lo, y)     # bound first, as in Clamp
        if hi is not None:
            y, hi = promote(y, hi)
            y = np.minimum(hi, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.saved_tensors
        xd = x._data
        inside = np.ones(xd.shape, bool)
        glo = ghi = None
        both = lo is not None and hi is not None
        if lo is not None:
            inside = inside & (xd >= _data(lo))
            if ctx.needs(1):
                m = xd < _data(lo)
                glo = where(_make(m & (_data(lo) < _data(hi)) if both else m), g, 0.0)
        if hi is not None:
            inside = inside & (xd <= _data(hi))
            if ctx.needs(2):
                m = xd > _data(hi)
                ghi = where(_make(m | (_data(hi) < _data(lo)) if both else m), g, 0.0)
        return where(_make(inside), g, 0.0), glo, ghi


class ClampMinTensor(ClampTensor, name="ClampMinBackward1"):
    """clamp_min(x, tensor)."""


class ClampMaxTensor(ClampTensor, name="ClampMaxBackward1"):
    """clamp_max(x, tensor)."""


def _data(x):
    return x._data if isinstance(x, Tensor) else x


class Maximum(ArrayFunction, name="MaximumBackward0"):
    """Elementwise max. derivatives.yaml: grad to the larger input, split evenly on ties."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        a, b = promote(a, b)
        return np.maximum(a, b, out=out_like2(a, b)) if a.nbytes >= _BIG else np.maximum(a, b)

    @staticmethod
    def backward(ctx, g):
        return _minmax_backward(ctx, g, np.greater)


class Minimum(ArrayFunction, name="MinimumBackward0"):
    """Elementwise min. derivatives.yaml: grad to the smaller input, split evenly on ties."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        a, b = promote(a, b)
        return np.minimum(a, b, out=out_like2(a, b)) if a.nbytes >= _BIG else np.minimum(a, b)

    @staticmethod
    def backward(ctx, g):
        return _minmax_backward(ctx, g, np.less)


def _minmax_backward(ctx, g, wins):
    """derivatives.yaml maximum (minimum with the comparisons swapped):
    self: where(self == other, grad / 2, grad).masked_fill_(self < other, 0);
    other: the same, masked_fill_(self > other, 0). So a NaN operand passes the whole gradient
    to both inputs, and a NaN gradient does not leak into the loser's zeros."""
    a, b = ctx.saved_tensors
    ad, bd = promote(a._data, b._data)
    share = where(_make(ad == bd), DivScalar.apply(g, 2), g)
    ga = share.masked_fill(_make(wins(bd, ad)), 0) if ctx.needs(0) else None
    gb = share.masked_fill(_make(wins(ad, bd)), 0) if ctx.needs(1) else None
    return ga, gb


class Where(ArrayFunction, name="WhereBackward0", scalar_edges=3, nondiff=(0,)):
    """where(cond, a, b). derivatives.yaml: self: where(cond, grad, 0); other: where(cond, 0, grad).
    ``cond`` (a bool Tensor, or an array) gets no edge, as in torch's graph; a number a or b
    shows as (None, 0) in next_functions, as torch's wrapped number does."""

    @staticmethod
    def forward(ctx, cond, a, b):
        # saved: version-checked and freed by backward, as torch's condition
        ctx.save_for_backward(cond)
        a, b = promote(a, b)
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        c, = ctx.saved_tensors
        ga = where(c, g, 0.0) if ctx.needs(1) else None
        gb = where(c, 0.0, g) if ctx.needs(2) else None
        return None, ga, gb



class DivMode(ArrayFunction, name="DivBackward2", scalar_edges=2):
    """Rounded quotient (rounding_mode 'trunc' or 'floor'). derivatives.yaml div.Tensor_mode:
    the gradient is zero for both operands."""

    @staticmethod
    def forward(ctx, a, b, mode):
        a, b = promote(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.floor_divide(a, b) if mode == "floor" else np.trunc(np.true_divide(a, b))
        return np.asarray(q).astype(np.result_type(a, b), copy=False)

    @staticmethod
    def backward(ctx, g):
        z = _make(np.zeros_like(g._data))
        return (z if ctx.needs(0) else None), (z if ctx.needs(1) else None), None


class Sign(ArrayFunction, name="SignBackward0"):
    """Elementwise sign: -1, 0 or 1, and 0 for NaN and both zeros (torch's (0 < x) - (x < 0),
    where np.sign gives NaN for NaN). derivatives.yaml: self: zeros_like(grad)."""

    @staticmethod
    def forward(ctx, x):
        if x.dtype.kind == "f":
            return np.subtract(x > 0, x < 0, dtype=x.dtype,
                               out=out_like(x) if x.nbytes >= _BIG else None)
        if x.dtype == _BOOL:    # (NumPy has no bool sign; torch gives the values back)
            return x.copy()
        return np.sign(x)

    @staticmethod
    def backward(ctx, g):
        return _make(np.zeros_like(g._data))


class Sgn(Sign, name="SgnBackward0"):
    """sgn x: sign for real tensors, the node torch's abs backward records."""


class DivScalar(ArrayFunction, name="DivBackward1"):
    """tensor / number, as torch's C++ formulas record it (div.Scalar; one edge).
    derivatives.yaml div.Scalar: self: grad / other."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        a, b = float_result(x, c)
        return a / b

    @staticmethod
    def backward(ctx, g):
        return DivScalar.apply(g, ctx.c), None


def _cast_copy(x, np_dtype, fmt=preserve_format):
    """Array ``x`` cast to ``np_dtype`` in a new array laid out as memory format ``fmt`` asks;
    preserve_format keeps a dense ``x``'s strides and gives any other (expanded, sliced with a
    step) torch's infer_dense_strides order, where NumPy's astype would keep its own."""
    if fmt is preserve_format and x.flags.c_contiguous and x.size:
        # C order, the usual case, is kept by astype, which gives a size-1 dim NumPy's C stride
        # where torch keeps x's: those are checked
        out = x.astype(np_dtype)
        if 1 not in x.shape or same_strides(out, x):
            return out
    out = empty_in_format(x, np_dtype, fmt, "to")
    np.copyto(out, x, casting="unsafe")
    return out


class ToCopy(ArrayFunction, name="ToCopyBackward0"):
    """Cast to another dtype, laid out as memory format ``fmt`` asks (preserve_format when
    None). derivatives.yaml _to_copy: grad cast back to self's dtype."""

    @staticmethod
    def forward(ctx, x, np_dtype, fmt=None):
        ctx.src = x.dtype
        return _cast_copy(x, np_dtype, preserve_format if fmt is None else fmt)

    @staticmethod
    def backward(ctx, g):
        return g.to(_dtype.from_numpy_dtype(ctx.src)), None, None


# ---- public functions ---------------------------------------------------------------------------
def _no_alpha(alpha):
    """Whether add/sub/rsub were given the default alpha, the int 1 (True and 1.0 are checked
    against the result dtype, as torch)."""
    return type(alpha) is int and alpha == 1


@op("add")
def add(input, other, *, alpha=1):
    """input + alpha * other, broadcasting; dtype by torch's promotion rules. TypeError for an
    operand that is neither a tensor nor a number, and for an ``alpha`` that is not a number;
    RuntimeError for an alpha the result dtype refuses, as torch (a float alpha for an integer
    result, a bool one for a non-bool result, one out of the dtype's range)."""
    input = check_operand(input, "add")
    other = check_operand(other, "add")
    if _no_alpha(alpha):
        if not isinstance(input, Tensor):
            input, other = other, input
        return Add.apply(input, other)
    return Add.apply(input, other, _alpha_number(alpha, "add"))


@op("sub", aliases=("subtract",))
def sub(input, other, *, alpha=1):
    """input - alpha * other, broadcasting. RuntimeError, as torch, for two bool operands (bool
    tensors or Python bools), for a bool operand with a number, and for an ``alpha`` the result
    dtype refuses (see :func:`add`); a bool tensor minus a tensor of another dtype (or the
    reverse) is computed, where torch refuses it."""
    other = check_operand(other, "sub")
    plain = _no_alpha(alpha)
    if not isinstance(input, Tensor):
        input = check_operand(input, "sub")
        return Rsub.apply(other, input) if plain else \
            Rsub.apply(other, input, _alpha_number(alpha, "sub"))
    if plain:
        return Sub.apply(input, other)
    return Sub.apply(input, other, _alpha_number(alpha, "sub"))


@op("rsub")
def rsub(input, other, *, alpha=1):
    """other - alpha * input (``2 - x`` is ``rsub(x, 2)``). Errors as :func:`sub`'s."""
    other = check_operand(other, "rsub")
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    if _no_alpha(alpha):
        return Rsub.apply(input, other)
    return Rsub.apply(input, other, _alpha_number(alpha, "rsub"))


@op("mul", aliases=("multiply",))
def mul(input, other):
    """input * other, broadcasting. TypeError for an operand that is neither a tensor nor a
    number."""
    input = check_operand(input, "mul")
    other = check_operand(other, "mul")
    if not isinstance(input, Tensor):
        input, other = other, input
    return Mul.apply(input, other)


@op("div", aliases=("divide", "true_divide"))
def div(input, other, *, rounding_mode=None):
    """input / other (true division: integer inputs give the default float dtype).
    ``rounding_mode`` 'trunc' or 'floor' gives a non-differentiable rounded quotient."""
    other = check_operand(other, "div")
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                               f"but found '{rounding_mode}' (div: pass rounding_mode=None for true "
                               f"division)")
        return DivMode.apply(input, other, rounding_mode)
    if not isinstance(input, Tensor):
        return mul(reciprocal(other), input)
    return Div.apply(input, other)


@op("neg", aliases=("negative",))
def neg(input):
    """-input."""
    return Neg.apply(input)


@op("reciprocal")
def reciprocal(input):
    """1 / input (floating result)."""
    return Reciprocal.apply(input)


@op("pow")
def pow(input, exponent):  # noqa: A001 - torch's name
    """input ** exponent: tensor ** number (PowBackward0), tensor ** tensor (PowBackward1),
    number ** tensor (PowBackward2)."""
    exponent = check_operand(exponent, "pow")
    if not isinstance(input, Tensor):
        return RPow.apply(exponent, input)
    if isinstance(exponent, Tensor):
        return PowTensor.apply(input, exponent)
    return PowScalar.apply(input, exponent)


@op("square")
def square(input):
    """input ** 2."""
    return PowScalar.apply(input, 2)


def _unary(name, F, doc, aliases=()):
    apply = F.apply     # (bound once: F.apply makes a new bound method on every read)

    def f(input):
        return apply(input)
    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = doc
    return op(name, aliases=aliases)(f)


exp = _unary("exp", Exp, "e ** input, elementwise (floating result). Derivative: grad * result.")
log = _unary("log", Log, "Natural logarithm (log of a negative is nan, of 0 is -inf).")
sqrt = _unary("sqrt", Sqrt, "Square root (nan for negatives). Derivative: grad / (2 result).")
abs = _unary("abs", Abs, "Absolute value; abs'(0) = 0 as in torch. "  # noqa: A001
            "NotImplementedError for a bool input, as torch.")
sin = _unary("sin", Sin, "Sine.")
cos = _unary("cos", Cos, "Cosine.")
tanh = _unary("tanh", Tanh, "Hyperbolic tangent. Derivative: grad * (1 - result ** 2).")
sigmoid = _unary("sigmoid", Sigmoid, "Logistic sigmoid, stable for large |x|.")
_relu_apply, _relu_over_apply = Relu.apply, ReluOver.apply
_OVER_MIN = 1024


def relu_apply_for(input):
    """The apply a relu of ``input`` takes: :class:`ReluOver`'s, which writes over the input's
    array, for a floating tensor of 1,024 elements up to under 1 MiB (``tapegrad.cpu``'s
    MIN_BYTES) that nothing but the relu call holds (a temporary, as in
    ``relu(linear(x, w, b))``); else :class:`Relu`'s. From 1 MiB the result comes from the
    cache of large buffers instead: written over, the input's buffer stayed alive until
    backward, and the step's allocations then made glibc give memory back and fault it in again
    (W5 in benchmarks/: 1,600 page faults a step against none, 0.79x the step's time). For
    ``tapegrad.relu``, ``Tensor.relu`` and ``nn.functional.relu``, each of which calls it with
    its parameter and calls the apply itself (so the apply finds its caller's caller, the user's
    line, without a walk)."""
    # references: the caller's parameter, this one, sole_holder's, getrefcount's argument.
    # (Below _OVER_MIN elements a new array costs no more than writing over, warm.)
    if type(input) is Tensor and _OVER_MIN <= input._data.size and input._data.nbytes < _BIG \
            and input._data.dtype in _FLOAT_DTYPES and sole_holder(input, None, None, 4):
        return _relu_over_apply
    return _relu_apply


@op("relu")
def relu(input):
    """max(input, 0); relu'(0) = 0 as in torch. A temporary input (nothing else holds it) has
    its array written over rather than a new one made (:func:`relu_apply_for`)."""
    return relu_apply_for(input)(input)
op("absolute")(abs)


@op("clamp", aliases=("clip",))
def clamp(input, min=None, max=None):  # noqa: A002
    """Clip into [min, max] (numbers or tensors; either may be None, not both). The result has
    input's shape (broadcast with tensor bounds) and dtype; an input equal to a bound is kept as
    is (a -0.0 input stays -0.0). Gradient passes where min <= input <= max (inclusive, as torch's
    clamp_backward). Raises RuntimeError when both bounds are None, or when a number bound is
    finite but beyond what input's float dtype holds (1e39 for float32; torch refuses it too),
    OverflowError for an int bound beyond int64, and NotImplementedError for a bool input with a
    number bound (torch's clamp_scalar_cpu has no bool kernel). A NumPy scalar bound counts as
    the Python number it holds, as in torch (``np.float64(0.1)`` keeps a float32 input float32)."""
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return ClampTensor.apply(input, min, max)
    return Clamp.apply(input, min, max)


@op("clamp_min", method=True)
def clamp_min(input, min):  # noqa: A002
    """max(input, min): the gradient passes where input >= min (ClampMinBackward0). Shapes,
    dtypes and bound errors as :func:`clamp`; TypeError when ``min`` is None."""
    if min is None:    # torch: no overload takes None here (clamp does)
        raise TypeError("clamp_min() expected a number or a Tensor as min, got None")
    if isinstance(min, Tensor):
        return ClampMinTensor.apply(input, min, None)
    return ClampMin.apply(input, min, None)


@op("clamp_max", method=True)
def clamp_max(input, max):  # noqa: A002
    """min(input, max): the gradient passes where input <= max (ClampMaxBackward0). Shapes,
    dtypes and bound errors as :func:`clamp`; TypeError when ``max`` is None."""
    if max is None:    # torch: no overload takes None here (clamp does)
        raise TypeError("clamp_max() expected a number or a Tensor as max, got None")
    if isinstance(max, Tensor):
        return ClampMaxTensor.apply(input, None, max)
    return ClampMax.apply(input, None, max)


def _two_tensors(other, name, bound):
    """TypeError, as torch's, for a ``maximum``/``minimum`` operand that is not a Tensor (torch
    takes no number there), with the call that takes one."""
    if not isinstance(other, Tensor):
        fix = f"for a number use {bound}(input, {other!r})" if isinstance(other, (int, float)) \
            else "make it one first, e.g. tapegrad.as_tensor(other)"
        raise TypeError(f"{name}(): argument 'other' must be Tensor, not {type(other).__name__} "
                        f"({name} takes two tensors: {fix})")
    return other


@op("maximum")
def maximum(input, other):
    """Elementwise maximum of two tensors (broadcast); gradient split evenly on ties. TypeError
    for an ``other`` that is not a Tensor, as torch (``clamp_min`` takes a number)."""
    return Maximum.apply(input, _two_tensors(other, "maximum", "clamp_min"))


@op("minimum")
def minimum(input, other):
    """Elementwise minimum of two tensors (broadcast); gradient split evenly on ties. TypeError
    for an ``other`` that is not a Tensor, as torch (``clamp_max`` takes a number)."""
    return Minimum.apply(input, _two_tensors(other, "minimum", "clamp_max"))


@op("where", method=False)
def where(condition, input=None, other=None):
    """``where(cond, a, b)``: a where cond else b, elementwise (a, b Tensors or Python numbers).
    ``where(cond)`` alone returns the indices of the nonzero elements of ``cond`` (any dtype), a
    tuple of 1-D int64 tensors, one per dim, as torch's nonzero(as_tuple=True).

    Result: the broadcast shape of cond, a and b; dtype by torch's promotion of a and b (int64 and
    float64 tensors give float64; an int tensor with a float number gives the default float
    dtype; a number does not widen a tensor of its own category). Derivative (derivatives.yaml
    where): self: where(cond, grad, 0); other: where(cond, 0, grad) (WhereBackward0; cond gets
    none).

    Raises:
        RuntimeError: ``cond`` is not bool ("where expected condition to be a boolean tensor",
            as torch); shapes that do not broadcast.
        TypeError: only one of a, b given, or one that is neither a Tensor nor a number.
    Divergences from torch: ``cond`` may also be a list or NumPy array (torch: TypeError); with
    two Python floats (no Tensor operand) the result is float64 (torch: the default float
    dtype)."""
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if input is None and other is None:
        return tuple(_make(i.astype(np.int64)) for i in np.nonzero(cond))
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with "
                           f"dtype {_dtype.from_numpy_dtype(cond.dtype)}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        a, b = promote(input, other)
        return _make(np.where(cond, a, b))
    return Where.apply(condition if isinstance(condition, Tensor) else cond,
                       check_operand(input, "where"), check_operand(other, "where"))


_TO_KWARGS = frozenset(("dtype", "device", "non_blocking", "copy", "memory_format"))


def _to(self, *args, **kwargs):
    """``to(dtype)`` / ``to(device)`` / ``to(other_tensor)``: a cast copy (self when nothing
    changes), laid out as torch's preserve_format: self's strides when self is dense, else (an
    expanded tensor, a slice with a step) its order of dims without gaps, torch's
    infer_dense_strides (``ones(1, 3).expand(4, 3).double().stride() == (3, 1)``, as torch).
    ``memory_format=`` (keyword only; contiguous_format, channels_last, channels_last_3d): self
    when nothing else changes and the format its strides suggest (torch's
    suggest_memory_format) is that one, else a copy laid out so. Recorded as
    ToCopyBackward0. TypeError for a memory_format that is not one or is given by position;
    RuntimeError for a channels-last format of the wrong rank."""
    bad = [k for k in kwargs if k not in _TO_KWARGS]
    if bad:
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"({bad[0]}={type(kwargs[bad[0]]).__name__}): to() takes dtype, device, "
                        f"non_blocking, copy and memory_format")
    dt = kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    fmt = check_format(kwargs.get("memory_format"), "to")
    for a in args:
        if isinstance(a, Tensor):
            dt = a.dtype
        elif isinstance(a, (_dtype.dtype, np.dtype, type)):
            dt = a
        elif isinstance(a, (str, _device_cls)) or a is None:
            _check_device(a, "to")
        elif isinstance(a, memory_format):
            raise TypeError(f"to() received an invalid combination of arguments: a memory "
                            f"format ({a!r}) is taken only as memory_format=")
        elif isinstance(a, _layout):
            raise TypeError(f"to() received an invalid combination of arguments - got ({a!r}): "
                            f"to() takes no layout")
    _check_device(kwargs.get("device"), "to")
    if fmt is not preserve_format:
        # (torch's to_will_alias, then _to_copy in that format)
        np_dt = self._data.dtype if dt is None else _dtype.to_dtype(dt).np
        if np_dt == self._data.dtype and not copy and suggest_format(self._data) is fmt:
            return self
        return ToCopy.apply(self, np_dt, fmt)
    if dt is None:
        return self.clone() if copy else self
    dt = _dtype.to_dtype(dt)
    if dt.np == self._data.dtype and not copy:
        return self
    if self.requires_grad and not dt.is_floating_point:
        return _make(_cast_copy(self._data, dt.np))
    return ToCopy.apply(self, dt.np)


Tensor.to = _to
for _name, _dt in (("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
                   ("long", _dtype.int64), ("int", _dtype.int32), ("short", _dtype.int16),
                   ("bool", _dtype.bool), ("byte", _dtype.uint8), ("char", _dtype.int8)):
    def _cast(self, _dt=_dt):
        return _to(self, _dt)
    _cast.__name__ = _name
    _cast.__doc__ = f"self.to(tapegrad.{_dt.name})"
    setattr(Tensor, _name, _cast)


def _type_as(self, other):
    return _to(self, other.dtype)


Tensor.type_as = _type_as


# ---- comparisons and logic (no gradient) ----------------------------------------------------------
def _cmp(name, ufunc):
    def f(input, other):
        other = check_operand(other, name)
        a, b = promote(_data(input), _data(other))
        try:
            return _make(np.asarray(ufunc(a, b)))
        except ValueError:
            raise broadcast_error(name, input, other) from None
    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` comparison; a bool tensor with no gradient."
    return op(name)(f)


eq = _cmp("eq", np.equal)
ne = _cmp("ne", np.not_equal)
lt = _cmp("lt", np.less)
le = _cmp("le", np.less_equal)
gt = _cmp("gt", np.greater)
ge = _cmp("ge", np.greater_equal)
logical_and = _cmp("logical_and", np.logical_and)
logical_or = _cmp("logical_or", np.logical_or)
logical_xor = _cmp("logical_xor", np.logical_xor)


@op("logical_not")
def logical_not(input):
    """Elementwise not; a bool tensor."""
    return _make(np.logical_not(input._data))


@op("isnan")
def isnan(input):
    """Elementwise NaN test; a bool tensor with no gradient."""
    return _make(np.isnan(input._data))


@op("isfinite")
def isfinite(input):
    """Elementwise test for finite values (not inf, not NaN); a bool tensor, no gradient."""
    return _make(np.isfinite(input._data))


@op("equal")
def equal(input, other):
    """True if both tensors have the same shape and elements (a Python bool)."""
    return input._data.shape == other._data.shape and bool(np.all(input._data == other._data))


@op("allclose")
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if |input - other| <= atol + rtol * |other| everywhere (a Python bool)."""
    return bool(np.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


@op("sign")
def sign(input):
    """Elementwise sign (-1, 0, 1; 0 for NaN and both zeros) in input's dtype (a bool tensor
    comes back as its values); its gradient is zero, as torch's SignBackward0."""
    return Sign.apply(input)


@op("sgn")
def sgn(input):
    """sign for real tensors (torch's sgn is z / |z| for complex ones, which tapegrad does not
    have); recorded as SgnBackward0, whose gradient is zero."""
    return Sgn.apply(input)


@op("signbit")
def signbit(input):
    """Whether the sign bit is set: True for negatives, -0.0 and NaNs with the bit set; False
    for every bool. Result: bool, input's shape; not differentiable. TypeError when input is
    not a Tensor (as torch)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"signbit(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    a = input._data
    return _make(np.signbit(a) if a.dtype != _BOOL else np.zeros(a.shape, _BOOL))


# ---- dunders ------------------------------------------------------------------------------------
def _dunder(fn, reflected=False):
    def method(self, other):
        t = type(other)
        if t is not Tensor and t is not float and t is not int:
            other = coerce_operand(other)
            if other is None:
                return NotImplemented
        return fn(other, self) if reflected else fn(self, other)
    return method


# + and * are their Function's apply itself (operands=True takes other operands as _dunder does):
# they are the hottest dunders, and commutative, so the reflected form is the same function
Tensor.__add__ = Tensor.__radd__ = Add.apply
Tensor.__mul__ = Tensor.__rmul__ = Mul.apply
Tensor.__sub__ = _dunder(sub)
Tensor.__rsub__ = _dunder(rsub)
Tensor.__truediv__ = _dunder(div)
Tensor.__rtruediv__ = _dunder(div, reflected=True)
Tensor.__pow__ = _dunder(pow)
Tensor.__rpow__ = _dunder(pow, reflected=True)
Tensor.__neg__ = neg
Tensor.__abs__ = abs
Tensor.__eq__ = _dunder(eq)
Tensor.__ne__ = _dunder(ne)
Tensor.__lt__ = _dunder(lt)
Tensor.__le__ = _dunder(le)
Tensor.__gt__ = _dunder(gt)
Tensor.__ge__ = _dunder(ge)


# ---- more unary math ----------------------------------------------------------------------------
class Log1p(ArrayFunction, name="Log1PBackward0"):
    """log(1 + x), accurate near 0. derivatives.yaml log1p_backward: grad / (self + 1)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x = to_float(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            if x.dtype is _HALF:    # NumPy's half log1p rounds differently: float32, as torch
                return np.log1p(x.astype(_F32)).astype(_HALF)
            return np.log1p(x, out=out_like(x)) if x.nbytes >= _BIG else np.log1p(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (x + 1)


class Expm1(ArrayFunction, name="Expm1Backward0"):
    """e ** x - 1, accurate near 0. derivatives.yaml: grad * (result + 1)."""

    @staticmethod
    def forward(ctx, x):
        x = to_float(x)
        y = np.expm1(x, out=out_like(x)) if x.nbytes >= _BIG else np.expm1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (y + 1)


class Rsqrt(ArrayFunction, name="RsqrtBackward0"):
    """1 / sqrt(x). derivatives.yaml: -0.5 * grad * result.pow(3)."""

    @staticmethod
    def forward(ctx, x):
        x = to_float(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            if x.dtype is _HALF:    # one rounding, from float32, as torch
                y = np.reciprocal(np.sqrt(x.astype(_F32))).astype(_HALF)
            else:
                y = np.sqrt(x, out=out_like(x)) if x.nbytes >= _BIG else np.sqrt(x)
                y = np.reciprocal(y, out=y) if type(y) is _nd else np.reciprocal(y)  # (0-d: scalar)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        if y._data.dtype is _HALF:
            # torch's order, each product rounded to half (result ** 3 rounds once)
            return g * -0.5 * y ** 3
        return g * (y * y * y) * -0.5


# erf: NumPy has none. A vectorised port of the classic fdlibm/FreeBSD s_erf.c rational
# approximations (accurate to about 1 ulp in float64), evaluated in float64.
_ERX = 8.45062911510467529297e-01
_EFX8 = 1.02703333676410069053e+00
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _horner(z, coefs):
    r = np.full_like(z, coefs[-1])
    for c in coefs[-2::-1]:
        r *= z
        r += c
    return r


def _erf_array(x):
    """erf of an array (or anything np.asarray takes), computed in float64. A float input comes
    back in its own dtype (float16/float32/float64) and shape; a non-float input (int, bool)
    comes back as float64 (callers wanting torch's default float dtype cast first, as
    :class:`Erf` does with ``to_float``). NaN stays NaN, erf(+-inf) = +-1. Raises nothing for
    numeric input."""
    x = np.asarray(x)
    xd = x.astype(np.float64)
    a = np.abs(xd)
    out = np.empty_like(xd)
    with np.errstate(all="ignore"):
        small = a < 0.84375
        if small.any():
            xs = xd[small]
            z = xs * xs
            y = xs + xs * (_horner(z, _PP) / _horner(z, _QQ))
            tiny = np.abs(xs) < 2.0 ** -28
            y[tiny] = (8 * xs[tiny] + _EFX8 * xs[tiny]) / 8
            out[small] = y
        mid = (a >= 0.84375) & (a < 1.25)
        if mid.any():
            s = a[mid] - 1
            out[mid] = _ERX + _horner(s, _PA) / _horner(s, _QA)
        big = (a >= 1.25) & (a < 6)
        if big.any():
            ab = a[big]
            s = 1 / (ab * ab)
            near = ab < 1 / 0.35
            r = np.where(near, _horner(s, _RA), _horner(s, _RB))
            q = np.where(near, _horner(s, _SA), _horner(s, _SB))
            # z: |x| with the low 32 bits of its float64 representation cleared (exact z * z)
            z = (ab.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
            erfc = np.exp(-z * z - 0.5625) * np.exp((z - ab) * (z + ab) + r / q) / ab
            out[big] = 1 - erfc
        huge = a >= 6
        out[huge] = 1.0
        out[~small] = np.copysign(out[~small], xd[~small])
        nan = np.isnan(xd)
        out[nan] = np.nan
    return out.astype(x.dtype, copy=False) if x.dtype.kind == "f" else out


class Erf(ArrayFunction, name="ErfBackward0"):
    """The error function. derivatives.yaml: 2 / sqrt(pi) * exp(-self ** 2) * grad."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _erf_array(to_float(x))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        if x._data.dtype is _HALF:
            # torch's order, 2 / sqrt(pi) * exp(-x ** 2) * grad, each step rounded to half, with
            # exp and the constant's product computed in float32
            e = exp(-(x * x).float()).half()
            return (e.float() * 1.1283791670955126).half() * g
        return g * exp(x * x * -1.0) * 1.1283791670955126


log1p = _unary("log1p", Log1p, "log(1 + input), accurate for small input (-inf at -1, nan below). "
               "Result: input's shape; a float input keeps its dtype, an integer or bool input "
               "gives the default float dtype (float32 unless set_default_dtype changed it), as "
               "torch. Derivative (derivatives.yaml log1p_backward): grad / (input + 1).")
expm1 = _unary("expm1", Expm1, "exp(input) - 1, accurate for small input. Result: input's shape; "
               "a float input keeps its dtype, an integer or bool input gives the default float "
               "dtype (float32 unless set_default_dtype changed it), as torch. Derivative "
               "(derivatives.yaml): grad * (result + 1).")
rsqrt = _unary("rsqrt", Rsqrt, "1 / sqrt(input) (nan for negatives, inf at 0). Result: input's "
               "shape; a float input keeps its dtype, an integer or bool input gives the default "
               "float dtype (float32 unless set_default_dtype changed it), as torch. Derivative "
               "(derivatives.yaml): -0.5 * grad * result ** 3.")
erf = _unary("erf", Erf, "The error function 2/sqrt(pi) * integral_0^x exp(-t^2) dt. Result: "
             "input's shape; a float input keeps its dtype, an integer or bool input gives the "
             "default float dtype (float32 unless set_default_dtype changed it), as torch. "
             "Derivative (derivatives.yaml): 2 / sqrt(pi) * exp(-input ** 2) * grad.")




# ---- trigonometric, hyperbolic, base-10/base-2 logs ----------------------------------------------
# Each forward is NumPy's ufunc (float16 computed in float32 and rounded once, as torch), an
# integer or bool input taken as the default float dtype; a value outside the domain gives nan
# (and a pole inf) without a warning, as torch. Each backward is derivatives.yaml's formula,
# written with tapegrad ops in torch's order, so it is differentiable again.

class _Quiet(ArrayFunction):
    """A unary op whose NumPy ufunc (``_ufunc``) may meet a pole or leave its domain. A subclass
    that defines no forward gets one: the ufunc, saving the input (or, with saves_result, letting
    apply save the result)."""

    _ufunc = None

    def __init_subclass__(cls, **kwargs):
        if "forward" not in cls.__dict__ and cls.__dict__.get("_ufunc") is not None:
            saves_input = not kwargs.get("saves_result", cls._saves_result)

            def forward(ctx, x):
                if saves_input:
                    ctx.save_for_backward(x)
                return cls._eval(x)
            cls.forward = staticmethod(forward)
        super().__init_subclass__(**kwargs)     # (after: apply takes cls.forward)

    @classmethod
    def _eval(cls, x):
        x = to_float(x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return cls._ufunc(x, out=out_like(x)) if x.nbytes >= _BIG else cls._ufunc(x)


class Tan(_Quiet, name="TanBackward0", saves_result=True):
    """tan x. derivatives.yaml: grad * (1 + result.pow(2))."""

    _ufunc = np.tan

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (y ** 2 + 1)


class Asin(_Quiet, name="AsinBackward0"):
    """arcsin x (nan outside [-1, 1]). derivatives.yaml: grad * (-self * self + 1).rsqrt()."""

    _ufunc = np.arcsin

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * rsqrt(-x * x + 1)


class Acos(_Quiet, name="AcosBackward0"):
    """arccos x (nan outside [-1, 1]). derivatives.yaml: grad * -((-self * self + 1).rsqrt())."""

    _ufunc = np.arccos

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * -rsqrt(-x * x + 1)


class Atan(_Quiet, name="AtanBackward0"):
    """arctan x. derivatives.yaml: grad / (self * self + 1)."""

    _ufunc = np.arctan

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (x * x + 1)


class Sinh(_Quiet, name="SinhBackward0"):
    """sinh x. derivatives.yaml: grad * self.cosh()."""

    _ufunc = np.sinh

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * cosh(x)


class Cosh(_Quiet, name="CoshBackward0"):
    """cosh x. derivatives.yaml: grad * self.sinh()."""

    _ufunc = np.cosh

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * sinh(x)


class Asinh(_Quiet, name="AsinhBackward0"):
    """arcsinh x. derivatives.yaml: grad * (self.pow(2) + 1).rsqrt()."""

    _ufunc = np.arcsinh

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * rsqrt(x ** 2 + 1)


class Acosh(_Quiet, name="AcoshBackward0"):
    """arccosh x (nan below 1). derivatives.yaml: grad * (self.pow(2) - 1).rsqrt()."""

    _ufunc = np.arccosh

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * rsqrt(x ** 2 - 1)


class Atanh(_Quiet, name="AtanhBackward0"):
    """arctanh x (nan outside [-1, 1], inf at +-1). derivatives.yaml: grad * 1 / (1 -
    self.pow(2))."""

    _ufunc = np.arctanh

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (1 - x ** 2)


class Log10(_Quiet, name="Log10Backward0"):
    """log10 x. derivatives.yaml: grad / (self * 2.3025850929940456)."""

    _ufunc = np.log10

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (x * 2.3025850929940456)


class Log2(_Quiet, name="Log2Backward0"):
    """log2 x. derivatives.yaml: grad / (self * 0.6931471805599453)."""

    _ufunc = np.log2

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g / (x * 0.6931471805599453)


def _without_inplace_derivative(F, name):
    """``F`` as torch 2.13 records its in-place variant (asinh_, acosh_, atanh_): the same forward,
    saving nothing, on a node named <Op>Backward1 whose backward raises NotImplementedError."""
    def forward(ctx, x):
        return F._eval(x)

    def backward(ctx, g):
        raise NotImplementedError(
            f"the derivative for 'inplace version of {name}' is not implemented. ({name}_ was "
            f"applied in place to a tensor that requires grad, and torch 2.13 has no derivative "
            f"for that either: use the out-of-place y = x.{name}() where a gradient flows)")

    body = {"forward": staticmethod(forward), "backward": staticmethod(backward),
            "__doc__": f"{name}_ as torch 2.13 records it: a node whose backward raises."}
    return types.new_class(F.__name__ + "Inplace", (F,),
                           {"name": F._backward_cls.__name__[:-1] + "1"},
                           lambda ns: ns.update(body))


AsinhInplace = _without_inplace_derivative(Asinh, "asinh")
AcoshInplace = _without_inplace_derivative(Acosh, "acosh")
AtanhInplace = _without_inplace_derivative(Atanh, "atanh")


_DEG = 0.017453292519943295     # torch's M_PI_180 (pi / 180)


class Deg2rad(ArrayFunction, name="Deg2RadBackward0"):
    """x * pi / 180. derivatives.yaml deg2rad_backward: grad * (pi / 180)."""

    @staticmethod
    def forward(ctx, x):
        # (Mul's product by a number: the constant in x's dtype, float16 computed in float32)
        return Mul.forward(NULL_CTX, to_float(x), _DEG)

    @staticmethod
    def backward(ctx, g):
        return g * _DEG


class Rad2deg(ArrayFunction, name="Rad2DegBackward0"):
    """x * 180 / pi. derivatives.yaml rad2deg_backward: grad * (180 / pi)."""

    @staticmethod
    def forward(ctx, x):
        return Mul.forward(NULL_CTX, to_float(x), 1 / _DEG)

    @staticmethod
    def backward(ctx, g):
        return g * (1 / _DEG)


_FLOAT_RESULT = ("Result: input's shape; a float input keeps its dtype, an integer or bool input "
                 "gives the default float dtype (float32 unless set_default_dtype changed it), as "
                 "torch. TypeError when input is not a Tensor.")
tan = _unary("tan", Tan, "Tangent (radians). " + _FLOAT_RESULT + " Derivative "
             "(derivatives.yaml): grad * (1 + result ** 2).")
asin = _unary("asin", Asin, "Inverse sine, in [-pi/2, pi/2]; nan outside [-1, 1]. " + _FLOAT_RESULT
              + " Derivative (derivatives.yaml): grad * rsqrt(1 - input ** 2).",
              aliases=("arcsin",))
acos = _unary("acos", Acos, "Inverse cosine, in [0, pi]; nan outside [-1, 1]. " + _FLOAT_RESULT
              + " Derivative (derivatives.yaml): -grad * rsqrt(1 - input ** 2).",
              aliases=("arccos",))
atan = _unary("atan", Atan, "Inverse tangent, in (-pi/2, pi/2). " + _FLOAT_RESULT + " Derivative "
              "(derivatives.yaml): grad / (1 + input ** 2).", aliases=("arctan",))
sinh = _unary("sinh", Sinh, "Hyperbolic sine. " + _FLOAT_RESULT + " Derivative "
              "(derivatives.yaml): grad * cosh(input).")
cosh = _unary("cosh", Cosh, "Hyperbolic cosine. " + _FLOAT_RESULT + " Derivative "
              "(derivatives.yaml): grad * sinh(input).")
asinh = _unary("asinh", Asinh, "Inverse hyperbolic sine. " + _FLOAT_RESULT + " Derivative "
               "(derivatives.yaml): grad * rsqrt(input ** 2 + 1).", aliases=("arcsinh",))
acosh = _unary("acosh", Acosh, "Inverse hyperbolic cosine; nan below 1. " + _FLOAT_RESULT +
               " Derivative (derivatives.yaml): grad * rsqrt(input ** 2 - 1).",
               aliases=("arccosh",))
atanh = _unary("atanh", Atanh, "Inverse hyperbolic tangent; nan outside [-1, 1], +-inf at +-1. "
               + _FLOAT_RESULT + " Derivative (derivatives.yaml): grad / (1 - input ** 2).",
               aliases=("arctanh",))
log10 = _unary("log10", Log10, "Base-10 logarithm (nan for negatives, -inf at 0). " + _FLOAT_RESULT
               + " Derivative (derivatives.yaml): grad / (input * ln 10).")
log2 = _unary("log2", Log2, "Base-2 logarithm (nan for negatives, -inf at 0). " + _FLOAT_RESULT
              + " Derivative (derivatives.yaml): grad / (input * ln 2).")
deg2rad = _unary("deg2rad", Deg2rad, "Degrees to radians: input * pi / 180, the constant in "
                 "input's dtype. " + _FLOAT_RESULT + " Derivative (derivatives.yaml): grad * pi / "
                 "180.")
rad2deg = _unary("rad2deg", Rad2deg, "Radians to degrees: input * 180 / pi, the constant in "
                 "input's dtype. " + _FLOAT_RESULT + " Derivative (derivatives.yaml): grad * 180 / "
                 "pi.")


# ---- rounding (zero gradient) -------------------------------------------------------------------
class _Rounding(ArrayFunction):
    """Base of the rounding ops: derivatives.yaml gives zeros_like(grad) for each.
    NotImplementedError for a bool x, as torch (its kernel is ``_kernel``; NumPy would return
    bool, or float16 for rint)."""
    _np = None
    _kernel = None

    @classmethod
    def forward(cls, ctx, x):
        no_bool(x, cls._kernel, cls._kernel.split("_")[0])
        if x.dtype.kind in "iu":
            return x.copy()   # integers are already whole: a copy, as torch
        return cls._np(x)

    @staticmethod
    def backward(ctx, g):
        return _make(np.zeros_like(g._data))


class Floor(_Rounding, name="FloorBackward0"):
    """Largest whole number <= x. Gradient zero."""
    _kernel = "floor_vml_cpu"
    _np = staticmethod(np.floor)


class Ceil(_Rounding, name="CeilBackward0"):
    """Smallest whole number >= x. Gradient zero."""
    _kernel = "ceil_vml_cpu"
    _np = staticmethod(np.ceil)


class Trunc(_Rounding, name="TruncBackward0"):
    """x rounded towards zero. Gradient zero."""
    _kernel = "trunc_vml_cpu"
    _np = staticmethod(np.trunc)


class Round(_Rounding, name="RoundBackward0"):
    """x rounded to the nearest whole number, halves to even (as torch's nearbyint). Gradient
    zero."""
    _kernel = "round_vml_cpu"
    _np = staticmethod(np.rint)


class RoundDecimals(ArrayFunction, name="RoundBackward1"):
    """x rounded to ``decimals`` places: nearbyint(x * 10**d) / 10**d (x / 10**-d for d < 0),
    as torch computes it. Gradient zero."""

    @staticmethod
    def forward(ctx, x, decimals):
        if x.dtype.kind != "f":
            raise NotImplementedError(f"\"round_cpu\" not implemented for "
                                      f"'{_dtype.scalar_name(x.dtype)}'")
        # (not abs(): this module's abs is the tensor op)
        ten = x.dtype.type(10.0 ** (-decimals if decimals < 0 else decimals))
        if decimals < 0:
            return np.rint(x / ten) * ten
        return np.rint(x * ten) / ten

    @staticmethod
    def backward(ctx, g):
        return _make(np.zeros_like(g._data)), None


floor = _unary("floor", Floor, "Elementwise floor; zero gradient (FloorBackward0). "
               "NotImplementedError for a bool input, as torch.")
ceil = _unary("ceil", Ceil, "Elementwise ceiling; zero gradient (CeilBackward0). "
              "NotImplementedError for a bool input, as torch.")
trunc = _unary("trunc", Trunc, "Round towards zero; zero gradient (TruncBackward0). "
               "NotImplementedError for a bool input, as torch.")
op("fix")(trunc)


@op("round")
def round(input, *, decimals=0):  # noqa: A001 - torch's name
    """Round to the nearest whole number (halves to even, torch's nearbyint), or with an int
    ``decimals`` to that many decimal places (negative: to tens, hundreds, ...), computed as
    torch does: nearbyint(input * 10**d) / 10**d.

    Result: input's shape and dtype. An integer input with ``decimals=0`` comes back unchanged
    as a new tensor (a copy, not a view, as torch). Gradient zero (derivatives.yaml round and
    round.decimals: zeros_like(grad); RoundBackward0 / RoundBackward1).

    Raises NotImplementedError when ``decimals != 0`` and input is not floating (integer or
    bool: '"round_cpu" not implemented for 'Long'', as torch), and for a bool input with
    ``decimals=0`` ('"round_vml_cpu" not implemented for 'Bool''). Divergence from torch: a float
    ``decimals`` is truncated by int() (torch: TypeError)."""
    if decimals:
        return RoundDecimals.apply(input, int(decimals))
    return Round.apply(input)


# ---- floor division, remainder, fmod -------------------------------------------------------------
def _check_int_zero(a, b):
    """Integer division by zero raises in torch (RuntimeError 'ZeroDivisionError')."""
    arr = b if type(b) is _nd else None
    if np.result_type(a, b).kind in "iub":
        if (arr is not None and (arr == 0).any()) or (arr is None and b == 0):
            raise RuntimeError("ZeroDivisionError")


def _not_implemented(name):
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return staticmethod(backward)


class FloorDivide(ArrayFunction, name="NotImplemented"):
    """floor(a / b) (torch.floor_divide, ``//``). torch has no derivative for it: the result is
    recorded on a ``NotImplemented`` node whose backward raises, as in torch."""

    @staticmethod
    def forward(ctx, a, b):
        a, b = promote(a, b)
        _check_int_zero(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.floor_divide(a, b)
        return np.asarray(q).astype(np.result_type(a, b), copy=False)

    backward = _not_implemented("floor_divide")


def _mod(a, b, ufunc):
    a, b = promote(a, b)
    _check_int_zero(a, b)
    return np.asarray(ufunc(a, b))


def _mod_tensor_backward(ctx, g, rounding):
    """self: grad; other: -grad * self.div(other, rounding_mode) (derivatives.yaml)."""
    gb = None
    if ctx.needs(1):
        a, b = ctx.saved_tensors
        gb = -g * DivMode.apply(a, b, rounding)
    return (g if ctx.needs(0) else None), gb


class Remainder(ArrayFunction, name="RemainderBackward0"):
    """a - b * floor(a / b) for a number b (Python's ``%``: the sign follows b).
    derivatives.yaml remainder.Scalar: self: grad."""

    @staticmethod
    def forward(ctx, a, b):
        return _mod(a, b, np.remainder)

    @staticmethod
    def backward(ctx, g):
        return g, None


class RemainderTensor(ArrayFunction, name="RemainderBackward1"):
    """remainder for two tensors. derivatives.yaml remainder.Tensor: self: grad;
    other: -grad * self.div(other, rounding_mode='floor')."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs(1) else None, b if ctx.needs(1) else None)
        return _mod(a, b, np.remainder)

    @staticmethod
    def backward(ctx, g):
        return _mod_tensor_backward(ctx, g, "floor")


class RemainderScalarTensor(ArrayFunction, name="NotImplemented"):
    """number % tensor. torch has no derivative for this overload (a NotImplemented node)."""

    @staticmethod
    def forward(ctx, b, a):
        return _mod(a, b, np.remainder)

    backward = _not_implemented("remainder")


class Fmod(ArrayFunction, name="FmodBackward0"):
    """C's fmod: a - b * trunc(a / b) (the sign follows a), for a number b.
    derivatives.yaml fmod.Scalar: self: grad."""

    @staticmethod
    def forward(ctx, a, b):
        return _mod(a, b, np.fmod)

    @staticmethod
    def backward(ctx, g):
        return g, None


class FmodTensor(ArrayFunction, name="FmodBackward1"):
    """fmod for two tensors. derivatives.yaml fmod.Tensor: self: grad;
    other: -grad * self.div(other, rounding_mode='trunc')."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs(1) else None, b if ctx.needs(1) else None)
        return _mod(a, b, np.fmod)

    @staticmethod
    def backward(ctx, g):
        return _mod_tensor_backward(ctx, g, "trunc")


@op("floor_divide")
def floor_divide(input, other):
    """floor(input / other), elementwise with broadcasting (``//``); the dtype follows torch's
    promotion (ints stay ints). Not differentiable (NotImplemented node, as torch). RuntimeError
    for an integer division by zero."""
    other = check_operand(other, "floor_divide")
    return FloorDivide.apply(input, other)


@op("remainder")
def remainder(input, other):
    """Python's modulus (``%``), elementwise: input - other * floor(input / other), so the result
    has the sign of ``other``. ``input`` and ``other`` are Tensors or Python numbers (a number
    ``input`` is torch's remainder.Scalar_Tensor, also ``number % tensor``).

    Result: the broadcast shape of the operands; dtype by torch's promotion (an int tensor with
    an int stays int, with a float gives the default float dtype; a number does not widen a
    tensor of its own category: int32 % 3 stays int32). A float division by zero gives nan (NumPy
    may emit a RuntimeWarning; torch is silent).

    Derivatives (derivatives.yaml): remainder.Scalar: self: grad (RemainderBackward0);
    remainder.Tensor: self: grad, other: -grad * self.div(other, rounding_mode='floor')
    (RemainderBackward1). ``number % tensor`` has no derivative in torch: the result is recorded
    on a ``NotImplemented`` node whose backward raises RuntimeError ("derivative for
    aten::remainder is not implemented"), as torch.

    Raises:
        TypeError: ``other`` is neither a Tensor nor a number; a non-number, non-Tensor
            ``input`` fails with NumPy's TypeError.
        RuntimeError: integer (or bool) division by zero ("ZeroDivisionError", as torch); shapes
            that do not broadcast.
    Divergences from torch: ``remainder(5, 3)`` (no Tensor) returns a 0-d int64 tensor (torch:
    TypeError); two bool tensors give int8 (torch: NotImplementedError)."""
    other = check_operand(other, "remainder")
    if not isinstance(input, Tensor):
        return RemainderScalarTensor.apply(other, input)
    if isinstance(other, Tensor):
        return RemainderTensor.apply(input, other)
    return Remainder.apply(input, other)


@op("fmod")
def fmod(input, other):
    """C's fmod, elementwise: input - other * trunc(input / other), so the result has the sign of
    ``input``. ``input`` is a Tensor, ``other`` a Tensor or a Python number.

    Result: the broadcast shape of the operands; dtype by torch's promotion (an int tensor with
    an int stays int, with a float gives the default float dtype; a number does not widen a
    tensor of its own category). A float division by zero gives nan (NumPy may emit a
    RuntimeWarning; torch is silent).

    Derivatives (derivatives.yaml): fmod.Scalar: self: grad (FmodBackward0); fmod.Tensor:
    self: grad, other: -grad * self.div(other, rounding_mode='trunc') (FmodBackward1).

    Raises:
        TypeError: ``input`` is not a Tensor (torch has no fmod(number, tensor) either), or
            ``other`` is neither a Tensor nor a number.
        RuntimeError: integer (or bool) division by zero ("ZeroDivisionError", as torch); shapes
            that do not broadcast.
    Divergence from torch: two bool tensors give int8 (torch: NotImplementedError)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fmod(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    other = check_operand(other, "fmod")
    if isinstance(other, Tensor):
        return FmodTensor.apply(input, other)
    return Fmod.apply(input, other)


Tensor.__floordiv__ = _dunder(floor_divide)
Tensor.__rfloordiv__ = _dunder(floor_divide, reflected=True)
Tensor.__mod__ = _dunder(remainder)
Tensor.__rmod__ = _dunder(remainder, reflected=True)


@op("isclose")
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other| elementwise (a bool tensor, no gradient).
    TypeError unless both are tensors; RuntimeError when their dtypes differ (as torch)."""
    for name, t in (("input", input), ("other", other)):
        if not isinstance(t, Tensor):
            raise TypeError(f"isclose(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    a, b = input._data, other._data
    if a.dtype != b.dtype:
        raise RuntimeError(f"{_dtype.from_numpy_dtype(a.dtype)} did not match "
                           f"{_dtype.from_numpy_dtype(b.dtype)}: isclose needs tensors of one "
                           f"dtype")
    if a.dtype == np.bool_:
        return _make(np.asarray(np.equal(a, b)))
    return _make(np.asarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


@op("is_floating_point", method=False)
def is_floating_point(input):
    """True if ``input`` has a floating dtype (a Python bool)."""
    return input._data.dtype.kind == "f"


def _where_method(self, condition, other):
    """``x.where(cond, y)`` is ``where(cond, x, y)`` (torch's method form)."""
    return where(condition, self, other)


Tensor.where = _where_method
