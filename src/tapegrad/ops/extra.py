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
from ._util import Tensor, _make, _wrap_dim, dims, sum_array, to_float
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
        zeros = _make(np.zeros(g._data.shape, g._data.dtype))
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


class Exp2(ArrayFunction, name="Exp2Backward0"):
    """2 ** x. derivatives.yaml: grad * result * ln 2."""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(over="ignore"):
            y = np.exp2(to_float(x))
        ctx.save_for_backward(y)
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
