"""tapegrad.special: the functions of ``torch.special`` that tapegrad has kernels for, with
torch's names and signatures, ``out=`` included where torch's takes it (all but softmax and
log_softmax; the rules of :mod:`tapegrad.ops._out`).

Most are the tapegrad ops themselves under torch.special's names (``special.gammaln is
tapegrad.lgamma``, ``special.expit is tapegrad.sigmoid``, ...), so their results, dtypes,
errors and nodes are those ops'. ``round``, ``softmax`` and ``log_softmax`` are thin wrappers,
as torch.special's signatures differ from the namesakes' (``dim`` is required;
``round`` records RoundBackward1 even for decimals=0, as torch.special.round does). entr,
xlog1py, ndtr, erfcx, log_ndtr, ndtri and zeta exist only here (tapegrad.ops.special_fns).

Left out: the Bessel and related functions (airy_ai, bessel_j0/j1/y0/y1, i0/i0e/i1/i1e,
modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1, spherical_bessel_j0), the orthogonal
polynomials (chebyshev_polynomial_t/u/v/w and their shifted forms, hermite_polynomial_h/he,
laguerre_polynomial_l, legendre_polynomial_p) and gammainc/gammaincc: tapegrad has no kernel
for them (NumPy has i0 alone, not i1, its derivative), each would need its own NumPy fallback to
work without SciPy, and torch records no gradient for most of them (the polynomials and the
Bessel functions but i0/i0e/i1/i1e; none for gammainc's input).
"""
from __future__ import annotations

from ._tensor import Tensor as _Tensor
from .ops import PUBLIC as _PUBLIC
from .ops import special_fns as _fns
from .ops._out import with_out as _with_out
from .ops.pointwise import RoundDecimals as _RoundDecimals
from .ops.special_extra import _int_arg

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammaln", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln",
           "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy",
           "zeta"]

# (torch names these special_<name> in its errors)
entr, erfcx, log_ndtr, ndtr, ndtri, xlog1py, zeta = (
    _with_out(f, "special_" + f.__name__, None) for f in (
        _fns.entr, _fns.erfcx, _fns.log_ndtr, _fns.ndtr, _fns.ndtri, _fns.xlog1py, _fns.zeta))
digamma = psi = _PUBLIC["digamma"]
gammaln = _PUBLIC["lgamma"]
multigammaln = _PUBLIC["mvlgamma"]
polygamma = _PUBLIC["polygamma"]
erf = _PUBLIC["erf"]
erfc = _PUBLIC["erfc"]
erfinv = _PUBLIC["erfinv"]
exp2 = _PUBLIC["exp2"]
expm1 = _PUBLIC["expm1"]
log1p = _PUBLIC["log1p"]
expit = _PUBLIC["sigmoid"]
logit = _PUBLIC["logit"]
sinc = _PUBLIC["sinc"]
xlogy = _PUBLIC["xlogy"]
logsumexp = _PUBLIC["logsumexp"]


def round(input, *, decimals=0):  # (torch.special's name, shadowing the builtin here)
    """Round to ``decimals`` places (halves to even), as ``tapegrad.round``, but recorded on
    RoundBackward1 whatever ``decimals`` is (torch.special.round always calls round.decimals).
    Result: input's shape and dtype. Derivative (derivatives.yaml round.decimals): zero.

    Raises:
        NotImplementedError: an integer or bool input (torch.special.round refuses both, also
            with decimals=0).
        TypeError: input is not a Tensor; ``decimals`` is not an int (bool and float refused,
            as torch)."""
    if not isinstance(input, _Tensor):
        raise TypeError(f"special_round(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return _RoundDecimals.apply(input, _int_arg(decimals, "special_round", "decimals"))


# (out's dtype checked as tapegrad.round's: exactly the result's)
round = _with_out(round, "round", None)


def softmax(input, dim, *, dtype=None):
    """``tapegrad.softmax(input, dim, dtype=dtype)`` with torch.special's signature (``dim``
    required, ``dtype`` keyword-only): the softmax along ``dim``, after a cast to ``dtype`` when
    given. Derivative (derivatives.yaml _softmax, SoftmaxBackward0): _softmax_backward_data.
    Raises as tapegrad.softmax."""
    return _PUBLIC["softmax"](input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``tapegrad.log_softmax(input, dim, dtype=dtype)`` with torch.special's signature (``dim``
    required, ``dtype`` keyword-only): log(softmax) along ``dim``, after a cast to ``dtype`` when
    given. Derivative (derivatives.yaml _log_softmax, LogSoftmaxBackward0):
    _log_softmax_backward_data. Raises as tapegrad.log_softmax."""
    return _PUBLIC["log_softmax"](input, dim, dtype=dtype)
