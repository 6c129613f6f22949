"""Ops added in one group (see the module docstring once filled in)."""
