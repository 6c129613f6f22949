"""RMSprop (optionally centered, with momentum), as torch.optim.RMSprop."""
from __future__ import annotations

import numpy as np

from ._helpers import (PerParameterOptimizer, bump_all, check_lr, check_nonneg, lerp_,
                       scalar_tensor, value, zeros_state)

__all__ = ["RMSprop"]


class RMSprop(PerParameterOptimizer):
    """RMSprop: divide the gradient by a running root mean square of recent gradients.

    Source: G. Hinton's Coursera lecture 6e (the algorithm), A. Graves, "Generating Sequences
    With Recurrent Neural Networks" (2013) for the centered variant; the update is the formula
    of torch's RMSprop documentation, with its order of operations::

        g = grad (negated if maximize) [+ weight_decay * p]
        v = alpha * v + (1 - alpha) * g * g                   (state 'square_avg')
        ga = lerp(ga, g, 1 - alpha); d = sqrt(v - ga * ga)    (centered; state 'grad_avg')
        d = sqrt(v)                                           (not centered)
        d = d + eps                                           (the root is taken before eps)
        b = momentum * b + g / d; p = p - lr * b              (momentum > 0; 'momentum_buffer')
        p = p - lr * g / d                                    (momentum == 0)

    Args: ``lr`` (float or 1-element Tensor, default 1e-2), ``alpha`` (smoothing constant,
    0.99), ``eps`` (1e-8), ``weight_decay`` (L2 penalty, 0), ``momentum`` (0), ``centered``
    (False), ``capturable``, ``foreach``, ``maximize``, ``differentiable`` (accepted as torch
    does; the arithmetic is always torch's single-tensor path).

    State per parameter, in this order: ``step`` (0-d float32 tensor), ``square_avg``,
    ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).

    Raises ValueError ("Invalid learning rate: ...", "Invalid epsilon value: ...", "Invalid
    momentum value: ...", "Invalid weight_decay value: ...", "Invalid alpha value: ...", checked
    in that order) for a negative value, and "Tensor lr must be 1-element". ``step()`` raises
    AssertionError for ``capturable=True`` (CPU only, as torch on CPU) and RuntimeError /
    NotImplementedError for ``differentiable=True`` (see ``_helpers.check_step_flags``).
    """

    _setstate_defaults = (("momentum", 0), ("centered", False), ("foreach", None),
                          ("maximize", False), ("differentiable", False),
                          ("capturable", False))

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        lr = check_lr(lr)
        check_nonneg(eps, "epsilon value")
        check_nonneg(momentum, "momentum value")
        check_nonneg(weight_decay, "weight_decay value")
        check_nonneg(alpha, "alpha value")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["step"] = scalar_tensor(0.0)
        state["square_avg"] = zeros_state(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_state(p)
        if group["centered"]:
            state["grad_avg"] = zeros_state(p)

    @staticmethod
    def _update(p, grad, state, group):
        """One RMSprop step for one parameter, in place, in ``p``'s dtype."""
        arr = p._data
        dt = arr.dtype.type
        lr, alpha, eps = value(group["lr"]), group["alpha"], group["eps"]
        wd, momentum = group["weight_decay"], group["momentum"]
        step_t, square_avg = state["step"], state["square_avg"]
        g = -grad if group["maximize"] else grad

        step_t._data += step_t._data.dtype.type(1)
        if wd != 0:
            g = g + dt(wd) * arr
        v = square_avg._data
        v *= dt(alpha)
        v += dt(1 - alpha) * g * g
        changed = [step_t, square_avg]
        if group["centered"]:
            grad_avg = state["grad_avg"]
            ga = grad_avg._data
            lerp_(ga, g, 1 - alpha)
            avg = np.sqrt(v + dt(-1) * ga * ga)
            changed.append(grad_avg)
        else:
            avg = np.sqrt(v)
        avg += dt(eps)
        if momentum > 0:
            buf = state["momentum_buffer"]
            b = buf._data
            b *= dt(momentum)
            b += g / avg
            arr += dt(-lr) * b
            changed.append(buf)
        else:
            arr += dt(-lr) * g / avg
        bump_all(p, *changed)
