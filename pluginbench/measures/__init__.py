"""Measures: small collectors, each returning a value or an explicit unknown with a reason."""

from ._lines import LineCounts, count_lines, is_test_path
from ._source_only import FILTER_REVISION, filter_patch

__all__ = [
    "FILTER_REVISION",
    "LineCounts",
    "count_lines",
    "filter_patch",
    "is_test_path",
]
