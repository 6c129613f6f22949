"""tapegrad.linalg beyond the op database: errors (type and message against torch), LinAlgError,
the named tuples, the top-level aliases and Tensor methods, det's gradient at singular matrices
(plain and create_graph) and the info outputs of inv_ex / cholesky_ex."""
import math
import warnings

import numpy as np
import pytest
from torch_compare import same_error

import tapegrad
import tapegrad.linalg


def _arr(t):
    return t.detach().numpy() if hasattr(t, "numpy") and not isinstance(t, tapegrad.Tensor) \
        else np.asarray(t._data)


def _eye(m, n, dtype="float32"):
    return m.from_numpy(np.eye(n, dtype=dtype))


def _t(m, values, dtype="float32"):
    return m.from_numpy(np.array(values, dtype=dtype))


LONG = [[1, 2], [3, 4]]
ERRORS = {
    # floating-point check, rank, squareness, in torch's order
    "inv_long": lambda m: m.linalg.inv(_t(m, LONG, "int64")),
    "inv_bool": lambda m: m.linalg.inv(_t(m, [[True]], "bool")),
    "inv_half": lambda m: m.linalg.inv(_eye(m, 2, "float16")),
    "inv_1d": lambda m: m.linalg.inv(_t(m, [1.0, 2.0])),
    "inv_1d_long": lambda m: m.linalg.inv(_t(m, [1, 2], "int64")),
    "inv_nonsquare": lambda m: m.linalg.inv(_t(m, np.ones((2, 3)))),
    "inverse_long": lambda m: m.inverse(_t(m, LONG, "int64")),
    "inv_ex_nonsquare": lambda m: m.linalg.inv_ex(_t(m, np.ones((3, 2)))),
    "det_long": lambda m: m.linalg.det(_t(m, LONG, "int64")),
    "det_half": lambda m: m.linalg.det(_eye(m, 2, "float16")),
    "det_nonsquare": lambda m: m.det(_t(m, np.ones((2, 2, 3)))),
    "det_1d": lambda m: m.linalg.det(_t(m, [1.0])),
    "slogdet_long": lambda m: m.linalg.slogdet(_t(m, LONG, "int64")),
    "slogdet_half": lambda m: m.slogdet(_eye(m, 2, "float16")),
    "slogdet_nonsquare": lambda m: m.linalg.slogdet(_t(m, np.ones((2, 3)))),
    "logdet_long": lambda m: m.logdet(_t(m, LONG, "int64")),
    "logdet_nonsquare": lambda m: m.logdet(_t(m, np.ones((2, 3)))),
    "solve_long": lambda m: m.linalg.solve(_t(m, LONG, "int64"), _t(m, LONG, "int64")),
    "solve_dtypes": lambda m: m.linalg.solve(_eye(m, 2), _eye(m, 2, "float64")),
    "solve_rows": lambda m: m.linalg.solve(_eye(m, 2), _t(m, np.ones((3, 2)))),
    "solve_vector_rows": lambda m: m.linalg.solve(_eye(m, 2).expand(3, 2, 2),
                                                  _t(m, np.ones((4, 2)))),
    "solve_nonsquare": lambda m: m.linalg.solve(_t(m, np.ones((2, 3))), _t(m, np.ones(2))),
    "solve_0d_B": lambda m: m.linalg.solve(_eye(m, 2), _t(m, 1.0)),
    "solve_batches": lambda m: m.linalg.solve(_eye(m, 2).expand(3, 2, 2),
                                              _t(m, np.ones((4, 2, 1)))),
    "solve_batches_inner": lambda m: m.linalg.solve(_eye(m, 2).expand(2, 3, 2, 2),
                                                    _t(m, np.ones((2, 4, 2, 1)))),
    "solve_vector_mismatch": lambda m: m.linalg.solve(_eye(m, 2), _t(m, np.ones(3))),
    "solve_right_vector": lambda m: m.linalg.solve(_eye(m, 3), _t(m, np.ones(3)), left=False),
    "solve_right_cols": lambda m: m.linalg.solve(_eye(m, 3), _t(m, np.ones((2, 4))), left=False),
    "solve_half": lambda m: m.linalg.solve(_eye(m, 2, "float16"), _eye(m, 2, "float16")),
    "cholesky_long": lambda m: m.linalg.cholesky(_t(m, LONG, "int64")),
    "cholesky_half": lambda m: m.linalg.cholesky(_eye(m, 2, "float16")),
    "cholesky_nonsquare": lambda m: m.linalg.cholesky(_t(m, np.ones((2, 3)))),
    "cholesky_ex_1d": lambda m: m.linalg.cholesky_ex(_t(m, [1.0])),
    "torch_cholesky_long": lambda m: m.cholesky(_t(m, LONG, "int64")),
    "torch_cholesky_nonsquare": lambda m: m.cholesky(_t(m, np.ones((2, 3), "int64"), "int64")),
    "matrix_power_1d": lambda m: m.linalg.matrix_power(_t(m, [1.0]), 2),
    "matrix_power_nonsquare": lambda m: m.matrix_power(_t(m, np.ones((2, 3))), 2),
    "matrix_power_long_negative": lambda m: m.linalg.matrix_power(_t(m, LONG, "int64"), -1),
    "matrix_power_half_negative": lambda m: m.linalg.matrix_power(_eye(m, 2, "float16"), -2),
    "vector_norm_long": lambda m: m.linalg.vector_norm(_t(m, LONG, "int64")),
    "vector_norm_int_dtype": lambda m: m.linalg.vector_norm(_eye(m, 2), dtype=m.int64),
    "vector_norm_narrowing": lambda m: m.linalg.vector_norm(_eye(m, 2, "float64"),
                                                            dtype=m.float32),
    "matrix_norm_long": lambda m: m.linalg.matrix_norm(_t(m, LONG, "int64")),
    "matrix_norm_1d": lambda m: m.linalg.matrix_norm(_t(m, [1.0, 2.0])),
    "matrix_norm_order": lambda m: m.linalg.matrix_norm(_eye(m, 2), 3),
    "matrix_norm_float_order": lambda m: m.linalg.matrix_norm(_eye(m, 2), 1.5),
    "matrix_norm_str_order": lambda m: m.linalg.matrix_norm(_eye(m, 2), "bad"),
    "matrix_norm_same_dims": lambda m: m.linalg.matrix_norm(_eye(m, 2), 1, (0, -2)),
    "norm_ord_3d": lambda m: m.linalg.norm(_t(m, np.ones((2, 2, 2))), 2),
    "norm_fro_1d": lambda m: m.linalg.norm(_t(m, [1.0, 2.0]), "fro"),
    "norm_three_dims": lambda m: m.linalg.norm(_t(m, np.ones((2, 2, 2))), None, (0, 1, 2)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case, torch):
    same_error(ERRORS[case], torch)


SINGULAR = {
    "inv": lambda m: m.linalg.inv(_t(m, np.zeros((2, 2)))),
    "inv_rank1": lambda m: m.inverse(_t(m, [[1.0, 2.0], [2.0, 4.0]])),
    "inv_batch": lambda m: m.linalg.inv(_t(m, [np.eye(2), np.zeros((2, 2))])),
    "inv_ex_check": lambda m: m.linalg.inv_ex(_t(m, np.zeros((2, 2))), check_errors=True),
    "inverse_method": lambda m: _t(m, [[0.0, 0.0], [0.0, 1.0]]).inverse(),
    "matrix_power_negative": lambda m: m.linalg.matrix_power(_t(m, np.zeros((2, 2))), -1),
    "solve": lambda m: m.linalg.solve(_t(m, np.zeros((2, 2))), _t(m, np.ones(2))),
    "cholesky": lambda m: m.linalg.cholesky(-_eye(m, 2)),
    "cholesky_batch": lambda m: m.linalg.cholesky(_t(m, [np.eye(3), np.diag([1.0, 1.0, -1.0])])),
    "cholesky_ex_check": lambda m: m.linalg.cholesky_ex(-_eye(m, 2), check_errors=True),
    "torch_cholesky": lambda m: m.cholesky(_t(m, [[1.0, 2.0], [2.0, 1.0]])),
}


@pytest.mark.parametrize("case", sorted(SINGULAR))
def test_linalg_error_matches_torch(case, torch):
    same_error(SINGULAR[case], torch)


def test_linalg_error_is_a_runtime_error():
    assert issubclass(tapegrad.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="singular"):
        tapegrad.linalg.inv(tapegrad.zeros(3, 3))


def test_singular_value_norm_of_rank_deficient_matrix_matches_torch(torch):
    """Only S gets a gradient: the m != n terms of svd_backward, which divide by S, stay out."""
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    for o in ("nuc", 2):
        res = []
        for m in (tapegrad, torch):
            x = m.from_numpy(a.copy()).requires_grad_()
            m.linalg.matrix_norm(x, o).backward()
            res.append(_arr(x.grad))
        assert np.all(np.isfinite(res[0]))
        np.testing.assert_allclose(res[0], res[1], rtol=1e-10, atol=1e-12)


def test_matrix_power_needs_an_int(torch):
    for m in (tapegrad, torch):
        with pytest.raises(TypeError):
            m.linalg.matrix_power(_eye(m, 2), 1.0)


# ---- named tuples -------------------------------------------------------------------------------
TUPLES = {
    "slogdet": lambda m: m.slogdet(_t(m, [[2.0, 1.0], [1.0, -3.0]])),
    "linalg_slogdet": lambda m: m.linalg.slogdet(_t(m, [[2.0, 1.0], [1.0, -3.0]])),
    "inv_ex": lambda m: m.linalg.inv_ex(_t(m, [[2.0, 1.0], [1.0, 3.0]])),
    "cholesky_ex": lambda m: m.linalg.cholesky_ex(_t(m, [[2.0, 1.0], [1.0, 3.0]])),
}


@pytest.mark.parametrize("case", sorted(TUPLES))
def test_named_tuples_match_torch(case, torch):
    ours, theirs = TUPLES[case](tapegrad), TUPLES[case](torch)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours._fields == theirs.__match_args__
    for f in ours._fields:
        a, b = getattr(ours, f), getattr(theirs, f)
        assert str(a.dtype).rsplit(".")[-1] == str(b.dtype).rsplit(".")[-1], f
        np.testing.assert_allclose(_arr(a), b.numpy(), rtol=1e-6, err_msg=f)
    assert repr(ours).replace("tapegrad", "torch") == repr(theirs)


def test_info_outputs_match_torch(torch):
    bad = np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0]), np.diag([1.0, 1.0, 0.0])])
    for f in (lambda m, x: m.linalg.cholesky_ex(x).info,
              lambda m, x: m.linalg.inv_ex(x).info,
              lambda m, x: m.linalg.cholesky_ex(x, upper=True).info):
        ours = f(tapegrad, tapegrad.from_numpy(bad.copy()))
        theirs = f(torch, torch.from_numpy(bad.copy()))
        assert ours.dtype == tapegrad.int32 and not ours.requires_grad
        np.testing.assert_array_equal(_arr(ours), theirs.numpy())


def test_info_has_no_grad_fn_and_inverse_has():
    x = tapegrad.eye(2, requires_grad=True)
    inv, info = tapegrad.linalg.inv_ex(x)
    assert info.grad_fn is None and not info.requires_grad
    assert type(inv.grad_fn).__name__ == "LinalgInvExBackward0"


# ---- aliases and methods ------------------------------------------------------------------------
def test_top_level_aliases_are_the_linalg_functions():
    L = tapegrad.linalg
    assert tapegrad.inverse is L.inv
    # (torch.det takes no out=, torch.linalg.det does: the top-level one refuses it)
    assert tapegrad.det.__wrapped__ is L.det
    with pytest.raises(TypeError, match="out"):
        tapegrad.det(tapegrad.eye(2), out=tapegrad.empty(0))
    assert tapegrad.matrix_power.__wrapped__ is L.matrix_power   # (with torch's out=)
    # torch.cholesky and torch.slogdet differ from the linalg ones (node, prefix, tuple type)
    assert tapegrad.cholesky is not L.cholesky and tapegrad.slogdet is not L.slogdet


METHODS = {
    "inverse": (), "det": (), "logdet": (), "slogdet": (), "cholesky": (), "matrix_power": (3,),
}


@pytest.mark.parametrize("name", sorted(METHODS))
def test_methods_match_torch(name, torch):
    a = np.array([[[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]] * 2)
    x = tapegrad.from_numpy(a.copy()).requires_grad_()
    t = torch.from_numpy(a.copy()).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = getattr(x, name)(*METHODS[name]), getattr(t, name)(*METHODS[name])
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for o, r in zip(ours, theirs):
        np.testing.assert_allclose(_arr(o), r.detach().numpy(), rtol=1e-12)
        assert type(o.grad_fn).__name__ == type(r.grad_fn).__name__
    ours[-1].sum().backward()
    theirs[-1].sum().backward()
    np.testing.assert_allclose(_arr(x.grad), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_linalg_namespace_has_torch_names_only(torch):
    from tapegrad.ops._registry import LINALG
    for n in [*LINALG, "LinAlgError"]:
        assert hasattr(torch.linalg, n), n
        assert getattr(tapegrad.linalg, n) is LINALG.get(n, tapegrad.linalg.LinAlgError)


def test_torch_cholesky_warns_deprecation():
    # (torch warns once per process, so its text cannot be caught again here)
    with pytest.warns(UserWarning, match=r"torch.cholesky is deprecated in favor of "
                                         r"torch.linalg.cholesky"):
        tapegrad.cholesky(tapegrad.eye(2))


# ---- det at singular matrices -------------------------------------------------------------------
SINGULAR_MATS = {
    "rank1_2x2": [[1.0, 2.0], [2.0, 4.0]],
    "rank2_3x3": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]],
    "diag_rank2": [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]],
    "batch_mixed": [[[1.0, 0.0], [0.0, 0.0]], [[2.0, 1.0], [1.0, 3.0]]],
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(SINGULAR_MATS))
def test_singular_det_gradients_match_torch(case, dtype, torch):
    """Plain backward: torch's LU path (0 at an exactly singular matrix); create_graph: the
    cofactor matrix, and its own derivative."""
    a = np.array(SINGULAR_MATS[case], dtype)
    c = np.random.default_rng(0).uniform(-1, 1, a.shape).astype(dtype)
    res = []
    for m in (tapegrad, torch):
        x = m.from_numpy(a.copy()).requires_grad_()
        d = m.linalg.det(x)
        g, = m.autograd.grad(d.sum(), x)
        g2, = m.autograd.grad(m.linalg.det(x).sum(), x, create_graph=True)
        h, = m.autograd.grad((g2 * m.from_numpy(c.copy())).sum(), x)
        res.append([_arr(t) for t in (d, g, g2, h)])
    tol = 1e-5 if dtype == "float32" else 1e-12
    for k, what in enumerate(("det", "grad", "create_graph grad", "second derivative")):
        np.testing.assert_allclose(res[0][k], res[1][k], rtol=tol, atol=tol * 10, err_msg=what)
    assert np.all(np.isfinite(res[0][2]))


def test_singular_det_second_derivative_where_torch_gives_nan():
    """At the zero matrix torch's SVD formula is NaN (repeated singular values); the cofactor of
    a 2x2 matrix is linear, so its derivative is exact: d/dA sum(cof(A) * C) = cof(C)."""
    x = tapegrad.zeros(2, 2, dtype=tapegrad.float64, requires_grad=True)
    c = tapegrad.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tapegrad.float64)
    g, = tapegrad.autograd.grad(tapegrad.linalg.det(x), x, create_graph=True)
    h, = tapegrad.autograd.grad((g * c).sum(), x)
    np.testing.assert_allclose(h._data, [[4.0, -3.0], [-2.0, 1.0]])


def test_logdet_of_singular_and_negative_matches_torch(torch):
    for vals in ([[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [1.0, 0.0]]):
        ours = tapegrad.logdet(tapegrad.tensor(vals))
        theirs = torch.logdet(torch.tensor(vals))
        np.testing.assert_array_equal(_arr(ours), theirs.numpy())


def test_empty_matrices_match_torch(torch):
    for f in (lambda m, x: m.linalg.det(x), lambda m, x: m.linalg.inv(x),
              lambda m, x: m.linalg.slogdet(x).logabsdet, lambda m, x: m.linalg.cholesky(x),
              lambda m, x: m.linalg.matrix_power(x, -2)):
        for shape in ((0, 0), (3, 0, 0)):
            ours = f(tapegrad, tapegrad.zeros(*shape))
            theirs = f(torch, torch.zeros(*shape))
            assert tuple(ours.shape) == tuple(theirs.shape)
            np.testing.assert_array_equal(_arr(ours), theirs.numpy())


def _empty_matrix_norms(lib):
    out = []
    for o in (2, 1, math.inf, -1, -math.inf, -2, "nuc", "fro"):
        for shp in ((0, 3), (2, 3, 0), (3, 0)):
            for keepdim in (False, True):
                a = lib.ones(shp, requires_grad=True)
                try:
                    r = lib.linalg.matrix_norm(a, o, keepdim=keepdim)
                    out.append((str(o), shp, keepdim, tuple(r.shape), r.tolist(),
                                r.grad_fn is None))
                except IndexError:
                    out.append((str(o), shp, keepdim, "IndexError"))
    return out


def test_matrix_norms_of_empty_matrices_as_torch(torch):
    assert _empty_matrix_norms(tapegrad) == _empty_matrix_norms(torch)
