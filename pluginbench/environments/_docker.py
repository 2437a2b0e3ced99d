"""The docker backend: one fresh container per sandbox, through aiodocker.

Each sandbox is one container made from ``spec.image`` (a frozen image ID, see
:mod:`._docker_images`), labelled ``pluginbench.owner=pluginbench``,
``pluginbench.run``, ``pluginbench.attempt``, ``pluginbench.role`` and
``pluginbench.task``, limited to ``spec.cpus``/``spec.memory_mb``, with its own network
namespace holding loopback only (``NetworkMode: none``; never the host network, never a
bridge), every capability dropped, ``no-new-privileges``, Docker's default seccomp
profile (the keyring and namespace calls refused) and Docker's read-only ``/proc/sys``.
Container root must be an unprivileged host uid (the engine remaps users or is rootless):
:meth:`DockerEnvironment.check` refuses an engine whose container root is the host's root
unless ``allow_host_root`` (``environment.allow_host_root``) accepts it (:mod:`._docker_userns`).
When ``spec.egress`` allows a way out, the egress folder of an
:class:`~._egress.EgressProxy` is the one bind (read-only at ``/run/pluginbench``) and
the in-container forwarder is started once, before the sandbox is yielded (it needs the
image's ``python3``); the engine must run on this machine to bind it. Its PID 1 is Docker's init (``docker-init``) over a keep-alive ``sleep``; every
command is an exec. Default deny: nothing else from the host is mounted (no other binds, mounts or
volumes, ``spec.readonly`` is ignored because the coding image carries the CLI), the
container is unprivileged with its own PID and IPC namespaces, so ``spec.hidden`` holds
trivially and ``/proc/1/root`` is the container's own root.

Setup, before the sandbox is yielded: the spec's folders are copied into the created
container as one archive (staged), then one exec (:data:`._docker_scripts.PREPARE`)
places them: ``spec.workspace`` (when given) replaces the image's ``spec.workdir``;
``/tests`` and ``/solution`` exist only when the spec gives them (an image's own copies
are removed); ``/logs/{agent,verifier,artifacts}``, the HOME ``/home/agent``
(``spec.home`` copied in) and ``/tmp`` exist; the workdir becomes a git repo with the
same deterministic base commit as the local backend, unless it already is a repo, whose
``HEAD`` is then the base. Internal steps run as root; commands run as the image's user
with ``LANG=C.UTF-8``, :meth:`SandboxPaths.env` and the caller's ``env`` on top of the
image's environment, never the host's.

Deadlines: every exec carries a random ``PLUGINBENCH_EXEC`` marker in its environment.
At the deadline (or on cancellation) a second exec SIGKILLs every process with that
marker and every process in their sessions (see :data:`._docker_scripts.KILL_TREE`),
then the engine is asked until it reports the exec no longer running.

:meth:`DockerSandbox.stop` is ``docker stop`` confirmed by inspect (``State.Running``
false); :meth:`~DockerSandbox.export_workspace` needs it. On context exit the container
this sandbox created, and nothing else, is removed with force, shielded from cancellation.

:meth:`DockerEnvironment.prestart` makes, ahead of time, the container one later
:meth:`~DockerEnvironment.sandbox` of exactly the same spec takes (an attempt's grading
container, made while its agent codes); see its docstring for who removes it.
"""

import re
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple

import aiodocker
import anyio

from ..errors import EnvironmentFailure, HostRootEngine
from ..harness_registry import CliPin
from ..tasks import HarborTask
from . import _docker_derived as _derived
from . import _docker_scripts as scripts
from ._docker_containers import (
    LABEL_ATTEMPT,
    LABEL_OWNER,
    LABEL_ROLE,
    LABEL_RUN,
    LABEL_TASK,
    OWNER,
    ContainerInfo,
    list_left_running,
    remove_container,
    remove_left_stopped,
    stop_command,
    stop_left_running,
)
from ._docker_engine import EngineInfo, capacity_problem, engine, engine_info
from ._docker_images import BASE_IMAGE, image_id, prepare_image
from ._docker_sandbox import DockerSandbox
from ._docker_userns import FIX, OPT_OUT, host_root_problem
from ._egress import INSIDE_DIR, EgressProxy
from ._limits import limits_of
from ._port import SandboxSpec


def _safe(text: str, size: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:size] or "_"


class DockerEnvironment:
    """Sandboxes as containers on a local Docker engine (see the module docstring)."""

    name = "docker"

    def __init__(self, docker_host: str | None = None, run_id: str | None = None,
                 allow_host_root: bool = False) -> None:
        self.docker_host = docker_host
        self.run_id = run_id
        #: ``environment.allow_host_root``: sandboxes may start on an engine whose container
        #: root is the host's root (see :mod:`._docker_userns`); refused otherwise
        self.allow_host_root = allow_host_root
        # Tasks prepare their images ``jobs`` at a time; tasks on the same image share one
        # coding image, derived once while the others wait for it.
        self._deriving: dict[tuple[str, str, str], anyio.Lock] = {}
        # Grading containers made while the agent codes, by (run, attempt, role); see prestart().
        self._warm: dict[tuple[str, str, str], _Warm] = {}
        #: whether check_capacity found room for a pre-started container beside each job's
        self.prestart_fits = False

    async def info(self) -> EngineInfo:
        """What the engine reports (ID, version, OS type, CPUs, memory)."""
        async with engine(self.docker_host) as docker:
            return await engine_info(docker)

    async def runtime(self) -> dict[str, str]:
        """The engine's ID, version, OS type and architecture, as a run's recorded runtime names them."""
        async with engine(self.docker_host) as docker:
            version = dict(await docker.version())
            info = await engine_info(docker)
        return {"engine_id": info.id, "engine_version": str(version.get("Version", info.version)),
                "engine_os": str(version.get("Os", info.os_type)), "engine_arch": str(version.get("Arch", "")),
                "engine_user_namespace": info.user_namespace}

    async def check(self) -> None:
        """Raise :class:`EnvironmentFailure` unless an engine answers, runs Linux containers,
        and maps container root to an unprivileged host uid (or ``allow_host_root`` accepts
        the host's root)."""
        info = await self.info()
        if info.os_type != "linux":
            raise EnvironmentFailure(
                f"the Docker engine runs {info.os_type or 'unknown'} containers; PluginBench needs Linux containers"
            )
        problem = host_root_problem(info.user_namespace, self.allow_host_root)
        if problem is not None:
            raise HostRootEngine(f"{problem}; {FIX}, {OPT_OUT}")

    async def check_capacity(
        self, jobs: int, cpus: float | None, memory_mb: int | None
    ) -> EngineInfo:
        """Refuse (never lower) when ``jobs`` containers of these limits do not fit the engine."""
        info = await self.info()
        problem = capacity_problem(jobs, cpus, memory_mb, info)
        if problem is not None:
            raise EnvironmentFailure(f"the Docker engine is too small: {problem}")
        # An attempt's grading container is made while its agent codes only when a second
        # container of the same limits per job fits too; otherwise grading makes its own.
        self.prestart_fits = capacity_problem(2 * jobs, cpus, memory_mb, info) is None
        return info

    async def prepare_image(self, task_root: Path, task: HarborTask) -> str:
        """The frozen image ID for ``task`` (built, published, or the base image)."""
        async with engine(self.docker_host) as docker:
            return await prepare_image(docker, Path(task_root), task)

    async def has_images(self, *refs: str) -> bool:
        """Whether the engine still holds every one of these images."""
        async with engine(self.docker_host) as docker:
            for ref in refs:
                if await image_id(docker, ref) is None:
                    return False
        return True

    async def verifier_image(self, task_root: Path, task: HarborTask, task_image: str) -> str:
        """The separate verifier's image: ``tests/Dockerfile`` built, else the task image."""
        async with engine(self.docker_host) as docker:
            return await _derived.verifier_image(docker, Path(task_root), task, task_image)

    async def coding_image(self, task_image: str, harness: str, cli: CliPin, version: str,
                           clis_dir: Path) -> tuple[str, str]:
        """The task image with the harness's agent CLI (``cli``, installed at ``version``);
        (image ID, the CLI's path inside)."""
        lock = self._deriving.setdefault((task_image, harness, version), anyio.Lock())
        async with lock, engine(self.docker_host) as docker:
            image = await _derived.derive_cli_image(docker, task_image, harness, cli, version, clis_dir)
        return image, _derived.cli_path_in_image(cli)

    def _run(self) -> str:
        if not self.run_id:
            raise EnvironmentFailure("this DockerEnvironment was made without a run_id")
        return self.run_id

    async def left_running(self) -> list[ContainerInfo]:
        """Running containers of this environment's run (see :func:`list_left_running`)."""
        return await list_left_running(self._run(), self.docker_host)

    async def stop_left_running(self, run_id: str | None = None) -> list[str]:
        """``docker stop`` (never remove) the run's running containers; say which."""
        stopped = await stop_left_running(run_id or self._run(), self.docker_host)
        return [f"container {c.name} ({c.id[:12]}) of attempt {c.attempt}" for c in stopped]

    async def remove_left_stopped(self, run_id: str | None = None) -> list[str]:
        """Remove the run's containers that are not running (exited or never started); say which."""
        removed = await remove_left_stopped(run_id or self._run(), self.docker_host)
        return [f"container {c.name} ({c.id[:12]}) of attempt {c.attempt}" for c in removed]

    def _config(self, spec: SandboxSpec, egress_dir: str | None = None) -> dict[str, Any]:
        host: dict[str, Any] = {
            "Init": True,
            # Loopback only: the one way out is the egress folder's Unix socket.
            "NetworkMode": "none",
            # Default deny, said explicitly: no host folder but the egress one, no
            # privilege, no capability, private PID/IPC, Docker's default seccomp profile.
            "Binds": [f"{egress_dir}:{INSIDE_DIR}:ro"] if egress_dir is not None else [],
            "Mounts": [],
            "Privileged": False,
            "CapDrop": ["ALL"],
            "SecurityOpt": ["no-new-privileges"],
            "PidMode": "",
            "IpcMode": "private",
        }
        if spec.cpus is not None:
            host["NanoCpus"] = int(spec.cpus * 1e9)
        limits = limits_of(spec.memory_mb, spec.cpus, spec.pids, spec.storage_mb)
        # The limits the sandbox records are the ones it gets: a task that declares no
        # memory_mb gets the default (docker's own default is no memory limit at all), and
        # a fork bomb stays in its container (docker's default is pids.max=max).
        host["Memory"] = host["MemorySwap"] = limits.memory_mb * 1024 * 1024
        host["PidsLimit"] = limits.pids
        # No file bigger than the storage bound (RLIMIT_FSIZE, soft and hard; without
        # CAP_SYS_RESOURCE nothing inside raises it): a fallocate of the host's free disk
        # into the container's writable layer is refused by the kernel at once.
        size = limits.storage_mb * 1024 * 1024
        host["Ulimits"] = [{"Name": "fsize", "Soft": size, "Hard": size}]
        labels = {
            LABEL_OWNER: OWNER,
            LABEL_RUN: spec.run_id,
            LABEL_ATTEMPT: spec.attempt_id,
            LABEL_ROLE: spec.role,
            LABEL_TASK: spec.task,
        }
        return {
            "Image": spec.image,
            "Entrypoint": scripts.KEEP_ALIVE,
            "Cmd": [],
            "WorkingDir": spec.workdir,
            "Labels": labels,
            "HostConfig": host,
        }

    def _name(self, spec: SandboxSpec) -> str:
        return "-".join(["pluginbench", _safe(spec.run_id), _safe(spec.attempt_id), spec.role, secrets.token_hex(3)])

    async def _make(self, docker: aiodocker.Docker, spec: SandboxSpec, parts: "_Parts") -> None:
        """Create, stage, start and prepare a fresh container for ``spec`` (and its egress),
        filling ``parts`` as it goes so the caller's cleanup finds whatever was made."""
        if not spec.image:
            raise EnvironmentFailure(f"the docker backend needs spec.image (attempt {spec.attempt_id})")
        if spec.egress.active:
            parts.proxy = await anyio.to_thread.run_sync(EgressProxy, spec.egress)
        config = self._config(spec, str(parts.proxy.folder) if parts.proxy is not None else None)
        try:
            parts.container = await docker.containers.create(config, name=self._name(spec))
            parts.box = DockerSandbox(docker, parts.container, spec)
            await parts.box._stage()
            await parts.container.start()
        except aiodocker.DockerError as exc:
            raise EnvironmentFailure(f"cannot start a container from {spec.image}: {exc.message}") from exc
        await parts.box._prepare()
        if parts.proxy is not None:
            parts.box.egress = parts.proxy
            await parts.box._start_forwarder(parts.proxy)

    @asynccontextmanager
    async def sandbox(self, spec: SandboxSpec) -> AsyncIterator[DockerSandbox]:
        """A fresh container for ``spec``; it is removed (force) on exit, whatever happens.

        When :meth:`prestart` made this attempt's container for exactly this spec, that
        container (created for this sandbox alone, never used) is taken instead of making
        one; any other pre-started container of the attempt and role is removed first."""
        async with engine(self.docker_host) as docker:
            parts = _Parts()
            try:
                if not await self._claim(docker, spec, parts):
                    await self._make(docker, spec, parts)
                assert parts.box is not None
                yield parts.box
            except BaseException as exc:
                with anyio.CancelScope(shield=True):
                    try:
                        await _release(parts.container, parts.box, parts.proxy)
                    except Exception as cleanup:  # keep the original error; say cleanup failed too
                        exc.add_note(f"container cleanup also failed: {cleanup}")
                raise
            else:
                with anyio.CancelScope(shield=True):
                    await _release(parts.container, parts.box, parts.proxy)

    # -- pre-started sandboxes (a grading container made while the agent codes) ---------

    async def prestart(self, spec: SandboxSpec) -> bool:
        """Make the fresh container a later :meth:`sandbox` of exactly ``spec`` will take
        (an attempt's grading container, made while its agent codes); whether one was made.

        It is an ordinary sandbox container of ``spec`` (same image, labels, limits, no
        network, no host folder but its own egress one, tests staged, base commit made),
        held for that one attempt and role only: nothing else takes it, nothing has run in
        it. Only when :meth:`check_capacity` found room for a second container per job
        (``prestart_fits``); otherwise nothing is made and grading starts its own. A failure
        or cancel here removes what was made and raises. The caller removes an unclaimed one
        with :meth:`discard_prestarted`; a killed worker's is found by its labels on resume
        like any container of the run.
        """
        if not self.prestart_fits or not spec.image:
            return False
        await self.discard_prestarted(spec.run_id, spec.attempt_id, spec.role)
        async with engine(self.docker_host) as docker:
            parts = _Parts()
            try:
                await self._make(docker, spec, parts)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await _release(parts.container, parts.box, parts.proxy)
                raise
        assert parts.container is not None and parts.box is not None
        self._warm[(spec.run_id, spec.attempt_id, spec.role)] = _Warm(
            spec, parts.container.id, parts.box.base_commit, parts.proxy)
        return True

    def prestarted(self, run_id: str) -> list[str]:
        """IDs of the pre-started containers of ``run_id`` not yet taken or removed."""
        return [w.container_id for k, w in self._warm.items() if k[0] == run_id]

    async def discard_prestarted(self, run_id: str, attempt_id: str | None = None,
                                 role: str | None = None) -> list[str]:
        """Remove (force) the pre-started containers of ``run_id`` (of one attempt, and
        role, when given) that no sandbox took; their IDs. Shielded from cancellation."""
        keys = [k for k in self._warm if k[0] == run_id and attempt_id in (None, k[1]) and role in (None, k[2])]
        warm = [self._warm.pop(k) for k in keys]
        if not warm:
            return []
        with anyio.CancelScope(shield=True):
            async with engine(self.docker_host) as docker:
                for w in warm:
                    await _release(docker.containers.container(w.container_id), None, w.proxy)
        return [w.container_id for w in warm]

    async def _claim(self, docker: aiodocker.Docker, spec: SandboxSpec, parts: "_Parts") -> bool:
        """Take the pre-started container of ``spec``'s attempt and role into ``parts`` when it
        was made for exactly ``spec`` and still runs; otherwise remove it; whether taken."""
        warm = self._warm.pop((spec.run_id, spec.attempt_id, spec.role), None)
        if warm is None:
            return False
        container = docker.containers.container(warm.container_id)
        running = False
        if warm.spec == spec:
            try:
                running = bool(((await container.show()).get("State") or {}).get("Running"))
            except aiodocker.DockerError:
                running = False
        if not running:
            with anyio.CancelScope(shield=True):
                await _release(container, None, warm.proxy)
            return False
        parts.container, parts.proxy = container, warm.proxy
        parts.box = DockerSandbox(docker, container, spec)
        parts.box.base_commit = warm.base_commit
        parts.box.egress = warm.proxy
        return True


class _Parts:
    """What making one sandbox has made so far (for its cleanup)."""

    def __init__(self) -> None:
        self.container: Any = None
        self.box: DockerSandbox | None = None
        self.proxy: EgressProxy | None = None


class _Warm(NamedTuple):
    """A pre-started container: the spec it was made for, its ID, base commit and egress."""

    spec: SandboxSpec
    container_id: str
    base_commit: str
    proxy: EgressProxy | None


async def _release(container: Any, box: DockerSandbox | None, proxy: EgressProxy | None = None) -> None:
    """Mark the sandbox gone, force-remove the container it created (if any), then stop
    its egress proxy."""
    if box is not None:
        box._closed = True
    try:
        await remove_container(container)
    finally:
        if proxy is not None:
            await anyio.to_thread.run_sync(proxy.close)


__all__ = [
    "BASE_IMAGE",
    "ContainerInfo",
    "DockerEnvironment",
    "DockerSandbox",
    "list_left_running",
    "stop_command",
    "stop_left_running",
]
