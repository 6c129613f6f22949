"""``tapegrad.linalg``: torch.linalg's dense linear algebra on (*, n, n) batches.

Everything registered with ``linalg=`` in :mod:`tapegrad.ops` (inv, inv_ex, det, slogdet, solve,
solve_ex, cholesky, cholesky_ex, matrix_power, vector_norm, matrix_norm, norm; ops/linalg_extra.py;
svd, svdvals, eigh, eigvalsh, qr; ops/linalg_decomp.py; solve_triangular, matrix_rank, pinv,
lstsq, cross, vecdot, multi_dot, matmul, diagonal, vander, tensorinv, tensorsolve;
ops/linalg_solvers.py) is exposed here under its torch.linalg name, plus :class:`LinAlgError`.
"""

from . import ops as _ops  # noqa: F401 - registers the ops
from .ops._registry import LINALG as _LINALG
from .ops.linalg_extra import LinAlgError  # noqa: F401 - torch.linalg.LinAlgError

globals().update(_LINALG)

