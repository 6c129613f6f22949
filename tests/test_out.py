"""``out=`` on the namespace functions (tapegrad.ops._out), against torch, op by op: every op_db
row named as a namespace function, every sample. Whether the call takes ``out=`` at all, the
values, dtype, shape and strides written, the version bump, the returned object, and torch's
errors (requires grad, dtype, non-tensor out, partial overlap)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_compare import caught

import tapegrad
from tapegrad.ops import PUBLIC
from tapegrad.testing import make_tensors, op_db


def _namespace_rows():
    for op in op_db:
        if op.method or op.attr or op.op is not None or "." in op.name:
            continue
        if op.torch_op is not None and not isinstance(op.torch_op, str):
            continue
        for name in (op.name, *op.aliases):
            if name in PUBLIC:
                yield op, name


CASES = [pytest.param(op.name, name, i, id=f"{name}-{i}-{s.name}")
         for op, name in _namespace_rows()
         for i, s in enumerate(op.sample_inputs(np.float64))]
FIRST = [p for p in CASES if p.values[2] == 0]


def _call(lib, name, row, i, dtype=np.float64, requires_grad=False, **extra):
    op = next(o for o in op_db if o.name == row)
    s = op.sample_inputs(dtype)[i]
    args = make_tensors((s.input, *s.args), lib, requires_grad)
    kw = make_tensors(dict(s.kwargs), lib, requires_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(lib, name)(*args, **kw, **extra)


def _results(r):
    return tuple(r) if isinstance(r, tuple) else (r,)


def _fresh_outs(lib, ref):
    outs = tuple(lib.empty(0, dtype=getattr(lib, _dt(x))) for x in _results(ref))
    return outs if isinstance(ref, tuple) else outs[0]


def _functional(torch, row, name, i):
    try:
        ref = _call(torch, name, row, i)
    except Exception:
        pytest.skip("torch refuses the sample itself")
    if not all(isinstance(x, torch.Tensor) for x in _results(ref)):
        pytest.skip("not a tensor result")
    return ref


def _dt(t):
    return str(t.dtype).rsplit(".", 1)[-1]


@pytest.mark.parametrize("row,name,i", CASES)
def test_out_written_as_torch(row, name, i, torch):
    """Accepted in the same forms; the out is returned, holds the values, dtype, shape and strides
    torch writes, from an empty out (resized) and from one of the right shape (strides kept)."""
    ref = _functional(torch, row, name, i)
    t_out = _fresh_outs(torch, ref)
    t_err = caught(torch, lambda lib: _call(lib, name, row, i, out=t_out))
    g_ref = _call(tapegrad, name, row, i)
    g_out = _fresh_outs(tapegrad, g_ref)
    if t_err is not None:
        assert isinstance(t_err, TypeError), t_err
        with pytest.raises(TypeError, match="out"):
            _call(tapegrad, name, row, i, out=g_out)
        return
    versions = [o._version for o in _results(g_out)]
    got = _call(tapegrad, name, row, i, out=g_out)
    theirs = _call(torch, name, row, i, out=t_out)
    if isinstance(g_out, tuple):
        assert type(got).__name__ == type(theirs).__name__
        assert all(a is b for a, b in zip(got, g_out))
    else:
        assert got is g_out
    for o, t, v, g_f, t_f in zip(_results(g_out), _results(t_out), versions, _results(g_ref),
                                 _results(ref)):
        assert _dt(o) == _dt(t)
        assert tuple(o.shape) == tuple(t.shape)
        if o.numel() > 1 and o.stride() != t.stride():
            # (allowed only where the result itself has other strides than torch's, a difference
            # of the op's, not of out=, and out follows it as torch's out follows torch's result)
            assert g_f.stride() != t_f.stride() and t.stride() == t_f.stride() and \
                o.stride() == g_f.stride(), \
                f"resized out's strides {o.stride()}, torch {t.stride()}"
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6, atol=1e-9, equal_nan=True)
        assert o._version > v
        assert o.grad_fn is None and not o.requires_grad


@pytest.mark.parametrize("row,name,i", FIRST)
def test_out_of_right_shape_keeps_strides(row, name, i, torch):
    ref = _functional(torch, row, name, i)
    if caught(torch, lambda lib: _call(lib, name, row, i, out=_fresh_outs(lib, ref))):
        pytest.skip("this form takes no out=")
    results = _results(ref)
    if any(x.dim() < 2 for x in results):
        pytest.skip("needs a 2-d result to transpose")

    def outs(lib):
        made = tuple(lib.zeros(tuple(x.shape)[::-1], dtype=getattr(lib, _dt(x))).mT
                     for x in results)
        return made if isinstance(ref, tuple) else made[0]
    t_out, g_out = outs(torch), outs(tapegrad)
    _call(torch, name, row, i, out=t_out)
    _call(tapegrad, name, row, i, out=g_out)
    for o, t in zip(_results(g_out), _results(t_out)):
        assert o.stride() == t.stride()
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("row,name,i", FIRST)
def test_out_errors_as_torch(row, name, i, torch):
    """The same exception type as torch for: inputs requiring grad (grad mode on); out of
    another dtype (int64, and float32 for a float64 result); a non-tensor out; and no error
    under no_grad with inputs requiring grad."""
    ref = _functional(torch, row, name, i)
    if caught(torch, lambda lib: _call(lib, name, row, i, out=_fresh_outs(lib, ref))):
        pytest.skip("this form takes no out=")
    floating = [x for x in _results(ref) if x.dtype.is_floating_point]

    def rg(lib):
        return _call(lib, name, row, i, requires_grad=True, out=_fresh_outs(lib, ref))
    t_err = caught(torch, rg)
    g_err = caught(tapegrad, rg)
    assert type(g_err).__name__ == type(t_err).__name__, (g_err, t_err)
    for dtype in ("int64", "float32", "bool"):
        def other(lib, dtype=dtype):
            outs = tuple(lib.empty(0, dtype=getattr(lib, dtype if x.dtype.is_floating_point
                                                     else _dt(x))) for x in _results(ref))
            return _call(lib, name, row, i, out=outs if isinstance(ref, tuple) else outs[0])
        if floating:
            t_err, g_err = caught(torch, other), caught(tapegrad, other)
            assert type(g_err).__name__ == type(t_err).__name__, (dtype, g_err, t_err)
    t_err = caught(torch, lambda lib: _call(lib, name, row, i, out=np.zeros(3)))
    g_err = caught(tapegrad, lambda lib: _call(lib, name, row, i, out=np.zeros(3)))
    assert type(g_err).__name__ == type(t_err).__name__
    with tapegrad.no_grad():
        _call(tapegrad, name, row, i, requires_grad=True, out=_fresh_outs(tapegrad, ref))


def test_resize_warns_only_with_elements(torch):
    a = tapegrad.ones(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tapegrad.exp(a, out=tapegrad.empty(0))
    with pytest.warns(UserWarning, match="resized"):
        tapegrad.exp(a, out=tapegrad.empty(5))
    o = tapegrad.empty(5)
    with pytest.warns(UserWarning, match="resized"):
        tapegrad.exp(a.T, out=o)
    t = torch.empty(5)
    with pytest.warns(UserWarning):
        torch.exp(torch.ones(2, 3).T, out=t)
    assert o.stride() == t.stride() == (1, 3)


def test_out_same_as_input_and_partial_overlap(torch):
    for lib in (tapegrad, torch):
        x = lib.ones(3)
        assert lib.exp(x, out=x) is x
        np.testing.assert_allclose(x.numpy(), np.e, rtol=1e-6)
    for lib in (tapegrad, torch):
        x = lib.arange(6.0)
        with pytest.raises(RuntimeError, match="single memory location"):
            lib.exp(x[:4], out=x[2:])
        np.testing.assert_array_equal(x.numpy(), np.arange(6.0))


def test_out_saved_by_a_graph_is_refused_in_backward():
    a = tapegrad.ones(3, requires_grad=True)
    y = a.exp()
    with tapegrad.no_grad():
        tapegrad.sin(tapegrad.ones(3), out=y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_tuple_out_errors(torch):
    for lib in (tapegrad, torch):
        a = lib.ones(2, 3)
        with pytest.raises(TypeError, match="expected tuple of 2 elements but got 1"):
            lib.sort(a, out=(lib.empty(0),))
        with pytest.raises(TypeError, match="must be Tensor, not tuple"):
            lib.exp(a, out=(lib.empty(0),))
        with pytest.raises(RuntimeError, match="dtype long int, but got float"):
            lib.sort(a, out=(lib.empty(0), lib.empty(0)))
        r = lib.max(a, 0, out=[lib.empty(0), lib.empty(0, dtype=lib.int64)])
        assert type(r).__name__ == "max_out" and r.indices.dtype == lib.int64


def test_methods_take_no_out():
    a = tapegrad.ones(2)
    with pytest.raises(TypeError):
        a.exp(out=tapegrad.empty(0))
    assert tapegrad.exp(a).grad_fn is None


def test_table_names_are_namespace_functions():
    from tapegrad.ops._out import C_ORDER, EXACT_DTYPE, NO_GRAD_CHECK, OUT_OPS
    assert C_ORDER <= set(OUT_OPS) and NO_GRAD_CHECK <= set(OUT_OPS)
    assert not (set(OUT_OPS) - set(PUBLIC))
    assert EXACT_DTYPE <= set(OUT_OPS)


def test_expanded_out_is_refused_by_every_out_path(torch):
    """An out whose elements share memory is refused, as torch's internal-overlap check, by the
    generic out= and by linalg's own out= (one result and a tuple); NumPy's ValueError before."""
    cases = [lambda L: L.exp(L.ones(2, 2), out=L.empty(2, 1).expand(2, 2)),
             lambda L: L.linalg.inv(L.eye(2) * 2, out=L.empty(2, 1).expand(2, 2)),
             lambda L: L.linalg.solve(L.eye(2) * 2, L.eye(2), out=L.empty(2, 1).expand(2, 2)),
             lambda L: L.linalg.inv_ex(L.eye(2) * 2, out=(L.empty(2, 1).expand(2, 2),
                                                          L.empty((), dtype=L.int32)))]
    for case in cases:
        t_err, g_err = caught(torch, case), caught(tapegrad, case)
        assert type(t_err) is RuntimeError and type(g_err) is RuntimeError, (t_err, g_err)
        assert "single memory location" in str(g_err)
