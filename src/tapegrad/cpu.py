"""``tapegrad.cpu``: torch.cpu's queries (one device, always there), and tapegrad's cache of large
result buffers.

The cache. An op whose result has at least ``MIN_BYTES`` (1 MiB) takes its memory from buffers
that earlier large results gave up when they died, instead of from ``malloc``. glibc returns large
freed blocks to the kernel (``munmap``, or a trim of the heap's top), so without the cache each
training step faults in every page of its large arrays again: a third of a step of 20
elementwise ops on 1e6-element arrays (benchmarks/README.md, W4), for hand-written NumPy as for
tapegrad. A buffer also comes back warm in the processor's caches while the hand-written code
would overwrite its arrays in place, which tapegrad cannot do to a tensor the user's variable
still holds. PyTorch keeps such a cache for its GPUs (``torch.cuda.empty_cache``); its CPU
allocator keeps none.

How a buffer comes back: a cached result is a view of a ``uint8`` buffer (``result.base``) that the
cache keeps a reference to while it is lent (``autograd.graph.LENT``). A weak reference to the view
fires when the view dies, and its callback keeps the buffer if nothing else holds it (someone who
took ``result.base``, or another view of it, keeps it from the cache and it is freed as usual).
Whether NumPy still holds the dying view's base in that callback differs between its versions, so
the count that means "nobody else" is measured once, at import. At most ``cache_limit()`` bytes
(256 MiB unless set) wait idle; more are freed. Only CPython 3.11 to 3.13 with the GIL cache (the
reference counts the check relies on, as the in-place paths of ``autograd.graph``); elsewhere every
result comes from NumPy.

Which results: the arithmetic ``+ - * /`` of two tensors of one shape and dtype or of a tensor and
a number, ``neg``, ``exp``, ``log``, ``tanh``, ``sigmoid``, ``relu`` and the gradients of tanh and
sigmoid; ``sqrt``, ``rsqrt``, ``reciprocal``, ``abs`` (of a real tensor), ``sign``, ``pow`` and
``square`` by a number, ``log1p``, ``expm1``, ``sin``, ``cos``, ``tan`` and the other inverse and
hyperbolic functions, ``log2``, ``log10``, ``clamp`` by numbers, and ``maximum`` and ``minimum``
of two tensors of one shape (or of a 0-d one). Each when its input is C-contiguous (a result in
another layout comes from NumPy, in NumPy's order, as torch's follows its input's strides). Other
ops, such as ``where`` and ``masked_fill``, and the masks of comparisons, take their memory from
NumPy.
"""
from __future__ import annotations

import sys
import threading
import weakref

import numpy as np

from .autograd.graph import EXACT_REFCOUNTS, LENT

__all__ = ["cache_limit", "cached_memory", "current_device", "device_count", "empty_cache",
           "is_available", "set_cache_limit", "synchronize"]

MIN_BYTES = 1 << 20
"""Results smaller than this come from NumPy: malloc's free lists keep such blocks, and the
cache's own work (about a microsecond) would show on them."""

_U8 = np.dtype(np.uint8)
_free: dict[int, list[np.ndarray]] = {}     # size in bytes -> idle buffers of that size
_state = {"limit": (1 << 28) if EXACT_REFCOUNTS else 0, "idle": 0}
# a result may die in any thread; reentrant, as a collection inside a held section (a list made)
# may run a callback in the same thread
_lock = threading.RLock()


def is_available() -> bool:
    """True: the CPU is always there (as ``torch.cpu.is_available``)."""
    return True


def device_count() -> int:
    """1 (as ``torch.cpu.device_count``)."""
    return 1


def current_device() -> str:
    """``'cpu'`` (as ``torch.cpu.current_device``)."""
    return "cpu"


def synchronize(device=None) -> None:
    """Nothing to wait for: every op has finished when it returns (as ``torch.cpu.synchronize``)."""


def empty_cache() -> None:
    """Free the idle buffers of the cache now (memory the process may give back to the system).
    Results still alive are untouched and return to the cache when they die."""
    with _lock:
        _free.clear()
        _state["idle"] = 0


def cache_limit() -> int:
    """The most bytes of idle buffers the cache keeps (0: the cache is off)."""
    return _state["limit"]


def set_cache_limit(nbytes: int) -> None:
    """Keep at most ``nbytes`` bytes of idle buffers (an int, >= 0; 0 turns the cache off and frees
    what it holds). Buffers over the limit are freed. Raises TypeError for a non-int, ValueError
    for a negative number, and RuntimeError for a limit above 0 where results cannot be cached
    (other than CPython 3.11 to 3.13 with the GIL)."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise TypeError(f"tapegrad.cpu.set_cache_limit(): nbytes must be an int, got "
                        f"{type(nbytes).__name__}")
    if nbytes < 0:
        raise ValueError(f"tapegrad.cpu.set_cache_limit(): nbytes must be >= 0, got {nbytes}")
    if nbytes and not EXACT_REFCOUNTS:
        raise RuntimeError("tapegrad.cpu.set_cache_limit(): this Python cannot cache results "
                           "(it needs CPython 3.11 to 3.13 with the GIL); only 0 is accepted")
    with _lock:
        _state["limit"] = nbytes
        # (out_like leaves a size's list in _free when it took the last buffer: an empty one)
        for size in list(_free):
            buffers = _free[size]
            while buffers and _state["idle"] > nbytes:
                buffers.pop()
                _state["idle"] -= size
            if not buffers:
                del _free[size]


def cached_memory() -> int:
    """The bytes of idle buffers the cache holds now."""
    return _state["idle"]


def _take_back(key, _lent=LENT, _count=sys.getrefcount):
    """The buffer lent under ``key`` and its reference count here, out of the lent table (None
    and 0 when it is not there)."""
    entry = _lent.pop(key, None)
    if entry is None:
        return None, 0
    buf = entry[0]
    del entry
    return buf, _count(buf)


def _alone_count():
    """The count :func:`_take_back` sees, in a weak reference's callback, for a buffer that
    nothing else holds (measured: 4 on CPython 3.11 with NumPy 2.4, where the dying view still
    holds its base; 3 on 3.12 and 3.13 with NumPy 2.5)."""
    seen = []
    buf = np.empty(16, _U8)
    view = buf.view(np.float32)
    key = id(buf)
    LENT[key] = (buf, weakref.ref(view, lambda ref: seen.append(_take_back(key)[1])))
    del buf, view
    return seen[0]


_ALONE = _alone_count()


def _reclaim(key, ref, _free=_free, _state=_state, _lock=_lock, _take_back=_take_back,
             _alone=_ALONE):
    """A lent result died: keep its buffer when nothing else holds it and the limit allows.
    (The module's objects are bound as defaults: at interpreter exit results die after the
    module's globals are cleared.)"""
    buf, count = _take_back(key)
    if buf is None or count > _alone:
        return
    size = buf.nbytes
    with _lock:
        if _state["idle"] + size <= _state["limit"]:
            _state["idle"] += size
            _free.setdefault(size, []).append(buf)


def out_like(a):
    """An empty C-ordered array of ``a``'s shape and dtype for an op's result, from the cache, or
    None (the op lets NumPy allocate) when ``a`` is under ``MIN_BYTES``, not C-contiguous, or the
    cache is off."""
    size = a.nbytes
    if size < MIN_BYTES or not _state["limit"] or not a.flags.c_contiguous or \
            not a.dtype.isnative:   # (NumPy's result would be in the native order)
        return None
    with _lock:
        buffers = _free.get(size)
        buf = buffers.pop() if buffers else None
        if buf is not None:
            _state["idle"] -= size
    if buf is None:
        buf = np.empty(size, _U8)
    out = buf.view(a.dtype).reshape(a.shape)
    key = id(buf)
    LENT[key] = (buf, weakref.ref(out, _reclaim.__get__(key)))
    return out


def out_like2(a, b):
    """``out_like(a)`` for a binary op of arrays ``a`` and ``b`` of one dtype, where ``b`` is 0-d
    (a number) or of ``a``'s shape and C-contiguous (the result is then C-ordered in NumPy too),
    else None."""
    if a.dtype is not b.dtype or b.ndim and (b.shape != a.shape or not b.flags.c_contiguous):
        return None
    return out_like(a)
