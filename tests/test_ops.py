"""Every op in ``tapegrad.testing.op_db``, sample by sample.

* forward values, dtypes, shapes and requires_grad against torch (float32 and float64);
* gradients of ``sum(out * cotangent)`` for every floating input against torch;
* the ``grad_fn`` node name against torch (``expected_node_name_differences`` lists the deliberate
  exceptions);
* gradcheck and gradgradcheck in float64 (no torch needed).
"""
from __future__ import annotations

import functools
import warnings
import zlib

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import gradcheck, gradgradcheck
from tapegrad.ops import PUBLIC
from tapegrad.ops._registry import FUNCTIONAL, LINALG, METHODS
from tapegrad.testing import (expected_node_name_differences, make_tensors, not_ops, op_db,
                              op_db_by_name)

DTYPES = [np.float32, np.float64]
# torch.testing.assert_close's defaults for each result dtype
TOLS = {np.dtype(np.float16): (1e-3, 1e-5), np.dtype(np.float32): (1.3e-6, 1e-5),
        np.dtype(np.float64): (1e-7, 1e-7)}


@functools.lru_cache(maxsize=None)
def _samples(name, dtype):
    return op_db_by_name[name].sample_inputs(dtype)


def _params(pred=lambda op, s: True):
    out = []
    for op in op_db:
        for i, s in enumerate(_samples(op.name, np.float64)):
            if pred(op, s):
                out.append(pytest.param(op.name, i, id=f"{op.name}-{i}-{s.name}"))
    return out


ALL = _params()
GRAD = _params(lambda op, s: op.supports_grad)
GRADCHECK = _params(lambda op, s: op.supports_grad and op.gradcheck and s.gradcheck)
GRADGRADCHECK = _params(lambda op, s: op.supports_grad and op.gradcheck and s.gradgradcheck)


# ---- helpers ------------------------------------------------------------------------------------
def _flat(out):
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flat(o)]
    return [out]


def _run(fn, sample, module, requires_grad):
    leaves = []
    inp = make_tensors(sample.input, module, requires_grad, leaves)
    args = make_tensors(sample.args, module, requires_grad, leaves)
    kwargs = make_tensors(sample.kwargs, module, requires_grad, leaves)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(inp, *args, **kwargs)
    return out, leaves


def _both(name, i, dtype, torch, requires_grad=True):
    op = op_db_by_name[name]
    sample = _samples(name, dtype)[i]
    ours = _run(op.get_op(), sample, tapegrad, requires_grad)
    theirs = _run(op.get_torch_op(torch), sample, torch, requires_grad)
    return op, sample, ours, theirs


def _dtype_name(dt):
    return str(dt).rsplit(".", 1)[-1]


def _assert_close(actual, expected, what):
    """``actual``: np array from tapegrad; ``expected``: np array from torch."""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != torch {expected.shape}"
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    rtol, atol = TOLS[np.dtype(expected.dtype)]
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True,
                               err_msg=what)


def _differentiable(outs):
    return [o for o in outs if getattr(o, "requires_grad", False) and o.dtype.is_floating_point]


# ---- (a) forward against torch ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name,i", ALL)
def test_forward_matches_torch(name, i, dtype, torch):
    op, sample, (out, _), (ref, _) = _both(name, i, dtype, torch)
    outs, refs = _flat(out), _flat(ref)
    assert len(outs) == len(refs), f"{len(outs)} outputs, torch has {len(refs)}"
    for k, (a, b) in enumerate(zip(outs, refs)):
        what = f"{name} {sample} output {k}"
        if isinstance(b, torch.Tensor):
            assert isinstance(a, tapegrad.Tensor), f"{what}: got {type(a).__name__}, torch a Tensor"
            assert _dtype_name(a.dtype) == _dtype_name(b.dtype), \
                f"{what}: dtype {a.dtype} vs torch {b.dtype}"
            assert tuple(a.shape) == tuple(b.shape), \
                f"{what}: shape {tuple(a.shape)} vs torch {tuple(b.shape)}"
            assert a.requires_grad == b.requires_grad, \
                f"{what}: requires_grad {a.requires_grad} vs torch {b.requires_grad}"
            _assert_close(np.asarray(a._data), b.detach().numpy(), what)
        else:
            assert type(a) is type(b) and a == b, f"{what}: {a!r} vs torch {b!r}"


# ---- (b) gradients against torch ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("name,i", GRAD)
def test_grad_matches_torch(name, i, dtype, torch):
    op, sample, (out, leaves), (ref, ref_leaves) = _both(name, i, dtype, torch)
    outs, refs = _differentiable(_flat(out)), _differentiable(_flat(ref))
    assert len(outs) == len(refs), f"{len(outs)} differentiable outputs, torch has {len(refs)}"
    if not outs:
        pytest.skip("no differentiable output for this sample")
    rng = np.random.default_rng(zlib.crc32(f"{name}-{i}".encode()))
    total = ref_total = 0
    for o, r in zip(outs, refs):
        assert tuple(o.shape) == tuple(r.shape)
        cot = rng.uniform(-1, 1, size=tuple(o.shape)).astype(o._data.dtype)
        total = total + (o * tapegrad.from_numpy(cot)).sum()
        ref_total = ref_total + (r * torch.from_numpy(cot.copy())).sum()
    total.backward()
    ref_total.backward()
    assert len(leaves) == len(ref_leaves)
    for k, (x, rx) in enumerate(zip(leaves, ref_leaves)):
        what = f"{name} {sample}: grad of input {k}"
        if rx.grad is None:
            assert x.grad is None, f"{what}: torch gives None, tapegrad {x.grad!r}"
            continue
        assert x.grad is not None, f"{what}: tapegrad gives None, torch {rx.grad!r}"
        assert _dtype_name(x.grad.dtype) == _dtype_name(rx.grad.dtype), what
        # (force: torch hands back a ZeroTensor for sgn's gradient, which .numpy() refuses)
        _assert_close(np.asarray(x.grad._data), rx.grad.numpy(force=True), what)


# ---- (c) node names against torch ---------------------------------------------------------------
@pytest.mark.parametrize("name,i", GRAD)
def test_node_name_matches_torch(name, i, torch):
    op, sample, (out, _), (ref, _) = _both(name, i, np.float32, torch)
    ours = [type(o.grad_fn).__name__ for o in _flat(out) if isinstance(o, tapegrad.Tensor)]
    theirs = [type(r.grad_fn).__name__ for r in _flat(ref) if isinstance(r, torch.Tensor)]
    reason = expected_node_name_differences.get((name, sample.name),
                                                expected_node_name_differences.get((name, None)))
    if reason is not None:
        assert ours != theirs, f"stale entry in expected_node_name_differences for {name} " \
                               f"{sample.name}: names now match ({ours})"
        pytest.skip(f"deliberate difference: {reason}")
    assert ours == theirs


# ---- (d, e) gradcheck and gradgradcheck, float64, no torch --------------------------------------
def _gradcheck_setup(name, i):
    op = op_db_by_name[name]
    sample = _samples(name, np.float64)[i]
    leaves = []
    inp = make_tensors(sample.input, tapegrad, True, leaves)
    args = make_tensors(sample.args, tapegrad, True, leaves)
    kwargs = make_tensors(sample.kwargs, tapegrad, True, leaves)
    if not leaves:
        pytest.skip("no floating input to differentiate")
    fn = op.get_op()
    ids = [id(t) for t in leaves]

    def sub(obj, new):
        if isinstance(obj, tapegrad.Tensor) and id(obj) in ids:
            return new[ids.index(id(obj))]
        if isinstance(obj, list):
            return [sub(e, new) for e in obj]
        if isinstance(obj, tuple):
            return tuple(sub(e, new) for e in obj)
        if isinstance(obj, dict):
            return {k: sub(v, new) for k, v in obj.items()}
        return obj

    def func(*ts):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(sub(inp, ts), *sub(args, ts), **sub(kwargs, ts))

    return func, tuple(leaves)


@pytest.mark.parametrize("name,i", GRADCHECK)
def test_gradcheck(name, i):
    func, inputs = _gradcheck_setup(name, i)
    assert gradcheck(func, inputs)


@pytest.mark.parametrize("name,i", GRADGRADCHECK)
def test_gradgradcheck(name, i):
    func, inputs = _gradcheck_setup(name, i)
    tapegrad.manual_seed(zlib.crc32(f"{name}-{i}".encode()))
    assert gradgradcheck(func, inputs)


# ---- the database covers the public surface -----------------------------------------------------
def test_every_public_op_has_a_row():
    covered = set(op_db_by_name) | {a for o in op_db for a in o.aliases} | set(not_ops)
    missing = sorted(n for n in PUBLIC if n not in covered)
    missing += sorted(f"nn.functional.{n}" for n in FUNCTIONAL
                      if f"nn.functional.{n}" not in covered)
    missing += sorted(f"linalg.{n}" for n in LINALG if f"linalg.{n}" not in covered)
    assert not missing, f"public ops without an OpInfo row in tapegrad/testing/op_db.py: {missing}"


def test_aliases_are_the_same_function():
    for op in op_db:
        for a in op.aliases:
            assert PUBLIC[a] is op.get_op(), f"{a} is not the same function as {op.name}"


@pytest.mark.parametrize("name,alias", [(o.name, a) for o in op_db for a in o.aliases])
def test_alias_matches_torch_alias(name, alias, torch):
    sample = _samples(name, np.float64)[0]
    out, _ = _run(PUBLIC[alias], sample, tapegrad, False)
    ref, _ = _run(getattr(torch, alias), sample, torch, False)
    for a, b in zip(_flat(out), _flat(ref)):
        _assert_close(np.asarray(a._data), b.numpy(), f"{alias}")


METHOD_ROWS = [o.name for o in op_db if o.name in METHODS and o.method is None and o.attr is None]


@pytest.mark.parametrize("name", METHOD_ROWS)
def test_method_variant_matches_function(name):
    op = op_db_by_name[name]
    for sample in _samples(name, np.float64):
        if not isinstance(sample.input, np.ndarray):
            continue
        out, _ = _run(op.get_op(), sample, tapegrad, False)
        meth, _ = _run(lambda x, *a, **k: getattr(x, name)(*a, **k), sample, tapegrad, False)
        for a, b in zip(_flat(out), _flat(meth)):
            if isinstance(a, tapegrad.Tensor):
                np.testing.assert_array_equal(a._data, b._data)
            else:
                assert a == b
