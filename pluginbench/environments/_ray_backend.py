"""The ``ray`` backend's registration: its settings, host checks, capacity and identity.

The sandboxes themselves are :mod:`._ray` (head side) and :mod:`._ray_node` (worker side).
``ray`` is imported only when a run selects this backend.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import msgspec

from ..errors import ConfigError, EnvironmentFailure, HostRootEngine, TaskError
from ._backend import Backend
from ._docker_userns import FIX, OPT_OUT, host_root_problem
from ._ray import DEFAULT_LABEL, RayEnvironment

if TYPE_CHECKING:
    from ..config import Evaluation
    from ..harness_registry import CliPin
    from ..tasks import HarborTask
    from ._port import Environment

#: The most coding sandboxes one node runs at once, as ``jobs`` is bounded on one machine.
MAX_NODE_JOBS = 4


class RayNodeSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Settings of one worker node, by its label value."""

    #: coding sandboxes this node runs at once (0 takes it out); default: the evaluation's ``jobs``
    jobs: int | None = None
    #: docker sandboxes: this node's own Docker Engine (``unix:///...``); default: the node's
    #: ``DOCKER_HOST``, else ``/var/run/docker.sock``
    docker_host: str | None = None


class RaySettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``environment.settings`` of the ray backend."""

    #: the cluster to join: ``host:port`` of the head's GCS, or ``auto`` (``RAY_ADDRESS`` /
    #: the cluster started on this machine with ``ray start --head``)
    address: str = "auto"
    #: the node label whose value names a worker node that takes attempts
    node_label: str = DEFAULT_LABEL
    #: per-node settings by label value
    nodes: dict[str, RayNodeSettings] = {}
    #: bubblewrap sandboxes on each node: bubblewrap (required), none, or auto (bubblewrap where usable)
    isolation: Literal["auto", "bubblewrap", "none"] = "bubblewrap"
    #: what a sandbox on a node is: ``bubblewrap`` (the node's local sandbox) or ``docker``
    #: (a container on the node's own Docker Engine, from task images the head prepared and
    #: froze by ID, loaded on the node from the head's export)
    sandbox: Literal["bubblewrap", "docker"] = "bubblewrap"
    #: docker sandboxes: the head's Docker Engine, where task images are prepared and frozen
    #: (``unix:///...``); default ``DOCKER_HOST``, else ``/var/run/docker.sock``
    docker_host: str | None = None


class RayBackend(Backend):
    """Attempts' sandboxes on the worker nodes of an existing Ray cluster."""

    name = "ray"
    summary = ("sandboxes on the worker nodes of a Ray cluster (jobs per node; bubblewrap, or with "
               "`settings.sandbox: docker` containers from frozen task images on each node's own engine); "
               "the Supervisor stays on this machine")
    settings_type = RaySettings

    def environment(self, **options: Any) -> "Environment":
        return RayEnvironment(**options)

    def for_evaluation(self, ev: "Evaluation") -> Backend:
        """Docker sandboxes make it a backend with task images (:class:`RayDockerBackend`)."""
        try:
            s: RaySettings = self.settings(ev)
        except ConfigError:
            return self  # validate() reports it
        return _RAY_DOCKER if s.sandbox == "docker" else self

    def options(self, ev: "Evaluation", run_id: str) -> dict[str, Any]:
        s: RaySettings = self.settings(ev)
        return {"address": s.address, "label": s.node_label, "jobs": ev.jobs,
                "nodes": {name: n.jobs for name, n in s.nodes.items() if n.jobs is not None},
                "isolation": s.isolation, "run_id": run_id, "sandbox": s.sandbox, "docker_host": s.docker_host,
                "docker_hosts": {name: n.docker_host for name, n in s.nodes.items() if n.docker_host},
                **({"allow_host_root": True} if ev.environment.allow_host_root else {})}

    def validate(self, ev: "Evaluation", path: Path | str) -> None:
        s: RaySettings = self.settings(ev, path)
        for host, field in [(s.docker_host, "environment.settings.docker_host"),
                            *((n.docker_host, f"environment.settings.nodes.{name}.docker_host")
                              for name, n in sorted(s.nodes.items()))]:
            if host is not None and (not host.startswith("unix://") or len(host) <= len("unix://")):
                raise ConfigError(f"docker_host {host!r} is not a local Unix socket", file=str(path), field=field,
                                  fix="use unix:///path/to/docker.sock (or leave it out for the default)")
        for name, node in sorted(s.nodes.items()):
            if node.jobs is not None and not 0 <= node.jobs <= MAX_NODE_JOBS:
                raise ConfigError(
                    f"node {name!r} has jobs {node.jobs}", file=str(path), field=f"environment.settings.nodes.{name}.jobs",
                    fix=f"use 0 (the node takes no attempts) to {MAX_NODE_JOBS}",
                )

    def check_host(self, ev: "Evaluation", path: Path, tasks: "Mapping[str, HarborTask]") -> None:
        """The cluster answers and has at least one worker node that can make sandboxes."""
        env = self.make(ev, "check")
        try:
            anyio.run(env.check, backend="asyncio")
        except EnvironmentFailure as exc:
            raise ConfigError(
                f"environment.backend is ray but {exc}", file=str(path), field="environment.settings.address",
                fix="start the cluster (ray start --head, then ray start --address=<head> "
                    f"--labels={self.settings(ev).node_label}=<name> on each worker) or fix the address",
            ) from None

    async def check_capacity(self, environment: "Environment", jobs: int, cpus: float | None,
                             memory_mb: int | None) -> None:
        """Per node, before anything starts: its jobs × the task limits fit its CPUs and
        memory, and it can make sandboxes. Refuses; never lowers ``jobs``."""
        assert isinstance(environment, RayEnvironment)
        described = await environment.describe()
        if not described:
            raise EnvironmentFailure(f"no live worker node is labelled {environment.label}")
        problems = capacity_problems(described, cpus, memory_mb)
        if problems:
            raise EnvironmentFailure("per-node capacity check failed: " + "; ".join(problems))

    def isolation(self, ev: "Evaluation") -> str:
        s: RaySettings = self.settings(ev)
        return "ray-docker" if s.sandbox == "docker" else f"ray-{s.isolation}"

    def isolated(self, ev: "Evaluation") -> bool:
        s: RaySettings = self.settings(ev)
        return s.sandbox == "docker" or s.isolation == "bubblewrap"

    def readiness_key(self, ev: "Evaluation") -> list[str]:
        return [self.name, self.isolation(ev)]


class RayDockerBackend(RayBackend):
    """``backend: ray`` with ``settings.sandbox: docker``: containers on each worker node's
    own Docker Engine, from task images the head prepared and froze by ID (what
    :func:`~pluginbench.environments.backend_of` returns for such an evaluation)."""

    needs_workspace = False
    uses_images = True
    task_settings = frozenset({"environment.docker_image", "verifier.environment.docker_image"})

    def for_evaluation(self, ev: "Evaluation") -> Backend:
        return RayBackend().for_evaluation(ev)

    def check_host(self, ev: "Evaluation", path: Path, tasks: "Mapping[str, HarborTask]") -> None:
        """The head's Docker Engine answers and holds every published image a task names
        (images are prepared there), then the cluster's checks."""
        from ._docker import DockerEnvironment

        s: RaySettings = self.settings(ev)
        head = DockerEnvironment(docker_host=s.docker_host, allow_host_root=ev.environment.allow_host_root)
        try:
            anyio.run(head.check, backend="asyncio")
        except HostRootEngine:
            raise ConfigError(f"on the head: {host_root_problem('none', False)}", file=str(path),
                              field="environment.allow_host_root",
                              fix=f"{FIX}, {OPT_OUT}") from None
        except EnvironmentFailure as exc:
            raise ConfigError(
                f"ray docker sandboxes prepare task images on the head, but {exc}", file=str(path),
                field="environment.settings.docker_host",
                fix="start a Docker engine on this machine (tools/start-docker.sh) or point docker_host at one",
            ) from None
        for task in tasks.values():
            for ref, field in ((task.docker_image, "environment.docker_image"),
                               (task.verifier_docker_image, "verifier.environment.docker_image")):
                if ref and not anyio.run(head.has_images, ref, backend="asyncio"):
                    raise TaskError(
                        f"task '{task.id}': image {ref!r} is not on the head's Docker engine (PluginBench never pulls)",
                        file=str(task.root / "task.toml"), field=field,
                        fix=f"docker pull {ref} (or load or build it) on this machine, then run again",
                    )
        super().check_host(ev, path, tasks)

    def cli_path(self, cli: "CliPin", host_path: str | Path) -> str | Path:
        """The coding image carries the pinned CLI at a fixed path, as on the docker backend."""
        from ._docker_derived import cli_path_in_image

        return cli_path_in_image(cli)


_RAY_DOCKER = RayDockerBackend()


def capacity_problems(described: list[dict[str, Any]], cpus: float | None, memory_mb: int | None) -> list[str]:
    """What does not fit on each node (pure): its sandboxes' CPUs and memory at ``jobs``
    at once, and whether it can make sandboxes at all."""
    problems = []
    for d in described:
        if d.get("problem"):
            problems.append(f"node {d['node']}: {d['problem']}")
        if cpus is not None and d.get("cpus") is not None and d["jobs"] * cpus > d["cpus"]:
            problems.append(f"node {d['node']}: jobs {d['jobs']} × {cpus:g} CPUs > its {d['cpus']} CPUs")
        if memory_mb is not None and d.get("memory_mb") is not None and d["jobs"] * memory_mb > d["memory_mb"]:
            problems.append(f"node {d['node']}: jobs {d['jobs']} × {memory_mb} MB > its {d['memory_mb']} MB")
    return problems


__all__ = ["RayBackend", "RayDockerBackend", "RayNodeSettings", "RaySettings", "capacity_problems"]
