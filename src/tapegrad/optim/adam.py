"""Adam (and, with decoupled weight decay, AdamW), as torch.optim.Adam."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _make
from ..autograd.graph import user_frame
from ..nn._inplace import bump_version
from ._helpers import check_betas, check_lr, check_nonneg, lerp_, scalar_tensor
from .optimizer import Optimizer, _grad_array

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam with torch's update (single-tensor path)::

        step += 1
        g = grad (negated if maximize) [+ weight_decay * p, unless decoupled]
        p = p * (1 - lr * weight_decay)                     (decoupled_weight_decay / AdamW)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        vmax = max(vmax, v)                                 (amsgrad; used instead of v below)
        p = p - lr / (1 - beta1**step) * m / (sqrt(v) / sqrt(1 - beta2**step) + eps)

    State per parameter: ``step`` (a float32 scalar tensor), ``exp_avg``, ``exp_avg_sq`` and
    ``max_exp_avg_sq`` (amsgrad). ValueError for a negative lr, eps or weight_decay and for betas
    outside [0, 1).
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        lr = check_lr(lr)
        if isinstance(lr, Tensor):
            lr = lr.item()
        check_nonneg(eps, "epsilon value")
        check_betas(betas)
        check_nonneg(weight_decay, "weight_decay value")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        betas = tuple(b.item() if isinstance(b, Tensor) else b for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
            for p in group["params"]:
                st = self.state.get(p, {})
                if st and not isinstance(st["step"], Tensor):
                    st["step"] = scalar_tensor(float(st["step"]))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        where = user_frame()    # (the line of this step, for every version it bumps)
        for group in self.param_groups:
            for p in group["params"]:
                grad = _grad_array(p)
                if grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = scalar_tensor()
                    state["exp_avg"] = _make(np.zeros_like(p._data))
                    state["exp_avg_sq"] = _make(np.zeros_like(p._data))
                    if group["amsgrad"]:
                        state["max_exp_avg_sq"] = _make(np.zeros_like(p._data))
                _adam_update(p, grad, state, group, where)
        return loss


def _adam_update(p, grad, state, group, where=None):
    """torch's _single_tensor_adam for one parameter, on arrays, in ``p``'s dtype. Updates
    ``p._data`` and the state tensors in place."""
    arr = p._data
    dt = arr.dtype.type
    lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
    beta1, beta2 = group["betas"]
    step_t = state["step"]
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    g = -grad if group["maximize"] else grad

    step_t._data += np.float32(1)
    bump_version(step_t, where)
    if wd != 0:
        if group["decoupled_weight_decay"]:
            arr *= dt(1 - lr * wd)
        else:
            g = g + dt(wd) * arr

    m, v = exp_avg._data, exp_avg_sq._data
    lerp_(m, g, 1 - beta1)
    v *= dt(beta2)
    v += dt(1 - beta2) * g * g
    bump_version(exp_avg, where)
    bump_version(exp_avg_sq, where)

    step = float(step_t._data)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5

    if group["amsgrad"]:
        vmax = state["max_exp_avg_sq"]
        np.maximum(vmax._data, v, out=vmax._data)
        bump_version(vmax, where)
        v = vmax._data
    denom = np.sqrt(v) / dt(bias_correction2_sqrt)
    denom += dt(eps)
    arr += dt(-step_size) * m / denom
    bump_version(p, where)
