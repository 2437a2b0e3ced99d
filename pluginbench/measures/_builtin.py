"""The built-in measures, registered on import: tokens and time (recorded by the coding
pipeline from the harness's receipts) and lines (collected from ``model.patch``)."""

from __future__ import annotations

from collections.abc import Mapping

from ..events import Measure
from ._dup_tests import duplicated_test_lines
from ._lines import count_lines
from ._port import CollectorInput, Column, MeasureSpec
from ._registry import register

#: the version of the line-counting rules (``_lines.py``); bump it when a count can change.
#: 2: a patch is split into lines at ``\n`` only (a form feed inside an added line no
#: longer starts a line of its own, which could pass for a header and stop the count)
LINES_OBSERVER_VERSION = "2"


def collect_lines(inp: CollectorInput) -> Mapping[str, Measure]:
    """Source and test lines added and removed by the canonical patch, and binary files."""
    c = count_lines(inp.patch)
    return {
        "source_lines_added": Measure(value=c.source_added, unit="lines"),
        "source_lines_removed": Measure(value=c.source_removed, unit="lines"),
        "test_lines_added": Measure(value=c.test_added, unit="lines"),
        "test_lines_removed": Measure(value=c.test_removed, unit="lines"),
        "binary_files_changed": Measure(value=c.binary_files, unit="files"),
        "duplicated_test_lines_added": Measure(value=duplicated_test_lines(inp.patch), unit="lines"),
    }


TOKENS = register(MeasureSpec(
    name="tokens",
    description="Coding-session token usage from the harness's native receipts (an attempt's `tokens`).",
    columns=(),
    observer_version="1",
    source="coding",
    default=True,
))

TIME = register(MeasureSpec(
    name="time",
    description="Wall time of the agent process (an attempt's `coding_seconds`).",
    columns=(),
    observer_version="1",
    source="coding",
    default=True,
))

LINES = register(MeasureSpec(
    name="lines",
    description="Lines the canonical patch adds and removes, split into source and test files.",
    columns=(
        Column("source_lines_added", "lines", "src +", "Source lines added by the patch.", "Source lines added"),
        Column("source_lines_removed", "lines", "src −", "Source lines removed by the patch.", "Source lines removed"),
        Column("test_lines_added", "lines", "test +", "Test lines added by the patch.", "Test lines added"),
        Column("test_lines_removed", "lines", "test −", "Test lines removed by the patch.", "Test lines removed"),
        Column("binary_files_changed", "files", "binary", "Binary files the patch changes (no line counts).",
               summary=False, table=False),
        Column("duplicated_test_lines_added", "lines", "test dup",
               "Added test lines inside a six-line block that occurs more than once among the added test lines.",
               "Duplicated test lines added", better="lower"),
    ),
    observer_version=LINES_OBSERVER_VERSION,
    collect=collect_lines,
    default=True,
    reference=True,
))

# Code measures register in their own modules (imported here so `import pluginbench.measures`
# registers every built-in measure).
from . import _coverage_spec  # noqa: E402,F401,I001 - registers `coverage` (this order is the registration order)
from . import _activation_spec  # noqa: E402,F401 - registers `activation`
from . import _checks_spec  # noqa: E402,F401 - registers `checks`
