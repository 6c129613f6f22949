"""RAdam (rectified Adam), as torch.optim.RAdam."""
from __future__ import annotations

import numpy as np

from ._helpers import (PerParameterOptimizer, bump_all, check_betas, check_lr, check_nonneg,
                       lerp_, scalar_tensor, value, zeros_state)

__all__ = ["RAdam"]


class RAdam(PerParameterOptimizer):
    """RAdam: Adam whose adaptive step is switched on only once the variance of the adaptive
    learning rate is tractable, and then rectified.

    Source: L. Liu et al., "On the Variance of the Adaptive Learning Rate and Beyond" (ICLR
    2020); with ``decoupled_weight_decay`` the decay of Loshchilov & Hutter (RAdamW). The update
    is the formula of torch's RAdam documentation, with its order of operations::

        step += 1
        g = grad (negated if maximize)
        p = p * (1 - lr * weight_decay)        (decoupled_weight_decay)
        g = g + weight_decay * p               (otherwise, when weight_decay != 0)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1 ** step)
        rho_inf = 2 / (1 - beta2) - 1
        rho = rho_inf - 2 * step * beta2 ** step / (1 - beta2 ** step)
        if rho > 5:
            l = (1 / (sqrt(v) + eps)) * sqrt(1 - beta2 ** step)     (the reciprocal, then scaled)
            r = sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
            p = p - m_hat * lr * l * r
        else:
            p = p - m_hat * lr

    Args: ``lr`` (float or 1-element Tensor, default 1e-3), ``betas`` ((0.9, 0.999)), ``eps``
    (1e-8), ``weight_decay`` (0), ``decoupled_weight_decay`` (False), ``foreach``,
    ``maximize``, ``capturable``, ``differentiable`` (accepted as torch does; the arithmetic is
    always torch's single-tensor path).

    State per parameter: ``step`` (0-d float32 tensor), ``exp_avg``, ``exp_avg_sq``.

    Raises ValueError ("Invalid learning rate", "Invalid epsilon value", "Invalid beta
    parameter at index 0/1", "Invalid weight_decay value", in that order) and "Tensor lr must be
    1-element". ``step()`` raises AssertionError for ``capturable=True`` and RuntimeError /
    NotImplementedError for ``differentiable=True`` (see ``_helpers.check_step_flags``).
    """

    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("decoupled_weight_decay", False), ("capturable", False))

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        lr = check_lr(lr)
        check_nonneg(eps, "epsilon value")
        check_betas(betas)
        check_nonneg(weight_decay, "weight_decay value")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["step"] = scalar_tensor(0.0)
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    @staticmethod
    def _update(p, grad, state, group):
        """One RAdam step for one parameter, in place, in ``p``'s dtype."""
        arr = p._data
        dt = arr.dtype.type
        lr, eps, wd = value(group["lr"]), group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        step_t, exp_avg, exp_avg_sq = state["step"], state["exp_avg"], state["exp_avg_sq"]
        g = -grad if group["maximize"] else grad

        step_t._data += step_t._data.dtype.type(1)
        step = float(step_t._data)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                arr *= dt(1 - lr * wd)
            else:
                g = g + dt(wd) * arr
        m, v = exp_avg._data, exp_avg_sq._data
        lerp_(m, g, 1 - beta1)
        v *= dt(beta2)
        v += dt(1 - beta2) * g * g

        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = m / dt(bias_correction1)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        update *= dt(lr)
        if rho_t > 5.0:
            sq = np.sqrt(v)
            sq += dt(eps)
            adaptive = np.reciprocal(sq)
            adaptive *= dt(bias_correction2 ** 0.5)
            update *= adaptive
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            update *= dt(rect)
        arr -= update
        bump_all(p, step_t, exp_avg, exp_avg_sq)
