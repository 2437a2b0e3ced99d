"""run.lock: one owner at a time, proven by a held flock and the recorded start time."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pluginbench.errors import LockHeldError, RunDirError
from pluginbench.events import RunLock, live_owner, read_owner_record

HOLDER = """
import sys, time
from pathlib import Path
from pluginbench.events import RunLock
lock = RunLock(Path(sys.argv[1])); lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def _hold_in_child(run_dir: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def test_acquire_records_pid_pgid_start_and_run_dir(tmp_path: Path) -> None:
    """The owner's pid, process group, start time and run directory are in run.lock."""
    with RunLock(tmp_path) as owner:
        record = json.loads((tmp_path / "run.lock").read_text())
        assert record["pid"] == owner.pid
        assert record["pgid"] == owner.pgid
        assert record["run_dir"] == str(tmp_path.resolve())
        assert live_owner(tmp_path) == owner
    assert live_owner(tmp_path) is None


def test_second_owner_is_refused_while_the_first_lives(tmp_path: Path) -> None:
    """Another process cannot take a lock that a live process holds."""
    child = _hold_in_child(tmp_path)
    try:
        with pytest.raises(LockHeldError) as info:
            RunLock(tmp_path).acquire()
        assert str(child.pid) in info.value.message
        owner = live_owner(tmp_path)
        assert owner is not None and owner.pid == child.pid
    finally:
        child.kill()
        child.wait()


def test_lock_of_a_killed_owner_is_free(tmp_path: Path) -> None:
    """kill -9 of the owner frees the lock: the kernel drops the flock."""
    child = _hold_in_child(tmp_path)
    child.kill()
    child.wait()
    time.sleep(0.05)
    assert live_owner(tmp_path) is None
    assert read_owner_record(tmp_path) is not None
    with RunLock(tmp_path) as owner:
        assert owner.pid != child.pid


def test_reused_pid_with_other_start_time_is_not_the_owner(tmp_path: Path) -> None:
    """A held lock whose recorded start time differs from the pid's is not trusted."""
    with RunLock(tmp_path):
        record = json.loads((tmp_path / "run.lock").read_text())
        record["start_ticks"] = (record["start_ticks"] or 0) + 12345
        (tmp_path / "run.lock").write_text(json.dumps(record))
        assert live_owner(tmp_path) is None


def test_moved_run_is_refused(tmp_path: Path) -> None:
    """A lock that names another directory means the run was moved: refused until deleted."""
    (tmp_path / "run.lock").write_text(json.dumps({"pid": 1, "pgid": 1, "started_at": "x", "run_dir": "/elsewhere"}))
    with pytest.raises(RunDirError, match="moved"):
        RunLock(tmp_path).acquire()


def test_a_folder_in_place_of_run_lock_is_refused_saying_to_remove_it(tmp_path: Path) -> None:
    """A folder named run.lock is refused naming it with the fix to remove it, not to make the run folder writable."""
    (tmp_path / "run.lock").mkdir()
    with pytest.raises(RunDirError) as caught:
        RunLock(tmp_path).acquire()
    assert caught.value.file == str(tmp_path / "run.lock")
    assert caught.value.fix is not None and "remove what stands in its place" in caught.value.fix
