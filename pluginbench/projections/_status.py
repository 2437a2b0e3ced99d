"""``pluginbench status`` as a pure view: ``(state, run facts, now) → Status``.

The state is the run row and the attempt rows (:mod:`._view`), read from the ledger or
computed from a fold of the log, the same either way. The run facts are what the status
adapter (:mod:`pluginbench.status`) read outside the log: the owner from ``run.lock``, the
newest write's time, the last complete event, the torn tail, the selected measurements,
the report and ``run.log`` paths, and what the backend says was left running. ``now`` is
the clock. Nothing here reads a file, the clock or the lock, or asks a backend.
"""

from __future__ import annotations

import datetime as _dt
import shlex
from collections import Counter
from typing import Any, NamedTuple

import msgspec

from ..events import OUTCOMES
from ._report_activation import MEASURE as ACTIVATION_MEASURE
from ._report_activation import arm_activation
from ._state import STATES, RunState
from ._status_types import ACTIVE_PHASES, LeftRunning, Owner, Status
from ._view import NATIVE_SESSION_LABEL, attempt_rows, run_row

SCHEMA_VERSION = 2
TOKEN_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")


class RunFacts(NamedTuple):
    """What the status adapter read besides the rows; everything the view needs from outside."""

    run_dir: str
    owner: Owner | None
    #: mtime of the newest of events.jsonl, run.log and the ledger; None when none exists
    newest_write: float | None
    #: the last complete event as JSON (from the same read the rows come from)
    last_event: dict[str, Any]
    torn_tail_bytes: int
    states_source: str
    selected_measures: list[str]
    report_html: str | None
    log: str | None
    #: None while owned, or when the caller did not ask the backend
    left_running: LeftRunning | None


def iso_utc(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


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
        }
    return arms


def status_view(run: dict[str, Any], rows: list[dict[str, Any]], facts: RunFacts, now: float) -> Status:
    """The ``status --json`` object of a run whose run row is ``run`` and whose live
    attempts (slot order) are ``rows``, given what the adapter read (``facts``) at ``now``."""
    owned = facts.owner is not None
    phase = run["phase"]
    if not owned and phase in ACTIVE_PHASES:
        phase = "interrupted"
    states = Counter(r["state"] for r in rows)
    outcomes = Counter(r["outcome"] for r in rows if r["state"] == "complete" and r["outcome"])
    work_left = phase not in ("complete", "not_started") and any(r["state"] != "complete" for r in rows)
    if phase == "reporting" or (phase == "interrupted" and not work_left):
        work_left = True
    if phase == "stopped" and (run.get("sequential") or {}).get("stopped_by_decision"):
        work_left = False  # decided: a resume would only stop again
    heartbeat = None if facts.newest_write is None else {
        "at": iso_utc(facts.newest_write), "age_seconds": round(max(0.0, now - facts.newest_write), 1),
    }
    plain = {
        "schema_version": SCHEMA_VERSION,
        "run": facts.run_dir,
        "name": run.get("name"),
        "phase": phase,
        "resume_command": (
            f"pluginbench run {shlex.quote(facts.run_dir)}" if not owned and work_left and phase != "complete" else None
        ),
        "active": owned,
        "heartbeat": heartbeat,
        "last_event": facts.last_event,
        "torn_tail_bytes": facts.torn_tail_bytes,
        "error": run.get("error"),
        "stopping": run.get("stopping"),
        "states_source": facts.states_source,
        "harness": run.get("harness"),
        "model": run.get("model"),
        "reasoning": run.get("reasoning"),
        "backend": run.get("backend"),
        "nodes": run.get("nodes"),
        "isolation": run.get("isolation"),
        "simulated": run.get("simulated", False),
        "probe": run.get("probe", False),
        "attempts_total": len(rows),
        "states": {s: states.get(s, 0) for s in STATES},
        "outcomes": {o: outcomes.get(o, 0) for o in OUTCOMES},
        # Reused vanilla attempts were paid for by their origin run, not this one.
        "tokens": _sum_tokens([r for r in rows if not r.get("reused")] + [
            {"tokens_status": d["tokens_status"], "usage": d.get("usage")} for d in run.get("discarded", [])
        ]),
        "reuse": run.get("reuse") or {
            "vanilla_attempts": sum(1 for r in rows if r["arm"] == "vanilla"),
            "planned_hits": 0,
            "reused": sum(1 for r in rows if r.get("reused")),
        },
        "discarded": run.get("discarded", []),
        "readiness": run.get("readiness", []),
        "source_only": run.get("source_only"),
        "arms": _arms(run, rows, facts.selected_measures),
        "measures": {"selected": facts.selected_measures, "measurement_revisions": run.get("measurement_revisions", []),
                     "review_revisions": run.get("review_revisions", []),
                     "references": run.get("references", {}), "not_measured": run.get("not_measured", [])},
        "report": facts.report_html,
        "log": facts.log,
        "owner": facts.owner,
        "left_running": facts.left_running,
        "attempts": rows,
        "sequential": run.get("sequential"),
    }
    # One conversion checks the whole object against its type (the attempt rows carry
    # more columns than status shows; only the typed ones are kept).
    return msgspec.convert(plain, Status)


def status_of(state: RunState, facts: RunFacts, now: float) -> Status:
    """:func:`status_view` of a folded state (the rows computed, as the ledger stores them)."""
    return status_view(run_row(state), attempt_rows(state), facts, now)
