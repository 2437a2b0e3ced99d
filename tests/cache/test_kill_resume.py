"""Killing a run that publishes to the vanilla cache at random points, then resuming it,
leaves the cache consistent: each finished vanilla repeat published once, whole, and
admitted by the next evaluation, which codes no vanilla attempt."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.runs_helpers import events_of, write_config

pytestmark = pytest.mark.slow


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done


def _status(env: dict[str, str], run_dir: Path) -> dict[str, object]:
    return json.loads(_cli(env, "status", str(run_dir), "--json").stdout)


@pytest.mark.parametrize("seed", [5])
def test_kill_9_at_random_points_then_resume_keeps_the_cache_consistent(tmp_path: Path, seed: int) -> None:
    """After kills and resumes, every live vanilla attempt is recorded cached with one entry of its own, no temporary folder is left, and a second run reuses them all."""
    rng = random.Random(seed)
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env.pop("PLUGINBENCH_VANILLA_CACHE", None)
    config = write_config(tmp_path, harness="simulated", repeats=2, jobs=2, tasks=["roman-numerals", "word-wrap"],
                          environment={"isolation": "none"})
    run_dir = tmp_path / "run1"
    _cli(env, "run", str(config), "--output", str(run_dir))
    for _ in range(5):
        snap = _status(env, run_dir)
        if snap["phase"] == "complete":
            break
        if snap["active"]:
            time.sleep(rng.uniform(0.3, 2.0))
            owner = json.loads((run_dir / "run.lock").read_text())
            with contextlib.suppress(ProcessLookupError):
                os.kill(owner["pid"], signal.SIGKILL)
            time.sleep(0.3)
        if _status(env, run_dir)["phase"] != "complete":
            _cli(env, "run", str(run_dir))
    deadline = time.monotonic() + 120
    while _status(env, run_dir)["active"] and time.monotonic() < deadline:
        time.sleep(0.2)
    if _status(env, run_dir)["phase"] != "complete":
        _cli(env, "run", str(run_dir), "--foreground")
    assert _status(env, run_dir)["phase"] == "complete"

    events = events_of(run_dir)
    live_vanilla = {r["id"] for r in _status(env, run_dir)["attempts"] if r["arm"] == "vanilla"}  # type: ignore[index]
    cached = [e for e in events if e["type"] == "attempt.cached"]
    entries = {e["attempt_id"]: e["entry"] for e in cached if e["entry"]}
    assert set(entries) == live_vanilla, (cached, live_vanilla)
    cache = tmp_path / "xdg" / "pluginbench"
    for aid, entry in entries.items():
        manifest = json.loads((cache / entry / "entry.json").read_text())
        assert manifest["origin_attempt"] == aid
    leftovers = [p for p in (cache / "vanilla").rglob(".tmp-*")]
    assert not leftovers

    second = tmp_path / "run2"
    _cli(env, "run", str(config), "--output", str(second), "--foreground")
    events2 = events_of(second)
    assert len([e for e in events2 if e["type"] == "attempt.reused"]) == 4
    assert not [e for e in events2 if e["type"] == "agent.launched" and "__vanilla__" in e["attempt_id"]]
