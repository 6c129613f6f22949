"""Parameter: a Tensor that a Module registers as one of its trainable parameters."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _init
from ..autograd.graph import new_version_counter

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one as a Module attribute registers it, so
    it shows up in ``parameters()`` and ``state_dict()``.

    ``Parameter(data=None, requires_grad=True)``: shares ``data``'s values and version counter
    (like torch, it is a new leaf cut from any graph ``data`` was part of); ``data=None`` gives an
    empty float tensor. RuntimeError for ``requires_grad=True`` on a non-floating tensor.
    """

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            from .._dtype import get_default_dtype
            arr = np.empty((0,), get_default_dtype().np)
            vc = None
        elif isinstance(data, Tensor):
            arr = data._data
            vc = data._vc
            if vc is None:
                vc = data._vc = new_version_counter()
        else:
            raise TypeError(f"Parameter(): data must be a Tensor or None, not "
                            f"{type(data).__name__} (wrap arrays with tapegrad.tensor first)")
        _init(self, arr)
        if vc is not None:
            self._vc = vc
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        from .._tensor import _make
        result = type(self)(_make(self._data.copy()), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return Tensor.__reduce_ex__(self, proto)
