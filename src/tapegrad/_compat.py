"""The parts of torch's top-level API that ported training scripts touch but that have nothing to
differentiate: the legacy typed constructors (``FloatTensor`` ...), ``finfo``/``iinfo``, thread
and determinism settings, and ``backends``. Each behaves as torch does on a CPU-only machine.
"""
from __future__ import annotations

import os
import types

import numpy as np

from . import _dtype
from ._tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "finfo", "iinfo", "set_num_threads",
           "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "backends"]


class _LegacyType(type):
    """The metaclass of ``FloatTensor`` and friends: calling one builds a Tensor of its dtype
    with ``Tensor``'s legacy arguments, and ``isinstance(x, FloatTensor)`` asks for x's dtype."""

    def __call__(cls, *args, **kwargs):
        if "dtype" in kwargs:
            raise TypeError(f"new() received an invalid combination of arguments: {cls.__name__} "
                            f"fixes its dtype ({cls.dtype}); use tapegrad.tensor(data, dtype=...)")
        return Tensor(*args, dtype=cls.dtype, **kwargs)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np

    def __repr__(cls):
        return f"<class 'tapegrad.{cls.__name__}'>"


def _legacy(name, dt):
    return _LegacyType(name, (), {"dtype": dt, "__doc__": (
        f"Legacy constructor of {dt} tensors: ``{name}(data)``, ``{name}(*sizes)`` (uninitialised "
        f"values) or ``{name}()`` (empty), as ``tapegrad.Tensor``; ``isinstance(x, {name})`` is "
        f"True for a tensor of that dtype, and ``x.type({name})`` converts to it.")})


FloatTensor = _legacy("FloatTensor", _dtype.float32)
DoubleTensor = _legacy("DoubleTensor", _dtype.float64)
HalfTensor = _legacy("HalfTensor", _dtype.float16)
LongTensor = _legacy("LongTensor", _dtype.int64)
IntTensor = _legacy("IntTensor", _dtype.int32)
ShortTensor = _legacy("ShortTensor", _dtype.int16)
CharTensor = _legacy("CharTensor", _dtype.int8)
ByteTensor = _legacy("ByteTensor", _dtype.uint8)
BoolTensor = _legacy("BoolTensor", _dtype.bool)


def _np_dtype(dt, kind, what):
    if dt is None:
        dt = _dtype.get_default_dtype()
    if not isinstance(dt, _dtype.dtype):
        raise TypeError(f"{what}(): argument 'type' must be tapegrad.dtype, not "
                        f"{type(dt).__name__}")
    if dt.np.kind not in kind:
        raise TypeError(f"{what}() requires a {'floating point' if kind == 'f' else 'integer'} "
                        f"input type. Use {'iinfo' if kind == 'f' else 'finfo'} to handle "
                        f"'{dt}'")
    return dt.np


class finfo:
    """Machine limits of a floating dtype (default: the default dtype), as ``torch.finfo``:
    ``bits``, ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` and
    ``dtype`` (its name). TypeError for an integer or bool dtype."""

    def __init__(self, type=None):  # noqa: A002 - torch's name
        info = np.finfo(_np_dtype(type, "f", "finfo"))
        self.bits = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(info.resolution)
        self.dtype = info.dtype.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer (or bool) dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min`` and
    ``dtype`` (its name). TypeError for a floating dtype."""

    def __init__(self, type):  # noqa: A002 - torch's name
        npd = _np_dtype(type, "iub", "iinfo")
        if npd == np.bool_:
            self.bits, self.min, self.max = 8, 0, 1
        else:
            info = np.iinfo(npd)
            self.bits, self.min, self.max = info.bits, int(info.min), int(info.max)
        self.dtype = npd.name if npd != np.bool_ else "bool"

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


_threads = {"intra": os.cpu_count() or 1, "inter": os.cpu_count() or 1,
            "deterministic": False, "warn_only": False}


def set_num_threads(n):
    """Recorded for get_num_threads(); tapegrad's speed does not depend on it (NumPy's BLAS reads
    OPENBLAS_NUM_THREADS / OMP_NUM_THREADS at its own start). ValueError for n < 1, as torch."""
    if not isinstance(n, int) or n < 1:
        raise ValueError("set_num_threads expects a positive integer")
    _threads["intra"] = n


def get_num_threads():
    """What set_num_threads() last set (the CPU count to begin with)."""
    return _threads["intra"]


def set_num_interop_threads(n):
    """Recorded for get_num_interop_threads(); tapegrad runs no inter-op threads."""
    if not isinstance(n, int) or n < 1:
        raise ValueError("set_num_interop_threads expects a positive integer")
    _threads["inter"] = n


def get_num_interop_threads():
    """What set_num_interop_threads() last set (the CPU count to begin with)."""
    return _threads["inter"]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded for are_deterministic_algorithms_enabled(): every tapegrad op is deterministic
    already (one thread of NumPy per op; no atomics), so nothing changes. TypeError for a
    non-bool mode, as torch."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got "
                        f"{type(mode).__name__}")
    _threads["deterministic"], _threads["warn_only"] = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    """The mode use_deterministic_algorithms() last set (False to begin with)."""
    return _threads["deterministic"]


def _flags_module(name, doc, **attrs):
    m = types.ModuleType(name, doc)
    m.__dict__.update(attrs)
    return m


backends = _flags_module(
    "tapegrad.backends", "torch.backends' switches, settable and without effect (no cuDNN, MPS "
                         "or MKL-DNN here).",
    cudnn=_flags_module("tapegrad.backends.cudnn", "No cuDNN: the flags are kept, unused.",
                        enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                        is_available=lambda: False, version=lambda: None),
    mps=_flags_module("tapegrad.backends.mps", "No MPS device.", is_available=lambda: False,
                      is_built=lambda: False),
    cuda=_flags_module("tapegrad.backends.cuda", "No CUDA.", is_built=lambda: False,
                       matmul=_flags_module("tapegrad.backends.cuda.matmul", "unused",
                                            allow_tf32=False)),
)
