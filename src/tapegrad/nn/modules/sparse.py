"""Embedding layers."""
from __future__ import annotations

from ... import _factories
from .. import functional as F
from .. import init
from .._inplace import bump_version
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding"]


class Embedding(Module):
    """A lookup table (``F.embedding``): ``weight`` (num_embeddings, embedding_dim), each row the
    vector of one index. Input: an int64/int32 Tensor of any shape; output: its shape plus
    (embedding_dim,), the weight's dtype.

    ``weight`` starts as N(0, 1) draws from tapegrad's default generator, with the
    ``padding_idx`` row (negative counts from the end) set to zero; that row then gets no
    gradient. ``max_norm``, ``norm_type`` and ``scale_grad_by_freq`` are passed to
    F.embedding (rows used are renormalized in place; gradients divided by index counts).
    ``sparse=True`` is accepted, but the forward raises NotImplementedError when the weight
    would get a gradient (tapegrad has no sparse gradients). ``_weight`` (a Tensor of shape
    (num_embeddings, embedding_dim)) is used as the weight itself, sharing its data, and
    ``_freeze`` makes it not require grad (see :meth:`from_pretrained`).

    Raises AssertionError (as torch) for a ``padding_idx`` outside [-num_embeddings,
    num_embeddings) or a ``_weight`` of another shape.
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, \
                    "Padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(_factories.empty((num_embeddings, embedding_dim),
                                                     device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self):
        """Weight to N(0, 1) draws, then the padding row to zeros."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            self.weight._data[self.padding_idx] = 0
            bump_version(self.weight)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (a 2-D Tensor (num_embeddings, dim),
        shared, not copied; its ``padding_idx`` row is kept as it is). ``freeze`` (default)
        makes the weight not require grad. AssertionError for a Tensor that is not 2-D."""
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
