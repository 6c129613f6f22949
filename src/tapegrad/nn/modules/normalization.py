"""Normalization layers."""
__all__: list = []
