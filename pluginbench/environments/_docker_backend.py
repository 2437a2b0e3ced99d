"""The ``docker`` backend: one labelled container per sandbox on a local Docker engine.

Its settings are the common ``environment.container_cpus`` and
``environment.container_memory_mb`` (else the tasks' own declarations) and
``environment.allow_host_root`` (an engine without user-namespace remapping is refused
unless it is true; :mod:`._docker_userns`); it takes no ``environment.settings`` block. aiodocker is imported only when the backend is used.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, EnvironmentFailure, RunDirError, TaskError
from ._backend import Backend, LeftRunning
from ._docker_userns import FIX, OPT_OUT, host_root_problem, host_root_warning

if TYPE_CHECKING:
    from ..config import Evaluation
    from ..harness_registry import CliPin
    from ..tasks import HarborTask
    from ._docker import DockerEnvironment
    from ._port import Environment


class DockerBackend(Backend):
    """Containers from frozen image IDs; the verifier in its own container."""

    name = "docker"
    summary = "one labelled container per sandbox on a local Docker engine (aiodocker)"
    task_settings = frozenset({"environment.docker_image", "verifier.environment.docker_image"})
    needs_workspace = False
    uses_images = True

    def environment(self, **options: Any) -> DockerEnvironment:
        from ._docker import DockerEnvironment

        return DockerEnvironment(**options)

    def options(self, ev: Evaluation, run_id: str) -> dict[str, Any]:
        return {"run_id": run_id, "allow_host_root": ev.environment.allow_host_root}

    def validate(self, ev: Evaluation, path: Path | str) -> None:
        super().validate(ev, path)
        env = ev.environment
        if env.container_cpus is not None and env.container_cpus <= 0:
            raise ConfigError("container_cpus must be positive", file=str(path),
                              field="environment.container_cpus", fix="set e.g. 2")
        if env.container_memory_mb is not None and env.container_memory_mb <= 0:
            raise ConfigError("container_memory_mb must be positive", file=str(path),
                              field="environment.container_memory_mb", fix="set e.g. 4096")

    def check_host(self, ev: Evaluation, path: Path, tasks: Mapping[str, HarborTask]) -> None:
        """Docker answers with Linux containers, the tasks agree on container limits,
        ``jobs`` containers fit, and every image a task names is on the engine."""
        import anyio

        env = ev.environment
        for key, field in (("cpus", "container_cpus"), ("memory_mb", "container_memory_mb")):
            declared = {getattr(t, key) for t in tasks.values()}
            if getattr(env, field) is None and len(declared) > 1:
                raise ConfigError(
                    f"the tasks declare different {key} ({', '.join(sorted(str(d) for d in declared))})",
                    file=str(path), field=f"environment.{field}",
                    fix=f"set a common environment.{field} that covers every task",
                )
        docker = self.environment(allow_host_root=env.allow_host_root)
        try:
            info = anyio.run(docker.info, backend="asyncio")
            problem = host_root_problem(info.user_namespace, env.allow_host_root)
            if problem is not None:
                raise ConfigError(problem, file=str(path), field="environment.allow_host_root",
                                  fix=f"{FIX}, {OPT_OUT}")
            anyio.run(docker.check, backend="asyncio")
        except EnvironmentFailure as exc:
            raise ConfigError(
                f"environment.backend is docker but {exc}", file=str(path), field="environment.backend",
                fix="start an engine (tools/start-docker.sh) or use backend: local",
            ) from None
        warning = host_root_warning(info.user_namespace)
        if warning is not None:
            print(warning, file=sys.stderr, flush=True)
        cpus = env.container_cpus if env.container_cpus is not None else next((t.cpus for t in tasks.values() if t.cpus), None)
        memory = env.container_memory_mb if env.container_memory_mb is not None else next(
            (t.memory_mb for t in tasks.values() if t.memory_mb), None)
        try:
            anyio.run(docker.check_capacity, ev.jobs, cpus, memory, backend="asyncio")
        except EnvironmentFailure as exc:
            text = str(exc)
            fields = [f for f, word in (("environment.container_cpus", " CPUs"), ("environment.container_memory_mb", " MB"))
                      if word in text] or ["jobs"]
            raise ConfigError(
                text, file=str(path), field=", ".join(fields),
                fix="lower jobs or the container limits (they are never lowered for you), or give Docker more resources",
            ) from None
        for task in tasks.values():
            for ref, field in ((task.docker_image, "environment.docker_image"),
                               (task.verifier_docker_image, "verifier.environment.docker_image")):
                if ref and not anyio.run(docker.has_images, ref, backend="asyncio"):
                    raise TaskError(
                        f"task '{task.id}': image {ref!r} is not on this Docker engine (PluginBench never pulls)",
                        file=str(task.root / "task.toml"), field=field,
                        fix=f"docker pull {ref} (or load or build it), then run again",
                    )

    def refuse_runtime(self, ev: Evaluation, runtime: Mapping[str, str], path: Path) -> None:
        """An engine that now maps container root to the host's root, unless the run's
        ``environment.allow_host_root`` accepts it (an engine that did not answer is not judged)."""
        namespace = runtime.get("engine_user_namespace")
        problem = host_root_problem(namespace, ev.environment.allow_host_root) if namespace else None
        if problem is not None:
            raise RunDirError(problem, file=str(path), field="run.started.runtime.engine_user_namespace",
                              fix=f"{FIX}, then resume (the run's settings are frozen)")

    def sandbox_root(self, ev: Evaluation) -> str | None:
        """The engine's user namespace: ``userns``, ``rootless`` or ``none`` (the host's root)."""
        import anyio

        return str(anyio.run(self.environment().info, backend="asyncio").user_namespace)

    async def check_capacity(self, environment: Environment, jobs: int, cpus: float | None,
                             memory_mb: int | None) -> None:
        """Engine reachable, Linux containers, and ``jobs`` containers fit (never lowered)."""
        await environment.check()
        await environment.check_capacity(jobs, cpus, memory_mb)  # type: ignore[attr-defined]  # DockerEnvironment's own

    def cli_path(self, cli: CliPin, host_path: str | Path) -> str | Path:
        """The coding image carries the same pinned install at a fixed path."""
        from ._docker_derived import cli_path_in_image

        return cli_path_in_image(cli)

    def left_running(self, run_id: str) -> LeftRunning:
        """Running containers labelled as ``run_id``'s, with the ``docker stop`` command;
        raises when the engine cannot be asked."""
        import anyio

        from ._docker_containers import list_left_running

        infos = anyio.run(list_left_running, run_id, backend="asyncio")
        return LeftRunning(containers=[{"id": c.id, "name": c.name, "attempt": c.attempt} for c in infos],
                           stop_command=("docker stop " + " ".join(c.id for c in infos)) if infos else None)


__all__ = ["DockerBackend"]
