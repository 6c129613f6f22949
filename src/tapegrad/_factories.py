"""Tensor factories (placeholder until the factories land)."""
import numpy as np

from . import _dtype
from ._tensor import _make

__all__ = ["tensor"]


def _to_array(data, dtype=None):
    arr = np.asarray(data)
    if dtype is None:
        if arr.dtype.kind == "f" and not isinstance(data, np.ndarray):
            arr = arr.astype(_dtype.get_default_dtype().np)
        elif arr.dtype.kind in "iu" and not isinstance(data, np.ndarray):
            arr = arr.astype(np.int64)
    else:
        arr = arr.astype(_dtype.to_dtype(dtype).np)
    return np.array(arr)


def tensor(data, dtype=None, device=None, requires_grad=False):
    t = _make(_to_array(data, dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t
