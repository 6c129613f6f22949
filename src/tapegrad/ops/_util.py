"""Small helpers shared by the op modules: operand promotion and dim handling."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _make, _wrap_dim, _zeros_of  # noqa: F401

_nd = np.ndarray
_HALF, _F32 = np.dtype(np.float16), np.dtype(np.float32)


def _half_in_f32(fn, *arrays):
    """``fn(*arrays)`` computed in float32 and rounded once to float16 when any array is float16
    (torch's CPU kernels compute half in float); otherwise as is. Always an ndarray."""
    if any(a.dtype == _HALF for a in arrays):
        return np.asarray(fn(*(a.astype(_F32) for a in arrays))).astype(_HALF)
    return np.asarray(fn(*arrays))


def need_float(dtype, kernel):
    """torch's NotImplementedError for a kernel (named as torch names it, e.g. "elu_cpu") that has
    no integer or bool version, for an input of NumPy ``dtype``."""
    if dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtype.scalar_name(dtype)}'")


def sum_array(x, axis=None, keepdims=False, dtype=None):
    """``x.sum(axis, keepdims, dtype)`` as an array, a float16 ``x`` summed in float32 and rounded
    once, as torch accumulates half (NumPy adds float16 along a non-contiguous axis in float16,
    rounding at every step)."""
    if dtype is None and x.dtype is _HALF:
        return np.asarray(_add_reduce(x, axis, np.float32, keepdims=keepdims)).astype(_HALF)
    # (ndarray.sum is this same reduce behind a Python-level wrapper)
    out = _add_reduce(x, axis, dtype, keepdims=keepdims)
    return out if type(out) is _nd else np.asarray(out)


_add_reduce = np.add.reduce
_OPERAND_TYPES = (Tensor, int, float, bool)


def coerce_operand(x):
    """The operand an op takes from ``x``: a Tensor or a Python number as is, a NumPy scalar as the
    Python number torch reads from it (like a Python number it never promotes a tensor's dtype:
    ``x / np.sqrt(d)`` stays float32, as in torch), a NumPy array as a tensor; None for any other
    type (a dunder then returns NotImplemented). A NumPy bool is read as a float, as torch's
    argument parser does: ``int_tensor + np.bool_(True)`` is float32, and ``bool_tensor -
    np.bool_(True)`` is a float subtraction (refused for the bool tensor alone)."""
    if isinstance(x, np.generic):
        return float(x) if isinstance(x, np.bool_) else x.item()
    if isinstance(x, np.ndarray):
        return _make(x)
    return x if isinstance(x, _OPERAND_TYPES) else None


def check_operand(x, op: str):
    """:func:`coerce_operand`, with a TypeError naming the op for a type it does not take."""
    t = type(x)
    if t is Tensor or t is float or t is int:   # (the usual operands, without a call)
        return x
    y = coerce_operand(x)
    if y is None:
        raise TypeError(f"{op}(): expected a Tensor or a number as operand, got {type(x).__name__}")
    return y


def promote(a, b):
    """Cast array operands to torch's result dtype so NumPy computes in it.

    Python numbers stay Python numbers (NumPy treats them as weak, like torch's wrapped scalars),
    except where the number is of a higher category than the array (int tensor * 2.5).
    """
    if type(a) is _nd:
        if type(b) is _nd:
            if a.dtype is b.dtype:
                return a, b
        elif type(b) is float:
            # weak_scalar's cache, inlined: the hottest case (one table per float dtype but
            # float16, as hashing a (number, dtype) key costs more than the ufunc it saves on)
            cache = _weak.get(a.dtype)
            if cache is not None:
                w = cache.get(b)
                return a, (w if w is not None else weak_scalar(b, a.dtype))
        elif type(b) is int and a.dtype.kind in "fiu":
            return a, (weak_scalar(b, a.dtype) if a.dtype.kind == "f" else _int_in(b, a.dtype))
    elif type(b) is _nd and type(a) is float and b.dtype.kind == "f":
        return weak_scalar(a, b.dtype), b
    target = _dtype.result_type(a, b).np
    if type(a) is _nd and a.dtype != target:
        a = a.astype(target)
    elif type(a) is not _nd:
        a = _scalar(a, target)
    if type(b) is _nd and b.dtype != target:
        b = b.astype(target)
    elif type(b) is not _nd:
        b = _scalar(b, target)
    return a, b


# float16 has no table: torch's mul and div read the number in float32, not rounded to float16
# (half_scalar), so a float16 array falls through the inlined lookups to the ops' float16 paths
_weak = {np.dtype(t): {} for t in (np.float32, np.float64)}


# torch takes a Python int operand as a C integer: int64, or uint64 for a large positive one
_INT_MIN, _UINT_MAX = -2 ** 63, 2 ** 64 - 1


def weak_scalar(v, dtype):
    """A Python number as a cached read-only 0-d array of the float array's dtype it meets: the
    value NumPy would compute with (it casts a weak Python scalar to the array's dtype), at about a
    third of the cost per ufunc call (converting a Python float is most of a small op's time).
    Zero is left alone (-0.0 == 0.0 as a dict key), and so is a number a float cannot hold, and any
    number meeting a float16 array (NumPy's own cast to float16 is what + and - want; mul and div
    use :func:`half_scalar`)."""
    if not v or not -1e300 < v < 1e300:
        return v
    if type(v) is int and not _INT_MIN <= v <= _UINT_MAX:
        raise OverflowError(f"int too big to convert: {v} is outside the 64-bit integers "
                            f"torch takes as an operand ([-2**63, 2**64 - 1]); pass it as a "
                            f"float ({float(v):g}) if that is what is meant")
    cache = _weak.get(dtype)
    if cache is None:
        # (float16, uncached: NumPy 2's own cast, made explicit, as NumPy 1's value-based
        # casting would compute float16 + 3001 in float32)
        return np.array(v, dtype) if dtype is _HALF else v
    arr = cache.get(v)
    if arr is None:
        if len(cache) > 512:    # varying numbers (a decaying learning rate): stay bounded
            cache.clear()
        arr = np.array(v, dtype)
        arr.flags.writeable = False
        cache[v] = arr
    return arr


def half_scalar(ufunc, a, b):
    """``ufunc(a, b)`` (multiply or divide) of a float16 array and a Python number as torch's CPU
    kernels compute it: in float32 ("opmath"), the number converted to float32 rather than first
    rounded to float16, the result rounded to float16 once. (torch's add and sub do round the
    number to float16 first, as NumPy does.)"""
    return ufunc(a.astype(_F32), np.float32(b)).astype(_HALF)


def _scalar(v, target):
    # a Python number of a lower category than the tensor (2 with a float tensor) stays weak
    if isinstance(v, (bool, np.bool_)) and target.kind != "b":
        v = int(v) if target.kind in "iu" else float(v)
    elif isinstance(v, (int, np.integer)) and target.kind == "f":
        v = float(v)
    if type(v) is int and target.kind in "iu":
        return _int_in(v, target)
    if _VALUE_BASED and type(v) is float and target.kind == "f":
        # NumPy 1.x reads a Python number by its value, and a 0-d array as a number too
        # (float16 0-d + 0.5 gave float64): a scalar of the dtype keeps torch's result dtype
        return target.type(v)
    return v


# NumPy before 2.0 (NEP 50) promotes by value, not by dtype, where Python numbers are involved
_VALUE_BASED = np.lib.NumpyVersion(np.__version__) < "2.0.0"


def _int_in(v, dt):
    """Python int ``v`` as it meets an array of integer dtype ``dt`` in torch's arithmetic and
    comparisons: a value the dtype cannot hold wraps around (int8 + 300 adds 44), where NumPy
    raises; beyond 64 bits it is left for NumPy's OverflowError (torch raises one too)."""
    if not (-128 <= v <= 127 and (v >= 0 or dt.kind == "i")):    # (every int dtype holds these)
        info = np.iinfo(dt)
        if not info.min <= v <= info.max and -2 ** 63 <= v < 2 ** 64:
            bits = 8 * dt.itemsize
            v &= (1 << bits) - 1
            if dt.kind == "i" and v >= 1 << (bits - 1):
                v -= 1 << bits
    return dt.type(v) if _VALUE_BASED else v


def to_float(a):
    """Integer/bool arrays become the default float dtype (torch's unary float ops do this)."""
    if a.dtype.kind == "f":
        return a
    return a.astype(_dtype.get_default_dtype().np)


def float_result(a, b):
    """Promote for an op whose result is always floating (true division)."""
    pa, pb = promote(a, b)
    arr = pa if type(pa) is _nd else pb
    if arr.dtype.kind != "f":
        # each operand goes to the float dtype as given: through their integer common dtype a
        # value it cannot hold would wrap around first (int8 / 300 is 1/60, not 1/44)
        f = _dtype.get_default_dtype().np
        return (a.astype(f) if type(a) is _nd else float(a),
                b.astype(f) if type(b) is _nd else float(b))
    return pa, pb


def dims(dim, ndim, op):
    """Normalise ``dim`` (int, tuple, list or None) to a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        out = (_wrap_dim(int(dim), ndim, op),)
    else:
        out = tuple(sorted(_wrap_dim(int(d), ndim, op) for d in dim))
        if len(set(out)) != len(out):
            raise RuntimeError(f"{op}: dim {list(dim)} appears multiple times in the list of dims")
    # a 0-d tensor accepts dim 0 / -1 (checked above) but has no NumPy axis to reduce over
    return out if ndim else ()


def broadcast_error(op, *operands, reason=None):
    """torch's RuntimeError for operands whose shapes do not broadcast, naming the op. Without a
    dimension that mismatches, the message gives ``reason`` (NumPy's own error, say) if set."""
    shapes = [tuple(o._data.shape) for o in operands if isinstance(o, Tensor)]
    desc = ", ".join(str(list(sh)) for sh in shapes)
    if len(shapes) >= 2:
        a, b = shapes[0], shapes[1]
        for k in range(1, min(len(a), len(b)) + 1):
            if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
                return RuntimeError(
                    f"The size of tensor a ({a[-k]}) must match the size of tensor b ({b[-k]}) at "
                    f"non-singleton dimension {max(len(a), len(b)) - k} ({op}: input shapes {desc} "
                    f"cannot be broadcast together)")
    if reason is not None:
        return RuntimeError(f"{op}: {reason} (input shapes {desc})")
    return RuntimeError(f"{op}: input shapes {desc} cannot be broadcast together")
