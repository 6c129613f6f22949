"""``tapegrad.device``: torch's device object.

tapegrad computes on the CPU only. A device of another type (``device('cuda')``) can be made, as
in torch, so code such as ``device('cuda' if cuda.is_available() else 'cpu')`` runs unchanged; using
it (``tensor(..., device=...)``, ``.to(...)``) raises RuntimeError.
"""
from __future__ import annotations

import builtins

__all__ = ["device"]

_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
          "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    """``device('cpu')``, ``device('cpu:0')``, ``device('cpu', 0)`` or ``device(other_device)``.

    ``.type`` is the device type and ``.index`` the index given (else None); ``str`` gives
    ``'cpu'`` (``'cpu:0'`` with an index) and ``repr`` ``device(type='cpu')``, as in torch.
    RuntimeError for an unknown device type or a malformed string, TypeError for a non-string.
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's argument name
        if isinstance(type, device):
            self._type, self._index = type._type, type._index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({builtins.type(type).__name__}), but expected one of:\n"
                            f" * (tapegrad.device device)\n * (str type, int index = -1)")
        kind, sep, idx = type.partition(":")
        if kind not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                               f"device string: {type}")
        if sep:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {type}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if index is not None:
            index = builtins.int(index)
            if index == -1:
                index = None
            elif index < 0:
                raise RuntimeError(f"Device index must be -1 or non-negative, got {index}")
        self._type, self._index = kind, index

    @property
    def type(self):  # noqa: A003
        return self._type

    @property
    def index(self):
        return self._index

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __hash__(self):
        return hash((self._type, self._index))

    def __reduce__(self):
        return (device, (self._type, self._index))


CPU = device("cpu")
