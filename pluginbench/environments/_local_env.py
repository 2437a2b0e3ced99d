"""The local backend's environment: it makes, pre-starts and sweeps :class:`~._local.LocalSandbox` folders.

``sandbox(spec)`` makes a fresh populated sandbox (see :mod:`._local` for what one is and
how its commands run) or takes the one :meth:`LocalEnvironment.prestart` made for exactly
that spec (:mod:`._local_warm`); ``stop_left_running`` removes what a killed worker left.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from ..errors import EnvironmentFailure
from . import _bwrap, _limits, _local_uid, _proctree
from ._egress import EgressProxy
from ._local import Isolation, LocalSandbox
from ._local_binds import uid_problem
from ._local_paths import _rmtree, _safe_name, left_behind, tool_folders
from ._local_warm import WarmSandboxes, room_for
from ._port import SandboxSpec


class LocalEnvironment:
    """Sandboxes on this machine; ``isolation`` picks bubblewrap, none, or ``auto``."""

    name = "local"

    def __init__(self, isolation: Isolation = "auto", root: Path | None = None) -> None:
        if isolation not in ("auto", "bubblewrap", "none"):
            raise EnvironmentFailure(
                f"unknown isolation {isolation!r}: use auto, bubblewrap or none"
            )
        self.isolation: Isolation = isolation
        self.root = Path(root) if root is not None else None
        self._warm = WarmSandboxes()  # grading sandboxes made while the agent codes; see prestart()

    def _bwrap_executable(self) -> str | None:
        """The bwrap to use, ``None`` for unisolated; raises when bubblewrap is required."""
        if self.isolation == "none":
            return None
        executable = _bwrap.find_bwrap()
        failure = _bwrap.bwrap_failure(executable)
        if failure is None:
            return executable
        if self.isolation == "bubblewrap":
            why = (
                "not on PATH"
                if executable is None
                else f"{executable} cannot create a sandbox here"
                + f" with its own network namespace ({failure})"
            )
            raise EnvironmentFailure(
                f"isolation=bubblewrap but bwrap is {why}"
                + "; install bubblewrap (apt-get install bubblewrap) or allow user namespaces"
            )
        return None

    async def check(self) -> None:
        """Raise :class:`EnvironmentFailure` when bubblewrap is required but unusable, or git is missing."""
        if shutil.which("git") is None:
            raise EnvironmentFailure("git is not on PATH; the local backend needs it")
        await anyio.to_thread.run_sync(lambda: self._bwrap_executable())

    async def stop_left_running(self, run_id: str) -> list[str]:
        """Remove sandbox folders a killed worker of ``run_id`` left behind; their names.

        Only folders named by this backend for that run (``pluginbench-<run>-...``) are
        touched. Processes still running in an unisolated one (found by its ``APP_DIR``)
        are killed first; bubblewrap's ``--die-with-parent`` already ended the others.
        Call it only while holding the run's lock.
        """
        def sweep() -> list[str]:
            removed: list[str] = []
            for folder in left_behind(run_id, self.root):
                pids = _proctree.marked(f"APP_DIR={folder / 'app'}".encode())
                if pids:
                    _proctree.kill_trees(pids)
                _rmtree(folder)
                removed.append(f"sandbox folder {folder}")
            prefix = f"pluginbench-{_safe_name(run_id)}-"
            removed += [f"sandbox cgroup {c}" for c in _limits.remove_left_behind(prefix)]
            return removed

        return await anyio.to_thread.run_sync(sweep)

    @property
    def isolated(self) -> bool:
        """Whether sandboxes made now would run under bubblewrap."""
        return self._bwrap_executable() is not None

    def _parent(self) -> Path:
        """The folder this environment makes its sandboxes in (made when missing)."""
        parent = self.root if self.root is not None else Path(tempfile.gettempdir())
        parent.mkdir(parents=True, exist_ok=True)
        return parent

    async def _made(self, spec: SandboxSpec) -> LocalSandbox:
        """A fresh, populated :class:`LocalSandbox` of ``spec`` (removed again on a failure or cancel)."""
        bwrap = await anyio.to_thread.run_sync(self._bwrap_executable)
        if bwrap is not None:
            conflict = _bwrap.workdir_conflict(
                spec.workdir, _bwrap.host_top_level(), tool_folders(spec.readonly)
            )
            if conflict:
                raise EnvironmentFailure(conflict)
        parent = self._parent()
        problem = uid_problem(tool_folders(spec.readonly)) if bwrap and _local_uid.drops() else None
        if problem is not None:
            raise EnvironmentFailure(problem)
        prefix = "-".join(
            ["pluginbench", *(_safe_name(x) for x in (spec.run_id, spec.attempt_id, spec.role))]
        )
        root = await anyio.to_thread.run_sync(_local_uid.make_folder, parent, prefix, bool(bwrap) and _local_uid.drops())
        box = LocalSandbox(root, spec, bwrap)
        try:
            if bwrap is not None and spec.egress.active:
                box.egress = await anyio.to_thread.run_sync(EgressProxy, spec.egress)
            await box._populate()
        except BaseException as exc:
            await _closed(box, exc)
            raise
        return box

    @asynccontextmanager
    async def sandbox(self, spec: SandboxSpec) -> AsyncIterator[LocalSandbox]:
        """A fresh :class:`LocalSandbox`; its folder and processes are gone on exit.

        When :meth:`prestart` made this attempt's sandbox for exactly ``spec`` (nothing has
        run in it), that one is taken instead of making one; any other pre-started
        sandbox of the attempt and role is removed first."""
        box = await self._warm.take(spec) or await self._made(spec)
        try:
            yield box
        except BaseException as exc:
            await _closed(box, exc)
            raise
        else:
            with anyio.CancelScope(shield=True):
                await box._close()

    # -- pre-started sandboxes (a grading sandbox made while the agent codes) ----------

    async def prestart(self, spec: SandboxSpec) -> bool:
        """Make the fresh sandbox a later :meth:`sandbox` of exactly ``spec`` takes (an
        attempt's grading sandbox, made while its agent codes); whether one was made.
        See :mod:`._local_warm`: only under bubblewrap, and only when the disk keeps the
        agent's whole storage bound free after it; a failure or cancel removes what was
        made and raises; :meth:`discard_prestarted` removes one no grading took."""
        if await anyio.to_thread.run_sync(self._bwrap_executable) is None:
            return False
        bound = _limits.limits_of(None, None, None, spec.storage_mb).storage_mb * 1024 * 1024
        if not await anyio.to_thread.run_sync(room_for, spec, self._parent(), bound):
            return False
        await self.discard_prestarted(spec.run_id, spec.attempt_id, spec.role)
        self._warm.keep(spec, await self._made(spec))
        return True

    def prestarted(self, run_id: str) -> list[Path]:
        """The folders of the pre-started sandboxes of ``run_id`` not yet taken or removed."""
        return self._warm.folders(run_id)

    async def discard_prestarted(self, run_id: str, attempt_id: str | None = None,
                                 role: str | None = None) -> list[Path]:
        """Remove the pre-started sandboxes of ``run_id`` (of one attempt, and role, when
        given) that no sandbox took, with their mount namespaces and cgroups; their
        folders. Shielded from cancellation."""
        return await self._warm.discard(run_id, attempt_id, role)


async def _closed(box: LocalSandbox, exc: BaseException) -> None:
    """Close ``box`` (shielded) on the way out of ``exc``; a cleanup failure is noted on ``exc``."""
    with anyio.CancelScope(shield=True):
        try:
            await box._close()
        except Exception as cleanup:  # keep the original error; say cleanup failed too
            exc.add_note(f"sandbox cleanup also failed: {cleanup}")
