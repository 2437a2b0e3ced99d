"""Review and measurement-revision events: a submission's review calls, ``pluginbench review``
and ``pluginbench measure`` revisions, measurement readiness and references, and the llm checks'
grader calls (``check_vote.*``)."""

from typing import Literal

from ._types_base import Finding, Measure, NotMeasured, ReadinessRow, ReviewerSpec, Usage, _Event


class ReviewStarted(_Event, frozen=True, tag="review.started"):
    """A review call of ``attempt_id``'s submission is about to start (durable first)."""

    attempt_id: str
    revision: str


class ReviewCompleted(_Event, frozen=True, tag="review.completed"):
    """The reviewer answered with valid findings (possibly none)."""

    attempt_id: str
    revision: str
    findings: list[Finding]
    usage: Usage
    #: wall time of the review call; None: not measured (never 0 for unknown)
    seconds: float | None


class ReviewFailed(_Event, frozen=True, tag="review.failed"):
    """The review produced no valid findings (``reason``); never read as zero findings.
    ``provider_stop``: the provider stopped it, which stops the run as coding does, and a
    resume reviews that submission again."""

    attempt_id: str
    revision: str
    reason: str
    usage: Usage
    seconds: float | None = None
    provider_stop: bool = False


class ReviewRevisionStarted(_Event, frozen=True, tag="review_revision.started"):
    """``pluginbench review`` began revision ``revision`` with ``reviewer``."""

    revision: str
    reviewer: ReviewerSpec
    assigned: list[str]
    select: bool = True


class ReviewRevisionFinished(_Event, frozen=True, tag="review_revision.finished"):
    """Revision ``revision`` ended; ``selected`` says whether the report uses it. With a
    ``reason`` it failed: an error stopped it, or the process reviewing it ended (its
    unsettled reviews stay unreviewed; a new revision reviews again)."""

    revision: str
    selected: bool
    reason: str | None = None


class MeasurementReadinessChecked(_Event, frozen=True, tag="measurement_readiness.checked"):
    """Preparation ran every selected measure's readiness check on each task's starting
    source: the rows, the pairs the run will not measure, and the observer version of every
    selected measure, bound to the run (``pluginbench measure`` refuses another version)."""

    readiness: list[ReadinessRow]
    not_measured: list[NotMeasured] = []
    observers: dict[str, str] = {}
    require_ready: bool = False
    #: the SHA-256 of each selected measure's observer source, which its version declares
    observer_sources: dict[str, str] = {}


class ReferenceMeasured(_Event, frozen=True, tag="reference.measured"):
    """A fresh run measured ``task``'s reference solution (``solution/solution.patch`` applied
    to the starting source) once, in preparation, with every selected measure that measures
    references (lines, complexity, unused code): a value or an unknown with the reason per
    column (no solution patch, not measured, the collector could not measure it). Reports show
    code measures as a ratio to it. ``seconds``: how long measuring it took."""

    task: str
    measures: dict[str, Measure]
    seconds: float | None = None


class MeasurementRevisionStarted(_Event, frozen=True, tag="measurement_revision.started"):
    """``pluginbench measure`` began measurement revision ``revision``: it collects
    ``measurements`` (every collector measure the run selects, ``added`` among them) from the
    saved submissions, after the readiness checks in ``readiness``."""

    revision: str
    measurements: list[str]
    added: list[str]
    readiness: list[ReadinessRow] = []
    not_measured: list[NotMeasured] = []
    #: the observer version of every measure it collects, bound to the run from now on
    observers: dict[str, str] = {}


class RevisionMeasured(_Event, frozen=True, tag="measurement_revision.measured"):
    """One submission's measures in revision ``revision`` (``stage``: ``submission``, or
    ``reference`` for a task's reference solution, then ``attempt_id`` is the task id)."""

    revision: str
    attempt_id: str
    measures: dict[str, Measure]
    stage: str = "submission"


class MeasurementRevisionFinished(_Event, frozen=True, tag="measurement_revision.finished"):
    """Revision ``revision`` ended. ``selected``: the report now uses it and the saved
    settings were rewritten (their new SHA-256 is ``evaluation_sha256``); otherwise
    ``reason`` says why not (e.g. it lost an observation the selected revision had)."""

    revision: str
    selected: bool
    reason: str | None = None
    evaluation_sha256: str | None = None


# ---------------------------------------------------------------- llm-check votes


class CheckVoteStarted(_Event, frozen=True, tag="check_vote.started"):
    """One vote of an llm check (a call of the run's reviewer CLI grading ``attempt_id`` against
    the check's rubric) is about to start: durable before the CLI runs, so from here on it may be
    paid for. One never followed by ``check_vote.cast`` was cut off by a killed worker: the next
    worker records it as ``check_vote.discarded`` (usage unknown) and grades the attempt again."""

    attempt_id: str
    check: str
    #: this vote's number (1-based) and how many votes the check takes
    vote: int
    votes: int
    #: the reviewer CLI that grades and the model its dollars are priced at
    harness: str
    model: str


class CheckVoteCast(_Event, frozen=True, tag="check_vote.cast"):
    """The vote's call ended: ``verdict`` ``pass``/``fail``, or None with ``reason`` (no final
    message, malformed, a provider stop, a failed call); ``usage`` is the call's receipt."""

    attempt_id: str
    check: str
    vote: int
    verdict: Literal["pass", "fail"] | None
    usage: Usage
    reason: str | None = None
    seconds: float | None = None
    provider_stop: bool = False


class CheckVoteDiscarded(_Event, frozen=True, tag="check_vote.discarded"):
    """A worker found a vote started by an earlier worker that never ended (killed mid-call): the
    call may have been paid for, its usage is unknown, and the attempt's checks are graded again."""

    attempt_id: str
    check: str
    vote: int
    reason: str
    usage: Usage
