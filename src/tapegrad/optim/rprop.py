"""Rprop (resilient backpropagation), as torch.optim.Rprop."""
from __future__ import annotations

import numpy as np

from .._tensor import _make
from ._helpers import PerParameterOptimizer, bump_all, check_lr, scalar_tensor, value, zeros_state
from .optimizer import _grad_array

__all__ = ["Rprop"]


class Rprop(PerParameterOptimizer):
    """Rprop: each coordinate moves by its own step size, in the direction of the gradient's
    sign; the step size grows while the sign holds and shrinks when it flips.

    Source: M. Riedmiller, H. Braun, "A Direct Adaptive Method for Faster Backpropagation
    Learning: The RPROP Algorithm" (ICNN 1993); the update is the formula of torch's Rprop
    documentation, with its order of operations (elementwise)::

        step += 1
        g = grad (negated if maximize)
        s = sign(g * prev)
        f = etaplus where s > 0, etaminus where s < 0, 1 where s == 0
        step_size = clamp(step_size * f, step_sizes[0], step_sizes[1])
        g = 0 where f == etaminus                        (no move after a sign flip)
        p = p - sign(g) * step_size
        prev = g                                         (state 'prev')

    ``step_size`` starts at ``lr`` for every element. Args: ``lr`` (float or 1-element Tensor,
    default 1e-2), ``etas`` ((etaminus, etaplus) = (0.5, 1.2)), ``step_sizes`` ((min, max) =
    (1e-6, 50)), ``capturable``, ``foreach``, ``maximize``, ``differentiable`` (accepted as
    torch does; the arithmetic is always torch's single-tensor path).

    State per parameter: ``step`` (0-d float32 tensor), ``prev``, ``step_size``.

    Raises ValueError "Invalid learning rate: ..." for a negative lr, "Tensor lr must be
    1-element", and "Invalid eta values: etaminus, etaplus" unless 0 < etaminus < 1 < etaplus
    (``step_sizes`` are not checked, as in torch). ``step()`` raises AssertionError for
    ``capturable=True`` and RuntimeError / NotImplementedError for ``differentiable=True`` (see
    ``_helpers.check_step_flags``).
    """

    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("capturable", False))

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        lr = check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["step"] = scalar_tensor(0.0)
        state["prev"] = zeros_state(p)
        # full_like of the gradient, not of p, as torch: the step sizes take the gradient's layout
        state["step_size"] = _make(np.full_like(_grad_array(p), value(group["lr"]),
                                                dtype=p._data.dtype))

    @staticmethod
    def _update(p, grad, state, group):
        """One Rprop step for one parameter, in place, in ``p``'s dtype."""
        arr = p._data
        dt = arr.dtype.type
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        step_t, prev, step_size = state["step"], state["prev"], state["step_size"]
        g = -grad if group["maximize"] else grad

        step_t._data += step_t._data.dtype.type(1)
        sign = np.sign(g * prev._data)
        factor = np.where(sign > 0, dt(etaplus), np.where(sign < 0, dt(etaminus), sign))
        factor[sign == 0] = 1
        s = step_size._data
        s *= factor
        np.clip(s, dt(step_size_min), dt(step_size_max), out=s)
        g = np.where(factor == dt(etaminus), dt(0), g)
        arr -= np.sign(g) * s
        prev._data[...] = g
        bump_all(p, step_t, prev, step_size)
