"""``pluginbench status`` as a pure view: ``(state, run facts, now) → Status``.

The state is the run row and the attempt rows (:mod:`._view`), read from the ledger or
computed from a fold of the log, the same either way. The run facts are what the status
adapter (:mod:`pluginbench.status`) read outside the log: the owner from ``run.lock``, the
newest write's time, the last complete event, the torn tail, the selected measurements,
the report and ``run.log`` paths, and what the backend says was left running. ``now`` is
the clock. Nothing here reads a file, the clock or the lock, or asks a backend.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..events import OUTCOMES
from ..measures import CHECK_GRADER_TOKENS, CHECK_PREFIX
from ._report_activation import arm_activation
from ._state import STATES, RunState
from ._status_groups import (
    ACTIVATION_MEASURE,
    CHECKS_MEASURE,
    SCHEMA_VERSION,
    TOKEN_FIELDS,
    Group,
    RunFacts,
    Summary,
    group_of,
    group_rows,
    iso_utc,
    status_object,
    status_of_groups,
    summable,
)
from ._status_types import Status
from ._view import NATIVE_SESSION_LABEL, attempt_rows, run_row


def _sum_usages(usages: list[dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, Any] = {}
    for f in TOKEN_FIELDS:
        values = [usage.get(f) for usage in usages]
        if f == "total_tokens" and None in values:
            values = [
                v if v is not None or u.get("input_tokens") is None or u.get("output_tokens") is None
                else u["input_tokens"] + u["output_tokens"]
                for v, u in zip(values, usages, strict=True)
            ]
        totals[f] = None if None in values else sum(values)
    return totals


def _sum_tokens(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Token totals over attempts that started. A counter that any counted attempt did
    not measure is ``None`` (unknown), never a partial sum dressed as a total.

    ``native_session`` sums, apart and labelled, the native CLI sessions of attempts
    whose arm runs command hooks (their totals are unknown: hooks are unmetered);
    ``None`` when no counted attempt has one.

    ``complete_total_tokens`` is the total of the complete attempts alone (``None`` when one
    of them did not measure it), beside ``complete_attempts`` and ``running_attempts``: what
    has been spent so far while others still run, labelled as such, never the total."""
    counted = [r for r in rows if r.get("tokens_status") != "not_started"]
    totals = _sum_usages([r.get("usage") or {} for r in counted])
    complete = [r for r in counted if r.get("state") == "complete"]
    totals["complete_total_tokens"] = _sum_usages([r.get("usage") or {} for r in complete])["total_tokens"]
    totals["complete_attempts"] = len(complete)
    totals["running_attempts"] = sum(1 for r in counted if r.get("state") == "running")
    statuses = {r.get("tokens_status") for r in counted}
    totals["lower_bound"] = not statuses.isdisjoint(("unknown", "lower_bound"))
    totals["unvalidated"] = "unvalidated" in statuses
    native = [(r.get("usage") or {}).get("native_session") for r in counted]
    sessions = [n for n in native if n]
    totals["native_session"] = None if not sessions else {
        **_sum_usages(sessions),
        "attempts": len(sessions),
        "lower_bound": any(n.get("status") in ("unknown", "lower_bound") for n in sessions),
        "label": NATIVE_SESSION_LABEL,
    }
    return totals


def _activation(arm_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Was the arm's package exercised so far (complete attempts; see results.json ``activation``)."""
    a = arm_activation([r for r in arm_rows if r["state"] == "complete"])
    return {"exercised": a["exercised"], "label": a["label"], **a["any"]}


def _checks(arm_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The arm's check results over its complete attempts (``check:<name>`` values) and its llm
    checks' grader tokens (unknown when any attempt's are)."""
    complete = [r for r in arm_rows if r["state"] == "complete"]
    measured = [r for r in complete if any(k.startswith(CHECK_PREFIX) for k in r.get("measures") or {})]
    checks: dict[str, dict[str, int]] = {}
    tokens: int | None = 0
    why: str | None = None
    graded = False
    for r in measured:
        for key, m in sorted((r.get("measures") or {}).items()):
            if key.startswith(CHECK_PREFIX):
                c = checks.setdefault(key[len(CHECK_PREFIX):], {"passed": 0, "failed": 0, "unknown": 0})
                value = m.get("value") if m.get("status") == "measured" else None
                c["unknown" if value is None else "passed" if value > 0 else "failed"] += 1
        g = (r.get("measures") or {}).get(CHECK_GRADER_TOKENS)
        if g is None:
            continue
        graded = True
        if g.get("status") != "measured" or g.get("value") is None:
            tokens, why = None, why or f"{r['id']}: {g.get('reason') or 'unknown'}"
        elif tokens is not None:
            tokens += int(g["value"])
    return {"measured": len(measured), "complete": len(complete), "checks": dict(sorted(checks.items())),
            "grader_tokens": tokens if graded else None,
            "grader_tokens_reason": why if graded else "no llm check was graded on the arm"}


def _arms(run: dict[str, Any], rows: list[dict[str, Any]], selected: list[str] | None = None) -> dict[str, Any]:
    arms: dict[str, Any] = {}
    for arm in run.get("arms") or sorted({r["arm"] for r in rows}):
        arm_rows = [r for r in rows if r["arm"] == arm]
        arms[arm] = {
            "attempts": len(arm_rows),
            "states": {s: sum(1 for r in arm_rows if r["state"] == s) for s in STATES},
            "outcomes": {o: sum(1 for r in arm_rows if r["outcome"] == o and r["state"] == "complete") for o in OUTCOMES},
            "reused": sum(1 for r in arm_rows if r.get("reused")),
            "tokens": _sum_tokens(arm_rows),
            **({"activation": _activation(arm_rows)} if ACTIVATION_MEASURE in (selected or []) else {}),
            **({"checks": _checks(arm_rows)} if CHECKS_MEASURE in (selected or []) else {}),
        }
    return arms


def status_view(run: dict[str, Any], rows: list[dict[str, Any]], facts: RunFacts, now: float) -> Status:
    """The ``status --json`` object of a run whose run row is ``run`` and whose live
    attempts (slot order) are ``rows``, given what the adapter read (``facts``) at ``now``."""
    summary = Summary(
        states=Counter(r["state"] for r in rows),
        outcomes=Counter(r["outcome"] for r in rows if r["state"] == "complete" and r["outcome"]),
        work_left=any(r["state"] != "complete" for r in rows),
        attempts_total=len(rows),
        # Reused vanilla attempts were paid for by their origin run, not this one.
        tokens=_sum_tokens([r for r in rows if not r.get("reused")] + [
            {"tokens_status": d["tokens_status"], "usage": d.get("usage")} for d in run.get("discarded", [])
        ]),
        reuse={"vanilla_attempts": sum(1 for r in rows if r["arm"] == "vanilla"), "planned_hits": 0,
               "reused": sum(1 for r in rows if r.get("reused"))},
        arms=_arms(run, rows, facts.selected_measures),
    )
    return status_object(run, summary, rows, facts, now)


def status_of(state: RunState, facts: RunFacts, now: float) -> Status:
    """:func:`status_view` of a folded state (the rows computed, as the ledger stores them)."""
    return status_view(run_row(state), attempt_rows(state), facts, now)


__all__ = ["CHECKS_MEASURE", "SCHEMA_VERSION", "TOKEN_FIELDS", "Group", "RunFacts", "group_of", "group_rows", "iso_utc",
           "status_of", "status_of_groups", "status_view", "summable"]
