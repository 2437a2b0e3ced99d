"""Run lifecycle, preparation and report events: the run's creation, its workers, stops and
ends; frozen tasks and treatments, readiness, generated guidance; extension records and the
report."""

from typing import Any

from ._types_base import ClusterNode, Count, ReviewerSpec, SlotPlan, StoppingSpec, Usage, _Event

# ---------------------------------------------------------------- run lifecycle


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
    repeats: Count
    jobs: Count
    seed: int
    timeout_seconds: Count
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
    max_tokens_per_attempt: Count | None = None
    #: the sequential stopping rule (None: a fixed-size run of every planned slot)
    stopping: StoppingSpec | None = None


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

    dropped_bytes: Count
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
    files: Count
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
    #: what ``tests/test.sh`` got from ``[verifier.env]``: variable -> ``{"from": "task",
    #: "value": ...}``, ``{"from": "host", "variable": NAME}`` (never the value) or ``{"from":
    #: "default", "variable": NAME, "value": ...}``; null when the task declares none
    verifier_env: dict[str, dict[str, str]] | None = None
    #: what every command of the coding sandbox (and ``tests/test.sh``) got from
    #: ``[environment.env]``: variable -> ``{"from": "task", "value": ...}`` (literals only);
    #: null when the task declares none
    environment_env: dict[str, dict[str, str]] | None = None
    #: what the oracle's ``solve.sh`` got from ``[solution.env]`` (shaped like ``verifier_env``);
    #: null when the task declares none
    solution_env: dict[str, dict[str, str]] | None = None


class TreatmentFrozen(_Event, frozen=True, tag="treatment.frozen"):
    """An arm's guidance, skills and plugins were admitted and frozen."""

    arm: str
    fingerprint: str
    guidance_bytes: Count
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
    bytes: Count
    #: the arm's fingerprint on this task (its frozen settings and this file)
    fingerprint: str
    usage: Usage
    #: wall time of the session; None: not measured (never 0 for unknown)
    seconds: float | None
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
