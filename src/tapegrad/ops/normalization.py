"""Normalization and embedding ops: layer_norm, batch_norm, group_norm, rms_norm, embedding.

Which are primitives follows torch 2.13, so that the recorded graphs match its graphs:

* layer_norm, batch_norm and group_norm are one node each (NativeLayerNormBackward0,
  NativeBatchNormBackward0, NativeGroupNormBackward0) whose ``next_functions`` are
  (input, weight, bias), ``(None, 0)`` for an absent weight or bias; batch_norm's running
  statistics are saved (version-checked in backward, as torch) but are no edges.
* rms_norm is torch's composite: ``input * rsqrt(mean(input ** 2, dims) + eps)``, times the
  weight (PowBackward0, MeanBackward1, AddBackward1, RsqrtBackward0, MulBackward0), computed in
  float32 for a float16 input (ToCopyBackward0 either side).
* embedding is EmbeddingBackward0, with the weight as its only edge (the indices are saved,
  not differentiated).

Derivatives. The three normalizations share one formula. With the statistics taken over a
group of N elements (E[.] the mean over the group), mu = E[x], r = (E[(x - mu)^2] + eps)^-1/2,
xhat = (x - mu) r and y = xhat w + b, the textbook batch/layer-norm backward (Ioffe & Szegedy
2015; derivatives.yaml native_layer_norm / native_batch_norm / native_group_norm) is

    a = grad * w,   grad_x = r (a - E[a] - xhat E[a xhat]),
    grad_w = sum(grad * xhat),   grad_b = sum(grad)          (sums over what w is broadcast on)

and with the running statistics (batch_norm in eval mode) grad_x = grad * w * r. That backward is
itself one primitive (NativeLayerNormBackwardBackward0, NativeBatchNormBackwardBackward0; for
group_norm reshaped views of it, ViewBackward0, as torch), and its derivative (the double
backward, derivatives.yaml layer_norm_double_backward / batchnorm_double_backward) is written
here with Tensor ops, so any order works. For cotangents u (of grad_x), v (of grad_w) and
z (of grad_b), with P(t) = t - E[t] - xhat E[t xhat] (symmetric, so <u, r P(a)> = <r P(u), a>):

    d/dgrad = w r P(u) + v xhat + z,     d/dw = sum(grad r P(u)),
    h = v grad - r (u E[a xhat] + a E[u xhat]),
    d/dx = r (h - E[h] - xhat E[h xhat]) - r^2 xhat (E[u a] - E[u] E[a] - E[u xhat] E[a xhat])

(the chain rule through xhat(x) and r(x), using dr/dx = -r^2 xhat / N). With the running
statistics: d/dgrad = u w r + v xhat + z, d/dw = sum(u grad r), d/dx = v grad r.

embedding (derivatives.yaml embedding_dense_backward): the rows of grad added into zeros at the
indices, skipping positions whose index is ``padding_idx`` and dividing each by its index's count
with ``scale_grad_by_freq``; that is linear in grad, and its derivative reads the cotangent's rows
at the indices with the same mask and scale (torch's embedding_dense_double_backward leaves the
scale out; here it is kept, so second derivatives with ``scale_grad_by_freq`` are exact).
"""
from __future__ import annotations

import numbers

import numpy as np

from .._dtype import scalar_name
from .._tensor import Tensor, _make, _zeros_of
from ._util import _F32, _HALF, need_float
from ..autograd.function import ArrayFunction
from ..autograd.grad_mode import no_grad
from ..autograd.grad_mode import state as _grad_state
from ._registry import op
from .inplace import bump as _bump
from .losses import AddScalar



# ---- argument checks ----------------------------------------------------------------------------
def _need_tensor(value, name, pos, op_name, optional=True):
    """TypeError (as torch's argument parser) unless ``value`` is a Tensor (or None if
    ``optional``)."""
    if value is None and optional:
        return
    if not isinstance(value, Tensor):
        raise TypeError(f"{op_name}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(value).__name__}")


def _check_param_dtypes(x, *params, op_name):
    """torch's CPU kernels take parameters (weight, bias, running stats) of the input's dtype,
    or float32 ones for a float16 input; RuntimeError otherwise."""
    xd = x._data.dtype
    for p in params:
        if p is None:
            continue
        pd = p._data.dtype
        if pd != xd and not (xd == _HALF and pd == _F32):
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{scalar_name(xd)} ({op_name}: the input is tapegrad.{xd.name}, a "
                               f"parameter tapegrad.{pd.name}; convert it with .to(input.dtype))")


def _shape_list(normalized_shape, op_name):
    """``normalized_shape`` (a list, tuple or Size of ints) as a tuple; TypeError otherwise, as
    torch (an int is refused here: nn.LayerNorm accepts one, F.layer_norm does not)."""
    if isinstance(normalized_shape, (numbers.Integral, np.integer)):
        raise TypeError(f"{op_name}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    try:
        dims = tuple(normalized_shape)
    except TypeError:
        raise TypeError(f"{op_name}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}") from None
    for k, d in enumerate(dims):
        if not isinstance(d, (numbers.Integral, np.integer)) or isinstance(d, bool):
            raise TypeError(f"{op_name}(): argument 'normalized_shape' (position 2) must be tuple "
                            f"of ints, but found element of type {type(d).__name__} at pos {k}")
    return tuple(int(d) for d in dims)


def _check_normalized_shape(x, shape, weight, bias, star):
    """torch's checks of layer_norm / rms_norm's ``normalized_shape`` against the input and the
    affine parameters (RuntimeError each)."""
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p._data.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(p._data.shape)} and normalized_shape = "
                               f"{list(shape)}")
    xs = x._data.shape
    k = len(shape)
    if len(xs) < k or tuple(xs[len(xs) - k:]) != shape:
        lead = "*, " if star else "*"
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[{lead}{', '.join(str(d) for d in shape)}], but got input of size"
                           f"{list(xs)}")


# ---- the shared normalization core --------------------------------------------------------------
# A layout says how an input array (possibly a reshaped view of the input) is normalized:
# ``axes``: the axes the statistics are taken over (keepdims); ``wshape``: the shape the weight
# and bias take to broadcast against it; ``paxes``: the axes summed for their gradients;
# ``pshape``: the shape of those gradients as the grad primitive returns them.

def _acc_dtype(x):
    """The dtype the statistics are computed in: float32 for float16 (as torch's CPU kernels),
    otherwise the input's."""
    return _F32 if x.dtype == _HALF else x.dtype


def _param(p, wshape, acc):
    return None if p is None else p.reshape(wshape).astype(acc, copy=False)


def _batch_stats(x, axes, eps):
    """Mean, biased variance and 1/sqrt(var + eps) of ``x`` over ``axes`` (keepdims), in the
    accumulation dtype."""
    xa = x.astype(_acc_dtype(x), copy=False)
    mean = xa.mean(axes, keepdims=True)
    xc = xa - mean
    var = np.multiply(xc, xc, out=xc).mean(axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + var.dtype.type(eps))
    return mean, var, rstd


def _affine_out(x, mean, rstd, w, b, wshape):
    """(x - mean) * rstd * w + b, cast to x's dtype."""
    acc = mean.dtype
    y = np.subtract(x, mean, dtype=acc)
    y *= rstd
    if w is not None:
        y *= _param(w, wshape, acc)
    if b is not None:
        y += _param(b, wshape, acc)
    return y.astype(x.dtype, copy=False)


def _psum(t, paxes):
    """``t`` summed over ``paxes`` (the axes a weight is broadcast on); ``t`` itself when there
    are none (a layer_norm whose normalized_shape is the whole input: Tensor.sum(()) would sum
    everything, as torch's, not nothing)."""
    return t.sum(paxes) if paxes else t


class _NormGrad(ArrayFunction):
    """The backward of a normalization as one primitive: (grad, input, weight, bias) -> the
    gradients of input, weight and bias that ``mask`` asks for, in that order. The bias is an
    argument only as torch's native_layer_norm_backward takes it (None for the other norms): it
    ties the gradients to the bias under create_graph, with no derivative (derivatives.yaml
    bias: Tensor()), so a gradient w.r.t. it is None with allow_unused. ``conf``: (axes, wshape,
    paxes, pshape, eps, train, out dtypes); ``mean``/``rstd``: the statistics forward used (the
    batch's when ``train``, the running ones otherwise). The formulas are in the module
    docstring; this primitive's own derivative (the double backward) is written with Tensor ops,
    recomputing the statistics from the input, so it is differentiable again."""

    @staticmethod
    def forward(ctx, g, x, w, b, conf, mean, rstd, mask):
        axes, wshape, paxes, pshape, _, train, dts = conf
        acc = mean.dtype
        ga = g.astype(acc, copy=False)
        xhat = x.astype(acc, copy=False) - mean
        xhat *= rstd
        outs = []
        if mask[0]:
            a = ga * _param(w, wshape, acc) if w is not None else ga
            if train and x.size == 0:
                gx = np.zeros(x.shape, acc)         # (no mean of an empty group)
            elif train:
                gx = a - a.mean(axes, keepdims=True)
                gx -= xhat * (a * xhat).mean(axes, keepdims=True)
                gx *= rstd
            else:
                gx = a * rstd
            outs.append(gx.astype(dts[0], copy=False))
        if mask[1]:
            outs.append((ga * xhat).sum(paxes).reshape(pshape).astype(dts[1], copy=False))
        if mask[2]:
            outs.append(ga.sum(paxes).reshape(pshape).astype(dts[2], copy=False))
        ctx.conf = conf
        ctx.mask = mask
        # an output that got no gradient stays None, not zeros: torch's double backward leaves
        # the terms of an undefined cotangent out, so a gradient that only they would give is
        # None (allow_unused), not zeros
        ctx.set_materialize_grads(False)
        if not train:
            ctx.stats = (mean, rstd)
        ctx.save_for_backward(g, x, w)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *cots):
        g, x, w = ctx.saved_tensors
        axes, wshape, paxes, _, eps, train, _ = ctx.conf
        it = iter(cots)
        u, v, z = (next(it) if m else None for m in ctx.mask)
        need_g, need_x, need_w = ctx.needs(0), ctx.needs(1), ctx.needs(2)
        if x.numel() == 0:
            # every sum is 0 (and no mean of an empty slice); None where the formulas below give
            # None, as torch's double backward
            return (_zeros_of(g) if need_g else None,
                    _zeros_of(x) if need_x and (v is not None or train and u is not None)
                    else None,
                    _zeros_of(w) if need_w and u is not None else None,
                    None, None, None, None, None)

        def E(t):
            return t.mean(axes, keepdim=True)

        if train:
            xc = x - E(x)
            r = (E(xc * xc) + eps).rsqrt()
            xhat = xc * r
        else:
            mean, rstd = ctx.stats
            r = _make(rstd)
            xhat = (x - _make(mean)) * r
        wv = w.reshape(wshape) if w is not None else None
        vv = v.reshape(wshape) if v is not None else None
        gg = gx = gw = extra = h = None
        if u is not None:
            if train:
                Eu, Eux = E(u), E(u * xhat)
                rpu = r * (u - Eu - xhat * Eux)
                if need_g:
                    gg = rpu * wv if wv is not None else rpu
                if need_w:
                    gw = _psum(g * rpu, paxes).reshape(w.shape)
                if need_x:
                    a = g * wv if wv is not None else g
                    Ea, Eax = E(a), E(a * xhat)
                    h = -(r * (u * Eax + a * Eux))
                    extra = r * r * xhat * (E(u * a) - Eu * Ea - Eux * Eax)
            else:
                ur = u * r
                if need_g:
                    gg = ur * wv if wv is not None else ur
                if need_w:
                    gw = _psum(ur * g, paxes).reshape(w.shape)
        if vv is not None:
            if need_g:
                t = vv * xhat
                gg = t if gg is None else gg + t
            if need_x:
                t = vv * g
                if train:
                    h = t if h is None else h + t
                else:
                    gx = t * r
        if z is not None and need_g:
            zv = z.reshape(wshape)
            gg = zv.expand(g.shape) if gg is None else gg + zv
        if train and need_x and h is not None:     # (extra is set only along with h)
            gx = r * (h - E(h) - xhat * E(h * xhat))
            if extra is not None:
                gx = gx - extra
        return gg, gx, gw, None, None, None, None, None


class _LayerNormGrad(_NormGrad, name="NativeLayerNormBackwardBackward0"):
    """layer_norm's backward (native_layer_norm_backward) as one primitive."""


class _BatchNormGrad(_NormGrad, name="NativeBatchNormBackwardBackward0"):
    """batch_norm's backward (native_batch_norm_backward) as one primitive."""


class _GroupNormGrad(_NormGrad, name="NativeGroupNormBackwardBackward0"):
    """group_norm's backward (native_group_norm_backward) on its (N, G, C/G, HxW) view. Under
    create_graph torch computes it as a composite (infinitely_differentiable_native_group_norm_
    backward) whose bias gradient is a sum of grad alone, so that gradient requires grad only
    when grad does."""

    @staticmethod
    def forward(ctx, g, x, w, b, conf, mean, rstd, mask):
        outs = _NormGrad.forward(ctx, g, x, w, b, conf, mean, rstd, mask)
        if mask[2] and not ctx.needs(0):
            ctx.mark_non_differentiable(outs[-1])
        return outs


def _norm_backward(ctx, grad_cls, g, x, w, out_dtypes, b=None):
    """Run ``grad_cls`` for the gradients this node needs: (grad_input, grad_weight,
    grad_bias), None where not needed. ``b``: layer_norm's bias (see _NormGrad)."""
    mask = (ctx.needs(0), ctx.needs(1), ctx.needs(2))
    mean, rstd = ctx.stats
    layout = ctx.layout
    conf = layout + (ctx.eps, ctx.train, out_dtypes)
    outs = iter(grad_cls.apply(g, x, w, b, conf, mean, rstd, mask))
    return tuple(next(outs) if m else None for m in mask)


def _dtypes(x, w, b):
    return (x._data.dtype, None if w is None else w._data.dtype,
            None if b is None else b._data.dtype)


# ---- layer_norm ---------------------------------------------------------------------------------
class NativeLayerNorm(ArrayFunction, name="NativeLayerNormBackward0", scalar_edges=3):
    """Normalize over the last ``k`` dims, then scale and shift: (input, weight, bias, k, eps).
    derivatives.yaml native_layer_norm: native_layer_norm_backward (see the module
    docstring)."""

    @staticmethod
    def forward(ctx, x, w, b, k, eps):
        nd = x.ndim
        axes = tuple(range(nd - k, nd))
        wshape = x.shape[nd - k:]
        if x.size == 0:
            mean = rstd = np.zeros(x.shape[:nd - k] + (1,) * k, _acc_dtype(x))
            y = x.copy()
        else:
            mean, _, rstd = _batch_stats(x, axes, eps)
            y = _affine_out(x, mean, rstd, w, b, wshape)
        ctx.layout = (axes, wshape, tuple(range(nd - k)), wshape)
        ctx.stats = (mean, rstd)
        ctx.eps, ctx.train = eps, True
        ctx.save_for_backward(x, w, b)
        return y

    @staticmethod
    def backward(ctx, g):
        x, w, b = ctx.saved_tensors
        return _norm_backward(ctx, _LayerNormGrad, g, x, w, _dtypes(x, w, b), b) + (None, None)


def _layer_norm(input, normalized_shape, weight, bias, eps, op_name):
    _need_tensor(input, "input", 1, op_name, optional=False)
    shape = _shape_list(normalized_shape, op_name)
    _need_tensor(weight, "weight", 3, op_name)
    _need_tensor(bias, "bias", 4, op_name)
    _check_normalized_shape(input, shape, weight, bias, star=True)
    need_float(input._data.dtype, "LayerNormKernelImpl")
    _check_param_dtypes(input, weight, bias, op_name=op_name)
    return NativeLayerNorm.apply(input, weight, bias, len(shape), float(eps))


@op("layer_norm", functional=True, method=False, namespace=False)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization (torch.nn.functional.layer_norm): each slice over the last
    ``len(normalized_shape)`` dims is shifted to mean 0 and scaled to variance 1 (the biased
    variance, plus ``eps``), then multiplied by ``weight`` and shifted by ``bias``.

    Shapes: ``input`` (*, *normalized_shape), floating; ``weight`` and ``bias`` of shape
    ``normalized_shape`` (or None), of the input's dtype (float32 for a float16 input also).
    Result: the input's shape and dtype, recording NativeLayerNormBackward0 (next_functions:
    input, weight, bias). Derivatives: the layer-norm backward of the module docstring
    (derivatives.yaml native_layer_norm_backward), differentiable again
    (NativeLayerNormBackwardBackward0; layer_norm_double_backward).

    Raises:
        TypeError: input, weight or bias not a Tensor; ``normalized_shape`` not a sequence of
            ints (an int too, as torch's functional form).
        RuntimeError: an empty ``normalized_shape``; a weight or bias not of that shape; input
            not ending in it; a weight or bias of another dtype.
        NotImplementedError: a non-floating input.
    """
    return _layer_norm(input, normalized_shape, weight, bias, eps, "layer_norm")


@op("layer_norm", method=False)
def _torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5,
                      cudnn_enable=True):
    """``tapegrad.layer_norm``: torch.layer_norm, the same as nn.functional.layer_norm
    (``cudnn_enable`` is accepted and ignored)."""
    return _layer_norm(input, normalized_shape, weight, bias, eps, "layer_norm")


# ---- batch_norm ---------------------------------------------------------------------------------
class NativeBatchNorm(ArrayFunction, name="NativeBatchNormBackward0", scalar_edges=3,
                      nondiff=(3, 4)):
    """Batch normalization of (N, C, *) over every dim but C: (input, weight, bias,
    running_mean, running_var, training, momentum, eps). In training it normalizes by the
    batch's statistics and, when given, updates the running statistics in place (as torch's
    kernel: without bumping their version); otherwise it uses the running statistics. The
    running statistics are saved, so modifying them in place before backward raises, as torch,
    and get no gradient. derivatives.yaml native_batch_norm: native_batch_norm_backward."""

    @staticmethod
    def forward(ctx, x, w, b, rm, rv, training, momentum, eps):
        nd = x.ndim
        c = x.shape[1]
        axes = (0,) + tuple(range(2, nd))
        wshape = (c,) + (1,) * (nd - 2)
        acc = _acc_dtype(x)
        if training:
            if x.size == 0:
                mean = rstd = np.zeros((1,) + wshape, acc)
            else:
                mean, var, rstd = _batch_stats(x, axes, eps)
                m = float(momentum) if rm is not None or rv is not None else 0.0
                if rm is not None:
                    new = (1.0 - m) * rm + m * mean.reshape(c)
                    np.copyto(rm, new, casting="unsafe")
                if rv is not None:
                    n = x.size // c
                    with np.errstate(divide="ignore", invalid="ignore"):
                        unbiased = var.reshape(c) * (n / (n - 1) if n > 1 else np.inf)
                    np.copyto(rv, (1.0 - m) * rv + m * unbiased, casting="unsafe")
        else:
            mean = rm.reshape(wshape).astype(acc)[None]
            rstd = 1.0 / np.sqrt(rv.reshape(wshape).astype(acc) + acc.type(eps))[None]
        y = x.copy() if x.size == 0 else _affine_out(x, mean, rstd, w, b, wshape)
        ctx.layout = (axes, wshape, axes, (c,))
        ctx.stats = (mean, rstd)
        ctx.eps, ctx.train = eps, bool(training)
        ctx.save_for_backward(x, w, b, rm, rv)
        return y

    @staticmethod
    def backward(ctx, g):
        x, w, b, _, _ = ctx.saved_tensors
        return _norm_backward(ctx, _BatchNormGrad, g, x, w, _dtypes(x, w, b)) + (None,) * 5


def _check_channels(name, t, c):
    if t is not None and t._data.size != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                op_name):
    nd = input._data.ndim
    if nd < 2:
        if training:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got 1) ({op_name} expects "
                             f"an input (N, C, *) with at least 2 dims, got {nd}-D)")
        raise RuntimeError(f"{op_name}: expected an input (N, C, *) with at least 2 dims, got "
                           f"{nd}-D input of size {list(input._data.shape)}")
    c = input._data.shape[1]
    if not training:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_channels(name, t, c)
    if _grad_state.record:      # torch's autograd kernel refuses them before running
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is not None and t._requires_grad:
                raise RuntimeError(f"The function 'native_batch_norm' is not differentiable with "
                                   f"respect to argument '{name}'. This input cannot have "
                                   f"requires_grad True.")
    need_float(input._data.dtype, "batch_norm")
    _check_param_dtypes(input, weight, bias, running_mean, running_var, op_name=op_name)
    return NativeBatchNorm.apply(input, weight, bias, running_mean, running_var, bool(training),
                                 momentum, float(eps))


@op("batch_norm", functional=True, method=False, namespace=False)
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalization (torch.nn.functional.batch_norm) of ``input`` (N, C), (N, C, L) or
    (N, C, H, W) (any (N, C, *)) per channel C.

    With ``training`` it normalizes by the batch's mean and biased variance over every dim but C
    and, for the running statistics given (each may be None), updates them in place:
    ``running = (1 - momentum) * running + momentum * batch_stat``, with the unbiased variance
    (times n / (n - 1), n = numel / C) for ``running_var``, as torch (the update does not bump
    their version, as torch's kernel). Without ``training`` it uses ``running_mean`` and
    ``running_var`` (both required). Then ``* weight + bias`` per channel.

    Shapes: ``running_mean``, ``running_var``, ``weight``, ``bias``: (C,) or None, of the
    input's dtype (float32 for a float16 input also). Result: the input's shape and dtype,
    recording NativeBatchNormBackward0 (next_functions: input, weight, bias; the running
    statistics are saved, not differentiated). Derivatives: the batch-norm backward of the
    module docstring (derivatives.yaml native_batch_norm_backward), differentiable again
    (NativeBatchNormBackwardBackward0; batchnorm_double_backward).

    Raises:
        ValueError: ``training`` with one value per channel (N * prod(spatial) == 1), as torch.
        RuntimeError: a running statistic missing in eval mode; a running statistic, weight or
            bias without C elements; with grad mode on (outside inference mode), a running
            statistic that requires grad (torch's "not differentiable with respect to argument
            'running_mean'"); a parameter of another dtype; in eval mode an input of fewer than
            2 dims.
        IndexError: in training, an input of fewer than 2 dims (as torch).
        TypeError: an argument that is not a Tensor (or None).
        NotImplementedError: a non-floating input.
    """
    _need_tensor(input, "input", 1, "batch_norm", optional=False)
    _need_tensor(running_mean, "running_mean", 2, "batch_norm")
    _need_tensor(running_var, "running_var", 3, "batch_norm")
    _need_tensor(weight, "weight", 4, "batch_norm")
    _need_tensor(bias, "bias", 5, "batch_norm")
    shape = input._data.shape
    if training and len(shape) >= 2:
        if shape[0] * int(np.prod(shape[2:])) == 1:
            from .._size import Size
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {Size(shape)!r}")
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                       "batch_norm")


@op("batch_norm", method=False)
def _torch_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                      cudnn_enabled):
    """``tapegrad.batch_norm``: torch.batch_norm, all arguments positional as torch's
    (``cudnn_enabled`` is ignored). The same op as nn.functional.batch_norm, without its check
    for one value per channel in training (as torch)."""
    for pos, (name, t) in enumerate((("input", input), ("weight", weight), ("bias", bias),
                                     ("running_mean", running_mean),
                                     ("running_var", running_var)), 1):
        _need_tensor(t, name, pos, "batch_norm", optional=pos > 1)
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                       "batch_norm")


# ---- group_norm ---------------------------------------------------------------------------------
class NativeGroupNorm(ArrayFunction, name="NativeGroupNormBackward0", scalar_edges=3):
    """Group normalization: (input (N, C, *), weight, bias, groups, eps); the statistics are
    taken per sample over each group of C / groups channels (and all spatial positions).
    derivatives.yaml native_group_norm: native_group_norm_backward, here the batch/layer-norm
    backward on the (N, G, C/G, HxW) view."""

    @staticmethod
    def forward(ctx, x, w, b, groups, eps):
        n, c = x.shape[:2]
        s = int(np.prod(x.shape[2:])) if x.ndim > 2 else 1
        shape4 = (n, groups, c // groups, s)
        x4 = x.reshape(shape4)
        wshape = (groups, c // groups, 1)
        if x.size == 0:
            mean = rstd = np.zeros((n, groups, 1, 1), _acc_dtype(x))
            y = x.copy()
        else:
            mean, _, rstd = _batch_stats(x4, (2, 3), eps)
            y = _affine_out(x4, mean, rstd, w, b, wshape).reshape(x.shape)
        ctx.layout = ((2, 3), wshape, (0, 3), (groups, c // groups))
        ctx.shape4 = shape4
        ctx.stats = (mean, rstd)
        ctx.eps, ctx.train = eps, True
        ctx.save_for_backward(x, w, b)
        return y

    @staticmethod
    def backward(ctx, g):
        x, w, b = ctx.saved_tensors
        shape4 = ctx.shape4
        gx, gw, gb = _norm_backward(ctx, _GroupNormGrad, g.reshape(shape4), x.reshape(shape4),
                                    w, _dtypes(x, w, b))
        c = shape4[1] * shape4[2]
        return (None if gx is None else gx.reshape(x.shape),
                None if gw is None else gw.reshape(c),
                None if gb is None else gb.reshape(c), None, None)


def _group_norm(input, num_groups, weight, bias, eps, op_name):
    _need_tensor(input, "input", 1, op_name, optional=False)
    _need_tensor(weight, "weight", 3, op_name)
    _need_tensor(bias, "bias", 4, op_name)
    xs = input._data.shape
    if len(xs) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{len(xs)}")
    g = int(num_groups)
    if g <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {g}")
    c = xs[1]
    if c % g:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(xs)} and num_groups={g}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p._data.ndim != 1 or p._data.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{list(p._data.shape)} and input of shape {list(xs)}")
    need_float(input._data.dtype, "GroupNormKernelImpl")
    _check_param_dtypes(input, weight, bias, op_name=op_name)
    return NativeGroupNorm.apply(input, weight, bias, g, float(eps))


@op("group_norm", functional=True, method=False, namespace=False)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization (torch.nn.functional.group_norm): the C channels of ``input``
    (N, C, *) are split into ``num_groups`` groups, and each sample's group is normalized to
    mean 0 and variance 1 (biased, plus ``eps``) over its channels and positions, then each
    channel is scaled by ``weight`` and shifted by ``bias``.

    Shapes: ``weight``, ``bias``: (C,) or None, of the input's dtype (float32 for a float16
    input also). Result: the input's shape and dtype, recording NativeGroupNormBackward0
    (next_functions: input, weight, bias). Derivatives: the layer-norm backward of the module
    docstring on the (N, G, C/G, HxW) view (derivatives.yaml native_group_norm_backward); the
    gradients are views of it (ViewBackward0 under create_graph, as torch) and differentiable
    again.

    Raises, in torch's order:
        TypeError: input, weight or bias not a Tensor.
        RuntimeError: input of fewer than 2 dims.
        ZeroDivisionError: ``num_groups`` 0 (torch's functional form divides by it first).
        ValueError: one value per group and sample, i.e. N * C // num_groups * prod(spatial)
            == 1 (torch's "Expected more than 1 value per channel when training", checked by
            nn.functional.group_norm whatever the mode, and printing that list of sizes:
            [N * C // num_groups, num_groups, *spatial]).
        RuntimeError: ``num_groups`` negative; C not divisible by ``num_groups``; a weight or
            bias not of shape (C,); a parameter of another dtype.
        NotImplementedError: a non-floating input.
    """
    _need_tensor(input, "input", 1, "group_norm", optional=False)
    xs = input._data.shape
    if len(xs) >= 2:    # torch's _verify_batch_size on [N * C // G, G, *spatial]
        groups = int(num_groups) if isinstance(num_groups, np.integer) else num_groups
        size = [xs[0] * xs[1] // groups, groups] + list(xs[2:])
        count = size[0]
        for d in size[2:]:
            count *= d
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {size}")
    return _group_norm(input, num_groups, weight, bias, eps, "group_norm")


@op("group_norm", method=False)
def _torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """``tapegrad.group_norm``: torch.group_norm, the same as nn.functional.group_norm
    without its check for one value per group nor its division by ``num_groups`` (as torch:
    ``num_groups`` 0 is a RuntimeError here); ``cudnn_enabled`` is accepted and ignored."""
    return _group_norm(input, num_groups, weight, bias, eps, "group_norm")


# ---- rms_norm -----------------------------------------------------------------------------------
@op("rms_norm", functional=True, method=False)
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization (torch.nn.functional.rms_norm, also tapegrad.rms_norm):
    ``input * rsqrt(mean(input ** 2 over the last len(normalized_shape) dims) + eps)``, times
    ``weight``. ``eps=None`` is the machine epsilon of the computation dtype
    (``np.finfo(dtype).eps``: float32's for float32 and float16 input, float64's for float64).

    As torch 2.13 on the CPU, this is a composite: PowBackward0, MeanBackward1, AddBackward1,
    RsqrtBackward0, MulBackward0 (times the weight: one more MulBackward0), so its derivatives
    are those of these ops (derivatives.yaml), to any order. A float16 input is computed in
    float32 and cast back (ToCopyBackward0 either side); the result has the input's dtype (a
    weight of another dtype is multiplied in its promoted dtype, and the result cast back). The
    result is contiguous: for a permuted input, whose layout the elementwise ops keep, a last
    CloneBackward0 makes it so, as torch.

    Shapes: ``input`` (*, *normalized_shape); ``weight``: ``normalized_shape`` or None.

    Raises:
        TypeError: input or weight not a Tensor; ``normalized_shape`` not a sequence of ints.
        RuntimeError: an empty ``normalized_shape``; a weight not of that shape; an input not
            ending in it.
        NotImplementedError: a non-floating input.
    """
    _need_tensor(input, "input", 1, "rms_norm", optional=False)
    shape = _shape_list(normalized_shape, "rms_norm")
    _need_tensor(weight, "weight", 3, "rms_norm")
    _check_normalized_shape(input, shape, weight, None, star=False)
    need_float(input._data.dtype, "rms_norm")
    xd = input._data.dtype
    x = input.float() if xd == _HALF else input
    if eps is None:
        eps = float(np.finfo(x._data.dtype).eps)
    nd = x._data.ndim
    dims = tuple(range(nd - 1, nd - 1 - len(shape), -1))
    r = AddScalar.apply(x.pow(2).mean(dims, keepdim=True), float(eps)).rsqrt()
    y = x * r
    if weight is not None:
        y = y * weight
    if y._data.dtype != xd:
        y = y.to(input.dtype)
    # torch returns a contiguous result: a permuted input (whose layout the elementwise ops
    # keep) adds a CloneBackward0
    return y if y._data.flags.c_contiguous else y.contiguous()


# ---- embedding ----------------------------------------------------------------------------------
def _positions_coef(idx, padding_idx, scale, dtype):
    """Per index position: 0 where the index is ``padding_idx``, 1 / (its count) with
    ``scale``, else 1; None when every position has coefficient 1."""
    if padding_idx is None and not scale:
        return None
    flat = idx.reshape(-1)
    coef = np.ones(flat.shape, dtype)
    if scale and flat.size:
        _, inv, counts = np.unique(flat, return_inverse=True, return_counts=True)
        coef /= counts[inv.reshape(-1)].astype(dtype)
    if padding_idx is not None:
        coef[flat == padding_idx] = 0
    return coef


class Embedding(ArrayFunction, name="EmbeddingBackward0", nondiff=(1,)):
    """Rows of ``weight`` (num_embeddings, D) at the indices (an int Tensor of any shape):
    (weight, indices, padding_idx or None, scale_grad_by_freq). derivatives.yaml embedding:
    embedding_backward (dense: EmbeddingDenseBackward)."""

    @staticmethod
    def forward(ctx, w, idx, padding_idx, scale):
        ctx.conf = (w.shape[0], padding_idx, scale)
        ctx.save_for_backward(idx)
        return np.take(w, idx.astype(np.int64, copy=False), axis=0)

    @staticmethod
    def backward(ctx, g):
        idx, = ctx.saved_tensors
        num, padding_idx, scale = ctx.conf
        return EmbeddingDenseBackward.apply(g, idx, num, padding_idx, scale), None, None, None


class EmbeddingDenseBackward(ArrayFunction, name="EmbeddingDenseBackwardBackward0",
                             nondiff=(1,)):
    """embedding's weight gradient: zeros (num_weights, D) with the rows of grad (*, D) added at
    the indices, times each position's coefficient (0 at padding_idx, 1/count with
    scale_grad_by_freq). Linear in grad; its derivative reads rows at the indices with the same
    coefficients (embedding, then a product)."""

    @staticmethod
    def forward(ctx, g, idx, num, padding_idx, scale):
        ctx.conf = (padding_idx, scale)
        ctx.save_for_backward(idx)
        d = g.shape[-1]
        flat = idx.reshape(-1).astype(np.int64, copy=False)
        rows = g.reshape(-1, d)
        coef = _positions_coef(flat, padding_idx, scale, g.dtype)
        if coef is not None:
            keep = coef != 0
            flat, rows = flat[keep], rows[keep] * coef[keep, None]
        out = np.zeros((num, d), g.dtype)
        np.add.at(out, flat, rows)
        return out

    @staticmethod
    def backward(ctx, u):
        idx, = ctx.saved_tensors
        padding_idx, scale = ctx.conf
        gg = Embedding.apply(u, idx, None, False)
        coef = _positions_coef(idx._data, padding_idx, scale, u._data.dtype)
        if coef is not None:
            gg = gg * _make(coef.reshape(idx._data.shape + (1,)))
        return gg, None, None, None, None


def _embedding_renorm(weight, flat, max_norm, norm_type):
    """torch.embedding_renorm_: each row of ``weight`` that the indices use and whose
    ``norm_type``-norm exceeds ``max_norm`` is scaled by max_norm / (norm + 1e-7), in place
    (without recording; the weight's version is bumped, as torch)."""
    with no_grad():
        w = weight._data
        rows = np.unique(flat)
        if rows.size:
            sub = w[rows]
            norms = np.linalg.norm(sub.astype(np.float64) if w.dtype == _HALF else sub,
                                   ord=float(norm_type), axis=1)
            big = norms > max_norm
            if big.any():
                factor = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
                w[rows[big]] = sub[big] * factor[:, None]
        _bump(weight)


def _embedding(input, weight, padding_idx, max_norm, norm_type, sparse, scale, op_name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op_name}(): argument 'indices' (position 2) must be Tensor, not "
                        f"{type(input).__name__}")
    _need_tensor(weight, "weight", 1, op_name, optional=False)
    idt = input._data.dtype
    if idt not in (np.int64, np.int32):
        kind = scalar_name(idt) if idt.kind in "fiub" else idt.name
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got tapegrad.{kind}Tensor "
                           f"instead (while checking arguments for embedding)")
    if weight._data.ndim != 2:
        raise RuntimeError(f"'weight' must be 2-D (embedding got a weight of shape "
                           f"{list(weight._data.shape)}; it holds one row per index)")
    num = weight._data.shape[0]
    flat = input._data.reshape(-1).astype(np.int64, copy=False)
    if flat.size and (flat.min() < 0 or flat.max() >= num):
        raise IndexError("index out of range in self")
    if sparse and weight._requires_grad and _grad_state.record:
        raise NotImplementedError(f"{op_name}: sparse=True asks for a sparse gradient of the "
                                  f"weight, which tapegrad does not implement; use sparse=False "
                                  f"(a dense gradient with the same values)")
    if max_norm is not None:
        _embedding_renorm(weight, flat, float(max_norm), norm_type)
    return Embedding.apply(weight, input, padding_idx, bool(scale))


@op("embedding", functional=True, method=False, namespace=False)
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Look up rows of ``weight`` (torch.nn.functional.embedding): ``weight[input]``.

    Shapes and dtypes: ``input`` an int64 or int32 Tensor of any shape (0-d included);
    ``weight`` (num_embeddings, D), any dtype. Result: ``input.shape + (D,)``, the weight's
    dtype, recording EmbeddingBackward0 (one edge: the weight; the indices are saved, so
    modifying them in place before backward raises, as torch).

    ``padding_idx`` (negative counts from the end): positions holding it get no gradient (the
    row itself is read as it is). ``max_norm``: first, every row the input uses whose
    ``norm_type``-norm exceeds max_norm is rescaled in place to norm max_norm (as torch's
    embedding_renorm_: factor max_norm / (norm + 1e-7); bumps the weight's version, outside the
    graph). ``scale_grad_by_freq``: each position's gradient is divided by how often its index
    occurs in ``input``. Derivative: derivatives.yaml embedding_dense_backward (module
    docstring), differentiable again (EmbeddingDenseBackwardBackward0).

    Raises:
        TypeError: ``input`` or ``weight`` not a Tensor.
        RuntimeError: indices neither int64 nor int32; a weight that is not 2-D.
        IndexError: an index outside [0, num_embeddings) ("index out of range in self").
        AssertionError: ``padding_idx`` outside [-num_embeddings, num_embeddings) (as torch).
        NotImplementedError: ``sparse=True`` when a gradient would be recorded for the weight
            (torch makes a sparse gradient; tapegrad has no sparse tensors).
    """
    if padding_idx is not None:
        if not isinstance(weight, Tensor):
            _need_tensor(weight, "weight", 1, "embedding", optional=False)
        num = weight._data.shape[0]
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    return _embedding(input, weight, padding_idx, max_norm, norm_type, sparse,
                      scale_grad_by_freq, "embedding")


@op("embedding", method=False)
def _torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``tapegrad.embedding``: torch.embedding, weight first; a negative ``padding_idx`` means
    none (as torch's low-level form). Otherwise nn.functional.embedding (no ``max_norm``)."""
    pad = int(padding_idx) if padding_idx is not None and padding_idx >= 0 else None
    return _embedding(indices, weight, pad, None, 2.0, sparse, scale_grad_by_freq, "embedding")
