"""Tensor factories and random number generators, shaped like torch's.

Every factory returns a fresh leaf :class:`~tapegrad.Tensor` on the CPU and takes the keyword
arguments torch's does: ``dtype=None`` (a tapegrad dtype, a NumPy dtype or a Python type),
``device=None`` (only ``None`` or ``'cpu'``: anything else raises RuntimeError, tapegrad has no
other device) and ``requires_grad=False`` (``True`` on an integer or bool result raises
RuntimeError).

Dtype inference follows ``torch.tensor``: Python floats give the default dtype (float32 unless
:func:`tapegrad.set_default_dtype` changed it), Python ints int64, bools bool; NumPy arrays, NumPy
scalars and tensors keep their dtype; a sequence gets the promotion of all its elements.

Random factories draw from a :class:`Generator` (``generator=None`` means
:data:`default_generator`). A Generator wraps NumPy's ``Generator(PCG64(seed))``: the streams
differ from torch's, but the same seed always gives the same numbers. Like torch, every generator
starts from the seed 67280421310721, so a program that never seeds is still reproducible.
"""
from __future__ import annotations

import math
import operator
import os
import warnings

import numpy as np

from . import _dtype
from ._dtype import overflows
from ._memory_format import (
    check_format,
    check_layout,
    contiguous_format,
    empty_in_format,
    plain_c_order,
    preserve_format,
    same_strides,
    with_strides,
)
from ._tensor import Tensor, _make
from .autograd.grad_mode import _type_name
from .autograd.grad_mode import state as _grad_state
from .autograd.graph import bump, user_stacklevel

__all__ = [
    "tensor", "as_tensor", "from_numpy",
    "zeros", "ones", "empty", "full", "arange", "linspace", "eye",
    "zeros_like", "ones_like", "empty_like", "full_like",
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
    "normal", "bernoulli", "multinomial", "poisson",
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state",
]

_builtin_float, _builtin_int, _builtin_bool = _dtype.builtins_float, _dtype.builtins_int, \
    _dtype.builtins_bool

# ---------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------

_SUPPORTED_NP = {d.np: d for d in _dtype._ALL}        # exactly the dtypes a tapegrad Tensor holds
_SUPPORTED_NAMES = ", ".join(d.name for d in _dtype._ALL)


def _np_dtype_to_tg(npd, *, for_sharing=False):
    """tapegrad dtype for NumPy dtype ``npd``.

    uint16/uint32/uint64 map to int64 (tapegrad has no wide unsigned types) unless ``for_sharing``
    (from_numpy cannot convert without copying). TypeError for everything else torch rejects or
    tapegrad lacks (object, str, complex, datetime, longdouble, ...)."""
    d = _SUPPORTED_NP.get(npd)
    if d is not None:
        return d
    npd = np.dtype(npd)
    if npd.byteorder not in "=|":  # non-native byte order: same kind, native order
        d = _SUPPORTED_NP.get(npd.newbyteorder("="))
        if d is not None:
            return d
    if npd.kind == "u" and not for_sharing:
        return _dtype.int64
    extra = ""
    if npd.kind == "c":
        extra = " (tapegrad has no complex dtypes)"
    elif npd.kind == "u":
        extra = (" (tapegrad has no uint16/uint32/uint64; convert first, e.g. "
                 "arr.astype(np.int64))")
    raise TypeError(f"can't convert np.ndarray of type numpy.{npd.type.__name__} ({npd}){extra}. "
                    f"The only supported types are: {_SUPPORTED_NAMES}.")


def _resolve_dtype(dtype):
    return None if dtype is None else _dtype.to_dtype(dtype)


def _check_device(device, name="tensor"):
    """Accept None, 'cpu', 'cpu:N' or a device object whose ``type`` is 'cpu'; RuntimeError else."""
    if device is None:
        return
    kind = getattr(device, "type", device)
    if isinstance(kind, str):
        base, _, index = kind.partition(":")
        if base == "cpu" and (not index or index.isdigit()):
            return
    raise RuntimeError(f"{name}(): tapegrad only has a CPU device, got device={device!r} "
                       f"(use device=None or 'cpu')")


def _check_pin_memory(pin_memory):
    if pin_memory:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; tapegrad "
                           "is CPU-only and has no pinned memory")


def _finish(arr, requires_grad):
    t = _make(arr if arr.size else with_strides(arr))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _size(args, size, name):
    """Normalise ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(Size)``, ``f(size=...)`` to a tuple.

    TypeError for no size or non-integer entries; RuntimeError for negative entries."""
    if size is not None:
        if args:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        args = (size,)
    if len(args) == 1 and not isinstance(args[0], (_builtin_int, np.integer)):
        a = args[0]
        if isinstance(a, (list, tuple)):
            args = a
        elif isinstance(a, Tensor) and a._data.ndim == 1 and a._data.dtype.kind in "iu":
            args = a._data.tolist()
        elif isinstance(a, Tensor) and a._data.ndim == 0:
            pass  # operator.index below handles 0-d integer tensors
        else:
            raise TypeError(f"{name}(): argument 'size' must be a tuple of ints, not "
                            f"{type(a).__name__}")
    elif not args:
        raise TypeError(f"{name}() missing 1 required positional argument: 'size' (pass ints "
                        f"or a tuple; use () for a 0-d tensor)")
    out = []
    for i, a in enumerate(args):
        if type(a) is _builtin_int:
            out.append(a)
            continue
        try:
            out.append(operator.index(a))
        except TypeError:
            raise TypeError(f"{name}(): argument 'size' must be a tuple of ints, but found element "
                            f"of type {type(a).__name__} at pos {i}") from None
    for d in out:
        if d < 0:
            raise RuntimeError(f"{name}(): Trying to create tensor with negative dimension {d}: "
                               f"{out}")
    return tuple(out)


def _number(x, what):
    """A Python number from a Python/NumPy scalar or a one-element tensor."""
    if isinstance(x, Tensor):
        if x._data.size != 1:
            raise RuntimeError(f"{what} must be a number or a one-element tensor, got a tensor of "
                               f"shape {list(x._data.shape)}")
        return x._data.reshape(()).item()
    if isinstance(x, np.ndarray) and x.size == 1:
        return x.reshape(()).item()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (_builtin_bool, _builtin_int, _builtin_float)):
        return x
    if isinstance(x, complex):
        raise TypeError(f"{what}: tapegrad has no complex dtypes (got {x!r})")
    try:
        return operator.index(x)
    except TypeError:
        pass
    try:
        return _builtin_float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, got {type(x).__name__}") from None


def _number_dtype(v):
    """torch's dtype for a Python number: bool -> bool, int -> int64, float -> default."""
    if isinstance(v, _builtin_bool):
        return _dtype.bool
    if isinstance(v, _builtin_int):
        return _dtype.int64
    return _dtype.get_default_dtype()


def _cast(arr, npd):
    """``arr`` as dtype ``npd`` (always a new array); float -> int truncates toward zero."""
    if arr.dtype == npd:
        return np.array(arr, order="C")
    if arr.dtype.kind == "f" and npd.kind in "iub":
        with np.errstate(invalid="ignore", over="ignore"):
            return arr.astype(npd, order="C")
    return arr.astype(npd, order="C")


def _check_overflow(arr, target):
    """torch's check when Python numbers are stored into an integer dtype
    (:func:`_dtype.overflows`): RuntimeError for a value outside the dtype's range (NaN and inf
    included); uint8 also takes ints down to -255, which wrap around. Bool targets take
    anything."""
    npd = target.np
    if npd.kind not in "iu" or arr.size == 0 or arr.dtype.kind == "b":
        return
    info = np.iinfo(npd)
    # (the extremes decide, as a number each; a NaN anywhere is the minimum)
    if overflows(arr.min().item(), npd) or overflows(arr.max().item(), npd):
        raise RuntimeError(f"value cannot be converted to type {npd} without overflow "
                           f"(the {target} range is [{info.min}, {info.max}])")


# ---------------------------------------------------------------------------------------------
# data -> ndarray with torch's inference
# ---------------------------------------------------------------------------------------------

_PY_SCALAR_TYPES = frozenset((_builtin_float, _builtin_int, _builtin_bool))


def _is_seq(x):
    return isinstance(x, (list, tuple))


def _leaf_dtype(x, dim, state):
    """tapegrad dtype (or a Python type standing for one) of one leaf element of a sequence."""
    t = type(x)
    if t in _PY_SCALAR_TYPES:
        return t
    if isinstance(x, np.generic):
        return _np_dtype_to_tg(x.dtype)
    if isinstance(x, Tensor):
        if x._data.size != 1:
            raise ValueError(f"only one element tensors can be converted to Python scalars: a "
                             f"sequence holds a tensor of shape {list(x._data.shape)} at dim {dim} "
                             f"(use tapegrad.stack to combine tensors)")
        state["tensors"] = True
        return _np_dtype_to_tg(x._data.dtype)
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            return _np_dtype_to_tg(x.dtype)
        raise ValueError(f"ragged nested sequence: expected a number at dim {dim} (as in the "
                         f"first element) but got an array of shape {list(x.shape)}")
    if _is_seq(x) or isinstance(x, range):
        raise ValueError(f"ragged nested sequence: expected a number at dim {dim} (as in the "
                         f"first element) but got a {t.__name__} of length {len(x)}")
    if isinstance(x, _builtin_bool):
        return _builtin_bool
    if isinstance(x, _builtin_int):
        return _builtin_int
    if isinstance(x, _builtin_float):
        return _builtin_float
    if isinstance(x, complex):
        raise TypeError(f"can't convert complex value {x!r} to a tensor: tapegrad has no complex "
                        f"dtypes")
    if isinstance(x, (str, bytes)):
        raise ValueError(f"too many dimensions '{t.__name__}': can't convert a {t.__name__} "
                         f"({x!r}) to a number")
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


def _walk(seq, dim, shape, kinds, state):
    """Check ``seq`` (at depth ``dim``) against ``shape`` and collect its element dtypes."""
    n = len(seq)
    if n != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {n})")
    nd = len(shape)
    if dim + 1 == nd:
        types = set(map(type, seq))
        if types <= _PY_SCALAR_TYPES:
            kinds.update(types)
        else:
            for x in seq:
                kinds.add(_leaf_dtype(x, dim + 1, state))
        return
    sub = tuple(shape[dim + 1:])
    for x in seq:
        if type(x) is list or _is_seq(x):
            _walk(x, dim + 1, shape, kinds, state)
        elif isinstance(x, range):
            state["convert"] = True
            _walk(list(x), dim + 1, shape, kinds, state)
        elif isinstance(x, np.ndarray) and x.ndim > 0:
            if x.shape != sub:
                raise ValueError(f"expected sequence of length {sub[0]} at dim {dim + 1} (got "
                                 f"an array of shape {list(x.shape)}, expected shape {list(sub)})")
            kinds.add(_np_dtype_to_tg(x.dtype))
        else:
            if isinstance(x, (str, bytes)):
                raise ValueError(f"too many dimensions '{type(x).__name__}'")
            raise ValueError(f"ragged nested sequence: expected sequence of length "
                             f"{shape[dim + 1]} at dim {dim + 1} (as in the first element) but "
                             f"got a {type(x).__name__} ({x!r})")


def _plain(seq):
    """Copy of a nested sequence with tensors replaced by 0-d arrays and ranges by lists."""
    out = []
    for x in seq:
        if isinstance(x, Tensor):
            out.append(x._data.reshape(()))
        elif _is_seq(x) or isinstance(x, range):
            out.append(_plain(x))
        else:
            out.append(x)
    return out


def _infer_seq(data):
    """(shape, inferred tapegrad dtype, data ready for np.array) for a nested sequence."""
    shape = []
    x = data
    while True:
        if _is_seq(x) or isinstance(x, range):
            n = len(x)
            shape.append(n)
            if n == 0:
                break
            x = x[0]
        elif isinstance(x, np.ndarray):
            shape.extend(x.shape)
            break
        else:
            break
    kinds = set()
    state = {}
    _walk(data, 0, shape, kinds, state)
    dt = None
    for k in kinds:
        if k is _builtin_float:
            k = _dtype.get_default_dtype()
        elif k is _builtin_int:
            k = _dtype.int64
        elif k is _builtin_bool:
            k = _dtype.bool
        dt = k if dt is None else _dtype.promote_types(dt, k)
    if dt is None:  # no elements at all: torch gives the default dtype
        dt = _dtype.get_default_dtype()
    if state or isinstance(data, range):
        data = _plain(data)
    return tuple(shape), dt, data


def _to_array(data, dtype=None) -> np.ndarray:
    """``data`` as a fresh C-contiguous ndarray with ``torch.tensor``'s dtype inference.

    Accepts Python scalars, nested lists/tuples/ranges (elements may be Python or NumPy scalars,
    one-element Tensors, or NumPy arrays), NumPy arrays and scalars, and Tensors. Without
    ``dtype``: Python float -> default dtype, int -> int64, bool -> bool, a sequence -> the
    promotion of its elements (``[1, 2.0]`` -> float32, ``[True, 1]`` -> int64), arrays/NumPy
    scalars/Tensors keep their dtype (uint16/32/64 arrays become int64). With ``dtype`` the values
    are converted (float -> int truncates toward zero, like torch); Python numbers outside an
    integer dtype's range raise RuntimeError like torch (arrays and tensors are cast unchecked).

    Raises ValueError for ragged sequences ("expected sequence of length 2 at dim 1 (got 1)") and
    for multi-element tensors inside a list; TypeError for unsupported NumPy dtypes (object, str,
    complex, ...), complex numbers and str data; ValueError for ints that overflow int64;
    RuntimeError for objects whose dtype can't be inferred (None, dict, ...)."""
    target = None if dtype is None else _dtype.to_dtype(dtype)
    t = type(data)
    if t is _builtin_float or t is _builtin_int or t is _builtin_bool:
        inferred = _number_dtype(data)
        if target is None or target is inferred or target.is_floating_point:
            try:
                return np.array(data, dtype=(target or inferred).np)
            except OverflowError:
                raise ValueError(f"Overflow when unpacking long long: {data} does not fit in "
                                 f"int64") from None
        arr = np.array(data, dtype=inferred.np)
        _check_overflow(arr, target)
        return _cast(arr, target.np)
    if t is np.ndarray or isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        src = _np_dtype_to_tg(arr.dtype)
        npd = (target or src).np
        if arr.dtype.kind == "f" and npd.kind in "iub":
            return _cast(arr, npd)
        return np.array(arr, dtype=npd, order="C")
    if isinstance(data, Tensor):
        arr = data._data
        npd = arr.dtype if target is None else target.np
        return _cast(arr, npd)
    if _is_seq(data) or isinstance(data, range):
        shape, inferred, plain = _infer_seq(data)
        # build straight in a floating target (one rounding); else in the inferred dtype, then
        # cast (float -> int truncates, int -> uint8 wraps, like torch)
        build = target if target is not None and target.is_floating_point else inferred
        try:
            with np.errstate(over="ignore"):  # huge floats become inf, as in torch
                arr = np.array(plain, dtype=build.np)
        except OverflowError:
            raise ValueError("Overflow when unpacking long long: an int in the data does not fit "
                             f"in {build}") from None
        if arr.shape != shape:  # defensive: the walk above should have caught any mismatch
            raise ValueError(f"could not build an array of shape {list(shape)} from the data "
                             f"(got {list(arr.shape)})")
        if target is not None and target is not build:
            _check_overflow(arr, target)
            arr = _cast(arr, target.np)
        return arr
    if isinstance(data, complex):
        raise TypeError(f"can't convert complex value {data!r} to a tensor: tapegrad has no "
                        f"complex dtypes")
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}': can't make a tensor from a "
                        f"string")
    if isinstance(data, _builtin_int):  # subclasses: IntEnum, ... (bool can't be subclassed)
        return _to_array(_builtin_int(data), target)
    if isinstance(data, _builtin_float):
        return _to_array(_builtin_float(data), target)
    if hasattr(data, "__array__"):
        return _to_array(np.asarray(data), target)
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


# ---------------------------------------------------------------------------------------------
# tensor / as_tensor / from_numpy
# ---------------------------------------------------------------------------------------------

def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data``.

    ``data``: a Python scalar, a (nested) list/tuple, a NumPy array or scalar, or a Tensor. Shape
    is the nesting shape of ``data``; dtype is inferred like torch (see :func:`_to_array`) unless
    ``dtype`` is given. Always copies. Passing a Tensor gives a detached copy and warns
    (UserWarning), as torch does: prefer ``src.clone().detach()``.

    Raises ValueError (ragged lists), TypeError (unsupported NumPy dtype, complex, str),
    RuntimeError (non-CPU device, pin_memory=True, requires_grad=True on a non-floating dtype,
    data whose dtype can't be inferred)."""
    _check_device(device, "tensor")
    _check_pin_memory(pin_memory)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or "
                      "sourceTensor.clone().detach().requires_grad_(True), rather than "
                      "tapegrad.tensor(sourceTensor).", UserWarning, stacklevel=user_stacklevel())
    return _finish(_to_array(data, dtype), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor, avoiding a copy where possible.

    A Tensor of the requested dtype (or ``dtype=None``) is returned as is; with another dtype it
    is converted (``data.to(dtype)``, recorded by autograd when the Tensor supports it). A NumPy
    array of a supported dtype shares memory with the result when no conversion is needed
    (see :func:`from_numpy`). Anything else is copied like :func:`tensor`. Raises like
    :func:`tensor`."""
    _check_device(device, "as_tensor")
    target = _resolve_dtype(dtype)
    if isinstance(data, Tensor):
        if target is None or data._data.dtype == target.np:
            return data
        to = getattr(data, "to", None)
        if to is not None:
            return to(target)
        return _make(_cast(data._data, target.np))
    if isinstance(data, np.ndarray) and data.dtype in _SUPPORTED_NP and \
            (target is None or data.dtype == target.np) and data.dtype.byteorder in "=|":
        return _make(data.view(np.ndarray))
    return _make(_to_array(data, target))


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (writes to either show in both); dtype is kept.

    Supported dtypes: bool, uint8, int8, int16, int32, int64, float16, float32, float64.
    Raises TypeError for a non-ndarray or an unsupported dtype (object, str, complex, uint16/32/64,
    ...), ValueError for non-native byte order. Warns (UserWarning) for a read-only array, whose
    tensor must not be written in place. Unlike torch, negative strides are fine, and an array
    of no elements that NumPy allocated reports C order's strides (``(3, 1)`` for shape (0, 3))
    where torch keeps NumPy's all-zero ones (as its tensor() and as_tensor() of one do)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype.byteorder not in "=|":
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported (use "
                         "arr.astype(arr.dtype.newbyteorder('=')) first).")
    _np_dtype_to_tg(ndarray.dtype, for_sharing=True)
    if not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable; tapegrad does not support writing "
                      "to it in place. Copy the array (np.array(arr)) to protect its data or make "
                      "it writable before converting it to a tensor.", UserWarning, stacklevel=user_stacklevel())
    return _make(ndarray.view(np.ndarray))


# ---------------------------------------------------------------------------------------------
# deterministic factories
# ---------------------------------------------------------------------------------------------

def _float_or(dtype):
    return _dtype.get_default_dtype() if dtype is None else _dtype.to_dtype(dtype)


def zeros(*size, out=None, dtype=None, device=None, requires_grad=False, **kw):
    """A tensor of zeros of shape ``size``: ``zeros(2, 3)``, ``zeros((2, 3))``, ``zeros(size=...)``.

    dtype: the default dtype unless given. Raises TypeError (no or non-integer size), RuntimeError
    (negative size, non-CPU device, requires_grad on a non-floating dtype)."""
    return _filled("zeros", size, kw, 0, dtype, device, requires_grad, out)


def ones(*size, out=None, dtype=None, device=None, requires_grad=False, **kw):
    """A tensor of ones of shape ``size``; dtype and errors as :func:`zeros`."""
    return _filled("ones", size, kw, 1, dtype, device, requires_grad, out)


def empty(*size, out=None, dtype=None, device=None, requires_grad=False, **kw):
    """An uninitialised tensor of shape ``size`` (values are arbitrary); dtype and errors as
    :func:`zeros`."""
    return _filled("empty", size, kw, None, dtype, device, requires_grad, out)


_SIZE_KW = ("size", "layout", "pin_memory", "memory_format")


def _factory_kwargs(name, kw):
    bad = [k for k in kw if k not in _SIZE_KW]
    if bad:
        raise TypeError(f"{name}() got an unexpected keyword argument {bad[0]!r}")
    _check_pin_memory(kw.get("pin_memory", False))
    check_layout(kw.get("layout"), name)
    return kw.get("size")


def _write_out(out, arr, name, requires_grad=None, kernel=None, warn_resize=False, order="K"):
    """Copy ``arr`` into ``out`` (resizing it when the shape differs, keeping its dtype) and
    return ``out``, as torch: the write counts as an in-place change (its version goes up, so a
    graph that saved ``out`` refuses it in backward), and a leaf ``out`` then requires grad as a
    factory's ``requires_grad`` says (so a leaf that required grad no longer does, unless
    ``requires_grad=True``; None, for ops that take no such argument: left as it is).
    ``kernel``: the name of torch's floating-only kernel (rand, randn, normal), which refuses an
    ``out`` of another dtype with NotImplementedError. TypeError for a non-tensor ``out``;
    RuntimeError when ``out`` requires grad while ops are recorded (grad mode on, outside
    inference mode: under ``no_grad()`` it may be written), when it is an inference tensor
    outside inference mode (as an in-place write to it), and for ``requires_grad`` on a
    non-floating ``out``. ``warn_resize``: torch's deprecation UserWarning when an ``out`` with
    elements is resized (its ops warn; its factories do not). ``order``: a resized ``out``'s
    memory order (NumPy's: "K" keeps ``arr``'s)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_type_name(out)}")
    if kernel is not None and out._data.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_sname(out._data.dtype)}' ({name}(out=...) draws floating "
                                  f"values: give a floating out)")
    if out._extra is not None:
        from .ops.inplace import _check_inference_write  # (it imports this module)
        _check_inference_write(out, name)
    if out.requires_grad and _grad_state.record:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad. (Write "
                           f"it under tapegrad.no_grad(), or into a tensor that does not "
                           f"require grad.)")
    if requires_grad and out._data.dtype.kind != "f":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    if out._data.shape != arr.shape:
        if warn_resize and out._data.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(arr.shape)}. This behavior is deprecated, and in a future PyTorch release "
                f"outputs will not be resized unless they have zero elements. You can explicitly "
                f"reuse an out tensor t by resizing it, inplace, to zero elements with "
                f"t.resize_(0).", UserWarning, stacklevel=user_stacklevel())
        out._data = _resized(out._data, arr, order)
    with np.errstate(invalid="ignore", over="ignore"):
        np.copyto(out._data, arr, casting="unsafe")
    bump(out)
    if requires_grad is not None and out.grad_fn is None and \
            out._requires_grad != bool(requires_grad):
        out.requires_grad_(bool(requires_grad))
    return out


def _resized(old, arr, order):
    """An array of ``arr``'s shape (in ``order``, as NumPy's empty_like) and ``old``'s dtype, for
    an out resized as torch's resize_ does it: in old's memory, from its first element, when it
    fits in the buffer old is part of (so that its base, or views taken of it before, see what is
    written, as they share torch's storage), else new memory (torch grows the storage, which
    its base would follow: not done here)."""
    new = np.empty_like(arr, old.dtype, order=order)
    root = old
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.writeable and (root.flags.c_contiguous or root.flags.f_contiguous)):
        return new
    start = old.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if start < 0 or start + new.nbytes > root.nbytes:
        return new
    return np.ndarray(new.shape, new.dtype, buffer=root.reshape(-1, order="A").view(np.uint8),
                      offset=start, strides=new.strides)


def _filled(name, size, kw, value, dtype, device, requires_grad, out):
    shape = _size(size, _factory_kwargs(name, kw), name)
    _check_device(device, name)
    npd = _float_or(dtype).np
    if value is None:
        arr = np.empty(shape, dtype=npd)
    elif value == 0:
        arr = np.zeros(shape, dtype=npd)
    else:
        arr = np.ones(shape, dtype=npd)
    if out is not None:
        return _write_out(out, arr, name, requires_grad)
    return _finish(arr, requires_grad)


def _fill_dtype(fill_value):
    """(Python number, dtype torch infers for it) for a fill value."""
    v = _number(fill_value, "full(): fill_value")
    return v, _number_dtype(v)


def full(size, fill_value, *, out=None, dtype=None, device=None, requires_grad=False, **kw):
    """A tensor of shape ``size`` (an int or a sequence of ints) filled with ``fill_value``.

    dtype: inferred from ``fill_value`` unless given (bool -> bool, int -> int64, float -> the
    default dtype; a NumPy scalar or one-element tensor counts as the Python number it holds);
    converting to an integer dtype truncates. Raises TypeError (bad size, complex fill),
    RuntimeError (negative size, non-CPU device, requires_grad on a non-floating dtype)."""
    shape = _size((size,), _factory_kwargs("full", kw), "full")
    _check_device(device, "full")
    v, inferred = _fill_dtype(fill_value)
    npd = (inferred if dtype is None else _dtype.to_dtype(dtype)).np
    with np.errstate(invalid="ignore", over="ignore"):
        arr = np.full(shape, v, dtype=npd) if npd.kind not in "iub" or not isinstance(v, float) \
            else np.full(shape, np.float64(v).astype(npd), dtype=npd)
    if out is not None:
        return _write_out(out, arr, "full", requires_grad)
    return _finish(arr, requires_grad)


def arange(start=0, end=None, step=1, *, out=None, dtype=None, device=None, requires_grad=False,
           **kw):
    """``arange(end)`` or ``arange(start, end, step=1)``: the 1-D tensor start, start+step, ...
    stopping before ``end``.

    Length is ``ceil((end - start) / step)`` (computed in double, like torch). dtype: int64 when
    all of start/end/step are integers, else the default dtype, unless given. Float values are
    ``start + i * step`` computed in double with one rounding, then rounded to the dtype (torch's
    vectorised kernel can differ from this by an ulp, depending on the CPU). Raises RuntimeError for
    step 0, a step whose sign does not lead from start to end, non-finite bounds, a non-CPU
    device, or requires_grad on an integer dtype."""
    _factory_kwargs("arange", kw)
    _check_device(device, "arange")
    if end is None:
        start, end = 0, start
    s = _number(start, "arange(): start")
    e = _number(end, "arange(): end")
    st = _number(step, "arange(): step")
    if dtype is None:
        dt = _dtype.int64 if all(isinstance(v, _builtin_int) for v in (s, e, st)) \
            else _dtype.get_default_dtype()
    else:
        dt = _dtype.to_dtype(dtype)
    npd = dt.np
    if npd.kind in "iub":
        # torch casts start/step to the integer accumulate type (truncation) before stepping
        xs, xe, xst = (v if isinstance(v, _builtin_int) else _trunc(v) for v in (s, e, st))
        if xst == 0:
            raise RuntimeError("arange(): step must be nonzero (after converting step "
                               f"{st!r} to {dt})")
        _check_range(xs, xe, xst)
        if dt is _dtype.int64:
            sgn = 1 if xst > 0 else -1
            n = (xe - xs + xst - sgn) // xst
        else:
            n = _ceil_len(s, e, st)
        vals = xs + xst * np.arange(n, dtype=np.int64)
        with np.errstate(over="ignore"):
            arr = vals.astype(npd)
    else:
        if st == 0:
            raise RuntimeError("arange(): step must be nonzero")
        _check_range(s, e, st)
        n = _ceil_len(s, e, st)
        idx = np.arange(n, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            if npd == np.float16:  # torch accumulates half in float
                vals = _fma(_builtin_float(np.float32(st)), idx.astype(np.float32),
                            _builtin_float(np.float32(s))).astype(np.float32)
            else:
                vals = _fma(_builtin_float(st), idx, _builtin_float(s))
            arr = vals.astype(npd)
    if out is not None:
        return _write_out(out, arr, "arange", requires_grad)
    return _finish(arr, requires_grad)


def _trunc(v, name="arange"):
    if not math.isfinite(v):
        raise RuntimeError(f"{name}(): unsupported range: bound {v} is not finite")
    return _builtin_int(v)


def _check_range(s, e, st):
    if not (math.isfinite(s) and math.isfinite(e)):
        raise RuntimeError(f"arange(): unsupported range: {s} -> {e}")
    if not ((st > 0 and e >= s) or (st < 0 and e <= s)):
        raise RuntimeError(f"arange(): upper bound and lower bound inconsistent with step sign "
                           f"(start={s}, end={e}, step={st})")


def _ceil_len(s, e, st):
    n = math.ceil((_builtin_float(e) - _builtin_float(s)) / _builtin_float(st))
    if n < 0 or n > 2 ** 62:
        raise RuntimeError(f"arange(): invalid size, possible overflow? ({s} -> {e}, step {st})")
    return n


def linspace(start, end, steps, *, out=None, dtype=None, device=None, requires_grad=False, **kw):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive, as a 1-D tensor.

    dtype: the default dtype unless given. Values follow torch's CPU kernel (step =
    (end - start) / (steps - 1) in the output float type; the first half counts up from start,
    the second half down from end); integer dtypes compute in double and truncate.
    ``steps == 1`` gives ``[start]``, ``steps == 0`` an empty tensor. Raises RuntimeError for
    negative steps, a non-CPU device, or requires_grad on an integer dtype; TypeError for a
    non-integer steps."""
    _factory_kwargs("linspace", kw)
    _check_device(device, "linspace")
    try:
        steps = operator.index(steps)
    except TypeError:
        raise TypeError(f"linspace(): argument 'steps' must be int, not "
                        f"{type(steps).__name__}") from None
    if steps < 0:
        raise RuntimeError(f"linspace(): number of steps must be non-negative (got {steps})")
    s = _number(start, "linspace(): start")
    e = _number(end, "linspace(): end")
    npd = _float_or(dtype).np
    # torch's CPU kernel: start/end converted to the output type (integers truncate), step in
    # the output float type (double for integer outputs), then per element
    # ``start + step * i`` for the first half and ``end - step * (steps - 1 - i)`` for the rest,
    # which the compiler fuses into an FMA for float/double/integer outputs; emulated here in
    # double with an exact product.
    half = steps // 2
    with np.errstate(all="ignore"):
        if npd == np.float16:
            # c10::Half arithmetic rounds to half after every op (and so does NumPy's float16)
            h = np.float16
            a, b = h(s), h(e)
            step = (b - a) / h(max(steps - 1, 1))
            k = np.arange(steps, dtype=np.float64)
            k[half:] = steps - 1 - k[half:]
            prod = step * k.astype(h)
            arr = np.empty(steps, dtype=h)
            arr[:half] = a + prod[:half]
            arr[half:] = b - prod[half:]
            if steps == 1:
                arr[0] = a
        else:
            if npd.kind == "f":
                a, b = npd.type(s), npd.type(e)
                step = _builtin_float((b - a) / npd.type(max(steps - 1, 1)))
                a, b = _builtin_float(a), _builtin_float(b)
            else:
                a, b = _builtin_float(_trunc(s, "linspace")), _builtin_float(_trunc(e, "linspace"))
                step = (b - a) / max(steps - 1, 1)
            k = np.arange(steps, dtype=np.float64)
            k[half:] = steps - 1 - k[half:]
            if npd == np.float32:
                k = k.astype(np.float32).astype(np.float64)  # the index is converted to float
            sign = np.ones(steps)
            sign[half:] = -1.0
            base = np.full(steps, a)
            base[half:] = b
            vals = _fma(sign * step, k, base)
            if steps == 1:
                vals[0] = a
            arr = vals.astype(npd)
    if out is not None:
        return _write_out(out, arr, "linspace", requires_grad)
    return _finish(arr, requires_grad)


def _fma(x, y, z):
    """``x * y + z`` elementwise in float64 with (almost always) a single rounding: the product
    is split exactly (Dekker's TwoProduct) and the sum done with TwoSum."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    p = x * y
    c = 134217729.0 * x  # 2**27 + 1: Veltkamp split into 26-bit halves
    xh = c - (c - x)
    xl = x - xh
    c = 134217729.0 * y
    yh = c - (c - y)
    yl = y - yh
    err = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    s = p + z
    bp = s - z
    t = (p - bp) + (z - (s - bp))
    out = s + (t + err)
    bad = ~np.isfinite(out)  # overflow / inf inputs: the plain formula gives the right inf/nan
    if bad.any():
        out[bad] = s[bad]
    return out


def eye(n, m=None, *, out=None, dtype=None, device=None, requires_grad=False, **kw):
    """The ``n`` x ``m`` (``m`` defaults to ``n``) matrix with ones on the diagonal.

    dtype: the default dtype unless given. Raises RuntimeError for negative n/m, a non-CPU device
    or requires_grad on an integer dtype; TypeError for non-integer n/m."""
    _factory_kwargs("eye", kw)
    _check_device(device, "eye")
    try:
        n = operator.index(n)
        m = n if m is None else operator.index(m)
    except TypeError:
        raise TypeError("eye(): arguments 'n' and 'm' must be ints") from None
    if n < 0:
        raise RuntimeError(f"eye(): n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"eye(): m must be greater or equal to 0, got {m}")
    arr = np.eye(n, m, dtype=_float_or(dtype).np)
    if out is not None:
        return _write_out(out, arr, "eye", requires_grad)
    return _finish(arr, requires_grad)


# ---------------------------------------------------------------------------------------------
# *_like
# ---------------------------------------------------------------------------------------------

def _like(input, dtype, device, name, layout):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    _check_device(device, name)
    check_layout(layout, name)
    return input._data.shape, (input._data.dtype if dtype is None else _dtype.to_dtype(dtype).np)


def _in_layout(arr, input, memory_format, name):
    """``arr`` (C order, ``input``'s shape) laid out as ``memory_format`` asks (default
    ``preserve_format``: input's strides when input is dense, else its order of dims without
    gaps; see tapegrad._memory_format): itself when that is C order, else a copy. TypeError for
    a memory_format that is not one; RuntimeError for a channels-last one of the wrong rank."""
    fmt = check_format(memory_format, name)
    if fmt is contiguous_format or fmt is preserve_format and (
            plain_c_order(input._data) or arr.size and same_strides(arr, input._data)):
        return arr
    out = empty_in_format(input._data, arr.dtype, fmt, name)
    np.copyto(out, arr)
    return out


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
               layout=None):
    """Zeros with ``input``'s shape and dtype (unless ``dtype``), laid out as ``memory_format``
    asks (as torch: by default ``preserve_format``, input's strides when input is dense, else
    its order of dims without gaps; ``contiguous_format``; ``channels_last`` for 4-D,
    ``channels_last_3d`` for 5-D). TypeError if input is not a Tensor or memory_format is not
    one; RuntimeError for a non-CPU device, requires_grad on a non-floating dtype, or a
    channels-last format of the wrong rank."""
    shape, npd = _like(input, dtype, device, "zeros_like", layout)
    return _finish(_in_layout(np.zeros(shape, dtype=npd), input, memory_format, "zeros_like"),
                   requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
              layout=None):
    """Ones with ``input``'s shape and dtype (unless ``dtype``); layout and errors as
    :func:`zeros_like`."""
    shape, npd = _like(input, dtype, device, "ones_like", layout)
    return _finish(_in_layout(np.ones(shape, dtype=npd), input, memory_format, "ones_like"),
                   requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
               layout=None):
    """Uninitialised tensor with ``input``'s shape and dtype; layout and errors as
    :func:`zeros_like`."""
    shape, npd = _like(input, dtype, device, "empty_like", layout)
    return _finish(_in_layout(np.empty(shape, dtype=npd), input, memory_format, "empty_like"),
                   requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None):
    """``fill_value`` with ``input``'s shape and dtype (unless ``dtype``): a float filled into an
    integer tensor truncates. Layout and errors as :func:`zeros_like`, plus TypeError for a
    complex fill."""
    shape, npd = _like(input, dtype, device, "full_like", layout)
    v = _number(fill_value, "full_like(): fill_value")
    with np.errstate(invalid="ignore", over="ignore"):
        if npd.kind in "iub" and isinstance(v, float):
            v = np.float64(v).astype(npd)
        arr = np.full(shape, v, dtype=npd)
    return _finish(_in_layout(arr, input, memory_format, "full_like"), requires_grad)


# ---------------------------------------------------------------------------------------------
# random numbers
# ---------------------------------------------------------------------------------------------

_DEFAULT_SEED = 67280421310721  # torch's default CPU seed
_U64 = 1 << 64
_STATE_BYTES = 56  # state(16) inc(16) has_uint32(8) uinteger(8) seed(8), little-endian


def _check_seed(seed):
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, (float, np.floating)):
        if seed != seed or seed in (float("inf"), float("-inf")):
            raise ValueError(f"manual_seed: seed must be finite, got {seed}")
        seed = _builtin_int(seed)
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__}") from None
    if not -(1 << 63) <= seed < _U64:
        raise ValueError(f"Overflow when unpacking long long: seed {seed} must be in "
                         f"[-2**63, 2**64)")
    return seed % _U64


class Generator:
    """A random number generator: NumPy's ``Generator(PCG64(seed))`` with torch's interface.

    ``Generator()`` starts from seed 67280421310721 like torch's. ``manual_seed(s)`` reseeds and
    returns self; ``initial_seed()`` gives the last seed (as an unsigned 64-bit int);
    ``seed()`` reseeds from OS entropy and returns the new seed; ``get_state()`` returns the state
    as a uint8 tensor of 56 bytes that ``set_state`` restores. Same seed -> same stream (the
    streams differ from torch's). ``device`` may only be 'cpu'."""

    def __init__(self, device="cpu"):
        _check_device(device, "Generator")
        self.device = "cpu"
        self._seed = _DEFAULT_SEED
        self._bitgen = np.random.PCG64(_DEFAULT_SEED)
        self._np = np.random.Generator(self._bitgen)

    def manual_seed(self, seed):
        """Reseed (any int in [-2**63, 2**64)); returns self. TypeError for a non-integer,
        ValueError for an out-of-range seed."""
        seed = _check_seed(seed)
        self._bitgen.state = np.random.PCG64(seed).state
        self._seed = seed
        return self

    def seed(self):
        """Reseed from OS entropy; returns the new seed (an unsigned 64-bit int)."""
        s = _builtin_int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed last set (67280421310721 if never seeded)."""
        return self._seed

    def get_state(self):
        """The generator state as a 1-D uint8 tensor (56 bytes) for :meth:`set_state`."""
        st = self._bitgen.state
        raw = (st["state"]["state"].to_bytes(16, "little")
               + st["state"]["inc"].to_bytes(16, "little")
               + _builtin_int(st["has_uint32"]).to_bytes(8, "little")
               + _builtin_int(st["uinteger"]).to_bytes(8, "little")
               + self._seed.to_bytes(8, "little"))
        return _make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from :meth:`get_state`; returns self. TypeError unless ``new_state`` is
        a uint8 tensor (or array), RuntimeError if it has the wrong size."""
        if isinstance(new_state, Tensor):
            arr = new_state._data
        elif isinstance(new_state, np.ndarray):
            arr = new_state
        else:
            raise TypeError(f"expected a uint8 Tensor (a ByteTensor from get_state()), but got "
                            f"{type(new_state).__name__}")
        if arr.dtype != np.uint8:
            raise TypeError(f"expected a uint8 Tensor (a ByteTensor from get_state()), but got "
                            f"dtype {arr.dtype}")
        if arr.size != _STATE_BYTES:
            raise RuntimeError(f"Expected a generator state of {_STATE_BYTES} bytes (from "
                               f"tapegrad's get_state()), got {arr.size}")
        raw = np.ascontiguousarray(arr).reshape(-1).tobytes()
        self._bitgen.state = {
            "bit_generator": "PCG64",
            "state": {"state": _builtin_int.from_bytes(raw[0:16], "little"),
                      "inc": _builtin_int.from_bytes(raw[16:32], "little")},
            "has_uint32": _builtin_int.from_bytes(raw[32:40], "little"),
            "uinteger": _builtin_int.from_bytes(raw[40:48], "little"),
        }
        self._seed = _builtin_int.from_bytes(raw[48:56], "little")
        return self

    def __repr__(self):
        return f"<tapegrad.Generator seed={self._seed}>"


default_generator = Generator()


def _np_generator(generator=None):
    """The NumPy Generator behind ``generator`` (None: the default one); for other modules."""
    if generator is None:
        return default_generator._np
    if isinstance(generator, Generator):
        return generator._np
    raise TypeError(f"generator must be a tapegrad.Generator or None, not "
                    f"{type(generator).__name__}")


def manual_seed(seed):
    """Seed the default generator; returns it. TypeError for a non-number, ValueError for a seed
    outside [-2**63, 2**64)."""
    return default_generator.manual_seed(seed)


def seed():
    """Seed the default generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed():
    """The default generator's last seed (67280421310721 if never seeded)."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (see :meth:`Generator.get_state`)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state from :func:`get_rng_state`; errors as
    :meth:`Generator.set_state`."""
    default_generator.set_state(new_state)


def _float_dtype_for(name, dtype, what="dtype"):
    dt = _float_or(dtype)
    if not dt.is_floating_point:
        raise NotImplementedError(f"{name}(): only floating dtypes are supported, got {what} "
                                  f"{dt} (NotImplementedError is a RuntimeError)")
    return dt


def _uniform(g, shape, npd):
    if npd == np.float32 or npd == np.float64:
        return g.random(shape, dtype=npd.type)
    # float16: k / 2**11 for k in [0, 2**11) is exact in half and never rounds up to 1.0
    return (g.integers(0, 1 << 11, shape, dtype=np.int64) * (1.0 / (1 << 11))).astype(npd)


def _normal(g, shape, npd):
    if npd == np.float32 or npd == np.float64:
        return g.standard_normal(shape, dtype=npd.type)
    return g.standard_normal(shape, dtype=np.float32).astype(npd)


def rand(*size, generator=None, out=None, dtype=None, device=None, requires_grad=False, **kw):
    """Uniform samples in [0, 1) of shape ``size`` (``rand(2, 3)`` or ``rand((2, 3))``).

    dtype: the default dtype unless given; must be floating (NotImplementedError, a RuntimeError,
    otherwise). Draws from ``generator`` (default: the default generator). Size errors as
    :func:`zeros`."""
    shape = _size(size, _factory_kwargs("rand", kw), "rand")
    _check_device(device, "rand")
    npd = _float_dtype_for("rand", dtype).np
    arr = np.asarray(_uniform(_np_generator(generator), shape, npd))
    if out is not None:
        return _write_out(out, arr, "rand", requires_grad, "check_uniform_bounds")
    return _finish(arr, requires_grad)


def randn(*size, generator=None, out=None, dtype=None, device=None, requires_grad=False, **kw):
    """Standard normal samples (mean 0, std 1) of shape ``size``; dtype, generator and errors as
    :func:`rand`."""
    shape = _size(size, _factory_kwargs("randn", kw), "randn")
    _check_device(device, "randn")
    npd = _float_dtype_for("randn", dtype).np
    if out is not None and isinstance(out, Tensor) and out.requires_grad:
        # (torch's randn resizes out first, whatever its shape, and refuses that in any mode)
        raise RuntimeError("cannot resize variables that require grad (randn(out=...): out "
                           "requires grad; write into out.detach() instead)")
    arr = np.asarray(_normal(_np_generator(generator), shape, npd))
    if out is not None:
        return _write_out(out, arr, "randn", requires_grad, "normal_kernel_cpu")
    return _finish(arr, requires_grad)


def _int_arg(v, name):
    v = _number(v, name)
    if isinstance(v, float):
        if v != int(v):
            raise TypeError(f"{name} must be an integer, got {v}")
        v = int(v)
    return _builtin_int(v)


def _randint_values(g, low, high, shape, npd, name):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    if npd.kind in "iub":
        info = (0, 1) if npd.kind == "b" else (np.iinfo(npd).min, np.iinfo(npd).max)
        if low < info[0] or high - 1 > info[1]:
            raise RuntimeError(f"{name}(): range [{low}, {high}) is out of bounds for dtype "
                               f"{npd}")
    if -(1 << 63) <= low and high <= (1 << 63):
        vals = g.integers(low, high, shape, dtype=np.int64)
    else:
        raise RuntimeError(f"{name}(): bounds must fit in int64, got [{low}, {high})")
    return np.asarray(vals).astype(npd, copy=False)


def randint(*args, size=None, low=None, high=None, generator=None, out=None, dtype=None,
            device=None, requires_grad=False, **kw):
    """Uniform random integers in [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)`` (``low`` defaults to 0; keywords work too).

    dtype: int64 unless given (a floating dtype gives integral float values). Raises RuntimeError
    if low >= high, if the range does not fit the dtype, for a negative size, a non-CPU device
    or requires_grad on an integer dtype; TypeError for a bad signature."""
    _factory_kwargs("randint", {k: v for k, v in kw.items() if k != "size"})
    args = list(args)
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        size = args.pop()
    if len(args) == 2:
        if low is not None or high is not None:
            raise TypeError("randint() got multiple values for 'low'/'high'")
        low, high = args
    elif len(args) == 1:
        if high is not None:
            if low is not None:
                raise TypeError("randint() got multiple values for 'low'")
            low = args[0]
        else:
            high = args[0]
    elif args:
        raise TypeError(f"randint() takes (high, size) or (low, high, size), got {len(args) + 1} "
                        f"positional arguments")
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    low = 0 if low is None else _int_arg(low, "randint(): low")
    high = _int_arg(high, "randint(): high")
    shape = _size((size,), None, "randint")
    _check_device(device, "randint")
    npd = (_dtype.int64 if dtype is None else _dtype.to_dtype(dtype)).np
    arr = _randint_values(_np_generator(generator), low, high, shape, npd, "randint")
    if out is not None:
        return _write_out(out, arr, "randint", requires_grad)
    return _finish(arr, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, device=None, requires_grad=False,
             **kw):
    """A random permutation of 0..n-1 as a 1-D tensor (int64 unless ``dtype``). RuntimeError for
    negative n, a non-CPU device or requires_grad on an integer dtype."""
    _factory_kwargs("randperm", kw)
    _check_device(device, "randperm")
    n = operator.index(n)
    if n < 0:
        raise RuntimeError(f"randperm(): n must be non-negative, got {n}")
    npd = (_dtype.int64 if dtype is None else _dtype.to_dtype(dtype)).np
    arr = _np_generator(generator).permutation(n).astype(npd)
    if out is not None:
        return _write_out(out, arr, "randperm", requires_grad)
    return _finish(arr, requires_grad)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              memory_format=None, layout=None):
    """Uniform [0, 1) samples with ``input``'s shape and dtype (unless ``dtype``). The dtype must
    be floating (NotImplementedError, a RuntimeError, otherwise); TypeError if input is not a
    Tensor. Laid out as ``memory_format`` asks, with its errors, as :func:`zeros_like`."""
    shape, npd = _like(input, dtype, device, "rand_like", layout)
    _float_dtype_for("rand_like", _dtype.from_numpy_dtype(npd), "input dtype")
    arr = np.asarray(_uniform(_np_generator(generator), shape, npd))
    return _finish(_in_layout(arr, input, memory_format, "rand_like"), requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
               memory_format=None, layout=None):
    """Standard normal samples with ``input``'s shape and dtype; layout and errors as
    :func:`rand_like`."""
    shape, npd = _like(input, dtype, device, "randn_like", layout)
    _float_dtype_for("randn_like", _dtype.from_numpy_dtype(npd), "input dtype")
    arr = np.asarray(_normal(_np_generator(generator), shape, npd))
    return _finish(_in_layout(arr, input, memory_format, "randn_like"), requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False, memory_format=None, layout=None):
    """Random integers in [low, high) with ``input``'s shape and dtype (unless ``dtype``):
    ``randint_like(x, high)`` or ``randint_like(x, low, high)``. Layout as :func:`zeros_like`;
    errors as :func:`randint`."""
    if high is None:
        low, high = 0, low
    shape, npd = _like(input, dtype, device, "randint_like", layout)
    arr = _randint_values(_np_generator(generator), _int_arg(low, "randint_like(): low"),
                          _int_arg(high, "randint_like(): high"), shape, npd, "randint_like")
    return _finish(_in_layout(arr, input, memory_format, "randint_like"), requires_grad)


# ---------------------------------------------------------------------------------------------
# random sampling: Tensor.normal_ & co. (in place), normal, bernoulli, multinomial, poisson
# ---------------------------------------------------------------------------------------------
# The draws come from tapegrad's generators, so they are reproducible with manual_seed or
# generator= but never equal torch's numbers. Like torch, the in-place samplers are in-place ops
# (the in-place rules apply, the version is bumped) and, when the tensor has history, record a
# node whose gradient is zero (NormalBackward0, UniformBackward0, ...): the drawn values do not
# depend on the old ones.

from .autograd.function import ArrayFunction as _ArrayFunction  # noqa: E402

_NOT_DIFF_SAMPLE = ("Random values: the gradient is zero (torch records the same node). Streams "
                    "come from tapegrad's Generator (reproducible with tapegrad.manual_seed or "
                    "generator=) and differ from torch's.")


def _sample_node(node_name):
    """A Function for an in-place sampler: ``forward(x, draw, *tensors)`` returns
    ``draw(x, *tensors)`` (x only gives shape and dtype); every gradient is zero, as torch's."""

    class Sample(_ArrayFunction, name=node_name):
        @staticmethod
        def forward(ctx, x, draw, *tensors):
            ctx.metas = [(t.shape, t.dtype) for t in tensors]
            return draw(x, *tensors)

        @staticmethod
        def backward(ctx, g):
            extra = tuple(_make(np.zeros(s, d)) for s, d in ctx.metas)
            return (g * 0.0, None) + extra

    Sample.__name__ = Sample.__qualname__ = node_name.replace("Backward", "")
    Sample.__doc__ = f"An in-place random fill (node {node_name}); the gradient is zero."
    return Sample


_NormalFill = _sample_node("NormalBackward0")
_UniformFill = _sample_node("UniformBackward0")
_BernoulliFill = _sample_node("BernoulliBackward2")
_BernoulliFillTensor = _sample_node("BernoulliBackward1")
_ExponentialFill = _sample_node("ExponentialBackward0")
_GeometricFill = _sample_node("GeometricBackward0")
_LogNormalFill = _sample_node("LogNormalBackward0")
_CauchyFill = _sample_node("CauchyBackward0")
_RandomFill = _sample_node("RandomBackward2")          # random_()        (torch's names)
_RandomFillTo = _sample_node("RandomBackward1")        # random_(to)
_RandomFillFromTo = _sample_node("RandomBackward0")    # random_(from, to)


def _sname(npd):
    return _dtype.scalar_name(npd)


def _require_float(x, msg):
    """NotImplementedError (a RuntimeError) unless x is floating, with torch's kernel message."""
    if x._data.dtype.kind != "f":
        raise NotImplementedError(msg.format(_sname(x._data.dtype)))


def _float_param(v, fn, name):
    """A Python float from a number or one-element tensor; TypeError otherwise (torch's
    "argument 'mean' (position 1) must be float")."""
    if isinstance(v, (str, bytes)) or v is None or isinstance(v, complex):
        raise TypeError(f"{fn}(): argument '{name}' must be float, not {type(v).__name__}")
    try:
        return _builtin_float(_number(v, f"{fn}(): argument '{name}'"))
    except (TypeError, ValueError):
        raise TypeError(f"{fn}(): argument '{name}' must be float, not {type(v).__name__}") \
            from None


def _draw_dtype(npd):
    """The float dtype to draw in: float64 for float64 (and integer fills), float32 otherwise."""
    return np.float64 if npd == np.float64 or npd.kind != "f" else np.float32


def _run_sampler(x, F, opname, draw, tensors=()):
    from .ops.inplace import inplace
    if not isinstance(x, Tensor):
        raise TypeError(f"{opname}(): self must be a Tensor, not {type(x).__name__}")
    return inplace(x, F, (draw, *tensors), opname)


def _as_out(arr, npd):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(arr).astype(npd, copy=False)


def _tensor_normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill self in place with samples from N(mean, std**2); returns self.

    self must be floating (NotImplementedError, a RuntimeError, otherwise) and keeps its shape and
    dtype. RuntimeError if std < 0 or NaN; TypeError for non-number mean/std. The in-place rules
    apply (RuntimeError for a leaf that requires grad while grad mode is on: use no_grad) and the
    version is bumped. """
    mean = _float_param(mean, "normal_", "mean")
    std = _float_param(std, "normal_", "std")
    _require_float(self, "\"normal_kernel_cpu\" not implemented for '{}'")
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    g = _np_generator(generator)

    def draw(x):
        # float64 draws (as nn.init always did): the same stream for every float dtype
        z = g.standard_normal(x.shape)
        with np.errstate(invalid="ignore", over="ignore"):
            return _as_out(mean + std * z, x.dtype)
    return _run_sampler(self, _NormalFill, "normal_", draw)


def _from_to(args, kw, fn, defaults):
    """Parse torch's (from, to) arguments, positional or as the keywords 'from'/'to'."""
    if len(args) > 2:
        raise TypeError(f"{fn}() takes from 0 to 2 positional arguments but {len(args)} were "
                        f"given")
    vals = list(args) + [None] * (2 - len(args))
    for i, k in enumerate(("from", "to")):
        if k in kw:
            if i < len(args):
                raise TypeError(f"{fn}() got multiple values for argument '{k}'")
            vals[i] = kw.pop(k)
    if kw:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(kw))}'")
    return [d if v is None else v for v, d in zip(vals, defaults)], vals


def _tensor_uniform_(self, *args, generator=None, **kw):
    """``uniform_(from=0, to=1, *, generator=None)``: fill self in place with samples from
    U(from, to); returns self.

    self must be floating (NotImplementedError otherwise); RuntimeError if from > to, if a bound
    is out of range for self's dtype, or if to - from overflows it; from == to fills with from.
    In-place rules and version bump as :meth:`Tensor.normal_`. """
    (lo, hi), _ = _from_to(args, kw, "uniform_", (0.0, 1.0))
    lo = _float_param(lo, "uniform_", "from")
    hi = _float_param(hi, "uniform_", "to")
    _require_float(self, "\"check_uniform_bounds\" not implemented for '{}'")
    npd = self._data.dtype
    fmax = _builtin_float(np.finfo(npd).max)
    tname = {"float16": "c10::Half", "float32": "float", "float64": "double"}[npd.name]
    for v, k in ((lo, "from"), (hi, "to")):
        if not -fmax <= v <= fmax:
            raise RuntimeError(f"{k} is out of bounds for {tname}")
    if lo > hi:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={lo:g}"
                           f" > to={hi:g}")
    if hi - lo > fmax:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{tname.title()}>::"
                           f"max(), but found to={hi:g} and from={lo:g} which result in to-from "
                           f"to exceed the limit")
    g = _np_generator(generator)

    def draw(x):
        u = g.random(x.shape)   # float64 draws, the stream nn.init always used
        r = _as_out(lo + (hi - lo) * u, x.dtype)
        if lo < hi:   # rounding may reach `to`: keep the range half-open
            top = np.nextafter(np.array(hi, x.dtype), np.array(-np.inf, x.dtype))
            r = np.minimum(r, top)
        return r
    return _run_sampler(self, _UniformFill, "uniform_", draw)


def _bernoulli_probs(p, fn):
    """Check a probability tensor: floating (NotImplementedError) with values in [0, 1]."""
    if p._data.dtype.kind != "f":
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                  f"'{_sname(p._data.dtype)}'")
    a = p._data
    if a.size and not ((a >= 0) & (a <= 1)).all():
        raise RuntimeError(f"Expected p_in >= 0 && p_in <= 1 to be true, but got false. ({fn}: "
                           f"every probability must be in [0, 1]; NaN is rejected too)")


def _tensor_bernoulli_(self, p=0.5, *, generator=None):
    """Fill self in place with 0/1 draws, 1 with probability ``p``; returns self.

    ``p``: a float in [0, 1] (RuntimeError otherwise), or a floating tensor of probabilities that
    broadcasts to self's shape (RuntimeError for values outside [0, 1] or a shape that does not
    broadcast, NotImplementedError for an integer p). self may have any dtype (bool and integer
    tensors get False/True, 0/1). In-place rules and version bump as :meth:`Tensor.normal_`.
    """
    g = _np_generator(generator)
    if isinstance(p, Tensor):
        _bernoulli_probs(p, "bernoulli_")
        try:
            if np.broadcast_shapes(p._data.shape, self._data.shape) != self._data.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"bernoulli_: the shape of p {list(p._data.shape)} must "
                               f"broadcast to self's shape {list(self._data.shape)}") from None

        def draw_t(x, pa):
            return _as_out(g.random(x.shape) < pa, x.dtype)
        return _run_sampler(self, _BernoulliFillTensor, "bernoulli_", draw_t, (p,))
    p = _float_param(p, "bernoulli_", "p")
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")

    def draw(x):
        return _as_out(g.random(x.shape) < p, x.dtype)
    return _run_sampler(self, _BernoulliFill, "bernoulli_", draw)


def _tensor_exponential_(self, lambd=1.0, *, generator=None):
    """Fill self in place with samples from the exponential distribution of rate ``lambd``
    (density lambd * exp(-lambd * x)); returns self. self must be floating (RuntimeError
    otherwise, as torch); RuntimeError unless lambd > 0 (lambd = inf gives zeros). In-place rules
    and version bump as :meth:`Tensor.normal_`. """
    lambd = _float_param(lambd, "exponential_", "lambd")
    if self._data.dtype.kind != "f":
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{_sname(self._data.dtype)}")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    g = _np_generator(generator)

    def draw(x):
        e = g.standard_exponential(x.shape, dtype=_draw_dtype(x.dtype))
        return _as_out(e / lambd, x.dtype)
    return _run_sampler(self, _ExponentialFill, "exponential_", draw)


def _tensor_geometric_(self, p, *, generator=None):
    """Fill self in place with geometric samples: the number of Bernoulli(p) trials up to and
    including the first success (1, 2, 3, ...); returns self. RuntimeError unless 0 < p < 1;
    self may be floating or integer (NotImplementedError for bool). In-place rules and version
    bump as :meth:`Tensor.normal_`. """
    p = _float_param(p, "geometric_", "p")
    if self._data.dtype.kind == "b":
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    g = _np_generator(generator)

    def draw(x):
        return _as_out(g.geometric(p, x.shape), x.dtype)
    return _run_sampler(self, _GeometricFill, "geometric_", draw)


def _tensor_log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill self in place with exp(N(mean, std**2)) samples (``mean``/``std`` are of the
    underlying normal, defaults 1 and 2 as torch); returns self. self must be floating
    (NotImplementedError otherwise); RuntimeError unless std > 0. In-place rules and version
    bump as :meth:`Tensor.normal_`. """
    mean = _float_param(mean, "log_normal_", "mean")
    std = _float_param(std, "log_normal_", "std")
    _require_float(self, "\"log_normal_cpu\" not implemented for '{}'")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    g = _np_generator(generator)

    def draw(x):
        with np.errstate(over="ignore"):
            return _as_out(np.exp(mean + std * g.standard_normal(x.shape)), x.dtype)
    return _run_sampler(self, _LogNormalFill, "log_normal_", draw)


def _tensor_cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill self in place with Cauchy(median, sigma) samples; returns self. self must be floating
    (RuntimeError otherwise, as torch); RuntimeError unless sigma > 0. In-place rules and version
    bump as :meth:`Tensor.normal_`. """
    median = _float_param(median, "cauchy_", "median")
    sigma = _float_param(sigma, "cauchy_", "sigma")
    if self._data.dtype.kind != "f":
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {self._data.dtype}")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    g = _np_generator(generator)

    def draw(x):
        with np.errstate(over="ignore"):
            return _as_out(median + sigma * g.standard_cauchy(x.shape), x.dtype)
    return _run_sampler(self, _CauchyFill, "cauchy_", draw)


_RANDOM_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                      "uint8": "unsigned char", "int8": "signed char", "int16": "short",
                      "int32": "int", "int64": "long", "bool": "bool"}
_FLOAT_DIGITS = {"float16": 11, "float32": 24, "float64": 53}


def _tensor_random_(self, *args, generator=None, **kw):
    """Fill self in place with random integers (stored in self's dtype); returns self.

    ``random_()``: [0, 2**mantissa] for floating dtypes (2**24 for float32, 2**53 for float64,
    2**11 for float16), [0, max] for integer dtypes, {False, True} for bool.
    ``random_(to)``: [0, to). ``random_(from, to)``: [from, to) (``to=None``: from up to the
    ``random_()`` limit). 'from' and 'to' work as keywords. RuntimeError if from >= to or a
    bound is out of range for self's dtype; TypeError for non-integer bounds. A float range
    past 2**mantissa warns (UserWarning), as torch. In-place rules and version bump as
    :meth:`Tensor.normal_`. """
    only_to = (len(args) == 1 and "to" not in kw and "from" not in kw) or \
        (not args and "to" in kw and "from" not in kw)
    nothing = not args and not kw
    _, raw = _from_to(args, kw, "random_", (None, None))
    frm, to = raw
    if only_to and args:
        frm, to = None, args[0]
    npd = self._data.dtype
    for v in (frm, to):
        if isinstance(v, (_builtin_float, np.floating)):
            raise TypeError(f"random_(): 'from' and 'to' must be integers, got {v!r}")
    if npd.kind == "f":
        top = 1 << _FLOAT_DIGITS[npd.name]
        lo_lim, hi_lim = -top, top
    elif npd.kind == "b":
        lo_lim, hi_lim = 0, 1
    else:
        info = np.iinfo(npd)
        lo_lim, hi_lim = _builtin_int(info.min), _builtin_int(info.max)
    tname = _RANDOM_TYPE_NAMES[npd.name]
    F = _RandomFill if nothing else _RandomFillTo if only_to else _RandomFillFromTo
    frm = 0 if frm is None else _int_arg(frm, "random_(): from")
    if to is None:   # random_() or random_(from, None): up to the dtype's limit, inclusive
        if frm > hi_lim:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or equal "
                               f"to 'to' casted to dtype, but got from={frm} > to={hi_lim}")
        hi = hi_lim + 1
    else:
        hi = _int_arg(to, "random_(): to")
        if frm >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={frm} "
                               f">= to={hi}")
        if npd.kind == "f":
            if not lo_lim <= hi - 1 <= hi_lim or not lo_lim <= frm <= hi_lim:
                fmax = np.finfo(npd).max
                if hi - 1 > fmax or frm < -fmax:
                    raise RuntimeError(f"to - 1 is out of bounds for {tname}")
                warnings.warn(f"to - 1 is out of bounds [-(2^{_FLOAT_DIGITS[npd.name]}), "
                              f"2^{_FLOAT_DIGITS[npd.name]}]. Due to precision limitations "
                              f"{tname} can support discrete uniform distribution only within "
                              f"this range.", UserWarning, stacklevel=user_stacklevel())
        else:
            if frm < lo_lim:
                raise RuntimeError(f"from is out of bounds for {tname}")
            if hi - 1 > hi_lim:
                raise RuntimeError(f"to - 1 is out of bounds for {tname}")
    if frm < -(1 << 63) or hi > (1 << 63):
        raise RuntimeError(f"random_(): bounds must fit in int64, got [{frm}, {hi})")
    g = _np_generator(generator)

    def draw(x):
        return _as_out(g.integers(frm, hi - 1, x.shape, dtype=np.int64, endpoint=True), x.dtype)
    return _run_sampler(self, F, "random_", draw)


# ---- out-of-place samplers -------------------------------------------------------------------
class _NormalTensorFloat(_ArrayFunction, name="NormalBackward1"):
    """normal(Tensor mean, float std). Gradient: zero (as torch)."""

    @staticmethod
    def forward(ctx, mean, std, g):
        z = g.standard_normal(mean.shape, dtype=_draw_dtype(mean.dtype))
        return _as_out(mean + std * z, mean.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.0, None, None


class _NormalFloatTensor(_ArrayFunction, name="NormalBackward2"):
    """normal(float mean, Tensor std). Gradient: zero (as torch)."""

    @staticmethod
    def forward(ctx, mean, std, g):
        z = g.standard_normal(std.shape, dtype=_draw_dtype(std.dtype))
        return _as_out(mean + std * z, std.dtype)

    @staticmethod
    def backward(ctx, grad):
        return None, grad * 0.0, None


class _NormalTensorTensor(_ArrayFunction, name="NormalBackward3"):
    """normal(Tensor mean, Tensor std), broadcast; the result has mean's dtype. Gradient: zero
    to both (summed to each input's shape by the engine)."""

    @staticmethod
    def forward(ctx, mean, std, g):
        shape = np.broadcast_shapes(mean.shape, std.shape)
        z = g.standard_normal(shape, dtype=_draw_dtype(mean.dtype))
        return _as_out(mean + std * z, mean.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.0, grad * 0.0, None


def _normal_signature_error(mean, std, size):
    got = ", ".join(type(a).__name__ for a in (mean, std, size) if a is not None)
    return TypeError(
        f"normal() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:\n * (Tensor mean, Tensor std, *, Generator generator = None, Tensor out = None)\n"
        f" * (Tensor mean, float std = 1, *, Generator generator = None, Tensor out = None)\n"
        f" * (float mean, Tensor std, *, Generator generator = None, Tensor out = None)\n"
        f" * (float mean, float std, tuple of ints size, *, Generator generator = None, "
        f"Tensor out = None, dtype dtype = None, device device = None, bool requires_grad = "
        f"False)")


def _is_num(v):
    return isinstance(v, (_builtin_int, _builtin_float, np.integer, np.floating)) and \
        not isinstance(v, (_builtin_bool, np.bool_))


def normal(mean, std=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Samples from N(mean, std**2), torch's four overloads:

    - ``normal(mean: Tensor, std: Tensor)``: shapes broadcast; the result has mean's dtype.
    - ``normal(mean: Tensor, std: float = 1.0)``: mean's shape and dtype.
    - ``normal(mean: float, std: Tensor)``: std's shape and dtype.
    - ``normal(mean: float, std: float, size)``: shape ``size``, the default dtype (or ``dtype``,
      which must be floating: NotImplementedError); ``requires_grad`` and ``device`` as
      :func:`randn`.

    The tensor overloads record NormalBackward1/2/3 when an input requires grad; their gradient
    is zero, as torch's. Raises TypeError for any other combination (e.g. two floats without
    ``size``, a tensor with ``size``); RuntimeError for std < 0 (or NaN) and for shapes that do not
    broadcast; NotImplementedError (a RuntimeError) for integer mean/std tensors whose result
    would be integer. ``out=`` receives the result. Draws from ``generator`` (default: the default
    generator): reproducible with :func:`manual_seed`, but not torch's numbers."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    g = _np_generator(generator)
    check_layout(layout, "normal")
    if not mt and not st:
        if std is None or size is None or not _is_num(mean) or not _is_num(std):
            raise _normal_signature_error(mean, std, size)
        if isinstance(size, (_builtin_int, np.integer)):
            raise _normal_signature_error(mean, std, size)
        shape = _size((size,), None, "normal")
        _check_device(device, "normal")
        npd = _float_dtype_for("normal", dtype).np
        if dtype is not None and not _dtype.to_dtype(dtype).is_floating_point:
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                      f"'{_sname(npd)}'")
        std = _builtin_float(std)
        if not std >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        z = g.standard_normal(shape, dtype=_draw_dtype(npd))
        arr = _as_out(_builtin_float(mean) + std * z, npd)
        if out is not None:
            return _write_out(out, arr, "normal", requires_grad, "normal_kernel_cpu")
        return _finish(arr, requires_grad)
    if size is not None or dtype is not None or requires_grad:
        raise _normal_signature_error(mean, std, size)
    _check_device(device, "normal")
    if mt and std is None:
        std = 1.0
    if mt and st:
        if mean._data.dtype.kind != "f":
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                      f"'{_sname(mean._data.dtype)}'")
        s = std._data
        if s.size and not (s >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        try:
            np.broadcast_shapes(mean._data.shape, s.shape)
        except ValueError:
            from .ops._util import broadcast_error
            raise broadcast_error("normal", mean, std) from None
        r = _NormalTensorTensor.apply(mean, std, g)
    elif mt:
        if not _is_num(std):
            raise _normal_signature_error(mean, std, size)
        if mean._data.dtype.kind != "f":
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                      f"'{_sname(mean._data.dtype)}'")
        std = _builtin_float(std)
        if not std >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        r = _NormalTensorFloat.apply(mean, std, g)
    else:
        if not _is_num(mean):
            raise _normal_signature_error(mean, std, size)
        if std._data.dtype.kind != "f":
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                      f"'{_sname(std._data.dtype)}'")
        s = std._data
        if s.size and not (s >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        r = _NormalFloatTensor.apply(_builtin_float(mean), std, g)
    if out is not None:
        return _write_out(out, r._data, "normal", kernel="normal_kernel_cpu")
    return r


class _BernoulliTensor(_ArrayFunction, name="BernoulliBackward0"):
    """bernoulli(input): 1 with probability input. Gradient: zero (as torch)."""

    @staticmethod
    def forward(ctx, p, g):
        return _as_out(g.random(p.shape) < p, p.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.0, None


class _BernoulliFloat(_ArrayFunction, name="NotImplemented"):
    """bernoulli(input, p): input's shape and dtype, 1 with probability p. Not differentiable:
    backward raises, as torch's NotImplemented node."""

    @staticmethod
    def forward(ctx, x, p, g):
        return _as_out(g.random(x.shape) < p, x.dtype)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for 'bernoulli' is not implemented.")


def _check_input(input, fn):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draw 0/1 values: ``bernoulli(input)`` gives 1 with probability ``input`` (a floating
    tensor of probabilities in [0, 1]; the result has its shape and dtype);
    ``bernoulli(input, p)`` gives 1 with probability ``p`` (a float in [0, 1]) with input's shape
    and dtype (any dtype).

    Raises TypeError if input is not a Tensor or p is a Tensor (torch has no such overload);
    NotImplementedError (a RuntimeError) for an integer/bool input without p; RuntimeError for
    probabilities outside [0, 1] (NaN included). With input requiring grad, ``bernoulli(input)``
    records BernoulliBackward0 (zero gradient) and ``bernoulli(input, p)`` a node whose backward
    raises, as torch. ``out=`` receives the result. Draws from ``generator``: reproducible with
    :func:`manual_seed`, but not torch's numbers."""
    _check_input(input, "bernoulli")
    g = _np_generator(generator)
    if p is None:
        _bernoulli_probs(input, "bernoulli")
        r = _BernoulliTensor.apply(input, g)
    else:
        if isinstance(p, Tensor):
            raise TypeError("bernoulli() received an invalid combination of arguments - got "
                            "(Tensor, Tensor): expected (Tensor input, *, Generator generator) "
                            "or (Tensor input, float p, *, Generator generator)")
        p = _float_param(p, "bernoulli", "p")
        if not 0.0 <= p <= 1.0:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        r = _BernoulliFloat.apply(input, p, g)
    if out is not None:
        return _write_out(out, r._data, "bernoulli")
    return r


def _tensor_bernoulli(self, p=None, *, generator=None):
    """``Tensor.bernoulli(p=None, *, generator=None)``: :func:`tapegrad.bernoulli` of self."""
    return bernoulli(self, p, generator=generator)


class _Poisson(_ArrayFunction, name="PoissonBackward0"):
    """poisson(rates). Gradient: zero (as torch)."""

    @staticmethod
    def forward(ctx, rates, g):
        return _as_out(g.poisson(rates.astype(np.float64)), rates.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0.0, None


def poisson(input, generator=None):
    """Poisson samples with rates ``input`` (a floating tensor); the result has input's shape and
    dtype. Raises TypeError if input is not a Tensor; NotImplementedError (a RuntimeError) for an
    integer/bool input; RuntimeError for a negative or NaN rate, and (unlike torch, which returns
    garbage) for a rate too large to sample (above about 1e19, inf included). Records
    PoissonBackward0 (zero gradient) when input requires grad. Draws from ``generator``:
    reproducible with :func:`manual_seed`, but not torch's numbers."""
    _check_input(input, "poisson")
    a = input._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_sname(a.dtype)}'")
    if a.size and not (a >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if a.size and a.max() > 1e19:
        raise RuntimeError(f"poisson: rate {a.max()} is too large to sample (tapegrad draws with "
                           f"NumPy, which takes rates up to about 1e19)")
    return _Poisson.apply(input, _np_generator(generator))


def _num_samples(n):
    if isinstance(n, (_builtin_bool, np.bool_)) or isinstance(n, (_builtin_float, np.floating)):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(n).__name__}")
    if isinstance(n, Tensor):
        if n._data.size != 1 or n._data.dtype.kind not in "iu":
            raise TypeError("multinomial(): argument 'num_samples' (position 2) must be int, "
                            "not Tensor")
        return _builtin_int(n._data.reshape(()).item())
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(n).__name__}") from None


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Draw category indices with probabilities proportional to the rows of ``input``.

    input: a 1-D tensor of k non-negative weights (result shape ``[num_samples]``) or 2-D
    ``[m, k]`` (one draw per row, result ``[m, num_samples]``); weights need not sum to 1. The
    result is int64 and never requires grad. Without replacement each row's indices are
    distinct; zero-weight categories come only after every positive one is taken (as torch).

    Raises TypeError if input is not a Tensor or num_samples is not an int; RuntimeError if input
    is not 1-D or 2-D ("prob_dist must be 1 or 2 dim"), is not floating, num_samples <= 0,
    num_samples > k without replacement, k > 2**24, a weight is negative/inf/NaN, or a row sums
    to 0. ``out=`` receives the result. Draws from ``generator``: reproducible with
    :func:`manual_seed`, but not torch's numbers."""
    _check_input(input, "multinomial")
    n = _num_samples(num_samples)
    a = input._data
    if a.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if a.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_sname(a.dtype)}")
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = a.shape[-1]
    if not replacement and n > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if k > (1 << 24):
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = a.reshape(-1, k).astype(np.float64)
    if rows.shape[0] and k == 0:
        raise RuntimeError("multinomial: the input has no categories (its last dim is 0)")
    if rows.size and not (np.isfinite(rows).all() and (rows >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if rows.shape[0] and not (rows.sum(axis=1) > 0).all():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _np_generator(generator)
    res = np.empty((rows.shape[0], n), dtype=np.int64)
    if replacement:
        for i, w in enumerate(rows):
            cdf = np.cumsum(w)
            u = g.random(n) * cdf[-1]
            idx = np.searchsorted(cdf, u, side="right")
            res[i] = np.minimum(idx, np.flatnonzero(w)[-1])
    else:
        # exponential race: category j wins at time E_j / w_j; the n earliest are a draw without
        # replacement (zero weights never win before a positive one)
        with np.errstate(divide="ignore"):
            keys = g.standard_exponential(rows.shape) / rows
        order = np.argsort(keys, axis=1, kind="stable")
        res[:] = order[:, :n]
    res = res.reshape(a.shape[:-1] + (n,))
    if out is not None:
        return _write_out(out, res, "multinomial")
    return _make(res)


def _tensor_multinomial(self, num_samples, replacement=False, *, generator=None):
    """``Tensor.multinomial(num_samples, replacement=False, *, generator=None)``:
    :func:`tapegrad.multinomial` of self."""
    return multinomial(self, num_samples, replacement, generator=generator)


def _register_sampling_methods():
    from .ops._registry import op
    for name, fn in (("normal_", _tensor_normal_), ("uniform_", _tensor_uniform_),
                     ("bernoulli_", _tensor_bernoulli_), ("exponential_", _tensor_exponential_),
                     ("geometric_", _tensor_geometric_), ("log_normal_", _tensor_log_normal_),
                     ("cauchy_", _tensor_cauchy_), ("random_", _tensor_random_),
                     ("bernoulli", _tensor_bernoulli), ("multinomial", _tensor_multinomial)):
        fn.__name__ = name
        fn.__qualname__ = f"Tensor.{name}"
        if name.endswith("_"):
            fn.__doc__ = fn.__doc__.rstrip() + " " + _NOT_DIFF_SAMPLE
        op(name, namespace=False)(fn)


_register_sampling_methods()
