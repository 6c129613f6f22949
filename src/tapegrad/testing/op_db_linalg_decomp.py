"""op_db rows of the decompositions (ops/linalg_decomp.py): linalg.svd, linalg.svdvals, svd,
linalg.eigh, linalg.eigvalsh, linalg.qr, qr. What rows cannot say (errors, named tuples, strides,
torch's refusals in backward, gradients dropped on full_matrices' extra columns, NaN at repeated
singular values) is in tests/test_linalg_decomp.py.

Singular vectors, eigenvectors and Q's columns are unique only up to sign, and NumPy's LAPACK
and torch's may pick other signs, so each row runs its op inside a wrapper whose outputs do not
depend on the signs, the same in both frameworks (``op`` and ``torch_op``): S and the
eigenvalues themselves, U diag(c) Vh and the projectors U diag(c) U^T, V diag(c) V^T (and
V diag(c) V^T of the eigenvectors) with distinct constants c (invariant while the singular values / eigenvalues are
distinct), and QR with R's diagonal made positive. The samples have well-separated singular
values and eigenvalues, so the finite differences of gradcheck are accurate. The eigh rows
symmetrize their input in the wrapper (eigh reads one triangle, its gradient is the symmetric
one), except the samples named ``raw_*`` (compared with torch only).

The legacy svd and qr rows call the Tensor methods (``method=``: Tensor.svd is tapegrad.svd,
Tensor.qr is tapegrad.qr), so that the method-vs-function test, which compares a row's op with
the bare method, does not compare the wrapper with the bare decomposition.
"""
import numpy as np

from .op_db import OpInfo, SampleInput

S = SampleInput


def _spread(make, dt, *shape):
    """A (*, m, n) batch with singular values 1, 1.5, 2, ... (well separated, away from 0) in
    random orthonormal bases."""
    m, n = shape[-2:]
    k = min(m, n)
    batch = shape[:-2]
    u = np.linalg.qr(make(*batch, m, m).astype(np.float64) + 3 * np.eye(m))[0]
    v = np.linalg.qr(make(*batch, n, n).astype(np.float64) + 3 * np.eye(n))[0]
    s = np.zeros(batch + (m, n))
    s[..., range(k), range(k)] = 1 + 0.5 * np.arange(k)[::-1]
    return np.asarray(u @ s @ np.swapaxes(v, -1, -2), dt)


def _sym(make, dt, *shape):
    """A (*, n, n) batch of symmetric matrices with eigenvalues -1.5, -0.5, 0.5, ... (distinct,
    well separated)."""
    n = shape[-1]
    q = np.linalg.qr(make(*shape).astype(np.float64) + 3 * np.eye(n))[0]
    d = np.arange(n) - (n - 1) / 2
    return np.asarray((q * d) @ np.swapaxes(q, -1, -2), dt)


def _t(a):
    return np.swapaxes(a, -1, -2)


def s_svd(make, dt):
    out = []
    for fm in (True, False):
        out += [S(_spread(make, dt, 3, 3), (fm,), name=f"3x3_{fm}"),
                S(_spread(make, dt, 4, 2), (fm,), name=f"tall_{fm}"),
                S(_spread(make, dt, 2, 4), (fm,), name=f"wide_{fm}"),
                S(_spread(make, dt, 2, 4, 3), (fm,), name=f"batched_tall_{fm}"),
                S(_spread(make, dt, 2, 1, 2, 3), (fm,), name=f"batched_wide_{fm}"),
                S(_t(_spread(make, dt, 2, 3, 4)), (fm,), name=f"noncontig_{fm}"),
                S(make(0, 3), (fm,), name=f"empty_rows_{fm}"),
                S(make(3, 0), (fm,), name=f"empty_cols_{fm}"),
                S(make(0, 2, 3), (fm,), name=f"zero_batch_{fm}")]
    return out + [S(_spread(make, dt, 1, 1), name="1x1"), S(make(0, 0), name="0x0")]


def s_svdvals(make, dt):
    return [S(_spread(make, dt, 3, 3), name="3x3"), S(_spread(make, dt, 4, 2), name="tall"),
            S(_spread(make, dt, 2, 2, 4), name="batched_wide"),
            S(_t(_spread(make, dt, 2, 3, 4)), name="noncontig"),
            S(make(0, 3), name="empty"), S(make(0, 2, 2), name="zero_batch")]


def s_svd_legacy(make, dt):
    out = []
    for some in (True, False):
        for cuv in (True, False):
            sfx = f"{'some' if some else 'full'}_{'uv' if cuv else 'nouv'}"
            out += [S(_spread(make, dt, 3, 3), (some, cuv), name=f"3x3_{sfx}"),
                    S(_spread(make, dt, 4, 2), (some, cuv), name=f"tall_{sfx}"),
                    S(_spread(make, dt, 2, 2, 3), (some, cuv), name=f"batched_wide_{sfx}")]
    return out + [S(_t(_spread(make, dt, 3, 4)), name="noncontig"), S(make(3, 0), name="empty")]


def s_eigh(make, dt):
    return [S(_sym(make, dt, 3, 3), name="3x3"), S(_sym(make, dt, 3, 3), ("U",), name="upper"),
            S(_sym(make, dt, 2, 4, 4), name="batched"),
            S(_sym(make, dt, 2, 1, 3, 3), ("U",), name="batched_upper"),
            S(_sym(make, dt, 1, 1), name="1x1"),
            S(_t(_sym(make, dt, 2, 3, 3) + np.asarray(np.triu(np.ones((3, 3)), 1) * 0.1, dt)),
              name="noncontig"),
            S(make(0, 0), name="empty"), S(make(0, 3, 3), name="zero_batch"),
            # one triangle read: the other holds noise, the wrapper leaves the input as it is
            S(_sym(make, dt, 3, 3) + np.asarray(np.triu(make(3, 3), 1), dt), ("L", False),
              name="raw_lower", gradcheck=False),
            S(_sym(make, dt, 3, 3) + np.asarray(np.tril(make(3, 3), -1), dt), ("U", False),
              name="raw_upper", gradcheck=False)]


def s_qr(make, dt):
    out = []
    for mode in ("reduced", "complete"):
        out += [S(_spread(make, dt, 3, 3), (mode,), name=f"3x3_{mode}"),
                S(_spread(make, dt, 2, 4), (mode,), name=f"wide_{mode}"),
                S(_spread(make, dt, 2, 2, 3), (mode,), name=f"batched_wide_{mode}"),
                S(make(0, 3), (mode,), name=f"empty_{mode}")]
    return out + [S(_spread(make, dt, 4, 2), name="tall"),
                  S(_spread(make, dt, 2, 4, 3), name="batched_tall"),
                  S(_t(_spread(make, dt, 2, 3, 4)), name="noncontig"),
                  S(make(3, 0), name="empty_cols"), S(make(0, 3, 2), name="zero_batch")]


def s_qr_legacy(make, dt):
    return [S(_spread(make, dt, 3, 3), name="3x3"), S(_spread(make, dt, 4, 2), name="tall"),
            S(_spread(make, dt, 2, 2, 4), (False,), name="batched_wide_complete"),
            S(_t(_spread(make, dt, 3, 4)), name="noncontig")]


# ---- sign-independent wrappers (lib: tapegrad or torch) -----------------------------------------
def _weights(lib, k, A):
    return lib.arange(1, k + 1, dtype=A.dtype)


def _invariant_svd(lib, U, S, Vh):
    """S, U diag(c) Vh, U diag(c) U^T, V diag(c) V^T over the first k = len(S) singular
    vectors, with c = 1, 2, ..., k."""
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    c = _weights(lib, k, S)
    return S, (U * c) @ Vh, (U * c) @ U.mT, (Vh.mT * c) @ Vh


def _svd_row(lib):
    return lambda A, *a, **k: _invariant_svd(lib, *lib.linalg.svd(A, *a, **k))


def _svd_legacy_row(lib):
    def f(A, some=True, compute_uv=True):
        U, S, V = A.svd(some, compute_uv)
        if not compute_uv:
            return U, S, V     # zeros with no history
        return _invariant_svd(lib, U, S, V.mT)
    return f


def _eigh_row(lib, values_only):
    def f(A, UPLO="L", symmetrize=True):
        if symmetrize:
            A = (A + A.mT) / 2
        if values_only:
            return lib.linalg.eigvalsh(A, UPLO)
        L, V = lib.linalg.eigh(A, UPLO)
        return L, (V * _weights(lib, L.shape[-1], L)) @ V.mT
    return f


def _positive_qr(Q, R):
    """(Q, R) with R's diagonal made positive (Q's first k columns and R's first k rows scaled
    by the signs of R's diagonal)."""
    d = R.diagonal(0, -2, -1).sign()
    k = d.shape[-1]
    return Q[..., :k] * d.unsqueeze(-2), R[..., :k, :] * d.unsqueeze(-1)


def _qr_row(lib):
    return lambda A, *a, **k: _positive_qr(*lib.linalg.qr(A, *a, **k))


def _qr_legacy_row(A, some=True):
    return _positive_qr(*A.qr(some))


def _row(name, wrap, samples, **kw):
    def op(*a, **k):
        import tapegrad
        return wrap(tapegrad)(*a, **k)
    return OpInfo(name, op=op, torch_op=wrap, sample_inputs_func=samples, **kw)


rows = [
    _row("linalg.svd", _svd_row, s_svd),
    OpInfo("linalg.svdvals", sample_inputs_func=s_svdvals),
    _row("svd", lambda lib: _svd_legacy_row(lib), s_svd_legacy, method="svd"),
    _row("linalg.eigh", lambda lib: _eigh_row(lib, False), s_eigh),
    _row("linalg.eigvalsh", lambda lib: _eigh_row(lib, True), s_eigh),
    _row("linalg.qr", _qr_row, s_qr),
    _row("qr", lambda lib: _qr_legacy_row, s_qr_legacy, method="qr"),
]

name_differences: dict = {}
