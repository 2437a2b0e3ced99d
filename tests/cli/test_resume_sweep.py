"""A resume removes the temporary files a killed process left in the run and in the run's
temp root, and never an agent's own files of the same names (issue 21 item 4)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from pluginbench.actors._sweep import run_temp_root
from pluginbench.rundir import RunDir
from tests.cli._cli_helpers import run_cli
from tests.cli.test_log_damage import finished_run  # noqa: F401 - the shared module fixture


def test_resume_sweeps_what_a_kill_left_and_keeps_agent_output(finished_run: Path, tmp_path: Path,  # noqa: F811
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Staged report files, *.json.tmp receipts, a measure scratch folder, a half-written packet and the run's temp root are removed; an export's file of the same name is kept."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    (run / "run.lock").unlink(missing_ok=True)
    attempt = next((run / "evidence" / "attempts").iterdir())
    left = [run / "report" / ".results.json.abc123.tmp", run / "evaluation.json.tmp",
            attempt / "execution.json.tmp", run / "measure" / ".cut.checking" / "x.json",
            run / "evidence" / "review-packets" / f"{attempt.name}.tmp" / "packet" / "a.txt"]
    kept = attempt / "export" / "data.json.tmp"
    for p in (*left, kept):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    temp_root = run_temp_root(RunDir(run.resolve()))
    (temp_root / "pluginbench-sim-1").mkdir(parents=True)
    (temp_root / "pluginbench-sim-1" / "stale").write_text("x")

    before = tempfile.tempdir
    code, out = run_cli("run", str(run), "--foreground")
    assert code == 0, out
    assert "temporary file(s) left by a process that ended" in out
    for p in left:
        assert not p.exists(), p
    assert not (run / "measure" / ".cut.checking").exists()
    assert not (run / "evidence" / "review-packets" / f"{attempt.name}.tmp").exists()
    assert kept.read_text() == "x"
    assert not temp_root.exists()
    assert tempfile.tempdir == before  # the worker restored the process's temp folder
