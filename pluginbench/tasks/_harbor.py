"""Harbor task folders: ``task.toml``, ``instruction.md``, ``environment/``, ``tests/``,
``solution/``, and for the local backend a ``workspace/`` with the starting source.

:func:`load_task` reads and checks one folder without running anything. Field names and
defaults follow Harbor's ``task.toml`` schema (see ``docs/tasks.md``). Unknown keys are
ignored, as Harbor does. Features this runner cannot honour (multi-step tasks, GPUs,
TPUs, task-authored Compose, Windows) are refused here, before any model call.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import TaskError

_CANARY = re.compile(r"^\s*(<!--.*canary.*-->|#.*canary.*)\s*$", re.IGNORECASE)


class CollectCommand(NamedTuple):
    command: str
    timeout_sec: float


class HarborTask(NamedTuple):
    """One task as PluginBench uses it. Paths are host paths in the task folder."""

    id: str
    root: Path
    instruction: str
    workdir: str
    agent_timeout_sec: float | None
    verifier_timeout_sec: float
    build_timeout_sec: float
    environment_mode: str
    docker_image: str | None
    verifier_docker_image: str | None
    cpus: float | None
    memory_mb: int | None
    collect: tuple[CollectCommand, ...]
    metadata: dict[str, Any]
    #: container paths of the top-level ``artifacts`` (a ``{source = ...}`` table gives its source)
    artifacts: tuple[str, ...] = ()
    #: ``[verifier.env]``: variables for ``tests/test.sh``
    verifier_env: dict[str, Any] = {}

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def workspace_dir(self) -> Path:
        return self.root / "workspace"

    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def has_workspace(self) -> bool:
        return self.workspace_dir.is_dir()

    @property
    def has_solution(self) -> bool:
        return (self.solution_dir / "solve.sh").is_file()


def strip_canary(text: str) -> str:
    """Drop leading canary lines and the blank lines after them, as Harbor does."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and _CANARY.match(lines[i]):
        i += 1
        while i < len(lines) and not lines[i].strip():
            i += 1
    return "".join(lines[i:])


def _num(table: dict[str, Any], key: str, default: float | None, path: Path, where: str) -> float | None:
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TaskError(
            f"{where}.{key} must be a number", file=str(path), field=f"{where}.{key}", fix="write a number"
        )
    return float(value)


def load_task(root: Path, task_id: str | None = None) -> HarborTask:
    """Read and check one Harbor task folder. Raises :class:`TaskError`."""
    tid = task_id or root.name
    if not root.is_dir():
        raise TaskError(
            f"task '{tid}' does not exist",
            file=str(root),
            field="tasks.ids",
            fix="check the id and tasks.source; each id is a folder under the source",
        )
    toml_path = root / "task.toml"
    try:
        data = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"task '{tid}' has no task.toml", file=str(toml_path), fix="add a Harbor task.toml") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskError(f"task.toml does not parse: {exc}", file=str(toml_path), fix="fix the TOML syntax") from None
    if data.get("steps"):
        raise TaskError(
            "multi-step tasks are not supported",
            file=str(toml_path),
            field="steps",
            fix="use a single-step task",
        )
    env = data.get("environment") or {}
    agent = data.get("agent") or {}
    verifier = data.get("verifier") or {}
    if env.get("os", "linux") != "linux":
        raise TaskError("only Linux tasks are supported", file=str(toml_path), field="environment.os", fix='set os = "linux"')
    if env.get("gpus") or env.get("tpu"):
        raise TaskError(
            "GPU and TPU tasks are not supported",
            file=str(toml_path),
            field="environment.gpus",
            fix="remove the accelerator request or choose another task",
        )
    if (root / "environment" / "docker-compose.yaml").exists() or (root / "environment" / "docker-compose.yml").exists():
        raise TaskError(
            "task-authored Compose files are not supported",
            file=str(root / "environment"),
            field="environment/docker-compose.yaml",
            fix="use a single Dockerfile or a prebuilt docker_image",
        )
    instruction_path = root / "instruction.md"
    try:
        instruction = strip_canary(instruction_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"task '{tid}' has no instruction.md", file=str(instruction_path), fix="add the prompt") from None
    if not instruction.strip():
        raise TaskError("instruction.md is empty", file=str(instruction_path), fix="write the task prompt")
    if not (root / "tests" / "test.sh").is_file():
        raise TaskError(
            f"task '{tid}' has no tests/test.sh",
            file=str(root / "tests" / "test.sh"),
            fix="add the verifier entry point; it must write /logs/verifier/reward.txt or reward.json",
        )
    venv = verifier.get("environment") or {}
    # PluginBench always grades in a separate sandbox made from the starting source plus
    # the canonical patch, so an undeclared mode means "separate"; a task that declares
    # "shared" expects state the agent left beyond its patch, which is never graded.
    mode = verifier.get("environment_mode") or "separate"
    if mode == "shared":
        raise TaskError(
            "shared verifiers are not supported: PluginBench grades the canonical patch in a separate sandbox",
            file=str(toml_path),
            field="verifier.environment_mode",
            fix='set environment_mode = "separate" (and make tests/test.sh install what it needs)',
        )
    if mode not in ("shared", "separate"):
        raise TaskError(
            f"unknown verifier.environment_mode '{mode}'",
            file=str(toml_path),
            field="verifier.environment_mode",
            fix='use "separate" or "shared"',
        )
    collect = tuple(
        CollectCommand(str(c["command"]), float(c.get("timeout_sec", 60.0)))
        for c in verifier.get("collect") or []
        if isinstance(c, dict) and "command" in c
    )
    memory = env.get("memory_mb")
    artifacts = _artifacts(data.get("artifacts"), toml_path)
    venv_vars = verifier.get("env") or {}
    return HarborTask(
        id=tid,
        root=root,
        instruction=instruction,
        workdir=str(env.get("workdir") or "/app"),
        agent_timeout_sec=_num(agent, "timeout_sec", None, toml_path, "agent"),
        verifier_timeout_sec=_num(verifier, "timeout_sec", 600.0, toml_path, "verifier") or 600.0,
        build_timeout_sec=_num(env, "build_timeout_sec", 600.0, toml_path, "environment") or 600.0,
        environment_mode=mode,
        docker_image=env.get("docker_image"),
        verifier_docker_image=venv.get("docker_image"),
        cpus=_num(env, "cpus", None, toml_path, "environment"),
        memory_mb=int(memory) if isinstance(memory, (int, float)) and not isinstance(memory, bool) else None,
        collect=collect,
        metadata=dict(data.get("metadata") or {}),
        artifacts=artifacts,
        verifier_env=dict(venv_vars) if isinstance(venv_vars, dict) else {},
    )


def _artifacts(raw: Any, path: Path) -> tuple[str, ...]:
    """The container paths a task collects after the agent, as Harbor reads ``artifacts``."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise TaskError("artifacts must be a list", file=str(path), field="artifacts",
                        fix='write artifacts = ["/logs/artifacts/model.patch"] or remove it')
    out: list[str] = []
    for i, item in enumerate(raw):
        source = item.get("source") if isinstance(item, dict) else item
        if not isinstance(source, str) or not source.startswith("/"):
            raise TaskError(
                f"artifacts[{i}] must be an absolute container path or a table with source = an absolute path",
                file=str(path), field=f"artifacts[{i}]", fix='write e.g. "/logs/artifacts/model.patch"',
            )
        out.append(source)
    return tuple(out)
