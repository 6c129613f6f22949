"""Tests for tapegrad's tensor factories and random generators (src/tapegrad/_factories.py).

Comparisons with PyTorch live in functions that call ``pytest.importorskip("torch")``, so the rest
runs without torch installed.
"""
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad._factories import _to_array


def _torch():
    return pytest.importorskip("torch")


def _tdt(torch, d):
    """The torch dtype with the same name as a tapegrad dtype (or None)."""
    return None if d is None else getattr(torch, d.name)


def _same(ours, theirs, exact=True):
    """Assert a tapegrad tensor matches a torch tensor in dtype, shape and values."""
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", ""), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    a, b = ours.numpy(), theirs.numpy()
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=0,
                                   atol=_ulps(b))


def _ulps(b, n=2):
    """n ulps of the largest magnitude in b (arange's vectorised kernel may differ by an ulp)."""
    if b.size == 0:
        return 0.0
    return n * float(np.spacing(np.max(np.abs(b)).astype(b.dtype)))


# ---------------------------------------------------------------------------------------------
# dtype inference of tensor() / _to_array, compared with torch
# ---------------------------------------------------------------------------------------------

def _inference_cases(mod):
    """Inputs built with ``mod`` (tapegrad or torch) so tensors inside lists are native."""
    return [
        1.5, 3, True, -0.0, [1, 2.0], [True, 1], [True, 1.0], [True, False], [1, 2, 3],
        [[1, 2], [3, 4]], [[1.5], [2]], (1, 2), ((1, 2.5), (3, 4)), [], [[]], [[], []],
        np.float64(1.0), np.float32(2.5), np.int32(3), np.int16(4), np.uint8(5), np.bool_(True),
        np.float16(1.5),
        [np.float64(1.0)], [np.int32(1)], [np.int32(1), 2], [np.float64(1), 2],
        [np.float16(1), 2], [1, np.uint8(2)], [np.uint8(200), np.int8(2)],
        [np.float32(1), 2.5], [[np.float32(1)], [2.0]],
        np.array([1.0, 2.0]), np.array([1, 2], dtype=np.int32), np.array([1], dtype=np.int16),
        np.array([[1, 2]], dtype=np.uint8), np.array([True, False]), np.array(2.5),
        np.array([1.5], dtype=np.float16), np.arange(6.0).reshape(2, 3).T,  # non-contiguous
        [np.array([1, 2], dtype=np.int32)], [np.array([1, 2], dtype=np.int32), [3, 4]],
        [np.array([1.0, 2]), np.array([1.0, 2], dtype=np.float32)],
        [mod.tensor(1.0, dtype=mod.float64)], [mod.tensor(1.0, dtype=mod.float64), 2],
        [mod.tensor(1, dtype=mod.int32), 2.5], [mod.tensor(1, dtype=mod.int32), 2],
        [mod.tensor([1.0])], [mod.tensor([[1.0]])], [[mod.tensor([1.0])]],
        [mod.tensor(1), mod.tensor(2.0)], [1, mod.tensor([1.0])],
        range(3), [range(2), range(2)], [1e300, 1.0], [float("inf"), float("nan")],
        [2 ** 62, -(2 ** 62)],
    ]


def test_tensor_inference_matches_torch():
    torch = _torch()
    ours, theirs = _inference_cases(tg), _inference_cases(torch)
    for o, t in zip(ours, theirs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = torch.tensor(t)
        got = tg.tensor(o)
        try:
            if expected.dtype.is_floating_point:
                assert got.dtype.name == str(expected.dtype)[6:]
                np.testing.assert_array_equal(got.numpy(), expected.numpy())
            else:
                _same(got, expected)
        except AssertionError as e:
            raise AssertionError(f"tensor({o!r}): {e}") from None


@pytest.mark.parametrize("dtype", [tg.float32, tg.float64, tg.float16, tg.int64, tg.int32,
                                   tg.int16, tg.int8, tg.uint8, tg.bool])
def test_tensor_explicit_dtype_matches_torch(dtype):
    torch = _torch()
    for data in ([1.7, -1.7, 0.0, 2.5, -0.5], [1.7, 0.0, 2.5], [[1, 0], [3, 2]], [True, False],
                 3.9, -2.2, 7, -1, [-255, 255], [200], [-129], [2 ** 40], [float("nan")],
                 [float("inf")], [127.9], [-128.9], [1e10], np.array([1.7, -2.9, 0.2]),
                 np.array([1, 0, 5], dtype=np.int32)):
        try:
            expected = torch.tensor(data, dtype=_tdt(torch, dtype))
        except RuntimeError:  # torch's overflow check for Python numbers
            with pytest.raises(RuntimeError, match="overflow"):
                tg.tensor(data, dtype=dtype)
            continue
        _same(tg.tensor(data, dtype=dtype), expected)


def test_tensor_python_type_dtypes_match_torch():
    torch = _torch()
    # dtype=float is left out: torch reads it as float64, tapegrad's to_dtype as the default dtype
    for py in (int, bool):
        _same(tg.tensor([1.5, 0.0, 2.0], dtype=py), torch.tensor([1.5, 0.0, 2.0], dtype=py))


def test_tensor_inference_without_torch():
    cases = [
        (1.5, tg.float32, ()), (3, tg.int64, ()), (True, tg.bool, ()),
        ([1, 2.0], tg.float32, (2,)), ([True, 1], tg.int64, (2,)),
        ([True, 1.5], tg.float32, (2,)), ([[1, 2], [3, 4]], tg.int64, (2, 2)),
        ([], tg.float32, (0,)), ([[], []], tg.float32, (2, 0)),
        (np.array([1.0]), tg.float64, (1,)), (np.array([1], dtype=np.int32), tg.int32, (1,)),
        (np.float64(2.0), tg.float64, ()), ([np.int32(1), 2], tg.int64, (2,)),
        ([np.float16(1), 2], tg.float16, (2,)),
        ([tg.tensor(1, dtype=tg.int32), 2.5], tg.float32, (2,)),
        ([tg.tensor([2.0], dtype=tg.float64)], tg.float64, (1,)),
        (np.array([1, 2], dtype=np.uint16), tg.int64, (2,)),  # no uint16 in tapegrad
        (range(4), tg.int64, (4,)),
    ]
    for data, dt, shape in cases:
        t = tg.tensor(data)
        assert t.dtype is dt, (data, t.dtype)
        assert tuple(t.shape) == shape, (data, t.shape)


def test_to_array_returns_fresh_c_contiguous_arrays():
    src = np.arange(12.0).reshape(3, 4)[:, ::2]
    arr = _to_array(src)
    assert arr.flags.c_contiguous and arr.dtype == np.float64
    assert not np.shares_memory(arr, src)
    t = tg.tensor([1.0, 2.0])
    a2 = _to_array(t)
    assert not np.shares_memory(a2, t._data)
    assert _to_array([1.7, -1.7], tg.int64).tolist() == [1, -1]
    assert _to_array(2.5, np.float64).dtype == np.float64
    assert _to_array(np.array([3.0], dtype=np.float32), "float64").dtype == np.float64


def test_default_dtype_is_used():
    old = tg.get_default_dtype()
    try:
        tg.set_default_dtype(tg.float64)
        assert tg.tensor(1.5).dtype is tg.float64
        assert tg.tensor([1, 2.0]).dtype is tg.float64
        assert tg.tensor([]).dtype is tg.float64
        assert tg.zeros(2).dtype is tg.float64
        assert tg.rand(2).dtype is tg.float64
        assert tg.arange(0, 1, 0.5).dtype is tg.float64
        assert tg.full((2,), 1.5).dtype is tg.float64
        assert tg.tensor(np.array([1.0], dtype=np.float32)).dtype is tg.float32
    finally:
        tg.set_default_dtype(old)


def test_tensor_copies_and_warns_on_tensor_input():
    arr = np.array([1.0, 2.0])
    t = tg.tensor(arr)
    arr[0] = 5.0
    assert t.tolist() == [1.0, 2.0]
    src = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match=r"clone\(\)\.detach\(\)"):
        c = tg.tensor(src)
    assert not c.requires_grad and c.grad_fn is None
    assert not np.shares_memory(c._data, src._data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.tensor([1.0])  # no warning for plain data


def test_tensor_requires_grad():
    t = tg.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf
    with pytest.raises(RuntimeError):
        tg.tensor([1, 2], requires_grad=True)


# ---------------------------------------------------------------------------------------------
# errors of tensor()
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [[[1, 2], [3]], [[[1]], [[1, 2]]], [1, [2]], [[1], 2],
                                  [np.array([1, 2]), np.array([1, 2, 3])]])
def test_ragged_lists_raise_value_error(data):
    with pytest.raises(ValueError, match="expected|ragged"):
        tg.tensor(data)


def test_ragged_message_matches_torch():
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        tg.tensor([[1, 2], [3]])


@pytest.mark.parametrize("data", [np.array([1, "a"], dtype=object), np.array(["a"]),
                                  np.array([1j]), np.array([1.0], dtype=np.longdouble),
                                  [np.array([1j])], 1j, [1j], np.complex64(1)])
def test_unsupported_dtypes_raise_type_error(data):
    with pytest.raises(TypeError):
        tg.tensor(data)


def test_bad_data_errors():
    with pytest.raises(RuntimeError, match="infer dtype"):
        tg.tensor(None)
    with pytest.raises(RuntimeError, match="infer dtype"):
        tg.tensor([None])
    with pytest.raises(RuntimeError, match="infer dtype"):
        tg.tensor({})
    with pytest.raises(TypeError):
        tg.tensor("abc")
    with pytest.raises(ValueError):
        tg.tensor(["a"])
    with pytest.raises(ValueError, match="one element"):
        tg.tensor([tg.tensor([1.0, 2.0])])
    with pytest.raises(ValueError, match="Overflow"):
        tg.tensor(2 ** 63)
    with pytest.raises(TypeError):
        tg.tensor([1.0], dtype="no_such_dtype")
    with pytest.raises(TypeError):
        tg.zeros(2, dtype=object)


def test_error_types_match_torch():
    torch = _torch()
    cases = [[[1, 2], [3]], [[[1]], [[1, 2]]], np.array(["a"]), np.array([1], dtype=object),
             np.array([1.0], dtype=np.longdouble), None, [None], {}, ["a"], "a",
             [tg.tensor([1.0, 2.0])], 2 ** 63, [2 ** 64]]
    for data in cases:
        tdata = [torch.tensor([1.0, 2.0])] if isinstance(data, list) and data and \
            isinstance(data[0], tg.Tensor) else data
        with pytest.raises(Exception) as theirs:
            torch.tensor(tdata)
        with pytest.raises(Exception) as ours:
            tg.tensor(data)
        assert isinstance(ours.value, type(theirs.value)) or \
            isinstance(theirs.value, type(ours.value)), (data, ours.value, theirs.value)


# ---------------------------------------------------------------------------------------------
# as_tensor / from_numpy
# ---------------------------------------------------------------------------------------------

def test_from_numpy_shares_memory_and_keeps_dtype():
    for npd in (np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8,
                np.uint8, np.bool_):
        arr = np.zeros((2, 3), dtype=npd)
        t = tg.from_numpy(arr)
        assert t._data.dtype == npd and t.dtype.np == np.dtype(npd)
        assert np.shares_memory(t._data, arr)
    arr = np.zeros(3)
    t = tg.from_numpy(arr)
    arr[1] = 7.0
    assert t.tolist() == [0.0, 7.0, 0.0]
    t._data[2] = 3.0
    assert arr[2] == 3.0


def test_from_numpy_errors():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        tg.from_numpy([1, 2])
    for bad in (np.array([1j]), np.array(["x"]), np.array([1], dtype=object),
                np.array([1], dtype=np.uint16), np.array([1], dtype=np.uint64)):
        with pytest.raises(TypeError):
            tg.from_numpy(bad)
    with pytest.raises(ValueError, match="byte order"):
        tg.from_numpy(np.array([1], dtype=">i4"))
    ro = np.zeros(2)
    ro.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        tg.from_numpy(ro)


def test_from_numpy_matches_torch():
    torch = _torch()
    for arr in (np.arange(6, dtype=np.int32).reshape(2, 3), np.linspace(0, 1, 5),
                np.array([True, False]), np.array(3.5, dtype=np.float32)):
        _same(tg.from_numpy(arr), torch.from_numpy(arr))


def test_as_tensor():
    arr = np.arange(3.0)
    t = tg.as_tensor(arr)
    assert np.shares_memory(t._data, arr) and t.dtype is tg.float64
    t2 = tg.as_tensor(arr, dtype=tg.float32)
    assert not np.shares_memory(t2._data, arr) and t2.dtype is tg.float32
    x = tg.tensor([1.0, 2.0])
    assert tg.as_tensor(x) is x
    assert tg.as_tensor(x, dtype=tg.float32) is x
    assert tg.as_tensor(x, dtype=tg.float64).dtype is tg.float64
    assert tg.as_tensor([1, 2]).dtype is tg.int64
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.as_tensor(x)


# ---------------------------------------------------------------------------------------------
# zeros / ones / empty / full / eye, compared with torch
# ---------------------------------------------------------------------------------------------

_SIZES = [(2, 3), ((2, 3),), ([4],), ((),), (0,), (1, 0, 2), ((5,),)]
_DTYPES = [None, tg.float64, tg.float16, tg.int64, tg.int32, tg.uint8, tg.bool]


@pytest.mark.parametrize("name", ["zeros", "ones"])
@pytest.mark.parametrize("size", _SIZES)
@pytest.mark.parametrize("dtype", _DTYPES)
def test_zeros_ones_match_torch(name, size, dtype):
    torch = _torch()
    _same(getattr(tg, name)(*size, dtype=dtype), getattr(torch, name)(*size,
                                                                       dtype=_tdt(torch, dtype)))


@pytest.mark.parametrize("size", _SIZES)
@pytest.mark.parametrize("dtype", _DTYPES)
def test_empty_matches_torch_shape_and_dtype(size, dtype):
    torch = _torch()
    a, b = tg.empty(*size, dtype=dtype), torch.empty(*size, dtype=_tdt(torch, dtype))
    assert a.dtype.name == str(b.dtype)[6:] and tuple(a.shape) == tuple(b.shape)


def test_size_forms_without_torch():
    for f in (tg.zeros, tg.ones, tg.empty, tg.rand, tg.randn):
        assert tuple(f(2, 3).shape) == (2, 3)
        assert tuple(f((2, 3)).shape) == (2, 3)
        assert tuple(f([2, 3]).shape) == (2, 3)
        assert tuple(f(tg.Size([2, 3])).shape) == (2, 3)
        assert tuple(f(size=(2, 3)).shape) == (2, 3)
        assert tuple(f(np.int64(2), 3).shape) == (2, 3)
        assert tuple(f(()).shape) == ()
    assert tg.zeros(2, 3).dtype is tg.float32
    assert tg.zeros(2).tolist() == [0.0, 0.0]
    assert tg.ones(2, dtype=tg.int64).tolist() == [1, 1]


@pytest.mark.parametrize("f", [tg.zeros, tg.ones, tg.empty, tg.rand, tg.randn])
def test_negative_size_raises_runtime_error(f):
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        f(2, -1)
    with pytest.raises(RuntimeError, match="-3"):
        f((-3,))


def test_size_type_errors():
    with pytest.raises(TypeError):
        tg.zeros(2.0)
    with pytest.raises(TypeError):
        tg.zeros((2, 1.5))
    with pytest.raises(TypeError):
        tg.zeros()
    with pytest.raises(TypeError):
        tg.zeros(2, size=(3,))
    with pytest.raises(RuntimeError, match="negative"):
        tg.full((-1,), 1.0)
    with pytest.raises(RuntimeError, match="negative"):
        tg.randint(5, (-2,))


def test_device_argument():
    for dev in (None, "cpu", "cpu:0"):
        assert tg.zeros(2, device=dev).tolist() == [0.0, 0.0]
        assert tg.tensor([1], device=dev).tolist() == [1]
    for f, args in ((tg.zeros, (2,)), (tg.ones, (2,)), (tg.empty, (2,)), (tg.rand, (2,)),
                    (tg.randn, (2,)), (tg.full, ((2,), 1.0)), (tg.arange, (3,)),
                    (tg.linspace, (0, 1, 3)), (tg.eye, (2,)), (tg.tensor, ([1.0],)),
                    (tg.as_tensor, ([1.0],)), (tg.randint, (5, (2,))), (tg.randperm, (3,))):
        with pytest.raises(RuntimeError, match="CPU"):
            f(*args, device="cuda")
    with pytest.raises(RuntimeError, match="CPU"):
        tg.zeros_like(tg.zeros(2), device="cuda:0")
    with pytest.raises(RuntimeError):
        tg.tensor([1.0], pin_memory=True)


@pytest.mark.parametrize("f", [tg.zeros, tg.ones, tg.empty, tg.rand, tg.randn])
def test_requires_grad_on_factories(f):
    t = f(2, 3, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    if f in (tg.zeros, tg.ones, tg.empty):
        with pytest.raises(RuntimeError, match="floating"):
            f(2, dtype=tg.int64, requires_grad=True)
    with pytest.raises(RuntimeError):
        tg.arange(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        tg.randint(3, (2,), requires_grad=True)
    assert tg.arange(3.0, requires_grad=True).requires_grad


@pytest.mark.parametrize("fill", [1.5, 2, True, False, -0.25, float("inf"), np.float64(2.5),
                                  np.int32(3), 0])
@pytest.mark.parametrize("dtype", [None, tg.float64, tg.int64, tg.int32, tg.bool, tg.float16])
def test_full_matches_torch(fill, dtype):
    torch = _torch()
    if dtype is not None and not dtype.is_floating_point and fill == float("inf"):
        return
    _same(tg.full((2, 3), fill, dtype=dtype), torch.full((2, 3), fill, dtype=_tdt(torch, dtype)))


def test_full_without_torch():
    assert tg.full((2,), 1.5).dtype is tg.float32
    assert tg.full((2,), 7).dtype is tg.int64
    assert tg.full((2,), True).dtype is tg.bool
    assert tg.full((2, 2), 2.7, dtype=tg.int64).tolist() == [[2, 2], [2, 2]]
    assert tg.full([3], -1.0).tolist() == [-1.0] * 3
    assert tg.full((2,), tg.tensor(2.0, dtype=tg.float64)).dtype is tg.float32
    with pytest.raises(TypeError):
        tg.full((2,), 1j)


@pytest.mark.parametrize("args", [(3,), (3, 2), (2, 4), (0,), (1,), (0, 3)])
@pytest.mark.parametrize("dtype", [None, tg.float64, tg.int64, tg.bool])
def test_eye_matches_torch(args, dtype):
    torch = _torch()
    _same(tg.eye(*args, dtype=dtype), torch.eye(*args, dtype=_tdt(torch, dtype)))


def test_eye_without_torch():
    assert tg.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert tg.eye(2, 3).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    assert tg.eye(2, m=1).shape == (2, 1)
    with pytest.raises(RuntimeError, match="n must be"):
        tg.eye(-1)
    with pytest.raises(RuntimeError, match="m must be"):
        tg.eye(2, -1)


# ---------------------------------------------------------------------------------------------
# arange / linspace
# ---------------------------------------------------------------------------------------------

_ARANGE_INT_CASES = [(5,), (0,), (2, 7), (7, 2, -1), (10, -10, -3), (1, 10, 3), (-5, 5, 2),
                     (np.int32(4),), (3, 3)]
_ARANGE_FLOAT_CASES = [(5.0,), (1, 2.5, 0.3), (0, 1, 0.1), (10, 0, -1.5), (-2.5, 3.7, 0.7),
                       (0.5, 5, 1), (0, 1000, 0.37), (1.0, -1.0, -0.25), (0, 5.5), (2.5,),
                       (-9.08, 241.1, 1.5), (0, 1e4, 0.01)]


@pytest.mark.parametrize("args", _ARANGE_INT_CASES)
@pytest.mark.parametrize("dtype", [None, tg.int32, tg.int64, tg.float32, tg.float64])
def test_arange_int_args_match_torch(args, dtype):
    torch = _torch()
    exact = dtype is None or not dtype.is_floating_point
    _same(tg.arange(*args, dtype=dtype), torch.arange(*args, dtype=_tdt(torch, dtype)), exact)


@pytest.mark.parametrize("args", _ARANGE_FLOAT_CASES)
@pytest.mark.parametrize("dtype", [None, tg.float64, tg.float16, tg.int64, tg.int32])
def test_arange_float_args_match_torch(args, dtype):
    torch = _torch()
    step = args[2] if len(args) == 3 else 1
    if dtype is not None and not dtype.is_floating_point and int(step) == 0:
        # a step that truncates to 0: torch raises for int64 but gives start repeated for int32;
        # tapegrad raises for every integer dtype
        with pytest.raises(RuntimeError, match="nonzero"):
            tg.arange(*args, dtype=dtype)
        return
    try:
        expected = torch.arange(*args, dtype=_tdt(torch, dtype))
    except (RuntimeError, ValueError):  # e.g. a step that truncates to 0 for an int dtype
        with pytest.raises(RuntimeError):
            tg.arange(*args, dtype=dtype)
        return
    got = tg.arange(*args, dtype=dtype)
    # float values may differ by an ulp from torch's CPU-specific vectorised kernel
    _same(got, expected, exact=not got.dtype.is_floating_point)


def test_arange_without_torch():
    assert tg.arange(5).tolist() == [0, 1, 2, 3, 4] and tg.arange(5).dtype is tg.int64
    assert tg.arange(2, 8, 2).tolist() == [2, 4, 6]
    assert tg.arange(5, 0, -2).tolist() == [5, 3, 1]
    t = tg.arange(0, 1, 0.25)
    assert t.dtype is tg.float32 and t.tolist() == [0.0, 0.25, 0.5, 0.75]
    assert tg.arange(1, 2.5, 0.5).tolist() == [1.0, 1.5, 2.0]
    assert len(tg.arange(0, 1, 0.1)) == 10  # ceil((1 - 0) / 0.1)
    assert len(tg.arange(1, 2.5, 0.3)) == 5
    assert tg.arange(tg.tensor(3)).dtype is tg.int64
    assert tg.arange(tg.tensor(3.0)).dtype is tg.float32
    assert tg.arange(0.5, 5, 1, dtype=tg.int64).tolist() == [0, 1, 2, 3, 4]
    assert tg.arange(3, 3).shape == (0,)
    with pytest.raises(RuntimeError, match="nonzero"):
        tg.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="inconsistent"):
        tg.arange(0, 5, -1)
    with pytest.raises(RuntimeError, match="inconsistent"):
        tg.arange(5, 0, 0.5)
    with pytest.raises(RuntimeError):
        tg.arange(0, float("inf"))


_LINSPACE_CASES = [(0, 1, 7), (-3.3, 7.1, 50), (1, 0, 11), (0, 10, 5), (3, 10, 4),
                   (1e-3, 1e3, 1001), (5, 5, 3), (-1, 1, 2), (0.1, 0.9, 1000), (0, 10, 0),
                   (0, 10, 1), (20, -90, 291), (0, 100, 3000), (2.5, 2.5, 1)]


@pytest.mark.parametrize("args", _LINSPACE_CASES)
@pytest.mark.parametrize("dtype", [None, tg.float64, tg.float16, tg.int64, tg.int32])
def test_linspace_matches_torch_exactly(args, dtype):
    torch = _torch()
    _same(tg.linspace(*args, dtype=dtype), torch.linspace(*args, dtype=_tdt(torch, dtype)))


def test_linspace_random_cases_match_torch_exactly():
    torch = _torch()
    rng = np.random.default_rng(0)
    for dt in (tg.float32, tg.float64, tg.int64):
        for _ in range(60):
            s, e = (rng.uniform(-100, 100, 2) * rng.choice([1e-3, 1, 1e3])).tolist()
            n = int(rng.integers(0, 600))
            _same(tg.linspace(s, e, n, dtype=dt), torch.linspace(s, e, n, dtype=_tdt(torch, dt)))


def test_linspace_without_torch():
    t = tg.linspace(0, 1, 5)
    assert t.dtype is tg.float32 and t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert tg.linspace(0, 10, 5, dtype=tg.int64).tolist() == [0, 2, 5, 7, 10]
    assert tg.linspace(3, 7, 1).tolist() == [3.0]
    assert tg.linspace(3, 7, 0).shape == (0,)
    assert tg.linspace(-1, 1, 3, dtype=tg.float64).tolist() == [-1.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="non-negative"):
        tg.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        tg.linspace(0, 1)
    with pytest.raises(TypeError):
        tg.linspace(0, 1, 2.5)


# ---------------------------------------------------------------------------------------------
# *_like
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [tg.float32, tg.float64, tg.int32, tg.int64, tg.bool, tg.uint8])
@pytest.mark.parametrize("override", [None, tg.float64, tg.int64])
def test_like_factories_match_torch(dtype, override):
    torch = _torch()
    src = tg.zeros(2, 3, dtype=dtype)
    tsrc = torch.zeros(2, 3, dtype=_tdt(torch, dtype))
    od = _tdt(torch, override)
    _same(tg.zeros_like(src, dtype=override), torch.zeros_like(tsrc, dtype=od))
    _same(tg.ones_like(src, dtype=override), torch.ones_like(tsrc, dtype=od))
    _same(tg.full_like(src, 2.7, dtype=override), torch.full_like(tsrc, 2.7, dtype=od))
    _same(tg.full_like(src, 3, dtype=override), torch.full_like(tsrc, 3, dtype=od))
    e, te = tg.empty_like(src, dtype=override), torch.empty_like(tsrc, dtype=od)
    assert e.dtype.name == str(te.dtype)[6:] and tuple(e.shape) == tuple(te.shape)


def test_like_factories_without_torch():
    x = tg.tensor([[1, 2, 3]], dtype=tg.int32)
    for f in (tg.zeros_like, tg.ones_like, tg.empty_like):
        y = f(x)
        assert y.dtype is tg.int32 and y.shape == (1, 3)
        assert f(x, dtype=tg.float64).dtype is tg.float64
    assert tg.full_like(x, 2.9).tolist() == [[2, 2, 2]]
    assert tg.full_like(x, 2.9, dtype=tg.float32).dtype is tg.float32
    f = tg.zeros(4, 5, dtype=tg.float64)
    r = tg.rand_like(f)
    assert r.dtype is tg.float64 and r.shape == (4, 5)
    assert tg.randn_like(f).dtype is tg.float64
    ri = tg.randint_like(x, 10)
    assert ri.dtype is tg.int32 and ri.shape == (1, 3)
    assert ((ri.numpy() >= 0) & (ri.numpy() < 10)).all()
    ri = tg.randint_like(f, 3, 7)
    assert ri.dtype is tg.float64 and ((ri.numpy() >= 3) & (ri.numpy() < 7)).all()
    assert tg.zeros_like(f, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="Tensor"):
        tg.zeros_like(np.zeros(2))
    with pytest.raises(RuntimeError):
        tg.rand_like(x)
    with pytest.raises(RuntimeError):
        tg.randn_like(x)
    assert tg.rand_like(x, dtype=tg.float32).dtype is tg.float32
    with pytest.raises(RuntimeError):
        tg.ones_like(x, requires_grad=True)


# ---------------------------------------------------------------------------------------------
# random numbers
# ---------------------------------------------------------------------------------------------

@pytest.fixture
def restore_rng():
    state = tg.get_rng_state()
    yield
    tg.set_rng_state(state)


def test_manual_seed_reproducible(restore_rng):
    g = tg.manual_seed(123)
    assert g is tg.default_generator
    assert tg.initial_seed() == 123
    a = (tg.rand(5), tg.randn(2, 3), tg.randint(0, 100, (4,)), tg.randperm(6),
         tg.rand(3, dtype=tg.float64), tg.randn(3, dtype=tg.float16))
    tg.manual_seed(123)
    b = (tg.rand(5), tg.randn(2, 3), tg.randint(0, 100, (4,)), tg.randperm(6),
         tg.rand(3, dtype=tg.float64), tg.randn(3, dtype=tg.float16))
    for x, y in zip(a, b):
        assert x.dtype is y.dtype
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    tg.manual_seed(124)
    assert not np.array_equal(tg.rand(5).numpy(), a[0].numpy())


def test_generator_objects(restore_rng):
    g1 = tg.Generator().manual_seed(7)
    g2 = tg.Generator()
    assert g2.manual_seed(7) is g2
    assert g1.initial_seed() == 7
    np.testing.assert_array_equal(tg.rand(4, generator=g1).numpy(),
                                  tg.rand(4, generator=g2).numpy())
    # a private generator does not touch the default one
    tg.manual_seed(0)
    expected = tg.rand(3).numpy()
    tg.manual_seed(0)
    tg.randn(10, generator=g1)
    np.testing.assert_array_equal(tg.rand(3).numpy(), expected)
    # fresh generators all start from torch's default seed
    assert tg.Generator().initial_seed() == 67280421310721
    np.testing.assert_array_equal(tg.rand(3, generator=tg.Generator()).numpy(),
                                  tg.rand(3, generator=tg.Generator()).numpy())
    for f, args in ((tg.rand, (3,)), (tg.randn, (3,)), (tg.randint, (0, 9, (3,))),
                    (tg.randperm, (5,)), (tg.rand_like, (tg.zeros(3),)),
                    (tg.randn_like, (tg.zeros(3),)), (tg.randint_like, (tg.zeros(3), 9))):
        a = f(*args, generator=tg.Generator().manual_seed(3))
        b = f(*args, generator=tg.Generator().manual_seed(3))
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(TypeError):
        tg.rand(2, generator=np.random.default_rng(0))


def test_generator_state_roundtrip(restore_rng):
    g = tg.Generator().manual_seed(11)
    state = g.get_state()
    assert state.dtype is tg.uint8 and state.dim() == 1
    a = tg.rand(5, generator=g).numpy()
    b = tg.randn(5, generator=g).numpy()
    g.set_state(state)
    np.testing.assert_array_equal(tg.rand(5, generator=g).numpy(), a)
    np.testing.assert_array_equal(tg.randn(5, generator=g).numpy(), b)
    assert g.initial_seed() == 11
    # the default generator through get_rng_state / set_rng_state
    tg.manual_seed(5)
    s = tg.get_rng_state()
    x = tg.randint(0, 1000, (10,)).numpy()
    tg.set_rng_state(s)
    np.testing.assert_array_equal(tg.randint(0, 1000, (10,)).numpy(), x)
    with pytest.raises(TypeError):
        g.set_state([1, 2, 3])
    with pytest.raises(TypeError):
        g.set_state(tg.zeros(56))
    with pytest.raises(RuntimeError):
        g.set_state(tg.zeros(3, dtype=tg.uint8))


def test_seed_values(restore_rng):
    tg.manual_seed(-1)
    assert tg.initial_seed() == 2 ** 64 - 1
    s = tg.seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 64 and tg.initial_seed() == s
    g = tg.Generator()
    s2 = g.seed()
    assert g.initial_seed() == s2
    with pytest.raises(ValueError):
        tg.manual_seed(2 ** 64)
    with pytest.raises(TypeError):
        tg.manual_seed("abc")


def test_manual_seed_matches_torch_seed_semantics(restore_rng):
    torch = _torch()
    for s in (0, 1, -1, 2 ** 63, 12345):
        assert tg.manual_seed(s).initial_seed() == torch.manual_seed(s).initial_seed()
    assert tg.Generator().initial_seed() == torch.Generator().initial_seed()


@pytest.mark.parametrize("dtype", [tg.float32, tg.float64, tg.float16])
def test_rand_range_and_dtype(dtype, restore_rng):
    tg.manual_seed(0)
    x = tg.rand(200, 500, dtype=dtype).numpy()
    assert x.dtype == dtype.np and x.shape == (200, 500)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(float(x.astype(np.float64).mean()) - 0.5) < 0.01
    assert abs(float(x.astype(np.float64).std()) - np.sqrt(1 / 12)) < 0.01
    assert tg.rand(()).shape == ()


@pytest.mark.parametrize("dtype", [tg.float32, tg.float64, tg.float16])
def test_randn_moments(dtype, restore_rng):
    tg.manual_seed(1)
    x = tg.randn(400, 500, dtype=dtype).numpy()
    assert x.dtype == dtype.np
    x = x.astype(np.float64)
    assert abs(x.mean()) < 0.01
    assert abs(x.std() - 1.0) < 0.01
    assert np.isfinite(x).all()


def test_rand_randn_generate_float32_directly(restore_rng):
    # rand/randn in float32 must equal NumPy's float32 generation from the same state
    g = tg.Generator().manual_seed(99)
    ref = np.random.Generator(np.random.PCG64(99))
    np.testing.assert_array_equal(tg.rand(7, generator=g).numpy(),
                                  ref.random(7, dtype=np.float32))
    np.testing.assert_array_equal(tg.randn(7, generator=g).numpy(),
                                  ref.standard_normal(7, dtype=np.float32))


def test_rand_non_float_dtype_errors():
    for f in (tg.rand, tg.randn):
        with pytest.raises(RuntimeError):  # NotImplementedError, a RuntimeError, like torch
            f(2, dtype=tg.int64)


def test_randint_signatures_and_bounds(restore_rng):
    tg.manual_seed(0)
    x = tg.randint(10, (1000,))
    assert x.dtype is tg.int64 and x.shape == (1000,)
    v = x.numpy()
    assert v.min() >= 0 and v.max() < 10 and len(np.unique(v)) == 10
    y = tg.randint(-3, 4, (50, 20)).numpy()
    assert y.min() == -3 and y.max() == 3
    assert tuple(tg.randint(3, 5, size=(2, 2)).shape) == (2, 2)
    assert tuple(tg.randint(5, size=(3,)).shape) == (3,)
    z = tg.randint(low=2, high=4, size=(100,)).numpy()
    assert set(np.unique(z)) <= {2, 3}
    assert tg.randint(5, (3,), dtype=tg.float32).dtype is tg.float32
    assert tg.randint(5, (3,), dtype=tg.int32).dtype is tg.int32
    assert tg.randint(2 ** 40, (3,)).numpy().max() < 2 ** 40
    assert tg.randint(0, 2, (3,), dtype=tg.bool).dtype is tg.bool
    with pytest.raises(RuntimeError, match="from"):
        tg.randint(5, 5, (2,))
    with pytest.raises(RuntimeError):
        tg.randint(0, 300, (2,), dtype=tg.uint8)
    with pytest.raises(TypeError):
        tg.randint(5)
    with pytest.raises(RuntimeError, match="floating"):
        tg.randint(5, (2,), requires_grad=True)


def test_randint_dtype_matches_torch():
    torch = _torch()
    for args, kw in (((10, (3,)), {}), ((2, 10, (3, 2)), {}), ((10, (3,)), {"dtype": "float32"}),
                     ((10, (3,)), {"dtype": "int32"})):
        a = tg.randint(*args, **{k: getattr(tg, v) for k, v in kw.items()})
        b = torch.randint(*args, **{k: getattr(torch, v) for k, v in kw.items()})
        assert a.dtype.name == str(b.dtype)[6:] and tuple(a.shape) == tuple(b.shape)


def test_random_dtypes_match_torch():
    torch = _torch()
    for name in ("rand", "randn"):
        for dt in (None, tg.float64, tg.float16):
            a = getattr(tg, name)(2, 3, dtype=dt)
            b = getattr(torch, name)(2, 3, dtype=_tdt(torch, dt))
            assert a.dtype.name == str(b.dtype)[6:] and tuple(a.shape) == tuple(b.shape)
    for dt in (tg.float32, tg.float64, tg.int32):
        src, tsrc = tg.zeros(2, dtype=dt), torch.zeros(2, dtype=_tdt(torch, dt))
        assert tg.randint_like(src, 5).dtype.name == str(torch.randint_like(tsrc, 5).dtype)[6:]
        if dt.is_floating_point:
            assert tg.rand_like(src).dtype.name == str(torch.rand_like(tsrc).dtype)[6:]
    assert tg.randperm(4).dtype.name == str(torch.randperm(4).dtype)[6:]


def test_randperm(restore_rng):
    tg.manual_seed(3)
    p = tg.randperm(20)
    assert p.dtype is tg.int64 and sorted(p.tolist()) == list(range(20))
    assert tg.randperm(0).shape == (0,)
    assert tg.randperm(5, dtype=tg.float32).dtype is tg.float32
    with pytest.raises(RuntimeError):
        tg.randperm(-1)


# ---------------------------------------------------------------------------------------------
# misc
# ---------------------------------------------------------------------------------------------

def test_all_names_exported():
    from tapegrad import _factories
    for name in _factories.__all__:
        assert hasattr(tg, name), name
        obj = getattr(_factories, name)
        if callable(obj) and not isinstance(obj, tg.Generator):
            assert obj.__doc__, name
    assert isinstance(tg.default_generator, tg.Generator)


def test_out_argument():
    out = tg.empty(3)
    r = tg.zeros(3, out=out)
    assert r is out and out.tolist() == [0.0, 0.0, 0.0]
    tg.arange(4, out=out)
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0] and out.dtype is tg.float32
