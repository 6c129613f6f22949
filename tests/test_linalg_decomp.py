"""The decompositions (ops/linalg_decomp.py) beyond the op database: errors (type and message
against torch, in torch's check order), torch's refusals in backward (qr mode 'r', 'complete'
with m > n), named tuples, strides and node names of every output (empty shapes included),
torch.svd's zero-filled U / V, gradients dropped on full_matrices' extra columns, NaN gradients
at repeated singular values / eigenvalues as torch's, eigh's one-triangle read and its symmetric
gradient, and the sign-independent gradients the task names, in float32 and float64.

Singular vectors, eigenvectors and Q's columns may differ from torch's in sign: only quantities
that do not depend on the signs are compared with torch."""
import warnings

import numpy as np
import pytest
from torch_compare import same_error

import tapegrad
import tapegrad.linalg
from tapegrad.ops import linalg_decomp, linalg_extra


def _arr(t):
    return np.asarray(t._data) if isinstance(t, tapegrad.Tensor) else t.detach().numpy()


def _t(lib, values, dtype="float32"):
    return lib.from_numpy(np.array(values, dtype=dtype))


def _eye(lib, n, dtype="float32"):
    return lib.from_numpy(np.eye(n, dtype=dtype))


LONG = [[1, 2], [3, 4]]
NAN_BATCH = np.stack([np.eye(2), [[np.nan, 1.0], [1.0, 1.0]], np.eye(2)])
ERRORS = {
    # rank, floating dtype (or the kernel's NotImplementedError), in torch's order
    "svd_long": lambda m: m.linalg.svd(_t(m, LONG, "int64")),
    "svd_bool": lambda m: m.linalg.svd(_t(m, [[True]], "bool")),
    "svd_half": lambda m: m.linalg.svd(_eye(m, 2, "float16")),
    "svd_1d": lambda m: m.linalg.svd(_t(m, [1.0, 2.0])),
    "svd_0d_long": lambda m: m.linalg.svd(_t(m, 1, "int64")),
    "svd_driver": lambda m: m.linalg.svd(_t(m, np.ones((3, 2))), driver="gesvd"),
    "svd_driver_long": lambda m: m.linalg.svd(_t(m, LONG, "int64"), driver="gesvd"),
    "svd_driver_half": lambda m: m.linalg.svd(_eye(m, 2, "float16"), driver="gesvd"),
    "svd_driver_1d": lambda m: m.linalg.svd(_t(m, [1.0]), driver="gesvd"),
    "svd_driver_not_str": lambda m: m.linalg.svd(_eye(m, 2), driver=1),
    "svd_full_matrices_int": lambda m: m.linalg.svd(_eye(m, 2), full_matrices=1),
    "svd_full_matrices_str": lambda m: m.linalg.svd(_eye(m, 2), full_matrices="no"),
    "svd_nan": lambda m: m.linalg.svd(_t(m, [[np.nan, 1.0], [1.0, 1.0]])),
    "svd_nan_batch": lambda m: m.linalg.svd(m.from_numpy(NAN_BATCH.copy())),
    "svdvals_long": lambda m: m.linalg.svdvals(_t(m, LONG, "int64")),
    "svdvals_half": lambda m: m.linalg.svdvals(_eye(m, 2, "float16")),
    "svdvals_1d": lambda m: m.linalg.svdvals(_t(m, [1.0, 2.0])),
    "svdvals_driver": lambda m: m.linalg.svdvals(_eye(m, 2), driver="gesvd"),
    "svdvals_driver_not_str": lambda m: m.linalg.svdvals(_eye(m, 2), driver=1),
    "svdvals_nan_batch": lambda m: m.linalg.svdvals(m.from_numpy(NAN_BATCH.copy())),
    "svdvals_nan_grad": lambda m: m.linalg.svdvals(
        m.from_numpy(NAN_BATCH.copy()).requires_grad_()),
    "torch_svd_long": lambda m: m.svd(_t(m, LONG, "int64")),
    "torch_svd_half": lambda m: m.svd(_eye(m, 2, "float16")),
    "torch_svd_1d": lambda m: m.svd(_t(m, [1.0, 2.0])),
    "torch_svd_0d_long": lambda m: m.svd(_t(m, 1, "int64")),
    "torch_svd_some_int": lambda m: m.svd(_eye(m, 2), some=1),
    "torch_svd_compute_uv_str": lambda m: m.svd(_eye(m, 2), compute_uv="no"),
    "torch_svd_compute_uv_none": lambda m: m.svd(_eye(m, 2), compute_uv=None),
    "svd_full_matrices_none": lambda m: m.linalg.svd(_eye(m, 2), full_matrices=None),
    "torch_svd_nan": lambda m: m.svd(_t(m, [[np.nan, 1.0], [1.0, 1.0]])),
    "tensor_svd_long": lambda m: _t(m, LONG, "int64").svd(),
    "tensor_svd_1d": lambda m: _t(m, [1.0]).svd(),
    "eigh_long": lambda m: m.linalg.eigh(_t(m, LONG, "int64")),
    "eigh_int32": lambda m: m.linalg.eigh(_t(m, LONG, "int32")),
    "eigh_uint8": lambda m: m.linalg.eigh(_t(m, LONG, "uint8")),
    "eigh_bool": lambda m: m.linalg.eigh(_t(m, [[True]], "bool")),
    "eigh_half": lambda m: m.linalg.eigh(_eye(m, 2, "float16")),
    "eigh_1d": lambda m: m.linalg.eigh(_t(m, [1.0, 2.0])),
    "eigh_1d_long": lambda m: m.linalg.eigh(_t(m, [1, 2], "int64")),
    "eigh_nonsquare": lambda m: m.linalg.eigh(_t(m, np.ones((2, 3, 2)))),
    "eigh_nonsquare_long": lambda m: m.linalg.eigh(_t(m, np.ones((3, 2)), "int64")),
    "eigh_uplo": lambda m: m.linalg.eigh(_eye(m, 2), UPLO="X"),
    "eigh_uplo_two_letters": lambda m: m.linalg.eigh(_eye(m, 2), UPLO="UL"),
    "eigh_uplo_long": lambda m: m.linalg.eigh(_t(m, LONG, "int64"), UPLO="X"),
    "eigh_uplo_1d": lambda m: m.linalg.eigh(_t(m, [1.0]), UPLO="X"),
    "eigh_uplo_nonsquare": lambda m: m.linalg.eigh(_t(m, np.ones((3, 2))), UPLO="X"),
    "eigh_uplo_not_str": lambda m: m.linalg.eigh(_eye(m, 2), UPLO=1),
    "eigvalsh_long": lambda m: m.linalg.eigvalsh(_t(m, LONG, "int64")),
    "eigvalsh_nonsquare": lambda m: m.linalg.eigvalsh(_t(m, np.ones((3, 2)))),
    "eigvalsh_uplo": lambda m: m.linalg.eigvalsh(_eye(m, 2), UPLO="X"),
    "eigvalsh_uplo_not_str": lambda m: m.linalg.eigvalsh(_eye(m, 2), UPLO=1),
    "qr_long": lambda m: m.linalg.qr(_t(m, LONG, "int64")),
    "qr_bool": lambda m: m.linalg.qr(_t(m, [[True]], "bool")),
    "qr_half": lambda m: m.linalg.qr(_eye(m, 2, "float16")),
    "qr_1d": lambda m: m.linalg.qr(_t(m, [1.0, 2.0])),
    "qr_mode": lambda m: m.linalg.qr(_eye(m, 2), mode="full"),
    "qr_mode_long": lambda m: m.linalg.qr(_t(m, LONG, "int64"), mode="full"),
    "qr_mode_half": lambda m: m.linalg.qr(_eye(m, 2, "float16"), mode="full"),
    "qr_mode_1d": lambda m: m.linalg.qr(_t(m, [1.0]), mode="full"),
    "qr_mode_not_str": lambda m: m.linalg.qr(_eye(m, 2), mode=1),
    "torch_qr_long": lambda m: m.qr(_t(m, LONG, "int64")),
    "torch_qr_half": lambda m: m.qr(_eye(m, 2, "float16")),
    "torch_qr_some_int": lambda m: m.qr(_eye(m, 2), some=0),
    "tensor_qr_1d": lambda m: _t(m, [1.0]).qr(),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case, torch):
    same_error(ERRORS[case], torch)


# ---- torch's refusals in backward ---------------------------------------------------------------
def _qr_backward(lib, shape, mode, output):
    x = lib.from_numpy(np.random.default_rng(0).uniform(-1, 1, shape)).requires_grad_()
    out = lib.linalg.qr(x, mode=mode)[output]
    (out * 2).sum().backward()


BACKWARD_ERRORS = {
    "mode_r_R": lambda m: _qr_backward(m, (3, 3), "r", 1),
    "mode_r_Q": lambda m: _qr_backward(m, (3, 2), "r", 0),
    "complete_tall_R": lambda m: _qr_backward(m, (4, 3), "complete", 1),
    "complete_tall_Q": lambda m: _qr_backward(m, (2, 4, 3), "complete", 0),
    "complete_no_columns": lambda m: _qr_backward(m, (4, 0), "complete", 0),
    "legacy_full_tall": lambda m: m.qr(m.ones(4, 3, dtype=m.float64, requires_grad=True),
                                       some=False)[1].sum().backward(),
}


@pytest.mark.parametrize("case", sorted(BACKWARD_ERRORS))
def test_qr_backward_refusals_match_torch(case, torch):
    same_error(BACKWARD_ERRORS[case], torch)


def test_qr_refusal_is_raised_in_backward_and_leaves_grad_alone():
    """The forward records the node (Q of mode 'r' is an empty tensor with it); the backward
    raises and writes no .grad."""
    x = tapegrad.ones(3, 3, requires_grad=True)
    Q, R = tapegrad.linalg.qr(x, mode="r")
    assert tuple(Q.shape) == (0,) and type(Q.grad_fn).__name__ == "LinalgQrBackward0"
    with pytest.raises(RuntimeError, match="mode='r'"):
        R.sum().backward()
    assert x.grad is None
    Q, R = tapegrad.linalg.qr(tapegrad.ones(2, 3, requires_grad=True), mode="complete")
    R.sum().backward()   # complete with m <= n is the reduced factorization: differentiable


# ---- named tuples, strides, nodes ---------------------------------------------------------------
TUPLES = {
    "linalg_svd": lambda m, x: m.linalg.svd(x),
    "svd": lambda m, x: m.svd(x),
    "linalg_eigh": lambda m, x: m.linalg.eigh(x),
    "linalg_qr": lambda m, x: m.linalg.qr(x),
    "qr": lambda m, x: m.qr(x),
}


@pytest.mark.parametrize("case", sorted(TUPLES))
def test_named_tuples_match_torch(case, torch):
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = TUPLES[case](tapegrad, tapegrad.from_numpy(a.copy()))
        theirs = TUPLES[case](torch, torch.from_numpy(a.copy()))
    assert type(ours).__name__ == type(theirs).__name__ == case
    assert ours._fields == theirs.__match_args__
    first = repr(ours).split("\n")[:2]
    assert first[0] == f"tapegrad.return_types.{case}("
    assert first[1].startswith(f"{ours._fields[0]}=tensor(")


def _layout(out):
    return [(tuple(o.shape), o.stride(), o.is_contiguous(), o.requires_grad,
             type(o.grad_fn).__name__ if o.grad_fn is not None else None) for o in out]


SHAPES = [(3, 3), (4, 2), (2, 4), (1, 1), (2, 4, 3), (2, 1, 3, 2), (0, 3), (3, 0), (0, 0),
          (2, 0, 3), (0, 2, 3), (2, 0, 0)]
# case -> (function path, positional arguments after the input)
LAYOUT_CASES = {
    **{f"linalg.svd_full_{fm}": ("linalg.svd", (fm,)) for fm in (True, False)},
    "linalg.svdvals": ("linalg.svdvals", ()),
    **{f"svd_some_{s}_uv_{c}": ("svd", (s, c)) for s in (True, False) for c in (True, False)},
    **{f"linalg.qr_{mode}": ("linalg.qr", (mode,)) for mode in ("reduced", "complete", "r")},
    **{f"qr_some_{s}": ("qr", (s,)) for s in (True, False)},
}


def _run_case(lib, case, x):
    path, args = LAYOUT_CASES[case]
    fn = lib
    for part in path.split("."):
        fn = getattr(fn, part)
    out = fn(x, *args)
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("case", sorted(LAYOUT_CASES))
def test_layout_and_nodes_match_torch(case, grad, torch):
    """Shapes, strides (column-major LAPACK results), contiguity, requires_grad and node names
    of every output, for every shape (empty ones included)."""
    rng = np.random.default_rng(1)
    for shape in SHAPES:
        a = rng.uniform(-1, 1, shape)
        res = []
        for m in (tapegrad, torch):
            x = m.from_numpy(a.copy()).requires_grad_(grad)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res.append(_layout(_run_case(m, case, x)))
        assert res[0] == res[1], shape


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("fn", ["eigh", "eigvalsh"])
def test_eigh_layout_and_nodes_match_torch(fn, grad, torch):
    rng = np.random.default_rng(2)
    for shape in [(3, 3), (1, 1), (2, 4, 4), (0, 0), (2, 0, 0), (0, 3, 3)]:
        a = rng.uniform(-1, 1, shape)
        res = []
        for m in (tapegrad, torch):
            out = getattr(m.linalg, fn)(m.from_numpy(a.copy()).requires_grad_(grad))
            res.append(_layout(out if isinstance(out, tuple) else (out,)))
        assert res[0] == res[1], shape


def test_legacy_svd_v_is_a_transpose_of_the_svd_node(torch):
    """torch.svd's V is Vh^T: a TransposeBackward0 on output 2 of the LinalgSvdBackward0 that
    U and S come from."""
    graphs = []
    for m in (tapegrad, torch):
        U, S, V = m.svd(m.ones(4, 3, requires_grad=True))
        (node, nr), = V.grad_fn.next_functions
        assert node is U.grad_fn and node is S.grad_fn
        graphs.append((type(V.grad_fn).__name__, type(node).__name__, nr))
    assert graphs[0] == graphs[1] == ("TransposeBackward0", "LinalgSvdBackward0", 2)


def test_svdvals_and_matrix_norm_share_the_one_svd_function():
    """One formula: linalg_extra's singular-value norms run the Svd of linalg_decomp."""
    assert not hasattr(linalg_extra, "Svd")
    x = tapegrad.randn(3, 4, requires_grad=True)
    for out in (tapegrad.linalg.svdvals(x), tapegrad.linalg.svd(x).S):
        assert type(out.grad_fn) is linalg_decomp.Svd._backward_cls
    n = tapegrad.linalg.matrix_norm(x, "nuc")
    assert type(n.grad_fn.next_functions[0][0]) is linalg_decomp.Svd._backward_cls


def test_public_names_as_torch(torch):
    for name in ("svd", "svdvals", "eigh", "eigvalsh", "qr"):
        assert hasattr(tapegrad.linalg, name) and hasattr(torch.linalg, name)
    for name in ("svd", "qr", "svdvals", "eigh", "eigvalsh"):
        assert hasattr(tapegrad, name) == hasattr(torch, name), name
        assert hasattr(tapegrad.Tensor, name) == hasattr(torch.Tensor, name), name
    assert tapegrad.Tensor.svd is tapegrad.svd and tapegrad.Tensor.qr is tapegrad.qr
    assert tapegrad.linalg.svd is not tapegrad.svd and tapegrad.linalg.qr is not tapegrad.qr
    for name in ("eig", "eigvals"):   # complex results: tapegrad has no complex dtype
        assert not hasattr(tapegrad.linalg, name)


def test_torch_qr_warns_deprecation():
    with pytest.warns(UserWarning, match=r"torch.qr is deprecated in favor of torch.linalg.qr"):
        tapegrad.qr(tapegrad.eye(2))


# ---- values -------------------------------------------------------------------------------------
def test_svd_without_uv_gives_zeros_as_torch(torch):
    a = np.random.default_rng(3).uniform(-1, 1, (2, 4, 3))
    for some in (True, False):
        ours = tapegrad.svd(tapegrad.from_numpy(a.copy()).requires_grad_(), some, False)
        theirs = torch.svd(torch.from_numpy(a.copy()).requires_grad_(), some, False)
        for k in (0, 2):
            assert ours[k].grad_fn is None and not ours[k].requires_grad
            np.testing.assert_array_equal(_arr(ours[k]), _arr(theirs[k]))
        np.testing.assert_allclose(_arr(ours.S), _arr(theirs.S), rtol=1e-12)


@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (2, 0, 3), (0, 0)])
def test_empty_factors_are_identities_as_torch(shape, torch):
    for f in (lambda m, x: m.linalg.svd(x), lambda m, x: m.svd(x, some=False),
              lambda m, x: m.linalg.qr(x, "complete"), lambda m, x: m.linalg.qr(x)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = f(tapegrad, tapegrad.zeros(*shape)), f(torch, torch.zeros(*shape))
        for o, t in zip(ours, theirs):
            assert tuple(o.shape) == tuple(t.shape)
            np.testing.assert_array_equal(_arr(o), _arr(t))


def test_svd_of_infinite_input_is_nan_as_torch(torch):
    """LAPACK only refuses NaN; an infinite entry gives NaN factors, in both."""
    a = np.full((2, 2), np.inf)
    ours = tapegrad.linalg.svd(tapegrad.from_numpy(a.copy()))
    theirs = torch.linalg.svd(torch.from_numpy(a.copy()))
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(np.isnan(_arr(o)), np.isnan(_arr(t)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_without_grad_match_those_with_grad(dtype):
    """svdvals / eigvalsh without grad compute the values alone (no node)."""
    a = np.random.default_rng(4).uniform(-1, 1, (2, 3, 3)).astype(dtype)
    for f in (tapegrad.linalg.svdvals, tapegrad.linalg.eigvalsh):
        plain = f(tapegrad.from_numpy(a.copy()))
        recorded = f(tapegrad.from_numpy(a.copy()).requires_grad_())
        assert plain.grad_fn is None and recorded.grad_fn is not None
        assert plain.dtype == recorded.dtype == getattr(tapegrad, dtype)
        np.testing.assert_allclose(_arr(plain), _arr(recorded), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("uplo", ["L", "U", "l", "u"])
def test_eigh_reads_one_triangle_and_its_gradient_is_symmetric(uplo, torch):
    rng = np.random.default_rng(5)
    s = rng.uniform(-1, 1, (3, 3))
    s = s + s.T
    noise = np.triu(rng.uniform(-5, 5, (3, 3)), 1)
    a = s + (noise if uplo in "Ll" else noise.T)
    c = rng.uniform(-1, 1, (3,))
    w = rng.uniform(-1, 1, (3, 3))
    res = []
    for m in (tapegrad, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        L, V = m.linalg.eigh(x, UPLO=uplo)
        ((L * m.from_numpy(c.copy())).sum() + (V * V * m.from_numpy(w.copy())).sum()).backward()
        res.append((_arr(L), _arr(x.grad)))
    np.testing.assert_allclose(res[0][0], np.linalg.eigvalsh(s), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(res[0][1], res[0][1].T, rtol=1e-12, atol=1e-12)
    assert np.abs(np.triu(res[0][1], 1)).max() > 1e-3   # the unread triangle gets a gradient


# ---- gradients: full_matrices' extra columns, repeated values -----------------------------------
def _grad(lib, a, fn, loss):
    x = lib.from_numpy(a.copy()).requires_grad_()
    g, = lib.autograd.grad(loss(lib, fn(lib, x)), x)
    return _arr(g)


@pytest.mark.parametrize("shape", [(4, 2), (2, 4), (2, 5, 3)])
def test_full_matrices_extra_columns_get_no_gradient_as_torch(shape, torch):
    """derivatives.yaml narrows U / Vh and their gradients to k columns / rows: a loss of the
    extra columns alone has a zero gradient, and adding one changes nothing."""
    a = np.random.default_rng(6).uniform(-1, 1, shape)
    k = min(shape[-2:])

    def svd(lib, x):
        return lib.linalg.svd(x, full_matrices=True)

    def extra(lib, r):
        return (r.U[..., k:] ** 2).sum() * 3 + r.Vh[..., k:, :].sum()

    def kept(lib, r):
        return (r.U[..., :k] @ r.Vh[..., :k, :]).sum() + r.S.sum()

    def both(lib, r):
        return kept(lib, r) + extra(lib, r)

    for loss in (extra, both):
        ours, theirs = _grad(tapegrad, a, svd, loss), _grad(torch, a, svd, loss)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(_grad(tapegrad, a, svd, extra), np.zeros(shape))
    np.testing.assert_allclose(_grad(tapegrad, a, svd, both), _grad(tapegrad, a, svd, kept),
                               rtol=1e-12, atol=1e-12)


REPEATED = {
    "identity": np.eye(3),
    "double_top": np.diag([2.0, 2.0, 1.0]),
    "zero": np.zeros((2, 3)),
}
LOSSES = {
    "S": lambda lib, r: r[1].sum(),
    "U_weighted": lambda lib, r: (r[0] * lib.arange(r[0].numel(), dtype=lib.float64)
                                  .reshape(r[0].shape)).sum(),
    "U_Vh": lambda lib, r: (r[0] @ r[2]).sum(),
    "first_column": lambda lib, r: (r[0][..., :1] ** 2).sum(),
}


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("case", sorted(REPEATED))
def test_svd_gradients_at_repeated_singular_values_as_torch(case, loss, torch):
    """Through S alone the gradient is U diag(gS) Vh, finite; through U or Vh the formula
    divides by s_j^2 - s_i^2 = 0: NaN in both, in the same places."""
    a = REPEATED[case]

    def svd(lib, x):
        return lib.linalg.svd(x, full_matrices=False)

    ours, theirs = _grad(tapegrad, a, svd, LOSSES[loss]), _grad(torch, a, svd, LOSSES[loss])
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, equal_nan=True)
    if loss == "S":
        assert np.isfinite(ours).all()
    elif loss != "U_Vh" or case != "zero":
        assert np.isnan(ours).any()


@pytest.mark.parametrize("vectors", [True, False])
def test_eigh_gradients_at_repeated_eigenvalues_as_torch(vectors, torch):
    a = np.diag([1.0, 1.0, 3.0])

    def loss(lib, r):
        return (r[0] * lib.arange(1.0, 4.0, dtype=lib.float64)).sum() + (
            (r[1][..., :1] ** 2).sum() if vectors else 0)

    def eigh(lib, x):
        return lib.linalg.eigh(x)

    ours, theirs = _grad(tapegrad, a, eigh, loss), _grad(torch, a, eigh, loss)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert np.isnan(ours).any() == vectors


# ---- sign-independent gradients against torch ---------------------------------------------------
def _spread(shape, rng):
    m, n = shape[-2:]
    k = min(m, n)
    u = np.linalg.qr(rng.uniform(-1, 1, shape[:-2] + (m, m)))[0]
    v = np.linalg.qr(rng.uniform(-1, 1, shape[:-2] + (n, n)))[0]
    s = np.zeros(shape)
    s[..., range(k), range(k)] = 1 + 0.7 * np.arange(k)[::-1]
    return u @ s @ np.swapaxes(v, -1, -2)


SVD_LOSSES = {
    "S_sum": lambda lib, U, S, Vh, w: S.sum(),
    "reconstruction": lambda lib, U, S, Vh, w: (U @ S.diag_embed() @ Vh).sum(),
    "U_columns_weighted": lambda lib, U, S, Vh, w: ((U ** 2) * w).sum(),
    "Vh_rows_weighted": lambda lib, U, S, Vh, w: ((Vh.mT ** 2) * w[..., :1, :]).sum(),
    "U_Vh_weighted": lambda lib, U, S, Vh, w: ((U * w[..., :1, :]) @ Vh).sum(),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 2), (2, 2, 4)])
@pytest.mark.parametrize("loss", sorted(SVD_LOSSES))
def test_svd_sign_independent_gradients_match_torch(loss, shape, dtype, torch):
    rng = np.random.default_rng(7)
    a = _spread(shape, rng).astype(dtype)
    k = min(shape[-2:])
    w = rng.uniform(0.5, 2.0, shape[:-1] + (k,)).astype(dtype)
    res = []
    for m in (tapegrad, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        U, S, Vh = m.linalg.svd(x, full_matrices=False)
        SVD_LOSSES[loss](m, U, S, Vh, m.from_numpy(w.copy())).backward()
        res.append((_arr(S), _arr(x.grad)))
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=tol, atol=tol)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 2), (2, 2, 4)])
def test_qr_sign_independent_values_and_gradients_match_torch(shape, dtype, torch):
    """|R| and R's diagonal-positive form, and the gradient of a loss of both factors in that
    form (create_graph: the second derivative too)."""
    rng = np.random.default_rng(8)
    a = _spread(shape, rng).astype(dtype)
    k = min(shape[-2:])
    wq = rng.uniform(-1, 1, shape[:-1] + (k,)).astype(dtype)
    wr = rng.uniform(-1, 1, shape[:-2] + (k, shape[-1])).astype(dtype)
    res = []
    for m in (tapegrad, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        Q, R = m.linalg.qr(x)
        d = R.diagonal(0, -2, -1).sign()
        loss = ((Q * d.unsqueeze(-2)) * m.from_numpy(wq.copy())).sum() + \
            ((R * d.unsqueeze(-1)) * m.from_numpy(wr.copy())).sum()
        g, = m.autograd.grad(loss, x, create_graph=True)
        h, = m.autograd.grad((g * g).sum(), x)
        res.append((np.abs(_arr(R)), _arr(g), _arr(h)))
    tol = 1e-4 if dtype == "float32" else 1e-10
    for k, what in enumerate(("|R|", "gradient", "second derivative")):
        np.testing.assert_allclose(res[0][k], res[1][k], rtol=tol, atol=tol, err_msg=what)


GRAPHS = {
    "linalg.svd": lambda m, x: m.linalg.svd(x).U,
    "linalg.svdvals": lambda m, x: m.linalg.svdvals(x),
    "svd_V": lambda m, x: m.svd(x).V,
    "svd_no_uv": lambda m, x: m.svd(x, compute_uv=False).S,
    "linalg.eigh": lambda m, x: m.linalg.eigh(x).eigenvectors,
    "linalg.eigvalsh": lambda m, x: m.linalg.eigvalsh(x),
    "linalg.qr": lambda m, x: m.linalg.qr(x).R,
    "linalg.qr_r": lambda m, x: m.linalg.qr(x, "r").Q,
    "qr": lambda m, x: m.qr(x).Q,
}


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_next_functions_match_torch(case, torch):
    """Each node has one edge, to the input (the flags are not inputs)."""
    res = []
    for m in (tapegrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = GRAPHS[case](m, m.ones(3, 3, dtype=m.float64).requires_grad_())
        res.append((type(y.grad_fn).__name__,
                    [(type(n).__name__, nr) for n, nr in y.grad_fn.next_functions]))
    assert res[0] == res[1]


@pytest.mark.parametrize("fn", ["svd", "eigh"])
def test_second_derivatives_match_torch(fn, torch):
    """create_graph through Svd / Eigh (their backward is written with Tensor ops), for a
    sign-independent loss."""
    rng = np.random.default_rng(9)
    a = _spread((3, 3), rng)
    if fn == "eigh":
        a = a + a.T
    w = rng.uniform(0.5, 2.0, (3, 3))
    res = []
    for m in (tapegrad, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        if fn == "svd":
            U, S, _ = m.linalg.svd(x)
            loss = (S ** 3).sum() + ((U ** 2) * m.from_numpy(w.copy())).sum()
        else:
            L, V = m.linalg.eigh(x)
            loss = (L ** 3).sum() + ((V ** 2) * m.from_numpy(w.copy())).sum()
        g, = m.autograd.grad(loss, x, create_graph=True)
        h, = m.autograd.grad((g * m.from_numpy(w.copy())).sum(), x)
        res.append((_arr(g), _arr(h)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-8, atol=1e-9)
