"""Learning-rate schedulers with torch's interface and arithmetic (``torch.optim.lr_scheduler``).

A scheduler wraps an optimizer: construction records each param group's ``initial_lr`` and does
the first step (epoch 0); each ``step()`` advances ``last_epoch`` and writes the new rates into
``optimizer.param_groups``. The rates follow torch's recursive (chainable) formulas exactly, so a
run reproduces torch's learning rates to the last bit; ``step(epoch)`` (deprecated in torch) uses
the closed forms. ``get_last_lr()`` returns the rates the last step set.
"""
from __future__ import annotations

import functools
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from functools import wraps
from weakref import ref

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "ReduceLROnPlateau",
           "SequentialLR", "ChainedScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _param_groups_val_list(optimizer, key):
    return [group[key].clone() if isinstance(group[key], Tensor) else group[key]
            for group in optimizer.param_groups]


def _update_param_group_val(param_group, key, val):
    if isinstance(param_group[key], Tensor):
        param_group[key].fill_(float(val))
    else:
        param_group[key] = val


class LRScheduler:
    """Base class of the schedulers: subclasses implement ``get_lr()`` (the chainable form) and
    optionally ``_get_closed_form_lr()``. TypeError for a non-Optimizer; KeyError when resuming
    (``last_epoch >= 0``) without ``initial_lr`` in the param groups."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                if isinstance(initial_lr, Tensor):
                    initial_lr = initial_lr.clone()
                group.setdefault("initial_lr", initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   f"when resuming scheduler with last_epoch >= 0.")
        self.base_lrs = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _patch_track_step_called(self.optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """Every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore a :meth:`state_dict`: every key of the dict (a mapping of attribute name to
        value, or an iterable of such pairs) is set as an attribute of the scheduler, unchecked
        (unknown keys are added, keys absent from the dict keep their values), as torch. The
        optimizer's learning rates are not touched until the next ``step()``. Returns None;
        TypeError for a non-iterable (None, an int), as torch's ``dict.update``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates set by the last ``step()``, one per param group."""
        return self._last_lr

    def get_lr(self):
        """The learning rates of the current epoch (``last_epoch``), one float per param group,
        by the subclass's chainable formula; ``step()`` calls it and writes the result into the
        optimizer. The base class has no schedule: NotImplementedError, as torch (so a subclass
        that does not define it fails at construction, whose first step calls it). A subclass's
        ``get_lr`` called outside ``step()`` warns (UserWarning "To get the last learning rate
        computed by the scheduler, please use `get_last_lr()`.", as torch) and still computes,
        from the current rates, which is in general not the current lr."""
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance one epoch (call after ``optimizer.step()``); warns, as torch, when called
        before the optimizer ever stepped."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning "
                              "rate scheduler initialization. Please, make sure to call "
                              "`optimizer.step()` before `lr_scheduler.step()`.", UserWarning,
                              stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                              "In PyTorch 1.1.0 and later, you should call them in the opposite "
                              "order: `optimizer.step()` before `lr_scheduler.step()`.  Failure "
                              "to do this will result in PyTorch skipping the first value of "
                              "the learning rate schedule.", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                if hasattr(self, "_get_closed_form_lr"):
                    values = self._get_closed_form_lr()
                else:
                    values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for param_group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(param_group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    pass


def _patch_track_step_called(opt):
    """Wrap ``opt.step`` so the scheduler can tell whether the optimizer stepped first."""
    if hasattr(opt.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = ref(opt)
    func = opt.step.__func__

    @wraps(func)
    def wrapper(*args, **kwargs):
        o = opt_ref()
        o._opt_called = True
        return func.__get__(o, o.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    opt.step = wrapper


def _warn_get_lr_called_within_step(sched):
    if not sched._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=3)


def _per_group(optimizer, lr_lambda):
    """One lr_lambda per param group: a single callable repeated, or a list/tuple of exactly one
    per group (ValueError "Expected N lr_lambdas, but got M" otherwise, as torch)."""
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                         f"{len(lr_lambda)}")
    return list(lr_lambda)


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch) (one function, or one per param group).

    ``lr_lambda`` is a callable of the epoch (an int) returning a factor, or a list/tuple of them,
    one per param group. Raises ValueError ("Expected N lr_lambdas, but got M") for a list/tuple
    whose length is not the number of param groups, as torch; the base class's errors
    otherwise."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """As the base, with ``lr_lambdas`` kept only for callable objects (not functions)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None] * len(self.lr_lambdas)
        for idx, fn in enumerate(self.lr_lambdas):
            if not isinstance(fn, types.FunctionType):
                state["lr_lambdas"][idx] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        """Restore a :meth:`state_dict`, as torch: the attributes as the base class does, and for
        each entry of ``state_dict['lr_lambdas']`` that is not None (a callable object's saved
        ``__dict__``) that lambda's ``__dict__`` is updated; plain functions (saved as None) stay
        as constructed. The dict is left as it was given (``lr_lambdas`` is popped, then put
        back). Raises KeyError when ``state_dict`` has no ``'lr_lambdas'``, and IndexError when
        it saved more callable objects than this scheduler has lambdas (as torch)."""
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)

    def get_lr(self):
        """initial_lr * lr_lambda(last_epoch) for each param group (a list of floats); any error
        of a lambda propagates. Outside ``step()`` it warns, as
        :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        return [base_lr * lmbda(self.last_epoch)
                for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs. ``step_size=0`` is accepted at
    construction and raises ZeroDivisionError at the first ``step()``, as torch."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current rates, times ``gamma`` when ``last_epoch`` is a nonzero multiple of
        ``step_size`` (a list of floats, one per param group). ZeroDivisionError for
        ``step_size=0`` at the first ``step()`` after construction (construction itself, at
        epoch 0, passes), as torch; ``step(epoch)`` raises it too (closed form). Outside
        ``step()`` it warns, as :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        if (self.last_epoch == 0) or (self.last_epoch % self.step_size != 0):
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone epoch (by gamma ** k for a milestone listed
    k times)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current rates, times ``gamma ** k`` when ``last_epoch`` is a milestone listed k
        times (a list of floats, one per param group). Outside ``step()`` it warns, as
        :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current rates times ``gamma`` (unchanged at construction), a list of floats, one
        per param group. Outside ``step()`` it warns, as
        :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to ``eta_min`` over ``T_max`` epochs (then back up,
    periodically), by torch's recursive formula. ``T_max=0`` is accepted at construction and
    raises ZeroDivisionError at the first ``step()``, as torch."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The next rates by torch's recursive cosine formula (a list of floats, one per param
        group; unchanged at construction). ZeroDivisionError for ``T_max=0`` at the first
        ``step()`` after construction (construction itself passes), and in ``step(epoch)``'s
        closed form, as torch. Outside ``step()`` it warns, as
        :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        elif self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        elif (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max))
                    / 2 for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


# ---- schedulers added with the second batch of optimizers -----------------------------------------
# Each follows torch's documented schedule; the recursive (chainable) forms are written in the
# same order of floating-point operations as torch's, so a run gives the same rates to the bit.

def _format_param(name, optimizer, param):
    """One value per param group: a list/tuple must have one entry per group (ValueError
    ``NAME must have the same length as optimizer.param_groups. ...``), a single value is
    repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


def _set_momentum(group, momentum, use_beta1):
    """Write a cycled momentum into a group: beta1 of ``betas`` (Adam-like) or ``momentum``."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _check_cycle_momentum(optimizer):
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option "
                         "enabled")
    return "betas" in optimizer.defaults


class MultiplicativeLR(LRScheduler):
    """Multiply the lr by ``lr_lambda(epoch)`` at every step (one function, or one per param
    group); the rate is left as it is at construction.

    ``lr_lambda``: a callable of the epoch (an int) returning a factor, or a list/tuple of them,
    one per param group (ValueError "Expected N lr_lambdas, but got M" otherwise, as torch).
    ``state_dict()`` saves the ``__dict__`` of callable objects and None for plain functions,
    as :class:`LambdaLR`."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _per_group(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    state_dict = LambdaLR.state_dict
    load_state_dict = LambdaLR.load_state_dict

    def get_lr(self):
        """The current rates times ``lr_lambda(last_epoch)`` (unchanged at construction), a list
        of floats, one per param group. Outside ``step()`` it warns, as
        :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * lmbda(self.last_epoch)
                for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class ConstantLR(LRScheduler):
    """Multiply the initial lr by ``factor`` until epoch ``total_iters``, then restore it:
    lr = base_lr * factor for epoch < total_iters, base_lr afterwards.

    Args: ``factor`` (default 1/3), ``total_iters`` (5). Raises ValueError "Constant
    multiplicative factor expected to be between 0 and 1." unless 0 <= factor <= 1, as torch."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current rates times ``factor`` at epoch 0, divided by it at epoch
        ``total_iters``, unchanged otherwise (a list of floats, one per param group). Outside
        ``step()`` it warns, as :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters)
                           * (1 - self.factor)) for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the initial lr by a factor going linearly from ``start_factor`` (epoch 0) to
    ``end_factor`` (epoch ``total_iters`` and after):
    lr = base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters).

    Args: ``start_factor`` (default 1/3), ``end_factor`` (1.0), ``total_iters`` (5). Raises
    ValueError "Starting multiplicative factor expected to be greater than 0 and less or equal
    to 1." unless 0 < start_factor <= 1, and "Ending multiplicative factor expected to be
    between 0 and 1." unless 0 <= end_factor <= 1, as torch."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The next rates by the recursive linear formula (times ``start_factor`` at epoch 0,
        unchanged when resuming and after ``total_iters``), a list of floats, one per param
        group. ZeroDivisionError for ``total_iters=0`` once stepped. Outside ``step()`` it
        warns, as :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        return [group["lr"] * (1.0 + delta / (self.total_iters * self.start_factor
                                              + (self.last_epoch - 1) * delta))
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the initial lr polynomially to 0 over ``total_iters`` epochs:
    lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power.

    Args: ``total_iters`` (default 5), ``power`` (1.0)."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The next rates by the recursive polynomial formula (unchanged at construction and
        after ``total_iters``), a list of floats, one per param group. Outside ``step()`` it
        warns, as :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        decay_factor = ((1.0 - self.last_epoch / self.total_iters)
                        / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing from the initial lr to ``eta_min`` over ``T_i`` epochs, restarting
    at the initial lr; ``T_i`` starts at ``T_0`` and is multiplied by ``T_mult`` at each restart::

        lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2

    Source: I. Loshchilov, F. Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts"
    (ICLR 2017). ``step(epoch)`` accepts fractional epochs (e.g. ``epoch + i / iters`` inside an
    epoch) without a deprecation warning, as torch. This scheduler does not count steps, so it
    never warns about the ``optimizer.step()`` order (as torch).

    Raises ValueError "Expected positive integer T_0, but got ...", "Expected integer T_mult >=
    1, but got ...", "Expected float or int eta_min, but got ... of type ...", and in
    ``step(epoch)`` "Expected non-negative epoch, but got ..." (all as torch)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The rates at the current ``T_cur`` / ``T_i`` by the closed cosine formula, a list of
        floats, one per param group. Outside ``step()`` it warns, as
        :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or jump to ``epoch`` (may be fractional; the restart cycle is
        computed from it). ValueError for a negative ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i   # == T_cur - T_i unless resumed far ahead
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for param_group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(param_group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class CyclicLR(LRScheduler):
    """Cyclical learning rates: the lr goes linearly from ``base_lr`` up to ``max_lr`` over
    ``step_size_up`` steps and back down over ``step_size_down`` steps, the amplitude scaled by
    a policy; momentum (or Adam's beta1) cycles the other way, between ``max_momentum`` and
    ``base_momentum``, when ``cycle_momentum``.

    Source: L. Smith, "Cyclical Learning Rates for Training Neural Networks" (WACV 2017).
    Policies (``mode``): 'triangular' (scale 1), 'triangular2' (halved each cycle), 'exp_range'
    (``gamma ** iteration``), or a custom ``scale_fn`` of the cycle number (``scale_mode=
    'cycle'``) or of the iteration ('iterations'). Construction sets each group's lr to
    ``base_lr`` (and its momentum to ``max_momentum``); ``base_lr``, ``max_lr``,
    ``base_momentum``, ``max_momentum`` may be lists, one value per param group.

    Raises ValueError "mode is invalid and scale_fn is None" for an unknown mode without
    ``scale_fn``, "optimizer must support momentum or beta1 with `cycle_momentum` option
    enabled" for an optimizer with neither option, and "NAME must have the same length as
    optimizer.param_groups. ..." for a list of the wrong length (all as torch). ``state_dict()`` keeps a custom ``scale_fn``'s
    ``__dict__`` only when it is a callable object (None for a function), as torch."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                if isinstance(group["lr"], Tensor):
                    group["lr"].fill_(lr.item() if isinstance(lr, Tensor) else lr)
                else:
                    group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_ref = None
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _check_cycle_momentum(optimizer)
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m, b, group in zip(self.max_momentums, self.base_momentums,
                                       optimizer.param_groups):
                    _set_momentum(group, m, self.use_beta1)
                    group["max_momentum"] = m
                    group["base_momentum"] = b
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = _triangular_scale
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = _triangular2_scale
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = functools.partial(_exp_range_scale, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude scale at cycle (or iteration) ``x``: the custom ``scale_fn`` when given,
        else the ``mode``'s policy."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def get_lr(self):
        """The rates at ``last_epoch`` (a list of floats, one per param group); also writes the
        cycled momentum into the param groups when ``cycle_momentum``. Outside ``step()`` it
        warns, as :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        arg = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * self.scale_fn(arg)
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, b, m in zip(self.optimizer.param_groups, self.base_momentums,
                                   self.max_momentums):
                _set_momentum(group, m - (m - b) * scale_factor * self.scale_fn(arg),
                              self.use_beta1)
        return lrs

    def state_dict(self):
        """As the base class, without the built-in scale function; a custom ``scale_fn`` is
        saved as its ``__dict__`` when it is a callable object, as None for a function."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_scale_fn_ref", "_scale_fn_custom")}
        fn = self._scale_fn_custom
        state["_scale_fn_custom"] = (fn.__dict__.copy() if fn is not None
                                     and not isinstance(fn, types.FunctionType) else None)
        return state

    def load_state_dict(self, state_dict):
        """Restore a :meth:`state_dict` (a custom ``scale_fn`` object gets its saved
        ``__dict__`` back); KeyError when ``'_scale_fn_custom'`` is missing, as torch."""
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


def _triangular_scale(x):
    return 1.0


def _triangular2_scale(x):
    return 1 / (2.0 ** (x - 1))


def _exp_range_scale(gamma, x):
    return gamma ** x


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the lr rises from ``max_lr / div_factor`` to ``max_lr`` over the first
    ``pct_start`` of ``total_steps`` steps, then falls to ``initial_lr / final_div_factor``
    (with ``three_phase``: back down to the initial lr by ``2 * pct_start``, then to the
    minimum); momentum (or Adam's beta1) moves the opposite way between ``max_momentum`` and
    ``base_momentum`` when ``cycle_momentum``. Each phase anneals with cosine
    (``end + (start - end) / 2 * (cos(pi * pct) + 1)``) or linearly.

    Source: L. Smith, N. Topin, "Super-Convergence: Very Fast Training of Neural Networks Using
    Large Learning Rates" (2018); the two-phase default follows fastai, as torch. Construction
    writes ``initial_lr``, ``max_lr``, ``min_lr`` (and ``max_momentum``, ``base_momentum``)
    into each param group. Not chainable: every rate is computed from ``last_epoch``.

    Raises ValueError (messages as torch): "Expected positive integer total_steps, but got
    ...", "Expected positive integer epochs, but got ...", "Expected positive integer
    steps_per_epoch, but got ...", "You must define either total_steps OR (epochs AND
    steps_per_epoch)", "Expected float between 0 and 1 pct_start, but got ...",
    "anneal_strategy must be one of 'cos' or 'linear', instead got ...", "max_lr must have the
    same length as optimizer.param_groups. ...", "optimizer must support momentum or beta1 with `cycle_momentum` option
    enabled"; and at a step past the end "Tried to step N times. The specified number of total
    steps is T"."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")

        def phase(end_step, start_lr, end_lr, start_m, end_m):
            return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                    "start_momentum": start_m, "end_momentum": end_m}

        up_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                phase(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                      "base_momentum", "max_momentum"),
                phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                      "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                phase(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                      "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy

        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, self.optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            self.use_beta1 = _check_cycle_momentum(self.optimizer)
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m, b, group in zip(max_momentums, base_momentums, optimizer.param_groups):
                    _set_momentum(group, m, self.use_beta1)
                    group["max_momentum"] = m
                    group["base_momentum"] = b
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, *args):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(*args)
        return self._annealing_linear(*args)

    @staticmethod
    def _annealing_cos(start, end, pct):
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        """Linear from ``start`` (pct 0) to ``end`` (pct 1)."""
        return (end - start) * pct + start

    def get_lr(self):
        """The rates at ``last_epoch`` from the phase it falls in (a list of floats, one per
        param group); also writes the cycled momentum into the param groups. ValueError past
        ``total_steps``. Outside ``step()`` it warns, as :meth:`LRScheduler.get_lr` says."""
        _warn_get_lr_called_within_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end_step = ph["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[ph["start_lr"]], group[ph["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[ph["start_momentum"]],
                                                     group[ph["end_momentum"]], pct)
                    break
                start_step = ph["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(group, momentum, self.use_beta1)
        return lrs


class ReduceLROnPlateau(LRScheduler):
    """Reduce the lr by ``factor`` when a metric has not improved for ``patience`` epochs.

    ``step(metrics)`` takes the monitored value (anything ``float()`` accepts). It is better
    than the best so far when, for ``mode='min'``, it is below ``best * (1 - threshold)``
    (``threshold_mode='rel'``) or ``best - threshold`` ('abs'); for 'max', above
    ``best * (1 + threshold)`` or ``best + threshold``. More than ``patience`` epochs without
    improvement reduce every group's lr to ``max(lr * factor, min_lr)`` (skipped when the
    change is at most ``eps``), then ``cooldown`` epochs pass before counting again. Not
    chainable; no ``get_lr``; does not check the ``optimizer.step()`` order.

    Raises ValueError "Factor should be < 1.0." for ``factor >= 1``, "mode MODE is unknown!",
    "threshold mode MODE is unknown!", "expected N min_lrs, got M"; TypeError for a
    non-Optimizer; and at a reduction, RuntimeError when groups were added after construction
    with a list ``min_lr`` (all as torch). ``step(metrics, epoch)`` warns (deprecated)."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Record one epoch's metric and reduce the rates if it has plateaued."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    "The number of param groups in the `optimizer` "
                    f"({len(groups)}) differs from when `ReduceLROnPlateau` was initialized "
                    f"({len(self.min_lrs)}), usually due to a new param group being added to "
                    "the optimizer. Please modify the `min_lrs` field to match the length of "
                    "the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, group in enumerate(groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _update_param_group_val(group, "lr", new_lr)

    @property
    def in_cooldown(self):
        """True while the cooldown after a reduction lasts."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Restore a :meth:`state_dict` (every attribute, unchecked) and re-derive the
        comparison from its mode / threshold settings."""
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


def _check_schedulers(kind, schedulers, optimizer):
    """The checks SequentialLR and ChainedScheduler make on their schedulers."""
    for idx, sched in enumerate(schedulers):
        if not hasattr(sched, "optimizer"):
            raise TypeError(f"{kind} at index {idx} should have `optimizer` as its attribute.")
        if isinstance(sched, ReduceLROnPlateau):
            raise ValueError(f"{kind} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {idx} in the given schedulers sequence.")
        if optimizer != sched.optimizer:
            raise ValueError(f"{kind} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {sched.__class__.__name__} at index {idx} has "
                             f"{sched.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


def _composite_state_dict(self):
    state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [s.state_dict() for s in self._schedulers]
    return state


def _composite_load_state_dict(self, state_dict):
    schedulers = state_dict.pop("_schedulers")
    self.__dict__.update(state_dict)
    state_dict["_schedulers"] = schedulers
    for sched, sd in zip(self._schedulers, schedulers):
        sched.load_state_dict(sd)


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after the other: the i-th takes over at epoch ``milestones[i-1]``
    (starting from its own epoch 0, by its closed form where it has one).

    Construction resets the groups' lr to ``initial_lr``, undoes the first step every given
    scheduler took at its construction, and re-runs it for the first one only.
    ``state_dict()`` nests the schedulers' own state dicts under ``'_schedulers'``.

    Raises ValueError "SequentialLR expects at least one scheduler, but got no scheduler.",
    "Sequential Schedulers expects number of schedulers provided to be one more than the number
    of milestone points, ...", for a ReduceLROnPlateau or a scheduler of another optimizer;
    TypeError for an object without ``optimizer`` (messages as torch)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but "
                             "got no scheduler.")
        _check_schedulers(self.__class__.__name__, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in self.optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        self._schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    def recursive_undo(self, sched=None):
        """Step back ``last_epoch`` by one in every (nested) scheduler."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self):
        """Advance one epoch, stepping the scheduler whose turn it is (restarted at epoch 0 on
        its milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            _step_at_epoch(scheduler, 0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    state_dict = _composite_state_dict
    load_state_dict = _composite_load_state_dict


def _step_at_epoch(sched, epoch):
    """Move ``sched`` to ``epoch`` (SequentialLR's restart at a milestone), as torch: by the
    closed form where the scheduler has one, without the deprecation warning, without counting
    a step (so without the ``optimizer.step()`` order check). A scheduler with its own ``step``
    (CosineAnnealingWarmRestarts) gets ``step(epoch)``."""
    if type(sched).step is not LRScheduler.step:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            sched.step(epoch)
    else:
        sched._update_lr(epoch)


class ChainedScheduler(LRScheduler):
    """Step several chainable schedulers together: one ``step()`` calls each one's ``step()`` in
    order, so their multiplicative effects compose. ``get_last_lr()`` reads the rates of the
    last scheduler's optimizer.

    Raises ValueError "ChainedScheduler expects at least one scheduler to be chained, but got
    no scheduler.", for a ReduceLROnPlateau or a scheduler of another optimizer; TypeError for
    an object without ``optimizer`` (messages as torch)."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    def step(self):
        """Step every scheduler once, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")

    state_dict = _composite_state_dict
    load_state_dict = _composite_load_state_dict
