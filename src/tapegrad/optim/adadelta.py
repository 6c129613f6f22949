"""Adadelta, as torch.optim.Adadelta."""
from __future__ import annotations

import numpy as np

from ._helpers import (PerParameterOptimizer, bump_all, check_lr, check_nonneg, scalar_tensor,
                       value, zeros_state)

__all__ = ["Adadelta"]


class Adadelta(PerParameterOptimizer):
    """Adadelta: steps scaled by the ratio of running RMS of past updates to running RMS of
    gradients.

    Source: M. Zeiler, "ADADELTA: An Adaptive Learning Rate Method" (2012); the update is the
    formula of torch's Adadelta documentation, with its order of operations::

        step += 1
        g = grad (negated if maximize) [+ weight_decay * p]
        v = rho * v + (1 - rho) * g * g                      (state 'square_avg')
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta              (state 'acc_delta')
        p = p - lr * delta

    Args: ``lr`` (float or 1-element Tensor, default 1.0), ``rho`` (0.9), ``eps`` (1e-6),
    ``weight_decay`` (0), ``foreach``, ``capturable``, ``maximize``, ``differentiable``
    (accepted as torch does; the arithmetic is always torch's single-tensor path).

    State per parameter: ``step`` (0-d float32 tensor), ``square_avg``, ``acc_delta``.

    Raises ValueError ("Invalid learning rate", "Invalid rho value" unless 0 <= rho <= 1,
    "Invalid epsilon value", "Invalid weight_decay value", in that order) and "Tensor lr must
    be 1-element". ``step()`` raises AssertionError for ``capturable=True`` and RuntimeError /
    NotImplementedError for ``differentiable=True`` (see ``_helpers.check_step_flags``).
    """

    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("capturable", False))
    _capturable_devices = "['cuda', 'xpu', 'hpu', 'privateuseone']"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        lr = check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonneg(eps, "epsilon value")
        check_nonneg(weight_decay, "weight_decay value")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["step"] = scalar_tensor(0.0)
        state["square_avg"] = zeros_state(p)
        state["acc_delta"] = zeros_state(p)

    @staticmethod
    def _update(p, grad, state, group):
        """One Adadelta step for one parameter, in place, in ``p``'s dtype."""
        arr = p._data
        dt = arr.dtype.type
        lr, rho, eps, wd = value(group["lr"]), group["rho"], group["eps"], group["weight_decay"]
        step_t, square_avg, acc_delta = state["step"], state["square_avg"], state["acc_delta"]
        g = -grad if group["maximize"] else grad

        step_t._data += step_t._data.dtype.type(1)
        if wd != 0:
            g = g + dt(wd) * arr
        v, u = square_avg._data, acc_delta._data
        v *= dt(rho)
        v += dt(1 - rho) * g * g
        std = np.sqrt(v + dt(eps))
        delta = np.sqrt(u + dt(eps))
        delta /= std
        delta *= g
        u *= dt(rho)
        u += dt(1 - rho) * delta * delta
        arr += dt(-lr) * delta
        bump_all(p, step_t, square_avg, acc_delta)
