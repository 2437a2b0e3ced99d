"""The fold's state change for each event type: one handler per type of the log, looked up
by the event's class in :data:`DISPATCH` (built once at import) by :meth:`RunState.apply
<pluginbench.projections._state.RunState.apply>`, instead of a class-pattern ``match`` that
tried its cases one by one for every event.

Each handler is the branch the ``match`` had for its types, unchanged (``st`` the state, ``e``
the event): the same checks in the same order, the same errors, the same state changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..events import (
    EVENT_TYPES,
    AgentExited,
    AgentLaunched,
    AttemptCached,
    AttemptCompleted,
    AttemptDiscarded,
    AttemptGraded,
    AttemptInterrupted,
    AttemptReset,
    AttemptReused,
    AttemptStarted,
    CheckVoteCast,
    CheckVoteDiscarded,
    CheckVoteStarted,
    ClusterChanged,
    CodingStarted,
    Event,
    ExtensionRecorded,
    GenerationFailed,
    GenerationStarted,
    GuidanceGenerated,
    LogRepaired,
    MeasurementReadinessChecked,
    MeasurementRevisionFinished,
    MeasurementRevisionStarted,
    MeasuresCollected,
    PreparationStarted,
    ReadinessChecked,
    ReferenceMeasured,
    ReportBuilt,
    ReviewCompleted,
    ReviewFailed,
    ReviewRevisionFinished,
    ReviewRevisionStarted,
    ReviewStarted,
    RevisionMeasured,
    RunCreated,
    RunFailed,
    RunFinished,
    RunStarted,
    RunStopped,
    RunStopping,
    SourceOnlyGraded,
    SourceOnlySelected,
    SourceOnlyStarted,
    SubmissionCaptured,
    SubmissionMissing,
    TaskPrepared,
    TreatmentFrozen,
    VanillaCacheChecked,
)
from ._check_votes import observe_review
from ._records import Attempt, Discarded
from ._state_revisions import apply_revision_event

if TYPE_CHECKING:
    from ._state import RunState


def _on_run_created(st: RunState, e: RunCreated) -> None:
    st.created = e
    st.cost_ceiling = e.cost_ceiling
    for s in e.slots:
        st.attempts[s.attempt_id] = Attempt(s.attempt_id, s.slot, s.task, s.arm, s.repeat)
        st.live[s.slot] = s.attempt_id


def _on_cluster_changed(st: RunState, e: ClusterChanged) -> None:
    st.nodes = e.nodes


def _on_run_started(st: RunState, e: RunStarted) -> None:
    st.worker_pid = e.pid
    st.workers += 1
    st.nodes = e.nodes
    if e.cost_ceiling is not None:
        st.cost_ceiling = e.cost_ceiling
    # A new worker clears the previous worker's ending; its history stays in the log.
    st.stopping = st.stopped = st.failed = None
    st.stopping_failure = False
    st.failed_calls_in_row = []
    st.finished = False
    st.source_only_round = []
    st.source_only_tried = set()
    st._round, st._round_left = set(), 0


def _on_log_repaired(st: RunState, e: LogRepaired) -> None:
    st.repairs += 1


def _on_preparation_started(st: RunState, e: PreparationStarted) -> None:
    st.preparing = True


def _on_task_prepared(st: RunState, e: TaskPrepared) -> None:
    st.prepared_tasks[e.task] = e


def _on_treatment_frozen(st: RunState, e: TreatmentFrozen) -> None:
    st.frozen_treatments[e.arm] = e


def _on_readiness_checked(st: RunState, e: ReadinessChecked) -> None:
    st.readiness[(e.task, e.control)] = e


def _on_generation(st: RunState, e: GenerationStarted | GuidanceGenerated | GenerationFailed) -> None:
    st.generations.apply(e)


def _on_check_vote(st: RunState, e: CheckVoteStarted | CheckVoteCast | CheckVoteDiscarded) -> None:
    st.check_votes.apply(e)


def _on_coding_started(st: RunState, e: CodingStarted) -> None:
    st.preparing = False
    st.coding = True


def _on_attempt_started(st: RunState, e: AttemptStarted) -> None:
    a = st.attempts.get(e.attempt_id)
    if a is None:  # a replacement attempt with a derived id
        a = Attempt(e.attempt_id, e.slot, e.task, e.arm, e.repeat)
        st.attempts[e.attempt_id] = a
    st.live[e.slot] = e.attempt_id
    a.state = "running"
    a.started_seq = e.seq


def _on_agent_launched(st: RunState, e: AgentLaunched) -> None:
    st.attempts[e.attempt_id].launched = True
    st.attempts[e.attempt_id].node = e.node


def _on_agent_exited(st: RunState, e: AgentExited) -> None:
    a = st.attempts[e.attempt_id]
    a.exited = True
    a.exit_code = e.exit_code
    a.timed_out = e.timed_out
    a.coding_seconds = e.coding_seconds
    a.usage = e.usage
    a.agent_error = e.error
    a.model_record = e.model_record


def _on_submission_captured(st: RunState, e: SubmissionCaptured) -> None:
    st.failed_calls_in_row = []
    a = st.attempts[e.attempt_id]
    a.captured = True
    a.patch_sha256 = e.patch_sha256
    a.empty = e.empty
    a.files_changed = e.files_changed


def _on_submission_missing(st: RunState, e: SubmissionMissing) -> None:
    a = st.attempts[e.attempt_id]
    a.missing_reason = e.reason
    if a.agent_error:
        st.failed_calls_in_row.append(e.attempt_id)
    else:
        st.failed_calls_in_row = []


def _on_attempt_graded(st: RunState, e: AttemptGraded) -> None:
    a = st.attempts[e.attempt_id]
    a.graded = True
    a.outcome = e.outcome
    a.reward = e.reward
    a.outcome_reason = e.reason
    a.native_grading = dict(e.native_grading) if e.native_grading is not None else None
    a.overlap_paths = list(e.overlap_paths)


def _on_source_only_started(st: RunState, e: SourceOnlyStarted) -> None:
    st.source_only_round = list(e.attempt_ids)
    st._round = set(e.attempt_ids)
    st._round_left = len(st._round - st.source_only_tried)


def _on_source_only_graded(st: RunState, e: SourceOnlyGraded) -> None:
    st.attempts[e.attempt_id].source_only = e
    if e.attempt_id in st._round and e.attempt_id not in st.source_only_tried:
        st._round_left -= 1
    st.source_only_tried.add(e.attempt_id)


def _on_source_only_selected(st: RunState, e: SourceOnlySelected) -> None:
    st.source_only_selected = e


def _on_measures_collected(st: RunState, e: MeasuresCollected) -> None:
    a = st.attempts[e.attempt_id]
    a.measured = True
    a.measures = dict(e.measures)


def _on_attempt_completed(st: RunState, e: AttemptCompleted) -> None:
    a = st.attempts[e.attempt_id]
    a.state = "complete"
    a.completed_seq = e.seq


def _on_attempt_interrupted(st: RunState, e: AttemptInterrupted) -> None:
    a = st.attempts[e.attempt_id]
    a.state = "interrupted"
    a.interrupted_reason = e.reason
    a.provider_stop = e.provider_stop


def _on_attempt_discarded(st: RunState, e: AttemptDiscarded) -> None:
    old = st.attempts[e.attempt_id]
    old.state = "interrupted"
    st.discarded.append(
        Discarded(
            old.attempt_id, old.slot, old.task, old.arm, old.repeat,
            e.replaced_by, e.reason, e.usage,
        )
    )
    st.attempts[e.replaced_by] = Attempt(
        e.replaced_by, old.slot, old.task, old.arm, old.repeat
    )
    st.live[old.slot] = e.replaced_by


def _on_vanilla_cache_checked(st: RunState, e: VanillaCacheChecked) -> None:
    st.vanilla_cache[e.task] = e


def _on_attempt_reused(st: RunState, e: AttemptReused) -> None:
    a = st.attempts.get(e.attempt_id)
    if a is None:
        a = Attempt(e.attempt_id, e.slot, e.task, e.arm, e.repeat)
        st.attempts[e.attempt_id] = a
    st.live[e.slot] = e.attempt_id
    # Coded in the origin run; graded and measured again here, like a captured attempt.
    a.state = "running"
    a.started_seq = e.seq
    a.reused = True
    a.origin_cohort, a.origin_entry = e.origin_cohort, e.origin_entry
    a.origin_run, a.origin_attempt = e.origin_run, e.origin_attempt
    a.launched = a.exited = True
    a.exit_code, a.timed_out = e.exit_code, e.timed_out
    a.coding_seconds, a.usage, a.agent_error = e.coding_seconds, e.usage, e.error
    if e.patch_sha256 is not None:
        a.captured = True
        a.patch_sha256, a.empty, a.files_changed = e.patch_sha256, e.empty, e.files_changed
    else:
        a.missing_reason = e.missing_reason or "the cached attempt has no submission"


def _on_attempt_cached(st: RunState, e: AttemptCached) -> None:
    a = st.attempts[e.attempt_id]
    a.cached = e.entry is not None
    a.cache_entry, a.cache_reason = e.entry, e.reason


def _on_attempt_reset(st: RunState, e: AttemptReset) -> None:
    a = st.attempts[e.attempt_id]
    st.attempts[e.attempt_id] = Attempt(a.attempt_id, a.slot, a.task, a.arm, a.repeat)


def _on_run_stopping(st: RunState, e: RunStopping) -> None:
    st.stopping = e.reason
    st.stopping_failure = e.failure


def _on_run_stopped(st: RunState, e: RunStopped) -> None:
    st.stopped = e.reason


def _on_run_failed(st: RunState, e: RunFailed) -> None:
    st.failed = e.error
    st.finished = False  # the last ending wins: a finished run whose evidence changed since failed


def _on_run_finished(st: RunState, e: RunFinished) -> None:
    st.finished = True
    st.report = e.report


def _on_report_built(st: RunState, e: ReportBuilt) -> None:
    st.report = e.path
    st.source_only_round = []
    st._round, st._round_left = set(), 0


def _on_extension_recorded(st: RunState, e: ExtensionRecorded) -> None:
    st.extension_records.setdefault(e.extension, {})[e.attempt_id or ""] = dict(e.data)


def _observe_review(st: RunState, e: ReviewStarted | ReviewCompleted | ReviewFailed) -> None:
    """A review call counted into the tally, before the review event itself is applied."""
    rev = st.review_revisions.get(e.revision)
    spec = rev.reviewer if rev is not None else st.reviewer
    observe_review(st.review_tally, st.reviews, spec.model if spec is not None else None, e)


def _ignore(st: RunState, e: Event) -> None:
    """An event type the aggregate does not fold (only its seq, time and type are kept)."""


_Handler = Callable[["RunState", Any], None]
#: Each event type's handler, in the order the fold's ``match`` tried its cases (a class is
#: resolved to the first entry it is a subclass of, as a class pattern matched it).
_HANDLERS: dict[type, _Handler] = {
    RunCreated: _on_run_created, ClusterChanged: _on_cluster_changed, RunStarted: _on_run_started,
    LogRepaired: _on_log_repaired, PreparationStarted: _on_preparation_started,
    TaskPrepared: _on_task_prepared, TreatmentFrozen: _on_treatment_frozen,
    ReadinessChecked: _on_readiness_checked, GenerationStarted: _on_generation,
    GuidanceGenerated: _on_generation, GenerationFailed: _on_generation,
    CheckVoteStarted: _on_check_vote, CheckVoteCast: _on_check_vote,
    CheckVoteDiscarded: _on_check_vote, CodingStarted: _on_coding_started,
    AttemptStarted: _on_attempt_started, AgentLaunched: _on_agent_launched,
    AgentExited: _on_agent_exited, SubmissionCaptured: _on_submission_captured,
    SubmissionMissing: _on_submission_missing, AttemptGraded: _on_attempt_graded,
    SourceOnlyStarted: _on_source_only_started, SourceOnlyGraded: _on_source_only_graded,
    SourceOnlySelected: _on_source_only_selected, MeasuresCollected: _on_measures_collected,
    AttemptCompleted: _on_attempt_completed, AttemptInterrupted: _on_attempt_interrupted,
    AttemptDiscarded: _on_attempt_discarded, VanillaCacheChecked: _on_vanilla_cache_checked,
    AttemptReused: _on_attempt_reused, AttemptCached: _on_attempt_cached,
    AttemptReset: _on_attempt_reset, RunStopping: _on_run_stopping, RunStopped: _on_run_stopped,
    RunFailed: _on_run_failed, RunFinished: _on_run_finished, ReportBuilt: _on_report_built,
    ExtensionRecorded: _on_extension_recorded,
    ReviewStarted: apply_revision_event, ReviewCompleted: apply_revision_event,
    ReviewFailed: apply_revision_event, ReviewRevisionStarted: apply_revision_event,
    ReviewRevisionFinished: apply_revision_event, MeasurementReadinessChecked: apply_revision_event,
    ReferenceMeasured: apply_revision_event, MeasurementRevisionStarted: apply_revision_event,
    RevisionMeasured: apply_revision_event, MeasurementRevisionFinished: apply_revision_event,
}
_REVIEW_CALLS = (ReviewStarted, ReviewCompleted, ReviewFailed)


def resolve(cls: type) -> _Handler:
    """The handler of events of class ``cls`` (cached in :data:`DISPATCH`): the first
    matching entry of :data:`_HANDLERS`, after counting the review call for review events."""
    handler = next((h for t, h in _HANDLERS.items() if issubclass(cls, t)), _ignore)
    if issubclass(cls, _REVIEW_CALLS):
        inner = handler

        def counted(st: RunState, e: Any) -> None:
            _observe_review(st, e)
            inner(st, e)

        handler = counted
    DISPATCH[cls] = handler
    return handler


#: Event class -> handler, built once for every event type; any other class is resolved the
#: first time it is seen.
DISPATCH: dict[type, _Handler] = {}
for _t in EVENT_TYPES:
    resolve(_t)
