"""op_db rows of the ops in tapegrad.ops.bitwise (bool and integer operands only, so no gradient
tests: the rows compare values, dtypes and shapes with torch). The operators, in-place forms and
errors are in tests/test_bitwise_ops.py."""
import numpy as np

from .op_db import OpInfo, SampleInput, _i

S = SampleInput


def _u8(v):
    return np.array(v, np.uint8)


def _i8(v):
    return np.array(v, np.int8)


def s_logic(make, dt):
    return [S(np.array([True, False, True, False]), (np.array([True, True, False, False]),),
              name="bool"),
            S(_i([[1, 6, -3], [0, 7, 12]]), (_i([3, -1, 5]),), name="bcast"),
            S(_i(-6), (_i([[1, 2], [3, 4]]),), name="0d_lhs"),
            S(_i([5, 9]), (_i(3),), name="0d_rhs"),
            S(_i([5, 9]), (12,), name="pyint"),
            S(np.array([True, False]), (True,), name="bool_pybool"),
            S(np.array([True, False]), (3,), name="bool_pyint"),
            S(np.array([True, False, True]), (_i([2, 3, 5]),), name="bool_int"),
            S(_u8([200, 15, 255]), (_i8([-1, 3, 16]),), name="uint8_int8"),
            S(_i8([100, -100]), (300,), name="wrapped_number"),
            S(_i(np.zeros((0, 3))), (_i([1, 2, 3]),), name="empty"),
            S(_i([[1, 2], [3, 4]]).T, (_i([[7, 7], [1, 1]]),), name="noncontig"),
            S(7, (_i([1, 2, 4]),), name="number_input")]


def s_shift(make, dt):
    return [S(_i([[1, -6, 3], [0, 7, -12]]), (_i([3, 1, 0]),), name="bcast"),
            S(_i(-6), (_i([[1, 2], [3, 4]]),), name="0d_lhs"),
            S(_i([5, -9]), (_i(2),), name="0d_rhs"),
            S(_i([5, -9]), (3,), name="pyint"),
            S(_i8([1, 2, 3, -1]), (7,), name="int8_overflow"),
            S(_i([-8, 8, -1, 1]), (_i([64, 64, -1, 100]),), name="count_out_of_range"),
            S(_u8([200, 8, 255]), (_u8([9, 1, 8]),), name="uint8_out_of_range"),
            S(_u8([8, 200, 3]), (_i([1, 2, 3]),), name="uint8_int64"),
            S(_i(np.zeros((0, 3))), (_i([1, 2, 3]),), name="empty"),
            S(_i([[1, 2], [3, 4]]).T, (_i([[1, 2], [0, 3]]),), name="noncontig"),
            S(3, (_i([1, 2, 4]),), name="number_input")]


def s_not(make, dt):
    return [S(np.array([True, False]), name="bool"), S(_i([[1, -6], [0, 7]]), name="int"),
            S(_u8([0, 5, 255]), name="uint8"), S(_i8([-128, 127]), name="int8"),
            S(_i(5), name="0d"), S(_i(np.zeros((0, 2))), name="empty"),
            S(_i([[1, 2], [3, 4]]).T, name="noncontig")]


def _tensor_input(samples):
    # (a method row calls the method on the input, so a number there would test nothing)
    return lambda make, dt: [s for s in samples(make, dt) if isinstance(s.input, np.ndarray)]


def _ops(names, samples):
    # (torch's method of the same name is called on the same sample)
    return [OpInfo(n, sample_inputs_func=samples, supports_grad=False) for n in names]


rows = [
    *_ops(("bitwise_and", "bitwise_or", "bitwise_xor"), s_logic),
    *_ops(("bitwise_left_shift", "bitwise_right_shift"), s_shift),
    *_ops(("bitwise_not",), s_not),
    *[OpInfo(d, method=d, sample_inputs_func=_tensor_input(s_shift), supports_grad=False)
      for d in ("__lshift__", "__rshift__")],
]

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}
