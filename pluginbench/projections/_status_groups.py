"""``status --json``'s counts and sums from groups of alike attempts, and the object itself.

The light half of :mod:`._status`: what ``status --json`` needs when the ledger answers (its
``groups`` table and pre-encoded rows), so that path imports no fold, no report and no
measures. :func:`status_object` builds the typed :class:`Status` from a summary either way
(:func:`._status.status_view` sums the rows; :func:`status_of_groups` sums the groups).
Nothing here reads a file, the clock or the lock, or asks a backend.
"""

import datetime as _dt
import shlex
from collections import Counter
from typing import Any, NamedTuple

import msgspec

from ..events import ATTEMPT_STATES, OUTCOMES
from ._status_types import ACTIVE_PHASES, LeftRunning, Owner, Status

SCHEMA_VERSION = 2
#: the measure whose values status counts per arm (``check:<name>``, grader tokens)
CHECKS_MEASURE = "checks"
#: the measure of whether an arm's package was exercised (results.json ``activation``)
ACTIVATION_MEASURE = "activation"
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
    #: why the saved settings cannot be trusted (edited evaluation.json), or None
    settings_warning: str | None = None


def iso_utc(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


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


def sum_groups(groups: list[Group]) -> dict[str, Any]:
    """:func:`._status._sum_tokens` of the attempts in ``groups`` (none with a native session)."""
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


class Summary(NamedTuple):
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
            "states": {s: sum(g.n for g in of if g.state == s) for s in ATTEMPT_STATES},
            "outcomes": {o: sum(g.n for g in of if g.outcome == o and g.state == "complete") for o in OUTCOMES},
            "reused": sum(g.n for g in of if g.reused),
            "tokens": sum_groups(of),
        }
    summary = Summary(
        states=states, outcomes=outcomes, work_left=any(g.state != "complete" for g in groups),
        attempts_total=sum(g.n for g in groups),
        tokens=sum_groups([g for g in groups if not g.reused] + discarded),
        reuse={"vanilla_attempts": sum(g.n for g in groups if g.arm == "vanilla"), "planned_hits": 0,
               "reused": sum(g.n for g in groups if g.reused)},
        arms=arms)
    return status_object(run, summary, [], facts, now)


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


def status_object(run: dict[str, Any], summary: Summary, rows: list[dict[str, Any]], facts: RunFacts, now: float) -> Status:
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
        "states": {s: states.get(s, 0) for s in ATTEMPT_STATES},
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
        "settings_warning": facts.settings_warning,
    }
    # One conversion checks the whole object against its type (the attempt rows carry
    # more columns than status shows; only the typed ones are kept).
    return msgspec.convert(plain, Status)
