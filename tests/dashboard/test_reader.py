"""Reading runs for the dashboard: the aiosqlite ledger, stale views, discovery cadence."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pluginbench.dashboard._discovery import run_key
from pluginbench.dashboard._ledger_async import read_ledger_async
from pluginbench.dashboard._monitor import Monitor
from pluginbench.dashboard._reader import RunEntry, refresh
from pluginbench.events import read_events
from pluginbench.projections import Ledger, fold, read_ledger
from tests.dashboard._runs import synthetic_run

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # aiosqlite is an asyncio library; the dashboard runs on asyncio


def with_ledger(root: Path) -> Path:
    ledger = Ledger(root / "evidence" / "ledger.sqlite")
    ledger.rebuild(fold(read_events(root / "events.jsonl")))
    ledger.close()
    return root


async def test_async_ledger_reader_agrees_with_the_status_reader(tmp_path: Path) -> None:
    """aiosqlite reads the same view as the synchronous read-only reader, and refuses a hot journal alike."""
    root = with_ledger(synthetic_run(tmp_path / "run", report=False))
    path = root / "evidence" / "ledger.sqlite"
    view = await read_ledger_async(path)
    assert view is not None and view == read_ledger(path)
    assert len(view.attempts) == 8
    Path(str(path) + "-journal").write_bytes(b"hot")
    assert await read_ledger_async(path) is None and read_ledger(path) is None


async def test_status_read_through_the_ledger_has_no_docker_check(tmp_path: Path) -> None:
    """A dashboard read takes states from the ledger and leaves left_running null (no Docker call)."""
    root = with_ledger(synthetic_run(tmp_path / "run"))
    entry = RunEntry(key=run_key(root), root=root)
    assert await refresh(entry)
    assert entry.status is not None and entry.status["states_source"] == "ledger"
    assert entry.status["left_running"] is None and entry.status["active"] is False
    assert entry.results is not None and len(entry.results["attempts"]) == 8
    assert entry.stale is None and len(entry.timeline.completed) == 5


async def test_a_read_that_fails_keeps_the_last_good_view_and_says_stale(tmp_path: Path) -> None:
    """A corrupt log line or a half-written results.json keeps the previous view, marked stale; a good read clears it."""
    root = synthetic_run(tmp_path / "run")
    entry = RunEntry(key=run_key(root), root=root)
    await refresh(entry)
    good_status, good_results = entry.status, entry.results
    log = root / "events.jsonl"
    original = log.read_bytes()
    lines = original.split(b"\n")
    lines[3] = b'{"type": "attempt.sta'  # a line before the last that does not decode
    log.write_bytes(b"\n".join(lines))
    results = root / "report" / "results.json"
    full = results.read_bytes()
    results.write_bytes(full[: len(full) // 2])
    await refresh(entry)
    assert entry.status is good_status and entry.results is good_results
    assert entry.stale and "status" in entry.stale and "results.json" in entry.stale
    log.write_bytes(original)
    results.write_bytes(full)
    await refresh(entry)
    assert entry.stale is None and entry.status is not good_status


async def test_monitor_finds_new_runs_only_when_its_search_is_due(tmp_path: Path) -> None:
    """A run created after start appears at the next search (every 10 s), not before."""
    now = [0.0]
    runs = tmp_path / "runs"
    synthetic_run(runs / "one", report=False)
    monitor = Monitor([runs], clock=lambda: now[0])
    await monitor.step()
    assert len(monitor.entries) == 1 and monitor.generation == 1
    shutil.copytree(runs / "one", runs / "two")
    now[0] = 5.0
    await monitor.step()
    assert len(monitor.entries) == 1
    now[0] = 10.0
    await monitor.step()
    assert sorted(e.root.name for e in monitor.entries.values()) == ["one", "two"]
    assert monitor.generation == 2


async def test_monitor_rereads_an_unowned_run_only_when_a_file_changes(tmp_path: Path) -> None:
    """Without a file change nothing is read again; appending to the log triggers one read."""
    now = [0.0]
    root = synthetic_run(tmp_path / "runs" / "one", report=False)
    monitor = Monitor([tmp_path / "runs"], clock=lambda: now[0])
    await monitor.step()
    entry = next(iter(monitor.entries.values()))
    first = entry.read_at
    now[0] = 3.0
    await monitor.step()
    assert entry.read_at == first
    with (root / "run.log").open("a") as fh:
        fh.write("progress\n")
    now[0] = 4.0
    await monitor.step()
    assert entry.read_at == 4.0


async def test_results_page_version_moves_only_when_a_report_changes(tmp_path: Path) -> None:
    """A status-only change wakes the Run page's stream but not the Results page's; a rebuilt report wakes Results."""
    now = [0.0]
    root = synthetic_run(tmp_path / "runs" / "one")
    monitor = Monitor([tmp_path / "runs"], clock=lambda: now[0])
    await monitor.step()
    run_page = f"/run/{run_key(root)}"
    results_v, run_v = monitor.version_of("/results"), monitor.version_of(run_page)
    with (root / "run.log").open("a") as fh:
        fh.write("progress\n")
    (root / "events.jsonl").touch()
    now[0] = 1.0
    await monitor.step()
    assert monitor.version_of("/results") == results_v
    assert monitor.version_of(run_page) != run_v
    run_v = monitor.version_of(run_page)
    from pluginbench.projections import build_report

    (root / "report" / "results.json").unlink()
    build_report(root)
    now[0] = 2.0
    await monitor.step()
    assert monitor.version_of("/results") != results_v
