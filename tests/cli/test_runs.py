"""Whole runs through the real CLI on the local backend: background, stop, kill -9, resume."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.runs_helpers import events_of, write_config

pytestmark = pytest.mark.slow


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=300)
    if check and result.returncode != 0:
        raise AssertionError(f"pluginbench {' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def status(run_dir: Path) -> dict[str, Any]:
    return json.loads(cli("status", str(run_dir), "--json").stdout)


def wait_until_unowned(run_dir: Path, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        snap = status(run_dir)
        if not snap["active"]:
            return snap
        time.sleep(0.2)
    raise AssertionError(f"{run_dir} still owned after {timeout} s")


def assert_invariants(run_dir: Path) -> None:
    """Every slot ends complete exactly once; no completed attempt was coded again."""
    events = events_of(run_dir)
    created = events[0]
    completed = [e["attempt_id"] for e in events if e["type"] == "attempt.completed"]
    assert len(completed) == len(set(completed)), "an attempt completed twice"
    launches = Counter(e["attempt_id"] for e in events if e["type"] == "agent.launched")
    assert all(n == 1 for n in launches.values()), f"an attempt launched twice: {launches}"
    resets = Counter(e["attempt_id"] for e in events if e["type"] == "attempt.reset")
    starts = Counter(e["attempt_id"] for e in events if e["type"] == "attempt.started")
    for aid in completed:
        # Only a reset (an attempt that never launched its agent) may start again.
        assert starts[aid] == 1 + resets[aid], f"completed attempt {aid} was started {starts[aid]} times"
        done_at = next(i for i, e in enumerate(events) if e["type"] == "attempt.completed" and e["attempt_id"] == aid)
        assert not [e for e in events[done_at:] if e.get("attempt_id") == aid and e["type"] in ("attempt.started", "agent.launched")]
    slot_of = {s["attempt_id"]: s["slot"] for s in created["slots"]}
    for e in events:
        if e["type"] == "attempt.discarded":
            slot_of[e["replaced_by"]] = e["slot"]
    done_slots = Counter(slot_of[aid] for aid in completed)
    assert sorted(done_slots) == sorted(s["slot"] for s in created["slots"])
    assert all(n == 1 for n in done_slots.values()), "a slot completed twice"
    discarded = {e["attempt_id"] for e in events if e["type"] == "attempt.discarded"}
    assert not discarded & set(completed), "a discarded attempt was also completed"


def test_background_run_completes_and_reports(tmp_path: Path) -> None:
    """run returns once the worker owns the lock; the run finishes with a report and status says so."""
    config = write_config(tmp_path, harness="simulated", repeats=2)
    out = cli("run", str(config), "--output", str(tmp_path / "run")).stdout
    assert "status" in out and "--watch" in out
    snap = wait_until_unowned(tmp_path / "run")
    assert snap["phase"] == "complete"
    assert snap["states"]["complete"] == snap["attempts_total"] == 2 * 2 * 2
    assert snap["report"] and Path(snap["report"]).is_file()
    assert snap["simulated"] is True
    assert snap["resume_command"] is None
    assert (tmp_path / "run" / "run.log").read_text().count("finished") == 1
    assert_invariants(tmp_path / "run")


def test_stop_keeps_running_attempts_and_resume_finishes(tmp_path: Path) -> None:
    """stop lets coding attempts finish and be kept; no new one starts; resume completes the rest."""
    config = write_config(tmp_path, harness="simulated", repeats=3, jobs=1,
                          tasks=["roman-numerals", "word-wrap", "merge-intervals"])
    run_dir = tmp_path / "run"
    cli("run", str(config), "--output", str(run_dir))
    deadline = time.monotonic() + 60
    while not any(e["type"] == "agent.launched" for e in events_of(run_dir)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    cli("stop", str(run_dir), "--wait")
    snap = status(run_dir)
    assert snap["phase"] == "stopped"
    assert snap["states"]["running"] == 0
    assert snap["states"]["pending"] > 0
    assert snap["resume_command"] == f"pluginbench run {run_dir}"
    events = events_of(run_dir)
    stop_at = next(i for i, e in enumerate(events) if e["type"] == "run.stopping")
    assert not [e for e in events[stop_at:] if e["type"] == "attempt.started"], "an attempt started after stop"
    launched_before_stop = {e["attempt_id"] for e in events[:stop_at] if e["type"] == "agent.launched"}
    completed = {e["attempt_id"] for e in events if e["type"] == "attempt.completed"}
    assert launched_before_stop <= completed, "a running attempt was not kept"
    cli("run", str(run_dir), "--foreground")
    assert status(run_dir)["phase"] == "complete"
    assert_invariants(run_dir)


def test_stop_without_owner_is_harmless(tmp_path: Path) -> None:
    """stop on a run nobody owns signals nothing and says so."""
    config = write_config(tmp_path, harness="nop", tasks=["roman-numerals"])
    cli("run", str(config), "--output", str(tmp_path / "run"), "--foreground")
    out = cli("stop", str(tmp_path / "run")).stdout
    assert "no live owner" in out


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_at_random_points_then_resume(tmp_path: Path, seed: int) -> None:
    """Killing the worker at random points loses nothing saved; resume ends with each slot complete once."""
    rng = random.Random(seed)
    config = write_config(tmp_path, harness="simulated", repeats=2, jobs=2,
                          tasks=["roman-numerals", "word-wrap", "csv-quoting"])
    run_dir = tmp_path / "run"
    cli("run", str(config), "--output", str(run_dir))
    for _ in range(6):
        snap = status(run_dir)
        if snap["phase"] == "complete":
            break
        if snap["active"]:
            time.sleep(rng.uniform(0.2, 2.0))
            owner = json.loads((run_dir / "run.lock").read_text())
            with contextlib.suppress(ProcessLookupError):
                os.kill(owner["pid"], signal.SIGKILL)
            time.sleep(0.2)
        snap = status(run_dir)
        if snap["phase"] == "complete":
            break
        assert snap["active"] is False
        assert snap["phase"] == "interrupted", snap["phase"]
        assert snap["resume_command"] is not None
        folded = Counter(e["type"] for e in events_of(run_dir))
        assert snap["states"]["complete"] == folded["attempt.completed"]
        cli("run", str(run_dir))
    wait_until_unowned(run_dir)
    if status(run_dir)["phase"] != "complete":
        cli("run", str(run_dir), "--foreground")
    snap = status(run_dir)
    assert snap["phase"] == "complete"
    assert_invariants(run_dir)
    for d in snap["discarded"]:
        assert (run_dir / "evidence" / "discarded" / d["id"]).is_dir() or d["tokens_status"] in ("unknown", "exact")


def test_status_watch_and_events_follow_end_with_the_run(tmp_path: Path) -> None:
    """status --watch into a pipe prints whole, newline-terminated views until the run ends; events --follow prints every event and exits."""
    config = write_config(tmp_path, harness="nop", repeats=2)
    run_dir = tmp_path / "run"
    cli("run", str(config), "--output", str(run_dir))
    watch = subprocess.Popen([sys.executable, "-m", "pluginbench", "status", str(run_dir), "--watch"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    follow = subprocess.Popen([sys.executable, "-m", "pluginbench", "events", str(run_dir), "--follow"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watch_out, _ = watch.communicate(timeout=180)
    follow_out, _ = follow.communicate(timeout=180)
    assert watch.returncode == 0 and "phase complete" in watch_out
    assert watch_out.endswith("\n") and watch_out.rsplit("phase ", 1)[1].startswith("complete")  # the last view is the final one
    assert follow.returncode == 0
    followed = [json.loads(line) for line in follow_out.splitlines()]
    assert followed == events_of(run_dir)
    assert followed[-1]["type"] == "run.finished"


def test_status_names_sandbox_folders_a_kill_left_behind(tmp_path: Path) -> None:
    """A run nobody owns lists its leftover sandbox folders under left_running, and resume removes them."""
    import hashlib
    import tempfile

    config = write_config(tmp_path, harness="nop", tasks=["roman-numerals"])
    run_dir = tmp_path / "run"
    cli("run", str(config), "--output", str(run_dir), "--foreground")
    run_id = f"{run_dir.name[:28]}-{hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:10]}"
    stale = Path(tempfile.gettempdir()) / f"pluginbench-{run_id}-x__vanilla__r1-coding-abc"
    (stale / "app").mkdir(parents=True)
    try:
        snap = status(run_dir)
        assert snap["left_running"]["folders"] == [str(stale)]
        assert "left behind" in cli("status", str(run_dir)).stdout
    finally:
        import shutil

        shutil.rmtree(stale, ignore_errors=True)


def test_moved_run_is_refused_in_the_foreground(tmp_path: Path) -> None:
    """Resuming a run that was moved exits 2 before any worker starts."""
    config = write_config(tmp_path, harness="nop", tasks=["roman-numerals"])
    cli("run", str(config), "--output", str(tmp_path / "run"), "--foreground")
    (tmp_path / "run").rename(tmp_path / "moved")
    done = cli("run", str(tmp_path / "moved"), check=False)
    assert done.returncode == 2 and "moved" in done.stderr


def test_fast_status_json_matches_the_full_cli(tmp_path: Path) -> None:
    """The console entry's fast status --json path prints what the typer command prints."""
    from typer.testing import CliRunner

    from pluginbench.cli import app

    config = write_config(tmp_path, harness="nop", tasks=["roman-numerals"])
    run_dir = tmp_path / "run"
    cli("run", str(config), "--output", str(run_dir), "--foreground")
    fast = json.loads(cli("status", str(run_dir), "--json").stdout)
    full = json.loads(CliRunner().invoke(app, ["status", str(run_dir), "--json"]).output)
    for snap in (fast, full):
        snap.pop("heartbeat")
    assert fast == full and fast["phase"] == "complete"
