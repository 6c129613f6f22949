"""``tapegrad.cuda``: there is no CUDA backend; these report that, as torch does on a machine
without a GPU, so ``device('cuda' if tapegrad.cuda.is_available() else 'cpu')`` picks the CPU."""
from __future__ import annotations

__all__ = ["is_available", "device_count"]


def is_available() -> bool:
    """False: tapegrad computes on the CPU only."""
    return False


def device_count() -> int:
    """0: no CUDA devices."""
    return 0
