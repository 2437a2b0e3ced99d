"""Semantic versions."""

from .semver import compare, parse

__all__ = ["compare", "parse"]
