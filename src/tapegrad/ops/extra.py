"""More reductions and scans: var_mean/std_mean, median/nanmedian/mode, quantile/nanquantile,
cummax/cummin, logcumsumexp, nansum/nanmean, exp2.

Derivatives (derivatives.yaml): var_mean/std_mean are one node with two outputs
(var_mean_backward / std_mean_backward: the var or std gradient plus the mean's expanded
gradient / N); median()/nanmedian() without dim split the gradient evenly among elements equal to
the result (evenly_distribute_backward); median/nanmedian/mode with dim send it to the returned
index (value_selecting_reduction_backward); cummax/cummin scatter-add it back to the running
arg-extremum (cummaxmin_backward); logcumsumexp: logcumsumexp_backward; nansum: grad where the
input is not NaN; exp2: grad * result * ln 2. quantile/nanquantile are composites, as in torch
(sort, gather, lerp, squeeze).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import Tensor, _make, _wrap_dim, _zeros_of, dims, sum_array, to_float
from .inplace import _unary_inplace
from .linalg import save_mats
from .reduction import (ExtremumAll, IndexSelectScatter, _all_if_empty, _expand_back,
                        _return_type, _sum_dtype, _var_args, _var_backward, _var_numpy)


# ---- var_mean / std_mean ------------------------------------------------------------------------
def _mean_numpy(x, axes, keepdim):
    ax = axes if axes else None
    with np.errstate(invalid="ignore", divide="ignore"):
        if x.size == 0 and ax is None:
            m = np.full((1,) * x.ndim if keepdim else (), np.nan, x.dtype)
        else:
            m = x.mean(axis=ax, keepdims=keepdim)
    return np.asarray(m).astype(x.dtype, copy=False)


def _mean_grad(g, x, axes, keepdim, n):
    shape = x._data.shape
    g = g / n if n else g
    if not shape:
        return g
    return _expand_back(g, shape, axes if axes else tuple(range(len(shape))), keepdim)


class VarMean(ArrayFunction, name="VarMeanBackward0"):
    """(var, mean) over ``axes``. derivatives.yaml var_mean_backward: var_backward(grads[0]) +
    mean gradient of grads[1]."""

    @staticmethod
    def forward(ctx, x, axes, corr, keepdim):
        v, n = _var_numpy(x, axes, corr, keepdim)
        ctx.conf = (axes, corr, keepdim, n)
        ctx.save_for_backward(x)
        return v, _mean_numpy(x, axes, keepdim)

    @staticmethod
    def backward(ctx, gv, gm):
        x, = ctx.saved_tensors
        axes, corr, keepdim, n = ctx.conf
        out = None
        if gv is not None:
            out = _var_backward(gv, x, axes, corr, keepdim, n)
        if gm is not None:
            gmx = _mean_grad(gm, x, axes, keepdim, n)
            out = gmx if out is None else out + gmx
        return out, None, None, None


class StdMean(ArrayFunction, name="StdMeanBackward0"):
    """(std, mean) over ``axes``. derivatives.yaml std_mean_backward: std_backward(grads[0]) +
    mean gradient of grads[1]."""

    @staticmethod
    def forward(ctx, x, axes, corr, keepdim):
        v, n = _var_numpy(x, axes, corr, keepdim)
        with np.errstate(invalid="ignore"):
            s = np.asarray(np.sqrt(v))
        ctx.conf = (axes, corr, keepdim, n)
        ctx.save_for_backward(x, s)
        return s, _mean_numpy(x, axes, keepdim)

    @staticmethod
    def backward(ctx, gs, gm):
        from .pointwise import where
        x, s = ctx.saved_tensors
        axes, corr, keepdim, n = ctx.conf
        out = None
        if gs is not None:
            gv = where(_make(s._data == 0), 0.0, gs / (s * 2))
            out = _var_backward(gv, x, axes, corr, keepdim, n)
        if gm is not None:
            gmx = _mean_grad(gm, x, axes, keepdim, n)
            out = gmx if out is None else out + gmx
        return out, None, None, None


def _vm_args(input, dim, unbiased, keepdim, correction, name):
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    return _var_args(input, dim, unbiased, keepdim, correction, name)


@op("var_mean", method=False)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var, mean)``, a plain tuple, over all elements (0-d results) or ``dim`` (int or tuple;
    ``keepdim`` keeps the reduced dims as size 1), both in the input's dtype. The variance divides
    by N - correction (1 by default; ``unbiased=False`` means 0; ``var_mean(x, False)`` is the
    legacy ``unbiased`` overload). Both outputs share one node, VarMeanBackward0
    (derivatives.yaml var_mean_backward).

    Raises RuntimeError for integer/bool inputs; IndexError for a dim out of range; TypeError for
    both ``unbiased`` and ``correction``."""
    return VarMean.apply(input, *_vm_args(input, dim, unbiased, keepdim, correction, "var_mean"))


@op("std_mean", method=False)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std, mean)``: as :func:`var_mean` with the standard deviation; one node,
    StdMeanBackward0 (derivatives.yaml std_mean_backward; the std part is 0 where std is 0)."""
    return StdMean.apply(input, *_vm_args(input, dim, unbiased, keepdim, correction, "std_mean"))


# ---- median / nanmedian / mode ------------------------------------------------------------------
class MedianAll(ExtremumAll, name="MedianBackward0"):
    """Lower median of all elements (NaN if any is NaN). derivatives.yaml
    evenly_distribute_backward: ties share the gradient."""

    @staticmethod
    def forward(ctx, x, ignore_nan):
        flat = np.sort(x.reshape(-1), kind="stable")
        if flat.dtype.kind == "f":
            valid = int((~np.isnan(flat)).sum())
        else:
            valid = flat.size
        if flat.size == 0 or (valid == 0):
            y = np.array(np.nan if x.dtype.kind == "f" else 0, x.dtype)
        elif not ignore_nan and valid < flat.size:
            y = np.array(np.nan, x.dtype)
        else:
            y = np.asarray(flat[(valid - 1) // 2 if ignore_nan else (flat.size - 1) // 2])
        y = np.array(y, x.dtype)
        ctx.save_for_backward(x, y)
        return y


class NanmedianAll(MedianAll, name="NanmedianBackward0"):
    """Lower median of the non-NaN elements; see :class:`MedianAll`."""


def _median_idx(xm, ignore_nan):
    """Index (along the last axis, kept as size 1) of the lower median, from a stable sort, so
    ties pick the element torch picks in the cases tested; NaN: the first NaN (median), or the
    median of the rest (nanmedian)."""
    n = xm.shape[-1]
    order = np.argsort(xm, axis=-1, kind="stable")
    nn = np.isnan(xm).sum(-1) if xm.dtype.kind == "f" else np.zeros(xm.shape[:-1], np.int64)
    valid = n - nn
    if ignore_nan:
        k = np.where(valid > 0, (valid - 1) // 2, 0)
    else:
        k = np.where(nn > 0, valid, (n - 1) // 2)
    return np.take_along_axis(order, k[..., None].astype(np.int64), -1)


def _mode_idx(xm):
    """The most frequent value (ties: the smallest), at its last position along the last axis."""
    n = xm.shape[-1]
    rows = xm.reshape(-1, n)
    out = np.zeros((rows.shape[0], 1), np.int64)
    for r, row in enumerate(rows):
        vals, counts = np.unique(row, return_counts=True)
        v = vals[np.argmax(counts)]
        hit = np.nonzero(row == v)[0]
        out[r, 0] = hit[-1] if hit.size else np.nonzero(np.isnan(row))[0][0]
    return out.reshape(xm.shape[:-1] + (1,))


class MedianDim(ArrayFunction, name="MedianBackward1"):
    """(values, int64 indices) along ``axis``. derivatives.yaml value_selecting_reduction_backward:
    grad goes to the returned index."""
    _kind = "median"

    @classmethod
    def forward(cls, ctx, x, axis, keepdim):
        ctx.in_shape, ctx.axis, ctx.keepdim = x.shape, axis, keepdim
        if axis is None:
            vals, idx = x.copy(), np.zeros((), np.int64)
        else:
            if x.shape[axis] == 0:
                raise IndexError(f"{cls._kind}(): Expected reduction dim {axis} to have non-zero "
                                 "size.")
            xm = np.moveaxis(x, axis, -1)
            if cls._kind == "mode":
                idx = _mode_idx(xm)
            else:
                idx = _median_idx(xm, cls._kind == "nanmedian")
            idx = np.moveaxis(idx, -1, axis)
            vals = np.take_along_axis(x, idx, axis=axis)
            if not keepdim:
                vals, idx = vals.squeeze(axis), idx.squeeze(axis)
            idx = np.array(idx, np.int64)
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        return vals, idx

    @staticmethod
    def backward(ctx, g, g_idx=None):
        idx, = ctx.saved_tensors
        if ctx.in_shape == ():
            return g, None, None
        return IndexSelectScatter.apply(g, ctx.in_shape, ctx.axis, idx._data, ctx.keepdim), \
            None, None


class NanmedianDim(MedianDim, name="NanmedianBackward1"):
    _kind = "nanmedian"


class ModeDim(MedianDim, name="ModeBackward0"):
    _kind = "mode"


def _select_dim(F, input, dim, keepdim, name):
    nd = input._data.ndim
    axes = dims(dim, nd, name)
    vals, idx = F.apply(input, axes[0] if nd else None, bool(keepdim))
    return _return_type(name)(vals, idx)


@op("median")
def median(input, dim=None, keepdim=False):
    """``median()``: the lower of the two middle values of all elements, a 0-d tensor of the
    input's dtype (NaN if any element is NaN, or if the input is empty); ties share the gradient
    evenly (derivatives.yaml evenly_distribute_backward), MedianBackward0.

    ``median(dim, keepdim=False)``: a named tuple ``(values, indices)`` over one int ``dim``, the
    input's shape without ``dim`` (size 1 with ``keepdim``); indices int64, non-differentiable
    (a row with NaN gives NaN at its first NaN). MedianBackward1, the gradient goes to the index
    (derivatives.yaml value_selecting_reduction_backward). With ties, the index is the one a stable
    sort puts in the middle (torch leaves it unspecified).

    Raises IndexError for ``dim`` out of range or a ``dim`` of size 0."""
    if dim is None:
        return MedianAll.apply(input, False)
    return _select_dim(MedianDim, input, dim, keepdim, "median")


@op("nanmedian")
def nanmedian(input, dim=None, keepdim=False):
    """:func:`median` ignoring NaN (NaN only where every element is NaN; index 0 then).
    Nodes NanmedianBackward0 / NanmedianBackward1; same shapes, gradients and errors."""
    if dim is None:
        return NanmedianAll.apply(input, True)
    return _select_dim(NanmedianDim, input, dim, keepdim, "nanmedian")


@op("mode")
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (default the last; ties: the smallest value) and the
    int64 index of its last occurrence: a named tuple ``(values, indices)``, the input's shape
    without ``dim`` (size 1 with ``keepdim``). ModeBackward0: the gradient goes to the index
    (derivatives.yaml value_selecting_reduction_backward).

    Raises IndexError for ``dim`` out of range or a ``dim`` of size 0."""
    return _select_dim(ModeDim, input, dim, keepdim, "mode")


# ---- quantile / nanquantile ---------------------------------------------------------------------
class _SqueezeInplaceDim(ArrayFunction, name="SqueezeBackward4"):
    """Drop one size-1 ``axis``, recorded as torch's ``squeeze_(dim)`` node (quantile squeezes its
    own intermediate in place). Derivative: unsqueeze."""

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        return np.squeeze(x, axis).copy()

    @staticmethod
    def backward(ctx, g):
        return g.unsqueeze(ctx.axis), None


_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, name, ignore_nan):
    from .scatter import lerp
    x = input._data
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._data.dtype != x.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qv = q._data.astype(np.float64).reshape(-1)
        scalar_q = q._data.ndim == 0
        if not ((qv >= 0) & (qv <= 1)).all():
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    else:
        qf = float(q)
        if not 0 <= qf <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {qf}")
        qv, scalar_q = np.array([qf]), True
    if interpolation not in _INTERP:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint "
                           f"or nearest, but got {interpolation}")
    if x.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    nd = x.ndim
    d = None
    if dim is None:
        s = input.reshape(((1,) * nd if keepdim else ()) + (-1,))
    else:
        d = _wrap_dim(int(dim), nd, name)
        s = input.reshape(1) if nd == 0 else input.unsqueeze(-1).transpose(d, -1)
    srt = s.sort(-1).values
    sd = srt._data
    n = sd.shape[-1]
    nn = np.isnan(sd).sum(-1, keepdims=True)
    last = np.float64(n - 1)   # a row with NaN: its first NaN (quantile); all NaN: index 0
    if ignore_nan:
        valid = n - nn
        ranks = np.where(valid > 0, qv * (valid - 1).astype(np.float64), 0.0)
    else:
        ranks = np.where(nn > 0, last, qv * last)
    ranks = np.broadcast_to(ranks, sd.shape[:-1] + (qv.size,))
    if interpolation == "lower":
        r = srt.gather(-1, _make(np.floor(ranks).astype(np.int64)))
    elif interpolation == "higher":
        r = srt.gather(-1, _make(np.ceil(ranks).astype(np.int64)))
    elif interpolation == "nearest":
        r = srt.gather(-1, _make(np.round(ranks).astype(np.int64)))
    else:
        below = np.floor(ranks)
        if interpolation == "midpoint":
            w = _make(np.full(ranks.shape, 0.5, x.dtype))
        elif isinstance(q, Tensor) and q.requires_grad:
            # the weights as a function of q, so q gets its gradient, as in torch (none from the
            # rows whose rank is pinned to the last, NaN, element)
            from .pointwise import where
            cnt = (n - nn) if ignore_nan else np.full(nn.shape, n)
            pinned = (cnt == 0) if ignore_nan else (nn > 0)
            rt = q.reshape(-1) * _make((cnt - 1).astype(x.dtype))
            rt = where(_make(np.broadcast_to(pinned, ranks.shape)), 0.0 if ignore_nan else
                       float(last), rt)
            w = rt - _make(below.astype(x.dtype))
        else:
            w = _make((ranks - below).astype(x.dtype))
        vb = srt.gather(-1, _make(below.astype(np.int64)))
        va = srt.gather(-1, _make(np.ceil(ranks).astype(np.int64)))
        r = lerp(vb, va, w)
    if not scalar_q:   # the q dim to the front
        r = r.unsqueeze(0).transpose(0, -1)
    r = _SqueezeInplaceDim.apply(r, r._data.ndim - 1)
    if d is not None and nd and not keepdim:
        r = _SqueezeInplaceDim.apply(r, d + (0 if scalar_q else 1))
    return r


@op("quantile")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles (a number, or a 0-d / 1-D tensor of the input's dtype, values in
    [0, 1]) of all elements (flattened) or along ``dim``. Shape: the input's without ``dim``
    (size 1 with ``keepdim``; all ones with ``keepdim`` and no dim), with a leading dim of len(q)
    for a 1-D q. ``interpolation`` between the two nearest ranks: 'linear', 'lower', 'higher',
    'midpoint' or 'nearest' (half to even). A row holding NaN gives NaN. A composite as torch's:
    sort, gather, lerp (LerpBackward1), squeeze (SqueezeBackward4).

    Raises RuntimeError for a non-float32/float64 input, an empty input, q out of range, a q
    tensor of another dtype or more than one dim, an unknown interpolation; IndexError for dim
    out of range."""
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", False)


@op("nanquantile")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaN (NaN only where a row is all NaN); same shapes and errors."""
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", True)


# ---- cummax / cummin ----------------------------------------------------------------------------
def _cum_extremum(x, axis, is_max):
    xm = np.moveaxis(x, axis, -1)
    n = xm.shape[-1]
    vals = np.empty_like(xm)
    idx = np.zeros(xm.shape, np.int64)
    if n:
        cur = xm[..., 0].copy()
        ci = np.zeros(xm.shape[:-1], np.int64)
        vals[..., 0], idx[..., 0] = cur, 0
        isf = x.dtype.kind == "f"
        for i in range(1, n):
            v = xm[..., i]
            better = (v >= cur) if is_max else (v <= cur)
            if isf:
                better = (better & ~np.isnan(cur)) | np.isnan(v)
            cur = np.where(better, v, cur)
            ci = np.where(better, i, ci)
            vals[..., i], idx[..., i] = cur, ci
    return np.moveaxis(vals, -1, axis).copy(), np.moveaxis(idx, -1, axis).copy()


class Cummax(ArrayFunction, name="CummaxBackward0"):
    """Running max along ``axis`` and its int64 index (the latest on ties; NaN propagates).
    derivatives.yaml cummaxmin_backward: zeros.scatter_add(dim, indices, grad)."""
    _max = True

    @classmethod
    def forward(cls, ctx, x, axis):
        ctx.axis = axis
        if x.ndim == 0:
            v, i = x.copy(), np.zeros((), np.int64)
        else:
            v, i = _cum_extremum(x, axis, cls._max)
        ctx.save_for_backward(i)
        ctx.mark_non_differentiable(i)
        return v, i

    @staticmethod
    def backward(ctx, g, _gi=None):
        from .scatter import scatter_add
        i, = ctx.saved_tensors
        if g._data.ndim == 0:
            return g, None
        zeros = _zeros_of(g)
        return scatter_add(zeros, ctx.axis, i, g), None


class Cummin(Cummax, name="CumminBackward0"):
    """Running min; see :class:`Cummax`."""
    _max = False


def _cum(F, input, dim, name):
    ax = dims(dim, input._data.ndim, name)
    v, i = F.apply(input, ax[0] if ax else 0)
    return _return_type(name)(v, i)


@op("cummax")
def cummax(input, dim):
    """Running maximum along ``dim``: a named tuple ``(values, indices)`` of the input's shape,
    values in its dtype, int64 indices (the latest position on ties; NaN propagates, indexed by
    the latest NaN). CummaxBackward0: the gradient is scatter-added to the indices
    (derivatives.yaml cummaxmin_backward).

    Raises IndexError for ``dim`` out of range."""
    return _cum(Cummax, input, dim, "cummax")


@op("cummin")
def cummin(input, dim):
    """Running minimum along ``dim``; see :func:`cummax` (CumminBackward0)."""
    return _cum(Cummin, input, dim, "cummin")


# ---- logcumsumexp -------------------------------------------------------------------------------
class Logcumsumexp(ArrayFunction, name="LogcumsumexpBackward0"):
    """log(cumsum(exp(x))) along ``axis``, computed stably (np.logaddexp.accumulate).
    derivatives.yaml logcumsumexp_backward: grad_i = sum_{j >= i} grad_j * exp(x_i - result_j),
    here written with Tensor ops over an (n, n) mask (each exponent <= 0, so no overflow; O(n^2)
    memory along the dim)."""

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        if x.ndim == 0 or x.size == 0:
            y = x.copy()
        else:
            y = np.logaddexp.accumulate(x, axis=axis).astype(x.dtype, copy=False)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        from .pointwise import exp, where
        x, y = ctx.saved_tensors
        xd = x._data
        if xd.ndim == 0 or xd.size == 0:
            return g, None
        a = ctx.axis
        xt, yt, gt = (t.transpose(a, -1) for t in (x, y, g))
        n = xd.shape[a]
        mask = _make(np.triu(np.ones((n, n), bool)))       # [i, j]: j >= i
        diff = xt.unsqueeze(-1) - yt.unsqueeze(-2)         # x_i - r_j
        w = exp(where(mask, diff, -math.inf))
        out = (w * gt.unsqueeze(-2)).sum(-1)
        return out.transpose(a, -1), None


@op("logcumsumexp")
def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along ``dim``, stable for large values; the input's shape and
    floating dtype. LogcumsumexpBackward0 (derivatives.yaml logcumsumexp_backward).

    Raises NotImplementedError for integer/bool inputs (as torch); IndexError for ``dim`` out of
    range."""
    if input._data.dtype.kind != "f":
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{_dtype.SCALAR_NAMES[input._data.dtype.name]}'")
    ax = dims(dim, input._data.ndim, "logcumsumexp")
    return Logcumsumexp.apply(input, ax[0] if ax else 0)


# ---- nansum / nanmean / exp2 --------------------------------------------------------------------
class Nansum(ArrayFunction, name="NansumBackward0"):
    """Sum over ``axes`` treating NaN as 0. derivatives.yaml nansum_backward: the expanded grad
    where the input is not NaN, 0 where it is."""

    @staticmethod
    def forward(ctx, x, axes, keepdim, np_dtype):
        ctx.conf = (axes, keepdim)
        ctx.save_for_backward(x)
        xx = np.where(np.isnan(x), 0, x) if x.dtype.kind == "f" else x
        return sum_array(xx, axes if axes else None, keepdim, np_dtype)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        axes, keepdim = ctx.conf
        xd = x._data
        ge = _expand_back(g, xd.shape, axes, keepdim) if xd.ndim else g
        # a product, not a select: an infinite grad gives NaN at NaN inputs, as torch
        return ge * _make((~np.isnan(xd)).astype(ge._data.dtype)), None, None, None


@op("nansum")
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero, over all elements (0-d) or ``dim`` (int or tuple; ``keepdim``
    keeps size-1 dims). dtype: ``dtype=``, else int64 for integer/bool inputs, else the input's.
    NansumBackward0 (derivatives.yaml nansum_backward: 0 gradient at NaN).

    Raises IndexError for a dim out of range; RuntimeError for a repeated dim."""
    npd = _sum_dtype(input, dtype)
    if dtype is not None and input._data.dtype.kind == "f" and npd != input._data.dtype:
        input, npd = input.to(dtype), None
    axes = dims(_all_if_empty(dim), input._data.ndim, "nansum")
    return Nansum.apply(input, axes, bool(keepdim), npd)


@op("nanmean")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of the non-NaN elements over all elements or ``dim``: a composite as in torch,
    nansum(input) / count of non-NaN (DivBackward0). NaN where nothing is counted.

    Raises RuntimeError for integer/bool inputs; IndexError for a dim out of range."""
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_dtype.SCALAR_NAMES[input._data.dtype.name]}")
    axes = dims(_all_if_empty(dim), input._data.ndim, "nanmean")
    cnt = np.asarray((~np.isnan(input._data)).sum(axis=axes if axes else None, keepdims=keepdim))
    s = nansum(input, dim, keepdim, dtype=dtype)
    return s / _make(cnt.astype(np.int64))


class Exp2(ArrayFunction, name="Exp2Backward0", saves_result=True):
    """2 ** x. derivatives.yaml: grad * result * ln 2."""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(over="ignore"):
            y = np.exp2(to_float(x))
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y * math.log(2.0)


@op("exp2")
def exp2(input):
    """2 ** input elementwise, the input's shape; integer/bool inputs give the default float
    dtype. Exp2Backward0 (derivatives.yaml: grad * result * ln 2)."""
    return Exp2.apply(input)


exp2_ = _unary_inplace("exp2_", Exp2)


# ---- unique / bincount / histc / searchsorted / bucketize (no gradients) ------------------------
class Unique(ArrayFunction, name="Unique2Backward0"):
    """Sorted distinct values, with the inverse indices and counts. torch records the values'
    node but has no derivative for it (derivatives.yaml _unique2: not_implemented): backward
    raises NotImplementedError."""

    @staticmethod
    def forward(ctx, x):
        vals, inv, cnt = np.unique(x.reshape(-1), return_inverse=True, return_counts=True,
                                   equal_nan=False)
        inv = np.array(inv.reshape(x.shape), np.int64)
        cnt = cnt.astype(np.int64)
        ctx.mark_non_differentiable(inv, cnt)
        return vals.astype(x.dtype, copy=False), inv, cnt

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("the derivative for '_unique2' is not implemented.")


@op("unique")
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements of ``input`` (flattened), ascending, 1-D of its dtype (always sorted:
    ``sorted=False`` gives the same order, as torch on CPU). With ``return_inverse``: also the
    int64 index of each input element in the result (the input's shape); with ``return_counts``:
    the int64 count of each distinct value; the result is then a plain tuple. NaNs are kept
    apart. Not differentiable: an input that requires grad gives values with a
    Unique2Backward0 node whose backward raises NotImplementedError, as torch.

    Raises NotImplementedError for ``dim`` (not supported by tapegrad)."""
    if dim is not None:
        raise NotImplementedError("unique(dim=...) is not supported by tapegrad")
    vals, inv, cnt = Unique.apply(input)
    out = (vals,) + ((inv,) if return_inverse else ()) + ((cnt,) if return_counts else ())
    return out[0] if len(out) == 1 else out


class _BincountWeights(ArrayFunction, name="NotImplemented"):
    """bincount with weights: torch has no derivative (derivatives.yaml bincount:
    not_implemented), so a weights tensor that requires grad gives this node, whose backward
    raises RuntimeError."""

    @staticmethod
    def forward(ctx, idx, w, minlength, np_dtype):
        return np.bincount(idx, weights=w, minlength=minlength).astype(np_dtype)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::bincount is not implemented")


@op("bincount")
def bincount(input, weights=None, minlength=0):
    """Counts of each value of a 1-D tensor of non-negative integers: int64 of length
    max(input) + 1 (at least ``minlength``); with ``weights`` (the input's shape), their sums
    per value, float32 for float32 weights and float64 otherwise. No derivative
    (a NotImplemented node when the weights require grad, as torch).

    Raises NotImplementedError for a floating input; RuntimeError for an input that is not 1-D
    or has negative values, a negative ``minlength``, or weights of another length."""
    x = input._data
    if x.dtype.kind == "f":
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{_dtype.SCALAR_NAMES[x.dtype.name]}'")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _make(np.bincount(x.astype(np.int64), minlength=minlength).astype(np.int64))
    if weights._data.ndim != 1 or weights._data.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    npd = np.float32 if weights._data.dtype == np.float32 else np.float64
    return _BincountWeights.apply(x.astype(np.int64), weights, int(minlength), npd)


@op("histc")
def histc(input, bins=100, min=0, max=0):  # noqa: A002
    """Histogram of a floating tensor: ``bins`` equal-width bins over [min, max] (when
    min == max: the data's min and max, widened by 1 each side if those are equal too); a value
    equal to max falls in the last bin, values outside (and NaN) are ignored. 1-D of the input's
    dtype; no gradient (the result does not require grad, as torch).

    Raises NotImplementedError for integer/bool inputs; RuntimeError for bins <= 0, max < min,
    or a non-finite range."""
    x = input._data
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{_dtype.SCALAR_NAMES[x.dtype.name]}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if hi < lo:
        raise RuntimeError("torch.histc: max must be larger than min")
    v = x.reshape(-1).astype(np.float64)
    v = v[(v >= lo) & (v <= hi)]
    pos = np.minimum(((v - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return _make(np.bincount(pos, minlength=bins).astype(x.dtype))


def _search(name, boundaries, values, out_int32, right, side, sorter):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{name}(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{name}(): side and right can't be set to opposites, got side of "
                               f"left while right was True")
        right = side == "right"
    b = boundaries._data
    scalar = not isinstance(values, Tensor)
    v = np.asarray(values) if scalar else values._data
    if sorter is not None:
        s = sorter._data
        if s.shape != b.shape:
            raise RuntimeError(f"{name}(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(b.shape)} and sorter tensor "
                               f"{list(s.shape)}")
        b = np.take_along_axis(b, s.astype(np.int64), -1)
    side_ = "right" if right else "left"
    if b.ndim <= 1:
        out = np.searchsorted(b.reshape(-1), v, side=side_)
    else:
        if v.ndim != b.ndim or v.shape[:-1] != b.shape[:-1]:
            raise RuntimeError(f"{name}(): boundaries tensor should be 1 dimension or the first "
                               f"N-1 dimensions of boundaries tensor and input value tensor must "
                               f"match, but we got boundaries tensor {list(b.shape)} and input "
                               f"value tensor {list(v.shape)}")
        bb, vv = b.reshape(-1, b.shape[-1]), v.reshape(-1, v.shape[-1])
        out = np.stack([np.searchsorted(bb[i], vv[i], side=side_) for i in range(bb.shape[0])])
        out = out.reshape(v.shape)
    return _make(np.asarray(out, np.int32 if out_int32 else np.int64))


@op("searchsorted", method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each value of ``input`` (a tensor, or a number giving a 0-d result), the index where
    it would be inserted into ``sorted_sequence`` (1-D, or N-D searched row by row when its
    leading dims match the input's) to keep it sorted: before equal elements (``right=False`` /
    ``side='left'``) or after them. ``sorter``: int64 indices that sort an unsorted sequence.
    int64 (int32 with ``out_int32``), the input's shape; no gradient.

    Raises RuntimeError for ``side`` contradicting ``right``, an unknown ``side``, leading dims
    that do not match, or a ``sorter`` of another shape."""
    return _search("torch.searchsorted", sorted_sequence, input, out_int32, right, side, sorter)


@op("bucketize", method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value of ``input`` (tensor or number) among 1-D sorted ``boundaries``:
    i with boundaries[i-1] < x <= boundaries[i] (``right=True``: boundaries[i-1] <= x <
    boundaries[i]), i.e. :func:`searchsorted` with the arguments swapped. int64 (int32 with
    ``out_int32``); no gradient.

    Raises RuntimeError for boundaries that are not 1-D."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    return _search("torch.bucketize", boundaries, input, out_int32, right, None, None)


# ---- logspace / baddbmm / addbmm / tensordot / kron / cross -------------------------------------
@op("logspace", method=False)
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, device=None,
             requires_grad=False, **kw):
    """``steps`` values ``base ** x`` for x evenly spaced from ``start`` to ``end`` inclusive
    (the exponents as :func:`linspace` computes them, in double; the powers then rounded to the
    dtype, integer dtypes truncating). dtype: the default dtype unless given; no gradient
    (``requires_grad=True`` makes a leaf).

    Raises RuntimeError for negative steps, a non-CPU device, or requires_grad on an integer
    dtype; TypeError for a non-integer steps; NotImplementedError for a bool ``out``."""
    import operator
    from .. import _factories as F
    F._factory_kwargs("logspace", kw)
    F._check_device(device, "logspace")
    try:
        steps = operator.index(steps)
    except TypeError:
        raise TypeError(f"logspace(): argument 'steps' must be int, not "
                        f"{type(steps).__name__}") from None
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    npd = F._float_or(dtype).np
    if npd.kind != "f" and requires_grad:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    ex = F.linspace(float(start), float(end), steps, dtype=_dtype.float64)._data
    with np.errstate(all="ignore"):
        vals = np.power(np.float64(base), ex)
        arr = (np.trunc(vals) if npd.kind in "iub" else vals).astype(npd)
    if out is not None:
        if isinstance(out, Tensor) and out._data.dtype.kind == "b":
            raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool' (logspace: "
                                      "give a numeric out)")
        return F._write_out(out, arr, "logspace")
    return F._finish(arr, requires_grad)


def _same_dtypes(msg, *ts):
    if len({t._data.dtype for t in ts}) != 1:
        names = [_dtype.cpp_name(t._data.dtype) for t in ts]
        raise RuntimeError(msg.format(*names))


def _check_batches(name, input, batch1, batch2):
    b1, b2 = batch1._data, batch2._data
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if name == "addbmm" and b1.shape[0] != b2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{b1.shape[0]} and {b2.shape[0]}")
    if b2.shape[:2] != (b1.shape[0], b1.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, "
                           f"{b2.shape[1]}].")
    _same_dtypes("Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
                 input, batch1, batch2)
    target = (b1.shape[0], b1.shape[1], b2.shape[2]) if name == "baddbmm" \
        else (b1.shape[1], b2.shape[2])
    x = input._data
    if x.ndim > len(target):
        raise RuntimeError(f"expand(tapegrad.Tensor{{{list(x.shape)}}}, size={list(target)}): "
                           f"the number of sizes provided ({len(target)}) must be greater or "
                           f"equal to the number of dimensions in the tensor")
    for i in range(1, x.ndim + 1):
        if x.shape[-i] not in (1, target[-i]):
            raise RuntimeError(f"The expanded size of the tensor ({target[-i]}) must match the "
                               f"existing size ({x.shape[-i]}) at non-singleton dimension "
                               f"{len(target) - i}.  Target sizes: {list(target)}.  Tensor "
                               f"sizes: {list(x.shape)}")
    return target


def _scaled(x, s):
    """derivatives.yaml maybe_multiply: x unchanged for a factor of 1."""
    return x if s == 1 else x * s


class Baddbmm(ArrayFunction, name="BaddbmmBackward0"):
    """beta * input + alpha * (batch1 @ batch2), batched. derivatives.yaml baddbmm:
    self: maybe_multiply(grad, beta) (summed to input's shape by the engine);
    batch1: grad.bmm(batch2^T) * alpha; batch2: batch1^T.bmm(grad) * alpha."""

    @staticmethod
    def forward(ctx, x, b1, b2, beta, alpha, target):
        save_mats(ctx, b1, b2)
        ctx.conf = (beta, alpha)
        prod = np.matmul(b1, b2)
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:   # input ignored (NaN/inf in it do not propagate)
            return np.broadcast_to(prod, target).astype(b1.dtype)
        return (prod + (x if beta == 1 else x * beta)).astype(b1.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        from .linalg import Bmm
        b1, b2 = ctx.saved_tensors or (None, None)
        beta, alpha = ctx.conf
        gx = _scaled(g, beta) if ctx.needs(0) else None
        g1 = _scaled(Bmm.apply(g, b2.mT), alpha) if ctx.needs(1) else None
        g2 = _scaled(Bmm.apply(b1.mT, g), alpha) if ctx.needs(2) else None
        return gx, g1, g2, None, None, None


class Addbmm(ArrayFunction, name="AddbmmBackward0"):
    """beta * input + alpha * sum_b(batch1[b] @ batch2[b]). derivatives.yaml addbmm:
    self: maybe_multiply(grad, beta); batch1: grad expanded over the batch, bmm batch2^T, * alpha;
    batch2: batch1^T bmm the expanded grad, * alpha."""

    @staticmethod
    def forward(ctx, x, b1, b2, beta, alpha, target):
        save_mats(ctx, b1, b2)
        ctx.conf = (beta, alpha, b1.shape[0])
        prod = np.matmul(b1, b2).sum(0) if b1.shape[0] else np.zeros(target, b1.dtype)
        if alpha != 1:
            prod = prod * alpha
        if beta == 0:
            return np.broadcast_to(prod, target).astype(b1.dtype)
        return (prod + (x if beta == 1 else x * beta)).astype(b1.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        from .linalg import Bmm
        b1, b2 = ctx.saved_tensors or (None, None)
        beta, alpha, nb = ctx.conf
        gx = _scaled(g, beta) if ctx.needs(0) else None
        ge = g.unsqueeze(0).expand(nb, *g._data.shape)
        g1 = _scaled(Bmm.apply(ge, b2.mT), alpha) if ctx.needs(1) else None
        g2 = _scaled(Bmm.apply(b1.mT, ge), alpha) if ctx.needs(2) else None
        return gx, g1, g2, None, None, None


@op("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for 3-D ``batch1`` (b, n, m) and ``batch2``
    (b, m, p); ``input`` broadcasts to (b, n, p), and is ignored when beta is 0. One node,
    BaddbmmBackward0 (derivatives.yaml baddbmm). No in-place ``baddbmm_`` in tapegrad.

    Raises RuntimeError for batches that are not 3-D or do not fit, an input that does not
    broadcast, or dtypes that differ."""
    target = _check_batches("baddbmm", input, batch1, batch2)
    return Baddbmm.apply(input, batch1, batch2, beta, alpha, target)


@op("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``: 3-D batches (b, n, m) and
    (b, m, p) reduced to an (n, p) result; ``input`` broadcasts to it (ignored when beta is 0).
    One node, AddbmmBackward0 (derivatives.yaml addbmm). No in-place ``addbmm_`` in tapegrad.

    Raises RuntimeError for batches that are not 3-D or do not fit, an input that does not
    broadcast, or dtypes that differ."""
    target = _check_batches("addbmm", input, batch1, batch2)
    return Addbmm.apply(input, batch1, batch2, beta, alpha, target)


@op("tensordot", method=False)
def tensordot(a, b, dims=2):
    """Contraction of ``a`` and ``b`` over ``dims``: an int n (the last n dims of ``a`` with the
    first n of ``b``) or a pair of lists (or ints) of dims. A composite as in torch: permute,
    reshape, mm, reshape (the result's node ViewBackward0 over MmBackward0); the result has a's
    free dims then b's.

    Raises RuntimeError for a negative or too large int, lists of different lengths,
    contracted sizes that differ, or different dtypes; IndexError for a dim out of range."""
    from .linalg import mm
    na, nb = a._data.ndim, b._data.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > na or dims > nb:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(na - dims, na)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    ca = [_wrap_dim(int(d), na, "tensordot") for d in da]
    cb = [_wrap_dim(int(d), nb, "tensordot") for d in db]
    sa, sb = a._data.shape, b._data.shape
    for d1, d2, o1, o2 in zip(ca, cb, da, db):
        if sa[d1] != sb[d2]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{sa[d1]} in dim {o1} and second has size {sb[d2]} in dim {o2}")
    fa = [d for d in range(na) if d not in ca]
    fb = [d for d in range(nb) if d not in cb]
    csize = int(np.prod([sa[d] for d in ca], dtype=np.int64))
    fsa = int(np.prod([sa[d] for d in fa], dtype=np.int64))
    fsb = int(np.prod([sb[d] for d in fb], dtype=np.int64))
    pa = a.permute(*(fa + ca)).reshape(fsa, csize)
    pb = b.permute(*(cb + fb)).reshape(csize, fsb)
    return mm(pa, pb).reshape(*([sa[d] for d in fa] + [sb[d] for d in fb]))


class _UnsafeView(ArrayFunction, name="UnsafeViewBackward0"):
    """A reshape recorded as torch's ``_unsafe_view`` node. Derivative: reshape back."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x.shape
        return x.reshape(shape).copy()

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape), None


@op("kron")
def kron(input, other):
    """Kronecker product: for operands padded with leading size-1 dims to the same rank, result
    dim i has size input.shape[i] * other.shape[i], block (i..) = input[i..] * other. Dtypes
    promote. A composite as in torch: both operands reshaped to interleaved dims
    (UnsafeViewBackward0), multiplied (MulBackward0), reshaped back (UnsafeViewBackward0)."""
    sa, sb = input._data.shape, other._data.shape
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    a2 = _UnsafeView.apply(input, tuple(v for s in sa for v in (s, 1)))
    b2 = _UnsafeView.apply(other, tuple(v for s in sb for v in (1, s)))
    return _UnsafeView.apply(a2 * b2, tuple(x * y for x, y in zip(sa, sb)))


class LinalgCross(ArrayFunction, name="LinalgCrossBackward0"):
    """Cross product of 3-vectors along ``axis`` (operands broadcast). derivatives.yaml
    linalg_cross: self: linalg_cross(other, grad); other: linalg_cross(grad, self) (broadcast
    dims summed back by the engine)."""

    @staticmethod
    def forward(ctx, a, b, axis):
        ctx.save_for_backward(a if ctx.needs(1) else None, b if ctx.needs(0) else None)
        ctx.axis = axis
        a, b = np.broadcast_arrays(a, b)
        return np.cross(a, b, axis=axis).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ax = ctx.axis
        ga = LinalgCross.apply(b, g, ax) if ctx.needs(0) else None
        gb = LinalgCross.apply(g, a, ax) if ctx.needs(1) else None
        return ga, gb, None


@op("cross")
def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim`` of two tensors of the same rank (other dims
    broadcast; same dtype). ``dim=None`` takes the input's first dim of size 3, with torch's
    deprecation UserWarning (pass ``dim``, or use linalg.cross). LinalgCrossBackward0
    (derivatives.yaml linalg_cross).

    Raises RuntimeError for different ranks, a dim that is not size 3 in both, no size-3 dim
    (``dim=None``), or different dtypes; IndexError for ``dim`` out of range."""
    import warnings
    sa, sb = input._data.shape, other._data.shape
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross."
                      "\nThe default value of dim will change to agree with that of "
                      "linalg.cross in a future release.", UserWarning, stacklevel=2)
        hits = [i for i, s in enumerate(sa) if s == 3]
        if not hits:
            raise RuntimeError("no dimension of size 3 in input")
        dim = hits[0]
    if len(sa) != len(sb):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    ax = _wrap_dim(int(dim), len(sa), "cross")
    if sa[ax] != 3 or sb[ax] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sa[ax]} and {sb[ax]}")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected scalar type {_dtype.SCALAR_NAMES[input._data.dtype.name]} "
                           f"but found {_dtype.SCALAR_NAMES[other._data.dtype.name]}")
    from .linalg_extra import _check_broadcast
    _check_broadcast(sa, sb)
    return LinalgCross.apply(input, other, ax)
