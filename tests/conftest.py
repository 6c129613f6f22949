"""Shared fixtures. Torch is only a reference: tests that compare with it take the ``torch``
fixture and are skipped when torch is not installed; everything else runs without it."""
import sys

import pytest


@pytest.fixture(scope="session")
def torch():
    """The torch module, or a clean skip when it is not installed."""
    return pytest.importorskip("torch")


@pytest.fixture(params=["scipy", "numpy"])
def kernel_path(request, monkeypatch):
    """Each test twice, for the ops with a SciPy kernel and a NumPy fallback (erfinv, the gamma
    family, tapegrad.special's): with SciPy's kernels (skipped without SciPy) and with
    scipy.special made unimportable (the NumPy ones)."""
    if request.param == "scipy":
        pytest.importorskip("scipy.special")
    else:
        monkeypatch.setitem(sys.modules, "scipy.special", None)
    return request.param
