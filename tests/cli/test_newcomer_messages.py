"""Messages a newcomer meets on the bundled example say exactly what to do next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli._cli_helpers import assert_refused, run_cli
from tests.runs_helpers import QUICKSTART, write_config


def test_dry_run_without_prices_names_the_prices_setting(tmp_path: Path) -> None:
    """A plan without a price table says dollars are unknown and names the `prices:` setting and its docs page."""
    code, out = run_cli("run", str(write_config(tmp_path)), "--dry-run")
    assert code == 0, out
    assert "no price table (set prices: to a dated prices.json in the config, see docs/configuration.md)" in out
    assert not (tmp_path / "runs").exists()


def test_judge_prepare_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    """judge prepare with a missing folder or a plain folder says so (not 'the file is missing'), exits 2 and writes nothing."""
    criteria = tmp_path / "criteria.md"
    criteria.write_text("# criteria\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    for side, said in ((f"{tmp_path / 'nope'}=vanilla", "does not exist"), (f"{plain}=vanilla", "is not a run directory")):
        code, out = run_cli("judge", "prepare", side, f"{plain}=docs", "--criteria", str(criteria), "--seed", "1",
                            "--output", str(tmp_path / "judged"))
        assert code == 2 and said in out and "the file is missing" not in out, out
        assert "Traceback" not in out and not (tmp_path / "judged").exists()


def test_judge_prepare_refuses_a_negative_seed_like_a_config_seed(tmp_path: Path) -> None:
    """judge prepare --seed -1 exits 2 naming --seed and the rule, before reading any run, and writes nothing."""
    criteria = tmp_path / "criteria.md"
    criteria.write_text("# criteria\n")
    code, out = run_cli("judge", "prepare", f"{tmp_path / 'a'}=vanilla", f"{tmp_path / 'b'}=docs", "--criteria",
                        str(criteria), "--seed", "-1", "--output", str(tmp_path / "judged"))
    assert code == 2 and "--seed must be 0 or more" in out and "Traceback" not in out, out
    assert not (tmp_path / "judged").exists()


def test_check_ends_with_a_verdict_line(tmp_path: Path) -> None:
    """check's last line says whether a run would start: passed, passed without readiness (and how to add it), or failed with what stops it."""
    config = write_config(tmp_path, tasks=["word-wrap"])
    code, out = run_cli("check", str(config))
    assert code == 0, out
    assert out.rstrip().splitlines()[-1] == "check passed: `pluginbench run` would start coding with these settings"
    code, out = run_cli("check", str(config), "--no-readiness")
    assert code == 0 and out.rstrip().splitlines()[-1].startswith("check passed without readiness (--no-readiness)")
    blocked = write_config(tmp_path, tasks=["word-wrap"], measurements=["tokens", "time", "lines", "coverage"])
    code, out = run_cli("check", str(blocked))
    assert code == 1, out
    assert out.rstrip().splitlines()[-1].startswith("check failed: 1 measure problem(s) stop the run")


def test_check_prints_the_settings_before_readiness_and_each_control_as_it_finishes(tmp_path: Path, monkeypatch) -> None:
    """The config, cost and cache lines are on screen before the first readiness control finishes, and each control's line is printed when it finishes, not all at the end."""
    import io

    from rich.console import Console

    from pluginbench.cli import _setup

    screen = Console(file=io.StringIO(), record=True, width=200)
    monkeypatch.setattr(_setup, "console", screen)
    seen_at_each_control: list[str] = []
    original = _setup._print_control

    def spy(row: dict) -> None:
        seen_at_each_control.append(screen.export_text(clear=False))
        original(row)

    monkeypatch.setattr(_setup, "_print_control", spy)
    code, _ = run_cli("check", str(write_config(tmp_path, tasks=["word-wrap", "roman-numerals"])))
    assert code == 0
    assert len(seen_at_each_control) == 4  # oracle and nop on two tasks
    first, last = seen_at_each_control[0], seen_at_each_control[-1]
    assert "config ok: 2 tasks" in first and "readiness: oracle and nop on each of 2 task(s)" in first
    assert "readiness word-wrap: oracle" not in first and "check passed" not in last
    assert last.count(": oracle ok") + last.count(": nop ok") == 3  # the three controls before the last


@pytest.mark.parametrize(("treatment", "field", "said"), [
    ({"guidanc": ["x.md"]}, "treatments.second.guidanc", "unknown key 'guidanc'"),
    ({"guidance": "x.md"}, "treatments.second.guidance", "wrong type: expected `array`, got `str`"),
])
def test_a_mistake_inside_a_named_treatment_names_that_treatment(tmp_path: Path, treatment: dict, field: str, said: str) -> None:
    """A typo or wrong type inside one of several treatments names it (treatments.second.guidanc), never msgspec's treatments[...]."""
    guide = str(QUICKSTART / "guidance" / "testing-discipline.md")
    config = write_config(tmp_path, treatments={"first": {"guidance": [guide]}, "second": treatment})
    code, out = run_cli("check", str(config), "--no-readiness")
    assert_refused(code, out, said, f"field: {field}")
    assert "[...]" not in out


def test_runs_started_in_the_same_second_get_their_own_default_folders(tmp_path: Path, monkeypatch) -> None:
    """Without --output, a run whose runs/<timestamp> is taken (already there, or made by another process between the check and mkdir) goes to <timestamp>-2, -3 instead of being refused."""
    import pluginbench.cache
    from pluginbench.actors import load_config
    from pluginbench.cli import _run

    stamp = tmp_path / "runs" / "20261201-045840"
    monkeypatch.setattr(_run, "_default_output", lambda prefix="": stamp)
    loaded = load_config(write_config(tmp_path))
    stamp.mkdir(parents=True)  # a run started earlier in the same second
    assert _run._create(loaded, None).root.name == "20261201-045840-2"

    real_check = pluginbench.cache.check_output_outside

    def another_process_takes_it(output: Path, root: Path) -> None:
        real_check(output, root)
        if output.name.endswith("-3"):
            output.mkdir()  # appears after the exists() check, before mkdir

    monkeypatch.setattr(pluginbench.cache, "check_output_outside", another_process_takes_it)
    assert _run._create(loaded, None).root.name == "20261201-045840-4"


def test_an_explicit_output_that_exists_is_still_refused(tmp_path: Path) -> None:
    """--output naming an existing folder is refused (exit 2, nothing written into it), never renamed."""
    taken = tmp_path / "taken"
    taken.mkdir()
    code, out = run_cli("run", str(write_config(tmp_path)), "--output", str(taken), "--yes")
    assert_refused(code, out, "already exists", "field: --output")
    assert list(taken.iterdir()) == []


@pytest.mark.slow
def test_a_foreground_run_piped_into_head_still_finishes(tmp_path: Path) -> None:
    """When the reader of stdout goes away (`| head -1`), a foreground run keeps working silently and finishes, with no traceback and exit 0."""
    import json
    import subprocess
    import sys

    run_dir = tmp_path / "run"
    cmd = [sys.executable, "-m", "pluginbench", "run", str(write_config(tmp_path, tasks=["word-wrap"])),
           "--output", str(run_dir), "--foreground"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline()  # the first line, then the reader leaves
    proc.stdout.close()
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err
    status = subprocess.run([sys.executable, "-m", "pluginbench", "status", str(run_dir), "--json"],
                            capture_output=True, timeout=120, check=True)
    assert json.loads(status.stdout)["phase"] == "complete"


def test_dry_run_header_counts_in_the_right_number(tmp_path: Path) -> None:
    """The plan header says `1 task × 2 arms × 1 repeat` (singular for one), not `1 repeats`."""
    code, out = run_cli("run", str(write_config(tmp_path, tasks=["word-wrap"])), "--dry-run")
    assert code == 0, out
    assert "2 coding attempts = 1 task × 2 arms × 1 repeat;" in out, out


@pytest.mark.parametrize("columns", [60, 80, 85, 200])
def test_dry_run_attempt_ids_stay_whole_on_a_narrow_console(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             columns: int) -> None:
    """At any console width (a pipe is 80 columns) every planned attempt id is printed whole on one line, once."""
    from pluginbench.cli import _console

    monkeypatch.setattr(_console.console, "width", columns)
    config = write_config(tmp_path, tasks=["roman-numerals", "word-wrap"], repeats=2)
    code, plan = run_cli("run", str(config), "--dry-run", "--json")
    assert code == 0, plan
    ids = [slot["attempt_id"] for slot in json.loads(plan)["slots"]]
    assert any(len(i) > 30 for i in ids), ids
    code, out = run_cli("run", str(config), "--dry-run")
    assert code == 0, out
    words = [word for line in out.splitlines() for word in line.replace("│", " ").split()]
    for attempt_id in ids:
        assert words.count(attempt_id) == 1, (attempt_id, out)


def test_status_refuses_watch_with_json(tmp_path: Path) -> None:
    """status --watch --json exits 2 naming both options and what to use instead, before reading the folder."""
    code, out = run_cli("status", str(tmp_path / "no-run"), "--watch", "--json")
    assert code == 2 and "--watch and --json cannot be combined" in out and "Traceback" not in out, out
