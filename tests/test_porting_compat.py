"""What ported training scripts touch besides ops: nn.utils clipping, the legacy Tensor
constructors, finfo/iinfo, thread/determinism/backends switches, the CUDA stubs."""
import importlib
import math

import numpy as np
import pytest

import tapegrad as tg


def _clip_run(lib):
    rng = np.random.default_rng(0)
    ps = [lib.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
          for s in [(5, 3), (3,), (2, 2)]]
    for p in ps:
        p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 3)
    ps.append(lib.tensor([1.0], requires_grad=True))      # no gradient: skipped
    out = []
    for nt in (2.0, 1, math.inf, 3):
        saved = [None if p.grad is None else p.grad.clone() for p in ps]
        total = lib.nn.utils.clip_grad_norm_(ps, 1.5, norm_type=nt)
        out.append((float(total), [p.grad.numpy() for p in ps if p.grad is not None]))
        for p, g in zip(ps, saved):
            p.grad = g
    lib.nn.utils.clip_grad_value_(ps, 0.5)
    out.append((0.0, [p.grad.numpy() for p in ps if p.grad is not None]))
    v = lib.nn.utils.parameters_to_vector(ps)
    lib.nn.utils.vector_to_parameters(v.detach() * 2, ps)
    out.append((float(v.detach().sum()), [p.detach().numpy() for p in ps]))
    return out


def test_clip_grad_norm_scales_to_the_max_norm():
    p = tg.tensor([3.0, 4.0], requires_grad=True)
    p.grad = tg.tensor([3.0, 4.0])
    v = p.grad._version
    total = tg.nn.utils.clip_grad_norm_(p, 1.0)
    assert float(total) == 5.0 and p.grad._version == v + 1
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-6)
    p.grad = tg.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        tg.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert float(tg.nn.utils.clip_grad_norm_([], 1.0)) == 0.0
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        tg.nn.utils.vector_to_parameters([1.0], [p])


def test_nn_utils_as_torch():
    torch = pytest.importorskip("torch")
    for (ta, ga), (tb, gb) in zip(_clip_run(tg), _clip_run(torch)):
        assert ta == pytest.approx(tb, rel=1e-6)
        for a, b in zip(ga, gb):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


LEGACY = [
    ("Tensor", ([1, 2],)), ("Tensor", (2, 3)), ("Tensor", ()), ("Tensor", ((1.5, 2),)),
    ("Tensor", (np.array([1, 2]),)), ("FloatTensor", ([1, 2],)), ("LongTensor", ([1.7, -2.2],)),
    ("LongTensor", (2,)), ("DoubleTensor", (2, 2)), ("BoolTensor", ([1, 0],)),
    ("HalfTensor", ([0.1],)), ("IntTensor", ([3],)), ("ByteTensor", ([3],)),
]


def _legacy(lib, name, args):
    try:
        t = getattr(lib, name)(*args)
    except Exception as e:     # noqa: BLE001 - compared by type
        return type(e).__name__
    values = t.tolist() if not (len(args) and all(type(a) is int for a in args)) else None
    return str(t.dtype).split(".")[-1], tuple(t.shape), values


@pytest.mark.parametrize("name,args", LEGACY)
def test_legacy_constructors(name, args):
    out = _legacy(tg, name, args)
    assert out[0] == ("float32" if name in ("Tensor", "FloatTensor") else out[0])


@pytest.mark.parametrize("name,args", LEGACY + [("Tensor", (2.5,)), ("Tensor", ("x",))])
def test_legacy_constructors_as_torch(name, args):
    torch = pytest.importorskip("torch")
    assert _legacy(tg, name, args) == _legacy(torch, name, args)


def test_legacy_types_in_isinstance_and_type():
    x = tg.ones(2)
    assert isinstance(x, tg.FloatTensor) and not isinstance(x.double(), tg.FloatTensor)
    assert x.type(tg.DoubleTensor).dtype == tg.float64
    assert x.type() == "torch.FloatTensor"


@pytest.mark.parametrize("lib_name", ["tapegrad", "torch"])
def test_finfo_iinfo(lib_name):
    lib = pytest.importorskip(lib_name)
    f32, f16 = lib.finfo(lib.float32), lib.finfo(lib.float16)
    assert (f32.eps, f32.bits, f16.tiny, lib.finfo().eps) == (
        np.finfo(np.float32).eps, 32, 2.0 ** -14, np.finfo(np.float32).eps)
    i64 = lib.iinfo(lib.int64)
    assert (i64.max, i64.min, i64.bits, lib.iinfo(lib.uint8).max) == (2 ** 63 - 1, -2 ** 63, 64, 255)
    with pytest.raises(TypeError):
        lib.finfo(lib.int64)
    with pytest.raises(TypeError):
        lib.iinfo(lib.float32)


def test_finfo_repr_as_torch():
    torch = pytest.importorskip("torch")
    assert repr(tg.finfo(tg.float32)) == repr(torch.finfo(torch.float32))
    assert repr(tg.iinfo(tg.int32)) == repr(torch.iinfo(torch.int32))


def test_switches_and_cuda_stubs():
    n = tg.get_num_threads()
    tg.set_num_threads(1)
    assert tg.get_num_threads() == 1
    tg.set_num_threads(n)
    assert not tg.are_deterministic_algorithms_enabled()
    tg.use_deterministic_algorithms(True)
    assert tg.are_deterministic_algorithms_enabled()
    tg.use_deterministic_algorithms(False)
    tg.backends.cudnn.deterministic = True
    tg.backends.cudnn.benchmark = False
    tg.cuda.manual_seed(0)
    tg.cuda.manual_seed_all(0)
    assert not tg.backends.mps.is_available()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        tg.ones(2).cuda()


def test_gradcheck_stays_a_function_after_importing_its_module():
    mod = importlib.import_module("tapegrad.autograd.gradcheck")
    assert tg.autograd.gradcheck is mod.gradcheck
    x = tg.tensor([0.5], dtype=tg.float64, requires_grad=True)
    assert tg.autograd.gradcheck(lambda a: a * a, (x,))


KDIM_ERRORS = [((2, 3, 4), (2, 5)), ((2, 3, 4), (3, 4)), ((2, 3, 4, 5), (2, 4)),
               ((2, 3, 4), (2, 4, 1))]


@pytest.mark.parametrize("xs,ts", KDIM_ERRORS)
def test_kdim_nll_loss_target_shape_errors(xs, ts):
    with pytest.raises((RuntimeError, ValueError)) as ours:
        tg.nn.functional.nll_loss(tg.randn(*xs), tg.zeros(ts, dtype=tg.long))
    torch = pytest.importorskip("torch")
    with pytest.raises((RuntimeError, ValueError)) as theirs:
        torch.nn.functional.nll_loss(torch.randn(*xs), torch.zeros(ts, dtype=torch.long))
    assert ours.type is theirs.type
    assert str(theirs.value).split(".")[0].split(",")[0] in str(ours.value)


def test_kdim_cross_entropy_is_the_per_position_loss():
    # (N, C, d) logits: the mean over every position of the 2-D loss of that position
    x = tg.randn(2, 3, 4, dtype=tg.float64)
    t = tg.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])
    flat = tg.nn.functional.cross_entropy(x.permute(0, 2, 1).reshape(-1, 3), t.reshape(-1))
    assert float(tg.nn.functional.cross_entropy(x, t)) == pytest.approx(float(flat), rel=1e-12)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("f", [lambda x: x.sqrt(), lambda x: x.log(), lambda x: x.pow(0.5),
                               lambda x: x.rsqrt()])
def test_backward_stays_quiet_when_warnings_are_errors(f):
    # torch gives inf/nan gradients at 0 without a warning; a program's "error" filter must not
    # turn NumPy's divide-by-zero warnings inside backward into exceptions
    x = tg.zeros(2, requires_grad=True)
    f(x).sum().backward()
    assert not np.isfinite(x.grad.numpy()).any()


@pytest.mark.parametrize("target", [[0.0, 1.0, 2.0], np.zeros((3, 5)), np.zeros(4)])
def test_cross_entropy_float_target_of_another_shape_fails_as_class_indices(target):
    # torch takes a floating target of another shape than the input's for class indices
    target = np.asarray(target, np.float32)
    with pytest.raises((RuntimeError, ValueError)) as ours:
        tg.nn.functional.cross_entropy(tg.randn(3, 4), tg.tensor(target))
    torch = pytest.importorskip("torch")
    with pytest.raises((RuntimeError, ValueError)) as theirs:
        torch.nn.functional.cross_entropy(torch.randn(3, 4), torch.tensor(target))
    assert ours.type is theirs.type
    assert str(theirs.value).rstrip(".") in str(ours.value)
