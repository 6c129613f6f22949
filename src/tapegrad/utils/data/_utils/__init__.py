"""Helpers of ``tapegrad.utils.data`` kept at torch's private import paths
(``tapegrad.utils.data._utils.collate``)."""
from . import collate

__all__ = ["collate"]
