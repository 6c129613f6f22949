"""The ops of tapegrad.ops.shape_extra beyond what op_db drives (tests/test_ops.py runs their rows
for values, gradients, node names, gradcheck and gradgradcheck): error types against torch, the
inputs returned as the same object, views sharing storage and version counters, the graph's
shape (next_functions), unique_consecutive's node without a derivative, unfold's double
backward, and block_diag's gradient dtypes. Tests taking the ``torch`` fixture skip cleanly
without torch; the rest never need it."""
import numpy as np
import pytest
from torch_compare import plain, raised

import tapegrad as tg
from tapegrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(11)
X = RNG.uniform(-2, 2, (7, 6))
V = RNG.uniform(-2, 2, 5)
I = np.array([[1, 1, 2], [1, 1, 2], [3, 4, 5], [1, 1, 2]])


BAD = {
    "tensor_split 0 sections": lambda L: L.tensor_split(L.tensor(X), 0),
    "tensor_split 0-d": lambda L: L.tensor_split(L.tensor(1.0), 1),
    "tensor_split dim": lambda L: L.tensor_split(L.tensor(X), 2, dim=2),
    "tensor_split float": lambda L: L.tensor_split(L.tensor(X), 2.0),
    "tensor_split float tensor": lambda L: L.tensor_split(L.tensor(X), L.tensor([2.0])),
    "tensor_split 2-d tensor": lambda L: L.tensor_split(L.tensor(X), L.tensor([[2]])),
    "tensor_split int32 tensor": lambda L: L.tensor_split(L.tensor(X), L.tensor([2],
                                                                              dtype=L.int32)),
    "hsplit 0-d": lambda L: L.hsplit(L.tensor(1.0), 1),
    "hsplit uneven": lambda L: L.hsplit(L.tensor(X), 4),
    "hsplit tensor": lambda L: L.hsplit(L.tensor(X), L.tensor([1])),
    "vsplit 1-d": lambda L: L.vsplit(L.tensor(V), 1),
    "vsplit 0": lambda L: L.vsplit(L.tensor(X), 0),
    "dsplit 2-d": lambda L: L.dsplit(L.tensor(X), 1),
    "atleast number": lambda L: L.atleast_1d(3),
    "atleast list of numbers": lambda L: L.atleast_2d([L.tensor(1.0), 2]),
    "broadcast shapes": lambda L: L.broadcast_tensors(L.tensor(V), L.tensor(X)),
    "broadcast list": lambda L: L.broadcast_tensors([L.tensor(V)]),
    "block_diag 3-d": lambda L: L.block_diag(L.ones(2, 2, 2)),
    "block_diag list": lambda L: L.block_diag([L.ones(2)]),
    "cartesian_prod 2-d": lambda L: L.cartesian_prod(L.ones(2, 2)),
    "cartesian_prod 0-d": lambda L: L.cartesian_prod(L.tensor(1.0)),
    "cartesian_prod dtypes": lambda L: L.cartesian_prod(L.tensor([1, 2]), L.tensor([3.0])),
    "cartesian_prod none": lambda L: L.cartesian_prod(),
    "tril_indices negative row": lambda L: L.tril_indices(-1, 2),
    "triu_indices negative col": lambda L: L.triu_indices(2, -1),
    "tril_indices float dtype": lambda L: L.tril_indices(3, 3, dtype=L.float32),
    "triu_indices int16 dtype": lambda L: L.triu_indices(3, 3, dtype=L.int16),
    "tril_indices float row": lambda L: L.tril_indices(3.0, 3),
    "isin bool": lambda L: L.isin(L.tensor([True]), L.tensor([1])),
    "isin bool test": lambda L: L.isin(L.tensor([1]), L.tensor([True])),
    "isin numbers": lambda L: L.isin(1, 2),
    "unique_consecutive dim": lambda L: L.unique_consecutive(L.tensor(I), dim=2),
    "unique_consecutive 0-d dim": lambda L: L.unique_consecutive(L.tensor(3), dim=0),
    "unfold too big": lambda L: L.tensor(V).unfold(0, 6, 1),
    "unfold 0-d too big": lambda L: L.tensor(1.0).unfold(0, 2, 1),
    "unfold step 0": lambda L: L.tensor(V).unfold(0, 1, 0),
    "unfold negative size": lambda L: L.tensor(V).unfold(0, -1, 1),
    "unfold dim": lambda L: L.tensor(V).unfold(1, 1, 1),
}


@pytest.mark.parametrize("case", list(BAD))
def test_errors_have_torch_types(torch, case):
    ours, theirs = raised(tg, BAD[case]), raised(torch, BAD[case])
    assert type(ours) is type(theirs), f"{case}: {ours!r} vs torch {theirs!r}"


def test_error_messages_name_the_op_and_what_to_do():
    with pytest.raises(RuntimeError, match=r"not divisible by the split_size 4.*tensor_split"):
        tg.hsplit(tg.tensor(X), 4)
    with pytest.raises(RuntimeError, match=r"shapes \[5\], \[7, 6\] do not broadcast"):
        tg.broadcast_tensors(tg.tensor(V), tg.tensor(X))
    with pytest.raises(RuntimeError, match=r"Input 0 has 3 dimensions \(shape \[2, 2, 2\]"):
        tg.block_diag(tg.ones(2, 2, 2))
    with pytest.raises(NotImplementedError, match="tapegrad.int64 or tapegrad.int32"):
        tg.tril_indices(3, 3, dtype=tg.float32)
    with pytest.raises(RuntimeError, match=r"\.long\(\)"):
        tg.tensor_split(tg.tensor(X), tg.tensor([2.0]))


def test_keyword_forms_of_tensor_split_match_torch(torch):
    for kw in ({"sections": 3}, {"indices": [2, 5]}, {"indices": (1,), "dim": 1},
               {"tensor_indices_or_sections": "t"}):
        ours = tg.tensor_split(tg.tensor(X), **{k: tg.tensor([1, 4]) if v == "t" else v
                                                for k, v in kw.items()})
        theirs = torch.tensor_split(torch.tensor(X), **{k: torch.tensor([1, 4]) if v == "t"
                                                        else v for k, v in kw.items()})
        assert [tuple(p.shape) for p in ours] == [tuple(p.shape) for p in theirs]
        for p, q in zip(ours, theirs):
            np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_inputs_returned_as_the_same_object(torch):
    for L in (tg, torch):
        v = L.tensor(V, requires_grad=True)
        m = L.tensor(X)
        assert L.atleast_1d(v) is v and L.atleast_2d(m) is m and L.atleast_3d(m[None]) is not m
        assert L.broadcast_tensors(v, v)[0] is v
        assert L.cartesian_prod(v) is v
        assert L.atleast_1d() == () and L.broadcast_tensors() == ()


def test_split_pieces_are_slice_views_of_the_input(torch):
    for L in (tg, torch):
        base = L.tensor(X)
        pieces = L.tensor_split(base, [2, 5], dim=1)
        assert all(p._base is base for p in pieces)
        base.add_(1)
        assert pieces[1]._version == base._version == 1
        np.testing.assert_array_equal(pieces[1].numpy(), X[:, 2:5] + 1)
        leaf = L.tensor(V, requires_grad=True)
        parts = L.vsplit(leaf.reshape(5, 1), [2])
        assert [type(p.grad_fn).__name__ for p in parts] == ["SliceBackward0"] * 2
        assert type(parts[0].grad_fn.next_functions[0][0]).__name__ == "ViewBackward0"
        with pytest.raises(RuntimeError, match="view of a leaf Variable"):
            L.tensor_split(leaf, 2)[0].add_(1)


def test_unfold_is_a_view_and_writes_show_through():
    base = tg.tensor(np.arange(8.0))
    w = base.unfold(0, 3, 2)
    assert w._base is base
    base[2] = 100.0
    assert w[0, 2].item() == w[1, 0].item() == 100.0
    w2 = tg.tensor(np.arange(8.0)).unfold(0, 2, 2)
    w2.mul_(2)
    np.testing.assert_array_equal(w2._base.numpy(), np.arange(8.0) * 2)


def _unfold_double_backward(L, w):
    x = L.tensor(np.arange(7.0), requires_grad=True)
    wt = L.tensor(w, requires_grad=True)
    g, = L.autograd.grad(x.unfold(0, 3, 2), x, wt, create_graph=True)
    gg, = L.autograd.grad((g * L.tensor(np.arange(7.0))).sum(), wt)
    return type(g.grad_fn).__name__, g.detach().numpy(), gg.numpy()


def test_unfold_double_backward_matches_torch(torch):
    w = RNG.uniform(-1, 1, (3, 3))
    ours, theirs = _unfold_double_backward(tg, w), _unfold_double_backward(torch, w)
    assert ours[0] == theirs[0] == "UnfoldBackwardBackward0"
    np.testing.assert_allclose(ours[1], theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2])


def test_unfold_gradcheck_on_overlapping_and_strided_windows():
    x = tg.tensor(RNG.uniform(-1, 1, (3, 7)), requires_grad=True)
    for args in ((1, 3, 1), (1, 2, 3), (0, 2, 1), (-1, 7, 1)):
        assert gradcheck(lambda t, a=args: t.unfold(*a), (x,))
        assert gradgradcheck(lambda t, a=args: t.unfold(*a), (x,))


def test_unique_consecutive_records_a_node_without_derivative(torch):
    kinds = []
    for L in (tg, torch):
        x = L.tensor([1.0, 1.0, 2.0], requires_grad=True)
        vals, inv, cnt = L.unique_consecutive(x, return_inverse=True, return_counts=True)
        assert type(vals.grad_fn).__name__ == "UniqueConsecutiveBackward0"
        assert vals.requires_grad and not inv.requires_grad and not cnt.requires_grad
        with pytest.raises(RuntimeError) as e:
            vals.sum().backward()
        kinds.append(type(e.value))
        assert "unique_consecutive" in str(e.value)
    assert kinds[0] is kinds[1]


def test_block_diag_gradients_keep_each_input_dtype(torch):
    out = []
    for L in (tg, torch):
        a = L.tensor(X[:2, :3], requires_grad=True)             # float64
        b = L.tensor(V[:2], dtype=L.float32, requires_grad=True)
        c = L.tensor(1.5, dtype=L.float64, requires_grad=True)   # 0-d: no widening of b
        r = L.block_diag(b, c)
        r2 = L.block_diag(a, b)
        (r.sum() * 2 + r2.sum()).backward()
        out.append((str(r.dtype), str(r2.dtype), str(a.grad.dtype), str(b.grad.dtype),
                    str(c.grad.dtype), type(r.grad_fn).__name__))
    assert [s.rsplit(".", 1)[-1] for s in out[0]] == [s.rsplit(".", 1)[-1] for s in out[1]]


def test_non_differentiable_results_do_not_require_grad():
    x = tg.tensor(V, requires_grad=True)
    for r in (tg.isin(x, x), tg.isin(x, 1.0), tg.tril_indices(3, 3), tg.triu_indices(2, 4)):
        assert not r.requires_grad and r.grad_fn is None
    assert tg.tril_indices(3, 3).dtype is tg.int64 and tg.isin(x, x).dtype is tg.bool


def test_atleast_3d_graph_matches_torch(torch):
    for shape in ((), (3,), (2, 3)):
        names = []
        for L in (tg, torch):
            t = L.tensor(RNG.uniform(-1, 1, shape), requires_grad=True)
            r = L.atleast_3d(t)
            chain = []
            node = r.grad_fn
            while node is not None and type(node).__name__ != "AccumulateGrad":
                chain.append(type(node).__name__)
                node = node.next_functions[0][0]
            names.append((tuple(r.shape), chain))
        assert names[0] == names[1], shape


def _outcome(L, f):
    """What ``f(L)`` gives: its result (values, dtype name, shape; strides with ``stride=True``
    cases) or its exception's type."""
    try:
        r = f(L)
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e).__name__
    return plain(r)


def _isin_out(L):
    o = L.empty(4, dtype=L.bool)
    r = L.isin(L.arange(4), L.tensor([1, 3]), out=o)
    return r is o, o


def _shapes(pieces):
    return [tuple(p.shape) for p in pieces]


S10 = lambda L: L.tensor(np.arange(10.0))
S34 = lambda L: L.tensor(X[:3, :4])

AS_TORCH = {
    # isin: out=, bool Python scalars, the scalar overloads' keyword names
    "isin out": _isin_out,
    "isin out int": lambda L: L.isin(L.arange(3), 1, out=L.empty(3, dtype=L.int64)),
    "isin out not a tensor": lambda L: L.isin(L.arange(3), 1, out=3),
    "isin bool number test": lambda L: L.isin(L.tensor([1]), True),
    "isin bool number element": lambda L: L.isin(False, L.tensor([1])),
    "isin test_element=": lambda L: L.isin(L.arange(4), test_element=2.0),
    "isin element=": lambda L: L.isin(element=2.0, test_elements=L.arange(4)),
    "isin elements= number": lambda L: L.isin(elements=2.0, test_elements=L.arange(4)),
    "isin test_elements= number": lambda L: L.isin(L.arange(4), test_elements=2),
    "isin test_element= tensor": lambda L: L.isin(L.arange(4), test_element=L.arange(2)),
    "isin keywords": lambda L: L.isin(test_elements=L.arange(2), elements=L.arange(4)),
    "isin invert int": lambda L: L.isin(L.arange(4), L.arange(2), invert=1),
    # unique_consecutive: zero-size dims, argument types
    "unique_consecutive (0, 3) dim=1": lambda L: L.unique_consecutive(L.zeros(0, 3), dim=1),
    "unique_consecutive (3, 0) dim=0": lambda L: L.unique_consecutive(L.zeros(3, 0), dim=0),
    "unique_consecutive (0, 3) dim=0": lambda L: L.unique_consecutive(L.zeros(0, 3), dim=0,
                                                                     return_counts=True),
    "unique_consecutive (0, 3)": lambda L: L.unique_consecutive(L.zeros(0, 3)),
    "unique_consecutive(x, 0)": lambda L: L.unique_consecutive(L.ones(3), 0),
    "unique_consecutive counts str": lambda L: L.unique_consecutive(L.ones(3),
                                                                    return_counts="a"),
    "unique_consecutive dim=True": lambda L: L.unique_consecutive(L.ones(3), dim=True),
    "unique_consecutive dim float": lambda L: L.unique_consecutive(L.ones(3), dim=0.0),
    "unique_consecutive np.int64 dim": lambda L: L.unique_consecutive(
        L.tensor([1.0, 1.0, 2.0]), return_inverse=True, dim=np.int64(0)),
    # unfold of a 0-d tensor
    "0-d unfold size 0": lambda L: L.tensor(5.0).unfold(0, 0, 1),
    "0-d unfold size 1": lambda L: L.tensor(5.0).unfold(0, 1, 1),
    # hsplit / vsplit / dsplit keywords and counts, tensor_split's argument checks
    "hsplit sections=": lambda L: _shapes(L.hsplit(S34(L), sections=2)),
    "vsplit indices=": lambda L: _shapes(L.vsplit(S34(L), indices=[1])),
    "dsplit method sections=": lambda L: _shapes(L.ones(1, 2, 2).dsplit(sections=1)),
    "hsplit indices_or_sections=": lambda L: L.hsplit(S34(L), indices_or_sections=2),
    "hsplit indices=int": lambda L: L.hsplit(S34(L), indices=2),
    "hsplit sections=list": lambda L: L.hsplit(S34(L), sections=[1]),
    "hsplit two specs": lambda L: L.hsplit(S34(L), (2,), sections=2),
    "vsplit 0-d tensor": lambda L: _shapes(L.vsplit(S34(L), L.tensor(3))),
    "vsplit 0-d int32 tensor": lambda L: _shapes(L.vsplit(S34(L), L.tensor(1, dtype=L.int32))),
    "vsplit 0-d float tensor": lambda L: L.vsplit(S34(L), L.tensor(1.0)),
    "vsplit 0-d bool tensor": lambda L: L.vsplit(S34(L), L.tensor(True)),
    "vsplit sections= 0-d tensor": lambda L: _shapes(L.vsplit(S34(L), sections=L.tensor(3))),
    "tensor_split indices=int": lambda L: L.tensor_split(S10(L), indices=3),
    "tensor_split sections=list": lambda L: L.tensor_split(S10(L), sections=[3]),
    "tensor_split indices_or_sections=": lambda L: L.tensor_split(S10(L),
                                                                 indices_or_sections=3),
    "tensor_split indices=tensor": lambda L: L.tensor_split(S10(L), indices=L.tensor([3])),
    "tensor_split tensor_indices_or_sections=int": lambda L: L.tensor_split(
        S10(L), tensor_indices_or_sections=3),
    "tensor_split sections= 0-d tensor": lambda L: _shapes(L.tensor_split(
        S10(L), sections=L.tensor(3))),
    "tensor_split 1-element tensors in list": lambda L: _shapes(L.tensor_split(
        S10(L), [L.tensor([3]), L.tensor(4), L.tensor([[5]], dtype=L.int32), 6])),
    "tensor_split float tensor in list": lambda L: L.tensor_split(S10(L), [L.tensor([3.0])]),
    "tensor_split bool tensor in list": lambda L: L.tensor_split(S10(L), [L.tensor([True])]),
    "tensor_split 2-element tensor in list": lambda L: L.tensor_split(S10(L),
                                                                      [L.tensor([3, 4])]),
    "tensor_split list input": lambda L: L.tensor_split([1, 2], 2),
    "hsplit list input": lambda L: L.hsplit([1, 2], 2),
    "vsplit None input": lambda L: L.vsplit(None, 2),
    "dsplit list input": lambda L: L.dsplit([[[1]]], [1]),
    # tril_indices / triu_indices arguments
    "tril_indices 0-d tensors": lambda L: L.tril_indices(L.tensor(3), L.tensor(2, dtype=L.int32),
                                                        L.tensor(1)),
    "tril_indices 1-d tensor row": lambda L: L.tril_indices(L.tensor([3]), 3),
    "tril_indices float tensor row": lambda L: L.tril_indices(L.tensor(3.0), 3),
    "tril_indices pin_memory=False": lambda L: L.tril_indices(3, 3, pin_memory=False),
    "tril_indices pin_memory=True": lambda L: L.tril_indices(3, 3, dtype=L.float32,
                                                            pin_memory=True),
    "tril_indices requires_grad=True": lambda L: L.tril_indices(3, 3, requires_grad=True),
    "triu_indices requires_grad=False": lambda L: L.triu_indices(3, 4, 1, requires_grad=False),
    "tril_indices float dtype requires_grad": lambda L: L.tril_indices(3, 3, dtype=L.float32,
                                                                      requires_grad=True),
    "tril_indices negative row, float dtype": lambda L: L.tril_indices(-1, 3, dtype=L.float32),
    "triu_indices negative col, requires_grad": lambda L: L.triu_indices(3, -1,
                                                                        requires_grad=True),
    "tril_indices requires_grad=1": lambda L: L.tril_indices(3, 3, requires_grad=1),
    "tril_indices 2**40 x 0": lambda L: L.tril_indices(2 ** 40, 0),
    "triu_indices 0 x 2**40": lambda L: L.triu_indices(0, 2 ** 40),
    "tril_indices tall, one column": lambda L: L.tril_indices(2 ** 40 + 2, 1, -2 ** 40),
    "triu_indices wide, far offset": lambda L: L.triu_indices(3, 2 ** 40 + 2, 2 ** 40),
}


@pytest.mark.parametrize("case", list(AS_TORCH))
def test_arguments_and_results_as_torch(torch, case):
    assert _outcome(tg, AS_TORCH[case]) == _outcome(torch, AS_TORCH[case])


@pytest.mark.parametrize("rc", [(r, c, o) for r in range(5) for c in range(5)
                                for o in range(-6, 7)])
def test_tril_triu_indices_values_as_torch(torch, rc):
    for fn in ("tril_indices", "triu_indices"):
        assert getattr(tg, fn)(*rc).tolist() == getattr(torch, fn)(*rc).tolist()


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_unique_consecutive_dim_layout_as_torch(torch, dim):
    data = np.repeat(np.arange(24).reshape(2, 3, 4), 2, axis=dim)
    ours, theirs = (L.unique_consecutive(L.tensor(data), dim=dim) for L in (tg, torch))
    assert plain(ours) == plain(theirs)
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()


def _chain(t):
    names, n = [], t.grad_fn
    while n is not None and n.name() != "MulBackward0":
        names.append(n.name())
        n = n.next_functions[0][0]
    return names


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0,), (2, 0)])
def test_block_diag_double_backward_records_torch_nodes(torch, shape):
    out = []
    for L in (tg, torch):
        a = L.ones(shape, dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(L.block_diag(L.ones(1, 1), a).pow(2).sum(), a,
                               create_graph=True)
        out.append((_chain(g), plain(g)))
    assert out[0] == out[1]


def test_cartesian_prod_records_clone_as_torch(torch):
    out = []
    for L in (tg, torch):
        ts = [L.tensor([1.0, 2.0], requires_grad=True), L.tensor([3.0, 4.0, 5.0])]
        y = L.cartesian_prod(*ts)
        out.append([[n.name(), *(m.name() for m, _ in n.next_functions if m is not None)]
                    for n, _ in y.grad_fn.next_functions if n is not None])
    assert out[0] == out[1]


def test_unfold_0d_size_0_gradient(torch):
    out = []
    for L in (tg, torch):
        x = L.tensor(5.0, requires_grad=True)
        (g,) = L.autograd.grad(x.unfold(0, 0, 1).sum() + x * 0, x)
        out.append(plain(g))
    assert out[0] == out[1]


def _cartesian_graph(lib, lengths):
    ts = [lib.arange(float(n), requires_grad=True) for n in lengths]
    y = lib.cartesian_prod(*ts)
    return [(f.name(), [g.name() for g, _ in f.next_functions if g is not None])
            for f, _ in y.grad_fn.next_functions]


@pytest.mark.parametrize("lengths", [(1, 2), (2, 1), (2, 3)])
def test_cartesian_prod_records_torchs_graph_for_length_one_inputs_too(torch, lengths):
    assert _cartesian_graph(tg, lengths) == _cartesian_graph(torch, lengths)
