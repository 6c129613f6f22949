"""tapegrad.nn: Module API, Parameter, layers, losses, init and functional, against torch."""
import math
from collections import OrderedDict

import numpy as np
import pytest

import tapegrad
from tapegrad import nn
from tapegrad.nn import functional as F


def _torch_text(obj):
    return repr(obj).replace("torch.", "tapegrad.")


def _copy_params(src_torch, dst):
    """Copy a torch module's parameter values into a tapegrad module of the same structure."""
    for tp, p in zip(src_torch.parameters(), dst.parameters(), strict=True):
        p._data[...] = tp.detach().numpy()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.act = nn.Tanh()
        self.register_buffer("running", tapegrad.zeros(3))
        self.register_buffer("scratch", tapegrad.ones(2), persistent=False)

    def forward(self, x):
        return self.act(self.fc(x)) + self.running


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(tapegrad.ones(1))
        self.block = Block()
        self.head = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))

    def forward(self, x):
        return self.head(self.block(x) * self.scale)


def _torch_net(torch):
    tnn = torch.nn

    class TBlock(tnn.Module):
        def __init__(self):
            super().__init__()
            self.fc = tnn.Linear(4, 3)
            self.act = tnn.Tanh()
            self.register_buffer("running", torch.zeros(3))
            self.register_buffer("scratch", torch.ones(2), persistent=False)

        def forward(self, x):
            return self.act(self.fc(x)) + self.running

    class TNet(tnn.Module):
        def __init__(self):
            super().__init__()
            self.scale = tnn.Parameter(torch.ones(1))
            self.block = TBlock()
            self.head = tnn.Sequential(tnn.Linear(3, 5), tnn.ReLU(), tnn.Linear(5, 2))

        def forward(self, x):
            return self.head(self.block(x) * self.scale)

    TBlock.__name__ = TBlock.__qualname__ = "Block"
    TNet.__name__ = TNet.__qualname__ = "Net"
    return TNet()


# ---- Module API ---------------------------------------------------------------------------------

def test_named_parameters_buffers_modules_match_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = Net(), _torch_net(torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters(recurse=False)] == ["scale"]
    assert len(list(ours.parameters())) == 7
    assert all(isinstance(p, nn.Parameter) for p in ours.parameters())
    assert [type(m).__name__ for m in ours.modules()] == \
        [type(m).__name__ for m in theirs.modules()]
    assert [type(m).__name__ for m in ours.children()] == ["Block", "Sequential"]


def test_shared_module_and_parameter_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]


def test_setattr_registers_and_getattr_errors():
    m = nn.Module()
    m.w = nn.Parameter(tapegrad.zeros(2))
    m.sub = nn.Linear(1, 1)
    m.plain = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["sub"]
    assert m.plain == 3 and "plain" not in m._parameters
    with pytest.raises(TypeError, match="cannot assign 'tapegrad.FloatTensor' as parameter 'w'"):
        m.w = tapegrad.zeros(2)
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 5
    m.w = None
    assert m.w is None and list(m.parameters()) == list(m.sub.parameters())
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        m.nope
    del m.sub
    assert "sub" not in m._modules
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", tapegrad.zeros(1))
    with pytest.raises(KeyError, match='contain "."'):
        m.register_parameter("a.b", None)
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor"):
        m.register_parameter("q", _nonleaf())
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)


def _nonleaf():
    p = nn.Parameter(tapegrad.ones(2))
    q = nn.Parameter(tapegrad.ones(2))
    q.grad_fn = (p * 2).grad_fn  # a Parameter object carrying history, as torch's check tests
    return q


def test_setattr_before_init_raises():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(tapegrad.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Bad()


def test_missing_forward():
    class NoForward(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match=r'Module \[NoForward\] is missing the required '
                                                  r'"forward" function'):
        NoForward()(tapegrad.zeros(1))


def test_train_eval_recursive():
    net = Net()
    assert net.training and all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_zero_grad_and_requires_grad_():
    net = Net()
    net(tapegrad.randn(3, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad._data.any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    out = net(tapegrad.randn(3, 4))
    assert not out.requires_grad


def test_apply_and_dtype_conversion():
    net = Net()
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Tanh", "Block", "Linear", "ReLU", "Linear", "Sequential", "Net"]

    params = list(net.parameters())
    net.double()
    assert list(net.parameters()) == params  # same Parameter objects, new dtype
    assert all(p.dtype is tapegrad.float64 for p in net.parameters())
    assert net.block.running.dtype is tapegrad.float64
    assert net(tapegrad.randn(2, 4, dtype=tapegrad.float64)).dtype is tapegrad.float64
    net.to(tapegrad.float32)
    assert all(p.dtype is tapegrad.float32 for p in net.parameters())
    net.to(dtype=tapegrad.float64).float()
    assert all(p.dtype is tapegrad.float32 for p in net.parameters())
    with pytest.raises(TypeError, match="only accepts floating point"):
        net.to(tapegrad.int64)
    assert net.to("cpu") is net


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre"))
    h2 = lin.register_forward_hook(lambda m, args, out: out * 0)
    out = lin(tapegrad.ones(1, 2))
    assert calls == ["pre"] and not out._data.any()
    h1.remove()
    h2.remove()
    assert lin(tapegrad.ones(1, 2))._data.any()


# ---- repr -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("build", [
    lambda nn: nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)),
    lambda nn: nn.Linear(3, 4, bias=False),
    lambda nn: nn.Sequential(nn.Flatten(), nn.Identity(), nn.Sequential(nn.Tanh(),
                                                                        nn.Sigmoid())),
    lambda nn: nn.Sequential(OrderedDict(fc=nn.Linear(2, 2), act=nn.ReLU(inplace=True))),
    lambda nn: nn.Softmax(dim=1),
    lambda nn: nn.LogSoftmax(dim=-1),
    lambda nn: nn.Flatten(0, 2),
    lambda nn: nn.CrossEntropyLoss(),
    lambda nn: nn.MSELoss(reduction="sum"),
    lambda nn: nn.NLLLoss(),
    lambda nn: nn.Module(),
])
def test_module_repr_matches_torch(build):
    torch = pytest.importorskip("torch")
    assert repr(build(nn)) == _torch_text(build(torch.nn))


def test_nested_custom_module_repr_matches_torch():
    torch = pytest.importorskip("torch")
    assert repr(Net()) == _torch_text(_torch_net(torch))


def test_parameter_repr_and_behaviour():
    torch = pytest.importorskip("torch")
    vals = np.array([[1.5, -2.0], [0.25, 3.0]], np.float32)
    p = nn.Parameter(tapegrad.tensor(vals))
    tp = torch.nn.Parameter(torch.tensor(vals))
    assert repr(p) == _torch_text(tp)
    assert repr(nn.Parameter(tapegrad.tensor(vals), requires_grad=False)) == \
        _torch_text(torch.nn.Parameter(torch.tensor(vals), requires_grad=False))
    assert isinstance(p, tapegrad.Tensor) and p.requires_grad and p.is_leaf
    out = p * 2
    assert type(out) is tapegrad.Tensor and out.grad_fn is not None
    src = tapegrad.tensor([1.0, 2.0])
    shared = nn.Parameter(src)
    src._data[0] = 7.0
    assert shared._data[0] == 7.0  # shares the values, like torch
    assert repr(nn.Parameter()) == _torch_text(torch.nn.Parameter())
    with pytest.raises(RuntimeError):
        nn.Parameter(tapegrad.tensor([1, 2]))


def test_sequential_container():
    torch = pytest.importorskip("torch")
    layers = [nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)]
    seq = nn.Sequential(*layers)
    assert len(seq) == 3 and list(seq) == layers
    assert seq[0] is layers[0] and seq[-1] is layers[2]
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == layers[1:]
    assert repr(seq[1:]) == _torch_text(torch.nn.Sequential(torch.nn.Linear(2, 3),
                                                            torch.nn.ReLU(),
                                                            torch.nn.Linear(3, 1))[1:])
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]
    del seq[1]
    assert [type(m).__name__ for m in seq] == ["Linear", "Linear", "Sigmoid"]
    assert list(seq._modules) == ["0", "1", "2"]
    x = tapegrad.randn(4, 2)
    y = seq(x)
    assert y.shape == (4, 1)


# ---- state dict ---------------------------------------------------------------------------------

def test_state_dict_round_trip():
    a, b = Net(), Net()
    with tapegrad.no_grad():
        a.block.running._data[...] = 3.0
    sd = a.state_dict()
    assert list(sd) == ["scale", "block.running", "block.fc.weight", "block.fc.bias",
                        "head.0.weight", "head.0.bias", "head.2.weight", "head.2.bias"]
    assert all(not v.requires_grad for v in sd.values())
    assert sd["scale"]._data is a.scale._data  # detached, sharing the values
    res = b.load_state_dict(sd)
    assert repr(res) == "<All keys matched successfully>"
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and np.array_equal(va._data, vb._data) and va._data is not vb._data
    x = tapegrad.randn(5, 4)
    assert np.array_equal(a(x)._data, b(x)._data)
    kv = a.state_dict(keep_vars=True)
    assert kv["scale"] is a.scale


def test_load_state_dict_errors_match_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = Net(), _torch_net(torch)

    def both(mutate_ours, mutate_theirs):
        sd_o, sd_t = ours.state_dict(), theirs.state_dict()
        mutate_ours(sd_o)
        mutate_theirs(sd_t)
        with pytest.raises(RuntimeError) as eo:
            ours.load_state_dict(sd_o)
        with pytest.raises(RuntimeError) as et:
            theirs.load_state_dict(sd_t)
        assert str(eo.value) == str(et.value).replace("torch.", "tapegrad.")
        return str(eo.value)

    msg = both(lambda d: d.pop("head.0.bias"), lambda d: d.pop("head.0.bias"))
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "head.0.bias".' in msg

    msg = both(lambda d: d.__setitem__("head.9.weight", tapegrad.zeros(1)),
               lambda d: d.__setitem__("head.9.weight", torch.zeros(1)))
    assert 'Unexpected key(s) in state_dict: "head.9.weight".' in msg

    msg = both(lambda d: d.__setitem__("block.fc.weight", tapegrad.zeros(2, 4)),
               lambda d: d.__setitem__("block.fc.weight", torch.zeros(2, 4)))
    assert ("size mismatch for block.fc.weight: copying a param with shape "
            "tapegrad.Size([2, 4]) from checkpoint, the shape in current model is "
            "tapegrad.Size([3, 4]).") in msg

    def several(d, mod):
        d.pop("scale")
        d.pop("block.running")
        d["extra"] = mod.zeros(1)
        d["head.2.bias"] = mod.zeros(7)

    msg = both(lambda d: several(d, tapegrad), lambda d: several(d, torch))
    assert 'Missing key(s) in state_dict: "scale", "block.running".' in msg


def test_load_state_dict_non_strict_and_shape_errors():
    torch = pytest.importorskip("torch")
    net, tnet = Net(), _torch_net(torch)
    sd, tsd = net.state_dict(), tnet.state_dict()
    for d, mod in ((sd, tapegrad), (tsd, torch)):
        d.pop("scale")
        d["junk"] = mod.zeros(1)
    res, tres = net.load_state_dict(sd, strict=False), tnet.load_state_dict(tsd, strict=False)
    assert res.missing_keys == tres.missing_keys == ["scale"]
    assert res.unexpected_keys == tres.unexpected_keys == ["junk"]
    assert repr(res) == repr(tres)
    # non-strict still rejects wrong shapes
    sd["head.2.bias"] = tapegrad.zeros(3)
    with pytest.raises(RuntimeError, match="size mismatch for head.2.bias"):
        net.load_state_dict(sd, strict=False)


def test_load_state_dict_casts_and_copies_in_place():
    lin = nn.Linear(2, 2)
    w = lin.weight
    lin.load_state_dict({"weight": tapegrad.tensor([[1.0, 2.0], [3.0, 4.0]],
                                                   dtype=tapegrad.float64),
                         "bias": tapegrad.tensor([0.5, 0.5])})
    assert lin.weight is w and w.dtype is tapegrad.float32
    assert w._data.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_load_state_dict_invalidates_saved_graph():
    lin = nn.Linear(2, 2)
    out = lin(tapegrad.ones(1, 2) * tapegrad.ones(1, 2, requires_grad=True)).sum()
    lin.load_state_dict(lin.state_dict())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


# ---- Linear -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_forward_backward_matches_torch(shape, bias):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    tl = torch.nn.Linear(4, 3, bias=bias)
    ol = nn.Linear(4, 3, bias=bias)
    _copy_params(tl, ol)
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape[:-1] + (3,)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ox = tapegrad.tensor(x, requires_grad=True)
    ty, oy = tl(tx), ol(ox)
    np.testing.assert_allclose(oy._data, ty.detach().numpy(), rtol=1e-6, atol=1e-6)
    ty.backward(torch.tensor(g))
    oy.backward(tapegrad.tensor(g))
    np.testing.assert_allclose(ox.grad._data, tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    for tp, op in zip(tl.parameters(), ol.parameters()):
        np.testing.assert_allclose(op.grad._data, tp.grad.numpy(), rtol=1e-5, atol=1e-6)
    if len(shape) == 2 and bias:
        assert type(oy.grad_fn).__name__ == type(ty.grad_fn).__name__ == "AddmmBackward0"


def test_linear_init_bounds_and_statistics():
    tapegrad.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = lin.weight._data, lin.bias._data
    assert w.shape == (300, 400) and b.shape == (300,)
    assert w.dtype == np.float32 and b.dtype == np.float32
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.99 * bound
    assert abs(w.mean()) < 0.02 * bound
    np.testing.assert_allclose(w.var(), bound ** 2 / 3, rtol=0.02)
    assert abs(b.mean()) < 0.15 * bound


def test_linear_init_uses_default_generator():
    tapegrad.manual_seed(123)
    a = nn.Linear(5, 3)
    tapegrad.manual_seed(123)
    b = nn.Linear(5, 3)
    c = nn.Linear(5, 3)
    assert np.array_equal(a.weight._data, b.weight._data)
    assert np.array_equal(a.bias._data, b.bias._data)
    assert not np.array_equal(b.weight._data, c.weight._data)


def test_linear_dtype_and_shape_error():
    lin = nn.Linear(3, 2, dtype=tapegrad.float64)
    assert lin.weight.dtype is tapegrad.float64
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        nn.Linear(3, 2)(tapegrad.zeros(4, 5))


# ---- activations, Flatten, Identity ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["ReLU", "Tanh", "Sigmoid", "Identity", "Flatten"])
def test_simple_layers_match_torch(name):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((3, 2, 4)).astype(np.float32)
    x[0, 0, 0] = 0.0
    ours, theirs = getattr(nn, name)(), getattr(torch.nn, name)()
    ox, tx = tapegrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    oy, ty = ours(ox), theirs(tx)
    np.testing.assert_allclose(oy._data, ty.detach().numpy(), rtol=1e-6, atol=1e-7)
    (oy * oy).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(ox.grad._data, tx.grad.numpy(), rtol=1e-5, atol=1e-6)


# ---- losses -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 1},
    {"weight": [0.2, 1.0, 3.0, 0.5]}, {"weight": [0.2, 1.0, 3.0, 0.5], "ignore_index": 2},
    {"weight": [0.2, 1.0, 3.0, 0.5], "reduction": "none"},
])
@pytest.mark.parametrize("loss_name", ["CrossEntropyLoss", "NLLLoss"])
def test_classification_losses_match_torch(loss_name, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    if loss_name == "NLLLoss":
        x = x - np.log(np.exp(x).sum(1, keepdims=True))
    y = np.array([0, 1, 2, 3, 1, 2])
    okw, tkw = dict(kwargs), dict(kwargs)
    if "weight" in kwargs:
        okw["weight"] = tapegrad.tensor(kwargs["weight"])
        tkw["weight"] = torch.tensor(kwargs["weight"])
    ours, theirs = getattr(nn, loss_name)(**okw), getattr(torch.nn, loss_name)(**tkw)
    ox, tx = tapegrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ol, tl = ours(ox, tapegrad.tensor(y)), theirs(tx, torch.tensor(y))
    np.testing.assert_allclose(ol._data, tl.detach().numpy(), rtol=1e-5, atol=1e-6)
    ol.sum().backward()
    tl.sum().backward()
    np.testing.assert_allclose(ox.grad._data, tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert type(ol.grad_fn).__name__ == type(tl.grad_fn).__name__
    if "weight" in kwargs:
        assert "weight" in ours.state_dict() and "weight" in theirs.state_dict()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_torch(reduction):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 5, 3)).astype(np.float32)
    oa, ta = tapegrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ol = nn.MSELoss(reduction=reduction)(oa, tapegrad.tensor(b))
    tl = torch.nn.MSELoss(reduction=reduction)(ta, torch.tensor(b))
    np.testing.assert_allclose(ol._data, tl.detach().numpy(), rtol=1e-6, atol=1e-7)
    ol.sum().backward()
    tl.sum().backward()
    np.testing.assert_allclose(oa.grad._data, ta.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_loss_legacy_reduction_args():
    with pytest.warns(UserWarning, match="reduction='sum'"):
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"


# ---- functional and init ------------------------------------------------------------------------

def test_functional_namespace():
    from tapegrad.ops._registry import FUNCTIONAL
    for name, fn in FUNCTIONAL.items():
        assert getattr(F, name) is fn
    x = tapegrad.tensor([-1.0, 0.0, 2.0])
    assert F.relu(x).tolist() == [0.0, 0.0, 2.0]
    np.testing.assert_allclose(F.tanh(x)._data, np.tanh(x._data), rtol=1e-6)
    np.testing.assert_allclose(F.sigmoid(x)._data, 1 / (1 + np.exp(-x._data)), rtol=1e-6)
    for name in ("linear", "softmax", "log_softmax", "nll_loss", "cross_entropy", "mse_loss"):
        assert callable(getattr(F, name))


def test_init_functions():
    t = tapegrad.empty(200, 100)
    assert nn.init.zeros_(t) is t and not t._data.any()
    nn.init.ones_(t)
    assert (t._data == 1).all()
    nn.init.constant_(t, 0.5)
    assert (t._data == 0.5).all()
    nn.init.uniform_(t, -2.0, 3.0)
    assert t._data.min() >= -2.0 and t._data.max() < 3.0 and t._data.dtype == np.float32
    np.testing.assert_allclose(t._data.mean(), 0.5, atol=0.05)
    nn.init.normal_(t, 1.0, 2.0)
    np.testing.assert_allclose([t._data.mean(), t._data.std()], [1.0, 2.0], atol=0.05)
    nn.init.xavier_uniform_(t)
    a = math.sqrt(6 / 300)
    assert np.abs(t._data).max() <= a and np.abs(t._data).max() > 0.99 * a
    nn.init.kaiming_uniform_(t, a=math.sqrt(5))
    assert np.abs(t._data).max() <= 1 / math.sqrt(100)
    nn.init.kaiming_uniform_(t, nonlinearity="relu")
    assert np.abs(t._data).max() <= math.sqrt(6 / 100)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.xavier_uniform_(tapegrad.empty(3))
    assert nn.init.calculate_gain("tanh") == 5 / 3
    p = nn.Parameter(tapegrad.zeros(3, 3))
    nn.init.uniform_(p)  # works on a parameter that requires grad, recording nothing
    assert p.grad_fn is None and p.requires_grad


def test_init_reproducible_with_seed_and_generator():
    tapegrad.manual_seed(7)
    a = nn.init.normal_(tapegrad.empty(5))
    tapegrad.manual_seed(7)
    b = nn.init.normal_(tapegrad.empty(5))
    assert np.array_equal(a._data, b._data)
    g = tapegrad.Generator().manual_seed(1)
    c = nn.init.uniform_(tapegrad.empty(5), generator=g)
    g.manual_seed(1)
    d = nn.init.uniform_(tapegrad.empty(5), generator=g)
    assert np.array_equal(c._data, d._data)


def test_training_a_tiny_model_reduces_loss():
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    x = tapegrad.randn(64, 2)
    y = (x[:, :1] * x[:, 1:]).detach()
    loss_fn = nn.MSELoss()
    first = None
    for _ in range(200):
        loss = loss_fn(model(x), y)
        first = first if first is not None else loss.item()
        model.zero_grad()
        loss.backward()
        with tapegrad.no_grad():
            for p in model.parameters():
                p._data -= 0.1 * p.grad._data
    assert loss.item() < 0.5 * first
