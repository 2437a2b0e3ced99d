"""Bad input: a one-screen error naming file, field and fix; exit 2; nothing started or written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli._cli_helpers import assert_refused, edit, run_cli
from tests.runs_helpers import QUICKSTART, write_config

runner = CliRunner()


def test_missing_config(tmp_path: Path) -> None:
    """A config that does not exist names itself and says how to create one."""
    code, out = run_cli("run", str(tmp_path / "nope.yaml"), "--output", str(tmp_path / "run"))
    assert_refused(code, out, "nope.yaml", "pluginbench init")
    assert not (tmp_path / "run").exists()


def test_malformed_yaml(tmp_path: Path) -> None:
    """Broken YAML names the line and column."""
    path = tmp_path / "evaluation.yaml"
    path.write_text("tasks: [unclosed\n")
    code, out = run_cli("check", str(path))
    assert_refused(code, out, "not valid YAML", "line")


def test_unknown_key(tmp_path: Path) -> None:
    """An unknown key is named with its full path."""
    config = edit(write_config(tmp_path), runner__modle="x")
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "run"))
    assert_refused(code, out, "unknown key 'modle'", "runner.modle")
    assert not (tmp_path / "run").exists()


def test_wrong_type(tmp_path: Path) -> None:
    """A value of the wrong type names the field and the expected type."""
    code, out = run_cli("check", str(edit(write_config(tmp_path), repeats="three")))
    assert_refused(code, out, "repeats", "expected `int`")


@pytest.mark.parametrize("jobs", [0, 5])
def test_jobs_out_of_range(tmp_path: Path, jobs: int) -> None:
    """jobs must be 1 to 4."""
    code, out = run_cli("check", str(edit(write_config(tmp_path), jobs=jobs)))
    assert_refused(code, out, "jobs must be 1 to 4", "field: jobs")


def test_missing_task_id(tmp_path: Path) -> None:
    """A task id with no folder names the id's position in tasks.ids."""
    code, out = run_cli("check", str(write_config(tmp_path, tasks=["roman-numerals", "no-such-task"])))
    assert_refused(code, out, "no-such-task", "tasks.ids[1]")


def test_task_without_test_sh(tmp_path: Path) -> None:
    """A task without tests/test.sh is refused with the missing path."""
    source = tmp_path / "tasks"
    task = source / "broken"
    (task / "workspace").mkdir(parents=True)
    (task / "task.toml").write_text('schema_version = "1.4"\n')
    (task / "instruction.md").write_text("do it\n")
    config = write_config(tmp_path)
    config = edit(config, tasks={"source": str(source), "ids": ["broken"]})
    code, out = run_cli("check", str(config))
    assert_refused(code, out, "tests/test.sh")


def test_treatment_path_missing(tmp_path: Path) -> None:
    """A guidance file that does not exist names the treatment field."""
    config = write_config(tmp_path, treatments={"core": {"guidance": [str(tmp_path / "missing.md")]}})
    code, out = run_cli("check", str(config))
    assert_refused(code, out, "does not exist", "treatments.core.guidance[0]")


def test_treatment_path_symlink(tmp_path: Path) -> None:
    """A guidance path that is a symlink is refused."""
    (tmp_path / "real.md").write_text("guidance\n")
    os.symlink(tmp_path / "real.md", tmp_path / "link.md")
    config = write_config(tmp_path, treatments={"core": {"guidance": [str(tmp_path / "link.md")]}})
    code, out = run_cli("check", str(config))
    assert_refused(code, out, "symlink", "treatments.core.guidance[0]")


def test_output_folder_exists(tmp_path: Path) -> None:
    """An existing output folder is never reused by a new run."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "keep.txt").write_text("mine")
    code, out = run_cli("run", str(write_config(tmp_path)), "--output", str(tmp_path / "run"))
    assert_refused(code, out, "already exists", "--output")
    assert (tmp_path / "run" / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["keep.txt"]


def test_init_never_overwrites(tmp_path: Path) -> None:
    """init writes a starter once and refuses to overwrite it."""
    target = tmp_path / "evaluation.yaml"
    code, _ = run_cli("init", str(target))
    assert code == 0 and "tasks:" in target.read_text()
    target.write_text("mine\n")
    code, out = run_cli("init", str(target))
    assert_refused(code, out, "never overwrites")
    assert target.read_text() == "mine\n"


def test_locked_run_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resuming a run whose lock a live process holds is refused, naming the owner."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pluginbench.actors import create_run
    from pluginbench.config import load

    rd = create_run(load(write_config(tmp_path)), tmp_path / "run")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; from pathlib import Path; from pluginbench.events import RunLock; "
         "RunLock(Path(sys.argv[1])).acquire(); print('held', flush=True); time.sleep(60)", str(rd.root)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, out = run_cli("run", str(rd.root))
        assert_refused(code, out, f"pid {holder.pid}", "run.lock")
    finally:
        holder.kill()
        holder.wait()


def test_corrupt_events_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A seq gap in events.jsonl stops resume and status with a clear error."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pluginbench.actors import create_run
    from pluginbench.config import load

    rd = create_run(load(write_config(tmp_path)), tmp_path / "run")
    line = json.loads(rd.events.read_text().splitlines()[0])
    line["seq"] = 5
    with rd.events.open("a") as fh:
        fh.write(json.dumps(line) + "\n")
    code, out = run_cli("run", str(rd.root), "--foreground")
    assert_refused(code, out, "seq gap", "events.jsonl")
    code, out = run_cli("status", str(rd.root))
    assert_refused(code, out, "seq gap")


def test_real_agent_without_boundary_is_refused(tmp_path: Path) -> None:
    """A real agent CLI without a sandbox boundary needs an explicit opt-in."""
    config = write_config(tmp_path, harness="claude", environment={"isolation": "none"})
    config = edit(config, runner={"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "allow_unisolated")


def test_floating_claude_alias_is_refused(tmp_path: Path) -> None:
    """Claude runs need an exact claude-* model id."""
    config = edit(write_config(tmp_path), runner={"harness": "claude", "model": "sonnet", "reasoning": "low"})
    code, out = run_cli("check", str(config))
    assert_refused(code, out, "runner.model", "floating aliases")


def test_dry_run_starts_nothing(tmp_path: Path) -> None:
    """--dry-run --json prints the full plan and writes no run directory."""
    config = write_config(tmp_path, repeats=2)
    code, out = run_cli("run", str(config), "--dry-run", "--json", "--output", str(tmp_path / "run"))
    assert code == 0, out
    plan = json.loads(out)
    assert plan["coding_attempts"] == 2 * 2 * 2 == len(plan["slots"])
    assert not (tmp_path / "run").exists()
    assert QUICKSTART.exists()


@pytest.mark.parametrize("runner, needle", [
    ({"harness": "claude", "model": "claude-sonnet-4-5-latest", "reasoning": "low"}, "floating aliases"),
    ({"harness": "claude", "model": "claude-sonnet-4-5"}, "explicit effort"),
    ({"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "minimal"}, "explicit effort"),
])
def test_claude_runner_settings_are_checked_before_anything_starts(tmp_path: Path, runner: dict[str, str], needle: str) -> None:
    """Floating -latest ids and missing or foreign efforts are refused by check, not mid-run."""
    code, out = run_cli("check", str(edit(write_config(tmp_path), runner=runner)))
    assert_refused(code, out, needle)


def test_invalid_probe_scenario_is_refused_before_the_run_directory(tmp_path: Path) -> None:
    """A probe scenario that does not parse stops run before any run directory is made."""
    bad = tmp_path / "scenario.yaml"
    bad.write_text("rules: [ {when: 3} ]\n")
    config = edit(write_config(tmp_path), runner={"harness": "codex", "model": "gpt-5.5", "probe": str(bad)})
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "run"), "--yes")
    assert code == 2, out
    assert "scenario.yaml" in out
    assert not (tmp_path / "run").exists()


def test_simulated_task_without_candidates_is_refused(tmp_path: Path) -> None:
    """The simulated harness needs simulated/candidates.toml in every task."""
    source = tmp_path / "tasks"
    task = source / "plain"
    (task / "workspace").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text('schema_version = "1.4"\n')
    (task / "instruction.md").write_text("do it\n")
    (task / "tests" / "test.sh").write_text("#!/bin/sh\n")
    config = edit(write_config(tmp_path), tasks={"source": str(source), "ids": ["plain"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "simulated/candidates.toml")


def test_shared_verifier_is_refused(tmp_path: Path) -> None:
    """A task that declares a shared verifier is refused before anything starts."""
    source = tmp_path / "tasks"
    task = source / "shared"
    (task / "workspace").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text('schema_version = "1.4"\n[verifier]\nenvironment_mode = "shared"\n')
    (task / "instruction.md").write_text("do it\n")
    (task / "tests" / "test.sh").write_text("#!/bin/sh\n")
    config = edit(write_config(tmp_path, harness="nop"), tasks={"source": str(source), "ids": ["shared"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "shared verifiers are not supported", "verifier.environment_mode")
