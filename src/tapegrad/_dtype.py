"""dtypes and torch's type promotion.

A :class:`dtype` wraps a NumPy dtype. Promotion follows torch's ``result_type``: operands fall in
three priority groups (tensors with dimensions, 0-d tensors, Python numbers) and a lower group only
changes the result when it is of a higher *category* (bool < integer < floating). A Python float
meeting an integer tensor gives the default dtype (float32), never float64.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "dtype", "float16", "float32", "float64", "uint8", "int8", "int16", "int32",
    "int64", "bool", "half", "float", "double", "short", "int", "long",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
]

_BOOL, _INT, _FLOAT = 0, 1, 2

# torch's ScalarType names, which its messages use ("expected scalar type Float") and its legacy
# tensor types are built from ("torch.FloatTensor"); keyed by NumPy dtype name
SCALAR_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte",
                "bool": "Bool"}


# the C++ type names of the dtypes, as torch's kernels print them ("Expected out tensor to have
# dtype long int")
CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
             "float64": "double", "int8": "signed char", "int16": "short int", "int32": "int",
             "int64": "long int", "uint8": "unsigned char", "bool": "bool"}


def cpp_name(dt) -> str:
    """torch's C++ type name of a NumPy dtype, a tapegrad dtype or a NumPy dtype's name
    ('float', 'long int', 'c10::Half', ...); the NumPy name for a dtype torch lacks."""
    name = getattr(dt, "name", dt)
    return CPP_NAMES.get(name, name)


def scalar_name(np_dtype) -> str:
    """torch's C++ name of a NumPy dtype ('Float', 'Long', 'Bool', ...), as its messages give it;
    the NumPy name for a dtype torch lacks."""
    name = np_dtype.name
    return SCALAR_NAMES.get(name, name)


class dtype:
    """A tensor element type: ``tapegrad.float32`` and friends (compare with ``is`` or ``==``)."""

    __slots__ = ("name", "np", "is_floating_point", "is_signed", "itemsize", "_cat")

    def __init__(self, name, np_dtype, cat):
        self.name = name
        self.np = np.dtype(np_dtype)
        self._cat = cat
        self.is_floating_point = cat == _FLOAT
        self.is_signed = self.np.kind in "fi"
        self.itemsize = self.np.itemsize

    @property
    def is_complex(self):
        return False

    def __repr__(self):
        return "tapegrad." + self.name

    def __reduce__(self):
        return self.name


float16 = half = dtype("float16", np.float16, _FLOAT)
float32 = float = dtype("float32", np.float32, _FLOAT)
float64 = double = dtype("float64", np.float64, _FLOAT)
uint8 = dtype("uint8", np.uint8, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = short = dtype("int16", np.int16, _INT)
int32 = int = dtype("int32", np.int32, _INT)
int64 = long = dtype("int64", np.int64, _INT)
bool = dtype("bool", np.bool_, _BOOL)  # noqa: A001 - torch's name

_ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool)
_FROM_NP = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}

_default = [float32]


def get_default_dtype() -> dtype:
    """The floating dtype that factories and Python floats use (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype; only float32 and float64 are allowed (TypeError else)."""
    if d not in (float32, float64):
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the default "
                        f"type (float32 or float64), got {d!r}")
    _default[0] = d
    _result_cache.clear()


def from_numpy_dtype(npd) -> dtype:
    """Map a NumPy dtype to tapegrad's; TypeError for kinds torch has no tensor for."""
    try:
        return _FROM_NP[npd]
    except KeyError:
        pass
    npd = np.dtype(npd)
    if npd in _FROM_NP:
        return _FROM_NP[npd]
    if npd.kind == "u" or npd.kind == "i":
        return int64
    raise TypeError(f"can't convert NumPy arrays of type {npd}; the supported types are: "
                    + ", ".join(d.name for d in _ALL))


def to_dtype(d) -> dtype:
    """Accept a tapegrad dtype, a NumPy dtype/type, or a Python type (float/int/bool)."""
    if type(d) is dtype:
        return d
    if d is builtins_float:
        return _default[0]
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        return from_numpy_dtype(np.dtype(d))
    except TypeError as e:
        raise TypeError(f"{d!r} is not a tapegrad dtype: use tapegrad.float32, tapegrad.int64, ...") from e


import builtins as _b  # noqa: E402

builtins_float, builtins_int, builtins_bool = _b.float, _b.int, _b.bool


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both promote to, as ``torch.promote_types`` (int + float16 -> float16)."""
    if a is b:
        return a
    if a._cat != b._cat:
        hi, lo = (a, b) if a._cat > b._cat else (b, a)
        return hi
    if a._cat == _FLOAT:
        return a if a.itemsize > b.itemsize else b
    return _FROM_NP[np.promote_types(a.np, b.np)]


def _scalar_dtype(v) -> dtype:
    t = type(v)
    if t is builtins_bool or t is np.bool_:
        return bool
    if t is builtins_int or isinstance(v, np.integer):
        return int64
    return _default[0]


def _combine(higher, lower):
    # torch's combine_categories: a lower-priority group only wins by being of a higher category
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._cat == _FLOAT:
        return higher
    if higher is bool or lower._cat == _FLOAT:
        return promote_types(higher, lower)
    return higher


_result_cache: dict = {}


def result_type(*operands) -> dtype:
    """The dtype torch gives an op over ``operands`` (Tensors and Python numbers)."""
    key = []
    for o in operands:
        arr = o if isinstance(o, np.ndarray) else getattr(o, "_data", None)
        if isinstance(arr, np.ndarray):
            key.append((arr.dtype, arr.ndim == 0))
        else:
            key.append(_scalar_dtype(o))
    key = tuple(key)
    r = _result_cache.get(key)
    if r is None:
        dim = zero = wrapped = None
        for k in key:
            if type(k) is tuple:
                d = from_numpy_dtype(k[0])
                if k[1]:
                    zero = d if zero is None else promote_types(zero, d)
                else:
                    dim = d if dim is None else promote_types(dim, d)
            else:
                wrapped = k if wrapped is None else promote_types(wrapped, k)
        r = _result_cache[key] = _combine(dim, _combine(zero, wrapped))
    return r


_INF = builtins_float("inf")


def overflows(value, dtype) -> builtins_bool:
    """Whether the number ``value`` is outside what NumPy ``dtype`` holds, by torch's checked
    conversion of a scalar: a float dtype takes anything up to its largest finite value, and inf
    and NaN; an integer dtype takes numbers in its range (an unsigned one also ints down to
    -max, which wrap around, but no negative float), never inf or NaN; bool and complex take
    anything."""
    kind = dtype.kind
    if kind == "f":
        return abs(value) != _INF and abs(value) > builtins_float(np.finfo(dtype).max)
    if kind in "iu" and not isinstance(value, (builtins_bool, np.bool_)):
        info = np.iinfo(dtype)
        lo = -info.max if kind == "u" and isinstance(value, (builtins_int, np.integer)) \
            else info.min
        return not lo <= value <= info.max     # (NaN fails the comparison: it overflows)
    return False


def wrapped(value, dtype):
    """``value`` as an unsigned ``dtype`` stores it: a negative int that :func:`overflows` lets
    through wraps around (-1 is 255 for uint8), as in torch, where NumPy refuses it."""
    if dtype.kind == "u" and isinstance(value, builtins_int) and value < 0:
        return value + builtins_int(np.iinfo(dtype).max) + 1
    return value


def overflow_error(value, dtype, what):
    """torch's RuntimeError for a number :func:`overflows` ``dtype``, naming where it was given
    (``what``: "fill_'s value", "clamp's min", ...)."""
    return RuntimeError(f"value cannot be converted to type {dtype} without overflow: {what}="
                        f"{value!r} is outside the range of tapegrad.{dtype}")
