"""The op database: one :class:`OpInfo` row per public op, each with its sample inputs.

A row names the tapegrad callable, its torch equivalent and a ``sample_inputs(dtype)`` generator of
:class:`SampleInput` s holding NumPy arrays (so the same sample builds tapegrad tensors and torch
tensors). ``tests/test_ops.py`` iterates ``op_db`` × samples for forward values, gradients and node
names against torch, gradcheck and gradgradcheck.

Adding an op: one row here (and, for a new public name, nothing else). Samples should be small
(gradcheck perturbs every element) and cover what can go wrong: 0-d tensors, broadcasting,
negative dims, keepdim, tuple dims, a non-contiguous input, empty tensors where meaningful, ties
for max-like ops, and the kinks where torch picks a subgradient (``gradcheck=False`` there: finite
differences cannot see a subgradient, but the values and gradients are still compared with torch).

Conventions inside a sample:

* every ``np.ndarray`` (also inside lists/tuples, e.g. ``cat``'s list or a ``__getitem__`` index)
  becomes a tensor; floating ones require grad when the op supports grad;
* :class:`NoGrad` wraps an array that becomes a tensor that does not require grad (torch cannot
  differentiate it, e.g. ``nll_loss``'s ``weight``);
* :class:`Attr` names a module attribute resolved in the framework under test
  (``Attr("float64")`` is ``tapegrad.float64`` / ``torch.float64``).
"""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any, Callable

import numpy as np

__all__ = ["OpInfo", "SampleInput", "NoGrad", "Attr", "op_db", "op_db_by_name",
           "expected_node_name_differences", "not_ops", "make_tensors", "resolve"]


# ---- samples ------------------------------------------------------------------------------------
@dataclasses.dataclass
class SampleInput:
    """``op(input, *args, **kwargs)``. ``gradcheck=False`` marks a point where the function is not
    differentiable (ties, kinks): compared with torch only. ``gradgradcheck`` defaults to
    ``gradcheck``."""

    input: Any
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    name: str = ""
    gradcheck: bool = True
    gradgradcheck: bool | None = None

    def __post_init__(self):
        if self.gradgradcheck is None:
            self.gradgradcheck = self.gradcheck

    def __repr__(self):
        return f"SampleInput({self.name or _summary(self.input)})"


@dataclasses.dataclass(frozen=True)
class NoGrad:
    """An array that becomes a tensor that does not require grad."""
    array: np.ndarray


@dataclasses.dataclass(frozen=True)
class Attr:
    """``getattr(module, name)`` in the framework under test (e.g. a dtype)."""
    name: str


def _summary(x):
    if isinstance(x, np.ndarray):
        return f"{x.dtype}{list(x.shape)}"
    if isinstance(x, (list, tuple)):
        return "[" + ",".join(_summary(e) for e in x) + "]"
    return repr(x)


def clone_layout(a):
    """A writable copy of ``a`` with the same strides pattern (a transposed array stays
    transposed, a stepped slice stays non-contiguous)."""
    if a.flags.c_contiguous or a.size <= 1:
        return np.array(a, copy=True, order="C")
    c = a.copy(order="K")
    if c.flags.c_contiguous or c.flags.f_contiguous or c.strides == a.strides:
        return c
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    v = big[..., ::2]
    v[...] = a
    return v


def make_tensors(obj, module, requires_grad=True, leaves=None):
    """Turn the arrays in a sample value into tensors of ``module`` (tapegrad or torch).

    Floating arrays require grad when ``requires_grad``; those tensors are appended to ``leaves``
    (when given) in the order met, so both frameworks list them identically."""
    if isinstance(obj, np.ndarray):
        t = module.from_numpy(clone_layout(obj))
        if requires_grad and obj.dtype.kind == "f":
            t.requires_grad_(True)
            if leaves is not None:
                leaves.append(t)
        return t
    if isinstance(obj, NoGrad):
        return module.from_numpy(clone_layout(obj.array))
    if isinstance(obj, Attr):
        return getattr(module, obj.name)
    if isinstance(obj, list):
        return [make_tensors(e, module, requires_grad, leaves) for e in obj]
    if isinstance(obj, tuple):
        return tuple(make_tensors(e, module, requires_grad, leaves) for e in obj)
    if isinstance(obj, dict):
        return {k: make_tensors(v, module, requires_grad, leaves) for k, v in obj.items()}
    return obj


def resolve(module, path):
    """``resolve(torch, "nn.functional.softmax")`` -> torch.nn.functional.softmax."""
    obj = module
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


# ---- rows ---------------------------------------------------------------------------------------
@dataclasses.dataclass
class OpInfo:
    """One op.

    ``op``: the tapegrad callable (default: ``tapegrad.<name>``, or the ``nn.functional`` /
    ``linalg`` entry for a ``nn.functional.X`` / ``linalg.X`` name). ``torch_op``: ``lambda torch: torch.exp``-style callable taking the
    torch module, or a dotted name path (default: ``name``). ``method``: call
    ``input.<method>(*args)`` in both frameworks instead (dunders, ``view``, ``to``, ...);
    ``attr``: read ``input.<attr>`` (``.T``). ``sample_inputs_func(make, dtype)`` builds the
    samples; ``make(*shape, low=, high=)`` draws uniform values in ``domain`` (seeded per op).
    ``supports_grad=False``: no gradient tests (comparisons, argmax, ...); ``gradcheck=False``:
    gradients compared with torch only. ``aliases``: other public names of the same function.
    """

    name: str
    op: Callable | None = None
    torch_op: Callable | str | None = None
    sample_inputs_func: Callable | None = None
    supports_grad: bool = True
    gradcheck: bool = True
    domain: tuple = (-2.0, 2.0)
    method: str | None = None
    attr: str | None = None
    aliases: tuple = ()

    def get_op(self):
        if self.op is not None:
            return self.op
        if self.method is not None:
            m = self.method
            return lambda x, *a, **k: getattr(x, m)(*a, **k)
        if self.attr is not None:
            at = self.attr
            return lambda x: getattr(x, at)
        from ..ops import PUBLIC
        from ..ops._registry import FUNCTIONAL, LINALG
        if self.name.startswith("nn.functional."):
            return FUNCTIONAL[self.name.rsplit(".", 1)[1]]
        if self.name.startswith("linalg."):
            return LINALG[self.name.split(".", 1)[1]]
        return PUBLIC[self.name]

    def get_torch_op(self, torch):
        if self.torch_op is None:
            if self.method is not None or self.attr is not None:
                return self.get_op()  # the same duck-typed call
            return resolve(torch, self.name)
        if isinstance(self.torch_op, str):
            return resolve(torch, self.torch_op)
        return self.torch_op(torch)

    def sample_inputs(self, dtype=np.float64):
        """The samples in NumPy dtype ``dtype`` (float32 or float64), the same on every call."""
        dtype = np.dtype(getattr(dtype, "np", dtype))
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        lo0, hi0 = self.domain

        def make(*shape, low=None, high=None):
            lo = lo0 if low is None else low
            hi = hi0 if high is None else high
            return rng.uniform(lo, hi, size=shape).astype(dtype)

        return list(self.sample_inputs_func(make, dtype))


S = SampleInput


def _a(values, dtype):
    return np.array(values, dtype=dtype)


def _i(values):
    return np.array(values, np.int64)


# ---- sample generators ---------------------------------------------------------------------------
def s_unary(make, dt):
    return [S(make(), name="0d"), S(make(5), name="1d"), S(make(2, 3), name="2d"),
            S(make(3, 2).T, name="noncontig"), S(make(0, 3), name="empty")]


def s_unary_with_int(make, dt):
    return s_unary(make, dt) + [S(_a([1, 2, 3], np.int64), name="int")]


def s_abs(make, dt):
    return s_unary(make, dt) + [
        S(_a([-1.5, 0.0, 2.0, -0.0], dt), name="zero", gradgradcheck=False)]


def s_relu(make, dt):
    return s_unary(make, dt) + [S(_a([-1.5, 0.0, 2.0], dt), name="zero", gradcheck=False)]


def s_sign(make, dt):
    return s_unary(make, dt) + [S(_a([-1.5, 0.0, 2.0], dt), name="zero", gradcheck=False)]


def s_binary(make, dt):
    return [
        S(make(2, 3), (make(2, 3),), name="same"),
        S(make(3, 1), (make(4),), name="bcast"),
        S(make(), (make(2, 3),), name="0d_lhs"),
        S(make(2, 3), (make(),), name="0d_rhs"),
        S(make(2, 3), (2.5,), name="pyfloat"),
        S(make(2, 3), (2,), name="pyint"),
        S(make(3, 2).T, (make(2, 3),), name="noncontig"),
        S(make(0, 3), (make(3),), name="empty"),
        S(make(2, 3), (_a([1, -2, 3], np.int64),), name="int_tensor"),
    ]


def s_add(make, dt):
    return s_binary(make, dt) + [S(make(2, 3), (make(3),), {"alpha": 2.0}, name="alpha")]


def s_div(make, dt):
    out = [s for s in s_binary(make, dt) if s.name not in ("same", "bcast", "noncontig", "0d_lhs",
                                                           "empty")]
    out += [
        S(make(2, 3), (make(2, 3, low=0.5, high=2.0),), name="same"),
        S(make(3, 1), (make(4, low=-2.0, high=-0.5),), name="bcast"),
        S(make(), (make(2, 3, low=0.5, high=2.0),), name="0d_lhs"),
        S(make(3, 2).T, (make(2, 3, low=0.5, high=2.0),), name="noncontig"),
        S(_a([[1, 2], [3, 4]], np.int64), (_a([2, 3], np.int64),), name="int_int"),
        S(make(2, 3), (make(3, low=0.5, high=2.0),), {"rounding_mode": "floor"}, name="floor",
          gradcheck=False),
        S(make(2, 3), (make(3, low=0.5, high=2.0),), {"rounding_mode": "trunc"}, name="trunc",
          gradcheck=False),
    ]
    return out


def s_minmax_pair(make, dt):
    return [
        S(make(2, 3), (make(2, 3),), name="same"),
        S(make(3, 1), (make(4),), name="bcast"),
        S(make(), (make(2, 3),), name="0d"),
        S(make(3, 2).T, (make(2, 3),), name="noncontig"),
        S(_a([1.0, 2.0, -3.0, 0.5], dt), (_a([1.0, 5.0, -3.0, 0.0], dt),), name="ties",
          gradgradcheck=False),
    ]


def s_pow(make, dt):
    return [
        S(make(2, 3), (2,), name="square"),
        S(make(2, 3), (3,), name="cube"),
        S(make(2, 3, low=0.5, high=2.0), (0.5,), name="sqrt"),
        S(make(2, 3, low=0.5, high=2.0), (-1.5,), name="negfloat"),
        S(make(2, 3), (0,), name="zero_exp"),
        S(make(), (2.0,), name="0d"),
        S(make(2, 3, low=0.5, high=2.0), (make(2, 3),), name="tensor_tensor"),
        S(make(3, 1, low=0.5, high=2.0), (make(4),), name="tensor_bcast"),
        # at base 0 the double backward is nan in torch too (log(0) under where)
        S(_a([0.0, 1.5], dt), (_a([2.0, 3.0], dt),), name="zero_base", gradgradcheck=False),
        S(2.0, (make(2, 3),), name="scalar_base"),
        S(0.0, (make(3, low=0.5, high=2.0),), name="zero_scalar_base", gradgradcheck=False),
        S(make(0, 2), (2,), name="empty"),
    ]


def s_where(make, dt):
    c = np.array([[True, False, True], [False, False, True]])
    return [
        S(c, (make(2, 3), make(2, 3)), name="same"),
        S(c[0], (make(2, 1), make(3)), name="bcast"),
        S(c, (make(2, 3), 0.0), name="scalar_other"),
        S(c, (1.5, make(2, 3)), name="scalar_input"),
        S(np.array(True), (make(), make()), name="0d"),
        S(c, name="nonzero"),
    ]


def s_clamp(make, dt):
    return [
        S(make(2, 3), (-0.5, 0.5), name="both"),
        S(make(2, 3), (-0.5,), name="min"),
        S(make(2, 3), (None, 0.5), name="max"),
        S(make(), (-0.5, 0.5), name="0d"),
        S(make(3, 2).T, (-0.5, 0.5), name="noncontig"),
        S(_a([-1.0, -0.5, 0.0, 0.5, 1.0], dt), (-0.5, 0.5), name="boundary", gradcheck=False),
        S(make(2, 3), (make(3, low=-1.5, high=-0.5), make(2, 1, low=0.5, high=1.5)),
          name="tensor_bounds"),
        S(make(2, 3), (make(3, low=-1.0, high=0.0),), name="tensor_min"),
    ]


def s_clamp_one(make, dt):
    return [
        S(make(2, 3), (0.3,), name="number"),
        S(make(), (0.3,), name="0d"),
        S(make(3, 2).T, (0.3,), name="noncontig"),
        S(make(2, 3), (make(3, low=-0.5, high=0.5),), name="tensor"),
    ]


def s_compare(make, dt):
    a = _a([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dt)
    b = _a([[1.0, 0.0, 3.5], [4.0, 7.0, 6.0]], dt)
    return [S(a, (b,), name="same"), S(make(3, 1), (make(4),), name="bcast"),
            S(a, (3.0,), name="scalar"), S(make(), (make(),), name="0d"),
            S(a, (_a([1, 5, 3], np.int64),), name="int_tensor"),
            S(make(0, 3), (make(3),), name="empty")]


def s_logical(make, dt):
    a = _a([[0.0, 1.0, -2.0], [0.0, 0.0, 3.0]], dt)
    return [S(a, (_a([0.0, 2.0, 0.0], dt),), name="float"),
            S(np.array([True, False, True]), (np.array([True, True, False]),), name="bool"),
            S(a, (np.array([[True], [False]]),), name="mixed")]


def s_logical_not(make, dt):
    return [S(_a([[0.0, 1.0, -2.0]], dt), name="float"),
            S(np.array([True, False]), name="bool"), S(_a(0.0, dt), name="0d")]


def s_isnan(make, dt):
    return [S(_a([1.0, np.nan, np.inf, -np.inf, 0.0], dt), name="special"),
            S(make(2, 3), name="plain"), S(make(), name="0d")]


def s_equal(make, dt):
    a = make(2, 3)
    return [S(a, (a.copy(),), name="equal"), S(a, (make(2, 3),), name="differ"),
            S(a, (make(3, 2),), name="shapes")]


def s_allclose(make, dt):
    a = make(2, 3)
    return [S(a, (a + dt.type(1e-9),), name="close"), S(a, (make(2, 3),), name="far"),
            S(a, (a * dt.type(1.01),), {"rtol": 0.1}, name="rtol")]


def s_sum(make, dt):
    return [
        S(make(2, 3), name="all"), S(make(), name="0d"),
        S(make(2, 3, 4), (1,), name="dim"), S(make(2, 3, 4), (-1,), name="negdim"),
        S(make(2, 3, 4), ((0, 2),), name="tuple"),
        S(make(2, 3, 4), ((0, -1), True), name="keepdim"),
        S(make(2, 3), (1,), {"keepdim": True}, name="keepdim_kw"),
        S(make(3, 2).T, (0,), name="noncontig"), S(make(0, 3), (0,), name="empty"),
        S(make(0, 3), name="empty_all"), S(make(), (0,), name="0d_dim"),
        S(_a([[1, 2], [3, 4]], np.int64), name="int"),
        S(make(2, 3), (1,), {"dtype": Attr("float64")}, name="dtype"),
    ]


def s_mean(make, dt):
    return [s for s in s_sum(make, dt) if s.name not in ("int", "dtype")]


def s_max(make, dt):
    return [
        S(make(2, 3), name="all"), S(make(), name="0d"),
        S(_a([[1.0, 3.0], [3.0, -1.0]], dt), name="ties2", gradgradcheck=False),
        S(_a([[3.0, 1.0, 3.0], [3.0, -1.0, 0.0]], dt), name="ties3", gradcheck=False),
        S(make(2, 3, 4), (1,), name="dim"), S(make(2, 3, 4), (-1, True), name="keepdim"),
        S(make(3, 2).T, (0,), name="noncontig"), S(make(), (0,), name="0d_dim"),
        S(_a([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], dt), (1,), name="dim_ties", gradcheck=False),
        S(make(2, 3), (make(2, 3),), name="other"),
        S(make(0, 3), (1,), name="empty_dim"),
    ]


def s_amax(make, dt):
    return [
        S(make(2, 3), name="all"), S(make(), name="0d"),
        S(make(2, 3, 4), (1,), name="dim"), S(make(2, 3, 4), ((0, -1),), name="tuple"),
        S(make(2, 3, 4), (-1, True), name="keepdim"), S(make(3, 2).T, (0,), name="noncontig"),
        S(_a([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], dt), (1,), name="ties2", gradgradcheck=False),
        S(_a([[3.0, 3.0, 3.0], [2.0, 2.0, 2.0]], dt), (1,), name="ties3", gradcheck=False),
        S(make(0, 3), (1,), name="empty"),
    ]


def s_logsumexp(make, dt):
    return [
        S(make(2, 3), (1,), name="dim"), S(make(2, 3, 4), ((0, 2),), name="tuple"),
        S(make(2, 3), (-1, True), name="keepdim"), S(make(), (0,), name="0d"),
        S(make(3, 2).T, (0,), name="noncontig"),
        S(_a([[1000.0, 1000.5, 999.0], [-1000.0, -999.0, -1001.0]], dt), (1,), name="large"),
        S(make(0, 3), (1,), name="empty"),
    ]


def s_argmax(make, dt):
    return [S(make(2, 3), name="all"), S(make(2, 3, 4), (1,), name="dim"),
            S(make(2, 3), (-1, True), name="keepdim"), S(make(), name="0d"),
            S(make(2, 3), (None, True), name="all_keepdim")]


def s_all(make, dt):
    b = np.array([[True, False, True], [True, True, True]])
    return [S(b, name="bool"), S(b, (1,), name="dim"), S(b, (0, True), name="keepdim"),
            S(_a([[0.0, 1.0], [2.0, 3.0]], dt), name="float"),
            S(np.zeros((0, 2), bool), name="empty")]


def s_reshape(make, dt):
    # torch.reshape takes the shape as one tuple (Tensor.reshape also takes ints: see view)
    return [S(make(2, 6), ((3, 4),), name="basic"), S(make(2, 6), ((-1,),), name="flat"),
            S(make(2, 6), ((4, -1),), name="infer"), S(make(6, 2).T, ((3, 4),), name="noncontig"),
            S(make(), ((1,),), name="0d"), S(make(0, 3), ((3, 0),), name="empty")]


def s_view(make, dt):
    return [S(make(2, 6), (3, 4), name="basic"), S(make(2, 6), (-1,), name="flat"),
            S(make(2, 6), ((4, -1),), name="tuple"), S(make(), (1,), name="0d"),
            S(make(1, 4), (4, 1), name="unit")]


def s_flatten(make, dt):
    return [S(make(2, 3, 4), name="all"), S(make(2, 3, 4), (1,), name="start"),
            S(make(2, 3, 4), (0, -2), name="end"), S(make(), name="0d"),
            S(make(4, 3, 2).transpose(2, 1, 0), name="noncontig"),
            S(make(2, 3), (1, 1), name="noop")]


def s_unflatten(make, dt):
    return [S(make(2, 6), (1, (2, 3)), name="basic"), S(make(2, 6), (-1, (3, -1)), name="infer"),
            S(make(6), (0, (2, 3)), name="1d")]


def s_permute(make, dt):
    return [S(make(2, 3, 4), ((2, 0, 1),), name="basic"),
            S(make(2, 3, 4), ((-1, 0, 1),), name="neg"),
            S(make(), ((),), name="0d"), S(make(3, 2).T, ((1, 0),), name="noncontig")]


def s_transpose(make, dt):
    return [S(make(2, 3, 4), (0, 2), name="basic"), S(make(2, 3, 4), (-1, -2), name="neg"),
            S(make(4), (0, 0), name="1d"), S(make(3, 2).T, (0, 1), name="noncontig")]


def s_t(make, dt):
    return [S(make(2, 3), name="2d"), S(make(4), name="1d"), S(make(), name="0d")]


def s_T(make, dt):
    return [S(make(2, 3), name="2d"), S(make(4), name="1d"), S(make(), name="0d")]


def s_mT(make, dt):
    return [S(make(2, 3), name="2d"), S(make(2, 3, 4), name="3d")]


def s_squeeze(make, dt):
    return [S(make(2, 1, 3, 1), name="all"), S(make(2, 1, 3), (1,), name="dim"),
            S(make(2, 1, 3), (0,), name="dim_not1"), S(make(2, 1, 3, 1), ((1, -1),), name="tuple"),
            S(make(), name="0d"), S(make(1, 1), (-1,), name="negdim")]


def s_unsqueeze(make, dt):
    return [S(make(2, 3), (0,), name="front"), S(make(2, 3), (-1,), name="back"),
            S(make(2, 3), (1,), name="middle"), S(make(), (0,), name="0d")]


def s_expand(make, dt):
    return [S(make(3, 1), (3, 4), name="basic"), S(make(3, 1), ((2, 3, 4),), name="new_dims"),
            S(make(3, 1), (-1, 2), name="keep"), S(make(), (2, 2), name="0d"),
            S(make(1, 3), (0, 3), name="empty")]


def s_broadcast_to(make, dt):
    return [S(make(3, 1), ((3, 4),), name="basic"), S(make(4), ((2, 3, 4),), name="new_dims"),
            S(make(), ((2,),), name="0d")]


def s_expand_as(make, dt):
    return [S(make(3, 1), (NoGrad(make(3, 4)),), name="basic"),
            S(make(1), (NoGrad(make(2, 3)),), name="new_dims")]


def s_sum_to_size(make, dt):
    return [S(make(3, 4), (1, 4), name="rows"), S(make(3, 4), ((3, 1),), name="cols"),
            S(make(3, 4), (4,), name="lead"), S(make(2, 3, 4), (3, 1), name="both"),
            S(make(3, 4), (3, 4), name="same")]


def s_clone(make, dt):
    return [S(make(2, 3), name="2d"), S(make(3, 2).T, name="noncontig"), S(make(), name="0d")]


def s_cat(make, dt):
    return [
        S([make(2, 3), make(1, 3)], name="dim0"),
        S([make(2, 3), make(2, 1), make(2, 2)], (-1,), name="neg"),
        S([make(2, 3), make(0)], name="skip_empty_1d"),
        S([make(3, 2).T, make(1, 3)], (0,), name="noncontig"),
        S([make(2, 3)], (1,), name="single"),
    ]


def s_stack(make, dt):
    return [S([make(2, 3), make(2, 3)], name="dim0"),
            S([make(2, 3), make(2, 3), make(2, 3)], (-1,), name="neg"),
            S([make(), make()], name="0d"), S([make(3, 2).T, make(2, 3)], (1,), name="noncontig")]


def s_unbind(make, dt):
    return [S(make(3, 2), name="dim0"), S(make(2, 3), (-1,), name="neg"),
            S(make(3, 2).T, (1,), name="noncontig")]


def s_split(make, dt):
    return [S(make(5, 2), (2,), name="size"), S(make(2, 5), ([1, 4], 1), name="sections"),
            S(make(4, 2), (2, -2), name="negdim")]


def s_chunk(make, dt):
    return [S(make(5, 2), (3,), name="uneven"), S(make(2, 4), (2, 1), name="dim"),
            S(make(2, 3), (3, -1), name="exact")]


def s_matmul(make, dt):
    return [
        S(make(3, 4), (make(4, 2),), name="mm"), S(make(4), (make(4),), name="dot"),
        S(make(3, 4), (make(4),), name="mv"), S(make(4), (make(4, 2),), name="vecmat"),
        S(make(2, 3, 4), (make(4, 2),), name="batched_2d"),
        S(make(2, 3, 4), (make(2, 4, 5),), name="bmm"),
        S(make(2, 1, 3, 4), (make(3, 4, 2),), name="bcast_batch"),
        S(make(3), (make(2, 3, 4),), name="vec_batched"),
        S(make(2, 3, 4), (make(4),), name="batched_vec"),
        S(make(4, 3).T, (make(4, 2),), name="noncontig"),
    ]


def s_mm(make, dt):
    return [S(make(3, 4), (make(4, 2),), name="basic"), S(make(4, 3).T, (make(4, 2),), name="nc"),
            S(make(0, 4), (make(4, 2),), name="empty")]


def s_bmm(make, dt):
    return [S(make(2, 3, 4), (make(2, 4, 5),), name="basic"),
            S(make(2, 4, 3).transpose(0, 2, 1), (make(2, 4, 2),), name="noncontig")]


def s_mv(make, dt):
    return [S(make(3, 4), (make(4),), name="basic"), S(make(4, 3).T, (make(4),), name="nc")]


def s_dot(make, dt):
    return [S(make(4), (make(4),), name="basic"), S(make(0), (make(0),), name="empty")]


def s_addmm(make, dt):
    return [S(make(2), (make(3, 4), make(4, 2)), name="bcast_bias"),
            S(make(3, 2), (make(3, 4), make(4, 2)), name="full_bias"),
            S(make(2), (make(3, 4), make(4, 2)), {"beta": 0.5, "alpha": 2.0}, name="beta_alpha"),
            S(make(3, 1), (make(3, 4), make(4, 2)), {"beta": 0}, name="beta0"),
            S(make(3, 2), (make(3, 4), make(4, 2)), {"alpha": -1.5}, name="alpha"),
            S(make(), (make(3, 4), make(4, 2)), {"beta": 2, "alpha": 3}, name="int_factors_0d")]


def s_softmax(make, dt):
    return [S(make(3, 4), (1,), name="dim1"), S(make(3, 4), (-1,), name="neg"),
            S(make(2, 3, 4), (0,), name="dim0"), S(make(), (0,), name="0d"),
            S(_a([[1000.0, 1001.0, 999.0], [-1000.0, 0.0, 1000.0]], dt), (1,), name="large"),
            S(make(4, 3).T, (1,), name="noncontig"), S(make(0, 3), (1,), name="empty"),
            S(make(3, 4), (1,), {"dtype": Attr("float64")}, name="dtype")]


def s_linear(make, dt):
    return [S(make(3, 4), (make(5, 4), make(5)), name="bias"),
            S(make(3, 4), (make(5, 4),), name="nobias"),
            S(make(4), (make(5, 4), make(5)), name="1d"),
            S(make(2, 3, 4), (make(5, 4), make(5)), name="3d")]


def s_nll_loss(make, dt):
    logp = make(3, 4)
    t = np.array([0, 3, 1], np.int64)
    return [
        S(logp, (t,), name="mean"),
        S(logp, (t,), {"reduction": "sum"}, name="sum"),
        S(logp, (t,), {"reduction": "none"}, name="none"),
        S(logp, (t,), {"weight": NoGrad(make(4, low=0.5, high=2.0))}, name="weight"),
        S(logp, (t,), {"ignore_index": 3}, name="ignore"),
        S(make(4), (np.array(2, np.int64),), name="1d"),
        *_kdim_samples(make, {}),
    ]


def _kdim_samples(make, extra, prefix=""):
    """(N, C, d1, ...) inputs with (N, d1, ...) targets: NllLoss2DBackward0, through views for
    ranks other than 4 (a target equal to ignore_index included)."""
    t3 = np.array([[0, 2, 1, 3], [3, 3, 0, 1]], np.int64)
    t4 = np.array([[[0, 2], [1, 3]], [[3, 3], [0, 1]]], np.int64)
    t5 = t4.reshape(2, 2, 2, 1)
    w = NoGrad(make(4, low=0.5, high=2.0))
    return [
        S(make(2, 4, 4), (t3,), extra, name=prefix + "kdim3"),
        S(make(2, 4, 4), (t3,), {**extra, "reduction": "none"}, name=prefix + "kdim3_none"),
        S(make(2, 4, 2, 2), (t4,), {**extra, "weight": w}, name=prefix + "kdim4_weight"),
        S(make(2, 4, 2, 2), (t4,), {**extra, "reduction": "none", "ignore_index": 3},
          name=prefix + "kdim4_ignore_none"),
        S(make(2, 4, 2, 2), (t4,), {**extra, "reduction": "sum"}, name=prefix + "kdim4_sum"),
        S(make(2, 4, 2, 2, 1), (t5,), {**extra, "reduction": "none", "weight": w},
          name=prefix + "kdim5_none"),
    ]


def s_cross_entropy(make, dt):
    t = np.array([0, 3, 1], np.int64)
    p = np.exp(make(3, 4))
    p = (p / p.sum(1, keepdims=True)).astype(dt)
    return [
        S(make(3, 4), (t,), name="mean"),
        S(make(3, 4), (t,), {"reduction": "sum"}, name="sum"),
        S(make(3, 4), (t,), {"reduction": "none"}, name="none"),
        S(make(3, 4), (t,), {"weight": NoGrad(make(4, low=0.5, high=2.0))}, name="weight"),
        S(make(3, 4), (t,), {"ignore_index": 1}, name="ignore"),
        S(make(4), (np.array(2, np.int64),), name="1d"),
        S(_a([[1000.0, -1000.0, 0.0, 999.0]], dt), (np.array([1], np.int64),), name="large"),
        S(make(3, 4), (p,), name="probs"),
        *_kdim_samples(make, {}),
        *_kdim_samples(make, {"label_smoothing": 0.2}, "ls_")[:2],
    ]


def s_mse_loss(make, dt):
    return [S(make(3, 4), (make(3, 4),), name="mean"),
            S(make(3, 4), (make(3, 4),), {"reduction": "sum"}, name="sum"),
            S(make(3, 4), (make(3, 4),), {"reduction": "none"}, name="none"),
            S(make(), (make(),), name="0d"),
            S(make(3, 4), (make(4),), name="bcast"),
            S(make(3, 1), (make(4),), name="bcast_both"),
            S(make(3, 4), (NoGrad(np.arange(12, dtype=np.int64).reshape(3, 4) % 3),),
              name="int_target"),
            *_weighted_loss_samples(make)]


def _weighted_loss_samples(make, **kw):
    """The ``weight=`` samples shared by mse_loss, l1_loss and huber_loss (torch 2.13): the
    weight has the input's shape and may require grad; it broadcasts against a larger target."""
    w = {**kw, "weight": make(3, 4, low=0.5, high=2.0)}
    return [S(make(3, 4), (make(3, 4),), w, name="weight_mean"),
            S(make(3, 4), (make(3, 4),), {**w, "reduction": "sum"}, name="weight_sum"),
            S(make(3, 4), (make(3, 4),), {**w, "reduction": "none"}, name="weight_none"),
            S(make(4), (make(3, 4),), {**kw, "weight": make(4, low=0.5, high=2.0)},
              name="weight_bcast"),
            S(make(), (make(),), {**kw, "weight": make(low=0.5, high=2.0)}, name="weight_0d"),
            S(make(0, 3), (make(0, 3),), {**kw, "weight": make(0, 3), "reduction": "sum"},
              name="weight_empty"),
            # 'mean' of nothing is 0 / 0 = nan, which reaches the second derivative too
            S(make(0, 3), (make(0, 3),), {**kw, "weight": make(0, 3)}, name="weight_empty_mean",
              gradgradcheck=False),
            S(make(3, 4), (make(3, 4),),
              {**kw, "weight": NoGrad(np.tile(np.array([1, 0, 2, 1], np.int64), (3, 1)))},
              name="weight_int")]


def _elementwise_loss_samples(make, **kw):
    """Samples for an elementwise regression loss: each reduction, broadcasting (one and both
    operands expanded), 0-d, empty, a target that does not require grad, and the legacy flags."""
    return [S(make(3, 4), (make(3, 4),), {**kw}, name="mean"),
            S(make(3, 4), (make(3, 4),), {**kw, "reduction": "sum"}, name="sum"),
            S(make(3, 4), (make(3, 4),), {**kw, "reduction": "none"}, name="none"),
            S(make(), (make(),), {**kw}, name="0d"),
            S(make(3, 4), (make(4),), {**kw}, name="bcast"),
            S(make(3, 1), (make(4),), {**kw, "reduction": "none"}, name="bcast_both"),
            S(make(), (make(3),), {**kw, "reduction": "sum"}, name="bcast_0d"),
            S(make(0, 3), (make(0, 3),), {**kw}, name="empty"),
            S(make(0, 3), (make(0, 3),), {**kw, "reduction": "sum"}, name="empty_sum"),
            S(make(2, 3), (NoGrad(make(2, 3)),), {**kw}, name="nograd_target")]


def s_l1_loss(make, dt):
    return _elementwise_loss_samples(make) + _weighted_loss_samples(make) + [
        S(make(2, 3), (make(2, 3),), {"size_average": False}, name="legacy_sum"),
        S(make(2, 3), (make(2, 3),), {"reduce": False}, name="legacy_none"),
        S(_a([1.0, -0.5, 2.0], dt), (_a([1.0, 0.5, 2.0], dt),), name="zero_diff",
          gradcheck=False)]


def s_smooth_l1_loss(make, dt):
    return _elementwise_loss_samples(make) + [
        S(make(3, 4), (make(3, 4),), {"beta": 0.5}, name="beta_half"),
        S(make(3, 4), (make(3, 4),), {"beta": 2.5, "reduction": "none"}, name="beta_big"),
        S(make(3, 4), (make(3, 4),), {"beta": 0.0}, name="beta0_l1"),
        S(make(3, 4), (make(4),), {"beta": 0.0, "reduction": "sum"}, name="beta0_bcast"),
        S(make(2, 3), (make(2, 3),), {"size_average": False}, name="legacy_sum"),
        # the kinks: d == 0 and |d| == beta (torch's second derivative is 0 at the boundary)
        S(_a([0.5, 1.0, -1.0, 3.0], dt), (_a([0.5, 0.0, 0.0, 1.0], dt),),
          {"reduction": "none"}, name="kinks", gradcheck=False)]


def s_huber_loss(make, dt):
    return _elementwise_loss_samples(make) + _weighted_loss_samples(make, delta=0.7) + [
        S(make(3, 4), (make(3, 4),), {"delta": 0.5}, name="delta_half"),
        S(make(3, 4), (make(3, 4),), {"delta": 2.5, "reduction": "none"}, name="delta_big"),
        S(_a([0.5, 1.0, -1.0, 3.0], dt), (_a([0.5, 0.0, 0.0, 1.0], dt),),
          {"reduction": "none"}, name="kinks", gradcheck=False)]


def s_kl_div(make, dt):
    def p(*shape):
        return make(*shape, low=0.1, high=1.0)
    out = []
    for red in ("mean", "sum", "none", "batchmean"):
        out.append(S(make(3, 4, low=-3.0, high=-0.1), (p(3, 4),), {"reduction": red},
                     name=red))
        out.append(S(make(3, 4, low=-3.0, high=-0.1), (make(3, 4, low=-3.0, high=0.0),),
                     {"reduction": red, "log_target": True}, name=f"log_target_{red}"))
    return out + [
        S(make(), (p(),), {"reduction": "batchmean"}, name="0d_batchmean"),
        S(make(), (p(),), name="0d"),
        S(make(3, 4), (p(4),), {"reduction": "batchmean"}, name="bcast"),
        S(make(4), (p(3, 4),), {"reduction": "none"}, name="bcast_target_bigger"),
        # the sum of nothing divided by a batch of 0: nan, which reaches the second derivative
        S(make(0, 3), (p(0, 3),), {"reduction": "batchmean"}, name="empty_batchmean",
          gradgradcheck=False),
        S(make(0, 3), (p(0, 3),), name="empty"),
        S(make(2, 3), (NoGrad(_a([[0.0, 0.5, 0.5], [0.2, 0.0, 0.8]], dt)),),
          {"reduction": "batchmean"}, name="zero_target"),
        S(make(2, 3), (p(2, 3),), {"size_average": False}, name="legacy_sum"),
        S(make(2, 3), (p(2, 3),), {"reduce": False, "reduction": "batchmean"},
          name="legacy_none_batchmean")]


def s_poisson_nll_loss(make, dt):
    def rate(*shape):
        return make(*shape, low=0.2, high=2.0)

    def counts(*shape):
        return make(*shape, low=0.0, high=4.0)
    out = []
    for red in ("mean", "sum", "none"):
        out.append(S(make(3, 4), (counts(3, 4),), {"reduction": red}, name=red))
    return out + [
        S(rate(3, 4), (counts(3, 4),), {"log_input": False}, name="rate"),
        S(rate(3, 4), (counts(3, 4),), {"log_input": False, "eps": 0.5, "reduction": "sum"},
          name="rate_eps"),
        S(make(3, 4), (make(3, 4, low=0.2, high=4.0),), {"full": True}, name="full"),
        S(rate(3, 4), (make(3, 4, low=0.2, high=4.0),),
          {"full": True, "log_input": False, "reduction": "none"}, name="full_rate"),
        S(make(2, 3), (NoGrad(_a([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]], dt)),), {"full": True},
          name="full_integer_counts"),
        S(make(), (counts(),), name="0d"),
        S(make(3, 4), (counts(4),), name="bcast"),
        S(make(4), (counts(3, 4),), {"reduction": "none"}, name="bcast_target_bigger"),
        S(make(0, 3), (counts(0, 3),), name="empty"),
        S(make(2, 3), (counts(2, 3),), {"size_average": False}, name="legacy_sum")]


def s_getitem(make, dt):
    x = make(4, 5)
    mask = x > 0
    mask[0, 0] = True
    rows = np.array([True, False, True, True])
    return [
        S(x, (2,), name="int"), S(x, (-1,), name="negint"),
        S(x, (slice(1, 3),), name="slice"), S(x, ((slice(None), 1),), name="col"),
        S(x, ((1, slice(None, None, 2)),), name="step"),
        S(x, ((None, slice(0, 2)),), name="none_slice"),
        S(x, ((slice(1, None), None),), name="slice_none"),
        S(x, ((Ellipsis, 0),), name="ellipsis_int"), S(x, (Ellipsis,), name="ellipsis"),
        S(x, (mask,), name="mask"), S(x, (rows,), name="row_mask"),
        S(x, (np.array([0, 2, 0, 0], np.int64),), name="int_array_repeat"),
        S(x, ((np.array([0, 1, 1]), np.array([2, 2, 2])),), name="pair_repeat"),
        S(x, ((slice(None), np.array([1, 1, 3])),), name="slice_array"),
        S(x, ([0, 0, 3],), name="list"),
        S(x, (np.array([], np.int64),), name="empty_array"),
        S(make(), ((None, Ellipsis),), name="0d"),
        S(make(5, 4).T, ((slice(1, 3), 2),), name="noncontig"),
    ]


def s_to(make, dt):
    return [S(make(2, 3), (Attr("float64"),), name="float64"),
            S(make(2, 3), (Attr("float32"),), name="float32", gradcheck=False),
            S(make(2, 3), (Attr("int64"),), name="int64"),
            S(make(2, 3), (), {"dtype": Attr("float16")}, name="float16", gradcheck=False),
            S(make(2, 3), (NoGrad(_a([1.0], np.float64)),), name="tensor")]


def s_contiguous(make, dt):
    return [S(make(2, 3), name="contiguous"), S(make(3, 2).T, name="noncontig")]


def s_float_cast(make, dt, low_precision=False):
    # finite differences through a float32 result are noise: compared with torch only
    return [S(make(2, 3), name="2d", gradcheck=not low_precision),
            S(_a([1, 2], np.int64), name="int")]


def s_type_as(make, dt):
    return [S(make(2, 3), (NoGrad(_a([1.0], np.float64)),), name="f64"),
            S(make(2, 3), (NoGrad(_a([1.0], np.float32)),), name="f32", gradcheck=False)]


def s_reflected(make, dt):
    return [S(make(2, 3), (2.5,), name="pyfloat"), S(make(2, 3), (3,), name="pyint"),
            S(make(), (1.5,), name="0d")]


def s_rdiv(make, dt):
    return [S(make(2, 3, low=0.5, high=2.0), (2.5,), name="pyfloat"),
            S(make(2, 3, low=-2.0, high=-0.5), (3,), name="pyint")]


def s_pow_dunder(make, dt):
    return [s for s in s_pow(make, dt) if isinstance(s.input, np.ndarray)]


def s_rpow(make, dt):
    return [S(make(2, 3), (2.5,), name="pyfloat"), S(make(), (3,), name="0d")]


def s_bitwise(make, dt):
    return [S(np.array([True, False, True]), (np.array([True, True, False]),), name="bool"),
            S(np.array([1, 6, 3], np.int64), (np.array([3, 3, 1], np.int64),), name="int"),
            S(np.array([1, 6, 3], np.int64), (2,), name="scalar")]


def s_masked_fill(make, dt):
    m = np.array([[True, False, True], [False, False, True]])
    return [S(make(2, 3), (m, 0.5), name="number"), S(make(2, 3), (m[0], -1.0), name="bcast_mask"),
            S(make(2, 3), (m, make()), name="tensor_value"),
            S(make(), (np.array(True), 2.0), name="0d"),
            S(make(3, 2).T, (m, 1), name="noncontig")]


def s_conv2d(make, dt):
    return [S(make(1, 2, 4, 4), (make(3, 2, 3, 3), make(3)), name="bias"),
            S(make(2, 1, 5, 4), (make(2, 1, 2, 3),), {"stride": 2, "padding": 1},
              name="stride_pad"),
            S(make(2, 4, 4), (make(2, 2, 3, 3),), {"padding": (1, 0)}, name="unbatched"),
            S(make(1, 1, 4, 4), (make(1, 1, 3, 3), make(1)), {"padding": "same"}, name="same"),
            S(make(1, 2, 4, 4).transpose(0, 1, 3, 2), (make(2, 2, 2, 2),), name="noncontig")]


def s_max_pool2d(make, dt):
    return [S(make(1, 2, 4, 4), (2,), name="k2"),
            S(make(1, 1, 5, 5), (3,), {"stride": 1, "padding": 1}, name="stride_pad"),
            S(make(2, 4, 4), ((2, 1),), name="unbatched_rect"),
            S(make(1, 2, 4, 4), (2,), {"return_indices": True}, name="indices"),
            S(_a([[[[1.0, 1.0], [0.0, 1.0]]]], dt), (2,), name="ties", gradcheck=False)]


def s_invert(make, dt):
    return [S(np.array([True, False]), name="bool"), S(np.array([1, -6], np.int64), name="int")]


# ---- samples for the second batch of ops ---------------------------------------------------------
def s_rounding(make, dt):
    return s_unary_with_int(make, dt) + [
        S(_a([0.5, 1.5, 2.5, -0.5, -1.5, 0.25], dt), name="halves", gradcheck=False)]


def s_round(make, dt):
    return s_rounding(make, dt) + [
        S(make(2, 3, low=-20.0, high=20.0), (), {"decimals": 1}, name="decimals"),
        S(make(2, 3, low=-200.0, high=200.0), (), {"decimals": -1}, name="neg_decimals")]


def s_erf(make, dt):
    return s_unary_with_int(make, dt) + [
        S(_a([-7.0, -3.0, -1.0, -0.6, 0.0, 0.3, 1.1, 2.0, 4.5, 6.5], dt), name="ranges")]


def s_floor_divide(make, dt):
    return [
        S(make(2, 3, low=-5.0, high=5.0), (make(2, 3, low=0.5, high=2.0),), name="same"),
        S(make(3, 1, low=-5.0, high=5.0), (make(4, low=-2.0, high=-0.5),), name="bcast"),
        S(make(2, 3, low=-5.0, high=5.0), (2.5,), name="pyfloat"),
        S(make(2, 3, low=-5.0, high=5.0), (2,), name="pyint"),
        S(make(), (make(2, 3, low=0.5, high=2.0),), name="0d"),
        S(_a([[7, -7], [3, -4]], np.int64), (_a([2, 3], np.int64),), name="int_int"),
        S(_a([1.0, -1.0, 0.0], dt), (0.0,), name="zero_div"),
    ]


def s_remainder(make, dt):
    return [
        S(make(2, 3, low=-5.0, high=5.0), (make(2, 3, low=0.5, high=2.0),), name="same"),
        S(make(3, 1, low=-5.0, high=5.0), (make(4, low=-2.0, high=-0.5),), name="bcast"),
        S(make(2, 3, low=-5.0, high=5.0), (1.5,), name="pyfloat"),
        S(make(2, 3, low=-5.0, high=5.0), (-2,), name="neg_pyint"),
        S(make(), (make(2, 3, low=0.5, high=2.0),), name="0d"),
        S(make(3, 2, low=-5.0, high=5.0).T, (make(2, 3, low=0.5, high=2.0),), name="noncontig"),
        S(_a([[7, -7], [3, -4]], np.int64), (_a([2, -3], np.int64),), name="int_int"),
        S(make(2, 3, low=-5.0, high=5.0), (_a([2, -3, 4], np.int64),), name="int_tensor"),
    ]


def s_reflected_pos(make, dt):
    return [S(make(2, 3, low=0.5, high=2.0), (2.5,), name="pyfloat"),
            S(make(2, 3, low=-2.0, high=-0.5), (3,), name="pyint"),
            S(make(low=0.5, high=2.0), (1.5,), name="0d")]


def s_isclose(make, dt):
    a = make(2, 3)
    b = a.copy()
    b[0, 0] += dt.type(1e-3)
    b[1, 1] += dt.type(1e-9)
    nan = _a([1.0, np.nan, np.inf, -np.inf], dt)
    return [S(a, (NoGrad(b),), name="close"), S(a, (NoGrad(b),), {"rtol": 1e-2}, name="rtol"),
            S(a, (NoGrad(b),), {"atol": 1e-2}, name="atol"),
            S(nan, (NoGrad(nan.copy()),), name="special"),
            S(nan, (NoGrad(nan.copy()),), {"equal_nan": True}, name="equal_nan"),
            S(make(3, 1), (NoGrad(make(4)),), name="bcast"),
            S(_a([1, 2, 3], np.int64), (_a([1, 3, 3], np.int64),), name="int"),
            S(np.array([True, False]), (np.array([True, True]),), name="bool")]


def s_is_floating_point(make, dt):
    return [S(make(2, 3), name="float"), S(_a([1, 2], np.int64), name="int"),
            S(np.array([True]), name="bool")]


def s_prod(make, dt):
    z1 = make(2, 3)
    z1[0, 1] = 0
    z2 = make(2, 3)
    z2[0, 1] = z2[1, 2] = 0
    z3 = make(2, 3)
    z3[0, 0] = z3[0, 2] = 0
    return [
        S(make(2, 3), name="all"), S(make(), name="0d"),
        S(make(2, 3, 4), (1,), name="dim"), S(make(2, 3, 4), (-1, True), name="keepdim"),
        S(make(3, 2).T, (0,), name="noncontig"), S(make(), (0,), name="0d_dim"),
        S(z1, name="one_zero"), S(z2, name="two_zeros"), S(z1, (1,), name="one_zero_dim"),
        S(z3, (1,), name="two_zeros_dim"), S(z3, (0, True), name="zeros_dim0"),
        S(make(0, 3), (1,), name="empty_dim"),
        S(_a([[1, 2], [3, 4]], np.int64), name="int"),
        S(make(2, 3), (1,), {"dtype": Attr("float64")}, name="dtype"),
    ]


def s_cumsum(make, dt):
    return [S(make(2, 3), (0,), name="dim0"), S(make(2, 3), (-1,), name="neg"),
            S(make(2, 3, 4), (1,), name="3d"), S(make(), (0,), name="0d"),
            S(make(3, 2).T, (1,), name="noncontig"), S(make(0, 3), (0,), name="empty"),
            S(_a([[1, 2], [3, 4]], np.int64), (1,), name="int"),
            S(np.array([True, False, True]), (0,), name="bool"),
            S(make(2, 3), (1,), {"dtype": Attr("float64")}, name="dtype")]


def s_var(make, dt):
    return [
        S(make(2, 3), name="all"), S(make(2, 3, 4), (1,), name="dim"),
        S(make(2, 3, 4), ((0, 2),), name="tuple"),
        S(make(2, 3, 4), (-1, True, True), name="keepdim"),
        S(make(2, 3), (1,), {"keepdim": True}, name="keepdim_kw"),
        S(make(2, 3), (False,), name="unbiased_false"),
        S(make(2, 3), (1, False), name="dim_biased"),
        S(make(2, 3), (1,), {"correction": 0}, name="correction0"),
        S(make(2, 5), (1,), {"correction": 2}, name="correction2"),
        S(make(3, 2).T, (0,), name="noncontig"),
        # std is not differentiable at 0 (its double backward is nan, as in torch)
        S(make(), (), {"correction": 0}, name="0d", gradgradcheck=False),
    ]


def s_norm(make, dt):
    zero = np.zeros(3, dt)
    return [
        S(make(2, 3), name="default"), S(make(2, 3), (1,), name="p1"),
        S(make(2, 3), (3,), name="p3"), S(make(2, 3), (1.5,), name="p1.5"),
        S(make(2, 3, low=0.5, high=2.0), (0.5,), name="p0.5"),
        S(make(2, 3), (float("inf"),), name="inf"), S(make(2, 3), (float("-inf"),), name="neginf"),
        S(make(2, 3), (0,), name="p0"),
        S(make(2, 3, 4), (), {"dim": 1}, name="dim"), S(make(2, 3, 4), (2, (0, 2)), name="tuple"),
        S(make(2, 3), ("fro", 1, True), name="fro_keepdim"),
        S(make(3, 4), ("nuc",), name="nuc"), S(make(2, 3, 4), ("nuc", (2, 0), True), name="nuc_dims"),
        S(make(2, 3), (3,), {"dim": -1, "keepdim": True}, name="p3_dim"),
        S(make(3, 2).T, (2, 0), name="noncontig"), S(make(), name="0d"),
        S(zero, name="zero", gradcheck=False),
        S(_a([[1.0, -3.0, 3.0], [2.0, 2.0, -1.0]], dt), (float("inf"), 1), name="inf_ties",
          gradcheck=False),
        S(make(2, 3), (), {"dtype": Attr("float64")}, name="dtype"),
    ]


def s_sort(make, dt):
    ties = _a([[2.0, 1.0, 2.0, 0.5], [1.0, 1.0, -1.0, 1.0]], dt)
    return [
        S(make(2, 4), name="default"), S(make(3, 2), (0,), name="dim0"),
        S(make(2, 4), (-1, True), name="descending"),
        S(make(2, 4), (), {"stable": True}, name="stable"),
        S(ties, (), {"stable": True}, name="ties", gradcheck=False),
        S(ties, (), {"stable": True, "descending": True}, name="ties_desc", gradcheck=False),
        S(make(), name="0d"), S(make(4, 3).T, (1,), name="noncontig"),
        S(_a([[3, 1, 2]], np.int64), name="int"), S(make(0, 3), name="empty"),
    ]


def s_topk(make, dt):
    return [S(make(2, 5), (2,), name="default"), S(make(4, 3), (2, 0), name="dim0"),
            S(make(2, 5), (3,), {"largest": False}, name="smallest"),
            S(make(5, 2).T, (1, 1), name="noncontig"), S(make(), (1,), name="0d"),
            S(make(2, 5), (0,), name="k0"), S(_a([[5, 1, 3]], np.int64), (2,), name="int")]


def s_argsort(make, dt):
    ties = _a([[2.0, 1.0, 2.0, 0.5], [1.0, 1.0, -1.0, 1.0]], dt)
    return [S(make(2, 4), name="default"), S(make(3, 2), (0,), name="dim0"),
            S(make(2, 4), (-1, True), name="descending"),
            S(ties, (), {"stable": True}, name="ties"),
            S(ties, (), {"stable": True, "descending": True}, name="ties_desc"),
            S(make(), name="0d")]


def s_narrow(make, dt):
    return [S(make(4, 3), (0, 1, 2), name="basic"), S(make(4, 3), (-1, -2, 2), name="neg"),
            S(make(4, 3), (1, 0, 3), name="full"), S(make(4, 3), (0, 2, 0), name="empty"),
            S(make(4, 3), (0, np.array(1), 2), name="tensor_start"),
            S(make(3, 4).T, (1, 1, 2), name="noncontig")]


def s_gather(make, dt):
    i2 = np.array([[0, 2, 2], [1, 0, 1]], np.int64)
    return [S(make(3, 3), (0, i2), name="dim0"), S(make(2, 4), (1, i2), name="dim1"),
            S(make(2, 4), (-1, np.array([[3], [3]], np.int64)), name="repeat_smaller"),
            S(make(5), (0, np.array([4, 0, 4, 4], np.int64)), name="1d"),
            S(make(2, 3, 4), (2, np.zeros((2, 3, 2), np.int64)), name="3d"),
            S(make(4, 3).T, (1, i2), name="noncontig")]


def s_index_select(make, dt):
    return [S(make(4, 3), (0, np.array([2, 0, 2], np.int64)), name="dim0"),
            S(make(4, 3), (-1, np.array([1], np.int64)), name="dim1"),
            S(make(4, 3), (0, np.array(1, np.int64)), name="0d_index"),
            S(make(4, 3), (1, np.array([0, 0], np.int32)), name="int32"),
            S(make(5), (0, np.array([], np.int64)), name="empty"),
            S(make(3, 4).T, (1, np.array([2, 1], np.int64)), name="noncontig")]


def s_einsum(make, dt):
    return [
        S("ij,jk->ik", (make(2, 3), make(3, 4)), name="mm"),
        S("ii->i", (make(3, 3),), name="diag"), S("ij->", (make(3, 3),), name="sum"),
        S("...ij,...jk->...ik", (make(2, 2, 3), make(3, 4)), name="ellipsis"),
        S("i,j->ij", (make(3), make(4)), name="outer"),
        S("ij,ij->i", (make(3, 3), make(3, 1)), name="bcast"),
        S("ji", (make(3, 2),), name="implicit_transpose"),
        S("bij,bjk", (make(2, 2, 3), make(2, 3, 2)), name="implicit_bmm"),
        S("iij->j", (make(2, 2, 3),), name="diag_sum"),
        S("ij,k->ijk", (make(2, 3), make(2)), name="three_d"),
        S("i,i,i->", (make(3), make(3), make(3)), name="three_ops"),
        S("ij,jk->ik", ([make(2, 3), make(3, 2)],), name="list"),
    ]


def s_outer(make, dt):
    return [S(make(3), (make(4),), name="basic"), S(make(0), (make(2),), name="empty"),
            S(_a([1, 2], np.int64), (make(3),), name="int_float")]


def s_repeat(make, dt):
    return [S(make(2, 3), (2, 1), name="basic"), S(make(2, 3), (2, 1, 3), name="new_dims"),
            S(make(2, 3), ((1, 2),), name="tuple"), S(make(), (3,), name="0d"),
            S(make(3, 2).T, (2, 2), name="noncontig"), S(make(2, 3), (0, 1), name="zero")]


def s_view_as(make, dt):
    return [S(make(2, 6), (NoGrad(make(3, 4)),), name="basic"),
            S(make(2, 3), (NoGrad(make(6)),), name="flat")]


def s_reshape_as(make, dt):
    return s_view_as(make, dt) + [S(make(6, 2).T, (NoGrad(make(3, 4)),), name="noncontig")]


def s_gelu(make, dt):
    return s_unary(make, dt) + [
        S(make(2, 3), (), {"approximate": "tanh"}, name="tanh"),
        S(_a([-8.0, -3.0, -0.5, 0.0, 0.5, 3.0, 8.0], dt), name="ranges")]


def s_dropout(make, dt):
    return [S(make(2, 3), (0.0,), name="p0"), S(make(2, 3), (1.0,), name="p1"),
            S(make(2, 3), (0.5, False), name="eval")]


def s_one_hot(make, dt):
    return [S(np.array([0, 2, 1], np.int64), name="infer"),
            S(np.array([0, 2, 1], np.int64), (4,), name="num_classes"),
            S(np.array([[0], [1]], np.int64), name="2d"),
            S(np.array(3, np.int64), (5,), name="0d")]


def s_bce(make, dt):
    def p(*shape):
        return make(*shape, low=0.05, high=0.95)
    return [S(p(3, 4), (p(3, 4),), name="mean"),
            S(p(3, 4), (p(3, 4),), {"reduction": "sum"}, name="sum"),
            S(p(3, 4), (p(3, 4),), {"reduction": "none"}, name="none"),
            S(p(3, 4), (p(3, 4),), {"weight": NoGrad(make(4, low=0.5, high=2.0))},
              name="weight"),
            S(p(), (p(),), name="0d"),
            S(p(3), (NoGrad((make(3) > 0).astype(dt)),), name="hard_targets"),
            S(_a([0.0, 1.0, 0.5], dt), (NoGrad(_a([1.0, 0.0, 0.5], dt)),), name="clamped_log",
              gradcheck=False)]


def s_bce_logits(make, dt):
    return [S(make(3, 4), (make(3, 4, low=0.0, high=1.0),), name="mean"),
            S(make(3, 4), (make(3, 4, low=0.0, high=1.0),), {"reduction": "sum"}, name="sum"),
            S(make(3, 4), (make(3, 4, low=0.0, high=1.0),), {"reduction": "none"},
              name="none"),
            S(make(3, 4), (make(3, 4, low=0.0, high=1.0),),
              {"weight": NoGrad(make(4, low=0.5, high=2.0))}, name="weight"),
            S(make(3, 4), (make(3, 4, low=0.0, high=1.0),),
              {"pos_weight": NoGrad(make(4, low=0.5, high=3.0))}, name="pos_weight"),
            S(make(3, 4), (make(3, 4, low=0.0, high=1.0),),
              {"pos_weight": NoGrad(make(4, low=0.5, high=3.0)), "reduction": "none",
               "weight": NoGrad(make(3, 1, low=0.5, high=2.0))}, name="both_weights"),
            S(_a([1000.0, -1000.0, 30.0], dt), (NoGrad(_a([0.0, 1.0, 0.5], dt)),),
              name="large"),
            S(make(), (make(low=0.0, high=1.0),), name="0d")]


def s_cross_entropy_ls(make, dt):
    t = np.array([0, 3, 1], np.int64)
    p = np.exp(make(3, 4))
    p = (p / p.sum(1, keepdims=True)).astype(dt)
    ls = {"label_smoothing": 0.2}
    return [
        S(make(3, 4), (t,), ls, name="ls_mean"),
        S(make(3, 4), (t,), {**ls, "reduction": "sum"}, name="ls_sum"),
        S(make(3, 4), (t,), {**ls, "reduction": "none"}, name="ls_none"),
        S(make(3, 4), (t,), {**ls, "weight": NoGrad(make(4, low=0.5, high=2.0))},
          name="ls_weight"),
        S(make(3, 4), (t,), {**ls, "ignore_index": 1}, name="ls_ignore"),
        S(make(3, 4), (t,), {**ls, "ignore_index": 1, "reduction": "none",
                             "weight": NoGrad(make(4, low=0.5, high=2.0))},
          name="ls_ignore_weight_none"),
        S(make(4), (np.array(2, np.int64),), ls, name="ls_1d"),
        S(make(3, 4), (p,), ls, name="ls_probs"),
    ]



# ---- the database --------------------------------------------------------------------------------
def _F(name, **kw):
    return OpInfo("nn.functional." + name, **kw)


def _M(name, samples, **kw):
    """A Tensor method / dunder, called the same way in both frameworks."""
    return OpInfo(name, method=name, sample_inputs_func=samples, **kw)


_POS = (0.5, 2.0)


def _tapegrad():
    import tapegrad
    return tapegrad


op_db: list[OpInfo] = [
    # arithmetic
    OpInfo("add", sample_inputs_func=s_add),
    OpInfo("sub", sample_inputs_func=s_add, aliases=("subtract",)),
    OpInfo("rsub", sample_inputs_func=s_add),
    OpInfo("mul", sample_inputs_func=s_binary, aliases=("multiply",)),
    OpInfo("div", sample_inputs_func=s_div, aliases=("divide", "true_divide")),
    OpInfo("pow", sample_inputs_func=s_pow),
    OpInfo("square", sample_inputs_func=s_unary_with_int),
    OpInfo("neg", sample_inputs_func=s_unary, aliases=("negative",)),
    OpInfo("reciprocal", sample_inputs_func=s_unary, domain=_POS),
    OpInfo("maximum", sample_inputs_func=s_minmax_pair),
    OpInfo("minimum", sample_inputs_func=s_minmax_pair),
    OpInfo("where", sample_inputs_func=s_where),
    OpInfo("clamp", sample_inputs_func=s_clamp, aliases=("clip",)),
    OpInfo("clamp_min", sample_inputs_func=s_clamp_one),
    OpInfo("clamp_max", sample_inputs_func=s_clamp_one),
    # unary math
    OpInfo("exp", sample_inputs_func=s_unary_with_int),
    OpInfo("log", sample_inputs_func=s_unary, domain=_POS),
    OpInfo("sqrt", sample_inputs_func=s_unary, domain=_POS),
    OpInfo("abs", sample_inputs_func=s_abs, aliases=("absolute",)),
    OpInfo("sin", sample_inputs_func=s_unary_with_int),
    OpInfo("cos", sample_inputs_func=s_unary),
    OpInfo("tanh", sample_inputs_func=s_unary),
    OpInfo("sigmoid", sample_inputs_func=s_unary_with_int),
    OpInfo("relu", sample_inputs_func=s_relu),
    OpInfo("sign", sample_inputs_func=s_sign),
    OpInfo("sgn", sample_inputs_func=s_sign),
    OpInfo("signbit", sample_inputs_func=s_unary_with_int, supports_grad=False),
    # comparisons and logic: no gradient
    *[OpInfo(n, sample_inputs_func=s_compare, supports_grad=False)
      for n in ("eq", "ne", "lt", "le", "gt", "ge")],
    *[OpInfo(n, sample_inputs_func=s_logical, supports_grad=False)
      for n in ("logical_and", "logical_or", "logical_xor")],
    OpInfo("logical_not", sample_inputs_func=s_logical_not, supports_grad=False),
    OpInfo("isnan", sample_inputs_func=s_isnan, supports_grad=False),
    OpInfo("isfinite", sample_inputs_func=s_isnan, supports_grad=False),
    OpInfo("equal", sample_inputs_func=s_equal, supports_grad=False),
    OpInfo("allclose", sample_inputs_func=s_allclose, supports_grad=False),
    # reductions
    OpInfo("sum", sample_inputs_func=s_sum),
    OpInfo("mean", sample_inputs_func=s_mean),
    OpInfo("max", sample_inputs_func=s_max),
    OpInfo("min", sample_inputs_func=s_max),
    OpInfo("amax", sample_inputs_func=s_amax),
    OpInfo("amin", sample_inputs_func=s_amax),
    OpInfo("logsumexp", sample_inputs_func=s_logsumexp),
    OpInfo("argmax", sample_inputs_func=s_argmax, supports_grad=False),
    OpInfo("argmin", sample_inputs_func=s_argmax, supports_grad=False),
    OpInfo("all", sample_inputs_func=s_all, supports_grad=False),
    OpInfo("any", sample_inputs_func=s_all, supports_grad=False),
    # shape
    OpInfo("reshape", sample_inputs_func=s_reshape),
    OpInfo("flatten", sample_inputs_func=s_flatten),
    OpInfo("unflatten", sample_inputs_func=s_unflatten),
    OpInfo("permute", sample_inputs_func=s_permute),
    OpInfo("transpose", sample_inputs_func=s_transpose, aliases=("swapaxes", "swapdims")),
    OpInfo("t", sample_inputs_func=s_t),
    OpInfo("squeeze", sample_inputs_func=s_squeeze),
    OpInfo("unsqueeze", sample_inputs_func=s_unsqueeze),
    # torch.expand does not exist: the method is the reference
    OpInfo("expand", torch_op=lambda torch: lambda x, *a: x.expand(*a),
           sample_inputs_func=s_expand),
    OpInfo("broadcast_to", sample_inputs_func=s_broadcast_to),
    OpInfo("clone", sample_inputs_func=s_clone),
    OpInfo("cat", sample_inputs_func=s_cat, aliases=("concat", "concatenate")),
    OpInfo("stack", sample_inputs_func=s_stack),
    OpInfo("unbind", sample_inputs_func=s_unbind),
    OpInfo("split", sample_inputs_func=s_split),
    OpInfo("chunk", sample_inputs_func=s_chunk),
    # linear algebra
    OpInfo("matmul", sample_inputs_func=s_matmul),
    OpInfo("mm", sample_inputs_func=s_mm),
    OpInfo("bmm", sample_inputs_func=s_bmm),
    OpInfo("mv", sample_inputs_func=s_mv),
    OpInfo("dot", sample_inputs_func=s_dot),
    OpInfo("addmm", sample_inputs_func=s_addmm),
    # nn ops in the tapegrad namespace
    OpInfo("softmax", sample_inputs_func=s_softmax),
    OpInfo("log_softmax", sample_inputs_func=s_softmax),
    # in-place ops in the namespace, on a clone (torch refuses a leaf that requires grad)
    *[OpInfo(n, op=(lambda n: lambda x: getattr(_tapegrad(), n)(x.clone()))(n),
             torch_op=(lambda n: lambda torch: lambda x: getattr(torch, n)(x.clone()))(n),
             sample_inputs_func=s_unary, domain=_POS if n == "sqrt_" else (-2.0, 2.0))
      for n in ("exp_", "exp2_", "relu_", "sigmoid_", "sqrt_", "tanh_")],
    OpInfo("masked_fill", sample_inputs_func=s_masked_fill),
    # nn.functional
    _F("conv2d", sample_inputs_func=s_conv2d),
    _F("max_pool2d", sample_inputs_func=s_max_pool2d),
    _F("linear", sample_inputs_func=s_linear),
    _F("softmax", sample_inputs_func=s_softmax),
    _F("log_softmax", sample_inputs_func=s_softmax),
    _F("nll_loss", sample_inputs_func=s_nll_loss),
    _F("cross_entropy", sample_inputs_func=lambda make, dt: s_cross_entropy(make, dt) +
       s_cross_entropy_ls(make, dt)),
    _F("mse_loss", sample_inputs_func=s_mse_loss),
    # Tensor methods, properties and dunders that are ops
    _M("__getitem__", s_getitem),
    OpInfo("T", attr="T", sample_inputs_func=s_T),
    OpInfo("mT", attr="mT", sample_inputs_func=s_mT),
    _M("view", s_view),
    _M("expand_as", s_expand_as),
    _M("to", s_to),
    _M("contiguous", s_contiguous),
    _M("sum_to_size", s_sum_to_size),
    _M("float", lambda make, dt: s_float_cast(make, dt, low_precision=True)),
    _M("double", s_float_cast),
    _M("type_as", s_type_as),
    _M("__add__", s_binary), _M("__radd__", s_reflected),
    _M("__sub__", s_binary), _M("__rsub__", s_reflected),
    _M("__mul__", s_binary), _M("__rmul__", s_reflected),
    _M("__truediv__", lambda make, dt: [s for s in s_div(make, dt) if not s.kwargs]),
    _M("__rtruediv__", s_rdiv),
    _M("__pow__", s_pow_dunder),
    _M("__rpow__", s_rpow),
    _M("__matmul__", s_matmul),
    _M("__neg__", s_unary), _M("__abs__", s_abs),
    *[_M(n, s_compare, supports_grad=False)
      for n in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")],
    *[_M(n, s_bitwise, supports_grad=False) for n in ("__and__", "__or__", "__xor__")],
    _M("__invert__", s_invert, supports_grad=False),
    # second batch: more unary math, rounding, floor division / remainder, comparisons
    OpInfo("log1p", sample_inputs_func=s_unary_with_int, domain=(-0.5, 2.0)),
    OpInfo("expm1", sample_inputs_func=s_unary_with_int),
    OpInfo("rsqrt", sample_inputs_func=s_unary_with_int, domain=_POS),
    OpInfo("erf", sample_inputs_func=s_erf),
    OpInfo("tan", sample_inputs_func=s_unary_with_int, domain=(-1.2, 1.2)),
    OpInfo("asin", sample_inputs_func=s_unary, domain=(-0.9, 0.9), aliases=("arcsin",)),
    OpInfo("acos", sample_inputs_func=s_unary, domain=(-0.9, 0.9), aliases=("arccos",)),
    OpInfo("atan", sample_inputs_func=s_unary_with_int, aliases=("arctan",)),
    OpInfo("sinh", sample_inputs_func=s_unary_with_int),
    OpInfo("cosh", sample_inputs_func=s_unary_with_int),
    OpInfo("asinh", sample_inputs_func=s_unary_with_int, aliases=("arcsinh",)),
    OpInfo("acosh", sample_inputs_func=s_unary_with_int, domain=(1.2, 3.0), aliases=("arccosh",)),
    OpInfo("atanh", sample_inputs_func=s_unary, domain=(-0.9, 0.9), aliases=("arctanh",)),
    OpInfo("log10", sample_inputs_func=s_unary_with_int, domain=_POS),
    OpInfo("log2", sample_inputs_func=s_unary_with_int, domain=_POS),
    OpInfo("deg2rad", sample_inputs_func=s_unary_with_int),
    OpInfo("rad2deg", sample_inputs_func=s_unary_with_int),
    OpInfo("floor", sample_inputs_func=s_rounding),
    OpInfo("ceil", sample_inputs_func=s_rounding),
    OpInfo("trunc", sample_inputs_func=s_rounding, aliases=("fix",)),
    OpInfo("round", sample_inputs_func=s_round),
    OpInfo("floor_divide", sample_inputs_func=s_floor_divide, supports_grad=False),
    OpInfo("remainder", sample_inputs_func=s_remainder),
    OpInfo("fmod", sample_inputs_func=s_remainder),
    OpInfo("isclose", sample_inputs_func=s_isclose, supports_grad=False),
    OpInfo("is_floating_point", sample_inputs_func=s_is_floating_point, supports_grad=False),
    # second batch: reductions, sorting
    OpInfo("prod", sample_inputs_func=s_prod),
    OpInfo("cumsum", sample_inputs_func=s_cumsum),
    OpInfo("var", sample_inputs_func=s_var),
    OpInfo("std", sample_inputs_func=s_var),
    OpInfo("norm", sample_inputs_func=s_norm),
    OpInfo("sort", sample_inputs_func=s_sort),
    OpInfo("topk", sample_inputs_func=s_topk),
    OpInfo("argsort", sample_inputs_func=s_argsort, supports_grad=False),
    # second batch: shape and selection
    OpInfo("narrow", sample_inputs_func=s_narrow),
    OpInfo("gather", sample_inputs_func=s_gather),
    OpInfo("index_select", sample_inputs_func=s_index_select),
    OpInfo("einsum", sample_inputs_func=s_einsum),
    OpInfo("outer", sample_inputs_func=s_outer, aliases=("ger",)),
    _M("repeat", s_repeat),
    _M("view_as", s_view_as),
    _M("reshape_as", s_reshape_as),
    _M("__floordiv__", lambda make, dt: [s for s in s_floor_divide(make, dt)
                                         if s.name != "0d"], supports_grad=False),
    _M("__rfloordiv__", s_reflected_pos, supports_grad=False),
    _M("__mod__", lambda make, dt: [s for s in s_remainder(make, dt) if s.name != "0d"]),
    # number % tensor: torch records a NotImplemented node (no derivative), so no grad tests
    _M("__rmod__", s_reflected_pos, supports_grad=False),
    # second batch: nn.functional
    _F("gelu", sample_inputs_func=s_gelu),
    _F("dropout", sample_inputs_func=s_dropout),
    _F("one_hot", sample_inputs_func=s_one_hot, supports_grad=False),
    _F("binary_cross_entropy", sample_inputs_func=s_bce),
    _F("binary_cross_entropy_with_logits", sample_inputs_func=s_bce_logits),
    # regression and divergence losses (ops/losses.py)
    _F("l1_loss", sample_inputs_func=s_l1_loss),
    _F("smooth_l1_loss", sample_inputs_func=s_smooth_l1_loss),
    _F("huber_loss", sample_inputs_func=s_huber_loss),
    _F("kl_div", sample_inputs_func=s_kl_div),
    _F("poisson_nll_loss", sample_inputs_func=s_poisson_nll_loss),
]

# the rows of later op groups, each kept in its own module next to this one
from . import (op_db_activations, op_db_binary_extra, op_db_bitwise, op_db_extra,  # noqa: E402
               op_db_gamma, op_db_linalg, op_db_linalg_decomp, op_db_linalg_solvers,
               op_db_normalization, op_db_pooling, op_db_scatter, op_db_shape_extra, op_db_special,
               op_db_special_extra, op_db_surface)

_GROUPS = (op_db_activations, op_db_normalization, op_db_scatter, op_db_pooling, op_db_extra,
           op_db_binary_extra, op_db_surface, op_db_special_extra, op_db_bitwise, op_db_shape_extra,
           op_db_gamma, op_db_special, op_db_linalg, op_db_linalg_decomp, op_db_linalg_solvers)
for _group in _GROUPS:
    op_db += _group.rows

op_db_by_name = {o.name: o for o in op_db}
assert len(op_db_by_name) == len(op_db), "duplicate OpInfo names"

# Public names that are not ops (nothing to differentiate or compare sample by sample); each is
# covered elsewhere. Keep this short.
not_ops: dict = {}

# (op name, sample name or None for every sample) -> why tapegrad's node name differs from torch's.
# All are composites of primitives (DESIGN: rarer ops may be); values and gradients still match.
expected_node_name_differences: dict = {
    **{("rsub", n): "rsub(tensor, tensor) is sub(other, input): SubBackward0, not RsubBackward0"
       for n in ("same", "bcast", "0d_lhs", "0d_rhs", "noncontig", "empty", "int_tensor", "alpha")},
    ("nn.functional.cross_entropy", "probs"): "probability targets: composite ending in mean",
    ("sum_to_size", "lead"): "one sum over all reduced dims (SumBackward1), torch sum + view",
    ("sum_to_size", "both"): "one sum over all reduced dims (SumBackward1), torch sum + view",
    ("nn.functional.cross_entropy", "ls_probs"): "probability targets: composite ending in mean",
    ("einsum", None): "einsum is one primitive (EinsumBackward0); torch records the "
                      "permute/bmm/view chain it lowers to",
}
for _group in _GROUPS:
    expected_node_name_differences.update(_group.name_differences)
