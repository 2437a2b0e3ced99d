"""report.html's code-quality sections, rendered from the results.json document only (pure).

* "Code quality": each code measure's per task × arm median from ``code_measures``, one
  block of rows per (language, analyzer) group, never pooled across groups, with each
  arm's mean of task medians; an unknown median reads "unknown" with its reasons in a
  tooltip and in the cell, never 0; a value with no meaning for the task's language reads
  "not applicable" (never "unknown"); a median with a reference value shows its ratio. A
  treatment's paired delta against vanilla shows its interval (the page's method and level)
  and the measure's better direction, coloured green / red only when the whole interval
  lies on the better / worse side of 0 and the run is complete (a partial run: no colour).
* "Measurement revisions": ``measurement_history``.
* "Not measured": ``not_measured``.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from ..measures import all_columns


def _e(v: Any) -> str:
    return escape(str(v), quote=True)


def _n(v: float | int) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.3g}"


def _metric_order(doc: Mapping[str, Any]) -> list[str]:
    """The code measures present, registry order first, then any other (sorted)."""
    present = doc.get("code_measures") or {}
    order = [c.metric for c in all_columns() if c.metric in present]
    return order + sorted(set(present) - set(order))


def _shown(metric: str) -> bool:
    """Diagnostics (``summary=False`` columns) stay in JSON/CSV, as docs/metrics.md says."""
    column = next((c for c in all_columns() if c.metric == metric), None)
    return column is None or column.summary


def _label(metric: str) -> str:
    column = next((c for c in all_columns() if c.metric == metric), None)
    return column.gate_name or column.description if column is not None else metric


class _Reasons:
    """The distinct reasons of unknown cells, numbered in order of first use (the list under the table)."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def mark(self, reason: str) -> str:
        if reason not in self.items:
            self.items.append(reason)
        n = self.items.index(reason) + 1
        return f'<sup><a href="#code-reason-{n}" class="reason-ref">[{n}]</a></sup>'

    def html(self) -> str:
        if not self.items:
            return ""
        rows = "".join(f'<li id="code-reason-{i}">{_e(r)}</li>' for i, r in enumerate(self.items, 1))
        return f'<p class="small">Why values are unknown:</p><ol id="code-quality-reasons" class="small">{rows}</ol>'


def _unknown(title: str, reasons: _Reasons, attrs: str) -> str:
    return (f'<td class="num" {attrs} data-value="" title="{_e(title)}"><span class="unknown">unknown</span>'
            f"{reasons.mark(title)}</td>")


def _not_applicable(title: str, attrs: str) -> str:
    return (f'<td class="num" {attrs} data-value="" data-status="not_applicable" title="{_e(title)}">'
            '<span class="not-applicable">not applicable</span></td>')


def _cell(c: Mapping[str, Any] | None, attrs: str, reasons: _Reasons) -> str:
    if c is None:
        return f'<td class="num" {attrs} data-value="" title="no attempt of this arm on the task">—</td>'
    why = "; ".join(c.get("reasons") or [])
    if c.get("status") == "not_applicable":
        return _not_applicable(why or "the measure has no meaning for this language", attrs)
    if c["median"] is None:
        return _unknown(why or "no attempt has a measured value", reasons, attrs)
    text = _n(c["median"])
    if c.get("ratio_to_reference") is not None:
        text += (f' <span class="ratio" title="reference value {_e(c["reference"])}">'
                 f'×{c["ratio_to_reference"]:.2f} of ref.</span>')
    note = f"n={c['n']}"
    if c["unknown"]:
        note += f", {c['unknown']} unknown"
    title = f' title="{_e(why)}"' if why else ""
    return (f'<td class="num" {attrs} data-value="{_e(c["median"])}"{title}>{text}'
            f' <span class="small">({_e(note)})</span>{reasons.mark(why) if why else ""}</td>')


def _delta(s: Mapping[str, Any], coloured: bool) -> str:
    """``Δ −3 [90%: −5 to −1] vs vanilla (lower is better)``, coloured by its reading."""
    delta = s["delta_vs_vanilla"]
    reading = s.get("reading") or "descriptive"
    level = s.get("delta_level")
    if s.get("delta_low") is not None and s.get("delta_high") is not None and level is not None:
        span = f" [{level * 100:g}%: {_signed(s['delta_low'])} to {_signed(s['delta_high'])}]"
    elif level is not None:
        span = " (too few paired tasks for an interval)"
    else:
        span = ""
    way = f", {s['better']} is better" if s.get("better") else ", no better direction"
    cls = f"delta delta-{reading}" if coloured and reading in ("better", "worse") else "delta delta-plain"
    title = (f"mean over {s['paired_tasks']} paired task(s) of this arm's median minus vanilla's; "
             f"{'sign-flip interval, ' if span.startswith(' [') else ''}reading: {reading}")
    return (f'<span class="{cls}" data-delta="{_e(delta)}" data-reading="{_e(reading)}" title="{_e(title)}">'
            f"Δ {_signed(delta)}{_e(span)} vs vanilla{_e(way)}</span>")


def _signed(v: float | int) -> str:
    text = _n(abs(v))
    return "±0" if v == 0 else ("+" if v > 0 else "−") + text


def _arm_summary(s: Mapping[str, Any] | None, attrs: str, reasons: _Reasons, coloured: bool = True) -> str:
    if s is not None and s["mean_of_task_medians"] is None and s.get("not_applicable_tasks") and not s.get("unknown_tasks"):
        return _not_applicable("not applicable on " + ", ".join(s["not_applicable_tasks"]), attrs)
    if s is None or s["mean_of_task_medians"] is None:
        missing = ", ".join((s or {}).get("unknown_tasks") or [])
        return _unknown(f"unknown on {missing}" if missing else "no task has a measured value", reasons, attrs)
    text = f"{_n(s['mean_of_task_medians'])} <span class=\"small\">({s['tasks']} task{'s' if s['tasks'] != 1 else ''}"
    if s.get("unknown_tasks"):
        text += f"; unknown on {_e(', '.join(s['unknown_tasks']))}"
    text += ")</span>"
    if s.get("not_applicable_tasks"):
        text += f' <span class="small">(not applicable on {_e(", ".join(s["not_applicable_tasks"]))})</span>'
    if s.get("delta_vs_vanilla") is not None:
        text += "<br>" + _delta(s, coloured)
    return f'<td class="num" {attrs} data-value="{_e(s["mean_of_task_medians"])}">{text}</td>'


def code_quality_html(doc: Mapping[str, Any]) -> str:
    """Per task × arm medians of every code measure, grouped by language and analyzer."""
    groups = doc.get("code_measures") or {}
    metrics = [m for m in _metric_order(doc) if _shown(m)]
    if not metrics:
        return ('<p class="hint">No code measure is selected (iterations, cyclomatic, cognitive, dead_code, '
                "coverage): add them to <code>measurements:</code> or with <code>pluginbench measure</code>.</p>")
    arms, reasons = doc["arms"], _Reasons()
    # a partial run shows no coloured reading, as it shows no coloured verdict
    coloured = not any(v.get("kind") == "partial" for v in doc.get("verdicts") or [])
    head = "".join(f"<th>{_e(h)}</th>" for h in ("Measure", "Language", "Analyzer", "Task"))
    head += "".join(f'<th class="arm">{_e(a)}</th>' for a in arms)
    body = []
    for metric in metrics:
        for key, g in sorted(groups[metric].items()):
            tasks = [t for t in doc["tasks"] if t in g["per_task"]]
            where = f'data-metric="{_e(metric)}" data-group="{_e(key)}"'
            span = f' rowspan="{len(tasks) + 1}"'
            first = (f'<th scope="row"{span}><code>{_e(metric)}</code><br>'
                     f'<span class="small">{_e(_label(metric))} ({_e(g["unit"])})</span></th>'
                     f'<td{span}>{_e(g["language"] or "unknown")}</td><td{span}>{_e(g["analyzer"] or "unknown")}</td>')
            for i, task in enumerate(tasks):
                cells = "".join(_cell(g["per_task"][task].get(arm),
                                      f'{where} data-task="{_e(task)}" data-arm="{_e(arm)}"', reasons) for arm in arms)
                body.append(f'<tr class="code-task-row" {where} data-code-task="{_e(task)}">{first if i == 0 else ""}'
                            f"<td>{_e(task)}</td>{cells}</tr>")
            cells = "".join(_arm_summary(g["per_arm"].get(arm), f'{where} data-arm="{_e(arm)}"', reasons, coloured)
                            for arm in arms)
            body.append(f'<tr class="code-arm-row" {where}>{"" if tasks else first}'
                        '<td title="the mean of the task medians: each task weighs the same"><em>all tasks</em></td>'
                        f"{cells}</tr>")
    return (
        f'<table id="code-quality-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        + reasons.html()
        + '<p class="hint">Medians over the attempts whose value is measured (n); "all tasks" is the mean of the '
        "task medians, each task weighing the same. Δ is a treatment's median minus vanilla's, paired by task, "
        "with the page's sign-flip interval; it is green when the whole interval lies on the measure's better "
        "side of 0, red on its worse side, plain otherwise or for a descriptive count. Unknown values are never "
        "0: they are listed under Missing values with their reasons. \"Not applicable\" marks a measure that has "
        "no meaning for the task's language (not missing, not unknown). Values are grouped by language and analyzer: unlike scores are never pooled. "
        "A ratio compares the median with the task's reference solution measured by the same collector. Diagnostics "
        "(whole-suite coverage rates, changed-line counts) are in results.json and results.csv. Smaller numbers "
        "alone do not establish better work.</p>"
    )


def revisions_html(doc: Mapping[str, Any]) -> str:
    """Every measurement revision: status, what it collected and added, why it is not selected."""
    rows = doc.get("measurement_history") or []
    if not rows:
        return ('<p class="hint">No measurement revision: every value comes from the run\'s own collection '
                "(<code>pluginbench measure</code> adds one).</p>")
    head = "".join(f"<th>{_e(h)}</th>" for h in
                   ("Revision", "Status", "Selected", "Measurements", "Added", "Submissions", "Reason"))
    body = "".join(
        f'<tr data-revision="{_e(r["revision"])}"><td><code>{_e(r["revision"])}</code></td>'
        f'<td class="revision-status">{_e(r["status"])}</td><td>{"yes" if r["selected"] else "no"}</td>'
        f'<td>{_e(", ".join(r["measurements"]))}</td><td>{_e(", ".join(r["added"]))}</td>'
        f'<td class="num">{_e(r["attempts"])}</td><td>{_e(r["reason"] or "")}</td></tr>'
        for r in rows
    )
    return (f'<table id="measurement-revisions-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
            '<p class="hint">The report shows the selected revision\'s values; earlier revisions stay in evidence.</p>')


def not_measured_html(doc: Mapping[str, Any]) -> str:
    """The (task, measure) pairs readiness left unmeasured, with the reason."""
    rows = doc.get("not_measured") or []
    if not rows:
        return "<p>Every selected measure is measured on every task.</p>"
    body = "".join(
        f'<tr data-not-measured-task="{_e(r["task"])}" data-measure="{_e(r["measure"])}"><td>{_e(r["task"])}</td>'
        f'<td><code>{_e(r["measure"])}</code></td><td>{_e(r["reason"])}</td></tr>'
        for r in rows
    )
    return (f'<table id="not-measured-table"><thead><tr><th>Task</th><th>Measure</th><th>Reason</th></tr></thead>'
            f"<tbody>{body}</tbody></table>"
            '<p class="hint">Their values are unknown on every attempt of the task, never 0; a gate on them is '
            "undetermined unless a split leaves the task out.</p>")
