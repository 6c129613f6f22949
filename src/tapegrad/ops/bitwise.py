"""Bitwise ops on bool and integer tensors: bitwise_and / or / xor / not and the shifts, as
functions, Tensor methods, in-place ``_`` methods and the operators ``& | ^ ~ << >>`` (with their
reflected and augmented forms).

None has a derivative: torch defines them for bool and integer dtypes only, which cannot require
grad, so no node is ever recorded. The checks run in torch's TensorIterator order: shapes
broadcast, then (in place) the result fits self's shape and dtype, then the kernel takes the
dtype (NotImplementedError for floating operands, and for bool operands of a shift, as torch's
"bitwise_and_cpu" not implemented for 'Float').
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._factories import _write_out
from ..autograd.grad_mode import state as _grad_state
from ._registry import op
from ._util import Tensor, _make, broadcast_error, coerce_operand
from .inplace import _check_result, _untracked_inplace, check_writable

# torch's kernel names, which its NotImplementedError messages give
_KERNELS = {"bitwise_and": "bitwise_and_cpu", "bitwise_or": "bitwise_or_cpu",
            "bitwise_xor": "bitwise_xor_cpu", "bitwise_left_shift": "lshift_cpu",
            "bitwise_right_shift": "rshift_cpu", "bitwise_not": "bitwise_not_cpu"}
_SHIFTS = ("bitwise_left_shift", "bitwise_right_shift")


def _number(v):
    return isinstance(v, (bool, int, float)) and not isinstance(v, Tensor)


def _kernel_error(fn, dt, operands):
    got = " and ".join(f"tapegrad.{_dtype.from_numpy_dtype(o._data.dtype).name}"
                       if isinstance(o, Tensor) else type(o).__name__ for o in operands)
    kinds = "integer tensors" if fn in _SHIFTS else "bool and integer tensors"
    return NotImplementedError(
        f"\"{_KERNELS[fn]}\" not implemented for '{_dtype.scalar_name(dt)}' ({fn}: operands "
        f"{got} compute in tapegrad.{_dtype.from_numpy_dtype(dt).name}; it takes {kinds} "
        f"only: convert first, e.g. x.long(){'' if fn in _SHIFTS else ' or x.bool()'})")


def _lshift(a, b):
    # torch shifts as the unsigned type and gives 0 for a count outside [0, bits)
    bits = a.dtype.itemsize * 8
    ok = (b >= 0) & (b < bits)
    shifted = np.left_shift(a, np.where(ok, b, 0).astype(a.dtype, copy=False))
    return np.where(ok, shifted, np.zeros((), a.dtype)).astype(a.dtype, copy=False)


def _rshift(a, b):
    # torch: a count outside [0, bits) shifts by bits - 1 (the sign for a signed type, 0 else)
    bits = a.dtype.itemsize * 8
    ok = (b >= 0) & (b < bits)
    shifted = np.right_shift(a, np.where(ok, b, bits - 1).astype(a.dtype, copy=False))
    if a.dtype.kind == "u":
        shifted = np.where(ok, shifted, np.zeros((), a.dtype))
    return shifted.astype(a.dtype, copy=False)


_UFUNCS = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
           "bitwise_xor": np.bitwise_xor, "bitwise_left_shift": _lshift,
           "bitwise_right_shift": _rshift}


def _big_uint(v):
    # torch's parser refuses a NumPy unsigned scalar above int64's range (numpy then raises)
    return isinstance(v, np.unsignedinteger) and int(v) > np.iinfo(np.int64).max


def _operands(fn, input, other):
    """``input`` and ``other`` as given, after torch's argument checks (a Tensor and a Tensor or
    number, in either order; a NumPy scalar read as its Python number; a Python int within
    [-2**63, 2**64), the range torch's parser reads)."""
    if _big_uint(input) or _big_uint(other):
        raise TypeError(f"{fn}() received an invalid combination of arguments - got a NumPy "
                        f"unsigned scalar above int64's range, which torch does not read as a "
                        f"number (pass a tensor of dtype tapegrad.uint64, or a Python int)")
    input, other = (coerce_operand(v) if isinstance(v, (np.generic, np.ndarray)) else v
                    for v in (input, other))
    ok = (isinstance(input, Tensor) and (isinstance(other, Tensor) or _number(other))) or \
         (_number(input) and isinstance(other, Tensor))
    if not ok and any(isinstance(a, Tensor) and isinstance(b, complex)
                      for a, b in ((input, other), (other, input))):
        # (tapegrad has no complex dtype; torch computes in ComplexFloat and its kernel refuses)
        raise NotImplementedError(f"\"{_KERNELS[fn]}\" not implemented for 'ComplexFloat' "
                                  f"({fn}: a complex number makes the operands complex; it takes "
                                  f"bool and integer operands only)")
    if not ok:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}), but expected a "
                        f"Tensor and a Tensor or a number")
    for v in (input, other):
        if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**64:
            what = "int too big to convert" if v > 0 else "can't convert negative int to unsigned"
            raise OverflowError(f"{what} ({fn}: a Python int operand must lie in [-2**63, "
                                f"2**64), got {v})")
    return input, other


def _checked_dtype(fn, input, other, inplace_self=None):
    """The result's NumPy dtype, after torch's checks (see the module docstring)."""
    shapes = [t._data.shape for t in (input, other) if isinstance(t, Tensor)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise broadcast_error(fn, input, other) from None
    dt = _dtype.result_type(input, other).np
    if inplace_self is not None:
        _check_result(np.broadcast_to(np.empty((), dt), shape), inplace_self, fn + "_")
    if dt.kind == "f" or (dt.kind == "b" and fn in _SHIFTS):
        raise _kernel_error(fn, dt, (input, other))
    return dt


def _array(v, dt):
    if isinstance(v, Tensor):
        return v._data.astype(dt, copy=False)
    # a number wraps into the result dtype, as torch's (int8_tensor & 300 is int8_tensor & 44)
    return np.asarray(int(v) % (1 << 64), np.uint64).astype(dt)


def _binary(fn, input, other):
    input, other = _operands(fn, input, other)
    dt = _checked_dtype(fn, input, other)
    return _make(np.asarray(_UFUNCS[fn](_array(input, dt), _array(other, dt))))


def _binary_inplace(fn, self, other):
    if not isinstance(self, Tensor):
        raise TypeError(f"{fn}_(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(self).__name__}")
    if isinstance(other, complex):
        raise RuntimeError(f"result type ComplexFloat can't be cast to the desired output type "
                           f"{_dtype.scalar_name(self._data.dtype)} ({fn}_: a complex number "
                           f"cannot be written into self)")
    self, other = _operands(fn, self, other)
    # (autograd's leaf and view rules come first in torch, so a float leaf that requires grad
    # hears about those, not about its dtype)
    check_writable(self, fn + "_", (other,))
    dt = _checked_dtype(fn, self, other, inplace_self=self)
    ufunc = _UFUNCS[fn]
    if isinstance(other, Tensor):
        return _untracked_inplace(self, lambda a, b: ufunc(a.astype(dt, copy=False),
                                                           b.astype(dt, copy=False)),
                                  (other,), fn + "_")
    b = _array(other, dt)
    return _untracked_inplace(self, lambda a: ufunc(a.astype(dt, copy=False), b), (), fn + "_")


def _out_checks(fn, operands, out):
    """torch's checks of an ``out=`` call that come before the kernel's: ``out`` a Tensor, and no
    argument requiring grad while grad mode is on (nothing is recorded for an out= call)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _grad_state.grad_enabled and any(isinstance(t, Tensor) and t._requires_grad
                                        for t in (*operands, out)):
        raise RuntimeError(f"{fn}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad (write it "
                           f"under tapegrad.no_grad(), or into a tensor that does not require "
                           f"grad)")


def _binary_out(fn, input, other, out):
    """``fn(input, other, out=out)`` as torch: the result written into ``out`` (cast to its dtype
    when that is of the same or a higher category; resized, with torch's warning, when its shape
    differs and it has elements) and ``out`` returned."""
    if not isinstance(input, Tensor):
        # (torch's number-first overload has no out=)
        raise TypeError(f"{fn}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__}, out=...): with out=, "
                        f"input must be a Tensor")
    _out_checks(fn, (input, other), out)
    r = _binary(fn, input, other)._data
    rd, od = (_dtype.from_numpy_dtype(a.dtype) for a in (r, out._data))
    if rd._cat > od._cat:
        raise RuntimeError(f"result type {_dtype.scalar_name(r.dtype)} can't be cast to the "
                           f"desired output type {_dtype.scalar_name(out._data.dtype)} ({fn}: "
                           f"give an out of dtype tapegrad.{rd.name} or wider)")
    return _write_out(out, r, fn, warn_resize=True)


_RAISES = """

    Raises:
        TypeError: an operand that is neither a Tensor nor a number, or two numbers; a NumPy
            unsigned scalar above int64's range.
        OverflowError: a Python int outside [-2**63, 2**64), as torch.
        RuntimeError: shapes that do not broadcast.
        NotImplementedError: a complex number (torch's 'ComplexFloat'); operands that promote
            to a floating dtype{bool} (torch's
            "{kernel}" not implemented for 'Float'); the message names both dtypes.

    ``out``: the result is written into that tensor (cast to its dtype; RuntimeError for one of a
    lower category, "result type Long can't be cast to the desired output type Bool") and it is
    returned; ``input`` must then be a Tensor (TypeError), as torch."""

_INPLACE_DOC = """In-place :func:`{fn}`: the result is written into self and self is returned.
    Not recorded (self is bool or integer, so never requires grad).

    Raises:
        RuntimeError: a floating leaf self that requires grad (autograd's in-place rule, checked
            first as torch does); shapes that do not broadcast; a result of another shape than self's
            (self cannot be broadcast); a result dtype of a higher category than self's
            (``bool_tensor.{fn}_(int_tensor)``: "result type Long can't be cast to the desired
            output type Bool"), as torch.
        NotImplementedError: operands that promote to a floating dtype{bool}.
        TypeError: ``other`` neither a Tensor nor a number.
        OverflowError: a Python int outside [-2**63, 2**64), as torch."""


def _define(fn, doc):
    kernel = _KERNELS[fn]
    bool_note = " (or bool, for a shift)" if fn in _SHIFTS else ""

    def f(input, other, *, out=None):
        if out is None:
            return _binary(fn, input, other)
        return _binary_out(fn, input, other, out)

    def f_(self, other):
        return _binary_inplace(fn, self, other)

    # (__qualname__ too: Python's TypeError for a bad call names the function by it)
    f.__name__, f_.__name__ = f.__qualname__, f_.__qualname__ = fn, fn + "_"
    f.__doc__ = doc + _RAISES.format(bool=bool_note, kernel=kernel)
    f_.__doc__ = _INPLACE_DOC.format(fn=fn, bool=bool_note)
    return op(fn)(f), op(fn + "_", namespace=False)(f_)


_LOGIC = """Elementwise {what} of two bool or integer operands (either may be a Python number), with
    broadcasting. Result: torch's promoted dtype (bool for two bools; ``bool_tensor {sym} 1`` is
    int64; a number never widens a tensor's integer dtype and wraps into it). Not
    differentiable (bool and integer tensors cannot require grad)."""

_SHIFT = """Elementwise {what} of an integer ``input`` by ``other`` bits (either may be a Python
    number), with broadcasting, in torch's promoted integer dtype. As torch: the shift is done
    on the unsigned type (``int8 1 << 7`` is -128); a count outside [0, bits) gives {out}.
    Not differentiable (integer tensors cannot require grad)."""

bitwise_and, bitwise_and_ = _define("bitwise_and", _LOGIC.format(what="AND", sym="&"))
bitwise_or, bitwise_or_ = _define("bitwise_or", _LOGIC.format(what="OR", sym="|"))
bitwise_xor, bitwise_xor_ = _define("bitwise_xor", _LOGIC.format(what="XOR", sym="^"))
bitwise_left_shift, bitwise_left_shift_ = _define(
    "bitwise_left_shift", _SHIFT.format(what="left shift", out="0"))
bitwise_right_shift, bitwise_right_shift_ = _define(
    "bitwise_right_shift", _SHIFT.format(
        what="right shift (arithmetic for signed types)",
        out="the shift by bits - 1 (-1 or 0 for a signed type, by sign; 0 for uint8)"))


def _not_array(fn, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dt = input._data.dtype
    if dt.kind == "f":
        raise _kernel_error("bitwise_not", dt, (input,))
    return np.invert(input._data)


@op("bitwise_not")
def bitwise_not(input, *, out=None):
    """Elementwise NOT of a bool or integer tensor (logical not for bool, ``-x - 1`` for signed
    integers, ``255 - x`` for uint8), same dtype and shape. Not differentiable. ``out``: the
    result is written into that tensor, which must have input's dtype (torch does not cast
    here), and it is returned.

    Raises:
        TypeError: ``input`` or ``out`` not a Tensor.
        NotImplementedError: a floating input (torch's "bitwise_not_cpu" not implemented for
            'Float'); the message names the dtype.
        RuntimeError: an ``out`` of another dtype than input's, as torch."""
    r = _not_array("bitwise_not", input)
    if out is None:
        return _make(np.asarray(r))
    _out_checks("bitwise_not", (input,), out)
    if out._data.dtype != r.dtype:
        raise RuntimeError(f"Found dtype {_dtype.scalar_name(out._data.dtype)} but expected "
                           f"{_dtype.scalar_name(r.dtype)} (bitwise_not(out=...) needs an out of "
                           f"input's dtype, tapegrad.{_dtype.from_numpy_dtype(r.dtype).name})")
    return _write_out(out, np.asarray(r), "bitwise_not", warn_resize=True)


@op("bitwise_not_", namespace=False)
def bitwise_not_(self):
    """In-place :func:`bitwise_not`; returns self. Not recorded.

    Raises:
        NotImplementedError: a floating self.
        RuntimeError: a floating leaf that requires grad (autograd's in-place rule, checked
            first as torch does); an expanded (read-only) self, or an inference tensor outside
            inference_mode(), as every in-place op."""
    if isinstance(self, Tensor):
        check_writable(self, "bitwise_not_")
    _not_array("bitwise_not_", self)
    return _untracked_inplace(self, np.invert, (), "bitwise_not_")


# ---- operators: NotImplemented for an operand type they do not take (Python then raises
# TypeError), so that other types' reflected operators get their turn
def _dunder_operand(other):
    """``other`` as the operators take it (a NumPy scalar or array as a Tensor operand), or
    NotImplemented for a type they do not take."""
    if _big_uint(other):
        return NotImplemented
    if isinstance(other, (np.generic, np.ndarray)):
        return coerce_operand(other)
    if not isinstance(other, (Tensor, bool, int, float, complex)):
        return NotImplemented
    return other


def _dunder(fn, reflected=False):
    def f(self, other):
        other = _dunder_operand(other)
        if other is NotImplemented:
            return other
        return _binary(fn, other, self) if reflected else _binary(fn, self, other)
    return f


def _idunder(fn):
    def f(self, other):
        other = _dunder_operand(other)
        if other is NotImplemented:
            return other
        return _binary_inplace(fn, self, other)
    return f


for _sym, _fn in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                  ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift")):
    setattr(Tensor, f"__{_sym}__", _dunder(_fn))
    setattr(Tensor, f"__r{_sym}__", _dunder(_fn, reflected=True))
    setattr(Tensor, f"__i{_sym}__", _idunder(_fn))


def _invert(self):
    if self._data.dtype.kind == "f":
        raise TypeError(f"~ (operator.invert) is only implemented on integer and Boolean-type "
                        f"tensors (got tapegrad.{_dtype.from_numpy_dtype(self._data.dtype).name}; "
                        f"for a mask use logical_not(), or convert with .bool() first)")
    return _make(np.asarray(np.invert(self._data)))


Tensor.__invert__ = _invert
