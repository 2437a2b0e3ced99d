"""``references`` and ``reference_ratios`` of results.json: each task's reference solution
measured like an attempt, and each arm's median as a ratio to it.

A run measures each task's ``solution/solution.patch`` with every selected measure that
declares ``reference=True`` (lines, complexity, unused code) once in preparation, and again
in each measurement revision for the measures it collects; those values are events, so
they are folded into rows by :func:`._view.references_from_log`. Each task maps each metric to
``status`` (``measured`` or ``unavailable``), ``value`` and ``reason``; a missing reference
is never 0. A run recorded before reference events existed gets its lines references counted
here from the frozen patch (:func:`references_section`), as it always did. Code measures are
shown as a ratio to the reference, and ratio gates in ``compare`` divide by it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from html import escape
from pathlib import Path
from typing import Any

from ..measures import count_lines

#: The lines metrics a reference is measured on (the attempt measure names).
REFERENCE_METRICS = ("source_lines_added", "source_lines_removed", "test_lines_added", "test_lines_removed")


def _unavailable(reason: str) -> dict[str, Any]:
    return {m: {"status": "unavailable", "value": None, "reason": reason} for m in REFERENCE_METRICS}


def reference_measures(patch_text: str) -> dict[str, dict[str, Any]]:
    """Each lines metric of a reference patch, measured (pure)."""
    c = count_lines(patch_text)
    values = dict(zip(REFERENCE_METRICS, (c.source_added, c.source_removed, c.test_added, c.test_removed), strict=True))
    return {m: {"status": "measured", "value": v, "reason": None} for m, v in values.items()}


def references_section(frozen_tasks: Path, tasks: Iterable[str], measurements: Iterable[str]) -> dict[str, Any]:
    """Task → metric → reference value, from each frozen task's ``solution/solution.patch``."""
    out: dict[str, Any] = {}
    lines = "lines" in set(measurements)
    for task in tasks:
        patch = frozen_tasks / task / "solution" / "solution.patch"
        if not lines:
            out[task] = _unavailable("the lines measurement is not selected")
        elif not (frozen_tasks / task).is_dir():
            out[task] = _unavailable("the task was not frozen (the run stopped before preparation)")
        elif not patch.is_file():
            out[task] = _unavailable("the task ships no solution/solution.patch")
        else:
            try:
                out[task] = reference_measures(patch.read_text(encoding="utf-8", errors="replace"))
            except OSError as exc:
                out[task] = _unavailable(f"solution/solution.patch unreadable: {exc.strerror}")
    return out


def _ratio_reason(median: float | None, reference: Mapping[str, Any] | None) -> str | None:
    if reference is None:
        return "no reference value for this metric"
    if reference.get("status") != "measured":
        return f"reference unavailable: {reference.get('reason') or 'not measured'}"
    if median is None:
        return "no measured value on this task and arm"
    value = reference.get("value")
    if not isinstance(value, (int, float)) or value <= 0:
        return f"reference {value} is zero or negative (a ratio would be undefined or inverted)"
    return None


def reference_ratios(references: Mapping[str, Mapping[str, Any]], per_task: Mapping[str, Mapping[str, Mapping[str, Any]]],
                     tasks: Iterable[str], arms: list[str], units: Mapping[str, str]) -> dict[str, Any]:
    """metric → {unit, per_task: task → arm → {median, reference, ratio, reason}, per_arm: arm →
    {median_of_task_ratios, tasks}} for every metric some task has a reference row for and the
    per task × arm summary carries a median of (pure). A ratio is null with the reason when the
    median is unknown or the reference is unavailable, zero or negative."""
    tasks = list(tasks)
    metrics = sorted({m for t in tasks for m in references.get(t, {}) if m in units})
    out: dict[str, Any] = {}
    for metric in metrics:
        cells: dict[str, dict[str, Any]] = {}
        ratios: dict[str, list[float]] = {arm: [] for arm in arms}
        for task in tasks:
            ref = references.get(task, {}).get(metric)
            for arm in arms:
                summary = per_task.get(task, {}).get(arm)
                if summary is None:
                    continue
                median = summary.get(f"median_{metric}")
                ratio = reference_ratio(median, ref)
                cells.setdefault(task, {})[arm] = {
                    "median": median, "reference": ref.get("value") if ref else None, "ratio": ratio,
                    "reason": None if ratio is not None else _ratio_reason(median, ref)}
                if ratio is not None:
                    ratios[arm].append(ratio)
        per_arm = {arm: {"median_of_task_ratios": statistics.median(v) if v else None, "tasks": len(v)}
                   for arm, v in ratios.items()}
        out[metric] = {"unit": units[metric], "per_task": cells, "per_arm": per_arm}
    return out


def reference_ratio(value: float | None, reference: dict[str, Any] | None) -> float | None:
    """``value`` / the reference, or None when either is missing or the reference is not positive."""
    if value is None or reference is None or reference.get("status") != "measured":
        return None
    ref = reference.get("value")
    if not isinstance(ref, (int, float)) or ref <= 0:
        return None
    return value / ref


def references_html(doc: Mapping[str, Any]) -> str:
    """Each task's reference value per metric, and each arm's median with its ratio to it."""
    refs = doc.get("references") or {}
    if not refs:
        return '<p class="hint">No reference values (this report was made before they existed).</p>'
    arms = doc["arms"]
    ratios = doc.get("reference_ratios") or {}
    head = "".join(f"<th>{escape(h)}</th>" for h in ("Task", "Metric", "Reference", *arms))
    body: list[str] = []
    unavailable: list[str] = []  # rows whose reference is unavailable: collapsed behind details
    for task in doc["tasks"]:
        task_refs = refs.get(task, {})
        # the lines metrics first, then every code measure with a task × arm median (a column
        # without one, such as binary files changed, has nothing to divide)
        extra = sorted(m for m in task_refs if m not in REFERENCE_METRICS and (m in ratios or not ratios))
        for metric in [m for m in REFERENCE_METRICS if m in task_refs] + extra:
            ref = task_refs[metric]
            ref_cell = escape(f"{ref['value']:g}") if ref["status"] == "measured" else f"unavailable ({escape(ref['reason'] or '')})"
            cells = [f'<th scope="row">{escape(task)}</th>', f"<td>{escape(metric.replace('_', ' '))}</td>",
                     f'<td class="num">{ref_cell}</td>']
            for arm in arms:
                cell = ratios.get(metric, {}).get("per_task", {}).get(task, {}).get(arm)
                if cell is None:
                    median = (doc["per_task"].get(task, {}).get(arm) or {}).get(f"median_{metric}")
                    cell = {"median": median, "ratio": reference_ratio(median, ref), "reason": None}
                median, ratio = cell["median"], cell["ratio"]
                text = "unknown" if median is None else f"{median:g}"
                text += f" ({ratio:.2f}×)" if ratio is not None else (" (no ratio)" if median is not None else "")
                title = f' title="{escape(cell["reason"])}"' if cell.get("reason") else ""
                cells.append(f'<td class="num" data-arm="{escape(arm)}"{title}>{escape(text)}</td>')
            (body if ref["status"] == "measured" else unavailable).append(
                f'<tr data-reference-task="{escape(task)}" data-metric="{escape(metric)}">' + "".join(cells) + "</tr>")
    table = (f'<table id="references-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
             if body else "")
    if unavailable:
        label = ("every reference value is unavailable" if not body else "reference values unavailable")
        table += (f'<details id="references-unavailable"><summary>{len(unavailable)} row(s): {label}</summary>'
                  f'<table id="references-unavailable-table"><thead><tr>{head}</tr></thead>'
                  f'<tbody>{"".join(unavailable)}</tbody></table></details>')
    return (
        table
        + '<p class="hint">Each arm\'s median over complete attempts, with its ratio to the task\'s reference '
        "solution (solution/solution.patch applied to the starting source and measured with the same line, "
        "complexity and unused-code collectors). A reference that is unavailable, 0 or negative gives no ratio; "
        "hover a cell for the reason.</p>"
    )
