"""The environment port: a fresh sandbox per attempt, commands with deadlines, copy in/out.

A backend (``local``, ``docker``) implements :class:`Environment`. Its
:meth:`Environment.sandbox` is an async context manager that yields a
:class:`Sandbox` and, on exit (normal, error or cancellation), removes everything the
sandbox owns and nothing else. Inside a sandbox the task's paths are real:

==================  ==========================================================
``paths.app``       the starting source (a git repo whose HEAD is ``base_commit``)
``paths.tests``     the task's ``tests/`` (verifier sandboxes only)
``paths.solution``  the task's ``solution/`` (oracle sandboxes only)
``paths.logs``      ``/logs`` with ``agent/``, ``verifier/`` and ``artifacts/``
``paths.home``      the private HOME (harness config is delivered here)
==================  ==========================================================

With a mount namespace (bubblewrap, docker) these are ``/app``, ``/tests`` ... ; an
unisolated local sandbox uses host folders and exports ``APP_DIR``, ``TESTS_DIR``,
``SOLUTION_DIR``, ``LOGS_DIR`` so scripts that read those variables still work.
Every command gets those variables in either mode.
"""

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

from ._dialogue import Dialogue, LineChannel
from ._egress import NO_EGRESS, Egress

Role = Literal["coding", "verifier", "readiness", "review"]


class SandboxPaths(NamedTuple):
    """Paths as the sandboxed processes see them."""

    app: str
    tests: str
    solution: str
    logs: str
    home: str
    tmp: str

    def env(self) -> dict[str, str]:
        return {
            "APP_DIR": self.app,
            "TESTS_DIR": self.tests,
            "SOLUTION_DIR": self.solution,
            "LOGS_DIR": self.logs,
            "HOME": self.home,
            "TMPDIR": self.tmp,
        }


class SandboxSpec(NamedTuple):
    """What a sandbox is for and what it may see.

    ``workspace`` is the host folder holding the starting source (local backend) and
    ``image`` the prepared image (docker backend); a backend uses the one it needs.
    ``tests``/``solution`` are host folders copied in only when given, so a coding
    sandbox never receives hidden tests. ``hidden`` lists host paths that must not be
    readable inside (the run directory, the task source, the cache root).
    """

    run_id: str
    attempt_id: str
    role: Role
    task: str
    workspace: Path | None = None
    image: str | None = None
    workdir: str = "/app"
    tests: Path | None = None
    solution: Path | None = None
    home: Path | None = None
    hidden: tuple[Path, ...] = ()
    #: host paths a harness's tools live in (e.g. the pinned CLI install), bound read-only
    #: at the same path when they would otherwise be unreachable; the docker backend
    #: ignores it because its coding image carries the tools
    readonly: tuple[Path, ...] = ()
    #: what the sandbox may reach beyond its own loopback (see :mod:`._egress`); every
    #: isolated sandbox has its own network namespace, never the host's
    egress: Egress = NO_EGRESS
    cpus: float | None = None
    memory_mb: int | None = None
    #: process and disk bounds (None: the defaults of :mod:`._limits`)
    pids: int | None = None
    storage_mb: int | None = None
    git_identity: tuple[str, str] = ("PluginBench Agent", "agent@pluginbench.invalid")


class ExecResult(NamedTuple):
    """How a command ended. ``exit_code`` is ``None`` when it was killed at its deadline."""

    exit_code: int | None
    timed_out: bool
    seconds: float
    stdout: bytes
    stderr: bytes
    #: every ``remove_after`` file was removed by the command's own launch, as the backend
    #: confirmed once nothing of the command was left running (``False``: not done or
    #: unsure; the caller removes them itself)
    removed: bool = False


class Sandbox(Protocol):
    """One fresh, owned sandbox. Methods may be called until :meth:`stop`; then only
    :meth:`export_workspace` and :meth:`get`."""

    paths: SandboxPaths
    base_commit: str
    isolated: bool

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
        """Run ``argv`` inside; kill the whole process tree at ``timeout`` seconds.

        ``egress=False``: the command does not need the sandbox's way out
        (``spec.egress``); a backend whose commands each have their own network (local
        bubblewrap) then gives it loopback only, one whose commands share the sandbox's
        network (docker) may ignore it. ``remove_after``: sandbox paths to ``rm -f`` once
        the command ended, in the same launch where the backend can (local bubblewrap);
        ``ExecResult.removed`` says whether that was done and confirmed, and when it is
        ``False`` the caller removes them itself.

        With ``dialogue`` (never together with ``stdin``) the command's stdin stays open
        and ``dialogue(channel)`` runs alongside it: it reads stdout lines and writes
        stdin as the command works (stdout still goes to ``stdout_path`` or
        ``ExecResult.stdout`` in full). An exception from it kills the command and is
        re-raised.

        With ``stdout_path``/``stderr_path`` the stream goes to that host file as it is
        produced (``ExecResult.stdout``/``stderr`` are then empty). Cancellation kills
        the process tree before re-raising.
        """
        ...

    async def put(self, host_path: Path, sandbox_path: str) -> None:
        """Copy a host file or folder in (modes kept, symlinks refused)."""
        ...

    async def get(self, sandbox_path: str, host_path: Path, *, limit: int | None = None) -> None:
        """Copy a file or folder out to the host; one over the sandbox's storage bound, or
        over ``limit`` bytes when that is smaller (apparent size: a sparse file counts in
        full), is refused with :class:`~pluginbench.errors.ResourceLimitHit` before anything
        is written on the host."""
        ...

    async def stop(self) -> None:
        """Stop every process in the sandbox and confirm they are gone."""
        ...

    async def export_workspace(self, host_path: Path) -> None:
        """Copy the working tree of ``paths.app`` out; only after :meth:`stop`."""
        ...


class Environment(Protocol):
    """A backend that makes sandboxes."""

    name: str

    async def check(self) -> None:
        """Raise :class:`~pluginbench.errors.EnvironmentFailure` when unusable."""
        ...

    def sandbox(self, spec: SandboxSpec) -> AbstractAsyncContextManager[Sandbox]:
        """A fresh sandbox for ``spec``; everything it owns is removed on exit."""
        ...

    async def stop_left_running(self, run_id: str) -> list[str]:
        """Stop what a killed worker of ``run_id`` left running (containers are stopped,
        never removed; local folders are removed); one description per thing."""
        ...


__all__ = [
    "AsyncIterator",
    "Dialogue",
    "Environment",
    "ExecResult",
    "LineChannel",
    "Role",
    "Sandbox",
    "SandboxPaths",
    "SandboxSpec",
]
