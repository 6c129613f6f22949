"""``tapegrad.cuda``: there is no CUDA backend; these report that, as torch does on a machine
without a GPU, so ``device('cuda' if tapegrad.cuda.is_available() else 'cpu')`` picks the CPU."""
from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize",
           "empty_cache"]


def is_available() -> bool:
    """False: tapegrad computes on the CPU only."""
    return False


def device_count() -> int:
    """0: no CUDA devices."""
    return 0


def manual_seed(seed):
    """Nothing to seed: as torch without a GPU, silently does nothing."""


def manual_seed_all(seed):
    """Nothing to seed: as torch without a GPU, silently does nothing."""


def synchronize(device=None):
    """RuntimeError, as torch without CUDA: there is no device to wait for."""
    raise RuntimeError("Found no NVIDIA driver on your system (tapegrad computes on the CPU only)")


def empty_cache():
    """Nothing cached: does nothing, as torch without CUDA."""
