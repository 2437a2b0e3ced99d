"""The code measures of results.json (pure): per task and arm medians of every code measure
(iterations, duplicated test lines, complexity, dead code, coverage…), grouped by language and
analyzer and never pooled across them, the measurement revisions (``measurement_history`` and
``measurement_revisions``), and the (task, measure) pairs the run does not measure
(``not_measured``).

A median is over the attempts whose value is measured; ``n`` says how many and ``unknown``
how many were not (their reasons in ``reasons``), so a missing value is never read as zero.
A value the measure declares ``not_applicable`` (no meaning for the task's language) is counted
in ``not_applicable``, never as unknown; a cell whose every value is not applicable reads
``status: not_applicable``.

A treatment's ``delta_vs_vanilla`` is paired by task (its median minus vanilla's on each task
both have) and carries the sign-flip interval of the mean paired delta at
the run's ``statistics.confidence_level`` (``stats.mean_interval``: a code delta is unbounded, so
it has no bounded-mean range as the pass-rate difference has; A/A-calibrated for continuous deltas by ``bench/bench_aa_gates.py``). ``better``
is the column's declared better direction (the measure port) and ``reading`` what the interval
says in that direction: ``better`` / ``worse`` (the whole interval on one side of 0),
``unclear`` (it spans 0, or too few tasks for an interval), ``descriptive`` (no better
direction declared).
A metric whose attempts on one task × arm span two languages or analyzers gets one group per
(language, analyzer). A language-independent measure (``languages: any``, e.g. iterations)
groups under language ``any`` and its own observer (``iterations observer 2``). An unknown value that names no language (an analyzer that
never ran) joins the one group its metric has on that task; on a task where the metric has no
group, ``<language>|unknown`` when the task's other code measures name one language (a Go task's
coverage that is not measured: ``go|unknown``); else ``unknown|unknown``. It is counted, never
dropped, and never joins another language's group.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from .. import measures as measure_registry
from .. import stats
from ._report_refs import REFERENCE_METRICS, reference_ratio
from ._state import RunState

#: lines columns that are plain diff counts, reported as before (not code measures)
PLAIN_COLUMNS = frozenset((*REFERENCE_METRICS, "binary_files_changed"))
#: a not-applicable value's reason is carried with this prefix until its cell counts it
NOT_APPLICABLE_MARK = "\x00not applicable: "
#: one attempt's value of a metric (None: not measured) and why not
_Value = tuple[float | None, str | None]
#: the key part and field value of a language or analyzer that is not known
UNKNOWN_PART = "unknown"
ANY_LANGUAGE = "any"


def group_key(language: str | None, analyzer: str | None) -> str:
    """``language|analyzer``, ``unknown`` for a part that is not known."""
    return f"{language or UNKNOWN_PART}|{analyzer or UNKNOWN_PART}"


def code_metrics(measurements: Iterable[str]) -> tuple[tuple[str, Any, str | None], ...]:
    """(metric, its Column, method) of every code measure column the run selects, in registry
    order. ``method`` names a language-independent measure's own observer (``iterations
    observer 2``), which stands for the analyzer of its values; None for a language analyzer."""
    out: list[tuple[str, Any, str | None]] = []
    for spec in measure_registry.collectors(measurements):
        method = f"{spec.name} observer {spec.observer_version}" if tuple(spec.languages) == (ANY_LANGUAGE,) else None
        out.extend((c.metric, c, method) for c in spec.columns if c.metric not in PLAIN_COLUMNS)
    return tuple(out)


def code_measures_table() -> str:
    """docs/metrics.md: every registered code measure column, its unit, gate name and how the report
    groups it (generated from the registry, like the measures table)."""
    lines = ["| Column (`code_measures.<name>`) | Measure | Unit | Better | Gate name | Grouped by | In report.html |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    everything = [m.name for m in measure_registry.measures()]
    for metric, column, method in code_metrics(everything):
        spec = next(m for m in measure_registry.measures() if any(c.metric == metric for c in m.columns))
        group = (f"`any\\|{method}`" if method is not None
                 else "language \\| analyzer (" + ", ".join(spec.languages) + ")")
        gate = f"`{column.gate_name}`" if column.gate_name else "—"
        shown = "Code quality" if column.summary else "JSON/CSV only (diagnostic)"
        better = column.better or "— (descriptive)"
        lines.append(f"| `{metric}` | `{spec.name}` | {column.unit} | {better} | {gate} | {group} | {shown} |")
    return "\n".join(lines) + "\n"


def _num(x: float | None) -> float | int | None:
    if x is None or not math.isfinite(x):
        return None
    r = round(float(x), 6)
    return int(r) if r.is_integer() else (0.0 if r == 0 else r)


def _value_group(m: Mapping[str, Any], method: str | None) -> tuple[str | None, str | None] | None:
    language, analyzer = m.get("language"), m.get("analyzer")
    if method is not None:
        return (language or ANY_LANGUAGE, analyzer or method)
    if language is None and analyzer is None:
        return None  # attributed per task below
    return (language, analyzer)


def code_measures_section(state: RunState | None, rows: Iterable[Mapping[str, Any]], tasks: list[str],
                          arms: list[str], measurements: Iterable[str] = (),
                          references: Mapping[str, Mapping[str, Any]] | None = None,
                          level: float = stats.LEVEL) -> dict[str, Any]:
    """metric → "language|analyzer" → {language, analyzer, unit, gate_name, per_task: task →
    arm → {median, n, unknown, reasons, reference, ratio_to_reference}, per_arm: arm →
    {median_of_task_medians, mean_of_task_medians, tasks, unknown_tasks, and for a treatment
    delta_vs_vanilla (mean over the tasks both have of its median minus vanilla's), paired_tasks}}.

    ``rows`` are results.json attempt rows (complete and eligible ones count); ``level`` the run's
    confidence level (the delta's interval); ``measurements``
    the run's selection (metrics that no attempt carries still get their unknown counts);
    ``references`` the document's ``references`` (task → metric → status, value, reason)."""
    del state  # the rows already hold the selected revision's values
    rows = [r for r in rows if r["state"] == "complete" and not r.get("ineligible")]
    refs = references or {}
    selected = code_metrics(measurements)
    present = {k for r in rows for k in r["measures"]}
    known = {metric for metric, _, _ in selected}
    columns = {c.metric: c for c in measure_registry.all_columns()}
    extra = [(metric, columns.get(metric), None) for metric in sorted(present - known - PLAIN_COLUMNS)
             if any(r["measures"][metric].get("language") or r["measures"][metric].get("analyzer")
                    for r in rows if metric in r["measures"])]
    # task -> the languages its language-analyzer values name (where an unknown without one belongs)
    languages: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        for m in r["measures"].values():
            if m.get("language") and m.get("analyzer") and "/" not in m["language"]:
                languages[r["task"]].add(m["language"])
    out: dict[str, Any] = {}
    for metric, column, method in (*selected, *extra):
        # (task, arm) -> group -> values (None = unknown) and reasons; unattributed unknowns aside
        cells: dict[tuple[str | None, str | None], dict[tuple[str, str], list[_Value]]] = (
            defaultdict(lambda: defaultdict(list)))
        loose: dict[tuple[str, str], list[str | None]] = defaultdict(list)
        unit = column.unit if column is not None else ""
        for r in rows:
            m = r["measures"].get(metric)
            if m is None:
                continue
            unit = m["unit"] or unit
            value = m["value"] if m["status"] == "measured" else None
            reason = None if value is not None else (m["reason"] or "no reason recorded")
            if m["status"] == "not_applicable":
                reason = NOT_APPLICABLE_MARK + (m["reason"] or "the measure has no meaning for this language")
            group = _value_group(m, method)
            if group is None and value is None:
                loose[(r["task"], r["arm"])].append(reason)
            else:
                cells[group or (None, None)][(r["task"], r["arm"])].append((None if value is None else float(value), reason))
        for (task, arm), reasons in loose.items():
            groups = [g for g, per in cells.items() if any(t == task for t, _ in per)]
            task_languages = languages.get(task, set())
            if len(groups) == 1:
                target = groups[0]
            elif not groups and len(task_languages) == 1:
                target = (next(iter(task_languages)), None)
            else:
                target = (None, None)
            cells[target][(task, arm)].extend((None, why) for why in reasons)
        for (language, analyzer), per in sorted(cells.items(), key=lambda kv: group_key(*kv[0])):
            out.setdefault(metric, {})[group_key(language, analyzer)] = _group(
                language, analyzer, unit, column, per, tasks, arms, refs, metric, level)
    return out


def _group(language: str | None, analyzer: str | None, unit: str, column: Any,
           per: Mapping[tuple[str, str], list[_Value]], tasks: list[str], arms: list[str],
           refs: Mapping[str, Mapping[str, Any]], metric: str, level: float) -> dict[str, Any]:
    per_task: dict[str, dict[str, Any]] = {}
    for task in tasks:
        ref = refs.get(task, {}).get(metric)
        for arm in arms:
            values = per.get((task, arm))
            if values is None:
                continue
            measured = [v for v, _ in values if v is not None]
            median = statistics.median(measured) if measured else None
            na = [why for v, why in values if v is None and why and why.startswith(NOT_APPLICABLE_MARK)]
            per_task.setdefault(task, {})[arm] = {
                "median": _num(median),
                "status": "measured" if measured else ("not_applicable" if len(na) == len(values) else "unknown"),
                "n": len(measured),
                "unknown": len(values) - len(measured) - len(na),
                "not_applicable": len(na),
                "reasons": sorted({why.removeprefix(NOT_APPLICABLE_MARK) for v, why in values if v is None and why}),
                "reference": _num(ref["value"]) if ref is not None and ref.get("status") == "measured" else None,
                "ratio_to_reference": _num(reference_ratio(median, ref)),
            }
    per_arm = {}
    for arm in arms:
        cells = [per_task[t][arm] for t in per_task if arm in per_task[t]]
        medians = [c["median"] for c in cells if c["median"] is not None]
        per_arm[arm] = {
            "median_of_task_medians": _num(statistics.median(medians)) if medians else None,
            "mean_of_task_medians": _num(math.fsum(medians) / len(medians)) if medians else None,
            "tasks": len(medians),
            "unknown_tasks": sorted(t for t in per_task if arm in per_task[t] and per_task[t][arm]["status"] == "unknown"),
            "not_applicable_tasks": sorted(t for t in per_task if arm in per_task[t]
                                           and per_task[t][arm]["status"] == "not_applicable"),
        }
        if arms and arm != arms[0]:  # a package's delta is its value minus vanilla's, task by task
            base = arms[0]
            paired = [per_task[t][arm]["median"] - per_task[t][base]["median"] for t in tasks if t in per_task
                      if per_task[t].get(arm, {}).get("median") is not None
                      and per_task[t].get(base, {}).get("median") is not None]
            per_arm[arm].update(paired_delta(paired, column.better if column is not None else None, level))
    return {"language": language, "analyzer": analyzer, "unit": unit,
            "gate_name": column.gate_name if column is not None else None,
            "per_task": per_task, "per_arm": per_arm}


def paired_delta(paired: list[float], better: str | None, level: float) -> dict[str, Any]:
    """``delta_vs_vanilla`` with its sign-flip interval at ``level`` and what it reads as in the
    ``better`` direction (module docstring); pure, shared by the A/A bench."""
    est = stats.mean_interval(paired, level)
    low, high = est.low, est.high
    if better is None:
        reading = "descriptive"
    elif low is None or high is None:
        reading = "unclear"
    elif (better == "lower" and high < 0) or (better == "higher" and low > 0):
        reading = "better"
    elif (better == "lower" and low > 0) or (better == "higher" and high < 0):
        reading = "worse"
    else:
        reading = "unclear"
    return {"delta_vs_vanilla": _num(est.estimate), "paired_tasks": len(paired),
            "delta_low": _num(low), "delta_high": _num(high), "delta_level": level,
            "delta_status": est.status, "better": better, "reading": reading}


def _revision_status(rev: Any) -> str:
    return "selected" if rev.selected else ("not_selected" if rev.finished else "collecting")


def measurement_history(state: RunState) -> list[dict[str, Any]]:
    """Every measurement revision in order: what it collected and added, whether it is
    selected, and why not when it finished unselected."""
    return [{"revision": rev.revision, "status": _revision_status(rev), "selected": rev.selected,
             "measurements": list(rev.measurements), "added": list(rev.added), "reason": rev.reason,
             "attempts": len(rev.measures)}
            for rev in state.measurement_revisions.values()]


def measurement_revisions(state: RunState) -> list[dict[str, Any]]:
    """``measurement_revisions`` as status --json names them: revision, status, selected."""
    return [{"revision": rev.revision, "status": _revision_status(rev), "selected": rev.selected}
            for rev in state.measurement_revisions.values()]


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
