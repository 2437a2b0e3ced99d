"""Measures: small collectors, each returning a value or an explicit unknown with a reason."""

from ._lines import LineCounts, count_lines, is_test_path

__all__ = ["LineCounts", "count_lines", "is_test_path"]
