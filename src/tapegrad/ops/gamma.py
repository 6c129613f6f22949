"""The log-gamma family: lgamma, digamma, polygamma and mvlgamma (+ the in-place methods
``lgamma_``, ``digamma_``, ``polygamma_`` and ``mvlgamma_``, methods only as in torch).

Kernels, all in float64 and rounded to the input's dtype: scipy.special (gammaln, psi, zeta)
when SciPy is installed, else the NumPy ones here. Where torch's value at a pole or an infinity
is not SciPy's, torch's is given: lgamma(-inf) = inf; trigamma left of 1/2 through the
reflection formula with an unreduced sin(pi x), as torch's kernel, so finite (huge) at negative
integers and inf only at 0; zeta(s, +inf), so polygamma(n >= 2, +inf), is NaN (as torch's Cephes
port); lgamma on (1/2, 5/2) from the series about 1 (SciPy's gammaln is off by up to 1e-9
relative next to the zeros at 1 and 2).

Derivatives (tools/autograd/derivatives.yaml): lgamma: grad * digamma(self); digamma: grad *
polygamma(1, self); polygamma: grad * polygamma(n + 1, self); mvlgamma: mvlgamma_backward, grad *
sum_j digamma(self - j/2) for j in 0..p-1. Each is written with these ops, so it is
differentiable again (create_graph=True).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..autograd.function import ArrayFunction
from ._registry import op
from ._util import Tensor, _make, to_float
from .inplace import inplace
from .pointwise import _horner
from .scatter import _need_tensor
from .special_extra import _int_arg

_EULER = 0.57721566490153286061
_HALF_LOG_2PI = 0.91893853320467274178
_LOG_PI = 1.1447298858494002


def _f64(x):
    return np.asarray(x, np.float64)


# ---- NumPy kernels ------------------------------------------------------------------------------
# Cephes' Hurwitz zeta (the port in torch's ATen/native/Math.h): the series summed directly until
# q + k > 9, then Euler-Maclaurin with these 12 terms (the tail's Bernoulli coefficients,
# (2k)! / B_2k).
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042e-16


def _zeta_numpy(s, q):
    """Hurwitz zeta sum_{k >= 0} (q + k) ** -s, elementwise over the broadcast float64 arrays
    ``s`` and ``q``: Cephes' algorithm step for step, as torch runs it, so the special values
    are torch's: inf at s = 1, NaN for s < 1; inf at non-positive integer q (and -inf), NaN at
    negative non-integer q unless s is an integer; NaN at q = +inf and for NaN."""
    s, q = np.broadcast_arrays(_f64(s), _f64(q))
    out = np.full(q.shape, np.nan)
    with np.errstate(all="ignore"):
        pole = (s == 1) | ((s > 1) & (q <= 0) & (q == np.floor(q)))
        out[pole] = np.inf
        ok = ~pole & (s > 1) & ~np.isnan(q) & ((q > 0) | (s == np.floor(s)))
        if not ok.any():
            return out
        x, qq = s[ok], q[ok]
        total = qq ** -x
        a = qq.copy()
        b = np.zeros_like(qq)
        summing = np.ones(qq.shape, bool)   # still in the direct sum
        done = np.zeros(qq.shape, bool)     # converged: total is final
        i = 0
        while True:
            run = summing & ((i < 9) | (a <= 9.0))
            if not run.any():
                break
            i += 1
            a[run] += 1.0
            b[run] = a[run] ** -x[run]
            total[run] += b[run]
            conv = run & (-_MACHEP * total < b) & (b < _MACHEP * total)
            done |= conv
            summing &= ~conv & run
        tail = ~done
        w = a
        total[tail] += b[tail] * w[tail] / (x[tail] - 1.0) - 0.5 * b[tail]
        fac = np.ones_like(qq)
        k = 0.0
        for coef in _ZETA_A:
            fac[tail] *= x[tail] + k
            b[tail] /= w[tail]
            t = fac * b / coef
            total[tail] += t[tail]
            tail &= ~(np.abs(t / total) < _MACHEP)
            k += 1.0
            fac[tail] *= x[tail] + k
            b[tail] /= w[tail]
            k += 1.0
    out[ok] = total
    return out


_PSI_10 = 2.25175258906672110764
# Cephes' asymptotic digamma coefficients (in powers of 1/x^2, lowest first)
_PSI_A = (8.33333333333333333333e-2, -8.33333333333333333333e-3, 3.96825396825396825397e-3,
          -4.16666666666666666667e-3, 7.57575757575757575758e-3, -2.10927960927960927961e-2,
          8.33333333333333333333e-2)


def _digamma_numpy(x):
    """digamma in float64 as torch's CPU kernel (calc_digamma) computes it: recurrence up to
    x >= 10, then the asymptotic series; left of 0 the reflection formula on the fractional part
    (tan(pi r) is accurate where tan(pi x) is not). +-0 gives -+inf, negative integers and -inf
    NaN, +inf inf."""
    x = _f64(x)
    neg = x < 0
    negint = neg & (x == np.trunc(x))
    y = np.where(neg, 1.0 - x, x)
    acc = np.zeros_like(y)
    with np.errstate(all="ignore"):
        low = y < 10
        while low.any():
            acc[low] -= 1.0 / y[low]
            y[low] += 1.0
            low = y < 10
        z = 1.0 / (y * y)
        series = np.where(y < 1e17, z * _horner(z, _PSI_A), 0.0)
        out = np.where(y == 10, acc + _PSI_10, acc + np.log(y) - 0.5 / y - series)
        r = x - np.trunc(x)
        out = np.where(neg, out - np.pi / np.tan(np.pi * r), out)
    out[negint] = np.nan
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])
    return out


# Stirling's series for lgamma: B_2k / (2k (2k - 1)), in powers of 1/x^2, lowest first
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)


@functools.cache
def _lgamma1p_coefficients():
    """(-1)^k (zeta(k) - 1) / k for k = 2..30, zeta(k) - 1 being zeta(k, 2); computed once, on
    first use, rather than at import."""
    ks = np.arange(2.0, 31.0)
    return tuple((-1.0) ** ks * _zeta_numpy(ks, 2.0) / ks)


def _lgamma1p_series(z):
    """lgamma(1 + z) for |z| <= 1/2: -log1p(z) + (1 - gamma) z + sum_k (-1)^k (zeta(k) - 1) / k
    z^k. Accurate in relative terms at z = 0 and z = 1 (the zeros of lgamma at 1 and 2), where
    the Lanczos and Stirling forms cancel; the terms shrink as 4^-k."""
    return -np.log1p(z) + z * ((1 - _EULER) + z * _horner(z, _lgamma1p_coefficients()))


def _lgamma_numpy(x):
    """lgamma (log |Gamma(x)|) in float64: the series around 1 on [1/2, 3/2]; from there the
    recurrence lgamma(x) = lgamma(x - m) + log((x - 1)...(x - m)) up to 10; Stirling's series
    beyond; lgamma(1 + x) - log|x| on (-1/2, 1/2); the reflection formula log(pi / |sin(pi x)|) -
    lgamma(1 - x) left of -1/2, sin(pi x) taken of x - round(x) (exact). inf at non-positive
    integers and +-inf, NaN for NaN."""
    x = _f64(x)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        mid = (x >= 0.5) & (x < 10)
        if mid.any():
            xm = x[mid]
            m = np.floor(xm - 0.5)
            y = xm - m
            prod = np.ones_like(y)
            for j in range(int(m.max())):
                prod = np.where(j < m, prod * (y + j), prod)
            out[mid] = _lgamma1p_series(y - 1.0) + np.log(prod)
        big = x >= 10
        if big.any():
            xb = x[big]
            z = 1.0 / (xb * xb)
            out[big] = ((xb - 0.5) * np.log(xb) - xb + _HALF_LOG_2PI
                        + _horner(z, _STIRLING) / xb)
        small = a < 0.5
        if small.any():
            xs = x[small]
            out[small] = _lgamma1p_series(xs) - np.log(np.abs(xs))
        left = x <= -0.5
        if left.any():
            xl = x[left]
            sin = np.abs(np.sin(np.pi * (xl - np.round(xl))))
            out[left] = np.log(np.pi / sin) - _lgamma_numpy(1.0 - xl)
        out[np.isinf(x)] = np.inf
        out[np.isnan(x)] = np.nan
    return out


# ---- the float64 kernels: SciPy's when installed ------------------------------------------------
def _lgamma_f64(x):
    try:
        from scipy.special import gammaln
    except ImportError:
        return _lgamma_numpy(x)
    x = _f64(x)
    with np.errstate(all="ignore"):
        # (SciPy: -inf at -inf and inf for subnormal x, where torch has inf and -log|x|)
        out = np.where(np.isinf(x), np.inf,
                       np.where(np.abs(x) < 1e-300, -np.log(np.abs(x)), gammaln(x)))
    # SciPy's gammaln is good to only 1e-9 relative next to the zeros at 1 and 2 (torch's, from
    # the C library, to round-off), and the series about 1 is exact there
    near = (x > 0.5) & (x < 2.5)
    if near.any():
        out[near] = _lgamma_numpy(x[near])
    return out


def _digamma_f64(x):
    try:
        from scipy.special import psi
    except ImportError:
        return _digamma_numpy(x)
    return np.asarray(psi(_f64(x)), np.float64)


def _zeta_f64(s, q):
    """Hurwitz zeta of the broadcast ``s`` and ``q`` in float64: scipy.special.zeta when SciPy is
    installed (NaN at q = +inf, as torch's, where SciPy gives 0), else :func:`_zeta_numpy`."""
    try:
        from scipy.special import zeta
    except ImportError:
        return _zeta_numpy(s, q)
    q = _f64(q)
    return np.where(q == np.inf, np.nan, np.asarray(zeta(_f64(s), q), np.float64))


def _trigamma_f64(x):
    """polygamma(1, x): zeta(2, x) from 1/2 up; left of 1/2 the reflection formula pi^2 /
    sin^2(pi x) - zeta(2, 1 - x) with sin(pi x) of x itself, as torch's kernel, so a negative
    integer gives a huge finite value (sin(pi x) is not exactly 0) and 0 gives inf. Beyond 1e8
    the asymptotic 1/y + 1/(2 y^2) + 1/(6 y^3) (exact there to round-off): Cephes' zeta sums
    y^-2, which underflows to 0 from y = 1e154 while the trigamma, about 1/y, does not, and it
    gives NaN at inf where torch's trigamma gives 0."""
    x = _f64(x)
    with np.errstate(all="ignore"):
        left = x < 0.5
        y = np.where(left, 1.0 - x, x)
        far = y > 1e8
        out = np.where(far, (1.0 + (0.5 + 1.0 / (6.0 * y)) / y) / y,
                       _zeta_f64(2.0, np.where(far, 1.0, y)))
        s = np.sin(np.pi * x)
        return np.where(left, np.pi * np.pi / (s * s) - out, out)


def _polygamma_f64(n, x):
    if n == 0:
        return _digamma_f64(x)
    if n == 1:
        return _trigamma_f64(x)
    x = _f64(x)
    with np.errstate(all="ignore"):
        # (n! as torch forms it, exp(lgamma(n + 1)): inf from n = 171 on)
        return (1.0 if n % 2 else -1.0) * np.exp(math.lgamma(n + 1.0)) * _zeta_f64(n + 1.0, x)


def _rounded(f, x, *args):
    """``f`` (a float64 kernel) of float array ``x``, in x's dtype."""
    return np.asarray(f(*args, x) if args else f(x)).astype(x.dtype, copy=False)


# ---- Functions ----------------------------------------------------------------------------------
class Lgamma(ArrayFunction, name="LgammaBackward0"):
    """log |Gamma(x)|. derivatives.yaml lgamma: grad * digamma(self)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _rounded(_lgamma_f64, to_float(x))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * Digamma.apply(x)


class Digamma(ArrayFunction, name="DigammaBackward0"):
    """Gamma'(x) / Gamma(x). derivatives.yaml digamma: grad * polygamma(1, self)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _rounded(_digamma_f64, to_float(x))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * Polygamma.apply(x, 1)


class Polygamma(ArrayFunction, name="PolygammaBackward0"):
    """The n-th derivative of digamma. derivatives.yaml polygamma: grad * polygamma(n + 1,
    self)."""

    @staticmethod
    def forward(ctx, x, n):
        ctx.save_for_backward(x)
        ctx.n = n
        return _rounded(_polygamma_f64, to_float(x), n)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * Polygamma.apply(x, ctx.n + 1), None


class PolygammaInplace(Polygamma, name="PolygammaBackward1"):
    """polygamma_: torch's derivatives.yaml has a separate entry for the in-place form (the
    same formula), so its node is PolygammaBackward1."""


class Mvlgamma(ArrayFunction, name="MvlgammaBackward0"):
    """sum_j lgamma(x - j/2) + p (p - 1) / 4 log(pi), j in 0..p-1. derivatives.yaml mvlgamma:
    mvlgamma_backward(grad, self, p), grad * sum_j digamma(self - j/2)."""

    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p
        xf = to_float(x)
        shifts = np.arange(-(p - 1) / 2, 0.5, 0.5)
        r = _lgamma_f64(_f64(xf)[..., None] + shifts).sum(-1) + p * (p - 1) / 4 * _LOG_PI
        return np.asarray(r).astype(xf.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        # (torch's graph: x.unsqueeze(-1) + shifts, digamma, sum(-1), times grad)
        shifts = _make(np.arange(-(ctx.p - 1) / 2, 0.5, 0.5).astype(x._data.dtype))
        return g * Digamma.apply(x.unsqueeze(-1) + shifts).sum(-1), None


# ---- the public ops -----------------------------------------------------------------------------
@op("lgamma")
def lgamma(input):
    """log |Gamma(input)|, elementwise. Result: input's shape; a float input keeps its dtype, an
    integer or bool input gives the default float dtype, as torch. inf at 0, at the negative
    integers and at +-inf; NaN stays NaN. Computed in float64 (scipy.special.gammaln when SciPy
    is installed, but on (1/2, 5/2), next to the zeros at 1 and 2, and without SciPy: a series
    about 1, the recurrence, Stirling's series and the reflection formula) and rounded to the
    result's dtype.

    Derivative (derivatives.yaml lgamma, LgammaBackward0): digamma(input) * grad.

    Raises TypeError when input is not a Tensor."""
    _need_tensor(input, "lgamma", "input", 1)
    return Lgamma.apply(input)


@op("lgamma_", namespace=False)
def lgamma_(self):
    """In-place :func:`lgamma` (a method only, as in torch); returns self (LgammaBackward0).
    RuntimeError for an integer or bool tensor (the result is floating) and for what any in-place
    op refuses (see ``add_``)."""
    return inplace(self, Lgamma, (), "lgamma_")


@op("digamma")
def digamma(input):
    """The digamma function Gamma'(input) / Gamma(input), elementwise. Result: input's shape; a
    float input keeps its dtype, an integer or bool input gives the default float dtype. As
    torch: -inf at +0.0 and inf at -0.0, NaN at the negative integers and at -inf, inf at +inf.
    Computed in float64 (scipy.special.psi when SciPy is installed, else torch's own algorithm:
    recurrence, asymptotic series, reflection) and rounded to the result's dtype.

    Derivative (derivatives.yaml digamma, DigammaBackward0): polygamma(1, input) * grad.

    Raises TypeError when input is not a Tensor."""
    _need_tensor(input, "digamma", "input", 1)
    return Digamma.apply(input)


@op("digamma_", namespace=False)
def digamma_(self):
    """In-place :func:`digamma` (a method only, as in torch); returns self (DigammaBackward0).
    RuntimeError for an integer or bool tensor and for what any in-place op refuses."""
    return inplace(self, Digamma, (), "digamma_")


def _int_param(v, name, arg, pos):
    """An int argument as torch's parser reads it: a 0-d integer tensor is taken as its value
    (any other tensor, bool and float refused: TypeError); beyond int64, ValueError."""
    if isinstance(v, Tensor) and v._data.ndim == 0 and v._data.dtype.kind in "iu":
        v = int(v._data)
    v = _int_arg(v, name, arg, pos)
    if not -2 ** 63 <= v < 2 ** 63:
        raise ValueError(f"Overflow when unpacking long long ({name}: {arg}={v} is beyond int64)")
    return v


def _order(n, name):
    n = _int_param(n, name, "n", 1)
    if n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n. ({name}: got n={n})")
    return n


@op("polygamma", method=False)
def polygamma(n, input):
    """The ``n``-th derivative of digamma, elementwise: digamma for n = 0; for n >= 1
    (-1)^(n+1) n! zeta(n + 1, input). Result: input's shape; a float input keeps its dtype, an
    integer or bool input gives the default float dtype. Special values as torch: n = 1 is
    finite (huge) at the negative integers and inf at 0 (its reflection formula takes sin(pi x)
    unreduced); n >= 2 is +-inf at the non-positive integers and NaN at +inf. Computed in float64
    (scipy.special's psi and zeta when SciPy is installed, else NumPy ports of torch's digamma
    and of Cephes' Hurwitz zeta) and rounded to the result's dtype.

    Derivative (derivatives.yaml polygamma, PolygammaBackward0): polygamma(n + 1, input) * grad.

    Raises:
        TypeError: ``n`` is not an int or a 0-d integer tensor (bool and float refused, as
            torch); input is not a Tensor.
        ValueError: ``n`` beyond int64.
        RuntimeError: ``n`` < 0 ("polygamma(n, x) does not support negative n.")."""
    n = _order(n, "polygamma")
    _need_tensor(input, "polygamma", "input", 2)
    return Polygamma.apply(input, n)


@op("polygamma", namespace=False)
def _polygamma_method(self, n):
    """``self.polygamma(n)``: :func:`polygamma` of self (the order first, as torch's method)."""
    n = _order(n, "polygamma")
    return Polygamma.apply(self, n)


@op("polygamma_", namespace=False)
def polygamma_(self, n):
    """In-place :func:`polygamma` (a method only, as in torch): ``self.polygamma_(n)`` returns
    self, recorded on PolygammaBackward1 as torch. Raises as :func:`polygamma`, RuntimeError for
    an integer or bool tensor and for what any in-place op refuses."""
    n = _order(n, "polygamma_")
    return inplace(self, PolygammaInplace, (n,), "polygamma_")


def _dimension(p, name):
    p = _int_param(p, name, "p", 2)
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1 ({name}: got p={p})")
    return p


@op("mvlgamma")
def mvlgamma(input, p):
    """The multivariate log-gamma of dimension ``p``, elementwise: sum_{j=0}^{p-1} lgamma(input -
    j/2) + p (p - 1) / 4 log(pi). Result: input's shape; a float input keeps its dtype, an
    integer or bool input gives the default float dtype. As torch 2.x, input <= (p - 1) / 2 is
    not refused: the terms give what lgamma gives there (inf at the poles).

    Derivative (derivatives.yaml mvlgamma, MvlgammaBackward0: mvlgamma_backward):
    grad * sum_j digamma(input - j/2).

    Raises:
        TypeError: ``p`` is not an int or a 0-d integer tensor (bool and float refused);
            input is not a Tensor.
        ValueError: ``p`` beyond int64.
        RuntimeError: ``p`` < 1 ("p has to be greater than or equal to 1"); a bool input
            (as torch)."""
    _need_tensor(input, "mvlgamma", "input", 1)
    p = _dimension(p, "mvlgamma")
    if input._data.dtype == np.bool_:
        # (torch's error: its arange of shifts is added to the input, and bool refuses that)
        raise RuntimeError("The input tensor may not be a boolean tensor. (mvlgamma: convert "
                           "it first, e.g. input.float())")
    return Mvlgamma.apply(input, p)


@op("mvlgamma_", namespace=False)
def mvlgamma_(self, p):
    """In-place :func:`mvlgamma` (a method only, as in torch); returns self (MvlgammaBackward0).
    Raises as :func:`mvlgamma`, RuntimeError for an integer or bool tensor and for what any
    in-place op refuses."""
    return inplace(self, Mvlgamma, (_dimension(p, "mvlgamma_"),), "mvlgamma_")
