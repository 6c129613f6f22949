"""Breaker findings on today's commits (views per index step, layouts, norms, integer kernels),
each compared with torch."""
import numpy as np
import pytest
from torch_compare import node_chain

import tapegrad as tg


def _both(fn):
    torch = pytest.importorskip("torch")
    return fn(tg), fn(torch)


def _t_view(L, shape):
    """A transposed (non-contiguous) view of a leaf."""
    n = int(np.prod(shape))
    return L.tensor(np.arange(float(n)).reshape(shape[::-1])).t()


@pytest.mark.parametrize("make", [
    lambda L: _t_view(L, (4, 5))[..., None],
    lambda L: _t_view(L, (4, 5)).unsqueeze(-1),
    lambda L: _t_view(L, (4, 5))[None, ..., None],
    lambda L: L.tensor(np.arange(20.0).reshape(4, 5))[None, 1, None, 2, None],
    lambda L: _t_view(L, (4, 5))[None, 1, None, 2, None],
    lambda L: L.tensor(np.arange(24.0).reshape(2, 3, 4))[None, 1, ..., None, 2],
    lambda L: L.tensor(np.arange(20.0).reshape(4, 5))[..., 1, None],
    lambda L: L.tensor(np.arange(20.0).reshape(4, 5))[None][:, 1][:, None],
    lambda L: L.zeros(0, 3)[None],
    lambda L: L.zeros(0, 3).unsqueeze(0),
])
def test_a_new_dim_has_torchs_stride_and_the_others_keep_theirs(make):
    t, r = _both(make)
    assert t.shape == tuple(r.shape)
    assert t.stride() == r.stride()
    assert np.array_equal(t.numpy(), r.numpy())


def _err(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e)
    return None, ""


@pytest.mark.parametrize("make", [
    lambda L: L.nn.functional.nll_loss(L.tensor([[1, 2, 3], [4, 5, 6]]), L.tensor([0, 2])),
    lambda L: L.nn.functional.nll_loss(L.tensor([[1, 2, 3], [4, 5, 6]]).bool(), L.tensor([0, 2])),
    lambda L: L.nn.functional.nll_loss(L.tensor([1, 2, 3], dtype=L.int32), L.tensor(1),
                                       reduction="none"),
    lambda L: L.nn.NLLLoss()(L.tensor([[1, 2, 3]], dtype=L.uint8), L.tensor([0])),
    lambda L: L.nn.functional.nll_loss(L.ones(2, 3, 2, 2, dtype=L.int64),
                                       L.zeros(2, 2, 2, dtype=L.int64)),
    lambda L: L.nn.functional.nll_loss(L.ones(2, 3, 2, dtype=L.int64), L.zeros(2, 2, dtype=L.int64)),
    lambda L: L.nn.functional.nll_loss(L.ones(0, 3, dtype=L.int64), L.zeros(0, dtype=L.int64)),
    lambda L: L.nn.functional.nll_loss(L.ones(2, 3, dtype=L.int64), L.tensor([0, 5])),
    lambda L: L.nn.functional.nll_loss(L.ones(2, 3, 2, 2, dtype=L.int64),
                                       L.zeros(2, 2, 2, dtype=L.uint8)),
])
def test_nll_loss_of_an_integer_input_names_torchs_kernel(make):
    """torch's nll_loss kernels take floating inputs only: NotImplementedError naming the kernel,
    before the targets' values are read (an empty input included)."""
    t, r = _both(lambda L: _err(make, L))
    assert t[0] == r[0] == "NotImplementedError"
    assert t[1].startswith(r[1])


@pytest.mark.parametrize("make", [
    # the weights are checked before the kernel, and before the targets' values
    lambda L: L.nn.functional.nll_loss(L.ones(2, 3), L.tensor([0, 5]), weight=L.ones(4)),
    lambda L: L.nn.functional.nll_loss(L.ones(2, 3, dtype=L.int64), L.tensor([0, 1]),
                                       weight=L.ones(4)),
    lambda L: L.nn.functional.nll_loss(L.ones(2, 3), L.tensor([0, 5]),
                                       weight=L.ones(3, requires_grad=True)),
    lambda L: L.nn.functional.nll_loss(L.ones(2, 3), L.tensor([0.0, 1.0]),
                                       weight=L.ones(3, requires_grad=True)),
])
def test_nll_loss_errors_come_in_torchs_order(make):
    t, r = _both(lambda L: _err(make, L))
    assert t[0] == r[0] == "RuntimeError"
    assert t[1].startswith(r[1])


@pytest.mark.parametrize("make", [
    # a target of the input's shape holds probabilities: floating, without an ignore_index
    lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.ones(2, 3, dtype=L.int64)),
    lambda L: L.nn.functional.cross_entropy(L.ones(3), L.ones(3, dtype=L.int64)),
    lambda L: L.nn.functional.cross_entropy(L.ones(2, 3, dtype=L.int64),
                                            L.ones(2, 3, dtype=L.bool)),
    lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.ones(2, 3), ignore_index=1),
    lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.ones(2, 3, dtype=L.int64),
                                            label_smoothing=2.0),
])
def test_cross_entropy_errors_come_in_torchs_order(make):
    t, r = _both(lambda L: _err(make, L))
    assert t[0] == r[0] == "RuntimeError"
    assert t[1].startswith(r[1])


@pytest.mark.parametrize("make", [
    lambda L: L.softmax(L.ones(0, 3, dtype=L.int64), 1),
    lambda L: L.log_softmax(L.ones(0, 3, dtype=L.int32), 0),
    lambda L: L.nn.functional.softmax(L.ones(2, 0, dtype=L.bool), dim=1),
])
def test_softmax_of_an_empty_integer_tensor_is_returned_as_torch(make):
    t, r = _both(make)
    assert t.shape == tuple(r.shape) and str(t.dtype) == str(r.dtype).replace("torch", "tapegrad")


def test_cross_entropy_of_an_empty_integer_input_reaches_nll_loss_kernel():
    """log_softmax returns the empty input, so torch's error names nll_loss's kernel."""
    t, r = _both(lambda L: _err(lambda L: L.nn.functional.cross_entropy(
        L.ones(0, 3, dtype=L.int64), L.zeros(0, dtype=L.int64)), L))
    assert t[0] == r[0] == "NotImplementedError"
    assert t[1].startswith(r[1]) and "nll_loss_out_frame" in r[1]


@pytest.mark.parametrize("make", [
    lambda L: L.special.log_ndtr(L.tensor([0.5, -1.5], dtype=L.float16)),
    lambda L: L.special.log_ndtr(L.tensor(-3.0, dtype=L.float16)),
    lambda L: L.special.log_ndtr(L.zeros(0, dtype=L.float16)),
])
def test_log_ndtr_has_no_float16_kernel_as_torch(make):
    t, r = _both(lambda L: _err(make, L))
    assert t[0] == r[0] == "NotImplementedError"
    assert t[1].startswith(r[1])


_A = np.random.RandomState(1).rand(2, 3, 3)


@pytest.mark.parametrize("make", [
    # the singular-value orders have no float16 kernel
    lambda L: L.norm(L.tensor(_A[0], dtype=L.float16), "nuc"),
    lambda L: L.linalg.matrix_norm(L.tensor(_A, dtype=L.float16), "nuc"),
    lambda L: L.linalg.matrix_norm(L.tensor(_A, dtype=L.float16), -2),
    lambda L: L.nuclear_norm(L.tensor(_A[0], dtype=L.float16)),
    # dtype= is checked as matrix_norm's, before the computation
    lambda L: L.norm(L.tensor(_A[0], dtype=L.float32), "nuc", dtype=L.float16),
    lambda L: L.linalg.matrix_norm(L.tensor(_A), 2, dtype=L.float16),
    lambda L: L.linalg.matrix_norm(L.tensor(_A), "nuc", dtype=L.int64),
    lambda L: L.linalg.matrix_norm(L.tensor(_A), "fro", dtype=L.int64),
    lambda L: L.linalg.matrix_norm(L.tensor(_A), "fro", dtype=L.float16),
    # the order is checked first
    lambda L: L.norm(L.tensor(_A), "abc"),
    lambda L: L.norm(L.tensor(_A), "inf", dim=1),
    lambda L: L.linalg.matrix_norm(L.tensor(_A[0, 0]), "abc"),
    lambda L: L.linalg.matrix_norm(L.ones(2, 2, dtype=L.int64), 3),
    lambda L: L.linalg.matrix_norm(L.tensor(_A), "abc", dim=(0, 0)),
])
def test_matrix_norm_checks_in_torchs_order(make):
    t, r = _both(lambda L: _err(make, L))
    assert t[0] == r[0] == "RuntimeError"
    assert t[1] == r[1]


def test_float16_fro_and_max_orders_still_compute():
    t, r = _both(lambda L: L.linalg.matrix_norm(L.tensor(_A, dtype=L.float16), 1))
    assert str(t.dtype) == "tapegrad.float16" and t.shape == tuple(r.shape)
    assert np.allclose(t.numpy(), r.numpy(), rtol=2e-3)


def _warned(fn, L):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(L)
        except Exception as e:  # noqa: BLE001 - the type and message are compared
            return type(e).__name__, str(e).split(" (")[0], len(w)
    return r, len(w)


def _u8(L, *v):
    return L.tensor(list(v) if len(v) > 1 else v[0], dtype=L.uint8)


@pytest.mark.parametrize("make", [
    lambda L: L.arange(20.0).reshape(4, 5)[_u8(L, 1, 0, 1, 1)],
    lambda L: L.arange(20.0).reshape(4, 5)[:, _u8(L, 0, 1, 1, 0, 1)],
    lambda L: L.arange(20.0).reshape(4, 5)[_u8(L, 1)],
    lambda L: L.arange(20.0).reshape(4, 5)[_u8(L, 0)],
    lambda L: L.arange(20.0).reshape(4, 5)[_u8(L, 1), 1],
    lambda L: L.arange(20.0).reshape(4, 5)[np.array([1, 0, 1, 1], dtype=np.uint8)],
])
def test_a_uint8_index_is_a_mask_as_in_torch(make):
    (t, tw), (r, rw) = _both(lambda L: _warned(make, L))
    assert t.shape == tuple(r.shape) and np.array_equal(t.numpy(), r.numpy())
    assert tw == rw


def test_the_gradient_through_a_uint8_mask():
    def run(L):
        x = L.tensor(np.arange(20.0).reshape(4, 5), requires_grad=True)
        (x[_u8(L, 1, 0, 1, 1)] * 2).sum().backward()
        return x.grad.numpy()
    t, r = _both(run)
    assert np.array_equal(t, r)


@pytest.mark.parametrize("write", [
    lambda L, y: y.__setitem__(_u8(L, 1, 0, 1, 1), 0.0),
    lambda L, y: y.__setitem__(_u8(L, 1, 0, 1, 1), L.tensor(0.0)),
    lambda L, y: y.__setitem__((_u8(L, 1, 0, 1, 1), 1), 0.0),
    lambda L, y: y.__setitem__(np.array([1, 0, 1, 1], dtype=np.uint8), 0.0),
    lambda L, y: y.__setitem__(_u8(L, 1, 0, 1, 1), L.zeros(5)),
    lambda L, y: y.__setitem__(_u8(L, 1, 0, 1, 1), L.zeros(3, 5)),
    lambda L, y: y.__setitem__(_u8(L, 1), 0.0),
])
def test_writing_through_a_uint8_mask_as_in_torch(write):
    def run(L):
        y = L.arange(20.0).reshape(4, 5)
        out = _warned(lambda L: write(L, y), L)
        return out if len(out) == 3 else (y.numpy().tolist(), out[1])
    t, r = _both(run)
    assert t == r


_S = slice(None)


@pytest.mark.parametrize("index", [
    lambda L, M, M2: (1, _S, [0, 1]),
    lambda L, M, M2: (_S, [0, 1, 2], _S, 1),
    lambda L, M, M2: (0, _S, [0, 1], 1),
    lambda L, M, M2: (0, ..., [1, 2]),
    lambda L, M, M2: (_S, 0, _S, [1, 2]),
    lambda L, M, M2: (0, _S, [[0], [1]], slice(1, 3)),
    lambda L, M, M2: (-1, ..., [1, 2], _S),
    lambda L, M, M2: (1, _S, [1, 1, 1]),
    lambda L, M, M2: (1, _S, M),
    lambda L, M, M2: (L.tensor([True, False]), _S, 2),
    lambda L, M, M2: (L.tensor(1), _S, [0, 1]),
    # (the same before: an int next to the arrays)
    lambda L, M, M2: ([0, 1], slice(1, None), 2),
    lambda L, M, M2: ([1], 0, [2]),
    lambda L, M, M2: (1, None, _S, [0, 1]),
])
def test_an_int_apart_from_the_index_arrays_selects_first_as_torch(index):
    """torch selects an index's ints before it indexes with the arrays; NumPy counts an int
    among them, so that an int apart from the arrays put the arrays' dim first."""
    def idx(L):
        return index(L, L.tensor([True, False, True, True]),
                     L.tensor([[True, False, True, True]] * 3))

    def read(L):
        x = L.tensor(np.arange(120.0).reshape(2, 3, 4, 5), requires_grad=True)
        y = x[idx(L)]
        w = np.arange(float(y.numel())).reshape(tuple(y.shape))
        (y * L.tensor(w)).sum().backward()
        return tuple(y.shape), y.detach().numpy().tolist(), x.grad.numpy().tolist()

    def write(L):
        y = L.tensor(np.arange(120.0).reshape(2, 3, 4, 5))
        shape = tuple(y[idx(L)].shape)
        y[idx(L)] = L.tensor(-np.arange(float(np.prod(shape)))).reshape(shape)
        z = L.tensor(np.arange(120.0).reshape(2, 3, 4, 5))
        z[idx(L)] = L.tensor(-1.0, dtype=L.float64)
        return y.numpy().tolist(), z.numpy().tolist()

    t, r = _both(read)
    assert t == r
    t, r = _both(write)
    assert t == r


def _graph_names(t, depth=5):
    names = []

    def walk(fn, d):
        if fn is not None and d < depth:
            names.append(type(fn).__name__)
            for f, _ in fn.next_functions:
                walk(f, d + 1)
    walk(t.grad_fn, 0)
    return names


@pytest.mark.parametrize("index", [
    lambda x: x[1:], lambda x: x[1], lambda x: x[...], lambda x: x[:, :], lambda x: x[:, ::2],
    lambda x: x[1:, 2], lambda x: x[None, -1],
])
def test_the_gradient_of_an_index_view_records_torchs_nodes(index):
    """Under create_graph the gradient of a slice is SliceBackwardBackward0, of a select
    SelectBackwardBackward0, and of an alias the gradient itself (no node), as torch."""
    def run(L):
        x = L.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        y = index(x)
        g, = L.autograd.grad((y * y).sum(), x, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), x)
        return _graph_names(g), g.detach().numpy().tolist(), gg.numpy().tolist()
    t, r = _both(run)
    assert t == r


@pytest.mark.parametrize("make", [
    lambda L: L.ones(2).to(layout=L.strided),
    lambda L: L.ones(2).to(L.strided),
    lambda L: L.ones(2).to(L.float64, layout=L.strided),
    lambda L: L.ones(2).to(foo=1),
    lambda L: L.layout("strided"),
    lambda L: type(L.strided)(),
])
def test_to_takes_no_layout_and_layouts_are_not_made_as_torch(make):
    t, r = _both(lambda L: _err(make, L))
    assert t[0] == r[0] == "TypeError"


def test_to_still_takes_its_arguments():
    def run(L):
        x = L.ones(2)
        return [str(y.dtype).split(".")[-1] for y in (
            x.to(L.float64, non_blocking=True, copy=True), x.to(x, True, True),
            x.to("cpu", L.float16), x.to(dtype=L.int32, device="cpu"),
            x.to(memory_format=L.contiguous_format))]
    t, r = _both(run)
    assert t == r


@pytest.mark.parametrize("index", [
    lambda L: (slice(1, None), [0, 2]), lambda L: (0, [0, 2]), lambda L: ([0, 2], 1),
    lambda L: (None, [0, 1]), lambda L: ([0, 1], None), lambda L: True, lambda L: False,
    lambda L: (None, True), lambda L: L.tensor(True), lambda L: (Ellipsis, [1, 2]),
    lambda L: (slice(None), [0, 1]), lambda L: (slice(1, None), L.tensor([1, 0, 1, 1, 0]) > 0),
    lambda L: (slice(None, None, 2), [0, 1]),
])
def test_an_advanced_index_records_its_views_first_as_torch(index):
    """torch applies an index's ints, slices, Nones and bools (a new dim) as views, then indexes
    their result: IndexBackward0 over SliceBackward0 for x[1:, [0, 2]]."""
    def run(L):
        x = L.tensor(np.arange(20.0).reshape(4, 5), requires_grad=True)
        y = x[index(L)]
        w = np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape))
        (y * L.tensor(w)).sum().backward()
        return node_chain(y), tuple(y.shape), y.detach().numpy().tolist(), x.grad.numpy().tolist()
    t, r = _both(run)
    assert t == r


@pytest.mark.parametrize("index", [
    lambda b: b[1:, ::2], lambda b: b[0, 1], lambda b: b[None, 1], lambda b: b[..., 1:3, None],
    lambda b: b[1][0:2][::2], lambda b: b[:, None, 1, 2:], lambda b: b[-1, -1, -1],
    lambda b: b[...], lambda b: b.t() if b.dim() == 2 else b.transpose(0, 2),
])
@pytest.mark.parametrize("write", ["mul_", "fill", "add_grad"])
def test_a_view_written_in_place_gets_torchs_regenerated_node(index, write):
    """After an in-place write through it, a view's grad_fn is AsStridedBackward0 over the
    base's CopySlices, as torch regenerates it, whatever views made it; values and gradients
    (second order included) as torch."""
    def run(L):
        x = L.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
        b = x * 1
        v = index(b)
        if write == "mul_":
            v.mul_(2)
        elif write == "fill":
            v[...] = 1
        else:
            v.add_(x.sum() * L.ones(tuple(v.shape)))
        out = (node_chain(v), node_chain(b), b.detach().numpy().tolist())
        g, = L.autograd.grad((v * v).sum() + (b * b).sum(), x, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), x)
        return out + (g.detach().numpy().tolist(), gg.numpy().tolist())
    t, r = _both(run)
    assert t == r
