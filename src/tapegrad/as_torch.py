"""Run unchanged PyTorch code on tapegrad: ``import torch`` (and ``import torch.nn as nn``,
``from torch.utils.data import DataLoader``, ...) then gives tapegrad's modules.

    python -m tapegrad.as_torch train.py [args...]     # run a script with torch -> tapegrad

or, in code, before anything imports torch::

    import tapegrad.as_torch
    tapegrad.as_torch.install()

``import tapegrad as torch`` alone covers attribute access (``torch.nn.Linear``), but an
``import torch.nn`` statement would look for a real ``torch`` package; this module maps every
``torch`` / ``torch.X`` import to the already-loaded ``tapegrad`` / ``tapegrad.X`` module (the
same objects, so there is one Tensor class). A ``torch.X`` that tapegrad lacks raises
ModuleNotFoundError naming it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys

__all__ = ["install", "uninstall", "installed"]


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch`` and ``torch.*`` imports and loads them as the tapegrad modules."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        target = "tapegrad" + spec.name[len("torch"):]
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError:
            raise ModuleNotFoundError(f"No module named {spec.name!r}: tapegrad has no {target!r} "
                                      f"(see the README for what tapegrad provides)",
                                      name=spec.name) from None

    def exec_module(self, module):
        pass    # (the tapegrad module is loaded already)


_ALIAS = _Alias()


def installed() -> bool:
    """Whether ``torch`` imports are mapped to tapegrad."""
    return _ALIAS in sys.meta_path


def install():
    """Map ``torch`` and ``torch.*`` imports to tapegrad (idempotent). RuntimeError when the real
    torch is already imported: the two cannot share a process."""
    if installed():
        return
    # (a None entry is a failed import, not a loaded module)
    real = [m for m, mod in sys.modules.items() if (m == "torch" or m.startswith("torch."))
            and mod is not None and not getattr(mod, "__name__", "").startswith("tapegrad")]
    if real:
        raise RuntimeError("tapegrad.as_torch.install(): the real torch is imported already; "
                           "install the alias before anything imports torch")
    import tapegrad
    sys.meta_path.insert(0, _ALIAS)
    sys.modules["torch"] = tapegrad


def uninstall():
    """Undo :func:`install`: ``torch`` imports find the real torch (if installed) again."""
    if _ALIAS in sys.meta_path:
        sys.meta_path.remove(_ALIAS)
    for m in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        if getattr(sys.modules[m], "__name__", "").startswith("tapegrad"):
            del sys.modules[m]


def main(argv=None):
    """``python -m tapegrad.as_torch script.py [args...]``: run the script as ``__main__`` with
    torch imports mapped to tapegrad."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m tapegrad.as_torch SCRIPT.py [ARGS...]", file=sys.stderr)
        return 2
    install()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
