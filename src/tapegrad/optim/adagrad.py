"""Adagrad, as torch.optim.Adagrad."""
from __future__ import annotations

import numpy as np

from .._tensor import _make
from ._helpers import (PerParameterOptimizer, bump_all, check_lr, check_nonneg, scalar_tensor,
                       value)

__all__ = ["Adagrad"]


class Adagrad(PerParameterOptimizer):
    """Adagrad: per-coordinate steps scaled by the root of the running sum of squared gradients.

    Source: J. Duchi, E. Hazan, Y. Singer, "Adaptive Subgradient Methods for Online Learning
    and Stochastic Optimization" (JMLR 2011); the update is the formula of torch's Adagrad
    documentation, with its order of operations::

        step += 1
        g = grad (negated if maximize) [+ weight_decay * p]
        clr = lr / (1 + (step - 1) * lr_decay)
        sum = sum + g * g                           (state 'sum', starts at
                                                     initial_accumulator_value)
        p = p - clr * g / (sqrt(sum) + eps)

    Args: ``lr`` (float or 1-element Tensor, default 1e-2), ``lr_decay`` (0), ``weight_decay``
    (0), ``initial_accumulator_value`` (0), ``eps`` (1e-10), ``foreach``, ``maximize``,
    ``differentiable``, ``fused`` (accepted as torch does; the arithmetic is always torch's
    single-tensor path).

    State: as torch, every parameter of the groups given to the constructor gets its state
    (``step`` = 0, ``sum`` = initial_accumulator_value) at construction; parameters of groups
    added later get it at their first step.

    Raises ValueError ("Invalid learning rate", "Invalid lr_decay value", "Invalid
    weight_decay value", "Invalid initial_accumulator_value value", "Invalid epsilon value",
    in that order) for negative values and "Tensor lr must be 1-element"; RuntimeError for
    ``fused=True`` together with ``foreach=True`` or ``differentiable=True``, with torch's
    messages. ``step()`` raises RuntimeError / NotImplementedError for ``differentiable=True``
    (see ``_helpers.check_step_flags``).
    """

    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("fused", None))

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        lr = check_lr(lr)
        check_nonneg(lr_decay, "lr_decay value")
        check_nonneg(weight_decay, "weight_decay value")
        check_nonneg(initial_accumulator_value, "initial_accumulator_value value")
        check_nonneg(eps, "epsilon value")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p, group)

    def _init_state(self, state, p, group):
        state["step"] = scalar_tensor(0.0)
        state["sum"] = _make(np.full_like(p._data, group["initial_accumulator_value"]))

    @staticmethod
    def _update(p, grad, state, group):
        """One Adagrad step for one parameter, in place, in ``p``'s dtype."""
        arr = p._data
        dt = arr.dtype.type
        lr, lr_decay, eps, wd = value(group["lr"]), group["lr_decay"], group["eps"], \
            group["weight_decay"]
        step_t, state_sum = state["step"], state["sum"]
        g = -grad if group["maximize"] else grad

        step_t._data += step_t._data.dtype.type(1)
        step = float(step_t._data)
        if wd != 0:
            g = g + dt(wd) * arr
        clr = lr / (1 + (step - 1) * lr_decay)
        s = state_sum._data
        s += g * g
        std = np.sqrt(s)
        std += dt(eps)
        arr += dt(-clr) * g / std
        bump_all(p, step_t, state_sum)
