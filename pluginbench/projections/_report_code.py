"""The code measures of results.json (pure): per task and arm medians of every measure that
carries a language and an analyzer (coverage, complexity, dead code...), grouped by both and
never pooled across them, the measurement revisions (``measurement_history``), and the
(task, measure) pairs the run does not measure (``not_measured``).

A median is over the attempts whose value is measured; ``n`` says how many and ``unknown``
how many were not, so a missing value is never read as zero. A metric whose attempts on one
task × arm span two languages or analyzers gets one group per (language, analyzer).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from ..events import Measure
from ._state import RunState


def group_key(m: Measure) -> str:
    return f"{m.language}|{m.analyzer}"


def code_measures_section(state: RunState, rows: Iterable[Mapping[str, Any]], tasks: list[str],
                          arms: list[str]) -> dict[str, Any]:
    """metric → "language|analyzer" → {language, analyzer, unit, per_task: task → arm →
    {median, n, unknown}, per_arm: arm → {median_of_task_medians, tasks}}."""
    by_id = {a.attempt_id: a for a in state.live_attempts()}
    cells: dict[tuple[str, str], dict[tuple[str, str], list[float | None]]] = defaultdict(lambda: defaultdict(list))
    meta: dict[tuple[str, str], tuple[str | None, str | None, str]] = {}
    for row in rows:
        if row["state"] != "complete" or row.get("ineligible"):
            continue
        a = by_id.get(row["attempt_id"])
        if a is None:
            continue
        for name, m in state.current_measures(a).items():
            if m.language is None and m.analyzer is None:
                continue
            key = (name, group_key(m))
            meta[key] = (m.language, m.analyzer, m.unit)
            value = m.value if m.status == "measured" else None
            cells[key][(row["task"], row["arm"])].append(None if value is None else float(value))
    out: dict[str, Any] = {}
    for (name, group), per in sorted(cells.items()):
        language, analyzer, unit = meta[(name, group)]
        per_task: dict[str, dict[str, Any]] = {}
        for task in tasks:
            for arm in arms:
                values = per.get((task, arm))
                if values is None:
                    continue
                known = [v for v in values if v is not None]
                per_task.setdefault(task, {})[arm] = {
                    "median": statistics.median(known) if known else None,
                    "n": len(known),
                    "unknown": len(values) - len(known),
                }
        per_arm = {}
        for arm in arms:
            medians = [per_task[t][arm]["median"] for t in per_task if arm in per_task[t]
                       and per_task[t][arm]["median"] is not None]
            per_arm[arm] = {"median_of_task_medians": statistics.median(medians) if medians else None,
                            "tasks": len(medians)}
        out.setdefault(name, {})[group] = {"language": language, "analyzer": analyzer, "unit": unit,
                                           "per_task": per_task, "per_arm": per_arm}
    return out


def measurement_history(state: RunState) -> list[dict[str, Any]]:
    """Every measurement revision in order: what it collected and added, whether it is
    selected, and why not when it finished unselected."""
    out = []
    for rev in state.measurement_revisions.values():
        status = "selected" if rev.selected else ("not_selected" if rev.finished else "collecting")
        out.append({"revision": rev.revision, "status": status, "selected": rev.selected,
                    "measurements": list(rev.measurements), "added": list(rev.added), "reason": rev.reason,
                    "attempts": len(rev.measures)})
    return out


def not_measured_rows(state: RunState) -> list[dict[str, str]]:
    return [{"task": n.task, "measure": n.measure, "reason": n.reason} for n in state.not_measured]


def revision_references(state: RunState) -> dict[str, dict[str, Mapping[str, Any]]]:
    """Task → metric → the selected revision's measure of the task's reference solution."""
    rev = state.selected_measurement()
    if rev is None:
        return {}
    return {task: {name: {"status": "measured" if m.status == "measured" and m.value is not None else "unavailable",
                          "value": m.value if m.status == "measured" else None, "reason": m.reason}
                   for name, m in measures.items()}
            for task, measures in rev.references.items()}
