"""Bad task folders: exit 2 naming the task, the file and the field; never a traceback,
never a run directory (issue 14 items 5, 6, 13, 14, 17, 21)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.cli._cli_helpers import assert_refused, run_cli
from tests.runs_helpers import QUICKSTART, write_config

TASK = "roman-numerals"


def task_config(tmp_path: Path, change: Callable[[Path], None], ids: list[str] | None = None) -> Path:
    """A config over a private copy of the quickstart task, changed by ``change``."""
    source = tmp_path / "tasks"
    shutil.copytree(QUICKSTART / "tasks" / TASK, source / TASK)
    change(source / TASK)
    config = write_config(tmp_path, tasks=ids or [TASK])
    data = yaml.safe_load(config.read_text())
    data["tasks"]["source"] = str(source)
    config.write_text(yaml.safe_dump(data))
    return config


def toml_append(text: str) -> Callable[[Path], None]:
    def change(task: Path) -> None:
        toml = task / "task.toml"
        body = toml.read_text()
        for table in ("[environment]", "[verifier]", "[agent]"):
            if table in text and table in body:  # replace the table the case rewrites
                start = body.index(table)
                end = body.find("\n[", start + 1)
                body = body[:start] + (body[end + 1:] if end != -1 else "")
        toml.write_text(body + "\n" + text + "\n")

    return change


def assert_no_run(tmp_path: Path, config: Path) -> None:
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "run"), "--yes")
    assert code == 2, out
    assert "Traceback" not in out
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("text, field", [
    ("environment = [1, 2]", "environment"),
    ("verifier = 3", "verifier"),
    ("[[verifier.collect]]\ncommand = \"true\"\ntimeout_sec = \"abc\"", "verifier.collect[0].timeout_sec"),
    ("[verifier]\ncollect = \"notalist\"", "verifier.collect"),
    ("[verifier]\ntimeout_sec = -5", "verifier.timeout_sec"),
    ("[agent]\ntimeout_sec = 0", "agent.timeout_sec"),
    ("[environment]\nworkdir = 5", "environment.workdir"),
    ("[environment]\nworkdir = \"../../etc\"", "environment.workdir"),
    ("[environment]\nworkdir = \"/app/../../etc\"", "environment.workdir"),
    ("[environment]\ncpus = \"two\"", "environment.cpus"),
    ("[environment]\nmemory_mb = -1", "environment.memory_mb"),
    ("metadata = \"x\"", "metadata"),
])
def test_bad_task_toml_values_name_task_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    """A task.toml value of the wrong shape is refused naming the task, task.toml and the field."""
    if text.startswith(("environment =", "verifier =", "metadata =")):
        def change(task: Path) -> None:
            (task / "task.toml").write_text(f'schema_version = "1.4"\n{text}\n')
    else:
        change = toml_append(text)
    config = task_config(tmp_path, change)
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, f"task '{TASK}'", "task.toml", f"field: {field}", "fix:")
    assert_no_run(tmp_path, config)


def test_instruction_not_utf8(tmp_path: Path) -> None:
    """An instruction.md that is not UTF-8 names the task and the file."""
    config = task_config(tmp_path, lambda t: (t / "instruction.md").write_bytes(b"fix \xff\xfe it\n"))
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, f"task '{TASK}'", "instruction.md", "not UTF-8")
    assert_no_run(tmp_path, config)


def test_workspace_file_name_not_utf8(tmp_path: Path) -> None:
    """A workspace file whose name is not UTF-8 is refused naming the task and its folder."""
    def change(task: Path) -> None:
        with open(os.path.join(os.fsencode(task / "workspace"), b"bad\xffname.py"), "wb") as fh:
            fh.write(b"x = 1\n")

    config = task_config(tmp_path, change)
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, f"task '{TASK}'", "workspace", "not UTF-8")
    assert_no_run(tmp_path, config)


def test_task_without_solution_is_refused_before_a_run_exists(tmp_path: Path) -> None:
    """A task without solution/solve.sh is refused by check and run before any run directory."""
    config = task_config(tmp_path, lambda t: shutil.rmtree(t / "solution"))
    code, out = run_cli("check", str(config))
    assert_refused(code, out, f"task '{TASK}'", "solution/solve.sh", "tasks.ids[0]")
    assert_no_run(tmp_path, config)


def test_tests_symlink_says_symlink(tmp_path: Path) -> None:
    """tests -> /etc is refused as a symlink, not as a missing tests/test.sh."""
    def change(task: Path) -> None:
        shutil.rmtree(task / "tests")
        os.symlink("/etc", task / "tests")

    config = task_config(tmp_path, change)
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "tests is a symlink", "field: tests")
    assert "has no tests/test.sh" not in out
