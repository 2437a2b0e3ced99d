"""The local backend: a temp folder per sandbox, bubblewrap where available.

Each sandbox owns one folder ``pluginbench-<run>-<attempt>-<role>-XXXXXXXX`` (under
``root`` or the system temp dir) holding ``app/``, ``logs/{agent,verifier,artifacts}``,
``home/``, ``tmp/`` and, only when the spec gives them, ``tests/`` and ``solution/``.

``app/`` always becomes a *fresh* git repo whose single commit is the starting source:
the workspace is copied with :func:`~pluginbench.tasks.scan_tree`, which skips ``.git``,
so a workspace that already is a repo does not keep its history or HEAD. The commit has
a fixed author, committer, dates and message and no hooks or templates, so equal content
gives the same ``base_commit`` on every machine.

With bubblewrap every command runs in a mount/pid/ipc/uts namespace without
capabilities (as root: as a host uid of the sandbox's own, uid 0 only in a user namespace
of its own; see :mod:`._local_uid`, :mod:`._local_binds`) in a default-deny file system
(see :mod:`._bwrap`): the system tool folders,
a few ``/etc`` entries (in a read-only ``/etc`` of its own) and ``spec.readonly``
read-only, and the sandbox folders at ``/app`` (or ``spec.workdir``), ``/tests``,
``/solution``, ``/logs``, ``/home/agent`` and ``/tmp``; no other host folder exists inside. Each command also gets its own network
namespace (loopback only), ``/proc/sys`` read-only, a seccomp filter refusing the
kernel keyring (:mod:`._seccomp`) and an environment naming no host folder (``PATH`` is
the system folders plus the tool folders' own). When ``spec.egress`` allows a way out,
one :class:`~._egress.EgressProxy` per sandbox serves it and every command that asks
for it (``egress=True``, the default) starts behind the in-sandbox forwarder (see
:mod:`._egress`); one that does not has loopback only.
Without it (``isolation="none"``) commands are plain host processes in their own session
and ``paths`` are the host folders; that is no security boundary and ``isolated`` says so.

Background processes: with bubblewrap they die when the command that started them ends
(the pid namespace ends with it); unisolated they live on until :meth:`stop`.
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from subprocess import DEVNULL, PIPE
from typing import TYPE_CHECKING, Any, Literal

import anyio
from anyio.abc import Process

from ..errors import EnvironmentFailure, ResourceLimitHit
from . import _bwrap, _hostcopy, _limits, _local_after, _local_uid, _proctree, _seccomp
from ._dialogue import Dialogue, LineChannel, first_error
from ._egress import EgressProxy
from ._gitbase_template import base_repo
from ._local_apply import AppliedRun, ApplyChannel, apply_and_exec, free_digit
from ._local_binds import BindNamespace
from ._local_launch import bwrap_options, watch_limits
from ._local_paths import _memfd, _rmtree, sandbox_path, tool_folders
from ._local_streams import FileDrains, converse, drain, drain_lines, feed
from ._port import ExecResult, SandboxPaths, SandboxSpec

if TYPE_CHECKING:
    from ..tasks import TreeEntry

Isolation = Literal["auto", "bubblewrap", "none"]

_KILL_CONFIRM_SECONDS = 10.0
#: how long a file-bound pipe is still read after its command exited
_FILE_DRAIN_GRACE_SECONDS = 2.0


class LocalSandbox:
    """One sandbox of :class:`LocalEnvironment` (see the module docstring)."""

    def __init__(self, root: Path, spec: SandboxSpec, bwrap: str | None) -> None:
        self.root = root
        self.spec = spec
        self._bwrap = bwrap
        self.isolated = bwrap is not None
        self.base_commit = ""
        self.host_app = root / "app"
        host = {
            "tests": root / "tests",
            "solution": root / "solution",
            "logs": root / "logs",
            "home": root / "home",
            "tmp": root / "tmp",
        }
        if self.isolated:
            self.paths = SandboxPaths(
                spec.workdir, "/tests", "/solution", "/logs", "/home/agent", "/tmp"
            )
        else:
            self.paths = SandboxPaths(
                str(self.host_app),
                *(str(host[k]) for k in ("tests", "solution", "logs", "home", "tmp")),
            )
        mounts = [(self.paths.app, self.host_app), (self.paths.logs, host["logs"])]
        mounts += [(self.paths.home, host["home"]), (self.paths.tmp, host["tmp"])]
        if spec.tests is not None:
            mounts.append((self.paths.tests, host["tests"]))
        if spec.solution is not None:
            mounts.append((self.paths.solution, host["solution"]))
        # Longest first, so /home/agent wins over a hypothetical /home.
        self._mounts = sorted(mounts, key=lambda m: len(m[0]), reverse=True)
        self._procs: set[Process] = set()
        self._stopped = False
        self._closed = False
        self.egress: EgressProxy | None = None
        self.limits = _limits.limits_of(spec.memory_mb, spec.cpus, spec.pids, spec.storage_mb)
        self._cgroup: _limits.Cgroup | None = None
        self._rlimit: list[str] = []
        self.limit_mechanism = "not set up"
        self._breaches: list[str] = []
        self._layout: _bwrap.HostLayout | None = None
        self._seccomp: bytes | None = _seccomp.program_bytes() if bwrap is not None and _seccomp.supported() else None
        #: the host uid the sandbox's processes run as (None: as PluginBench itself; see :mod:`._local_uid`)
        self.uid = _local_uid.sandbox_uid(root.name) if bwrap is not None and _local_uid.drops() else None
        self._binds: BindNamespace | None = None  # where bwrap run as self.uid finds its sources (._local_binds)

    # -- setup ---------------------------------------------------------------------

    async def _set_limits(self) -> None:
        """A cgroup of this sandbox's limits, else the prlimit fallback (see :mod:`._limits`)."""
        self._cgroup = await anyio.to_thread.run_sync(_limits.Cgroup.create, self.root.name, self.limits)
        if self._cgroup is not None:
            self._rlimit, self.limit_mechanism = _limits.fsize_prefix(self.limits), self._cgroup.mechanism
        else:
            self._rlimit, self.limit_mechanism = _limits.rlimit_prefix(self.limits)
        self.limit_mechanism += f"; {_limits.LOCAL_DISK_MECHANISM}" if self._rlimit else ""

    def limit_breaches(self) -> list[str]:
        """Every limit this sandbox's commands hit so far, one reason each (empty: none)."""
        found = list(self._breaches)
        if self._cgroup is not None:
            found += [b for b in self._cgroup.breaches() if b not in found]
        return found

    async def _populate(self) -> None:
        spec, root = self.spec, self.root
        await self._set_limits()

        def copy_all() -> list[TreeEntry] | None:
            from ..tasks import copy_tree, scan_tree  # not at import: `status` asks this backend

            for sub in ("app", "logs/agent", "logs/verifier", "logs/artifacts", "home", "tmp"):
                (root / sub).mkdir(parents=True)
            scanned: dict[str, list[TreeEntry]] = {}
            for src, dest in ((spec.workspace, "app"), (spec.tests, "tests"), (spec.solution, "solution"),
                              (spec.home, "home")):
                if src is not None:
                    scanned[dest] = scan_tree(src, context=f"the sandbox {dest}/ source")
                    copy_tree(src, root / dest, scanned[dest])
            return scanned.get("app")

        entries = await anyio.to_thread.run_sync(copy_all)
        self.base_commit = await base_repo(self.host_app, root / "home", self.spec.git_identity,
                                           spec.workspace, entries)
        if self._bwrap is not None:  # read here, not at the first command: a pre-started sandbox has it ready
            self._layout = await anyio.to_thread.run_sync(_bwrap.read_host_layout, tool_folders(spec.readonly))
        if self.uid is not None:
            await anyio.to_thread.run_sync(_local_uid.chown_tree, root, self.uid)
            others = [str(self.egress.folder)] if self.egress is not None else []
            self._binds = await anyio.to_thread.run_sync(BindNamespace.create, root, tool_folders(spec.readonly), others)

    # -- the port ------------------------------------------------------------------

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        env = {
            "PATH": sandbox_path(tool_folders(self.spec.readonly)) if self.isolated
            else os.environ.get("PATH", os.defpath),
            "LANG": "C.UTF-8",
            **self.paths.env(),
            "GIT_CONFIG_NOSYSTEM": "1",
            **(self.spec.egress.inside_env() if self.isolated else {}),
        }
        env.update(extra or {})
        return env

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

        ``stdout_path``/``stderr_path`` are truncated first. At the deadline the whole
        tree is killed and ``exit_code`` is ``None``, even when the command itself had
        ended but a process it left behind kept its output open. With bubblewrap,
        ``egress=False`` starts no forwarder and ``remove_after`` is done in the same
        launch (see :mod:`._local_after`); unisolated, ``remove_after`` is not done.
        """
        done = await self._launch(argv, cwd=cwd, env=env, timeout=timeout, stdout_path=stdout_path,
                                  stderr_path=stderr_path, stdin=stdin, dialogue=dialogue, egress=egress,
                                  remove_after=remove_after)
        assert done is not None  # only an apply channel's launch can be refused
        return done

    async def apply_and_exec(self, patch: str, argv: Sequence[str], *, cwd: str, env: Mapping[str, str] | None,
                             apply_timeout: float, timeout: float | None, stdout_path: Path,
                             stderr_path: Path) -> AppliedRun | None:
        """Grading's ``git apply`` of ``patch``, then ``argv`` (test.sh), in ONE bubblewrap
        launch; see :func:`._local_apply.apply_and_exec`."""
        return await apply_and_exec(self, patch, argv, cwd=cwd, env=env, apply_timeout=apply_timeout, timeout=timeout,
                                    stdout_path=stdout_path, stderr_path=stderr_path)

    async def _launch(self, argv: Sequence[str], *, remove_after: Sequence[str] = (), **kw: Any) -> ExecResult | None:
        """:meth:`exec`; with ``channel``, :meth:`apply_and_exec`'s launch (``None``: nothing ran).
        A bubblewrap launch with ``remove_after`` watches its pid namespace end (see :mod:`._local_after`)."""
        watch = _local_after.NamespaceWatch() if remove_after and self._bwrap is not None else None
        try:
            return await self._launch_watched(argv, remove_after=remove_after, ns_watch=watch, **kw)
        finally:
            if watch is not None:
                watch.close()

    async def _launch_watched(
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
        channel: ApplyChannel | None = None,
        ns_watch: _local_after.NamespaceWatch | None = None,
    ) -> ExecResult | None:
        """:meth:`_launch`, with the watch of its pid namespace when it has one."""
        self._usable()
        if not argv:
            raise EnvironmentFailure("exec needs a command")
        if dialogue is not None and stdin is not None:
            raise EnvironmentFailure("exec takes stdin bytes or a dialogue, not both")
        for path in remove_after:
            self._to_host(path)  # a path outside the sandbox folders is refused before anything runs
        cwd = cwd or self.paths.app
        fds: list[int] = []
        if self._bwrap is not None and self.uid is not None and self._binds is None:
            raise EnvironmentFailure("the sandbox's mount namespace is not set up")  # never bwrap as host root
        if self._bwrap is not None:
            # Options travel through --args (and the filter through --seccomp), so
            # bubblewrap's command line, the sandbox's /proc/1/cmdline, names no host path.
            seccomp = _memfd("pb-seccomp", self._seccomp) if self._seccomp is not None else None
            options = bwrap_options(self, cwd, fds)
            if seccomp is not None:
                options += ["--seccomp", str(seccomp)]
                fds.append(seccomp)
            if ns_watch is not None:
                options += ns_watch.options()
                fds.append(ns_watch.write_fd)
            fds.append(_memfd("pb-bwrap-args", b"".join(a.encode() + b"\0" for a in options)))
            inner = _local_after.wrapped(argv, remove_after, self._env(env)) if remove_after else list(argv)
            forwarder = [*self.egress.forwarder_argv(), "--"] if self.egress is not None and egress else []
            if channel is not None:
                digit = free_digit(fds)
                if digit is None:  # every single digit is taken: apply_and_exec falls back to two launches
                    for fd in fds:
                        os.close(fd)
                    return None
                channel.fd = digit
                inner = channel.inner(argv, self._env(env), forwarder)
            else:
                inner = [*forwarder, *inner]
            command, host_cwd = [self._bwrap, "--args", str(fds[-1]), "--", *inner], str(self.root)
            if self.uid is not None and self._binds is not None:
                command = [*self._binds.enter_prefix(self.uid, host_cwd), *command]
        else:
            command, host_cwd = list(argv), cwd
        command = [*self._rlimit, *command]  # file sizes always capped; memory too without a cgroup
        command = self._cgroup.wrap(command) if self._cgroup is not None else command
        if channel is not None:
            command = channel.outer(command)
        cap = _limits.output_file_cap(self.limits)  # output is evidence on the host's disk, parsed there
        out_file = _limits.CappedFile(stdout_path, cap) if stdout_path is not None else None
        err_file = _limits.CappedFile(stderr_path, cap) if stderr_path is not None else None
        out, err = _limits.CappedBuffer(), _limits.CappedBuffer()  # in memory: bounded too
        started = time.monotonic()
        proc: Process | None = None
        timed_out = False
        try:
            try:
                # Shielded: a cancel landing after the spawn but before open_process
                # returns (asyncio spends loop turns connecting the pipes) would leave
                # the started tree unknown here, so nothing below could kill it. The
                # cancel is delivered at the next checkpoint instead, with proc known.
                with anyio.CancelScope(shield=True):
                    proc = await anyio.open_process(
                        command,
                        stdin=(channel.write_end if channel is not None
                               else PIPE if stdin is not None or dialogue is not None else DEVNULL),
                        # Always pipes that PluginBench reads, never the host file itself: a
                        # process in the sandbox can reopen /proc/<pid>/fd/1 of the command, and
                        # through a file descriptor it could truncate or rewrite the evidence.
                        stdout=PIPE,
                        stderr=PIPE,
                        cwd=host_cwd,
                        env=self._env(env),
                        start_new_session=True,
                        pass_fds=fds,
                    )
            except OSError as exc:
                raise EnvironmentFailure(f"cannot start {argv[0]!r}: {exc}") from exc
            finally:
                for fd in fds:
                    os.close(fd)
                if channel is not None:
                    channel.close_write()  # the launch's command is the only writer left
            # A shielded scope swallows nothing (no deadline), so open_process returned.
            assert proc is not None
            self._procs.add(proc)
            with anyio.move_on_after(timeout) as deadline, first_error():
                async with anyio.create_task_group() as tg:
                    if dialogue is not None:
                        assert proc.stdin is not None and proc.stdout is not None
                        lines = LineChannel(proc.stdin.send)
                        tg.start_soon(drain_lines, proc.stdout, out, out_file, lines)
                        tg.start_soon(converse, dialogue, lines, proc.stdin)
                    files = FileDrains()
                    for stream, into, file in ((proc.stdout if dialogue is None else None, out, out_file),
                                               (proc.stderr, err, err_file)):
                        if stream is not None and file is not None:
                            files.add(stream, into, file)
                        elif stream is not None:
                            tg.start_soon(drain, stream, into)
                    tg.start_soon(files.run)
                    if proc.stdin is not None and stdin is not None:
                        tg.start_soon(feed, proc.stdin, stdin)
                    watch = anyio.CancelScope()

                    async def watching(pid: int = proc.pid) -> None:
                        with watch:
                            await watch_limits(self, pid)

                    tg.start_soon(watching)
                    if channel is not None:
                        tg.start_soon(channel.watch, deadline)
                    await proc.wait()
                    watch.cancel()
                    await files.finish(_FILE_DRAIN_GRACE_SECONDS)
            timed_out = deadline.cancelled_caught
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    if proc is not None:
                        if timed_out or proc.returncode is None:
                            await self._kill([proc.pid])
                        await proc.aclose()
                        self._procs.discard(proc)
                finally:
                    for fh in (out_file, err_file):
                        if fh is not None:
                            fh.close()
        assert proc is not None
        # A daemon of the launch may still write the file until its pid namespace is gone;
        # waiting for that also keeps the caller's own rm clear of it.
        gone = ns_watch is not None and not timed_out and await ns_watch.gone()
        removed = gone and all(_local_after.confirmed_absent(*self._to_host(f)) for f in remove_after)
        return ExecResult(
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            seconds=time.monotonic() - started,
            stdout=bytes(out),
            stderr=bytes(err),
            removed=removed,
        )

    async def _kill(self, roots: list[int], *, sweep: bool = False) -> None:
        """Kill the trees of ``roots`` and confirm they are gone.

        ``sweep`` (for :meth:`stop`) also kills, when unisolated, every process whose
        environment carries this sandbox's ``APP_DIR``: background processes of earlier
        commands and daemons that left their session. A deadline in one command must
        not do that, or it would kill a concurrent command.
        """
        marker = f"APP_DIR={self.paths.app}".encode()

        def kill() -> set[int]:
            extra = _proctree.marked(marker) if sweep and not self.isolated else set()
            return _proctree.kill_trees(roots, extra) if roots or extra else set()  # no /proc walk for nothing

        victims = await anyio.to_thread.run_sync(kill)
        with anyio.move_on_after(_KILL_CONFIRM_SECONDS):
            while _proctree.alive(victims):
                await anyio.sleep(0.01)
        left = _proctree.alive(victims)
        if left:
            raise EnvironmentFailure(f"processes survived SIGKILL: {sorted(left)}")

    def _to_host(self, sandbox_path: str) -> tuple[Path, str]:
        path = posixpath.normpath(sandbox_path)
        if not path.startswith("/"):
            raise EnvironmentFailure(f"a sandbox path must be absolute: {sandbox_path!r}")
        for inside, host in self._mounts:
            if path == inside or path.startswith(inside.rstrip("/") + "/"):
                return host, path[len(inside) :].lstrip("/")
        raise EnvironmentFailure(
            f"{sandbox_path!r} is outside the sandbox folders ({', '.join(m for m, _ in self._mounts)})"
        )

    async def put(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host file or folder to exactly ``sandbox_path`` (modes kept, symlinks refused)."""
        self._usable()
        base, rel = self._to_host(sandbox_path)
        await anyio.to_thread.run_sync(_hostcopy.copy_in, Path(host_path), base, rel)
        if self.uid is not None:
            await anyio.to_thread.run_sync(_local_uid.chown_down, base, rel, self.uid)

    async def get(self, sandbox_path: str, host_path: Path, *, limit: int | None = None) -> None:
        """Copy a sandbox file or folder to exactly ``host_path``; symlinks are never followed."""
        if self._closed:
            raise EnvironmentFailure("the sandbox is gone")
        base, rel = self._to_host(sandbox_path)
        bound = self.limits.storage_mb * 1024 * 1024  # a sparse file must not become gigabytes on the host
        bound = bound if limit is None else min(bound, limit)
        await anyio.to_thread.run_sync(lambda: _hostcopy.copy_out(base, rel, Path(host_path), limit=bound))

    async def stop(self) -> None:
        """Kill every process still running in the sandbox and confirm they are gone."""
        self._stopped = True
        with anyio.CancelScope(shield=True):
            await self._kill([p.pid for p in self._procs], sweep=True)
            if self._cgroup is not None:  # anything that left the process tree is still in the cgroup
                await anyio.to_thread.run_sync(self._cgroup.kill)

    async def export_workspace(self, host_path: Path) -> None:
        """Copy the working tree (not ``.git``) to ``host_path``; symlinks stay symlinks."""
        if not self._stopped:
            raise EnvironmentFailure("export_workspace() needs stop() first")
        if self._closed:
            raise EnvironmentFailure("the sandbox is gone")
        # Bounded before anything is copied: a sparse file must not become gigabytes on the host.
        too_big = await anyio.to_thread.run_sync(_limits.over_storage, self.host_app, self.limits)
        if too_big:
            raise ResourceLimitHit(too_big)
        await anyio.to_thread.run_sync(
            lambda: _hostcopy.copy_out(
                self.host_app, "", Path(host_path), skip_top=lambda n: n == ".git"
            )
        )

    async def _close(self) -> None:
        try:
            await self.stop()  # idempotent; unisolated it also sweeps leftover background processes
        finally:
            self._closed = True
            if self.egress is not None:
                await anyio.to_thread.run_sync(self.egress.close)
            if self._cgroup is not None:
                await anyio.to_thread.run_sync(self._cgroup.kill)
                await anyio.to_thread.run_sync(self._cgroup.remove)
            if self._binds is not None:
                self._binds.close()
            await anyio.to_thread.run_sync(_rmtree, self.root)
