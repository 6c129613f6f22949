"""Index and mask tensors an op saves are version-checked, as torch's saved variables: one changed
in place between forward and backward makes backward raise (it used to give a silently wrong
gradient), while the graph keeps no edge for them (next_functions as torch)."""
import numpy as np
import pytest

import tapegrad as tg

MAT = [[1.0, 2.0], [3.0, 4.0]]

# op name -> (make the index/mask, use it, change it in place)
INDEX_OPS = {
    "index_select": lambda x, i: x.index_select(0, i),
    "index_select_0d": lambda x, i: x.index_select(0, i[0]),
    "getitem": lambda x, i: x[i],
    "getitem_two": lambda x, i: x[i, i],
    "getitem_mixed": lambda x, i: x[i, 1:],
    "gather": lambda x, i: x.gather(0, i.reshape(1, 2)),
    "nll_loss": lambda x, i: _functional(x).nll_loss(x, i),
    "cross_entropy": lambda x, i: _functional(x).cross_entropy(x, i),
}
MASK_OPS = {
    "getitem_mask": lambda x, m: x[m],
    "masked_fill": lambda x, m: x.masked_fill(m, 0.5),
    "masked_fill_tensor_value": lambda x, m: x.masked_fill(m, x.new_tensor(0.5)),
    "masked_fill_broadcast_mask": lambda x, m: x.masked_fill(m[0], 0.5),
    "masked_fill_": lambda x, m: (x * 1).masked_fill_(m, 0.5),
    "where_number_other": lambda x, m: _lib(x).where(m, x, 0.0),
    "where_number_input": lambda x, m: _lib(x).where(m, 0.0, x),
    "where_tensors": lambda x, m: _lib(x).where(m, x, x * 3),
}
SETITEM = {
    "setitem_index": lambda x, i, m: _set(x, i),
    "setitem_mask": lambda x, i, m: _set(x, m),
    "setitem_mask_value_tensor": lambda x, i, m: _set(x, m, x[0, 0] * 3),
}


def _lib(x):
    """x's library (tapegrad or torch)."""
    import importlib
    return importlib.import_module(type(x).__module__.split(".")[0])


def _functional(x):
    """The nn.functional of x's library (tapegrad or torch)."""
    import importlib
    return importlib.import_module(type(x).__module__.split(".")[0] + ".nn.functional")


def _set(x, index, value=5.0):
    y = x * 1
    y[index] = value
    return y


def _run(lib, make, change):
    x = lib.tensor(MAT, requires_grad=True)
    i = lib.tensor([1, 0])
    m = lib.tensor([[True, False], [False, True]])
    y = make(x, i, m)
    change(i, m)
    try:
        (y * lib.tensor(2.0)).sum().backward()
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "ok", x.grad.tolist()


def _cases():
    for name, f in INDEX_OPS.items():
        yield name, (lambda f: lambda x, i, m: f(x, i))(f), lambda i, m: i.mul_(0)
    for name, f in MASK_OPS.items():
        yield name, (lambda f: lambda x, i, m: f(x, m))(f), \
            lambda i, m: m.copy_(m.logical_not())
    for name, f in SETITEM.items():
        yield name, f, lambda i, m: (i.mul_(0), m.copy_(m.logical_not()))


CASES = {name: (make, change) for name, make, change in _cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_index_changed_in_place_before_backward_raises(name):
    make, change = CASES[name]
    kind, msg = _run(tg, make, change)
    assert kind == "RuntimeError", msg
    assert "modified by an inplace operation" in msg
    # the message names the node and says the saved tensor is an input of it
    assert "Backward" in msg and "is at version 1; expected version 0" in msg


@pytest.mark.parametrize("name", sorted(CASES))
def test_index_changed_in_place_before_backward_as_torch(name):
    torch = pytest.importorskip("torch")
    make, change = CASES[name]
    assert _run(tg, make, change)[0] == _run(torch, make, change)[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_unchanged_index_gives_torchs_gradient_and_graph(name):
    torch = pytest.importorskip("torch")
    make, _ = CASES[name]
    res = []
    for lib in (tg, torch):
        x = lib.tensor(MAT, requires_grad=True)
        y = make(x, lib.tensor([1, 0]), lib.tensor([[True, False], [False, True]]))
        shown = [(type(f).__name__ if f is not None else None, nr)
                 for f, nr in y.grad_fn.next_functions]
        (y * 2).sum().backward()
        res.append((type(y.grad_fn).__name__, shown, x.grad.tolist()))
    assert res[0][:2] == res[1][:2]
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-6)


def test_index_changed_after_backward_is_fine():
    x = tg.tensor(MAT, requires_grad=True)
    i = tg.tensor([1, 1])
    y = x.index_select(0, i)
    y.sum().backward()
    i.mul_(0)
    assert x.grad.tolist() == [[0.0, 0.0], [2.0, 2.0]]


def test_double_backward_checks_the_index_too():
    # the first backward's nodes (ScatterAdd, IndexAdd, index_put) save the index again
    for make in (lambda x, i: x.gather(0, i.reshape(1, 2)), lambda x, i: x.index_select(0, i),
                 lambda x, i: x[i]):
        x = tg.tensor(MAT, requires_grad=True, dtype=tg.float64)
        i = tg.tensor([1, 0])
        y = make(x, i)
        g, = tg.autograd.grad((y * y).sum(), x, create_graph=True)
        i.mul_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            g.sum().backward()


def _inference_index(lib):
    x = lib.tensor(MAT, requires_grad=True)
    with lib.inference_mode():
        i = lib.tensor([1, 0])
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x.index_select(0, i)
    with lib.no_grad():
        assert x.index_select(0, i).tolist() == [[3.0, 4.0], [1.0, 2.0]]


def test_inference_index_cannot_be_saved():
    _inference_index(tg)


def test_inference_index_cannot_be_saved_in_torch_either():
    _inference_index(pytest.importorskip("torch"))


def test_index_is_freed_by_backward():
    x = tg.tensor(MAT, requires_grad=True)
    y = x[tg.tensor([1, 0])]
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def _weight_changed(lib):
    F = _functional(lib.ones(1))
    x = lib.tensor(MAT, requires_grad=True)
    w = lib.tensor([1.0, 2.0])
    loss = F.cross_entropy(x, lib.tensor([1, 0]), weight=w)
    w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_class_weight_changed_before_backward_raises():
    _weight_changed(tg)


def test_class_weight_changed_before_backward_raises_in_torch_too():
    _weight_changed(pytest.importorskip("torch"))


def _weight_requiring_grad(lib):
    F = _functional(lib.ones(1))
    x, t = lib.tensor(MAT), lib.tensor([1, 0])
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.no_grad():
        ok = F.nll_loss(x, t, weight=w).item()
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.nll_loss(x, t, weight=w)
    return ok


def test_class_weight_requiring_grad_raises_as_torch():
    assert _weight_requiring_grad(tg) == pytest.approx(-7 / 3)


def test_class_weight_requiring_grad_raises_in_torch_too():
    assert _weight_requiring_grad(pytest.importorskip("torch")) == pytest.approx(-7 / 3)


@pytest.mark.parametrize("dtype", ["int32", "int16", "int8", "bool", "float32"])
def test_nll_target_dtype_other_than_long_or_byte_raises_as_torch(dtype):
    for lib in (tg, pytest.importorskip("torch")):
        F = _functional(lib.ones(1))
        t = lib.tensor([1, 0]).to(getattr(lib, dtype))
        with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
            F.nll_loss(lib.tensor(MAT), t)
    F = _functional(tg.ones(1))
    assert F.nll_loss(tg.tensor(MAT), tg.tensor([1, 0]).to(tg.uint8)).item() == -2.5
