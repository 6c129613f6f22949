"""op_db rows of the ops in tapegrad.ops.activations.

Each activation gets the usual unary samples (0-d, 1-d, 2-d, non-contiguous, empty) plus its own:
the kinks, where torch picks a subgradient (compared with torch only, ``gradcheck=False``), its
parameters, large inputs where a stable formula matters, and integer inputs where torch keeps or
converts them. In-place forms run on a clone (torch refuses a leaf that requires grad).
"""
import numpy as np

from .op_db import Attr, OpInfo, SampleInput, _a, s_unary

S = SampleInput


def _F(name, **kw):
    return OpInfo("nn.functional." + name, **kw)


def _kink(values, dt, *args, name="kink", **kwargs):
    """A sample at points where the function is not differentiable: compared with torch only."""
    return S(_a(values, dt), args, kwargs, name=name, gradcheck=False)


def _int(values, *args, **kwargs):
    return S(np.array(values, np.int64), args, kwargs, name="int")


# ---- samples ------------------------------------------------------------------------------------
def s_leaky_relu(make, dt):
    return s_unary(make, dt) + [
        _kink([-1.5, 0.0, -0.0, 2.0], dt),
        S(make(2, 3), (0.2,), name="slope"),
        S(make(2, 3), (), {"negative_slope": -0.3}, name="neg_slope"),
        _kink([-1.0, 0.0, 1.0], dt, 0.0, name="slope0")]


def s_elu(make, dt):
    return s_unary(make, dt) + [
        _kink([-1.5, 0.0, -0.0, 2.0], dt),
        S(make(2, 3), (0.5,), name="alpha"),
        S(make(2, 3), (), {"alpha": 2.5}, name="alpha_kw"),
        S(_a([-30.0, -5.0, -1e-3, 1e-3, 5.0], dt), name="wide")]


def s_selu(make, dt):
    return s_unary(make, dt) + [_kink([-1.5, 0.0, 2.0], dt),
                                S(_a([-20.0, -1e-3, 1e-3, 4.0], dt), name="wide")]


def s_celu(make, dt):
    return s_unary(make, dt) + [
        _kink([-1.5, 0.0, 2.0], dt),
        S(make(2, 3), (2.0,), name="alpha2"),
        S(make(2, 3), (), {"alpha": 0.3}, name="alpha_small")]


def s_smooth(make, dt):
    """silu, mish, logsigmoid: smooth everywhere; check the tails."""
    return s_unary(make, dt) + [S(_a([-30.0, -5.0, 0.0, 5.0, 30.0], dt), name="wide")]


def s_softplus(make, dt):
    return s_unary(make, dt) + [
        S(make(2, 3), (2.0, 1.0), name="beta_threshold"),
        S(make(2, 3), (), {"beta": 0.5}, name="beta_kw"),
        S(_a([-30.0, -1.0, 0.0, 19.0, 25.0], dt), name="past_threshold")]


def s_softsign(make, dt):
    return s_unary(make, dt) + [S(_a([-50.0, -1.0, 0.5, 50.0], dt), name="wide"),
                                _int([-2, 0, 3])]


def s_hardtanh(make, dt):
    return s_unary(make, dt) + [
        _kink([-1.0, 1.0, 0.0, -2.0, 2.0], dt),
        S(make(2, 3), (-0.5, 0.75), name="bounds"),
        S(make(2, 3), (), {"min_val": -3.0, "max_val": 3.0}, name="bounds_kw"),
        _int([-3, 0, 3], -1.5, 2.5)]


def s_relu6(make, dt):
    return s_unary(make, dt) + [
        S(make(3, 4) * 4 + 2, name="range"),
        _kink([0.0, -0.0, 6.0, 3.0, -1.0, 7.0], dt),
        _int([-3, 0, 9])]


def s_hard(make, dt):
    """hardsigmoid / hardswish: the samples span the three pieces (-inf, -3), (-3, 3), (3, inf)."""
    return s_unary(make, dt) + [
        S(make(3, 4) * 3, name="pieces"),
        _kink([-3.0, 3.0, 0.0, -4.0, 4.0], dt)]


def s_hardsigmoid(make, dt):
    # torch has no double backward for hardsigmoid (its gradient's node raises): no gradgradcheck
    out = s_hard(make, dt)
    for s in out:
        s.gradgradcheck = False
    return out


def s_softmin(make, dt):
    return [S(make(3, 4), (1,), name="dim1"), S(make(3, 4), (-1,), name="neg"),
            S(make(2, 3, 4), (0,), name="dim0"), S(make(2, 3, 4), (-2,), name="neg2"),
            S(make(), (0,), name="0d"), S(make(4, 3).T, (1,), name="noncontig"),
            S(make(0, 3), (1,), name="empty"),
            S(_a([[1000.0, 1001.0, 999.0], [-1000.0, 0.0, 1000.0]], dt), (1,), name="large"),
            S(make(3, 4), (1,), {"dtype": Attr("float64")}, name="dtype")]


def s_threshold(make, dt):
    return [S(make(), (0.5, -2.0), name="0d"), S(make(5), (0.5, -2.0), name="1d"),
            S(make(2, 3), (-0.25, 3.0), name="2d"), S(make(3, 2).T, (0.0, 0.0), name="noncontig"),
            S(make(0, 3), (0.5, 1.0), name="empty"),
            S(make(2, 3), (), {"threshold": 0.1, "value": 20.0}, name="kw"),
            _kink([0.5, 0.0, 1.0, -1.0], dt, 0.5, 7.0),
            _int([-1, 0, 1, 2], -1.5, 9)]


def s_glu(make, dt):
    return [S(make(4, 6), name="default"), S(make(4, 6), (0,), name="dim0"),
            S(make(2, 4, 3), (-2,), name="neg_dim"), S(make(6), name="1d"),
            S(make(6, 4).T, (1,), name="noncontig"), S(make(0, 4), (1,), name="empty"),
            S(make(3, 2), (), {"dim": 1}, name="dim_kw")]


def s_tanhshrink(make, dt):
    return s_unary(make, dt) + [_int([-2, 0, 3])]


def s_shrink(make, dt):
    return s_unary(make, dt) + [
        _kink([-0.5, 0.5, 0.0, 1.0, -1.0], dt),
        S(make(2, 3), (1.0,), name="lambd"),
        S(make(2, 3), (), {"lambd": 0.0}, name="lambd0")]


def s_prelu(make, dt):
    return [
        S(make(2, 3, 4), (make(3),), name="channels"),
        S(make(2, 3, 4), (make(1),), name="shared"),
        S(make(2, 3), (make(3),), name="2d"),
        S(make(2, 3), (make(),), name="0d_weight"),
        S(make(2, 3, 2, 2), (make(3),), name="4d"),
        S(make(4), (make(1),), name="1d"),
        S(make(4), (make(),), name="1d_0d_weight"),
        S(make(), (make(1),), name="0d"),
        S(make(), (make(),), name="0d_both"),
        S(make(3, 2, 2).transpose(1, 0, 2), (make(3),), name="noncontig"),
        S(make(0, 3), (make(3),), name="empty"),
        S(_a([[-1.0, 0.0, 2.0], [0.0, -0.0, 1.0]], dt), (make(3),), name="kink",
          gradcheck=False)]


# ---- rows ---------------------------------------------------------------------------------------
def _on_clone(fn_path):
    """An in-place op called on a clone of its input, in either framework."""
    def call(module):
        obj = module
        for part in fn_path.split("."):
            obj = getattr(obj, part)
        return lambda x, *a, **k: obj(x.clone(), *a, **k)

    def ours(x, *a, **k):
        import tapegrad
        return call(tapegrad)(x, *a, **k)
    return ours, call


def _inplace_row(name, fn_path, samples):
    ours, theirs = _on_clone(fn_path)
    return OpInfo(name, op=ours, torch_op=theirs, sample_inputs_func=samples)


rows: list = [
    _F("leaky_relu", sample_inputs_func=s_leaky_relu),
    _F("elu", sample_inputs_func=s_elu),
    _F("selu", sample_inputs_func=s_selu),
    _F("celu", sample_inputs_func=s_celu),
    _F("silu", sample_inputs_func=s_smooth),
    _F("mish", sample_inputs_func=s_smooth),
    _F("softplus", sample_inputs_func=s_softplus),
    _F("softsign", sample_inputs_func=s_softsign),
    _F("hardtanh", sample_inputs_func=s_hardtanh),
    _F("relu6", sample_inputs_func=s_relu6),
    _F("hardsigmoid", sample_inputs_func=s_hardsigmoid, domain=(-4.0, 4.0)),
    _F("hardswish", sample_inputs_func=s_hard, domain=(-4.0, 4.0)),
    _F("logsigmoid", sample_inputs_func=s_smooth),
    _F("softmin", sample_inputs_func=s_softmin),
    _F("threshold", sample_inputs_func=s_threshold),
    _F("glu", sample_inputs_func=s_glu),
    _F("tanhshrink", sample_inputs_func=s_tanhshrink),
    _F("softshrink", sample_inputs_func=s_shrink),
    _F("hardshrink", sample_inputs_func=s_shrink),
    _F("prelu", sample_inputs_func=s_prelu),
    # the tapegrad.* / Tensor forms torch has
    OpInfo("selu", sample_inputs_func=s_selu),
    OpInfo("celu", sample_inputs_func=s_celu),
    OpInfo("threshold", sample_inputs_func=s_threshold),
    OpInfo("hardshrink", sample_inputs_func=s_shrink),
    OpInfo("prelu", sample_inputs_func=s_prelu),
    # in-place forms, on a clone
    # (a negative slope is left out: leaky_relu_'s backward refuses it, as torch's)
    _inplace_row("nn.functional.leaky_relu_", "nn.functional.leaky_relu_",
                 lambda make, dt: [s for s in s_leaky_relu(make, dt) if s.name != "neg_slope"]),
    _inplace_row("nn.functional.elu_", "nn.functional.elu_", s_elu),
    _inplace_row("nn.functional.selu_", "nn.functional.selu_", s_selu),
    _inplace_row("nn.functional.celu_", "nn.functional.celu_", s_celu),
    _inplace_row("nn.functional.hardtanh_", "nn.functional.hardtanh_", s_hardtanh),
    _inplace_row("nn.functional.threshold_", "nn.functional.threshold_", s_threshold),
    _inplace_row("nn.functional.relu_", "nn.functional.relu_", s_unary),
    _inplace_row("selu_", "selu_", s_selu),
    _inplace_row("celu_", "celu_", s_celu),
    _inplace_row("threshold_", "threshold_", s_threshold),
]

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}
