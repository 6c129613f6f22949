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
            # (one function for the name and its aliases, as torch's)
            public = _namespace_form(fn, n)
            for a in (n, *aliases):
                PUBLIC[a] = public
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


def _namespace_form(fn, name):
    """What ``tapegrad.<name>`` is: ``fn``, with torch's ``out=`` keyword added when torch's
    function takes one and ``fn`` does not handle it itself, or refused when ``fn`` takes one
    that torch's ``<name>`` does not (see :mod:`tapegrad.ops._out`)."""
    from ._out import OUT_OPS, with_out, without_out
    code = fn.__code__
    if "out" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        return fn if name in OUT_OPS else without_out(fn, name)
    if name not in OUT_OPS:
        return fn
    # (an alias registered on its own, ``op("greater")(gt)``, is the same function as torch's)
    wrapped = _WITH_OUT.get(fn)
    if wrapped is None:
        wrapped = _WITH_OUT[fn] = with_out(fn, name, OUT_OPS[name])
    return wrapped


_WITH_OUT: dict = {}    # an op's function -> its namespace form with out=
