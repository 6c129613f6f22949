"""The backward walk.

1. Order: nodes run newest first (a node is numbered when it is recorded, after every node its
   edges lead to), as torch's ready queue runs them. So when the newest node reached so far runs,
   every node that sends it a gradient has run: a node is queued when the first gradient reaches
   it, and needs no count of its inputs. Gradients meeting at a node are summed in its input
   buffer before it runs (a gradient that first reaches a node that runs next, as in a chain, is
   handed to it without one).
2. Leaves: torch runs a leaf's AccumulateGrad as soon as its last gradient came, before any other
   node. Unless something can see when that is, the leaves are settled after the walk, in that
   order (worked out from the node whose edge last reached each). While a leaf has a hook that
   runs inside the walk (a tensor hook, an AccumulateGrad prehook), and for ``inputs=`` (only the
   nodes leading to them run), the nodes reachable from the roots are collected first and each
   one's inputs counted, and leaves run as soon as they are ready.
3. For each node: tensor hooks, retain_grad captures, prehooks, the node's backward, hooks, then
   each gradient is checked against the input it belongs to (a broadcast input gets its gradient
   summed back to its shape here, in one place; a dtype mismatch is cast) and passed along.
4. Leaf gradients are *staged* and committed only when the whole walk succeeded, and saved tensors
   are released only then: a backward that raises changes no ``.grad`` and frees nothing.

Leaves that one node makes ready together run in the order of its inputs. (torch's order there
comes from its heap's layout: the same for two such leaves, a weight and a bias, and for more
only sometimes.)
"""
from __future__ import annotations

import heapq
import sys
from operator import itemgetter

import numpy as np

from .._memory_format import (contiguous_format, dense_layout, empty_with_strides,
                              plain_c_order, strides_of)
from .._tensor import Tensor, _make
from ..ops.shape import SumToSize
from .grad_mode import enable_grad, set_state
from .grad_mode import state as _state
from .graph import (EXACT_REFCOUNTS, FREED, LENT, AccumulateGrad, bump, leaf_prehooked,
                    leaf_prehooks_live, sole_holder, user_frame, version_counter)

__all__ = ["run_backward", "call_node", "call_direct", "accumulate_direct"]

# NumPy >= 2 keeps its floating-point error state in one context variable: setting it to a
# prepared "ignore all" state costs a quarter of entering np.errstate (a backward call enters it
# once). The prepared state is made from the caller's (so its buffer size and error callback
# stay) and kept while the caller's state is the same object. Elsewhere (NumPy 1.x) np.errstate.
try:
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE
except ImportError:
    _ERRSTATE = None
_quiet_for = (None, None)   # (a caller's error state, the same with every warning ignored)


def _quiet():
    """Silence NumPy's inf/nan warnings; returns what :func:`_unquiet` needs to undo it."""
    global _quiet_for
    if _ERRSTATE is not None:
        cur = _ERRSTATE.get()
        seen, quiet = _quiet_for
        if cur is not seen:
            with np.errstate(all="ignore"):
                quiet = _ERRSTATE.get()
            _quiet_for = (cur, quiet)
        return _ERRSTATE.set(quiet)
    es = np.errstate(all="ignore")
    es.__enter__()
    return es


def _unquiet(token):
    if _ERRSTATE is not None:
        _ERRSTATE.reset(token)
    else:
        token.__exit__(None, None, None)


def _collect(root_nodes, targets):
    """Dependency counts of the nodes reachable from the roots; with ``targets``, only of the
    nodes that lead to one (returned as ``needed``). A node that makes edges on demand
    (``_lazy``: a Linear node's TBackward0 node) makes them first: a hook running inside this
    walk could ask for them after the counts were taken."""
    deps = {}
    if targets is None:
        roots = set(root_nodes)
        stack = list(root_nodes)
        while stack:
            node = stack.pop()
            if node._lazy is not None:
                node._lazy()
            edges = node._edges
            # (flat edges, four entries per argument: stepped through by hand, as a slice or a
            # range costs an object per node)
            k, n = 0, len(edges)
            while k < n:
                nxt = edges[k]
                k += 4
                if nxt is None:
                    continue
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    # first time reached: walk on from it (a root is walked already)
                    deps[nxt] = 1
                    if nxt not in roots:
                        stack.append(nxt)
        return deps, None
    # needed: a node that is a target or leads to one (children come before parents here)
    needed = set()
    for node in _postorder(root_nodes):
        if node in targets or _leads_to(node._edges, needed):
            needed.add(node)
    for node in needed:
        for f in node._edges[::4]:
            if f is not None and f in needed:
                deps[f] = deps.get(f, 0) + 1
    return deps, needed


def _postorder(roots):
    out = []
    visited = set()
    stack = [(r, False) for r in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            out.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        if node._lazy is not None:
            node._lazy()
        stack.append((node, True))
        for f in node._edges[::4]:
            if f is not None and f not in visited:
                stack.append((f, False))
    return out


def _fix_grad(node, i, g, shape, dtype):
    """Make gradient ``g`` for input ``i`` (of this shape and dtype) fit it: sum a broadcast
    gradient back to the input's shape (the one shared place for broadcasting), cast to the
    input's dtype, or raise naming the node, the input position and both shapes."""
    if not isinstance(g, Tensor):
        _bad_type(node, i, g)
    gshape = g._data.shape
    if gshape == shape and g._data.dtype == dtype:
        return g
    if gshape != shape:
        lead = len(gshape) - len(shape)
        # (leading dims only, a bias's gradient, is told by one comparison)
        if lead < 0 or gshape[lead:] != shape and not all(
                s == 1 or s == gs for s, gs in zip(shape, gshape[lead:])):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {i} - got "
                f"{list(gshape)} but expected shape compatible with {list(shape)}")
        g = SumToSize.apply(g, shape)   # (shape is checked just above)
    if g._data.dtype != dtype:
        g = g.to(dtype)
    return g


def _bad_type(node, i, g):
    raise TypeError(f"function {node.name()} returned a gradient of type {type(g).__name__} at "
                    f"index {i}; expected a Tensor or None")


def _fix_count(node, grads):
    n = len(node._edges) >> 2
    if type(grads) is not tuple:
        grads = (grads,)
    if len(grads) == n:
        return grads
    # torch allows extra trailing Nones; anything else is an error naming the Function
    if len(grads) > n and all(g is None for g in grads[n:]):
        return grads[:n]
    raise RuntimeError(
        f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
        f"got {len(grads)}): backward must return one gradient (or None) per argument of forward")


def _run_prehooks(node, grads):
    for hook in list(node._prehooks.values()):
        r = hook(tuple(grads))
        if r is not None:
            grads = list(r)
    return grads


def _run_formula(node, grads):
    """The node's backward on its output gradients (a list; None where an output got none,
    given as zeros unless the Function turned that off), its results counted."""
    meta = node._out_meta
    sp = node._special
    if meta is not None and (sp is None or sp.get("materialize", True)):
        for k, g in enumerate(grads):
            if g is None and meta[k] is not None:
                grads[k] = _make(np.zeros(meta[k][0], meta[k][1]))
    return _fix_count(node, node._forward_cls.backward(node, *grads))


def _check_direct_args(node, grads, n, takes):
    """TypeError, as torch, unless ``grads`` (a node called by hand) holds exactly ``n``
    gradients, each a Tensor or None (``takes``: what the node takes, for the message)."""
    if len(grads) != n:
        raise TypeError(f"expected {n} arguments, got {len(grads)} instead ({node.name()} called "
                        f"by hand takes {takes})")
    for i, g in enumerate(grads):
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"argument {i} is not a Variable ({node.name()} called by hand takes "
                            f"Tensors or None, got {type(g).__name__})")


def call_direct(node, grads):
    """A node called by hand, ``node(*grads)``, as torch's call runs it: the backward formula
    alone, without the node's hooks, and without the engine's sum and cast of each gradient to
    its input's shape and dtype (a broadcast input's gradient keeps the output's shape). One
    gradient (or None) per forward argument: None for one that needs no gradient, and for all
    when no gradient is given. TypeError, as torch, unless given one gradient (a Tensor or
    None) per differentiable output (max(dim)'s, sort's and topk's indices take none); the
    node's own check (``_check_direct``: softmax's RuntimeError for a gradient whose dtype or
    shape is not its output's) runs first. An op whose backward takes a cheaper route than
    torch's formula, with another layout, runs torch's as written (``_backward_by_hand``:
    mean's, whose backward expands a 0-d quotient where torch divides after expanding, giving
    a new C-order tensor recorded as DivBackward1)."""
    meta = node._out_meta
    diff = [k for k, m in enumerate(meta) if m is not None] if meta is not None else [0]
    n = len(diff)
    takes = f"one gradient, or None, per differentiable output of its op: {n}"
    if n < node._n_out:
        takes += f"; its {node._n_out - n} output(s) without a gradient (indices) take none"
    _check_direct_args(node, grads, n, takes)
    edges = node._edges
    if all(g is None for g in grads):
        return [None] * (len(edges) >> 2)
    check = node._forward_cls._check_direct
    if check is not None:
        check(node, grads)
    full = [None] * node._n_out
    for k, g in zip(diff, grads):
        full[k] = g
    by_hand = node._forward_cls._backward_by_hand
    # (an op with one output: a gradient was given, none to make of zeros)
    res = _run_formula(node, full) if by_hand is None else _fix_count(node, by_hand(node, *full))
    return [None if g is None or edges[4 * i] is None else g for i, g in enumerate(res)]


def accumulate_direct(node, grads):
    """An AccumulateGrad node called by hand, ``node(grad)``, as torch's: ``grad`` goes into the
    leaf's ``.grad`` and post-accumulate-grad hooks run (no other hook does); returns ``()``.
    A first ``.grad`` is a copy laid out as the leaf (of the leaf's shape, the gradient's dtype;
    CopyBackwards when grad mode is on and the gradient has history); a later one is summed
    out of place while grad mode is on (its dtype promoted, its tensor replaced), in place
    otherwise. Nothing happens for None or a leaf that no longer requires grad. TypeError for
    anything but one Tensor or None; RuntimeError for a gradient that does not broadcast to
    the leaf's shape."""
    _check_direct_args(node, grads, 1, "one gradient, or None, for its leaf")
    g, t = grads[0], node.variable
    if g is None or not t._requires_grad:
        return ()
    if t._grad is None:
        if dense_layout(t._data):
            t._grad = _make(_empty_in_layout(t._data, g._data.dtype)).copy_(g)
        else:
            t._grad = g.clone(memory_format=contiguous_format)
    elif _state.grad_enabled:
        t._grad = t._grad + g
    else:
        t._grad += g
    if t._extra is not None and t._extra.get("post_acc_hooks"):
        _run_post_acc_hooks(t)
    return ()


def call_node(node, grads):
    """Run one node's backward on its output gradients, with its hooks; returns one checked
    gradient (or None) per forward argument."""
    if node._prehooks is not None:
        grads = _run_prehooks(node, grads)
    res = _run_formula(node, grads)
    out = []
    edges = node._edges
    for i, g in enumerate(res):
        k = 4 * i
        if g is None or edges[k] is None:
            out.append(None)
            continue
        shape, dtype = edges[k + 2], edges[k + 3]
        if type(g) is not Tensor or g._data.shape != shape or g._data.dtype != dtype:
            g = _fix_grad(node, i, g, shape, dtype)
        out.append(g)
    if node._hooks is not None:
        # hooks see grad_inputs aligned with next_functions (tensor arguments only), as in torch
        pos = node._shown()
        for hook in list(node._hooks.values()):
            r = hook(tuple(out[i] for i in pos), tuple(grads))
            if r is not None:
                r = tuple(r)
                if len(r) != len(pos):
                    raise RuntimeError(f"hook on {node.name()} returned {len(r)} gradients; "
                                       f"expected {len(pos)} (one per next_functions entry)")
                for i, g in zip(pos, r):
                    out[i] = g
    return out


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None, accumulate=True):
    """Backpropagate ``root_grads`` from ``roots`` (lists of Tensors).

    With ``accumulate`` (backward), leaf ``.grad`` is accumulated (only for ``inputs`` when given).
    Without it (autograd.grad), returns the gradients of ``inputs`` (None where unreached).
    """
    root_nodes = []
    buffers = {}
    root_leaves = {}    # a leaf among the roots -> its last position there
    for i, (t, g) in enumerate(zip(roots, root_grads)):
        node = t.grad_fn if t.grad_fn is not None else t._accumulator()
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_out
            root_nodes.append(node)
        if type(node) is AccumulateGrad:
            root_leaves[node] = i
        nr = t._output_nr
        buf[nr] = g if buf[nr] is None else buf[nr] + g

    targets = captures = None
    if inputs is not None:
        targets = set()
        captures = {}
        for k, t in enumerate(inputs):
            node = t.grad_fn if t.grad_fn is not None else t._accumulator()
            targets.add(node)
            captures.setdefault(node, []).append((t._output_nr, k, t))
    staged = []       # (tensor, grad): committed into .grad only after the walk succeeded
    captured = [None] * (len(inputs) if inputs is not None else 0)
    ran = []
    acc_hooks = []    # (AccumulateGrad, grad): its node hooks run once .grad is written

    def run_leaf(node, hooks=True, key=None):
        """What a leaf's AccumulateGrad does with the gradient it got: its hooks (unless it is
        settled late, as of before they came), then the gradient staged for .grad (with its
        place in torch's order, ``key``, when settled late)."""
        grads = buffers.pop(node)
        # (AccumulateGrad._tensor_prehooks, inlined: the leaf's hooks, kept in its _extra)
        ex = node.variable._extra
        if hooks and ex is not None and ex.get("hooks") is not None:
            _run_tensor_prehooks(node, grads)
        if captures is not None and node in captures:
            _capture(node, grads, captures[node], captured, None)
        if hooks and node._prehooks is not None:
            grads = _run_prehooks(node, grads)
        ex = node.variable._extra   # (again: a hook may have changed it)
        if accumulate and grads[0] is not None and (targets is None or node in targets) and \
                (ex is None or not ex.get("no_grad_view")):   # (torch drops those)
            staged.append((node.variable, grads[0]))
            if staged_keys is not None:
                staged_keys.append(key)
            if node._hooks is not None:
                acc_hooks.append((node, grads[0]))

    if targets is None and not (leaf_prehooked and leaf_prehooks_live()):
        capture_state = None
        # nothing needs counts: the order alone tells when a node is ready (module docstring)
        deps = needed = leaves_ready = None
        # each leaf reached -> its place among the leaves, settled after the walk: the number of
        # the node whose edge last reached it (newest first), then that edge's position; a root,
        # before all, by its last position among the roots
        leaves_reached = {n: (_ROOT, i) for n, i in root_leaves.items()}
        # each staged entry's place in torch's order, as leaves_reached gives it (a retained
        # gradient: at its node, before the leaves that node completes); see _in_order
        staged_keys = []
        heap = [(-n._seq, n) for n in root_nodes if type(n) is not AccumulateGrad]
    else:
        deps, needed = _collect(root_nodes, targets)
        capture_state = (captures, captured, staged if accumulate else None, needed,
                         targets if accumulate else None)
        leaves_reached = staged_keys = None
        leaves_ready = []   # the leaves the current node made ready: they run right after it
        heap = [(-n._seq, n) for n in root_nodes
                if n not in deps and type(n) is not AccumulateGrad]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    # (NumPy's inf/nan warnings stay quiet, as torch is, even where a program turns warnings into
    # errors: the package's own warning filter loses to one the program adds later.) Grad mode is
    # create_graph during the walk: switched directly, as set_grad_enabled's three writes of the
    # thread-local state cost as much as a node.
    prev = _state.grad_enabled
    mode = bool(create_graph)
    if mode is not prev:
        set_state(mode, _state.inference)
    quiet = _quiet()
    try:
        if deps is not None:
            for node in sorted(root_leaves, key=root_leaves.__getitem__):
                if node not in deps:
                    run_leaf(node)
        ready = node = None     # a node the previous one made ready; the node that ran last
        # its gradients when that node got them from one edge alone: they skip the buffers dict
        # (a chain's every node), else None and they are in buffers
        ready_grads = None
        while True:
            if leaf_prehooked and deps is None:
                # a hook put a hook on a leaf (none had one when the walk began): from here, as
                # if counted from the start
                if ready is not None:
                    buffers[ready] = ready_grads
                    push(heap, (-ready._seq, ready))
                    ready = ready_grads = None
                deps, heap, done = _count_rest(heap, leaves_reached)
                for leaf in done:
                    # (torch settled a leaf that the last node completed after that node, so
                    # with the new hook; one completed earlier, without)
                    run_leaf(leaf, node is not None and leaves_reached[leaf][0] == -node._seq,
                             leaves_reached[leaf])
                _in_order(staged, staged_keys)
                leaves_reached = staged_keys = None
                leaves_ready = []
            # a node made ready runs next without a trip through the heap when nothing queued is
            # newer (a chain never touches the heap); the order is the heap's order
            if ready is not None and (not heap or heap[0][0] > -ready._seq):
                node = ready
                grads = buffers.pop(node) if ready_grads is None else ready_grads
            else:
                if ready is not None:
                    if ready_grads is not None:
                        buffers[ready] = ready_grads
                    push(heap, (-ready._seq, ready))
                if not heap:
                    break
                node = pop(heap)[1]
                grads = buffers.pop(node)
            ready = ready_grads = None
            edges = node._edges
            # (a node's _rare, a class default for most, is read once: CPython 3.11 does not
            # specialise that read)
            if node._rare:
                # a node with hooks, retained gradients or more than one output
                if node._tensor_prehooks is not None:
                    _run_tensor_prehooks(node, grads)
                if node._retain is not None:
                    for nr, ref in node._retain.items():
                        t = ref()
                        if t is not None and grads[nr] is not None:
                            staged.append((t, grads[nr]))
                            if staged_keys is not None:
                                staged_keys.append((-node._seq, -1))
                if captures is not None and _skipped(node, grads, capture_state):
                    continue
                res = None
                for g in grads:
                    if g is not None:
                        ran.append(node)
                        res = call_node(node, grads)
                        break
                # (read again: its hooks may have made edges it makes on demand, _lazy, which
                # its backward then gave its gradients for)
                edges = node._edges
                if res is None:     # (no gradient reached it: its inputs' counts still go down)
                    res = (None,) * (len(edges) >> 2)
            else:
                # the common case, inlined: one output, no hooks; gradients checked below
                if captures is not None and _skipped(node, grads, capture_state):
                    continue
                if grads[0] is not None:
                    ran.append(node)
                    res = type(node)._forward_cls.backward(node, grads[0])
                    if type(res) is not tuple:
                        res = (res,)
                    if len(res) << 2 != len(edges):
                        res = _fix_count(node, res)
                else:
                    res = (None,) * (len(edges) >> 2)
            # (edges are flat: node, output_nr, shape, dtype for each argument; k indexes them
            # as the loop goes, which costs less than a range)
            k = -4
            for g in res:
                k += 4
                nxt = edges[k]
                if nxt is None or (needed is not None and nxt not in needed):
                    continue
                # (a dtype is compared by identity first: NumPy's are singletons)
                if g is not None and (type(g) is not Tensor or g._data.shape != edges[k + 2] or
                                      g._data.dtype is not edges[k + 3]):
                    g = _fix_grad(node, k >> 2, g, edges[k + 2], edges[k + 3])
                if nxt is ready:
                    buf = ready_grads
                elif (buf := buffers.get(nxt)) is None and ready is None and \
                        type(nxt) is not AccumulateGrad and (deps is None or deps[nxt] == 1):
                    # its first gradient, and it may run next: handed on without a buffer (with
                    # counts, only when it is its only one; a chain's every node)
                    ready = nxt
                    if nxt._n_out == 1:
                        ready_grads = [g]
                    else:
                        ready_grads = [None] * nxt._n_out
                        ready_grads[edges[k + 1]] = g
                    continue
                elif deps is None:
                    if type(nxt) is AccumulateGrad:
                        leaves_reached[nxt] = (-node._seq, k)
                        if buf is None:
                            buf = buffers[nxt] = [None]
                    elif buf is None:
                        # first reached: queued, to run once nothing newer is left
                        buf = buffers[nxt] = [None] * nxt._n_out
                        push(heap, (-nxt._seq, nxt))
                else:
                    d = deps[nxt] - 1
                    deps[nxt] = d
                    if buf is None:
                        buf = buffers[nxt] = [None] * nxt._n_out
                    if d == 0:
                        if type(nxt) is AccumulateGrad:
                            leaves_ready.append(nxt)
                        elif ready is None:
                            ready = nxt
                        else:
                            push(heap, (-nxt._seq, nxt))
                if g is not None:
                    nr = edges[k + 1]
                    old = buf[nr]
                    if old is None:
                        buf[nr] = g
                    elif create_graph:
                        buf[nr] = old + g
                    else:
                        # into a gradient only this walk holds, in place and counted as a write
                        # (as torch's input buffer does; the .grad it may become shows it): old
                        # if it can, else the new one. References to old: the buffer list, the
                        # local, the parameter, getrefcount's argument; to g: this node's
                        # results, the loop's variable, the same two. More: someone else's.
                        if sole_holder(old, g._data.shape, g._data.dtype, 4):
                            old._data += g._data
                            version_counter(old).v += 1
                        elif sole_holder(g, old._data.shape, old._data.dtype, 4):
                            g._data += old._data
                            version_counter(g).v += 1
                            buf[nr] = g
                        else:
                            buf[nr] = old + g
            # drop the references to the gradients passed on (the loop's last one, and this
            # node's results): the next backward may reuse a gradient's buffer only when the
            # engine alone holds it (a reference count)
            g = res = None
            if leaves_ready:
                # as torch's leaves, which run before any other node once ready (in the order
                # they became so)
                for leaf in leaves_ready:
                    run_leaf(leaf)
                leaves_ready.clear()
        if leaves_reached:
            # (staged in their order already when no retained gradient came before them)
            interleaved = bool(staged)
            for leaf in sorted(leaves_reached, key=leaves_reached.__getitem__):
                run_leaf(leaf, key=leaves_reached[leaf])
            if interleaved:
                _in_order(staged, staged_keys)
    finally:
        _unquiet(quiet)
        # (also when a hook switched grad mode itself: torch puts the caller's back)
        if _state.grad_enabled is not prev:
            set_state(prev, _state.inference)
    # the walk's last gradients: _commit may take a gradient nobody else holds as .grad (a
    # reference count), so the loop's locals must not count
    grads = buf = res = old = None
    # (without accumulate, only retained gradients are staged: torch fills those in grad() too)
    if staged:
        _commit(staged, create_graph, root_grads, acc_hooks)
    if not retain_graph:
        for node in ran:
            if node._saved is not None:
                node._saved = FREED
    return captured


_ROOT = float("-inf")    # a root leaf's place among the leaves reached: first


def _in_order(staged, keys):
    """Put the staged entries of a walk that settled its leaves late in torch's order (keys: each
    one's place), where retained gradients and leaves interleave: which one may keep a gradient
    they share depends on it (_commit)."""
    if len(keys) > 1:
        staged[:] = [e for _, e in sorted(zip(keys, staged), key=itemgetter(0))]


def _count_rest(heap, leaves_reached):
    """A walk that ran without counts, made to count from here (a leaf just got a hook the walk
    must run in its place): the counts of each node's inputs among the nodes still to run (those
    queued, and what they reach), the ready queue, and the leaves already complete, in the order
    torch settled them."""
    pending = [n for _, n in heap]
    deps = _collect(pending, None)[0]
    ready = [(-n._seq, n) for n in pending if n not in deps]
    heapq.heapify(ready)
    done = sorted((n for n in leaves_reached if n not in deps), key=leaves_reached.__getitem__)
    return deps, ready, done


def _run_tensor_prehooks(node, grads):
    for nr, hooks in node._tensor_prehooks.items():
        if nr >= len(grads) or grads[nr] is None:
            continue
        for hook in list(hooks.values()):
            g = grads[nr]
            r = hook(g)
            if r is not None:
                _check_hook_result(hook, g, r)
                grads[nr] = r


def _check_hook_result(hook, g, r):
    """A tensor hook's replacement ``r`` for gradient ``g`` must be a Tensor of g's dtype and
    shape: TypeError / RuntimeError otherwise, as torch's check_single_result (its messages,
    then what the hook was given)."""
    name = getattr(hook, "__name__", type(hook).__name__)
    given = (f"a hook registered with register_hook got a gradient of shape "
             f"{list(g._data.shape)} and dtype {g.dtype}: it may return one of the same, or "
             f"None to keep it")
    if not isinstance(r, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}' (hook "
                        f"'{name}': {given})")
    if r._data.dtype != g._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {g.type()} got "
                           f"{r.type()}; {given})")
    if r._data.shape != g._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value (was "
                           f"{list(g._data.shape)}, got {list(r._data.shape)}; {given})")


def _skipped(node, grads, state):
    """With ``inputs`` given: keep the gradients ``node`` got for the inputs it made, and say
    whether it need not run, leading to none of them. (In a backward, a node that made an input
    runs too, as in torch: its hooks fire and its saved tensors are freed, its gradients go
    nowhere; autograd.grad does not run it: ``run_anyway`` is None there.)"""
    captures, captured, staged, needed, run_anyway = state
    if node in captures:
        _capture(node, grads, captures[node], captured, staged)
    return needed is not None and not (run_anyway is not None and node in run_anyway) and \
        not _leads_to(node._edges, needed)


def _capture(node, grads, entries, captured, staged):
    """Keep the gradients ``node`` received for the ``inputs`` it made (``entries``: output_nr,
    position in inputs, tensor); ``staged``, when given (a backward's accumulation), also gets
    them for ``.grad`` unless retain_grad staged them already."""
    for nr, k, t in entries:
        captured[k] = grads[nr]
        if staged is not None and grads[nr] is not None and not _retained(node, nr, t):
            staged.append((t, grads[nr]))


def _leads_to(edges, needed):
    """Whether a node with these flat ``edges`` has an input made by a ``needed`` node."""
    return any(f is not None and f in needed for f in edges[::4])


def _retained(node, nr, t):
    """Whether ``t`` is output ``nr`` of ``node`` and retains its gradient."""
    ref = node._retain.get(nr) if node._retain is not None else None
    return ref is not None and ref() is t


def _owned(g, seen, holders):
    """Whether gradient ``g``'s array may become a leaf's ``.grad`` as is (torch steals a
    gradient nobody else holds). Not when it was already taken this backward or is the user's
    `gradient` (a pass-through node hands one tensor to two inputs), not when it is read-only
    (broadcast), and not when the tensor (a hook may have kept it), its array or the array that
    views are referenced from anywhere else: ``holders`` is the number of references to ``g``
    the caller accounts for (including this parameter and getrefcount's argument)."""
    arr = g._data
    if not EXACT_REFCOUNTS or id(arr) in seen or not arr.flags.writeable or \
            sys.getrefcount(g) > holders:
        return False
    # references to arr: g's slot, the local, getrefcount's argument
    if sys.getrefcount(arr) > 3:
        return False
    base = arr.base
    if base is None:
        return True
    # references to base: arr.base, the local, getrefcount's argument, and the view's own base
    # tensor when only g holds that (a transpose of a fresh matmul result, say)
    allowed = 3
    b = g._base
    if b is not None and b._data is base and sys.getrefcount(b) <= 3:
        allowed += 1
    # (and the cache's, for a buffer tapegrad.cpu lent)
    return base.base is None and sys.getrefcount(base) <= allowed + (id(base) in LENT)


def _obeys_layout(g, leaf):
    """torch's layout contract for a leaf's new ``.grad`` (AccumulateGrad's
    obeys_layout_contract): the gradient array ``g`` has the leaf array's strides (dims of size
    1 aside) when the leaf is dense, else it is C-contiguous. A transposed gradient taken as is
    would make ``.grad.view(-1)`` fail where torch's works. With no elements, the strides as
    reported (NumPy calls any empty array C-contiguous)."""
    if not g.size:
        return strides_of(g) == strides_of(leaf)
    if leaf.flags.c_contiguous or not dense_layout(leaf):
        return g.flags.c_contiguous
    return all(gs == ls for gs, ls, n in zip(g.strides, leaf.strides, g.shape) if n != 1)


def _empty_in_layout(leaf, dtype):
    """An empty array of the leaf's shape laid out as the contract asks for its ``.grad``
    (torch's clone_obey_contract): as the leaf when it is dense, else C-contiguous."""
    if plain_c_order(leaf) or not dense_layout(leaf):
        return np.empty(leaf.shape, dtype)
    return empty_with_strides(leaf, dtype)


def _copy_in_layout(g, leaf):
    """A copy of gradient array ``g`` in the layout :func:`_empty_in_layout` gives."""
    out = _empty_in_layout(leaf, g.dtype)
    np.copyto(out, g)
    return out


def _graph_copy(g, t):
    """A copy of ``g`` recorded (with grad mode on, as during a backward with create_graph=True)
    as torch records it for tensor ``t``'s ``.grad``: CopyBackwards for a leaf (laid out as its
    contract asks, :func:`_empty_in_layout`), CloneBackward0 (C-contiguous, as torch's
    clone(contiguous_format)) for a leaf that is not dense and for a retained non-leaf
    gradient."""
    with enable_grad():
        if t.grad_fn is not None or not dense_layout(t._data):
            return g.clone(memory_format=contiguous_format)
        return _make(_empty_in_layout(t._data, g._data.dtype)).copy_(g)


def _check_accumulable(grad):
    """RuntimeError, as torch, when a leaf's existing ``.grad`` cannot be added to in place: an
    inference tensor outside inference mode, or one whose elements share memory (an expanded
    tensor, which NumPy also marks read-only)."""
    ex = grad._extra
    if ex is not None and ex.get("inference") and not _state.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed: backward accumulates into .grad in place, and this .grad "
                           "was made in inference mode. Set it to a clone (or to None) first.")
    arr = grad._data
    if not arr.flags.writeable:
        if any(st == 0 and n > 1 for st, n in zip(arr.strides, arr.shape)):
            raise RuntimeError("unsupported operation: more than one element of the written-to "
                               "tensor refers to a single memory location (backward accumulates "
                               "into .grad in place, and this .grad is expanded). Please clone() "
                               "the tensor before performing the operation.")
        raise RuntimeError("backward accumulates into .grad in place, but this .grad's memory "
                           "is read-only (a NumPy array marked so): set .grad to a copy first")


def _run_post_acc_hooks(t, undo=""):
    """Leaf ``t``'s post-accumulate-grad hooks; TypeError / RuntimeError, as torch, for one that
    returns anything but None or the leaf itself (``undo``: what the caller puts back then)."""
    for hook in list(t._extra["post_acc_hooks"].values()):
        r = hook(t)
        # (the leaf itself passes, as in torch)
        if r is not None and r is not t:
            about = (f"{hook!r}, registered with register_post_accumulate_grad_hook on a leaf of "
                     f"shape {list(t._data.shape)}; such a hook sees the leaf after its .grad is "
                     f"written and may change it in place{undo}")
            if not isinstance(r, Tensor):
                raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}' "
                                f"({about})")
            raise RuntimeError(f"Tensor post accumulate grad hooks should return None ({about})")


def _commit(staged, create_graph, root_grads, acc_hooks):
    """Write the staged gradients into ``.grad``, in torch's order; right after each leaf's, run
    its post-accumulate hooks, then the hooks registered on its AccumulateGrad node (``hook((),
    (grad,))``, as torch calls them), so a hook sees the ``.grad`` of the leaves torch settled
    before its own and not of those after. If a hook raises, every ``.grad`` is put back as it
    was (with such hooks present, the values of each existing ``.grad`` are copied first, as
    accumulation writes into it), keeping the promise that a failing backward changes no
    gradient value; what the hooks themselves did is theirs."""
    seen = {id(g._data) for g in root_grads}
    hooked = bool(acc_hooks) or any(t._extra is not None and t.grad_fn is None
                                    and t._extra.get("post_acc_hooks") for t, _ in staged)
    before = [(t, t._grad, None if t._grad is None else t._grad._data.copy())
              for t, _ in staged] if hooked else None
    # the staged entries still to come for each gradient: as in torch, only the last of several
    # tensors given one gradient may take it (the earlier ones see it still held, and copy)
    left = {}
    for _, g in staged:
        left[id(g)] = left.get(id(g), 0) + 1
    # the references to each that are ours: those entries and the AccumulateGrad hooks' list
    holders = dict(left)
    for _, g in acc_hooks:
        holders[id(g)] += 1
    # before any write: a refused one leaves every .grad as it was (the loop binds no gradient:
    # _owned below counts the references to each)
    for entry in staged:
        t = entry[0]
        if t._grad is not None and not create_graph and t.grad_fn is None:
            _check_accumulable(t._grad)
    where = None    # the user's line (the backward call), found once for the writes below
    try:
        for t, g in staged:
            left[id(g)] -= 1
            if t._grad is None:
                if create_graph:
                    # torch: a copy (CopyBackwards when g is part of a graph), never g itself,
                    # which another input's .grad or the user's gradient may be
                    t._grad = _graph_copy(g, t)
                elif t.grad_fn is not None:
                    # a retained gradient: torch keeps a clone (version 0), never the buffer
                    t._grad = _make(g._data.copy())
                else:
                    # ask before taking a local reference to the array: _owned counts references
                    # (to g: the staged entries and hooks' list, this loop's variable, the
                    # parameter, getrefcount's)
                    # (the leaf's own strides, the usual case, checked without a call)
                    if not left[id(g)] and _owned(g, seen, holders[id(g)] + 3) and \
                            (g._data.strides == t._data.strides or _obeys_layout(g._data, t._data)):
                        arr = g._data   # taken as is, with the writes it has seen (its version)
                        t._grad = _make(arr, g._vc)
                    else:
                        # a copy, which torch makes by a write into a new tensor: version 1
                        arr = _copy_in_layout(g._data, t._data)
                        t._grad = _make(arr)
                        version_counter(t._grad).v = 1
                    seen.add(id(arr))
            elif create_graph:
                t._grad = t._grad + g
            elif t.grad_fn is not None:
                # a retained non-leaf gradient is replaced, not added to in place, as torch: a
                # .grad the user kept from an earlier backward keeps its value; a plain backward
                # records no history for the sum (the old .grad may have one, from create_graph)
                t._grad = _make(t._grad._data + g._data)
            else:
                if hooked:
                    # (an earlier leaf's hook may have set this .grad since the check above)
                    _check_accumulable(t._grad)
                # in place, as torch, which counts it as a write: a graph that saved this .grad
                # (the user's own reference to it) must refuse it in its backward
                t._grad._data += g._data
                if where is None:
                    where = user_frame()
                bump(t._grad, where)
            if hooked and t.grad_fn is None:
                # as torch's AccumulateGrad: this leaf's hooks right after its own write, before
                # the next leaf's (a hook registered by an earlier one counts), in the
                # backward's grad mode
                _post_accumulate(t, acc_hooks, create_graph)
    except BaseException:
        if before is not None:
            for t, old, values in reversed(before):
                if values is not None:
                    old._data[...] = values
                t._grad = old
        raise


def _post_accumulate(t, acc_hooks, create_graph):
    """Run leaf ``t``'s post-accumulate hooks (each must return None, or the leaf itself, as in
    torch), then the hooks on its AccumulateGrad node that this backward ran (``acc_hooks``:
    (node, grad) pairs), called as ``hook((), (grad,))`` (which must return None: the node has
    no grad_inputs to replace; RuntimeError otherwise, as torch). As in torch, they run in the
    backward's grad mode: off, unless ``create_graph``."""
    prev = _state.grad_enabled
    mode = bool(create_graph)
    if mode is not prev:
        set_state(mode, _state.inference)
    try:
        if t._extra is not None and t._extra.get("post_acc_hooks"):
            _run_post_acc_hooks(t, "; every .grad this backward wrote is put back as it was")
        for node, g in acc_hooks:
            if node.variable is t:
                for hook in list(node._hooks.values()):
                    if hook((), (g,)) is not None:
                        name = getattr(hook, "__name__", type(hook).__name__)
                        raise RuntimeError(
                            f"hook '{name}' has returned an incorrect number of values (got 1, "
                            f"but expected 0) (a hook on an AccumulateGrad node, whose "
                            f"grad_inputs are (): it may look at the gradient, not replace it; "
                            f"every .grad this backward wrote is put back as it was)")
    finally:
        if _state.grad_enabled is not prev:
            set_state(prev, _state.inference)
