"""The records the run aggregate keeps beside its attempts: reviews and review revisions,
measurement revisions and discarded attempts. Mutated only by :meth:`._state.RunState.apply`."""

import msgspec
from msgspec import field

from ..events import (
    AttemptState,
    Finding,
    Measure,
    ModelRecord,
    NotMeasured,
    Outcome,
    ReadinessRow,
    ReviewerSpec,
    SourceOnlyGraded,
    Usage,
)

__all__ = ["Discarded", "MeasurementRevision", "ReviewRecord", "ReviewRevision", "review_revision_failure"]


class ReviewRecord(msgspec.Struct):
    """One submission's review in one revision. ``status``: started, complete, failed,
    or stopped (a provider stop: not settled, a resume reviews it again)."""

    attempt_id: str
    revision: str
    status: str = "started"
    findings: list[Finding] = field(default_factory=list)
    usage: Usage | None = None
    reason: str | None = None
    seconds: float | None = None
    calls: int = 0
    #: usage of earlier calls of this review that ended without an answer (provider stop, kill)
    earlier_usage: list[Usage] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        return self.status in ("complete", "failed")


class ReviewRevision(msgspec.Struct):
    revision: str
    reviewer: ReviewerSpec
    assigned: list[str]
    select: bool
    finished: bool = False
    selected: bool = False
    #: why it failed (an error stopped it, or its process ended); None when it finished
    reason: str | None = None


def review_revision_failure(rev: ReviewRevision, reviewed: int) -> str | None:
    """Why an ended review revision failed, or None when it finished. A log from before
    failures had reasons closed an abandoned revision with no reason: it failed too when
    some assigned submission was never reviewed."""
    if not rev.finished:
        return None
    if rev.reason is not None:
        return rev.reason
    if reviewed < len(rev.assigned):
        return f"ended with {reviewed} of {len(rev.assigned)} submissions reviewed"
    return None


class MeasurementRevision(msgspec.Struct):
    """A revision ``pluginbench measure`` collected: its measures per submission (and per
    task for ``reference`` stages), readiness rows and the pairs it did not measure."""

    revision: str
    measurements: list[str]
    added: list[str]
    readiness: list[ReadinessRow]
    not_measured: list[NotMeasured]
    measures: dict[str, dict[str, Measure]] = field(default_factory=dict)
    references: dict[str, dict[str, Measure]] = field(default_factory=dict)
    finished: bool = False
    selected: bool = False
    reason: str | None = None


class Discarded(msgspec.Struct):
    attempt_id: str
    slot: int
    task: str
    arm: str
    repeat: int
    replaced_by: str
    reason: str
    usage: Usage


class Attempt(msgspec.Struct):
    """One attempt at one slot. Mutated only by :meth:`RunState.apply`."""

    attempt_id: str
    slot: int
    task: str
    arm: str
    repeat: int
    state: AttemptState = "pending"
    launched: bool = False
    #: the cluster node its agent ran on (ray backend); None on one machine
    node: str | None = None
    exited: bool = False
    exit_code: int | None = None
    timed_out: bool = False
    coding_seconds: float | None = None
    usage: Usage | None = None
    agent_error: str | None = None
    model_record: ModelRecord | None = None
    captured: bool = False
    patch_sha256: str | None = None
    empty: bool | None = None
    files_changed: int | None = None
    graded: bool = False
    outcome: Outcome | None = None
    reward: float | None = None
    outcome_reason: str | None = None
    native_grading: dict[str, float] | None = None
    overlap_paths: list[str] = field(default_factory=list)
    #: the latest source-only grade (any filter revision; see source_only.graded)
    source_only: SourceOnlyGraded | None = None
    measured: bool = False
    measures: dict[str, Measure] = field(default_factory=dict)
    missing_reason: str | None = None
    interrupted_reason: str | None = None
    provider_stop: bool = False
    started_seq: int | None = None
    completed_seq: int | None = None
    #: imported from the vanilla cache instead of coded (its coding facts are the origin's)
    reused: bool = False
    origin_cohort: str | None = None
    origin_entry: str | None = None
    origin_run: str | None = None
    origin_attempt: str | None = None
    #: published to the vanilla cache: True, False (``cache_reason`` says why), None (not tried)
    cached: bool | None = None
    cache_entry: str | None = None
    cache_reason: str | None = None
