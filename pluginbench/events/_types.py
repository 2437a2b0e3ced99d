"""Event types: one immutable msgspec struct per fact about a run.

Every event carries ``seq`` (contiguous from 1), ``at`` (UTC ISO-8601 with
milliseconds, set by the writer) and ``v`` (the schema version of that event type).
The ``type`` tag names the fact in ``noun.past_participle`` form. Fields are only added
within a version; renaming or removing one bumps ``v`` and keeps a decoder for the old
shape. Values that were not measured are ``None`` beside a reason; never zero.
"""

from __future__ import annotations

from typing import Any, Literal, Union, get_args

import msgspec

from ._vocab import MeasureStatus, ModelStatus, Outcome, UsageStatus


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=False):
    seq: int = 0
    at: str = ""
    v: int = 1


# ---------------------------------------------------------------- value types


class SlotPlan(msgspec.Struct, frozen=True, kw_only=True):
    """One planned slot: a task × arm × repeat at a randomized position."""

    slot: int
    task: str
    arm: str
    repeat: int
    attempt_id: str


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """Token usage of one attempt. ``status`` is exact, lower_bound, unvalidated or unknown.

    Any counter that was not measured is ``None``; ``reason`` says why. ``native_session``
    is set only for an arm whose plugins run command hooks: hook subprocesses are
    unmetered, so the attempt's total is ``unknown`` and the native CLI session's own
    usage (with its own status) is kept there, separately and labelled.
    """

    status: UsageStatus
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    uncached_input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_output_tokens: int | None = None
    total_tokens: int | None = None
    reason: str | None = None
    native_session: Usage | None = None


class ChildModel(msgspec.Struct, frozen=True, kw_only=True):
    """A Codex child session that ran on another model or effort than its runner."""

    session_id: str | None
    model: str | None
    effort: str | None


class ModelRecord(msgspec.Struct, frozen=True, kw_only=True):
    """Which model and effort an attempt's sessions ran on, read from its rollouts.

    ``status`` is ``single`` (the root and every child on the runner's model and effort),
    ``mixed`` (a child on another model or effort: ``model`` is None and the attempt is
    ineligible) or ``unknown`` (a session's model could not be read; ``reason`` says why).
    """

    status: ModelStatus
    model: str | None
    effort: str | None = None
    children: int | None = None
    mismatched: list[ChildModel] = []
    reason: str | None = None


class Measure(msgspec.Struct, frozen=True, kw_only=True):
    """One measured value, or an explicit unknown with a reason."""

    value: float | int | None
    unit: str
    status: MeasureStatus = "measured"
    reason: str | None = None
    #: the language and analyzer a code measure was taken with (reports group by them and
    #: never pool across them); ``None`` for measures that have neither (tokens, lines)
    language: str | None = None
    analyzer: str | None = None


# ---------------------------------------------------------------- run lifecycle


class FrozenPrice(msgspec.Struct, frozen=True, kw_only=True):
    """The price row a sequential run's cost gate prices every attempt with, frozen at
    creation so the decision stays a fold of the log (a later edit of ``prices.json`` or a
    newer bundled table changes the report's dollars, never the sequence)."""

    model: str
    #: dollars per million tokens: uncached input, cached input, output
    input_per_million: float
    cached_input_per_million: float
    output_per_million: float
    #: the table's date and which table it was (``run``: the config's ``prices``; ``bundled``)
    as_of: str
    source: str


class StoppingSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A sequential run's stopping rule as frozen at creation (``comparison.stopping`` with
    the run's ``statistics.confidence_level``); see docs/configuration.md#stopping."""

    level: float
    min_tasks: int
    max_tasks: int | None
    smallest_effect: float
    token_factor: float | None = None
    ratio_bound: float = 4.0
    #: the cost gate's factor (dollars-per-attempt ratio), priced with ``price``; None: no cost gate
    cost_factor: float | None = None
    price: FrozenPrice | None = None
    #: how the run's error is shared among its gates: ``bonferroni`` (every treatment × gated
    #: metric gets an equal share); ``none`` in logs written before this field existed
    multiplicity: Literal["bonferroni", "none"] = "none"


class RunCreated(_Event, frozen=True, tag="run.created"):
    """Settings were frozen and the plan fixed. Always the first event."""

    name: str
    evaluation_sha256: str
    harness: str
    model: str
    reasoning: str | None
    backend: str
    isolation: str
    tasks: list[str]
    arms: list[str]
    repeats: int
    jobs: int
    seed: int
    timeout_seconds: int
    slots: list[SlotPlan]
    simulated: bool = False
    probe: bool = False
    pluginbench_version: str = ""
    #: The agent CLI version the run launches (resolved, not just the pin); None for controls.
    harness_version: str | None = None
    #: Where it came from: ``runner.cli_version`` (pinned) or ``host`` (read from the CLI).
    cli_version_source: str | None = None
    #: the frozen reviewer (``None``: the run has no review phase)
    reviewer: ReviewerSpec | None = None
    #: ``cost_ceiling`` in dollars at creation (a resume may set another, see ``run.started``).
    cost_ceiling: float | None = None
    #: ``runner.max_tokens_per_attempt``: the assumed worst case of one attempt, for the ceiling.
    max_tokens_per_attempt: int | None = None
    #: the sequential stopping rule (None: a fixed-size run of every planned slot)
    stopping: StoppingSpec | None = None


class ReviewerSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Who reviews: harness (claude, codex, or the labelled ``simulated`` stand-in), exact
    model, effort, its host CLI version, the review budget and the fixed criteria's digest."""

    harness: str
    model: str
    reasoning: str | None
    cli_version: str | None
    timeout_seconds: int
    criteria_sha256: str


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One review finding, as the reviewer's response schema requires it."""

    severity: str
    category: str
    title: str
    file: str | None = None
    line: int | None = None
    detail: str = ""


class ClusterNode(msgspec.Struct, frozen=True, kw_only=True):
    """A worker node of a cluster backend that takes attempts: its name and coding slots."""

    name: str
    jobs: int


class RunStarted(_Event, frozen=True, tag="run.started"):
    """A worker took ``run.lock`` and began (or resumed) the run."""

    pid: int
    pgid: int
    resumed: bool
    foreground: bool = False
    #: ``run <run> --cost-ceiling N``: the dollar ceiling from this worker on (None keeps the last one).
    cost_ceiling: float | None = None
    #: a cluster backend (ray): the worker nodes this worker found and their ``jobs``
    #: (coding runs on up to the sum of them at once); None on one machine
    nodes: list[ClusterNode] | None = None
    #: the runtime this worker codes under: ``launcher_version``, ``launcher_source_sha256``,
    #: ``backend``, the host CLI version, and on docker the engine's ID, version, OS and
    #: architecture (a resume refuses a changed launcher, backend or engine platform)
    runtime: dict[str, str] | None = None
    #: what changed since the last worker and a resume accepted (``field: saved -> current``),
    #: e.g. a host CLI update while the coding images carry the frozen CLI
    accepted: list[str] | None = None


class ClusterChanged(_Event, frozen=True, tag="cluster.changed"):
    """A cluster backend's worker nodes changed while the run ran (a node joined, left or
    was lost): coding runs on up to the sum of these nodes' ``jobs`` from now on, without
    a resume."""

    nodes: list[ClusterNode]


class LogRepaired(_Event, frozen=True, tag="log.repaired"):
    """A torn last line (a crash mid-write) was cut off by the next writer."""

    dropped_bytes: int
    dropped_sha256: str


class RunStopping(_Event, frozen=True, tag="run.stopping"):
    """A stop was requested (SIGTERM, Ctrl-C) or a failure ends the run: no new attempt
    starts, running ones finish and are kept. ``failure`` marks a stop the run could
    not avoid (provider stop, broken sandbox); it ends as ``run.failed``."""

    reason: str
    failure: bool = False


class RunStopped(_Event, frozen=True, tag="run.stopped"):
    """The worker stopped cooperatively with work left; resume continues it."""

    reason: str


class RunFailed(_Event, frozen=True, tag="run.failed"):
    """The run cannot continue; ``error`` says why and what to do."""

    error: str


class RunFinished(_Event, frozen=True, tag="run.finished"):
    """Every slot is complete and the report was written."""

    report: str | None = None


# ---------------------------------------------------------------- preparation


class PreparationStarted(_Event, frozen=True, tag="preparation.started"):
    """Inputs are being frozen and readiness checked."""


class TaskPrepared(_Event, frozen=True, tag="task.prepared"):
    """A task was frozen under ``evidence/frozen/tasks/<task>``."""

    task: str
    fingerprint: str
    files: int
    workdir: str
    #: docker backend: the frozen coding image ID (with the pinned CLI for a real agent)
    image: str | None = None
    #: docker backend: the separate verifier's image ID
    verifier_image: str | None = None
    #: who applies ``model.patch`` before grading: ``pluginbench`` or ``verifier`` (the task
    #: declares it as an artifact); the whole contract is in ``evidence/frozen/contracts/<task>.json``
    patch_applied_by: str | None = None
    #: the contract's kind: ``workspace``, ``artifact`` or ``deepswe``
    contract: str | None = None
    #: what its sandboxes may reach, in words: ``coding`` and ``verifier`` (readiness
    #: sandboxes follow the verifier's), e.g. ``loopback + probe``, ``loopback only``
    network: dict[str, str] | None = None


class TreatmentFrozen(_Event, frozen=True, tag="treatment.frozen"):
    """An arm's guidance, skills and plugins were admitted and frozen."""

    arm: str
    fingerprint: str
    guidance_bytes: int
    skills: list[str]
    plugins: list[str]


class ReadinessChecked(_Event, frozen=True, tag="readiness.checked"):
    """A control ran on a task: ``oracle`` must pass, ``nop`` must fail."""

    task: str
    control: str
    ok: bool
    reward: float | None
    cached: bool
    reason: str | None = None
    #: when the control failed: the verifier's last output lines, and the evidence folder
    #: (relative to the run directory)
    verifier_tail: list[str] = []
    evidence: str | None = None


class GenerationStarted(_Event, frozen=True, tag="generation.started"):
    """A generated-guidance arm's agent session for one task is starting (durable before the
    agent launches). One that never ends in ``guidance.generated`` or ``generation.failed``
    was killed: a resume generates it again and its usage is unknown."""

    arm: str
    task: str
    #: ``<task>__<arm>__gen<n>``: the evidence folder ``evidence/generated/<id>/``
    generation_id: str
    harness: str
    model: str | None
    #: the instruction file the session is asked to write (CLAUDE.md, AGENTS.md...)
    file: str


class GuidanceGenerated(_Event, frozen=True, tag="guidance.generated"):
    """The generating session wrote the instruction file: frozen at ``path`` (relative to the
    run directory) and bound by ``sha256``; it is the arm's guidance on this task."""

    arm: str
    task: str
    generation_id: str
    file: str
    path: str
    sha256: str
    bytes: int
    #: the arm's fingerprint on this task (its frozen settings and this file)
    fingerprint: str
    usage: Usage
    seconds: float
    exit_code: int | None = None
    #: other paths the session changed in the repository (left behind: only ``file`` is kept)
    discarded_changes: list[str] = []


class GenerationFailed(_Event, frozen=True, tag="generation.failed"):
    """The generating session wrote no usable file (none, empty, not UTF-8, over the guidance
    limit), or the CLI failed or the provider stopped it: the arm is not run on this task, and
    each of its attempts there ends with no submission, saying so."""

    arm: str
    task: str
    generation_id: str
    reason: str
    usage: Usage
    seconds: float | None = None
    provider_stop: bool = False


class CodingStarted(_Event, frozen=True, tag="coding.started"):
    """Preparation passed; attempts may start."""


# ---------------------------------------------------------------- attempts


class AttemptStarted(_Event, frozen=True, tag="attempt.started"):
    """A fresh sandbox is being made for this attempt."""

    attempt_id: str
    slot: int
    task: str
    arm: str
    repeat: int


class AgentLaunched(_Event, frozen=True, tag="agent.launched"):
    """The agent process started: from here on a model call may be paid for."""

    attempt_id: str
    argv: list[str]
    #: the cluster node the agent runs on (ray backend); None on one machine
    node: str | None = None


class AgentExited(_Event, frozen=True, tag="agent.exited"):
    """The agent process ended (or was stopped at its deadline)."""

    attempt_id: str
    exit_code: int | None
    timed_out: bool
    coding_seconds: float
    usage: Usage
    error: str | None = None
    #: Codex: the models and efforts its sessions ran on (None: not read, e.g. Claude)
    model_record: ModelRecord | None = None
    #: what in the agent's trace cannot be the CLI's own (e.g. a provider-stop line the
    #: agent wrote into the CLI's stdout, which was ignored), one note each; empty: none found
    integrity: list[str] = []
    #: the sandbox limit the session hit (memory, processes, disk) and so ended at, or
    #: None: the execution outcome ``resource_limit`` (see docs/architecture.md, "Limits")
    resource_limit: str | None = None


class SubmissionCaptured(_Event, frozen=True, tag="submission.captured"):
    """The canonical patch (``git diff BASE HEAD`` after stop) was saved."""

    attempt_id: str
    patch_sha256: str
    empty: bool
    files_changed: int


class SubmissionMissing(_Event, frozen=True, tag="submission.missing"):
    """The agent ran but no canonical patch could be made (export or patch failed).

    The paid session is kept: the attempt completes with correctness unknown, never a
    fail, and is not coded again."""

    attempt_id: str
    reason: str


class AttemptGraded(_Event, frozen=True, tag="attempt.graded"):
    """The hidden verifier graded the canonical patch in its own sandbox."""

    attempt_id: str
    outcome: Outcome
    reward: float | None
    reason: str | None = None
    #: every numeric key of the verifier's reward.json beyond ``reward`` (partial credit:
    #: fail-to-pass and pass-to-pass totals and passes...); None when it wrote reward.txt
    native_grading: dict[str, float] | None = None
    #: paths the canonical patch changes that the hidden test.patch replaces
    overlap_paths: list[str] = []


class SourceOnlyStarted(_Event, frozen=True, tag="source_only.started"):
    """Every attempt is complete: these graded attempts get a source-only grade (the
    unchanged verifier replayed on the patch without the agent's test files; no model call)."""

    attempt_ids: list[str]
    #: the filter revision (``pluginbench.measures._source_only.FILTER_REVISION``)
    filter: str


class SourceOnlyGraded(_Event, frozen=True, tag="source_only.graded"):
    """One attempt's source-only grade. ``status``: ``graded`` (``reward`` is the replay's raw
    verifier reward, or the native one when nothing was removed), ``unavailable`` (final for
    this filter revision; ``reason`` says why) or ``pending`` (the grader image or starting
    source is gone; the next ``pluginbench run <run-dir>`` tries again)."""

    attempt_id: str
    filter: str
    status: str
    reward: float | None = None
    #: the replay's reward.json beyond ``reward``
    grading: dict[str, float] | None = None
    removed_test_files: list[str] = []
    kept_reference_solution_files: list[str] = []
    kept_test_setup_files: list[str] = []
    filtered_patch_sha256: str | None = None
    nothing_removed: bool = False
    native_result_reused: bool = False
    trusted_test_overlap: list[str] = []
    reason: str | None = None
    #: wall-clock seconds this grade added (the verifier replay; ~0 when reused)
    seconds: float | None = None


class SourceOnlySelected(_Event, frozen=True, tag="source_only.selected"):
    """The source-only ``index.json`` the report reads, bound by its SHA-256. ``evaluation.json``
    is frozen and bound once (``evaluation-binding.json``, checked on resume), so the selection
    is bound here instead; a later selection (a new filter revision, or a retried pending grade)
    replaces it, and an earlier revision's index stays on disk unread."""

    #: the filter revision whose index is selected
    filter: str
    #: the index, relative to the run directory
    index: str
    #: SHA-256 of that index.json's bytes when it was selected
    index_sha256: str
    #: grades the index lists
    grades: int


class MeasuresCollected(_Event, frozen=True, tag="measures.collected"):
    """Collectors measured the submission."""

    attempt_id: str
    measures: dict[str, Measure]


class AttemptCompleted(_Event, frozen=True, tag="attempt.completed"):
    """The attempt is graded and measured; it is never coded again."""

    attempt_id: str


class AttemptInterrupted(_Event, frozen=True, tag="attempt.interrupted"):
    """The attempt ended without a usable session (provider stop, sandbox failure)."""

    attempt_id: str
    reason: str
    provider_stop: bool = False
    #: the cluster node running it was lost: discarded and recoded in-run, as a resume would
    worker_lost: bool = False


class AttemptDiscarded(_Event, frozen=True, tag="attempt.discarded"):
    """Resume replaced an attempt whose agent had launched but never finished."""

    attempt_id: str
    slot: int
    replaced_by: str
    reason: str
    usage: Usage


class AttemptReset(_Event, frozen=True, tag="attempt.reset"):
    """Resume returned an attempt that never launched its agent to pending."""

    attempt_id: str
    reason: str


class CacheDecision(msgspec.Struct, frozen=True, kw_only=True):
    """What the vanilla cache said for one vanilla repeat: ``hit`` (reused), ``miss``
    (no entry), ``rejected`` (an entry failed admission; coded fresh) or ``kept`` (the
    run had already started or reused this attempt)."""

    repeat: int
    attempt_id: str
    decision: str
    reason: str | None = None


class VanillaCacheChecked(_Event, frozen=True, tag="vanilla_cache.checked"):
    """Preparation looked up one task's vanilla repeats in the shared cache.

    ``key`` names the cohort ``vanilla/<key>`` under the cache root; ``inputs`` are what
    the key binds, so later publications carry the same inputs."""

    task: str
    key: str
    cohort: str
    inputs: dict[str, Any]
    decisions: list[CacheDecision]
    #: False when this run's vanilla attempts must not enter the cache (``reason`` says why)
    publish: bool = True
    reason: str | None = None


class AttemptReused(_Event, frozen=True, tag="attempt.reused"):
    """A vanilla attempt was imported from the cache instead of coded: its coding facts
    are the origin's; grading and measures run again in this run."""

    attempt_id: str
    slot: int
    task: str
    arm: str
    repeat: int
    origin_cohort: str
    origin_entry: str
    origin_run: str
    origin_attempt: str
    exit_code: int | None
    timed_out: bool
    coding_seconds: float | None
    usage: Usage
    error: str | None = None
    patch_sha256: str | None = None
    empty: bool | None = None
    files_changed: int | None = None
    missing_reason: str | None = None


class AttemptCached(_Event, frozen=True, tag="attempt.cached"):
    """A finished vanilla attempt was published to the cache (``entry``), or not (``reason``)."""

    attempt_id: str
    entry: str | None
    reason: str | None = None


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
    seconds: float


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


class ReadinessRow(msgspec.Struct, frozen=True, kw_only=True):
    """One task's readiness for one measure: ``ready``, ``not_configured`` or ``broken``."""

    task: str
    measure: str
    state: str  # ready | not_configured | broken
    reason: str | None = None
    #: what the ready collector is (format, analyzer and version, where its profile came from)
    detail: str | None = None


class NotMeasured(msgspec.Struct, frozen=True, kw_only=True):
    """A (task, measure) pair the run does not measure, and why."""

    task: str
    measure: str
    reason: str


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


class ExtensionRecorded(_Event, frozen=True, tag="extension.recorded"):
    """A registered actor extension recorded a fact of its own (``data``), about one attempt
    or, with ``attempt_id`` null, about the run. An extension whose facts fit this shape
    needs no event type of its own (see ``actors/_actor_ext.py``)."""

    extension: str
    attempt_id: str | None = None
    data: dict[str, Any] = {}


class ReportBuilt(_Event, frozen=True, tag="report.built"):
    """``report/`` was rebuilt from the log and frozen evidence."""

    path: str


Event = Union[  # noqa: UP007 - a Union object, so EVENT_TYPES can list its members
    RunCreated,
    RunStarted,
    ClusterChanged,
    LogRepaired,
    RunStopping,
    RunStopped,
    RunFailed,
    RunFinished,
    PreparationStarted,
    TaskPrepared,
    TreatmentFrozen,
    ReadinessChecked,
    GenerationStarted,
    GuidanceGenerated,
    GenerationFailed,
    CodingStarted,
    AttemptStarted,
    AgentLaunched,
    AgentExited,
    SubmissionCaptured,
    SubmissionMissing,
    AttemptGraded,
    MeasuresCollected,
    AttemptCompleted,
    SourceOnlyStarted,
    SourceOnlyGraded,
    SourceOnlySelected,
    AttemptInterrupted,
    AttemptDiscarded,
    AttemptReset,
    VanillaCacheChecked,
    AttemptReused,
    AttemptCached,
    ReviewStarted,
    ReviewCompleted,
    ReviewFailed,
    ReviewRevisionStarted,
    ReviewRevisionFinished,
    MeasurementReadinessChecked,
    ReferenceMeasured,
    MeasurementRevisionStarted,
    RevisionMeasured,
    MeasurementRevisionFinished,


    ExtensionRecorded,
    ReportBuilt,
]

EVENT_TYPES: tuple[type[Any], ...] = get_args(Event)

_encoder = msgspec.json.Encoder(order="deterministic")
_decoder = msgspec.json.Decoder(Event)


def encode(event: Event) -> bytes:
    """One event as compact JSON, keys in a fixed order, without a newline."""
    return _encoder.encode(event)


def decode(line: bytes | str) -> Event:
    """Decode one line; raises :class:`msgspec.DecodeError` or ValidationError."""
    return _decoder.decode(line)


def decode_many(lines: list[bytes]) -> list[Event]:
    """Decode many lines in one loop (no call per line); raises like :func:`decode`."""
    return [_decoder.decode(line) for line in lines]


def stamp(event: Event, *, seq: int, at: str) -> Event:
    """The same event with its log position and time filled in."""
    return msgspec.structs.replace(event, seq=seq, at=at)


def type_name(event: Event) -> str:
    return event.__struct_config__.tag  # type: ignore[return-value]  # msgspec types tags str | int | None; every event declares a str tag
