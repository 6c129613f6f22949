"""``Function``: an op's forward and its derivative, declared together once.

Built-in ops subclass :class:`ArrayFunction`: ``forward(ctx, *args)`` receives NumPy arrays for the
tensor arguments (other arguments as given) and returns arrays; ``backward(ctx, *grads)`` receives
and returns Tensors and is written with Tensor ops, so it is itself differentiable
(``create_graph=True``) without a second formula. User Functions subclass :class:`Function`, whose
forward receives Tensors (run under ``no_grad``) as in torch. Both record the same Node (which is
also the ``ctx``) through :func:`record`, and go through the same engine.
"""
from __future__ import annotations

import functools
import sys
import types

import numpy as np

from .._tensor import Tensor, _make
from .grad_mode import _type_name, no_grad
from .grad_mode import modes as _modes
from .grad_mode import state as _state
from .graph import (FREED, Node, _in_pkg, attach_counter, format_where, hooked_threads,
                    known_counter, new_node, new_version_counter, saved_hooks_state, user_frame,
                    version_counter)
from .graph import _seq as _seq_counter

__all__ = ["Function", "ArrayFunction", "FunctionCtx", "once_differentiable"]


class BackwardNode(Node):
    """Node of a Function: it is also the ``ctx`` the Function's forward and backward see."""

    __slots__ = ()
    _forward_cls = None

    # -- ctx API -------------------------------------------------------------------------------
    def save_for_backward(self, *tensors):
        """Keep tensors (inputs or outputs of forward) for backward; read them back with
        ``ctx.saved_tensors``, which checks they were not modified in place since."""
        self._saved = tensors

    def mark_dirty(self, *tensors):
        """Declare inputs that forward modified in place (they are returned as outputs)."""
        self._set_special("dirty", tensors)

    def mark_non_differentiable(self, *outputs):
        """Declare outputs that get no gradient (e.g. indices)."""
        self._set_special("non_diff", outputs)

    def set_materialize_grads(self, value: bool):
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self._set_special("materialize", bool(value))

    def _set_special(self, key, value):
        sp = self._special
        if sp is None:
            sp = self._special = {}
            self._rare = True
        sp[key] = value

    @property
    def needs_input_grad(self):
        return tuple(f is not None for f in self._edges[::4])

    def needs(self, i: int) -> bool:
        """Whether forward argument ``i`` needs a gradient (a cheap ``needs_input_grad[i]``)."""
        return self._edges[4 * i] is not None

    def __call__(self, *grads):
        """A custom Function's node is not callable, as in torch (a built-in op's node is: see
        :meth:`Node.__call__`); its :meth:`apply` runs its backward."""
        if self._forward_cls is None or not self._forward_cls._builtin:
            raise TypeError(f"'{self.name()}' object is not callable: it is the node of a custom "
                            f"autograd.Function; call its apply(*grads) to run the Function's "
                            f"backward on them, as torch")
        return Node.__call__(self, *grads)

    def apply(self, *grads):
        """The Function's ``backward(ctx, *grads)`` with this node as ctx, its result returned
        as is (torch's BackwardCFunction.apply): no count or type check, no hook."""
        return self._forward_cls.backward(self, *grads)


class _NullCtx:
    """The ctx a forward gets when nothing is recorded: it accepts and forgets everything."""

    needs_input_grad = ()

    def needs(self, i):
        return False

    def __setattr__(self, name, value):
        pass

    def save_for_backward(self, *tensors):
        pass

    def mark_dirty(self, *tensors):
        pass

    def mark_non_differentiable(self, *outputs):
        pass

    def set_materialize_grads(self, value):
        pass


NULL_CTX = _NullCtx()
FunctionCtx = BackwardNode


class Function:
    """Base class of custom differentiable ops (torch.autograd.Function).

    Subclasses define static ``forward(ctx, *args)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)`` returning one
    gradient (or None) per forward argument, and are called with ``MyFn.apply(*args)``. The graph
    node is named ``<ClassName>Backward`` unless the class passes ``name=...``. A backward that
    returns the wrong number of gradients, or one of the wrong shape, raises RuntimeError naming
    the Function and the input position.

    Class keywords (built-in ops): ``nondiff`` (a tuple of positions, or a range) names tensor arguments that never get
    a gradient (indices, masks). They are passed as Tensors, so saving them checks their version
    in backward as torch does, but next_functions leaves them out, as torch's graph has no edge
    for them.
    """

    _view = False
    _builtin = False       # a built-in op: its node is callable (Node.__call__)
    # a built-in op's check of the gradients its node is called with by hand, before its
    # formula: check(node, grads) raising as torch's kernel does (engine.call_direct)
    _check_direct = None
    # a built-in op's derivative as torch's formula is written, run when its node is called by
    # hand, where backward takes a cheaper route whose result is laid out otherwise (what only
    # a hand call shows); one-output ops only: backward_by_hand(ctx, g) (engine.call_direct)
    _backward_by_hand = None

    def __init_subclass__(cls, name: str | None = None, scalar_edges: int | None = None,
                          view: bool | None = None, nondiff: tuple | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        attrs = {"__slots__": (), "_forward_cls": cls}
        if scalar_edges is not None:
            attrs["_scalar_edges"] = scalar_edges
        parent = getattr(cls, "_backward_cls", None)
        if nondiff is None and parent is not None:
            nondiff = parent._nondiff     # (a subclass keeps its parent's index arguments)
        if nondiff:
            attrs["_nondiff"] = nondiff
        node_name = name or (cls.__name__ + "Backward")
        cls._backward_cls = type(node_name, (BackwardNode,), attrs)
        if view is not None:
            cls._view = view

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a Function subclass must define a static forward()")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass must define a static backward()")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: save what backward needs when ``forward`` takes no ctx."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        with_grad = False
        # (torch records a custom Function whenever grad mode is on, in inference mode too)
        if _state.grad_enabled:
            for a in args:
                if isinstance(a, Tensor) and a._requires_grad:
                    with_grad = True
                    break
        # (edges first: making them may re-derive a stale view's node, and a node must be numbered
        # after every node its edges lead to)
        edges = make_edges(args) if with_grad else ()
        ctx = new_node(cls._backward_cls if with_grad else BackwardNode)
        if with_grad:
            ctx._edges = edges   # needs_input_grad is readable inside forward
            # saved nothing yet: still freed by a backward, as torch (then saved_tensors raises)
            ctx._saved = ()
        with no_grad():
            if cls.setup_context is not Function.setup_context:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        single = not isinstance(out, tuple)
        outs = [(_make(o) if isinstance(o, np.ndarray) else o) for o in ((out,) if single else out)]
        if not with_grad:
            # an input returned as-is comes back as a new tensor sharing its data and version
            # counter, which does not require grad (as torch)
            outs = [o.detach() if any(o is a for a in args) else o for o in outs]
            return outs[0] if single else tuple(outs)
        sp = ctx._special or {}
        dirty = sp.get("dirty", ())
        results = []
        for o in outs:
            # an input returned as-is gets a fresh Tensor object (sharing data) unless it was
            # marked dirty, in which case it is rebased onto this node in place
            if isinstance(o, Tensor) and any(o is a for a in args) and \
                    not any(o is d for d in dirty):
                o = o.detach()
            results.append(o)
        record(ctx, args, args, results, user=True)
        return results[0] if single else tuple(results)


class ArrayFunction(Function):
    """Base of the built-in ops: forward works on NumPy arrays and returns arrays.

    Each subclass gets its own ``apply`` when it is created (:func:`_make_apply`): a function that
    has the class's node type, forward and view flag at hand, where a classmethod would read them
    from the class on every call (CPython 3.11 does not specialise that). Class keywords:

    * ``saves_result=True``: the derivative needs the result alone (exp, tanh, sigmoid, sqrt...),
      so ``apply`` saves it when it records the op, and forward saves nothing itself (a
      ``save_for_backward`` call costs as much as a third of such an op's NumPy work). Inherited.
    * ``operands=True`` (+ and *): ``apply`` is also the Tensor dunder, so it takes an operand as
      the dunders do (a NumPy scalar as its Python number, an array as a tensor) and returns
      NotImplemented for one it cannot take."""

    _saves_result = False

    def __init_subclass__(cls, operands: bool = False, saves_result: bool | None = None,
                          **kwargs):
        super().__init_subclass__(**kwargs)
        cls._builtin = True
        if saves_result is not None:
            cls._saves_result = saves_result
        cls.apply = staticmethod(_make_apply(cls, operands))


def _make_apply(cls, operands):
    """The ``apply`` of ArrayFunction subclass ``cls``: records the op (when grad mode is on and
    an input requires grad) and runs its forward on the arrays."""
    node_cls, forward, view = cls._backward_cls, cls.forward, cls._view
    saves_result = cls._saves_result

    def apply(*args):
        arrays = []
        rec = False
        # (None in inference mode; the thread-local read only once some thread changed a mode)
        mode = _state.record if _modes.changed else True
        if mode:
            edges = ()     # (a tuple: () + t is t itself, so one argument's edge costs no copy)
            # one pass gives the arrays and the edges: make_edges' work, inlined (a call costs ~3%
            # of a small op)
            for a in args:
                if isinstance(a, Tensor):
                    arr = a._data
                    arrays.append(arr)
                    if a._base is not None and a._view_version != a._vc.v:
                        # a view whose base was written since: its fresh history may change
                        # whether this op is recorded at all, so refresh first and start over
                        return _refreshed_apply(apply, args)
                    if a._requires_grad:
                        rec = True
                        fn = a.grad_fn
                        edges += (fn if fn is not None else a._accumulator(), a._output_nr,
                                  arr.shape, arr.dtype)
                    else:
                        edges += _NO_GRAD_EDGE
                else:
                    if operands and type(a) not in _PLAIN_NUMBERS:
                        return _operand_apply(apply, args)
                    arrays.append(a)
                    edges += _NO_EDGE
        else:
            # inside backward (or no_grad): nothing to record, so no edges to make
            for a in args:
                if isinstance(a, Tensor):
                    arrays.append(a._data)
                else:
                    if operands and type(a) not in _PLAIN_NUMBERS:
                        return _operand_apply(apply, args)
                    arrays.append(a)
        if rec:
            # recording, the per-op hot path: inline, and the node is built without __init__
            ctx = node_cls()    # (its fields are all set just below)
            ctx._seq = _next_seq()
            ctx._saved = None
            # edges before forward, so it can save only what the needed gradients use
            # (ctx.needs(i))
            ctx._edges = edges
            try:
                # (one or two arguments, most ops: a call with them spelled out is specialised
                # by CPython, a call with *arrays is not)
                n = len(arrays)
                out = forward(ctx, arrays[0]) if n == 1 else forward(ctx, arrays[0], arrays[1]) \
                    if n == 2 else forward(ctx, *arrays)
            except ValueError as e:
                raise forward_error(cls, args, e) from None
            except AttributeError:
                _check_tensor_input(cls, args)
                raise
            if type(out) is not _nd:
                if type(out) is tuple:
                    outs = tuple(_make(o) for o in out)
                    record(ctx, args, arrays, outs)
                    return outs
                # NumPy gives a 0-d result as a scalar: save the array the output holds, so a
                # saved result stays tied to its output (and differentiable under create_graph)
                arr = _asarray(out)
                saved = ctx._saved
                if type(saved) is tuple:
                    ctx._saved = (arr,) if len(saved) == 1 and saved[0] is out else \
                        tuple(arr if s is out else s for s in saved)
                out = arr
            t = _new(Tensor)
            t._data = out
            t._base = None
            t._output_nr = 0
            if ctx._special is None:
                dt = out.dtype
                if dt in _FLOAT_DTYPES or dt.kind == "f":
                    t.grad_fn = ctx
                    t._requires_grad = True
                else:
                    t.grad_fn = None
                    t._requires_grad = False
            else:
                t.grad_fn = None
                t._requires_grad = False
                _record_outputs(ctx, (t,), ctx._special)
            saved = ctx._saved
            # (a list is packed already: constants a forward saved)
            if saves_result or type(saved) is tuple and len(saved) == 1 and saved[0] is out \
                    and not view:
                # the usual single saved result (tanh, exp, sigmoid...): no search, no version
                # counter yet (version_counter makes one on first need), and the source line
                # probed inline: the op's caller's caller is usually the user's code
                try:
                    f = _getframe(2)
                    code = f.f_code
                    where = (code, f.f_lasti) if _in_pkg.get(code.co_filename) is False else \
                        user_frame()
                except ValueError:  # (apply called from a script's top level: no frame 2)
                    where = user_frame()
                ctx._saved = ("o", out, None, 0, 0, where)   # (alone: see saved_alone)
            elif type(saved) is tuple:
                ctx._saved = _pack(ctx, saved, args, arrays, (t,))
            if hooked_threads:
                pack_with_hooks(ctx, (t,))
            if view:
                _share_version(t, cls, args)
            return t
        try:
            n = len(arrays)     # (spelled out as above)
            out = forward(NULL_CTX, arrays[0]) if n == 1 else \
                forward(NULL_CTX, arrays[0], arrays[1]) if n == 2 else forward(NULL_CTX, *arrays)
        except ValueError as e:
            raise forward_error(cls, args, e) from None
        except AttributeError:
            _check_tensor_input(cls, args)
            raise
        if type(out) is not _nd:
            if type(out) is tuple:
                return tuple(_make(o) for o in out)
            out = _asarray(out)
        # _make, inlined: this is every op's path inside backward
        t = _new(Tensor)
        t._data = out
        t._requires_grad = False
        t.grad_fn = None
        t._base = None
        t._output_nr = 0
        if mode is None:
            t._extra = {"inference": True}
        if view:
            _share_version(t, cls, args)
            _untracked_view(t, args[0])
        return t

    qualname = f"{cls.__qualname__}.apply"
    if _SPECIALISING:
        # a code object of its own for each op: CPython specialises an attribute access for the
        # one class it meets, and with one code object for all ops the node's every field
        # access met another class at each op (W1's forward: about 2.5% fewer instructions)
        apply = types.FunctionType(apply.__code__.replace(co_qualname=qualname),
                                   apply.__globals__, apply.__name__, apply.__defaults__,
                                   apply.__closure__)
    apply.__qualname__ = qualname
    apply.__doc__ = (f"Run {cls.__name__} on ``args`` (tensors, numbers, other arguments) and "
                     f"return its result, recorded in the graph when grad mode is on and an input "
                     f"requires grad.")
    return apply


# CPython 3.11+ specialises each bytecode instruction for the types it meets (PEP 659)
_SPECIALISING = sys.implementation.name == "cpython" and sys.version_info >= (3, 11)


def _operand_apply(apply, args):
    """``apply`` of + or * given an operand that is neither a tensor nor a plain number: taken as
    the dunders take it (a NumPy scalar as its Python number, an array as a tensor, an int or
    float subclass as its plain value), or NotImplemented."""
    from ..ops._util import coerce_operand
    coerced = []
    for a in args:
        if not isinstance(a, Tensor) and type(a) not in _PLAIN_NUMBERS:
            a = coerce_operand(a)
            if a is None:
                return NotImplemented
            if not isinstance(a, Tensor):
                a = bool(a) if isinstance(a, bool) else int(a) if isinstance(a, int) else float(a)
        coerced.append(a)
    return apply(*coerced)


_new = object.__new__
_getframe = sys._getframe
# (a set lookup answers "floating?" for the usual dtypes faster than reading dtype.kind)
_FLOAT_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_PLAIN_NUMBERS = (float, int, bool)  # operands + and * take as they are
_nd = np.ndarray
_asarray = np.asarray
_next_seq = _seq_counter.__next__


def short_node_name(name):
    """A node's name without its 'Backward<n>' suffix, as torch's messages print it: 'Split' for
    SplitBackward0 (a name without that suffix, such as CopySlices, is kept)."""
    head, sep, tail = name.rpartition("Backward")
    return head if sep and head and (not tail or tail.isdigit()) else name


def op_name(cls):
    """The user-facing name of a Function: 'mul' for MulBackward0."""
    return short_node_name(cls._backward_cls.__name__).lower()


def forward_error(cls, args, err):
    """NumPy's ValueError from inside an op (shapes that do not broadcast, mostly) as torch's
    RuntimeError, naming the op and the input shapes."""
    from ..ops._util import broadcast_error
    return broadcast_error(op_name(cls), *args, reason=err)


def _check_tensor_input(cls, args):
    """TypeError as torch's argument parser raises it when an op's input is not a tensor (a
    number's missing array attributes are what a forward trips on first)."""
    if args and not isinstance(args[0], Tensor):
        raise TypeError(f"{op_name(cls)}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(args[0]).__name__}") from None


def _share_version(view, cls, args):
    """A view shares its base's version counter, and remembers how to re-derive it from the
    root base (``_view_chain``), which an in-place write through the view needs (CopySlices)."""
    base = args[0]
    vc = view._vc = version_counter(base)
    view._view_version = vc.v
    step = (cls, args[1:])
    if base._base is None:
        view._base = base
        view._view_chain = (step,)
    else:
        view._base = base._base
        view._view_chain = base._view_chain + (step,)


def _untracked_view(view, base):
    """torch's rules for a view made while nothing is recorded (``view._base`` is already its
    root base).

    * A view of an inference tensor is an inference tensor, made in any mode, and never
      requires grad.
    * Otherwise it is a normal tensor, even in inference mode. Made in no_grad or inference mode,
      it requires grad exactly when its ROOT base does (a leaf that is itself a view of a
      tensor not requiring grad does not count); it is then a leaf without history that receives
      no gradient (``no_grad_view`` names the mode), else ``untracked_view`` names it. Either
      way (float views only, as torch) it may not be modified in place with grad mode on by an
      op that requires grad; a view of an inference-mode view keeps "inference mode".
    * Made with grad mode on (of a base that does not require grad, so nothing recorded), it
      inherits its base's creation mode (``view_meta_inherited``: a split of it in grad mode is
      then a multi-output view) or its base's multi-output mark (split, chunk, unbind)."""
    ex = base._extra
    if ex is not None and ex.get("inference"):
        view._extra = {"inference": True}
        return
    if _state.inference:
        mode = "inference mode"
    elif _state.grad_enabled:
        if ex is not None:
            meta = base._view_creation()
            if meta == "multi":
                view._extra = {"multi_output_view": ex["multi_output_view"]}
            elif meta:
                view._extra = {"untracked_view": meta, "view_meta_inherited": True}
        return
    else:
        mode = "no_grad mode"
        if ex is not None and base._view_creation() == "inference mode":
            mode = "inference mode"
    if view._base._requires_grad:
        view._requires_grad = True
        view._extra = {"no_grad_view": mode}
    elif view._data.dtype.kind == "f":
        view._extra = {"untracked_view": mode}
    else:
        view._extra = None


# [the Function refresh_view records]: ops.inplace's AsStridedView (as_strided)
AS_STRIDED = [None]


def refresh_view(view):
    """A view whose storage was written through its base (or a sibling view) since its history
    was recorded gets a fresh history: its geometry in the base's storage taken again from the
    base as it is now, by as_strided (torch regenerates a view's grad_fn the same way). Without it, the view's gradient would skip the
    in-place op."""
    base = view._base
    if base._requires_grad and _state.record and not (
            view._extra is not None and view._extra.get("no_grad_view")):
        # one node over the base, as torch's regenerated grad_fn (AsStridedBackward0: set by
        # the in-place ops' module), whatever the views that made it; an output of a
        # multi-output view (split, unbind) is refused by its step, as torch
        chain = view._view_chain
        for cls, extra in chain:
            if getattr(cls, "multi_output_view", False):
                cls.apply(base, *extra)
        a, b = view._data, base._data
        v = AS_STRIDED[0].apply(base, a.shape, tuple(st // a.itemsize for st in a.strides),
                                (a.__array_interface__["data"][0] -
                                 b.__array_interface__["data"][0]) // a.itemsize)
        view._set_history(v.grad_fn, v._output_nr)
        view._requires_grad = v._requires_grad
    view._view_version = view._vc.v


def _refreshed_apply(apply, args):
    """``apply(*args)`` once every argument that is a stale view (see :func:`refresh_if_stale`)
    has its history refreshed."""
    for a in args:
        if isinstance(a, Tensor):
            refresh_if_stale(a)
    return apply(*args)


def refresh_if_stale(t):
    """:func:`refresh_view` for ``t`` if it is a view whose storage was written since its history
    was recorded; nothing otherwise."""
    if t._base is not None and t._view_version != t._vc.v:
        refresh_view(t)


_NO_GRAD_EDGE = (None, 0, None, None)
_NO_EDGE = (None, None, None, None)


def make_edges(args):
    """A node's edges: four entries per forward argument, in one flat tuple (a tuple per edge
    would be one more object per recorded op for the garbage collector to scan). For a tensor
    that requires grad: its grad_fn (or the leaf's AccumulateGrad), output_nr, shape and dtype;
    the shape and dtype let the engine check (and un-broadcast) that input's gradient. A tensor
    that needs no gradient has (None, 0, None, None), any other argument (None, None, None,
    None)."""
    edges = ()
    for a in args:
        if isinstance(a, Tensor):
            refresh_if_stale(a)
            arr = a._data
            if a._requires_grad:
                fn = a.grad_fn
                edges += (fn if fn is not None else a._accumulator(), a._output_nr, arr.shape,
                          arr.dtype)
            else:
                edges += _NO_GRAD_EDGE
        else:
            edges += _NO_EDGE
    return edges


def record(node, args, fwd_inputs, outputs, user=False):
    """Attach ``node`` (its edges already made) to the graph: saved tensors, grad_fn on outputs.
    ``user``: the node of a custom Function (see _record_outputs)."""
    sp = node._special
    if len(outputs) == 1 and sp is None:
        o = outputs[0]
        if o._data.dtype.kind == "f":
            if o.grad_fn is not None:   # (a tensor from elsewhere: see _record_outputs)
                version_counter(o)
            o.grad_fn = node
            o._requires_grad = True
    else:
        _record_outputs(node, outputs, sp or {}, user)
    if type(node._saved) is tuple:
        node._saved = _pack(node, node._saved, args, fwd_inputs, outputs)
    if hooked_threads:
        pack_with_hooks(node, outputs)
    if sp is not None and args and isinstance(args[0], Tensor) and args[0]._base is not None \
            and any(args[0] is d for d in sp.get("dirty", ())) and \
            any(args[0] is o for o in outputs):
        # a custom Function wrote its first argument, a view, in place: as an in-place op on a
        # view, the base is rebased onto a CopySlices wrapping this node, and the view re-derived
        # from the new base (torch's rebase_history), so the base's gradient goes through it
        from ..ops.inplace import _copy_slices
        view = args[0]
        # (a fresh tensor with this node's history: the view itself is stale now, and apply
        # would refresh its history before CopySlices saw this node)
        r = _make(view._data)
        r.grad_fn, r._output_nr, r._requires_grad = node, view._output_nr, True
        _copy_slices(view, r)


def _record_outputs(node, outputs, sp, user=False):
    """grad_fn on the differentiable outputs, and each tensor output's shape and dtype
    (``_out_meta``), from which backward makes zeros for an output that got no gradient. A custom
    Function's backward gets zeros for its non-differentiable outputs too (as torch, unless
    ``ctx.set_materialize_grads(False)``); a built-in op's gets None for them."""
    non_diff = sp.get("non_diff", ())
    dirty = sp.get("dirty", ())
    meta = []
    for n, o in enumerate(outputs):
        if not isinstance(o, Tensor) or o._data.dtype.kind != "f" or \
                any(o is d or o._data is d for d in non_diff):
            meta.append((o._data.shape, o._data.dtype) if user and isinstance(o, Tensor) else None)
            continue
        if any(o is d for d in dirty):
            # torch bumps a dirtied input once more when the Function returns it
            version_counter(o).v += 1
        elif o.grad_fn is not None:
            # a tensor made elsewhere (a custom forward may return one): a result saved without
            # a counter finds it through its old grad_fn, so it gets it before that is replaced
            version_counter(o)
        o.grad_fn = node
        o._output_nr = n
        o._requires_grad = True
        meta.append((o._data.shape, o._data.dtype))
    if len(outputs) != 1:
        node._n_out = len(outputs)
    node._out_meta = meta
    node._rare = True


def _pack(node, items, args, fwd_inputs, outputs):
    """Saved items become ("i", tensor, version, where) (an input, or a tensor that is neither
    input nor output), ("o", array, version_counter, version, output_nr, where) or ("c",
    constant). Outputs are kept as arrays, not Tensors, so a node never holds a tensor whose
    grad_fn is itself (no reference cycle).

    Packed entries are held in a list; ``save_for_backward`` leaves a tuple, which ``apply`` (or
    ``record``) packs right after forward. A built-in forward that saves only constants may store
    the packed list itself (mul by a number: ``[None, ("c", b)]``), skipping this call, which
    costs about 5% of a small op's forward."""
    saved = []
    used = ()      # argument positions already matched (a tuple: usually one or none)
    where = None
    for item in items:
        if item is None:
            saved.append(None)
            continue
        if type(item) is not _nd and not isinstance(item, Tensor):
            if node._forward_cls is not None and not node._forward_cls._builtin:
                raise _not_a_tensor(items, item)
            saved.append(("c", item))
            continue
        # the same array passed twice (v.mul_(v): the pre-write self and v itself) is matched
        # to each argument in turn, so each saved item stands for its own argument
        k = first = None
        for j, f in enumerate(fwd_inputs):
            if item is f and isinstance(args[j], Tensor):
                if j not in used:
                    k = j
                    break
                if first is None:
                    first = j
        if k is None:
            k = first
        if k is not None:
            used += (k,)
            t = args[k]
            ex = t._extra
            if ex is not None and ex.get("inference"):
                raise RuntimeError(
                    f"Inference tensors cannot be saved for backward. Please do not use Tensors "
                    f"created in inference mode in computation tracked by autograd. "
                    f"({node.name()} would save one, of shape {list(t._data.shape)} and dtype "
                    f"{t.dtype}, made under tapegrad.inference_mode(): .clone() it outside that "
                    f"mode to get a normal tensor, or use tapegrad.no_grad() instead of "
                    f"inference_mode().)")
            vc = t._vc
            if vc is None:
                vc = known_counter(t)
            if where is None:   # (taken only for what a version check may name: not constants)
                where = user_frame(3)   # (from above apply or record, which called this)
            saved.append(("i", t, vc.v if vc is not None else 0, where))
            continue
        for j, o in enumerate(outputs):
            if isinstance(o, Tensor) and (item is o or item is o._data):
                vc = o._vc
                if vc is None:  # (a fresh output: nothing saved it before this node)
                    vc = o._vc = new_version_counter()
                if where is None:
                    where = user_frame(3)
                saved.append(("o", o._data, vc, vc.v, j, where))
                break
        else:
            if isinstance(item, Tensor):
                # a tensor neither argument nor result (a custom Function's intermediate): kept
                # itself, as torch's SavedVariable keeps it, so that saved-tensor hooks pack it
                # (a constant would not be) and a later in-place write to it is caught
                vc = item._vc
                if vc is None:
                    vc = known_counter(item)
                if where is None:
                    where = user_frame(3)
                saved.append(("i", item, vc.v if vc is not None else 0, where))
            elif node._forward_cls is not None and not node._forward_cls._builtin:
                raise _not_a_tensor(items, item)
            else:
                saved.append(("c", item))
    return saved


def _not_a_tensor(items, item):
    # (a built-in op may save constants and arrays; a custom Function's ctx.save_for_backward
    # takes tensors and None only, as torch's)
    return TypeError(f"save_for_backward can only save variables, but argument "
                     f"{next(i for i, x in enumerate(items) if x is item)} is of type "
                     f"{_type_name(item)}")


# The order torch's nodes call pack_hook in, where it is not the order of tapegrad's entries
# (torch's codegen saves each tensor where a derivative formula first names it: MulBackward0's
# self formula names other first)
_PACK_ORDER = {"MulBackward0": (1, 0), "DivBackward0": (1, 0), "MmBackward0": (1, 0),
               "BmmBackward0": (1, 0), "PowBackward1": (1, 0, 2)}


def pack_with_hooks(node, outputs):
    """Give each tensor ``node`` saved to this thread's innermost pack hook (if this thread has
    one: ``hooked_threads`` only says some thread does), in torch's order, and keep what it
    returns in a ("h", packed, unpack_hook, is_output, output_nr, grad_fn, requires_grad,
    accumulator) entry: the saved tensor's history without the tensor, so the hooks decide what
    stays in memory. Constants (a Python number a product saved) are not packed, as torch packs
    no wrapped number."""
    stack = saved_hooks_state.stack
    saved = node._saved
    if not stack or saved is None or saved is FREED:
        return
    pack, unpack = stack[-1]
    # (a copy: a list of constants may be shared between nodes, see ops.pointwise._mul_saved)
    entries = [saved] if type(saved) is tuple else list(saved)
    order = _PACK_ORDER.get(type(node).__name__)
    if order is None or len(order) != len(entries):
        order = range(len(entries))
    for k in order:
        e = entries[k]
        if e is not None and (e[0] == "i" or e[0] == "o"):
            entries[k] = hooked_entry(pack, unpack, e, outputs[e[4]] if e[0] == "o" else e[1])
    node._saved = entries
    if type(node).__name__ in _PACKS_TOTAL_WEIGHT:
        # (torch's nll_loss also saves its total weight, a 0-d tensor tapegrad keeps in meta)
        from .saved_attrs import nll_total_weight
        t = nll_total_weight(node)
        node._hooked_extra = hooked_entry(pack, unpack, ("i", t), t)


_PACKS_TOTAL_WEIGHT = ("NllLossBackward0", "NllLoss2DBackward0")


def hooked_entry(pack, unpack, e, t):
    """The hooked entry for saved entry ``e`` (an input's or an output's), whose tensor is
    ``t``: ``pack(t)`` and ``t``'s history (see :func:`pack_with_hooks`). RuntimeError, as torch,
    where ``pack`` modified ``t`` in place."""
    vc = known_counter(t)
    before = vc.v if vc is not None else 0
    packed = pack(t)
    vc = known_counter(t)
    if (vc.v if vc is not None else 0) != before:
        raise RuntimeError(
            "A saved tensor pack hook is modifying its input in place. Tensors provided as "
            "input to pack hook cannot be modified by in-place operations as this can lead "
            "to unexpected side-effects. Please open an issue if you need to perform "
            "in-place operations on the input to a pack hook.")
    if e[0] == "o":
        # (the node itself is not kept: it holds this entry, and would make a cycle)
        return ("h", packed, unpack, True, e[4], None, True, None)
    leaf_acc = t._acc if t.grad_fn is None and t._requires_grad else None
    return ("h", packed, unpack, False, t._output_nr, t.grad_fn, t._requires_grad, leaf_acc)


def unpack_hooked(node, e):
    """The tensor of hooked entry ``e`` of ``node`` (see :func:`pack_with_hooks`): its unpack
    hook's result, given the saved tensor's history, as torch's SavedVariable::unpack (a new
    Tensor object sharing the hook's result's data and version counter)."""
    t = e[2](e[1])
    if not isinstance(t, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {_type_name(t)}")
    return _hooked_tensor(node, e, t._data, version_counter(t))


def _hooked_tensor(node, e, arr, vc=None):
    """A tensor over ``arr`` with the history of the tensor hooked entry ``e`` stands for."""
    r = _make(arr, vc)
    if e[3]:
        r.grad_fn = node
        r._output_nr = e[4]
        r._requires_grad = True
    else:
        r.grad_fn = e[5]
        r._output_nr = e[4]
        r._requires_grad = e[6]
        if e[7] is not None:
            r._acc = e[7]
    return r


def version_error(node, i, shape, dtype, expected, actual, where_saved, vc, role):
    """The in-place error: which saved tensor, which node, both versions, both source lines."""
    modified = format_where(vc.where) if vc is not None and vc.where is not None else "<unknown>"
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: saved tensor {i} of {node.name()} ({role}; shape {list(shape)}, dtype "
        f"tapegrad.{np.dtype(dtype).name}) is at version {actual}; expected version {expected} "
        f"instead.\n  saved by the forward op at: {format_where(where_saved)}\n  modified in "
        f"place at:    {modified}\nFix: do the in-place op on a .clone(), or use the out-of-place "
        f"form (x = x.add(1) instead of x.add_(1)).")


def freed_error(node):
    return RuntimeError(
        f"Trying to backward through the graph a second time (or directly access saved tensors after "
        f"they have already been freed): {node.name()} needs tensors it saved, and they were released "
        f"by the previous backward. Specify retain_graph=True on the first backward() if you really "
        f"need two passes through the same graph; if this tensor came from an earlier iteration "
        f"(e.g. a hidden state carried across steps), call .detach() on it before reusing it.")


def _position(saved, e):
    # by identity: == on entries would compare the tensors inside them
    return next(k for k, x in enumerate(saved) if x is e)


def unpack_saved(node):
    """The node's saved tensors, checked against the versions recorded when they were saved."""
    saved = node._saved
    if saved is None:
        return ()
    if saved is FREED:
        raise freed_error(node)
    if type(saved) is tuple:    # (a result saved alone: its entry itself)
        saved = [saved]
    out = []
    for e in saved:
        if e is None:
            out.append(None)
            continue
        kind = e[0]
        if kind == "o":
            arr, vc = e[1], e[2]
            if vc is None:
                # (a result saved without a counter, never written since: the tensor made here
                # shares one with the entry and its output from now on)
                vc = attach_counter(node, e)
            if vc.v != e[3]:
                raise version_error(node, _position(saved, e), arr.shape, arr.dtype, e[3], vc.v, e[5],
                                    vc, f"output {e[4]} of {node.name()}")
            t = _new(Tensor)
            t._data = arr
            t._vc = vc
            t._base = None
            # (a saved result is a normal tensor, even unpacked in inference mode: as torch)
            dt = arr.dtype
            if dt in _FLOAT_DTYPES or dt.kind == "f":
                t.grad_fn = node
                t._output_nr = e[4]
                t._requires_grad = True
            else:
                t.grad_fn = None
                t._output_nr = 0
                t._requires_grad = False
            out.append(t)
        elif kind == "i":
            t = e[1]
            vc = t._vc
            if vc is None:
                vc = known_counter(t)
            if vc is not None and vc.v != e[2]:
                raise version_error(node, _position(saved, e), t._data.shape, t._data.dtype, e[2],
                                    vc.v, e[3], vc, "an input of the op")
            out.append(t)
        elif kind == "h":
            out.append(unpack_hooked(node, e))
        else:
            v = e[1]
            out.append(_make(v) if isinstance(v, np.ndarray) else v)
    return tuple(out)


def saved_result(node):
    """The array of the one result a ``saves_result`` op saved, checked as ``saved_tensors``
    checks it (RuntimeError when freed or modified in place since), without wrapping it in a
    tensor: for a backward that records nothing and needs only the values."""
    e = node._saved
    if type(e) is list and len(e) == 1:
        e = e[0]
    if type(e) is tuple and e[0] == "o" and (e[2] is None or e[2].v == e[3]):
        return e[1]
    return unpack_saved(node)[0]._data


def saved_result_tensor(node, arr):
    """The result a ``saves_result`` op saved, as a tensor, for a backward that read its array
    ``arr`` with :func:`saved_result` already: for a result packed by a saved_tensors_hooks
    block, a tensor over that array with the result's history, so that unpack_hook runs once
    per backward, as torch's; else ``ctx.saved_tensors[0]``."""
    saved = node._saved
    if type(saved) is list and saved[0] is not None and saved[0][0] == "h":
        return _hooked_tensor(node, saved[0], arr)
    return unpack_saved(node)[0]


BackwardNode.saved_tensors = property(unpack_saved, doc="""The tensors given to
``save_for_backward``, each checked against the version it had when saved (RuntimeError naming
both source lines if it was modified in place since).""")


def once_differentiable(fn):
    """Decorator for a custom backward that is not itself differentiable: under
    ``create_graph=True`` its results are connected to the gradients it received through a node
    whose backward raises, so differentiating them again fails loudly instead of silently."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outs = fn(ctx, *args)
        req = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not _state.record or not req:
            return outs
        single = not isinstance(outs, tuple)
        res = [(_DelayedError.apply(o, *req) if isinstance(o, Tensor) else o)
               for o in ((outs,) if single else outs)]
        return res[0] if single else tuple(res)
    return wrapper


class _DelayedError(Function, name="DelayedError"):
    """Marks a once_differentiable result: forward is identity, backward raises."""

    _builtin = True     # (torch's is a C++ node: callable)

    @staticmethod
    def forward(ctx, x, *inputs):
        return _make(x._data.copy())

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable: its backward is not itself differentiable")
