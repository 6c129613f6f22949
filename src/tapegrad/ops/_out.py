"""``out=`` for the namespace functions whose torch counterparts take it, written once here:
:func:`tapegrad.ops._registry.op` wraps every op named in :data:`OUT_OPS`, so an op declares
nothing for it (its Tensor method takes no ``out``, as torch's).

torch's rules, followed for every such op (checked against torch in tests/test_out.py):

* ``out`` is a Tensor, or for an op with several results (``sort``, ``max(input, dim)``, ...) a
  tuple or list of one Tensor per result: TypeError otherwise. ``out=None`` is no out, but
  refused (TypeError) by the forms torch gives no out, as any out (``sum(x, out=None)``).
* Grad mode on and an input or ``out`` requiring grad: RuntimeError, as nothing is recorded for
  an ``out=`` call (write under ``tapegrad.no_grad()``); not for the ops in
  :data:`NO_GRAD_CHECK`, as torch.
* The result is computed as without ``out``, then written into ``out``: as it is when the shapes
  agree (its strides kept), else resized to the result's shape, with torch's UserWarning when
  it had elements: in the result's memory order, or C order for the ops in :data:`C_ORDER`
  (nonzero's: column-major, as torch's). Its version goes up (a graph that saved it refuses it).
* Dtype: the result must cast to out's without losing its kind (no float into an integer or
  bool ``out``: "result type Float can't be cast to the desired output type Long"); torch is
  stricter or looser for some ops, listed below (:data:`EXACT_DTYPE`, :data:`CAT_DTYPE`,
  :data:`ANY_DTYPE`, :data:`FLOAT_KERNEL`). Exactly the result's dtype for each out of a
  tuple (values and indices alike) and for an op given ``dtype=`` (``sum(x, 0, dtype=float64,
  out=float32_tensor)`` is refused, as torch).
* An ``out`` sharing only part of its memory with an input: RuntimeError (torch's "unsupported
  operation" error); the same tensor as an input is allowed, but for the ops that copy from
  their inputs while writing (:data:`NO_FULL_OVERLAP`: cat, index_select, ...), and not when a
  broadcasting op (:data:`BROADCASTING`) would resize it. An ``out`` whose elements share
  memory (an expanded tensor), or an inference tensor outside inference mode: RuntimeError, as
  an in-place write to it.

Returns ``out``, or for several results torch's ``<name>_out`` named tuple of the outs.
"""
from __future__ import annotations

import numpy as np

# Each op -> None (takes out= in every form) or the test of the forms that take it: torch's
# other overloads refuse out= (``sum(x)`` does, ``sum(x, 0)`` does not). Found by calling torch
# 2.13 with every op_db sample; tests/test_out.py checks the table against torch.


def _has_dim(args, kw):
    return len(args) > 1 or kw.get("dim") is not None


def _three_tensors(args, kw):
    from .._tensor import Tensor
    return len(args) == 3 and all(isinstance(a, Tensor) for a in args)


def _not_tuple(args, kw):
    return not kw.get("as_tuple", False)


def _stable_given(args, kw):
    return "stable" in kw


def _tensor_input(args, kw):
    from .._tensor import Tensor
    return isinstance(args[0] if args else kw.get("input"), Tensor)


def _not_unbiased_form(args, kw):
    # (std(x, unbiased: bool) is an overload of its own, without out=)
    return not (len(args) == 2 and type(args[1]) is bool)


OUT_OPS = dict.fromkeys((
    "abs", "absolute", "acos", "acosh", "addbmm", "addcdiv", "addcmul", "addmm", "all",
    "amax", "amin", "aminmax", "any", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2",
    "arctanh", "argmax", "argmin", "asin", "asinh", "atan", "atan2", "atanh", "baddbmm", "bmm",
    "cat", "ceil", "cholesky", "clamp", "clamp_max", "clamp_min", "clip", "column_stack", "concat",
    "concatenate", "copysign", "cos", "cosh", "cross", "cummax", "cummin", "cumprod", "cumsum",
    "deg2rad", "diag", "diff", "digamma", "div", "divide", "dot", "dstack", "eq", "erf", "erfc",
    "erfinv", "exp", "exp2", "expm1", "fix", "float_power", "floor", "floor_divide", "fmax",
    "fmin", "fmod", "frobenius_norm", "gather", "ge", "ger", "greater", "greater_equal", "gt",
    "hardshrink", "heaviside", "histc", "hstack", "hypot", "index_add", "index_copy",
    "index_select", "kron", "kthvalue", "le", "lerp", "less", "less_equal", "lgamma", "log",
    "log10", "log1p", "log2", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "logsumexp", "lt",
    "masked_select", "matmul", "matrix_power", "max", "maximum", "mean", "min", "minimum", "mm",
    "mode", "mul", "multiply", "mv", "mvlgamma", "nan_to_num", "nanmean", "nanquantile",
    "nansum", "ne", "neg", "negative", "not_equal", "nuclear_norm", "outer", "polygamma", "pow",
    "quantile", "rad2deg", "reciprocal", "remainder", "round", "row_stack", "rsqrt", "scatter",
    "scatter_add", "scatter_reduce", "searchsorted", "sgn", "sigmoid", "sign", "signbit", "sin",
    "sinc", "sinh", "slogdet", "softmax", "sort", "sqrt", "square", "stack", "sub",
    "subtract", "take", "take_along_dim", "tan", "tanh", "tensordot", "threshold", "topk",
    "tril", "triu", "true_divide", "trunc", "vstack", "xlogy", "add", "isneginf", "isposinf",
    # (these handle out= themselves)
    "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "inverse", "isin", "logspace", "norm", "cholesky_inverse", "cholesky_solve",
))
OUT_OPS.update(sum=_has_dim, prod=_has_dim, median=_has_dim, nanmedian=_has_dim,
               where=_three_tensors, nonzero=_not_tuple, argsort=_stable_given,
               bucketize=_tensor_input, std=_not_unbiased_form, var=_not_unbiased_form)

# How out's dtype is checked, op by op, as torch 2.13 checks it (found by calling it; the test
# compares every op). Not listed: the result must cast to out's dtype without losing its kind
# (RuntimeError). EXACT_DTYPE: out's dtype must be the result's (RuntimeError); CAT_DTYPE: the
# cast rule, refused with TypeError (torch.cat's "input types can't be cast"); ANY_DTYPE: any
# dtype (the op runs in out's: cumsum); FLOAT_KERNEL: a floating out only (NotImplementedError).
EXACT_DTYPE = frozenset((
    "abs", "absolute", "addbmm", "addmm", "amax", "amin", "aminmax", "argmax", "argmin",
    "argsort", "baddbmm", "bmm", "bucketize", "ceil",
    "clamp", "clamp_max", "clamp_min", "clip", "cross", "cummax", "cummin", "diag", "dot", "fix",
    "float_power", "floor", "frobenius_norm", "gather", "hardshrink", "heaviside", "histc",
    "index_add", "index_copy", "index_select", "kthvalue", "log_softmax", "logcumsumexp",
    "masked_select", "matmul", "mm", "mode", "mv", "nan_to_num", "nanquantile", "neg", "negative",
    "norm", "nuclear_norm", "quantile", "round", "scatter", "scatter_add", "scatter_reduce",
    "sgn", "sign", "slogdet", "softmax", "sort", "take", "take_along_dim", "tensordot", "topk",
    "tril", "triu", "trunc", "where", "nonzero", "searchsorted"))
CAT_DTYPE = frozenset(("cat", "column_stack", "concat", "concatenate", "dstack", "hstack",
                       "row_stack", "stack", "vstack"))
ANY_DTYPE = frozenset(("cumsum", "cumprod"))
FLOAT_KERNEL = frozenset(("nansum", "nanmean"))

# ops whose out= torch writes even when an input requires grad with grad mode on: those without
# a derivative (comparisons, indices, bit operations) and a few composites
NO_GRAD_CHECK = frozenset((
    "all", "any", "argmax", "argmin", "bucketize", "diag", "eq", "floor_divide", "ge", "greater",
    "greater_equal", "gt", "heaviside", "histc", "isneginf", "isposinf", "le", "less",
    "less_equal", "log_softmax", "logical_and", "logical_not", "logical_or", "logical_xor", "lt",
    "matrix_power", "nanquantile", "ne", "nonzero", "not_equal", "nuclear_norm", "quantile",
    "searchsorted", "signbit", "softmax", "tensordot"))

# ops whose resized out is C-contiguous whatever the result's memory order (torch resizes their
# out plainly, where an elementwise op's out follows its inputs' order as its result does)
C_ORDER = frozenset((
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
    "row_stack", "cumsum", "cumprod", "logcumsumexp", "cummax", "cummin", "softmax",
    "log_softmax", "cross", "matrix_power", "cholesky", "quantile", "nanquantile", "norm",
    "mvlgamma", "diag", "tril", "triu", "kron", "tensordot", "outer", "ger",
    "gather", "index_select", "take", "take_along_dim", "masked_select", "scatter",
    "scatter_add", "scatter_reduce", "index_add", "index_copy", "kthvalue", "mode", "median",
    "nanmedian", "topk"))

# ops that refuse an ``out`` which is one of their inputs (or the same memory), as torch's
# kernels that read the inputs while writing ``out`` (its assert_no_overlap)
NO_FULL_OVERLAP = frozenset((
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
    "row_stack", "index_select", "gather", "take_along_dim", "masked_select"))

# elementwise ops of several broadcast inputs (torch's TensorIterator ops): an ``out`` that is
# one of their inputs is written in place, so it cannot be resized to the broadcast shape
BROADCASTING = frozenset((
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
    "pow", "float_power", "atan2", "arctan2", "copysign", "fmax", "fmin", "fmod", "remainder",
    "hypot", "logaddexp", "logaddexp2", "xlogy", "eq", "ne", "not_equal", "lt", "less", "le",
    "less_equal", "gt", "greater", "ge", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "maximum", "minimum", "heaviside", "lerp", "addcdiv", "addcmul", "clamp",
    "clip", "clamp_min", "clamp_max", "where", "special_xlog1py", "special_zeta"))

# out= not passed: told from out=None, which torch's overloads without out= refuse too
# (sum(x, out=None) is a TypeError)
_ABSENT = object()


def with_out(fn, name, forms):
    """``fn`` with torch's ``out=`` keyword (the module docstring's rules); ``forms``: None,
    or the test of the argument forms that take it (TypeError for the others, as torch's
    overloads without out=). Without ``out`` it is ``fn`` plus one call."""
    absent = _ABSENT

    def call(*args, out=absent, **kwargs):
        if out is absent:
            return fn(*args, **kwargs)
        return call_out(fn, name, forms, args, kwargs, out)

    call.__name__ = call.__qualname__ = fn.__name__
    call.__module__ = fn.__module__
    call.__wrapped__ = fn
    call.__doc__ = (fn.__doc__ or "") + (
        "\n\n``out`` (keyword, optional): the result is written into that tensor and it is "
        "returned, with torch's out= rules (see :mod:`tapegrad.ops._out`).")
    return call


def _flat_tensors(obj, found):
    from .._tensor import Tensor
    if isinstance(obj, Tensor):
        found.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _flat_tensors(o, found)
    return found


def call_out(fn, name, forms, args, kwargs, out):
    """``fn(*args, **kwargs)`` written into ``out`` by the module docstring's rules (for an op
    whose ``out`` is a positional parameter, as torch.norm's, which calls this itself)."""
    from .._factories import _write_out
    from .._tensor import Tensor
    from ..autograd.grad_mode import _type_name, no_grad, state
    from .inplace import _check_inference_write, check_storage_writable
    if forms is not None and not forms(args, kwargs):
        if name == "nonzero" and (out is None or isinstance(out, Tensor)):
            # (torch's nonzero takes out= in its as_tuple form too: None as no out, a tensor
            # refused with RuntimeError)
            if out is None:
                return fn(*args, **kwargs)
            raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
        raise TypeError(f"{name}() received an invalid combination of arguments: this form of "
                        f"{name} takes no 'out' (torch's overload of it has none); call it "
                        f"without out= and copy the result")
    if out is None:     # (out=None given, to a form that takes out=: no out, as torch)
        return fn(*args, **kwargs)
    several = isinstance(out, (tuple, list))
    outs = tuple(out) if several else (out,)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be "
                            f"{'tuple of Tensors' if several else 'Tensor'}, not "
                            f"{_type_name(o if several else out)}")
    inputs = _flat_tensors((args, tuple(kwargs.values())), [])
    if state.grad_enabled and name not in NO_GRAD_CHECK and \
            any(t.requires_grad for t in (*inputs, *outs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad. (Call it "
                           f"under tapegrad.no_grad(), or without out= to record it.)")
    with no_grad():
        result = fn(*args, **kwargs)
    results = tuple(result) if isinstance(result, tuple) else (result,)
    if several != isinstance(result, tuple):
        if several:
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                            f"{_type_name(out)}")
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not Tensor")
    if len(outs) != len(results):
        raise TypeError(f"expected tuple of {len(results)} elements but got {len(outs)}")
    for o, r in zip(outs, results):
        # (each out before any is written: _write_out checks an inference out again, for the
        # factories)
        check_storage_writable(o, name)
        _check_inference_write(o, name)
        _check_dtype(name, r._data.dtype, o._data.dtype, several or name in EXACT_DTYPE or
                     kwargs.get("dtype") is not None)
        for t in inputs:
            _check_overlap(name, o, t, r._data.shape)
    for o, r in zip(outs, results):
        _write_out(o, r._data, name, warn_resize=True,
                   order="C" if name in C_ORDER else "F" if name == "nonzero" else "K")
    if not several:
        return out
    from .linalg_extra import _return_type
    return _return_type(type(result).__name__ + "_out", result._fields)(*outs)


def _check_dtype(name, rd, od, exact):
    """Refuse an out of dtype ``od`` for a result of dtype ``rd`` as torch's ``name`` does;
    ``exact``: the dtypes must agree (the op's rule, a tuple out's, or a ``dtype=`` given, which
    fixes the result's dtype for every op that takes it)."""
    from .. import _dtype
    if exact and rd != od:
        if name in FLOAT_KERNEL:
            # (nanmean is nansum over a count: torch names nansum)
            raise RuntimeError(f"nansum: provided dtype must match dtype of result. Got "
                               f"{_dtype.scalar_name(od)} and {_dtype.scalar_name(rd)}.")
        raise exact_dtype_error(rd, od, name)
    if name in ANY_DTYPE:
        if od.kind == "b":
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool' ({name}: "
                                      f"give a numeric out)")
        return
    if name in FLOAT_KERNEL and rd.kind == "f" and od.kind != "f":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype.scalar_name(od)}'"
                                  f" ({name}: give a floating out)")
    if not exact and _dtype.from_numpy_dtype(rd)._cat > _dtype.from_numpy_dtype(od)._cat:
        kind = TypeError if name in CAT_DTYPE else RuntimeError
        raise kind(f"result type {_dtype.scalar_name(rd)} can't be cast to the desired output "
                   f"type {_dtype.scalar_name(od)} ({name}: give an out of dtype "
                   f"{_dtype.scalar_name(rd)} or wider)")


def exact_dtype_error(rd, od, name=None):
    """torch's RuntimeError for an out of dtype ``od`` where its kernel writes ``rd`` only; with
    the op's ``name``, what to give instead."""
    from .._dtype import cpp_name, scalar_name
    hint = f" ({name}: give an out of the result's dtype, {scalar_name(rd)})" if name else ""
    return RuntimeError(f"Expected out tensor to have dtype {cpp_name(rd)}, but got "
                        f"{cpp_name(od)} instead{hint}")


def _check_overlap(name, out, t, shape):
    """RuntimeError, as torch, when ``out`` shares memory with the input ``t``: allowed when it is
    the same memory laid out alike (``exp(x, out=x)``), except for the ops in
    :data:`NO_FULL_OVERLAP`; refused too when ``out`` is ``t`` itself and a broadcasting op's
    result (of ``shape``) would resize it (torch's TensorIterator resizes no output that is one of
    its inputs)."""
    o, a = out._data, t._data
    if out is t and o.shape != shape and name in BROADCASTING:
        raise RuntimeError(f"output with shape {list(o.shape)} doesn't match the broadcast shape "
                           f"{list(shape)} ({name}: out is one of the inputs, which cannot be "
                           f"resized)")
    if o.size and a.size and np.may_share_memory(o, a) and (name in NO_FULL_OVERLAP or not (
            o.__array_interface__["data"][0] == a.__array_interface__["data"][0] and
            o.shape == a.shape and o.strides == a.strides)) and np.shares_memory(o, a):
        raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.")


def without_out(fn, name):
    """``fn`` (which takes ``out`` for another name, as linalg.det's) refusing ``out`` as torch's
    ``<name>`` does: TypeError."""
    def call(*args, **kwargs):
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out' (torch.{name} "
                            f"takes none; write the result with .copy_())")
        return fn(*args, **kwargs)

    call.__name__ = call.__qualname__ = fn.__name__
    call.__module__ = fn.__module__
    call.__wrapped__ = fn
    call.__doc__ = fn.__doc__
    return call
