"""op_db rows of the solvers and products of tapegrad.linalg (ops/linalg_solvers.py, and
solve_ex in ops/linalg_extra.py). What rows cannot say (errors, LinAlgError, info, named-tuple
fields, strides, the full-matrix gradient of a Cholesky factor) is in
tests/test_linalg_solvers.py.

Matrices are well-conditioned (entries in (-1, 1) plus n I). cholesky_solve and
cholesky_inverse read one triangle of the factor but give it a full-matrix gradient (as torch),
which finite differences of the other triangle cannot see: their rows take the triangle by hand
(TrilBackward0 / TriuBackward0 before the op's node, in both frameworks). pinv with
``hermitian=True`` reads the lower triangle too: its row is compared with torch only, and
tests/test_linalg_solvers.py gradchecks it through a symmetric A + A^T.
"""
import numpy as np

from .op_db import NoGrad, OpInfo, SampleInput, _a
from .op_db_linalg import _noncontig, _wc, s_solve

S = SampleInput


def _tri(make, dt, *shape, upper=False):
    """A well-conditioned triangular factor (positive diagonal n + (-1, 1))."""
    a = _wc(make, dt, *shape)
    return np.triu(a) if upper else np.tril(a)


def s_solve_triangular(make, dt):
    out = []
    for upper in (True, False):
        for left in (True, False):
            for unit in (False, True):
                b = make(3, 2) if left else make(2, 3)
                out.append(S(_wc(make, dt, 3, 3), (b,),
                             {"upper": upper, "left": left, "unitriangular": unit},
                             name=f"{'upper' if upper else 'lower'}_{'left' if left else 'right'}"
                                  f"{'_unit' if unit else ''}"))
    return out + [
        S(_wc(make, dt, 2, 3, 3), (make(4, 1, 3, 2),), {"upper": True}, name="bcast"),
        S(_wc(make, dt, 3, 3), (make(2, 3, 1),), {"upper": False}, name="bcast_A"),
        S(_noncontig(_wc(make, dt, 2, 3, 3)), (_noncontig(make(2, 4, 3)),), {"upper": False},
          name="noncontig"),
        S(make(0, 0), (make(0, 2),), {"upper": True}, name="empty"),
        S(make(2, 0, 0), (make(3, 0),), {"upper": False, "left": False}, name="empty_batch"),
        S(_wc(make, dt, 3, 3), (make(3, 0),), {"upper": True}, name="no_columns")]


def _cholesky_solve(m, b, f, upper=False):
    return m.cholesky_solve(b, f.triu() if upper else f.tril(), upper)


def _cholesky_inverse(m, f, upper=False):
    return m.cholesky_inverse(f.triu() if upper else f.tril(), upper)


def s_cholesky_solve(make, dt):
    return [S(make(3, 2), (_tri(make, dt, 3, 3),), name="lower"),
            S(make(3, 2), (_tri(make, dt, 3, 3, upper=True), True), name="upper"),
            S(make(4, 1, 3, 2), (_tri(make, dt, 2, 3, 3),), name="bcast"),
            S(make(3, 1), (_tri(make, dt, 2, 3, 3, upper=True), True), name="bcast_factor"),
            S(_noncontig(make(2, 2, 3)), (_noncontig(_tri(make, dt, 2, 3, 3, upper=True)),),
              name="noncontig"),
            S(make(0, 2), (make(0, 0),), name="empty"),
            S(make(3, 0), (_tri(make, dt, 3, 3),), name="no_columns")]


def s_cholesky_inverse(make, dt):
    return [S(_tri(make, dt, 3, 3), name="lower"),
            S(_tri(make, dt, 3, 3, upper=True), (True,), name="upper"),
            S(_tri(make, dt, 2, 3, 3), name="batched"),
            S(_noncontig(_tri(make, dt, 2, 4, 4)), (True,), name="noncontig"),
            S(_tri(make, dt, 1, 1), name="1x1"),
            S(make(0, 0), name="empty"), S(make(2, 0, 0), name="empty_batch")]


def _rank2(dt, *batch):
    """4 x 3 matrices of rank 2 (the third column the sum of the first two)."""
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, batch + (4, 2))
    return np.asarray(np.concatenate([a, a.sum(-1, keepdims=True)], -1), dt)


def s_matrix_rank(make, dt):
    sym = make(2, 3, 3)
    return [S(make(3, 3), name="square"), S(make(4, 2), name="tall"), S(make(2, 5), name="wide"),
            S(_rank2(dt), name="rank2"), S(_rank2(dt, 2), name="rank2_batch"),
            S(_rank2(dt), (), {"atol": 0.5}, name="atol"),
            S(_rank2(dt), (), {"rtol": 0.3}, name="rtol"),
            S(_rank2(dt), (), {"atol": 0.0, "rtol": 0.2}, name="atol0_rtol"),
            S(make(2, 3, 3), (), {"atol": NoGrad(_a([0.05, 5.0], dt))}, name="atol_tensor"),
            S(sym + np.swapaxes(sym, -1, -2), (), {"hermitian": True}, name="hermitian"),
            S(_rank2(dt), (), {"tol": 0.5}, name="tol"),
            S(_noncontig(make(2, 4, 3)), name="noncontig"),
            S(make(0, 3), name="empty"), S(make(2, 3, 0), name="empty_batch"),
            S(np.zeros((3, 3), dt), name="zero")]


def s_pinv(make, dt):
    sym = _wc(make, dt, 2, 3, 3)
    return [S(_wc(make, dt, 3, 3), name="square"), S(make(4, 3), name="tall"),
            S(make(2, 4), name="wide"), S(make(2, 4, 3), name="batched"),
            S(make(3, 2, 5), name="batched_wide"),
            S(_noncontig(make(2, 4, 3)), name="noncontig"),
            S(sym + np.swapaxes(sym, -1, -2), (), {"hermitian": True}, name="hermitian",
              gradcheck=False),
            S(make(4, 3), (), {"atol": 1e-3}, name="atol"),
            S(make(4, 3), (), {"rtol": 1e-3}, name="rtol"),
            S(make(2, 4, 3), (), {"atol": NoGrad(_a([1e-3, 1e-4], dt)), "rtol": NoGrad(
                _a(1e-5, dt))}, name="tensor_tols"),
            S(make(4, 3), (1e-3,), name="rcond"),
            S(_rank2(dt), name="rank2", gradcheck=False),
            S(make(0, 3), name="empty"), S(make(2, 3, 0), name="empty_batch")]


def s_lstsq(make, dt):
    return [S(make(5, 3), (make(5, 2),), name="tall"),
            S(make(2, 5), (make(2, 3),), name="wide"),
            S(_wc(make, dt, 3, 3), (make(3, 1),), name="square"),
            S(make(5, 3), (make(5),), name="vector"),
            S(make(2, 5, 3), (make(2, 5),), name="batched_vector"),
            S(make(1, 5, 3), (make(2, 5, 2),), name="bcast_B"),
            S(make(2, 1, 5, 3), (make(1, 3, 5, 2),), name="bcast_both"),
            S(_noncontig(make(2, 3, 5)), (_noncontig(make(2, 2, 5)),), name="noncontig"),
            S(make(5, 3), (make(5, 2),), {"driver": "gelsd"}, name="gelsd"),
            S(make(2, 5, 3), (make(2, 5, 2),), {"driver": "gelss"}, name="gelss"),
            S(make(5, 3), (make(5, 2),), {"driver": "gels"}, name="gels"),
            S(make(3, 5), (make(3, 2),), {"driver": "gelsd"}, name="gelsd_wide"),
            S(_rank2(dt), (make(4, 2),), {"driver": "gelsd"}, name="gelsd_rank2",
              gradcheck=False),
            S(_rank2(dt), (make(4, 2),), name="rank2", gradcheck=False),
            S(make(5, 3), (make(5, 2),), {"rcond": 1e-3}, name="rcond"),
            S(make(0, 3), (make(0, 2),), name="empty")]


def s_linalg_cross(make, dt):
    return [S(make(2, 3), (make(2, 3),), name="rows"), S(make(4, 3), (make(1, 3),), name="bcast"),
            S(make(3, 2), (make(3, 2),), {"dim": 0}, name="dim0"),
            S(_noncontig(make(2, 3)), (make(3, 2),), {"dim": -2}, name="noncontig"),
            S(make(0, 3), (make(0, 3),), name="empty")]


def s_vecdot(make, dt):
    return [S(make(2, 3), (make(3),), name="bcast"), S(make(2, 3), (make(2, 1),), {"dim": 0},
                                                       name="dim0"),
            S(make(4), (make(4),), name="1d"), S(_noncontig(make(4, 2)), (make(4),), name="noncontig"),
            S(make(0, 3), (make(3),), name="empty")]


def s_multi_dot(make, dt):
    return [S([make(2, 3), make(3, 4)], name="two"),
            S([make(2, 3), make(3, 4), make(4, 5)], name="three_left"),
            S([make(5, 1), make(1, 5), make(5, 1)], name="three_right"),
            S([make(3), make(3, 4), make(4)], name="vectors"),
            S([make(3), make(3, 2)], name="row"), S([make(2, 3), make(3)], name="column"),
            S([make(3, 4), make(4, 1), make(1, 5), make(5, 2), make(2, 6)], name="chain5"),
            S([make(1, 6), make(6, 2), make(2, 6), make(6, 1)], name="chain4"),
            S([_noncontig(make(3, 2)), make(3, 4), make(4, 2)], name="noncontig"),
            S([make(0, 3), make(3, 4)], name="empty_rows"),
            S([make(2, 0), make(0, 3), make(3, 2)], name="empty_inner"),
            S([_a([[1, 2], [3, 4]], np.int64), _a([[1], [2]], np.int64)], name="int")]


def s_linalg_matmul(make, dt):
    return [S(make(2, 3), (make(3),), name="mv"), S(make(2, 2, 3), (make(3, 4),), name="bcast"),
            S(make(3), (make(3),), name="dot")]


def s_linalg_diagonal(make, dt):
    return [S(make(2, 3, 3), name="default"),
            S(make(2, 3, 4), (), {"offset": 1, "dim1": 0, "dim2": 2}, name="offset_dims"),
            S(make(3, 4), (), {"offset": -1}, name="below")]


def s_vander(make, dt):
    return [S(make(3), name="default"), S(make(2, 3), (), {"N": 5}, name="batched_N"),
            S(make(4), (), {"N": 2}, name="N2"), S(_noncontig(make(3, 2)), name="noncontig"),
            S(make(0, 3), name="empty_batch"), S(_a([1, 2, 3], np.int32), name="int32")]


def s_tensorinv(make, dt):
    def wc(*shape, ind=2):
        n = int(np.prod(shape[ind:]))
        return (make(n, n, low=-1.0, high=1.0) + n * np.eye(n, dtype=dt)).reshape(shape)
    return [S(wc(4, 6, 8, 3), name="4d"), S(wc(6, 2, 3, ind=1), (1,), name="ind1"),
            S(wc(3, 2, 6, ind=2), (2,), name="ind2_3d")]


def s_tensorsolve(make, dt):
    a = (make(6, 6, low=-1.0, high=1.0) + 6 * np.eye(6, dtype=dt))
    return [S(a.reshape(2, 3, 6), (make(2, 3),), name="default"),
            S(a.reshape(6, 2, 3), (make(6),), name="res2d"),
            S(np.ascontiguousarray(np.moveaxis(a.reshape(2, 3, 2, 3), (2, 3), (0, 1))),
              (make(2, 3),), {"dims": (0, 1)}, name="dims")]


rows = [
    OpInfo("linalg.solve_ex", sample_inputs_func=s_solve),
    OpInfo("linalg.solve_triangular", sample_inputs_func=s_solve_triangular),
    OpInfo("cholesky_solve", op=lambda b, f, *a: _cholesky_solve(_tapegrad(), b, f, *a),
           torch_op=lambda torch: lambda b, f, *a: _cholesky_solve(torch, b, f, *a),
           sample_inputs_func=s_cholesky_solve),
    OpInfo("cholesky_inverse", op=lambda f, *a: _cholesky_inverse(_tapegrad(), f, *a),
           torch_op=lambda torch: lambda f, *a: _cholesky_inverse(torch, f, *a),
           sample_inputs_func=s_cholesky_inverse),
    OpInfo("linalg.matrix_rank", sample_inputs_func=s_matrix_rank, supports_grad=False),
    OpInfo("linalg.pinv", sample_inputs_func=s_pinv),
    OpInfo("linalg.lstsq", sample_inputs_func=s_lstsq),
    OpInfo("linalg.cross", sample_inputs_func=s_linalg_cross),
    OpInfo("linalg.vecdot", sample_inputs_func=s_vecdot),
    OpInfo("linalg.multi_dot", sample_inputs_func=s_multi_dot),
    OpInfo("linalg.matmul", sample_inputs_func=s_linalg_matmul),
    OpInfo("linalg.diagonal", sample_inputs_func=s_linalg_diagonal),
    OpInfo("linalg.vander", sample_inputs_func=s_vander),
    OpInfo("linalg.tensorinv", sample_inputs_func=s_tensorinv),
    OpInfo("linalg.tensorsolve", sample_inputs_func=s_tensorsolve),
]


def _tapegrad():
    import tapegrad
    return tapegrad


name_differences: dict = {}
