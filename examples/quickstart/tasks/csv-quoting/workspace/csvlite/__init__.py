"""A small CSV row writer."""

from .writer import format_field, format_row

__all__ = ["format_field", "format_row"]
