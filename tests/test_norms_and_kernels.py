"""torch.norm's matrix orders ('nuc', and 'fro' over more than two dims, both through
linalg.matrix_norm), the deprecated torch.nuclear_norm / torch.frobenius_norm (values, node
names, gradients, warnings, errors), and the kernels torch has only for floating dtypes:
softmax / log_softmax / cross_entropy of integer or bool tensors, and special.erfcx / ndtri /
zeta of float16, each refused as torch refuses it."""
import warnings

import numpy as np
import pytest
from torch_compare import error_of, raises_as_torch

import tapegrad as tg


def _m(L, *shape, seed=0):
    a = np.random.RandomState(seed).standard_normal(shape).astype(np.float32)
    return L.tensor(a, requires_grad=True)


_NORMS = {
    "norm nuc": lambda L: L.norm(_m(L, 3, 4), "nuc"),
    "norm nuc keepdim": lambda L: L.norm(_m(L, 3, 4), "nuc", keepdim=True),
    "norm nuc dim": lambda L: L.norm(_m(L, 2, 3, 4), "nuc", dim=(1, 2)),
    "norm nuc dim 0 2": lambda L: L.norm(_m(L, 2, 3, 4), "nuc", dim=(0, 2)),
    "norm nuc float64": lambda L: L.norm(_m(L, 4, 3).double(), "nuc"),
    "norm fro 2 dims": lambda L: L.norm(_m(L, 2, 3, 4), "fro", dim=(0, 2)),
    "nuclear_norm": lambda L: L.nuclear_norm(_m(L, 3, 4)),
    "nuclear_norm keepdim": lambda L: L.nuclear_norm(_m(L, 3, 4), True),
    "nuclear_norm keepdim kw": lambda L: L.nuclear_norm(_m(L, 3, 4), keepdim=True),
    "nuclear_norm batch": lambda L: L.nuclear_norm(_m(L, 2, 3, 4)),
    "nuclear_norm dim": lambda L: L.nuclear_norm(_m(L, 2, 3, 4), dim=(0, 2)),
    "nuclear_norm dim keepdim": lambda L: L.nuclear_norm(_m(L, 2, 3, 4), (2, 1), True),
    "frobenius_norm": lambda L: L.frobenius_norm(_m(L, 3, 4), dim=(0, 1)),
    "frobenius_norm one dim": lambda L: L.frobenius_norm(_m(L, 3, 4), (1,)),
    "frobenius_norm int dim": lambda L: L.frobenius_norm(_m(L, 3, 4), 1, True),
    "frobenius_norm negative": lambda L: L.frobenius_norm(_m(L, 2, 3, 4), (-1, 0)),
}


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


@pytest.mark.parametrize("name", sorted(_NORMS))
def test_matrix_norms_match_torch(name):
    torch = pytest.importorskip("torch")
    make = _NORMS[name]
    y, ty = _quiet(lambda: make(tg)), _quiet(lambda: make(torch))
    assert y.shape == tuple(ty.shape) and str(y.dtype)[9:] == str(ty.dtype)[6:]
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=2e-5, atol=1e-6)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    # gradients of the input through the same composite
    (x,), (tx,) = _leaves(y), _leaves(ty)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


def _leaves(t):
    """The leaf tensors a result's graph reaches (one here)."""
    seen, stack, out = set(), [t.grad_fn], []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        if hasattr(fn, "variable"):
            out.append(fn.variable)
        stack.extend(f for f, _ in fn.next_functions)
    return out


def test_frobenius_norm_gradcheck():
    x = tg.tensor(np.random.RandomState(1).rand(3, 4), dtype=tg.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tg.autograd.gradcheck(lambda t: tg.frobenius_norm(t, (0, 1)), (x,))
        assert tg.autograd.gradgradcheck(lambda t: tg.frobenius_norm(t, 1), (x,))


@pytest.mark.parametrize("name,call", [
    ("nuclear_norm", lambda L: L.nuclear_norm(L.ones(2, 3))),
    ("frobenius_norm", lambda L: L.frobenius_norm(L.ones(2, 3), (0, 1))),
])
def test_the_deprecated_norms_warn_once_a_process_as_torch(monkeypatch, name, call):
    from tapegrad.ops import linalg_extra
    monkeypatch.setattr(linalg_extra, "_WARNED", set())     # (as in a fresh process)
    for k in range(2):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            call(tg)
        ours = [w for w in seen if issubclass(w.category, UserWarning)]
        if k:
            assert not ours     # (torch's TORCH_WARN_ONCE)
            continue
        assert len(ours) == 1 and f"{name} is deprecated" in str(ours[0].message)
        assert ours[0].filename == __file__     # (the user's line)
    # torch's own warning says the same (it too warns once a process, so it is run in a new one)
    torch_check = pytest.importorskip("torch")
    del torch_check
    import subprocess
    import sys
    code = ("import warnings, torch; warnings.simplefilter('always');\n"
            f"with warnings.catch_warnings(record=True) as w:\n    {_SRC[name]}\n"
            "print(str(w[0].message))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert f"{name} is deprecated" in out.stdout


_SRC = {"nuclear_norm": "torch.nuclear_norm(torch.ones(2, 3))",
        "frobenius_norm": "torch.frobenius_norm(torch.ones(2, 3), (0, 1))"}


_NORM_ERRORS = {
    "nuc over 3 dims": lambda L: L.norm(L.ones(2, 3, 4), "nuc"),
    "fro over 3 dims": lambda L: L.norm(L.ones(2, 3, 4), "fro", dim=(0, 1, 2)),
    "unknown order": lambda L: L.norm(L.ones(3, 4), "abc"),
    "nuc of 1-D": lambda L: L.norm(L.ones(3), "nuc"),
    "nuclear_norm of 1-D": lambda L: L.nuclear_norm(L.ones(3)),
    "nuclear_norm same dims": lambda L: L.nuclear_norm(L.ones(3, 3), (1, 1)),
    "frobenius_norm 3 dims": lambda L: L.frobenius_norm(L.ones(2, 3, 4), (0, 1, 2)),
    "frobenius_norm no dim": lambda L: L.frobenius_norm(L.ones(2, 3)),
    "frobenius_norm int input": lambda L: L.frobenius_norm(L.ones(2, 3, dtype=L.int64), 1),
    "frobenius_norm dim out of range": lambda L: L.frobenius_norm(L.ones(2, 3), 5),
}


@pytest.mark.parametrize("name", sorted(_NORM_ERRORS))
def test_norm_errors_match_torch(name):
    torch = pytest.importorskip("torch")
    call = _NORM_ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        msg = raises_as_torch(torch, call)
        ref = error_of(torch, call)[1]
    if name.startswith(("nuc", "fro over", "unknown", "frobenius_norm 3")):
        assert msg.startswith(ref), (msg, ref)    # torch's words first (ours may say more)


_INT_SOFTMAX = {
    "softmax last dim": lambda L: L.softmax(L.arange(6).reshape(2, 3), 1),
    "softmax dim 0": lambda L: L.softmax(L.arange(6).reshape(2, 3), 0),
    "softmax 0-d": lambda L: L.softmax(L.tensor(3), 0),
    "softmax bool": lambda L: L.softmax(L.tensor([True, False]), 0),
    "softmax int dtype": lambda L: L.softmax(L.ones(2, 3), 1, dtype=L.int64),
    "log_softmax dim 0": lambda L: L.log_softmax(L.arange(6).reshape(2, 3), 0),
    "log_softmax last": lambda L: L.log_softmax(L.arange(6).reshape(2, 3), -1),
    "F.softmax": lambda L: L.nn.functional.softmax(L.arange(6).reshape(2, 3), dim=1),
    "Tensor.softmax": lambda L: L.arange(6).reshape(2, 3).softmax(1),
    "nn.Softmax": lambda L: L.nn.Softmax(dim=1)(L.arange(6).reshape(2, 3)),
    "nn.LogSoftmax": lambda L: L.nn.LogSoftmax(dim=0)(L.arange(6).reshape(2, 3)),
    "cross_entropy 2-D": lambda L: L.nn.functional.cross_entropy(
        L.arange(6).reshape(2, 3), L.tensor([0, 1])),
    "cross_entropy 4-D": lambda L: L.nn.functional.cross_entropy(
        L.ones(2, 3, 2, 2, dtype=L.int64), L.zeros(2, 2, 2, dtype=L.int64)),
    "cross_entropy probabilities": lambda L: L.nn.functional.cross_entropy(
        L.ones(2, 3, dtype=L.int64), L.ones(2, 3) / 3),
    "special.softmax": lambda L: L.special.softmax(L.arange(3), 0),
    "special.log_softmax": lambda L: L.special.log_softmax(L.arange(3), 0),
}


@pytest.mark.parametrize("name", sorted(_INT_SOFTMAX))
def test_softmax_of_integers_is_refused_as_torch(name):
    call = _INT_SOFTMAX[name]
    with pytest.raises(NotImplementedError, match="kernel_impl\" not implemented for"):
        call(tg)
    torch = pytest.importorskip("torch")
    msg = raises_as_torch(torch, call)
    assert msg.startswith(error_of(torch, call)[1])


def test_softmax_of_integers_with_a_float_dtype_works():
    x = tg.arange(6).reshape(2, 3)
    y = tg.softmax(x, 1, dtype=tg.float64)
    assert y.dtype == tg.float64
    np.testing.assert_allclose(y.numpy().sum(1), [1.0, 1.0])
    assert tg.log_softmax(x, 0, dtype=tg.float32).dtype == tg.float32


_HALF = {
    "erfcx": lambda L: L.special.erfcx(L.ones(2, dtype=L.float16)),
    "ndtri": lambda L: L.special.ndtri(L.full((2,), 0.3, dtype=L.float16)),
    "zeta": lambda L: L.special.zeta(L.full((2,), 2.0, dtype=L.float16), L.ones(2, dtype=L.float16)),
    "zeta half and number": lambda L: L.special.zeta(L.full((2,), 2.0, dtype=L.float16), 1.0),
    "zeta number and half": lambda L: L.special.zeta(2.0, L.ones(2, dtype=L.float16)),
}


@pytest.mark.parametrize("name", sorted(_HALF))
def test_float16_special_kernels_are_refused_as_torch(name):
    call = _HALF[name]
    with pytest.raises(NotImplementedError, match="_cpu\" not implemented for 'Half'"):
        call(tg)
    torch = pytest.importorskip("torch")
    msg = raises_as_torch(torch, call)
    assert msg.startswith(error_of(torch, call)[1])


def test_float16_mixed_with_float32_promotes_and_works():
    torch = pytest.importorskip("torch")
    for L in (tg, torch):
        r = L.special.zeta(L.full((2,), 2.0, dtype=L.float16), L.ones(2))
        assert str(r.dtype).endswith("float32")
