"""The bitwise ops beyond what op_db drives (tests/test_ops.py runs the function rows and the
``<<``/``>>`` rows): every operator with its reflected and augmented forms, the in-place methods
(same object, version bump, views written through), errors with torch's exception types, and
that nothing is ever recorded. Tests taking the ``torch`` fixture skip cleanly without torch."""
import operator
import warnings

import numpy as np
import pytest
from torch_compare import plain, raised

import tapegrad as tg

OPS = {"&": ("bitwise_and", operator.and_, operator.iand),
       "|": ("bitwise_or", operator.or_, operator.ior),
       "^": ("bitwise_xor", operator.xor, operator.ixor),
       "<<": ("bitwise_left_shift", operator.lshift, operator.ilshift),
       ">>": ("bitwise_right_shift", operator.rshift, operator.irshift)}
LOGIC = ("&", "|", "^")

A = np.array([[5, -6, 12], [0, 7, -1]], np.int64)
B = np.array([3, 1, 2], np.int64)
M1 = np.array([True, False, True])
M2 = np.array([True, True, False])


def _same(ours, ref):
    assert str(ours.dtype).rsplit(".", 1)[-1] == str(ref.dtype).rsplit(".", 1)[-1]
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def _operands(lib, sym):
    """(self, other) pairs: integer tensors, bools, mixed widths, and Python numbers."""
    pairs = [(lib.tensor(A), lib.tensor(B)), (lib.tensor(A), 2),
             (lib.tensor(A, dtype=lib.int8), lib.tensor(B, dtype=lib.uint8)),
             (lib.tensor(A, dtype=lib.int32), 3)]
    if sym in LOGIC:
        pairs += [(lib.tensor(M1), lib.tensor(M2)), (lib.tensor(M1), True),
                  (lib.tensor(M1), 1)]
    return pairs


@pytest.mark.parametrize("sym", list(OPS))
def test_operators_and_reflected_forms_match_torch(torch, sym):
    _, fwd, _ = OPS[sym]
    for (a, b), (ta, tb) in zip(_operands(tg, sym), _operands(torch, sym)):
        _same(fwd(a, b), fwd(ta, tb))
        # the reflected form: number OP tensor and tensor OP tensor with the operands swapped
        _same(fwd(b, a), fwd(tb, ta))


@pytest.mark.parametrize("sym", list(OPS))
def test_augmented_operators_write_in_place_as_torch(torch, sym):
    _, _, ifwd = OPS[sym]
    for (a, b), (ta, tb) in zip(_operands(tg, sym), _operands(torch, sym)):
        if a.dtype is tg.bool and type(b) is int:
            continue        # (int64 result into a bool tensor: an error, tested below)
        version = a._version
        r, tr = ifwd(a, b), ifwd(ta, tb)
        assert r is a and tr is ta
        assert a._version == version + 1
        _same(a, ta)


@pytest.mark.parametrize("sym", list(OPS))
def test_inplace_methods_match_torch_and_write_through_views(torch, sym):
    name = OPS[sym][0]
    base, tbase = tg.tensor(A), torch.tensor(A)
    row, trow = base[1], tbase[1]
    r = getattr(row, name + "_")(tg.tensor(B))
    tr = getattr(trow, name + "_")(torch.tensor(B))
    assert r is row and tr is trow
    _same(base, tbase)
    assert base._version == row._version == 1


def test_method_forms_match_torch(torch):
    for name, _, _ in OPS.values():
        _same(getattr(tg.tensor(A), name)(tg.tensor(B)), getattr(torch.tensor(A), name)(
            torch.tensor(B)))
    _same(tg.tensor(A).bitwise_not(), torch.tensor(A).bitwise_not())
    x, tx = tg.tensor(A, dtype=tg.uint8), torch.tensor(A, dtype=torch.uint8)
    assert x.bitwise_not_() is x
    tx.bitwise_not_()
    _same(x, tx)


def test_invert_operator_matches_torch(torch):
    for v, dt in ((A, "int64"), (A, "uint8"), (A, "int8"), (M1, "bool")):
        _same(~tg.tensor(v, dtype=getattr(tg, dt)), ~torch.tensor(v, dtype=getattr(torch, dt)))


def test_numpy_scalars_are_taken_as_python_numbers(torch):
    for s in (np.int64(6), np.int8(3)):
        _same(tg.tensor(A, dtype=tg.int8) & s, torch.tensor(A, dtype=torch.int8) & s)
        _same(s | tg.tensor(A, dtype=tg.int8), s | torch.tensor(A, dtype=torch.int8))


BAD = {
    "float & int": lambda L: L.tensor([1.5]) & L.tensor([1]),
    "int & float number": lambda L: L.tensor([1]) & 2.5,
    "float << number": lambda L: L.tensor([1.0]) << 1,
    "bool shift": lambda L: L.bitwise_left_shift(L.tensor([True]), L.tensor([True])),
    "bool >> bool": lambda L: L.tensor([True]) >> L.tensor([False]),
    "not float": lambda L: L.bitwise_not(L.tensor([1.0])),
    "not_ float": lambda L: L.tensor([1.0]).bitwise_not_(),
    "float self in place": lambda L: L.tensor([1.0]).bitwise_or_(L.tensor([1])),
    "float leaf in place": lambda L: L.tensor([1.0], requires_grad=True).bitwise_xor_(1),
    "shapes": lambda L: L.bitwise_and(L.tensor([1, 2]), L.tensor([1, 2, 3])),
    "shapes before dtype": lambda L: L.tensor([1.0, 2.0]) | L.tensor([1, 2, 3]),
    "in place cannot broadcast self": lambda L: L.tensor([1, 2]).__iand__(L.tensor([[1], [2]])),
    "bool self, int result": lambda L: L.tensor([True]).bitwise_and_(L.tensor([1])),
    "int self, float number": lambda L: L.tensor([1]).bitwise_and_(1.5),
    "two numbers": lambda L: L.bitwise_and(3, 4),
    "number to not": lambda L: L.bitwise_not(3),
    "string operand": lambda L: L.tensor([1]) & "a",
    "string reflected": lambda L: "a" ^ L.tensor([1]),
    "invert float": lambda L: ~L.tensor([1.0]),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_have_torch_types(torch, case):
    ours, theirs = raised(tg, BAD[case]), raised(torch, BAD[case])
    assert type(ours) is type(theirs), f"{case}: {ours!r} vs torch {theirs!r}"


def test_float_message_names_op_kernel_and_dtypes():
    with pytest.raises(NotImplementedError) as e:
        tg.tensor([1.0]) & tg.tensor([1], dtype=tg.int32)
    msg = str(e.value)
    assert msg.startswith("\"bitwise_and_cpu\" not implemented for 'Float'")
    for part in ("bitwise_and", "tapegrad.float32", "tapegrad.int32", ".long()"):
        assert part in msg
    with pytest.raises(NotImplementedError, match="lshift_cpu.*'Bool'.*bitwise_left_shift"):
        tg.tensor([True]) << tg.tensor([True])
    with pytest.raises(TypeError, match="tapegrad.float64.*logical_not"):
        ~tg.tensor([1.0], dtype=tg.float64)


def test_errors_leave_the_tensor_unchanged():
    x = tg.tensor([True, False])
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.bitwise_or_(tg.tensor([1, 2]))
    assert x.tolist() == [True, False] and x._version == 0


def test_shift_counts_outside_the_type_follow_torch(torch):
    for dt in ("int8", "uint8", "int32", "int64"):
        info = np.iinfo(dt)
        # (counts the dtype can hold, around and past its width)
        c = [k for k in (-1, 0, 7, 8, 31, 32, 63, 64, 100, 200) if info.min <= k <= info.max]
        vals = {"int8": [1, -5, 127], "uint8": [1, 200, 255]}.get(dt, [1, -5, 1 << 20])
        for v in vals:
            for fn in ("bitwise_left_shift", "bitwise_right_shift"):
                a = tg.tensor([v] * len(c), dtype=getattr(tg, dt))
                ta = torch.tensor([v] * len(c), dtype=getattr(torch, dt))
                _same(getattr(tg, fn)(a, tg.tensor(c, dtype=getattr(tg, dt))),
                      getattr(torch, fn)(ta, torch.tensor(c, dtype=getattr(torch, dt))))


def test_numbers_wrap_into_the_tensor_dtype(torch):
    for n in (300, -1, 1 << 40):
        _same(tg.tensor([100, -3], dtype=tg.int8) ^ n, torch.tensor([100, -3], dtype=torch.int8) ^ n)
        _same(n & tg.tensor([200, 3], dtype=tg.uint8), n & torch.tensor([200, 3], dtype=torch.uint8))


def test_nothing_is_recorded():
    a = tg.tensor(A)
    outs = [tg.bitwise_and(a, 3), a | a, a ^ 1, a << 1, 7 >> a, ~a, tg.bitwise_not(a),
            tg.bitwise_right_shift(a, tg.tensor(B))]
    assert all(o.grad_fn is None and not o.requires_grad and o.is_leaf for o in outs)
    a &= 1
    assert a.grad_fn is None and not a.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        tg.tensor(A).requires_grad_()


def test_results_do_not_share_memory_with_inputs():
    a = tg.tensor(A)
    r = a | 0
    r += 1
    assert a.tolist() == A.tolist()


def _outcome(L, f):
    """What ``f(L)`` gives: its result (values, dtype name, shape) or its exception's type."""
    try:
        r = f(L)
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e).__name__
    return plain(r)


def _out(fn, *args, dtype="int8"):
    def f(L):
        o = L.empty(3, dtype=getattr(L, dtype))
        r = getattr(L, fn)(L.arange(3), *args, out=o)
        return r is o, o
    return f


AS_TORCH = {
    **{f"{fn} out": _out(fn, 1) for fn in ("bitwise_and", "bitwise_or", "bitwise_xor",
                                           "bitwise_left_shift", "bitwise_right_shift")},
    "bitwise_not out": _out("bitwise_not", dtype="int64"),
    "bitwise_not out of another dtype": _out("bitwise_not"),
    "bitwise_and out float": _out("bitwise_and", 1, dtype="float32"),
    "bitwise_and out bool": _out("bitwise_and", 1, dtype="bool"),
    "bitwise_and out not a tensor": lambda L: L.bitwise_and(L.arange(3), 1, out=3),
    "bitwise_and number first with out": lambda L: L.bitwise_and(1, L.arange(3),
                                                                 out=L.empty(3, dtype=L.int64)),
    "bitwise_and out requires grad": lambda L: L.bitwise_and(
        L.arange(3), 1, out=L.empty(3, requires_grad=True)),
    "bitwise_and out resized": lambda L: L.bitwise_and(L.arange(3), 1,
                                                       out=L.empty(0, dtype=L.int64)),
    "int64 & 2**64": lambda L: L.tensor([1, 2]) & 2 ** 64,
    "int64 & -2**70": lambda L: L.tensor([1, 2]) & -2 ** 70,
    "uint8 & -2**63 - 1": lambda L: L.tensor([1, 2], dtype=L.uint8) & (-2 ** 63 - 1),
    "uint8 & 2**64 - 1": lambda L: L.tensor([1, 2], dtype=L.uint8) & (2 ** 64 - 1),
    "int64 & -2**63": lambda L: L.tensor([1, 2]) & -2 ** 63,
    "int32 >> 2**64": lambda L: L.tensor([1, 2], dtype=L.int32) >> 2 ** 64,
    "2**64 & int64": lambda L: L.bitwise_and(2 ** 64, L.tensor([1])),
    "uint8 &= 2**64": lambda L: L.tensor([1, 2], dtype=L.uint8).bitwise_and_(2 ** 64),
    "int64 & 1j": lambda L: L.tensor([1, 2]) & 1j,
    "bitwise_or(int64, 1j)": lambda L: L.bitwise_or(L.tensor([1, 2]), 1j),
    "1j & int64": lambda L: 1j & L.tensor([1, 2]),
    "int64 &= 1j": lambda L: operator.iand(L.tensor([1, 2]), 1j),
    "int64 & np.uint64 above int64": lambda L: L.tensor([1, 2]) & np.uint64(2 ** 63 + 1),
    "int64 & np.uint64": lambda L: L.tensor([1, 2]) & np.uint64(3),
}


@pytest.mark.parametrize("case", list(AS_TORCH))
def test_out_and_operand_range_as_torch(torch, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # (the resize warning, checked below)
        assert _outcome(tg, AS_TORCH[case]) == _outcome(torch, AS_TORCH[case])


def test_out_resize_warns_and_bad_calls_name_the_op():
    with pytest.warns(UserWarning, match="resized"):
        tg.bitwise_xor(tg.arange(3), 1, out=tg.empty(5, dtype=tg.int64))
    with pytest.raises(TypeError, match=r"^bitwise_and\(\) got an unexpected keyword"):
        tg.bitwise_and(tg.arange(3), 1, outt=None)
