"""Parameter initialisation, as ``torch.nn.init``: each function fills a tensor in place (on
``tensor._data``, without recording anything) and returns it.

Random fills draw from tapegrad's default generator unless ``generator=`` is given, so
``tapegrad.manual_seed(s)`` makes them reproducible (the numbers differ from torch's streams).
As torch, the random fills run ``Tensor.uniform_`` / ``Tensor.normal_`` under ``no_grad``: they
work on parameters that require grad, bump the version, and raise what those raise (e.g.
NotImplementedError, a RuntimeError, for an integer tensor).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._factories import _np_generator
from .._tensor import _make
from ..autograd.grad_mode import no_grad
from ._inplace import write_
from ..autograd.graph import user_stacklevel

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_",
           "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]


def _no_op_if_empty(tensor):
    if tensor._data.size == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=user_stacklevel())
        return True
    return False


def _draw_uniform(tensor, a, b, generator):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def _draw_normal(tensor, mean, std, generator):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _fill(tensor, values):
    """Write an array into ``tensor`` as ``tensor.copy_`` under no_grad (in-place checks,
    version bump)."""
    with no_grad():
        tensor.copy_(_make(np.asarray(values)))
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity: 1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope**2)) for leaky_relu (slope ``param``, default 0.01),
    3/4 for selu. ValueError for anything else."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    elif nonlinearity == "tanh":
        return 5.0 / 3
    elif nonlinearity == "relu":
        return math.sqrt(2.0)
    elif nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    elif nonlinearity == "selu":
        return 3.0 / 4
    else:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    if tensor.dim() > 2:
        for s in tensor.shape[2:]:
            receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with samples from U(a, b) (``tensor.uniform_(a, b)`` under no_grad); returns tensor.
    NotImplementedError for a non-floating tensor, RuntimeError if a > b."""
    return _draw_uniform(tensor, a, b, generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with samples from N(mean, std**2) (``tensor.normal_`` under no_grad); returns
    tensor. NotImplementedError for a non-floating tensor, RuntimeError if std < 0."""
    return _draw_normal(tensor, mean, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with samples from N(mean, std**2) truncated to [a, b] (values outside are redrawn);
    returns tensor, same shape and dtype. Works best when a <= mean <= b; warns (UserWarning)
    when mean is more than 2 std outside [a, b], as torch. The same distribution as torch's, drawn
    differently: torch maps uniform draws through the inverse normal CDF; here normal draws are
    rejected and redrawn when [a, b] holds more than 30% of the mass, uniform draws on [a, b]
    with rejection otherwise (so any interval works). NotImplementedError for a non-floating tensor;
    ZeroDivisionError for std=0 (as torch). Streams differ from torch's."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.",
                      stacklevel=user_stacklevel())
    if tensor._data.dtype.kind != "f":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{tensor.dtype}'")
    p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
    g = _np_generator(generator)
    npd = tensor._data.dtype
    lo, hi = float(np.array(a, npd)), float(np.array(b, npd))
    n = tensor._data.size
    out = np.empty(n)
    pending = np.arange(n)
    if p > 0.3:
        while pending.size:
            c = mean + std * g.standard_normal(pending.size)
            ok = (c >= lo) & (c <= hi)
            out[pending[ok]] = c[ok]
            pending = pending[~ok]
    else:
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        while pending.size:
            c = a + (b - a) * g.random(pending.size)
            ok = np.log(g.random(pending.size)) <= -0.5 * ((c - mean) / std) ** 2 - log_peak
            out[pending[ok]] = c[ok]
            pending = pending[~ok]
    vals = np.clip(out.reshape(tensor._data.shape).astype(npd), lo, hi)
    return _fill(tensor, vals)


def constant_(tensor, val):
    """Fill with ``val``."""
    with no_grad():
        write_(tensor, val)
    return tensor


def ones_(tensor):
    """Fill ``tensor`` with ones in place (not recorded); returns it. As :func:`constant_`."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill ``tensor`` with zeros in place (not recorded); returns it. As :func:`constant_`."""
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity matrix (ValueError for other ranks)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        write_(tensor, np.eye(*tensor._data.shape))
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D conv weight ``[out, in, *kernel]`` with the Dirac delta: output
    channel d of each of ``groups`` groups copies input channel d at the kernel's centre, so the
    conv preserves as many input channels as possible; returns tensor. ValueError for other ranks
    and when dim 0 is not divisible by ``groups``."""
    dimensions = tensor.dim()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor._data.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    vals = np.zeros(sizes, dtype=tensor._data.dtype)
    centre = tuple(s // 2 for s in sizes[2:])
    for grp in range(groups):
        for d in range(min_dim):
            vals[(grp * out_chans_per_grp + d, d) + centre] = 1
    return _fill(tensor, vals)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return _draw_uniform(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _draw_normal(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan), gain from
    :func:`calculate_gain` (``a`` is leaky_relu's negative slope). ``a=sqrt(5)`` (what Linear
    uses) gives bound = 1 / sqrt(fan_in)."""
    if _no_op_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return _draw_uniform(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std**2) with std = gain / sqrt(fan)."""
    if _no_op_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return _draw_normal(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix times ``gain`` (Saxe et al. 2013): dims after the
    first are flattened, so the ``[rows, cols]`` view has orthonormal rows (rows <= cols) or
    columns (rows > cols). Drawn as torch does (QR of a normal matrix, signs fixed by diag(R)),
    in float64, then cast to the tensor's dtype. ValueError for fewer than 2 dims; a
    zero-element tensor is left as is. Streams differ from torch's."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor._data.size == 0:
        return tensor
    if tensor._data.dtype.kind != "f":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{tensor.dtype}'")
    rows = tensor._data.shape[0]
    cols = tensor._data.size // rows
    flat = _np_generator(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor._data.shape))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor as a sparse matrix (Martens 2010): N(0, std**2) values, then in each
    column ceil(sparsity * rows) randomly chosen rows set to zero; returns tensor. ValueError
    for other ranks. (torch draws the zeroed rows from the default generator even when
    ``generator`` is given; tapegrad uses ``generator`` for both.)"""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._data.shape
    num_zeros = math.ceil(sparsity * rows)
    _draw_normal(tensor, 0.0, std, generator)
    g = _np_generator(generator)
    vals = tensor._data.copy()
    for col in range(cols):
        vals[g.permutation(rows)[:num_zeros], col] = 0
    return _fill(tensor, vals)


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=user_stacklevel())
        return meth(*args, **kwargs)
    deprecated_init.__doc__ = (f"{old_name}(...): deprecated (FutureWarning); use "
                               f":func:`{new_name}`.")
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
