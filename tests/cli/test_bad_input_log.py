"""Bad input on a run's log: nothing is lost, and status never says more than the log.

Issue 14 items 1-4: a missing or empty ``events.jsonl`` is refused by ``report``,
``events``, ``run`` and ``status`` (exit 2, ``report/`` untouched, no log recreated);
``status`` verifies the log as the other readers do; its states and ``last_event`` come
from one moment; a torn last line leaves ``last_event`` at the last complete event and
is reported.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli._cli_helpers import assert_refused, run_cli
from tests.runs_helpers import events_of, write_config


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One finished simulated run (one task, vanilla + one treatment), made once."""
    base = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(base / "cache"))
        config = write_config(base, tasks=["roman-numerals"])
        code, out = run_cli("run", str(config), "--output", str(base / "run"), "--foreground")
        assert code == 0, out
    yield base / "run"


@pytest.fixture
def run_copy(finished_run: Path, tmp_path: Path) -> Path:
    """A private copy of the finished run (its lock record dropped: the copy is not a move)."""
    dest = tmp_path / "run"
    shutil.copytree(finished_run, dest)
    (dest / "run.lock").unlink(missing_ok=True)
    return dest


def report_bytes(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run / "report").iterdir())}


@pytest.mark.parametrize("damage", ["empty", "missing"])
def test_report_on_a_lost_log_keeps_the_report(run_copy: Path, damage: str) -> None:
    """report on an empty or missing log exits 2 and leaves the good report untouched."""
    before = report_bytes(run_copy)
    if damage == "empty":
        (run_copy / "events.jsonl").write_bytes(b"")
    else:
        (run_copy / "events.jsonl").unlink()
    code, out = run_cli("report", str(run_copy))
    assert_refused(code, out, f"the event log is {damage}", "events.jsonl", "fix:")
    assert report_bytes(run_copy) == before


@pytest.mark.parametrize("damage", ["empty", "missing"])
def test_events_on_a_lost_log_is_refused(run_copy: Path, damage: str) -> None:
    """events on an empty or missing log exits 2 instead of printing nothing."""
    if damage == "empty":
        (run_copy / "events.jsonl").write_bytes(b"")
    else:
        (run_copy / "events.jsonl").unlink()
    code, out = run_cli("events", str(run_copy))
    assert_refused(code, out, f"the event log is {damage}")


@pytest.mark.parametrize("damage", ["empty", "missing"])
def test_status_on_a_lost_log_is_refused(run_copy: Path, damage: str) -> None:
    """status (text and --json) on an empty or missing log exits 2, even with a ledger."""
    if damage == "empty":
        (run_copy / "events.jsonl").write_bytes(b"")
    else:
        (run_copy / "events.jsonl").unlink()
    for args in ((), ("--json",)):
        code, out = run_cli("status", str(run_copy), *args)
        assert_refused(code, out, f"the event log is {damage}")


def test_run_on_a_deleted_log_creates_nothing(run_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resuming a run whose log was deleted exits 2 and never creates an empty log."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(run_copy.parent / "cache"))
    (run_copy / "events.jsonl").unlink()
    for args in ((), ("--foreground",), ("--dry-run",)):
        code, out = run_cli("run", str(run_copy), *args)
        assert_refused(code, out, "the event log is missing")
        assert not (run_copy / "events.jsonl").exists()


def test_worker_on_a_deleted_log_creates_nothing(run_copy: Path) -> None:
    """The background worker itself refuses a missing log before opening a writer."""
    from pluginbench.actors import run_worker
    from pluginbench.errors import CorruptLogError

    (run_copy / "events.jsonl").unlink()
    with pytest.raises(CorruptLogError, match="missing"):
        run_worker(run_copy, handle_signals=False)
    assert not (run_copy / "events.jsonl").exists()


def _damaged(lines: list[str], kind: str) -> list[str]:
    mid = len(lines) // 2
    if kind == "garbage":
        return [*lines[:mid], "this is not json", *lines[mid + 1:]]
    if kind == "seq gap":
        return [*lines[:mid], *lines[mid + 1:]]
    if kind == "unknown type":
        event = json.loads(lines[mid])
        event["type"] = "bogus.event"
        return [*lines[:mid], json.dumps(event), *lines[mid + 1:]]
    assert kind == "blank line"
    return [*lines[:mid], "", *lines[mid:]]


@pytest.mark.parametrize("kind", ["garbage", "seq gap", "unknown type", "blank line"])
def test_status_verifies_the_log_like_events_does(run_copy: Path, kind: str) -> None:
    """A corrupt line in the middle makes status exit 2 with the message events gives (status --json adds the
    refusal as JSON on stdout), although the ledger is current and the last line's seq matches it."""
    log = run_copy / "events.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(_damaged(lines, kind)) + "\n")
    assert (run_copy / "evidence" / "ledger.sqlite").is_file()
    code, events_out = run_cli("events", str(run_copy))
    assert_refused(code, events_out, "events.jsonl")
    for args in ((), ("--json",)):
        code, out = run_cli("status", str(run_copy), *args)
        assert_refused(code, out)
        assert out.startswith(events_out)
        assert out == events_out if not args else json.loads(out[len(events_out):])["exit_code"] == 2
    code, out = run_cli("report", str(run_copy))
    assert out == events_out


def test_torn_tail_keeps_the_last_complete_event(run_copy: Path) -> None:
    """With a torn last line, last_event is the last complete event and status says the tail is torn."""
    last = events_of(run_copy)[-1]
    with (run_copy / "events.jsonl").open("ab") as fh:
        fh.write(b'{"type":"run.stopping","rea')
    code, out = run_cli("status", str(run_copy), "--json")
    assert code == 0, out
    snap = json.loads(out)
    assert snap["last_event"] == last
    assert snap["torn_tail_bytes"] == len(b'{"type":"run.stopping","rea')
    assert snap["phase"] == "complete"
    code, out = run_cli("status", str(run_copy))
    assert code == 0, out
    assert "torn line (27 bytes" in out


def test_status_states_and_last_event_are_one_moment(finished_run: Path, tmp_path: Path) -> None:
    """While a writer appends (log, then ledger, as the Supervisor does), every status
    snapshot's states equal the fold of the log up to its last_event."""
    from pluginbench.actors._writer import RunWriter
    from pluginbench.events import EventLog, decode
    from pluginbench.projections._ledger import Ledger
    from pluginbench.projections._state import fold
    from pluginbench.projections._view import attempt_rows
    from pluginbench.status import status_snapshot

    recorded = [decode(line) for line in (finished_run / "events.jsonl").read_bytes().splitlines()]
    live = tmp_path / "live"
    live.mkdir()
    for name in ("evaluation.json", "evaluation-binding.json"):
        shutil.copy(finished_run / name, live / name)
    done, started = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with EventLog(live / "events.jsonl") as log:
                ledger = Ledger(live / "evidence" / "ledger.sqlite")
                record = RunWriter(log, fold([]), ledger).record  # the Supervisor's own writer path
                for i, event in enumerate(recorded):
                    record(event)  # a replay: what the events decide is not run here
                    started.set()
                    time.sleep(0.005 if i else 0)
                ledger.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)
        finally:
            started.set()
            done.set()

    expected_states: dict[int, dict[str, int]] = {}
    thread = threading.Thread(target=writer)
    thread.start()
    started.wait()
    checked = 0
    try:
        while not done.is_set() or checked < 5:
            snap = status_snapshot(live)
            seq = snap["last_event"]["seq"]
            if seq not in expected_states:
                prefix = [decode(line) for line in (live / "events.jsonl").read_bytes().splitlines()[:seq]]
                rows = attempt_rows(fold(prefix))
                expected_states[seq] = {s: sum(1 for r in rows if r["state"] == s) for s in snap["states"]}
            assert snap["states"] == expected_states[seq], f"seq {seq} from {snap['states_source']}"
            checked += 1
    finally:
        thread.join()
    assert not errors, errors
    assert checked >= 5 and len(expected_states) > 1
