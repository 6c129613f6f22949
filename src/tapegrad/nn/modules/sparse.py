"""Embedding layers."""
__all__: list = []
