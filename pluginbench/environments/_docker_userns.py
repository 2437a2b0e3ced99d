"""Whose uid a container's root is: the engine's user namespace, and the rule that refuses
an engine whose container root is the host's root.

Every docker sandbox runs its internal steps (and, with most task images, the agent and the
verifier) as uid 0 in the container, Harbor's semantics. Without user-namespace remapping
that uid 0 *is* the host's uid 0: the sandbox shares root's per-user kernel counters with
every root process of the host (128 inotify instances per user: a sandbox that holds them
leaves dockerd none) and owns, as root, anything that leaks through a bind. With
``dockerd --userns-remap`` (or a rootless engine) container uid 0 is an unprivileged host uid.

:func:`user_namespace` reads it from the engine's ``SecurityOptions`` (``name=userns``,
``name=rootless``; Docker reports them exactly when it maps users, and PluginBench never
asks a container for the host's namespace, ``UsernsMode: host``).
:func:`host_root_problem` is the pure rule; :func:`probe_root_uid` reads
``/proc/self/uid_map`` in a throwaway container, the ground truth the tests check the
engine's word against.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..errors import EnvironmentFailure

if TYPE_CHECKING:
    import aiodocker

UserNamespace = Literal["userns", "rootless", "none"]

#: what a user is told to do about an engine whose container root is the host's root
FIX = ("start dockerd with --userns-remap=default (tools/start-docker.sh does; with "
       "PLUGINBENCH_DOCKER_RESTART=1 it restarts a running engine when it can), or use rootless Docker")
OPT_OUT = "or accept the host's root with environment.allow_host_root: true"


def user_namespace(info: Mapping[str, Any]) -> UserNamespace:
    """``rootless``, ``userns`` (remapped) or ``none`` from the engine's ``docker info`` (pure)."""
    names = set()
    for option in info.get("SecurityOptions") or ():
        for part in str(option).split(","):
            key, _, value = part.partition("=")
            if key == "name":
                names.add(value)
    if "rootless" in names:
        return "rootless"
    if "userns" in names:
        return "userns"
    return "none"


def host_root_problem(namespace: str, allowed: bool) -> str | None:
    """Why sandboxes must not start on an engine whose user namespace is ``namespace``,
    or ``None`` when they may (pure). ``allowed`` is ``environment.allow_host_root``. The
    problem only: callers add :data:`FIX` (and :data:`OPT_OUT` where the setting can change)."""
    if namespace != "none" or allowed:
        return None
    return ("the Docker engine runs containers without user-namespace remapping, so uid 0 in "
            "every sandbox is the host's root (sharing root's per-user kernel limits with the "
            "host, dockerd included)")


def host_root_warning(namespace: str) -> str | None:
    """The warning ``check`` and ``run`` print when an engine maps container root to the
    host's root and ``environment.allow_host_root`` accepted it (pure)."""
    if namespace != "none":
        return None
    return ("warning: sandboxes run as the host's root (the Docker engine has no user-namespace "
            "remapping; environment.allow_host_root: true accepts it); " + FIX)


def host_uid_of_root(uid_map: str) -> int | None:
    """The host uid that uid 0 of a process's user namespace is, from its ``/proc/self/uid_map`` (pure)."""
    for line in uid_map.splitlines():
        fields = line.split()
        if len(fields) != 3 or not all(f.isdigit() for f in fields):
            continue
        inside, outside, count = (int(f) for f in fields)
        if inside <= 0 < inside + count:
            return outside - inside
    return None


async def probe_root_uid(docker: aiodocker.Docker, image: str) -> int | None:
    """The host uid of root in a container from ``image`` made as sandboxes are (no network,
    no capability), read from ``/proc/self/uid_map``; the container is removed."""
    import aiodocker
    config: dict[str, Any] = {"Image": image, "Entrypoint": ["cat", "/proc/self/uid_map"], "Cmd": [],
              "HostConfig": {"NetworkMode": "none", "CapDrop": ["ALL"], "SecurityOpt": ["no-new-privileges"]}}
    try:
        container = await docker.containers.create(config)
    except aiodocker.DockerError as exc:
        raise EnvironmentFailure(f"cannot probe the container uid map with {image}: {exc.message}") from exc
    try:
        await container.start()
        await container.wait(timeout=60)
        text = "".join(await container.log(stdout=True))
    finally:
        await container.delete(force=True)
    return host_uid_of_root(text)


__all__ = ["FIX", "OPT_OUT", "UserNamespace", "host_root_problem", "host_root_warning", "host_uid_of_root",
           "probe_root_uid", "user_namespace"]
