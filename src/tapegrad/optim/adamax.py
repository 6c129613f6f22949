"""Adamax (Adam with the infinity norm), as torch.optim.Adamax."""
from __future__ import annotations

import numpy as np

from ._helpers import (PerParameterOptimizer, bump_all, check_betas, check_lr, check_nonneg,
                       lerp_, scalar_tensor, value, zeros_state)

__all__ = ["Adamax"]


class Adamax(PerParameterOptimizer):
    """Adamax: Adam whose second moment is replaced by an exponentially weighted infinity norm.

    Source: D. Kingma, J. Ba, "Adam: A Method for Stochastic Optimization" (ICLR 2015),
    section 7.1; the update is the formula of torch's Adamax documentation, with its order of
    operations::

        step += 1
        g = grad (negated if maximize) [+ weight_decay * p]
        m = lerp(m, g, 1 - beta1)                           (state 'exp_avg')
        u = max(beta2 * u, |g| + eps)                       (state 'exp_inf')
        p = p - (lr / (1 - beta1**step)) * m / u

    Args: ``lr`` (float or 1-element Tensor, default 2e-3), ``betas`` ((0.9, 0.999)), ``eps``
    (1e-8), ``weight_decay`` (0), ``foreach``, ``maximize``, ``differentiable``, ``capturable``
    (accepted as torch does; the arithmetic is always torch's single-tensor path).

    State per parameter: ``step`` (0-d float32 tensor), ``exp_avg``, ``exp_inf``.

    Raises ValueError ("Invalid learning rate", "Invalid epsilon value", "Invalid beta
    parameter at index 0/1", "Invalid weight_decay value", in that order) and "Tensor lr must be
    1-element". ``step()`` raises AssertionError for ``capturable=True`` and RuntimeError /
    NotImplementedError for ``differentiable=True`` (see ``_helpers.check_step_flags``).
    """

    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("capturable", False))

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        lr = check_lr(lr)
        check_nonneg(eps, "epsilon value")
        check_betas(betas)
        check_nonneg(weight_decay, "weight_decay value")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["step"] = scalar_tensor(0.0)
        state["exp_avg"] = zeros_state(p)
        state["exp_inf"] = zeros_state(p)

    @staticmethod
    def _update(p, grad, state, group):
        """One Adamax step for one parameter, in place, in ``p``'s dtype."""
        arr = p._data
        dt = arr.dtype.type
        lr, eps, wd = value(group["lr"]), group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        step_t, exp_avg, exp_inf = state["step"], state["exp_avg"], state["exp_inf"]
        g = -grad if group["maximize"] else grad

        step_t._data += step_t._data.dtype.type(1)
        step = float(step_t._data)
        if wd != 0:
            g = g + dt(wd) * arr
        lerp_(exp_avg._data, g, 1 - beta1)
        u = exp_inf._data
        u *= dt(beta2)
        np.maximum(u, np.abs(g) + dt(eps), out=u)
        clr = lr / (1 - beta1 ** step)
        arr += dt(-clr) * exp_avg._data / u
        bump_all(p, step_t, exp_avg, exp_inf)
