"""Dropout: zero elements at random while training (``nn.functional.dropout``)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the others by
    1 / (1 - p), drawing from tapegrad's default generator; in eval mode, the identity.
    ValueError for p outside [0, 1]."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
