"""tapegrad: tape-based reverse-mode automatic differentiation on NumPy, shaped like ``torch``.

``import tapegrad as torch`` runs PyTorch-style code: tensors record the ops applied to them while
grad mode is on, and ``backward()`` walks that tape in reverse to fill ``.grad`` of the leaves.
"""
import warnings as _warnings

# NumPy reports inf/nan results (x / 0, log(0), overflow) as RuntimeWarnings attributed to the
# module that called it; torch computes the same values silently, so ours do too. Only warnings
# raised from tapegrad's own modules are filtered; user code keeps NumPy's behaviour.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"tapegrad(\.|$)")

from ._dtype import (bool, double, dtype, float, float16, float32, float64,  # noqa: A004
                     get_default_dtype, half, int, int8, int16, int32, int64, long, promote_types,
                     set_default_dtype, short, uint8)
from ._size import Size
from ._memory_format import (channels_last, channels_last_3d, contiguous_format, jagged, layout,
                             memory_format, preserve_format, sparse_bsc, sparse_bsr, sparse_coo,
                             sparse_csc, sparse_csr, strided)
from ._device import device
from ._tensor import Tensor
from ._tensor_str import get_printoptions, set_printoptions
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from ._factories import *  # noqa: F401,F403
from . import ops as _ops
from . import autograd
# (loaded for what it does: it gives the node classes torch's _saved_* attributes)
from .autograd import saved_attrs as _saved_attrs  # noqa: F401
from . import cpu, cuda
from ._compat import *  # noqa: F401,F403

globals().update(_ops.PUBLIC)

# load autograd.gradcheck's module now: first loaded later, by `from tapegrad.autograd.gradcheck
# import gradcheck`, it would replace the function tapegrad.autograd.gradcheck with the module
autograd.__getattr__("gradcheck")

__version__ = "0.1.0"


def result_type(tensor1, tensor2):
    """The dtype torch would give an op on these two operands (Tensors or Python numbers)."""
    from ._dtype import result_type as _rt
    return _rt(tensor1, tensor2)


def is_tensor(obj):
    """True if ``obj`` is a tapegrad Tensor."""
    return isinstance(obj, Tensor)


def __getattr__(name):
    import importlib
    if name in ("nn", "optim", "testing", "examples", "utils", "special", "linalg"):
        return importlib.import_module(f".{name}", __name__)
    if name in ("save", "load"):  # tapegrad.save / tapegrad.load (utils/serialization.py)
        return getattr(importlib.import_module(".utils.serialization", __name__), name)
    raise AttributeError(f"module 'tapegrad' has no attribute {name!r}")
