"""op_db rows of the ops in tapegrad.ops.extra.

Samples with ties or NaN are compared with torch only (gradcheck=False): the functions are not
differentiable there. Median/mode ties use rows whose returned index torch fixes in practice.
"""
import numpy as np

from .op_db import NoGrad, OpInfo, SampleInput, _a, _i, s_var

S = SampleInput
_NAN = float("nan")


def s_median(make, dt):
    ties = _a([[2.0, 1.0, 2.0, 1.0, 3.0, 1.0], [5.0, 5.0, 4.0, 4.0, 3.0, 3.0]], dt)
    nan = _a([[1.0, _NAN, 2.0, _NAN, 0.5], [0.3, 0.1, -0.2, 0.4, 0.0]], dt)
    return [S(make(3, 5), name="all"), S(make(4, 6), name="all_even"),
            S(ties, name="all_ties", gradcheck=False),
            S(make(3, 5), (1,), name="dim"), S(make(3, 4), (0, True), name="dim_keepdim"),
            S(make(2, 3, 4), (-2,), name="negdim"), S(make(5), (0,), name="1d"),
            S(ties, (1,), name="dim_ties", gradcheck=False),
            S(nan, name="nan", gradcheck=False), S(nan, (1,), name="nan_dim", gradcheck=False),
            S(make(), name="0d"), S(make(), (0,), name="0d_dim"),
            S(make(0, 3), name="empty"), S(make(0, 3), (1,), name="empty_dim"),
            S(make(4, 3).T, (1,), name="noncontig"),
            S(_a([[3, 1, 2, 2]], np.int64), (1,), name="int")]


def s_mode(make, dt):
    ties = _a([[2.0, 1.0, 2.0, 1.0, 3.0, 1.0], [5.0, 5.0, 4.0, 4.0, 3.0, 3.0]], dt)
    return [S(ties, name="default", gradcheck=False),
            S(ties.T.copy(), (0,), name="dim0", gradcheck=False),
            S(ties, (1, True), name="keepdim", gradcheck=False),
            S(_a([[1.0, 2.0, 2.0, 1.0, 3.0]], dt), (-1,), name="tie_count", gradcheck=False),
            S(make(3, 4), (1,), name="distinct"), S(make(5), name="1d"),
            S(make(), name="0d"), S(make(2, 0), (0,), name="empty"),
            S(_a([[3, 2, 2]], np.int64), name="int")]


def s_quantile(make, dt):
    q2 = _a([0.2, 0.75], dt)
    nan = _a([[1.0, _NAN, 2.0, 0.3], [0.3, 0.1, -0.2, 0.4], [_NAN, _NAN, _NAN, _NAN]], dt)
    out = [S(make(3, 5), (0.3,), name="all"), S(make(3, 5), (0.3,), {"dim": 0}, name="dim0"),
           S(make(3, 5), (0.6,), {"dim": -1, "keepdim": True}, name="keepdim"),
           S(make(3, 5), (0.3,), {"keepdim": True}, name="all_keepdim"),
           S(make(3, 5), (q2,), name="qtensor"),
           S(make(2, 3, 4), (q2,), {"dim": 1}, name="qtensor_dim"),
           S(make(2, 3, 4), (q2,), {"dim": 1, "keepdim": True}, name="qtensor_keepdim"),
           S(make(3, 4), (_a(0.4, dt),), {"dim": 1}, name="q0d"),
           S(make(3, 4), (NoGrad(q2),), {"dim": 0}, name="q_nograd"),
           S(make(3, 4), (0.0,), {"dim": 1}, name="q0"), S(make(3, 4), (1.0,), {"dim": 1}, name="q1"),
           S(make(), (0.5,), name="0d"), S(make(), (0.5,), {"dim": 0}, name="0d_dim"),
           S(nan, (0.5,), {"dim": 1}, name="nan", gradcheck=False),
           S(nan, (NoGrad(q2),), {"dim": 1}, name="nan_qtensor", gradcheck=False)]
    for interp in ("lower", "higher", "midpoint", "nearest"):
        out.append(S(make(3, 5), (0.3,), {"dim": 1, "interpolation": interp}, name=interp))
        out.append(S(make(3, 4), (NoGrad(_a([0.5, 0.25], dt)),),
                     {"dim": 1, "interpolation": interp}, name=f"{interp}_half"))
    return out


def s_cummax(make, dt):
    ties = _a([[1.0, 3.0, 3.0, 2.0, 0.5], [2.0, 2.0, 1.0, 1.0, 4.0]], dt)
    nan = _a([[1.0, 3.0, _NAN, 5.0, _NAN, 0.0]], dt)
    return [S(make(3, 5), (1,), name="dim1"), S(make(3, 5), (0,), name="dim0"),
            S(make(2, 3, 4), (-1,), name="negdim"),
            S(ties, (1,), name="ties", gradcheck=False), S(nan, (1,), name="nan", gradcheck=False),
            S(make(), (0,), name="0d"), S(make(0, 3), (0,), name="empty"),
            S(make(4, 3).T, (1,), name="noncontig"),
            S(_a([[3, 1, 4, 1, 5]], np.int64), (1,), name="int")]


def s_logcumsumexp(make, dt):
    # large enough that exp overflows float32, small enough that x_i - result_j keeps float32
    # precision in the gradient (torch and tapegrad round differently there)
    big = _a([[100.0, 101.0, -5.0], [-100.0, -99.0, 3.0]], dt)
    return [S(make(3, 5), (1,), name="dim1"), S(make(3, 5), (0,), name="dim0"),
            S(make(2, 3, 4), (-2,), name="negdim"), S(big, (1,), name="large"),
            S(make(), (0,), name="0d"), S(make(0, 3), (1,), name="empty"),
            S(make(4, 3).T, (1,), name="noncontig")]


def s_nansum(make, dt):
    nan = make(3, 4)
    nan[0, 1] = nan[2, 3] = _NAN
    allnan = _a([[_NAN, _NAN], [1.0, 2.0]], dt)
    return [S(make(3, 4), name="all"), S(nan, name="nan"), S(nan, (1,), name="dim"),
            S(nan, ((0, 1),), {"keepdim": True}, name="tuple_keepdim"),
            S(nan, (-1, True), name="negdim_keepdim"), S(allnan, (1,), name="allnan_row"),
            S(make(), name="0d"), S(make(0, 3), (0,), name="empty"),
            S(make(4, 3).T, (0,), name="noncontig")]


def s_nansum_int(make, dt):
    return s_nansum(make, dt) + [S(_a([[1, 2], [3, 4]], np.int64), (1,), name="int")]


def s_nanmean(make, dt):
    # NaN results (an all-NaN row, an empty reduction) have no finite derivative to check
    out = s_nansum(make, dt)
    for smp in out:
        if smp.name in ("allnan_row", "empty"):
            smp.gradcheck = smp.gradgradcheck = False
    return out


def s_exp2(make, dt):
    return [S(make(3, 4), name="2d"), S(make(), name="0d"), S(make(0, 2), name="empty"),
            S(_a([-200.0, 0.0, 200.0], dt), name="extreme"),
            S(_a([[1, 2, 3]], np.int64), name="int")]


def s_unique(make, dt):
    rep = _a([[3.0, 1.0, 2.0], [3.0, 1.0, 0.5]], dt)
    return [S(rep, name="default"), S(rep, (False,), name="unsorted"),
            S(rep, (), {"return_inverse": True}, name="inverse"),
            S(rep, (), {"return_counts": True}, name="counts"),
            S(rep, (True, True, True), name="both"),
            S(_a([_NAN, 1.0, _NAN], dt), (), {"return_counts": True}, name="nan"),
            S(make(), (), {"return_inverse": True, "return_counts": True}, name="0d"),
            S(make(0, 2), name="empty"), S(_i([[2, 1], [1, 2]]), (True, True), name="int")]


def s_bincount(make, dt):
    idx = _i([1, 1, 3, 0, 3, 3])
    return [S(idx, name="default"), S(idx, (), {"minlength": 7}, name="minlength"),
            S(idx, (make(6),), name="weights"),
            S(idx, (NoGrad(_a([1.0, 2.0, 0.5, 3.0, 1.0, 1.0], dt)),), {"minlength": 2},
              name="weights_nograd"),
            S(idx, (_i([1, 2, 3, 4, 5, 6]),), name="int_weights"),
            S(idx.astype(np.int32), name="int32"), S(_i([]), name="empty"),
            S(_i([]), (), {"minlength": 3}, name="empty_minlength")]


def s_histc(make, dt):
    x = make(20)
    return [S(x, name="default"), S(x, (4,), name="bins"),
            S(x, (5, -1.0, 1.0), name="range"),
            S(_a([0.0, 1.0, 2.0, 3.0, 4.0, _NAN, 5.0, -1.0], dt), (4, 0, 4), name="edges_nan"),
            S(_a([2.0, 2.0], dt), (4,), name="constant"), S(make(3, 4), (6,), name="2d"),
            S(make(), (3,), name="0d"), S(make(0), (3,), name="empty")]


def s_searchsorted(make, dt):
    b = _a([-1.0, 0.0, 0.0, 0.5, 1.5], dt)
    v = _a([[-2.0, 0.0, 0.2], [0.5, 1.5, 3.0]], dt)
    b2 = np.sort(make(2, 5), axis=-1)
    return [S(NoGrad(b), (NoGrad(v),), name="left"),
            S(NoGrad(b), (NoGrad(v),), {"right": True}, name="right"),
            S(NoGrad(b), (NoGrad(v),), {"side": "right"}, name="side"),
            S(NoGrad(b), (NoGrad(v),), {"out_int32": True}, name="int32"),
            S(NoGrad(b), (0.0,), name="scalar"),
            S(NoGrad(b2), (NoGrad(make(2, 3)),), name="batched"),
            S(NoGrad(_a([1.5, -1.0, 0.5, 0.0], dt)), (NoGrad(v),),
              {"sorter": _i([1, 3, 2, 0])}, name="sorter"),
            S(NoGrad(b), (NoGrad(make(0)),), name="empty"),
            S(_i([1, 3, 5]), (_i([[0, 3], [4, 6]]),), name="int")]


def s_bucketize(make, dt):
    b = _a([-1.0, 0.0, 0.0, 0.5, 1.5], dt)
    v = _a([[-2.0, 0.0, 0.2], [0.5, 1.5, 3.0]], dt)
    return [S(v, (NoGrad(b),), name="default"), S(v, (NoGrad(b),), {"right": True}, name="right"),
            S(v, (NoGrad(b),), {"out_int32": True}, name="int32"),
            S(0.7, (NoGrad(b),), name="scalar"), S(make(), (NoGrad(b),), name="0d"),
            S(make(0, 2), (NoGrad(b),), name="empty"), S(_i([0, 3, 7]), (_i([1, 3, 5]),), name="int")]


rows: list = [
    OpInfo("var_mean", sample_inputs_func=s_var),
    OpInfo("std_mean", sample_inputs_func=s_var),
    OpInfo("median", sample_inputs_func=s_median),
    OpInfo("nanmedian", sample_inputs_func=s_median),
    OpInfo("mode", sample_inputs_func=s_mode),
    OpInfo("quantile", sample_inputs_func=s_quantile),
    OpInfo("nanquantile", sample_inputs_func=s_quantile),
    OpInfo("cummax", sample_inputs_func=s_cummax),
    OpInfo("cummin", sample_inputs_func=s_cummax),
    OpInfo("logcumsumexp", sample_inputs_func=s_logcumsumexp),
    OpInfo("nansum", sample_inputs_func=s_nansum_int),
    OpInfo("nanmean", sample_inputs_func=s_nanmean),
    OpInfo("exp2", sample_inputs_func=s_exp2),
    # no derivative in torch: unique / bincount(weights) record a node whose backward raises
    OpInfo("unique", sample_inputs_func=s_unique, supports_grad=False),
    OpInfo("bincount", sample_inputs_func=s_bincount, supports_grad=False),
    OpInfo("histc", sample_inputs_func=s_histc, supports_grad=False),
    OpInfo("searchsorted", sample_inputs_func=s_searchsorted, supports_grad=False),
    OpInfo("bucketize", sample_inputs_func=s_bucketize, supports_grad=False),
]

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}


def s_logspace(make, dt):
    return [S(0.0, (2.0, 5), name="default"), S(-1.0, (2.0, 4), {"base": 2.0}, name="base2"),
            S(0.0, (3.0, 1), name="one"), S(0.0, (3.0, 0), name="zero")]


def s_baddbmm(make, dt):
    return [S(make(2, 3, 4), (make(2, 3, 5), make(2, 5, 4)), name="default"),
            S(make(3, 4), (make(2, 3, 5), make(2, 5, 4)), name="bcast"),
            S(make(2, 1, 4), (make(2, 3, 5), make(2, 5, 4)), {"beta": 0.5, "alpha": 2.0},
              name="beta_alpha"),
            S(make(2, 3, 4), (make(2, 3, 5), make(2, 5, 4)), {"beta": 0}, name="beta0"),
            S(make(2, 3, 4), (make(2, 3, 0), make(2, 0, 4)), name="empty_inner")]


def s_addbmm(make, dt):
    return [S(make(3, 4), (make(2, 3, 5), make(2, 5, 4)), name="default"),
            S(make(4), (make(2, 3, 5), make(2, 5, 4)), name="bcast"),
            S(make(3, 4), (make(2, 3, 5), make(2, 5, 4)), {"beta": 0.5, "alpha": 2.0},
              name="beta_alpha"),
            S(make(3, 4), (make(2, 3, 5), make(2, 5, 4)), {"beta": 0}, name="beta0")]


def s_tensordot(make, dt):
    return [S(make(2, 3, 4), (make(3, 4, 5),), name="default"),
            S(make(2, 3), (make(3, 5),), {"dims": 1}, name="int1"),
            S(make(2, 3), (make(4, 5),), {"dims": 0}, name="outer"),
            S(make(2, 3, 4), (make(4, 2, 5),), {"dims": ([0, 2], [1, 0])}, name="lists"),
            S(make(3, 4), (make(4, 3),), {"dims": ([-1, 0], [0, 1])}, name="full")]


def s_kron(make, dt):
    return [S(make(2, 3), (make(4, 5),), name="2d"), S(make(2, 3), (make(4),), name="ranks"),
            S(make(), (make(3),), name="0d"), S(make(2, 1, 2), (make(1, 3, 2),), name="3d")]


def s_cross(make, dt):
    return [S(make(4, 3), (make(4, 3),), {"dim": 1}, name="dim1"),
            S(make(3, 5), (make(3, 5),), {"dim": 0}, name="dim0"),
            S(make(2, 4, 3), (make(1, 4, 3),), {"dim": -1}, name="bcast"),
            S(make(3), (make(3),), {"dim": 0}, name="1d"),
            S(_i([[1, 2, 3]]), (_i([[4, 5, 6]]),), {"dim": 1}, name="int")]


rows += [
    OpInfo("logspace", sample_inputs_func=s_logspace, supports_grad=False),
    OpInfo("baddbmm", sample_inputs_func=s_baddbmm),
    OpInfo("addbmm", sample_inputs_func=s_addbmm),
    OpInfo("tensordot", sample_inputs_func=s_tensordot),
    OpInfo("kron", sample_inputs_func=s_kron),
    OpInfo("cross", sample_inputs_func=s_cross),
]
