"""Optimizer: the base class, with torch's param_groups / state / state_dict interface.

An optimizer holds ``param_groups`` (a list of dicts: ``'params'`` plus that group's options,
defaults filled in from the constructor) and ``state`` (a dict from parameter to its per-parameter
state, e.g. momentum buffers). ``state_dict()`` replaces parameters by integer ids, exactly as
torch's does, so it can be loaded into a fresh optimizer over the same parameters.

Subclasses implement ``step`` by calling one ``_update`` helper per parameter that changes
``p._data`` (a NumPy array) in place; that helper is the only place values change.
"""
from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from itertools import chain

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import user_stacklevel
from ..nn.modules.module import _zero_grad

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton marking an option a param group must set (torch.optim.optimizer.required)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    from ..nn.modules.module import _typename as tn
    return tn(obj)


class Optimizer:
    """Base class for all optimizers.

    ``params``: an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (param groups:
    ``{'params': [...], 'lr': ...}``); ``defaults``: the options a group gets unless it sets them.
    TypeError for a single Tensor or a set; ValueError for an empty list or a parameter in two
    groups.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ---- state dict --------------------------------------------------------------------------
    def state_dict(self):
        """``{'state': {id: {...}}, 'param_groups': [{..., 'params': [ids]}]}`` with parameters
        replaced by integer ids in group order. The state tensors are the live ones (as torch)."""
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()`` taken from an optimizer over parameters of the same shapes,
        in the same group structure (ValueError otherwise). State tensors are copied and cast to
        each parameter's floating dtype; ``step`` counters are kept as they are."""
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, key=None):
            if isinstance(value, Tensor):
                from .._tensor import _make
                arr = value._data
                if key != "step" and param._data.dtype.kind == "f":
                    arr = arr.astype(param._data.dtype)
                return _make(np.array(arr, copy=True))
            elif isinstance(value, dict):
                return {k: _cast(param, v, key=k) for k, v in value.items()}
            elif isinstance(value, (list, tuple)):
                return type(value)(_cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

    # ---- gradients and steps -----------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every optimized tensor: to None (default) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p._grad = None      # (what _zero_grad does then, without a call per tensor)
                else:
                    _zero_grad(p, False)

    def step(self, closure=None):
        """Perform one optimization step (subclasses implement it)."""
        raise NotImplementedError

    def _run_closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def add_param_group(self, param_group):
        """Add a group ``{'params': [...], option: value, ...}``; options it does not set take
        the optimizer's defaults. ValueError if a parameter already belongs to a group, if a
        required option is missing, or for a non-leaf tensor; TypeError for a non-Tensor."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=user_stacklevel())

        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError(f"all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current} to the optimizer")
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _grad_array(p):
    """The gradient of ``p`` as an array, or None when it has none (the step skips it)."""
    g = p._grad
    return None if g is None else g._data


_no_grad = no_grad
