"""repr(tensor) must read exactly like torch's, apart from the ``tapegrad.`` dtype prefix."""
import math

import numpy as np
import pytest

import tapegrad
from tapegrad import _tensor_str
from tapegrad._tensor import _make

torch = pytest.importorskip("torch")


def _pair(arr):
    """The same values as a tapegrad tensor and a torch tensor."""
    arr = np.asarray(arr)
    return _make(arr), torch.from_numpy(np.array(arr, copy=True))


def _torch_text(t):
    return repr(t).replace("torch.", "tapegrad.")


def _check(arr):
    ours, theirs = _pair(arr)
    assert repr(ours) == _torch_text(theirs)


@pytest.fixture
def restore_printoptions():
    """Put both libraries' print options back to the defaults whatever the test did."""
    yield
    _tensor_str.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def _set_both(**kwargs):
    _tensor_str.set_printoptions(**kwargs)
    torch.set_printoptions(**kwargs)


f32, f64 = np.float32, np.float64
rng = np.random.default_rng(0)

CASES = {
    # 0-d
    "scalar_float": np.array(3.5, f32),
    "scalar_int": np.array(7, np.int64),
    "scalar_neg_int32": np.array(-12, np.int32),
    "scalar_bool": np.array(True),
    "scalar_float_int_valued": np.array(2.0, f32),
    "scalar_nan": np.array(np.nan, f32),
    "scalar_tiny": np.array(1e-7, f32),
    "scalar_f64": np.array(1 / 3, f64),
    # 1-D
    "vec_small": np.array([1.5, -2.25, 3.0], f32),
    "vec_int_valued": np.array([1.0, 2.0], f32),
    "vec_int_valued_neg": np.array([-100.0, 2.0, 0.0], f32),
    "vec_zeros": np.zeros(4, f32),
    "vec_neg_zero": np.array([-0.0, 0.0, 1.5], f32),
    "vec_ints": np.array([1, -20, 300], np.int64),
    "vec_int32": np.array([5, 6], np.int32),
    "vec_uint8": np.array([0, 255, 17], np.uint8),
    "vec_int8": np.array([-128, 3], np.int8),
    "vec_int16": np.array([1000, -3], np.int16),
    "vec_bool": np.array([True, False]),
    "vec_bool_all_true": np.array([True, True]),
    "vec_f64": np.array([0.1, 0.2, 0.3], f64),
    "vec_f16": np.array([0.1, 1.5, -3.0, 65504.0], np.float16),
    "vec_f16_int": np.array([1.0, 2.0], np.float16),
    "vec_sci_ratio": np.array([1.0, 2000.0, 3.5], f32),
    "vec_sci_big": np.array([1e9, 2e9], f32),
    "vec_sci_small": np.array([1e-5, 3e-5], f32),
    "vec_sci_tiny_f64": np.array([1e-200, 2.5], f64),
    "vec_sci_huge_f64": np.array([1e200, -2.5e-3], f64),
    "vec_sci_int_valued": np.array([1.0, 1e10], f32),
    "vec_mixed_nan_inf": np.array([np.nan, np.inf, -np.inf, 1.5], f32),
    "vec_int_valued_nan": np.array([np.nan, 1.0, -np.inf], f32),
    "vec_only_nonfinite": np.array([np.nan, np.inf], f32),
    "vec_nan_sci": np.array([np.nan, 1e-8, 1.0], f32),
    "vec_negatives": np.array([-1.25, -0.5, -1000.75], f32),
    "vec_rounding_up": np.array([9.99996, 0.5], f32),
    "vec_long_wraps": np.linspace(-3, 3, 40, dtype=f32),
    "vec_long_ints_wrap": np.arange(100, dtype=np.int64) * 12345,
    "vec_large_summarised": np.arange(1001, dtype=f32) / 7,
    "vec_large_int_summarised": np.arange(5000, dtype=np.int64),
    "vec_large_bool": np.arange(2000) % 3 == 0,
    "vec_exactly_threshold": np.arange(1000, dtype=f32),
    "vec_random": rng.standard_normal(30).astype(f32),
    # 2-D
    "mat_small": np.array([[1.0, 2.5], [-3.0, 4.0]], f32),
    "mat_int": np.arange(12, dtype=np.int64).reshape(3, 4),
    "mat_bool": np.array([[True, False], [False, True]]),
    "mat_wide_wraps": rng.standard_normal((3, 20)).astype(f32),
    "mat_random": rng.standard_normal((5, 6)).astype(f32),
    "mat_sci": np.array([[1e-6, 1.0], [100.0, 5.0]], f32),
    "mat_large_summarised": rng.standard_normal((50, 50)).astype(f32),
    "mat_tall_summarised": np.arange(3000, dtype=f32).reshape(1000, 3),
    "mat_wide_summarised": np.arange(3000, dtype=np.int64).reshape(3, 1000),
    "mat_one_row": np.array([[1.0, 2.0, 3.0]], f32),
    "mat_transposed": np.arange(6, dtype=f32).reshape(2, 3).T,  # non-contiguous
    # 3-D and 4-D
    "cube": np.arange(24, dtype=f32).reshape(2, 3, 4) / 3,
    "cube_int": np.arange(24, dtype=np.int32).reshape(2, 3, 4),
    "cube_large": rng.standard_normal((20, 20, 20)).astype(f32),
    "hyper": rng.standard_normal((2, 2, 2, 3)).astype(f64),
    "hyper_large": np.arange(2 * 10 * 10 * 12, dtype=f32).reshape(2, 10, 10, 12),
    "five_d": np.ones((1, 2, 1, 2, 1), f32),
    "strided_view": np.arange(60, dtype=f32).reshape(3, 4, 5)[:, ::2, 1::2],
    # empty
    "empty_1d": np.zeros((0,), f32),
    "empty_1d_int": np.zeros((0,), np.int64),
    "empty_1d_f64": np.zeros((0,), f64),
    "empty_2d": np.zeros((2, 0), f32),
    "empty_3d": np.zeros((0, 3, 4), f32),
    "empty_bool": np.zeros((0, 2), bool),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    _check(CASES[name])


@pytest.mark.parametrize("scale", [1e-12, 1e-5, 1e-3, 1.0, 10.0, 1e4, 1e7, 1e12, 1e30])
@pytest.mark.parametrize("dtype", [np.float16, f32, f64])
def test_random_magnitudes(scale, dtype):
    local = np.random.default_rng(int(math.log10(scale) + 20))
    with np.errstate(over="ignore", under="ignore"):
        arr = (local.standard_normal((4, 5)) * scale).astype(dtype)
        # mix in exact integers and zeros so each mode meets them
        arr[0, 0] = 0
        arr[1, 1] = np.round(arr[1, 1])
    _check(arr)
    _check(np.round(arr))


def test_requires_grad_suffix():
    ours, theirs = _pair(np.array([1.0, 2.0], f32))
    ours.requires_grad = True
    theirs.requires_grad_(True)
    assert repr(ours) == _torch_text(theirs)


def test_requires_grad_suffix_with_dtype():
    ours, theirs = _pair(np.array([[1.5, 2.0], [3.0, 4.0]], f64))
    ours.requires_grad = True
    theirs.requires_grad_(True)
    assert repr(ours) == _torch_text(theirs)


def test_suffix_wraps_onto_new_line():
    arr = np.array([1.2345, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5], f64)
    ours, theirs = _pair(arr)
    ours.requires_grad = True
    theirs.requires_grad_(True)
    text = repr(ours)
    assert "\n" in text
    assert text == _torch_text(theirs)


class AddBackward0:
    """Stands in for a graph node; only the class name reaches the text."""


@pytest.mark.parametrize("dtype", [f32, f64])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (12,)])
def test_grad_fn_suffix(dtype, shape):
    arr = np.asarray(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) + 0.5)
    leaf = torch.from_numpy(arr.copy()).requires_grad_(True)
    theirs = leaf + 1
    ours = _make(theirs.detach().numpy().copy())
    ours.grad_fn = AddBackward0()
    ours.requires_grad = True
    assert repr(ours) == _torch_text(theirs)


def test_default_dtype_float64_hides_its_suffix():
    old_ours, old_theirs = tapegrad.get_default_dtype(), torch.get_default_dtype()
    try:
        tapegrad.set_default_dtype(tapegrad.float64)
        torch.set_default_dtype(torch.float64)
        for arr in (np.array([1.5], f64), np.array([1.5], f32), np.zeros((0,), f64),
                    np.zeros((0,), f32)):
            _check(arr)
    finally:
        tapegrad.set_default_dtype(old_ours)
        torch.set_default_dtype(old_theirs)


@pytest.mark.usefixtures("restore_printoptions")
@pytest.mark.parametrize("options", [
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"sci_mode": True},
    {"sci_mode": False},
    {"precision": 2, "sci_mode": True},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"edgeitems": 0},
    {"linewidth": 40},
    {"linewidth": 10},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6},
])
def test_printoptions(options):
    _set_both(**options)
    for name in ("vec_small", "vec_int_valued", "vec_sci_ratio", "vec_sci_small", "vec_ints",
                 "vec_bool", "vec_long_wraps", "vec_large_summarised", "mat_random",
                 "mat_large_summarised", "cube", "cube_large", "hyper", "scalar_float",
                 "vec_mixed_nan_inf", "vec_int_valued_nan", "empty_2d", "vec_f16"):
        _check(CASES[name])


@pytest.mark.usefixtures("restore_printoptions")
def test_get_printoptions_round_trips():
    assert _tensor_str.get_printoptions() == torch._tensor_str.get_printoptions()
    _set_both(precision=2, threshold=10, edgeitems=1, linewidth=60, sci_mode=True)
    saved = _tensor_str.get_printoptions()
    assert saved == torch._tensor_str.get_printoptions()
    _tensor_str.set_printoptions(profile="default")
    assert _tensor_str.get_printoptions()["precision"] == 4
    _tensor_str.set_printoptions(**saved)
    assert _tensor_str.get_printoptions() == saved


@pytest.mark.usefixtures("restore_printoptions")
def test_sci_mode_resets_when_not_passed():
    # torch's set_printoptions always assigns sci_mode, so a later call without it clears it
    _tensor_str.set_printoptions(sci_mode=True)
    _tensor_str.set_printoptions(precision=4)
    assert _tensor_str.get_printoptions()["sci_mode"] is None


@pytest.mark.usefixtures("restore_printoptions")
@pytest.mark.parametrize("seed", range(4))
def test_random_tensors(seed):
    """Seeded mix of shapes, dtypes, magnitudes, special values and options."""
    local = np.random.default_rng(seed)
    options = [{}, {"precision": 2}, {"sci_mode": True}, {"threshold": 20, "edgeitems": 2},
               {"linewidth": 50}]
    for i in range(60):
        _set_both(**options[i % len(options)])
        shape = tuple(local.integers(0, 6, local.integers(0, 5)))
        dtype = local.choice([np.float16, f32, f64, np.int64, np.int32, np.uint8, np.bool_])
        base = local.standard_normal(shape) * 10.0 ** local.uniform(-10, 10, shape)
        if i % 3 == 1:
            base = np.round(base)
        if i % 3 == 2 and base.size:
            base.flat[0] = local.choice([np.nan, np.inf, -np.inf, -0.0, 9.99995, 99999.5])
        with np.errstate(all="ignore"):
            if dtype == np.bool_:
                arr = base > 0
            elif np.dtype(dtype).kind in "iu":
                arr = np.nan_to_num(base, posinf=0, neginf=0).clip(-1e6, 1e6).astype(dtype)
            else:
                arr = base.astype(dtype)
        _check(np.asarray(arr))
