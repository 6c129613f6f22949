"""Runnable programs: python -m tapegrad.examples.NAME (digits, tour)."""
