"""The ``local`` backend: sandboxes on this machine, under bubblewrap when usable.

Its settings are the common ``environment.isolation`` and ``environment.allow_unisolated``;
it takes no ``environment.settings`` block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, EnvironmentFailure
from ._backend import Backend, LeftRunning
from ._bwrap import bwrap_failure, bwrap_usable

if TYPE_CHECKING:
    from ..config import Evaluation
    from ..tasks import HarborTask
    from ._local_env import LocalEnvironment


class LocalBackend(Backend):
    """A temp folder per sandbox with a private HOME; bubblewrap where usable."""

    name = "local"
    summary = "a temp folder per sandbox on this machine, under bubblewrap when usable"
    needs_workspace = True
    uses_images = False

    def environment(self, **options: Any) -> LocalEnvironment:
        from ._local_env import LocalEnvironment

        return LocalEnvironment(**options)

    def options(self, ev: Evaluation, run_id: str) -> dict[str, Any]:
        return {"isolation": self.isolation(ev)}

    def isolation(self, ev: Evaluation) -> str:
        """``bubblewrap`` when asked for or usable under ``auto``, else ``none``."""
        if ev.environment.isolation == "none" or not bwrap_usable():
            return "none"
        return "bubblewrap"

    def isolated(self, ev: Evaluation) -> bool:
        return self.isolation(ev) != "none"

    async def check_capacity(self, environment: Any, jobs: int, cpus: float | None,
                             memory_mb: int | None) -> None:
        """``jobs`` sandboxes at the default process limit fit under the kernel's
        ``pid_max`` (:func:`._limits.pids_fit`); :meth:`check_host` checked bubblewrap
        before the run was created."""
        from ._limits import DEFAULT_PIDS, pids_fit, read_pid_max

        pid_max = read_pid_max()
        problem = pids_fit(jobs, DEFAULT_PIDS, pid_max) if pid_max is not None else None
        if problem is not None:
            raise EnvironmentFailure(f"this host cannot hold {jobs} local sandboxes: {problem}")

    def check_host(self, ev: Evaluation, path: Path, tasks: Mapping[str, HarborTask]) -> None:
        """bubblewrap works when required, and a real agent is never silently unisolated."""
        from ..harness_registry import harness_class

        env = ev.environment
        has_bwrap = bwrap_usable()
        if env.isolation == "bubblewrap" and not has_bwrap:
            raise ConfigError(
                f"environment.isolation is bubblewrap but bwrap is not usable here ({bwrap_failure()})", file=str(path),
                field="environment.isolation", fix="install bubblewrap (apt-get install bubblewrap) or set isolation: auto",
            )
        unisolated = env.isolation == "none" or not has_bwrap
        if unisolated and harness_class(ev.runner.harness).real and not env.allow_unisolated:
            raise ConfigError(
                f"a real agent ({ev.runner.harness}) would run without a sandbox boundary", file=str(path),
                field="environment.allow_unisolated",
                fix="install bubblewrap, use environment.backend: docker, or set allow_unisolated: true "
                "(the evidence and report then label the run unisolated)",
            )

    def check_tools(self, ev: Evaluation, path: Path, tools: Sequence[Path]) -> None:
        """Sandboxes that run as a uid of their own (PluginBench as root, under bubblewrap)
        can read the tool folders ``tools`` (the agent CLI's): refused here, before a run
        folder exists, with the same words a sandbox's start would use."""
        from ._local_binds import unreadable_tool
        from ._local_paths import tool_folders
        from ._local_uid import drops

        if self.isolation(ev) != "bubblewrap" or not drops():
            return
        found = unreadable_tool(tool_folders(tools))
        if found is not None:
            raise ConfigError(f"the local backend cannot start its sandboxes: {found[0]}", file=str(path),
                              field="runner.harness", fix=found[1])

    def left_running(self, run_id: str) -> LeftRunning:
        """Sandbox folders a killed worker left (resume removes them; no command needed)."""
        from ._local_paths import left_behind

        return LeftRunning(folders=[str(f) for f in left_behind(run_id)])


__all__ = ["LocalBackend"]
