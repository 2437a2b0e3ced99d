"""Inputs that used to pass silently or get a vague error: refused with exit 2, a message
naming the file, the field and the fix, and nothing written (issue 14 items 10-13, 15,
17-21)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.cli._cli_helpers import assert_refused, edit, run_cli
from tests.runs_helpers import QUICKSTART, write_config

runner = CliRunner()


@pytest.mark.parametrize("repeats", [11, 100_000, 1_000_000_000])
def test_repeats_are_bounded(tmp_path: Path, repeats: int) -> None:
    """repeats over 10 is refused at once by check and run --dry-run (no plan is built)."""
    config = edit(write_config(tmp_path), repeats=repeats)
    for args in (("check", str(config)), ("run", str(config), "--dry-run")):
        start = time.monotonic()
        code, out = run_cli(*args)
        assert_refused(code, out, "repeats must be 1 to 10", "field: repeats", "evaluation.yaml")
        assert time.monotonic() - start < 30  # refused, not planned (a generous bound, not a benchmark)


def test_total_attempts_are_bounded(tmp_path: Path) -> None:
    """tasks × arms × repeats over 10,000 is refused, naming the product."""
    config = write_config(tmp_path, repeats=10, treatments={
        f"t{i}": {"guidance": [str(QUICKSTART / "guidance" / "testing-discipline.md")]} for i in range(600)
    })
    config = edit(config, tasks__ids=["roman-numerals", "word-wrap"])
    code, out = run_cli("check", str(config))
    assert_refused(code, out, "2 tasks × 601 arms × 10 repeats = 12020 coding attempts", "over the limit of 10000")


def test_dry_run_at_the_bound_is_quick(tmp_path: Path) -> None:
    """A plan at the repeats bound is built and printed as JSON with every slot."""
    config = edit(write_config(tmp_path), repeats=10)
    code, out = run_cli("run", str(config), "--dry-run", "--json")
    assert code == 0, out
    assert len(json.loads(out)["slots"]) == 2 * 2 * 10


@pytest.mark.parametrize("text, needle", [
    ("repeats: 1\nrepeats: 2\n", "duplicate key 'repeats'"),
    ("treatments:\n  td:\n    guidance: [a.md]\n  td:\n    guidance: [b.md]\n", "duplicate key 'td'"),
])
def test_duplicate_yaml_keys(tmp_path: Path, text: str, needle: str) -> None:
    """A key written twice in YAML is refused with its line, never silently replaced."""
    config = write_config(tmp_path)
    body = config.read_text()
    for key in ("repeats:", "treatments:"):
        body = "\n".join(line for line in body.splitlines() if not line.startswith(key) and not line.startswith("  testing") and not line.startswith("    guidance") and not line.startswith("    - "))
    config.write_text(body + "\n" + text)
    code, out = run_cli("check", str(config))
    assert_refused(code, out, needle, "line", "write each key once")


def test_duplicate_json_treatment(tmp_path: Path) -> None:
    """A treatment written twice in JSON is refused as a duplicate (not "declares nothing")."""
    data = yaml.safe_load(write_config(tmp_path).read_text())
    guide = str(QUICKSTART / "guidance" / "testing-discipline.md")
    body = json.dumps({k: v for k, v in data.items() if k != "treatments"})[:-1]
    body += f', "treatments": {{"td": {{"guidance": ["{guide}"]}}, "td": {{"guidance": ["{guide}"]}}}}}}'
    config = tmp_path / "evaluation.json"
    config.write_text(body)
    code, out = run_cli("check", str(config))
    assert_refused(code, out, "duplicate key 'td'", "evaluation.json")
    assert "declares nothing" not in out


@pytest.mark.parametrize("model", ["claude-sonnet-4-5 ", " claude-sonnet-4-5", "claude-", "claude-sonnet 4-5"])
def test_inexact_claude_model_ids(tmp_path: Path, model: str) -> None:
    """Model ids with spaces or nothing after claude- are refused."""
    config = edit(write_config(tmp_path), runner={"harness": "claude", "model": model, "reasoning": "low"})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "runner.model")


@pytest.mark.parametrize("tid", [".", "..", "a/b", "../tasks", "", " roman-numerals"])
def test_task_id_must_be_one_folder_name(tmp_path: Path, tid: str) -> None:
    """A task id that is not exactly one folder name is refused; nothing is frozen."""
    config = write_config(tmp_path, tasks=["roman-numerals", tid])
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "run"))
    assert_refused(code, out, "is not one folder name", "tasks.ids[1]")
    assert not (tmp_path / "run").exists()


def test_binary_guidance_is_refused(tmp_path: Path) -> None:
    """Guidance that is not UTF-8 text is refused before it could become CLAUDE.md."""
    blob = tmp_path / "guide.md"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    code, out = run_cli("check", str(write_config(tmp_path, treatments={"g": {"guidance": [str(blob)]}})))
    assert_refused(code, out, "is not UTF-8 text", "treatments.g.guidance[0]")


@pytest.mark.parametrize("kind", ["plugins", "skills"])
def test_empty_package_folder_is_refused(tmp_path: Path, kind: str) -> None:
    """An empty plugin or skill folder is refused, also with the simulated harness."""
    (tmp_path / "empty").mkdir()
    code, out = run_cli("check", str(write_config(tmp_path, treatments={"g": {kind: [str(tmp_path / "empty")]}})))
    assert_refused(code, out, "is empty", f"treatments.g.{kind}[0]")


def test_empty_refused_variable_is_refused() -> None:
    """ANTHROPIC_API_KEY set but empty is refused like a set one."""
    from pluginbench.errors import InputError
    from pluginbench.harnesses._claude_launch import check_operator_env

    with pytest.raises(InputError, match="ANTHROPIC_API_KEY set but empty"):
        check_operator_env({"ANTHROPIC_API_KEY": "", "CLAUDE_CODE_OAUTH_TOKEN": "x"})


def test_two_tasks_with_one_name(tmp_path: Path) -> None:
    """Two task folders declaring the same [task] name are refused, naming both ids."""
    source = tmp_path / "tasks"
    shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", source / "roman-numerals")
    shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", source / "roman-copy")
    config = edit(write_config(tmp_path), tasks={"source": str(source), "ids": ["roman-numerals", "roman-copy"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "'roman-numerals' and 'roman-copy'", "task.name")


def test_rebound_settings_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An evaluation.json edited and re-bound after creation is refused by resume and its dry run."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pluginbench.actors import create_run
    from pluginbench.config import load

    rd = create_run(load(write_config(tmp_path, repeats=3)), tmp_path / "run")
    saved = json.loads(rd.evaluation.read_text())
    saved["repeats"] = 1
    data = (json.dumps(saved, indent=2, sort_keys=True) + "\n").encode()
    rd.evaluation.write_bytes(data)
    rd.binding.write_text(json.dumps({"evaluation_sha256": hashlib.sha256(data).hexdigest(), "file": "evaluation.json"}))
    before = rd.events.read_bytes()
    for args in (("--dry-run",), ("--foreground",)):
        code, out = run_cli("run", str(rd.root), *args)
        assert_refused(code, out, "not the settings this run was created with", "evaluation.json")
    assert rd.events.read_bytes() == before


def test_markup_in_the_name_is_printed_as_written(tmp_path: Path) -> None:
    """Rich markup in a config name is shown literally, never interpreted."""
    name = "[red]x[/red] [link=http://example.invalid]y[/link]"
    config = write_config(tmp_path, name=name)
    code, out = run_cli("run", str(config), "--dry-run")
    assert code == 0, out
    assert name in out


@contextlib.contextmanager
def _lost_lock_race(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, int]]:
    """A run whose lock a real other process takes between `run`'s ownership check and its
    worker's start; yields the run directory and the winner's pid."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pluginbench.actors import create_run
    from pluginbench.cli import _run
    from pluginbench.config import load

    rd = create_run(load(write_config(tmp_path)), tmp_path / "run")
    rd.log.write_text("12:00 winner progress line\n")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys,time; from pathlib import Path; from pluginbench.events import RunLock; "
         "RunLock(Path(sys.argv[1])).acquire(); print('held', flush=True); time.sleep(60)", str(rd.root)],
        stdout=subprocess.PIPE, text=True,
    )
    real = _run.live_owner
    calls = {"n": 0}

    def racing_live_owner(root: Path) -> object:
        calls["n"] += 1
        return None if calls["n"] == 1 else real(root)  # the first check ran before the winner took the lock

    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(_run, "live_owner", racing_live_owner)
        yield rd.root, holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_second_concurrent_run_names_the_owner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When another run takes the lock between our check and our worker's start, run
    exits 2 naming the owner, not 1 with the winner's progress lines."""
    with _lost_lock_race(tmp_path, monkeypatch) as (root, winner):
        code, out = run_cli("run", str(root))
        assert_refused(code, out, f"live pid {winner}", "run.lock", "pluginbench status")
        assert "winner progress line" not in out


def test_losing_worker_leaves_the_winners_run_log_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The background worker of the `run` that lost the lock race writes nothing into the
    winner's run.log; the refusal goes only to the losing command's own output."""
    with _lost_lock_race(tmp_path, monkeypatch) as (root, winner):
        code, out = run_cli("run", str(root))
        assert_refused(code, out, f"live pid {winner}")
        assert (root / "run.log").read_text() == "12:00 winner progress line\n"


def test_missing_cli_is_said_before_the_paid_run_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run claude.yaml without the Claude CLI says it is not installed before asking to pay."""
    from pluginbench.probe import _clis

    monkeypatch.setattr(_clis, "clis_dir", lambda: tmp_path / "no-clis")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-path"))
    config = edit(write_config(tmp_path), runner={"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low"},
                  environment={"allow_unisolated": True})
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "run"))
    assert_refused(code, out, "the claude CLI is not installed", "runner.harness")
    assert "coding attempts with a real agent" not in out
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", ["1e9", "1.0e9", "'1800'"])
def test_number_written_as_text(tmp_path: Path, value: str) -> None:
    """timeout_seconds: 1e9 or 1.0e9 (text to YAML) says it is text and that 1.0e+9 is a number."""
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace("timeout_seconds: 60", f"timeout_seconds: {value}"))
    code, out = run_cli("check", str(config))
    assert_refused(code, out, "is text, not a number", "field: timeout_seconds", "plain digits", "1.0e+9")


def test_timeout_is_bounded(tmp_path: Path) -> None:
    """timeout_seconds over 24 h is refused."""
    code, out = run_cli("check", str(edit(write_config(tmp_path), timeout_seconds=1_000_000_000)))
    assert_refused(code, out, "timeout_seconds must be 1 to 86400", "field: timeout_seconds")


def test_crlf_test_sh_is_refused(tmp_path: Path) -> None:
    """A tests/test.sh with CRLF line endings is refused naming the real cause."""
    source = tmp_path / "tasks"
    shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", source / "roman-numerals")
    sh = source / "roman-numerals" / "tests" / "test.sh"
    sh.write_bytes(sh.read_bytes().replace(b"\n", b"\r\n"))
    config = edit(write_config(tmp_path), tasks={"source": str(source), "ids": ["roman-numerals"]})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, "CRLF", "tests/test.sh", "dos2unix")


def test_missing_reward_points_to_the_verifier_stderr(tmp_path: Path) -> None:
    """When test.sh fails without a reward, the reason quotes its last stderr line and names the file."""
    from pluginbench.actors._pipeline import _stderr_hint

    (tmp_path / "test-stderr.txt").write_text("setup\n/bin/bash^M: bad interpreter: No such file or directory\n\n")
    hint = _stderr_hint(tmp_path / "test-stderr.txt")
    assert "bad interpreter" in hint and "grading/test-stderr.txt" in hint
    assert _stderr_hint(tmp_path / "absent.txt") == ""


def test_large_dry_run_lists_every_slot(tmp_path: Path) -> None:
    """A dry run of more than 500 slots lists every attempt id once, in plain columns."""
    treatments = {f"t{i}": {"guidance": [str(QUICKSTART / "guidance" / "testing-discipline.md")]} for i in range(30)}
    config = edit(write_config(tmp_path, treatments=treatments), repeats=10)
    code, out = run_cli("run", str(config), "--dry-run")
    assert code == 0, out
    ids = [line.split()[1] for line in out.splitlines() if line[:4].strip().isdigit() and "__r" in line]
    assert len(ids) == len(set(ids)) == 2 * 31 * 10


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (tools/setup.sh --dev)")
@pytest.mark.parametrize("workdir", ["/proc", "/tmp/app", "/home/agent"])
def test_a_workdir_on_a_sandbox_mount_is_bad_input_before_readiness(tmp_path: Path, workdir: str) -> None:
    """A task whose workdir is a folder bubblewrap mounts itself: check and run --dry-run exit 2 naming task.toml and environment.workdir, not a readiness failure (exit 1) after a run folder exists."""
    tasks = tmp_path / "tasks"
    shutil.copytree(QUICKSTART / "tasks" / "word-wrap", tasks / "word-wrap")
    toml = tasks / "word-wrap" / "task.toml"
    toml.write_text(toml.read_text().replace('workdir = "/app"', f'workdir = "{workdir}"'))
    assert f'workdir = "{workdir}"' in toml.read_text()
    config = write_config(tmp_path, tasks=["word-wrap"], treatments={},
                          environment={"backend": "local", "isolation": "bubblewrap"})
    edit(config, tasks__source=str(tasks))
    for argv in (["check", str(config), "--no-readiness"], ["run", str(config), "--dry-run", "-o", str(tmp_path / "r")]):
        code, out = run_cli(*argv)
        assert_refused(code, out, "collides with a sandbox mount", str(toml), "environment.workdir", "fix:")
    assert not (tmp_path / "r").exists()


def test_a_dry_run_refuses_an_output_folder_that_run_would_refuse(tmp_path: Path) -> None:
    """run --dry-run with an --output that exists exits 2 naming --output, as run itself would, instead of printing a plan that cannot start."""
    config = write_config(tmp_path)
    taken = tmp_path / "taken"
    taken.mkdir()
    code, out = run_cli("run", str(config), "--dry-run", "--output", str(taken))
    assert_refused(code, out, f"the output folder {taken} already exists", "--output", "fix:")
    assert list(taken.iterdir()) == []
    code, out = run_cli("run", str(config), "--dry-run", "--output", str(tmp_path / "free"))
    assert code == 0 and not (tmp_path / "free").exists(), out
