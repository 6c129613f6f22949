"""ASGD (averaged stochastic gradient descent), as torch.optim.ASGD."""
from __future__ import annotations

from ._helpers import (PerParameterOptimizer, bump_all, check_lr, check_nonneg, scalar_dtype,
                       scalar_tensor, value, zeros_state)

__all__ = ["ASGD"]


class ASGD(PerParameterOptimizer):
    """ASGD: SGD with a decaying step size that also keeps a running (Polyak-Ruppert) average of
    the iterates in the state ``ax``.

    Source: B. Polyak, A. Juditsky, "Acceleration of Stochastic Approximation by Averaging"
    (SIAM J. Control Optim. 1992); the step and averaging schedules are those of torch's ASGD,
    with its order of operations::

        step += 1
        g = grad (negated if maximize) [+ weight_decay * p]
        p = p * (1 - lambd * eta)
        p = p - eta * g
        ax = ax + (p - ax) * mu         (ax = p when mu == 1)
        eta = lr / (1 + lambd * lr * step) ** alpha       (state 'eta', a 0-d float32 tensor)
        mu = 1 / max(1, step - t0)                        (state 'mu', a 0-d float32 tensor)

    ``eta`` starts at ``lr`` and ``mu`` at 1; both are stored as (float32) tensors and read back,
    so they carry float32 rounding, as in torch. Args: ``lr`` (float or 1-element Tensor,
    default 1e-2), ``lambd`` (decay term, 1e-4), ``alpha`` (power of the eta update, 0.75),
    ``t0`` (step at which averaging starts, 1e6), ``weight_decay`` (0), ``foreach``,
    ``maximize``, ``differentiable``, ``capturable`` (accepted as torch does; the arithmetic is
    always torch's single-tensor path: torch's ``foreach=True`` path computes ``eta`` with
    float32 tensor operations, so its ``eta``, and the parameters, differ from these in the
    last float32 bits).

    State per parameter, in this order: ``step``, ``eta``, ``mu`` (0-d tensors), ``ax``.

    Raises ValueError "Invalid learning rate: ..." / "Invalid weight_decay value: ..." for
    negative values (``lambd``, ``alpha`` and ``t0`` are not checked, as in torch) and "Tensor lr
    must be 1-element". ``step()`` raises AssertionError for ``capturable=True`` and
    RuntimeError / NotImplementedError for ``differentiable=True`` (see
    ``_helpers.check_step_flags``).
    """

    _setstate_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                          ("capturable", False))
    _capturable_tensors = "params, mus, etas, and state_steps"

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        lr = check_lr(lr)
        check_nonneg(weight_decay, "weight_decay value")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, state, p, group):
        state["step"] = scalar_tensor(0.0)
        state["eta"] = scalar_tensor(value(group["lr"]))
        state["mu"] = scalar_tensor(1.0)
        state["ax"] = zeros_state(p)

    @staticmethod
    def _update(p, grad, state, group):
        """One ASGD step for one parameter, in place, in ``p``'s dtype."""
        arr = p._data
        dt = arr.dtype.type
        lr, lambd, alpha, t0 = value(group["lr"]), group["lambd"], group["alpha"], group["t0"]
        wd = group["weight_decay"]
        step_t, eta, mu, ax = state["step"], state["eta"], state["mu"], state["ax"]
        g = -grad if group["maximize"] else grad

        step_t._data += step_t._data.dtype.type(1)
        step = float(step_t._data)
        if wd != 0:
            g = g + dt(wd) * arr
        eta_value = float(eta._data)
        arr *= dt(1 - lambd * eta_value)
        arr += dt(-eta_value) * g
        if float(mu._data) != 1:
            ax._data += (arr - ax._data) * dt(float(mu._data))
        else:
            ax._data[...] = arr
        # the new values become default-dtype tensors first (float32 rounding), then are copied
        # into the state, whose dtype may differ after a load_state_dict (as torch)
        sdt = scalar_dtype()
        eta._data[...] = sdt(lr / ((1 + lambd * lr * step) ** alpha))
        mu._data[...] = sdt(1 / max(1, step - t0))
        bump_all(p, step_t, eta, mu, ax)
