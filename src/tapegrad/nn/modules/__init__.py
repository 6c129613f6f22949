"""The layers: Module and its subclasses. Each module file lists its layers in ``__all__``."""
from . import (activation, container, conv, dropout, flatten, linear, loss, module, normalization,
               padding, pooling, sparse)
from .activation import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403

__all__ = [name for m in (module, linear, activation, container, conv, pooling, dropout, flatten,
                          loss, normalization, sparse, padding) for name in m.__all__]
