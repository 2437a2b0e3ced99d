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
    from pluginbench.status import status_snapshot

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


def _events(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.anyio
async def test_selected_index_is_bound_and_only_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The finished round binds its index.json by sha256 in a source_only.selected event; the report reads that
    index only, and withholds its grades (with a note) when the file no longer matches the bound sha256."""
    import hashlib

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rd = create_run(load(_config(tmp_path, _task_with_agent_test(tmp_path))), tmp_path / "run")
    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]
    index = RunDir(rd.root).evidence / "source-only" / "filter-1" / "index.json"
    (selected,) = [e for e in _events(rd.root) if e["type"] == "source_only.selected"]
    assert selected["filter"] == "1" and selected["index"] == "evidence/source-only/filter-1/index.json"
    assert selected["index_sha256"] == hashlib.sha256(index.read_bytes()).hexdigest() and selected["grades"] == 1
    types = [e["type"] for e in _events(rd.root)]
    assert types.index("source_only.selected") < types.index("report.built")
    doc = json.loads((rd.report_dir / "results.json").read_text())
    validate_results(doc)
    assert doc["source_only_index"]["status"] == "verified" and doc["source_only_index"]["sha256"] == selected["index_sha256"]
    assert doc["attempts"][0]["source_only_reward"] == 1.0

    index.write_text(index.read_text().replace('"graded"', '"unavailable"'))
    from pluginbench.projections import build_report

    build_report(rd.root)
    doc = json.loads((rd.report_dir / "results.json").read_text())
    validate_results(doc)
    assert doc["source_only_index"]["status"] == "changed" and "bound in events.jsonl" in doc["source_only_index"]["reason"]
    (row,) = doc["attempts"]
    assert row["source_only_reward"] is None and row["source_only_grading"] is None and row["outcome"] == "pass"
    assert any(n.startswith("Source-only grades withheld") for n in doc["notes"])


@pytest.mark.anyio
async def test_run_graded_under_older_revision_is_graded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished run whose grades and selected index record another filter revision is graded again by the next
    run into filter-<current>/, which becomes the selected index; the earlier revision's folder stays untouched."""
    import hashlib

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rd = create_run(load(_config(tmp_path, _task_with_agent_test(tmp_path))), tmp_path / "run")
    await _drive(rd.root)
    evidence = RunDir(rd.root).evidence / "source-only"
    # Make it a run graded under revision "0": its folder, its index and its events say so.
    (evidence / "filter-1").rename(evidence / "filter-0")
    old_index = evidence / "filter-0" / "index.json"
    index = json.loads(old_index.read_text())
    index["source_only_filter"] = "0"
    for row in index["grades"].values():
        row["filter"] = row["source_only_filter"] = "0"
    old_index.write_text(json.dumps(index))
    old_bytes = old_index.read_bytes()
    lines = []
    for event in _events(rd.root):
        if event["type"] in ("source_only.started", "source_only.graded"):
            event["filter"] = "0"
        if event["type"] == "source_only.selected":
            event.update(filter="0", index="evidence/source-only/filter-0/index.json",
                         index_sha256=hashlib.sha256(old_bytes).hexdigest())
        lines.append(json.dumps(event))
    (rd.root / "events.jsonl").write_text("\n".join(lines) + "\n")

    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]
    started = [e for e in _events(rd.root) if e["type"] == "source_only.started"]
    assert [e["filter"] for e in started] == ["0", "1"]
    assert state.source_only_selected.filter == "1"  # type: ignore[attr-defined]
    new_index = json.loads((evidence / "filter-1" / "index.json").read_text())
    (grade,) = new_index["grades"].values()
    assert new_index["source_only_filter"] == "1" and grade["status"] == "graded"
    assert old_index.read_bytes() == old_bytes  # the earlier revision stays where it is
    doc = json.loads((rd.report_dir / "results.json").read_text())
    validate_results(doc)
    assert doc["source_only_index"]["filter"] == "1" and doc["source_only_index"]["status"] == "verified"
    assert doc["attempts"][0]["source_only_grading"]["source_only_filter"] == "1"
    assert doc["attempts"][0]["source_only_grading"]["evidence"].startswith("evidence/source-only/filter-1/")


@pytest.mark.anyio
async def test_run_prints_one_line_for_pending_grades(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """When source-only grades are left pending, `run` prints one line with how many and why, and how to retry."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pluginbench.actors import _source_only
    from pluginbench.cli._run import _finish

    async def gone(engine: object, task_id: str) -> str:
        return "the grader image sha256:test of task 'roman-numerals' is gone from the Docker engine"

    monkeypatch.setattr(_source_only, "_missing_grader", gone)
    rd = create_run(load(_config(tmp_path, _task_with_agent_test(tmp_path))), tmp_path / "run")
    state = await _drive(rd.root)
    capsys.readouterr()
    assert _finish(RunDir(rd.root), state, False) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if "pending" in x]
    assert line.startswith("1 source-only grade(s) pending (the grader image sha256:test of task 'roman-numerals' is gone")
    assert line.endswith(f"pluginbench run {rd.root} tries them again")
