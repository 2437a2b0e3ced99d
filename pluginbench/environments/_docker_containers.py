"""Containers the docker backend owns: labels, confirmed stop, removal, left-running.

Every container PluginBench makes carries ``pluginbench.owner=pluginbench`` and its run's
``pluginbench.run``; nothing here touches a container without both. Resume stops (never
removes) the running ones of its run and removes the ones no longer running (exited or never
started: a kill left them); ``status`` lists the running ones with a ``docker stop`` command.
"""

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

import aiodocker
import anyio

from ..errors import EnvironmentFailure
from ._docker_engine import engine

OWNER = "pluginbench"
LABEL_OWNER, LABEL_RUN = "pluginbench.owner", "pluginbench.run"
LABEL_ATTEMPT, LABEL_ROLE, LABEL_TASK = (
    "pluginbench.attempt",
    "pluginbench.role",
    "pluginbench.task",
)
STOP_GRACE_SECONDS = 10
_CONFIRM_SECONDS = 15.0


class ContainerInfo(NamedTuple):
    """A running container of a run, as resume and status report it."""

    id: str
    name: str
    attempt: str


async def stop_confirmed(container: Any) -> None:
    """`docker stop` then poll inspect until `State.Running` is false (or the container is gone)."""
    cid = container.id[:12]
    try:
        await container.stop(t=STOP_GRACE_SECONDS)
    except aiodocker.DockerError as exc:
        if exc.status not in (304, 404):  # 304: already stopped
            raise EnvironmentFailure(f"docker stop {cid} failed: {exc.message}") from exc
    with anyio.move_on_after(_CONFIRM_SECONDS):
        while True:
            try:
                state = (await container.show())["State"]
            except aiodocker.DockerError as exc:
                if exc.status == 404:
                    return
                raise EnvironmentFailure(f"cannot inspect container {cid}: {exc.message}") from exc
            if not state.get("Running"):
                return
            await anyio.sleep(0.05)
    raise EnvironmentFailure(f"container {cid} still reports State.Running after docker stop")


async def remove_container(container: Any) -> None:
    """Force-remove a container this process created (`None`: nothing to remove)."""
    if container is None:
        return
    try:
        await container.delete(force=True, v=True)
    except aiodocker.DockerError as exc:
        if exc.status != 404:
            raise EnvironmentFailure(
                f"cannot remove container {container.id[:12]}: {exc.message}"
            ) from exc


async def list_left_running(run_id: str, docker_host: str | None = None) -> list[ContainerInfo]:
    """Running containers labelled as ours and as ``run_id``'s, sorted by name."""
    async with engine(docker_host) as docker:
        return [info for info, _ in await _running(docker, run_id)]


async def _running(docker: aiodocker.Docker, run_id: str) -> list[tuple[ContainerInfo, Any]]:
    filters = {"label": [f"{LABEL_OWNER}={OWNER}", f"{LABEL_RUN}={run_id}"], "status": ["running"]}
    found = await docker.containers.list(filters=json.dumps(filters))
    out = []
    for c in found:
        names = _field(c, "Names") or []
        labels = _field(c, "Labels") or {}
        name = (names[0] if names else c.id[:12]).lstrip("/")
        out.append((ContainerInfo(c.id, name, str((labels or {}).get(LABEL_ATTEMPT, ""))), c))
    return sorted(out, key=lambda pair: pair[0].name)


def _field(container: Any, key: str) -> Any:
    try:
        return container[key]
    except KeyError:
        return None


async def stop_left_running(run_id: str, docker_host: str | None = None) -> list[ContainerInfo]:
    """``docker stop`` (never remove) every running container of ``run_id``; the ones stopped."""
    async with engine(docker_host) as docker:
        running = await _running(docker, run_id)
        with anyio.CancelScope(shield=True):
            for _, container in running:
                await stop_confirmed(container)
        return [info for info, _ in running]


async def remove_left_stopped(run_id: str, docker_host: str | None = None) -> list[ContainerInfo]:
    """Force-remove every container of ``run_id`` that is not running (exited, dead, or
    created and never started): a kill left them, their attempts were settled from the
    log, and they hold no evidence the run still needs. Only the resume calls this,
    holding run.lock, so no process of the run is using them."""
    filters = {"label": [f"{LABEL_OWNER}={OWNER}", f"{LABEL_RUN}={run_id}"], "status": ["exited", "dead", "created"]}
    async with engine(docker_host) as docker:
        found = await docker.containers.list(all=True, filters=json.dumps(filters))
        removed = []
        with anyio.CancelScope(shield=True):
            for c in found:
                names = _field(c, "Names") or []
                labels = _field(c, "Labels") or {}
                await remove_container(c)
                removed.append(ContainerInfo(c.id, (names[0] if names else c.id[:12]).lstrip("/"),
                                             str(labels.get(LABEL_ATTEMPT, ""))))
        return sorted(removed, key=lambda i: i.name)


def stop_command(containers: Sequence[ContainerInfo]) -> str | None:
    """The ``docker stop`` command status shows for left-running containers, or ``None``."""
    return "docker stop " + " ".join(c.id[:12] for c in containers) if containers else None


__all__ = [
    "ContainerInfo",
    "list_left_running",
    "remove_left_stopped",
    "stop_command",
    "stop_left_running",
]
