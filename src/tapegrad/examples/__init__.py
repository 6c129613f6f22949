"""Runnable programs on real data: ``python -m tapegrad.examples.NAME``.

- ``digits``: an MLP classifier on scikit-learn's 8x8 handwritten digits (needs scikit-learn,
  tqdm and matplotlib: ``pip install tapegrad[examples]``).
- ``tour``: the tape step by step with real output (NumPy only).
"""
