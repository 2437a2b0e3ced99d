"""``pluginbench status``: what a run is doing, read-only, from any run directory.

The log is read once and verified like ``events``, ``report`` and ``run`` do (a missing,
empty or corrupt log is refused). Attempt states come from ``evidence/ledger.sqlite``
opened read-only when it is usable and at exactly the log's last complete event;
otherwise from a fold of that same read (``states_source`` says which), so states and
``last_event`` are one moment. A torn last line is ignored and counted
(``torn_tail_bytes``).
The owner comes from ``run.lock`` (a held lock with the recorded start time), the
heartbeat from the newest write to the log, ``run.log`` or the ledger. Nothing here
writes, and nothing here calls Docker except the explicit left-running check.
"""

from __future__ import annotations

import datetime as _dt
import shlex
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from .._gc import paused_gc
from ..events import encode, live_owner, read_run_log
from ..rundir import RunDir
from ._ledger import LedgerView, read_ledger
from ._state import OUTCOMES, STATES, fold
from ._view import NATIVE_SESSION_LABEL, attempt_rows, run_row

SCHEMA_VERSION = 2
ACTIVE_PHASES = ("starting", "coding", "measuring", "reviewing", "reporting")
TOKEN_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")


def _iso(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _heartbeat(rd: RunDir, now: float) -> dict[str, Any] | None:
    mtimes = [p.stat().st_mtime for p in (rd.events, rd.log, rd.ledger) if p.exists()]
    if not mtimes:
        return None
    newest = max(mtimes)
    return {"at": _iso(newest), "age_seconds": round(max(0.0, now - newest), 1)}


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
    ``None`` when no counted attempt has one."""
    counted = [r for r in rows if r.get("tokens_status") != "not_started"]
    totals = _sum_usages([r.get("usage") or {} for r in counted])
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


def status_snapshot(
    run_dir: Path,
    *,
    now: float | None = None,
    ledger_reader: Callable[[Path], LedgerView | None] = read_ledger,
    check_left_running: bool = True,
) -> dict[str, Any]:
    """The ``status --json`` object (schema_version 2). Read-only.

    ``ledger_reader`` lets an async caller (the dashboard) hand in the ledger view it
    read itself; ``check_left_running=False`` keeps Docker out of a page poll
    (``left_running`` is then null, as the dashboard's contract says)."""
    with paused_gc():
        return _snapshot(run_dir, now, ledger_reader, check_left_running)


def _snapshot(
    run_dir: Path, now: float | None, ledger_reader: Callable[[Path], LedgerView | None], check_left_running: bool
) -> dict[str, Any]:
    import time

    rd = RunDir(run_dir.resolve())
    now = time.time() if now is None else now
    owner = live_owner(rd.root)
    # One snapshot: the log is read (and verified: every line decodes, seq is contiguous,
    # it begins with run.created) once; last_event is its last complete event, and the
    # states come from the ledger only when the ledger is at exactly that event, else
    # from a fold of the same events. States and last_event never mix two moments.
    contents = read_run_log(rd.events)
    last, torn_tail_bytes = contents.events[-1], len(contents.torn_tail)
    view = ledger_reader(rd.ledger)
    if view is not None and view.last_seq == last.seq:
        del contents  # verified; the ledger holds the same moment, so no fold is needed
        run, rows, source = view.run, view.attempts, "ledger"
    else:
        state = fold(contents.events)
        del contents
        run, rows = run_row(state), attempt_rows(state)
        source = "events"
    phase = run["phase"]
    if owner is None and phase in ACTIVE_PHASES:
        phase = "interrupted"
    states = Counter(r["state"] for r in rows)
    outcomes = Counter(r["outcome"] for r in rows if r["state"] == "complete" and r["outcome"])
    arms: dict[str, Any] = {}
    for arm in run.get("arms") or sorted({r["arm"] for r in rows}):
        arm_rows = [r for r in rows if r["arm"] == arm]
        arms[arm] = {
            "attempts": len(arm_rows),
            "states": {s: sum(1 for r in arm_rows if r["state"] == s) for s in STATES},
            "outcomes": {o: sum(1 for r in arm_rows if r["outcome"] == o and r["state"] == "complete") for o in OUTCOMES},
            "reused": sum(1 for r in arm_rows if r.get("reused")),
            "tokens": _sum_tokens(arm_rows),
        }
    work_left = phase not in ("complete", "not_started") and any(r["state"] != "complete" for r in rows)
    if phase == "reporting" or (phase == "interrupted" and not work_left):
        work_left = True
    last_event = msgspec.json.decode(encode(last))
    report_html = rd.report_dir / "report.html"
    return {
        "schema_version": SCHEMA_VERSION,
        "run": str(rd.root),
        "name": run.get("name"),
        "phase": phase,
        "resume_command": (
            f"pluginbench run {shlex.quote(str(rd.root))}" if owner is None and work_left and phase != "complete" else None
        ),
        "active": owner is not None,
        "owner": None if owner is None else {"pid": owner.pid, "pgid": owner.pgid, "started_at": owner.started_at},
        "heartbeat": _heartbeat(rd, now),
        "last_event": last_event,
        "torn_tail_bytes": torn_tail_bytes,
        "error": run.get("error"),
        "stopping": run.get("stopping"),
        "states_source": source,
        "harness": run.get("harness"),
        "model": run.get("model"),
        "reasoning": run.get("reasoning"),
        "backend": run.get("backend"),
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
        "arms": arms,
        "measures": {"selected": _selected_measures(rd), "measurement_revisions": run.get("measurement_revisions", []),
                     "review_revisions": run.get("review_revisions", []),
                     "references": {}, "not_measured": run.get("not_measured", [])},
        "report": str(report_html) if report_html.exists() else None,
        "log": str(rd.log) if rd.log.exists() else None,
        "left_running": None if owner is not None or not check_left_running else _left_running(run, rd.run_id),
        "attempts": [
            {**{k: r[k] for k in ("id", "slot", "task", "arm", "repeat", "state", "outcome", "outcome_reason",
                                  "reused", "tokens", "tokens_status", "tokens_reason", "minutes", "measures")},
             **{k: r.get(k) for k in ("native_grading", "overlap_paths")}}
            for r in rows
        ],
    }


def _selected_measures(rd: RunDir) -> list[str]:
    """The measurements the run's frozen settings select (tokens and time are always taken)."""
    import json

    try:
        selected = json.loads(rd.evaluation.read_text()).get("measurements")
    except (OSError, ValueError, AttributeError):
        return []
    return sorted(m for m in selected if isinstance(m, str)) if isinstance(selected, list) else []


def left_running_check(run_dir: Path) -> dict[str, Any]:
    """The ``left_running`` object of a run no process owns (asks Docker on docker runs):
    the dashboard's "check for containers left running" action."""
    rd = RunDir(run_dir.resolve())
    view = read_ledger(rd.ledger)
    run = view.run if view is not None else run_row(fold(read_run_log(rd.events).events))
    return _left_running(run, rd.run_id)


def _left_running(run: dict[str, Any], run_id: str) -> dict[str, Any]:
    if run.get("backend") != "docker":
        from ..environments._local import left_behind

        folders = [str(f) for f in left_behind(run_id)]
        return {"checked": True, "error": None, "containers": [], "folders": folders, "stop_command": None}
    try:
        from ..environments import list_left_running_sync

        containers = list_left_running_sync(run_id)
    except Exception as exc:  # noqa: BLE001 - reported, not raised: status must always answer
        return {"checked": False, "error": str(exc), "containers": [], "folders": [], "stop_command": None}
    ids = [c["id"] for c in containers]
    return {
        "checked": True,
        "error": None,
        "containers": containers,
        "folders": [],
        "stop_command": ("docker stop " + " ".join(ids)) if ids else None,
    }
