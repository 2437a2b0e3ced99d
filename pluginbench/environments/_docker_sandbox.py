"""One docker sandbox: a container's execs, copies, stop and export (see :mod:`._docker`)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import posixpath
import re
import secrets
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import aiodocker
import anyio

from ..errors import CommandStartFailed, EnvironmentFailure, ResourceLimitHit
from . import _docker_scripts as scripts
from ._dialogue import Dialogue, LineChannel, first_error
from ._docker_containers import stop_confirmed
from ._docker_engine import archive_limit, engine_kills, get_archive, put_archive
from ._docker_tar import content_size, pack, pack_many, unpack
from ._egress import EgressProxy
from ._gitbase import BASE_DATE, BASE_IDENTITY, BASE_MESSAGE, GIT_EXCLUDE
from ._limits import CappedBuffer, CappedFile, Limits, limits_of, output_file_cap, tree_bytes
from ._port import ExecResult, SandboxPaths, SandboxSpec

MARKER = "PLUGINBENCH_EXEC"
# What the runtime prints (on the exec's stdout, exit code 126) when it cannot start a command.
_START_FAILED = b"OCI runtime exec failed"
# The runtime's words when its init process died before the command started (seen on a
# loaded host: runc's init killed or starved). Nothing ran, so trying again is safe.
_TRANSIENT_START = (b"read init-p", b"connection reset by peer", b"resource temporarily unavailable")
# How much of a command's first stdout is kept to tell a runtime start failure apart.
_HEAD_BYTES = 512
# Pauses before the second and third start of a command the runtime failed to start.
_START_RETRY_PAUSES = (0.5, 2.0)
# Where the engine extracts the spec's folders before the first exec moves them in place.
_STAGE = "/.pluginbench-stage"
_CONFIRM_SECONDS = 15.0
# Internal scripts are given a git config isolated from the image's HOME.
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
}


def _absolute(sandbox_path: str) -> str:
    path = posixpath.normpath(sandbox_path)
    if not path.startswith("/") or path == "/":
        raise EnvironmentFailure(f"a sandbox path must be absolute and below /: {sandbox_path!r}")
    return "/" + path.lstrip("/")


def _transient_start(code: int | None, out: bytes | bytearray) -> bool:
    """Whether an exec's end says the runtime failed to start it for a passing reason."""
    return code == 126 and out.startswith(_START_FAILED) and any(t in out.lower() for t in _TRANSIENT_START)


def _sink(fh: IO[bytes] | None, buffer: CappedBuffer) -> Callable[[bytes], object]:
    return fh.write if fh is not None else buffer.extend


#: How often a running command's container is checked against its storage bound (the local
#: backend's sandbox folder check runs as often).
DISK_CHECK_SECONDS = 5.0


class DockerSandbox:
    """One container of :class:`DockerEnvironment` (see the module docstring)."""

    isolated = True

    def __init__(self, docker: aiodocker.Docker, container: Any, spec: SandboxSpec) -> None:
        self._docker = docker
        self._container = container
        self.container_id: str = container.id
        self.spec = spec
        self.paths = SandboxPaths(
            spec.workdir, "/tests", "/solution", "/logs", "/home/agent", "/tmp"
        )
        self.base_commit = ""
        self._stopped = False
        self._closed = False
        self.egress: EgressProxy | None = None
        #: set when the container ended because its own processes were all killed from
        #: inside (:meth:`ended_by` then reports no loss): said in the attempt's record
        self.ended_inside: str | None = None
        #: the container's writable layer on the host (overlay2's upper dir), once looked up:
        #: a path, or "" when the engine is not local or its storage driver has none
        self._upper: Path | str | None = None
        self._disk_breaches: list[str] = []

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
        self, script: str, *args: str, env: Mapping[str, str] | None = None, user: str = "0"
    ) -> tuple[int | None, bytes, bytes]:
        for pause in (*_START_RETRY_PAUSES, None):
            ex = await self._create_exec(
                ["/bin/sh", "-c", script, "pluginbench", *args], env or {}, "/", user
            )
            out, err = CappedBuffer(), CappedBuffer()  # a container's output is bounded in memory
            async with ex.start(detach=False) as stream:
                while (msg := await stream.read_out()) is not None:
                    (out if msg.stream == 1 else err).extend(msg.data)
            code = await self._exit_code(ex)
            if pause is None or not _transient_start(code, bytes(out)):
                return code, bytes(out), bytes(err)
            await anyio.sleep(pause)
        raise AssertionError("unreachable: the last pass returns")

    async def _create_exec(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: str, user: str = "", *, stdin: bool = False
    ) -> Any:
        try:
            return await self._container.exec(
                list(argv), stdout=True, stderr=True, stdin=stdin, environment=dict(env), workdir=cwd,
                user=user,
            )
        except aiodocker.DockerError as exc:
            raise EnvironmentFailure(
                f"cannot run a command in container {self.container_id[:12]}: {exc.message}"
            ) from exc

    async def _exit_code(self, ex: Any) -> int | None:
        """The exec's exit code once the engine says it is no longer running.

        ``None`` (unknown, never 0) when the sandbox was closed under the command: its
        container is removed and its engine client may be closed before the command's
        own task asks, so the engine can no longer say. Any other failure to ask is an
        :class:`EnvironmentFailure`."""
        with anyio.move_on_after(_CONFIRM_SECONDS):
            while True:
                try:
                    info = await ex.inspect()
                except Exception as exc:  # a closed client fails with DockerError or RuntimeError
                    if self._closed:
                        return None
                    if not isinstance(exc, aiodocker.DockerError):
                        raise
                    raise EnvironmentFailure(
                        f"cannot read the exit code of exec {ex.id[:12]} in container "
                        f"{self.container_id[:12]}: {exc.message}"
                    ) from exc
                if not info.get("Running"):
                    code = info.get("ExitCode")
                    return int(code) if code is not None else None
                await anyio.sleep(0.02)
        raise EnvironmentFailure(
            f"exec {ex.id[:12]} still runs {_CONFIRM_SECONDS:g}s after its end"
        )

    async def _kill(self, marker: str, ex: Any) -> None:
        """SIGKILL the tree of one exec and confirm the engine sees it gone (shielded)."""
        with anyio.CancelScope(shield=True):
            # As the commands' own user: with every capability dropped, root could
            # neither read another user's /proc/<pid>/environ nor signal its processes.
            code, _, err = await self._run_internal(scripts.KILL_TREE, marker, user="")
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
            for key, host in (
                ("app", spec.workspace),
                ("tests", spec.tests),
                ("solution", spec.solution),
            )
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
            raise EnvironmentFailure(
                f"could not read the base commit in {paths.app}: {out.strip()!r}"
            )
        self.base_commit = lines[-1]

    async def _start_forwarder(self, proxy: EgressProxy) -> None:
        """Start the in-container forwarder (for the container's life) in one exec that
        ends once it listens on the container's 127.0.0.1 (:data:`._docker_scripts.START_FORWARDER`)."""
        port = proxy.policy.inside_port()
        code, _, err = await self._run_internal(scripts.START_FORWARDER, *proxy.forwarder_argv()[1:])
        if code == 127:
            raise EnvironmentFailure(
                f"the image {self.spec.image} has no python3, which the sandbox's network egress needs "
                "(the model endpoint is reached through an in-container forwarder); add python3 to the image"
            )
        if code != 0:
            raise EnvironmentFailure(
                f"container {self.container_id[:12]}: the egress forwarder did not listen on 127.0.0.1:{port}: "
                f"{err.decode(errors='replace').strip()[-300:]}"
            )

    # -- the port --------------------------------------------------------------------

    def _usable(self) -> None:
        if self._stopped or self._closed:
            raise EnvironmentFailure(
                "the sandbox is stopped; only get() and export_workspace() remain"
            )

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
        dialogue: Dialogue | None = None,
        egress: bool = True,
        remove_after: Sequence[str] = (),
    ) -> ExecResult:
        """Run ``argv``; see :meth:`pluginbench.environments.Sandbox.exec`.

        ``stdout_path``/``stderr_path`` are truncated first. At the deadline the tree is
        killed and ``exit_code`` is ``None``. ``stdin`` travels as a file in ``/tmp``
        that the command opens and removes before it starts. A ``dialogue`` writes to the
        exec's attached stdin, which the engine cannot half-close: the dialogue ends the
        command through its own protocol.

        Every exec shares the container's network, so ``egress`` changes nothing, and
        ``remove_after`` is never done here (``removed`` stays ``False``).

        When the runtime fails to start the command for a passing reason
        (:data:`_TRANSIENT_START`: its init process died before the command ran), the
        start is tried again after :data:`_START_RETRY_PAUSES`; the command never ran, so
        nothing runs twice. A dialogue is never retried (it may have written already).
        """
        pauses = () if dialogue is not None else _START_RETRY_PAUSES
        for pause in pauses:
            try:
                return await self._exec_once(argv, cwd=cwd, env=env, timeout=timeout, stdout_path=stdout_path,
                                             stderr_path=stderr_path, stdin=stdin, dialogue=dialogue)
            except CommandStartFailed:
                await anyio.sleep(pause)
        try:
            return await self._exec_once(argv, cwd=cwd, env=env, timeout=timeout, stdout_path=stdout_path,
                                         stderr_path=stderr_path, stdin=stdin, dialogue=dialogue)
        except CommandStartFailed as exc:
            raise EnvironmentFailure(str(exc)) from None

    async def _exec_once(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None,
        env: Mapping[str, str] | None,
        timeout: float | None,
        stdout_path: Path | None,
        stderr_path: Path | None,
        stdin: bytes | None,
        dialogue: Dialogue | None,
    ) -> ExecResult:
        """One start of ``argv`` (see :meth:`exec`); :class:`CommandStartFailed` when
        the runtime could not start it for a passing reason."""
        self._usable()
        if not argv:
            raise EnvironmentFailure("exec needs a command")
        if dialogue is not None and stdin is not None:
            raise EnvironmentFailure("exec takes stdin bytes or a dialogue, not both")
        token = secrets.token_hex(12)
        marker = f"{MARKER}={token}"
        full_env = {"LANG": "C.UTF-8", **self.paths.env(), **self.spec.egress.inside_env(), **(env or {}),
                    MARKER: token}
        command = list(argv)
        if stdin is not None:
            feed = f"{self.paths.tmp}/.pluginbench-stdin-{token}"
            await self._put_bytes(stdin, feed)
            command = ["/bin/sh", "-c", scripts.WITH_STDIN, "pluginbench-stdin", feed, *argv]
        # Bounded: output is evidence on the host's disk, parsed there.
        cap = output_file_cap(self.limits)
        out_file = CappedFile(stdout_path, cap) if stdout_path is not None else None
        err_file = CappedFile(stderr_path, cap) if stderr_path is not None else None
        out, err, head = CappedBuffer(), CappedBuffer(), bytearray()  # in memory: bounded too
        sinks = {1: _sink(out_file, out), 2: _sink(err_file, err)}
        started = time.monotonic()
        timed_out, ended = False, False
        ex: Any = None
        try:
            ex = await self._create_exec(command, full_env, cwd or self.paths.app,
                                         stdin=dialogue is not None)
            with anyio.move_on_after(timeout) as deadline:
                async with ex.start(detach=False) as stream:
                    channel = LineChannel(stream.write_in) if dialogue is not None else None

                    async def read() -> None:
                        try:
                            while (msg := await stream.read_out()) is not None:
                                if len(head) < _HEAD_BYTES and msg.stream == 1:
                                    head.extend(msg.data[: _HEAD_BYTES - len(head)])
                                sinks.get(msg.stream, sinks[2])(msg.data)
                                if channel is not None and msg.stream == 1:
                                    channel.feed(msg.data)
                        finally:
                            if channel is not None:
                                channel.end()

                    with first_error():
                        async with anyio.create_task_group() as tg:
                            if dialogue is not None and channel is not None:
                                tg.start_soon(dialogue, channel)
                            upper, watch = await self._upper_dir(), anyio.CancelScope()
                            if upper is not None:
                                tg.start_soon(self._watch_disk, upper, marker, ex, watch)
                            await read()
                            watch.cancel()  # the command ended: so does its disk check
                ended = True
            timed_out = deadline.cancelled_caught
        except BaseException as exc:
            # Cancelled (or the stream broke) while the command runs: kill it first, and
            # keep the original exception; a failed kill is only a note on it.
            if ex is not None and not ended:
                with anyio.CancelScope(shield=True):
                    try:
                        await self._kill(marker, ex)
                    except Exception as cleanup:
                        exc.add_note(f"killing the command also failed: {cleanup}")
            raise
        finally:
            for fh in (out_file, err_file):
                if fh is not None:
                    fh.close()
        if timed_out:
            await self._kill(marker, ex)
        code = None if timed_out else await self._exit_code(ex)
        if code == 126 and head.startswith(_START_FAILED):
            # The runtime could not start it (no such binary, no such cwd), as the local
            # backend's "cannot start": an engine-side failure, not the command's exit.
            said = bytes(head)
            why = said.decode(errors="replace").strip()
            if _transient_start(code, said):
                raise CommandStartFailed(f"cannot start {argv[0]!r} in the container: {why}")
            raise EnvironmentFailure(f"cannot start {argv[0]!r} in the container: {why}")
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
            # Readable by an image's non-root user; the command removes it before it starts.
            src.chmod(0o644)
            await self._put(src, sandbox_path)

    async def put(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host file or folder to exactly ``sandbox_path`` (modes kept, symlinks refused)."""
        self._usable()
        await self._put(Path(host_path), sandbox_path)

    async def _get(
        self, sandbox_path: str, host_path: Path, skip_top: Callable[[str], bool], limit: int | None = None
    ) -> None:
        if self._closed:
            raise EnvironmentFailure("the sandbox is gone")
        source = _absolute(sandbox_path)
        with tempfile.TemporaryFile() as fh:
            # Bounded while streaming and while unpacking: a sparse file in a container
            # streams every zero byte, and must not become gigabytes on the host.
            bound = self.limits.storage_mb * 1024 * 1024
            bound = bound if limit is None else min(bound, limit)
            await get_archive(self._docker, self.container_id, source, fh, limit=archive_limit(bound))
            # Refused before anything is written on the host, as the other backends refuse it.
            if await anyio.to_thread.run_sync(content_size, fh, bound) > bound:
                raise ResourceLimitHit(f"disk: {source} is over the {bound // (1024 * 1024)} MB storage bound "
                                       "(storage_mb) and is not copied out of the sandbox")
            await anyio.to_thread.run_sync(lambda: unpack(fh, Path(host_path), skip_top=skip_top, limit=bound))

    async def get(self, sandbox_path: str, host_path: Path, *, limit: int | None = None) -> None:
        """Copy a sandbox file or folder to exactly ``host_path``; symlinks are never followed."""
        await self._get(sandbox_path, host_path, lambda _n: False, limit)

    @property
    def limits(self) -> Limits:
        return limits_of(self.spec.memory_mb, self.spec.cpus, self.spec.pids, self.spec.storage_mb)

    limit_mechanism = ("docker HostConfig (Memory, NanoCpus, PidsLimit); disk: RLIMIT_FSIZE per file, the writable "
                       "layer checked every 5 s on a local engine, export size bound")

    async def limit_breaches(self) -> list[str]:
        """The limits hit so far: an OOM kill from the container's state, and the
        kernel's counters of its cgroup (a refused fork, an OOM kill of any process),
        read on the host when the engine is local, else from inside (read-only there)."""
        found = []
        try:
            info = await self._container.show()
            if (info.get("State") or {}).get("OOMKilled"):
                found.append(f"memory: the container was killed at its {self.limits.memory_mb} MB limit (memory_mb)")
        except aiodocker.DockerError:
            pass
        text = await anyio.to_thread.run_sync(_host_cgroup_counters, self.container_id)
        if text is None and not self._stopped:
            with contextlib.suppress(Exception):
                text = await self._internal(
                    "cat /sys/fs/cgroup/pids.events /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/memory.events "
                    "/sys/fs/cgroup/memory/memory.oom_control 2>/dev/null; true")
        counts = dict(line.split()[:2] for line in (text or "").splitlines() if len(line.split()) == 2)
        if counts.get("max", "0") != "0":
            found.append(f"processes: a fork was refused at the {self.limits.pids} process limit (pids_limit)")
        if counts.get("oom_kill", "0") != "0" and not any(f.startswith("memory:") for f in found):
            found.append(f"memory: a process was killed at the {self.limits.memory_mb} MB limit (memory_mb)")
        return [*found, *self._disk_breaches]

    async def _upper_dir(self) -> Path | None:
        """The container's writable layer as the host sees it (overlay2's ``UpperDir``), or
        None when the engine is not on this machine or its storage driver has none."""
        if self._upper is None:
            self._upper = ""
            with contextlib.suppress(aiodocker.DockerError, KeyError, TypeError):
                upper = (await self._container.show())["GraphDriver"]["Data"]["UpperDir"]
                if upper and await anyio.to_thread.run_sync(os.path.isdir, upper):
                    self._upper = Path(upper)
        return self._upper if isinstance(self._upper, Path) else None

    async def _watch_disk(self, upper: Path, marker: str, ex: Any, scope: anyio.CancelScope) -> None:
        """While a command runs: every 5 s, the container's writable layer against the
        storage bound (every entry at least one block, :data:`._limits.ENTRY_BYTES`), as
        the local backend watches its sandbox folder; over it, the command's tree is killed
        and the breach recorded (many small or empty files, each under ``RLIMIT_FSIZE``)."""
        bound = self.limits.storage_mb * 1024 * 1024
        with scope:
            while True:
                await anyio.sleep(DISK_CHECK_SECONDS)
                used = await anyio.to_thread.run_sync(lambda: tree_bytes(upper, allocated=True, stop_above=bound))
                if used > bound:
                    hit = (f"disk: the container's files are over the {self.limits.storage_mb} MB storage bound "
                           "(storage_mb)")
                    if hit not in self._disk_breaches:
                        self._disk_breaches.append(hit)
                    await self._kill(marker, ex)
                    return

    async def ended_by(self, settle: float = 0.0) -> str | None:
        """Why the container is no longer running although :meth:`stop` was not called
        (killed or removed from outside the run, OOM), or None while it runs. The engine
        marks a killed container stopped a moment after its processes die, so a caller
        that saw a command killed passes ``settle`` seconds to wait for that."""
        if self._stopped:
            return None
        deadline = time.monotonic() + settle
        while True:
            try:
                state = (await self._container.show())["State"]
            except aiodocker.DockerError as exc:
                if exc.status == 404:
                    return f"the container {self.container_id[:12]} was removed from outside the run"
                return None
            if not state.get("Running"):
                break
            if time.monotonic() >= deadline:
                return None
            await anyio.sleep(0.1)
        oom = ", out of memory (OOM killed)" if state.get("OOMKilled") else ""
        if not oom and await self._ended_from_inside(state):
            # Its keep-alive died with nothing killing the container through the engine: the
            # agent killed every process it could (``kill -9 -1``). That is the agent's own
            # outcome, recorded as such; a replacement would let it end its sandbox again
            # and again, each time a paid attempt (see ``LOSSES_PER_SLOT_LIMIT``).
            self.ended_inside = (f"the agent's own processes ended the container {self.container_id[:12]} "
                                 f"(exit code {state.get('ExitCode')}; no kill through the engine)")
            return None
        return (f"the container {self.container_id[:12]} was stopped from outside the run "
                f"(exit code {state.get('ExitCode')}{oom})")

    async def _ended_from_inside(self, state: Mapping[str, Any]) -> bool:
        """Whether the engine says no one killed the (exited) container through it since it
        started: no ``kill`` event (``docker kill``/``stop`` from any client) in its event log.
        False when the start time or the log cannot be read (then it counts as from outside)."""
        started = str(state.get("StartedAt") or "")
        try:  # RFC 3339 with nanoseconds; Python reads microseconds
            head, _, frac = started.rstrip("Z").partition(".")
            since = dt.datetime.fromisoformat(f"{head}.{(frac + '000000')[:6]}+00:00").timestamp()
        except ValueError:
            return False
        kills = await engine_kills(self._docker, self.container_id, since - 1.0)
        return kills == 0

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


def _host_cgroup_counters(container_id: str) -> str | None:
    """The container's pids and memory event counters as the host's cgroup file system
    shows them (cgroupfs v1 or v2, or systemd's scope), or None when none is found (a
    remote engine)."""
    root = Path("/sys/fs/cgroup")
    candidates = [
        (root / "pids" / "docker" / container_id / "pids.events", root / "memory" / "docker" / container_id / "memory.oom_control"),
        (root / "docker" / container_id / "pids.events", root / "docker" / container_id / "memory.events"),
        (root / "system.slice" / f"docker-{container_id}.scope" / "pids.events",
         root / "system.slice" / f"docker-{container_id}.scope" / "memory.events"),
    ]
    for pids, memory in candidates:
        try:
            text = pids.read_text()
        except OSError:
            continue
        with contextlib.suppress(OSError):
            text += memory.read_text()
        return text
    return None
