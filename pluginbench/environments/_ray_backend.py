"""The ``ray`` backend's registration: its settings, host checks, capacity and identity.

The sandboxes themselves are :mod:`._ray` (head side) and :mod:`._ray_node` (worker side).
``ray`` is imported only when a run selects this backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import msgspec

from ..errors import ConfigError, EnvironmentFailure
from ._backend import Backend
from ._ray import DEFAULT_LABEL, RayEnvironment

if TYPE_CHECKING:
    from ..config import Evaluation
    from ..tasks import HarborTask
    from ._port import Environment

#: The most coding sandboxes one node runs at once, as ``jobs`` is bounded on one machine.
MAX_NODE_JOBS = 4


class RayNodeSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Settings of one worker node, by its label value."""

    #: coding sandboxes this node runs at once (0 takes it out); default: the evaluation's ``jobs``
    jobs: int


class RaySettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``environment.settings`` of the ray backend."""

    #: the cluster to join: ``host:port`` of the head's GCS, or ``auto`` (``RAY_ADDRESS`` /
    #: the cluster started on this machine with ``ray start --head``)
    address: str = "auto"
    #: the node label whose value names a worker node that takes attempts
    node_label: str = DEFAULT_LABEL
    #: per-node settings by label value
    nodes: dict[str, RayNodeSettings] = {}
    #: sandboxes on each node: bubblewrap (required), none, or auto (bubblewrap where usable)
    isolation: Literal["auto", "bubblewrap", "none"] = "bubblewrap"


class RayBackend(Backend):
    """Attempts' sandboxes on the worker nodes of an existing Ray cluster."""

    name = "ray"
    summary = "sandboxes on the worker nodes of a Ray cluster (jobs per node); the Supervisor stays on this machine"
    settings_type = RaySettings

    def environment(self, **options: Any) -> Environment:
        return RayEnvironment(**options)

    def options(self, ev: Evaluation, run_id: str) -> dict[str, Any]:
        s: RaySettings = self.settings(ev)
        return {"address": s.address, "label": s.node_label, "jobs": ev.jobs,
                "nodes": {name: n.jobs for name, n in s.nodes.items()}, "isolation": s.isolation,
                "run_id": run_id}

    def validate(self, ev: Evaluation, path: Path | str) -> None:
        s: RaySettings = self.settings(ev, path)
        for name, node in sorted(s.nodes.items()):
            if not 0 <= node.jobs <= MAX_NODE_JOBS:
                raise ConfigError(
                    f"node {name!r} has jobs {node.jobs}", file=str(path), field=f"environment.settings.nodes.{name}.jobs",
                    fix=f"use 0 (the node takes no attempts) to {MAX_NODE_JOBS}",
                )

    def check_host(self, ev: Evaluation, path: Path, tasks: Mapping[str, HarborTask]) -> None:
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

    async def check_capacity(self, environment: Environment, jobs: int, cpus: float | None,
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

    def isolation(self, ev: Evaluation) -> str:
        return f"ray-{self.settings(ev).isolation}"

    def isolated(self, ev: Evaluation) -> bool:
        s: RaySettings = self.settings(ev)
        return s.isolation == "bubblewrap"

    def readiness_key(self, ev: Evaluation) -> list[str]:
        return [self.name, self.isolation(ev)]


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


__all__ = ["RayBackend", "RayNodeSettings", "RaySettings", "capacity_problems"]
