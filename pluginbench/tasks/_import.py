"""``pluginbench tasks import``: OpenBench and Terminal-Bench 1 task folders → Harbor folders.

Both converters read a task folder and write an ordinary Harbor task folder (``task.toml``,
``instruction.md``, ``tests/test.sh``, ``solution/solve.sh``, plus ``workspace/`` or
``environment/``) with a ``PROVENANCE.md`` naming the source format, the source folder's
SHA-256 fingerprint and every mapping made. Nothing from the source is executed here: the
result is checked afterwards by the usual readiness controls (oracle = 1, nop = 0) in a
sandbox. A source that cannot be converted faithfully is refused with a
:class:`~pluginbench.errors.TaskError` naming the file and the field (exit 2).

**OpenBench** (``instruction.md``, ``workspace/``, ``checker.sh``, ``solution/`` golden files
overlaid on the workspace, optional ``checker_data/``): ``checker.sh`` and ``checker_data/``
go to ``tests/``; ``tests/test.sh`` runs the checker in the working tree with ``TASK_DIR``
pointing at them and writes ``reward.json``: ``reward`` 1 when the checker exits 0, else 0
(the binary outcome), and ``score``, OpenBench's partial credit (exit 0 → 1.0; otherwise the
last parseable ``SCORE: <float>`` line on stdout, clamped to [0, 1], else 0.0), kept as
native grading. ``solution/`` becomes ``solution/files/`` copied over the tree by ``solve.sh``.

**Terminal-Bench 1** (``task.yaml``, ``Dockerfile``, ``docker-compose.yaml``, ``solution.sh``,
``run-tests.sh``, ``tests/``): ``instruction`` → ``instruction.md``; ``max_agent_timeout_sec``
/ ``max_test_timeout_sec`` → ``[agent]`` / ``[verifier] timeout_sec``; the other keys →
``[metadata]``; ``Dockerfile`` (and its build context) → ``environment/``; ``solution.sh`` →
``solution/solve.sh``; ``tests/`` → ``tests/``; ``run-tests.sh`` → ``tests/run-tests.sh``
run by ``tests/test.sh`` with ``TEST_DIR`` set, writing ``reward.txt`` 1 or 0 from its exit
code (the pytest parser's "all tests passed"). A ``docker-compose.yaml`` with one ``client``
service is the harness's own wiring and is dropped; more services are refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from ..errors import TaskError
from ._tree import fingerprint, scan_tree

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

OPENBENCH_TEST_SH = r"""#!/usr/bin/env bash
# Written by pluginbench tasks import from an OpenBench task: runs checker.sh in the working
# tree (TASK_DIR = the hidden tests folder, where checker.sh and checker_data/ are) and writes
# reward.json: reward 1 iff the checker exits 0; score = OpenBench's partial credit.
set -u
APP="${APP_DIR:-/app}"
TESTS="${TESTS_DIR:-/tests}"
LOGS="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS/verifier"
cd "$APP" || exit 0
TASK_DIR="$TESTS" bash "$TESTS/checker.sh" > "$LOGS/verifier/checker-stdout.txt" 2> "$LOGS/verifier/checker-stderr.txt"
code=$?
python3 - "$code" "$LOGS/verifier" <<'PY'
import json, math, re, sys
code, out = int(sys.argv[1]), sys.argv[2]
score = None
with open(f"{out}/checker-stdout.txt", encoding="utf-8", errors="replace") as fh:
    for line in fh:
        m = re.match(r"^\s*SCORE:\s*(\S+)\s*$", line)
        if m:
            try:
                value = float(m.group(1))
            except ValueError:
                continue
            if math.isfinite(value):
                score = min(1.0, max(0.0, value))
if code == 0:
    score = 1.0
reward = {"reward": 1 if code == 0 else 0, "score": score if score is not None else 0.0, "checker_exit": code}
with open(f"{out}/reward.json", "w", encoding="utf-8") as fh:
    json.dump(reward, fh)
PY
"""

OPENBENCH_SOLVE_SH = """#!/usr/bin/env bash
# Written by pluginbench tasks import: OpenBench's golden files overlaid on the working tree.
set -euo pipefail
cp -R "${SOLUTION_DIR:-/solution}/files/." "${APP_DIR:-/app}/"
"""

TB_TEST_SH = """#!/usr/bin/env bash
# Written by pluginbench tasks import from a Terminal-Bench 1 task: runs its run-tests.sh with
# TEST_DIR set and writes reward.txt from its exit code (1 when every test passed).
set -u
APP="${APP_DIR:-/app}"
TESTS="${TESTS_DIR:-/tests}"
LOGS="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS/verifier"
cd "$APP" || exit 0
if TEST_DIR="$TESTS" bash "$TESTS/run-tests.sh"; then
  echo 1 > "$LOGS/verifier/reward.txt"
else
  echo 0 > "$LOGS/verifier/reward.txt"
fi
"""

#: Terminal-Bench 1 task.yaml keys that become task.toml settings (the rest are metadata)
_TB_SETTINGS = {"instruction", "max_agent_timeout_sec", "max_test_timeout_sec"}


def detect_format(source: Path) -> str:
    """``openbench`` (``checker.sh``) or ``terminal-bench`` (``task.yaml`` with
    ``run-tests.sh``); anything else is refused."""
    if (source / "checker.sh").is_file():
        return "openbench"
    if (source / "task.yaml").is_file():
        return "terminal-bench"
    raise TaskError(f"{source} is neither an OpenBench task (checker.sh) nor a Terminal-Bench task (task.yaml)",
                    file=str(source), field="(folder)",
                    fix="point at one task folder holding checker.sh (OpenBench) or task.yaml (Terminal-Bench 1)")


def _need(path: Path, what: str, fix: str) -> Path:
    if path.is_symlink() or not path.exists():
        raise TaskError(f"the task has no {what}", file=str(path), field=path.name, fix=fix)
    return path


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _toml_value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "[" + ", ".join(_toml_str(v) for v in value) + "]"
    return None


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)


def _copy(src: Path, dest: Path) -> None:
    """A checked copy: regular files and folders only (symlinks and special files refused)."""
    entries = scan_tree(src, context=f"the source folder {src}")
    for e in entries:
        target = dest / e.relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / e.relpath, target)
        target.chmod(e.mode)
    dest.mkdir(parents=True, exist_ok=True)


def _provenance(fmt: str, source: Path, name: str, mappings: list[str], dropped: list[str]) -> str:
    fp = fingerprint(scan_tree(source, context=f"the source folder {source}"))
    lines = [
        f"# Provenance of {name}",
        "",
        f"Converted by `pluginbench tasks import` from a{'n' if fmt == 'openbench' else ''} "
        f"{'OpenBench' if fmt == 'openbench' else 'Terminal-Bench 1'} task folder.",
        "",
        f"* source folder: `{source.name}`",
        f"* source fingerprint (SHA-256 over every file's path, mode and content): `{fp}`",
        "",
        "Mappings:",
        "",
        *[f"* {m}" for m in mappings],
    ]
    if dropped:
        lines += ["", "Left out:", "", *[f"* {d}" for d in dropped]]
    lines += ["", "The task's own licence and authorship are those of its source; see the source repository.", ""]
    return "\n".join(lines)


def import_openbench(source: Path, dest: Path, name: str) -> list[str]:
    """Write the Harbor folder for an OpenBench task; the mappings made."""
    instruction = _need(source / "instruction.md", "instruction.md", "an OpenBench task has instruction.md")
    if (source / "workspace.toml").exists():
        raise TaskError("workspace.toml (a git ref materialized by OpenBench) is not imported", file=str(
            source / "workspace.toml"), field="workspace.toml",
            fix="materialize the workspace (git archive the ref into workspace/) and import again")
    workspace = _need(source / "workspace", "workspace/", "an OpenBench task has workspace/ (its starting files)")
    _need(source / "checker.sh", "checker.sh", "an OpenBench task has checker.sh")
    solution = _need(source / "solution", "solution/", "the oracle needs OpenBench's golden files in solution/")
    if not instruction.read_text(encoding="utf-8", errors="replace").strip():
        raise TaskError("instruction.md is empty", file=str(instruction), field="instruction.md",
                        fix="write the request the agent gets")
    _copy(workspace, dest / "workspace")
    _copy(solution, dest / "solution" / "files")
    shutil.copyfile(instruction, dest / "instruction.md")
    (dest / "tests").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "checker.sh", dest / "tests" / "checker.sh")
    (dest / "tests" / "checker.sh").chmod(0o755)
    mappings = ["`instruction.md` → `instruction.md`", "`workspace/` → `workspace/` (the starting source)",
                "`checker.sh` → `tests/checker.sh`, run by `tests/test.sh` with `TASK_DIR` = the tests folder; "
                "`reward.json`: `reward` 1 iff exit 0, `score` = partial credit (last parseable `SCORE:` line, "
                "clamped to [0, 1]; 1.0 on exit 0; else 0.0), `checker_exit`",
                "`solution/` → `solution/files/`, copied over the working tree by `solution/solve.sh`"]
    if (source / "checker_data").is_dir():
        _copy(source / "checker_data", dest / "tests" / "checker_data")
        mappings.append("`checker_data/` → `tests/checker_data/` (hidden from the agent)")
    _write(dest / "tests" / "test.sh", OPENBENCH_TEST_SH, 0o755)
    _write(dest / "solution" / "solve.sh", OPENBENCH_SOLVE_SH, 0o755)
    _write(dest / "task.toml", "\n".join([
        'schema_version = "1.4"', 'source = "openbench"', "", "[task]", f"name = {_toml_str('openbench/' + name)}", "",
        "[metadata]", 'source_format = "openbench"', "", "[verifier]", "timeout_sec = 600.0", "",
        "[environment]", 'workdir = "/app"', "",
    ]))
    return mappings


def _tb_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TaskError(f"task.yaml cannot be read: {exc}", file=str(path), field="(whole file)",
                        fix="fix the YAML") from None
    if not isinstance(data, dict):
        raise TaskError("task.yaml is not a mapping", file=str(path), field="(top level)", fix="fix the YAML")
    if not isinstance(data.get("instruction"), str) or not data["instruction"].strip():
        raise TaskError("task.yaml has no instruction text", file=str(path), field="instruction",
                        fix="a Terminal-Bench task carries its prompt in instruction")
    for key in ("max_agent_timeout_sec", "max_test_timeout_sec"):
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise TaskError(f"{key} must be a positive number, got {value!r}", file=str(path), field=key,
                            fix="write seconds, e.g. 360")
    return data


def _tb_compose(path: Path) -> str | None:
    """Why the compose file is dropped (the harness's own single-client wiring), or a refusal."""
    if not path.exists():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TaskError(f"docker-compose.yaml cannot be read: {exc}", file=str(path), field="(whole file)",
                        fix="fix the YAML") from None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict) or list(services) != ["client"]:
        raise TaskError(f"docker-compose.yaml declares services {sorted(services or {})!r}; only the single "
                        "'client' service converts (PluginBench runs no task-authored Compose files)",
                        file=str(path), field="services", fix="import a task whose environment is one Dockerfile")
    return "`docker-compose.yaml` (one `client` service: Terminal-Bench's own container wiring)"


def import_terminal_bench(source: Path, dest: Path, name: str) -> list[str]:
    """Write the Harbor folder for a Terminal-Bench 1 task; the mappings made (dropped files
    are returned as mappings starting with ``dropped:``)."""
    data = _tb_yaml(source / "task.yaml")
    _need(source / "Dockerfile", "Dockerfile", "a Terminal-Bench task builds its environment from a Dockerfile")
    if (source / "solution.yaml").exists() and not (source / "solution.sh").exists():
        raise TaskError("solution.yaml (a command list) is not imported", file=str(source / "solution.yaml"),
                        field="solution.yaml", fix="write the commands as solution.sh and import again")
    _need(source / "solution.sh", "solution.sh", "the oracle needs the reference solution.sh")
    _need(source / "run-tests.sh", "run-tests.sh", "a Terminal-Bench task runs its tests with run-tests.sh")
    dropped_compose = _tb_compose(source / "docker-compose.yaml")
    skip = {"task.yaml", "docker-compose.yaml", "solution.sh", "solution.yaml", "run-tests.sh", "tests"}
    env = dest / "environment"
    env.mkdir(parents=True, exist_ok=True)
    for child in sorted(source.iterdir()):
        if child.name in skip:
            continue
        if child.is_symlink():
            raise TaskError(f"{child.name} is a symlink", file=str(child), field=child.name,
                            fix="replace the link with the file it points to")
        if child.is_dir():
            _copy(child, env / child.name)
        elif child.is_file():
            shutil.copyfile(child, env / child.name)
            (env / child.name).chmod(0o755 if child.stat().st_mode & 0o100 else 0o644)
    if (source / "tests").is_dir():
        _copy(source / "tests", dest / "tests")
    (dest / "tests").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "run-tests.sh", dest / "tests" / "run-tests.sh")
    (dest / "tests" / "run-tests.sh").chmod(0o755)
    _write(dest / "tests" / "test.sh", TB_TEST_SH, 0o755)
    _write(dest / "solution" / "solve.sh", (source / "solution.sh").read_text(encoding="utf-8"), 0o755)
    _write(dest / "instruction.md", data["instruction"].rstrip("\n") + "\n")
    meta = [f"{k if re.fullmatch(r'[A-Za-z0-9_-]+', k) else _toml_str(k)} = {v}" for k, raw in sorted(data.items())
            if isinstance(k, str) and k not in _TB_SETTINGS and k != "source_format"
            and (v := _toml_value(raw)) is not None]
    toml = ['schema_version = "1.4"', 'source = "terminal-bench"', "", "[task]",
            f"name = {_toml_str('terminal-bench/' + name)}", "", "[metadata]", 'source_format = "terminal-bench-1"',
            *meta, "", "[agent]", f"timeout_sec = {float(data.get('max_agent_timeout_sec') or 360.0)!r}", "",
            "[verifier]", f"timeout_sec = {float(data.get('max_test_timeout_sec') or 60.0)!r}", "",
            "[environment]", 'workdir = "/app"', ""]
    _write(dest / "task.toml", "\n".join(toml))
    mappings = ["`task.yaml` `instruction` → `instruction.md`",
                "`max_agent_timeout_sec` → `[agent] timeout_sec` (default 360), `max_test_timeout_sec` → "
                "`[verifier] timeout_sec` (default 60), other `task.yaml` keys → `[metadata]`",
                "`Dockerfile` and its build context → `environment/`",
                "`solution.sh` → `solution/solve.sh`", "`tests/` → `tests/`",
                "`run-tests.sh` → `tests/run-tests.sh`, run by `tests/test.sh` with `TEST_DIR` set; "
                "`reward.txt` 1 when it exits 0 (every test passed), else 0"]
    if dropped_compose:
        mappings.append("dropped: " + dropped_compose)
    return mappings


def import_task(source: Path, out: Path, fmt: str | None = None, name: str | None = None) -> tuple[str, Path]:
    """Convert one task folder; ``(format, written folder)``. The folder ``out/<name>`` must
    not exist; it is written whole or not at all."""
    if not source.is_dir() or source.is_symlink():
        raise TaskError(f"{source} is not a task folder", file=str(source), field="SOURCE",
                        fix="point at one task folder")
    fmt = fmt or detect_format(source)
    name = name or source.resolve().name
    if not _NAME.match(name) or "__" in name:
        raise TaskError(f"task name {name!r} is not a usable folder name (letters, digits, '.', '_', '-'; no '__')",
                        file=str(source), field="--name", fix="pass --name with a plain name")
    if (out.exists() or out.is_symlink()) and not out.is_dir():
        raise TaskError(f"{out} is not a folder", file=str(out), field="--output",
                        fix="give --output a folder (it is created when missing)")
    real_out, real_source = Path(os.path.realpath(out)), Path(os.path.realpath(source))
    if real_out == real_source or real_source in real_out.parents:
        raise TaskError(f"{out} is inside the source task folder {source}; the import would write into its source",
                        file=str(out), field="--output", fix="give --output a folder outside the source")
    dest = out / name
    if dest.exists():
        raise TaskError(f"{dest} already exists", file=str(dest), field="--output",
                        fix="choose another output folder or remove the old import")
    staging = out / f".{name}.importing"
    shutil.rmtree(staging, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    try:
        if fmt == "openbench":
            mappings = import_openbench(source, staging, name)
        elif fmt == "terminal-bench":
            mappings = import_terminal_bench(source, staging, name)
        else:
            raise TaskError(f"unknown format {fmt!r}", field="--format", fix="use openbench or terminal-bench")
        kept = [m for m in mappings if not m.startswith("dropped: ")]
        dropped = [m.removeprefix("dropped: ") for m in mappings if m.startswith("dropped: ")]
        _write(staging / "PROVENANCE.md", _provenance(fmt, source, name, kept, dropped))
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return fmt, dest
