"""The status adapter: it reads the files, the lock, the clock and the backend, and the view does the rest."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from pluginbench.projections import Ledger, Status
from pluginbench.status import read_status, status_snapshot
from tests.projections.test_state_ledger import random_run


def _run(tmp_path: Path) -> Path:
    (tmp_path / "evidence").mkdir()
    (tmp_path / "evaluation.json").write_text('{"measurements": ["lines", 3]}')
    (tmp_path / "evaluation-binding.json").write_text("{}")
    ledger = Ledger(tmp_path / "evidence" / "ledger.sqlite")
    random_run(11, tmp_path / "events.jsonl", ledger)
    ledger.close()
    for p in (tmp_path / "events.jsonl", tmp_path / "evidence" / "ledger.sqlite"):
        os.utime(p, (1000.0, 1000.0))
    return tmp_path


def test_the_clock_and_file_times_are_read_here(tmp_path: Path) -> None:
    """The heartbeat is the newest write's mtime, aged at the adapter's clock; the selected measures come from evaluation.json."""
    root = _run(tmp_path)
    status = read_status(root, clock=lambda: 1012.0)
    assert isinstance(status, Status)
    assert status.heartbeat is not None and status.heartbeat.age_seconds == 12.0
    assert status.measures.selected == ["lines"]
    assert (status.states_source, status.active, status.owner) == ("ledger", False, None)


def test_the_backend_is_asked_only_when_wanted(tmp_path: Path) -> None:
    """A run no process owns gets the local backend's answer; a page poll (check_left_running=False) asks nothing."""
    root = _run(tmp_path)
    checked = read_status(root, now=0).left_running
    assert checked is not None and checked.checked and checked.containers == [] and checked.stop_command is None
    assert read_status(root, now=0, check_left_running=False).left_running is None


def test_the_plain_snapshot_is_the_typed_status(tmp_path: Path) -> None:
    """status_snapshot (terminal view, dashboard) is exactly the typed Status as JSON data."""
    root = _run(tmp_path)
    typed = read_status(root, now=5000.0)
    assert status_snapshot(root, now=5000.0) == msgspec.to_builtins(typed)
    assert msgspec.json.decode(msgspec.json.encode(typed), type=Status) == typed
