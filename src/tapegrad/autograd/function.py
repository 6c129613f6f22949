"""``Function``: an op's forward and its derivative, declared together once.

Built-in ops subclass :class:`ArrayFunction`: ``forward(ctx, *args)`` receives NumPy arrays for the
tensor arguments (other arguments as given) and returns arrays; ``backward(ctx, *grads)`` receives
and returns Tensors and is written with Tensor ops, so it is itself differentiable
(``create_graph=True``) without a second formula. User Functions subclass :class:`Function`, whose
forward receives Tensors (run under ``no_grad``) as in torch. Both record the same Node and go
through the same engine.
"""
from __future__ import annotations

import numpy as np

from .grad_mode import state as _state
from .graph import Node, VersionCounter, user_frame_summary

__all__ = ["Function", "ArrayFunction", "FunctionCtx", "once_differentiable"]


class BackwardNode(Node):
    """Node of a Function: it is also the ``ctx`` the Function's forward and backward see."""

    __slots__ = ()
    _forward_cls = None

    # -- ctx API -------------------------------------------------------------------------------
    def save_for_backward(self, *tensors):
        self._to_save = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *outputs):
        self._non_diff = outputs

    def set_materialize_grads(self, value: bool):
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        return unpack_saved(self)

    @property
    def needs_input_grad(self):
        return tuple(e is not None and e[0] is not None for e in self._edges)

    def needs(self, i: int) -> bool:
        """Whether forward argument ``i`` needs a gradient (a cheap needs_input_grad[i])."""
        e = self._edges[i]
        return e is not None and e[0] is not None

    def _run_backward(self, grads):
        return self._forward_cls.backward(self, *grads)


class _NullCtx:
    """The ctx a forward gets when nothing is recorded: it accepts and forgets everything."""

    needs_input_grad = ()

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
    node is named ``<ClassName>Backward`` unless the class passes ``name=...``.
    """

    _tensor_forward = True

    def __init_subclass__(cls, name: str | None = None, scalar_edges: int | None = None,
                          view: bool | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        attrs = {"__slots__": (), "_forward_cls": cls}
        if scalar_edges is not None:
            attrs["_scalar_edges"] = scalar_edges
        node_name = name or (cls.__name__ + "Backward")
        cls._backward_cls = type(node_name, (BackwardNode,), attrs)
        if view is not None:
            cls._view = view

    _view = False

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
        from .._tensor import Tensor, _make
        with_grad = False
        if _state.grad_enabled:
            for a in args:
                if isinstance(a, Tensor) and a.requires_grad:
                    with_grad = True
                    break
        ctx = cls._backward_cls() if with_grad else BackwardNode()
        custom_setup = cls.setup_context is not Function.setup_context
        prev = _state.grad_enabled
        _state.grad_enabled = False
        try:
            if custom_setup:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        finally:
            _state.grad_enabled = prev
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        raw = []
        for o in outs:
            if isinstance(o, Tensor):
                raw.append(o)
            elif isinstance(o, np.ndarray):
                raw.append(_make(o))
            else:
                raw.append(o)
        if not with_grad:
            return out
        # an output that is one of the inputs (returned as-is, or dirtied in place) gets a fresh
        # Tensor object here unless it was marked dirty; dirtied ones are rebased in place
        dirty = getattr(ctx, "_dirty", ())
        results = []
        for o in raw:
            if isinstance(o, Tensor) and any(o is a for a in args) and not any(o is d for d in dirty):
                o = _make(o.data, vc=o._vc)
            results.append(o)
        record(ctx, args, args, results, dirty=dirty)
        return results[0] if single else tuple(results)


class ArrayFunction(Function):
    """Base of the built-in ops: forward works on NumPy arrays and returns arrays."""

    _tensor_forward = False

    @classmethod
    def apply(cls, *args):
        from .._tensor import Tensor
        arrays = []
        needs = False
        for a in args:
            if isinstance(a, Tensor):
                arrays.append(a.data)
                if a.requires_grad:
                    needs = True
            else:
                arrays.append(a)
        if needs and _state.grad_enabled:
            ctx = cls._backward_cls()
            out = cls.forward(ctx, *arrays)
            if type(out) is tuple:
                outs = [_wrap(o) for o in out]
                record(ctx, args, arrays, outs)
                return tuple(outs)
            t = _wrap(out)
            record(ctx, args, arrays, (t,))
            if cls._view:
                _share_version(t, args[0])
            return t
        out = cls.forward(NULL_CTX, *arrays)
        if type(out) is tuple:
            return tuple(_wrap(o) for o in out)
        t = _wrap(out)
        if cls._view:
            _share_version(t, args[0])
        return t


def _wrap(arr):
    from .._tensor import _make
    return _make(arr)


def _share_version(view, base):
    vc = base._vc
    if vc is None:
        vc = base._vc = VersionCounter()
    view._vc = vc
    view._base = base if base._base is None else base._base


def record(node, args, fwd_inputs, outputs, dirty=()):
    """Attach ``node`` to the graph: edges to the inputs, saved tensors, grad_fn on the outputs."""
    from .._tensor import Tensor
    edges = []
    for a in args:
        if isinstance(a, Tensor):
            if a.requires_grad:
                fn = a.grad_fn
                if fn is None:
                    edges.append((a._accumulator(), 0, a.data.shape, a.data.dtype))
                else:
                    edges.append((fn, a._output_nr, a.data.shape, a.data.dtype))
            else:
                edges.append((None, 0, a.data.shape, a.data.dtype))
        else:
            edges.append(None)
    node._edges = edges
    non_diff = getattr(node, "_non_diff", None) if "_non_diff" in node.__dict__ else None
    n = 0
    out_meta = []
    for o in outputs:
        if isinstance(o, Tensor):
            if non_diff is not None and any(o is d or o.data is d for d in non_diff):
                out_meta.append(None)
            else:
                if o.data.dtype.kind not in "fc":
                    out_meta.append(None)
                else:
                    if any(o is d for d in dirty):
                        _rebase_dirty(o)
                    o.grad_fn = node
                    o._output_nr = n
                    o.requires_grad = True
                    out_meta.append((o.data.shape, o.data.dtype))
        else:
            out_meta.append(None)
        n += 1
    node._n_out = n
    node._out_meta = out_meta
    to_save = node.__dict__.pop("_to_save", None)
    if to_save is not None:
        node._saved = _pack(node, to_save, args, fwd_inputs, outputs)


def _rebase_dirty(t):
    vc = t._vc
    if vc is None:
        vc = t._vc = VersionCounter()
    vc.v += 1


def _pack(node, items, args, fwd_inputs, outputs):
    saved = []
    where = None
    for item in items:
        if item is None:
            saved.append(None)
            continue
        if not hasattr(item, "shape"):
            saved.append(("c", item))
            continue
        for i, f in enumerate(fwd_inputs):
            if item is f and hasattr(args[i], "_vc"):
                t = args[i]
                vc = t._vc
                if t._extra is not None and t._extra.get("inference"):
                    raise RuntimeError(
                        f"{node.name()}: cannot save an inference tensor (shape {tuple(t.shape)}, "
                        f"{t.dtype}) for backward: it was created under tapegrad.inference_mode(). "
                        "Make it outside inference_mode, or use .clone() on it outside that mode.")
                if where is None:
                    where = user_frame_summary()
                saved.append(("i", t, vc.v if vc is not None else 0, where))
                break
        else:
            for j, o in enumerate(outputs):
                if item is o or (hasattr(o, "data") and item is o.data):
                    vc = o._vc
                    if vc is None:
                        vc = o._vc = VersionCounter()
                    if where is None:
                        where = user_frame_summary()
                    saved.append(("o", o.data, vc, vc.v, j, where))
                    break
            else:
                saved.append(("c", item.data if hasattr(item, "_vc") else item))
    return saved


def _version_error(node, i, shape, dtype, expected, actual, where_saved, vc):
    modified = vc.where if vc is not None and vc.where else "<unknown>"
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: saved tensor {i} of {node.name()} (shape {list(shape)}, dtype "
        f"tapegrad.{np.dtype(dtype).name}) is at version {actual}; expected version {expected} "
        f"instead.\n  saved by the forward op at: {where_saved}\n  modified in place at:    "
        f"{modified}\nFix: do the in-place op on a .clone(), or use the out-of-place form "
        f"(x = x.add(1) instead of x.add_(1)).")


def freed_error(node):
    return RuntimeError(
        f"Trying to backward through the graph a second time (or directly access saved tensors after "
        f"they have already been freed): {node.name()} needs tensors it saved, and they were released "
        f"by the previous backward. Specify retain_graph=True on the first backward() if you really "
        f"need two passes through the same graph; if this tensor came from an earlier iteration "
        f"(e.g. a hidden state carried across steps), call .detach() on it before reusing it.")


def unpack_saved(node):
    from .._tensor import _make
    saved = node._saved
    if node._freed:
        raise freed_error(node)
    if saved is None:
        return ()
    out = []
    for i, e in enumerate(saved):
        if e is None:
            out.append(None)
            continue
        kind = e[0]
        if kind == "i":
            t = e[1]
            vc = t._vc
            v = vc.v if vc is not None else 0
            if v != e[2]:
                raise _version_error(node, i, t.data.shape, t.data.dtype, e[2], v, e[3], vc)
            out.append(t)
        elif kind == "o":
            arr, vc = e[1], e[2]
            if vc.v != e[3]:
                raise _version_error(node, i, arr.shape, arr.dtype, e[3], vc.v, e[5], vc)
            t = _make(arr, vc=vc)
            if arr.dtype.kind == "f":
                t.grad_fn = node
                t._output_nr = e[4]
                t.requires_grad = True
            out.append(t)
        else:
            out.append(_make(e[1]) if isinstance(e[1], np.ndarray) else e[1])
    return tuple(out)


def once_differentiable(fn):
    """Decorator for a custom backward that is not itself differentiable: under
    ``create_graph=True`` its results are marked so that a second backward through them raises."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        from .grad_mode import no_grad
        with no_grad():
            outs = fn(ctx, *args)
        if not _state.grad_enabled:
            return outs
        from .._tensor import Tensor
        needs = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if not needs:
            return outs
        single = not isinstance(outs, tuple)
        res = []
        for o in ((outs,) if single else outs):
            if isinstance(o, Tensor):
                o = _OnceDifferentiable.apply(o)
            res.append(o)
        return res[0] if single else tuple(res)
    return wrapper


class _OnceDifferentiable(ArrayFunction, name="DelayedError"):
    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable: its backward is not itself differentiable")
