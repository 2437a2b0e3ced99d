"""Source-only grades in whole runs (local backend, unisolated): graded at the end of the run,
pending when the grader is gone, retried by the next run of the finished run directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from pluginbench.actors import create_run
from pluginbench.config import load
from pluginbench.projections._results_schema import validate as validate_results
from pluginbench.rundir import RunDir
from tests.runs_helpers import QUICKSTART

from .test_supervisor import _drive


def _task_with_agent_test(tmp: Path) -> Path:
    """roman-numerals whose oracle also writes a test file of its own (a passing one)."""
    source = tmp / "tasks"
    shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", source / "roman-numerals")
    solve = source / "roman-numerals" / "solution" / "solve.sh"
    solve.write_text(solve.read_text() + 'printf "import unittest\\n" > tests/test_agent_extra.py\n')
    return source


def _config(tmp: Path, source: Path) -> Path:
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump({
        "name": "source-only", "tasks": {"source": str(source), "ids": ["roman-numerals"]}, "treatments": {},
        "runner": {"harness": "oracle"}, "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 60,
        "environment": {"isolation": "none"},
    }))
    return path


@pytest.mark.anyio
async def test_pending_source_only_grade_is_reported_then_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grader that is gone leaves the source-only grade pending (the report is still written); the next run of
    the finished run directory replays the verifier and records the grade and its evidence."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pluginbench.actors import _source_only

    async def gone(engine: object, task_id: str) -> str:
        return "the grader image sha256:test of task 'roman-numerals' is gone from the Docker engine"

    monkeypatch.setattr(_source_only, "_missing_grader", gone)
    rd = create_run(load(_config(tmp_path, _task_with_agent_test(tmp_path))), tmp_path / "run")
    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]
    doc = json.loads((rd.report_dir / "results.json").read_text())
    validate_results(doc)  # every field is described by the typed schema
    (row,) = doc["attempts"]
    assert row["outcome"] == "pass" and row["source_only_reward"] is None
    assert row["source_only_grading"]["status"] == "pending"
    assert "is gone" in row["source_only_grading"]["pending"]
    assert row["source_only_grading"]["removed_test_files"] == ["tests/test_agent_extra.py"]
    from pluginbench.projections import status_snapshot

    counts = status_snapshot(rd.root)["source_only"]
    assert (counts["pending"], counts["graded"]) == (1, 0) and "is gone" in counts["pending_reasons"][0]
    import subprocess
    import sys

    plan = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(rd.root), "--dry-run", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert json.loads(plan.stdout)["resume"]["source_only_replays"] == 1, plan.stdout + plan.stderr

    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]
    doc = json.loads((rd.report_dir / "results.json").read_text())
    validate_results(doc)
    (row,) = doc["attempts"]
    grading = row["source_only_grading"]
    assert row["source_only_reward"] == 1.0 and grading["status"] == "graded" and grading["pending"] is None
    assert grading["seconds"] is not None and grading["seconds"] > 0
    folder = RunDir(rd.root).evidence / "source-only" / "filter-1"
    index = json.loads((folder / "index.json").read_text())
    assert index["source_only_filter"] == "1" and index["grades"][row["attempt_id"]]["status"] == "graded"
    assert "test_agent_extra" not in (folder / row["attempt_id"] / "model.patch").read_text()
    assert (folder / row["attempt_id"] / "grading" / "verifier" / "reward.txt").read_text().strip() == "1"


@pytest.mark.anyio
async def test_tampered_patch_is_graded_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A saved model.patch changed after capture makes the report's outcome unknown with the patch-integrity reason."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rd = create_run(load(_config(tmp_path, _task_with_agent_test(tmp_path))), tmp_path / "run")
    await _drive(rd.root)
    (row,) = json.loads((rd.report_dir / "results.json").read_text())["attempts"]
    patch = RunDir(rd.root).attempt(row["attempt_id"]) / "model.patch"
    patch.write_text(patch.read_text() + "\n")
    from pluginbench.projections import build_report

    build_report(rd.root)
    (row,) = json.loads((rd.report_dir / "results.json").read_text())["attempts"]
    assert row["outcome"] == "unknown" and row["reward"] is None
    assert row["outcome_reason"].startswith("patch integrity: model.patch has sha256")
