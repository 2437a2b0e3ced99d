"""With a reviewer configured, ``stop``, SIGTERM and SIGINT end the run ``run.stopped`` within
seconds (issue 21 item 4), on the local backend (and SIGTERM on docker): reviews not begun are left
pending for the resume, which reviews them and finishes the run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._prereq import require
from tests.runs_helpers import events_of, write_config

pytestmark = pytest.mark.slow

#: A stopped run's worker must release run.lock within this many seconds of the stop.
STOP_SECONDS = 30.0


def _pb(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True,
                          timeout=timeout)


def _wait_for(predicate, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _types(run_dir: Path) -> list[str]:
    try:
        return [e["type"] for e in events_of(run_dir)]
    except (OSError, ValueError):
        return []


def _lock_held(run_dir: Path) -> bool:
    import fcntl

    fd = os.open(run_dir / "run.lock", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _docker_up() -> bool:
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0


#: every way to stop on the local backend; on docker one signal, since how the stop arrives is the
#: worker's (the same code on every backend) and what docker adds is its containers on the way out
@pytest.mark.parametrize(("how", "backend"), [("stop", "local"), ("SIGTERM", "local"), ("SIGINT", "local"),
                                              pytest.param("SIGTERM", "docker", marks=pytest.mark.docker)])
def test_a_stop_with_a_reviewer_reaches_run_stopped_and_resume_reviews(tmp_path: Path, how: str, backend: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop while attempts code, with the simulated reviewer: run.stopped within seconds, no launch after run.stopping, and the resume completes every review."""
    if backend == "docker":
        require(_docker_up(), "docker engine and pluginbench/base:bookworm (tools/start-docker.sh)")
    extra = {"environment": {"backend": "docker"}} if backend == "docker" else {}
    config = write_config(tmp_path, tasks=["roman-numerals", "word-wrap"], repeats=3, jobs=2,
                          reviewer={"harness": "simulated"}, timeout_seconds=120, **extra)
    run_dir = tmp_path / "run"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    started = _pb("run", str(config), "--output", str(run_dir), "--yes")
    assert started.returncode == 0, started.stdout + started.stderr
    _wait_for(lambda: "agent.launched" in _types(run_dir), "an agent to launch")
    owner = json.loads((run_dir / "run.lock").read_text())
    t0 = time.monotonic()
    if how == "stop":
        done = _pb("stop", str(run_dir))
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        os.kill(owner["pid"], getattr(signal, how))
    _wait_for(lambda: not _lock_held(run_dir), "the worker to release run.lock", timeout=STOP_SECONDS)
    seconds = time.monotonic() - t0
    events = events_of(run_dir)
    types = [e["type"] for e in events]
    assert types[-1] == "run.stopped", types[-12:]
    stop_at = types.index("run.stopping")
    assert "agent.launched" not in types[stop_at:], "an agent launched after run.stopping"
    print(f"{backend} {how}: run.stopped {seconds:.1f}s after the stop")

    again = _pb("run", str(run_dir), "--foreground", "--yes", timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    per_attempt = results["reviews"]["per_attempt"]
    assert len(per_attempt) == 12 and all(r["status"] == "complete" for r in per_attempt.values())
