"""The plain inputs of the compare core: one attempt and one package.

The CLI builds these from each run's ``report/results.json``; the core never reads files.
"""

import math
from collections.abc import Mapping
from typing import NamedTuple

#: Outcomes an attempt can have once graded; ``None`` means it is not complete.
PASS, OVERLAP_PASS, FAIL, EMPTY, UNKNOWN = "pass", "overlap_pass", "fail", "empty", "unknown"
#: The metric key of an attempt's dollars (results.json ``costs.attempts``), read by cost gates.
DOLLARS = "Dollars"


class AttemptRecord(NamedTuple):
    """One assigned attempt: its task, outcome (``None`` when not complete) and metrics.

    ``metrics`` maps a metric name (:data:`pluginbench.stats.METRICS`) to its value, or to
    ``None`` when unknown; ``reasons`` says why for the unknown ones.
    """

    attempt_id: str
    task: str
    outcome: str | None
    metrics: Mapping[str, float | None]
    reasons: Mapping[str, str] = {}


class Package:
    """One arm taken from one run: its name (the arm), the run it came from, its attempts.

    Attempts are indexed by task once, so a comparison over thousands of attempts looks
    each task up in constant time.
    """

    __slots__ = ("name", "run", "attempts", "references", "prices", "_by_task")

    def __init__(self, name: str, run: str, attempts: tuple[AttemptRecord, ...],
                 references: Mapping[str, Mapping[str, tuple[float | None, str | None]]] | None = None,
                 prices: str | None = None) -> None:
        self.name = name
        self.run = run
        #: which price table priced the run's dollars (``DOLLARS`` in each attempt's metrics),
        #: e.g. "bundled price table of 2026-12-01"; None when the run has none. Cost gates
        #: compare dollars only between packages priced by the same table.
        self.prices = prices
        self.attempts = tuple(attempts)
        #: task → metric → (the reference solution's value, or None with the reason); empty
        #: when the run's report has no references (then ratio gates divide by the comparator)
        self.references = references or {}
        by_task: dict[str, list[AttemptRecord]] = {}
        for a in self.attempts:
            by_task.setdefault(a.task, []).append(a)
        self._by_task = by_task

    def __repr__(self) -> str:
        return f"Package({self.name!r}, {self.run!r}, {len(self.attempts)} attempts)"

    def on(self, task: str) -> list[AttemptRecord]:
        """The package's assigned attempts on ``task`` (possibly none)."""
        return self._by_task.get(task, [])

    def tasks(self) -> set[str]:
        return set(self._by_task)


def reference_value(
    packages: tuple[Package, ...], task: str, metrics: list[str] | tuple[str, ...]
) -> tuple[bool, float | None, str | None]:
    """The task's reference for ``metrics`` (their sum) from the first package whose run
    measured references for all of them: ``(found, value, reason)``; ``found`` is False
    when no package has one (ratio gates then divide by the comparator's median)."""
    for p in packages:
        refs = p.references.get(task)
        if refs is None or any(m not in refs for m in metrics):
            continue
        total = 0.0
        for m in metrics:
            v, why = refs[m]
            if v is None or not math.isfinite(v):
                return True, None, f"reference {m} unavailable: {why or 'not measured'}"
            total += v
        return True, total, None
    return False, None, None


def correctness(outcome: str | None, count_overlap_passes: bool) -> str:
    """``pass``, ``fail`` or ``unknown`` under the declared overlap-pass policy.

    An empty patch is a fail. An overlap pass is a pass when the gates file counts overlap
    passes and a fail otherwise, never an unknown. An attempt that is not complete has
    unknown correctness.
    """
    if outcome == PASS:
        return PASS
    if outcome == OVERLAP_PASS:
        return PASS if count_overlap_passes else FAIL
    if outcome in (FAIL, EMPTY):
        return FAIL
    return UNKNOWN


def metric_value(a: AttemptRecord, metrics: list[str] | tuple[str, ...]) -> float | None:
    """The sum of ``metrics`` for one attempt, or ``None`` when any is unknown or not finite."""
    total = 0.0
    for m in metrics:
        v = a.metrics.get(m)
        if v is None or not math.isfinite(v):
            return None
        total += v
    return total


def missing_reason(a: AttemptRecord, metrics: list[str] | tuple[str, ...]) -> str:
    """Why :func:`metric_value` is ``None`` for this attempt."""
    for m in metrics:
        v = a.metrics.get(m)
        if v is None or not math.isfinite(v):
            return f"{m}: {a.reasons.get(m) or 'not measured'}"
    return "measured"
