"""Row shapes shared by the SQLite ledger and status, so both sources agree by construction.

``attempt_row`` and ``run_row`` turn the folded state into plain JSON-able dicts. The
ledger stores exactly these rows; status reads them from the ledger or computes them
from a fold of the log, and formats them the same way either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ..events import Measure
from ._generation import generation_totals
from ._records import review_revision_failure
from ._sequential import sequential_section
from ._state import Attempt, RunState

#: How a native-session usage beside an unknown total is labelled everywhere.
NATIVE_SESSION_LABEL = "native CLI session only; command-hook subprocesses are unmetered and not included"


def references_from_log(references: Mapping[str, Mapping[str, Measure]]) -> dict[str, dict[str, Any]]:
    """Task → metric → status/value/reason from the recorded reference measures (pure)."""
    return {task: {name: ({"status": "measured", "value": m.value, "reason": None}
                          if m.status == "measured" and m.value is not None
                          else {"status": "unavailable", "value": None, "reason": m.reason or "not measured"})
                   for name, m in sorted(measures.items())}
            for task, measures in sorted(references.items())}


def usage_dict(usage: Any) -> dict[str, Any] | None:
    return None if usage is None else msgspec.to_builtins(usage)


def tokens_status(a: Attempt) -> tuple[str, str | None]:
    if a.usage is not None:
        return a.usage.status, a.usage.reason
    if a.state == "pending":
        return "not_started", None
    return "unknown", "no usage saved yet"


def total_tokens(usage: Any) -> int | None:
    if usage is None:
        return None
    if usage.total_tokens is not None:
        return int(usage.total_tokens)
    if usage.input_tokens is not None and usage.output_tokens is not None:
        return int(usage.input_tokens + usage.output_tokens)
    return None


def attempt_row(a: Attempt, *, live: bool) -> dict[str, Any]:
    status, reason = tokens_status(a)
    return {
        "id": a.attempt_id,
        "slot": a.slot,
        "task": a.task,
        "arm": a.arm,
        "repeat": a.repeat,
        "state": a.state,
        "live": live,
        "launched": a.launched,
        "node": a.node,
        "outcome": a.outcome if a.state == "complete" else None,
        "outcome_reason": a.outcome_reason if a.state == "complete" else a.interrupted_reason,
        "reward": a.reward,
        "native_grading": a.native_grading,
        "overlap_paths": list(a.overlap_paths),
        "reused": a.reused,
        "origin_cohort": a.origin_cohort,
        "origin_entry": a.origin_entry,
        "origin_run": a.origin_run,
        "origin_attempt": a.origin_attempt,
        "cached": a.cached,
        "cache_entry": a.cache_entry,
        "cache_reason": a.cache_reason,
        "tokens": total_tokens(a.usage),
        "tokens_status": status,
        "tokens_reason": reason,
        "usage": usage_dict(a.usage),
        "minutes": None if a.coding_seconds is None else round(a.coding_seconds / 60.0, 2),
        "coding_seconds": a.coding_seconds,
        "timed_out": a.timed_out,
        "provider_stop": a.provider_stop,
        "measures": {k: msgspec.to_builtins(v) for k, v in sorted(a.measures.items())},
    }


#: Run-row keys that only events other than :data:`ATTEMPT_EVENTS` change (the plan, readiness,
#: references, measurement revisions, discarded attempts): the ledger encodes them only then.
RUN_STATIC_KEYS = ("name", "harness", "model", "reasoning", "backend", "isolation", "simulated", "probe", "jobs",
                   "repeats", "arms", "tasks", "measurement_revisions", "not_measured", "references", "readiness",
                   "discarded")

#: Events that change attempts (and the counts over them) and nothing under :data:`RUN_STATIC_KEYS`.
ATTEMPT_EVENTS = frozenset({
    "attempt.started", "agent.launched", "agent.exited", "submission.captured", "submission.missing",
    "attempt.graded", "measures.collected", "attempt.completed", "attempt.cached", "attempt.reused",
    "review.started", "review.completed", "review.failed", "source_only.started", "source_only.graded",
    "extension.recorded",
})


#: Run-row keys only some runs have (a sequential run; a run with a reviewer or llm checks; a
#: generated-guidance arm); after :data:`RUN_KEYS`, in this order.
OPTIONAL_KEYS = ("sequential", "model_calls", "generation")

#: The run row's keys in the order status shows them.
RUN_KEYS = ("name", "harness", "model", "reasoning", "backend", "isolation", "simulated", "probe", "jobs", "nodes",
            "repeats", "arms", "tasks", "phase", "coding", "preparing", "stopping", "stopped", "error", "finished",
            "report", "last_seq", "last_type", "last_at", "workers", "repairs", "reuse", "review_revisions",
            "measurement_revisions", "not_measured", "references", "source_only", "readiness", "discarded")


def run_row(state: RunState) -> dict[str, Any]:
    """The run as status shows it: :func:`run_static` and :func:`run_dynamic` in one row."""
    parts = {**run_static(state), **run_dynamic(state)}
    row = {key: parts[key] for key in RUN_KEYS}
    for key in OPTIONAL_KEYS:  # only runs that have them: another run's row is unchanged
        if key in parts:
            row[key] = parts[key]
    return row


def run_static(state: RunState) -> dict[str, Any]:
    """The part of the run row under :data:`RUN_STATIC_KEYS`."""
    c = state.created
    return {
        "name": c.name if c else None,
        "harness": c.harness if c else None,
        "model": c.model if c else None,
        "reasoning": c.reasoning if c else None,
        "backend": c.backend if c else None,
        "isolation": c.isolation if c else None,
        "simulated": c.simulated if c else False,
        "probe": c.probe if c else False,
        "jobs": c.jobs if c else None,
        "repeats": c.repeats if c else None,
        "arms": list(c.arms) if c else [],
        "tasks": list(c.tasks) if c else [],
        "measurement_revisions": [
            {"revision": r.revision, "status": "selected" if r.selected else ("not_selected" if r.finished else "collecting"),
             "selected": r.selected} for r in state.measurement_revisions.values()],
        "not_measured": [{"task": n.task, "measure": n.measure, "reason": n.reason} for n in state.not_measured],
        "references": references_from_log(state.current_references()),
        "readiness": [
            {"task": t, "control": ctl, "ok": r.ok, "reward": r.reward, "cached": r.cached, "reason": r.reason,
             "verifier_tail": list(r.verifier_tail), "evidence": r.evidence}
            for (t, ctl), r in sorted(state.readiness.items())
        ],
        "discarded": [
            {
                "id": d.attempt_id,
                "slot": d.slot,
                "task": d.task,
                "arm": d.arm,
                "repeat": d.repeat,
                "replaced_by": d.replaced_by,
                "reason": d.reason,
                "tokens": total_tokens(d.usage),
                "tokens_status": d.usage.status,
                "usage": usage_dict(d.usage),
            }
            for d in state.discarded
        ],
        **({"generation": generation_status(state)} if state.generations.by_pair else {}),
    }


def generation_status(state: RunState) -> dict[str, Any]:
    """The generated-guidance arms' generation as status shows it: per arm the sessions'
    counts (generated, failed, killed, not ended), tokens and seconds (unknown with the reason),
    and the (arm, task) pairs whose latest session has not ended (running, or cut off)."""
    totals = generation_totals(state.generations)
    unfinished = state.generations.unfinished()
    for arm, row in totals.items():
        row["unfinished"] = sum(1 for a, _t in unfinished if a == arm)
    return {"arms": totals, "unfinished": [{"arm": a, "task": t} for a, t in unfinished]}


def model_calls(state: RunState) -> dict[str, Any] | None:
    """The run's model calls besides coding (review calls of every revision, llm-check votes):
    token sums over the ended calls, counts, and the votes in flight; None without any."""
    votes = state.check_votes
    if state.reviewer is None and not state.review_revisions and not votes.attempts:
        return None
    return {"reviews": state.review_tally.view(), "check_votes": votes.summary()}


def run_dynamic(state: RunState) -> dict[str, Any]:
    """The rest of the run row: what attempt events move (phase, counters, last event);
    each field is O(1) in the number of attempts (the fold's live index)."""
    return {
        "nodes": [{"name": n.name, "jobs": n.jobs} for n in state.nodes] if state.nodes is not None else None,
        "phase": state.phase,
        "coding": state.coding,
        "preparing": state.preparing,
        "stopping": state.stopping,
        "stopped": state.stopped,
        "error": state.failed,
        "finished": state.finished,
        "report": state.report,
        "last_seq": state.last_seq,
        "last_type": state.last_type,
        "last_at": state.last_at,
        "workers": state.workers,
        "repairs": state.repairs,
        "reuse": reuse_counters(state),
        "review_revisions": review_revisions(state),
        "source_only": source_only_counts(state),
        # a sequential run only (comparison.stopping): its live decision; a fixed-size run's row is unchanged
        **({"sequential": seq} if (seq := sequential_section(state)) is not None else {}),
        **({"model_calls": calls} if (calls := model_calls(state)) is not None else {}),
    }


def review_revisions(state: RunState) -> list[dict[str, Any]]:
    """Each review revision as status shows it: revision, status (running, finished, or
    failed with its reason), selected, and reviewed (settled reviews) of assigned
    (submissions to review)."""
    out: list[dict[str, Any]] = []
    selected = state.selected_review
    if state.reviewer is not None:
        # the live captured attempts, and those of them reviewed (from the fold's index)
        assigned, reviewed = state.index.captured, state.index.captured_reviewed
        out.append({"revision": "initial", "status": "finished" if assigned and reviewed == assigned else "running",
                    "selected": selected == "initial", "reviewed": reviewed, "assigned": assigned,
                    "harness": state.reviewer.harness, "model": state.reviewer.model, "reason": None})
    for rev in state.review_revisions.values():
        recs = state.reviews.get(rev.revision, {})
        reviewed = sum(1 for aid in rev.assigned if aid in recs and recs[aid].settled)
        reason = review_revision_failure(rev, reviewed)
        out.append({"revision": rev.revision,
                    "status": "running" if not rev.finished else ("failed" if reason else "finished"),
                    "selected": selected == rev.revision, "reviewed": reviewed,
                    "assigned": len(rev.assigned), "harness": rev.reviewer.harness, "model": rev.reviewer.model,
                    "reason": reason})
    return out


def reuse_counters(state: RunState) -> dict[str, int]:
    """Vanilla cache reuse: vanilla slots, planned hits (entries the lookup found), reused."""
    return {
        "vanilla_attempts": state.index.vanilla,
        "planned_hits": sum(
            1 for c in state.vanilla_cache.values() for d in c.decisions if d.decision in ("hit", "rejected")
        ),
        "reused": state.index.reused,
    }


def attempt_rows(state: RunState) -> list[dict[str, Any]]:
    """Live attempts in slot order."""
    return [attempt_row(a, live=True) for a in state.live_attempts()]


def source_only_counts(state: RunState) -> dict[str, object]:
    """Source-only grades of live attempts by status, and the reasons of pending ones."""
    counts: dict[str, int] = {"graded": 0, "pending": 0, "unavailable": 0}
    index = state.index
    for status in sorted(s for s, n in index.source_only.items() if n):
        counts[status] = index.source_only[status]
    pending = [reason for _, reason in sorted(index.pending_reasons.items())]  # slot order
    return {**counts, "pending_reasons": pending}
