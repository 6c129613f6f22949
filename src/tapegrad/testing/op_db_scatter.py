"""op_db rows of the ops in tapegrad.ops.scatter.

Index samples avoid repeated targets where torch leaves the winner unspecified (scatter,
index_copy, index_put without accumulate); the ops that accumulate get repeats on purpose.
"""
import numpy as np

from .op_db import Attr, NoGrad, OpInfo, SampleInput, _a, _i

S = SampleInput
_NAN, _INF = float("nan"), float("inf")


# ---- scatter family ------------------------------------------------------------------------------
def s_scatter(make, dt):
    i0 = _i([[0, 1, 2, 0], [2, 0, 1, 1]])          # distinct rows in each column
    i1 = _i([[3, 0], [1, 2], [0, 3]])              # distinct columns in each row
    return [S(make(3, 4), (0, i0, make(2, 4)), name="dim0"),
            S(make(3, 4), (1, i1, make(3, 2)), name="dim1"),
            S(make(3, 4), (-1, i1, 2.5), name="value"),
            S(make(3, 4), (0, i0.astype(np.int32), make(2, 4)), name="int32"),
            S(make(3, 4), (0, _i(np.zeros((0, 4))), make(0, 4)), name="empty_index"),
            S(make(), (0, _i(0), make()), name="0d"),
            S(make(4, 3).T, (1, _i([[0, 1, 2, 3], [3, 2, 1, 0]]), make(2, 4)), name="noncontig"),
            S(_i([[1, 2], [3, 4]]), (0, _i([[1, 0]]), 7), name="int_value")]


def s_scatter_add(make, dt):
    rep = _i([[0, 0, 2, 0], [0, 1, 2, 2]])
    return [S(make(3, 4), (0, rep, make(2, 4)), name="repeat"),
            S(make(3, 4), (-1, _i([[3, 3], [0, 1], [2, 2]]), make(3, 2)), name="negdim"),
            S(make(3, 4), (1, _i([[0, 0, 0]]).astype(np.int32), make(1, 3)), name="int32"),
            S(make(3, 4), (0, _i(np.zeros((0, 4))), make(0, 4)), name="empty_index"),
            S(make(), (0, _i([0, 0]), make(2)), name="0d_self"),
            S(make(4, 3).T, (0, rep, make(2, 4)), name="noncontig")]


def s_scatter_reduce(make, dt):
    rep = _i([[0, 0, 2, 0], [0, 1, 2, 2], [1, 1, 0, 2]])
    out = []
    for red in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            out.append(S(make(3, 4), (0, rep, make(3, 4), red), {"include_self": inc},
                         name=f"{red}_{'self' if inc else 'noself'}"))
    lone = make(3, 4)
    lone[1, 0] = 0.0        # a lone zero among the values reduced into one place
    two = make(3, 4)
    two[0, 0] = two[1, 0] = 0.0    # two zeros reduced into one place: src grad 0 there
    out += [S(make(3, 4), (0, rep, lone, "prod"), name="prod_one_zero"),
            S(make(3, 4), (0, rep, two, "prod"), name="prod_two_zeros", gradgradcheck=False),
            S(make(3, 4), (-1, _i([[3, 3], [0, 1], [2, 2]]), make(3, 2), "mean"), name="negdim"),
            S(make(), (0, _i([0, 0]), make(2), "sum"), name="0d_self"),
            S(_i([0, 1, 2, 3]), (0, _i([1, 1]), _i([3, -5]), "mean"), name="int_mean")]
    return out


def s_index_add(make, dt):
    return [S(make(4, 3), (0, _i([2, 0, 2]), make(3, 3)), name="repeat"),
            S(make(4, 3), (1, _i([1, 1]), make(4, 2)), {"alpha": 2.5}, name="alpha"),
            S(make(4, 3), (-1, _i([2]).astype(np.int32), make(4, 1)), name="int32"),
            S(make(4, 3), (0, _i(1), make(1, 3)), name="0d_index"),
            S(make(4, 3), (0, _i([]), make(0, 3)), name="empty_index"),
            S(make(), (0, _i(0), make()), name="0d"),
            S(make(3, 4).T, (0, _i([3, 3]), make(2, 3)), name="noncontig")]


def s_index_copy(make, dt):
    return [S(make(4, 3), (0, _i([2, 0]), make(2, 3)), name="dim0"),
            S(make(4, 3), (-1, _i([1, 0, 2]), make(4, 3)), name="negdim"),
            S(make(4, 3), (0, _i(3), make(1, 3)), name="0d_index"),
            S(make(4, 3), (1, _i([]), make(4, 0)), name="empty_index"),
            S(make(), (0, _i(0), make()), name="0d"),
            S(make(3, 4).T, (1, _i([2]), make(4, 1)), name="noncontig")]


def s_index_fill(make, dt):
    return [S(make(4, 3), (0, _i([2, 0]), 1.5), name="number"),
            S(make(4, 3), (1, _i([2, 2, 0]), make()), name="tensor_repeat"),
            # (torch's backward fails on a negative index with a tensor value: a number here)
            S(make(4, 3), (1, _i([-1, 0, -3]), 0.5), name="negative"),
            S(make(4, 3), (-1, _i(1), -2), name="0d_index"),
            S(make(4, 3), (0, _i([]), make()), name="empty_index"),
            S(make(), (0, _i([0]), make()), name="0d"),
            S(make(3, 4).T, (0, _i([3]), NoGrad(_a(2.0, np.float64))), name="f64_value")]


def s_index_put(make, dt):
    mask = np.array([[True, False, True], [False, False, True], [True, True, False],
                     [False, False, False]])
    return [S(make(4, 3), ((_i([2, 0]),), make(2, 3)), name="rows"),
            S(make(4, 3), ((_i([2, 0, 2]),), make(3, 3), True), name="accumulate_repeat"),
            S(make(4, 3), ((_i([0, 3]), _i([2, 1])), make(2)), name="pairs"),
            S(make(4, 3), ((_i([0, 0, 3]), _i([2, 2, 1])), make(3)), {"accumulate": True},
              name="pairs_accumulate"),
            S(make(4, 3), ((_i([1, 3]),), make(3)), name="broadcast_values"),
            S(make(4, 3), ((mask,), make(5)), name="mask"),
            S(make(4, 3), ((_i([[0], [2]]), _i([1, 2])), make()), name="index_broadcast"),
            S(make(3, 4).T, ((_i([1]).astype(np.int32),), make(1, 3)), name="noncontig")]


def s_take_along_dim(make, dt):
    return [S(make(3, 4), (_i([[0, 3], [1, 1], [2, 0]]), 1), name="dim1"),
            S(make(3, 4), (_i([[2, 0, 1, 1]]), 0), name="broadcast_index"),
            S(make(3, 1), (_i([[0, 0, 0]]), -1), name="broadcast_input"),
            S(make(3, 4), (_i([[5], [-1], [-6]]), 1), name="wrapped"),
            S(make(3, 4), (_i([[7, 0], [11, 11]]),), name="flat"),
            S(make(4, 3).T, (_i([[1], [0], [3]]), 1), name="noncontig")]


def s_take(make, dt):
    return [S(make(3, 4), (_i([[0, 11], [-1, 5]]),), name="2d_index"),
            S(make(3, 4), (_i([2, 2, 2]),), name="repeat"),
            S(make(3, 4), (_i(4),), name="0d_index"),
            S(make(), (_i([0, -1]),), name="0d"),
            S(make(3, 4), (_i([]),), name="empty_index"),
            S(make(4, 3).T, (_i([1, 4]),), name="noncontig")]


def s_masked_select(make, dt):
    m = np.array([[True, False, True, False], [False, False, True, True], [True, True, True,
                                                                             False]])
    return [S(make(3, 4), (m,), name="same"),
            S(make(3, 4), (m[0],), name="broadcast_mask"),
            S(make(4), (m,), name="broadcast_input"),
            S(make(), (np.array(True),), name="0d"),
            S(make(3, 4), (np.zeros((3, 4), bool),), name="none_selected"),
            S(make(4, 3).T, (m,), name="noncontig")]


def s_masked_scatter(make, dt):
    m = np.array([[True, False, True, False], [False, False, True, True], [True, True, True,
                                                                             False]])
    return [S(make(3, 4), (m, make(7)), name="exact"),
            S(make(3, 4), (m, make(3, 4)), name="more_source"),
            S(make(3, 4), (m[1], make(8)), name="broadcast_mask"),
            S(make(4), (m, make(2, 5)), name="broadcast_input"),
            S(make(), (np.array(True), make(2)), name="0d"),
            S(make(4, 3).T, (m, make(12)), name="noncontig")]


def s_nonzero(make, dt):
    x = _a([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]], dt)
    return [S(x, name="2d"), S(x, (), {"as_tuple": True}, name="as_tuple"),
            S(_a(2.0, dt), name="0d"), S(_a(0.0, dt), (), {"as_tuple": True}, name="0d_zero"),
            S(np.array([True, False, True]), name="bool"), S(_i([[0, 0], [0, 0]]), name="none")]


def s_argwhere(make, dt):
    return [S(_a([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]], dt), name="2d"),
            S(_a(2.0, dt), name="0d"), S(np.array([True, False, True]), name="bool")]


def s_count_nonzero(make, dt):
    x = _a([[0.0, 1.5, 0.0], [-2.0, 0.0, 3.0]], dt)
    return [S(x, name="all"), S(x, (0,), name="dim"), S(x, (-1,), name="negdim"),
            S(x, ((0, 1),), name="tuple"), S(_a(2.0, dt), (0,), name="0d"),
            S(np.array([True, False, True]), name="bool")]


# ---- shape-like ops ----------------------------------------------------------------------------------
def s_tril(make, dt):
    return [S(make(3, 4), name="default"), S(make(3, 4), (1,), name="above"),
            S(make(4, 3), (-1,), name="below"), S(make(2, 3, 3), (), {"diagonal": 2},
                                                  name="batch"),
            S(make(4, 3).T, name="noncontig"), S(make(0, 3), name="empty"),
            S(_i([[1, 2], [3, 4]]), name="int"), S(np.ones((2, 2), bool), name="bool")]


def s_roll(make, dt):
    return [S(make(3, 4), (1, 0), name="dim0"), S(make(3, 4), (-5, -1), name="neg"),
            S(make(3, 4), ((1, 2), (0, 1)), name="tuple"), S(make(3, 4), (2,), name="flat"),
            S(make(3, 4), ((1, 1), (1, 1)), name="same_dim"), S(make(), (3,), name="0d"),
            S(make(0, 3), (1, 1), name="empty"), S(make(4, 3).T, (1, 1), name="noncontig")]


def s_flip(make, dt):
    return [S(make(3, 4), ((0,),), name="dim0"), S(make(3, 4), ([0, -1],), name="both"),
            S(make(2, 3, 4), ((2, 0),), name="3d"), S(make(3, 4), ((),), name="none"),
            S(make(), ((0,),), name="0d"), S(make(4, 3).T, ((1,),), name="noncontig"),
            S(_i([[1, 2], [3, 4]]), ((1,),), name="int")]


def s_fliplr(make, dt):
    return [S(make(3, 4), name="2d"), S(make(2, 3, 4), name="3d"),
            S(make(4, 3).T, name="noncontig")]


def s_flipud(make, dt):
    return [S(make(3, 4), name="2d"), S(make(5), name="1d"), S(make(4, 3).T, name="noncontig")]


def s_rot90(make, dt):
    return [S(make(3, 4), name="default"), S(make(3, 4), (2,), name="k2"),
            S(make(3, 4), (3,), name="k3"), S(make(3, 4), (-1,), name="kneg"),
            S(make(3, 4), (5, (1, 0)), name="k5_swapped"), S(make(3, 4), (0,), name="k0"),
            S(make(2, 3, 4), (1, (-1, 0)), name="3d"), S(make(4, 3).T, name="noncontig")]


def s_diag(make, dt):
    return [S(make(3), name="vector"), S(make(3), (1,), name="vector_above"),
            S(make(3), (-2,), name="vector_below"), S(make(3, 4), name="matrix"),
            S(make(3, 4), (1,), name="matrix_above"), S(make(3, 4), (-1,), name="matrix_below"),
            S(make(3, 4), (7,), name="matrix_past_edge"), S(make(4, 3).T, name="noncontig")]


def s_diagflat(make, dt):
    return [S(make(3), name="vector"), S(make(2, 3), name="matrix"),
            S(make(2, 2), (1,), name="above"), S(make(3), (-2,), name="below"),
            S(make(), name="0d"), S(make(0), (2,), name="empty"),
            S(make(4, 3).T, (-1,), name="noncontig"),
            S(_i([[1, 2], [3, 4]]), (1,), name="int")]


def s_diagonal(make, dt):
    return [S(make(3, 4), name="default"), S(make(3, 4), (1,), name="above"),
            S(make(3, 4), (-2,), name="below"), S(make(3, 4), (0, 1, 0), name="swapped"),
            S(make(2, 3, 4), (1, -1, 0), name="3d"), S(make(3, 4), (9,), name="empty"),
            S(make(4, 3).T, (), {"offset": 1}, name="noncontig")]


def s_diag_embed(make, dt):
    return [S(make(3), name="1d"), S(make(2, 3), name="2d"), S(make(2, 3), (1,), name="above"),
            S(make(2, 3), (-1, 0, 2), name="dims"), S(make(2, 3), (0, -1, 0), name="swapped"),
            S(make(3, 2).T, name="noncontig")]


def s_trace(make, dt):
    return [S(make(3, 3), name="square"), S(make(3, 4), name="wide"), S(make(4, 2), name="tall"),
            S(make(0, 3), name="empty"), S(_i([[1, 2], [3, 4]]), name="int"),
            S(make(4, 3).T, name="noncontig")]


def s_movedim(make, dt):
    return [S(make(2, 3, 4), (0, 2), name="int"), S(make(2, 3, 4), ((0, 1), (2, 0)), name="tuple"),
            S(make(2, 3, 4), (-1, 0), name="neg"), S(make(), (0, 0), name="0d"),
            S(make(2, 3, 4), ([0, 1, 2], [0, 1, 2]), name="identity")]


def s_tile(make, dt):
    return [S(make(2, 3), ((2,),), name="short"), S(make(2, 3), ((2, 1, 2),), name="long"),
            S(make(2, 3), ((),), name="empty_dims"), S(make(), ((2, 3),), name="0d"),
            S(make(2, 3), ((0, 1),), name="zero"), S(make(3, 2).T, ((1, 2),), name="noncontig")]


def _stack_samples(make, dt):
    return [S([make(2, 3), make(2, 3)], name="2d"), S([make(3), make(3)], name="1d"),
            S([make(), make()], name="0d"),
            S([make(2, 3), NoGrad(_i([[1, 2, 3], [4, 5, 6]]))], name="promote")]


def s_hstack(make, dt):
    return _stack_samples(make, dt) + [S([make(2, 3), make(2, 1)], name="widths"),
                                       S((make(2), make(3)), name="tuple")]


def s_vstack(make, dt):
    return _stack_samples(make, dt) + [S([make(2, 3), make(3)], name="mixed")]


def s_dstack(make, dt):
    return _stack_samples(make, dt) + [S([make(2, 3, 1), make(2, 3)], name="mixed")]


def s_column_stack(make, dt):
    return _stack_samples(make, dt) + [S([make(3, 2), make(3)], name="mixed"),
                                       S([make(), make(1)], name="0d_1d")]


def s_meshgrid(make, dt):
    return [S(make(3), (make(2),), {"indexing": "ij"}, name="ij"),
            S(make(3), (make(2), make(4)), {"indexing": "xy"}, name="xy"),
            S([make(3), make(2)], (), {"indexing": "xy"}, name="list"),
            S(make(), (make(2),), {"indexing": "ij"}, name="0d"),
            S(make(3), (), {"indexing": "xy"}, name="one")]


def s_cumprod(make, dt):
    z1 = make(2, 4)
    z1[0, 1] = 0.0
    z2 = make(3, 4)
    z2[1, 0] = z2[1, 2] = 0.0
    z2[0, 3] = z2[2, 3] = 0.0
    return [S(make(2, 3), (0,), name="dim0"), S(make(2, 3), (-1,), name="neg"),
            S(make(2, 3, 4), (1,), name="3d"), S(make(), (0,), name="0d"),
            S(z1, (1,), name="one_zero"), S(z2, (1,), name="zeros"), S(z2, (0,), name="zeros_dim0"),
            S(make(0, 3), (0,), name="empty"), S(make(3, 2).T, (1,), name="noncontig"),
            S(_i([[1, 2], [3, 4]]), (1,), name="int"),
            S(make(2, 3), (1,), {"dtype": Attr("float64")}, name="dtype")]


def s_diff(make, dt):
    return [S(make(3, 4), name="default"), S(make(3, 4), (2,), name="n2"),
            S(make(3, 4), (1, 0), name="dim0"),
            S(make(3, 4), (1, -1, make(3, 1), make(3, 2)), name="prepend_append"),
            S(make(3, 4), (), {"append": make(1, 4), "dim": 0}, name="append_kw"),
            S(make(3, 4), (9,), name="n_past_size"), S(make(3, 4), (0,), name="n0"),
            S(np.array([True, False, False, True]), name="bool"),
            S(_i([1, 4, 9, 16]), (2,), name="int"), S(make(4, 3).T, name="noncontig")]


def s_repeat_interleave(make, dt):
    return [S(make(2, 3), (2,), name="flat"), S(make(2, 3), (2, 1), name="dim1"),
            S(make(2, 3), (3, -2), name="negdim"), S(make(2, 3), (_i([1, 0, 2]), 1), name="tensor"),
            S(make(2, 3), (_i([2]), 0), name="tensor_one"), S(make(2, 3), (_i(2),), name="tensor_0d"),
            S(make(), (3,), name="0d"), S(make(2, 3), (0, 0), name="zero"),
            S(make(3, 2).T, (2, 0), name="noncontig"),
            S(make(2, 3), (_i([1, 2, 1]).astype(np.int32), 1), name="int32_counts")]


# ---- elementwise ------------------------------------------------------------------------------------
def _binary(make, dt):
    return [S(make(2, 3), (make(2, 3),), name="same"), S(make(2, 3), (make(3),), name="bcast"),
            S(make(), (make(2, 3),), name="0d_lhs"), S(make(2, 3), (make(),), name="0d_rhs"),
            S(make(3, 2).T, (make(2, 3),), name="noncontig"),
            S(make(0, 3), (make(3),), name="empty")]


def s_atan2(make, dt):
    return _binary(make, dt) + [
        S(_a([0.0, 1.0, 0.0, -1.0], dt), (_a([0.0, 0.0, -1.0, -1.0], dt),), name="axes",
          gradcheck=False),
        S(_i([1, -2, 3]), (_i([2, 2, -1]),), name="int")]


def s_hypot(make, dt):
    return _binary(make, dt) + [S(make(2, 3), (NoGrad(_a([1.0, -2.0, 3.0], np.float64)),),
                                  name="f64_other")]


def s_logaddexp(make, dt):
    return _binary(make, dt) + [
        S(_a([-_INF, 1.0, 1e4], dt), (_a([2.0, _INF, 1e4 + 1.0], dt),), name="extremes",
          gradcheck=False)]


def s_xlogy(make, dt):
    def pos(*shape):
        return make(*shape, low=0.5, high=2.0)
    x0 = make(2, 3)
    x0[0, 1] = 0.0
    return [S(make(2, 3), (pos(2, 3),), name="same"), S(make(2, 3), (pos(3),), name="bcast"),
            S(x0, (pos(2, 3),), name="zero_self"), S(make(2, 3), (2.5,), name="number_other"),
            S(x0, (3,), name="number_other_zero_self"), S(2.0, (pos(2, 3),), name="number_self"),
            S(_i([0, 1, 2]), (_i([0, 2, 3]),), name="int"),
            S(np.array([True, False]), (pos(2),), name="bool_self"),
            S(make(), (pos(),), name="0d")]


def s_lerp(make, dt):
    return [S(make(2, 3), (make(2, 3), 0.3), name="small_weight"),
            S(make(2, 3), (make(2, 3), 0.8), name="large_weight"),
            S(make(2, 3), (make(3), -0.7), name="bcast_neg_weight"),
            S(make(2, 3), (make(2, 3), make(2, 3, low=-1.0, high=1.0)), name="tensor_weight"),
            S(make(3), (make(2, 3), make(2, 1)), name="tensor_bcast"),
            S(make(2, 3), (make(2, 3), NoGrad(_a(0.25, np.float64))), name="0d_weight_f64"),
            S(make(), (make(), make()), name="0d"),
            S(make(3, 2).T, (make(2, 3), 2), name="noncontig")]


def s_nan_to_num(make, dt):
    special = _a([_NAN, _INF, -_INF, 1.5, -0.5], dt)
    return [S(make(2, 3), name="finite"), S(special, name="special", gradcheck=False),
            S(special, (1.0, 2.0, -3.0), name="args", gradcheck=False),
            S(special, (), {"posinf": 9.0}, name="kw", gradcheck=False),
            S(_i([1, 2]), name="int"), S(make(), name="0d")]


def s_isinf(make, dt):
    return [S(_a([_NAN, _INF, -_INF, 1.5], dt), name="special"), S(_i([1, 2]), name="int"),
            S(np.array([True]), name="bool"), S(make(), name="0d")]


def s_logit(make, dt):
    x = _a([0.05, 0.3, 0.5, 0.85, 0.97], dt)
    return [S(make(2, 3), name="default"), S(x, (0.1,), name="eps"),
            S(make(2, 3), (), {"eps": 1e-6}, name="eps_kw"),
            S(_a([-0.5, 0.0, 1.0, 1.5], dt), name="outside", gradcheck=False),
            S(x, (-0.1,), name="eps_neg"), S(_i([0, 1]), name="int"), S(make(), name="0d")]


def s_sinc(make, dt):
    # at 0 the derivative is masked to 0 (derivatives.yaml sinc), so its own derivative there
    # is 0 too, not sinc''(0): torch's double backward gives the same
    return [S(make(2, 3), name="2d"),
            S(_a([0.0, 0.5, 1.0, -1.5], dt), name="zero_and_ints", gradgradcheck=False),
            S(_i([0, 1, 2]), name="int"), S(make(), name="0d"), S(make(3, 2).T, name="noncontig")]


# ---- in-place ops in the torch namespace, run on a clone ----------------------------------------------
def _on_clone(name):
    def ours(x, *a, **k):
        import tapegrad
        return getattr(tapegrad, name)(x.clone(), *a, **k)

    def theirs(torch):
        return lambda x, *a, **k: getattr(torch, name)(x.clone(), *a, **k)
    return {"op": ours, "torch_op": theirs}


def _float_samples(samples):
    """The samples with a floating tensor input (the in-place form writes into its input)."""
    def gen(make, dt):
        return [s for s in samples(make, dt)
                if isinstance(s.input, np.ndarray) and s.input.dtype.kind == "f"]
    return gen


rows = [
    OpInfo("scatter", sample_inputs_func=s_scatter),
    OpInfo("scatter_add", sample_inputs_func=s_scatter_add),
    OpInfo("scatter_reduce", sample_inputs_func=s_scatter_reduce),
    OpInfo("index_add", sample_inputs_func=s_index_add),
    OpInfo("index_copy", sample_inputs_func=s_index_copy),
    OpInfo("index_fill", sample_inputs_func=s_index_fill),
    OpInfo("index_put", sample_inputs_func=s_index_put),
    OpInfo("take_along_dim", sample_inputs_func=s_take_along_dim),
    OpInfo("take", sample_inputs_func=s_take),
    OpInfo("masked_select", sample_inputs_func=s_masked_select),
    OpInfo("masked_scatter", sample_inputs_func=s_masked_scatter),
    OpInfo("nonzero", sample_inputs_func=s_nonzero, supports_grad=False),
    OpInfo("argwhere", sample_inputs_func=s_argwhere, supports_grad=False),
    OpInfo("count_nonzero", sample_inputs_func=s_count_nonzero, supports_grad=False),
    OpInfo("tril", sample_inputs_func=s_tril),
    OpInfo("triu", sample_inputs_func=s_tril),
    OpInfo("roll", sample_inputs_func=s_roll),
    OpInfo("flip", sample_inputs_func=s_flip),
    OpInfo("fliplr", sample_inputs_func=s_fliplr),
    OpInfo("flipud", sample_inputs_func=s_flipud),
    OpInfo("rot90", sample_inputs_func=s_rot90),
    OpInfo("diag", sample_inputs_func=s_diag),
    OpInfo("diagflat", sample_inputs_func=s_diagflat),
    OpInfo("diagonal", sample_inputs_func=s_diagonal),
    OpInfo("diag_embed", sample_inputs_func=s_diag_embed),
    OpInfo("trace", sample_inputs_func=s_trace),
    OpInfo("movedim", sample_inputs_func=s_movedim, aliases=("moveaxis",)),
    OpInfo("tile", sample_inputs_func=s_tile),
    OpInfo("hstack", sample_inputs_func=s_hstack),
    OpInfo("vstack", sample_inputs_func=s_vstack),
    OpInfo("row_stack", sample_inputs_func=s_vstack),
    OpInfo("dstack", sample_inputs_func=s_dstack),
    OpInfo("column_stack", sample_inputs_func=s_column_stack),
    OpInfo("meshgrid", sample_inputs_func=s_meshgrid),
    OpInfo("cumprod", sample_inputs_func=s_cumprod),
    OpInfo("diff", sample_inputs_func=s_diff),
    OpInfo("repeat_interleave", sample_inputs_func=s_repeat_interleave),
    OpInfo("atan2", sample_inputs_func=s_atan2, aliases=("arctan2",)),
    OpInfo("hypot", sample_inputs_func=s_hypot),
    OpInfo("logaddexp", sample_inputs_func=s_logaddexp),
    OpInfo("logaddexp2", sample_inputs_func=s_logaddexp),
    OpInfo("xlogy", sample_inputs_func=s_xlogy),
    OpInfo("lerp", sample_inputs_func=s_lerp),
    OpInfo("nan_to_num", sample_inputs_func=s_nan_to_num),
    OpInfo("isinf", sample_inputs_func=s_isinf, supports_grad=False),
    OpInfo("isposinf", sample_inputs_func=s_isinf, supports_grad=False),
    OpInfo("isneginf", sample_inputs_func=s_isinf, supports_grad=False),
    OpInfo("logit", sample_inputs_func=s_logit, domain=(0.05, 0.95)),
    OpInfo("sinc", sample_inputs_func=s_sinc),
    # in-place ops that torch also has in its namespace
    OpInfo("index_put_", sample_inputs_func=s_index_put, **_on_clone("index_put_")),
    OpInfo("xlogy_", sample_inputs_func=_float_samples(
        lambda make, dt: [s for s in s_xlogy(make, dt) if s.name not in ("bcast", "bool_self")]),
        **_on_clone("xlogy_")),
    OpInfo("nan_to_num_", sample_inputs_func=s_nan_to_num, **_on_clone("nan_to_num_")),
    OpInfo("logit_", sample_inputs_func=_float_samples(s_logit), domain=(0.05, 0.95),
           **_on_clone("logit_")),
    OpInfo("sinc_", sample_inputs_func=_float_samples(s_sinc), **_on_clone("sinc_")),
]

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}
