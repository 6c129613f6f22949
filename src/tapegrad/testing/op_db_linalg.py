"""op_db rows of tapegrad.linalg and its top-level aliases (ops/linalg_extra.py). What rows cannot
say (errors, LinAlgError, named-tuple fields, the singular det gradient with create_graph) is in
tests/test_linalg_ops.py.

Matrices are kept well-conditioned (entries in (-1, 1) plus n I, so the finite differences of
gradcheck are accurate); cholesky's gradcheck goes through ``A + A^T`` as torch's OpInfo does
(cholesky reads one triangle, its gradient is the symmetric one). Exactly singular samples are
compared with torch only: the plain gradient of det there is torch's LU-path zero, not the
derivative.
"""
import numpy as np

from .op_db import Attr, OpInfo, SampleInput, _a, _i

S = SampleInput


def _wc(make, dt, *shape):
    """A batch of well-conditioned matrices: entries uniform in (-1, 1) plus n I (diagonally
    dominant)."""
    n = shape[-1]
    return make(*shape, low=-1.0, high=1.0) + np.asarray(n * np.eye(n), dt)


def _spd_half(make, dt, *shape):
    """X with X + X^T symmetric positive-definite (what the cholesky rows factor)."""
    m = make(*shape, low=-1.0, high=1.0)
    n = shape[-1]
    return np.asarray((m @ np.swapaxes(m, -1, -2) + n * np.eye(n)) / 2, dt)


def _noncontig(a):
    return np.swapaxes(a, -1, -2)


def s_square(make, dt):
    return [S(_wc(make, dt, 3, 3), name="3x3"), S(_wc(make, dt, 2, 3, 3), name="batched"),
            S(_wc(make, dt, 2, 1, 2, 2), name="batch2"), S(_wc(make, dt, 1, 1), name="1x1"),
            S(_noncontig(_wc(make, dt, 2, 4, 4)), name="noncontig"),
            S(make(0, 0), name="empty"), S(make(2, 0, 0), name="empty_batch"),
            S(make(0, 3, 3), name="zero_batch")]


def s_det(make, dt):
    neg = _wc(make, dt, 3, 3)[[1, 0, 2]]   # a row swap: negative determinant
    return s_square(make, dt) + [
        S(neg, name="negative"),
        S(_a([[1.0, 2.0], [2.0, 4.0]], dt), name="singular", gradcheck=False),
        S(_a([[[1.0, 0.0], [0.0, 0.0]], [[2.0, 1.0], [1.0, 3.0]]], dt), name="singular_batch",
          gradcheck=False)]


def s_slogdet(make, dt):
    """No singular samples: slogdet's gradient there is non-finite, and which infinities torch's
    LU solve produces is LAPACK's rounding (tapegrad gives NaN)."""
    return [s for s in s_det(make, dt) if not s.name.startswith("singular")]


def s_logdet(make, dt):
    neg = _wc(make, dt, 3, 3)[[1, 0, 2]]
    return s_square(make, dt) + [S(neg, name="negative_nan", gradcheck=False)]


def s_solve(make, dt):
    return [S(_wc(make, dt, 3, 3), (make(3, 2),), name="matrix"),
            S(_wc(make, dt, 3, 3), (make(3),), name="vector"),
            S(_wc(make, dt, 2, 3, 3), (make(2, 3),), name="batched_vector"),
            S(_wc(make, dt, 2, 3, 3), (make(3, 1),), name="bcast_B"),
            S(_wc(make, dt, 3, 3), (make(2, 3, 4),), name="bcast_A"),
            S(_wc(make, dt, 2, 1, 2, 2), (make(3, 2, 2),), name="bcast_both"),
            S(_noncontig(_wc(make, dt, 3, 3)), (_noncontig(make(2, 3)),), name="noncontig"),
            S(make(0, 0), (make(0, 2),), name="empty"),
            S(_wc(make, dt, 3, 3), (make(2, 3),), {"left": False}, name="right"),
            S(_wc(make, dt, 2, 3, 3), (make(4, 1, 2, 3),), {"left": False}, name="right_bcast")]


def s_cholesky(make, dt):
    return [S(_spd_half(make, dt, 3, 3), name="3x3"),
            S(_spd_half(make, dt, 2, 3, 3), name="batched"),
            S(_spd_half(make, dt, 2, 3, 3), (), {"upper": True}, name="upper"),
            S(_spd_half(make, dt, 1, 1), name="1x1"),
            S(make(0, 0), name="empty")]


def s_cholesky_legacy(make, dt):
    """torch.cholesky on the symmetric matrices the linalg rows factor (A + A^T is taken by
    hand: the row is also the method's, which must see the same input)."""
    def sym(a):
        return np.asarray(a + np.swapaxes(a, -1, -2), dt)
    return [S(sym(_spd_half(make, dt, 3, 3)), name="3x3", gradcheck=False),
            S(sym(_spd_half(make, dt, 2, 3, 3)), (True,), name="upper", gradcheck=False),
            S(make(0, 0), name="empty")]


def s_matrix_power(make, dt):
    a = _wc(make, dt, 3, 3) / 3
    return [S(a, (k,), name=f"n{k}") for k in (0, 1, 2, 3, 5, 6, -1, -2, -3)] + [
        S(_wc(make, dt, 2, 2, 2) / 2, (4,), name="batched"),
        S(_noncontig(_wc(make, dt, 2, 3, 3)) / 3, (-2,), name="noncontig"),
        S(make(0, 0), (3,), name="empty"), S(make(0, 2, 2), (-2,), name="zero_batch"),
        S(_i([[1, 2], [3, 4]]), (3,), name="int")]


def s_vector_norm(make, dt):
    return [S(make(2, 3), name="default"), S(make(2, 3), (1,), name="ord1"),
            S(make(2, 3, 4), (3, (0, 2)), name="ord3_tuple"),
            S(make(2, 3), (float("inf"), 1, True), name="inf_keepdim"),
            S(make(2, 3), (float("-inf"), -1), name="neginf"),
            S(make(2, 3), (0,), name="ord0"),
            S(make(2, 3, low=0.5, high=2.0), (0.5,), name="ord0.5"),
            S(make(), name="0d"), S(_noncontig(make(2, 3)), (2, 0), name="noncontig"),
            S(make(2, 3), (), {"dtype": Attr("float64")}, name="dtype")]


def s_matrix_norm(make, dt):
    out = []
    for o in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        out += [S(make(3, 4), (o,), name=f"{o}"),
                S(make(2, 3, 4), (o, (0, 2)), name=f"{o}_dims"),
                S(make(2, 3, 4), (o, (-1, -3), True), name=f"{o}_swapped_keepdim")]
    return out + [S(make(2, 3, 3), name="default_batched"),
                  S(make(4, 2), ("nuc",), name="nuc_tall"), S(make(2, 4), (2,), name="2_wide"),
                  S(make(2, 3), (), {"dtype": Attr("float64")}, name="dtype")]


def s_nuclear_norm(make, dt):
    return [S(make(3, 4), name="2d"), S(make(4, 3), (True,), name="keepdim"),
            S(make(2, 3, 4), name="batched"), S(make(2, 3, 4), ((0, 2),), name="dims"),
            S(make(2, 3, 4), ((2, 1), True), name="dims_keepdim")]


def s_frobenius_norm(make, dt):
    return [S(make(3, 4), ((0, 1),), name="2d"), S(make(3, 4), (1,), name="int_dim"),
            S(make(3, 4), ((1,),), name="one_dim"),
            S(make(2, 3, 4), ((-1, 0), True), name="keepdim")]


def s_linalg_norm(make, dt):
    return [S(make(2, 3, 4), name="none_all"), S(make(3, 4), (1,), name="matrix_ord1"),
            S(make(4), (3,), name="vector_ord3"), S(make(3, 4), ("fro",), name="fro"),
            S(make(2, 3, 4), (float("inf"), (1, 2)), name="matrix_dims"),
            S(make(3, 4), ("nuc",), name="nuc"), S(make(3, 4), (-2,), name="matrix_ord-2"),
            S(make(2, 3, 4), (1.5, 2), name="vector_dim"),
            S(make(2, 3, 4), (None, (0, 1), True), name="none_dims_keepdim"),
            S(make(2, 3), (), {"dtype": Attr("float64")}, name="dtype")]


rows = [
    OpInfo("linalg.inv", sample_inputs_func=s_square),
    OpInfo("inverse", sample_inputs_func=s_square),
    OpInfo("linalg.inv_ex", sample_inputs_func=s_square),
    OpInfo("linalg.det", sample_inputs_func=s_det),
    OpInfo("det", sample_inputs_func=s_det),
    OpInfo("linalg.slogdet", sample_inputs_func=s_slogdet),
    OpInfo("slogdet", sample_inputs_func=s_slogdet),
    OpInfo("logdet", sample_inputs_func=s_logdet),
    OpInfo("linalg.solve", sample_inputs_func=s_solve),
    OpInfo("linalg.cholesky",
           op=lambda x, **k: _linalg().cholesky(x + x.mT, **k),
           torch_op=lambda torch: lambda x, **k: torch.linalg.cholesky(x + x.mT, **k),
           sample_inputs_func=s_cholesky),
    OpInfo("linalg.cholesky_ex",
           op=lambda x, **k: _linalg().cholesky_ex(x + x.mT, **k),
           torch_op=lambda torch: lambda x, **k: torch.linalg.cholesky_ex(x + x.mT, **k),
           sample_inputs_func=s_cholesky),
    OpInfo("cholesky", sample_inputs_func=s_cholesky_legacy),
    OpInfo("linalg.matrix_power", sample_inputs_func=s_matrix_power),
    OpInfo("matrix_power", sample_inputs_func=s_matrix_power),
    OpInfo("linalg.vector_norm", sample_inputs_func=s_vector_norm),
    OpInfo("linalg.matrix_norm", sample_inputs_func=s_matrix_norm),
    OpInfo("linalg.norm", sample_inputs_func=s_linalg_norm),
    OpInfo("nuclear_norm", sample_inputs_func=s_nuclear_norm),
    OpInfo("frobenius_norm", sample_inputs_func=s_frobenius_norm),
]


def _linalg():
    import tapegrad.linalg
    return tapegrad.linalg


name_differences: dict = {}
