"""The report's review section: finding counts per attempt, per task (medians) and per arm
(the mean of task medians, each task weighing the same), by severity and category; the
selected revision's reviewer; reviewer usage, counted apart from coding usage.

A failed review is listed with its reason and left out of every count (unknown is never
zero); a task × arm without a valid review has null medians.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from ..events import Usage
from ..harness_registry import is_simulated
from ..review import CATEGORIES, SEVERITIES
from ._records import review_revision_failure
from ._report_data import num, tokens_dict
from ._state import RunState

_COUNTERS = ("input", "cached_input", "uncached_input", "output", "total")


def _counts(findings: Iterable[Any]) -> dict[str, Any]:
    fs = list(findings)
    return {
        "findings": len(fs),
        "by_severity": {s: sum(1 for f in fs if f.severity == s) for s in SEVERITIES},
        "by_category": {c: sum(1 for f in fs if f.category == c) for c in CATEGORIES},
    }


def _median_counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def med(get: Any) -> Any:
        values = [get(r) for r in rows]
        return num(statistics.median(values)) if values else None

    return {
        "findings": med(lambda r: r["findings"]),
        "by_severity": {s: med(lambda r, s=s: r["by_severity"][s]) for s in SEVERITIES},
        "by_category": {c: med(lambda r, c=c: r["by_category"][c]) for c in CATEGORIES},
    }


def _mean_counts(medians: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(get: Any) -> Any:
        values = [get(m) for m in medians if get(m) is not None]
        return num(statistics.fmean(values)) if values else None

    return {
        "findings": mean(lambda m: m["findings"]),
        "by_severity": {s: mean(lambda m, s=s: m["by_severity"][s]) for s in SEVERITIES},
        "by_category": {c: mean(lambda m, c=c: m["by_category"][c]) for c in CATEGORIES},
    }


def _usage_total(usages: list[Usage | None]) -> dict[str, Any]:
    """Summed reviewer tokens; ``exact`` only when every call's usage is exact."""
    rows = [tokens_dict(u, "no usage was recorded for this review call") for u in usages]
    unknown = sum(1 for r in rows if r["status"] == "unknown")
    status = "exact" if rows and all(r["status"] == "exact" for r in rows) else ("unknown" if not rows else "lower_bound")
    out: dict[str, Any] = {"calls": len(rows), "unknown_calls": unknown, "status": status}
    for k in _COUNTERS:
        vals = [r[k] for r in rows if r[k] is not None]
        out[k] = sum(vals) if vals else None
    return out


def reviewer_identity(spec: Any, revision: str) -> dict[str, Any]:
    return {
        "revision": revision, "harness": spec.harness, "model": spec.model, "reasoning": spec.reasoning,
        "cli_version": spec.cli_version, "timeout_seconds": spec.timeout_seconds,
        "review_criteria_sha256": spec.criteria_sha256, "simulated": is_simulated(spec.harness),
    }


def selected_reviewer(state: RunState) -> dict[str, Any] | None:
    """The reviewer of the selected revision (what ``comparison_identity.reviewer`` names)."""
    revision = state.selected_review
    if revision is None:
        return None
    spec = state.review_revisions[revision].reviewer if revision in state.review_revisions else state.reviewer
    return reviewer_identity(spec, revision) if spec is not None else None


def reviews_section(state: RunState, arms: list[str], tasks: list[str]) -> dict[str, Any] | None:
    """``results.json`` ``reviews``, or ``None`` for a run without a reviewer."""
    identity = selected_reviewer(state)
    if identity is None:
        return None
    revision = identity["revision"]
    records = state.reviews.get(revision, {})
    per_attempt: dict[str, dict[str, Any]] = {}
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for a in state.live_attempts():
        if not a.captured:
            continue
        rec = records.get(a.attempt_id)
        row: dict[str, Any] = {"task": a.task, "arm": a.arm, "status": "pending" if rec is None else rec.status,
                               "reason": None if rec is None else rec.reason,
                               "seconds": None if rec is None else num(rec.seconds),
                               "findings": None, "by_severity": None, "by_category": None,
                               "items": []}
        if rec is not None and rec.status == "complete":
            row.update(_counts(rec.findings))
            row["items"] = [msgspec.to_builtins(f) for f in rec.findings]
            grouped.setdefault((a.task, a.arm), []).append(row)
        per_attempt[a.attempt_id] = row
    per_task: dict[str, dict[str, dict[str, Any]]] = {t: {arm: {"reviewed": len(grouped.get((t, arm), [])),
                          "failed": sum(1 for r in per_attempt.values()
                                        if r["task"] == t and r["arm"] == arm and r["status"] != "complete"),
                          "median": _median_counts(grouped.get((t, arm), []))} for arm in arms} for t in tasks}
    per_arm = {arm: {"tasks_reviewed": sum(1 for t in tasks if per_task[t][arm]["reviewed"]),
                     "mean_of_task_medians": _mean_counts([per_task[t][arm]["median"] for t in tasks
                                                           if per_task[t][arm]["reviewed"]])} for arm in arms}
    usages: list[Usage | None] = []
    for rec in records.values():
        usages.extend(rec.earlier_usage)
        if rec.status != "started":
            usages.append(rec.usage)
        elif rec.calls:
            usages.append(None)
    revisions = [{"revision": "initial", "reviewer": reviewer_identity(state.reviewer, "initial"),
                  "finished": all(r.settled for r in state.reviews.get("initial", {}).values()),
                  "selected": revision == "initial"}] if state.reviewer is not None else []
    for rev in state.review_revisions.values():
        recs = state.reviews.get(rev.revision, {})
        failed = review_revision_failure(rev, sum(1 for aid in rev.assigned if aid in recs and recs[aid].settled))
        revisions.append({"revision": rev.revision, "reviewer": reviewer_identity(rev.reviewer, rev.revision),
                          "finished": rev.finished and failed is None, "selected": revision == rev.revision,
                          "failed_reason": failed})
    return {
        "selected_revision": revision,
        "reviewer": identity,
        "severities": list(SEVERITIES),
        "categories": list(CATEGORIES),
        "revisions": revisions,
        "per_attempt": per_attempt,
        "per_task": per_task,
        "per_arm": per_arm,
        "usage": _usage_total(usages),
    }


def review_identity_field(state: RunState) -> Mapping[str, Any] | None:
    ident = selected_reviewer(state)
    if ident is None:
        return None
    return {k: ident[k] for k in ("revision", "harness", "model", "reasoning")}
