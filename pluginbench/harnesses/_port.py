"""The harness port: deliver a treatment privately, launch the agent, read its trace.

The coding actor drives one attempt through a :class:`Harness`:

1. :meth:`Harness.deliver` writes the arm's frozen guidance, skills and plugins into a
   fresh host folder that becomes the sandbox's private HOME (``paths.home``). Vanilla
   gets the same folder with nothing declared in it. Nothing is ever written into the
   repository or appended to the prompt.
2. :meth:`Harness.run` runs the agent inside the sandbox with the attempt's deadline.
   Before the agent process starts it must ``await ctx.launched(argv)``: that records
   ``agent.launched`` durably, so a crash afterwards is known to have possibly paid
   for a model call (resume then discards and replaces the attempt, never replays it).
3. It returns :class:`AgentRun`: exit, timeout, coding time and token usage (unknown
   with a reason, never zero, when it cannot be read), and whether the provider
   stopped the session (rate limit, auth, 5xx), which is not an outcome of the agent.

Everything else the engine needs to know about a harness is declared here too, on
:class:`HarnessBase`, and provided by each adapter class, so that config validation, run
creation, the worker, preparation, ``doctor`` and the docker coding image ask the adapter
(through :mod:`pluginbench.harness_registry`) instead of testing its name:

* what it is: ``real`` (a real agent CLI: it needs an exact model id, its pinned CLI and
  a sandbox boundary, and may be pointed at the probe), ``simulated`` (every report labels
  it), ``reviewer`` (it may review submissions), ``native_receipts`` (its attempts carry
  a native-treatment receipt the vanilla cache checks), ``needs_solution`` (oracle);
* its pinned CLI (:class:`~pluginbench.harness_registry.CliPin`): the npm package and
  version ``tools/install-clis.sh`` installs, the executable, the flags ``doctor`` checks;
  for a run, the resolved ``cli_version`` and the host folders the CLI needs bound
  read-only in a default-deny sandbox (``readonly``); the credential strings it delivers
  (``secrets()``), which the engine scans exports and evidence for;
* its rules: model and effort (:meth:`HarnessBase.spec_problem`, runner and reviewer),
  other config rules (:meth:`HarnessBase.validate_config`), what each task must carry
  (:meth:`HarnessBase.check_task`), treatment admission and host credentials before a run
  is created (:meth:`HarnessBase.admit_evaluation`);
* what the vanilla cache key binds of it (:attr:`HarnessBase.delivery_policy`,
  :meth:`HarnessBase.launch_identity`, :meth:`HarnessBase.uncacheable_cli`);
* as the reviewer or a judge: its host checks (:meth:`HarnessBase.check_reviewer_host`),
  options (:meth:`HarnessBase.reviewer_options`) and how its answer is read from its saved
  stdout (:meth:`HarnessBase.read_final`);
* as a judge: its launch rule (:meth:`HarnessBase.check_launch`) and native identity
  (:meth:`HarnessBase.native_identity`); re-validating saved usage
  (:meth:`HarnessBase.revalidate_usage`);
* what it does with the ``capabilities`` settings (:meth:`HarnessBase.capability_policy`);
* the instruction file its agent reads from the repository root
  (:attr:`HarnessBase.instruction_file`), which a generated-guidance arm's session is asked to
  write (``AttemptContext.writes`` names it; the simulated agent writes one);
* how the worker builds it for a run (:meth:`HarnessBase.for_run`), and what ``doctor``
  checks (:meth:`HarnessBase.credential_check`, :attr:`HarnessBase.doctor_model`,
  :meth:`HarnessBase.doctor_options`).
"""

import shutil
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Protocol

import msgspec

from ..config import not_applicable_policy
from ..environments import NO_EGRESS, Egress, Sandbox, policy_for
from ..events import ModelRecord, Usage
from ..harness_registry import CliPin, SpecProblem
from ..tasks import HarborTask


class FrozenTreatment(NamedTuple):
    """An arm's admitted, frozen package. Vanilla has empty lists and no guidance."""

    arm: str
    root: Path | None  # evidence/frozen/treatments/<arm>
    guidance: tuple[Path, ...]
    skills: tuple[Path, ...]
    plugins: tuple[Path, ...]
    fingerprint: str
    #: ``remove``: the arm's coding sandbox starts without the repository's own guidance
    task_owned: str = "keep"
    #: a generated-guidance arm on one task: the SHA-256 of the generated file (its only guidance)
    generated: str | None = None

    @property
    def is_vanilla(self) -> bool:
        return not (self.guidance or self.skills or self.plugins)


class AttemptContext(NamedTuple):
    """Everything a harness needs to run one attempt."""

    run_id: str
    attempt_id: str
    task: HarborTask
    treatment: FrozenTreatment
    model: str | None
    reasoning: str | None
    seed: int
    timeout_seconds: float
    attempt_dir: Path  # host folder for this attempt's evidence (agent/ traces go here)
    launched: Callable[[Sequence[str]], Awaitable[None]]
    #: a guidance-generating session: the instruction file it is asked to write in the
    #: working directory (the simulated agent writes one; a real CLI follows the prompt)
    writes: str | None = None
    #: told the agent process's wall time as soon as it is measured (before the trace is
    #: read), so a harness that fails after that still leaves the real figure; None: nobody asks
    measured: Callable[[float], None] | None = None

    def ran(self, seconds: float) -> float:
        """Report the agent process's measured wall time (see :attr:`measured`); returns it."""
        if self.measured is not None:
            self.measured(seconds)
        return seconds


class AgentRun(NamedTuple):
    """What the agent did, as far as its own trace tells."""

    exit_code: int | None
    timed_out: bool
    #: wall time of the agent process; None: not measured (the harness failed before it)
    coding_seconds: float | None
    usage: Usage
    error: str | None = None
    provider_stop: str | None = None  # the cause, when the provider/account stopped it
    model_record: ModelRecord | None = None  # Codex: the models its sessions ran on
    #: what in the trace cannot be the CLI's own (lines the agent wrote into its output,
    #: an incomplete stream), one note each; never a reason to stop or discard
    integrity: tuple[str, ...] = ()
    #: the sandbox limit the session hit (memory, processes, disk), one reason; ends the
    #: attempt with the execution outcome ``resource_limit``
    resource_limit: str | None = None


class Harness(Protocol):
    """A coding agent (real CLI or control) behind one interface: what an adapter
    instance built for a run provides. Adapters subclass :class:`HarnessBase`."""

    # Class variables, as :class:`HarnessBase` declares them (an instance variable here
    # would not match an adapter's class attribute).
    name: ClassVar[str]
    #: True for real agent CLIs: they need a sandbox boundary unless the config opts out.
    real: ClassVar[bool]
    #: True when the harness needs the task's solution/ inside its sandbox (oracle only).
    needs_solution: ClassVar[bool]
    #: The agent CLI's version this adapter launches; ``None`` for a harness without a CLI.
    cli_version: str | None
    #: Host folders the harness's tools need, bound read-only in a default-deny sandbox.
    readonly: tuple[Path, ...]

    def secrets(self) -> list[str]:
        """The credential strings this harness delivers into a sandbox (none for a probe
        run or a control); the engine redacts them from evidence and refuses an export
        that contains one."""
        ...

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write the treatment into the private home folder; return a delivery receipt."""
        ...

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """Run the agent on ``ctx.task.instruction`` in ``sandbox`` until it exits or times out."""
        ...

    def egress(self, role: str, network_mode: str | None) -> Egress:
        """What this harness's sandbox for ``role`` may reach (its model endpoint)."""
        ...


class HarnessBase:
    """What every harness declares, with the defaults of a control (no model, no CLI, no
    credentials). An adapter subclasses it, overrides what differs, and is registered once
    (:func:`pluginbench.harness_registry.register_harness`)."""

    #: the name ``runner.harness`` (and ``reviewer.harness``) selects it by
    name: ClassVar[str]
    #: one line for ``doctor`` and the docs' harness table
    summary: ClassVar[str] = ""
    #: a real agent CLI: needs an exact model id, its pinned CLI and a sandbox boundary
    real: ClassVar[bool] = False
    #: the task's solution/ goes into its sandbox (oracle only)
    needs_solution: ClassVar[bool] = False
    #: a stand-in agent: the run and every report are labelled SIMULATED
    simulated: ClassVar[bool] = False
    #: may act as the independent reviewer (``reviewer.harness``)
    reviewer: ClassVar[bool] = False
    #: its attempts write a native-treatment receipt the vanilla cache checks on reuse
    native_receipts: ClassVar[bool] = False
    #: its attempts save the agent's native traces (Claude Code transcripts, Codex rollouts)
    #: that transcript measures (``iterations``) count; the collector actor passes it on
    agent_traces: ClassVar[bool] = False
    #: the pinned agent CLI (``None`` for a harness that runs none)
    cli: ClassVar[CliPin | None] = None
    #: the model id the ``doctor`` probe attempt asks for
    doctor_model: ClassVar[str | None] = None
    #: the treatment-delivery policy (part of the vanilla cache key); ``None``: ``<name>-v1``.
    #: A new delivery policy must change it.
    delivery_policy: ClassVar[str | None] = None

    #: the model API hosts the CLI reaches in a real run: the egress proxy's allow-list
    model_hosts: ClassVar[tuple[str, ...]] = ()
    #: the repository instruction file the agent reads from its working directory
    #: (``CLAUDE.md``, ``AGENTS.md``): what a generated-guidance arm asks it to write;
    #: ``None`` for a harness that runs no agent (it cannot generate)
    instruction_file: ClassVar[str | None] = None

    cli_version: str | None = None
    readonly: tuple[Path, ...] = ()
    #: the loopback probe's URL in a probe run, else ``None``
    probe_base_url: str | None = None

    def egress(self, role: str, network_mode: str | None) -> Egress:
        """The network policy of this harness's sandbox for ``role`` under the task's
        ``network_mode``: the probe's port in a probe run, else :attr:`model_hosts` (see
        :func:`~pluginbench.environments.policy_for`); nothing for a harness without a CLI."""
        if self.cli is None:
            return NO_EGRESS
        from urllib.parse import urlsplit

        port = urlsplit(self.probe_base_url).port if self.probe_base_url else None
        return policy_for(role, network_mode, probe_port=port, model_hosts=self.model_hosts)

    def secrets(self) -> list[str]:
        """No credentials: nothing to scan for."""
        return []

    @classmethod
    def spec_problem(cls, model: str | None, reasoning: str | None) -> SpecProblem | None:
        """What is wrong with this model and effort for this harness (runner or
        reviewer), beyond the shared rules; ``None`` when they are fine. Pure."""
        return None

    @classmethod
    def validate_config(cls, ev: Any, path: Path) -> None:
        """This harness's other cross-field rules on the evaluation (pure); raises
        :class:`~pluginbench.errors.ConfigError` naming the file and field."""

    @classmethod
    def check_task(cls, task_id: str, folder: Path) -> None:
        """What a task folder must carry for this harness; raises
        :class:`~pluginbench.errors.TaskError`."""

    @classmethod
    def admit_evaluation(cls, ev: Any, *, probe: bool) -> None:
        """Foreground checks before a run is created: every treatment is admissible for
        this harness, and the host holds its credentials (unless ``probe``)."""

    @classmethod
    def for_run(cls, ev: Any, *, cli_path: str | Path | None, cli_version: str | None,
                probe_base_url: str | None) -> Harness:
        """The adapter the worker runs for the evaluation ``ev``: the resolved CLI (its
        path as the sandbox sees it) and the probe's URL when it is a probe run."""
        return cls()  # type: ignore[return-value]  # a subclass provides deliver/run

    @classmethod
    def check_cli(cls, cli_path: str | Path, version: str) -> None:
        """Before a run is created: the install at ``cli_path`` that reported ``version`` is
        one this harness can launch; raises :class:`~pluginbench.errors.ConfigError`."""

    @classmethod
    def version_argv(cls, cli_path: str | Path) -> list[str]:
        """The argv that makes the installed CLI at ``cli_path`` print its version (by
        default ``<cli> --version``; a harness may skip a wrapper that only starts another
        program)."""
        return [str(cli_path), "--version"]

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        """The pinned launch for this model and effort as data for the vanilla cache key, with
        placeholders (``<cli>``, ``<prompt>``...) for per-attempt values. Pure."""
        return {"argv": []}

    @classmethod
    def uncacheable_cli(cls, cli_version: str | None) -> str | None:
        """Why vanilla attempts of this CLI version are neither reused nor published, or ``None``."""
        return None

    @classmethod
    def read_final(cls, stdout: str) -> tuple[str | None, list[str]]:
        """From a session's saved stdout: its final message and every writing action it
        took (the reviewer and the judge read their answer here). Pure."""
        return None, []

    @classmethod
    def check_reviewer_host(cls, cli_path: Path, *, probe: bool, field: str, file: str | None) -> None:
        """Before any review call: the host holds what this harness needs to review
        (credentials, helper binaries); raises a :class:`~pluginbench.errors.PluginBenchError`."""

    @classmethod
    def reviewer_options(cls) -> dict[str, Any]:
        """Extra constructor options when the harness reviews (e.g. no sub-agents)."""
        return {}

    @classmethod
    def capability_policy(cls, caps: Any) -> dict[str, dict[str, Any]]:
        """What it does with each ``capabilities`` setting: ``{key: {value, enforcement,
        how}}`` (:func:`pluginbench.config.capability_entry`). Pure; by default it starts
        no native agent, so every setting is ``not_applicable``."""
        policy: dict[str, dict[str, Any]] = not_applicable_policy(caps)
        return policy

    @classmethod
    def check_launch(cls, model: str | None, reasoning: str | None) -> None:
        """The launch's own model and effort rule, checked before a judge call is reserved;
        raises :class:`~pluginbench.errors.InputError`."""

    @classmethod
    def native_identity(cls, call_dir: Path) -> dict[str, Any]:
        """Model, effort and CLI version as the harness's own native evidence under
        ``call_dir`` records them, for a harness whose ``execution.json`` does not; ``{}``
        when the execution receipt is the source."""
        return {}

    @classmethod
    def revalidate_usage(cls, attempt_dir: Path, *, model: str | None, cli_version: str | None, timed_out: bool,
                         exit_code: int | None, seconds: float | None) -> Usage | None:
        """The usage today's rules give an attempt's saved traces (a reused vanilla attempt,
        a judge call), or ``None`` when the harness keeps its recorded usage."""
        return None

    @classmethod
    def credential_check(cls) -> tuple[bool, str]:
        """``doctor``: is a credential present on this host (never whether it is valid)."""
        return True, "no credential needed"

    @classmethod
    def doctor_options(cls) -> dict[str, Any]:
        """Extra constructor options for the ``doctor`` probe attempt."""
        return {}


#: A control that makes no model call used exactly zero tokens: measured, not assumed.
NO_MODEL_USAGE = Usage(
    status="exact",
    input_tokens=0,
    cached_input_tokens=0,
    uncached_input_tokens=0,
    output_tokens=0,
    total_tokens=0,
    reason="control harness: makes no model call",
)


#: Why an arm with command hooks has no known total.
HOOKS_UNMETERED = (
    "the arm's plugins run command hooks, whose subprocesses are unmetered: total usage is "
    "unknown; the native CLI session's usage is kept separately in native_session"
)


def hook_arm_usage(native: Usage) -> Usage:
    """The usage of an attempt whose arm runs command hooks: total ``unknown`` with the
    reason, the native session's own usage (whatever its status) kept in ``native_session``."""
    session = msgspec.structs.replace(
        native, reason="native CLI session only (hook subprocesses excluded)"
        + (f"; {native.reason}" if native.reason else ""), native_session=None,
    )
    return Usage(status="unknown", reason=HOOKS_UNMETERED, native_session=session)


def tool_roots(cli_path: str | Path) -> tuple[Path, ...]:
    """Host folders a CLI needs to run, bound read-only in a default-deny sandbox: its
    npm ``node_modules`` tree when it has one (the package and its platform binaries)
    plus the install prefix of the ``node`` on PATH when that lies outside the system
    folders (nvm, /opt/node ...), else the folder of the executable."""
    path = Path(cli_path)
    for candidate in (path, path.resolve()):
        for parent in candidate.parents:
            if parent.name == "node_modules":
                return (parent, *_node_prefix())
    return (path.resolve().parent,)


def _node_prefix() -> tuple[Path, ...]:
    node = shutil.which("node")
    if node is None:
        return ()
    real = Path(node).resolve()
    if real.parts[1:2] and real.parts[1] in ("usr", "bin", "sbin", "lib", "lib64"):
        return ()  # a system install: already inside
    return (real.parent.parent,)
