"""torch.special's functions that torch has under no other name: entr, xlog1py, ndtr, erfcx,
log_ndtr, ndtri and zeta. Public only as ``tapegrad.special.NAME`` (as torch: there is no
``torch.entr``), so they are not registered on the tapegrad namespace or on Tensor.

Kernels in float64, rounded to the result's dtype: scipy.special's erfcx, ndtri and zeta when
SciPy is installed, else the NumPy ones here (erfcx from fdlibm's erfc tables, ndtri from erfinv and
Newton's method on log_ndtr). entr, xlog1py, ndtr and log_ndtr follow torch's own formulas.

Derivatives (tools/autograd/derivatives.yaml), each written with tapegrad ops, so differentiable
again: special_entr: grad * -(1 + log(self)); special_xlog1py: self: xlog1py(grad, other), 0
where self == 0 and other <= -1; other: grad * self / (other + 1); special_ndtr: a composite,
(1 + erf(self * M_SQRT1_2)) * 0.5; special_erfcx: (2 * self * result - 2 / sqrt(pi)) * grad;
special_log_ndtr: grad / sqrt(2 pi) * exp(-(result + self^2 / 2)); special_ndtri: grad *
sqrt(2 pi) * exp(result^2 / 2); special_zeta: other: grad * -self * zeta(self + 1, other), none
for self.
"""
from __future__ import annotations

import numpy as np

from ..autograd.function import ArrayFunction
from . import pointwise as P
from ._util import _make, float_result, to_float
from .gamma import _zeta_f64
from .losses import AddScalar, MulScalar
from .pointwise import _horner, erf, exp
from .scatter import _need_tensor, _xlogy_dtype, by_operands
from .special_extra import _erfc_array, _erfinv_numpy

_SQRT1_2 = 0.70710678118654752440
_SQRT2 = 1.41421356237309504880
_TWO_OVER_SQRT_PI = 1.1283791670955126
_INV_SQRT_2PI = 0.39894228040143267794
_SQRT_2PI = 2.50662827463100050242
_INV_SQRT_PI = 0.56418958354775628695


def _f64(x):
    return np.asarray(x, np.float64)


# ---- entr ---------------------------------------------------------------------------------------
class Entr(ArrayFunction, name="SpecialEntrBackward0"):
    """-x log(x) for x > 0, 0 at 0, -inf below, NaN kept (torch's kernel). derivatives.yaml
    special_entr: grad * -(1 + log(self))."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        xf = to_float(x)
        with np.errstate(all="ignore"):
            out = np.where(xf > 0, -xf * np.log(xf), np.where(xf == 0, 0.0, -np.inf))
        return np.where(np.isnan(xf), xf, out).astype(xf.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * -(x.log() + 1.0)


def entr(input):
    """The elementwise entropy term: -input * log(input) where input > 0, 0 where it is 0, -inf
    where it is negative, NaN for NaN. Result: input's shape; a float input keeps its dtype, an
    integer or bool input gives the default float dtype.

    Derivative (derivatives.yaml special_entr, SpecialEntrBackward0): -(1 + log(input)) * grad
    (inf at 0, NaN below).

    Raises TypeError when input is not a Tensor."""
    _need_tensor(input, "special_entr", "input", 1)
    return Entr.apply(input)


# ---- xlog1py ------------------------------------------------------------------------------------
def _xlog1py_array(a, b, rdt):
    """a * log1p(b), 0 where a == 0 unless b is NaN (torch's kernel)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where((a == 0) & ~np.isnan(b), 0, a * np.log1p(b))
    return np.asarray(out).astype(rdt, copy=False)


def _masked_self_grad(gx, x, y_below):
    """derivatives.yaml's ``.masked_fill((self == 0.) & (other <= -1.), 0.)``, recorded
    (MaskedFillBackward0) even where nothing is masked, as torch's graph has it."""
    return gx.masked_fill(_make(np.asarray((x._data == 0) & y_below)), 0.0)


class Xlog1py(ArrayFunction, name="SpecialXlog1PyBackward0"):
    """self * log1p(other), 0 where self == 0 unless other is NaN. derivatives.yaml
    special_xlog1py: self: xlog1py(grad, other), 0 where self == 0 and other <= -1; other:
    grad * self / (other + 1)."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return _xlog1py_array(*float_result(x, y), _xlogy_dtype(x, y))

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        gx = gy = None
        if ctx.needs(0):
            gx = _masked_self_grad(Xlog1py.apply(g, y), x, y._data <= -1)
        if ctx.needs(1):
            gy = g * x / (y + 1.0)
        return gx, gy


class Xlog1pyNumberSelf(ArrayFunction, name="SpecialXlog1PyBackward1"):
    """number * log1p(other). derivatives.yaml special_xlog1py.self_scalar: other: grad * self /
    (other + 1)."""

    @staticmethod
    def forward(ctx, c, y):
        ctx.c = c
        ctx.save_for_backward(y)
        return _xlog1py_array(*float_result(c, y), _xlogy_dtype(c, y))

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return None, g * ctx.c / (y + 1.0)


class Xlog1pyNumberOther(ArrayFunction, name="SpecialXlog1PyBackward2"):
    """self * log1p(number). derivatives.yaml special_xlog1py.other_scalar: self:
    xlog1py(grad, other), 0 where self == 0 and other <= -1."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        ctx.save_for_backward(x)
        return _xlog1py_array(*float_result(x, c), _xlogy_dtype(x, c))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        c = ctx.c
        return _masked_self_grad(Xlog1pyNumberOther.apply(g, c), x, c <= -1), None


def xlog1py(input, other):
    """``input * log1p(other)`` elementwise with broadcasting, 0 where input is 0 (unless other is
    NaN); either argument may be a number (not both). Result: the broadcast shape; the promoted
    dtype, the default float dtype for integer/bool operands.

    Derivatives (derivatives.yaml special_xlog1py, .self_scalar, .other_scalar;
    SpecialXlog1PyBackward0/1/2): input: xlog1py(grad, other), 0 where input == 0 and
    other <= -1; other: grad * input / (other + 1).

    Raises:
        TypeError: two numbers, or an operand that is neither a Tensor nor a number.
        RuntimeError: shapes that do not broadcast."""
    return by_operands("special_xlog1py", input, other, Xlog1py, Xlog1pyNumberOther, Xlog1pyNumberSelf)


# ---- ndtr ---------------------------------------------------------------------------------------
def ndtr(input):
    """The standard normal distribution function, (1 + erf(input / sqrt(2))) / 2, elementwise.
    Result: input's shape; a float input keeps its dtype, an integer or bool input gives the
    default float dtype. Computed as torch composes it, so as torch it loses its relative accuracy
    left of 0 and is 0 from about -8.4 in float64 (use log_ndtr there).

    Derivative (special_ndtr is CompositeImplicitAutograd in torch's native_functions.yaml, with
    no derivatives.yaml entry): the composite is recorded as torch's, MulBackward1 (* 0.5),
    AddBackward1 (1 +), ErfBackward0, MulBackward1 (* M_SQRT1_2); the gradient exp(-input^2 /
    2) / sqrt(2 pi) * grad follows from erf's.

    Raises TypeError when input is not a Tensor."""
    _need_tensor(input, "special_ndtr", "input", 1)
    return MulScalar.apply(AddScalar.apply(erf(MulScalar.apply(input, _SQRT1_2)), 1), 0.5)


# ---- erfcx --------------------------------------------------------------------------------------
# erfc(x) x sqrt(pi) exp(x^2) -> 1 - 1/(2x^2) + 3/(4x^4) - ...: (-1)^k (2k - 1)!! / 2^k, in
# powers of 1/x^2, to the term below 1e-19 at x = 28
_ERFCX_ASYMPTOTIC = (1.0, -0.5, 0.75, -1.875, 6.5625, -29.53125, 162.421875, -1055.7421875)


def _hi(x):
    """x with the low 32 bits of its mantissa cleared: its square is exact."""
    return (x.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)


def _erfcx_numpy(x):
    """exp(x^2) erfc(x) in float64: below 1.25 the product, exp(x^2) formed as exp(z^2)
    exp((x - z)(x + z)) with z^2 exact (fdlibm's trick), so a large negative x loses nothing to
    the rounding of x^2; on [1.25, 28) fdlibm's erfc with its exp(-x^2) left out,
    exp(-0.5625 + R/S) / x; beyond, the asymptotic series. inf below about -26.6 (overflow) and
    at -inf, 0 at inf, NaN for NaN."""
    x = _f64(x)
    out = np.full(x.shape, np.nan)
    with np.errstate(all="ignore"):
        low = x < 1.25
        if low.any():
            xl = x[low]
            z = _hi(xl)
            out[low] = np.exp(z * z) * np.exp((xl - z) * (xl + z)) * _erfc_array(xl)
            out[low & (x == -np.inf)] = np.inf      # (x - z is NaN there)
        mid = (x >= 1.25) & (x < 28)
        if mid.any():
            xm = x[mid]
            s = 1 / (xm * xm)
            near = xm < 1 / 0.35
            r = np.where(near, _horner(s, P._RA), _horner(s, P._RB))
            q = np.where(near, _horner(s, P._SA), _horner(s, P._SB))
            out[mid] = np.exp(-0.5625 + r / q) / xm
        far = x >= 28
        if far.any():
            xf = x[far]
            out[far] = _horner(1 / (xf * xf), _ERFCX_ASYMPTOTIC) * _INV_SQRT_PI / xf
    return out


def _erfcx_f64(x):
    try:
        from scipy.special import erfcx
    except ImportError:
        return _erfcx_numpy(x)
    return np.asarray(erfcx(_f64(x)), np.float64)


class Erfcx(ArrayFunction, name="SpecialErfcxBackward0"):
    """exp(x^2) erfc(x). derivatives.yaml special_erfcx: (2.0 * self * result - 2.0 /
    sqrt(M_PI)) * grad."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        xf = to_float(x)
        return _erfcx_f64(xf).astype(xf.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return (x * Erfcx.apply(x) * 2.0 - _TWO_OVER_SQRT_PI) * g


def _no_half(dtype, kernel, what):
    """NotImplementedError, as torch's CPU kernel ``kernel`` (it has no float16 version), when
    ``dtype`` is float16."""
    if dtype == np.float16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Half' ({what} of float16: "
                                  f"convert to float32 first, e.g. x.float())")


def erfcx(input):
    """The scaled complementary error function exp(input^2) * erfc(input), elementwise, accurate
    where erfc underflows (erfcx(1e300) = 5.64e-301). Result: input's shape; a float input keeps
    its dtype, an integer or bool input gives the default float dtype. inf at -inf and below
    about -26.6 (overflow), 0 at inf, NaN for NaN. Computed in float64 (scipy.special.erfcx when
    SciPy is installed, else fdlibm's erfc tables and the asymptotic series).

    Derivative (derivatives.yaml special_erfcx, SpecialErfcxBackward0): (2 * input * result -
    2 / sqrt(pi)) * grad.

    Raises TypeError when input is not a Tensor; NotImplementedError for float16 (torch has no
    float16 kernel)."""
    _need_tensor(input, "special_erfcx", "input", 1)
    _no_half(input._data.dtype, "erfcx_cpu", "special.erfcx")
    return Erfcx.apply(input)


# ---- log_ndtr -----------------------------------------------------------------------------------
def _log_ndtr_f64(x):
    """log(ndtr(x)) as torch's calc_log_ndtr: below -1, log(erfcx(-t) / 2) - t^2 (t = x /
    sqrt(2)), which stays finite where ndtr underflows; else log1p(-erfc(t) / 2)."""
    x = _f64(x)
    t = x * _SQRT1_2
    with np.errstate(all="ignore"):
        left = np.log(_erfcx_f64(-t) / 2) - t * t
        right = np.log1p(-_erfc_array(t) / 2)
    return np.where(x < -1, left, right)


class LogNdtr(ArrayFunction, name="SpecialLogNdtrBackward0"):
    """log of the standard normal distribution function. derivatives.yaml special_log_ndtr:
    grad / sqrt(2 * M_PI) * (result + self.pow(2) / 2).neg().exp()."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        xf = to_float(x)
        return _log_ndtr_f64(xf).astype(xf.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * _INV_SQRT_2PI * exp(-(LogNdtr.apply(x) + x * x * 0.5))


def log_ndtr(input):
    """log of the standard normal distribution function, elementwise, accurate far in the left
    tail (log_ndtr(-40) = -804.6, where ndtr is 0). Result: input's shape; a float input keeps
    its dtype, an integer or bool input gives the default float dtype. -inf at -inf, -0.0 at
    inf. Computed in float64 as torch's kernel (erfcx left of -1, log1p of erfc right of it).

    Derivative (derivatives.yaml special_log_ndtr, SpecialLogNdtrBackward0): grad / sqrt(2 pi)
    * exp(-(result + input^2 / 2)).

    Raises TypeError when input is not a Tensor; NotImplementedError for float16 (torch has no
    float16 kernel)."""
    _need_tensor(input, "special_log_ndtr", "input", 1)
    _no_half(input._data.dtype, "log_ndtr_cpu", "special.log_ndtr")
    return LogNdtr.apply(input)


# ---- ndtri --------------------------------------------------------------------------------------
# Abramowitz & Stegun 26.2.23: the quantile to 4.5e-4 for p <= 1/2, the start of Newton's method
_AS_NUM = (2.515517, 0.802853, 0.010328)
_AS_DEN = (1.0, 1.432788, 0.189269, 0.001308)


def _ndtri_numpy(p):
    """The standard normal quantile in float64 without SciPy. On [1/4, 3/4], sqrt(2)
    erfinv(2 (p - 1/2)): p - 1/2 is exact there, so the result is accurate relatively also
    next to p = 1/2 (exactly 0 at it). Below, Abramowitz & Stegun's start refined by Newton's
    method on log_ndtr(y) = log(p) (nearly linear in the tail, so the steps converge there too;
    log p keeps subnormal p exact); above, -ndtri(1 - p), 1 - p exact there. -inf at 0, inf at 1,
    NaN outside [0, 1] and for NaN."""
    p = _f64(p)
    out = np.full(p.shape, np.nan)
    with np.errstate(all="ignore"):
        central = (p >= 0.25) & (p <= 0.75)
        out[central] = _SQRT2 * _erfinv_numpy(2 * (p[central] - 0.5))
        tails = (p > 0) & (p < 1) & ~central
        if tails.any():
            pt = p[tails]
            upper = pt > 0.5
            q = np.where(upper, 1 - pt, pt)
            t = np.sqrt(-2 * np.log(q))
            y = _horner(t, _AS_NUM) / _horner(t, _AS_DEN) - t
            target = np.log(q)
            for _ in range(6):
                ln = _log_ndtr_f64(y)
                # d log_ndtr / dy = phi(y) / ndtr(y) = exp(-y^2 / 2 - log_ndtr(y)) / sqrt(2 pi)
                y = y - (ln - target) / (_INV_SQRT_2PI * np.exp(-0.5 * y * y - ln))
            out[tails] = np.where(upper, -y, y)
        out[p == 0] = -np.inf
        out[p == 1] = np.inf
    return out


def _ndtri_f64(p):
    try:
        from scipy.special import ndtri
    except ImportError:
        return _ndtri_numpy(p)
    return np.asarray(ndtri(_f64(p)), np.float64)


class Ndtri(ArrayFunction, name="SpecialNdtriBackward0"):
    """The inverse of ndtr. derivatives.yaml special_ndtri: grad * std::sqrt(2 * M_PI) *
    (result.square() / 2).exp()."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        xf = to_float(x)
        return _ndtri_f64(xf).astype(xf.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        y = Ndtri.apply(x)
        return g * _SQRT_2PI * exp(y * y * 0.5)


def ndtri(input):
    """The standard normal quantile: y with ndtr(y) = input, for input in [0, 1], elementwise;
    -inf at 0, inf at 1, NaN outside [0, 1] and for NaN. Result: input's shape; a float input
    keeps its dtype, an integer or bool input gives the default float dtype. Computed in float64
    (scipy.special.ndtri when SciPy is installed, else erfinv on [1/4, 3/4] and Newton's
    method on log_ndtr from Abramowitz & Stegun's start in the tails, to round-off).

    Derivative (derivatives.yaml special_ndtri, SpecialNdtriBackward0): sqrt(2 pi) *
    exp(result^2 / 2) * grad.

    Raises TypeError when input is not a Tensor; NotImplementedError for float16 (torch has no
    float16 kernel)."""
    _need_tensor(input, "special_ndtri", "input", 1)
    _no_half(input._data.dtype, "ndtri_cpu", "special.ndtri")
    return Ndtri.apply(input)


# ---- zeta ---------------------------------------------------------------------------------------
def _zeta_array(a, b, rdt):
    _no_half(rdt, "zeta_cpu", "special.zeta")
    return np.asarray(_zeta_f64(a, b)).astype(rdt, copy=False)


def _no_input_derivative():
    raise NotImplementedError("the derivative for 'zeta' is not implemented. (special.zeta: "
                              "torch has no derivative with respect to input, the exponent; "
                              "detach it, or pass a number)")


class Zeta(ArrayFunction, name="SpecialZetaBackward0"):
    """Hurwitz zeta(self, other). derivatives.yaml special_zeta: self: not_implemented("zeta");
    other: grad * -self * special_zeta(self + 1., other)."""

    @staticmethod
    def forward(ctx, x, q):
        ctx.save_for_backward(x, q)
        return _zeta_array(*float_result(x, q), _xlogy_dtype(x, q))

    @staticmethod
    def backward(ctx, g):
        x, q = ctx.saved_tensors
        if ctx.needs(0):
            _no_input_derivative()
        return None, g * -x * Zeta.apply(x + 1.0, q)


class ZetaNumberSelf(ArrayFunction, name="SpecialZetaBackward1"):
    """zeta(number, other). derivatives.yaml special_zeta.self_scalar: other: grad * -self *
    special_zeta(self.toDouble() + 1., other)."""

    @staticmethod
    def forward(ctx, c, q):
        ctx.c = c
        ctx.save_for_backward(q)
        return _zeta_array(*float_result(c, q), _xlogy_dtype(c, q))

    @staticmethod
    def backward(ctx, g):
        q, = ctx.saved_tensors
        return None, g * -ctx.c * ZetaNumberSelf.apply(float(ctx.c) + 1.0, q)


class ZetaNumberOther(ArrayFunction, name="SpecialZetaBackward2"):
    """zeta(self, number). derivatives.yaml special_zeta.other_scalar: self:
    not_implemented("zeta")."""

    @staticmethod
    def forward(ctx, x, c):
        return _zeta_array(*float_result(x, c), _xlogy_dtype(x, c))

    @staticmethod
    def backward(ctx, g):
        _no_input_derivative()


def zeta(input, other):
    """The Hurwitz zeta function sum_{k >= 0} (other + k) ** -input, elementwise with
    broadcasting (input = x, the exponent; other = q); either argument may be a number (not
    both). Result: the broadcast shape; the promoted dtype, the default float dtype for
    integer/bool operands. As torch (Cephes' algorithm): inf at x = 1 and at non-positive
    integer q, NaN for x < 1, at negative non-integer q unless x is an integer, at q = +inf and
    for NaN. Computed in float64 (scipy.special.zeta when SciPy is installed, else a NumPy port
    of torch's kernel).

    Derivatives (derivatives.yaml special_zeta, .self_scalar, .other_scalar;
    SpecialZetaBackward0/1/2): other: grad * -input * zeta(input + 1, other); input: none, as
    torch (a backward that reaches it raises NotImplementedError).

    Raises:
        TypeError: two numbers, or an operand that is neither a Tensor nor a number.
        RuntimeError: shapes that do not broadcast.
        NotImplementedError: a float16 result dtype (torch has no float16 kernel)."""
    return by_operands("special_zeta", input, other, Zeta, ZetaNumberOther, ZetaNumberSelf)
