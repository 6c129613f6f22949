"""``grad_fn._saved_<name>`` and ``grad_fn._raw_saved_<name>``: what a node saved, under the names
torch's generated nodes give it (derivatives.yaml's argument names: ``self``, ``other``,
``result``, ``self_sym_sizes``, ``dim``...).

Read only when a user asks: each is a read-only attribute (:class:`SavedAttr`) of the node
classes named in :data:`SAVED` (which maps attribute names to a getter of the node), given to
them when this module loads (``import tapegrad`` loads it) or, for a class made later, when the
class is made (``Node.__init_subclass__``). Nothing is added to a node when it is made or run.
"""
from __future__ import annotations

import numpy as np

from .._tensor import _make
from . import graph as _graph
from .function import freed_error, hooked_entry, unpack_hooked, unpack_saved
from .graph import FREED, Node, saved_entries, set_saved_entry

_U64 = (1 << 64) - 1


def _u64(d):
    # torch's nodes give an int64 attribute (a dim, ignore_index) as C++'s uint64 prints it
    return d & _U64


def _linear_as_addmm(node):
    # a Linear node saves the weight itself until its TBackward0 node is made: make it, so the
    # node saves weight.t() as torch's AddmmBackward0 does
    from ..ops.linalg import Linear, _with_t
    if type(node)._forward_cls is Linear:
        _with_t(node)


def _entry(node, k):
    """Saved entry ``k`` of ``node`` (None when not saved); RuntimeError once freed."""
    if node._saved is FREED:
        raise freed_error(node)
    _linear_as_addmm(node)
    entries = saved_entries(node)
    return entries[k] if k < len(entries) else None


def _tensor(k):
    def get(node):
        e = _entry(node, k)
        if e is None:
            return None
        if e[0] == "c":
            v = e[1]
            if isinstance(v, np.ndarray):
                return _make(v)
            # a number is kept as torch keeps a wrapped number: a 0-d int64, float64 or bool
            return _make(np.asarray(v, np.bool_ if type(v) is bool else
                                    np.int64 if isinstance(v, int) else np.float64))
        return unpack_one(node, k)
    return get


def unpack_one(node, k):
    """Saved entry ``k`` of ``node`` unpacked, as torch unpacks one saved tensor: the other
    entries' unpack hooks are not called (their versions are checked, where torch checks this
    one's alone)."""
    saved = node._saved
    if type(saved) is not list:
        return unpack_saved(node)[k]
    node._saved = [e if i == k or e is None or e[0] != "h" else None
                   for i, e in enumerate(saved)]
    try:
        return unpack_saved(node)[k]
    finally:
        node._saved = saved


def _raw(k):
    return lambda node: SavedTensor(node, k)


def _attr(name, default=None, conv=None):
    def get(node):
        v = node.__dict__.get(name, default)
        return v if conv is None else conv(v)
    return get


def _sizes(node):
    return tuple(int(n) for n in node.in_shape)


def _numel(node):
    return int(np.prod(node.in_shape))


def _dims(node):
    return tuple(_u64(d) for d in node.axes)


def _mat_sizes(i, k):
    # a matrix's sizes (argument ``i``, saved entry ``k``): from its edge where it needs a
    # gradient, else from the entry that saved it for the other matrix's gradient
    def get(node):
        _linear_as_addmm(node)
        shape = node._edges[4 * i + 2]
        if shape is None:
            entries = saved_entries(node) if node._saved is not FREED else ()
            e = entries[k] if k < len(entries) else None
            shape = () if e is None or e[0] not in ("i", "o") else e[1].shape
        return tuple(int(n) for n in shape)
    return get


def _meta(i, conv=lambda v: v):
    return lambda node: conv(node.meta[i])


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def nll_total_weight(node):
    """NllLoss's total weight, as torch saves it (packed by a saved_tensors_hooks block, as torch's, when one was open): the summed weight of the rows that count
    (their number without weights), 0 for reduction='none'."""
    extra = node.__dict__.get("_hooked_extra")
    if extra is not None:
        return unpack_hooked(node, extra)
    shape, _, _, w, valid, reduction, _, _ = node.meta
    dt = node._edges[3]
    if reduction == "none":
        total = 0
    elif w is not None:
        total = w.sum()
    else:
        total = shape[0] if valid is None else np.count_nonzero(valid)
    return _make(np.asarray(total, dt))


def _tensors(*names):
    """Getters for tensors saved as entries 0, 1, ... under ``names``."""
    out = {}
    for k, n in enumerate(names):
        out["_saved_" + n] = _tensor(k)
        out["_raw_saved_" + n] = _raw(k)
    return out


_SELF = _tensors("self")
_RESULT = _tensors("result")
_DIM_RESULT = {**_RESULT, "_saved_dim": lambda node: _u64(node.d)}
_ALPHA = {"_saved_alpha": _attr("alpha", 1)}

SAVED = {
    "MulBackward0": _tensors("self", "other"),
    "DivBackward0": _tensors("self", "other"),
    "AddBackward0": _ALPHA,
    "SubBackward0": _ALPHA,
    "PowBackward0": {**_SELF, "_saved_exponent": _attr("exponent")},
    "PowBackward1": _tensors("self", "exponent", "result"),
    "SumBackward0": {"_saved_self_sym_sizes": _sizes},
    "SumBackward1": {"_saved_dim": _dims, "_saved_keepdim": _attr("keepdim"),
                     "_saved_self_sym_sizes": _sizes},
    "MeanBackward0": {"_saved_self_sym_numel": _numel, "_saved_self_sym_sizes": _sizes},
    "MeanBackward1": {"_saved_dim": _dims, "_saved_keepdim": _attr("keepdim"),
                      "_saved_self_sym_numel": _numel, "_saved_self_sym_sizes": _sizes},
    "MmBackward0": {**_tensors("self", "mat2"), "_saved_self_sym_sizes": _mat_sizes(0, 0),
                    "_saved_mat2_sym_sizes": _mat_sizes(1, 1)},
    "AddmmBackward0": {**_tensors("mat1", "mat2"), "_saved_alpha": _attr("alpha", 1),
                       "_saved_beta": _attr("beta", 1),
                       "_saved_mat1_sym_sizes": _mat_sizes(1, 0),
                       "_saved_mat2_sym_sizes": _mat_sizes(2, 1)},
    "NllLossBackward0": {**_tensors("self", "target", "weight"),
                         "_saved_reduction": _meta(5, _REDUCTIONS.get),
                         "_saved_ignore_index": _meta(7, lambda v: _u64(-100 if v is None else v)),
                         "_saved_total_weight": nll_total_weight},
    "MvBackward0": _tensors("self", "vec"),
    "BmmBackward0": _tensors("self", "mat2"),
    "LogSoftmaxBackward0": _DIM_RESULT,
    "SoftmaxBackward0": _DIM_RESULT,
}
for _name in ("ExpBackward0", "TanhBackward0", "SigmoidBackward0", "ReluBackward0",
              "SqrtBackward0", "RsqrtBackward0"):
    SAVED[_name] = _RESULT
for _name in ("SinBackward0", "CosBackward0", "TanBackward0", "LogBackward0", "Log2Backward0",
              "Log10Backward0", "Log1pBackward0", "AbsBackward0", "SignBackward0",
              "ReciprocalBackward0"):
    SAVED[_name] = _SELF
SAVED["ReciprocalBackward0"] = _RESULT


class SavedAttr:
    """A node class's torch attribute ``name``: read through ``get(node)``; set or deleted, the
    AttributeError torch's read-only attribute raises."""

    __slots__ = ("get", "name", "owner")

    def __init__(self, name, owner, get):
        self.name, self.owner, self.get = name, owner, get

    def __get__(self, node, cls=None):
        return self if node is None else self.get(node)

    def __set__(self, node, value):
        raise AttributeError(f"attribute '{self.name}' of '{self.owner}' objects is not writable")

    def __delete__(self, node):
        self.__set__(node, None)

    def __repr__(self):
        return f"<attribute '{self.name}' of '{self.owner}' objects>"


def give_saved_attrs(cls):
    """Give node class ``cls`` the ``_saved_*`` / ``_raw_saved_*`` attributes torch's node of its
    name has (:data:`SAVED`), read-only, as torch's; a name torch's node lacks stays missing
    (AttributeError, as for any attribute), and one the class defines itself stays its own."""
    for name, get in SAVED.get(cls.__name__, {}).items():
        if name not in cls.__dict__:
            setattr(cls, name, SavedAttr(name, cls.__name__, get))


def _give_all():
    todo = [Node]
    while todo:
        cls = todo.pop()
        give_saved_attrs(cls)
        todo.extend(cls.__subclasses__())
    _graph.give_saved_attrs = give_saved_attrs


class SavedTensor:
    """One tensor a node saved (``grad_fn._raw_saved_<name>``), as torch's
    ``torch._C._autograd.SavedTensor``: :meth:`register_hooks` sets a pack/unpack pair for it
    alone."""

    __slots__ = ("_k", "_node")

    def __init__(self, node, k):
        self._node = node
        self._k = k

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved tensor with ``pack_hook(tensor)`` now, and read it back through
        ``unpack_hook(packed)`` (which must return a Tensor) from then on, as
        torch.autograd.graph.saved_tensors_hooks does for the tensors saved inside it. Raises
        TypeError for hooks that are not callable; RuntimeError, as torch, once the graph is
        freed, for a tensor that was not saved (None), for one whose hooks are set already
        (by this method or a saved_tensors_hooks block), and where pack_hook modifies its
        input in place. A Python number an op saved (torch's wrapped number) takes no hooks in
        tapegrad (RuntimeError)."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments: pack_hook and "
                            "unpack_hook must be callables")
        node, k = self._node, self._k
        if node._saved is FREED:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved variables after calling "
                "backward.")
        e = _entry(node, k)
        if e is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if e[0] == "h":
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.")
        if e[0] == "c":
            raise RuntimeError(f"tapegrad keeps this saved value of {node.name()} as a Python "
                               f"number (torch's wrapped number): it takes no hooks")
        t = unpack_one(node, k)     # (version-checked, as torch's)
        hooked = hooked_entry(pack_hook, unpack_hook, e, t)
        if type(node._saved) is tuple:
            # (a hooked entry is kept in a list: alone, it would read as a saved result)
            node._saved = [hooked]
        else:
            set_saved_entry(node, k, hooked)


_give_all()
