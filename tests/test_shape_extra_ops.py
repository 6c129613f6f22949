"""The ops of tapegrad.ops.shape_extra beyond what op_db drives (tests/test_ops.py runs their rows
for values, gradients, node names, gradcheck and gradgradcheck): error types against torch, the
inputs returned as the same object, views sharing storage and version counters, the graph's
shape (next_functions), unique_consecutive's node without a derivative, unfold's double
backward, and block_diag's gradient dtypes. Tests taking the ``torch`` fixture skip cleanly
without torch; the rest never need it."""
import numpy as np
import pytest
from torch_compare import raised

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
