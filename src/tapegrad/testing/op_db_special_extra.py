"""op_db rows of the ops in tapegrad.ops.special_extra: heaviside, float_power, aminmax, kthvalue,
erfc, erfinv and their in-place forms (the method-only ones, ``heaviside_``, ``float_power_`` and
``erfinv_``, called on a clone: torch refuses a leaf that requires grad).

Samples at ties, NaN, infinities and erfinv's +-1 are compared with torch only (gradcheck=False):
the functions have a kink there, or finite differences mean nothing. float_power's bases stay
positive where the exponent is not an integer (a negative base gives NaN).
"""
import numpy as np

from .op_db import OpInfo, SampleInput, _a, _i, s_unary

S = SampleInput
_NAN, _INF = float("nan"), float("inf")


def _clone_method(name):
    """An op calling the in-place method ``name`` on a clone of its input (either framework)."""
    def f(x, *a, **k):
        return getattr(x.clone(), name)(*a, **k)
    return f


def s_heaviside(make, dt):
    return [S(make(2, 3), (make(2, 3),), name="same"),
            S(make(3, 1), (make(4),), name="bcast"),
            S(make(), (make(2, 3),), name="0d_lhs"),
            S(make(2, 3), (make(),), name="0d_rhs"),
            S(make(3, 2).T, (make(2, 3),), name="noncontig"),
            S(make(0, 3), (make(3),), name="empty"),
            S(_a([0.0, -0.0, _NAN, _INF, -_INF, -1.5, 2.0], dt), (_a([3.0], dt),), name="special"),
            S(_a([0.0, 1.0, -2.0], dt), (_a([_NAN, -0.0, 5.0], dt),), name="nan_values"),
            S(_i([[0, 2, -3], [0, 0, 1]]), (_i([7, -1, 5]),), name="int"),
            S(np.array([True, False, False]), (np.array([True, True, False]),), name="bool")]


def s_heaviside_(make, dt):
    return [s for s in s_heaviside(make, dt) if s.name not in ("bcast", "0d_lhs")]


def s_float_power(make, dt):
    def pos(*shape):
        return make(*shape, low=0.5, high=2.0)

    return [S(pos(2, 3), (make(2, 3),), name="same"),
            S(pos(3, 1), (make(4),), name="bcast"),
            S(pos(), (make(2, 3),), name="0d_lhs"),
            S(pos(2, 3), (make(),), name="0d_rhs"),
            S(pos(3, 2).T, (make(2, 3),), name="noncontig"),
            S(pos(0, 3), (make(3),), name="empty"),
            S(make(2, 3), (2,), name="pyint"),
            S(pos(2, 3), (2.5,), name="pyfloat"),
            S(make(2, 3), (-1,), name="pyint_neg"),
            S(make(2, 3), (True,), name="pybool"),
            S(make(2, 3), (0,), name="pyint_zero"),
            S(make(2, 3), (np.float32(3.0),), name="np_scalar"),
            S(2.5, (make(2, 3),), name="number_base"),
            S(3, (make(3),), name="int_number_base"),
            S(pos(2, 3), (_i([1, -2, 3]),), name="int_exponent"),
            S(_i([1, 2, 3]), (make(3),), name="int_base"),
            S(_i([0, 2, -3]), (-1,), name="int_int_neg"),
            S(np.array([True, False]), (2,), name="bool_base"),
            S(_a([0.0, -1.5, 2.0, 0.0], dt), (_a([0.0, 0.5, -1.0, -1.0], dt),), name="special",
              gradcheck=False)]


def s_float_power_(make, dt):
    # (self must be float64 whatever the sample dtype: torch refuses any other)
    return [S(s.input.astype(np.float64), s.args, s.kwargs, s.name, s.gradcheck)
            for s in s_float_power(make, dt)
            if isinstance(s.input, np.ndarray) and s.input.dtype.kind == "f"
            and s.name not in ("bcast", "0d_lhs")]


def s_aminmax(make, dt):
    return [S(make(2, 3), name="all"),
            S(make(2, 3), kwargs={"keepdim": True}, name="all_keepdim"),
            S(make(2, 3), kwargs={"dim": 1}, name="dim"),
            S(make(2, 3, 4), kwargs={"dim": -2, "keepdim": True}, name="neg_dim_keepdim"),
            S(make(), name="0d"),
            S(make(), kwargs={"dim": -1, "keepdim": True}, name="0d_dim"),
            S(make(3, 2).T, kwargs={"dim": 0}, name="noncontig"),
            S(make(0, 3), kwargs={"dim": 1}, name="empty"),
            S(_a([[1.0, 3.0, 3.0], [2.0, -1.0, -1.0]], dt), name="ties", gradcheck=False),
            S(_a([[1.0, 3.0, 3.0], [-1.0, -1.0, 2.0]], dt), kwargs={"dim": 1}, name="ties_dim",
              gradcheck=False),
            S(_a([[1.0, _NAN, 2.0], [0.5, 1.0, -_INF]], dt), kwargs={"dim": 1}, name="nan",
              gradcheck=False),
            S(_i([[3, -1, 2], [0, 5, 5]]), kwargs={"dim": 0}, name="int"),
            S(np.array([True, False]), name="bool")]


def s_kthvalue(make, dt):
    return [S(make(2, 5), (3,), name="last"),
            S(make(4, 3), (1, 0), name="dim0_k1"),
            S(make(2, 3, 4), (4, -1, True), name="neg_dim_keepdim"),
            S(make(2, 3, 4), (2,), {"dim": 1, "keepdim": True}, name="kwargs"),
            S(make(5), (5,), name="1d_max"),
            S(make(), (1,), name="0d"),
            S(make(), (1, 0, True), name="0d_keepdim"),
            S(make(3, 4).T, (2, 1), name="noncontig"),
            S(make(0, 3), (2,), name="empty"),
            S(_a([[2.0, 1.0, 2.0, 2.0, 1.0], [-0.0, 0.0, -0.0, 1.0, 0.0]], dt), (3,),
              name="ties", gradcheck=False),
            S(_a([[1.0, _NAN, 0.0, _NAN], [_INF, -_INF, 0.5, 0.5]], dt), (3,), name="nan",
              gradcheck=False),
            S(_i([[3, 1, 2, 1], [0, 0, 5, -2]]), (2,), name="int")]


def s_erfc(make, dt):
    return s_unary(make, dt) + [
        S(make(8, low=-6.0, high=12.0), name="wide"),
        S(_i([0, 1, -3, 30]), name="int"),
        S(_a([0.0, -0.0, _INF, -_INF, _NAN, 26.0, -10.0, 0.5], dt), name="special",
          gradcheck=False)]


def s_erfinv(make, dt):
    return s_unary(make, dt) + [
        S(_a([0.999, -0.9999, 1e-6, 0.75], dt), name="near_one"),
        S(_i([0, 1, -1, 2]), name="int"),
        S(np.array([True, False]), name="bool"),
        S(_a([1.0, -1.0, 0.0, -0.0, _NAN, 1.5, -_INF], dt), name="special", gradcheck=False)]


def _float_only(samples):
    return lambda make, dt: [s for s in samples(make, dt) if np.asarray(s.input).dtype.kind == "f"]


rows: list = [
    OpInfo("heaviside", sample_inputs_func=s_heaviside, supports_grad=False),
    OpInfo("heaviside_", op=_clone_method("heaviside_"), torch_op=lambda t: _clone_method(
        "heaviside_"), sample_inputs_func=s_heaviside_, supports_grad=False),
    OpInfo("float_power", sample_inputs_func=s_float_power),
    OpInfo("float_power_", op=_clone_method("float_power_"), torch_op=lambda t: _clone_method(
        "float_power_"), sample_inputs_func=s_float_power_),
    OpInfo("aminmax", sample_inputs_func=s_aminmax),
    OpInfo("kthvalue", sample_inputs_func=s_kthvalue),
    OpInfo("erfc", sample_inputs_func=s_erfc),
    OpInfo("erfc_", op=_clone_method("erfc_"), torch_op=lambda t: _clone_method("erfc_"),
           sample_inputs_func=_float_only(s_erfc)),
    OpInfo("erfinv", sample_inputs_func=s_erfinv, domain=(-0.95, 0.95)),
    OpInfo("erfinv_", op=_clone_method("erfinv_"), torch_op=lambda t: _clone_method("erfinv_"),
           sample_inputs_func=_float_only(s_erfinv), domain=(-0.95, 0.95)),
]

name_differences: dict = {}
