"""op_db rows of the ops in tapegrad.ops.binary_extra: addcmul, addcdiv, fmax, fmin, copysign.

Samples at ties, NaN, signed zeros and infinities are compared with torch only (gradcheck=False):
the functions have a kink or a jump there (or finite differences of NaN mean nothing). Divisors
of addcdiv stay away from zero.
"""
import numpy as np

from .op_db import NoGrad, OpInfo, SampleInput, _a, _i

S = SampleInput
_NAN, _INF = float("nan"), float("inf")


def _addc_samples(make, tensor2):
    """The samples addcmul and addcdiv share; ``tensor2`` makes the second factor (addcdiv's
    divisor, kept away from zero)."""
    return [S(make(2, 3), (make(2, 3), tensor2(2, 3)), name="same"),
            S(make(3, 1), (make(4), -tensor2(2, 1, 1)), name="bcast"),
            S(make(), (make(), tensor2()), name="0d"),
            S(make(2, 3), (make(), tensor2(3)), name="0d_tensor1"),
            S(make(2, 3), (make(2, 3), tensor2(2, 3)), {"value": -0.5}, name="value"),
            S(make(2, 3), (make(3), tensor2(2, 1)), {"value": 3}, name="value_int"),
            S(make(3, 2).T, (make(2, 3), tensor2(3, 2).T), name="noncontig"),
            S(make(0, 3), (make(3), tensor2(1)), name="empty"),
            S(make(2, 3), (_i([[1, -2, 3]]), tensor2(3)), name="int_tensor1"),
            S(_i([1, 2, 3]), (make(3), tensor2(2, 3)), {"value": 2}, name="int_input")]


def s_addcmul(make, dt):
    return _addc_samples(make, make) + [
        S(_i([1, 2, 3]), (_i([2, 2, -1]), _i([3])), {"value": 2.5}, name="all_int")]


def s_addcdiv(make, dt):
    def den(*shape):
        return make(*shape, low=0.5, high=2.0)

    # (tensor1 without grad: torch's backward for it fails on an integer tensor2, see
    # tests/test_binary_extra_ops.py)
    return _addc_samples(make, den) + [
        S(make(2, 3), (NoGrad(make(3)), _i([2, -1, 3])), name="int_tensor2")]


def s_fminmax(make, dt):
    return [S(make(2, 3), (make(2, 3),), name="same"),
            S(make(3, 1), (make(4),), name="bcast"),
            S(make(), (make(2, 3),), name="0d_lhs"),
            S(make(2, 3), (make(),), name="0d_rhs"),
            S(make(3, 2).T, (make(2, 3),), name="noncontig"),
            S(make(0, 3), (make(3),), name="empty"),
            S(_a([1.0, 2.0, -3.0, 0.5], dt), (_a([1.0, 5.0, -3.0, 0.0], dt),), name="ties",
              gradcheck=False),
            S(_a([1.0, _NAN, _NAN, 2.0, -_INF], dt), (_a([_NAN, 1.0, _NAN, -1.0, _NAN], dt),),
              name="nan", gradcheck=False),
            S(make(2, 3), (_i([1, -2, 0]),), name="int_other"),
            S(_i([1, -2, 3]), (_i([[0], [5]]),), name="int_int"),
            S(np.array([True, False, False]), (np.array([False, False, True]),), name="bool")]


def s_copysign(make, dt):
    return [S(make(2, 3), (make(2, 3),), name="same"),
            S(make(3, 1), (make(4),), name="bcast"),
            S(make(), (make(2, 3),), name="0d_lhs"),
            S(make(2, 3), (make(),), name="0d_rhs"),
            S(make(3, 2).T, (make(2, 3),), name="noncontig"),
            S(make(0, 3), (make(3),), name="empty"),
            S(make(2, 3), (-2.5,), name="pyfloat"),
            S(make(2, 3), (3,), name="pyint"),
            S(make(2, 3), (-0.0,), name="pyfloat_neg_zero"),
            S(make(2, 3), (-_NAN,), name="pyfloat_neg_nan"),
            S(make(), (-1.0,), name="0d_pyfloat"),
            S(_a([1.5, -2.0, 3.0, -4.0], dt), (_a([-0.0, 0.0, -0.0, 0.0], dt),),
              name="signed_zero_other", gradcheck=False),
            S(_a([1.5, -2.0], dt), (_a([_NAN, -_NAN], dt),), name="nan_other", gradcheck=False),
            S(_a([0.0, -0.0, 1.5, -0.0], dt), (_a([-1.0, 2.0, -3.0, -0.0], dt),),
              name="zero_input", gradcheck=False),
            S(_a([0.0, -0.0, 2.0], dt), (-1.0,), name="zero_input_pyfloat", gradcheck=False),
            S(_a([_INF, -_INF, 1.0], dt), (_a([-1.0, 1.0, -1.0], dt),), name="inf_input",
              gradcheck=False),
            S(_i([1, -2, 3]), (make(3),), name="int_input"),
            S(make(2, 3), (_i([1, -2, 3]),), name="int_other"),
            S(_i([1, -2, 3]), (-1,), name="int_input_pyint")]


rows: list = [
    OpInfo("addcmul", sample_inputs_func=s_addcmul),
    OpInfo("addcdiv", sample_inputs_func=s_addcdiv),
    OpInfo("fmax", sample_inputs_func=s_fminmax),
    OpInfo("fmin", sample_inputs_func=s_fminmax),
    OpInfo("copysign", sample_inputs_func=s_copysign),
]

name_differences: dict = {}
