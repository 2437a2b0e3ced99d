"""The typed ``status --json`` object (schema version 2).

:class:`Status` is what :func:`~pluginbench.projections._status.status_view` returns and
what ``pluginbench status --json`` prints (keys sorted). Every field carries its meaning,
and the table in ``docs/metrics.md`` is generated from these types (``tools/gen_docs.py``),
so the docs cannot drift from the output.
"""

# No ``from __future__ import annotations``: the ``doc(...)`` annotations are evaluated here.

from typing import Any, Literal

import msgspec

from ..events import AttemptState, Outcome, Phase, UsageStatus
from ._results_schema import doc

#: Every phase status can show: the fold's phases, and ``interrupted`` (no live owner while active).
PHASE = Phase
#: The fold's phases that mean a live owner should be working; without one they show as interrupted.
ACTIVE_PHASES = ("starting", "coding", "reviewing", "reporting")


class _Out(msgspec.Struct, frozen=True, kw_only=True):
    pass


class Owner(_Out, frozen=True):
    pid: doc(int, "Process id of the live process holding `run.lock`.")
    pgid: doc(int, "Its process group.")
    started_at: doc(str, "When it took the lock (UTC, ISO 8601).")


class Heartbeat(_Out, frozen=True):
    at: doc(str, "Time of the newest write to `events.jsonl`, `run.log` or the ledger (UTC, ISO 8601, milliseconds).")
    age_seconds: doc(float, "Seconds from that write to the moment status was read (one decimal, never negative).")


class NativeSessionTotals(_Out, frozen=True):
    input_tokens: doc(int | None, "Sum over the arm's native sessions; `null` when any of them did not measure it.")
    cached_input_tokens: doc(int | None, "Same, cached input.")
    output_tokens: doc(int | None, "Same, output.")
    reasoning_output_tokens: doc(int | None, "Same, reasoning output.")
    total_tokens: doc(int | None, "Same, total (input + output where a receipt has no total).")
    attempts: doc(int, "Attempts with a native-session usage.")
    lower_bound: doc(bool, "True when any of those sessions is `lower_bound` or `unknown`.")
    label: doc(str, "Says these are native CLI sessions only; command-hook subprocesses are unmetered.")


class TokenTotals(_Out, frozen=True):
    input_tokens: doc(int | None, "Sum over the counted attempts; `null` (unknown) when any counted attempt did not measure it.")
    cached_input_tokens: doc(int | None, "Same, cached input.")
    output_tokens: doc(int | None, "Same, output.")
    reasoning_output_tokens: doc(int | None, "Same, reasoning output.")
    total_tokens: doc(int | None, "Same, total; an attempt without a total but with input and output counts `input + output`.")
    lower_bound: doc(bool, "True when any counted attempt's usage is `lower_bound` or `unknown`.")
    unvalidated: doc(bool, "True when any counted attempt's usage is `unvalidated`.")
    native_session: doc(
        NativeSessionTotals | None,
        "Sums of the native CLI sessions of attempts whose arm runs command hooks; `null` when none has one.",
    )


class Reuse(_Out, frozen=True):
    vanilla_attempts: doc(int, "Live vanilla attempt slots.")
    planned_hits: doc(int, "Entries the vanilla cache lookup found (admitted or rejected).")
    reused: doc(int, "Attempts imported from the vanilla cache and regraded.")


class Discarded(_Out, frozen=True):
    id: doc(str, "The replaced attempt.")
    slot: doc(int, "Its slot.")
    task: doc(str, "Its task.")
    arm: doc(str, "Its arm.")
    repeat: doc(int, "Its repeat.")
    replaced_by: doc(str, "The attempt that took the slot (`<id>~<n>`).")
    reason: doc(str, "Why it was discarded.")
    tokens: doc(int | None, "Its total tokens, `null` when unknown.")
    tokens_status: doc(str, "Its usage status (`exact`, `lower_bound`, `unvalidated`, `unknown`).")
    usage: doc(dict[str, Any] | None, "Its usage as recorded in `attempt.discarded` (counters, `status`, `reason`).") = None


class Readiness(_Out, frozen=True):
    task: doc(str, "The task.")
    control: doc(str, "The control harness (`oracle` must pass, `nop` must fail).")
    ok: doc(bool, "Whether the control did what it must.")
    reward: doc(float | None, "The verifier's reward, `null` when there was none.")
    cached: doc(bool, "True when the result came from the readiness cache.")
    reason: doc(str | None, "Why it failed, or `null`.")
    verifier_tail: doc(list[str], "The verifier's last output lines.") = []
    evidence: doc(str | None, "The evidence folder of the control's attempt.") = None


class SourceOnly(_Out, frozen=True):
    graded: doc(int, "Live attempts with a source-only grade.")
    pending: doc(int, "Live attempts whose source-only grade waits for the next `pluginbench run <run>`.")
    unavailable: doc(int, "Live attempts that cannot get one under this filter revision.")
    pending_reasons: doc(list[str], "`<attempt>: <reason>` for each pending one.")


class ArmStatus(_Out, frozen=True):
    attempts: doc(int, "Live attempt slots of the arm.")
    states: doc(dict[str, int], "Counts by state: `pending`, `running`, `complete`, `interrupted`.")
    outcomes: doc(dict[str, int], "Counts by outcome of complete attempts: `pass`, `overlap_pass`, `fail`, `empty`, `unknown`.")
    reused: doc(int, "Attempts reused from the vanilla cache.")
    tokens: doc(TokenTotals, "The arm's sums, reused attempts included.")


class ReviewRevision(_Out, frozen=True):
    revision: doc(str, "`initial` (the run's own review phase) or the revision `pluginbench review` made.")
    status: doc(Literal["running", "finished"], "Whether every assigned submission has a settled review.")
    selected: doc(bool, "Whether the report shows this revision.")
    reviewed: doc(int, "Settled reviews.")
    assigned: doc(int, "Submissions to review.")
    harness: doc(str, "The reviewer's harness.")
    model: doc(str, "The reviewer's model.")


class MeasurementRevisionStatus(_Out, frozen=True):
    revision: doc(str, "The measurement revision (`pluginbench measure --revision`).")
    status: doc(str, "selected, not_selected, or collecting (left unfinished).")
    selected: doc(bool, "Whether the report reads it.")


class NotMeasuredStatus(_Out, frozen=True):
    task: doc(str, "The task.")
    measure: doc(str, "The measure.")
    reason: doc(str, "not_configured or broken, and why.")


class StatusMeasures(_Out, frozen=True):
    selected: doc(list[str], "The `measurements` the run's frozen settings select (tokens and time are always taken).")
    measurement_revisions: doc(list[MeasurementRevisionStatus], "Each measurement revision, in order.")
    review_revisions: doc(list[ReviewRevision], "Each review revision with its progress.")
    references: doc(dict[str, Any], "Always empty in this build.")
    not_measured: doc(list[NotMeasuredStatus], "(task, measure) pairs the run does not measure, with the reason "
                      "(from preparation's readiness checks or the selected measurement revision).")


class Container(_Out, frozen=True):
    id: doc(str, "Container id.")
    name: doc(str, "Container name.")
    attempt: doc(str, "The attempt it belongs to.")


class LeftRunning(_Out, frozen=True):
    checked: doc(bool, "False when the backend could not be asked (`error` says why).")
    error: doc(str | None, "Why the check failed, or `null`.")
    containers: doc(list[Container], "Docker: the run's running containers.")
    folders: doc(list[str], "Local: sandbox folders a killed worker left (resume removes them).")
    stop_command: doc(str | None, "`docker stop …` for those containers, or `null`.")


class AttemptStatus(_Out, frozen=True):
    id: doc(str, "Attempt id.")
    slot: doc(int, "Its slot in the plan.")
    task: doc(str, "Task id.")
    arm: doc(str, "Arm (`vanilla` or a treatment).")
    repeat: doc(int, "Repeat number (from 1).")
    state: doc(AttemptState, "`pending`, `running`, `complete` or `interrupted`.")
    outcome: doc(Outcome | None, "`pass`, `overlap_pass`, `fail`, `empty`, `unknown` once complete, else `null`.")
    outcome_reason: doc(str | None, "Why the outcome (complete), or why it was interrupted; else `null`.")
    reused: doc(bool, "Imported from the vanilla cache.")
    tokens: doc(int | None, "Total tokens, `null` when unknown.")
    tokens_status: doc(UsageStatus | Literal["not_started"], "`exact`, `lower_bound`, `unvalidated`, `unknown`, or `not_started`.")
    tokens_reason: doc(str | None, "Why the tokens are not exact, or `null`.")
    minutes: doc(float | None, "Coding time, `coding_seconds / 60`, two decimals; `null` when not measured.")
    measures: doc(dict[str, Any], "Measured values by name: `{value, unit, status, reason}`.")
    native_grading: doc(dict[str, float] | None, "The verifier's other reward.json values, or `null`.") = None
    overlap_paths: doc(list[str] | None, "Files the agent's patch and the hidden tests both touch.") = None


class Status(_Out, frozen=True):
    """``pluginbench status RUN --json``."""

    schema_version: doc(Literal[2], "`2`.")
    run: doc(str, "Absolute run directory.")
    name: doc(str | None, "Evaluation name.")
    phase: doc(
        PHASE,
        "The run's phase; `interrupted` when no live process owns a run that is starting, coding, reviewing or "
        "reporting. A missing, empty or corrupt `events.jsonl` is refused (exit 2) as `events`, `report` and `run` "
        "refuse it.",
    )
    resume_command: doc(str | None, "`pluginbench run <run>` (shell-quoted) when no process owns the run and work is left; else `null`.")
    active: doc(bool, "Whether a live process holds `run.lock`.")
    owner: doc(Owner | None, "That process, or `null`.")
    heartbeat: doc(Heartbeat | None, "The newest write to `events.jsonl`, `run.log` or the ledger; `null` when none exists.")
    last_event: doc(dict[str, Any], "The last complete event of `events.jsonl` (a torn last line is skipped), from the same read the states come from.")
    torn_tail_bytes: doc(int, "Bytes of a torn last line (no newline, does not decode); `0` when the log ends cleanly. The next resume drops them and records `log.repaired`.")
    error: doc(str | None, "The failure message of a failed run.")
    stopping: doc(str | None, "The reason of a requested stop.")
    states_source: doc(
        Literal["ledger", "events"],
        "`ledger` (the read-only ledger was at exactly `last_event`) or `events` (a fold of the same read of the log).",
    )
    harness: doc(str | None, "From `run.created`.")
    model: doc(str | None, "From `run.created`.")
    reasoning: doc(str | None, "From `run.created`.")
    backend: doc(str | None, "From `run.created`.")
    isolation: doc(str | None, "From `run.created`.")
    simulated: doc(bool, "From `run.created`: the simulated stand-in agent.")
    probe: doc(bool, "From `run.created`: the loopback probe model server.")
    attempts_total: doc(int, "Live attempt slots.")
    states: doc(dict[str, int], "Counts by state: `pending`, `running`, `complete`, `interrupted`.")
    outcomes: doc(dict[str, int], "Counts by outcome of complete attempts: `pass`, `overlap_pass`, `fail`, `empty`, `unknown`.")
    tokens: doc(
        TokenTotals,
        "Run-wide sums (see [Tokens](#tokens)), discarded attempts included and attempts reused from the "
        "[vanilla cache](vanilla-cache.md) excluded (their origin run paid for them): what this run spent.",
    )
    reuse: doc(Reuse, "Vanilla cache reuse; see [vanilla-cache.md](vanilla-cache.md).")
    discarded: doc(list[Discarded], "Replaced attempts.")
    readiness: doc(list[Readiness], "One row per task and control.")
    source_only: doc(SourceOnly | None, "Source-only grades of live attempts by status.")
    arms: doc(dict[str, ArmStatus], "Per arm.")
    measures: doc(StatusMeasures, "What is measured and the review revisions.")
    report: doc(str | None, "Path of `report/report.html`, or `null`.")
    log: doc(str | None, "Path of `run.log`, or `null`.")
    left_running: doc(
        LeftRunning | None,
        "`null` while a live process owns the run (and in the dashboard's page polls); else what the run's backend "
        "says a killed worker left.",
    )
    attempts: doc(list[AttemptStatus], "One row per live slot, in slot order.")
