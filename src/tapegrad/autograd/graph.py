"""The recorded graph: Node (a tensor's ``grad_fn``), AccumulateGrad, saved tensors, hooks.

A Node is made each time a differentiable op runs with an input that requires grad. It keeps one
*edge* per forward argument (``None`` for an argument that is not a tensor, ``(None, 0)`` for a tensor
that needs no gradient, ``(node, output_nr)`` otherwise) and the shape/dtype of each tensor input, so
the engine can reduce a broadcast gradient and check it. Saved tensors are recorded with the version
of their storage and the user's source line, so an in-place change is caught at backward with both
places named.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
import weakref

import numpy as np

from .grad_mode import state as _grad_state

# nodes are numbered in creation order, so a node's number is higher than that of every node its
# edges lead to: the engine's order relies on it
_seq = itertools.count()

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_in_pkg: dict = {}


def _inside(code) -> bool:
    # keyed by file name: a str caches its hash (a code object hashes its bytecode each time)
    inside = _in_pkg.get(code.co_filename)
    if inside is None:
        inside = _in_pkg[code.co_filename] = code.co_filename.startswith(_PKG_DIR)
    return inside


def user_frame(depth=2):
    """(code, instruction offset) of the innermost frame outside the tapegrad package; cheap
    enough to take on every recorded op, and turned into a line only when an error needs it
    (``f_lineno`` costs more than the rest of the walk together). The walk starts ``depth``
    frames up from here (2: the caller's caller); a caller that knows frames above it are the
    package's skips them, as each frame looked at is made into a frame object (about 2,000
    instructions)."""
    f = sys._getframe(depth)
    while f is not None:
        code = f.f_code
        # (_inside, inlined: this walk runs for most recorded ops called from the package)
        inside = _in_pkg.get(code.co_filename)
        if inside is None:
            inside = _inside(code)
        if not inside:
            return code, f.f_lasti
        f = f.f_back
    return None


# The reference counts the in-place fast paths compare against (sole_holder, the engine's _owned)
# are those of CPython 3.11-3.13 with the GIL, measured on each: 3.10 keeps extra references to
# call arguments (the fast paths would never apply), and a free-threaded build or a later
# CPython may count fewer (borrowed references), which could let a gradient someone else holds
# be written in place. Elsewhere every gradient is copied: correct, a little slower.
EXACT_REFCOUNTS = (sys.implementation.name == "cpython"
                   and (3, 11) <= sys.version_info[:2] <= (3, 13)
                   and getattr(sys, "_is_gil_enabled", lambda: True)())


# buffers tapegrad.cpu's cache has lent out, by id: each holds one reference more to its buffer,
# which the in-place tests below (and the engine's _owned) discount
LENT: dict = {}


def sole_holder(t, shape, dtype, holders: int) -> bool:
    """Whether tensor ``t``'s array may be overwritten in place because nothing outside the
    caller can see it: the array owns its memory (or is a contiguous view of an array that only
    it holds: a result from :mod:`tapegrad.cpu`'s cache, a reshaped product), is writeable, has
    ``shape`` and ``dtype`` (any, when ``shape`` is None), is referenced by ``t`` alone, and
    ``t`` has at most ``holders`` references, the count the caller's own frames account for
    (including this function's parameter and getrefcount's argument). The engine adds gradients
    into such a buffer; a plain backward writes its result into one."""
    arr = t._data
    # references to the array: t's slot, the local, getrefcount's argument. (The cheap tests
    # first: reading flags makes an object, and most callers' tensors are held elsewhere.)
    return (EXACT_REFCOUNTS and sys.getrefcount(t) <= holders and sys.getrefcount(arr) <= 3
            and ((base := arr.base) is None or _lone_view(arr, base)) and arr.flags.writeable
            and (shape is None or (arr.shape == shape and arr.dtype == dtype)))


def _lone_view(arr, base) -> bool:
    """Whether view ``arr`` may be written as if it owned its memory: its ``base`` is an array
    that owns its memory and that nothing but ``arr`` holds (references: arr's, the caller's
    local, this parameter, getrefcount's argument, and the cache's for a buffer it lent), and
    ``arr`` is contiguous, so no two of its elements share memory (a stride of 0:
    ``np.ndarray(buffer=...)`` in a custom backward, a loaded expand), which an in-place write
    would mix up."""
    if type(base) is not np.ndarray or base.base is not None or \
            sys.getrefcount(base) > 4 + (id(base) in LENT):
        return False
    flags = arr.flags
    return flags.c_contiguous or flags.f_contiguous


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the user's line, however deep inside the
    package it is raised (counted from the caller of this function)."""
    f = sys._getframe(1)
    level = 1
    while f is not None and _inside(f.f_code):
        f = f.f_back
        level += 1
    return level


def format_where(where) -> str:
    if where is None:
        return "<unknown>"
    code, lasti = where
    line = code.co_firstlineno
    for start, end, ln in code.co_lines():
        if start <= lasti < end:
            line = ln if ln is not None else line
            break
    return f"{code.co_filename}:{line} (in {code.co_name})"


class VersionCounter:
    """One per storage, shared by a tensor, its views and ``detach()``. ``where`` keeps the frame of
    the last in-place change (read only when an error message needs it)."""

    __slots__ = ("v", "where")

    # (no __init__: a Python __init__ is a call back into the interpreter from C, which costs more
    # than the object; make one with new_version_counter, or inline its three lines)


def new_version_counter():
    """A fresh counter at version 0, never modified in place."""
    vc = VersionCounter()
    vc.v = 0
    vc.where = None
    return vc


def version_counter(t):
    """Tensor ``t``'s version counter, made on first need (an in-place write, a view, detach()).

    An op that saves only its result (tanh, exp, sigmoid...) gives its output none: its saved
    entry holds None, meaning "version 0, no counter yet" (a counter per op is one more object
    for the garbage collector to scan while the graph lives, and most results are never written
    in place). The first counter made for that output, or for a tensor unpacked from that entry,
    is the one the entry adopts, found through ``t.grad_fn`` (whatever array ``t`` holds now:
    torch keeps a tensor's counter across ``.data = ...``): so a later in-place write is seen by
    the op's backward, as if the counter had been there from the start. The node keeps that
    counter (``_out_vc``) past a backward that frees its saved entry: a tensor unpacked from the
    entry may live on in a create_graph graph, and must see the output's later writes. Where a
    counter is only read, :func:`known_counter` finds the same one without making any."""
    vc = known_counter(t)
    if vc is not None:
        return vc
    node = t.grad_fn
    entry = saved_alone(node) if node is not None else None
    if entry is None:   # (the entries of a saved list all have counters)
        vc = new_version_counter()
    else:               # (t is that result, or a tensor standing for it)
        vc = entry[2] if entry[2] is not None else attach_counter(node, entry)
    t._vc = vc
    return vc


def bump(x, where=None):
    """Record one in-place change of x's storage (shared with its views and detach()). As torch,
    inside inference mode an inference tensor's version is left alone (only the detach() or
    .data of one, made outside inference mode, has one to read). ``where``: the user's line
    (``user_frame()``) when the caller took it already, as an optimizer does once per step."""
    vc = x._vc
    if vc is None:
        vc = version_counter(x)
    if x._extra is not None and _grad_state.inference and x._extra.get("inference"):
        return vc
    vc.v += 1
    vc.where = user_frame() if where is None else where
    return vc


def known_counter(t):
    """Tensor ``t``'s version counter if one exists, without making one: its own, or the one the
    node of a result saved alone made for that result (see :func:`version_counter`), which ``t``
    then keeps; None when the storage was never written in place (version 0)."""
    vc = t._vc
    if vc is None:
        node = t.grad_fn
        if node is not None:
            vc = node._out_vc
            if vc is not None:
                t._vc = vc
    return vc


def attach_counter(node, entry):
    """A new version counter for ``entry``, the result ``node`` saved alone without one, kept in
    the entry and as the node's ``_out_vc``."""
    vc = new_version_counter()
    node._saved = ("o", entry[1], vc, entry[3], entry[4], entry[5])
    node._out_vc = vc
    return vc


def saved_alone(node):
    """The packed entry of the result ``node`` saved alone (kept as the entry itself, not as a
    one-entry list: the list would be one more object per op for the garbage collector to scan,
    and the entry, which holds no tracked object, is one it stops scanning), else None."""
    saved = node._saved
    # (only a packed entry starts with its kind; the tuple save_for_backward leaves until the op
    # is recorded holds what was saved)
    return saved if type(saved) is tuple and saved and type(saved[0]) is str else None


def saved_entries(node):
    """A node's packed saved entries as a list (empty when it saved nothing or they were freed;
    one entry for a result saved alone, see :func:`saved_alone`)."""
    saved = node._saved
    if type(saved) is list:
        return saved
    entry = saved_alone(node)
    return [] if entry is None else [entry]


def set_saved_entry(node, k, entry):
    """Replace saved entry ``k`` of ``node`` (see :func:`saved_entries`)."""
    if type(node._saved) is tuple:
        node._saved = entry
    else:
        node._saved[k] = entry


class RemovableHandle:
    """Returned by ``register_hook`` and friends; ``remove()`` unregisters the hook."""

    __slots__ = ("_ref", "_key")
    _next_id = itertools.count()

    def __init__(self, hooks: dict):
        self._ref = weakref.ref(hooks) if hooks is not None else None
        self._key = next(RemovableHandle._next_id)

    def remove(self):
        hooks = self._ref() if self._ref is not None else None
        if hooks is not None:
            hooks.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict that can be weakly referenced by handles."""
    __slots__ = ("__weakref__",)


# The leaves (tensors, or their AccumulateGrad nodes) that have hooks running inside a backward's
# walk, by id, while they live. Only while one does must a backward count every node's inputs
# first, so that each leaf's node runs as soon as its last gradient came, as torch's does (those
# hooks would see the order); otherwise the leaves are settled after the walk (engine).
leaf_prehooked: dict = {}


def note_leaf_prehook(owner):
    """Record that ``owner`` (a leaf tensor or an AccumulateGrad) got a hook that runs before its
    gradient is accumulated."""
    key = id(owner)
    if key not in leaf_prehooked:
        leaf_prehooked[key] = weakref.ref(owner, lambda _, key=key: leaf_prehooked.pop(key, None))


def leaf_prehooks_live() -> bool:
    """Whether a leaf in ``leaf_prehooked`` still has such a hook; the leaves whose hooks were all
    removed since are dropped from it (so a hook added and removed once does not make every later
    backward count)."""
    for key, ref in list(leaf_prehooked.items()):
        owner = ref()
        if type(owner) is AccumulateGrad:
            live = bool(owner._prehooks)
        else:
            ex = None if owner is None else owner._extra
            live = ex is not None and any(ex.get("hooks", {}).values())
        if live:
            return True
        del leaf_prehooked[key]
    return False


def add_hook(owner, attr: str, fn) -> RemovableHandle:
    if attr == "_prehooks" and type(owner) is AccumulateGrad:
        note_leaf_prehook(owner)
    hooks = getattr(owner, attr)
    if hooks is None:
        hooks = _HookDict()
        setattr(owner, attr, hooks)
        owner._rare = True
    handle = RemovableHandle(hooks)
    hooks[handle._key] = fn
    return handle


class _Freed:
    __slots__ = ()

    def __repr__(self):
        return "FREED"


# what a node's _saved becomes once backward released it (a flag in the instance dict would cost
# every node a dict)
FREED = _Freed()


class _SavedHooksState(threading.local):
    # the (pack_hook, unpack_hook) pairs of this thread's open saved_tensors_hooks blocks,
    # innermost last, and the message disable_saved_tensors_hooks set (None: enabled)
    stack = ()
    disabled = None


saved_hooks_state = _SavedHooksState()
_saved_hooks_lock = threading.Lock()

# The idents of the threads with a saved_tensors_hooks block open: empty (falsy) while none is,
# so a recorded op learns from one read of this list that it packs its saved tensors as they
# are, without the thread-local lookup (function.pack_with_hooks reads this thread's stack).
hooked_threads: list = []


class saved_tensors_hooks:
    """Context manager that sets a pair of hooks for the tensors ops save for backward, as
    torch.autograd.graph.saved_tensors_hooks.

    Inside the block, each tensor a recorded op (built-in, or a custom Function's
    ``ctx.save_for_backward``) saves is given to ``pack_hook(tensor)`` when the op runs, and
    whatever that returns (any object) is kept in its place; ``unpack_hook(packed)`` is called
    with it each time backward, ``ctx.saved_tensors`` or ``grad_fn._saved_<name>`` needs the
    tensor, and must return a Tensor of the saved one's shape and values (TypeError otherwise,
    as torch). Such a tensor is not version-checked at unpack (torch cannot follow versions
    through the hooks either). ``pack_hook`` must not modify its argument in place
    (RuntimeError, as torch). Blocks nest (the innermost pair applies) and are thread-local;
    nothing is saved, so nothing packed, while grad mode is off. Entering one inside
    :func:`disable_saved_tensors_hooks` raises RuntimeError with that block's message.
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        st = saved_hooks_state
        if st.disabled is not None:
            raise RuntimeError(st.disabled)
        if not st.stack:
            with _saved_hooks_lock:
                hooked_threads.append(threading.get_ident())
        st.stack += ((self.pack_hook, self.unpack_hook),)

    def __exit__(self, *args) -> None:
        st = saved_hooks_state
        st.stack = st.stack[:-1]
        if not st.stack:
            with _saved_hooks_lock:
                hooked_threads.remove(threading.get_ident())


class save_on_cpu(saved_tensors_hooks):
    """Context manager under which saved tensors are kept on the CPU, as
    torch.autograd.graph.save_on_cpu: each is packed as ``(tensor.device, tensor.cpu())`` and
    unpacked with ``.to(device)``. tapegrad's tensors all live on the CPU already, so the tensor
    is kept as it is; with ``pin_memory=True`` a copy is kept, as torch keeps one where no
    accelerator can pin memory. ``device_type`` is accepted for torch's signature. Nests and
    raises as :class:`saved_tensors_hooks`."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            from .._tensor import _make
            return (tensor.device, _make(tensor._data.copy()))

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context manager (and decorator) inside which saved-tensor hooks may not be set, as
    torch.autograd.graph.disable_saved_tensors_hooks: entering :class:`saved_tensors_hooks`
    raises RuntimeError(``error_message``). Entering it while a saved_tensors_hooks block is open
    raises that RuntimeError at once, as torch. Thread-local; on exit the previous state (an
    outer block's message, or enabled) comes back."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self) -> None:
        st = saved_hooks_state
        self._prev = st.disabled
        if st.stack:
            raise RuntimeError(self.error_message)
        st.disabled = self.error_message

    def __exit__(self, *args) -> None:
        saved_hooks_state.disabled = self._prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


# gives a node class torch's read-only ``_saved_<name>`` / ``_raw_saved_<name>`` attributes: set
# by autograd.saved_attrs when it loads, which gives them to the classes made before it
give_saved_attrs = None


class Node:
    """A recorded op (``tensor.grad_fn``). Named as torch names it (``MulBackward0``).

    ``next_functions`` gives, for each tensor input, ``(node, output_nr)``: the node that made it,
    the ``AccumulateGrad`` of a leaf that requires grad, or ``(None, 0)``.
    """

    # hot state in slots; rarely-set state (hooks, retain_grad, multi-output metadata) lives in
    # the instance dict only when set, with these class attributes as defaults
    __slots__ = ("_edges", "_seq", "_saved", "__dict__", "__weakref__")

    _scalar_edges = 0  # leading argument positions shown in next_functions even when numbers
    _nondiff = ()      # tensor argument positions not shown (indices, masks: saved, never an edge)
    _n_out = 1         # outputs (set per node only for a multi-output op)
    _rare = False      # set once any rare state below is set: the engine's fast path skips it
    _hooks = None
    _prehooks = None
    _tensor_prehooks = None
    _retain = None
    _out_meta = None
    _special = None
    _out_vc = None     # the counter of a result saved without one, once made (version_counter)
    _lazy = None       # makes edges a node makes on demand (ops.linalg._with_t): engine._collect

    # (no __init__: calling a class that has none is the cheapest way to make an object, and a
    # recorded op makes one; whoever makes a node sets _edges, _seq and _saved, see new_node)

    def name(self) -> str:
        return type(self).__name__

    def _shown(self):
        """Argument positions next_functions (and a node hook's grad_inputs) show: the tensor
        arguments and the leading ``_scalar_edges`` numbers, less the ``_nondiff`` ones."""
        n, nd = self._scalar_edges, self._nondiff
        # (edges are flat, four entries per argument; output_nr is None for a non-tensor)
        edges = self._edges
        return [i for i in range(len(edges) >> 2)
                if (edges[4 * i + 1] is not None or i < n) and i not in nd]

    @property
    def next_functions(self):
        edges = self._edges
        return tuple((edges[4 * i], edges[4 * i + 1] or 0) for i in self._shown())

    @property
    def metadata(self) -> dict:
        return self.__dict__.setdefault("_metadata", {})

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node computed its gradients; it may
        return a replacement tuple of input gradients."""
        return add_hook(self, "_hooks", fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return replacement grad_outputs."""
        return add_hook(self, "_prehooks", fn)

    def __call__(self, *grads):
        """This node's backward on ``grads`` (one per output; None for an output that got no
        gradient), as torch's call runs it: the derivative formula alone, so the node's hooks do
        not run and each gradient comes as the formula gives it, before the engine sums it to
        its input's shape and casts it to its dtype (``(a + b).grad_fn(g)`` with ``b`` of shape
        (3,) and ``g`` (4, 3) gives (4, 3) for both). A gradient for each ``next_functions``
        entry, as torch returns them (one Tensor, or None, for a single entry; a tuple
        otherwise); all None when every given gradient is None. Recorded when grad mode is on.
        Raises TypeError, as torch, unless given exactly one gradient per differentiable output
        (one for max(dim), sort, topk: their indices take none) and for an argument that is
        neither a Tensor nor None; RuntimeError, as torch, for a softmax or log_softmax gradient
        whose dtype or shape is not its output's. mean's gradient comes in C order, as torch's.
        A custom Function's node is not callable (TypeError, as torch): its ``apply(*grads)``
        runs its backward. An AccumulateGrad node accumulates into its leaf's ``.grad`` and
        returns ``()``, see :meth:`AccumulateGrad.__call__`."""
        from .engine import call_direct
        out = call_direct(self, grads)
        res = tuple(out[i] for i in self._shown())
        return res[0] if len(res) == 1 else res

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __init_subclass__(cls, **kwargs):
        # torch's ``_saved_<name>`` attributes are attributes of the classes that have them, not a
        # ``__getattr__`` here: CPython 3.11+ specialises no attribute read of an object whose
        # class has ``__getattr__``, and every read of a node's fields went the slow generic way
        # (W1 ran about 3% more instructions an op)
        super().__init_subclass__(**kwargs)
        if give_saved_attrs is not None:
            give_saved_attrs(cls)

    def __dir__(self):
        # (``_saved`` is tapegrad's slot, which torch's nodes do not have; torch's ``_saved_*``
        # names are the class's, so the usual listing has them)
        return sorted(n for n in super().__dir__() if n != "_saved")


def new_node(cls):
    """A node of class ``cls`` without edges or saved tensors, numbered in creation order."""
    node = cls()
    node._edges = ()
    node._seq = next(_seq)
    node._saved = None
    return node


class AccumulateGrad(Node):
    """The node through which a leaf that requires grad receives its gradient."""

    __slots__ = ("variable",)

    # a leaf's hooks live on the tensor (torch does the same): the tensor holds this node only
    # weakly, so hooks stored here would vanish with it
    @property
    def _tensor_prehooks(self):
        ex = self.variable._extra
        return None if ex is None else ex.get("hooks")

    def __init__(self, variable):
        self._edges = ()
        self._seq = next(_seq)
        self._saved = None
        self.variable = variable

    def name(self) -> str:
        """torch's name for this node, C++ namespace included (its class prints as
        AccumulateGrad, as torch's does)."""
        return "torch::autograd::AccumulateGrad"

    def __call__(self, *grads):
        """Accumulate the one gradient given into the leaf's ``.grad`` as a backward would, and
        return ``()``, as torch: a first ``.grad`` is a copy laid out as the leaf (the
        gradient's dtype; recorded as CopyBackwards when grad mode is on and the gradient has
        history), a later one a new sum while grad mode is on, else an in-place add; the leaf's
        post-accumulate-grad hooks run, no other hook does. Nothing for None, or for a leaf that
        no longer requires grad. TypeError for anything but one Tensor or None; RuntimeError
        for a gradient that does not broadcast to the leaf's shape."""
        from .engine import accumulate_direct
        return accumulate_direct(self, grads)

    @property
    def next_functions(self):
        return ()
