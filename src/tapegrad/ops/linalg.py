"""Matrix products: matmul (``@``), mm, bmm, mv, dot, addmm.

Derivatives (derivatives.yaml mm/matmul): grad_a = grad @ b^T, grad_b = a^T @ grad; 1-D operands
are treated as a row/column vector; broadcast batch dims are summed back by the engine.
"""
from __future__ import annotations

import threading

import numpy as np

from ..autograd.function import ArrayFunction, _share_version, unpack_saved
from ..autograd.grad_mode import state as _grad_state
from ._registry import op
from .._dtype import cpp_name as _cpp_name
from .._dtype import overflow_error, overflows, scalar_name
from ._util import Tensor, _make, promote, sum_array
from .shape import T


class Matmul(ArrayFunction, name="UnsafeViewBackward0"):
    """General matmul (batched / broadcast)."""

    @staticmethod
    def forward(ctx, a, b):
        # grad_a needs b, grad_b needs a: save only what the needed gradients use
        ctx.save_for_backward(a if ctx.needs(1) else None, b if ctx.needs(0) else None)
        ctx.ndims = (a.ndim, b.ndim)
        return np.matmul(*promote(a, b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        na, nb = ctx.ndims
        ga = gb = None
        if na == 1 and nb == 1:
            return (g * b if ctx.needs(0) else None), (g * a if ctx.needs(1) else None)
        if na == 1:
            if ctx.needs(0):
                ga = (g.unsqueeze(-2) @ b.mT).squeeze(-2)
            if ctx.needs(1):
                gb = a.unsqueeze(-1) * g.unsqueeze(-2)
        elif nb == 1:
            if ctx.needs(0):
                ga = g.unsqueeze(-1) * b
            if ctx.needs(1):
                gb = (a.mT @ g.unsqueeze(-1)).squeeze(-1)
        else:
            if ctx.needs(0):
                ga = g @ b.mT
            if ctx.needs(1):
                gb = a.mT @ g
        return ga, gb


class Mm(Matmul, name="MmBackward0"):
    """2-D @ 2-D."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.layout = (_transposed(a), _transposed(b))   # read by mm_grads only
        return Matmul.forward(ctx, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return mm_grads(ctx, g, a, b, 0, 1)


def _transposed(arr):
    f = arr.flags
    return f.f_contiguous and not f.c_contiguous


def mm_grads(ctx, g, a, b, ia, ib):
    """grad_a = g @ b^T and grad_b = a^T @ g (for ``a @ b``), each computed in the memory layout
    its input had (``ctx.layout``): a transposed input gets a transposed gradient (torch's layout
    contract). So the gradient of nn.Linear's ``weight.t()`` is contiguous once transposed back,
    and is stored as ``.grad`` without a copy. The products are MmT nodes, which transpose their
    operands themselves: a transposed operand costs no op of its own."""
    a_t, b_t = ctx.layout
    ga = gb = None
    if ctx.needs(ia):
        ga = T.apply(MmT.apply(b, g, False, True)) if a_t else MmT.apply(g, b, False, True)
    if ctx.needs(ib):
        gb = T.apply(MmT.apply(g, a, True, False)) if b_t else MmT.apply(a, g, True, False)
    return ga, gb


class MmT(ArrayFunction, name="MmBackward0"):
    """op(a) @ op(b) for 2-D a and b, where op transposes its operand when the flag (``ta``,
    ``tb``) is set. Derivative, with A = op(a), B = op(b): grad_A = grad @ B^T and
    grad_B = A^T @ grad, taken back through op; each is again such a product."""

    @staticmethod
    def forward(ctx, a, b, ta, tb):
        ctx.save_for_backward(a if ctx.needs(1) else None, b if ctx.needs(0) else None)
        ctx.flags = (ta, tb)
        return np.matmul(a.T if ta else a, b.T if tb else b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ta, tb = ctx.flags
        ga = gb = None
        if ctx.needs(0):
            ga = MmT.apply(b, g, tb, True) if ta else MmT.apply(g, b, False, not tb)
        if ctx.needs(1):
            gb = MmT.apply(g, a, True, ta) if tb else MmT.apply(a, g, not ta, False)
        return ga, gb, None, None


class Mv(Matmul, name="MvBackward0"):
    """2-D @ 1-D."""


class Dot(Matmul, name="DotBackward0"):
    """1-D @ 1-D."""


class VecMat(Matmul, name="SqueezeBackward4"):
    """1-D @ 2-D (torch records unsqueeze, mm, squeeze; the top node is SqueezeBackward4)."""


class Bmm(Matmul, name="BmmBackward0"):
    """3-D @ 3-D with equal batch."""




def check_same_dtype(a, b, name):
    """torch does not promote in matrix products: float64 @ float32 is a RuntimeError."""
    da, db = a._data.dtype, b._data.dtype
    if da != db:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_cpp_name(da)} != "
            f"{_cpp_name(db)} ({name}: shapes {list(a._data.shape)} and "
            f"{list(b._data.shape)}, dtypes tapegrad.{da.name} and tapegrad.{db.name}; convert "
            f"one, e.g. b.to(a.dtype))")


def check_bias(bias, mat, name, arg, position, dtype=True):
    """torch's checks of the added term of addmm (linear's bias): a Tensor (TypeError naming the
    argument), of the matrices' dtype (RuntimeError; with ``dtype``)."""
    if not isinstance(bias, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(bias).__name__}")
    bd, md = bias._data.dtype, mat._data.dtype
    if dtype and bd != md:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {scalar_name(bd)} and "
            f"{scalar_name(md)} ({name}: {arg} is tapegrad.{bd.name} and the matrices "
            f"tapegrad.{md.name}; convert it, e.g. {arg}.to(tapegrad.{md.name}))")


def _check_matmul(a, b, name):
    sa, sb = a._data.shape, b._data.shape
    if not sa or not sb:
        raise RuntimeError(f"both arguments to {name} need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    check_same_dtype(a, b, name)
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        if len(sa) == 2 and len(sb) == 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and "
                               f"{sb[0]}x{sb[1]})")
        raise RuntimeError(f"{name}: the inner dimensions do not match: input shapes "
                           f"{list(sa)} and {list(sb)} (size {ka} vs {kb})")
    if len(sa) > 2 and len(sb) > 2:
        try:
            np.broadcast_shapes(sa[:-2], sb[:-2])
        except ValueError:
            raise RuntimeError(f"{name}: batch dimensions {list(sa[:-2])} and {list(sb[:-2])} of "
                               f"shapes {list(sa)} and {list(sb)} cannot be broadcast") from None


@op("matmul")
def matmul(input, other):
    """Matrix product with NumPy/torch semantics: 1-D·1-D dot, 2-D mm, 2-D·1-D mv, batched with
    broadcast batch dims. RuntimeError naming both shapes when they do not fit."""
    if not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not {type(other).__name__}")
    _check_matmul(input, other, "matmul")
    na, nb = input._data.ndim, other._data.ndim
    if na == 2 and nb == 2:
        return Mm.apply(input, other)
    if na == 1 and nb == 1:
        return Dot.apply(input, other)
    if na == 2 and nb == 1:
        return Mv.apply(input, other)
    if na == 1 and nb == 2:
        return VecMat.apply(input, other)
    return Matmul.apply(input, other)


@op("mm")
def mm(input, mat2):
    """2-D @ 2-D (RuntimeError for other ranks)."""
    if input._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(f"self must be a matrix (mm: expected 2-D tensors, got shapes "
                           f"{list(input._data.shape)} and {list(mat2._data.shape)}; use matmul "
                           f"for other ranks)")
    _check_matmul(input, mat2, "mm")
    return Mm.apply(input, mat2)


@op("bmm")
def bmm(input, mat2):
    """Batched 3-D @ 3-D with equal batch sizes."""
    if input._data.ndim != 3 or mat2._data.ndim != 3:
        raise RuntimeError(f"bmm: expected 3-D tensors, got {input._data.ndim}-D and "
                           f"{mat2._data.ndim}-D")
    if input._data.shape[0] != mat2._data.shape[0]:
        sa, sb = input._data.shape, mat2._data.shape
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}]. (bmm: shapes "
                           f"{list(sa)} and {list(sb)}; the batch sizes must match)")
    _check_matmul(input, mat2, "bmm")
    return Bmm.apply(input, mat2)


@op("mv")
def mv(input, vec):
    """2-D @ 1-D."""
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError("mv: expected a 2-D matrix and a 1-D vector")
    _check_matmul(input, vec, "mv")
    return Mv.apply(input, vec)


@op("dot")
def dot(input, other):
    """1-D · 1-D inner product (0-d result)."""
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{other._data.ndim}D tensors")
    _check_matmul(input, other, "dot")
    return Dot.apply(input, other)


def save_mats(ctx, m1, m2):
    """Save what the matrix gradients of an addmm-like op (arguments bias, m1, m2) use: m2 for
    m1's, m1 for m2's; nothing when only the bias needs a gradient, as torch's nodes save no
    tensor then, so a second backward runs (its backward reads ``ctx.saved_tensors or (None,
    None)``)."""
    n1, n2 = ctx.needs(1), ctx.needs(2)
    if n1 or n2:
        ctx.save_for_backward(m1 if n2 else None, m2 if n1 else None)


class Addmm(ArrayFunction, name="AddmmBackward0"):
    """bias + m1 @ m2 (what nn.Linear records for 2-D input). derivatives.yaml addmm:
    self: grad (summed to bias's shape by the engine); mat1: grad @ mat2^T; mat2: mat1^T @ grad."""

    @staticmethod
    def forward(ctx, bias, m1, m2):
        save_mats(ctx, m1, m2)
        ctx.layout = (_transposed(m1), _transposed(m2))
        out = np.matmul(m1, m2) if m1.dtype is m2.dtype else np.matmul(*promote(m1, m2))
        out += bias
        return out

    @staticmethod
    def backward(ctx, g):
        m1, m2 = ctx.saved_tensors or (None, None)
        return (g if ctx.needs(0) else None, *mm_grads(ctx, g, m1, m2, 1, 2))


class Linear(Addmm, name="AddmmBackward0"):
    """bias + input @ weight^T for a 2-D input and a leaf weight (nn.Linear's call), recorded as
    torch records it: one AddmmBackward0 whose mat2 is the weight's TBackward0 view.

    The TBackward0 node is made only when something looks for it: next_functions, a hook on
    this node, calling it, a backward that counts (:func:`_with_t`). Until then this node's edge
    leads to the weight itself, and a plain backward computes what the two nodes would give the
    weight: Addmm's mat2 derivative ``input^T @ grad``, transposed back by TBackward0's
    ``grad.t()``, is ``grad^T @ input``; mat1's is ``grad @ weight``. The same products of the
    same arrays, so the same values, without two transpose ops and a node per layer
    (benchmarks/ W8's step, W3's at tiny sizes, costs about a sixth less over the hand-written
    one for it); it also sums a (out,) bias's gradient itself, with the engine's own sum_array
    call. A backward that records a graph (create_graph) records the transposes as the two nodes
    would. Derivatives: derivatives.yaml addmm and t, as :class:`Addmm` and
    :class:`~tapegrad.ops.shape.T`."""

    @staticmethod
    def forward(ctx, bias, m1, w):
        save_mats(ctx, m1, w)
        # (the weight's array as forward used it, until a backward or the TBackward0 node takes
        # it: torch's saved weight.t() keeps it if the weight gets another array, through .data)
        ctx.fwd = (_transposed(m1), w)
        out = np.matmul(m1, w.T)
        out += bias
        return out

    @staticmethod
    def backward(ctx, g):
        if ctx._tn is not None:
            # the TBackward0 node is there (_with_t): the two nodes' record, Addmm's part
            return Addmm.backward(ctx, g)
        try:
            m1, w = ctx.saved_tensors or (None, None)
        except RuntimeError:
            saved = ctx._saved
            if type(saved) is list and saved[1] is not None:
                # (a version error: raised again naming the weight as torch saved it, transposed)
                _save_view(ctx)
                unpack_saved(ctx)
            raise
        edges = ctx._edges     # (ctx.needs(i) is edges[4 * i] is not None)
        gbias = g if edges[0] is not None else None
        fn = edges[8]
        if w is None and fn is None:
            return gbias, None, None
        m1_t, wd = ctx.fwd
        if wd is not None:
            # the weight's array at forward moves into its saved entry (when it is saved, for
            # the input's gradient), to go with the saved tensors, as torch's saved weight.t():
            # a graph a loop keeps for its loss must not keep every step's old weight
            ctx.fwd = (m1_t, None)
            if w is not None:
                ctx._saved[1] += (wd,)
        else:
            # (a later backward of a graph kept by retain_graph)
            wd = ctx._saved[1][4] if w is not None else fn.variable._data
        if not m1_t and wd.flags.c_contiguous and not _grad_state.record:
            # (the layouts mm_grads would give: C-contiguous, as the input and weight.) Nothing
            # is recorded, so MmT's products and the engine's sum of a (out,) bias's gradient
            # (SumToSize's) are the same calls on the arrays, without those ops' bookkeeping:
            # about 50 us of W3's step, a tenth of its time over the hand-written one
            gd = g._data
            if gbias is not None and edges[2] == gd.shape[1:]:
                gbias = _make(sum_array(gd, (0,)))
            return (gbias, _make(np.matmul(gd, wd)) if edges[4] is not None else None,
                    _make(np.matmul(gd.T, m1._data)) if fn is not None else None)
        # this node's edge still leads to the weight (the engine has read it): the weight's
        # gradient goes through a transpose of its own (recorded, as TBackward0 would record
        # it, when this backward records), over the weight's array at forward, and is given
        # back transposed
        wt = T.apply(w if w is not None else fn.variable)
        wt._data = wd.T
        ctx.layout = (m1_t, _transposed(wt._data))
        ga, gb = mm_grads(ctx, g, m1, wt, 1, 2)
        return gbias, ga, None if gb is None else T.apply(gb)


_T_LOCK = threading.Lock()


def _with_t(node):
    """Give a :class:`Linear` node its TBackward0 node, once, as T.apply would have recorded it
    at forward (also when the weight has stopped requiring grad since): numbered just below the
    node's own number, before any node made earlier; the node's edge and saved weight (a view
    of the weight's array at forward, sharing its version counter) now go through it, and its
    backward is Addmm's. A backward that counts (``inputs=``, a hook on a leaf) makes these
    first (engine._collect); one that does not reads a node's edges when it runs it, after that
    node's own hooks, so a hook may make them mid-walk."""
    fn = node._edges[8]
    if node._tn is None and fn is not None:
        with _T_LOCK:   # (one TBackward0 node, whichever thread asks first)
            if node._tn is None:
                tn = T._backward_cls()
                tn._edges = node._edges[8:12]
                tn._seq = node._seq - 0.5
                tn._saved = None
                wt = _save_view(node, fn.variable)
                wt.grad_fn = tn
                wt._requires_grad = True
                node.layout = (node.fwd[0], _transposed(wt._data))
                node._edges = node._edges[:8] + (tn, 0, wt._data.shape, wt._data.dtype)
                node._tn = tn
    return node


def _save_view(node, w=None):
    """The weight's ``t()`` view over its array at forward (from ``node.fwd``, or where a
    backward put it; the weight's array now once the saved tensors are freed), sharing its
    version counter, which the node then saves in the weight's place (when it saves it), as
    torch saves ``weight.t()`` (a version error names the view). ``w``: the weight, else the
    saved one. A second call gives the view saved already."""
    saved = node._saved
    entry = saved[1] if type(saved) is list else None
    if entry is not None and node.__dict__.get("_viewed"):
        return entry[1]
    w = w if w is not None else entry[1]
    m1_t, wd = node.fwd
    if wd is None:
        # (a backward took it: in the saved entry, or gone with it)
        wd = entry[4] if entry is not None else w._data
    node.fwd = (m1_t, None)
    wt = _make(wd.T)
    _share_version(wt, T, (w,))
    if entry is not None:
        saved[1] = ("i", wt) + entry[2:4]
    node._viewed = True
    return wt


def _linear_node_patch():
    """next_functions, a hook on the node (whose grad_inputs follow next_functions), calling it
    and a backward that counts (``_lazy``) see the TBackward0 node."""
    cls = Linear._backward_cls
    base = cls.__mro__[1]
    cls._tn = None
    cls._lazy = _with_t
    cls.next_functions = property(lambda self: base.next_functions.fget(_with_t(self)))
    cls.register_hook = lambda self, fn: base.register_hook(_with_t(self), fn)
    cls.__call__ = lambda self, *grads: base.__call__(_with_t(self), *grads)


_linear_node_patch()


class AddmmScaled(Addmm, name="AddmmBackward0"):
    """beta * bias + alpha * (m1 @ m2), for addmm_ with beta or alpha other than 1 (torch's one
    node); beta 0 ignores bias's values, NaN included, as BLAS. The numbers are taken in the
    matrices' dtype. derivatives.yaml addmm (maybe_multiply: a factor of 1 is skipped): self:
    grad * beta; mat1: (grad @ mat2^T) * alpha; mat2: (mat1^T @ grad) * alpha."""

    @staticmethod
    def forward(ctx, bias, m1, m2, beta, alpha):
        save_mats(ctx, m1, m2)
        ctx.layout = (_transposed(m1), _transposed(m2))
        ctx.factors = (beta, alpha)
        out = np.matmul(m1, m2) if m1.dtype is m2.dtype else np.matmul(*promote(m1, m2))
        out *= out.dtype.type(alpha)
        if beta:
            out += bias * out.dtype.type(beta)
        return out

    @staticmethod
    def backward(ctx, g):
        m1, m2 = ctx.saved_tensors or (None, None)
        beta, alpha = ctx.factors
        ga, gb = mm_grads(ctx, g, m1, m2, 1, 2)
        return (_times(g, beta) if ctx.needs(0) else None, _times(ga, alpha), _times(gb, alpha),
                None, None)


def _times(t, factor):
    """torch's maybe_multiply: ``t * factor`` (MulBackward1 when recorded, as torch's), or ``t``
    itself for a factor of 1 (or no t)."""
    if t is None or factor == 1:
        return t
    from .losses import MulScalar  # (losses imports this module)
    return MulScalar.apply(t, factor)


def check_addmm(input, mat1, mat2, name, position=2, beta=1, alpha=1):
    """torch's checks of addmm's arguments: mat1 and mat2 Tensors (TypeError naming the
    argument; ``position``: mat1's), input of their dtype, each a matrix, with matching inner
    sizes, an int ``beta`` / ``alpha`` that an integer dtype holds (RuntimeError; torch converts
    them checked, where ``+`` and ``*`` wrap a number around)."""
    for arg, m, k in (("mat1", mat1, position), ("mat2", mat2, position + 1)):
        if not isinstance(m, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {k}) must be Tensor, not "
                            f"{type(m).__name__}")
    check_bias(input, mat1, name, "input", 1)
    for arg, m in (("mat1", mat1), ("mat2", mat2)):
        if m._data.ndim != 2:
            raise RuntimeError(f"{arg} must be a matrix, got {m._data.ndim}-D tensor ({name}: "
                               f"mat1 @ mat2 is a product of two 2-D tensors)")
    _check_matmul(mat1, mat2, name)
    dt = mat1._data.dtype
    for what, v in (("beta", beta), ("alpha", alpha)):
        if type(v) is int and dt.kind in "iu" and overflows(v, dt):
            raise overflow_error(v, dt, f"{name}'s {what}")


@op("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), one AddmmBackward0 node as torch's (beta 0 ignores
    input's values, NaN included, as BLAS); mat1 (n, m), mat2 (m, p), ``input`` broadcasting to
    (n, p), all of one dtype. Derivatives: derivatives.yaml addmm (:class:`Addmm`,
    :class:`AddmmScaled`). TypeError when input, mat1 or mat2 is not a Tensor; RuntimeError when input's dtype is not the matrices' (torch does not promote here), when
    mat1 or mat2 is not 2-D, for mat1/mat2 as matmul, and for an int beta or alpha that an
    integer dtype cannot hold (int8 and beta=300)."""
    check_addmm(input, mat1, mat2, "addmm", beta=beta, alpha=alpha)
    if beta != 1 or alpha != 1:
        return AddmmScaled.apply(input, mat1, mat2, beta, alpha)
    return Addmm.apply(input, mat1, mat2)


def _matmul_dunder(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


def _rmatmul_dunder(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


Tensor.__matmul__ = _matmul_dunder
Tensor.__rmatmul__ = _rmatmul_dunder
