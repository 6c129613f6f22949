"""op_db rows of tapegrad.special's own functions (tapegrad.ops.special_fns: entr, xlog1py, ndtr,
erfcx, log_ndtr, ndtri, zeta) and of its wrappers (round, softmax, log_softmax), each compared with
its torch.special namesake. The plain aliases (special.gammaln is tapegrad.lgamma, ...) are the
rows of their ops; tests/test_special.py checks the names resolve to them and match torch.special.

Points where a function is -inf, inf or NaN, or has a jump, are compared with torch only
(gradcheck=False).
"""
import numpy as np

from .op_db import NoGrad, OpInfo, SampleInput, _a, _i, s_round, s_softmax, s_unary
from .op_db_scatter import s_xlogy

S = SampleInput
_NAN, _INF = float("nan"), float("inf")


def _special(name):
    """tapegrad.special.NAME, looked up when called (tapegrad.special imports the ops package,
    which this database's importers may be loading)."""
    def f(*a, **k):
        from .. import special
        return getattr(special, name)(*a, **k)
    f.__name__ = name
    return f


def s_entr(make, dt):
    return s_unary(make, dt) + [
        S(_a([-1.0, -0.5, 0.0], dt), name="nonpositive", gradcheck=False),
        S(_a([_NAN, _INF, -_INF, 1.0], dt), name="special", gradcheck=False),
        S(_i([0, 1, 2]), name="int"),
        S(np.array([True, False]), name="bool")]


def s_xlog1py(make, dt):
    pos = [s for s in s_xlogy(make, dt) if s.name != "int"]
    return pos + [
        S(_i([0, 1, 2]), (_i([0, 2, 3]),), name="int"),
        S(make(2, 3), (make(2, 3, low=-0.9, high=-0.1),), name="other_below_zero"),
        S(_a([0.0, 0.0, 1.0, 2.0, 0.0], dt), (_a([-1.0, _NAN, -1.0, -2.0, -3.0], dt),),
          name="special", gradcheck=False),
        S(_a([0.0, 1.5], dt), (-1.0,), name="number_other_minus_one", gradcheck=False)]


def s_ndtr(make, dt):
    return s_unary(make, dt) + [
        S(_a([-9.0, -5.0, -1.2, 3.5, 8.0], dt), name="wide"),
        S(_i([-1, 0, 2]), name="int"),
        S(np.array([True, False]), name="bool"),
        S(_a([_INF, -_INF, _NAN], dt), name="special", gradcheck=False)]


def s_erfcx(make, dt):
    return s_unary(make, dt) + [
        S(_a([-4.0, -1.5, 1.3, 3.0, 12.0, 35.0, 1e4], dt), name="wide"),
        S(_i([-1, 0, 2]), name="int"),
        S(_a([-30.0, _INF, -_INF, _NAN], dt), name="special", gradcheck=False)]


def s_log_ndtr(make, dt):
    return s_unary(make, dt) + [
        S(_a([-40.0, -10.0, -1.5, -1.0, 5.0, 9.0], dt), name="wide"),
        S(_i([-1, 0, 2]), name="int"),
        S(_a([_INF, -_INF, _NAN], dt), name="special", gradcheck=False)]


def s_ndtri(make, dt):
    return s_unary(make, dt) + [
        S(_a([1e-3, 0.2, 0.8, 0.999], dt), name="tails"),
        # (finite differences step past 0 from here)
        S(_a([1e-10, 1 - 1e-7], dt), name="far_tails", gradcheck=False),
        S(_i([0, 1]), name="int"),
        S(_a([0.0, 1.0, -0.1, 1.1, _NAN], dt), name="special", gradcheck=False)]


def s_zeta(make, dt):
    def q(*shape):
        return make(*shape, low=0.5, high=4.0)

    # (the exponent never requires grad: torch has no derivative for it)
    return [S(NoGrad(make(2, 3, low=1.5, high=6.0)), (q(2, 3),), name="same"),
            S(NoGrad(make(3, 1, low=1.5, high=6.0)), (q(4),), name="bcast"),
            S(NoGrad(_a(3.0, dt)), (q(2, 3),), name="0d_exponent"),
            S(2.5, (q(2, 3),), name="number_exponent"),
            S(3, (q(3),), name="int_number_exponent"),
            S(NoGrad(make(0, 3, low=1.5, high=6.0)), (q(3),), name="empty"),
            S(NoGrad(_a([2.0, 3.0, 4.0], dt)), (_a([-2.5, -0.5, -3.5], dt),),
              name="negative_q_integer_exponent"),
            S(_i([2, 3, 4]), (_i([1, 2, 3]),), name="int"),
            S(NoGrad(_a([1.0, 0.5, 2.0, 2.5, 2.0, 3.0], dt)),
              (_a([2.0, 2.0, 0.0, -1.5, _INF, _NAN], dt),), name="special", gradcheck=False)]


def _float_samples(samples):
    return lambda make, dt: [s for s in samples(make, dt) if s.name != "int"]


rows: list = [
    OpInfo("special.entr", op=_special("entr"), sample_inputs_func=s_entr, domain=(0.1, 3.0)),
    OpInfo("special.xlog1py", op=_special("xlog1py"), sample_inputs_func=s_xlog1py),
    OpInfo("special.ndtr", op=_special("ndtr"), sample_inputs_func=s_ndtr),
    OpInfo("special.erfcx", op=_special("erfcx"), sample_inputs_func=s_erfcx),
    OpInfo("special.log_ndtr", op=_special("log_ndtr"), sample_inputs_func=s_log_ndtr),
    OpInfo("special.ndtri", op=_special("ndtri"), sample_inputs_func=s_ndtri,
           domain=(0.05, 0.95)),
    OpInfo("special.zeta", op=_special("zeta"), sample_inputs_func=s_zeta),
    # (integer round: both refuse it, NotImplementedError; see tests/test_special.py)
    OpInfo("special.round", op=_special("round"), sample_inputs_func=_float_samples(s_round)),
    OpInfo("special.softmax", op=_special("softmax"), sample_inputs_func=s_softmax),
    OpInfo("special.log_softmax", op=_special("log_softmax"), sample_inputs_func=s_softmax),
]

name_differences: dict = {}
