"""Added test lines that repeat in six-line blocks (``duplicated_test_lines_added``).

Pure. From a ``git diff``: the added lines of test files (the test-line classifier,
:func:`is_test_path`) are taken run by run (consecutive ``+`` lines of one hunk), each line
stripped of surrounding whitespace, blank lines left out. Every window of
:data:`BLOCK` consecutive lines of a run is a block; a block whose text occurs more than
once among all added test runs (in the same file or another) is repeated. The value is the
number of added test lines inside at least one repeated block, every copy counted.
"""

from __future__ import annotations

import re
from collections import defaultdict

from .._parsing import git_lines
from ._lines import is_test_path

BLOCK = 6
_DIFF_GIT = re.compile(r'^diff --git "?a/(.*?)"? "?b/(.*?)"?$')


def added_test_runs(patch: str) -> list[list[tuple[int, str]]]:
    """Runs of added, non-blank test lines as ``(line id, stripped text)``."""
    runs: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    is_test = False
    in_hunk = False
    line_id = 0
    for raw in git_lines(patch):
        line_id += 1
        m = _DIFF_GIT.match(raw)
        if m:
            if current:
                runs.append(current)
            current, in_hunk, is_test = [], False, is_test_path(m.group(2))
            continue
        if raw.startswith("@@"):
            in_hunk = True
            if current:
                runs.append(current)
            current = []
            continue
        if not in_hunk or not is_test:
            continue
        if raw.startswith("+"):
            text = raw[1:].strip()
            if text:
                current.append((line_id, text))
        elif current and not raw.startswith("\\"):
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def duplicated_test_lines(patch: str) -> int:
    """How many added test lines lie in a repeated six-line block."""
    where: dict[tuple[str, ...], list[tuple[int, int]]] = defaultdict(list)  # block -> (run, start)
    runs = added_test_runs(patch)
    for r, run in enumerate(runs):
        texts = [t for _, t in run]
        for start in range(len(texts) - BLOCK + 1):
            where[tuple(texts[start:start + BLOCK])].append((r, start))
    covered: set[int] = set()
    for places in where.values():
        if len(places) < 2:
            continue
        for r, start in places:
            covered.update(line_id for line_id, _ in runs[r][start:start + BLOCK])
    return len(covered)
