"""SGD with momentum, dampening, weight decay, Nesterov and maximize, as torch.optim.SGD."""
from __future__ import annotations

import numpy as np

from .._tensor import _make
from ..autograd.graph import user_frame
from ..nn._inplace import bump_version
from ._helpers import add_scaled_, scale_
from .optimizer import Optimizer, _grad_array

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), with torch's update::

        g = grad (negated if maximize) + weight_decay * p
        buf = g                                      (first step)
        buf = momentum * buf + (1 - dampening) * g   (later steps)
        g = g + momentum * buf if nesterov else buf  (when momentum != 0)
        p = p - lr * g

    ValueError for negative lr, momentum or weight_decay, and for nesterov without positive
    momentum and zero dampening. Float32 parameters are updated in float32 arithmetic.
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        where = user_frame()    # (the line of this step, for every version it bumps)
        for group in self.param_groups:
            momentum = group["momentum"]
            if momentum == 0 and group["weight_decay"] == 0 and not group["maximize"]:
                # plain SGD (torch's defaults): _sgd_update's last step alone, p -= lr * grad,
                # without its per-parameter reads of the group's options
                alpha = -group["lr"]
                for p in group["params"]:
                    g = p._grad
                    if g is not None:
                        add_scaled_(p._data, g._data, alpha)
                        bump_version(p, where)
                continue
            for p in group["params"]:
                grad = _grad_array(p)
                if grad is None:
                    continue
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    buf = _sgd_update(p, grad, buf, group, where)
                    state["momentum_buffer"] = buf
                else:
                    _sgd_update(p, grad, None, group, where)
        return loss


def _sgd_update(p, grad, buf, group, where=None):
    """torch's _single_tensor_sgd for one parameter, on arrays, in ``p``'s dtype. Updates
    ``p._data`` (and the momentum buffer tensor ``buf``) in place; returns the buffer (a new
    tensor on the first momentum step, None without momentum). Each ``add(x, alpha=a)`` of
    torch's rounds once, as its fused kernel (:func:`add_scaled_`)."""
    arr = p._data
    lr, wd = group["lr"], group["weight_decay"]
    momentum, dampening = group["momentum"], group["dampening"]
    g = -grad if group["maximize"] else grad
    if wd != 0:
        g = g.copy(order="K")
        add_scaled_(g, arr, wd)
    if momentum != 0:
        if buf is None:
            buf = _make(np.array(g, dtype=arr.dtype, copy=True))
        else:
            b = buf._data
            scale_(b, momentum)
            add_scaled_(b, g, 1 - dampening)
            bump_version(buf, where)
        if group["nesterov"]:
            g = g.copy(order="K")
            add_scaled_(g, buf._data, momentum)
        else:
            g = buf._data
    add_scaled_(arr, g, -lr)
    bump_version(p, where)
    return buf
