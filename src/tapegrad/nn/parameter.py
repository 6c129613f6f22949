"""Parameter: a Tensor that a Module registers as one of its trainable parameters."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _init, _make, _user_attrs
from ..autograd.graph import version_counter

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
            vc = version_counter(data)
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

    def __copy__(self):
        """``copy.copy``, as torch: a Parameter sharing this one's storage, with its
        requires_grad and a shallow copy of its attributes; no ``.grad``, a version counter of its
        own."""
        result = type(self)(self.data, self.requires_grad)
        result.__dict__.update(_user_attrs(self))
        return result

    def __deepcopy__(self, memo):
        """``copy.deepcopy``, as torch's Parameter: a Parameter on a copy of the values alone
        (strides kept; not shared with other tensors through the memo), with this one's
        requires_grad; no ``.grad``, no attributes."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(_make(self._data.copy(order="K")), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return Tensor.__reduce_ex__(self, proto)
