"""What every actor of one run shares: settings, ports, frozen inputs, and the outbox.

Actors never write the log. They put events into the Supervisor's inbox through
:meth:`Outbox.send`; :meth:`Outbox.record` also waits until the event is durably
appended (used for ``agent.launched``, which must be on disk before a paid call).
"""

import os
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectSendStream
from msgspec import field

from ..cache import resolve_cache_root
from ..config import Evaluation
from ..environments import Environment, backend_of
from ..errors import LaunchRefused
from ..events import ClusterNode, Event
from ..harnesses import FrozenTreatment, Harness
from ..rundir import RunDir
from ..tasks import (
    SOLUTION,
    VERIFIER,
    EnvTable,
    HarborTask,
    VerifierContract,
    VerifierEnv,
    resolve_env,
)


class SandboxSource(NamedTuple):
    """What a sandbox of one task starts from: a workspace folder and/or an image, limits."""

    workspace: Path | None
    image: str | None
    cpus: float | None
    memory_mb: int | None


class TaskImages(NamedTuple):
    """A task's frozen images on the docker backend (IDs, never tags)."""

    coding: str
    verifier: str


class Envelope(NamedTuple):
    """An event on its way to the Supervisor; ``done`` is set once it is appended, or once
    the Supervisor refused it (then ``refusal`` holds why)."""

    event: Event
    done: anyio.Event | None
    refusal: list[str] | None = None


class Outbox(msgspec.Struct):
    stream: MemoryObjectSendStream[Envelope]

    async def send(self, event: Event) -> None:
        await self.stream.send(Envelope(event, None))

    async def record(self, event: Event) -> None:
        """Send ``event`` and wait until it is appended. Raises :class:`LaunchRefused`
        when the Supervisor did not record it (``agent.launched`` once the run is stopping)."""
        done = anyio.Event()
        refusal: list[str] = []
        await self.stream.send(Envelope(event, done, refusal))
        await done.wait()
        if refusal:
            raise LaunchRefused(refusal[0])


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/pluginbench`` or ``~/.cache/pluginbench``, resolved."""
    return resolve_cache_root()


class Engine(msgspec.Struct):
    """The run-wide context handed to every actor."""

    run_dir: RunDir
    run_id: str
    evaluation: Evaluation
    environment: Environment
    harness: Harness
    task_sources: dict[str, Path]  # task id -> the user's task folder (before freezing)
    outbox: Outbox
    tasks: dict[str, HarborTask] = field(default_factory=dict)  # frozen tasks
    treatments: dict[str, FrozenTreatment] = field(default_factory=dict)
    #: (arm, task) -> a generated-guidance arm's treatment on that task (the frozen generated
    #: file), or why its generation failed (its attempts there end with no submission)
    generated: dict[tuple[str, str], FrozenTreatment | str] = field(default_factory=dict)
    hidden: tuple[Path, ...] = ()
    images: dict[str, TaskImages] = field(default_factory=dict)  # docker backend only
    contracts: dict[str, VerifierContract] = field(default_factory=dict)  # who applies model.patch, per task
    #: The shared cache root, resolved once before preparation (a symlinked ~/.cache works).
    cache_root: Path = field(default_factory=resolve_cache_root)
    #: what each registered actor extension's ``setup`` made for this run, by extension name
    #: (the reviewer's: the frozen reviewer bound to its CLI adapter, or None)
    extensions: dict[str, Any] = field(default_factory=dict)
    #: (task, measure) -> why preparation's readiness check left that pair not measured; its
    #: collector's values there are replaced by unknowns with the reason
    not_measured: dict[tuple[str, str], str] = field(default_factory=dict)
    #: a cluster backend's worker nodes (``environment.cluster_nodes()``), None on one machine
    cluster_nodes: list[ClusterNode] | None = None
    #: the runtime this worker codes under, and the changes its resume accepted (``run.started``)
    runtime: dict[str, str] | None = None
    accepted: list[str] = field(default_factory=list)
    #: the npm prefix holding the run's CLI on the host (``.tools/clis``, or the host CLI cache
    #: folder of a ``runner.cli_version`` installed there): what a coding image copies
    cli_root: Path | None = None
    #: (table, task) -> its resolved ``[verifier.env]`` / ``[solution.env]`` (:meth:`verifier_env`,
    #: :meth:`solution_env`; values never recorded)
    resolved_envs: dict[tuple[str, str], VerifierEnv] = field(default_factory=dict)

    @property
    def reviewer(self) -> Any:
        """The reviewer extension's setup: ``review.Reviewer``, or None without a reviewer."""
        return self.extensions.get("reviewer")

    @reviewer.setter
    def reviewer(self, value: Any) -> None:
        self.extensions["reviewer"] = value

    def node_of(self, attempt_id: str) -> str | None:
        """The cluster node running ``attempt_id``'s coding sandbox (None on one machine)."""
        where = getattr(self.environment, "node_of", None)
        return where(attempt_id) if where is not None else None

    def starting_source(self, task: str) -> Path:
        """The frozen starting source on the host: ``workspace/``, or for an image task
        the tree exported from its image during preparation."""
        workspace = self.run_dir.frozen_task(task) / "workspace"
        if workspace.is_dir():
            return workspace
        return self.run_dir.evidence / "frozen" / "starting" / task

    def source(self, task: str, role: str) -> SandboxSource:
        """Where a ``role`` sandbox of ``task`` starts, per backend."""
        env = self.evaluation.environment
        workspace = self.run_dir.frozen_task(task) / "workspace"
        if not backend_of(self.evaluation).uses_images:
            return SandboxSource(self.starting_source(task), None, None, None)
        images = self.images[task]
        declared = self.tasks.get(task)
        cpus = env.container_cpus if env.container_cpus is not None else (declared.cpus if declared else None)
        memory = env.container_memory_mb if env.container_memory_mb is not None else (declared.memory_mb if declared else None)
        image = images.verifier if role == "verifier" else images.coding
        # An image task's /app is already the starting source; a workspace task copies its own in.
        return SandboxSource(workspace if workspace.is_dir() else None, image, cpus, memory)

    def treatment_for(self, arm: str, task: str) -> FrozenTreatment | str:
        """The arm's treatment on ``task``: its frozen package, or for a generated-guidance arm
        the file generated for that task (a string: why there is none)."""
        spec = self.evaluation.treatments.get(arm)
        if spec is None or spec.generate is None:
            return self.treatments[arm]
        return self.generated.get((arm, task), f"no guidance was generated for task '{task}'")

    def verifier_env(self, task: str) -> VerifierEnv:
        """The task's ``[verifier.env]`` for ``tests/test.sh``, host variables read once (only
        those ``grading.verifier_env_from_host`` allows). Raises :class:`TaskError`."""
        return self._resolved_env(task, VERIFIER)

    def solution_env(self, task: str) -> VerifierEnv:
        """The task's ``[solution.env]`` for the oracle's ``solve.sh``, host variables read once
        (the same allowed names). Raises :class:`TaskError`."""
        return self._resolved_env(task, SOLUTION)

    def _resolved_env(self, task: str, table: EnvTable) -> VerifierEnv:
        resolved = self.resolved_envs.get((table.name, task))
        if resolved is None:
            declared = self.tasks[task]
            env = declared.verifier_env if table is VERIFIER else declared.solution_env
            resolved = resolve_env(env, table, allowed=self.evaluation.verifier_env_from_host,
                                   host=os.environ, file=str(declared.root / "task.toml"), tid=task)
            self.resolved_envs[(table.name, task)] = resolved
        return resolved

    def attempt_timeout(self, task: HarborTask) -> float:
        return float(self.evaluation.timeout_seconds)
