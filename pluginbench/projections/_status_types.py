"""The typed ``status --json`` object (schema version 2).

:class:`Status` is what :func:`~pluginbench.projections._status.status_view` returns and
what ``pluginbench status --json`` prints (keys sorted). Every field carries its meaning,
and the table in ``docs/metrics.md`` is generated from these types (``tools/gen_docs.py``),
so the docs cannot drift from the output.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from ..events import AttemptState, Outcome, Phase, UsageStatus

#: Every phase status can show: the fold's phases, and ``interrupted`` (no live owner while active).
PHASE = Phase
#: The fold's phases that mean a live owner should be working; without one they show as interrupted.
ACTIVE_PHASES = ("starting", "coding", "reviewing", "reporting")


class _Out(msgspec.Struct, frozen=True, kw_only=True):
    pass


class Owner(_Out, frozen=True):
    pid: Annotated[int, Meta(description="Process id of the live process holding `run.lock`.")]
    pgid: Annotated[int, Meta(description="Its process group.")]
    started_at: Annotated[str, Meta(description="When it took the lock (UTC, ISO 8601).")]


class Heartbeat(_Out, frozen=True):
    at: Annotated[str, Meta(description="Time of the newest write to `events.jsonl`, `run.log` or the ledger (UTC, ISO 8601, milliseconds).")]
    age_seconds: Annotated[float, Meta(description="Seconds from that write to the moment status was read (one decimal, never negative).")]


class NativeSessionTotals(_Out, frozen=True):
    input_tokens: Annotated[int | None, Meta(description="Sum over the arm's native sessions; `null` when any of them did not measure it.")]
    cached_input_tokens: Annotated[int | None, Meta(description="Same, cached input.")]
    output_tokens: Annotated[int | None, Meta(description="Same, output.")]
    reasoning_output_tokens: Annotated[int | None, Meta(description="Same, reasoning output.")]
    total_tokens: Annotated[int | None, Meta(description="Same, total (input + output where a receipt has no total).")]
    attempts: Annotated[int, Meta(description="Attempts with a native-session usage.")]
    lower_bound: Annotated[bool, Meta(description="True when any of those sessions is `lower_bound` or `unknown`.")]
    label: Annotated[str, Meta(description="Says these are native CLI sessions only; command-hook subprocesses are unmetered.")]


class TokenTotals(_Out, frozen=True):
    input_tokens: Annotated[int | None, Meta(description="Sum over the counted attempts; `null` (unknown) when any counted attempt did not measure it.")]
    cached_input_tokens: Annotated[int | None, Meta(description="Same, cached input.")]
    output_tokens: Annotated[int | None, Meta(description="Same, output.")]
    reasoning_output_tokens: Annotated[int | None, Meta(description="Same, reasoning output.")]
    total_tokens: Annotated[int | None, Meta(description="Same, total; an attempt without a total but with input and output counts `input + output`.")]
    lower_bound: Annotated[bool, Meta(description="True when any counted attempt's usage is `lower_bound` or `unknown`.")]
    unvalidated: Annotated[bool, Meta(description="True when any counted attempt's usage is `unvalidated`.")]
    native_session: Annotated[NativeSessionTotals | None, Meta(description="Sums of the native CLI sessions of attempts whose arm runs command hooks; `null` when none has one.")]
    complete_total_tokens: Annotated[int | None, Meta(description="Total tokens of the complete counted attempts alone (what has been spent so far while others run); `null` when one of them did not measure it. Never the total: `total_tokens` stays unknown while an attempt runs.")] = None
    complete_attempts: Annotated[int, Meta(description="Complete attempts complete_total_tokens counts.")] = 0
    running_attempts: Annotated[int, Meta(description="Counted attempts still running (their usage is not saved yet).")] = 0


class Reuse(_Out, frozen=True):
    vanilla_attempts: Annotated[int, Meta(description="Live vanilla attempt slots.")]
    planned_hits: Annotated[int, Meta(description="Entries the vanilla cache lookup found (admitted or rejected).")]
    reused: Annotated[int, Meta(description="Attempts imported from the vanilla cache and regraded.")]


class Discarded(_Out, frozen=True):
    id: Annotated[str, Meta(description="The replaced attempt.")]
    slot: Annotated[int, Meta(description="Its slot.")]
    task: Annotated[str, Meta(description="Its task.")]
    arm: Annotated[str, Meta(description="Its arm.")]
    repeat: Annotated[int, Meta(description="Its repeat.")]
    replaced_by: Annotated[str, Meta(description="The attempt that took the slot (`<id>~<n>`).")]
    reason: Annotated[str, Meta(description="Why it was discarded.")]
    tokens: Annotated[int | None, Meta(description="Its total tokens, `null` when unknown.")]
    tokens_status: Annotated[str, Meta(description="Its usage status (`exact`, `lower_bound`, `unvalidated`, `unknown`).")]
    usage: Annotated[dict[str, Any] | None, Meta(description="Its usage as recorded in `attempt.discarded` (counters, `status`, `reason`).")] = None


class Readiness(_Out, frozen=True):
    task: Annotated[str, Meta(description="The task.")]
    control: Annotated[str, Meta(description="The control harness (`oracle` must pass, `nop` must fail).")]
    ok: Annotated[bool, Meta(description="Whether the control did what it must.")]
    reward: Annotated[float | None, Meta(description="The verifier's reward, `null` when there was none.")]
    cached: Annotated[bool, Meta(description="True when the result came from the readiness cache.")]
    reason: Annotated[str | None, Meta(description="Why it failed, or `null`.")]
    verifier_tail: Annotated[list[str], Meta(description="The verifier's last output lines.")] = []
    evidence: Annotated[str | None, Meta(description="The evidence folder of the control's attempt.")] = None


class SourceOnly(_Out, frozen=True):
    graded: Annotated[int, Meta(description="Live attempts with a source-only grade.")]
    pending: Annotated[int, Meta(description="Live attempts whose source-only grade waits for the next `pluginbench run <run>`.")]
    unavailable: Annotated[int, Meta(description="Live attempts that cannot get one under this filter revision.")]
    pending_reasons: Annotated[list[str], Meta(description="`<attempt>: <reason>` for each pending one.")]


class ArmActivationStatus(_Out, frozen=True):
    exercised: Annotated[bool | None, Meta(description="true: a complete attempt used a treatment component; false: every complete attempt is known and none did; null: unknown or no components.")]
    label: Annotated[str, Meta(description="`exercised`, `not exercised`, `unknown` or `no components`.")]
    used: Annotated[int, Meta(description="Complete attempts that used a treatment component.")]
    not_used: Annotated[int, Meta(description="Complete attempts known to have used none.")]
    unknown: Annotated[int, Meta(description="Complete attempts whose traces cannot tell.")]
    rate: Annotated[float | None, Meta(description="used / (used + not_used); null when none is known.")]


class CallTokens(_Out, frozen=True):
    calls: Annotated[int, Meta(description="Ended calls (a call a kill cut off included, with unknown usage).")]
    unknown_calls: Annotated[int, Meta(description="Of them, calls whose usage is unknown.")]
    input_tokens: Annotated[int | None, Meta(description="Sum over the ended calls; `null` (unknown) when any of them did not measure it.")]
    cached_input_tokens: Annotated[int | None, Meta(description="Same, cached input.")]
    output_tokens: Annotated[int | None, Meta(description="Same, output.")]
    total_tokens: Annotated[int | None, Meta(description="Same, total (input + output where a receipt has no total).")]
    lower_bound: Annotated[bool, Meta(description="True when any call's usage is not `exact`.")]


class CheckVotesStatus(_Out, frozen=True):
    started: Annotated[int, Meta(description="llm-check votes started (`check_vote.started`; a vote started again counts again).")]
    open: Annotated[int, Meta(description="Started and not ended: in flight while a process owns the run, else cut off (the next worker discards them).")]
    cast: Annotated[int, Meta(description="Ended with an answer or a reason (`check_vote.cast`).")]
    passed: Annotated[int, Meta(description="Cast votes that said pass.")]
    failed: Annotated[int, Meta(description="Cast votes that said fail.")]
    no_verdict: Annotated[int, Meta(description="Cast votes without a verdict (malformed, failed call, provider stop).")]
    discarded: Annotated[int, Meta(description="Votes a killed worker cut off (`check_vote.discarded`): possibly paid, usage unknown; graded again.")]
    tokens: Annotated[CallTokens, Meta(description="Token sums over the ended votes (cast and discarded).")]


class ModelCalls(_Out, frozen=True):
    reviews: Annotated[CallTokens, Meta(description="Review calls of every revision (the reviewer's model).")]
    check_votes: Annotated[CheckVotesStatus, Meta(description="The llm checks' grader calls (the run's reviewer CLI and model).")]


class GenerationArmStatus(_Out, frozen=True):
    sessions: Annotated[int, Meta(description="Generating sessions of the arm (one per task, plus any a kill cut off).")]
    generated: Annotated[int, Meta(description="Tasks whose guidance was generated.")]
    failed: Annotated[int, Meta(description="Tasks whose generation failed (the arm does not run there).")]
    killed: Annotated[int, Meta(description="Sessions a killed worker cut off (generated again on resume; usage unknown).")]
    unfinished: Annotated[int, Meta(description="Tasks whose latest session has not ended (running, or cut off when no process owns the run).")]
    tokens: Annotated[int | None, Meta(description="Total tokens of the sessions; `null` when any is unknown (`tokens_reason`).")]
    tokens_status: Annotated[str, Meta(description="`exact`, `lower_bound` or `unknown`.")]
    tokens_reason: Annotated[str | None, Meta(description="Which sessions have unknown usage, or `null`.")]
    seconds: Annotated[float | None, Meta(description="Seconds of the ended sessions; `null` when any is unknown.")]
    seconds_reason: Annotated[str | None, Meta(description="Which sessions have unknown time, or `null`.")]


class GenerationStatus(_Out, frozen=True):
    arms: Annotated[dict[str, GenerationArmStatus], Meta(description="Per generated-guidance arm.")]
    unfinished: Annotated[list[dict[str, str]], Meta(description="`{arm, task}` of each session started and not ended.")]


class CheckCounts(_Out, frozen=True):
    passed: Annotated[int, Meta(description="Complete attempts where the check passed.")]
    failed: Annotated[int, Meta(description="Where it failed.")]
    unknown: Annotated[int, Meta(description="Where it could not run (never a fail).")]


class ArmChecksStatus(_Out, frozen=True):
    measured: Annotated[int, Meta(description="Complete attempts with check values.")]
    complete: Annotated[int, Meta(description="Complete attempts of the arm.")]
    checks: Annotated[dict[str, CheckCounts], Meta(description="Check name → counts over the measured attempts.")]
    grader_tokens: Annotated[int | None, Meta(description="The llm checks' grader tokens on the arm's measured attempts; `null` when any is unknown, or no llm check ran.")]
    grader_tokens_reason: Annotated[str | None, Meta(description="Why `grader_tokens` is unknown (the first such attempt's reason), or `null`.")]


class ArmStatus(_Out, frozen=True):
    attempts: Annotated[int, Meta(description="Live attempt slots of the arm.")]
    states: Annotated[dict[str, int], Meta(description="Counts by state: `pending`, `running`, `complete`, `interrupted`.")]
    outcomes: Annotated[dict[str, int], Meta(description="Counts by outcome of complete attempts: `pass`, `overlap_pass`, `fail`, `empty`, `unknown`.")]
    reused: Annotated[int, Meta(description="Attempts reused from the vanilla cache.")]
    tokens: Annotated[TokenTotals, Meta(description="The arm's sums, reused attempts included.")]
    activation: Annotated[ArmActivationStatus | None, Meta(description="Was the arm's package exercised (only when the run selects the `activation` measure).")] = None
    checks: Annotated[ArmChecksStatus | None, Meta(description="Check results so far (only when the run selects the `checks` measure).")] = None


class ReviewRevision(_Out, frozen=True):
    revision: Annotated[str, Meta(description="`initial` (the run's own review phase) or the revision `pluginbench review` made.")]
    status: Annotated[Literal["running", "finished", "failed"], Meta(description="running; finished (every assigned submission has a settled review); or failed (an error stopped it, or the process reviewing it ended: `reason` says which). A running revision no process owns reads `interrupted` in the terminal view.")]
    selected: Annotated[bool, Meta(description="Whether the report shows this revision.")]
    reviewed: Annotated[int, Meta(description="Settled reviews.")]
    assigned: Annotated[int, Meta(description="Submissions to review.")]
    harness: Annotated[str, Meta(description="The reviewer's harness.")]
    model: Annotated[str, Meta(description="The reviewer's model.")]
    reason: Annotated[str | None, Meta(description="Why a failed revision failed; null otherwise.")] = None


class MeasurementRevisionStatus(_Out, frozen=True):
    revision: Annotated[str, Meta(description="The measurement revision (`pluginbench measure --revision`).")]
    status: Annotated[str, Meta(description="selected, not_selected, or collecting (left unfinished).")]
    selected: Annotated[bool, Meta(description="Whether the report reads it.")]


class NotMeasuredStatus(_Out, frozen=True):
    task: Annotated[str, Meta(description="The task.")]
    measure: Annotated[str, Meta(description="The measure.")]
    reason: Annotated[str, Meta(description="not_configured or broken, and why.")]


class StatusMeasures(_Out, frozen=True):
    selected: Annotated[list[str], Meta(description="The `measurements` the run's frozen settings select (tokens and time are always taken).")]
    measurement_revisions: Annotated[list[MeasurementRevisionStatus], Meta(description="Each measurement revision, in order.")]
    review_revisions: Annotated[list[ReviewRevision], Meta(description="Each review revision with its progress.")]
    references: Annotated[dict[str, Any], Meta(description="Task → metric → its reference solution's value (`status`, `value`, `reason`), as recorded by preparation and the selected measurement revision; empty for a run recorded before reference values existed.")]
    not_measured: Annotated[list[NotMeasuredStatus], Meta(description="(task, measure) pairs the run does not measure, with the reason "
                                             "(from preparation's readiness checks or the selected measurement revision).")]


class Container(_Out, frozen=True):
    id: Annotated[str, Meta(description="Container id.")]
    name: Annotated[str, Meta(description="Container name.")]
    attempt: Annotated[str, Meta(description="The attempt it belongs to.")]


class LeftRunning(_Out, frozen=True):
    checked: Annotated[bool, Meta(description="False when the backend could not be asked (`error` says why).")]
    error: Annotated[str | None, Meta(description="Why the check failed, or `null`.")]
    containers: Annotated[list[Container], Meta(description="Docker: the run's running containers.")]
    folders: Annotated[list[str], Meta(description="Local: sandbox folders a killed worker left (resume removes them).")]
    stop_command: Annotated[str | None, Meta(description="`docker stop …` for those containers, or `null`.")]


class AttemptStatus(_Out, frozen=True):
    id: Annotated[str, Meta(description="Attempt id.")]
    slot: Annotated[int, Meta(description="Its slot in the plan.")]
    task: Annotated[str, Meta(description="Task id.")]
    arm: Annotated[str, Meta(description="Arm (`vanilla` or a treatment).")]
    repeat: Annotated[int, Meta(description="Repeat number (from 1).")]
    state: Annotated[AttemptState, Meta(description="`pending`, `running`, `complete` or `interrupted`.")]
    outcome: Annotated[Outcome | None, Meta(description="`pass`, `overlap_pass`, `fail`, `empty`, `unknown` once complete, else `null`.")]
    outcome_reason: Annotated[str | None, Meta(description="Why the outcome (complete), or why it was interrupted; else `null`.")]
    reused: Annotated[bool, Meta(description="Imported from the vanilla cache.")]
    tokens: Annotated[int | None, Meta(description="Total tokens, `null` when unknown.")]
    tokens_status: Annotated[UsageStatus | Literal["not_started"], Meta(description="`exact`, `lower_bound`, `unvalidated`, `unknown`, or `not_started`.")]
    tokens_reason: Annotated[str | None, Meta(description="Why the tokens are not exact, or `null`.")]
    minutes: Annotated[float | None, Meta(description="Coding time, `coding_seconds / 60`, two decimals; `null` when not measured.")]
    measures: Annotated[dict[str, Any], Meta(description="Measured values by name: `{value, unit, status, reason}`; status is `measured`, `unknown` (with its reason) or `not_applicable` (the measure has no meaning for this language; not missing).")]
    native_grading: Annotated[dict[str, float] | None, Meta(description="The verifier's other reward.json values, or `null`.")] = None
    overlap_paths: Annotated[list[str] | None, Meta(description="Files the agent's patch and the hidden tests both touch.")] = None
    node: Annotated[str | None, Meta(description="The cluster node its agent ran on (`ray` backend, from `agent.launched`); `null` on one machine or before launch.")] = None


class ClusterNodeStatus(_Out, frozen=True):
    name: Annotated[str, Meta(description="The node's label value.")]
    jobs: Annotated[int, Meta(description="Coding sandboxes it runs at once.")]


class Status(_Out, frozen=True):
    """``pluginbench status RUN --json``."""

    schema_version: Annotated[Literal[2], Meta(description="`2`.")]
    run: Annotated[str, Meta(description="Absolute run directory.")]
    name: Annotated[str | None, Meta(description="Evaluation name.")]
    phase: Annotated[PHASE, Meta(description="The run's phase; `interrupted` when no live process owns a run that is starting, coding, reviewing or "
                               "reporting. A missing, empty or corrupt `events.jsonl` is refused (exit 2) as `events`, `report` and `run` "
                               "refuse it.")]
    resume_command: Annotated[str | None, Meta(description="`pluginbench run <run>` (shell-quoted) when no process owns the run and work is left; else `null`.")]
    active: Annotated[bool, Meta(description="Whether a live process holds `run.lock`.")]
    owner: Annotated[Owner | None, Meta(description="That process, or `null`.")]
    heartbeat: Annotated[Heartbeat | None, Meta(description="The newest write to `events.jsonl`, `run.log` or the ledger; `null` when none exists.")]
    last_event: Annotated[dict[str, Any], Meta(description="The last complete event of `events.jsonl` (a torn last line is skipped), from the same read the states come from.")]
    torn_tail_bytes: Annotated[int, Meta(description="Bytes of a torn last line (no newline, does not decode); `0` when the log ends cleanly. The next resume drops them and records `log.repaired`.")]
    error: Annotated[str | None, Meta(description="The failure message of a failed run.")]
    stopping: Annotated[str | None, Meta(description="The reason of a requested stop.")]
    states_source: Annotated[Literal["ledger", "events"], Meta(description="`ledger` (the read-only ledger was at exactly `last_event`) or `events` (a fold of the same read of the log).")]
    harness: Annotated[str | None, Meta(description="From `run.created`.")]
    model: Annotated[str | None, Meta(description="From `run.created`.")]
    reasoning: Annotated[str | None, Meta(description="From `run.created`.")]
    backend: Annotated[str | None, Meta(description="From `run.created`.")]
    nodes: Annotated[list[ClusterNodeStatus] | None, Meta(description=(
        "On a cluster backend (`ray`): the worker nodes the current worker found (`run.started`) and their jobs; "
        "`null` on one machine."))]
    isolation: Annotated[str | None, Meta(description="From `run.created`.")]
    simulated: Annotated[bool, Meta(description="From `run.created`: the simulated stand-in agent.")]
    probe: Annotated[bool, Meta(description="From `run.created`: the loopback probe model server.")]
    attempts_total: Annotated[int, Meta(description="Live attempt slots.")]
    states: Annotated[dict[str, int], Meta(description="Counts by state: `pending`, `running`, `complete`, `interrupted`.")]
    outcomes: Annotated[dict[str, int], Meta(description="Counts by outcome of complete attempts: `pass`, `overlap_pass`, `fail`, `empty`, `unknown`.")]
    tokens: Annotated[TokenTotals, Meta(description="Run-wide sums (see [Tokens](#tokens)), discarded attempts included and attempts reused from the "
                               "[vanilla cache](vanilla-cache.md) excluded (their origin run paid for them): what this run spent.")]
    reuse: Annotated[Reuse, Meta(description="Vanilla cache reuse; see [vanilla-cache.md](vanilla-cache.md).")]
    discarded: Annotated[list[Discarded], Meta(description="Replaced attempts.")]
    readiness: Annotated[list[Readiness], Meta(description="One row per task and control.")]
    source_only: Annotated[SourceOnly | None, Meta(description="Source-only grades of live attempts by status.")]
    arms: Annotated[dict[str, ArmStatus], Meta(description="Per arm.")]
    measures: Annotated[StatusMeasures, Meta(description="What is measured and the review revisions.")]
    report: Annotated[str | None, Meta(description="Path of `report/report.html`, or `null`.")]
    log: Annotated[str | None, Meta(description="Path of `run.log`, or `null`.")]
    left_running: Annotated[LeftRunning | None, Meta(description="`null` while a live process owns the run (and in the dashboard's page polls); else what the run's backend "
                               "says a killed worker left.")]
    attempts: Annotated[list[AttemptStatus], Meta(description="One row per live slot, in slot order.")]
    sequential: Annotated[dict[str, Any] | None, Meta(description=(
        "A sequential run (`comparison.stopping`): the live confidence sequence of each gate, the decision and its sentence, "
        "as results.json's `sequential`; `null` for a fixed-size run."))] = None
    model_calls: Annotated[ModelCalls | None, Meta(description=(
        "Model calls besides coding, counted in `cost_ceiling`: review calls and llm-check votes with their tokens; "
        "`null` for a run with neither a reviewer nor a vote."))] = None
    generation: Annotated[GenerationStatus | None, Meta(description=(
        "Generated-guidance arms: each arm's generating sessions (counted in `cost_ceiling`) and those not ended; "
        "`null` without one."))] = None
    settings_warning: Annotated[str | None, Meta(description=(
        "Set when `evaluation.json` no longer matches its hash binding (`evaluation-binding.json`), or the binding "
        "cannot be read: the saved settings were edited, so `report` and `run` (resume) refuse the run until they "
        "are restored; the sentence names the file and what to do. Status still shows what the log and ledger say. "
        "`null` when they match (or the run has no binding)."))] = None
