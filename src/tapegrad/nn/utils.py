"""``tapegrad.nn.utils``: gradient clipping and flattening parameters, as ``torch.nn.utils``.

The clipping functions work on ``.grad`` in place under no_grad (each gradient's version counter
is bumped, nothing is recorded). Norms are accumulated in float64 and rounded to the gradients'
dtype, as torch's CPU reductions accumulate float32 in double.
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, _make
from ..autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm",
           "parameters_to_vector", "vector_to_parameters"]


def _tensors(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _grads(parameters):
    return [p.grad for p in _tensors(parameters) if p.grad is not None]


def _norm(arr, norm_type):
    a = np.abs(arr.astype(np.float64, copy=False))
    if norm_type == math.inf:
        return a.max(initial=0.0)
    if norm_type == -math.inf:
        return a.min(initial=math.inf)
    if norm_type == 0:
        return float(np.count_nonzero(a))
    return (a ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of the norms of ``tensors`` (a Tensor or an iterable of them), i.e.
    of all their elements together: a 0-d tensor of their dtype (0. for no tensors).
    ``foreach`` is accepted and ignored. RuntimeError (torch's message) when the norm is nan or
    inf and ``error_if_nonfinite``."""
    ts = _tensors(tensors)
    norm_type = float(norm_type)
    if not ts:
        return _make(np.zeros((), np.float32))
    dt = ts[0]._data.dtype
    norms = np.array([_norm(t._data, norm_type) for t in ts], dt)
    total = np.asarray(_norm(norms, norm_type), dt)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            f"so it cannot be clipped. To disable this error and scale the gradients by the "
            f"non-finite norm anyway, set `error_if_nonfinite=False`")
    return _make(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by ``max_norm / (total_norm + 1e-6)``,
    clamped to at most 1 (so gradients already within the norm are multiplied by 1)."""
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the gradients of ``parameters`` (a Tensor or an iterable) so that their total
    ``norm_type``-norm is at most ``max_norm``; returns the total norm before clipping (a 0-d
    tensor). Parameters without a gradient are skipped. RuntimeError for a non-finite total norm
    when ``error_if_nonfinite``."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one 1-D tensor (recorded: the gradient
    flows back to each parameter)."""
    from ..ops.shape import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into the parameters' ``.data`` (as torch; not
    recorded). TypeError when ``vec`` is not a Tensor."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    start = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data
        start += n
