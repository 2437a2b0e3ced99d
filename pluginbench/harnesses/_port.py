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
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import NamedTuple, Protocol

import msgspec

from ..environments import Sandbox
from ..events import ModelRecord, Usage
from ..tasks import HarborTask


class FrozenTreatment(NamedTuple):
    """An arm's admitted, frozen package. Vanilla has empty lists and no guidance."""

    arm: str
    root: Path | None  # evidence/frozen/treatments/<arm>
    guidance: tuple[Path, ...]
    skills: tuple[Path, ...]
    plugins: tuple[Path, ...]
    fingerprint: str

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


class AgentRun(NamedTuple):
    """What the agent did, as far as its own trace tells."""

    exit_code: int | None
    timed_out: bool
    coding_seconds: float
    usage: Usage
    error: str | None = None
    provider_stop: str | None = None  # the cause, when the provider/account stopped it
    model_record: ModelRecord | None = None  # Codex: the models its sessions ran on


class Harness(Protocol):
    """A coding agent (real CLI or control) behind one interface."""

    name: str
    #: True for real agent CLIs: they need a sandbox boundary unless the config opts out.
    real: bool
    #: True when the harness needs the task's solution/ inside its sandbox (oracle only).
    needs_solution: bool

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write the treatment into the private home folder; return a delivery receipt."""
        ...

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """Run the agent on ``ctx.task.instruction`` in ``sandbox`` until it exits or times out."""
        ...


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
