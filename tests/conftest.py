"""Shared fixtures. Torch is only a reference: tests that compare with it take the ``torch``
fixture and are skipped when torch is not installed; everything else runs without it."""
import pytest


@pytest.fixture(scope="session")
def torch():
    """The torch module, or a clean skip when it is not installed."""
    return pytest.importorskip("torch")
