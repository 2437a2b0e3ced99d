"""The measure port: what a measure declares, what its collector is given, what it returns.

A measure is one name a user selects in ``measurements:`` (``tokens``, ``lines``, …). It
declares everything the rest of PluginBench needs to know about it, so config validation,
the collector actor, ``results.json``, ``results.csv`` and ``report.html`` read the
registry (``_registry.py``) and never test a measure's name:

* ``columns``: the values it produces, each a :class:`Column` (the key under an attempt's
  ``measures``, its unit, a short report header, the gate name, whether the per task × arm
  summary carries its median);
* ``languages`` it can measure (``("any",)`` for language-independent ones),
  ``observer_version`` (the version of the measuring rules, bound into the run so a rule
  change is visible), ``settings`` (the keys of ``measurement_settings`` it owns, each
  with the type its value decodes to; config validation checks them);
* ``collect``: the collector, called once per captured submission with a
  :class:`CollectorInput`; ``None`` for a measure the coding pipeline itself records
  (tokens and time come from the harness's usage receipt);
* ``check``: an optional readiness check on a task's starting source
  (:class:`ReadinessInput` → :class:`Readiness`).

A collector returns one :class:`~pluginbench.events.Measure` per declared column: a value
with ``status="measured"``, or ``value=None`` with ``status="unknown"`` and a reason.
Unknown is never zero: a column the collector leaves out is recorded unknown by the
collector actor, and a collector that raises makes all its columns unknown with the error.
"""

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ..events import Measure

#: A task's readiness for one measure (product description, "Readiness"): ``ready`` (the
#: check passed), ``not_configured`` (no collector for this task, e.g. coverage without a
#: profile), ``broken`` (configured but failing) or ``unknown`` (not checked yet).
ReadinessState = Literal["ready", "not_configured", "broken", "unknown"]

#: Where a measure's values come from: its own collector after capture, or the coding
#: pipeline's receipts (tokens, time).
Source = Literal["collector", "coding"]

#: The better direction of a column's values (:attr:`Column.better`).
Better = Literal["lower", "higher"]


class Column(NamedTuple):
    """One value a measure produces: a key of an attempt's ``measures`` and a report column."""

    #: the key under ``measures`` in results.json, ``measures.<metric>`` in results.csv
    metric: str
    unit: str
    #: the short header of the report's attempt table
    label: str
    #: what the value answers (docs/metrics.md, results.json descriptions)
    description: str
    #: the name a gates file uses for it (``Source lines added``); None: not gateable
    gate_name: str | None = None
    #: whether each task × arm summary carries ``median_<metric>``
    summary: bool = True
    #: whether report.html's attempt table shows it (results.json and .csv always carry it)
    table: bool = True
    #: which way is better for a package's paired delta against vanilla (``lower``: fewer
    #: unused-code candidates; ``higher``: more changed-line coverage); None: descriptive, no
    #: better direction (lines added, functions added, verification commands)
    better: Better | None = None


class CollectorInput(NamedTuple):
    """Everything a collector may read about one submission (all of it frozen evidence).

    Paths are host paths inside the run directory; a collector reads them and writes only
    under ``work_dir``. ``patch`` has been checked against the SHA-256 recorded at capture.
    """

    attempt_id: str
    task: str
    arm: str
    #: the canonical submission, ``git diff BASE HEAD`` (``model.patch``), as text
    patch: str
    #: the attempt's evidence folder (``invocation.json``, ``execution.json``, …)
    attempt_dir: Path
    #: the agent's native traces: ``stdout.jsonl``, ``transcripts/`` (Claude Code) or
    #: ``rollouts/`` (Codex), root and subagent sessions alike; may not exist
    traces_dir: Path
    #: the harness that wrote those traces (claude, codex, or a control)
    harness: str
    #: the frozen task folder (``task.toml``, ``instruction.md``, ``solution/``, ``tests/``)
    task_dir: Path
    #: the starting source the submission's patch applies to (BASE), read-only
    starting_source: Path
    #: ``solution/solution.patch`` of the task as text, or None when the task ships none
    reference_patch: str | None
    #: the frozen task image (docker backend) or None on the local backend
    task_image: str | None
    #: opens a fresh sandbox from the frozen task's starting point, without credentials,
    #: hidden tests or the reference solution (the coverage command and every analyzer that
    #: executes or loads repository code run there, never on the host); keyword overrides of
    #: the ``SandboxSpec`` (``network="none"``, ``readonly=`` tool folders) apply to that one
    #: sandbox; its ``exec``/``put``/``get`` are the environment port's
    open_task_sandbox: Callable[..., AbstractAsyncContextManager[Any]] | None
    #: this measure's keys of ``measurement_settings`` that the config sets, each decoded
    #: to the type the measure declares (``{}`` when none is set)
    settings: Mapping[str, Any]
    #: a scratch folder for this measure and attempt (kept as evidence)
    work_dir: Path
    #: the harness saves native agent traces in ``traces_dir`` that transcript measures count
    #: (the harness port's ``agent_traces``, filled from the harness registry)
    agent_traces: bool = False
    #: this measure's folder for evidence computed once per task and run and reused by every
    #: attempt (coverage's starting report), keyed by content hash; None: compute per attempt
    shared_dir: Path | None = None
    #: one call of the run's reviewer CLI in its read-only sandbox on a packet folder (the
    #: ``llm`` rubric grader's vote: packet, prompt of the staged path, evidence folder ->
    #: ``VoteAnswer``); None where no reviewer is bound (readiness, reference measurement)
    llm_vote: Callable[..., Awaitable[Any]] | None = None


class ReadinessInput(NamedTuple):
    """What a readiness check sees: one task's starting point, before any coding."""

    task: str
    task_dir: Path
    starting_source: Path
    task_image: str | None
    open_task_sandbox: Callable[..., AbstractAsyncContextManager[Any]] | None
    settings: Mapping[str, Any]
    work_dir: Path
    #: the run's folder for this measure's once-per-task evidence (the collectors'
    #: ``CollectorInput.shared_dir``); None outside a run (``check``)
    shared_dir: Path | None = None


class Readiness(NamedTuple):
    """A task's readiness for a measure, with the reason when it is not ``ready``."""

    state: ReadinessState
    reason: str | None = None
    #: the analyzer or tool version the check found (bound into the run)
    tool_version: str | None = None


Collect = Callable[[CollectorInput], Mapping[str, Measure] | Awaitable[Mapping[str, Measure]]]
Check = Callable[[ReadinessInput], Readiness | Awaitable[Readiness]]


class MeasureSpec(NamedTuple):
    """One measure, as it registers itself (see the module docstring)."""

    name: str
    description: str
    columns: tuple[Column, ...]
    observer_version: str
    languages: tuple[str, ...] = ("any",)
    source: Source = "collector"
    collect: Collect | None = None
    #: the keys of ``measurement_settings`` this measure owns, each with the type its value
    #: is decoded to (a msgspec Struct, ``dict[str, Struct]``, ``str``…); empty: none
    settings: Mapping[str, Any] = {}
    check: Check | None = None
    #: selected when ``measurements:`` is not set in the config
    default: bool = False
    #: the collector also measures each task's reference solution (``solution/solution.patch``
    #: applied to the starting source, once per task and measurement revision): code measures
    #: (lines, complexity, unused code), not submission-only ones (coverage, transcripts)
    reference: bool = False
    #: the modules whose source determines the values (the observer); their source hash
    #: must be declared by ``observer_version`` (``_observers_declared.py``), else the
    #: measure is refused. Empty: nothing to bind (tokens, time, lines)
    observer_modules: tuple[str, ...] = ()
    #: its readiness check already runs the observer twice on the starting source (coverage),
    #: so preparation does not run the collector twice on top of it
    check_runs_twice: bool = False
    #: column families: values whose names are only known per attempt, each family a
    #: :class:`Column` whose ``metric`` is the prefix (``activation:``) every value under it
    #: starts with (``activation:skill:tidy-code``); a family value is never "expected", so
    #: an attempt without one has none (not an unknown)
    families: tuple[Column, ...] = ()

    def unknown(self, reason: str) -> dict[str, Measure]:
        """Every column of this measure, unknown with ``reason`` (never zero)."""
        return {c.metric: Measure(value=None, unit=c.unit, status="unknown", reason=reason) for c in self.columns}
