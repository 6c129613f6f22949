"""In-place ops: values, gradients, rebased grad_fn names, version counters, and errors vs torch."""
import numpy as np
import pytest

import tapegrad as tg

CASES = {
    "mul_t": lambda x, b: x.mul_(b),
    "mul_s": lambda x, b: x.mul_(2),
    "div_t": lambda x, b: x.div_(b),
    "sub_alpha": lambda x, b: x.sub_(b, alpha=2),
    "pow_": lambda x, b: x.pow_(2),
    "neg_": lambda x, b: x.neg_(),
    "exp_": lambda x, b: x.exp_(),
    "log_": lambda x, b: x.log_(),
    "sqrt_": lambda x, b: x.sqrt_(),
    "sigmoid_": lambda x, b: x.sigmoid_(),
    "tanh_": lambda x, b: x.tanh_(),
    "relu_": lambda x, b: x.relu_(),
    "clamp_": lambda x, b: x.clamp_(0.7, 1.0),
    "add_": lambda x, b: x.add_(b),
    "iadd": lambda x, b: x.__iadd__(b),
    "isub": lambda x, b: x.__isub__(b),
    "imul": lambda x, b: x.__imul__(b),
    "idiv": lambda x, b: x.__itruediv__(b),
    "copy_": lambda x, b: x.copy_(b),
    "zero_": lambda x, b: x.zero_(),
    "fill_": lambda x, b: x.fill_(2),
    "masked_fill_": lambda x, b: x.masked_fill_(x > 1, 0.0),
    "setitem_int": lambda x, b: x.__setitem__(0, b[1]),
    "setitem_number": lambda x, b: x.__setitem__(1, 7.0),
    "setitem_mask": lambda x, b: x.__setitem__(x > 1, 5.0),
    "setitem_idx": lambda x, b: x.__setitem__([0, 2], b[:2]),
    "setitem_full": lambda x, b: x.__setitem__(slice(None), b * 2),
    "view_mul": lambda x, b: x[1:].mul_(2),
    "view_mul_t": lambda x, b: x[1:].mul_(b[1:]),
    "view_of_view": lambda x, b: x[1:][0:1].mul_(b[0:1]),
    "twice": lambda x, b: x.tanh_().tanh_(),
    "tan_": lambda x, b: x.tan_(),
    "asin_": lambda x, b: x.mul_(0.5).asin_(),
    "arccos_": lambda x, b: x.mul_(0.5).arccos_(),
    "atan_": lambda x, b: x.atan_(),
    "sinh_": lambda x, b: x.sinh_(),
    "cosh_": lambda x, b: x.cosh_(),
    "asinh_": lambda x, b: x.asinh_(),
    "acosh_": lambda x, b: x.add_(1.0).acosh_(),
    "atanh_": lambda x, b: x.mul_(0.5).atanh_(),
    "log10_": lambda x, b: x.log10_(),
    "log2_": lambda x, b: x.log2_(),
    "deg2rad_": lambda x, b: x.deg2rad_(),
    "rad2deg_": lambda x, b: x.rad2deg_(),
    "ceil_": lambda x, b: x.ceil_(),
    "floor_": lambda x, b: x.floor_(),
    "trunc_": lambda x, b: x.trunc_(),
    "fix_": lambda x, b: x.sub_(1).fix_(),
    "round_": lambda x, b: x.mul_(2.6).round_(),
    "round_decimals": lambda x, b: x.mul_(1.37).round_(decimals=1),
    "round_negative_decimals": lambda x, b: x.mul_(137).round_(decimals=-1),
    "rsqrt_": lambda x, b: x.rsqrt_(),
    "sign_": lambda x, b: x.sub_(1).sign_(),
    "sgn_": lambda x, b: x.sub_(1).sgn_(),
    "erf_": lambda x, b: x.erf_(),
    "expm1_": lambda x, b: x.expm1_(),
    "log1p_": lambda x, b: x.log1p_(),
    "square_": lambda x, b: x.square_(),
    "clamp_min_": lambda x, b: x.clamp_min_(0.7),
    "clamp_max_": lambda x, b: x.clamp_max_(1.0),
    "clamp_min_tensor": lambda x, b: x.clamp_min_(b),
    "clamp_max_tensor": lambda x, b: x.clamp_max_(b[1:2] * 1),
    "clamp_min_view": lambda x, b: x[1:].clamp_min_(b[1:]),
    "negative_": lambda x, b: x.negative_(),
    "absolute_": lambda x, b: x.sub_(1).absolute_(),
    "multiply_": lambda x, b: x.multiply_(b),
    "subtract_": lambda x, b: x.subtract_(b, alpha=2),
    "divide_": lambda x, b: x.divide_(b),
    "divide_floor": lambda x, b: x.mul_(5).divide_(b, rounding_mode="floor"),
    "div_trunc": lambda x, b: x.mul_(5).div_(0.3, rounding_mode="trunc"),
    "true_divide_": lambda x, b: x.true_divide_(b),
    "lt_": lambda x, b: x.lt_(b),
    "ge_number": lambda x, b: x.ge_(0.8),
    "not_equal_": lambda x, b: x.not_equal_(b),
    "view_gt_": lambda x, b: x[1:].gt_(b[1:]),
    "logical_and_": lambda x, b: x.logical_and_(b),
    "logical_not_": lambda x, b: x.logical_not_(),
    "fmod_": lambda x, b: x.mul_(3).fmod_(b),
    "fmod_number": lambda x, b: x.mul_(3).fmod_(0.5),
    "cumsum_": lambda x, b: x.cumsum_(0),
    "view_cumsum_": lambda x, b: x[1:].cumsum_(0),
    "addmm_": lambda x, b: x.view(3, 1).addmm_(b.view(3, 1), b[:1].view(1, 1)),
    "addmm_scaled": lambda x, b: x.view(1, 3).addmm_(b[:1].view(1, 1), b.view(1, 3), beta=-1,
                                                     alpha=0.5),
}


def _run(lib, fn):
    a = lib.tensor([0.6, 0.8, 1.2], requires_grad=True)
    b = lib.tensor([0.7, 0.9, 1.3], requires_grad=True)
    x = a * 1
    fn(x, b)
    name = type(x.grad_fn).__name__
    version = x._version
    try:
        (x * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    except RuntimeError as e:   # e.g. tanh_ twice: the first result was overwritten (torch too)
        return "error", "modified by an inplace operation" in str(e), version, [None, None]
    # (force: torch's sgn gradient is a ZeroTensor, which a plain .numpy() refuses)
    grads = [None if t.grad is None else t.grad.numpy(force=True).copy() for t in (a, b)]
    return x.detach().numpy().copy(), name, version, grads


@pytest.mark.parametrize("case", sorted(CASES))
def test_inplace_matches_torch(case):
    torch = pytest.importorskip("torch")
    ours = _run(tg, CASES[case])
    ref = _run(torch, CASES[case])
    if isinstance(ref[0], str) or isinstance(ours[0], str):
        assert ours[:3] == ref[:3]
        return
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-6)
    assert ours[1] == ref[1]
    assert ours[2] == ref[2]
    for g1, g2 in zip(ours[3], ref[3]):
        if g2 is None:
            assert g1 is None
        else:
            np.testing.assert_allclose(g1, g2, rtol=1e-5)


def test_column_write_through_view_of_non_leaf():
    y = tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    z = y * 1
    z[:, 1] *= 2
    z.sum().backward()
    assert type(z.grad_fn).__name__ == "CopySlices"
    assert y.grad.tolist() == [[1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]


def test_write_into_plain_tensor_makes_it_part_of_graph():
    base = tg.zeros(3)
    w = tg.tensor([2.0], requires_grad=True)
    base[1:2] = w * 3
    assert base.requires_grad and type(base.grad_fn).__name__ == "CopySlices"
    base.sum().backward()
    assert w.grad.tolist() == [3.0]


def test_leaf_inplace_raises_before_changing_anything():
    leaf = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        leaf.add_(1)
    msg = str(e.value)
    assert "leaf Variable" in msg and "no_grad" in msg and ".clone()" in msg and "[2]" in msg
    assert leaf.tolist() == [1.0, 2.0] and leaf._version == 0
    with pytest.raises(RuntimeError, match="view of a leaf"):
        leaf[0:1].mul_(2)
    assert leaf.tolist() == [1.0, 2.0]
    with tg.no_grad():
        leaf.add_(1)
    assert leaf.tolist() == [2.0, 3.0] and leaf._version == 1


def test_expanded_write_is_runtime_error():
    e = tg.tensor([[1.0, 2.0]]).expand(3, 2)
    with pytest.raises(RuntimeError, match="clone"):
        e.add_(1)
    with pytest.raises(RuntimeError, match="clone"):
        e[0] = 5.0


def test_dtype_cast_error():
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        tg.tensor([1, 2]).add_(1.5)


def test_version_counter_shared_by_views_and_detach():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    views = [x.view(4), x.reshape(4), x.transpose(0, 1), x.permute(1, 0), x[0], x[:, 1], x.T,
             x.unsqueeze(0), x.unsqueeze(0).squeeze(0), x.expand(2, 2), x.detach()]
    x.add_(1)
    assert x._version == 1
    assert all(v._version == 1 for v in views)
    views[4].mul_(2)       # write through a view
    assert x._version == 2 and x.tolist() == [[4.0, 6.0], [4.0, 5.0]]


def test_data_of_torch_matches():
    torch = pytest.importorskip("torch")
    for lib in (tg, torch):
        x = lib.tensor([1.0, 2.0])
        v = x[0:1]
        x.mul_(3)
        assert v._version == 1


def test_saved_tensor_modified_names_both_lines():
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a.exp()      # LINE_SAVED
    y.add_(1)        # LINE_MODIFIED
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    msg = str(e.value)
    src = open(__file__).read().splitlines()
    saved_line = next(i for i, s in enumerate(src, 1) if "LINE_SAVED" in s and "a.exp()" in s)
    mod_line = next(i for i, s in enumerate(src, 1) if "LINE_MODIFIED" in s and "add_" in s)
    assert f"test_inplace.py:{saved_line}" in msg
    assert f"test_inplace.py:{mod_line}" in msg
    assert "ExpBackward0" in msg and "version 1" in msg and "version 0" in msg and "[3]" in msg
    assert a.grad is None


def test_saved_input_modified_is_caught_like_torch():
    torch = pytest.importorskip("torch")
    for lib in (tg, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 1
        y = h * h
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_inplace_in_no_grad_on_non_leaf_keeps_history():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    h = a * 2
    with tg.no_grad():
        h.add_(1)
    assert type(h.grad_fn).__name__ == "MulBackward0"


def test_version_error_names_the_position_of_the_saved_tensor():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([3.0, 4.0], requires_grad=True)
    h = b * 1
    y = (a * h).sum()
    h.add_(1)   # h is MulBackward0's saved tensor 1 (a's gradient needs it)
    with pytest.raises(RuntimeError, match=r"saved tensor 1 of MulBackward0 \(an input of the op"):
        y.backward()
    assert a.grad is None and b.grad is None


def _index_put_leading_ones(lib):
    out = []
    for vshape, idx in (((1,), "mask"), ((1, 2), [0, 1]), ((1, 1, 2), [0, 1]), ((2,), [0, 1]),
                        ((1, 4), "mask")):
        x = lib.ones(2, 2, requires_grad=True) * 1
        v = lib.arange(1.0, 1.0 + np.prod(vshape)).reshape(vshape).requires_grad_()
        w = v * 1
        x[x > 0 if idx == "mask" else idx] = w
        (x * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        out.append((x.tolist(), type(x.grad_fn.next_functions[1][0]).__name__, v.grad.tolist()))
    return out


def test_index_put_drops_leading_unit_dims_of_the_value_like_torch():
    """torch strips a value's leading size-1 dims before an advanced-index write (recording
    ViewBackward0), so a (1, 4) value fills a 4-element mask; gradients flow back to its shape."""
    torch = pytest.importorskip("torch")
    assert _index_put_leading_ones(tg) == _index_put_leading_ones(torch)


OVERLAP_CASES = {
    "add_t": lambda v: v.add_(v.t()), "copy_t": lambda v: v.copy_(v.t()),
    "add_row": lambda v: v.add_(v[0]), "add_self": lambda v: v.add_(v),
    "mul_same_view": lambda v: v.mul_(v.view(2, 2)), "rows": lambda v: v[0].add_(v[1]),
    "copy_rows": lambda v: v[0].copy_(v[1]), "strided_src": lambda v: v[0].copy_(v[:, 0]),
    "columns": lambda v: v[:, 0].add_(v[:, 1]), "t_written": lambda v: v.t().add_(v),
    "shifted": lambda v: v.view(-1)[1:3].add_(v.view(-1)[0:2]),
    "expanded": lambda v: v.mul_(v[0:1].expand(2, 2)),
    # index_put refuses any overlap, even full; the masked_fill path (one value) does not
    "put_mask_self": lambda v: v.__setitem__(v > 0, v),
    "put_list_row": lambda v: v.__setitem__([0, 1], v[1]),
    "fill_mask_one": lambda v: v.__setitem__(v > 0, v[0, 0]),
    "basic_slice": lambda v: v.__setitem__(slice(0, 1), v[1:]),
}


@pytest.mark.parametrize("case", sorted(OVERLAP_CASES))
def test_partial_overlap_of_input_and_written_tensor_like_torch(case):
    """Was a bug: in-place ops whose input shares part of the written memory ran; torch raises
    RuntimeError (only for dense operands; the same memory with the same strides is fine)."""
    torch = pytest.importorskip("torch")
    out = []
    for lib in (tg, torch):
        v = lib.arange(4.0).reshape(2, 2)
        try:
            OVERLAP_CASES[case](v)
            out.append(v.tolist())
        except RuntimeError as e:
            out.append("single memory location" in str(e))
    assert out[0] == out[1]
