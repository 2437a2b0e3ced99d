"""Lines added and removed by a patch, split into source and test files.

A file is a test file when a path component is ``tests``, ``test``, ``__tests__``,
``spec`` or ``testdata``, or its name looks like a test (``test_*.py``, ``*_test.py``,
``*_test.go``, ``*.test.ts``, ``*.spec.js``, ``conftest.py``...). Binary changes have no
lines; they are counted in ``binary_files`` so a reader sees they were not measured.
"""

import re
from typing import NamedTuple

from .._parsing import git_lines

_TEST_DIRS = {"tests", "test", "__tests__", "spec", "specs", "testdata", "testing"}
_TEST_NAME = re.compile(
    r"(^test_.*\.py$|.*_test\.py$|^conftest\.py$|.*_test\.go$|.*\.(test|spec)\.[cm]?[jt]sx?$"
    r"|.*Test\.java$|.*_spec\.rb$|^test_.*\.sh$)"
)


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    return any(p in _TEST_DIRS for p in parts[:-1]) or bool(_TEST_NAME.match(parts[-1]))


class LineCounts(NamedTuple):
    source_added: int
    source_removed: int
    test_added: int
    test_removed: int
    files: int
    binary_files: int


def count_lines(patch: str) -> LineCounts:
    """Count ``+``/``-`` lines per file of a ``git diff`` (headers excluded)."""
    totals = {"source": [0, 0], "test": [0, 0]}
    files = binary = 0
    kind = "source"
    in_hunk = False
    for line in git_lines(patch):
        if line.startswith("diff --git "):
            files += 1
            in_hunk = False
            m = re.match(r"diff --git a/(.*) b/(.*)$", line)
            path = m.group(2) if m else line
            kind = "test" if is_test_path(path) else "source"
            continue
        if line.startswith("Binary files ") or line == "GIT binary patch":
            binary += 1
            in_hunk = False
            continue
        if line.startswith("@@"):
            in_hunk = True
            continue
        if not in_hunk:
            continue
        if line.startswith("+"):
            totals[kind][0] += 1
        elif line.startswith("-"):
            totals[kind][1] += 1
    return LineCounts(totals["source"][0], totals["source"][1], totals["test"][0], totals["test"][1], files, binary)
