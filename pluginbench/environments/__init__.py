"""Execution environments: the sandbox port and its backends (``local``, ``docker``).

:func:`make_environment` picks a backend by name. The docker backend is imported only
when asked for, so the local backend works without aiodocker being importable.
"""

from __future__ import annotations

from typing import Any

from ._bwrap import bwrap_usable, find_bwrap
from ._dialogue import LineChannel
from ._gitbase import BASE_DATE, BASE_IDENTITY, BASE_MESSAGE, GIT_EXCLUDE
from ._local import LocalEnvironment, LocalSandbox, left_behind
from ._port import Environment, ExecResult, Role, Sandbox, SandboxPaths, SandboxSpec


def bwrap_available() -> bool:
    """Whether bubblewrap is on PATH and can create our sandboxes here (probed once)."""
    return bwrap_usable()


def make_environment(backend: str, **kwargs: Any) -> Environment:
    """The environment for ``backend`` ("local" or "docker") built with ``kwargs``."""
    if backend == "local":
        return LocalEnvironment(**kwargs)
    if backend == "docker":
        from ._docker import DockerEnvironment

        return DockerEnvironment(**kwargs)
    from ..errors import EnvironmentFailure

    raise EnvironmentFailure(f"unknown environment backend {backend!r}: use local or docker")


def cli_path_in_image(harness: str) -> str:
    """Where the coding image carries ``harness``'s pinned CLI (docker backend; imported
    only when asked for, like the backend itself)."""
    from ._docker_derived import cli_path_in_image as in_image

    return in_image(harness)


def list_left_running_sync(run_id: str) -> list[dict[str, str]]:
    """Running Docker containers labelled as ``run_id``'s (for ``status``); raises when
    Docker cannot be asked, so the caller can say it could not check."""
    import anyio

    from ._docker_containers import list_left_running

    infos = anyio.run(list_left_running, run_id, backend="asyncio")
    return [{"id": c.id, "name": c.name, "attempt": c.attempt} for c in infos]


__all__ = [
    "BASE_DATE",
    "BASE_IDENTITY",
    "BASE_MESSAGE",
    "GIT_EXCLUDE",
    "Environment",
    "ExecResult",
    "LineChannel",
    "LocalEnvironment",
    "LocalSandbox",
    "Role",
    "Sandbox",
    "SandboxPaths",
    "SandboxSpec",
    "bwrap_available",
    "bwrap_usable",
    "cli_path_in_image",
    "find_bwrap",
    "left_behind",
    "list_left_running_sync",
    "make_environment",
]
