"""report.html's lists of attempts and their gaps: missing values grouped by value and
reason, reused and discarded attempts, and every attempt (one row each up to
:data:`~._report_cost.ATTEMPTS_LISTED_MAX`, above it counts by arm and a pointer to
results.csv, so the page stays small at any size).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..measures import Column
from ._report_cost import ATTEMPTS_LISTED_MAX
from ._report_html_base import _e, _native_session, _or_unknown, _shown_columns, _table, _tokens
from ._report_links import attempt_link, started


def _table_columns(doc: Mapping[str, Any]) -> tuple[Column, ...]:
    """The measure columns of the attempt table."""
    present = {k for r in doc["attempts"] for k in r["measures"]}
    return tuple(c for c in _shown_columns(doc, present) if c.table)


def missing_html(doc: Mapping[str, Any]) -> str:
    rows = doc["missing_values"]
    if not rows:
        return "<p>No missing values.</p>"
    # results.json lists every unknown value; the page groups them by value and reason so
    # a counter that a harness never reports does not bury the rest.
    groups: dict[tuple[str, str], dict[tuple[str, str], list[str]]] = {}
    for m in rows:
        where = groups.setdefault((m["field"], m["reason"]), {})
        where.setdefault((m["task"], m["arm"]), []).extend(m["attempt_ids"])

    def place(where: Mapping[tuple[str, str], list[str]]) -> str:
        parts = []
        for (task, arm), ids in where.items():
            label = f"{task} · {arm}"
            parts.append(
                f'<span title="{_e(", ".join(ids))}">{_e(label)}'
                + (f" ×{len(ids)}" if len(ids) > 1 else "")
                + "</span>"
            )
        return ", ".join(parts)

    return (
        f'<p class="small">{len(rows)} unknown values (each is listed with its attempt in '
        "results.json under missing_values). Unknown values are never counted as 0.</p>"
        + _table(
            ("Value", "Reason", "Count", "Where (task · arm)"),
            (
                (
                    f"<code>{_e(field)}</code>",
                    _e(reason),
                    f'<td class="num">{len(where) if field.startswith("per_task.") else sum(len(v) for v in where.values())}</td>',
                    place(where),
                )
                for (field, reason), where in groups.items()
            ),
            "missing-values-table",
        )
    )


def reused_html(doc: Mapping[str, Any]) -> str:
    rows = doc.get("reused_attempts") or []
    if not rows:
        return "<p>No attempt was reused from the vanilla cache.</p>"
    return _table(
        ("Attempt", "Task", "Repeat", "Origin cohort", "Origin run", "Origin attempt"),
        (
            (_e(r["attempt_id"]), _e(r["task"]), _e(r["repeat"]), _e(r["origin_cohort"]), _e(r["origin_run"]),
             _e(r["origin_attempt"]))
            for r in rows
        ),
        "reused-table",
    )


def discarded_html(doc: Mapping[str, Any]) -> str:
    rows = doc["discarded_attempts"]
    if not rows:
        return "<p>No attempt was discarded.</p>"
    return _table(
        (
            "Attempt",
            "Task",
            "Arm",
            "Repeat",
            "Replaced by",
            "Reason",
            "Tokens (total)",
            "Usage status",
        ),
        (
            (
                _e(d["attempt_id"]),
                _e(d["task"]),
                _e(d["arm"]),
                _e(d["repeat"]),
                _e(d["replaced_by"]),
                _e(d["reason"]),
                _or_unknown(d["tokens"]["total"], _tokens),
                _e(d["tokens"]["status"]),
            )
            for d in rows
        ),
        "discarded-table",
    )


def _native_text(native: Mapping[str, Any] | None) -> str:
    """reward.json's other keys (partial credit), e.g. ``f2p 20/24 · p2p 295/295 · partial 0.98``."""
    if not native:
        return ""
    parts, rest = [], dict(native)
    for kind in ("f2p", "p2p"):
        passed, total = rest.pop(f"{kind}_passed", None), rest.pop(f"{kind}_total", None)
        if passed is not None and total is not None:
            rest.pop(kind, None)
            parts.append(f"{kind} {passed:g}/{total:g}")
    parts.extend(f"{k} {v:g}" for k, v in sorted(rest.items()) if v is not None)
    return " · ".join(parts)


def _source_only_text(g: Mapping[str, Any] | None) -> str:
    """The source-only grade in a cell: reward and what was left out, or pending/unavailable."""
    if not g:
        return ""
    if g["status"] != "graded":
        return f"{g['status']}: {g['reason'] or ''}".strip()
    reward = "unknown" if g["reward"] is None else f"{g['reward']:g}"
    if g["nothing_removed"]:
        return f"{reward} (nothing removed; native reused)"
    return f"{reward} (without {', '.join(g['removed_test_files'])})"


def attempts_html(doc: Mapping[str, Any]) -> str:
    if len(doc["attempts"]) > ATTEMPTS_LISTED_MAX:
        return _attempts_summary(doc)

    def measure(r: Mapping[str, Any], name: str) -> str:
        m = r["measures"].get(name)
        return _or_unknown(None if m is None else m["value"], _tokens)

    columns = _table_columns(doc)
    rows = []
    for r in doc["attempts"]:
        t = r["tokens"]
        rows.append(
            (
                (attempt_link(r["attempt_id"], f"<code>{_e(r['attempt_id'])}</code>") if started(r)
                 else f"<code>{_e(r['attempt_id'])}</code>"),
                _e(r["task"]),
                _e(r["arm"]),
                _e(r["repeat"]),
                _e(r["state"]),
                _or_unknown(r["outcome"]),
                _or_unknown(r["reward"]),
                _e(_native_text(r.get("native_grading"))),
                _e(_source_only_text(r.get("source_only_grading"))),
                _or_unknown(t["input"], _tokens),
                _or_unknown(t["output"], _tokens),
                _or_unknown(t["total"], _tokens),
                _e(t["status"]) + _native_session(t),
                _or_unknown(r["coding_seconds"], lambda s: f"{s:.1f}"),
                *(measure(r, c.metric) for c in columns),
                _e(r["outcome_reason"] or ""),
            )
        )
    table = _table(
        (
            "Attempt",
            "Task",
            "Arm",
            "Repeat",
            "State",
            "Outcome",
            "Reward",
            "Native grading",
            "Source-only",
            "Input tok",
            "Output tok",
            "Total tok",
            "Usage",
            "Coding s",
            *(c.label[:1].upper() + c.label[1:] for c in columns),
            "Reason",
        ),
        rows,
        "attempts-table",
    )
    return f"<details><summary>All {len(doc['attempts'])} attempts</summary>{table}</details>"


def _attempts_summary(doc: Mapping[str, Any]) -> str:
    """Above :data:`ATTEMPTS_LISTED_MAX` attempts: counts by arm (state, outcome, known
    tokens), and where every attempt is listed."""
    outcomes = ("pass", "overlap_pass", "fail", "empty", "unknown")
    counts: dict[str, dict[str, int]] = {arm: {} for arm in doc["arms"]}
    for r in doc["attempts"]:
        c = counts.setdefault(r["arm"], {})
        c["attempts"] = c.get("attempts", 0) + 1
        if r["state"] == "complete":
            c["complete"] = c.get("complete", 0) + 1
            key = r["outcome"] if r["outcome"] in outcomes else "unknown"
            c[key] = c.get(key, 0) + 1
        if r["tokens"]["total"] is None:
            c["tokens_unknown"] = c.get("tokens_unknown", 0) + 1
    table = _table(
        ("Arm", "Attempts", "Complete", *(o.replace("_", " ").capitalize() for o in outcomes), "Total tokens unknown"),
        ((_e(arm), *(f"{c.get(k, 0):,}" for k in ("attempts", "complete", *outcomes, "tokens_unknown")))
         for arm, c in counts.items()),
        "attempts-summary",
    )
    return (
        f'<p class="small">{len(doc["attempts"]):,} attempts: more than the {ATTEMPTS_LISTED_MAX:,} this page lists '
        'one by one. Every attempt, with each of its values and the reason of each unknown, is in '
        '<a href="results.csv">results.csv</a> (a row per attempt and value) and in results.json '
        "(<code>attempts</code>).</p>" + table
    )
