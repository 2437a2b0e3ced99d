"""``references`` of results.json: the task's reference solution measured like an attempt.

When a task ships ``solution/solution.patch`` (kept in the run's frozen copy of the task),
the report measures that patch with the same line collector as every attempt's
``model.patch``. Each task maps each lines metric to ``status`` (``measured`` or
``unavailable``), ``value`` and ``reason``; a missing reference is never 0. Code measures
are then shown as a ratio to the reference, and ratio gates in ``compare`` divide by it.
"""

from __future__ import annotations

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


def reference_ratio(value: float | None, reference: dict[str, Any] | None) -> float | None:
    """``value`` / the reference, or None when either is missing or the reference is not positive."""
    if value is None or reference is None or reference.get("status") != "measured":
        return None
    ref = reference.get("value")
    if not isinstance(ref, (int, float)) or ref <= 0:
        return None
    return value / ref


def references_html(doc: Mapping[str, Any]) -> str:
    """Each task's reference value per lines metric, and each arm's median as a ratio to it."""
    refs = doc.get("references") or {}
    if not refs:
        return '<p class="hint">No reference values (this report was made before they existed).</p>'
    arms = doc["arms"]
    head = "".join(f"<th>{escape(h)}</th>" for h in ("Task", "Metric", "Reference", *arms))
    body = []
    for task in doc["tasks"]:
        for metric in REFERENCE_METRICS:
            ref = refs.get(task, {}).get(metric)
            if ref is None:
                continue
            ref_cell = escape(str(ref["value"])) if ref["status"] == "measured" else f"unavailable ({escape(ref['reason'] or '')})"
            cells = [f'<th scope="row">{escape(task)}</th>', f"<td>{escape(metric.replace('_', ' '))}</td>",
                     f'<td class="num">{ref_cell}</td>']
            for arm in arms:
                median = doc["per_task"][task][arm].get(f"median_{metric}")
                ratio = reference_ratio(median, ref)
                text = "unknown" if median is None else f"{median:g}"
                text += f" ({ratio:.2f}×)" if ratio is not None else (" (no ratio)" if median is not None else "")
                cells.append(f'<td class="num">{escape(text)}</td>')
            body.append(f'<tr data-reference-task="{escape(task)}" data-metric="{escape(metric)}">' + "".join(cells) + "</tr>")
    return (
        f'<table id="references-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        '<p class="hint">Each arm\'s median over complete attempts, with its ratio to the task\'s reference '
        "solution (solution/solution.patch measured with the same line collector). A reference of 0 gives no ratio.</p>"
    )
