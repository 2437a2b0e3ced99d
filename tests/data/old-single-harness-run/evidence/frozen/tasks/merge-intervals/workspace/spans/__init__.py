"""Closed intervals."""

from .intervals import merge

__all__ = ["merge"]
