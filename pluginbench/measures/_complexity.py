"""Net complexity a submission adds: a pure comparison of two function populations.

The population of a file is its function spaces as the language's analyzer reports them
(:mod:`._complexity_scan`), each with its cyclomatic and cognitive score. A function's score
is the analyzer's score of its space, which includes functions nested in it (anonymous
closures have no separate score); sums count only outermost functions, so nothing is
counted twice. Functions are matched by file, qualified name (``Class.method``) and
ordinal among same-named ones.

* ``cyclomatic_added`` / ``cognitive_added``: the sum over the changed source files after
  the patch minus the sum before it (negative when the submission simplified code);
* ``functions_added``: functions after the patch with no match before it;
* ``source_files_added``: analyzed source files the patch creates;
* ``functions_over_cognitive_15``: functions after the patch with a cognitive score above
  :data:`COGNITIVE_LIMIT` that are new or whose score grew.

A complete scan of a submission that changed no function adds zero; a file the analyzer
could not read makes the values unknown, never zero.
"""

from collections.abc import Iterable, Mapping
from typing import NamedTuple

COGNITIVE_LIMIT = 15


class FunctionScore(NamedTuple):
    path: str
    name: str  # qualified, with "#n" for the n-th (n >= 2) function of the same name
    cyclomatic: int
    cognitive: int
    outermost: bool  # not nested in another function


class FileScan(NamedTuple):
    path: str
    language: str
    analyzer: str
    functions: tuple[FunctionScore, ...]
    error: str | None = None  # the analyzer could not read the file


class ComplexityDelta(NamedTuple):
    cyclomatic_added: int
    cognitive_added: int
    functions_added: int
    source_files_added: int
    functions_over_cognitive_15: int
    over_limit: tuple[str, ...]  # "path::name (score)" of those functions


def _index(scans: Iterable[FileScan]) -> dict[tuple[str, str], FunctionScore]:
    return {(f.path, f.name): f for scan in scans for f in scan.functions}


def compare(before: Mapping[str, FileScan], after: Mapping[str, FileScan]) -> ComplexityDelta:
    """The delta from the changed files' scans before and after the patch (keyed by path;
    a file absent on one side did not exist there)."""
    old = _index(before.values())
    new = _index(after.values())

    def total(index: dict[tuple[str, str], FunctionScore], attr: str) -> int:
        return sum(getattr(f, attr) for f in index.values() if f.outermost)

    over = []
    for key, f in sorted(new.items()):
        prior = old.get(key)
        if f.cognitive > COGNITIVE_LIMIT and (prior is None or f.cognitive > prior.cognitive):
            over.append(f"{f.path}::{f.name} ({f.cognitive})")
    return ComplexityDelta(
        cyclomatic_added=total(new, "cyclomatic") - total(old, "cyclomatic"),
        cognitive_added=total(new, "cognitive") - total(old, "cognitive"),
        functions_added=sum(1 for key in new if key not in old),
        source_files_added=sum(1 for path in after if path not in before),
        functions_over_cognitive_15=len(over),
        over_limit=tuple(over),
    )


def qualify(names: Iterable[tuple[str, ...]]) -> list[str]:
    """Qualified names (``A.b``) for functions given by their nesting path, with ``#n``
    for repeats in the order given."""
    seen: dict[str, int] = {}
    out = []
    for path in names:
        q = ".".join(path)
        seen[q] = seen.get(q, 0) + 1
        out.append(q if seen[q] == 1 else f"{q}#{seen[q]}")
    return out
