"""Breaker's cases for ``out=`` (tapegrad.ops._out) and saved-tensor hooks, against torch 2.13:
each case runs one program on both libraries and compares the error (type, and torch's message
as the start of ours) or the result."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_compare import caught, same_error

import tapegrad


def _same_result(fn, torch):
    """fn(tapegrad) and fn(torch) return tensors of the same values, dtype, shape and strides."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = fn(tapegrad), fn(torch)
    ours = ours if isinstance(ours, (tuple, list)) else (ours,)
    theirs = theirs if isinstance(theirs, (tuple, list)) else (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride()
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


# ---- out= whose elements share memory (an expanded tensor) --------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib, o: lib.exp(lib.ones(3), out=o),
    lambda lib, o: lib.add(lib.ones(3), 1, out=o),
    lambda lib, o: lib.cat([lib.ones(1), lib.ones(2)], out=o),
], ids=["exp", "add", "cat"])
def test_expanded_out_refused(call, torch):
    # torch: "more than one element of the written-to tensor refers to a single memory location"
    # (tapegrad: NumPy's ValueError, read-only)
    same_error(lambda lib: call(lib, lib.zeros(1).expand(3)), torch, prefix=True)


# ---- out= an inference tensor, outside inference mode ------------------------------------------
def test_inference_out_refused_outside_inference_mode(torch):
    def fn(lib):
        with lib.inference_mode():
            o = lib.zeros(3)
        lib.exp(lib.ones(3), out=o)
    same_error(fn, torch, prefix=True)


@pytest.mark.parametrize("call", [
    lambda lib, o: lib.zeros(3, out=o), lambda lib, o: lib.arange(3, out=o),
    lambda lib, o: lib.randn(3, out=o), lambda lib, o: lib.linspace(0, 1, 3, out=o),
    lambda lib, o: lib.max(lib.ones(2, 3), 1, out=(o, lib.empty(2, dtype=lib.long))),
], ids=["zeros", "arange", "randn", "linspace", "max"])
def test_inference_out_of_factories_refused(call, torch):
    def fn(lib):
        with lib.inference_mode():
            o = lib.zeros(3)
        call(lib, o)
    same_error(fn, torch, prefix=True)


def test_inference_out_written_inside_inference_mode(torch):
    def fn(lib):
        with lib.inference_mode():
            o = lib.zeros(3)
            return lib.exp(lib.ones(3), out=o)
    _same_result(fn, torch)


# ---- dtype= fixes the result's dtype: out's must be it ----------------------------------------
_DTYPE_OPS = {
    "sum": lambda lib, **k: lib.sum(lib.ones(2, 3), 1, **k),
    "prod": lambda lib, **k: lib.prod(lib.ones(2, 3), 1, **k),
    "mean": lambda lib, **k: lib.mean(lib.ones(2, 3), 1, **k),
    "nansum": lambda lib, **k: lib.nansum(lib.ones(2, 3), 1, **k),
    "nanmean": lambda lib, **k: lib.nanmean(lib.ones(2, 3), 1, **k),
    "cumsum": lambda lib, **k: lib.cumsum(lib.ones(2), 0, **k),
    "cumprod": lambda lib, **k: lib.cumprod(lib.ones(2), 0, **k),
}


@pytest.mark.parametrize("od", ["float32", "int64", "float16"])
@pytest.mark.parametrize("name", list(_DTYPE_OPS))
def test_dtype_keyword_needs_out_of_that_dtype(name, od, torch):
    same_error(lambda lib: _DTYPE_OPS[name](lib, dtype=lib.float64,
                                            out=lib.empty(2, dtype=getattr(lib, od))),
               torch, prefix=True)


@pytest.mark.parametrize("name", list(_DTYPE_OPS))
def test_dtype_keyword_with_out_of_that_dtype(name, torch):
    _same_result(lambda lib: _DTYPE_OPS[name](lib, dtype=lib.float64,
                                              out=lib.empty(2, dtype=lib.float64)), torch)


# ---- a tuple out: each must be of its result's dtype ---------------------------------------------
@pytest.mark.parametrize("name", ["max", "min", "median", "nanmedian"])
def test_tuple_out_values_dtype_exact(name, torch):
    e = caught(torch, lambda lib: getattr(lib, name)(
        lib.ones(2, 3), 1, out=(lib.empty(2, dtype=lib.float64), lib.empty(2, dtype=lib.long))))
    assert isinstance(e, RuntimeError)
    with pytest.raises(RuntimeError):
        getattr(tapegrad, name)(tapegrad.ones(2, 3), 1, out=(
            tapegrad.empty(2, dtype=tapegrad.float64), tapegrad.empty(2, dtype=tapegrad.long)))


# ---- an out that is one of the inputs ------------------------------------------------------------
_BROADCAST_CALLS = {
    "add": lambda lib, x: lib.add(x, lib.ones(3, 4), out=x),
    "add_other": lambda lib, x: lib.add(lib.ones(3, 4), x, out=x),
    "mul": lambda lib, x: lib.mul(x, lib.ones(3, 4), out=x),
    "pow": lambda lib, x: lib.pow(x, lib.ones(3, 4), out=x),
    "atan2": lambda lib, x: lib.atan2(x, lib.ones(3, 4), out=x),
    "maximum": lambda lib, x: lib.maximum(x, lib.ones(3, 4), out=x),
    "where": lambda lib, x: lib.where(lib.ones(3, 4) > 0, x, lib.ones(3, 4), out=x),
    "clamp": lambda lib, x: lib.clamp(lib.ones(3, 4), x, out=x),
    "lerp": lambda lib, x: lib.lerp(x, lib.ones(3, 4), 0.5, out=x),
    "addcmul": lambda lib, x: lib.addcmul(x, lib.ones(3, 4), lib.ones(3, 4), out=x),
    "logical_and": lambda lib, x: lib.logical_and(x, lib.ones(3, 4), out=x),
    "xlog1py": lambda lib, x: lib.special.xlog1py(x, lib.ones(3, 4), out=x),
}


@pytest.mark.parametrize("name", list(_BROADCAST_CALLS))
def test_broadcast_out_that_is_an_input_is_not_resized(name, torch):
    # torch's TensorIterator resizes no output that is also an input
    same_error(lambda lib: _BROADCAST_CALLS[name](lib, lib.ones(3, 1)), torch, prefix=True)


def test_broadcast_out_that_is_an_input_of_its_shape(torch):
    def fn(lib):
        x = lib.ones(3, 4)
        return lib.add(x, lib.ones(4), out=x)
    _same_result(fn, torch)


_SAME_AS_INPUT = {
    "cat": lambda lib, x: lib.cat([x], out=x),
    "concat": lambda lib, x: lib.concat([x], out=x),
    "concatenate": lambda lib, x: lib.concatenate([x], out=x),
    "hstack": lambda lib, x: lib.hstack([x], out=x),
    "vstack": lambda lib, x: lib.vstack([x], out=x),
    "row_stack": lambda lib, x: lib.row_stack([x], out=x),
    "column_stack": lambda lib, x: lib.column_stack([x], out=x),
    "index_select": lambda lib, x: lib.index_select(x, 0, lib.tensor([0, 1]), out=x),
    "gather": lambda lib, x: lib.gather(x, 0, lib.zeros(2, 2, dtype=lib.long), out=x),
    "take_along_dim": lambda lib, x: lib.take_along_dim(x, lib.zeros(2, 2, dtype=lib.long), 0,
                                                         out=x),
    "masked_select": lambda lib, x: lib.masked_select(x, lib.ones(2, 2, dtype=lib.bool), out=x),
}


@pytest.mark.parametrize("name", list(_SAME_AS_INPUT))
def test_out_same_as_input_refused_by_copying_kernels(name, torch):
    same_error(lambda lib: _SAME_AS_INPUT[name](lib, lib.ones(2, 2)), torch)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.tril(x, out=x), lambda lib, x: lib.cumsum(x, 0, out=x),
    lambda lib, x: lib.softmax(x, 0, out=x), lambda lib, x: lib.where(x > 0, x, x, out=x),
    lambda lib, x: lib.exp(x, out=x)], ids=["tril", "cumsum", "softmax", "where", "exp"])
def test_out_same_as_input_allowed(call, torch):
    _same_result(lambda lib: call(lib, lib.ones(2, 2)), torch)


# ---- a failed out= call leaves out as it was ---------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib, o: lib.max(lib.ones(2, 3), 1, out=(o, lib.empty(0, dtype=lib.int32))),
    lambda lib, o: lib.sum(lib.ones(2, 3), 1, dtype=lib.float64, out=o),
    lambda lib, o: lib.add(o, lib.ones(2, 4), out=o),
    lambda lib, o: lib.cat([o], out=o),
], ids=["max", "sum_dtype", "add_resize", "cat"])
def test_failed_out_call_leaves_out_unchanged(call, torch):
    # (torch raises too, but resizes max's values before it checks the indices' dtype)
    assert caught(torch, lambda lib: call(lib, lib.full((2, 1), 7.0))) is not None
    o = tapegrad.full((2, 1), 7.0)
    v = o._version
    assert caught(tapegrad, lambda lib: call(lib, o)) is not None
    assert o.tolist() == [[7.0], [7.0]] and o._version == v


# ---- torch.special's functions take out= ----------------------------------------------------
_SPECIAL = {
    "entr": lambda lib, **k: lib.special.entr(lib.tensor([0.3, 0.6]), **k),
    "erfcx": lambda lib, **k: lib.special.erfcx(lib.tensor([0.3, 0.6]), **k),
    "log_ndtr": lambda lib, **k: lib.special.log_ndtr(lib.tensor([0.3, 0.6]), **k),
    "ndtr": lambda lib, **k: lib.special.ndtr(lib.tensor([0.3, 0.6]), **k),
    "ndtri": lambda lib, **k: lib.special.ndtri(lib.tensor([0.3, 0.6]), **k),
    "round": lambda lib, **k: lib.special.round(lib.tensor([0.3, 0.6]), **k),
    "xlog1py": lambda lib, **k: lib.special.xlog1py(lib.tensor([0.3, 0.6]), 2.0, **k),
    "xlog1py_number": lambda lib, **k: lib.special.xlog1py(2.0, lib.tensor([0.3, 0.6]), **k),
    "zeta": lambda lib, **k: lib.special.zeta(lib.tensor([2.3, 3.6]), 2.0, **k),
}


@pytest.mark.parametrize("name", list(_SPECIAL))
def test_special_out_written(name, torch):
    def fn(lib):
        o = lib.empty(5)
        r = _SPECIAL[name](lib, out=o)
        assert r is o and o._version > 0
        return o
    _same_result(fn, torch)


@pytest.mark.parametrize("name", list(_SPECIAL))
def test_special_out_errors(name, torch):
    for o in ("long", "requires_grad"):
        def fn(lib, o=o):
            out = lib.empty(2, dtype=lib.long) if o == "long" else lib.empty(2, requires_grad=True)
            _SPECIAL[name](lib, out=out)
        theirs = caught(torch, fn)
        assert theirs is not None
        assert type(caught(tapegrad, fn)) is type(theirs)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_special_softmax_takes_no_out(name, torch):
    for lib in (tapegrad, torch):
        with pytest.raises(TypeError):
            getattr(lib.special, name)(lib.ones(2), 0, out=lib.empty(2))


# ---- a custom Function's saved intermediate (neither input nor output) ----------------------
def _intermediate_fn(lib):
    class SavesIntermediate(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            z = a * 3
            ctx.save_for_backward(z)
            ctx.z = z
            return a * 3

        @staticmethod
        def backward(ctx, g):
            z, = ctx.saved_tensors
            return g * z
    return SavesIntermediate


def test_custom_function_intermediate_goes_through_hooks(torch):
    def fn(lib):
        log = []

        def pack(t):
            log.append(("pack", tuple(t.shape), t.requires_grad))
            return t

        def unpack(t):
            log.append(("unpack",))
            return t
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = _intermediate_fn(lib).apply(x)
        y.sum().backward()
        return log, x.grad.tolist()
    assert fn(tapegrad) == fn(torch)


def test_custom_function_intermediate_is_version_checked(torch):
    def fn(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = _intermediate_fn(lib).apply(x)
        y.grad_fn.z.add_(1)
        y.sum().backward()
    ours, theirs = caught(tapegrad, fn), caught(torch, fn)
    assert isinstance(theirs, RuntimeError) and "modified by an inplace" in str(theirs)
    assert type(ours) is RuntimeError and "modified by an inplace" in str(ours)


def test_custom_function_intermediate_unpacked_is_itself(torch):
    for lib in (tapegrad, torch):
        y = _intermediate_fn(lib).apply(lib.ones(2, requires_grad=True))
        assert y.grad_fn.saved_tensors[0] is y.grad_fn.z, lib.__name__


def test_custom_function_intermediate_freed_by_a_moving_pack_hook():
    import gc
    import weakref
    store = {}

    def pack(t):
        store[len(store)] = t.detach().numpy().copy()
        return len(store) - 1
    x = tapegrad.ones(3, requires_grad=True)
    with tapegrad.autograd.graph.saved_tensors_hooks(pack, lambda k: tapegrad.from_numpy(store[k])):
        y = _intermediate_fn(tapegrad).apply(x)
    ref = weakref.ref(y.grad_fn.z._data)
    del y.grad_fn.z
    gc.collect()
    assert ref() is None
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("extra", [3, 1.5, "s", np.ones(2)], ids=["int", "float", "str", "ndarray"])
def test_custom_function_saves_tensors_only(extra, torch):
    def fn(lib):
        class Saves(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a, None, extra)
                return a.clone()

            @staticmethod
            def backward(ctx, g):
                return g
        Saves.apply(lib.ones(2, requires_grad=True))
    same_error(fn, torch)


# ---- type names in the messages, as torch's (CPython's tp_name: numpy.ndarray) ----------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.exp(lib.ones(2), out=np.empty(2)),
    lambda lib: lib.zeros(2, out=np.empty(2)),
], ids=["exp", "zeros"])
def test_out_type_error_names_numpy_type(call, torch):
    same_error(call, torch, prefix=True)


def test_unpack_hook_type_error_names_numpy_type(torch):
    def fn(lib):
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t.detach().numpy()):
            y = x.exp()
        y.sum().backward()
    same_error(fn, torch)


# ---- out=None given explicitly ------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.sum(x, out=None), lambda lib, x: lib.prod(x, out=None),
    lambda lib, x: lib.argsort(x, out=None), lambda lib, x: lib.std(x, True, out=None),
    lambda lib, x: lib.median(x, out=None),
    lambda lib, x: lib.nonzero(x, as_tuple=True, out=lib.empty(0, dtype=lib.long)),
], ids=["sum", "prod", "argsort", "std_unbiased", "median", "nonzero_as_tuple_tensor"])
def test_out_none_refused_by_forms_without_out(call, torch):
    theirs = caught(torch, lambda lib: call(lib, lib.ones(2)))
    assert theirs is not None
    assert type(caught(tapegrad, lambda lib: call(lib, lib.ones(2)))) is type(theirs)


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.exp(x, out=None), lambda lib, x: lib.sum(x, 0, out=None),
    lambda lib, x: lib.sort(x, out=None), lambda lib, x: lib.median(x, 0, out=None),
    lambda lib, x: lib.nonzero(x, as_tuple=True, out=None),
    lambda lib, x: lib.std(x, 0, out=None),
], ids=["exp", "sum_dim", "sort", "median_dim", "nonzero_as_tuple", "std_dim"])
def test_out_none_is_no_out(call, torch):
    _same_result(lambda lib: call(lib, lib.tensor([2.0, 1.0])), torch)


# ---- nll_loss's total weight is unpacked in backward, as each saved tensor ------------------
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_nll_loss_backward_unpacks_total_weight(weighted, torch):
    def fn(lib):
        log = []

        def unpack(t):
            log.append(("unpack", tuple(t.shape), str(t.dtype).split(".")[-1]))
            return t
        x = lib.ones(3, 4, requires_grad=True)
        w = lib.tensor([1.0, 2.0, 3.0, 4.0]) if weighted else None
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2]), weight=w)
        y.backward()
        return sorted(log), x.grad.tolist()
    ours, theirs = fn(tapegrad), fn(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


# ---- an index result's out must be int64 (int32 for searchsorted's out_int32) -------------------
_INDEX_OPS = {
    "argmax": lambda lib, o: lib.argmax(lib.tensor([[3.0, 1, 2]]), 1, out=o),
    "argmax_all": lambda lib, o: lib.argmax(lib.tensor([[3.0, 1, 2]]), out=o),
    "argmin": lambda lib, o: lib.argmin(lib.tensor([[3.0, 1, 2]]), 1, out=o),
    "argsort": lambda lib, o: lib.argsort(lib.tensor([3.0, 1, 2]), stable=True, out=o),
    "nonzero": lambda lib, o: lib.nonzero(lib.tensor([3.0, 0, 2]), out=o),
    "searchsorted": lambda lib, o: lib.searchsorted(lib.tensor([1.0, 2]), lib.tensor([1.5]),
                                                    out=o),
    "bucketize": lambda lib, o: lib.bucketize(lib.tensor([1.5]), lib.tensor([1.0, 2]), out=o),
}


@pytest.mark.parametrize("dt", ["int32", "float32", "int16"])
@pytest.mark.parametrize("name", list(_INDEX_OPS))
def test_index_result_out_dtype_exact(name, dt, torch):
    def fn(lib):
        _INDEX_OPS[name](lib, lib.empty(0, dtype=getattr(lib, dt)))
    theirs = caught(torch, fn)
    assert isinstance(theirs, RuntimeError)
    ours = caught(tapegrad, fn)
    assert type(ours) is RuntimeError
    if name not in ("nonzero", "searchsorted", "bucketize"):
        assert str(ours).startswith(str(theirs))


def test_searchsorted_out_int32(torch):
    _same_result(lambda lib: lib.searchsorted(lib.tensor([1.0, 2]), lib.tensor([1.5]),
                                              out_int32=True, out=lib.empty(1, dtype=lib.int32)),
                 torch)


# ---- a resized out stays in its memory when it fits, as torch's resize_ keeps the storage --------
@pytest.mark.parametrize("call", [
    lambda lib, b: lib.exp(lib.zeros(3), out=b[:, 0]),
    lambda lib, b: lib.exp(lib.zeros(4), out=b[0]),
    lambda lib, b: lib.exp(lib.zeros(2), out=b[1]),
    lambda lib, b: lib.add(lib.zeros(2, 2), 1, out=b[0, :0]),
    lambda lib, b: lib.zeros(5, out=b[0, 1:]),
    lambda lib, b: lib.exp(lib.zeros(2, 2), out=b.view(6)),
    lambda lib, b: lib.cat([lib.ones(1), lib.ones(1)], out=b[1]),
], ids=["column", "row_grown", "row_shrunk", "empty_view", "factory", "whole", "cat"])
def test_resized_view_out_writes_its_base(call, torch):
    def fn(lib):
        b = lib.full((2, 3), 7.0)
        o = call(lib, b)
        return b, o
    _same_result(fn, torch)


def test_shrunk_out_shares_memory_with_earlier_views(torch):
    def fn(lib):
        o = lib.zeros(6)
        v = o[:4]
        lib.exp(lib.zeros(2), out=o)
        o.fill_(5)
        return o, v
    _same_result(fn, torch)
