"""Harbor task folders: ``task.toml``, ``instruction.md``, ``environment/``, ``tests/``,
``solution/``, and for the local backend a ``workspace/`` with the starting source.

:func:`load_task` reads and checks one folder without running anything. Field names and
defaults follow Harbor's ``task.toml`` schema (see ``docs/tasks.md``). Unknown keys are
ignored, as Harbor does. Features this runner cannot honour (multi-step tasks, GPUs,
TPUs, task-authored Compose, Windows) are refused here, before any model call.
"""

import re
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import TaskError
from ._settings import declared_settings
from ._settings import refuse as refuse_settings

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
    #: ``[verifier.env]``: variables for ``tests/test.sh`` as written (see :mod:`._verifier_env`)
    verifier_env: dict[str, Any] = {}
    #: ``[environment.env]``: variables for every command of the coding sandbox and for
    #: ``tests/test.sh`` (under ``verifier_env``), literals only (see :mod:`._verifier_env`)
    environment_env: dict[str, Any] = {}
    #: ``[solution.env]``: variables for ``solution/solve.sh`` when the oracle runs it
    solution_env: dict[str, Any] = {}
    #: the agent phase's ``network_mode`` (``[agent]``, else ``[environment]``, else
    #: ``allow_internet``): ``public``, ``no-network``, ``allowlist`` or ``None`` (undeclared)
    agent_network_mode: str | None = None
    #: the verifier phase's ``network_mode`` (``[verifier]``, else ``[environment]``)
    verifier_network_mode: str | None = None
    #: ``environment.storage_mb``: the disk bound of the sandbox (None: the default)
    storage_mb: int | None = None
    #: ``environment.pids_limit`` (PluginBench's own key): the process bound of the sandbox
    pids_limit: int | None = None
    #: every container setting task.toml declares, as ``table.key`` (see :mod:`._settings`)
    settings: tuple[str, ...] = ()

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


def utf8_position(data: bytes, exc: UnicodeDecodeError) -> str:
    """Where in ``data`` the first byte that is not UTF-8 is: ``line L, column C`` (1-based)."""
    line = data[: exc.start].count(b"\n") + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return f"line {line}, column {column}"


#: An agent budget below this cannot start a CLI (1e-9 would be scored as an empty patch).
MIN_AGENT_TIMEOUT_SEC = 1.0


def _num(table: dict[str, Any], key: str, default: float | None, path: Path, where: str, tid: str = "?") -> float | None:
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TaskError(
            f"task '{tid}': {where}.{key} must be a number, got {value!r}", file=str(path), field=f"{where}.{key}",
            fix="write a positive number (seconds, CPUs, MB), without quotes",
        )
    if not value > 0 or value != value or value == float("inf"):
        raise TaskError(
            f"task '{tid}': {where}.{key} must be positive and finite, got {value!r}", file=str(path),
            field=f"{where}.{key}", fix="write a positive number, or remove the key for the default",
        )
    return float(value)


def _first_line(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.readline(4096)
    except OSError:
        return None


def _table(data: dict[str, Any], key: str, path: Path, tid: str, where: str | None = None) -> dict[str, Any]:
    """``data[key]`` as a TOML table (absent: empty); anything else names the field."""
    value = data.get(key)
    if value is None:
        return {}
    name = f"{where}.{key}" if where else key
    if not isinstance(value, dict):
        raise TaskError(
            f"task '{tid}': {name} must be a table, got {value!r}", file=str(path), field=name,
            fix=f"write it as a [{name}] table with its keys (see docs/tasks.md)",
        )
    return value


def _collect(verifier: dict[str, Any], path: Path, tid: str) -> tuple[CollectCommand, ...]:
    raw = verifier.get("collect")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise TaskError(
            f"task '{tid}': verifier.collect must be a list of tables, got {raw!r}", file=str(path),
            field="verifier.collect", fix='write each command as a [[verifier.collect]] table with command = "..."',
        )
    out = []
    for i, c in enumerate(raw):
        field = f"verifier.collect[{i}]"
        if not isinstance(c, dict) or not isinstance(c.get("command"), str) or not c["command"].strip():
            raise TaskError(
                f"task '{tid}': {field} needs a command string", file=str(path), field=f"{field}.command",
                fix='write [[verifier.collect]] with command = "..." (and optionally timeout_sec)',
            )
        timeout = _num(c, "timeout_sec", 60.0, path, field, tid)
        out.append(CollectCommand(c["command"], timeout or 60.0))
    return tuple(out)


def _agent_timeout(agent: dict[str, Any], path: Path, tid: str) -> float | None:
    value = _num(agent, "timeout_sec", None, path, "agent", tid)
    if value is not None and value < MIN_AGENT_TIMEOUT_SEC:
        raise TaskError(
            f"task '{tid}': agent.timeout_sec is {value!r} seconds, too short to start an agent",
            file=str(path), field="agent.timeout_sec",
            fix=f"write at least {MIN_AGENT_TIMEOUT_SEC:g} (seconds), or remove it for the evaluation's timeout_seconds",
        )
    return value


def _workdir(env: dict[str, Any], path: Path, tid: str) -> str:
    value = env.get("workdir")
    if value is None:
        return "/app"
    if not isinstance(value, str) or not value.startswith("/") or ".." in value.split("/") or "\0" in value:
        raise TaskError(
            f"task '{tid}': environment.workdir must be an absolute path inside the sandbox, got {value!r}",
            file=str(path), field="environment.workdir", fix='write an absolute path without "..", e.g. workdir = "/app"',
        )
    return value


NETWORK_MODES = ("public", "no-network", "allowlist")


def _network_mode(tables: list[tuple[dict[str, Any], str]], env: dict[str, Any], path: Path, tid: str) -> str | None:
    """The first declared ``network_mode`` among ``tables``, else ``allow_internet``."""
    for table, where in tables:
        mode = table.get("network_mode")
        if mode is None:
            continue
        if mode not in NETWORK_MODES:
            raise TaskError(
                f"task '{tid}': unknown {where}.network_mode {mode!r}", file=str(path), field=f"{where}.network_mode",
                fix='use "public", "no-network" or "allowlist"',
            )
        return str(mode)
    allow = env.get("allow_internet")
    if allow is None:
        return None
    if not isinstance(allow, bool):
        raise TaskError(f"task '{tid}': environment.allow_internet must be true or false", file=str(path),
                        field="environment.allow_internet", fix="write allow_internet = false, or use network_mode")
    return "public" if allow else "no-network"


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
    for name in ("task.toml", "instruction.md"):  # a FIFO or device here would block or never end
        special = root / name
        if special.exists() and not special.is_file():
            raise TaskError(f"task '{tid}': {name} is not a regular file (a folder, FIFO, socket or device)",
                            file=str(special), field=name, fix="replace it with a regular file")
    toml_path = root / "task.toml"
    try:
        raw = toml_path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise TaskError(f"task '{tid}' has no task.toml", file=str(toml_path), fix="add a Harbor task.toml") from None
    except UnicodeDecodeError as exc:
        raise TaskError(f"task '{tid}': task.toml is not UTF-8 text at {utf8_position(raw, exc)}", file=str(toml_path),
                        field=utf8_position(raw, exc), fix="save task.toml as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        if raw.startswith(b"\xef\xbb\xbf"):  # an editor's byte-order mark: tomllib says only "Invalid statement"
            raise TaskError(f"task '{tid}': task.toml starts with a byte-order mark (BOM), which TOML does not allow",
                            file=str(toml_path), field="line 1, column 1", fix="save task.toml as UTF-8 without a BOM") from None
        raise TaskError(f"task '{tid}': task.toml does not parse: {exc}", file=str(toml_path), fix="fix the TOML syntax (UTF-8)") from None
    except OSError as exc:
        raise TaskError(f"task '{tid}': cannot read task.toml: {exc.strerror}", file=str(toml_path), fix="make it a readable file") from None
    if data.get("steps"):
        raise TaskError(
            "multi-step tasks are not supported",
            file=str(toml_path),
            field="steps",
            fix="use a single-step task",
        )
    env = _table(data, "environment", toml_path, tid)
    agent = _table(data, "agent", toml_path, tid)
    verifier = _table(data, "verifier", toml_path, tid)
    metadata = _table(data, "metadata", toml_path, tid)
    refuse_settings(data, toml_path, tid)
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
    for name in ("tests", "solution", "workspace", "environment", "instruction.md", "task.toml"):
        if (root / name).is_symlink():
            raise TaskError(
                f"task '{tid}': {name} is a symlink", file=str(root / name), field=name,
                fix="replace it with the real folder or file (symlinks in tasks are refused)",
            )
    instruction_path = root / "instruction.md"
    try:
        instruction = strip_canary(instruction_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"task '{tid}' has no instruction.md", file=str(instruction_path), fix="add the prompt") from None
    except UnicodeDecodeError as exc:
        raise TaskError(
            f"task '{tid}': instruction.md is not UTF-8 text (byte {exc.start})", file=str(instruction_path),
            field="instruction.md", fix="save the prompt as UTF-8",
        ) from None
    except OSError as exc:
        raise TaskError(f"task '{tid}': cannot read instruction.md: {exc.strerror}", file=str(instruction_path),
                        fix="make it a readable file") from None
    if not instruction.strip():
        raise TaskError("instruction.md is empty", file=str(instruction_path), fix="write the task prompt")
    if not (root / "tests" / "test.sh").is_file():
        raise TaskError(
            f"task '{tid}' has no tests/test.sh",
            file=str(root / "tests" / "test.sh"),
            fix="add the verifier entry point; it must write /logs/verifier/reward.txt or reward.json",
        )
    for script in ("tests/test.sh", "solution/solve.sh"):
        first = _first_line(root / script)
        if first is not None and first.endswith(b"\r\n"):
            raise TaskError(
                f"task '{tid}': {script} has Windows (CRLF) line endings; its interpreter line would not run",
                file=str(root / script), field=script, fix=f"convert it to LF line endings (dos2unix {script})",
            )
    venv = _table(verifier, "environment", toml_path, tid, "verifier")
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
    collect = _collect(verifier, toml_path, tid)
    for table, key, where in ((env, "docker_image", "environment"), (venv, "docker_image", "verifier.environment")):
        if table.get(key) is not None and (not isinstance(table[key], str) or not table[key].strip()):
            raise TaskError(
                f"task '{tid}': {where}.{key} must be an image name, got {table[key]!r}", file=str(toml_path),
                field=f"{where}.{key}", fix='write e.g. docker_image = "python:3.12-slim", or remove it',
            )
    memory = env.get("memory_mb")
    artifacts = _artifacts(data.get("artifacts"), toml_path)
    venv_vars = _table(verifier, "env", toml_path, tid, "verifier")
    env_vars = _table(env, "env", toml_path, tid, "environment")
    solution_vars = _table(_table(data, "solution", toml_path, tid), "env", toml_path, tid, "solution")
    return HarborTask(
        id=tid,
        root=root,
        instruction=instruction,
        workdir=_workdir(env, toml_path, tid),
        agent_timeout_sec=_agent_timeout(agent, toml_path, tid),
        verifier_timeout_sec=_num(verifier, "timeout_sec", 600.0, toml_path, "verifier", tid) or 600.0,
        build_timeout_sec=_num(env, "build_timeout_sec", 600.0, toml_path, "environment", tid) or 600.0,
        environment_mode=mode,
        docker_image=env.get("docker_image"),
        verifier_docker_image=venv.get("docker_image"),
        cpus=_num(env, "cpus", None, toml_path, "environment", tid),
        memory_mb=None if _num(env, "memory_mb", None, toml_path, "environment", tid) is None else int(memory or 0),
        collect=collect,
        metadata=dict(metadata),
        artifacts=artifacts,
        verifier_env=dict(venv_vars),
        environment_env=dict(env_vars),
        solution_env=dict(solution_vars),
        agent_network_mode=_network_mode([(agent, "agent"), (env, "environment")], env, toml_path, tid),
        verifier_network_mode=_network_mode([(verifier, "verifier"), (env, "environment")], env, toml_path, tid),
        storage_mb=None if (st := _num(env, "storage_mb", None, toml_path, "environment", tid)) is None else int(st),
        pids_limit=None if (pl := _num(env, "pids_limit", None, toml_path, "environment", tid)) is None else int(pl),
        settings=declared_settings(data),
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
