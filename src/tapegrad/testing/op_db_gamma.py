"""op_db rows of the ops in tapegrad.ops.gamma: lgamma, digamma, polygamma, mvlgamma and their
in-place methods (called on a clone: torch refuses a leaf that requires grad).

Random samples stay right of the poles (and a few negative non-integers well inside their
intervals), where finite differences are meaningful. Poles, infinities and NaN are compared with
torch only (gradcheck=False). Negative integers are left to tests/test_gamma_special.py, float64
only: there torch's trigamma gives a huge finite value from sin(pi x) in the input's precision,
which float32 cannot reproduce from a float64 computation.
"""
import numpy as np

from .op_db import OpInfo, SampleInput, _a, _i, s_unary
from .op_db_special_extra import _clone_method, _float_only

S = SampleInput
_NAN, _INF = float("nan"), float("inf")


def s_lgamma(make, dt):
    return s_unary(make, dt) + [
        S(_a([-0.5, -1.3, -2.7, -3.5], dt), name="negative"),
        S(_a([10.5, 100.25, 1e4, 0.01], dt), name="wide"),
        S(_i([1, 2, 3, 10]), name="int"),
        S(np.array([True, False]), name="bool"),
        S(_a([0.0, -0.0, -1.0, -2.0, _INF, -_INF, _NAN, 1.0, 2.0], dt), name="special",
          gradcheck=False)]


def s_digamma(make, dt):
    return s_unary(make, dt) + [
        S(_a([-0.5, -1.3, -2.7, -3.5], dt), name="negative"),
        S(_a([10.5, 100.25, 1e4, 0.01], dt), name="wide"),
        S(_i([1, 2, 3, 10]), name="int"),
        S(np.array([True, False]), name="bool"),
        S(_a([0.0, -0.0, _INF, -_INF, _NAN, 1.0], dt), name="special", gradcheck=False)]


def s_polygamma(make, dt):
    return [S(make(2, 3), (0,), name="n0"),
            S(make(2, 3), (1,), name="n1"),
            S(make(2, 3), (2,), name="n2"),
            S(make(5), (3,), name="n3"),
            S(make(), (1,), name="0d"),
            S(make(3, 2).T, (2,), name="noncontig"),
            S(make(0, 3), (1,), name="empty"),
            S(_a([-0.5, -1.3, -2.7], dt), (1,), name="negative_n1"),
            S(_a([-0.5, -1.3, -2.7], dt), (2,), name="negative_n2"),
            S(_a([20.5, 1e3, 0.05], dt), (4,), name="wide_n4"),
            S(_i([1, 2, 3]), (1,), name="int"),
            S(_a([0.0, -0.0, _INF, _NAN, 1.0], dt), (1,), name="special_n1", gradcheck=False),
            S(_a([0.0, -0.0, -1.0, _INF, -_INF, _NAN], dt), (2,), name="special_n2",
              gradcheck=False),
            S(_a([0.0, -2.0, _INF, -_INF, _NAN], dt), (3,), name="special_n3",
              gradcheck=False)]


def s_mvlgamma(make, dt):
    def above(*shape, p):
        return make(*shape, low=(p - 1) / 2 + 0.3, high=(p - 1) / 2 + 4.0)

    return [S(above(2, 3, p=1), (1,), name="p1"),
            S(above(2, 3, p=2), (2,), name="p2"),
            S(above(4, p=5), (5,), name="p5"),
            S(above(p=3), (3,), name="0d"),
            S(above(3, 2, p=2).T, kwargs={"p": 2}, name="noncontig_kwarg"),
            S(above(0, 3, p=3), (3,), name="empty"),
            S(_i([2, 3, 7]), (3,), name="int"),
            S(_a([0.5, 0.7, 1.0, 1.25, _INF, _NAN], dt), (3,), name="below_domain",
              gradcheck=False)]


def _polygamma(lib):
    """polygamma with the tensor first, as the samples hold it (torch's order is (n, input))."""
    return lambda x, n: lib.polygamma(n, x)


def _polygamma_tg(x, n):
    from ..ops import PUBLIC
    return PUBLIC["polygamma"](n, x)


rows: list = [
    OpInfo("lgamma", sample_inputs_func=s_lgamma, domain=(0.2, 5.0)),
    OpInfo("lgamma_", op=_clone_method("lgamma_"), torch_op=lambda t: _clone_method("lgamma_"),
           sample_inputs_func=_float_only(s_lgamma), domain=(0.2, 5.0)),
    OpInfo("digamma", sample_inputs_func=s_digamma, domain=(0.2, 5.0)),
    OpInfo("digamma_", op=_clone_method("digamma_"), torch_op=lambda t: _clone_method(
        "digamma_"), sample_inputs_func=_float_only(s_digamma), domain=(0.2, 5.0)),
    OpInfo("polygamma", op=_polygamma_tg, torch_op=_polygamma, sample_inputs_func=s_polygamma,
           domain=(0.2, 5.0)),
    OpInfo("polygamma_", op=_clone_method("polygamma_"), torch_op=lambda t: _clone_method(
        "polygamma_"), sample_inputs_func=_float_only(s_polygamma), domain=(0.2, 5.0)),
    OpInfo("mvlgamma", sample_inputs_func=s_mvlgamma),
    OpInfo("mvlgamma_", op=_clone_method("mvlgamma_"), torch_op=lambda t: _clone_method(
        "mvlgamma_"), sample_inputs_func=_float_only(s_mvlgamma)),
]

name_differences: dict = {}
