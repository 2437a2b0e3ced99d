"""Readiness per task and measure (pure): ``ready``, ``not_configured`` or ``broken``.

* ``ready``: measured, or the check passed.
* ``not_configured``: no collector for this task (coverage without a profile, a language
  without an analyzer). Blocks only with ``measurement_settings.require_ready: true``, or
  when the measure is ready on no task.
* ``broken``: configured but failing (a missing tool, a probe that failed). For a measure,
  blocks only with ``require_ready``, or when the measure is ready on no task.

A measure that is not ready on a task is *not measured* there: the pair goes into
``not_measured`` (check.json, the run, status and the report read it) and the report shows
that measure as unavailable, with the reason, for every attempt on that task.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..events import NotMeasured, ReadinessRow

STATES = ("ready", "not_configured", "broken")
__all__ = ["STATES", "NotMeasured", "ReadinessRow", "blocking", "not_measured", "warnings"]


def not_measured(rows: Iterable[ReadinessRow]) -> list[NotMeasured]:
    """Every pair that is not ready, for measures that are ready on some task (a measure
    ready nowhere stops the run instead)."""
    rows = list(rows)
    ready_somewhere = {r.measure for r in rows if r.state == "ready"}
    return sorted(
        (NotMeasured(task=r.task, measure=r.measure, reason=f"{r.state}: {r.reason or 'no reason given'}")
         for r in rows if r.state != "ready" and r.measure in ready_somewhere),
        key=lambda n: (n.task, n.measure),
    )


def blocking(rows: Iterable[ReadinessRow], require_ready: bool) -> list[str]:
    """Why the rows stop a check or run (empty: they do not). A measure ready on no task
    always stops it; with ``require_ready`` any pair that is not ready does."""
    rows = list(rows)
    out: list[str] = []
    for measure in sorted({r.measure for r in rows}):
        mine = [r for r in rows if r.measure == measure]
        if not any(r.state == "ready" for r in mine):
            first = mine[0]
            out.append(f"{measure} is ready on no task (e.g. {first.task}: {first.state}: {first.reason}); "
                       "the run would measure nothing for it")
        elif require_ready:
            out.extend(f"{measure} is {r.state} on task {r.task}: {r.reason} (measurement_settings.require_ready is true)"
                       for r in mine if r.state != "ready")
    return out


def warnings(rows: Iterable[ReadinessRow]) -> list[str]:
    """One line per pair that will not be measured: task, measure, reason."""
    return [f"warning: {n.measure} is not measured on task {n.task}: {n.reason}" for n in not_measured(rows)]
