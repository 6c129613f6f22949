"""The one place nn/ and optim/ change a tensor's values in place.

torch bumps a tensor's version counter on every in-place change, so that a graph which saved the
old values raises instead of silently using the new ones. Every in-place write made by
``nn.init``, ``Module.load_state_dict``, ``zero_grad(set_to_none=False)`` and the optimizers goes
through :func:`bump_version` (directly or via :func:`write_`), so that behaviour lives here.
"""
from __future__ import annotations

import numpy as np

from ..autograd.graph import bump as bump_version  # noqa: F401 - re-exported for nn/ and optim/


def write_(t, values):
    """Copy ``values`` (array, number or Tensor) into ``t._data`` in place, casting to its dtype
    and broadcasting as ``Tensor.copy_`` does; bumps the version. Returns ``t``."""
    if hasattr(values, "_vc"):
        values = values._data
    with np.errstate(invalid="ignore", over="ignore"):
        np.copyto(t._data, values, casting="unsafe")
    bump_version(t)
    return t
