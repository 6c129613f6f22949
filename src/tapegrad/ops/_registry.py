"""The registration decorator that names an op's public surface.

``@op("exp", method=True, inplace="exp_")`` puts the function at ``tapegrad.exp`` and
``Tensor.exp``; nothing else needs editing except one row in the op database.
"""
from __future__ import annotations

PUBLIC: dict = {}    # tapegrad.NAME -> function
METHODS: dict = {}   # Tensor.NAME -> function
FUNCTIONAL: dict = {}  # tapegrad.nn.functional.NAME -> function
LINALG: dict = {}      # tapegrad.linalg.NAME -> function


def op(name: str | None = None, *, method: bool | str = True, namespace: bool = True,
       functional: bool = False, aliases: tuple = (), linalg: str | None = None):
    """Register a public op. ``method``: also a Tensor method (True: same name; a str: that name).
    ``linalg``: also ``tapegrad.linalg.<linalg>`` (``inverse`` is ``linalg.inv``)."""
    def deco(fn):
        from .._tensor import Tensor
        n = name or fn.__name__
        if namespace:
            PUBLIC[n] = fn
            for a in aliases:
                PUBLIC[a] = fn
        if functional:
            FUNCTIONAL[n] = fn
        if linalg:
            LINALG[linalg] = fn
        if method:
            m = n if method is True else method
            METHODS[m] = fn
            setattr(Tensor, m, fn)
            for a in aliases:
                METHODS[a] = fn
                setattr(Tensor, a, fn)
        return fn
    return deco
