"""NAdam (Adam with Nesterov momentum), as torch.optim.NAdam."""
from __future__ import annotations

import numpy as np

from ._helpers import (PerParameterOptimizer, bump_all, check_betas, check_lr, check_nonneg,
                       lerp_, scalar_tensor, value, zeros_state)

__all__ = ["NAdam"]


class NAdam(PerParameterOptimizer):
    """NAdam: Adam with Nesterov momentum and a momentum schedule.

    Source: T. Dozat, "Incorporating Nesterov Momentum into Adam" (ICLR 2016 workshop); with
    ``decoupled_weight_decay`` the decay of I. Loshchilov, F. Hutter, "Decoupled Weight Decay
    Regularization" (NAdamW). The update is the formula of torch's NAdam documentation, with its
    order of operations::

        step += 1
        g = grad (negated if maximize)
        p = p * (1 - lr * weight_decay)        (decoupled_weight_decay)
        g = g + weight_decay * p               (otherwise, when weight_decay != 0)
        mu      = beta1 * (1 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product = mu_product * mu           (state 'mu_product': a 0-d float32 tensor, so
                                                the product is rounded to float32 each step)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        d = sqrt(v / (1 - beta2 ** step)) + eps
        p = p - (lr * (1 - mu) / (1 - mu_product)) * g / d
        p = p - (lr * mu_next / (1 - mu_product * mu_next)) * m / d

    Args: ``lr`` (float or 1-element Tensor, default 2e-3), ``betas`` ((0.9, 0.999)), ``eps``
    (1e-8), ``weight_decay`` (0), ``momentum_decay`` (4e-3), ``decoupled_weight_decay``
    (False), ``foreach``, ``maximize``, ``capturable``, ``differentiable`` (accepted as torch
    does; the arithmetic is always torch's single-tensor path).

    State per parameter, in this order: ``step``, ``mu_product`` (0-d tensors), ``exp_avg``,
    ``exp_avg_sq``.

    Raises ValueError ("Invalid learning rate", "Invalid epsilon value", "Invalid beta
    parameter at index 0/1", "Invalid weight_decay value", "Invalid momentum_decay value", in
    that order) and "Tensor lr must be 1-element". ``step()`` raises AssertionError for
    ``capturable=True`` and RuntimeError / NotImplementedError for ``differentiable=True`` (see
    ``_helpers.check_step_flags``).
    """

    _setstate_defaults = (("maximize", False), ("foreach", None), ("capturable", False),
                          ("differentiable", False), ("decoupled_weight_decay", False))
    _capturable_tensors = "params, mu_products and state_steps"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        lr = check_lr(lr)
        check_nonneg(eps, "epsilon value")
        check_betas(betas)
        check_nonneg(weight_decay, "weight_decay value")
        check_nonneg(momentum_decay, "momentum_decay value")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["step"] = scalar_tensor(0.0)
        state["mu_product"] = scalar_tensor(1.0)
        state["exp_avg"] = zeros_state(p)
        state["exp_avg_sq"] = zeros_state(p)

    @staticmethod
    def _update(p, grad, state, group):
        """One NAdam step for one parameter, in place, in ``p``'s dtype."""
        arr = p._data
        dt = arr.dtype.type
        lr, eps, wd = value(group["lr"]), group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        momentum_decay = group["momentum_decay"]
        step_t, mu_product = state["step"], state["mu_product"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        g = -grad if group["maximize"] else grad

        step_t._data += step_t._data.dtype.type(1)
        step = float(step_t._data)
        bias_correction2 = 1 - beta2 ** step
        if wd != 0:
            if group["decoupled_weight_decay"]:
                arr *= dt(1 - lr * wd)
            else:
                g = g + dt(wd) * arr
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mp = mu_product._data
        mp *= mp.dtype.type(mu)

        m, v = exp_avg._data, exp_avg_sq._data
        lerp_(m, g, 1 - beta1)
        v *= dt(beta2)
        v += dt(1 - beta2) * g * g
        denom = np.sqrt(v / dt(bias_correction2))
        denom += dt(eps)
        mu_prod = float(mp)
        mu_product_next = mu_prod * mu_next
        arr += dt(-lr * (1.0 - mu) / (1.0 - mu_prod)) * g / denom
        arr += dt(-lr * mu_next / (1.0 - mu_product_next)) * m / denom
        bump_all(p, step_t, mu_product, exp_avg, exp_avg_sq)
