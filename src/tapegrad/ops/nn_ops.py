"""Neural-network ops: linear, softmax, log_softmax, nll_loss, cross_entropy (mse_loss is in
losses.py).

Derivatives (derivatives.yaml): softmax: y * (grad - sum(grad * y)); log_softmax:
grad - exp(y) * sum(grad); nll_loss: -weight[target] * grad at the target class (divided by the
total weight for 'mean'). cross_entropy is log_softmax followed by nll_loss, recorded as those
two nodes, as in torch.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import NULL_CTX, ArrayFunction, saved_result, unpack_hooked
from ..autograd.grad_mode import state as _grad_state
from ._registry import op
from ._util import Tensor, _make, _wrap_dim, _zeros_of
from .._dtype import scalar_name
from .linalg import Addmm, Linear, check_bias, check_same_dtype, matmul
from .shape import T
from ..autograd.graph import hooked_threads as _hooked_threads
from ..autograd.graph import user_stacklevel

_REDUCTIONS = ("mean", "sum", "none")
_VALID = frozenset(_REDUCTIONS)
_I64, _U8 = np.dtype(np.int64), np.dtype(np.uint8)


def _check_reduction(reduction, hint=""):
    """``reduction`` itself when it is one of ``_REDUCTIONS``; 'mean' for torch's deprecated
    alias 'elementwise_mean' (with torch's UserWarning, as its _Reduction.get_enum); otherwise
    ValueError (as torch), ``hint`` appended to the message."""
    if isinstance(reduction, str) and reduction == "elementwise_mean":
        import warnings
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", UserWarning, stacklevel=user_stacklevel())
        return "mean"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction{hint}")
    return reduction


def _reduction(size_average, reduce, reduction, hint=""):
    """The effective reduction of a loss, as torch's functional losses choose it: when either
    legacy flag ``size_average``/``reduce`` is not None, torch's _Reduction.legacy_get_string
    (a None flag counts as True; reduce=False gives 'none', else size_average=False 'sum', else
    'mean'), with its deprecation UserWarning naming the reduction to use instead, and
    ``reduction`` is ignored (not even checked, as torch); otherwise ``reduction`` checked by
    _check_reduction (ValueError for an unknown one, ``hint`` appended to the message)."""
    if size_average is not None or reduce is not None:
        from ..nn.modules.loss import _legacy_reduction
        return _legacy_reduction(size_average, reduce)
    if type(reduction) is str and reduction in _VALID:   # (the usual case, without a call)
        return reduction
    return _check_reduction(reduction, hint)


def _reduction_hint(op_name):
    """The hint a loss appends to the ValueError for an unknown reduction: the op and the values
    it accepts."""
    return f" in {op_name} (use 'mean', 'sum' or 'none')"


_NLL_HINT, _CE_HINT = _reduction_hint("nll_loss"), _reduction_hint("cross_entropy")


def _reduce_array(loss, reduction):
    """An elementwise loss array reduced by 'none' (itself), 'sum' or 'mean', keeping its dtype;
    the mean of no elements is nan (without NumPy's warning), as torch."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(loss.sum(), loss.dtype)
    if loss.size == 0:
        return np.asarray(np.nan, loss.dtype)
    return np.asarray(loss.mean(), loss.dtype)


_SHORT_AXIS = 32


def _reduce_keepdims(ufunc, x, d):
    """``ufunc.reduce(x, axis=d, keepdims=True)``. NumPy reduces a short innermost axis one row at
    a time (the maximum over 10 classes of 256 rows costs about 12 elementwise passes), so with
    many such rows the axis is first moved to the front in one copy and then reduced
    elementwise across the rows."""
    if (d == x.ndim - 1 and x.ndim > 1 and x.shape[d] <= _SHORT_AXIS
            and x.size >= _SHORT_AXIS * x.shape[d]):
        front = np.ascontiguousarray(x.transpose((d, *range(d))))
        return ufunc.reduce(front, axis=0)[..., None]
    return ufunc.reduce(x, axis=d, keepdims=True)


def _softmax_dim(input, dim, name):
    if dim is None:
        # torch's legacy implicit choice (with a warning): dim 0 for 0-D, 1-D and 3-D, else 1
        import warnings
        nd = input._data.ndim
        dim = 0 if nd in (0, 1, 3) else 1
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                      f"to include dim=X as an argument.", UserWarning, stacklevel=user_stacklevel())
    return _wrap_dim(dim, input._data.ndim, name)


def _grad_like_output(node, grads):
    """A softmax / log_softmax node called by hand: RuntimeError, as torch's kernels, for a
    gradient whose shape or dtype is not the output's (the engine always passes the output's;
    NumPy would broadcast a wrong shape and compute in the wider dtype)."""
    g, y = grads[0], saved_result(node)
    what = f"{node.name()} called by hand"
    if g.shape != y.shape:
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor "
                           f"for argument #2 'output'; but {list(g.shape)} does not equal "
                           f"{list(y.shape)} ({what} takes a gradient of its output's shape)")
    if g._data.dtype != y.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(g._data.dtype)} but found "
                           f"{scalar_name(y.dtype)} ({what} takes a gradient of its output's "
                           f"dtype, {scalar_name(y.dtype)}, and got one of "
                           f"{scalar_name(g._data.dtype)}: pass grad.to(output.dtype))")


class Softmax(ArrayFunction, name="SoftmaxBackward0", saves_result=True):
    """exp(x) / sum(exp(x)) along ``dim``, shifted by the max (no overflow).
    derivatives.yaml _softmax_backward_data: y * (grad - (grad * y).sum(dim, keepdim))."""

    @staticmethod
    def forward(ctx, x, d):
        if x.size:
            e = np.subtract(x, _reduce_keepdims(np.maximum, x, d),
                            out=None if x.ndim else np.empty_like(x))  # (0-d: an array)
            np.exp(e, out=e)
            y = np.divide(e, _reduce_keepdims(np.add, e, d), out=e)
        else:
            y = x.copy()
        ctx.d = d
        return y

    @staticmethod
    def backward(ctx, g, *_):
        y, = ctx.saved_tensors
        return y * (g - (g * y).sum(ctx.d, keepdim=True)), None

    _check_direct = staticmethod(_grad_like_output)


class LogSoftmax(ArrayFunction, name="LogSoftmaxBackward0", saves_result=True):
    """x - logsumexp(x) along ``dim``, stable for logits in the thousands.
    derivatives.yaml _log_softmax_backward_data: grad - exp(y) * grad.sum(dim, keepdim)."""

    @staticmethod
    def forward(ctx, x, d):
        if x.size:
            y = np.subtract(x, _reduce_keepdims(np.maximum, x, d))
            y -= np.log(_reduce_keepdims(np.add, np.exp(y), d))
        else:
            y = x.copy()
        ctx.d = d
        return y

    @staticmethod
    def backward(ctx, g, *_):
        if not _grad_state.record:
            # (nothing recorded: the gradient op's forward on the arrays, without its apply)
            return _make(LogSoftmaxGrad.forward(NULL_CTX, g._data, saved_result(ctx), ctx.d)), None
        y, = ctx.saved_tensors
        return LogSoftmaxGrad.apply(g, y, ctx.d), None

    _check_direct = staticmethod(_grad_like_output)


class LogSoftmaxGrad(ArrayFunction, name="LogSoftmaxBackwardDataBackward0"):
    """_log_softmax_backward_data(grad, y) = grad - exp(y) * grad.sum(dim, keepdim) as one
    primitive, so a plain backward costs one op. derivatives.yaml: grad_output:
    grad - (grad * exp(y)).sum(dim, keepdim); output:
    -grad_output.sum(dim, keepdim) * exp(y) * grad."""

    @staticmethod
    def forward(ctx, g, y, d):
        ctx.save_for_backward(g if ctx.needs(1) else None, y)
        ctx.d = d
        t = np.exp(y, out=None if y.ndim else np.empty_like(y))   # (0-d: an array)
        t *= _reduce_keepdims(np.add, g, d)
        return np.subtract(g, t, out=t)

    @staticmethod
    def backward(ctx, v):
        g, y = ctx.saved_tensors
        from .pointwise import exp
        d = ctx.d
        e = exp(y)
        gg = v - (v * e).sum(d, keepdim=True) if ctx.needs(0) else None
        gy = -(g.sum(d, keepdim=True) * e * v) if ctx.needs(1) else None
        return gg, gy, None


def _floating_for(input, d, name):
    """NotImplementedError, as torch's kernels, for a softmax of a tensor that is not floating
    (without ``dtype=``), naming the kernel torch names (its last-dim one when ``d`` is the last
    dim)."""
    dt = input._data.dtype
    if dt.kind != "f" and input._data.size:     # (torch returns an empty one before its kernel)
        kernel = f"{name}_lastdim_kernel_impl" if d >= input._data.ndim - 1 else \
            f"{name}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(dt)}' ({name} "
                                  f"of a {scalar_name(dt)} tensor: pass dtype=tapegrad.float32, "
                                  f"or convert it first with .float())")


@op("softmax", functional=True)
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` of a floating tensor (same dtype), or of ``input.to(dtype)``.
    NotImplementedError, as torch, for an integer or bool input without ``dtype`` (an empty
    one is returned as it is, as torch)."""
    if dtype is not None:
        input = input.to(dtype)
    d = _softmax_dim(input, dim, "softmax")
    _floating_for(input, d, "softmax")
    return Softmax.apply(input, d)


@op("log_softmax", functional=True)
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input)) along ``dim``, computed stably (no log of 0 for large logits); dtype
    and errors as :func:`softmax`."""
    if dtype is not None:
        input = input.to(dtype)
    d = _softmax_dim(input, dim, "log_softmax")
    _floating_for(input, d, "log_softmax")
    return LogSoftmax.apply(input, d)


class NllLoss(ArrayFunction, name="NllLossBackward0", nondiff=(1, 2)):
    """Negative log-likelihood of class indices. Arguments: log-probabilities (N, C) or (C,)
    (NllLoss2D: (N, C, H, W)), targets (N,) / () ((N, H, W)) as an integer Tensor, class weights
    (a Tensor) or None, reduction, ignore_index (None: nll_loss found that no target is ignored).
    The log-probabilities, targets and weights are saved (version-checked in backward, as
    torch's self, target and weight), and the targets and weights get no gradient. An ignored
    target's row is skipped (+0 loss and gradient, whatever its input). derivatives.yaml
    nll_loss: self: nll_loss_backward (:class:`NllLossGrad`)."""

    @staticmethod
    def forward(ctx, logp, target, weight, reduction, ignore_index):
        batched = logp.ndim >= 2
        if logp.ndim == 4:
            # the classes last and every position a row: the (N, C) computation below
            lp = np.moveaxis(logp, 1, -1).reshape(-1, logp.shape[1])
        else:
            lp = logp if batched else logp[None]
        tg = target if target.ndim == 1 and target.dtype == _I64 else \
            target.reshape(-1).astype(np.int64, copy=False)
        n = lp.shape[0]
        rows = np.arange(n)
        valid = None if ignore_index is None else tg != ignore_index
        if weight is None and (valid is None or valid.all()):
            # every target counts once (the usual case): w is None for all-ones weights
            safe, w, valid = tg, None, None
            picked = lp[rows, tg]
            if reduction != "none":
                # sum(-p), one pass fewer: 0 - sum(p) is that exactly (rounding is symmetric),
                # a zero sum included, which is +0 either way; half as torch's cascade
                out = 0.0 - np.add.reduce(picked) if lp.dtype.char != "e" else \
                    NllLoss._half_cascade(np.negative(picked), rows, n)
                denom = None
                if reduction == "mean":
                    denom = lp.dtype.type(n)
                    out = out / denom
                ctx.meta = (lp.shape, rows, safe, w, valid, reduction, denom, ignore_index)
                ctx.save_for_backward(logp, target, weight)
                return np.asarray(out, lp.dtype)
            losses = np.negative(picked)
        else:
            if valid is None:
                valid = np.ones(n, bool)
            safe = np.where(valid, tg, 0)
            w = (weight[safe] if weight is not None else np.ones(n, lp.dtype)) * valid
            w = w.astype(lp.dtype, copy=False)
            losses = np.zeros(n, lp.dtype)
            losses[valid] = -lp[rows[valid], safe[valid]] * w[valid]
        denom = None
        if reduction == "none":
            out = losses.reshape(target.shape)
        elif lp.dtype.char == "e":
            # half as torch's CPU kernel: the cascade of half partial sums over the kept rows,
            # over the total weight (the kept count when no weights are given)
            out = NllLoss._half_cascade(losses[valid], rows[valid], n)
            if reduction == "mean":
                denom = NllLoss._half_cascade(w[valid], rows[valid], n) if weight is not None \
                    else lp.dtype.type(np.count_nonzero(valid))
                out = out / denom
            out = np.asarray(out, lp.dtype)
        else:
            out = losses.sum()
            if reduction == "mean":
                denom = w.sum() if w is not None else lp.dtype.type(n)
                out = out / denom
            out = np.asarray(out, lp.dtype)
        ctx.meta = (lp.shape, rows, safe, w, valid, reduction, denom, ignore_index)
        ctx.save_for_backward(logp, target, weight)
        return out

    @staticmethod
    def _half_cascade(x, pos, total):
        """The float16 sum of ``x`` (the terms of the kept rows, at linear indices ``pos`` of
        ``total`` rows) as torch's CPU nll_loss adds them: 8 levels of half partial sums; each
        term goes into level 0, and at a row index whose lowest j groups of ``p`` bits (p =
        max(4, ceil(log2(total)) // 8)) are zero, levels 0..j-1 are added each into the next;
        at the end the levels are added in order. Every addition rounds to half."""
        half, f32 = np.float16, np.float32
        p = max(4, (int(total) - 1).bit_length() // 8) if total > 1 else 4
        mask = (1 << p) - 1
        depth = np.zeros(pos.shape[0], np.int64)
        alive = np.ones(pos.shape[0], bool)
        for j in range(7):
            alive &= (pos & (mask << (j * p))) == 0
            depth += alive
        vals = np.asarray(x, half)
        out = half(0)
        for level in range(8):
            ends = depth > level if level < 7 else np.zeros(vals.shape[0], bool)
            n = vals.shape[0]
            part = half(0)
            if n:
                # the runs of this level: each ends at a flush, the last one (maybe) unflushed,
                # each summed in order, rounding at every step
                start = np.flatnonzero(np.concatenate(([True], ends[:-1])))
                lens = np.diff(np.append(start, n))
                sums = np.zeros(start.shape[0], half)
                short = np.flatnonzero(lens <= 64)
                if short.size:
                    m = int(lens[short].max())
                    grid = np.zeros((m, short.size), half)     # (zeros add nothing)
                    k = np.arange(n) - np.repeat(start, lens)
                    sel = np.repeat(lens <= 64, lens)
                    grid[k[sel], np.repeat(np.arange(short.size), lens[short])] = vals[sel]
                    acc = grid[0]
                    for r in range(1, m):
                        acc = (acc.astype(f32) + grid[r].astype(f32)).astype(half)
                    sums[short] = acc
                for i in np.flatnonzero(lens > 64):     # (numpy accumulates half step by step)
                    sums[i] = np.add.accumulate(vals[start[i]:start[i] + lens[i]])[-1]
                if not ends[-1]:
                    part, sums = sums[-1], sums[:-1]
                vals, depth = sums, depth[ends]
            out = half(f32(out) + f32(part))
        return out

    @staticmethod
    def backward(ctx, g):
        logp, target, weight = ctx.saved_tensors
        if "_hooked_extra" in ctx.__dict__:
            # (torch's node unpacks the total weight a saved_tensors_hooks block packed, as each
            # saved tensor, so the unpack hook is called for it; the gradient reads it from meta)
            unpack_hooked(ctx, ctx._hooked_extra)
        grad_cls = NllLoss2DGrad if logp._data.ndim == 4 else NllLossGrad
        if not _grad_state.record:
            # (nothing recorded: the gradient op's forward on the arrays, without its apply; it
            # only saves the targets and weights, so they are not unpacked)
            return _make(grad_cls.forward(NULL_CTX, g._data, logp._data, None, None, ctx.meta)), \
                None, None, None, None
        return grad_cls.apply(g, logp, target, weight, ctx.meta), None, None, None, None


class NllLoss2D(NllLoss, name="NllLoss2DBackward0"):
    """:class:`NllLoss` of (N, C, H, W) log-probabilities against (N, H, W) targets (torch's
    nll_loss2d, which nll_loss of other ranks above 2 goes through by viewing them as 4-D).
    derivatives.yaml nll_loss2d: the same gradient as nll_loss at each position."""


class NllLossGrad(ArrayFunction, name="NllLossBackwardBackward0", nondiff=(2, 3)):
    """nll_loss_backward(grad, self, target, weight): the incoming gradient times
    -weight[target] (divided by the total weight for 'mean') at each row's target class, and +0
    everywhere else (an ignored target's row too, whatever the gradient), in self's shape.
    derivatives.yaml nll_loss_backward: grad_output: nll_loss(grad, target, weight, reduction,
    ignore_index), so its derivative is :class:`NllLoss` again; self: zeros (self only ties the
    gradient to it, as torch's)."""

    @staticmethod
    def forward(ctx, g, logp, target, weight, meta):
        ctx.meta = meta
        ctx.save_for_backward(target, weight)
        shape, rows, safe, w, valid, reduction, denom, _ = meta
        # as torch's nll_loss_backward: -(grad / total_weight) ('mean'), then times the weight
        if reduction == "none":
            coef = -g.reshape(-1)
        else:
            coef = -(g / denom) if reduction == "mean" else -g
        if w is not None:
            coef = w * coef
        out = np.zeros(shape, g.dtype)
        if valid is None:
            out[rows, safe] = coef
        else:
            out[rows[valid], safe[valid]] = coef[valid]
        if logp.ndim == 4:      # the rows back to (N, H, W) and the classes to dim 1
            n, c, h, wd = logp.shape
            return np.ascontiguousarray(out.reshape(n, h, wd, c).transpose(0, 3, 1, 2))
        return out.reshape(logp.shape)

    @staticmethod
    def backward(ctx, v):
        target, weight = ctx.saved_tensors
        *_, reduction, _, ignore_index = ctx.meta
        fwd_cls = NllLoss2D if v._data.ndim == 4 else NllLoss
        gv = fwd_cls.apply(v, target, weight, reduction, ignore_index) if ctx.needs(0) else None
        gl = _zeros_of(v) if ctx.needs(1) else None
        return gv, gl, None, None, None


class NllLoss2DGrad(NllLossGrad, name="NllLoss2DBackwardBackward0"):
    """:class:`NllLossGrad` of :class:`NllLoss2D`."""


@op("nll_loss", functional=True, method=False, namespace=False)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood loss. ``input``: (N, C), (C,) or (N, C, d1, ...) log-probabilities;
    ``target``: (N,), () or (N, d1, ...) int64 (or uint8) class indices in [0, C). A 4-D input
    records NllLoss2DBackward0, other ranks above 2 go through it by views (ViewBackward0), as
    torch; 'none' gives the target's shape. ``reduction``: 'mean' (weighted mean over non-ignored
    targets), 'sum' or 'none' (torch's deprecated 'elementwise_mean' is read as 'mean', with its
    UserWarning). The legacy ``size_average``/``reduce`` flags, when either is not None, choose
    the reduction instead (torch's _Reduction.legacy_get_string: reduce=False gives 'none', else
    size_average=False 'sum', else 'mean'), with torch's deprecation UserWarning, and
    ``reduction`` is then ignored.

    Raises ValueError for an unknown reduction (when no legacy flag is given; the message names
    the op and the valid values), a 0-d input, or a target whose batch size differs;
    RuntimeError for a target whose other dims do not match the input's d1, ... (torch's
    "Expected target size ..."), a 4-D input with a target that is not 3-D, a target that is
    neither int64 nor uint8 (checked after the shapes, as torch), a 2-D target for an input of
    at most 2 dims ("multi-target not supported"), or class weights that require grad;
    TypeError for a non-Tensor target; NotImplementedError, as torch's kernels
    (nll_loss_out_frame, nll_loss2d_forward_out_frame), for an input that is not floating
    (after the target's dtype and the weights are checked, before the targets' values);
    IndexError for a target out of range."""
    reduction = _reduction(size_average, reduce, reduction, _NLL_HINT)
    if not isinstance(target, Tensor):
        raise TypeError(f"nll_loss(): argument 'target' must be Tensor, not {type(target).__name__}")
    nd = input._data.ndim
    if nd == 0:
        raise ValueError("nll_loss: expected input of at least 1 dimension ((C,), (N, C) or "
                         "(N, C, d1, ...)), got a 0-d input")
    ishape, tshape = input._data.shape, target._data.shape
    n = ishape[0] if nd >= 2 else 1
    if (nd >= 2 and tshape[:1] != (n,)) or (nd == 1 and tshape != ()):
        raise ValueError(f"Expected input batch_size ({n}) to match target batch_size "
                         f"({tshape[0] if tshape else 0}). (nll_loss: input shape {list(ishape)}, "
                         f"target shape {list(tshape)})")
    if nd <= 2 and len(tshape) > 1:
        raise RuntimeError(f"0D or 1D target tensor expected, multi-target not supported "
                           f"(nll_loss: input shape {list(ishape)}, target shape {list(tshape)}; "
                           f"for class probabilities use cross_entropy with a floating target of "
                           f"the input's shape)")
    if nd == 4 and len(tshape) != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {len(tshape)} (nll_loss: input shape "
                           f"{list(ishape)}, target shape {list(tshape)})")
    if nd >= 3 and tshape != (n,) + ishape[2:]:
        raise RuntimeError(f"Expected target size {[n, *ishape[2:]]}, got {list(tshape)} "
                           f"(nll_loss: an (N, C, d1, ...) input takes (N, d1, ...) targets)")
    # (torch's autograd refuses such weights before its checks of the target's dtype)
    if isinstance(weight, Tensor) and weight._requires_grad and _grad_state.record:
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect to "
                           "argument 'weight'. This input cannot have requires_grad True. (nll_loss "
                           "and cross_entropy take class weights as constants: pass "
                           "weight.detach())")
    tdt = target._data.dtype
    # (against dtype instances: == with a type object converts it on every call)
    if tdt != _I64 and tdt != _U8:
        hint = ("for class probabilities use cross_entropy with a floating target of the "
                "input's shape" if tdt.kind == "f" else "convert the class indices with .long()")
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {scalar_name(tdt)} "
                           f"(nll_loss: target holds class indices, int64 or uint8; {hint})")
    # then, as torch, the weights' shape (checked before its kernel runs), the kernel's dtype
    # (floating only, NotImplementedError naming it), and the target's values (which it reads)
    c = ishape[1] if nd >= 2 else ishape[0]
    if weight is not None and not isinstance(weight, Tensor):
        weight = _make(np.asarray(weight))
    if weight is not None and (weight._data.ndim != 1 or weight._data.shape[0] != c):
        raise RuntimeError(
            f"weight tensor should be defined either for all {c} classes or no classes but got "
            f"weight tensor of shape: {list(weight._data.shape)}" if nd <= 2 else
            f"weight tensor should be defined either for all or no classes (nll_loss: {c} "
            f"classes, weight of shape {list(weight._data.shape)})")
    if input._data.dtype.kind != "f":
        kernel = "nll_loss_out_frame" if nd <= 2 else "nll_loss2d_forward_out_frame"
        name = scalar_name(input._data.dtype)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}' (nll_loss of a "
                                  f"{name} input: it takes floating log-probabilities, e.g. "
                                  f"log_softmax(x.float(), 1))")
    if tdt == _U8 and nd >= 3 and (reduction == "none" or input._data.size):
        # (torch's kernel for these ranks takes int64 only; it returns before looking at an
        # empty input's target when reducing)
        raise RuntimeError(f"expected scalar type Long but found Byte (nll_loss: a uint8 target "
                           f"is taken only with a (C,) or (N, C) input; for input shape "
                           f"{list(ishape)} convert the target with .long())")
    t = target._data if tdt == _I64 else target._data.astype(np.int64)
    # one comparison finds every target outside [0, c) (a negative one reads as a huge unsigned
    # number); only then are ignored ones told from bad ones
    if t.size and np.maximum.reduce(t.view(np.uint64), axis=None) >= c:
        bad = (t != ignore_index) & ((t < 0) | (t >= c))
        if bad.any():
            raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds: nll_loss "
                             f"targets must be class indices in [0, {c - 1}] (input has {c} "
                             f"classes)")
    elif not 0 <= ignore_index < c:
        ignore_index = None     # (no target can be ignored: forward skips looking)
    if nd <= 2:
        return NllLoss.apply(input, target, weight, reduction, ignore_index)
    if nd == 4:
        return NllLoss2D.apply(input, target, weight, reduction, ignore_index)
    # other ranks as torch: viewed as (N, C, 1, rest) against (N, 1, rest), the result back
    rest = int(np.prod(ishape[2:]))     # (not -1: that fails for an empty input)
    out = NllLoss2D.apply(input.reshape(n, c, 1, rest), target.reshape(n, 1, rest), weight,
                          reduction, ignore_index)
    return out.reshape((n,) + ishape[2:]) if reduction == "none" else out


@op("cross_entropy", functional=True, method=False, namespace=False)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross-entropy of raw logits ``input`` (N, C), (C,) or (N, C, d1, ...) against class indices
    ``target`` ((N,), () or (N, d1, ...)); computed as nll_loss(log_softmax(input, 1), target),
    stable for logits in the thousands.
    A floating ``target`` of the input's shape is read as class probabilities.
    ``label_smoothing`` s mixes (1 - s) of that loss with s / C of the loss against a uniform
    target (weighted and ignore_index-aware for indices, as torch). ``reduction``: 'mean'
    (weighted mean over non-ignored index targets; the mean over the batch for probabilities),
    'sum' or 'none' (torch's deprecated 'elementwise_mean' is read as 'mean', with its
    UserWarning). The legacy ``size_average``/``reduce`` flags, when either is not None, choose
    the reduction instead (torch's _Reduction.legacy_get_string: reduce=False gives 'none', else
    size_average=False 'sum', else 'mean'), with torch's deprecation UserWarning (once), and
    ``reduction`` is then ignored.

    Raises ValueError for an unknown reduction, for index and probability targets alike (when no
    legacy flag is given; the message names the op and the valid values); RuntimeError, in
    torch's order, for a target of the input's shape that is not floating or with an
    ignore_index of at least 0, then for a label_smoothing outside [0, 1];
    NotImplementedError for an integer or bool input (torch's log_softmax kernel, or its
    nll_loss kernel when the input is empty); and nll_loss's errors (see :func:`nll_loss`) for index
    targets, which a floating target of another shape than the input's is taken for, as torch
    (so it fails there, e.g. "expected target dtype to be Long or Byte")."""
    reduction = _reduction(size_average, reduce, reduction, _CE_HINT)
    d = 1 if input._data.ndim >= 2 else 0
    n_classes = input._data.shape[d]
    # (torch reads a target of the input's shape as probabilities, checked before its
    # log_softmax; a floating target of another shape goes on as class indices, and fails there)
    probs = isinstance(target, Tensor) and target._data.shape == input._data.shape
    if probs:
        if target._data.dtype.kind != "f":
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {scalar_name(target._data.dtype)} "
                               f"(cross_entropy: a target of the input's shape holds class "
                               f"probabilities; class indices have no class dim)")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
    ls = float(label_smoothing)
    if not 0.0 <= ls <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls}")
    _floating_for(input, d, "log_softmax")
    # (the op itself, d being a valid dim: its saved result then finds the caller's line
    # without a stack walk)
    logp = LogSoftmax.apply(input, d)
    if probs:
        if ls:
            target = target * (1 - ls) + ls / n_classes
        per = -(logp * target)
        if weight is not None:
            per = per * weight
        per = per.sum(d)
        if reduction == "none":
            return per
        return per.sum() if reduction == "sum" else per.mean() if per._data.ndim else per
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not ls:
        return nll
    if weight is not None:
        shape = [1] * logp._data.ndim
        shape[d] = n_classes
        smooth = -(logp * weight.reshape(shape)).sum(d)
    else:
        smooth = -logp.sum(d)
    ignored = np.asarray(target._data == ignore_index)
    kept = denom = None
    if reduction == "mean":
        kept = np.asarray(target._data)[~ignored].reshape(-1)
        if weight is not None and kept.size and target._data.dtype == np.uint8:
            raise RuntimeError("gather(): Expected dtype int32/int64 for index (cross_entropy "
                               "with weight and label_smoothing gathers the weights with the "
                               "target: convert it with .long())")
        denom = weight._data[kept].sum() if weight is not None else kept.size
    if ignored.any():
        smooth = smooth.masked_fill(_make(ignored), 0.0)
    if reduction == "mean":
        smooth = smooth.sum() / float(denom)
    elif reduction == "sum":
        smooth = smooth.sum()
    from .losses import MulScalar   # (losses imports this module)
    # (tensor * number as torch's C++ composite records it: MulBackward1)
    return MulScalar.apply(nll, 1 - ls) + MulScalar.apply(smooth, ls / n_classes)


@op("linear", functional=True, method=False, namespace=False)
def linear(input, weight, bias=None):
    """input @ weight.T + bias. ``input``: (*, in_features), ``weight``: (out_features,
    in_features), ``bias``: (out_features,) or None; result (*, out_features).

    Recorded as torch 2.13's at::linear records it: 2-D input with a bias is one AddmmBackward0
    (TBackward0 on the way to the weight; for a leaf weight that node is made only once
    next_functions, a hook on the AddmmBackward0 node, a call of it or a backward that counts
    looks for it, and a plain backward goes without it, to the same values:
    :class:`~tapegrad.ops.linalg.Linear`); contiguous input of another rank with a bias of one
    row (every dim but the last of size 1) is flattened to 2-D for that addmm and viewed back
    (ViewBackward0, torch's _flatten_nd_linear); otherwise the product (matmul) gets the bias
    added in place (AddBackward0, keeping the product's dtype).

    Raises TypeError for a bias that is not a Tensor; RuntimeError for in_features that differ,
    a weight whose dtype is not the input's, or, where addmm adds it, a bias whose dtype is not
    the input's (torch does not promote there)."""
    ia, wa = input._data, weight._data
    if ia.ndim == 2 and wa.ndim == 2 and isinstance(bias, Tensor) and \
            ia.shape[1] == wa.shape[1] and ia.dtype is wa.dtype and bias._data.dtype is ia.dtype:
        # (nn.Linear's usual call, checked in one go; a weight with history goes through its
        # own TBackward0 node, as Linear makes that node only for a leaf)
        # (under saved_tensors_hooks the pack hook must see weight.t() as torch's addmm saves
        # it, which Linear makes only later)
        if weight.grad_fn is None and not _hooked_threads:
            return Linear.apply(bias, input, weight)
        return Addmm.apply(bias, input, T.apply(weight))
    if bias is not None:
        check_bias(bias, input, "linear", "bias", 3, dtype=False)
    if ia.shape[-1:] != wa.shape[-1:]:
        sa = ia.shape
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({int(np.prod(sa[:-1]))}x{sa[-1]} and {wa.shape[-1]}x"
                           f"{wa.shape[0]}): linear got input of shape {list(sa)} and "
                           f"weight of shape {list(wa.shape)} (in_features must match)")
    bs = bias._data.shape if bias is not None else None
    if bs is not None and (ia.ndim == 2 or bs and ia.flags.c_contiguous and wa.ndim == 2
                           and all(k == 1 for k in bs[:-1])):
        check_bias(bias, input, "linear", "bias", 3)
        check_same_dtype(input, weight, "linear")
        if ia.ndim == 2:
            return Addmm.apply(bias, input, weight.t())
        lead = ia.shape[:-1]
        flat = input.reshape(int(np.prod(lead)), ia.shape[-1])
        return Addmm.apply(bias, flat, weight.t()).view(*lead, wa.shape[0])
    out = matmul(input, weight.t())
    return out if bias is None else out.add_(bias)


# ---- convolution and max pooling ----------------------------------------------------------------
# conv2d and max_pool2d are ArrayFunction primitives built on strided window views
# (np.lib.stride_tricks.as_strided) and one matrix product each way; no Python loop runs over
# pixels. Their backward passes are themselves primitives whose backward is defined in terms of
# the others (derivatives.yaml convolution_backward / convolution_backward's double backward,
# max_pool2d_with_indices_backward), so create_graph=True works to any order:
#
#   y  = conv(x, w)            dL/dx = conv_input_grad(g, w)    dL/dw = conv_weight_grad(x, g)
#   gx = conv_input_grad(g, w)     d/dg = conv(u, w)            d/dw = conv_weight_grad(u, g)
#   gw = conv_weight_grad(x, g)    d/dx = conv_input_grad(g, v) d/dg = conv(x, v)
#
# (each line is the adjoint identity <u, A(a, b)> = <B(u, b), a> of a bilinear map), and
#   y  = max_pool(x) = gather(x, idx)   dL/dx = scatter(g, idx)   d scatter/dg = gather(u, idx).

from numpy.lib.stride_tricks import as_strided as _as_strided


def _pair(value, name, op):
    """An int or a sequence of 1 or 2 ints -> a pair of ints (torch's expand_param_if_needed)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value), int(value)
    try:
        vals = [int(v) for v in value]
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be an int or a tuple of 2 ints, not "
                        f"{type(value).__name__}") from None
    if len(vals) == 1:
        return vals[0], vals[0]
    if len(vals) != 2:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of 2 values "
                           f"to match the convolution dimensions, but got {name}={vals}")
    return vals[0], vals[1]


def _pad_hw(x, ph, pw, value=0):
    """x (N, C, H, W) padded by ph rows and pw columns on each side with ``value``."""
    if ph == 0 and pw == 0:
        return x
    n, c, h, w = x.shape
    out = np.full((n, c, h + 2 * ph, w + 2 * pw), value, x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _windows(xp, kh, kw, sh, sw):
    """Read-only strided view (N, C, Ho, Wo, kh, kw) of the windows of xp (N, C, Hp, Wp)."""
    n, c, hp, wp = xp.shape
    ho, wo = (hp - kh) // sh + 1, (wp - kw) // sw + 1
    s0, s1, s2, s3 = xp.strides
    return _as_strided(xp, (n, c, ho, wo, kh, kw), (s0, s1, s2 * sh, s3 * sw, s2, s3),
                       writeable=False)


def _im2col(x, kh, kw, stride, padding):
    """x (N, C, H, W) -> columns (N, C*kh*kw, Ho*Wo) (one copy of the window view), Ho, Wo."""
    win = _windows(_pad_hw(x, *padding), kh, kw, *stride)
    n, c, ho, wo = win.shape[:4]
    return win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, ho * wo), ho, wo


def _conv_forward(x, w, stride, padding):
    """Cross-correlation: y[n, o] = sum_c,i,j w[o, c, i, j] x_pad[n, c, s*h + i, s*w + j]."""
    n = x.shape[0]
    o, _, kh, kw = w.shape
    cols, ho, wo = _im2col(x, kh, kw, stride, padding)
    return np.matmul(w.reshape(o, -1), cols).reshape(n, o, ho, wo)


def _conv_weight_grad(x, g, stride, padding, ksize):
    """dL/dw of y = conv(x, w) for dL/dy = g: sum_n g[n] (O, Ho*Wo) @ cols[n]^T."""
    kh, kw = ksize
    n, o = g.shape[:2]
    c = x.shape[1]
    cols, ho, wo = _im2col(x, kh, kw, stride, padding)
    g3 = g.reshape(n, o, ho * wo)
    if o <= ho * wo:
        # batched product, then a sum over the batch: the (N, O, C*kh*kw) intermediate is no
        # larger than the columns, and no transposed copy of the columns is needed
        gw = np.matmul(g3, cols.transpose(0, 2, 1)).sum(0)
    else:
        gw = np.tensordot(g3, cols, axes=([0, 2], [0, 2]))
    return gw.reshape(o, c, kh, kw)


def _conv_input_grad(g, w, stride, padding, in_hw):
    """dL/dx of y = conv(x, w) for dL/dy = g (a transposed convolution, col2im).

    One product (kh*kw*C, O) @ (O, Ho*Wo*N) gives every kernel offset's contribution; they are
    added into a channels-last padded buffer with one strided add per kernel offset (kh*kw adds,
    each over whole images; the batch is the innermost axis so the adds are long and contiguous).
    """
    n, o, ho, wo = g.shape
    _, c, kh, kw = w.shape
    (sh, sw), (ph, pw) = stride, padding
    h, wd = in_hw
    gt = np.ascontiguousarray(g.transpose(1, 2, 3, 0)).reshape(o, ho * wo * n)
    wt = np.ascontiguousarray(w.transpose(2, 3, 1, 0)).reshape(kh * kw * c, o)
    cols = np.matmul(wt, gt).reshape(kh, kw, c, ho, wo, n)
    xp = np.zeros((c, h + 2 * ph, wd + 2 * pw, n), np.result_type(g.dtype, w.dtype))
    for i in range(kh):
        for j in range(kw):
            xp[:, i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw] += cols[i, j]
    return np.ascontiguousarray(xp[:, ph:ph + h, pw:pw + wd].transpose(3, 0, 1, 2))


class Convolution(ArrayFunction, name="ConvolutionBackward0"):
    """2-D cross-correlation (torch.nn.functional.conv2d, groups=1, dilation=1).

    Arguments: input (N, C, H, W), weight (O, C, kh, kw), bias (O,) or None, stride and padding
    as int pairs; returns (N, O, Ho, Wo) of the input's dtype. derivatives.yaml
    convolution_backward: input: the transposed convolution of grad with weight; weight: the
    correlation of input with grad; bias: grad summed over (N, Ho, Wo)."""

    @staticmethod
    def forward(ctx, x, w, b, stride, padding):
        ctx.save_for_backward(x, w)
        ctx.conf = (stride, padding)
        y = _conv_forward(x, w, stride, padding)
        if b is not None:
            y += b.reshape(-1, 1, 1)
        return y

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        stride, padding = ctx.conf
        gx = ConvolutionInputGrad.apply(g, w, stride, padding, x._data.shape[2:]) \
            if ctx.needs(0) else None
        gw = ConvolutionWeightGrad.apply(x, g, stride, padding, w._data.shape[2:]) \
            if ctx.needs(1) else None
        gb = g.sum((0, 2, 3)) if ctx.needs(2) else None
        return gx, gw, gb, None, None


class ConvolutionInputGrad(ArrayFunction, name="ConvolutionBackwardBackward0"):
    """Gradient of conv2d with respect to its input: the transposed convolution of grad (N, O,
    Ho, Wo) with weight (O, C, kh, kw), giving (N, C, H, W) for the given input size (H, W).
    Bilinear in (grad, weight); its own derivatives: grad: conv2d(u, weight); weight:
    conv_weight_grad(u, grad)."""

    @staticmethod
    def forward(ctx, g, w, stride, padding, in_hw):
        ctx.save_for_backward(g, w)
        ctx.conf = (stride, padding)
        return _conv_input_grad(g, w, stride, padding, in_hw)

    @staticmethod
    def backward(ctx, u):
        g, w = ctx.saved_tensors
        stride, padding = ctx.conf
        gg = Convolution.apply(u, w, None, stride, padding) if ctx.needs(0) else None
        gw = ConvolutionWeightGrad.apply(u, g, stride, padding, w._data.shape[2:]) \
            if ctx.needs(1) else None
        return gg, gw, None, None, None


class ConvolutionWeightGrad(ArrayFunction, name="ConvolutionBackwardBackward0"):
    """Gradient of conv2d with respect to its weight: the correlation of input (N, C, H, W) with
    grad (N, O, Ho, Wo), giving (O, C, kh, kw). Bilinear in (input, grad); its own derivatives:
    input: conv_input_grad(grad, v); grad: conv2d(input, v)."""

    @staticmethod
    def forward(ctx, x, g, stride, padding, ksize):
        ctx.save_for_backward(x, g)
        ctx.conf = (stride, padding)
        return _conv_weight_grad(x, g, stride, padding, ksize)

    @staticmethod
    def backward(ctx, v):
        x, g = ctx.saved_tensors
        stride, padding = ctx.conf
        gx = ConvolutionInputGrad.apply(g, v, stride, padding, x._data.shape[2:]) \
            if ctx.needs(0) else None
        gg = Convolution.apply(x, v, None, stride, padding) if ctx.needs(1) else None
        return gx, gg, None, None, None




def _conv_padding(padding, kh, kw, stride):
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0
        if padding == "same":
            if stride != (1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            if kh % 2 == 0 or kw % 2 == 0:
                raise NotImplementedError(
                    f"conv2d: padding='same' with an even kernel size ({kh} x {kw}) needs "
                    f"asymmetric padding, which tapegrad does not implement; pad the input "
                    f"explicitly or use an odd kernel")
            return (kh - 1) // 2, (kw - 1) // 2
        raise ValueError(f"Invalid padding string '{padding}', should be one of "
                         f"{{'valid', 'same'}}")
    return _pair(padding, "padding", "conv2d")


@op("conv2d", functional=True, method=False, namespace=False)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as torch.nn.functional.conv2d).

    Shapes: ``input`` (N, C, H, W) or unbatched (C, H, W); ``weight`` (O, C, kh, kw); ``bias``
    (O,) or None; ``stride`` and ``padding`` an int or a pair (``padding`` also 'valid' or
    'same'). Output (N, O, Ho, Wo) with Ho = (H + 2 padding - kh) // stride + 1 (likewise Wo), of
    the common dtype of the arguments (all must have the same dtype). The result records
    ConvolutionBackward0; gradients (derivatives.yaml convolution_backward) are themselves
    differentiable, so create_graph / gradgradcheck work.

    Raises:
        RuntimeError: input not 3-D/4-D; weight not 4-D; input channels != weight.shape[1]
            (naming both shapes); bias not of shape (O,); dtypes differ; non-positive stride,
            negative padding, a stride/padding list of the wrong length; a kernel larger than
            the padded input; padding='same' with stride > 1.
        NotImplementedError: dilation != 1, groups != 1, padding='same' with an even kernel.
    """
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        bad = "input" if not isinstance(input, Tensor) else "weight"
        raise TypeError(f"conv2d(): argument '{bad}' must be Tensor, not "
                        f"{type(input if bad == 'input' else weight).__name__}")
    if _pair(dilation, "dilation", "conv2d") != (1, 1):
        raise NotImplementedError(f"conv2d: dilation={dilation} is not supported (only 1)")
    if groups != 1:
        raise NotImplementedError(f"conv2d: groups={groups} is not supported (only 1)")
    xs, ws = input._data.shape, weight._data.shape
    if len(xs) not in (3, 4):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(xs)}")
    if len(ws) != 4:
        raise RuntimeError(f"conv2d: expected weight to be 4-D (out_channels, in_channels, kH, "
                           f"kW), but got weight of size {list(ws)}")
    if len(xs) == 3:
        out = conv2d(input.unsqueeze(0), weight, bias, stride, padding)
        return out.squeeze(0)
    o, c, kh, kw = ws
    if xs[1] != c:
        raise RuntimeError(f"Given groups=1, weight of size {list(ws)}, expected input{list(xs)} "
                           f"to have {c} channels, but got {xs[1]} channels instead")
    if bias is not None:
        if not isinstance(bias, Tensor):
            raise TypeError(f"conv2d(): argument 'bias' must be Tensor, not "
                            f"{type(bias).__name__}")
        if bias._data.shape != (o,):
            raise RuntimeError(f"Given weight of size {list(ws)}, expected bias to be "
                               f"1-dimensional with {o} elements, but got bias of size "
                               f"{list(bias._data.shape)} instead")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.dtype != input._data.dtype:
            a, b = input._data.dtype.name, t._data.dtype.name
            raise RuntimeError(f"expected scalar type {scalar_name(input._data.dtype)} but found "
                               f"{scalar_name(t._data.dtype)}: conv2d input{list(xs)} is "
                               f"tapegrad.{a} and {name}{list(t._data.shape)} is tapegrad.{b} "
                               f"(convert one with .to(dtype))")
    st = _pair(stride, "stride", "conv2d")
    pd = _conv_padding(padding, kh, kw, st)
    if min(st) <= 0:
        raise RuntimeError(f"non-positive stride is not supported (conv2d got stride={list(st)})")
    if min(pd) < 0:
        raise RuntimeError(f"negative padding is not supported (conv2d got padding={list(pd)})")
    hp, wp = xs[2] + 2 * pd[0], xs[3] + 2 * pd[1]
    if hp < kh or wp < kw:
        raise RuntimeError(f"Calculated padded input size per channel: ({hp} x {wp}). Kernel "
                           f"size: ({kh} x {kw}). Kernel size can't be greater than actual input "
                           f"size")
    return Convolution.apply(input, weight, bias, st, pd)


def _pool_offsets(k, s, ho, wo):
    """(window offset, row slice, column slice) of each kernel position in the padded input."""
    (kh, kw), (sh, sw) = k, s
    return [(i * kw + j, slice(i, i + sh * (ho - 1) + 1, sh), slice(j, j + sw * (wo - 1) + 1, sw))
            for i in range(kh) for j in range(kw)]


def _max_pool_forward(x, k, s, p):
    """Window maxima of x (N, C, H, W) and each maximum's offset in its window (row-major, a
    small int array), in one vectorized pass per kernel position (kh*kw passes over the output,
    no loop over pixels; an argmax over a copied window axis is about 5x slower).

    The arg-max follows torch's CPU kernel exactly: a later element wins only when it is greater
    than the running maximum or is NaN (so ties keep the first maximum in row-major window order
    and the last NaN wins), and padding never wins: a window whose real elements are all -inf
    (the dtype's minimum for integers) points at its first real element. A floating input
    without padding goes through :func:`_max_pool_by_equality` (the same result in fewer
    passes) unless a maximum is NaN."""
    (kh, kw), (sh, sw), (ph, pw) = k, s, p
    n, c, h, w = x.shape
    floating = x.dtype.kind == "f"
    ho, wo = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    odt = np.int8 if kh * kw < 127 else np.int32
    if floating and not (ph or pw) and kh * kw > 1:
        found = _max_pool_by_equality(x, _pool_offsets(k, s, ho, wo), odt)
        if found is not None:
            return found
    low = -np.inf if floating else (False if x.dtype.kind == "b" else np.iinfo(x.dtype).min)
    xp = _pad_hw(x, ph, pw, low)
    best = np.full((n, c, ho, wo), low, x.dtype)
    am = np.full((n, c, ho, wo), -1, odt)
    for off, rs, cs in _pool_offsets(k, s, ho, wo):
        v = xp[:, :, rs, cs]
        better = np.greater(v, best)
        if floating:
            better |= np.isnan(v)
        np.maximum(best, v, out=best)      # same values as torch's rule, NaN included
        d = np.subtract(off, am, dtype=odt)
        d *= better                        # am = where(better, off, am), ~5x faster than where
        am += d
    if (am < 0).any():                     # nothing beat -inf: torch's first real element
        r0, c0 = np.arange(ho) * sh - ph, np.arange(wo) * sw - pw
        first = ((np.maximum(r0, 0) - r0)[:, None] * kw + (np.maximum(c0, 0) - c0)).astype(odt)
        am = np.where(am < 0, first, am)
    return best, am


def _max_pool_by_equality(x, offsets, odt):
    """:func:`_max_pool_forward` for floating ``x`` without padding, in half the passes: the
    maxima as hand-written code takes them (np.maximum of the kernel positions' strided views),
    then each window's arg-max as the first position, in row-major order, that holds its
    maximum, which is torch's rule (a later element wins only when greater) wherever no NaN is
    involved; all -inf picks the first element, as torch. None when a maximum is NaN (their
    maximum is), where torch's rule picks the last NaN: the exact path then decides. In W5's step
    (benchmarks/) a max-pool forward costs about 40% of what the exact path does."""
    views = [x[:, :, rs, cs] for _, rs, cs in offsets]
    best = np.maximum(views[0], views[1])
    for v in views[2:]:
        np.maximum(best, v, out=best)
    if best.size and np.isnan(np.maximum.reduce(best, axis=None)):
        return None
    # from the last position to the first, am = where(x at that position == max, it, am)
    am = np.full(best.shape, len(views) - 1, odt)
    for off in range(len(views) - 2, -1, -1):
        d = np.subtract(am, off, dtype=odt)
        d *= np.equal(views[off], best)
        am -= d
    return best, am


def _max_pool_indices(am, k, s, p, w):
    """torch's flat indices (into each H*W plane) from window offsets ``am`` (..., Ho, Wo)."""
    (_, kw), (sh, sw), (ph, pw) = k, s, p
    ho, wo = am.shape[-2:]
    am = am.astype(np.int64)
    rows = (np.arange(ho) * sh - ph)[:, None] + am // kw
    return rows * w + (np.arange(wo) * sw - pw) + am % kw


def _max_pool_scatter(g, am, in_shape, k, s, p):
    """Zeros of ``in_shape`` (N, C, H, W) with g (N, C, Ho, Wo) added at the window arg-maxes."""
    n, c, h, w = in_shape
    (ph, pw) = p
    ho, wo = g.shape[-2:]
    overlap = s[0] < k[0] or s[1] < k[1]
    if not np.isfinite(g).all():
        # the masked products below would turn inf * 0 into NaN away from the maxima
        out = np.zeros(n * c * h * w, g.dtype)
        flat = _max_pool_indices(am, k, s, p, w) + (np.arange(n * c) * (h * w)).reshape(n, c, 1, 1)
        np.add.at(out, flat.reshape(-1), g.reshape(-1))
        return out.reshape(in_shape)
    gp = np.zeros((n, c, h + 2 * ph, w + 2 * pw), g.dtype)
    for off, rs, cs in _pool_offsets(k, s, ho, wo):
        if overlap:
            gp[:, :, rs, cs] += g * (am == off)
        else:
            np.multiply(g, am == off, out=gp[:, :, rs, cs])
    return np.ascontiguousarray(gp[:, :, ph:ph + h, pw:pw + w]) if ph or pw else gp


def _max_pool_gather(u, am, k, s, p):
    """u (N, C, H, W) read at the window arg-maxes: (N, C, Ho, Wo)."""
    n, c, h, w = u.shape
    idx = _max_pool_indices(am, k, s, p, w)
    return np.take_along_axis(u.reshape(n, c, h * w), idx.reshape(n, c, -1), 2).reshape(idx.shape)


class MaxPool2DWithIndices(ArrayFunction, name="MaxPool2DWithIndicesBackward0"):
    """2-D max pooling of (N, C, H, W) or (C, H, W) with kernel ``k``, stride ``s``, padding
    ``p`` (int pairs); returns the maxima, and with ``with_indices`` also torch's int64 flat
    indices into each H*W plane (non-differentiable). derivatives.yaml max_pool2d_with_indices:
    the gradient is grad scattered (added) to the arg-max positions."""

    @staticmethod
    def forward(ctx, x, k, s, p, with_indices):
        unbatched = x.ndim == 3
        out, am = _max_pool_forward(x[None] if unbatched else x, k, s, p)
        ctx.meta = (k, s, p)
        # the arg-maxes (freed by backward as torch frees its indices) and x, which torch saves
        # as self: version-checked, and the gradient's input for its zero derivative w.r.t. x
        ctx.save_for_backward(am, x)
        if unbatched:
            out = out[0]
        if not with_indices:
            return out
        idx = _max_pool_indices(am[0] if unbatched else am, k, s, p, x.shape[-1])
        ctx.mark_non_differentiable(idx)
        return out, idx

    @staticmethod
    def backward(ctx, g, _gidx=None):
        am, x = ctx.saved_tensors
        k, s, p = ctx.meta
        return MaxPool2DScatter.apply(g, x, am._data, x._data.shape, k, s, p), None, None, None, \
            None


class MaxPool2DScatter(ArrayFunction, name="MaxPool2DWithIndicesBackwardBackward0"):
    """max_pool2d's input gradient: grad (N, C, Ho, Wo) or (C, Ho, Wo) added into zeros of
    ``in_shape`` at the saved window arg-maxes ``am`` (N, C, Ho, Wo). ``x`` is the pooled input
    (torch's self argument, which only ties the gradient to it, so a gradient penalty
    differentiates) or None. derivatives.yaml max_pool2d_with_indices_backward: grad_output:
    max_pool_double_backward (a gather at the same positions); self: zeros."""

    @staticmethod
    def forward(ctx, g, x, am, in_shape, k, s, p):
        ctx.meta = (am, in_shape, k, s, p)
        shape4 = am.shape[:2] + tuple(in_shape[-2:])
        return _max_pool_scatter(g.reshape(am.shape), am, shape4, k, s, p).reshape(in_shape)

    @staticmethod
    def backward(ctx, u):
        am, in_shape, k, s, p = ctx.meta
        gu = MaxPool2DGather.apply(u, am, k, s, p) if ctx.needs(0) else None
        gx = _make(np.zeros(in_shape, u.dtype.np)) if ctx.needs(1) else None
        return gu, gx, None, None, None, None, None


class MaxPool2DGather(ArrayFunction, name="MaxPoolDoubleBackwardBackward0"):
    """u (N, C, H, W) or (C, H, W) read at max_pool2d's window arg-maxes ``am``
    (N, C, Ho, Wo), giving (N, C, Ho, Wo) or (C, Ho, Wo): derivatives.yaml
    max_pool_double_backward. Linear in u; its derivative scatters back."""

    @staticmethod
    def forward(ctx, u, am, k, s, p):
        ctx.meta = (am, u.shape, k, s, p)
        out = _max_pool_gather(u.reshape(am.shape[:2] + u.shape[-2:]), am, k, s, p)
        return out.reshape(u.shape[:-2] + am.shape[-2:])

    @staticmethod
    def backward(ctx, v):
        am, shape, k, s, p = ctx.meta
        return MaxPool2DScatter.apply(v, None, am, shape, k, s, p), None, None, None, None


@op("max_pool2d", functional=True, method=False, namespace=False)
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling (torch.nn.functional.max_pool2d).

    Shapes: ``input`` (N, C, H, W) or (C, H, W), any real dtype; ``kernel_size``, ``stride``
    (default: ``kernel_size``) and ``padding`` an int or a pair. Output (N, C, Ho, Wo) of the
    input's dtype with Ho = (H + 2 padding - kh) // stride + 1; with ``return_indices`` also the
    int64 flat indices of the maxima in each H*W plane (as torch). Ties pick the first maximum in
    row-major window order, NaN propagates, as in torch. The result records
    MaxPool2DWithIndicesBackward0 (gradient: scatter to the arg-max positions; derivatives.yaml
    max_pool2d_with_indices_backward), differentiable again under create_graph.

    Raises:
        RuntimeError: input not 3-D/4-D or empty; kernel_size or stride not positive; padding
            negative or more than half the kernel; an output size below 1.
        NotImplementedError: dilation != 1 or ceil_mode=True.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"max_pool2d(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    xs = input._data.shape
    if len(xs) not in (3, 4) or any(d == 0 for d in xs[-3:]):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got "
                           f"input of size: {list(xs)}")
    k = _pair(kernel_size, "kernel_size", "max_pool2d")
    s = k if stride is None or (not isinstance(stride, (int, np.integer)) and
                                len(stride) == 0) else _pair(stride, "stride", "max_pool2d")
    p = _pair(padding, "padding", "max_pool2d")
    if _pair(dilation, "dilation", "max_pool2d") != (1, 1):
        raise NotImplementedError(f"max_pool2d: dilation={dilation} is not supported (only 1)")
    if ceil_mode:
        raise NotImplementedError("max_pool2d: ceil_mode=True is not supported")
    if min(k) <= 0:
        raise RuntimeError(f"max_pool2d: kernel_size must be greater than zero, but got "
                           f"kernel_size={list(k)}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should not be zero (max_pool2d got stride={list(s)})")
    if min(p) < 0 or p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p[0] if p[0] == p[1] else list(p)}, kernel_size="
                           f"{k[0] if k[0] == k[1] else list(k)} and dilation=1")
    h, w = xs[-2:]
    ho, wo = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    if ho < 1 or wo < 1:
        raise RuntimeError(f"Given input size: ({xs[-3]}x{h}x{w}). Calculated output size: "
                           f"({xs[-3]}x{ho}x{wo}). Output size is too small")
    return MaxPool2DWithIndices.apply(input, k, s, p, bool(return_indices))
