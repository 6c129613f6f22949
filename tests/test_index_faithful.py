"""Indexing as torch does it, beyond the values: the strides of an advanced index's result, the
exception an out-of-range index raises, the nodes an index write records, and as_strided; each
case run on tapegrad and on torch."""
import numpy as np
import pytest
from torch_compare import caught, node_chain

import tapegrad as tg


def _x(L, shape, perm=None):
    x = L.tensor(np.arange(float(np.prod(shape))).reshape(shape))
    return x if perm is None else x.permute(*perm)


def _mask(L, v):
    return L.tensor(np.array(v, dtype=bool))


# ---- 1. the layout of an advanced index's result ------------------------------------------
LAYOUTS = [
    lambda L: _x(L, (3, 4, 5))[:, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[..., [0, 2]],
    lambda L: _x(L, (3, 4, 5))[[0, 1], :, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[:, [0, 1], [0, 2]],
    lambda L: _x(L, (3, 4, 5))[[[0], [1]], :, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[:, [[0], [1]], [0, 2]],
    lambda L: _x(L, (3, 4, 5))[1:, [0, 2], ::2],
    lambda L: _x(L, (3, 4, 5))[0, :, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[None, :, [0, 2]],
    lambda L: _x(L, (3, 4, 5))[:, :, [[0, 1], [2, 3]]],
    lambda L: _x(L, (3, 4, 5))[:, [[0, 1], [2, 3]], :],
    lambda L: _x(L, (3, 4, 5))[:, _mask(L, [1, 0, 1, 1])],
    lambda L: _x(L, (3, 4, 5))[:, :, _mask(L, [1, 0, 1, 1, 0])],
    lambda L: _x(L, (3, 4, 5))[:, _mask(L, np.eye(4, 5))],
    lambda L: _x(L, (3, 4, 5), (2, 0, 1))[:, [0, 2]],
    lambda L: _x(L, (3, 4, 5), (1, 2, 0))[[0, 2]],
    lambda L: _x(L, (3, 4, 5, 6), (3, 1, 0, 2))[:, [1, 2]],
    lambda L: _x(L, (3, 4, 5, 6), (3, 1, 0, 2))[:, [1, 2], :, [0, 1]],
    lambda L: _x(L, (3, 4, 5)).transpose(0, 2)[:, L.tensor([[0, 1], [2, 3]]).t()],
    lambda L: _x(L, (1, 4, 5))[:, [0, 2]],
    lambda L: _x(L, (3, 4, 1))[:, [0, 2]],
    lambda L: _x(L, (3, 1, 5))[:, [0]],
    lambda L: _x(L, (2, 3), (1, 0))[None, [[0], [0]]],
    lambda L: _x(L, (4, 3))[[[2], [2]], ...],
    lambda L: _x(L, (4, 2, 1, 2), (3, 1, 2, 0))[1::2, [1, 1], None, ...],
    lambda L: _x(L, (3, 4, 5)).expand(2, 3, 4, 5)[:, :, [0, 3]],
    # operands of one shape, all contiguous (no elements): TensorIterator's fast setup, C order
    lambda L: _x(L, (3, 1))[_mask(L, [0, 0, 0]), ...],
    lambda L: _x(L, (2, 3))[[0, 1]],
]


@pytest.mark.parametrize("make", LAYOUTS)
def test_an_advanced_index_has_torchs_strides(torch, make):
    """torch's index kernel lays its result out by TensorIterator's rules (the source restrided,
    the indices reshaped), where NumPy puts the index's dims outermost."""
    t, r = make(tg), make(torch)
    assert t.shape == tuple(r.shape)
    assert t.stride() == r.stride()
    assert t.is_contiguous() == r.is_contiguous()
    assert np.array_equal(t.numpy(), r.numpy())


def test_index_strides_fuzzed_against_torch(torch):
    """Random shapes (size-1 dims included), permutations and mixes of ints, slices, None,
    Ellipsis, integer arrays and masks, adjacent and apart; results with elements."""
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        nd = int(rng.integers(1, 5))
        shape = [int(n) for n in rng.integers(1, 5, nd)]
        perm = [int(p) for p in rng.permutation(nd)]
        sh = [shape[p] for p in perm]
        idx = []
        for d in range(nd):
            c = rng.random()
            if c < 0.35:
                ishape = [(2,), (1, 2), (2, 1), (2, 3)][int(rng.integers(4))]
                idx.append(rng.integers(0, sh[d], ishape))
            elif c < 0.45:
                idx.append(rng.random(sh[d]) < 0.6)
            elif c < 0.6:
                idx.append(int(rng.integers(-sh[d], sh[d])))
            elif c < 0.7:
                idx.append(slice(1, None, 2))
            elif c < 0.75:
                idx.append(None)
            else:
                idx.append(slice(None))
        if rng.random() < 0.2 and nd > 1:
            idx[-1] = Ellipsis
        if not any(isinstance(i, np.ndarray) for i in idx):
            continue

        def f(L, idx=idx, shape=shape, perm=perm):
            return _x(L, shape, perm)[tuple(L.tensor(i) if isinstance(i, np.ndarray) else i
                                            for i in idx)]
        if caught(torch, f) is not None or f(torch).numel() == 0:
            continue
        t, r = f(tg), f(torch)
        assert (t.shape, t.stride()) == (tuple(r.shape), r.stride()), (shape, perm, idx)
        checked += 1
    assert checked > 150



def _value_grad(L, case):
    x = L.arange(60.0).reshape(3, 4, 5)
    if case == "permuted setitem":
        v = L.ones(5, 3, 2, requires_grad=True)
        b = L.zeros(3, 4, 5, requires_grad=True).clone()
        b.permute(2, 0, 1)[:, :, [0, 2]] = v
    elif case == "setitem apart":
        v = L.ones(2, 4, requires_grad=True)
        b = L.zeros(3, 4, 5, requires_grad=True).clone()
        b[[0, 1], :, [1, 2]] = v
    elif case == "transposed mul_":
        v = L.ones(5, 4, 3, requires_grad=True)
        b = L.zeros(3, 4, 5, requires_grad=True).clone()
        b.permute(2, 1, 0).mul_(v)
    elif case == "index of a permuted tensor, create_graph":
        v = L.arange(60.0, requires_grad=True).reshape(3, 4, 5)
        y = v.permute(2, 0, 1)[:, [1, 2]]
        (gx,) = L.autograd.grad((y * y).sum(), v, create_graph=True)
        (g,) = L.autograd.grad(gx.sum(), y)
        return g.stride(), g.tolist()
    (g,) = L.autograd.grad((b * x).sum(), v)
    return g.stride(), g.tolist()


@pytest.mark.parametrize("case", ["permuted setitem", "setitem apart", "transposed mul_",
                                  "index of a permuted tensor, create_graph"])
def test_gradients_through_indexes_have_torchs_strides(torch, case):
    """The gradients of a value written through a view (torch's CopySlices hands the in-place
    op a contiguous copy of the view's gradient) and of an index's result."""
    assert _value_grad(tg, case) == _value_grad(torch, case)

# ---- 2. which error an out-of-range index raises -----------------------------------------------
def _y(L, kind="plain"):
    if kind == "leaf":
        return L.zeros(2, 3, 4, 5, requires_grad=True)
    if kind == "view":
        return L.zeros(2, 3, 4, 5, requires_grad=True).clone()[:, :]
    if kind == "t":
        return L.zeros(2, 3, 5, 4).transpose(2, 3)
    return L.zeros(2, 3, 4, 5)


_VALUES = {
    "number": lambda L: 1.0,
    "one": lambda L: L.ones(1),
    "wrong shape": lambda L: L.ones(3),
    "wrong dtype": lambda L: L.ones(1, dtype=L.float64),
    "requires grad": lambda L: L.ones(1, requires_grad=True),
}
_OUT_OF_RANGE = [(0, slice(None), [5], 1), (0, slice(None), [-5], 1), (slice(None), [5]),
                 (0, slice(None), [5, 0]), (Ellipsis, [9]), ([5], slice(None), [0]),
                 ([0], [3]), ([1, 0], [0, 7])]


@pytest.mark.parametrize("kind", ["plain", "leaf", "view", "t"])
@pytest.mark.parametrize("value", list(_VALUES))
@pytest.mark.parametrize("index", _OUT_OF_RANGE, ids=str)
def test_setitem_checks_an_arrays_range_last(torch, kind, value, index):
    """torch's index_put_ reads an integer array's values in its kernel: a leaf, a value of
    another dtype or of a shape that does not fit raise their RuntimeError first; the IndexError
    comes only when nothing else is wrong."""
    def f(L):
        _y(L, kind)[index] = _VALUES[value](L)
    ours, theirs = caught(tg, f), caught(torch, f)
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    if isinstance(theirs, IndexError):
        assert "out of bounds for dimension" in str(ours) and "with size" in str(ours)


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(0, 3)[:, [5]],
    lambda L: L.zeros(3, 4)[[5], :0],
    lambda L: L.zeros(3, 4, requires_grad=True)[[5], :0],
    lambda L: L.zeros(0, 3).__setitem__((slice(None), [5]), 1.0),
    lambda L: L.zeros(2, 0, 3)[[1], :, [7]],
    lambda L: L.zeros(2, 0, 3).index_put_((L.tensor([1]), L.tensor([], dtype=L.int64)),
                                          L.tensor(1.0)),
])
def test_an_index_that_reads_nothing_is_not_checked(torch, make):
    """An index kernel over no elements reads no index value: no error, as torch."""
    assert caught(torch, make) is None
    assert caught(tg, make) is None
    r = make(tg)
    if r is not None:
        assert r.shape == tuple(make(torch).shape)


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(0, 3)[[5]],
    lambda L: L.zeros(0, 3)[[0, 0], [1, 1]],
    lambda L: L.zeros(2, 0, 3)[:, [0, 0], 1:],
    lambda L: L.zeros(0, 3).index_put_((L.tensor([5]),), L.tensor(1.0)),
    lambda L: L.zeros(3, 4)[[1, 2], [7, -9]],
    lambda L: L.zeros(3, 4)[[-4, -9]],
    lambda L: L.zeros(3, 4).index_put_((L.tensor([5]),), L.tensor(1.0), accumulate=True),
    lambda L: L.zeros(3, 4).index_put_((L.tensor([5]),), L.ones(3)),
    lambda L: L.zeros(3, 4).index_put_((L.tensor([5]),), L.ones(1, 4, dtype=L.float64)),
    lambda L: L.zeros(3, 4).index_select(1, L.tensor([9])),
    lambda L: L.zeros(2, 3, 4).index_select(1, L.tensor([-9, 0])),
    lambda L: L.zeros(2, 3, 4).index_select(2, L.tensor([9])),
    lambda L: L.zeros(3, 4).index_select(0, L.tensor([9])),
])
def test_out_of_range_indexes_raise_torchs_type(torch, make):
    """A dim of size 0 indexed raises at once; otherwise the first bad value, after the value's
    checks; index_select along dim 1 raises torch's RuntimeError, IndexError along the others."""
    ours, theirs = caught(tg, make), caught(torch, make)
    assert theirs is not None
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)


# ---- 3. the nodes tensor[index] = value records ----------------------------------------------
def _graph(fn, depth=0):
    """grad_fn's name and, recursively, next_functions (names and input numbers)."""
    if fn is None or depth > 5:
        return None
    return type(fn).__name__, tuple((_graph(f, depth + 1), n) for f, n in fn.next_functions)


def _write(L, base_rg, view, value, index):
    w = L.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    b = w * 1 if base_rg else L.zeros(3, 4)
    dst = b[1:] if view == "slice" else b.t() if view == "t" else b
    leaves = [w]
    if value == "number":
        val = 3.0
    elif value == "0-d no grad":
        val = L.tensor(5.0)
    else:
        shape = {"0-d": (), "0-d double": (), "one": (1,), "row": (dst.shape[-1],),
                 "full": tuple(dst.shape), "1xrow": (1, 1, dst.shape[-1])}[value]
        v = L.ones(shape, dtype=L.float64 if value == "0-d double" else L.float32,
                   requires_grad=True)
        leaves.append(v)
        val = v * 2
    if index == "mask":
        index = L.tensor(np.arange(int(np.prod(dst.shape))).reshape(tuple(dst.shape)) % 3 == 0)
    dst[index] = val
    out = [_graph(b.grad_fn), _graph(dst.grad_fn)]
    if b.requires_grad:
        gs = L.autograd.grad((b * L.arange(12.0).reshape(3, 4)).sum(), leaves, allow_unused=True)
        out.append([None if g is None else g.tolist() for g in gs])
    return out


@pytest.mark.parametrize("index", [Ellipsis, slice(None), 1, (slice(None), 1), "mask", [0, 2]],
                         ids=str)
@pytest.mark.parametrize("value", ["0-d", "0-d no grad", "0-d double", "number", "one", "row",
                                   "1xrow", "full"])
@pytest.mark.parametrize("view", ["none", "slice", "t"])
@pytest.mark.parametrize("base_rg", [True, False])
def test_setitem_records_torchs_nodes(torch, base_rg, view, value, index):
    """As torch's copy_to: a value of the region's shape is copied (CopyBackwards), a 0-d one
    fills it (FillBackward3), any other is viewed without its leading 1s (ViewBackward0) and
    expanded (ExpandBackward0) first; the written tensor, when a view, then reads its base
    through AsStridedBackward0. The same gradients."""
    def f(L):
        try:
            return _write(L, base_rg, view, value, index)
        except Exception as e:  # noqa: BLE001 - the type is compared
            return type(e).__name__
    assert f(tg) == f(torch)


# ---- 4. as_strided ------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda L: L.arange(12.0).as_strided((2, 2), (1, -1)),
    lambda L: L.arange(12.0).as_strided((2, 2), (1, 1), -1),
    lambda L: L.arange(12.0).reshape(3, 4).as_strided((4, 4), (4, 1)),
    lambda L: L.arange(12.0).as_strided((2, 2), (1,)),
    lambda L: L.arange(12.0).as_strided((-1, 2), (1, 1)),
    lambda L: L.arange(12.0).as_strided((2, 2), (1, 1), 11),
    lambda L: L.arange(12.0)[4:].as_strided((3, 3), (3, 1)),
    lambda L: L.arange(6.0, requires_grad=True).expand(2, 6).as_strided((3, 3), (2, 1), 1),
    lambda L: L.arange(12.0).as_strided((2.5, 2), (1, 1)),
    lambda L: L.arange(12.0).as_strided(2, 1),
    lambda L: L.arange(12.0, requires_grad=True).as_strided_((2,), (1,)),
    lambda L: L.arange(12.0).as_strided_((20,), (1,)),
    lambda L: L.arange(12.0).as_strided((3, 3), (0, 1)).mul_(2),
])
def test_as_strided_errors_are_torchs(torch, make):
    """A negative stride or offset, a geometry past the storage's end (a view's offset counted
    from its storage's start), mismatched lengths, a non-int size: torch's exception types; an
    in-place write into overlapping elements is refused; as_strided_ of a leaf that requires
    grad is the in-place leaf error."""
    ours, theirs = caught(tg, make), caught(torch, make)
    assert theirs is not None
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    if "setStorage" in str(theirs) or "Negative strides" in str(theirs):
        assert str(ours).startswith(str(theirs).split(" out of bounds")[0])


def _strided_case(L, case):
    a = L.arange(12.0, requires_grad=True)
    if case == "of a view":
        y = a[2:].as_strided((3, 3), (2, 1), 1)
    elif case == "of a view, default offset":
        y = a.reshape(3, 4)[1:].as_strided((2, 2), (1, 4))
    elif case == "of a transpose":
        y = a.reshape(3, 4).t().as_strided((2, 2), (0, 1), 3)
    elif case == "of an expanded tensor":
        y = (a * 1).expand(2, 12).as_strided((3, 3), (2, 1), 1)
    elif case == "then a view":
        y = a.as_strided((4, 3), (2, 1))[1:, ::2]
    elif case == "written in place":
        b = a * 1
        b.as_strided((2, 2), (4, 1), 1).mul_(3)
        y = b
    elif case == "of a transposed clone, written in place":
        b = a.reshape(3, 4).t().clone()
        b.as_strided((2, 2), (1, 3), 1).mul_(2)
        y = b
    elif case == "in place":
        y = (a * 1).as_strided_((2, 2), (1, 2), 1)
    elif case == "in place on a view":
        b = a * 1
        y = b[1:]
        y.as_strided_((3,), (2,), 0)
        y.mul_(2)
        y = b
    w = L.arange(float(y.numel())).reshape(tuple(y.shape))
    (g,) = L.autograd.grad((y * y * w).sum(), a, create_graph=True)
    (gg,) = L.autograd.grad((g * L.arange(12.0)).sum(), a, allow_unused=True)
    return [y.tolist(), tuple(y.shape), y.stride(), y.storage_offset(), node_chain(y), g.tolist(),
            None if gg is None else gg.tolist()]


@pytest.mark.parametrize("case", [
    "of a view", "of a view, default offset", "of a transpose", "of an expanded tensor",
    "then a view", "written in place", "of a transposed clone, written in place", "in place",
    "in place on a view"])
def test_as_strided_as_torch(torch, case):
    """Values, geometry (storage_offset included), node chain and gradients (overlaps summed,
    an overlapping input averaged; second order too) as torch's."""
    assert _strided_case(tg, case) == _strided_case(torch, case)


def test_a_regenerated_view_and_as_strided_share_one_node_class():
    """A view whose base was written in place reads it through the class as_strided records."""
    b = tg.arange(6.0, requires_grad=True) * 1
    v = b[1:]
    b.mul_(2)
    v + 0   # (a use regenerates it)
    assert type(v.grad_fn) is type(b.as_strided((2,), (1,), 1).grad_fn)
