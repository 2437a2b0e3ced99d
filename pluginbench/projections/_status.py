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
from ..measures import CHECK_GRADER_TOKENS, CHECK_PREFIX
from ._report_activation import MEASURE as ACTIVATION_MEASURE
from ._report_activation import arm_activation
from ._state import STATES, RunState
from ._status_types import ACTIVE_PHASES, LeftRunning, Owner, Status
from ._view import NATIVE_SESSION_LABEL, attempt_rows, run_row

SCHEMA_VERSION = 2
#: the measure whose values status counts per arm (``check:<name>``, grader tokens)
CHECKS_MEASURE = "checks"
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


class Group(NamedTuple):
    """Live attempts alike in every column status counts by (see ``GROUP_COLUMNS`` of the
    ledger), their number, and per token counter its sum and how many had it."""

    arm: str | None
    state: str | None
    outcome: str | None
    reused: int
    tokens_status: str | None
    native: int
    n: int
    #: per :data:`TOKEN_FIELDS`: (sum of the known values, how many were known)
    sums: tuple[tuple[int, int], ...]


def group_rows(keyed: list[tuple[Any, ...]]) -> list[Group]:
    """``keyed``: one tuple per attempt (the ledger's ``group_of``); the groups of them."""
    out: dict[tuple[Any, ...], list[Any]] = {}
    for k in keyed:
        g = out.get(k[:6])
        if g is None:
            g = out[k[:6]] = [0, [0] * len(TOKEN_FIELDS), [0] * len(TOKEN_FIELDS)]
        g[0] += 1
        for i, v in enumerate(k[6:]):
            if v is not None:
                g[1][i] += v
                g[2][i] += 1
    return [Group(k[0], k[1], k[2], k[3], k[4], k[5], n, tuple(zip(s, c, strict=True))) for k, (n, s, c) in out.items()]


def _sum_groups(groups: list[Group]) -> dict[str, Any]:
    """:func:`_sum_tokens` of the attempts in ``groups`` (none with a native session)."""
    counted = [g for g in groups if g.tokens_status != "not_started"]

    def total(of: list[Group], i: int) -> int | None:
        return None if any(g.sums[i][1] < g.n for g in of) else sum(g.sums[i][0] for g in of)

    totals: dict[str, Any] = {f: total(counted, i) for i, f in enumerate(TOKEN_FIELDS)}
    complete = [g for g in counted if g.state == "complete"]
    totals["complete_total_tokens"] = total(complete, TOKEN_FIELDS.index("total_tokens"))
    totals["complete_attempts"] = sum(g.n for g in complete)
    totals["running_attempts"] = sum(g.n for g in counted if g.state == "running")
    statuses = {g.tokens_status for g in counted}
    totals["lower_bound"] = not statuses.isdisjoint(("unknown", "lower_bound"))
    totals["unvalidated"] = "unvalidated" in statuses
    totals["native_session"] = None
    return totals


class _Summary(NamedTuple):
    states: Counter[str]
    outcomes: Counter[str]
    work_left: bool
    attempts_total: int
    tokens: dict[str, Any]
    reuse: dict[str, int]
    arms: dict[str, Any]


def summable(run: dict[str, Any], groups: list[Group], selected: list[str]) -> bool:
    """Whether :func:`status_of_groups` can answer from ``groups`` alone: no native session
    (its sums need each usage) and no activation or checks (they need each attempt's measures)."""
    return (ACTIVATION_MEASURE not in selected and CHECKS_MEASURE not in selected and not any(g.native for g in groups)
            and not any(group_of(d)[5] for d in run.get("discarded", [])))


def status_of_groups(run: dict[str, Any], groups: list[Group], facts: RunFacts, now: float) -> Status:
    """:func:`status_view` with ``attempts`` empty, from the groups of the live attempts
    (:func:`summable` must hold): every count and sum the same as from the rows. The caller
    puts the attempt rows in (the ledger keeps each one's ``status --json`` encoding)."""
    discarded = group_rows([group_of(d) for d in run.get("discarded", [])])
    states: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    for g in groups:
        states[g.state or ""] += g.n
        if g.state == "complete" and g.outcome:
            outcomes[g.outcome] += g.n
    arms: dict[str, Any] = {}
    for arm in run.get("arms") or sorted({g.arm or "" for g in groups}):
        of = [g for g in groups if g.arm == arm]
        arms[arm] = {
            "attempts": sum(g.n for g in of),
            "states": {s: sum(g.n for g in of if g.state == s) for s in STATES},
            "outcomes": {o: sum(g.n for g in of if g.outcome == o and g.state == "complete") for o in OUTCOMES},
            "reused": sum(g.n for g in of if g.reused),
            "tokens": _sum_groups(of),
        }
    summary = _Summary(
        states=states, outcomes=outcomes, work_left=any(g.state != "complete" for g in groups),
        attempts_total=sum(g.n for g in groups),
        tokens=_sum_groups([g for g in groups if not g.reused] + discarded),
        reuse={"vanilla_attempts": sum(g.n for g in groups if g.arm == "vanilla"), "planned_hits": 0,
               "reused": sum(g.n for g in groups if g.reused)},
        arms=arms)
    return _status(run, summary, [], facts, now)


def group_of(row: dict[str, Any]) -> tuple[Any, ...]:
    """An attempt row's values under the ledger's ``GROUP_COLUMNS``: arm, state, outcome,
    reused, tokens status, whether it has a native session, and the token counters as status
    sums them (``total_tokens``: the total, or input + output where only those are known;
    ``None`` where the usage does not have it). A discarded attempt's entry (no arm or
    state) is keyed the same way."""
    usage = row.get("usage") or {}
    total = usage.get("total_tokens")
    if total is None and usage.get("input_tokens") is not None and usage.get("output_tokens") is not None:
        total = usage["input_tokens"] + usage["output_tokens"]
    return (row.get("arm"), row.get("state"), row.get("outcome"), int(bool(row.get("reused"))), row.get("tokens_status"),
            int(bool(usage.get("native_session"))), *(usage.get(f) for f in TOKEN_FIELDS[:-1]), total)


def status_view(run: dict[str, Any], rows: list[dict[str, Any]], facts: RunFacts, now: float) -> Status:
    """The ``status --json`` object of a run whose run row is ``run`` and whose live
    attempts (slot order) are ``rows``, given what the adapter read (``facts``) at ``now``."""
    summary = _Summary(
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
    return _status(run, summary, rows, facts, now)


def _status(run: dict[str, Any], summary: _Summary, rows: list[dict[str, Any]], facts: RunFacts, now: float) -> Status:
    owned = facts.owner is not None
    phase = run["phase"]
    if not owned and phase in ACTIVE_PHASES:
        phase = "interrupted"
    states, outcomes = summary.states, summary.outcomes
    work_left = phase not in ("complete", "not_started") and summary.work_left
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
        "attempts_total": summary.attempts_total,
        "states": {s: states.get(s, 0) for s in STATES},
        "outcomes": {o: outcomes.get(o, 0) for o in OUTCOMES},
        "tokens": summary.tokens,
        "reuse": run.get("reuse") or summary.reuse,
        "discarded": run.get("discarded", []),
        "readiness": run.get("readiness", []),
        "source_only": run.get("source_only"),
        "arms": summary.arms,
        "measures": {"selected": facts.selected_measures, "measurement_revisions": run.get("measurement_revisions", []),
                     "review_revisions": run.get("review_revisions", []),
                     "references": run.get("references", {}), "not_measured": run.get("not_measured", [])},
        "report": facts.report_html,
        "log": facts.log,
        "owner": facts.owner,
        "left_running": facts.left_running,
        "attempts": rows,
        "sequential": run.get("sequential"),
        "model_calls": run.get("model_calls"),
        "generation": run.get("generation"),
    }
    # One conversion checks the whole object against its type (the attempt rows carry
    # more columns than status shows; only the typed ones are kept).
    return msgspec.convert(plain, Status)


def status_of(state: RunState, facts: RunFacts, now: float) -> Status:
    """:func:`status_view` of a folded state (the rows computed, as the ledger stores them)."""
    return status_view(run_row(state), attempt_rows(state), facts, now)
