"""Small pieces shared by the optimizers added after SGD/Adam (RMSprop, Adagrad, Adamax, NAdam,
RAdam, Adadelta, Rprop, ASGD, LBFGS): argument checks worded as torch words them, scalar state
tensors, the step-time checks of ``capturable`` / ``differentiable``, and
:class:`PerParameterOptimizer`, the base whose ``step()`` runs the loop all but LBFGS share.

Rounding, for all of them: each update rounds after every operation, in the parameter's dtype,
in the order torch's single-tensor code (``foreach=None/False``, the CPU default) applies its
tensor operations, with hyperparameters cast to that dtype where torch casts them. Measured
against torch 2.13 on an AVX512 CPU, the results still differ in the last bit or two, from two
sources NumPy cannot reproduce cheaply: torch's vectorized kernels fuse the multiply and the add
of ``add(x, alpha=a)``, ``addcmul`` and ``lerp`` into one FMA (one rounding, NumPy rounds twice),
and torch's CPU ``sqrt`` is not always correctly rounded (NumPy's is). With torch's scalar
kernels (``ATEN_CPU_CAPABILITY=default``) most runs agree to the bit. SGD's ``add(x, alpha=a)``
steps go through :func:`add_scaled_`, which rounds once as torch does.
"""
from __future__ import annotations

import os

import numpy as np

from .._dtype import get_default_dtype
from .._tensor import Tensor, _make
from ..nn._inplace import bump_version
from .optimizer import Optimizer, _grad_array

__all__ = ["add_scaled_", "scale_", "check_lr", "check_nonneg", "check_betas",
           "scalar_dtype", "scalar_tensor", "zeros_state", "value", "lerp_", "check_step_flags",
           "bump_all", "PerParameterOptimizer"]

def lerp_(start, end, weight):
    """torch's lerp_ with a scalar weight, in place on ``start`` (in its dtype)."""
    w = start.dtype.type(weight)
    if abs(w) < 0.5:
        start += w * (end - start)
    else:
        start[...] = end - (end - start) * (start.dtype.type(1) - w)


_AXPY = None    # dtype -> BLAS axpy; {} without a working SciPy. Filled by the first call.
_BLOCK = 1 << 15    # elements: a block of an intermediate stays in cache until it is used
# OpenBLAS runs an axpy of more than 10,000 elements on its thread pool. SciPy's OpenBLAS pool is
# not NumPy's: its threads spin after the call and starve NumPy's (and the reverse), which made a
# training step three times slower on two cores. An axpy in pieces of this size never wakes them.
_AXPY_PIECE = 8192
# the piece size add_scaled_ uses, set by _load_axpy: None (one call) where OpenBLAS has one thread
# anyway, as there the pieces only cost a call each (a 784x512 float32 update took twice as long
# in pieces as in one call)
_AXPY_CHUNK = None
# OpenBLAS's axpy kernels fuse the multiply and the add (one rounding) only in their vector loop,
# which takes blocks of 16-64 elements by CPU; the few left over are multiplied and added
# apart (Haswell/Zen kernels: saxpy's last n % 32, daxpy's last n % 16), so they go through a
# zero-padded buffer of this size, a multiple of every kernel's block.
_AXPY_PAD = 128


def _openblas_threads():
    """The number of threads OpenBLAS takes when it loads: OPENBLAS_NUM_THREADS, else
    GOTO_NUM_THREADS, else OMP_NUM_THREADS (the first set to a positive number, in OpenBLAS's
    order), at most the CPUs this process may run on."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # (os has no sched_getaffinity on macOS and Windows)
        cpus = os.cpu_count() or 1
    for var in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        try:
            n = int(os.environ.get(var, ""))
        except ValueError:
            continue
        if n > 0:
            return min(n, cpus)
    return cpus


def _load_axpy():
    global _AXPY, _AXPY_CHUNK
    _AXPY = {}      # (tried once: a SciPy that fails to import is not tried at every step)
    _AXPY_CHUNK = None if _openblas_threads() == 1 else _AXPY_PIECE
    try:
        from scipy.linalg import blas
    except Exception:   # (not only ImportError: a broken install may raise OSError and others)
        return _AXPY
    _AXPY = {np.dtype(np.float32): blas.saxpy, np.dtype(np.float64): blas.daxpy}
    return _AXPY


def scale_(y, c):
    """``y *= c`` on an array, in place, as torch's ``mul_`` by a number: float16 is multiplied
    in float32 and rounded once (NumPy would round ``c`` to float16 first), other dtypes in
    their own."""
    if y.dtype == np.float16:
        y[...] = y.astype(np.float32) * np.float32(c)
    else:
        y *= y.dtype.type(c)


def add_scaled_(y, x, alpha):
    """``y += alpha * x`` on arrays, in place in ``y``'s dtype, rounded once as torch's fused
    kernel for ``y.add_(x, alpha=alpha)`` (an FMA, with ``alpha`` cast to the dtype), so an SGD
    step gives torch's values to the bit. ``x`` has ``y``'s shape.

    Where SciPy is installed, float32/float64 take BLAS's axpy, an FMA loop that also reads and
    writes each element once (NumPy's product then sum take three passes and a temporary):
    SGD's update of a 784x512 float32 weight is about 1.5x faster. A non-contiguous ``y`` or
    ``x`` goes through a contiguous copy. A large array goes in pieces of 8,192 elements, each
    below the size where OpenBLAS uses threads: SciPy's thread pool would compete with NumPy's.
    Where OpenBLAS has a single thread (OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or
    OMP_NUM_THREADS set to 1, or one CPU), it goes in one call.
    The last ``n % 128`` elements go through a zero-padded copy of 128, as OpenBLAS's kernels
    round those of their own tail twice on some CPUs (Haswell, Zen).
    SciPy is imported at the first call (about 0.3 s).
    Without it, float32 is computed in float64 a block at a time (the product of two float32
    values is exact there, so the one rounding that matters is the last; a second one differs
    from the FMA about once in 2**29 elements), and float64 rounds twice, which differs from
    torch in the last bit in many elements. float16 is computed in float32 (where the product is
    exact) and rounded to float16 once, as torch's vectorized loop; torch's scalar loop (a
    tensor under 16 elements, the last few of each thread's share) rounds the product to float16
    first, so there a few elements differ in the last bit. A read-only ``y`` raises NumPy's
    ValueError and is left as it was."""
    n = y.size
    if not n:
        return
    dt = y.dtype
    axpy = (_AXPY if _AXPY is not None else _load_axpy()).get(dt)
    fy = y.flags
    if axpy is not None and x.dtype == dt and x.shape == y.shape and n < 2 ** 31 \
            and fy.writeable and fy.aligned:
        # (f2py would write into a read-only y, and work on a copy of a strided or unaligned
        # one, which is lost)
        xv = (x if x.flags.c_contiguous else np.ascontiguousarray(x)).reshape(-1)
        t = y if fy.c_contiguous else np.ascontiguousarray(y)
        tv = t.reshape(-1)
        m = n - n % _AXPY_PAD
        chunk = _AXPY_CHUNK or max(m, 1)     # (None: OpenBLAS has one thread)
        if m == n and n <= chunk:
            axpy(xv, tv, a=alpha)
        else:
            for i in range(0, m, chunk):
                j = min(i + chunk, m)
                axpy(xv[i:j], tv[i:j], a=alpha)
            if m < n:
                # the last n % 128 elements through the kernel's vector loop, zero-padded
                px, py = np.zeros(_AXPY_PAD, dt), np.zeros(_AXPY_PAD, dt)
                px[:n - m] = xv[m:]
                py[:n - m] = tv[m:]
                axpy(px, py, a=alpha)
                tv[m:] = py[:n - m]
        if t is not y:
            y[...] = t
        return
    # (dtype= below: NumPy 1.x would multiply a float32 array by a float64 scalar in float32)
    if dt == np.float32:
        a, wide = np.float64(np.float32(alpha)), np.dtype(np.float64)
    elif dt == np.float16:
        a, wide = np.float32(np.float16(alpha)), np.dtype(np.float32)
    else:
        a, wide = dt.type(alpha), dt
    if n <= _BLOCK or not fy.c_contiguous:
        y[...] = np.multiply(x, a, dtype=wide) + y
        return
    # a block at a time: no temporary the size of y (an optimizer may not scale the gradient in
    # place, as hand-written code does: it stays readable after step())
    yv, xv = y.reshape(-1), np.broadcast_to(x, y.shape).reshape(-1)
    t = np.empty(_BLOCK, wide)
    for i in range(0, n, _BLOCK):
        xi = xv[i:i + _BLOCK]
        ti = t[:xi.size]
        np.multiply(xi, a, out=ti, dtype=wide)
        ti += yv[i:i + _BLOCK]
        yv[i:i + _BLOCK] = ti


_CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"


def check_lr(lr):
    """torch's learning-rate check: a Tensor lr must have one element (ValueError "Tensor lr
    must be 1-element") and is kept as a Tensor; any lr must be >= 0 (ValueError "Invalid
    learning rate: ..."). A non-number fails the comparison with TypeError, as in torch."""
    if isinstance(lr, Tensor):
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr.item():
            raise ValueError(f"Invalid learning rate: {lr.item()}")
        return lr
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    return lr


def check_nonneg(val, what):
    """ValueError ``Invalid {what}: {val}`` unless ``0 <= val``."""
    if not 0.0 <= val:
        raise ValueError(f"Invalid {what}: {val}")


def check_betas(betas):
    """ValueError ``Invalid beta parameter at index i: ...`` unless each beta is in [0, 1)."""
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def scalar_dtype():
    """torch's dtype for 0-d optimizer state and for a Python float made a tensor: float64 when
    the default dtype is float64, float32 otherwise."""
    return np.float64 if get_default_dtype().np == np.float64 else np.float32


def scalar_tensor(v=0.0):
    """A 0-d state tensor (``step``, ``eta``, ``mu``, ``mu_product``) in :func:`scalar_dtype`."""
    return _make(np.array(v, scalar_dtype()))


def zeros_state(p):
    """A state tensor of zeros with ``p``'s shape and dtype (``exp_avg``, ``square_avg``, ...)."""
    return _make(np.zeros_like(p._data))


def value(x):
    """A hyperparameter or 0-d state tensor as a Python float (torch's ``.item()``)."""
    return float(x.item()) if isinstance(x, Tensor) else float(x)


def check_step_flags(p, group, devices_text, devices):
    """Step-time checks torch makes on CPU: ``capturable=True`` fails its device assertion
    (AssertionError; tapegrad has only the CPU), ``differentiable=True`` on a leaf that requires
    grad fails the in-place check (RuntimeError), and on other parameters raises
    NotImplementedError (tapegrad does not record optimizer steps in the graph)."""
    if group.get("capturable"):
        raise AssertionError(f"If capturable=True, {devices_text} must be on supported devices: "
                             f"{devices}.")
    if group.get("differentiable"):
        if p.requires_grad and p.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        raise NotImplementedError("tapegrad optimizers do not support differentiable=True: "
                                  "the step is not recorded for autograd")


def bump_all(*tensors):
    """Bump the version counter of each tensor changed in place by a step."""
    for t in tensors:
        bump_version(t)


class PerParameterOptimizer(Optimizer):
    """Base of the optimizers that update each parameter on its own, from its gradient and its
    own state (RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD). ``step()`` is
    their common loop; a subclass gives:

    - ``_init_state(state, p, group)``: fills the empty ``state`` of ``p`` at its first step;
    - ``_update(p, grad, state, group)``: one step for one parameter, in place, in its dtype;
    - ``_setstate_defaults``: ``(option, default)`` pairs that ``__setstate__`` sets in param
      groups saved without them (torch's list for that optimizer, in its order);
    - ``_capturable_tensors`` / ``_capturable_devices``, where torch's ``capturable=True``
      assertion for that optimizer words them otherwise than most do.
    """

    _capturable_tensors = "params and state_steps"
    _capturable_devices = _CAPTURABLE_DEVICES

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for option, default in self._setstate_defaults:
                group.setdefault(option, default)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                grad = _grad_array(p)
                if grad is None:
                    continue
                check_step_flags(p, group, self._capturable_tensors, self._capturable_devices)
                state = self.state[p]
                if len(state) == 0:
                    self._init_state(state, p, group)
                # overflow and 0/0 give inf/nan silently, as in torch, without NumPy's warnings
                with np.errstate(all="ignore"):
                    self._update(p, grad, state, group)
        return loss
