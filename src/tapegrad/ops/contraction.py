"""Tensor contractions: einsum and outer.

``einsum`` is one primitive (torch records it as a chain of permute/bmm/view nodes; the values
and gradients are the same). The derivative of an einsum with respect to one operand is another
einsum: the incoming gradient contracted with the other operands, written back to that operand's
subscripts (labels summed away in the forward come back through a ones operand, a label repeated
in the operand (a diagonal) through an identity matrix). Since it is computed with the same
primitive, it is differentiable again.
"""
from __future__ import annotations

import string

import numpy as np

from .._tensor import Tensor, _make
from ..autograd.function import ArrayFunction
from ._registry import op

_LETTERS = set(string.ascii_letters)


class Einsum(ArrayFunction, name="EinsumBackward0"):
    """np.einsum over integer sublists. Arguments: the operand arrays, then ``spec`` =
    (operand sublists, output sublist, label sizes). Operands whose dims are 1 where the label is
    larger are broadcast (their gradient is summed back by the engine). The result has the dtype
    of the first operand (all share it) and the output labels' sizes as its shape.

    Derivative (a textbook identity of multilinear maps): the gradient of operand k is the
    einsum of the incoming grad (output subscripts) with every other operand (their own
    subscripts), written to operand k's subscripts; a label summed away in the forward is
    broadcast back through a ones vector, a label repeated in operand k (a diagonal) through an
    identity matrix. derivatives.yaml has no einsum entry (einsum is CompositeImplicitAutograd in
    native_functions.yaml): torch differentiates its permute/bmm/view decomposition, whose
    derivatives.yaml formulas (bmm: self: grad.bmm(mat2.transpose(1, 2).conj()), mat2:
    self.transpose(1, 2).conj().bmm(grad)) compose to the same contraction. The gradient is built
    from Einsum itself, so it is differentiable again."""

    @staticmethod
    def forward(ctx, *args):
        *arrays, spec = args
        subs, out, sizes = spec
        ctx.spec = spec
        # operand j is needed only by the gradients of the other operands
        n = len(arrays)
        need = [ctx.needs(k) for k in range(n)]
        ctx.save_for_backward(*(a if any(need[k] for k in range(n) if k != j) else None
                                for j, a in enumerate(arrays)))
        return _einsum_arrays(arrays, subs, out, sizes)

    @staticmethod
    def backward(ctx, g):
        subs, out, sizes = ctx.spec
        ops = ctx.saved_tensors
        grads = []
        for k in range(len(ops)):
            grads.append(_einsum_grad(k, g, ops, subs, out, sizes) if ctx.needs(k) else None)
        return (*grads, None)


def _full(arr, sub, sizes):
    shape = tuple(sizes[label] for label in sub)
    return arr if arr.shape == shape else np.broadcast_to(arr, shape)


def _einsum_arrays(arrays, subs, out, sizes):
    arrays = [_full(a, s, sizes) for a, s in zip(arrays, subs)]
    dt = arrays[0].dtype
    operands = []
    for a, s in zip(arrays, subs):
        operands += [a, list(s)]
    res = np.asarray(np.einsum(*operands, list(out), optimize=len(arrays) > 1)).astype(dt,
                                                                                     copy=False)
    # a single-operand einsum can return a view of its input: the result must own its data
    if any(np.may_share_memory(res, a) for a in arrays):
        res = res.copy()
    return res


def _einsum_grad(k, g, ops, subs, out, sizes):
    """d(einsum)/d(operand k), contracted with the incoming gradient ``g`` (a Tensor)."""
    target = list(subs[k])
    tensors, sublists = [g], [tuple(out)]
    for j, (t, s) in enumerate(zip(ops, subs)):
        if j != k:
            tensors.append(_expand_tensor(t, s, sizes))
            sublists.append(tuple(s))
    present = set(out)
    for j, s in enumerate(subs):
        if j != k:
            present.update(s)
    dt = g._data.dtype
    new_sizes = dict(sizes)
    result, seen = [], set()
    next_id = max(sizes) + 1 if sizes else 0
    for label in target:
        if label in seen:   # a repeated label (a diagonal): identity linking it to a new label
            fresh = next_id
            next_id += 1
            new_sizes[fresh] = sizes[label]
            tensors.append(_make(np.eye(sizes[label], dtype=dt)))
            sublists.append((label, fresh))
            result.append(fresh)
            continue
        seen.add(label)
        if label not in present:   # summed away in the forward: broadcast back through ones
            tensors.append(_make(np.ones(sizes[label], dt)))
            sublists.append((label,))
            present.add(label)
        result.append(label)
    return Einsum.apply(*tensors, (tuple(sublists), tuple(result), new_sizes))


def _expand_tensor(t, sub, sizes):
    shape = tuple(sizes[label] for label in sub)
    return t if tuple(t._data.shape) == shape else t.expand(shape)


def _parse(equation, operands):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    pos = 0
    for ch in eq:
        if ch not in _LETTERS and ch not in ",.->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {pos} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")
        pos += 1
    ids = {}

    def label_id(ch):
        if ch not in ids:
            ids[ch] = len(ids)
        return ids[ch]

    parsed = []
    max_ell = 0
    for i, (term, t) in enumerate(zip(terms, operands)):
        nd = t._data.ndim
        if "..." in term:
            before, _, after = term.partition("...")
            if "." in before or "." in after:
                raise RuntimeError(f"einsum(): found '.' for operand {i} that is not part of any "
                                   "ellipsis")
            n_ell = nd - len(before) - len(after)
            if n_ell < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(before) + len(after)}) is more than the number of "
                                   f"dimensions ({nd}) for operand {i}")
            parsed.append((before, n_ell, after))
            max_ell = max(max_ell, n_ell)
        else:
            if "." in term:
                raise RuntimeError(f"einsum(): found '.' for operand {i} that is not part of any "
                                   f"ellipsis")
            if len(term) != nd:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(term)}) does not match the number of dimensions ({nd}) "
                                   f"for operand {i} and no ellipsis was given")
            parsed.append((term, 0, ""))
    for before, _, after in parsed:
        for ch in before + after:
            label_id(ch)
    ell_ids = [len(ids) + e for e in range(max_ell)]
    subs = []
    for before, n_ell, after in parsed:
        subs.append(tuple(ids[c] for c in before) + tuple(ell_ids[max_ell - n_ell:]) +
                    tuple(ids[c] for c in after))
    if arrow:
        if "..." in rhs:
            rb, _, ra = rhs.partition("...")
            out_chars = rb + ra
            out = tuple(_label_id_out(c, ids) for c in rb) + tuple(ell_ids) + \
                tuple(_label_id_out(c, ids) for c in ra)
        else:
            out_chars = rhs
            out = tuple(_label_id_out(c, ids) for c in rhs)
        if "." in out_chars:
            raise RuntimeError("einsum(): found '.' for output but it is not part of any ellipsis")
        if len(set(out)) != len(out):
            dup = next(c for c in out_chars if out_chars.count(c) > 1)
            raise RuntimeError(f"einsum(): output subscript {dup} appears more than once in the "
                               f"output")
    else:
        counts = {}
        for before, _, after in parsed:
            for c in before + after:
                counts[c] = counts.get(c, 0) + 1
        out = tuple(ell_ids) + tuple(ids[c] for c in sorted(counts) if counts[c] == 1)
    # sizes, checking each label against every operand (1 broadcasts, as torch)
    sizes = {}
    inv = {v: k for k, v in ids.items()}
    for i, (t, s) in enumerate(zip(operands, subs)):
        local = {}
        for label, n in zip(s, t._data.shape):
            if label in local and local[label] != n:
                raise RuntimeError(f"einsum(): subscript {inv.get(label, '...')} is repeated for "
                                   f"operand {i} but the sizes don't match, {n} != {local[label]}")
            local[label] = n
            prev = sizes.get(label)
            if prev is None or prev == 1:
                sizes[label] = n
            elif n != 1 and n != prev:
                raise RuntimeError(f"einsum(): subscript {inv.get(label, '...')} has size {n} for "
                                   f"operand {i} which does not broadcast with previously seen "
                                   f"size {prev}")
    return tuple(subs), out, sizes


def _label_id_out(ch, ids):
    if ch not in ids:
        raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for "
                           f"any input operand")
    return ids[ch]


@op("einsum", method=False)
def einsum(equation, *operands):
    """Einstein summation, as torch.einsum: ``einsum('ij,jk->ik', a, b)``.

    ``equation`` is a str of comma-separated operand subscripts (letters ``[a-zA-Z]``, at most one
    ``...`` per term, spaces ignored), optionally followed by ``->`` and the output subscripts.
    ``operands`` are Tensors, passed one by one or as one list/tuple. Supports implicit output
    (no ``->``: the labels seen exactly once, alphabetically, after the ``...`` dims), ``...``
    broadcasting, repeated labels (diagonals) and size-1 broadcasting of a label.

    Result: shape = the sizes of the output labels in output order (each label's size the
    largest seen for it, a ``...`` block the broadcast of the operands' ``...`` dims); dtype =
    the operands' common dtype (no promotion: int64 and bool einsums stay int64 / bool); a new
    tensor that owns its data (EinsumBackward0, see :class:`Einsum` for the derivative).

    Raises (types as torch unless noted):
        TypeError: an operand is not a Tensor (a list, a NumPy array, ...).
        RuntimeError: no operands (torch raises ValueError here); more or fewer operands than
            the equation has terms; a subscript outside ``[a-zA-Z]``; a ``.`` that is not part of
            an ``...``; a term whose number of subscripts differs from its operand's ndim (or,
            with ``...``, exceeds it); an output subscript missing from every input or repeated
            in the output; a label repeated in one operand over dims of different sizes; a label
            (or ``...`` dim) whose sizes differ across operands and neither is 1; operands of
            different dtypes ("expected scalar type Float but found Double").
        AttributeError: ``equation`` is not a str (torch raises TypeError).
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for t in operands:
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operands must be Tensors, not {type(t).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    dt = operands[0]._data.dtype
    for t in operands[1:]:
        if t._data.dtype != dt:
            from .._dtype import scalar_name
            raise RuntimeError(f"expected scalar type {scalar_name(dt)} but found "
                               f"{scalar_name(t._data.dtype)}")
    subs, out, sizes = _parse(equation, operands)
    return Einsum.apply(*operands, (subs, out, sizes))


@op("outer", aliases=("ger",))
def outer(input, vec2):
    """Outer product of two 1-D tensors: ``input.reshape(-1, 1) * vec2`` (MulBackward0, as
    torch). RuntimeError for a non-1-D argument."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._data.ndim}-D")
    return input.reshape(-1, 1) * vec2
