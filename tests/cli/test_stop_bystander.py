"""``pluginbench stop`` signals only a process that holds the run's flock and whose identity
matches run.lock (issue 21 item 2): a record naming a live bystander is never acted on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pluginbench.events import flock_holders, live_owner, process_start_ticks

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A folder that passes as a run directory (its two frozen settings files)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "evaluation.json").write_text("{}")
    (run / "evaluation-binding.json").write_text("{}")
    return run


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated live process in a process group of its own."""
    proc = subprocess.Popen(["sleep", "120"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def holder(run_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process that holds the flock on run.lock without writing its record."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir / "run.lock")], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def _record(run_dir: Path, pid: int, start_ticks: int | None) -> None:
    (run_dir / "run.lock").write_text(json.dumps({
        "pid": pid, "pgid": pid, "started_at": "2026-01-01T00:00:00.000Z", "start_ticks": start_ticks,
        "run_dir": str(run_dir.resolve())}))


def _stop(run_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", "stop", str(run_dir)], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("ticks", ["null", "matching"])
def test_stop_never_signals_a_bystander_named_by_run_lock(run_dir: Path, bystander: subprocess.Popen[bytes],
                                                          holder: subprocess.Popen[str], ticks: str) -> None:
    """run.lock names a live bystander (without a start time, or with its true one) while another process holds the flock: stop refuses (exit 2) and the bystander lives."""
    _record(run_dir, bystander.pid, None if ticks == "null" else process_start_ticks(bystander.pid))
    holders = flock_holders(run_dir / "run.lock")
    assert holders is not None and holder.pid in holders and bystander.pid not in holders
    assert live_owner(run_dir) is None
    done = _stop(run_dir)
    time.sleep(0.3)
    assert bystander.poll() is None, "stop signalled the bystander"
    assert holder.poll() is None, "stop signalled the unidentified holder"
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nothing was signalled" in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert "run.lock" in done.stdout + done.stderr


def test_stop_signals_the_proven_owner(run_dir: Path) -> None:
    """The process that holds the flock and matches run.lock's pid and start time is the one stopped."""
    owner = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
                              "from pluginbench.events import RunLock\nRunLock(Path(sys.argv[1])).acquire()\n"
                              "print('held', flush=True)\ntime.sleep(120)\n", str(run_dir)],
                             stdout=subprocess.PIPE, text=True, start_new_session=True,
                             env=dict(os.environ))
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == "held"
        done = _stop(run_dir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert owner.wait(timeout=10) == -15
    finally:
        owner.kill()
        owner.wait()
