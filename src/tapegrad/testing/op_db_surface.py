"""op_db rows of the names tapegrad.ops.aliases and the newer in-place ops add to the namespace:
in-place functions (run on a clone: torch refuses a leaf that requires grad; each with its
out-of-place row's domain), the comparison aliases, positive, ravel, select, detach_ and the
Tensor queries torch also has as functions.

Rounding samples at halves are compared with torch only (gradcheck=False), as the out-of-place
rows do.
"""
import numpy as np

from .op_db import (_POS, OpInfo, SampleInput, _a, _tapegrad, s_abs, s_clamp, s_clamp_one, s_compare,
                    s_erf, s_round, s_rounding, s_unary)

S = SampleInput


def _float_only(samples):
    """The samples without integer inputs (a float result cannot be written into them)."""
    return lambda make, dt: [s for s in samples(make, dt)
                             if np.asarray(s.input).dtype.kind == "f"]


def _inplace_row(name, samples, **kw):
    def ours(x, *a, **k):
        return getattr(_tapegrad(), name)(x.clone(), *a, **k)

    def theirs(torch):
        return lambda x, *a, **k: getattr(torch, name)(x.clone(), *a, **k)

    return OpInfo(name, op=ours, torch_op=theirs, sample_inputs_func=samples, **kw)


def s_fill(make, dt):
    return [S(make(2, 3), (2.5,), name="number"), S(make(), (-1.0,), name="0d"),
            S(make(3, 2).T, (make(),), name="tensor_value"), S(make(0, 3), (1.0,), name="empty")]


# unary in-place functions -> the domain of their out-of-place rows
_UNARY_DOMAINS = {
    "neg_": (-2.0, 2.0), "sin_": (-2.0, 2.0), "cos_": (-2.0, 2.0), "tan_": (-1.2, 1.2),
    "atan_": (-2.0, 2.0), "arctan_": (-2.0, 2.0), "sinh_": (-2.0, 2.0), "cosh_": (-2.0, 2.0),
    "asinh_": (-2.0, 2.0), "arcsinh_": (-2.0, 2.0), "deg2rad_": (-2.0, 2.0),
    "rad2deg_": (-2.0, 2.0), "reciprocal_": _POS, "log_": _POS, "log10_": _POS, "log2_": _POS,
    "asin_": (-0.9, 0.9), "arcsin_": (-0.9, 0.9), "acos_": (-0.9, 0.9), "arccos_": (-0.9, 0.9),
    "atanh_": (-0.9, 0.9), "arctanh_": (-0.9, 0.9), "acosh_": (1.2, 3.0), "arccosh_": (1.2, 3.0),
}
# torch has no derivative for these in place (their backward raises NotImplementedError, as here)
_NO_DERIVATIVE = ("asinh_", "arcsinh_", "acosh_", "arccosh_", "atanh_", "arctanh_")


def s_ravel(make, dt):
    return s_unary(make, dt) + [S(make(4, 3)[:, ::2], name="strided"),
                                S(make(2, 3, 4).transpose(1, 0, 2), name="3d_noncontig"),
                                S(_a([[1, 2], [3, 4]], np.int64).T, name="int")]


def s_positive(make, dt):
    return s_unary(make, dt) + [S(_a([1, -2], np.int64), name="int")]


def s_select(make, dt):
    return [S(make(3, 4), (0, 1), name="dim0"), S(make(3, 4), (1, -1), name="dim1_neg_index"),
            S(make(2, 3, 4), (-2, 2), name="neg_dim"), S(make(5), (0, 3), name="1d"),
            S(make(3, 2).T, (0, 1), name="noncontig"), S(make(0, 3), (1, 2), name="empty"),
            S(_a([[1, 2], [3, 4]], np.int64), (1, 0), name="int")]


def s_one_element(make, dt):
    return [S(make(), name="0d"), S(make(1, 1), name="2d"), S(_a([0.0], dt), name="zero"),
            S(_a([-0.0], dt), name="neg_zero"), S(_a([np.nan], dt), name="nan"),
            S(_a([0], np.int64), name="int_zero"), S(np.array([True]), name="bool")]


def s_query(make, dt):
    return [S(make(2, 3), name="float"), S(make(), name="0d"), S(_a([1, 2], np.int64), name="int"),
            S(_a([1, 2], np.uint8), name="uint8"), S(np.array([True]), name="bool")]


def s_same_size(make, dt):
    return [S(make(2, 3), (make(2, 3),), name="same"), S(make(2, 3), (make(3, 2),), name="swapped"),
            S(make(), (make(1),), name="0d_vs_1"),
            S(make(2, 3), (_a([[1, 2, 3], [4, 5, 6]], np.int64),), name="other_dtype")]


rows = [
    *[_inplace_row(n, s_rounding) for n in ("floor_", "ceil_", "trunc_", "fix_")],
    _inplace_row("round_", s_round),
    _inplace_row("rsqrt_", _float_only(s_unary), domain=_POS),
    _inplace_row("erf_", _float_only(s_erf)),
    _inplace_row("expm1_", s_unary),
    _inplace_row("log1p_", s_unary, domain=(-0.5, 2.0)),
    _inplace_row("square_", s_positive),
    _inplace_row("negative_", s_unary),
    _inplace_row("clamp_min_", s_clamp_one),
    _inplace_row("clamp_max_", s_clamp_one),
    *[_inplace_row(n, s_unary, domain=d, supports_grad=n not in _NO_DERIVATIVE)
      for n, d in _UNARY_DOMAINS.items()],
    _inplace_row("abs_", s_abs),
    *[_inplace_row(n, s_clamp) for n in ("clamp_", "clip_")],
    _inplace_row("zero_", s_unary),
    _inplace_row("fill_", s_fill),
    _inplace_row("detach_", s_unary, supports_grad=False),
    *[OpInfo(n, sample_inputs_func=s_compare, supports_grad=False)
      for n in ("greater", "greater_equal", "less", "less_equal", "not_equal")],
    OpInfo("positive", sample_inputs_func=s_positive),
    OpInfo("ravel", sample_inputs_func=s_ravel),
    OpInfo("select", sample_inputs_func=s_select),
    *[OpInfo(n, sample_inputs_func=s_query, supports_grad=False)
      for n in ("is_complex", "is_signed", "get_device")],
    OpInfo("is_nonzero", sample_inputs_func=s_one_element, supports_grad=False),
    OpInfo("is_same_size", sample_inputs_func=s_same_size, supports_grad=False),
]

name_differences: dict = {}
