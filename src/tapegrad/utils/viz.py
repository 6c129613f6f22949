"""Draw the recorded graph (the tape) of a tensor with Graphviz.

:func:`make_dot` walks ``tensor.grad_fn`` through ``next_functions`` and returns a
``graphviz.Digraph``. It needs the optional ``graphviz`` Python package
(``pip install 'tapegrad[viz]'``); building the Digraph (and its ``.source`` text) needs nothing
else, while rendering it to an image (``dot.render(...)``, or display in Jupyter) also needs
Graphviz's ``dot`` program on the PATH.

Example::

    dot = make_dot(loss, params=dict(model.named_parameters()), show_saved=True)
    print(dot.source)            # DOT text
    dot.render("graph", format="svg")   # needs the dot program
"""
from __future__ import annotations

import numpy as np

__all__ = ["make_dot"]

_GRAPHVIZ_MISSING = (
    "tapegrad.utils.viz.make_dot needs the 'graphviz' Python package, an optional dependency: "
    "pip install 'tapegrad[viz]' (or pip install graphviz). Rendering the graph to an image "
    "also needs Graphviz's 'dot' program (e.g. apt install graphviz).")

_OUTPUT_COLOR = "darkolivegreen1"
_LEAF_COLOR = "lightblue"
_SAVED_COLOR = "orange"
_OP_COLOR = "lightgrey"
_NL = "\\n"   # DOT's line break inside a label (graphviz keeps backslash escapes as they are)


def _digraph_cls():
    try:
        from graphviz import Digraph
    except ImportError as e:
        raise ImportError(_GRAPHVIZ_MISSING) from e
    return Digraph


def _shape(shape):
    return "(" + ", ".join(str(int(d)) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _param_names(params):
    """{id(tensor): name} from a dict name -> tensor or an iterable of (name, tensor) pairs."""
    from .._tensor import Tensor
    if params is None:
        return {}
    items = params.items() if hasattr(params, "items") else params
    names = {}
    for pair in items:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError("make_dot: params must be a dict of name -> Tensor (e.g. "
                            "dict(model.named_parameters())) or an iterable of (name, Tensor) "
                            f"pairs; got an item of type {type(pair).__name__}")
        name, t = pair
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dot: params[{name!r}] must be a Tensor, not "
                            f"{type(t).__name__}")
        names.setdefault(id(t), str(name))
    return names


def _short(value, limit):
    text = repr(value)
    return text if len(text) <= limit else text[:max(limit - 3, 0)] + "..."


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The graph that produced ``var`` as a ``graphviz.Digraph``.

    Args:
        var: a Tensor, or a list/tuple of Tensors (several outputs drawn in one graph).
        params: names for leaves: a dict ``name -> Tensor`` (``dict(model.named_parameters())``)
            or an iterable of ``(name, Tensor)`` pairs. A leaf found there is labelled with its
            name and shape; other leaves with their shape only.
        show_attrs: add the non-tensor values a node saved for backward (a scalar factor, a
            dim, ...) to its label, each cut to ``max_attr_chars`` characters.
        show_saved: draw the tensors each node saved for backward: orange boxes with shape and
            dtype (and name, for a tensor in ``params``), joined to the node by dashed lines
            labelled ``saved[k]`` (k: the position among the node's saved values). One tensor
            saved by several nodes is one box; a saved leaf that is drawn already is joined to
            its own box. A node whose saved tensors a backward released says so in its
            label.
        max_attr_chars: the length limit of ``show_attrs`` values.

    Drawing: each output tensor is a green box with its shape; each recorded op is a grey box
    named by its ``grad_fn`` class (``MulBackward0``, ``MmBackward0``, ...); each leaf that
    requires grad is the blue box of its ``AccumulateGrad`` node, labelled with its name (when
    ``params`` has it) over its shape, e.g. ``fc1.weight`` / ``(4, 3)``.
    Edges run from inputs to the ops that used them (forward direction); an input used twice
    gets two edges. Node ids are ``n0, n1, ...`` in the order of a walk from the outputs, so the
    DOT text of one graph is the same from run to run. A tensor that does not require grad is
    drawn alone.

    Returns a ``graphviz.Digraph`` (``.source`` gives the DOT text; rendering needs the ``dot``
    program). Raises ImportError naming the ``viz`` extra when the ``graphviz`` package is
    missing, TypeError when ``var`` is not a Tensor (or a sequence of them) or ``params`` is
    malformed.
    """
    from .._tensor import Tensor
    from ..autograd.graph import FREED, AccumulateGrad, saved_entries

    Digraph = _digraph_cls()
    outputs = list(var) if isinstance(var, (list, tuple)) else [var]
    for i, t in enumerate(outputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"make_dot: expected a Tensor or a list/tuple of Tensors, got "
                            f"{type(t).__name__}" + (f" at position {i}"
                                                     if isinstance(var, (list, tuple)) else ""))
    names = _param_names(params)

    dot = Digraph(name="tapegrad", format="svg",
                  node_attr={"style": "filled", "shape": "box", "align": "left",
                             "fontsize": "10", "height": "0.2", "fontname": "monospace"},
                  graph_attr={"size": "12,12", "ranksep": "0.1"})
    ids = {}     # id(obj) -> node id
    keep = []    # objects whose ids are in use

    def node_id(obj):
        nid = ids.get(id(obj))
        if nid is None:
            nid = ids[id(obj)] = f"n{len(ids)}"
            keep.append(obj)
        return nid

    def leaf_label(t):
        name = names.get(id(t))
        shape = _shape(t.shape)
        return f"{name}{_NL}{shape}" if name else shape

    def op_label(fn):
        lines = [fn.name()]
        saved = getattr(fn, "_saved", None)
        if saved is FREED and (show_saved or show_attrs):
            lines.append("(saved tensors freed)")
        elif show_attrs and saved is not None:
            for k, e in enumerate(saved_entries(fn)):
                if e is not None and e[0] == "c" and not isinstance(e[1], np.ndarray):
                    lines.append(f"saved[{k}]: {_short(e[1], max_attr_chars)}")
        return _NL.join(lines)

    def draw_saved(fn, fn_id):
        if getattr(fn, "_saved", None) is None:
            return
        for k, e in enumerate(saved_entries(fn)):
            if e is None:
                continue
            slot = f"saved[{k}]"
            if e[0] == "i":
                t = e[1]
                acc = t._acc() if t._acc is not None else None
                if t.grad_fn is None and acc is not None and id(acc) in ids:
                    dot.edge(ids[id(acc)], fn_id, label=slot, style="dashed", arrowhead="none",
                             fontsize="8")
                    continue
                arr, name = t._data, names.get(id(t))
            elif e[0] == "o" or isinstance(e[1], np.ndarray):
                arr, name = e[1], None
            else:
                continue
            # keyed by the array: a tensor saved by several nodes (as one's input and another's
            # output) is one box
            new = id(arr) not in ids
            sid = node_id(arr)
            if new:
                text = f"{_shape(arr.shape)} {arr.dtype.name}"
                dot.node(sid, f"{name}{_NL}{text}" if name else text, fillcolor=_SAVED_COLOR)
            dot.edge(sid, fn_id, label=slot, style="dashed", arrowhead="none", fontsize="8")

    # the outputs
    todo = []
    for t in outputs:
        if id(t) in ids:
            continue
        tid = node_id(t)
        dot.node(tid, _shape(t.shape), fillcolor=_OUTPUT_COLOR)
        fn = t.grad_fn
        if fn is None and t.requires_grad:
            fn = t._accumulator()
        if fn is not None:
            new = id(fn) not in ids
            fid = node_id(fn)
            dot.edge(fid, tid)
            if new:
                todo.append(fn)

    # the graph, breadth first from the outputs (iterative: deep graphs are fine)
    head = 0
    while head < len(todo):
        fn = todo[head]
        head += 1
        fid = ids[id(fn)]
        if isinstance(fn, AccumulateGrad):
            dot.node(fid, leaf_label(fn.variable), fillcolor=_LEAF_COLOR)
            continue
        dot.node(fid, op_label(fn), fillcolor=_OP_COLOR)
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            new = id(nxt) not in ids
            nid = node_id(nxt)
            dot.edge(nid, fid)
            if new:
                todo.append(nxt)
    if show_saved:
        for fn in todo:
            if not isinstance(fn, AccumulateGrad):
                draw_saved(fn, ids[id(fn)])
    return dot
