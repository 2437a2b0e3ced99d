"""The docker backend: one fresh container per sandbox, through aiodocker.

Each sandbox is one container made from ``spec.image`` (a frozen image ID, see
:mod:`._docker_images`), labelled ``pluginbench.owner=pluginbench``,
``pluginbench.run``, ``pluginbench.attempt``, ``pluginbench.role`` and
``pluginbench.task``, limited to ``spec.cpus``/``spec.memory_mb``, on the host network or
none. Its PID 1 is Docker's init (``docker-init``) over a keep-alive ``sleep``; every
command is an exec. Nothing from the host is mounted, so ``spec.hidden`` holds trivially.

Setup, before the sandbox is yielded: ``spec.workspace`` (when given) replaces the
image's ``spec.workdir``; ``/tests`` and ``/solution`` exist only when the spec gives
them (an image's own copies are removed); ``/logs/{agent,verifier,artifacts}``, the
HOME ``/home/agent`` (``spec.home`` copied in) and ``/tmp`` exist; the workdir becomes a
git repo with the same deterministic base commit as the local backend, unless it already
is a repo, whose ``HEAD`` is then the base. Internal steps run as root; commands run as
the image's user with ``LANG=C.UTF-8``, :meth:`SandboxPaths.env` and the caller's
``env`` on top of the image's environment, never the host's.

Deadlines: every exec carries a random ``PLUGINBENCH_EXEC`` marker in its environment.
At the deadline (or on cancellation) a second exec SIGKILLs every process with that
marker and every process in their sessions (see :data:`._docker_scripts.KILL_TREE`),
then the engine is asked until it reports the exec no longer running.

:meth:`DockerSandbox.stop` is ``docker stop`` confirmed by inspect (``State.Running``
false); :meth:`~DockerSandbox.export_workspace` needs it. On context exit the container
this sandbox created, and nothing else, is removed with force, shielded from cancellation.
"""

from __future__ import annotations

import posixpath
import re
import secrets
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import aiodocker
import anyio

from ..errors import EnvironmentFailure
from ..tasks import HarborTask
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
    stop_command,
    stop_confirmed,
    stop_left_running,
)
from ._docker_engine import (
    EngineInfo,
    capacity_problem,
    engine,
    engine_info,
    get_archive,
    put_archive,
)
from ._docker_images import BASE_IMAGE, prepare_image
from ._docker_tar import pack, pack_many, unpack
from ._local import BASE_DATE, BASE_IDENTITY, BASE_MESSAGE, GIT_EXCLUDE
from ._port import ExecResult, SandboxPaths, SandboxSpec

MARKER = "PLUGINBENCH_EXEC"
# Where the engine extracts the spec's folders before the first exec moves them in place.
_STAGE = "/.pluginbench-stage"
_CONFIRM_SECONDS = 15.0
# Internal scripts are given a git config isolated from the image's HOME.
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0"}


def _safe(text: str, size: int = 40) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:size] or "_"


def _absolute(sandbox_path: str) -> str:
    path = posixpath.normpath(sandbox_path)
    if not path.startswith("/") or path == "/":
        raise EnvironmentFailure(f"a sandbox path must be absolute and below /: {sandbox_path!r}")
    return "/" + path.lstrip("/")


def _sink(fh: IO[bytes] | None, buffer: bytearray) -> Callable[[bytes], object]:
    return fh.write if fh is not None else buffer.extend


class DockerSandbox:
    """One container of :class:`DockerEnvironment` (see the module docstring)."""

    isolated = True

    def __init__(self, docker: aiodocker.Docker, container: Any, spec: SandboxSpec) -> None:
        self._docker = docker
        self._container = container
        self.container_id: str = container.id
        self.spec = spec
        self.paths = SandboxPaths(spec.workdir, "/tests", "/solution", "/logs", "/home/agent", "/tmp")
        self.base_commit = ""
        self._stopped = False
        self._closed = False

    # -- internal execs --------------------------------------------------------------

    async def _internal(self, script: str, *args: str, env: Mapping[str, str] | None = None) -> str:
        """Run an internal ``sh`` program as root; its stdout, or a failure with its stderr."""
        code, out, err = await self._run_internal(script, *args, env=env)
        if code != 0:
            raise EnvironmentFailure(
                f"container {self.container_id[:12]}: internal step failed ({code}): "
                f"{err.decode(errors='replace').strip() or out.decode(errors='replace').strip()}"
            )
        return out.decode(errors="replace")

    async def _run_internal(
        self, script: str, *args: str, env: Mapping[str, str] | None = None
    ) -> tuple[int | None, bytearray, bytearray]:
        ex = await self._create_exec(["/bin/sh", "-c", script, "pluginbench", *args], env or {}, "/", "0")
        out, err = bytearray(), bytearray()
        async with ex.start(detach=False) as stream:
            while (msg := await stream.read_out()) is not None:
                (out if msg.stream == 1 else err).extend(msg.data)
        return await self._exit_code(ex), out, err

    async def _create_exec(self, argv: Sequence[str], env: Mapping[str, str], cwd: str, user: str = "") -> Any:
        try:
            return await self._container.exec(
                list(argv), stdout=True, stderr=True, environment=dict(env), workdir=cwd, user=user
            )
        except aiodocker.DockerError as exc:
            raise EnvironmentFailure(
                f"cannot run a command in container {self.container_id[:12]}: {exc.message}"
            ) from exc

    async def _exit_code(self, ex: Any) -> int | None:
        """The exec's exit code once the engine says it is no longer running."""
        with anyio.move_on_after(_CONFIRM_SECONDS):
            while True:
                info = await ex.inspect()
                if not info.get("Running"):
                    code = info.get("ExitCode")
                    return int(code) if code is not None else None
                await anyio.sleep(0.02)
        raise EnvironmentFailure(f"exec {ex.id[:12]} still runs {_CONFIRM_SECONDS:g}s after its end")

    async def _kill(self, marker: str, ex: Any) -> None:
        """SIGKILL the tree of one exec and confirm the engine sees it gone (shielded)."""
        with anyio.CancelScope(shield=True):
            code, _, err = await self._run_internal(scripts.KILL_TREE, marker)
            if code != 0:
                raise EnvironmentFailure(
                    f"processes of exec {ex.id[:12]} survived SIGKILL ({code}): {err.decode(errors='replace').strip()}"
                )
            await self._exit_code(ex)

    async def _stage(self) -> None:
        """Copy the spec's folders into the created container in one archive (before start)."""
        spec = self.spec
        stage = _STAGE.lstrip("/")
        items = [
            (Path(host), f"{stage}/{key}")
            for key, host in (("app", spec.workspace), ("tests", spec.tests), ("solution", spec.solution))
            if host is not None
        ]
        if spec.home is not None:
            items.append((Path(spec.home), self.paths.home.lstrip("/")))
        if not items:
            return
        with tempfile.TemporaryFile() as fh:
            await anyio.to_thread.run_sync(lambda: pack_many(items, fh))
            fh.seek(0)
            await put_archive(self._docker, self.container_id, "/", fh)

    async def _prepare(self) -> None:
        """Place the staged folders, make the logs folders and the base commit (one exec)."""
        paths = self.paths
        name, email = BASE_IDENTITY
        out = await self._internal(
            scripts.PREPARE,
            _STAGE, paths.app, paths.home, paths.tmp, paths.tests, paths.solution,
            GIT_EXCLUDE, BASE_MESSAGE, name, email, BASE_DATE, *self.spec.git_identity,
            env={**_GIT_ENV, "HOME": paths.tmp, "LANG": "C.UTF-8"},
        )  # fmt: skip
        lines = out.split()
        if not lines or not re.fullmatch(r"[0-9a-f]{40,64}", lines[-1]):
            raise EnvironmentFailure(f"could not read the base commit in {paths.app}: {out.strip()!r}")
        self.base_commit = lines[-1]

    # -- the port --------------------------------------------------------------------

    def _usable(self) -> None:
        if self._stopped or self._closed:
            raise EnvironmentFailure("the sandbox is stopped; only get() and export_workspace() remain")

    async def exec(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        stdout_path: Path | None = None,
        stderr_path: Path | None = None,
        stdin: bytes | None = None,
    ) -> ExecResult:
        """Run ``argv``; see :meth:`pluginbench.environments.Sandbox.exec`.

        ``stdout_path``/``stderr_path`` are truncated first. At the deadline the tree is
        killed and ``exit_code`` is ``None``. ``stdin`` travels as a file in ``/tmp``
        that the command opens and removes before it starts.
        """
        self._usable()
        if not argv:
            raise EnvironmentFailure("exec needs a command")
        token = secrets.token_hex(12)
        marker = f"{MARKER}={token}"
        full_env = {"LANG": "C.UTF-8", **self.paths.env(), **(env or {}), MARKER: token}
        command = list(argv)
        if stdin is not None:
            feed = f"{self.paths.tmp}/.pluginbench-stdin-{token}"
            await self._put_bytes(stdin, feed)
            command = ["/bin/sh", "-c", scripts.WITH_STDIN, "pluginbench-stdin", feed, *argv]
        out_file = open(stdout_path, "wb") if stdout_path is not None else None  # noqa: SIM115
        err_file = open(stderr_path, "wb") if stderr_path is not None else None  # noqa: SIM115
        out, err = bytearray(), bytearray()
        sinks = {1: _sink(out_file, out), 2: _sink(err_file, err)}
        started = time.monotonic()
        timed_out, ended = False, False
        ex: Any = None
        try:
            ex = await self._create_exec(command, full_env, cwd or self.paths.app)
            with anyio.move_on_after(timeout) as deadline:
                async with ex.start(detach=False) as stream:
                    while (msg := await stream.read_out()) is not None:
                        sinks.get(msg.stream, sinks[2])(msg.data)
                ended = True
            timed_out = deadline.cancelled_caught
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    if ex is not None and not ended:
                        await self._kill(marker, ex)
                finally:
                    for fh in (out_file, err_file):
                        if fh is not None:
                            fh.close()
        code = None if timed_out else await self._exit_code(ex)
        return ExecResult(code, timed_out, time.monotonic() - started, bytes(out), bytes(err))

    async def _put(self, host_path: Path, sandbox_path: str) -> None:
        target = _absolute(sandbox_path)
        with tempfile.TemporaryFile() as fh:
            await anyio.to_thread.run_sync(lambda: pack(host_path, target.lstrip("/"), fh))
            fh.seek(0)
            # Extracted at / so the engine creates missing parents and keeps existing ones.
            await put_archive(self._docker, self.container_id, "/", fh)

    async def _put_bytes(self, data: bytes, sandbox_path: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "data"
            src.write_bytes(data)
            src.chmod(0o600)
            await self._put(src, sandbox_path)

    async def put(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host file or folder to exactly ``sandbox_path`` (modes kept, symlinks refused)."""
        self._usable()
        await self._put(Path(host_path), sandbox_path)

    async def _get(self, sandbox_path: str, host_path: Path, skip_top: Callable[[str], bool]) -> None:
        if self._closed:
            raise EnvironmentFailure("the sandbox is gone")
        source = _absolute(sandbox_path)
        with tempfile.TemporaryFile() as fh:
            await get_archive(self._docker, self.container_id, source, fh)
            fh.seek(0)
            await anyio.to_thread.run_sync(lambda: unpack(fh, Path(host_path), skip_top=skip_top))

    async def get(self, sandbox_path: str, host_path: Path) -> None:
        """Copy a sandbox file or folder to exactly ``host_path``; symlinks are never followed."""
        await self._get(sandbox_path, host_path, lambda _n: False)

    async def stop(self) -> None:
        """``docker stop`` the container and confirm through inspect that it is not running."""
        self._stopped = True
        with anyio.CancelScope(shield=True):
            await stop_confirmed(self._container)

    async def export_workspace(self, host_path: Path) -> None:
        """Copy the working tree (not ``.git``) out; only after :meth:`stop`."""
        if not self._stopped:
            raise EnvironmentFailure("export_workspace() needs stop() first")
        await self._get(self.paths.app, host_path, lambda n: n == ".git")


class DockerEnvironment:
    """Sandboxes as containers on a local Docker engine (see the module docstring)."""

    name = "docker"

    def __init__(self, docker_host: str | None = None, run_id: str | None = None) -> None:
        self.docker_host = docker_host
        self.run_id = run_id

    async def info(self) -> EngineInfo:
        """What the engine reports (ID, version, OS type, CPUs, memory)."""
        async with engine(self.docker_host) as docker:
            return await engine_info(docker)

    async def check(self) -> None:
        """Raise :class:`EnvironmentFailure` unless an engine answers and runs Linux containers."""
        info = await self.info()
        if info.os_type != "linux":
            raise EnvironmentFailure(
                f"the Docker engine runs {info.os_type or 'unknown'} containers; PluginBench needs Linux containers"
            )

    async def check_capacity(self, jobs: int, cpus: float | None, memory_mb: int | None) -> EngineInfo:
        """Refuse (never lower) when ``jobs`` containers of these limits do not fit the engine."""
        info = await self.info()
        problem = capacity_problem(jobs, cpus, memory_mb, info)
        if problem is not None:
            raise EnvironmentFailure(f"the Docker engine is too small: {problem}")
        return info

    async def prepare_image(self, task_root: Path, task: HarborTask) -> str:
        """The frozen image ID for ``task`` (built, published, or the base image)."""
        async with engine(self.docker_host) as docker:
            return await prepare_image(docker, Path(task_root), task)

    def _run(self) -> str:
        if not self.run_id:
            raise EnvironmentFailure("this DockerEnvironment was made without a run_id")
        return self.run_id

    async def left_running(self) -> list[ContainerInfo]:
        """Running containers of this environment's run (see :func:`list_left_running`)."""
        return await list_left_running(self._run(), self.docker_host)

    async def stop_left_running(self) -> list[ContainerInfo]:
        """``docker stop`` (never remove) this run's running containers; the ones stopped."""
        return await stop_left_running(self._run(), self.docker_host)

    def _config(self, spec: SandboxSpec) -> dict[str, Any]:
        host: dict[str, Any] = {"Init": True, "NetworkMode": "host" if spec.network == "host" else "none"}
        if spec.cpus is not None:
            host["NanoCpus"] = int(spec.cpus * 1e9)
        if spec.memory_mb is not None:
            host["Memory"] = host["MemorySwap"] = int(spec.memory_mb) * 1024 * 1024
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

    @asynccontextmanager
    async def sandbox(self, spec: SandboxSpec) -> AsyncIterator[DockerSandbox]:
        """A fresh container for ``spec``; it is removed (force) on exit, whatever happens."""
        if not spec.image:
            raise EnvironmentFailure(f"the docker backend needs spec.image (attempt {spec.attempt_id})")
        name = "-".join(
            ["pluginbench", _safe(spec.run_id), _safe(spec.attempt_id), spec.role, secrets.token_hex(3)]
        )
        async with engine(self.docker_host) as docker:
            container = None
            try:
                try:
                    container = await docker.containers.create(self._config(spec), name=name)
                    box = DockerSandbox(docker, container, spec)
                    await box._stage()
                    await container.start()
                except aiodocker.DockerError as exc:
                    raise EnvironmentFailure(f"cannot start a container from {spec.image}: {exc.message}") from exc
                await box._prepare()
                yield box
            except BaseException as exc:
                with anyio.CancelScope(shield=True):
                    try:
                        await remove_container(container)
                    except Exception as cleanup:  # keep the original error; say cleanup failed too
                        exc.add_note(f"container cleanup also failed: {cleanup}")
                raise
            else:
                with anyio.CancelScope(shield=True):
                    await remove_container(container)


__all__ = [
    "BASE_IMAGE",
    "ContainerInfo",
    "DockerEnvironment",
    "DockerSandbox",
    "list_left_running",
    "stop_command",
    "stop_left_running",
]
