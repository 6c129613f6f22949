"""The second batch of the torch surface, against torch where torch is installed: devices and
tapegrad.cuda, Tensor utility methods (type, cpu, new_*, is_inference), nn layers (ModuleList,
ModuleDict, Dropout, Conv2d, MaxPool2d, GELU, BCE losses, label smoothing), exception types of
the new ops, and the learning-rate schedulers' trajectories.

The ops themselves (values, gradients, node names, gradcheck) are rows of
``tapegrad.testing.op_db`` and run in test_ops.py.
"""
import math
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import nn
from tapegrad.nn import functional as F
from tapegrad.optim import lr_scheduler


def _copy_params(src_torch, dst):
    for tp, p in zip(src_torch.parameters(), dst.parameters(), strict=True):
        p._data[...] = tp.detach().numpy()


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


# ---- device and cuda ----------------------------------------------------------------------------
def test_device_object():
    d = tapegrad.device("cpu")
    assert d.type == "cpu" and d.index is None
    assert repr(d) == "device(type='cpu')" and str(d) == "cpu"
    assert d == tapegrad.device("cpu") and hash(d) == hash(tapegrad.device("cpu"))
    d0 = tapegrad.device("cpu:0")
    assert d0.index == 0 and str(d0) == "cpu:0" and repr(d0) == "device(type='cpu', index=0)"
    assert tapegrad.device("cpu", 0) == d0 and d0 != d
    assert tapegrad.device(d) == d
    x = tapegrad.ones(2)
    assert isinstance(x.device, tapegrad.device) and x.device == d and x.device.type == "cpu"
    assert x.is_cuda is False


def test_device_matches_torch(torch):
    for args in [("cpu",), ("cpu:0",), ("cpu", 1), ("cuda",), ("cuda:1",)]:
        ours, theirs = tapegrad.device(*args), torch.device(*args)
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
        assert ours.type == theirs.type and ours.index == theirs.index
    assert str(tapegrad.ones(1).device) == str(torch.ones(1).device)
    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError):
            lib.device("foo")
        with pytest.raises(TypeError):
            lib.device(3.5)


def test_factories_and_to_accept_device_objects():
    cpu = tapegrad.device("cpu")
    assert tapegrad.zeros(2, device=cpu).shape == (2,)
    assert tapegrad.tensor([1.0], device=cpu).device == cpu
    assert tapegrad.ones(3, device="cpu").shape == (3,)
    x = tapegrad.ones(2)
    assert x.to(cpu) is x and x.to(device=cpu) is x and x.to("cpu") is x
    assert x.to(cpu, tapegrad.float64).dtype == tapegrad.float64
    m = nn.Linear(2, 2).to(cpu)
    assert isinstance(m, nn.Linear)
    cuda = tapegrad.device("cuda")   # can be made, as in torch, but not used
    with pytest.raises(RuntimeError):
        tapegrad.zeros(2, device=cuda)
    with pytest.raises(RuntimeError):
        x.to(cuda)
    with pytest.raises(RuntimeError):
        x.to("cuda")


def test_cuda_module(torch):
    assert tapegrad.cuda.is_available() is False
    assert tapegrad.cuda.device_count() == 0
    dev = tapegrad.device("cuda" if tapegrad.cuda.is_available() else "cpu")
    assert dev.type == "cpu"
    if not torch.cuda.is_available():
        assert tapegrad.cuda.device_count() == torch.cuda.device_count()


# ---- Tensor utility methods ---------------------------------------------------------------------
def test_is_inference_is_a_method(torch):
    for lib in (tapegrad, torch):
        with lib.inference_mode():
            t = lib.ones(2)
        assert t.is_inference() is True
        assert lib.ones(2).is_inference() is False


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int64", "int32", "int16",
                                  "int8", "uint8", "bool"])
def test_type_strings_match_torch(name, torch):
    ours = tapegrad.zeros(2, dtype=getattr(tapegrad, name))
    theirs = torch.zeros(2, dtype=getattr(torch, name))
    assert ours.type() == theirs.type()


def test_type_casts(torch):
    for lib in (tapegrad, torch):
        x = lib.tensor([1.5, -2.5], requires_grad=True)
        y = x.type(lib.float64)
        assert str(y.dtype).endswith("float64") and type(y.grad_fn).__name__ == "ToCopyBackward0"
        assert x.type(lib.float32) is x
        z = x.type("torch.IntTensor")
        assert str(z.dtype).endswith("int32") and z.tolist() == [1, -2]
        assert x.detach().cpu().tolist() == [1.5, -2.5]
        assert x.cpu() is x
    assert tapegrad.ones(1).type("tapegrad.DoubleTensor").dtype == tapegrad.float64
    with pytest.raises(ValueError):
        tapegrad.ones(1).type("torch.NoSuchTensor")


def test_new_factories_match_torch(torch):
    cases = [
        lambda x, lib: x.new_zeros(2, 3), lambda x, lib: x.new_zeros((2,)),
        lambda x, lib: x.new_ones(3), lambda x, lib: x.new_ones(2, dtype=lib.int64),
        lambda x, lib: x.new_full((2,), 3), lambda x, lib: x.new_full([2], 1.5,
                                                                     dtype=lib.float64),
        lambda x, lib: x.new_tensor([1, 2]), lambda x, lib: x.new_tensor([[1.5]]),
        lambda x, lib: x.new_empty(2, 3).shape,
    ]
    for src in ([1.0, 2.0], [1, 2]):
        for case in cases:
            ours = case(tapegrad.tensor(src), tapegrad)
            theirs = case(torch.tensor(src), torch)
            if isinstance(theirs, torch.Tensor):
                assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
                np.testing.assert_array_equal(_np(ours), _np(theirs))
                assert ours.requires_grad is False and ours.grad_fn is None
            else:
                assert tuple(ours) == tuple(theirs)
    x = tapegrad.tensor([1.0], requires_grad=True)
    assert x.new_zeros(2, requires_grad=True).requires_grad
    with pytest.warns(UserWarning, match="detach"):
        y = x.new_tensor(x)
    assert y.requires_grad is False and y.tolist() == [1.0]


def test_is_floating_point():
    assert tapegrad.is_floating_point(tapegrad.ones(1)) is True
    assert tapegrad.is_floating_point(tapegrad.tensor([1])) is False
    assert tapegrad.ones(1).is_floating_point() is True


def test_axis_keyword_aliases(torch):
    a = np.arange(6.0).reshape(2, 3)
    for fn in [lambda lib, x: x.sum(axis=0), lambda lib, x: lib.sum(x, axis=1),
               lambda lib, x: x.mean(axis=1, keepdim=True), lambda lib, x: lib.mean(x, axis=0),
               lambda lib, x: x.max(axis=0).values, lambda lib, x: x.min(axis=1)[1]]:
        ours = fn(tapegrad, tapegrad.tensor(a))
        theirs = fn(torch, torch.tensor(a))
        np.testing.assert_array_equal(_np(ours), _np(theirs))
    with pytest.raises(TypeError):
        tapegrad.ones(2).sum(0, axis=0)


def test_not_implemented_derivatives_raise_like_torch(torch):
    for lib in (tapegrad, torch):
        x = lib.tensor([5.0, -3.0, 2.5], requires_grad=True)
        for out in (x // 2, 2 // x, lib.floor_divide(x, x), 2 % x):
            assert out.requires_grad and type(out.grad_fn).__name__ == "NotImplemented"
            with pytest.raises(RuntimeError, match="not implemented"):
                out.sum().backward()
        assert type((x % 2).grad_fn).__name__ == "RemainderBackward0"
        assert type(lib.fmod(x, x).grad_fn).__name__ == "FmodBackward1"


# ---- exception types of the new ops -------------------------------------------------------------
_ERRORS = [
    ("int_floordiv_zero", lambda lib: lib.tensor([5, -3]) // 0),
    ("int_mod_zero", lambda lib: lib.tensor([5, -3]) % 0),
    ("int_fmod_zero", lambda lib: lib.fmod(lib.tensor([5, -3]), 0)),
    ("fmod_number_first", lambda lib: lib.fmod(2, lib.ones(2))),
    ("round_decimals_int", lambda lib: lib.round(lib.tensor([1, 2]), decimals=1)),
    ("isclose_dtypes", lambda lib: lib.isclose(lib.ones(1), lib.ones(1, dtype=lib.float64))),
    ("isclose_number", lambda lib: lib.isclose(lib.ones(1), 1.0)),
    ("var_int", lambda lib: lib.var(lib.tensor([1, 2]))),
    ("std_int", lambda lib: lib.tensor([1, 2]).std()),
    ("norm_int", lambda lib: lib.norm(lib.tensor([1, 2]))),
    ("cumsum_dim", lambda lib: lib.cumsum(lib.ones(3), 1)),
    ("prod_dim", lambda lib: lib.ones(3).prod(2)),
    ("topk_k", lambda lib: lib.topk(lib.ones(3), 4)),
    ("sort_dim", lambda lib: lib.sort(lib.ones(3), 1)),
    ("narrow_past_end", lambda lib: lib.ones(3).narrow(0, 2, 2)),
    ("narrow_dim", lambda lib: lib.ones(3).narrow(1, 0, 1)),
    ("narrow_start", lambda lib: lib.ones(3).narrow(0, 5, 0)),
    ("gather_oob", lambda lib: lib.gather(lib.ones(3), 0, lib.tensor([3]))),
    ("gather_negative", lambda lib: lib.gather(lib.ones(3), 0, lib.tensor([-1]))),
    ("gather_rank", lambda lib: lib.gather(lib.ones(2, 3), 1, lib.tensor([0]))),
    ("gather_dtype", lambda lib: lib.gather(lib.ones(3), 0, lib.tensor([0.0]))),
    ("index_select_2d", lambda lib: lib.index_select(lib.ones(3), 0, lib.tensor([[0]]))),
    ("index_select_oob", lambda lib: lib.index_select(lib.ones(3), 0, lib.tensor([5]))),
    ("index_select_dtype", lambda lib: lib.index_select(lib.ones(3), 0, lib.tensor([0.0]))),
    ("repeat_few", lambda lib: lib.zeros(2, 3).repeat(2)),
    ("repeat_none", lambda lib: lib.zeros(2, 3).repeat()),
    ("einsum_size", lambda lib: lib.einsum("i,i->", lib.ones(2), lib.ones(3))),
    ("einsum_ndim", lambda lib: lib.einsum("ij->", lib.ones(2))),
    ("einsum_operands", lambda lib: lib.einsum("i,i", lib.ones(2))),
    ("einsum_dtype", lambda lib: lib.einsum("i,i->", lib.ones(2),
                                            lib.ones(2, dtype=lib.float64))),
    ("einsum_out_label", lambda lib: lib.einsum("i->j", lib.ones(2))),
    ("einsum_out_twice", lambda lib: lib.einsum("i->ii", lib.ones(2))),
    ("einsum_diag_size", lambda lib: lib.einsum("ii", lib.ones(2, 3))),
    ("einsum_bad_char", lambda lib: lib.einsum("i1", lib.ones(2))),
    ("einsum_stray_dot", lambda lib: lib.einsum("ij,j.->i", lib.ones(2, 2), lib.ones(2))),
    ("clamp_min_none", lambda lib: lib.clamp_min(lib.ones(2), None)),
    ("clamp_max_none", lambda lib: lib.ones(2).clamp_max(None)),
    ("outer_2d", lambda lib: lib.outer(lib.ones(2), lib.ones(2, 2))),
    ("gelu_approx", lambda lib: lib.nn.functional.gelu(lib.ones(2), approximate="bad")),
    ("gelu_int", lambda lib: lib.nn.functional.gelu(lib.tensor([1, 2]))),
    ("dropout_p", lambda lib: lib.nn.functional.dropout(lib.ones(2), 1.5)),
    ("dropout_module_p", lambda lib: lib.nn.Dropout(-0.1)),
    ("one_hot_small", lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2]), 2)),
    ("one_hot_float", lambda lib: lib.nn.functional.one_hot(lib.tensor([0.0]))),
    ("one_hot_negative", lambda lib: lib.nn.functional.one_hot(lib.tensor([-1]))),
    ("one_hot_empty", lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.int64))),
    ("bce_range", lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([1.5]),
                                                                     lib.tensor([1.0]))),
    ("bce_size", lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([0.5]),
                                                                    lib.tensor([1.0, 0.0]))),
    ("bce_logits_size", lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.ones(4), lib.ones(2))),
    ("label_smoothing_range", lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 3), lib.tensor([0, 1]), label_smoothing=1.5)),
    ("conv_groups", lambda lib: lib.nn.Conv2d(3, 2, 3, groups=2)),
    ("conv_same_strided", lambda lib: lib.nn.Conv2d(1, 1, 3, stride=2, padding="same")),
    ("conv_bad_padding", lambda lib: lib.nn.Conv2d(1, 1, 3, padding="full")),
    ("conv_kernel_3", lambda lib: lib.nn.Conv2d(1, 1, (3, 3, 3))(lib.ones(1, 1, 5, 5))),
    ("conv_kernel_1", lambda lib: lib.nn.Conv2d(1, 1, (3,))(lib.ones(1, 1, 5, 5))),
]


@pytest.mark.parametrize("name,fn", _ERRORS, ids=[e[0] for e in _ERRORS])
def test_errors_match_torch(name, fn, torch):
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(Exception) as ours:
        fn(tapegrad)
    assert type(ours.value).__name__ == type(theirs.value).__name__, \
        f"tapegrad raised {type(ours.value).__name__}: {ours.value}; torch " \
        f"{type(theirs.value).__name__}: {theirs.value}"


# ---- containers ---------------------------------------------------------------------------------
def test_module_list_matches_torch(torch):
    def build(lib):
        ml = lib.nn.ModuleList([lib.nn.Linear(2, 2), lib.nn.Linear(2, 2), lib.nn.ReLU()])
        ml.append(lib.nn.Linear(2, 3))
        ml.extend([lib.nn.Tanh(), lib.nn.Tanh()])
        ml.insert(1, lib.nn.Sigmoid())
        ml += [lib.nn.Linear(3, 1)]
        return ml

    ours, theirs = build(tapegrad), build(torch)
    assert repr(ours) == repr(theirs)
    assert len(ours) == len(theirs) == 8
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert type(ours[-1]).__name__ == "Linear" and type(ours[1]).__name__ == "Sigmoid"
    sl = ours[2:5]
    assert isinstance(sl, nn.ModuleList) and len(sl) == 3 and sl[0] is ours[2]
    for ml in (ours, theirs):
        del ml[1]
        del ml[::3]
        ml.pop(0)
    assert repr(ours) == repr(theirs)
    assert list(ours._modules) == list(theirs._modules)
    combined = ours + nn.ModuleList([nn.ReLU()])
    assert len(combined) == len(ours) + 1 and combined[-1].__class__ is nn.ReLU
    ours[0] = nn.Identity()
    assert isinstance(ours[0], nn.Identity)
    with pytest.raises(IndexError):
        ours[10]
    with pytest.raises(TypeError):
        ours.extend(5)
    with pytest.raises(NotImplementedError):
        ours(tapegrad.ones(2))
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList()) == "ModuleList()"
    assert not any(k.isdigit() for k in dir(ours))


def test_module_list_parameters_train_and_to():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(list(ml.parameters())) == 6
    ml.eval()
    assert all(not m.training for m in ml)
    ml.double()
    assert all(p.dtype == tapegrad.float64 for p in ml.parameters())


def test_module_dict_matches_torch(torch):
    def build(lib):
        md = lib.nn.ModuleDict({"conv": lib.nn.Linear(2, 3), "act": lib.nn.ReLU()})
        md.update([("out", lib.nn.Linear(3, 1))])
        md["extra"] = lib.nn.Tanh()
        return md

    ours, theirs = build(tapegrad), build(torch)
    assert repr(ours) == repr(theirs)
    assert list(ours) == list(theirs) == ["conv", "act", "out", "extra"]
    assert list(ours.keys()) == list(theirs.keys())
    assert [type(v).__name__ for v in ours.values()] == [type(v).__name__ for v in theirs.values()]
    assert [k for k, _ in ours.items()] == [k for k, _ in theirs.items()]
    assert "act" in ours and "nope" not in ours and len(ours) == 4
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for md in (ours, theirs):
        md.pop("act")
        del md["extra"]
    assert repr(ours) == repr(theirs)
    ours.clear()
    assert len(ours) == 0 and list(ours.parameters()) == []
    with pytest.raises(TypeError):
        ours.update(5)
    with pytest.raises(ValueError):
        ours.update([("a", nn.ReLU(), 3)])
    with pytest.raises(KeyError):
        ours["missing"]


# ---- Dropout ------------------------------------------------------------------------------------
def test_dropout_train_and_eval():
    tapegrad.manual_seed(0)
    x = tapegrad.ones(20000, requires_grad=True)
    d = nn.Dropout(0.3)
    assert repr(d) == "Dropout(p=0.3, inplace=False)"
    y = d(x)
    vals = np.unique(np.round(y._data, 5))
    np.testing.assert_allclose(vals, [0.0, 1 / 0.7], rtol=1e-6)
    frac = float((y._data == 0).mean())
    assert abs(frac - 0.3) < 0.02
    assert type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad._data, y._data)   # d(x * mask)/dx = mask
    d.eval()
    assert d(x) is x
    d.train()
    assert d(x)._data.shape == (20000,)


def test_dropout_uses_the_default_generator():
    x = tapegrad.ones(50)
    tapegrad.manual_seed(123)
    a = F.dropout(x, 0.5)
    tapegrad.manual_seed(123)
    b = F.dropout(x, 0.5)
    c = F.dropout(x, 0.5)
    assert np.array_equal(a._data, b._data) and not np.array_equal(b._data, c._data)
    g = tapegrad.Generator().manual_seed(123)
    tapegrad.manual_seed(123)
    assert np.array_equal(F.dropout(x, 0.5)._data, a._data)
    del g


def test_dropout_edge_cases(torch):
    for lib in (tapegrad, torch):
        x = lib.ones(3, requires_grad=True)
        assert lib.nn.functional.dropout(x, 0.0) is x
        assert lib.nn.functional.dropout(x, 0.5, training=False) is x
        z = lib.nn.functional.dropout(x, 1.0)
        assert z.tolist() == [0.0, 0.0, 0.0] and type(z.grad_fn).__name__ == "MulBackward0"
    y = tapegrad.ones(4)
    tapegrad.manual_seed(1)
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y and set(np.unique(y._data)) <= {0.0, 2.0}


# ---- Conv2d / MaxPool2d / GELU ------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"stride": 2, "padding": 1}, {"bias": False},
                                    {"padding": "same"},
                                    {"kernel_size": (3, 1), "padding": (1, 0)}])
def test_conv2d_module_matches_torch(kwargs, torch):
    kw = dict(kwargs)
    k = kw.pop("kernel_size", 3)
    ours = nn.Conv2d(2, 3, k, **kw).double()
    theirs = torch.nn.Conv2d(2, 3, k, **kw).double()
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
    _copy_params(theirs, ours)
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 6))
    a, b = tapegrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = ours(a), theirs(b)
    np.testing.assert_allclose(_np(ya), _np(yb), rtol=1e-10, atol=1e-12)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-10, atol=1e-12)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-10, atol=1e-12)


def test_conv2d_init_bounds():
    tapegrad.manual_seed(0)
    m = nn.Conv2d(4, 8, 3)
    bound = 1 / math.sqrt(4 * 9)   # kaiming_uniform_(a=sqrt(5)) gives 1/sqrt(fan_in) too
    assert m.weight.shape == (8, 4, 3, 3) and m.bias.shape == (8,)
    assert np.abs(m.weight._data).max() <= bound and np.abs(m.bias._data).max() <= bound
    assert np.abs(m.weight._data).max() > 0.8 * bound
    assert m.weight.dtype == tapegrad.float32
    assert nn.Conv2d(1, 1, 2, dtype=tapegrad.float64).weight.dtype == tapegrad.float64


def test_maxpool2d_module_matches_torch(torch):
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 6))
    for kw in [{"kernel_size": 2}, {"kernel_size": 3, "stride": 1, "padding": 1},
               {"kernel_size": (2, 3), "stride": (2, 1)}]:
        ours, theirs = nn.MaxPool2d(**kw), torch.nn.MaxPool2d(**kw)
        assert repr(ours) == repr(theirs)
        a, b = tapegrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = ours(a), theirs(b)
        np.testing.assert_array_equal(_np(ya), _np(yb))
        ya.sum().backward()
        yb.sum().backward()
        np.testing.assert_array_equal(_np(a.grad), _np(b.grad))
    va, ia = nn.MaxPool2d(2, return_indices=True)(tapegrad.tensor(x))
    vb, ib = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    np.testing.assert_array_equal(_np(ia), _np(ib))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_module_matches_torch(approximate, torch):
    ours, theirs = nn.GELU(approximate), torch.nn.GELU(approximate)
    assert repr(ours) == repr(theirs)
    x = np.linspace(-6, 6, 41)
    for dt in (np.float32, np.float64):
        a = tapegrad.tensor(x.astype(dt), requires_grad=True)
        b = torch.tensor(x.astype(dt), requires_grad=True)
        ya, yb = ours(a), theirs(b)
        tol = 1e-5 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(_np(ya), _np(yb), rtol=tol, atol=tol)
        assert type(ya.grad_fn).__name__ == type(yb.grad_fn).__name__ == "GeluBackward0"
        (ga,) = tapegrad.autograd.grad(ya.sum(), a, create_graph=True)
        (gb,) = torch.autograd.grad(yb.sum(), b, create_graph=True)
        np.testing.assert_allclose(_np(ga), _np(gb), rtol=tol, atol=tol)
        (gga,) = tapegrad.autograd.grad(ga.sum(), a)
        (ggb,) = torch.autograd.grad(gb.sum(), b)
        np.testing.assert_allclose(_np(gga), _np(ggb), rtol=10 * tol, atol=10 * tol)


def test_erf_accuracy():
    import math as m
    x = np.concatenate([np.linspace(-7, 7, 4001), [0.0, -0.0, 1e-300, 2.0 ** -30]])
    ref = np.array([m.erf(v) for v in x])
    np.testing.assert_allclose(tapegrad.erf(tapegrad.tensor(x))._data, ref, rtol=4e-16,
                               atol=1e-300)
    special = tapegrad.erf(tapegrad.tensor([np.inf, -np.inf, np.nan]))._data
    assert special[0] == 1 and special[1] == -1 and np.isnan(special[2])


# ---- losses -------------------------------------------------------------------------------------
def _loss_case(torch, make_loss, x, t, logits):
    ours, theirs = make_loss(tapegrad), make_loss(torch)
    assert repr(ours) == repr(theirs)
    a, b = tapegrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ta, tb = tapegrad.tensor(t), torch.tensor(t)
    la, lb = ours(a, ta), theirs(b, tb)
    np.testing.assert_allclose(_np(la), _np(lb), rtol=1e-10, atol=1e-12)
    assert type(la.grad_fn).__name__ == type(lb.grad_fn).__name__
    la.sum().backward()
    lb.sum().backward()
    np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-10, atol=1e-12)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_losses_match_torch(reduction, torch):
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((4, 3)) * 3
    probs = 1 / (1 + np.exp(-logits))
    t = rng.uniform(0, 1, (4, 3))
    w = rng.uniform(0.5, 2.0, 3)
    pw = rng.uniform(0.5, 3.0, 3)
    _loss_case(torch, lambda lib: lib.nn.BCELoss(reduction=reduction), probs, t, False)
    _loss_case(torch, lambda lib: lib.nn.BCELoss(weight=lib.tensor(w), reduction=reduction),
               probs, t, False)
    _loss_case(torch, lambda lib: lib.nn.BCEWithLogitsLoss(reduction=reduction), logits, t, True)
    _loss_case(torch, lambda lib: lib.nn.BCEWithLogitsLoss(weight=lib.tensor(w),
                                                           pos_weight=lib.tensor(pw),
                                                           reduction=reduction), logits, t, True)


def test_bce_with_logits_is_stable():
    x = tapegrad.tensor([1000.0, -1000.0, 0.0], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, tapegrad.tensor([0.0, 1.0, 1.0]),
                                              reduction="none")
    np.testing.assert_allclose(loss._data, [1000.0, 1000.0, math.log(2)], rtol=1e-6)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad._data, [1.0, -1.0, -0.5], rtol=1e-6)
    p = tapegrad.tensor([0.0, 1.0], requires_grad=True)
    loss = F.binary_cross_entropy(p, tapegrad.tensor([1.0, 0.0]))
    assert loss.item() == 100.0   # logs clamped at -100, as torch


def test_legacy_reduction_args_match_torch(torch):
    x = np.array([0.2, 0.7])
    t = np.array([0.0, 1.0])
    for kw in ({"size_average": False}, {"reduce": False}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = F.binary_cross_entropy(tapegrad.tensor(x), tapegrad.tensor(t), **kw)
            theirs = torch.nn.functional.binary_cross_entropy(torch.tensor(x), torch.tensor(t),
                                                              **kw)
        np.testing.assert_allclose(_np(ours), _np(theirs))


def test_cross_entropy_label_smoothing_module(torch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4))
    t = np.array([0, 3, 1, 1, 2])
    for kw in ({"label_smoothing": 0.1}, {"label_smoothing": 0.3, "ignore_index": 1},
               {"label_smoothing": 0.2, "reduction": "sum"}):
        ours, theirs = nn.CrossEntropyLoss(**kw), torch.nn.CrossEntropyLoss(**kw)
        a, b = tapegrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        la, lb = ours(a, tapegrad.tensor(t)), theirs(b, torch.tensor(t))
        np.testing.assert_allclose(_np(la), _np(lb), rtol=1e-10)
        la.backward()
        lb.backward()
        np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-10, atol=1e-12)


def test_one_hot_matches_torch(torch):
    for args in [([0, 2, 1],), ([0, 2, 1], 5), ([[1], [0]],)]:
        ours = F.one_hot(tapegrad.tensor(args[0]), *args[1:])
        theirs = torch.nn.functional.one_hot(torch.tensor(args[0]), *args[1:])
        assert ours.dtype == tapegrad.int64
        np.testing.assert_array_equal(_np(ours), _np(theirs))


# ---- a small CNN end to end ---------------------------------------------------------------------
def test_small_cnn_matches_torch(torch):
    def build(lib):
        n = lib.nn
        return n.Sequential(n.Conv2d(1, 2, 3, padding=1), n.GELU(), n.MaxPool2d(2),
                            n.Dropout(0.5), n.Flatten(), n.Linear(8, 1))

    ours, theirs = build(tapegrad).double(), build(torch).double()
    _copy_params(theirs, ours)
    ours.eval()
    theirs.eval()
    x = np.random.default_rng(4).standard_normal((3, 1, 4, 4))
    t = np.array([[1.0], [0.0], [1.0]])
    la = F.binary_cross_entropy_with_logits(ours(tapegrad.tensor(x)), tapegrad.tensor(t))
    lb = torch.nn.functional.binary_cross_entropy_with_logits(theirs(torch.tensor(x)),
                                                              torch.tensor(t))
    np.testing.assert_allclose(_np(la), _np(lb), rtol=1e-10)
    la.backward()
    lb.backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-9, atol=1e-12)


# ---- lr_scheduler -------------------------------------------------------------------------------
_SCHEDULERS = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("StepLR", {"step_size": 1}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 11], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 7}),
    ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.01}),
    ("LambdaLR", {"lr_lambda": lambda e: 1.0 / (e + 1)}),
    ("LambdaLR", {"lr_lambda": [lambda e: 0.95 ** e, lambda e: e // 3 + 1]}),
]


def _optimizers(lib):
    p1 = lib.nn.Parameter(lib.ones(2))
    p2 = lib.nn.Parameter(lib.ones(3))
    return lib.optim.SGD([{"params": [p1]}, {"params": [p2], "lr": 0.03}], lr=0.1,
                         momentum=0.9)


@pytest.mark.parametrize("name,kwargs", _SCHEDULERS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(_SCHEDULERS)])
def test_scheduler_trajectory_matches_torch(name, kwargs, torch):
    topt, oopt = _optimizers(torch), _optimizers(tapegrad)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    osched = getattr(lr_scheduler, name)(oopt, **kwargs)
    assert osched.get_last_lr() == tsched.get_last_lr()
    assert osched.base_lrs == tsched.base_lrs
    for _ in range(20):
        topt.step()
        oopt.step()
        tsched.step()
        osched.step()
        assert osched.get_last_lr() == tsched.get_last_lr()   # bit for bit
        assert [g["lr"] for g in oopt.param_groups] == [g["lr"] for g in topt.param_groups]
        assert osched.last_epoch == tsched.last_epoch
    assert [g["initial_lr"] for g in oopt.param_groups] == \
        [g["initial_lr"] for g in topt.param_groups]


@pytest.mark.parametrize("name,kwargs", _SCHEDULERS[:6],
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(_SCHEDULERS[:6])])
def test_scheduler_closed_form_epoch_matches_torch(name, kwargs, torch):
    topt, oopt = _optimizers(torch), _optimizers(tapegrad)
    tsched = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    osched = getattr(lr_scheduler, name)(oopt, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in (4, 9, 2, 15):
            topt.step()
            oopt.step()
            tsched.step(epoch)
            osched.step(epoch)
            np.testing.assert_allclose(osched.get_last_lr(), tsched.get_last_lr(), rtol=1e-15)


def test_scheduler_state_dict_and_resume(torch):
    oopt = _optimizers(tapegrad)
    s = lr_scheduler.StepLR(oopt, step_size=2, gamma=0.5)
    for _ in range(5):
        oopt.step()
        s.step()
    state = s.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 5
    tsched = torch.optim.lr_scheduler.StepLR(_optimizers(torch), step_size=2, gamma=0.5)
    assert set(state) == set(tsched.state_dict())
    s2 = lr_scheduler.StepLR(_optimizers(tapegrad), step_size=9)
    s2.load_state_dict(state)
    assert s2.step_size == 2 and s2.last_epoch == 5 and s2.get_last_lr() == s.get_last_lr()
    lam = lr_scheduler.LambdaLR(oopt, lambda e: 1.0)
    assert lam.state_dict()["lr_lambdas"] == [None, None]
    resumed = lr_scheduler.ExponentialLR(oopt, 0.5, last_epoch=4)
    assert resumed.last_epoch == 5
    with pytest.raises(KeyError):
        lr_scheduler.StepLR(_optimizers(tapegrad), 2, last_epoch=3)
    with pytest.raises(TypeError):
        lr_scheduler.StepLR(object(), 2)
    with pytest.raises(ValueError):
        lr_scheduler.LambdaLR(_optimizers(tapegrad), [lambda e: 1.0])


def test_scheduler_warns_when_stepped_before_optimizer():
    opt = _optimizers(tapegrad)
    s = lr_scheduler.ExponentialLR(opt, 0.5)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    opt2 = _optimizers(tapegrad)
    s2 = lr_scheduler.ExponentialLR(opt2, 0.5)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        s2.get_lr()


def test_scheduler_drives_training():
    tapegrad.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.5)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    lrs = []
    for _ in range(5):
        opt.zero_grad()
        model(tapegrad.ones(4, 3)).sum().backward()
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(lrs, [0.5, 0.05, 0.05, 0.005, 0.005])


def test_einsum_stray_dot_names_the_operand_like_torch(torch):
    """Was a bug: the message printed a literal '{i}' instead of the operand's position."""
    msgs = []
    for lib in (torch, tapegrad):
        with pytest.raises(RuntimeError) as e:
            lib.einsum("ij,j.->i", lib.ones(2, 2), lib.ones(2))
        msgs.append(str(e.value))
    assert msgs[1].startswith(msgs[0])


def test_conv2d_keeps_sizes_as_given_like_torch(torch):
    """Was a bug: a kernel_size of length 3 was silently cut to a pair (torch keeps it, and the
    layer fails when it runs)."""
    for k in [3, (2, 3), (3,), (3, 3, 3)]:
        ours, ref = tapegrad.nn.Conv2d(1, 1, k), torch.nn.Conv2d(1, 1, k)
        assert ours.kernel_size == ref.kernel_size
        assert tuple(ours.weight.shape) == tuple(ref.weight.shape)
