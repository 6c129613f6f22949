"""``tapegrad.nn``: neural-network building blocks shaped like ``torch.nn``.

``Module`` (the base class), ``Parameter``, layers (``Linear``, ``Sequential``, activations,
``Flatten``, ``Identity``), losses (``CrossEntropyLoss``, ``NLLLoss``, ``MSELoss``, ``BCELoss``,
``BCEWithLogitsLoss``, ``L1Loss``, ``SmoothL1Loss``, ``HuberLoss``, ``KLDivLoss``,
``PoissonNLLLoss``), plus the ``functional`` and ``init`` submodules.
"""
from .parameter import Parameter
from . import functional, init, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all

__all__ = ["Parameter", "functional", "init", "utils"] + list(_modules_all)
