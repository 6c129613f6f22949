"""Every differentiable op: the only place derivatives live.

Importing this package attaches each op to the ``tapegrad`` namespace and to ``Tensor`` through
:func:`tapegrad.ops._registry.op`.
"""
from . import _registry  # noqa: F401
from . import pointwise, reduction, shape, indexing, linalg, nn_ops, inplace  # noqa: F401
from . import selection, contraction, methods, nn_extra  # noqa: F401
from . import losses  # noqa: F401
from . import activations, normalization, scatter, pooling, extra  # noqa: F401
from . import binary_extra  # noqa: F401
from . import special_extra, gamma  # noqa: F401
from . import bitwise, shape_extra  # noqa: F401
from . import linalg_extra, linalg_solvers  # noqa: F401
from . import linalg_decomp  # noqa: F401
from . import aliases  # noqa: F401

PUBLIC = _registry.PUBLIC
