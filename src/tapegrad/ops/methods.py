"""Tensor methods that are not ops: the ``new_*`` factories, ``type()``, ``cpu()``.

``new_zeros``/``new_ones``/``new_empty``/``new_full``/``new_tensor`` make a tensor with this one's
dtype (unless ``dtype=`` is given), as in torch; the result is a leaf.
"""
from __future__ import annotations

import warnings

from .. import _dtype
from .._memory_format import check_layout
from .._tensor import Tensor
from ..autograd.graph import user_stacklevel

_LEGACY = {k: v + "Tensor" for k, v in _dtype.SCALAR_NAMES.items()}
_FROM_LEGACY = {v: k for k, v in _LEGACY.items()}


def _factories():
    from .. import _factories as f
    return f


def _new_filled(name):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
        check_layout(layout, f"new_{name}")
        f = getattr(_factories(), name)
        return f(*size, dtype=self.dtype if dtype is None else dtype, device=device,
                 requires_grad=requires_grad)
    method.__name__ = f"new_{name}"
    method.__qualname__ = f"Tensor.new_{name}"
    method.__doc__ = (f"A tensor of ``size`` filled like ``{name}()``, with this tensor's dtype "
                      f"unless ``dtype`` is given.")
    return method


Tensor.new_zeros = _new_filled("zeros")
Tensor.new_ones = _new_filled("ones")
Tensor.new_empty = _new_filled("empty")


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype unless
    ``dtype`` is given (the value is cast to it, as torch)."""
    check_layout(layout, "new_full")
    return _factories().full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                             device=device, requires_grad=requires_grad)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data``, with this tensor's dtype unless ``dtype`` is
    given. A Tensor ``data`` is copied (torch warns to use ``detach().clone()`` instead; so do
    we)."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=user_stacklevel())
        data = data._data   # the array, not the Tensor (tensor() would warn again); it copies
    return _factories().tensor(data, dtype=self.dtype if dtype is None else dtype,
                               device=device, requires_grad=requires_grad)


Tensor.new_full = new_full
Tensor.new_tensor = new_tensor


def type(self, dtype=None, non_blocking=False, **kwargs):  # noqa: A001 - torch's name
    """``type()``: torch's type string, e.g. ``'torch.FloatTensor'`` (kept in torch's spelling so
    code comparing against those strings runs unchanged). ``type(dtype)``,
    ``type(tapegrad.DoubleTensor)`` or ``type('torch.DoubleTensor')``: ``self.to(dtype)`` (self
    when the dtype is unchanged)."""
    if dtype is None:
        return "torch." + _LEGACY.get(self._data.dtype.name, "Tensor")
    if not isinstance(dtype, (str, _dtype.dtype)) and isinstance(getattr(dtype, "dtype", None),
                                                                 _dtype.dtype):
        dtype = dtype.dtype     # a legacy type: tapegrad.FloatTensor, ...
    if isinstance(dtype, str):
        prefix, _, name = dtype.rpartition(".")
        if prefix not in ("torch", "tapegrad") or name not in _FROM_LEGACY:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(_dtype, _FROM_LEGACY[name])
    return self.to(dtype)


Tensor.type = type


def cpu(self, memory_format=None):
    """self: tapegrad tensors always live on the CPU."""
    return self


Tensor.cpu = cpu


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """AssertionError, as torch built without CUDA: tapegrad computes on the CPU only."""
    raise AssertionError("Torch not compiled with CUDA enabled (tapegrad computes on the CPU "
                         "only; keep tensors on 'cpu')")


Tensor.cuda = cuda
