"""Attempt events: an attempt from its start to its completion (launch, exit, submission,
grade, measures), its interruption, discard or reset, source-only grades and the vanilla cache."""

from typing import Any

from ._types_base import CacheDecision, Count, Measure, ModelRecord, Usage, _Event
from ._vocab import Outcome

# ---------------------------------------------------------------- attempts


class AttemptStarted(_Event, frozen=True, tag="attempt.started"):
    """A fresh sandbox is being made for this attempt."""

    attempt_id: str
    slot: Count
    task: str
    arm: str
    repeat: Count


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
    #: wall time of the agent process; None: not measured (the harness failed before it
    #: measured it). Logs written before this was allowed have 0.0 there and keep it.
    coding_seconds: float | None
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
    grades: Count


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
    slot: Count
    replaced_by: str
    reason: str
    usage: Usage


class AttemptReset(_Event, frozen=True, tag="attempt.reset"):
    """Resume returned an attempt that never launched its agent to pending."""

    attempt_id: str
    reason: str


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
    slot: Count
    task: str
    arm: str
    repeat: Count
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
