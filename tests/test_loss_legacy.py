"""The functional losses against torch (skipped cleanly without it): the legacy ``size_average`` /
``reduce`` flags (torch's _Reduction.legacy_get_string: values, gradients and the deprecation
UserWarning, for every combination of the two flags), the deprecated reduction
'elementwise_mean', the reduction check of cross_entropy with class-probability targets, and the
dtypes the binary cross-entropy losses accept (integer and bool inputs, mixed targets).

Before these fixes nll_loss, cross_entropy and mse_loss ignored the legacy flags (no warning, and
the 'mean' result whatever they said), cross_entropy with a floating target accepted any
reduction string, and binary_cross_entropy(_with_logits) computed a loss of integer input (or
raised NumPy's TypeError for bool) where torch raises."""

import warnings

import numpy as np
import pytest

import tapegrad as tg

_FLAGS = (None, True, False)
_DEPRECATION = "size_average and reduce args will be deprecated, please use reduction='{}' instead."


def _expected_reduction(size_average, reduce, reduction):
    """What torch's _Reduction.legacy_get_string gives, written out independently."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _np(t):
    return t.detach().numpy()


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _assert_tensor_same(ours, theirs, rtol=1e-10, atol=1e-12):
    """Same shape, dtype and close values; ``None`` only for ``None``."""
    if theirs is None:
        assert ours is None
        return
    assert ours is not None
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert _dtype_name(ours) == _dtype_name(theirs), (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(_np(ours).astype(np.float64), _np(theirs).astype(np.float64),
                               rtol=rtol, atol=atol)


def _upstream(L, out):
    """A gradient for ``out`` with distinct entries, so that a wrong reduction shows up."""
    n = max(out.numel(), 1)
    g = np.linspace(0.5, 1.5, n).reshape(tuple(out.shape))
    return L.tensor(g, dtype=out.dtype)


# ---- the losses under test: each builds fresh leaves and returns (loss, leaves) ------------------
def _logits(L):
    return L.tensor([[0.3, -1.2, 2.0, 0.1], [1.5, 0.2, -0.7, 0.4], [-2.0, 0.9, 0.3, 1.1]],
                    dtype=L.float64, requires_grad=True)


def _nll(L, kw):
    x = _logits(L)
    w = L.tensor([1.0, 2.0, 0.5, 1.5], dtype=L.float64)
    t = L.tensor([2, 0, 3])
    return L.nn.functional.nll_loss(x.log_softmax(1), t, weight=w, **kw), [x]


def _nll_1d(L, kw):
    x = L.tensor([0.3, -1.2, 2.0, 0.1], dtype=L.float64, requires_grad=True)
    return L.nn.functional.nll_loss(x.log_softmax(0), L.tensor(2), **kw), [x]


def _nll_ignore(L, kw):
    x = _logits(L)
    t = L.tensor([2, 1, 3])
    return L.nn.functional.nll_loss(x.log_softmax(1), t, ignore_index=1, **kw), [x]


def _ce(L, kw):
    x = _logits(L)
    w = L.tensor([1.0, 2.0, 0.5, 1.5], dtype=L.float64)
    t = L.tensor([2, 0, 3])
    return L.nn.functional.cross_entropy(x, t, weight=w, ignore_index=0, **kw), [x]


def _ce_probs(L, kw):
    x = _logits(L)
    p = L.tensor([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]],
                 dtype=L.float64, requires_grad=True)
    return L.nn.functional.cross_entropy(x, p, **kw), [x, p]


def _ce_probs_1d(L, kw):
    x = L.tensor([0.3, -1.2, 2.0, 0.1], dtype=L.float64, requires_grad=True)
    p = L.tensor([0.1, 0.2, 0.3, 0.4], dtype=L.float64)
    return L.nn.functional.cross_entropy(x, p, label_smoothing=0.1, **kw), [x]


def _ce_smoothing(L, kw):
    x = _logits(L)
    w = L.tensor([1.0, 2.0, 0.5, 1.5], dtype=L.float64)
    t = L.tensor([2, 1, 3])
    return L.nn.functional.cross_entropy(x, t, weight=w, ignore_index=1, label_smoothing=0.2,
                                         **kw), [x]


def _mse(L, kw):
    a = L.tensor([[0.5, -1.0, 3.0], [2.0, 0.25, -0.5]], dtype=L.float64, requires_grad=True)
    b = L.tensor([[1.0, 0.0, 2.5], [1.0, 1.0, 0.5]], dtype=L.float64, requires_grad=True)
    return L.nn.functional.mse_loss(a, b, **kw), [a, b]


def _bce(L, kw):
    x = L.tensor([[0.2, 0.7, 0.5], [0.9, 0.1, 0.4]], dtype=L.float64, requires_grad=True)
    t = L.tensor([[0.0, 1.0, 0.5], [1.0, 0.0, 0.25]], dtype=L.float64, requires_grad=True)
    w = L.tensor([1.0, 2.0, 3.0], dtype=L.float64)
    return L.nn.functional.binary_cross_entropy(x, t, weight=w, **kw), [x, t]


def _bce_logits(L, kw):
    x = L.tensor([[0.3, -1.2, 2.0], [0.1, 4.0, -3.0]], dtype=L.float64, requires_grad=True)
    t = L.tensor([[0.0, 1.0, 0.5], [1.0, 0.0, 0.25]], dtype=L.float64, requires_grad=True)
    w = L.tensor([[2.0], [0.5]], dtype=L.float64)
    pw = L.tensor([1.0, 3.0, 0.5], dtype=L.float64)
    return L.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw,
                                                            **kw), [x, t]


_LOSSES = {
    "nll_loss": _nll,
    "nll_loss_1d": _nll_1d,
    "nll_loss_ignore_index": _nll_ignore,
    "cross_entropy": _ce,
    "cross_entropy_probs": _ce_probs,
    "cross_entropy_probs_1d": _ce_probs_1d,
    "cross_entropy_label_smoothing": _ce_smoothing,
    "mse_loss": _mse,
    "binary_cross_entropy": _bce,
    "binary_cross_entropy_with_logits": _bce_logits,
}


def _run(L, case, kw):
    """(loss, gradients of its leaves, warnings of the call) or the exception the call raises,
    with the warnings raised before it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, leaves = _LOSSES[case](L, kw)
        except Exception as e:   # noqa: BLE001 - the exception is the outcome being compared
            return e, None, caught
    (out * _upstream(L, out)).sum().backward()
    return out.detach(), [leaf.grad for leaf in leaves], caught


def _assert_warnings_same(ours, theirs):
    assert [(w.category, str(w.message)) for w in ours] == \
           [(w.category, str(w.message)) for w in theirs]
    for w in ours:   # ours point at the caller's line (torch's at torch/nn/functional.py)
        assert w.filename == __file__, (w.filename, str(w.message))


# ---- the legacy size_average / reduce flags -----------------------------------------------------
@pytest.mark.parametrize("case", sorted(_LOSSES))
@pytest.mark.parametrize("size_average", _FLAGS)
@pytest.mark.parametrize("reduce", _FLAGS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "bogus"])
def test_legacy_flags_match_torch(case, size_average, reduce, reduction, torch):
    """Values, gradients and warnings as torch for every combination of the flags. Either flag
    not None picks the reduction (a None flag counts as True) with one deprecation UserWarning
    and ``reduction`` is ignored, even an unknown one; with both None an unknown ``reduction``
    is a ValueError."""
    kw = {"size_average": size_average, "reduce": reduce, "reduction": reduction}
    ours, ours_grads, ours_warned = _run(tg, case, kw)
    theirs, theirs_grads, theirs_warned = _run(torch, case, kw)
    _assert_warnings_same(ours_warned, theirs_warned)
    expected = _expected_reduction(size_average, reduce, reduction)
    if expected == "bogus":
        assert isinstance(theirs, ValueError)
        assert isinstance(ours, ValueError), ours
        assert str(ours).startswith(str(theirs))
        return
    assert not isinstance(ours, BaseException), ours
    _assert_tensor_same(ours, theirs)
    assert len(ours_grads) == len(theirs_grads)
    for a, b in zip(ours_grads, theirs_grads):
        _assert_tensor_same(a, b)
    legacy = size_average is not None or reduce is not None
    assert len(ours_warned) == int(legacy)
    if legacy:
        assert str(ours_warned[0].message) == _DEPRECATION.format(expected)
        assert ours_warned[0].category is UserWarning


@pytest.mark.parametrize("case", sorted(_LOSSES))
@pytest.mark.parametrize("size_average", _FLAGS)
@pytest.mark.parametrize("reduce", _FLAGS)
def test_legacy_flags_give_the_named_reduction(case, size_average, reduce):
    """Without torch: the flags give the same loss as the reduction they stand for (a sum where
    size_average=False, elementwise where reduce=False), and warn exactly when one is given."""
    expected = _expected_reduction(size_average, reduce, "mean")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, _ = _LOSSES[case](tg, {"size_average": size_average, "reduce": reduce})
    plain, _ = _LOSSES[case](tg, {"reduction": expected})
    assert tuple(out.shape) == tuple(plain.shape)
    np.testing.assert_array_equal(_np(out), _np(plain))
    legacy = size_average is not None or reduce is not None
    assert [str(w.message) for w in caught] == ([_DEPRECATION.format(expected)] if legacy else [])


def test_mse_loss_legacy_flags_with_broadcasting(torch):
    """The size warning comes first, then the deprecation warning, as torch."""
    def run(L):
        a = L.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=L.float64, requires_grad=True)
        b = L.tensor([1.0, -0.5], dtype=L.float64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = L.nn.functional.mse_loss(a, b, size_average=False, reduction="bogus")
        out.backward()
        return out.detach(), a.grad, [(w.category, str(w.message).replace("tapegrad.", "torch."))
                                      for w in caught]
    ours, theirs = run(tg), run(torch)
    _assert_tensor_same(ours[0], theirs[0])
    _assert_tensor_same(ours[1], theirs[1])
    assert ours[2] == theirs[2]
    assert len(ours[2]) == 2 and ours[2][1][1] == _DEPRECATION.format("sum")


def test_cross_entropy_legacy_flag_warns_once():
    """cross_entropy resolves the flags itself and calls nll_loss with the reduction: one
    warning, not two."""
    x = tg.tensor([[0.3, -1.2, 2.0], [0.1, 0.5, -0.3]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = tg.nn.functional.cross_entropy(x, tg.tensor([0, 2]), reduce=False)
    assert tuple(out.shape) == (2,)
    assert [str(w.message) for w in caught] == [_DEPRECATION.format("none")]


# ---- the deprecated reduction 'elementwise_mean' ------------------------------------------------
@pytest.mark.parametrize("case", sorted(_LOSSES))
def test_elementwise_mean_is_mean_with_torchs_warning(case, torch):
    kw = {"reduction": "elementwise_mean"}
    ours, ours_grads, ours_warned = _run(tg, case, kw)
    theirs, theirs_grads, theirs_warned = _run(torch, case, kw)
    assert not isinstance(ours, BaseException), ours
    _assert_warnings_same(ours_warned, theirs_warned)
    assert [str(w.message) for w in ours_warned] == [
        "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead."]
    _assert_tensor_same(ours, theirs)
    for a, b in zip(ours_grads, theirs_grads):
        _assert_tensor_same(a, b)


# ---- cross_entropy: the reduction of class-probability targets ----------------------------------
_CE_TARGETS = {
    "probs": lambda L: (L.zeros(2, 3), L.full((2, 3), 1.0 / 3)),
    "probs_1d": lambda L: (L.zeros(3), L.full((3,), 1.0 / 3)),
    "probs_float64": lambda L: (L.zeros(2, 3, dtype=L.float64),
                                L.full((2, 3), 1.0 / 3, dtype=L.float64)),
    "indices": lambda L: (L.zeros(2, 3), L.tensor([0, 2])),
}


@pytest.mark.parametrize("target", sorted(_CE_TARGETS))
@pytest.mark.parametrize("bad", ["bad", "Mean", "SUM", "", None, "elementwise_sum"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_unknown_reduction_raises_like_torch(target, bad, label_smoothing, torch):
    """Was a bug for floating (class-probability) targets: any string other than 'none' and
    'sum' was read as 'mean'. torch raises ValueError; ours extends its message with the op and
    the valid values."""
    def call(L):
        x, t = _CE_TARGETS[target](L)
        return L.nn.functional.cross_entropy(x, t, reduction=bad, label_smoothing=label_smoothing)
    with pytest.raises(ValueError) as theirs:
        call(torch)
    with pytest.raises(ValueError) as ours:
        call(tg)
    message = str(ours.value)
    assert message.startswith(str(theirs.value))
    assert "cross_entropy" in message
    assert "'mean', 'sum' or 'none'" in message


@pytest.mark.parametrize("bad", ["bad", None])
def test_nll_loss_unknown_reduction_message_names_op(bad, torch):
    def call(L):
        return L.nn.functional.nll_loss(L.zeros(2, 3), L.tensor([0, 1]), reduction=bad)
    with pytest.raises(ValueError) as theirs:
        call(torch)
    with pytest.raises(ValueError) as ours:
        call(tg)
    assert str(ours.value).startswith(str(theirs.value))
    assert "nll_loss" in str(ours.value) and "'mean', 'sum' or 'none'" in str(ours.value)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probability_targets_valid_reductions_unchanged(reduction, torch):
    def run(L):
        x = _logits(L)
        p = L.tensor([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]],
                     dtype=L.float64)
        out = L.nn.functional.cross_entropy(x, p, reduction=reduction)
        (out * _upstream(L, out)).sum().backward()
        return out.detach(), x.grad
    ours, theirs = run(tg), run(torch)
    _assert_tensor_same(ours[0], theirs[0])
    _assert_tensor_same(ours[1], theirs[1])


# ---- binary cross-entropy: dtypes ---------------------------------------------------------------
_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _bce_call(L, fn, input_dtype, target_dtype, **kw):
    x = L.tensor([0.25, 0.5, 0.75, 1.0]).to(getattr(L, input_dtype))
    t = L.tensor([0.0, 1.0, 0.5, 1.0]).to(getattr(L, target_dtype))
    if x.is_floating_point():
        x.requires_grad_()
    out = getattr(L.nn.functional, fn)(x, t, **kw)
    out.backward()
    return out.detach(), x.grad


def _outcome(fn):
    try:
        return fn()
    except Exception as e:   # noqa: BLE001 - the exception is the outcome being compared
        return e


@pytest.mark.parametrize("fn", ["binary_cross_entropy", "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("input_dtype", _DTYPES)
@pytest.mark.parametrize("target_dtype", _DTYPES)
def test_bce_dtypes_match_torch(fn, input_dtype, target_dtype, torch):
    """Was a bug: an integer input gave an integer loss and a bool one NumPy's TypeError.
    torch: binary_cross_entropy needs the target in the input's dtype (RuntimeError 'Found
    dtype ... but expected ...') and a floating one (NotImplementedError); with logits, an
    integer or bool input is NotImplementedError (log_sigmoid), an integer or bool target
    RuntimeError, and the loss takes the target's dtype. Our messages start with torch's and
    name the op."""
    ours = _outcome(lambda: _bce_call(tg, fn, input_dtype, target_dtype))
    theirs = _outcome(lambda: _bce_call(torch, fn, input_dtype, target_dtype))
    if isinstance(theirs, BaseException):
        assert type(ours) is type(theirs), (ours, theirs)
        message = str(ours)
        assert fn in message
        if not message.startswith("Subtraction"):   # torch's bool message, shortened
            assert message.startswith(str(theirs)), (message, str(theirs))
        else:
            assert str(theirs).startswith(message.split(":")[0].rstrip("."))
        return
    assert not isinstance(ours, BaseException), ours
    tol = 2e-3 if "float16" in (input_dtype, target_dtype) else 1e-6
    _assert_tensor_same(ours[0], theirs[0], rtol=tol, atol=tol)
    _assert_tensor_same(ours[1], theirs[1], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_bce_integer_input_errors_name_op_and_dtype(dtype):
    """Without torch: the exception types, and messages that name the op, the dtype and the
    fix."""
    F = tg.nn.functional
    x = tg.ones(3, dtype=getattr(tg, dtype))
    torch_name = {"int64": "Long", "int32": "Int", "uint8": "Byte", "bool": "Bool"}[dtype]
    with pytest.raises(NotImplementedError) as e:
        F.binary_cross_entropy(x, x)
    assert f"\"binary_cross_entropy\" not implemented for '{torch_name}'" in str(e.value)
    assert ".float()" in str(e.value)
    with pytest.raises(RuntimeError) as e:
        F.binary_cross_entropy(x, tg.ones(3))
    assert str(e.value).startswith(f"Found dtype Float but expected {torch_name}")
    assert "binary_cross_entropy" in str(e.value) and "target.to(input.dtype)" in str(e.value)
    for t in (x, tg.ones(3)):
        with pytest.raises(NotImplementedError) as e:
            F.binary_cross_entropy_with_logits(x, t)
        assert "binary_cross_entropy_with_logits" in str(e.value)
        assert f"not implemented for '{torch_name}'" in str(e.value)
        assert ".float()" in str(e.value)


def test_bce_shape_error_comes_before_dtype_error(torch):
    """torch checks the target's size (ValueError) before the dtypes."""
    for L in (torch, tg):
        x, t = L.ones(3, dtype=L.int64), L.ones(2)
        with pytest.raises(ValueError):
            L.nn.functional.binary_cross_entropy(x, t)
        with pytest.raises(ValueError):
            L.nn.functional.binary_cross_entropy_with_logits(x, t)


@pytest.mark.parametrize("fn,key", [("binary_cross_entropy", "weight"),
                                    ("binary_cross_entropy_with_logits", "weight"),
                                    ("binary_cross_entropy_with_logits", "pos_weight")])
@pytest.mark.parametrize("weight_dtype", _DTYPES)
def test_bce_weight_dtypes_match_torch(fn, key, weight_dtype, torch):
    """A weight of any dtype multiplies the loss, which keeps the input's dtype (BCE) or the
    target's (with logits); a bool pos_weight is a RuntimeError, as torch."""
    def run(L):
        x = L.tensor([0.25, 0.5, 0.75], requires_grad=True)
        t = L.tensor([0.0, 1.0, 0.5])
        w = L.tensor([1.0, 2.0, 0.0]).to(getattr(L, weight_dtype))
        out = getattr(L.nn.functional, fn)(x, t, **{key: w})
        out.backward()
        return out.detach(), x.grad
    ours, theirs = _outcome(lambda: run(tg)), _outcome(lambda: run(torch))
    if isinstance(theirs, BaseException):
        assert type(ours) is type(theirs), (ours, theirs)
        assert fn in str(ours) and key in str(ours)
        return
    assert not isinstance(ours, BaseException), ours
    tol = 2e-3 if weight_dtype == "float16" else 1e-6
    _assert_tensor_same(ours[0], theirs[0], rtol=tol, atol=tol)
    _assert_tensor_same(ours[1], theirs[1], rtol=tol, atol=tol)
