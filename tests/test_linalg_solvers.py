"""tapegrad.linalg's solvers and products beyond the op database (ops/linalg_solvers.py,
solve_ex): errors against torch (type and message), LinAlgError, info outputs, named tuples,
strides of the LAPACK-shaped results, the full-matrix gradients of a Cholesky factor, and the
top-level functions and Tensor methods."""
import warnings

import numpy as np
import pytest
from torch_compare import same_error

import tapegrad
import tapegrad.linalg


def _arr(t):
    return np.asarray(t._data) if isinstance(t, tapegrad.Tensor) else t.detach().numpy()


def _t(m, values, dtype="float32"):
    return m.from_numpy(np.array(values, dtype=dtype))


def _eye(m, n, dtype="float32"):
    return _t(m, np.eye(n), dtype)


def _ones(m, *shape, dtype="float32"):
    return _t(m, np.ones(shape), dtype)


ST = "linalg.solve_triangular"
ERRORS = {
    "solve_ex_long": lambda m: m.linalg.solve_ex(_t(m, [[1, 2], [3, 4]], "int64"), _ones(m, 2)),
    "solve_ex_dtypes": lambda m: m.linalg.solve_ex(_eye(m, 2), _eye(m, 2, "float64")),
    "solve_ex_nonsquare": lambda m: m.linalg.solve_ex(_ones(m, 2, 3), _ones(m, 2)),
    "solve_ex_rows": lambda m: m.linalg.solve_ex(_eye(m, 2), _ones(m, 3, 2)),
    "solve_ex_batches": lambda m: m.linalg.solve_ex(_eye(m, 2).expand(3, 2, 2),
                                                    _ones(m, 4, 2, 1)),
    "st_long": lambda m: m.linalg.solve_triangular(_t(m, [[1, 2], [3, 4]], "int64"),
                                                   _ones(m, 2, 1), upper=True),
    "st_half": lambda m: m.linalg.solve_triangular(_eye(m, 2, "float16"),
                                                   _ones(m, 2, 1, dtype="float16"), upper=True),
    "st_B_1d": lambda m: m.linalg.solve_triangular(_eye(m, 3), _ones(m, 3), upper=True),
    "st_A_1d": lambda m: m.linalg.solve_triangular(_ones(m, 3), _ones(m, 3, 2), upper=True),
    "st_long_1d_B": lambda m: m.linalg.solve_triangular(_t(m, np.eye(3), "int64"),
                                                        _ones(m, 3), upper=True),
    "st_nonsquare": lambda m: m.linalg.solve_triangular(_ones(m, 2, 3), _ones(m, 3, 2),
                                                        upper=True),
    "st_rows": lambda m: m.linalg.solve_triangular(_eye(m, 3), _ones(m, 2, 2), upper=True),
    "st_cols_right": lambda m: m.linalg.solve_triangular(_eye(m, 3), _ones(m, 2, 2),
                                                         upper=True, left=False),
    "st_batches": lambda m: m.linalg.solve_triangular(_eye(m, 3).expand(2, 3, 3),
                                                      _ones(m, 4, 3, 2), upper=False),
    "st_no_upper": lambda m: m.linalg.solve_triangular(_eye(m, 3), _ones(m, 3, 2)),
    "cs_B_1d": lambda m: m.cholesky_solve(_ones(m, 3), _eye(m, 3)),
    "cs_sizes": lambda m: m.cholesky_solve(_ones(m, 2, 2), _eye(m, 3)),
    "cs_nonsquare": lambda m: m.cholesky_solve(_ones(m, 3, 2), _ones(m, 3, 2)),
    "cs_long": lambda m: m.cholesky_solve(_ones(m, 3, 2, dtype="int64"),
                                          _eye(m, 3, "int64")),
    "cs_half": lambda m: m.cholesky_solve(_ones(m, 3, 2, dtype="float16"),
                                          _eye(m, 3, "float16")),
    "cs_dtypes": lambda m: m.cholesky_solve(_ones(m, 3, 2, dtype="float64"), _eye(m, 3)),
    "cs_batches": lambda m: m.cholesky_solve(_ones(m, 4, 3, 2), _eye(m, 3).expand(2, 3, 3)),
    "ci_1d": lambda m: m.cholesky_inverse(_ones(m, 3)),
    "ci_nonsquare": lambda m: m.cholesky_inverse(_ones(m, 2, 3)),
    "ci_long": lambda m: m.cholesky_inverse(_eye(m, 3, "int64")),
    "ci_half": lambda m: m.cholesky_inverse(_eye(m, 3, "float16")),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case, torch):
    same_error(ERRORS[case], torch, prefix=True)


SINGULAR = {
    "solve_ex_check": lambda m: m.linalg.solve_ex(_t(m, np.zeros((2, 2))), _ones(m, 2),
                                                  check_errors=True),
    "solve_ex_check_batch": lambda m: m.linalg.solve_ex(
        _t(m, [np.eye(3), np.diag([1.0, 1.0, 0.0])]), _ones(m, 3, 1), check_errors=True),
    "cholesky_inverse": lambda m: m.cholesky_inverse(_t(m, np.zeros((3, 3)))),
    "cholesky_inverse_batch": lambda m: m.cholesky_inverse(
        _t(m, [np.eye(3), np.diag([1.0, 0.0, 0.0])])),
    "cholesky_inverse_method": lambda m: _t(m, np.diag([2.0, 1.0, 0.0])).cholesky_inverse(),
}


@pytest.mark.parametrize("case", sorted(SINGULAR))
def test_linalg_error_matches_torch(case, torch):
    same_error(SINGULAR[case], torch, prefix=True)


def test_solve_ex_info_and_nan_result(torch):
    """info is A's (batch shape before broadcasting with B), LAPACK's first zero pivot; the
    result of a singular matrix is unspecified (torch: LAPACK's inf / NaN; here NaN)."""
    a = np.stack([np.eye(3), np.diag([1.0, 1.0, 0.0]), np.zeros((3, 3))])
    b = np.ones((4, 1, 3, 2))
    ours = tapegrad.linalg.solve_ex(tapegrad.from_numpy(a), tapegrad.from_numpy(b))
    theirs = torch.linalg.solve_ex(torch.from_numpy(a), torch.from_numpy(b))
    assert ours.info.dtype == tapegrad.int32 and not ours.info.requires_grad
    np.testing.assert_array_equal(_arr(ours.info), theirs.info.numpy())
    np.testing.assert_array_equal(_arr(ours.result)[:, 0], theirs.result.numpy()[:, 0])
    assert np.isnan(_arr(ours.result)[:, 1:]).all()
    assert not np.isfinite(theirs.result.numpy()[:, 1:]).all()


def test_solve_ex_named_tuple_and_node(torch):
    outs = []
    for m in (tapegrad, torch):
        a = _t(m, [[2.0, 1.0], [1.0, 3.0]]).requires_grad_()
        r = m.linalg.solve_ex(a, _t(m, [1.0, 2.0]))
        outs.append((r, type(r.result.grad_fn).__name__, r.info.grad_fn))
    (ours, node, info_fn), (theirs, tnode, _) = outs
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_solve_ex"
    assert ours._fields == theirs.__match_args__
    assert node == tnode == "LinalgSolveExBackward0" and info_fn is None
    assert repr(ours).replace("tapegrad", "torch") == repr(theirs)


def test_solve_triangular_reads_one_triangle(torch):
    """The other triangle (and, with unitriangular, the diagonal) is never read."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
    junk = a + np.triu(rng.uniform(5, 9, (3, 3)), 1) + np.tril(rng.uniform(5, 9, (3, 3)), -1)
    b = rng.uniform(-1, 1, (3, 2))
    for upper in (True, False):
        for unit in (True, False):
            kw = {"upper": upper, "unitriangular": unit}
            ours = tapegrad.linalg.solve_triangular(tapegrad.from_numpy(junk),
                                                    tapegrad.from_numpy(b), **kw)
            theirs = torch.linalg.solve_triangular(torch.from_numpy(junk), torch.from_numpy(b),
                                                   **kw)
            np.testing.assert_allclose(_arr(ours), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_solve_triangular_zero_diagonal_gives_inf_as_torch(torch):
    a = np.array([[1.0, 2.0, 0.5], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0]])
    b = np.array([[1.0], [1.0], [2.0]])
    ours = tapegrad.linalg.solve_triangular(tapegrad.from_numpy(a), tapegrad.from_numpy(b),
                                            upper=True)
    theirs = torch.linalg.solve_triangular(torch.from_numpy(a), torch.from_numpy(b), upper=True)
    np.testing.assert_array_equal(_arr(ours), theirs.numpy())


def test_solve_triangular_result_has_A_dtype(torch):
    """torch converts B to A's dtype (no promotion); the gradient of B keeps B's dtype."""
    for da, db in (("float32", "float64"), ("float64", "float32")):
        res = []
        for m in (tapegrad, torch):
            a = _t(m, [[2.0, 1.0], [0.0, 3.0]], da)
            b = _t(m, [[1.0], [2.0]], db).requires_grad_()
            x = m.linalg.solve_triangular(a, b, upper=True)
            x.sum().backward()
            res.append((str(x.dtype).rsplit(".")[-1], str(b.grad.dtype).rsplit(".")[-1],
                        _arr(x), _arr(b.grad)))
        assert res[0][:2] == res[1][:2]
        np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-6)
        np.testing.assert_allclose(res[0][3], res[1][3], rtol=1e-6)


STRIDED = {
    "solve_triangular": lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
    "solve_triangular_right": lambda m, a, b: m.linalg.solve_triangular(a, b.mT, upper=False,
                                                                        left=False),
    "cholesky_solve": lambda m, a, b: m.cholesky_solve(b, a.tril()),
    "cholesky_inverse": lambda m, a, b: m.cholesky_inverse(a.tril()),
    "inv": lambda m, a, b: m.linalg.inv(a),
    "inv_ex": lambda m, a, b: m.linalg.inv_ex(a).inverse,
    "solve": lambda m, a, b: m.linalg.solve(a, b),
    "solve_right": lambda m, a, b: m.linalg.solve(a, b.mT, left=False),
    "solve_ex": lambda m, a, b: m.linalg.solve_ex(a, b).result,
    "inv_empty": lambda m, a, b: m.linalg.inv(a[:, :0, :0]),
    "tensorinv": lambda m, a, b: m.linalg.tensorinv(a[0].reshape(3, 1, 3), ind=1),
}


@pytest.mark.parametrize("case", sorted(STRIDED))
def test_lapack_results_are_column_major_as_torch(case, torch):
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
    b = rng.uniform(-1, 1, (4, 1, 3, 2))
    ours = STRIDED[case](tapegrad, tapegrad.from_numpy(a), tapegrad.from_numpy(b))
    theirs = STRIDED[case](torch, torch.from_numpy(a), torch.from_numpy(b))
    assert ours.stride() == theirs.stride()


FACTOR_GRADS = {
    "cholesky_solve": lambda m, b, f: m.cholesky_solve(b, f),
    "cholesky_solve_upper": lambda m, b, f: m.cholesky_solve(b, f.mT, True),
    "cholesky_inverse": lambda m, b, f: m.cholesky_inverse(f),
    "cholesky_inverse_upper": lambda m, b, f: m.cholesky_inverse(f.mT, upper=True),
    "method_solve": lambda m, b, f: b.cholesky_solve(f),
    "method_inverse": lambda m, b, f: f.cholesky_inverse(),
}


@pytest.mark.parametrize("case", sorted(FACTOR_GRADS))
def test_factor_gets_torch_full_matrix_gradient(case, torch):
    """The factor passed as a full matrix (both triangles): values read one triangle, the
    gradient is torch's full matrix (derivatives.yaml), second derivatives too."""
    rng = np.random.default_rng(2)
    f = rng.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)
    b = rng.uniform(-1, 1, (2, 3, 2))
    c = rng.uniform(-1, 1, (2, 3, 3))
    res = []
    for m in (tapegrad, torch):
        bt = m.from_numpy(b.copy()).requires_grad_()
        ft = m.from_numpy(f.copy()).requires_grad_()
        y = FACTOR_GRADS[case](m, bt, ft)
        g = m.autograd.grad(y.sin().sum(), ft, create_graph=True)[0]
        h = m.autograd.grad((g * m.from_numpy(c)).sum(), ft)[0]
        res.append([_arr(y), _arr(g), _arr(h), type(y.grad_fn).__name__])
    for k in range(3):
        np.testing.assert_allclose(res[0][k], res[1][k], rtol=1e-10, atol=1e-12)
    assert res[0][3] == res[1][3]


def test_top_level_and_methods(torch):
    for name in ("cholesky_solve", "cholesky_inverse"):
        assert hasattr(tapegrad, name) and hasattr(tapegrad.Tensor, name)
        assert hasattr(torch, name) and hasattr(torch.Tensor, name)
    for name in ("solve_ex", "solve_triangular"):
        assert hasattr(tapegrad.linalg, name) and not hasattr(tapegrad, name) \
            and not hasattr(torch, name)


# ---- matrix_rank, pinv, lstsq -------------------------------------------------------------------
RANK_ERRORS = {
    "rank_1d": lambda m: m.linalg.matrix_rank(_ones(m, 3)),
    "rank_1d_long": lambda m: m.linalg.matrix_rank(_ones(m, 3, dtype="int64")),
    "rank_long": lambda m: m.linalg.matrix_rank(_ones(m, 3, 3, dtype="int64")),
    "rank_half": lambda m: m.linalg.matrix_rank(_ones(m, 3, 3, dtype="float16")),
    "rank_hermitian_nonsquare": lambda m: m.linalg.matrix_rank(_ones(m, 2, 3), hermitian=True),
    "pinv_1d": lambda m: m.linalg.pinv(_ones(m, 3)),
    "pinv_long": lambda m: m.linalg.pinv(_ones(m, 3, 3, dtype="int64")),
    "pinv_half": lambda m: m.linalg.pinv(_ones(m, 2, 3, 3, dtype="float16")),
    "pinv_hermitian_nonsquare": lambda m: m.linalg.pinv(_ones(m, 2, 3), hermitian=True),
    "pinv_atol_grad": lambda m: m.linalg.pinv(_ones(m, 3, 3),
                                              atol=_t(m, 0.1).requires_grad_()),
    "lstsq_1d": lambda m: m.linalg.lstsq(_ones(m, 3), _ones(m, 3)),
    "lstsq_0d_B": lambda m: m.linalg.lstsq(_ones(m, 3, 2), _t(m, 1.0)),
    "lstsq_B_more_dims": lambda m: m.linalg.lstsq(_ones(m, 3, 2), _ones(m, 2, 3, 1)),
    "lstsq_B_two_fewer": lambda m: m.linalg.lstsq(_ones(m, 2, 3, 2), _ones(m, 3)),
    "lstsq_rows": lambda m: m.linalg.lstsq(_ones(m, 3, 2), _ones(m, 4, 1)),
    "lstsq_vector_rows": lambda m: m.linalg.lstsq(_ones(m, 3, 2), _ones(m, 2)),
    "lstsq_long": lambda m: m.linalg.lstsq(_ones(m, 3, 2, dtype="int64"),
                                           _ones(m, 3, 1, dtype="int64")),
    "lstsq_half": lambda m: m.linalg.lstsq(_ones(m, 3, 2, dtype="float16"),
                                           _ones(m, 3, 1, dtype="float16")),
    "lstsq_dtypes": lambda m: m.linalg.lstsq(_ones(m, 3, 2), _ones(m, 3, 1, dtype="float64")),
    "lstsq_long_B": lambda m: m.linalg.lstsq(_ones(m, 3, 2), _ones(m, 4, 1, dtype="int64")),
    "lstsq_driver": lambda m: m.linalg.lstsq(_ones(m, 3, 2), _ones(m, 3, 1), driver="foo"),
    "lstsq_driver_rows": lambda m: m.linalg.lstsq(_ones(m, 3, 2), _ones(m, 4, 1),
                                                  driver="foo"),
    "lstsq_batches": lambda m: m.linalg.lstsq(_ones(m, 2, 3, 2), _ones(m, 4, 3, 1)),
    "lstsq_vector_batches": lambda m: m.linalg.lstsq(_ones(m, 2, 5, 3), _ones(m, 5, 2)),
}


@pytest.mark.parametrize("case", sorted(RANK_ERRORS))
def test_rank_pinv_lstsq_errors_match_torch(case, torch):
    same_error(RANK_ERRORS[case], torch, prefix=True)


def test_overload_keywords_cannot_mix():
    """tol (matrix_rank) and rcond (pinv) are torch's other overloads: TypeError with atol."""
    x = tapegrad.eye(3)
    with pytest.raises(TypeError, match="linalg_matrix_rank"):
        tapegrad.linalg.matrix_rank(x, tol=0.1, atol=0.1)
    with pytest.raises(TypeError, match="linalg_pinv"):
        tapegrad.linalg.pinv(x, 0.1, atol=0.1)


def test_matrix_rank_is_int64_without_history(torch):
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    ours = tapegrad.linalg.matrix_rank(tapegrad.from_numpy(a).requires_grad_())
    theirs = torch.linalg.matrix_rank(torch.from_numpy(a).requires_grad_())
    assert ours.dtype == tapegrad.int64 and ours.grad_fn is None and not ours.requires_grad
    assert ours.item() == theirs.item() == 1


def test_pinv_tolerance_tensor_broadcasts_as_torch(torch):
    """atol of shape (3,) against a single 3 x 3 matrix: torch's unsqueeze(-1) makes a batch of
    three pseudoinverses, one per tolerance."""
    a = np.diag([4.0, 1.0, 0.01])
    tols = np.array([0.0, 0.5, 2.0])
    ours = tapegrad.linalg.pinv(tapegrad.from_numpy(a), atol=tapegrad.from_numpy(tols))
    theirs = torch.linalg.pinv(torch.from_numpy(a), atol=torch.from_numpy(tols))
    assert tuple(ours.shape) == tuple(theirs.shape) == (3, 3, 3)
    np.testing.assert_allclose(_arr(ours), theirs.numpy(), rtol=1e-12)


def test_hermitian_pinv_gradcheck_through_symmetric_input():
    """hermitian=True reads A's lower triangle, so finite differences see A + A^T."""
    rng = np.random.default_rng(3)
    a = tapegrad.from_numpy(rng.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)).requires_grad_()

    def f(x):
        return tapegrad.linalg.pinv(x + x.mT, hermitian=True)

    assert tapegrad.autograd.gradcheck(f, (a,))
    assert tapegrad.autograd.gradgradcheck(f, (a,))


def test_lstsq_named_tuple_and_fields_as_torch(torch):
    """gelsy (the default) leaves residuals and singular_values empty, residuals still in the
    graph (LinalgLstsqBackward0) as torch's; rank and singular_values have no history."""
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4, 2))
    outs = []
    for m in (tapegrad, torch):
        r = m.linalg.lstsq(m.from_numpy(a).requires_grad_(), m.from_numpy(b))
        outs.append((r, [type(t.grad_fn).__name__ for t in r], r.solution.stride()))
    (ours, nodes, stride), (theirs, tnodes, tstride) = outs
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_lstsq"
    assert ours._fields == theirs.__match_args__
    assert nodes == tnodes and stride == tstride
    assert repr(ours).replace("tapegrad", "torch") == repr(theirs)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels"])
def test_lstsq_residual_gradient_as_torch(driver, torch):
    """The residuals' own gradient (m > n, full rank), and the second derivative."""
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1, 1, (2, 5, 3)), rng.uniform(-1, 1, (2, 5, 2))
    c = rng.uniform(-1, 1, (2, 5, 3))
    res = []
    for m in (tapegrad, torch):
        x, y = m.from_numpy(a).requires_grad_(), m.from_numpy(b).requires_grad_()
        r = m.linalg.lstsq(x, y, driver=driver)
        loss = r.solution.sum() + r.residuals.sum()
        ga, gb = m.autograd.grad(loss, (x, y), create_graph=True)
        h = m.autograd.grad((ga * m.from_numpy(c)).sum() + gb.sum(), x)[0]
        res.append([_arr(t) for t in (r.residuals, ga, gb, h)])
    for k in range(4):
        np.testing.assert_allclose(res[0][k], res[1][k], rtol=1e-9, atol=1e-11)



# ---- products and composites --------------------------------------------------------------------
COMPOSITE_ERRORS = {
    "cross_ndim": lambda m: m.linalg.cross(_ones(m, 2, 3), _ones(m, 3)),
    "cross_length": lambda m: m.linalg.cross(_ones(m, 3, 2), _ones(m, 3, 2)),
    "cross_dtypes": lambda m: m.linalg.cross(_ones(m, 3), _ones(m, 3, dtype="float64")),
    "cross_bcast": lambda m: m.linalg.cross(_ones(m, 2, 3), _ones(m, 4, 3)),
    "vecdot_long": lambda m: m.linalg.vecdot(_ones(m, 3, dtype="int64"), _ones(m, 3)),
    "vecdot_dtypes": lambda m: m.linalg.vecdot(_ones(m, 3), _ones(m, 3, dtype="int64")),
    "vecdot_1d_sizes": lambda m: m.linalg.vecdot(_ones(m, 3), _ones(m, 4)),
    "vecdot_bcast": lambda m: m.linalg.vecdot(_ones(m, 2, 3), _ones(m, 4)),
    "multi_dot_one": lambda m: m.linalg.multi_dot([_ones(m, 2, 3)]),
    "multi_dot_none": lambda m: m.linalg.multi_dot([]),
    "multi_dot_first_3d": lambda m: m.linalg.multi_dot([_ones(m, 2, 3, 4), _ones(m, 4, 5)]),
    "multi_dot_last_3d": lambda m: m.linalg.multi_dot([_ones(m, 2, 3), _ones(m, 3, 4, 1)]),
    "multi_dot_middle_1d": lambda m: m.linalg.multi_dot([_ones(m, 2), _ones(m, 2),
                                                         _ones(m, 2)]),
    "multi_dot_sizes": lambda m: m.linalg.multi_dot([_ones(m, 2, 3), _ones(m, 4, 5)]),
    "multi_dot_dtypes": lambda m: m.linalg.multi_dot([_ones(m, 2, 3),
                                                      _ones(m, 3, 4, dtype="float64")]),
    "multi_dot_long": lambda m: m.linalg.multi_dot([_ones(m, 2, 3),
                                                    _ones(m, 3, 4, dtype="int64")]),
    "vander_bool": lambda m: m.linalg.vander(_t(m, [True, False], "bool")),
    "vander_N1": lambda m: m.linalg.vander(_ones(m, 3), N=1),
    "vander_0d": lambda m: m.linalg.vander(_t(m, 2.0)),
    "vander_empty": lambda m: m.linalg.vander(_ones(m, 0)),
    "tensorinv_ind0": lambda m: m.linalg.tensorinv(_ones(m, 4, 6, 8, 3), ind=0),
    "tensorinv_sizes": lambda m: m.linalg.tensorinv(_ones(m, 4, 6, 8, 4)),
    "tensorinv_long": lambda m: m.linalg.tensorinv(_ones(m, 2, 2, 2, 2, dtype="int64")),
    "tensorsolve_sizes": lambda m: m.linalg.tensorsolve(_ones(m, 2, 3, 5), _ones(m, 2, 3)),
    "tensorsolve_dims": lambda m: m.linalg.tensorsolve(_ones(m, 6, 4, 2, 3), _ones(m, 6, 4),
                                                       dims=(0, 2)),
}


@pytest.mark.parametrize("case", sorted(COMPOSITE_ERRORS))
def test_composite_errors_match_torch(case, torch):
    same_error(COMPOSITE_ERRORS[case], torch, prefix=True)


@pytest.mark.parametrize("case", ["tensorinv", "tensorsolve"])
def test_singular_tensor_ops_raise_linalg_error_as_torch(case, torch):
    if case == "tensorinv":
        same_error(lambda m: m.linalg.tensorinv(_t(m, np.zeros((2, 2, 2, 2)))), torch,
                   prefix=True)
    else:
        same_error(lambda m: m.linalg.tensorsolve(_t(m, np.zeros((2, 3, 6))), _ones(m, 2, 3)),
                   torch, prefix=True)


def _graph(fn, seen=None):
    """The node names of a graph, depth first through next_functions."""
    if fn is None:
        return None
    return (type(fn).__name__, tuple(_graph(n) for n, _ in fn.next_functions))


CHAINS = {
    "three_left": [(2, 3), (3, 4), (4, 5)],
    "three_right": [(5, 1), (1, 5), (5, 1)],
    "four": [(1, 6), (6, 2), (2, 6), (6, 1)],
    "five": [(3, 4), (4, 1), (1, 5), (5, 2), (2, 6)],
    "vectors": [(3,), (3, 4), (4, 2), (2,)],
    "ties": [(2, 2), (2, 2), (2, 2), (2, 2)],
}


@pytest.mark.parametrize("case", sorted(CHAINS))
def test_multi_dot_order_and_graph_as_torch(case, torch):
    """The multiplication order shows in the graph: the nested MmBackward0 nodes under the
    final ViewBackward0 are torch's, input by input."""
    rng = np.random.default_rng(6)
    arrays = [rng.uniform(-1, 1, s) for s in CHAINS[case]]
    graphs = []
    for m in (tapegrad, torch):
        ts = [m.from_numpy(a).requires_grad_() for a in arrays]
        out = m.linalg.multi_dot(ts)
        graphs.append((_graph(out.grad_fn), tuple(out.shape)))
    assert graphs[0] == graphs[1]


# ---- out= ---------------------------------------------------------------------------------------
OUT_FUNCS = {
    "inv": lambda m, A, o: m.linalg.inv(A, out=o),
    "inverse": lambda m, A, o: m.inverse(A, out=o),
    "det": lambda m, A, o: m.linalg.det(A, out=o),
    "solve": lambda m, A, o: m.linalg.solve(A, m.ones(3, 2), out=o),
    "cholesky": lambda m, A, o: m.linalg.cholesky(A, out=o),
    "vector_norm": lambda m, A, o: m.linalg.vector_norm(A, out=o),
    "matrix_norm": lambda m, A, o: m.linalg.matrix_norm(A, out=o),
    "norm": lambda m, A, o: m.linalg.norm(A, out=o),
    "solve_triangular": lambda m, A, o: m.linalg.solve_triangular(A, m.ones(3, 2), upper=True,
                                                                  out=o),
    "pinv": lambda m, A, o: m.linalg.pinv(A, out=o),
    "matrix_rank": lambda m, A, o: m.linalg.matrix_rank(A, out=o),
    "cholesky_solve": lambda m, A, o: m.cholesky_solve(m.ones(3, 2), A, out=o),
    "cholesky_inverse": lambda m, A, o: m.cholesky_inverse(A, out=o),
    "cross": lambda m, A, o: m.linalg.cross(A, A, out=o),
    "matmul": lambda m, A, o: m.linalg.matmul(A, A, out=o),
    "tensorinv": lambda m, A, o: m.linalg.tensorinv(A, ind=1, out=o),
    "tensorsolve": lambda m, A, o: m.linalg.tensorsolve(A, m.ones(3), out=o),
    "vecdot": lambda m, A, o: m.linalg.vecdot(A, A, out=o),
    "multi_dot": lambda m, A, o: m.linalg.multi_dot([A, A, A], out=o),
}
OUT_KINDS = {
    "empty": lambda m: m.empty(0),
    "resized": lambda m: m.empty(5),
    "float64": lambda m: m.empty(0, dtype=m.float64),
    "int64": lambda m: m.empty(0, dtype=m.int64),
    "out_requires_grad": lambda m: m.empty(0, requires_grad=True),
    "input_requires_grad": lambda m: m.empty(0),
    "transposed": lambda m: m.empty(3, 3).mT,
}


def _out_case(m, func, kind):
    a = m.from_numpy(np.array([[4.0, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]], np.float32))
    o = OUT_KINDS[kind](m)
    if kind == "input_requires_grad":
        a.requires_grad_()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = OUT_FUNCS[func](m, a, o)
        except Exception as e:  # noqa: BLE001 - compared below
            return (type(e).__name__, str(e)), bool(w)
    return ("ok", tuple(r.shape), str(r.dtype).rsplit(".")[-1], r.requires_grad, r is o,
            _arr(r).tolist()), bool(w)


@pytest.mark.parametrize("kind", sorted(OUT_KINDS))
@pytest.mark.parametrize("func", sorted(OUT_FUNCS))
def test_out_as_torch(func, kind, torch):
    """out= as torch's for each function: resizing (and its warning), the dtype rule (exact,
    safely castable, or any), the error when an input or out requires grad (the composites
    instead record the copy into out), the values, and out itself returned."""
    (ours, warned), (theirs, twarned) = _out_case(tapegrad, func, kind), _out_case(torch,
                                                                                    func, kind)
    assert warned == twarned
    if theirs[0] != "ok":
        assert ours[0] == theirs[0] and ours[1].startswith(theirs[1]), (ours, theirs)
        return
    assert ours[:5] == theirs[:5]
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-5, atol=1e-6)


def test_out_write_bumps_version_and_keeps_a_good_layout():
    o = tapegrad.empty(3, 3).mT
    v = o._version
    tapegrad.linalg.inv(tapegrad.eye(3) * 2, out=o)
    assert o._version > v and o.stride() == (1, 3)
    np.testing.assert_array_equal(_arr(o), np.eye(3) / 2)


def _E(m, dt="float32"):
    return m.empty(0, dtype=getattr(m, dt))


TUPLE_OUT_FUNCS = {
    "inv_ex": (lambda m, A, o: m.linalg.inv_ex(A, out=o), ("float32", "int32")),
    "solve_ex": (lambda m, A, o: m.linalg.solve_ex(A, m.ones(3, 1), out=o), ("float32", "int32")),
    "cholesky_ex": (lambda m, A, o: m.linalg.cholesky_ex(A, out=o), ("float32", "int32")),
    "slogdet": (lambda m, A, o: m.linalg.slogdet(A, out=o), ("float32", "float32")),
    "lstsq": (lambda m, A, o: m.linalg.lstsq(A, m.ones(3, 1), out=o),
              ("float32", "float32", "int64", "float32")),
}
TUPLE_OUT_KINDS = {
    "tuple": lambda m, dts: tuple(_E(m, d) for d in dts),
    "list": lambda m, dts: [_E(m, d) for d in dts],
    "resized": lambda m, dts: tuple(m.empty(5, dtype=getattr(m, d)) for d in dts),
    "second_int64": lambda m, dts: (_E(m, dts[0]), _E(m, "int64"), *(_E(m, d) for d in dts[2:])),
    "first_float64": lambda m, dts: (_E(m, "float64"), *(_E(m, d) for d in dts[1:])),
    "short": lambda m, dts: (_E(m, dts[0]),),
    "tensor": lambda m, dts: _E(m, dts[0]),
    "requires_grad": lambda m, dts: (m.empty(0, requires_grad=True),
                                     *(_E(m, d) for d in dts[1:])),
}


@pytest.mark.parametrize("kind", sorted(TUPLE_OUT_KINDS))
@pytest.mark.parametrize("func", sorted(TUPLE_OUT_FUNCS))
def test_tuple_out_as_torch(func, kind, torch):
    res = []
    for m in (tapegrad, torch):
        f, dts = TUPLE_OUT_FUNCS[func]
        a = m.from_numpy(np.array([[4.0, 1, 0.5], [1, 3, 0.2], [0.5, 0.2, 2]], np.float32))
        o = TUPLE_OUT_KINDS[kind](m, dts)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                r = f(m, a, o)
            except Exception as e:  # noqa: BLE001 - compared below
                res.append(((type(e).__name__, str(e)), bool(w)))
                continue
        res.append(((type(r).__name__, r._fields if m is tapegrad else r.__match_args__,
                     all(x is y for x, y in zip(r, o)),
                     [(tuple(t.shape), str(t.dtype).rsplit(".")[-1]) for t in r],
                     [_arr(t).tolist() for t in r]), bool(w)))
    (ours, warned), (theirs, twarned) = res
    assert warned == twarned
    if len(theirs) == 2:
        assert ours[0] == theirs[0] and ours[1].startswith(theirs[1]), (ours, theirs)
        return
    assert ours[:4] == theirs[:4]
    for x, y in zip(ours[4], theirs[4]):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_tuple_out_writes_nothing_when_a_check_fails():
    o = (tapegrad.zeros(2), tapegrad.zeros(2, dtype=tapegrad.int64))
    with pytest.raises(RuntimeError, match="dtype int"):
        tapegrad.linalg.inv_ex(tapegrad.eye(3), out=o)
    assert o[0].shape == (2,) and o[0]._version == 0
