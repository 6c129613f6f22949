"""Utilities around the core, shaped like ``torch.utils``.

* :mod:`tapegrad.utils.data`: Dataset, DataLoader, samplers, ``random_split``.
* :mod:`tapegrad.utils.serialization`: ``save``/``load`` (also ``tapegrad.save``/``tapegrad.load``),
  checkpoints as ``.npz`` archives, never pickle.
* :mod:`tapegrad.utils.viz`: ``make_dot``, the recorded graph as a ``graphviz.Digraph`` (needs the
  optional ``graphviz`` package: ``pip install 'tapegrad[viz]'``).
"""
import importlib as _importlib

from . import data

__all__ = ["data", "serialization", "viz"]


def __getattr__(name):
    if name in ("serialization", "viz"):
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tapegrad.utils' has no attribute {name!r}")
