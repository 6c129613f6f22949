"""A Python number meeting a tensor, as torch reads it: a value an integer dtype cannot hold
wraps around in arithmetic and comparisons (int8 + 300 adds 44) and is refused by clamp and pow;
a 0-d tensor of a small dtype keeps its dtype (NumPy 1.x promoted it by value: float16 0-d + 0.5
gave float64). Values and dtypes are written out, so the tests need no torch; where it is
installed the same cases are compared with it."""
import numpy as np
import pytest

import tapegrad as tg

# case -> (expected values, expected dtype name) or an exception type
CASES = {
    "int8_add_300": (lambda L: L.tensor([5, 100], dtype=L.int8) + 300, ([49, -112], "int8")),
    "int8_radd_300": (lambda L: 300 + L.tensor([5, 100], dtype=L.int8), ([49, -112], "int8")),
    "int8_sub_300": (lambda L: L.tensor([5, 100], dtype=L.int8) - 300, ([-39, 56], "int8")),
    "int8_rsub_300": (lambda L: 300 - L.tensor([5, 100], dtype=L.int8), ([39, -56], "int8")),
    "int8_mul_1000": (lambda L: L.tensor([5, 100], dtype=L.int8) * 1000, ([-120, -96], "int8")),
    "int8_floordiv_300": (lambda L: L.tensor([5, 100], dtype=L.int8) // 300, ([0, 2], "int8")),
    "int8_mod_300": (lambda L: L.tensor([5, 100], dtype=L.int8) % 300, ([5, 12], "int8")),
    "int8_lt_300": (lambda L: L.tensor([5, 100], dtype=L.int8) < 300, ([True, False], "bool")),
    "int8_ge_minus_200": (lambda L: L.tensor([5, 100], dtype=L.int8) >= -200,
                          ([False, True], "bool")),
    "int8_add_inplace": (lambda L: L.tensor([5, 100], dtype=L.int8).add_(300),
                         ([49, -112], "int8")),
    "uint8_add_300": (lambda L: L.tensor([5], dtype=L.uint8) + 300, ([49], "uint8")),
    "uint8_add_minus_1": (lambda L: L.tensor([5], dtype=L.uint8) + (-1), ([4], "uint8")),
    "uint8_gt_minus_1": (lambda L: L.tensor([5], dtype=L.uint8) > -1, ([False], "bool")),
    "int64_add_2_63": (lambda L: L.tensor([5]) + 2 ** 63, ([-9223372036854775803], "int64")),
    "int8_0d_mul": (lambda L: L.tensor(5, dtype=L.int8) * 100, (-12, "int8")),
    "int8_0d_add": (lambda L: L.tensor(5, dtype=L.int8) + 1, (6, "int8")),
    "int16_0d_floordiv": (lambda L: L.tensor(5, dtype=L.int16) // 2, (2, "int16")),
    "uint8_0d_sub": (lambda L: L.tensor(5, dtype=L.uint8) - 1, (4, "uint8")),
    "float16_0d_add": (lambda L: L.tensor(0.5, dtype=L.float16) + 0.001, (0.5009765625, "float16")),
    "float16_0d_sub": (lambda L: L.tensor(0.5, dtype=L.float16) - 0.001, (0.4990234375, "float16")),
    "float16_0d_pow": (lambda L: L.tensor(0.5, dtype=L.float16) ** 2.0, (0.25, "float16")),
    "float16_0d_rpow": (lambda L: 2.0 ** L.tensor(5, dtype=L.float16), (32.0, "float16")),
    "float16_0d_clamp": (lambda L: L.tensor(0.5, dtype=L.float16).clamp(0.1, 0.2),
                         (0.199951171875, "float16")),
    "float16_0d_where": (lambda L: L.where(L.tensor(True), L.tensor(0.5, dtype=L.float16), 1.0),
                         (0.5, "float16")),
    "float16_add_1e6": (lambda L: L.tensor([0.5], dtype=L.float16) + 1e6, ([float("inf")],
                                                                            "float16")),
    "int8_0d_rsub": (lambda L: 1 - L.tensor(5, dtype=L.int8), (-4, "int8")),
    "int8_add_2_70": (lambda L: L.tensor([5], dtype=L.int8) + 2 ** 70, OverflowError),
    "int8_clamp_300": (lambda L: L.tensor([5, 100], dtype=L.int8).clamp(0, 300), RuntimeError),
    "int8_clamp_minus_200": (lambda L: L.tensor([5], dtype=L.int8).clamp(-200, 5), RuntimeError),
    "int8_clamp_min_300": (lambda L: L.tensor([5], dtype=L.int8).clamp_min(300), RuntimeError),
    "int8_clamp_inplace_300": (lambda L: L.tensor([5], dtype=L.int8).clamp_(0, 300),
                               RuntimeError),
    "uint8_clamp_256": (lambda L: L.tensor([5], dtype=L.uint8).clamp(0, 256), RuntimeError),
    "uint8_clamp_minus_1": (lambda L: L.tensor([5, 200], dtype=L.uint8).clamp(-1, 3),
                            ([3, 3], "uint8")),
    "int8_clamp_float": (lambda L: L.tensor([5, 100], dtype=L.int8).clamp(0, 300.5),
                         ([5.0, 100.0], "float32")),
    "int8_pow_300": (lambda L: L.tensor([5], dtype=L.int8) ** 300, RuntimeError),
    "uint8_pow_minus_1": (lambda L: L.tensor([5], dtype=L.uint8) ** -1, RuntimeError),
    "int8_pow_2": (lambda L: L.tensor([5, 100], dtype=L.int8) ** 2, ([25, 16], "int8")),
    # a floating result takes the number as it is: no wrap-around through the integer dtype
    "int8_div_300": (lambda L: L.tensor([75, -75], dtype=L.int8) / 300, ([0.25, -0.25], "float32")),
    "int8_div_256": (lambda L: L.tensor([1, 2], dtype=L.int8) / 256,
                     ([0.00390625, 0.0078125], "float32")),
    "uint8_div_minus_1": (lambda L: L.tensor([5], dtype=L.uint8) / -1, ([-5.0], "float32")),
    "int8_rdiv_300": (lambda L: 300 / L.tensor([3, 6], dtype=L.int8), ([100.0, 50.0], "float32")),
    "int8_div_0d_tensor_300": (lambda L: L.tensor([75, -75], dtype=L.int8) / L.tensor(300),
                               ([0.25, -0.25], "float32")),
    "int8_true_divide_300": (lambda L: L.true_divide(L.tensor([75], dtype=L.int8), 300),
                             ([0.25], "float32")),
    "int8_atan2_0d_300": (lambda L: L.atan2(L.tensor([0], dtype=L.int8), L.tensor(300)),
                          ([0.0], "float32")),
    "int8_copysign_0d_minus_129": (lambda L: L.copysign(L.tensor([2], dtype=L.int8),
                                                        L.tensor(-129)), ([-2.0], "float32")),
    "int8_addmm_beta_300": (lambda L: L.addmm(L.ones(2, 2, dtype=L.int8),
                                              L.ones(2, 2, dtype=L.int8),
                                              L.ones(2, 2, dtype=L.int8), beta=300), RuntimeError),
    "int8_addmm_inplace_alpha_300": (lambda L: L.ones(2, 2, dtype=L.int8).addmm_(
        L.ones(2, 2, dtype=L.int8), L.ones(2, 2, dtype=L.int8), alpha=300), RuntimeError),
    "int8_addmm_beta_3": (lambda L: L.addmm(L.ones(2, 2, dtype=L.int8), L.ones(2, 2, dtype=L.int8),
                                            L.ones(2, 2, dtype=L.int8), beta=3),
                          ([[5, 5], [5, 5]], "int8")),
}


def _outcome(fn, lib):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return r.tolist(), str(r.dtype).split(".")[-1]


@pytest.mark.parametrize("case", sorted(CASES))
def test_number_meets_tensor(case):
    fn, expected = CASES[case]
    got = _outcome(fn, tg)
    if isinstance(expected, type):
        assert isinstance(got, type) and issubclass(got, expected), got
    else:
        assert got == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_number_meets_tensor_as_torch(case):
    torch = pytest.importorskip("torch")
    fn, _ = CASES[case]
    ours, ref = _outcome(fn, tg), _outcome(fn, torch)
    if isinstance(ref, type):
        assert isinstance(ours, type) and issubclass(ours, ref), (ours, ref)
    else:
        assert ours == ref


def test_refused_bounds_name_the_op_and_leave_the_tensor():
    x = tg.tensor([5, 100], dtype=tg.int8)
    with pytest.raises(RuntimeError, match="clamp's max=300"):
        x.clamp_(0, 300)
    with pytest.raises(RuntimeError, match="pow's exponent=300"):
        x ** 300
    assert x.tolist() == [5, 100] and x._version == 0


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_zero_d_float_chain_keeps_its_dtype(dtype):
    # every op of a 0-d chain with Python numbers stays in the tensor's dtype (NumPy 1.x read
    # 0-d arrays and numbers by value), with the values of a one-element array
    outs = []
    for shape in ((), (1,)):
        x = tg.tensor(np.full(shape, 0.3), dtype=getattr(tg, dtype))
        y = ((x + 0.001) * 1.0001 - 0.25) / 3.0
        y = (2.0 ** y) ** 2.0 - 1 + y.clamp(0.01, 0.2)
        outs.append(y.numpy())
    assert outs[0].dtype == outs[1].dtype == np.dtype(dtype) and outs[0].shape == ()
    assert outs[0].tobytes() == outs[1].tobytes()
