"""``status --json`` from the ledger without decoding the log (issue 27, item 3).

When the ledger's recorded log bytes still begin the log and no event follows them, the
counts and sums come from SQL groups and the attempt rows from the ledger's pre-encoded
rows; the bytes are those of the full read (:func:`status_snapshot`) in every case.
"""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
import pytest

from pluginbench.errors import CorruptLogError
from pluginbench.events import EventLog, RunStopping
from pluginbench.projections import Ledger, read_ledger_summary
from pluginbench.status import status_json, status_snapshot
from tests.projections.test_state_ledger import CLOCK, random_run

_ENCODER = msgspec.json.Encoder(order="sorted")


def _full(root: Path) -> bytes:
    return msgspec.json.format(_ENCODER.encode(status_snapshot(root, now=0)), indent=2) + b"\n"


def _run(tmp_path: Path, seed: int) -> Path:
    root = tmp_path
    (root / "evidence").mkdir()
    (root / "evaluation.json").write_text('{"measurements": ["lines"]}')
    (root / "evaluation-binding.json").write_text("{}")
    ledger = Ledger(root / "evidence" / "ledger.sqlite")
    random_run(seed, root / "events.jsonl", ledger)
    ledger.close()
    return root


@pytest.mark.parametrize("seed", range(16))
def test_status_json_from_the_ledger_is_the_full_reads_bytes(tmp_path: Path, seed: int) -> None:
    """Through random runs (crashes, stops, unknown usages, pending and running attempts) the ledger's answer is byte-identical to the full read's."""
    root = _run(tmp_path, seed)
    assert read_ledger_summary(root / "evidence" / "ledger.sqlite") is not None
    assert status_json(root, now=0) == _full(root)


def test_a_torn_tail_is_counted_the_same(tmp_path: Path) -> None:
    """A torn last line after the ledger's bytes: the same torn_tail_bytes and states from the ledger."""
    root = _run(tmp_path, 5)
    with open(root / "events.jsonl", "ab") as fh:
        fh.write(b'{"seq": 99999, "type": "run.st')
    out = status_json(root, now=0)
    assert out == _full(root)
    doc = msgspec.json.decode(out)
    assert (doc["torn_tail_bytes"], doc["states_source"]) == (30, "ledger")


def test_an_event_past_the_ledger_is_folded(tmp_path: Path) -> None:
    """An event the ledger has not seen: the states come from a fold of the log."""
    root = _run(tmp_path, 3)
    with EventLog(root / "events.jsonl", clock=lambda: CLOCK) as log:
        log.append(RunStopping(reason="late"))
    out = status_json(root, now=0)
    assert msgspec.json.decode(out)["states_source"] == "events"
    assert out == _full(root)


def test_a_log_edited_under_a_current_ledger_is_refused(tmp_path: Path) -> None:
    """A line edited to name an unplanned attempt, same length, ledger untouched: the change time moved, the CRC-32 differs, the full check refuses it naming the line."""
    root = _run(tmp_path, 9)
    time.sleep(0.02)  # an edit a clock tick after the writer's last append (file times are tick-coarse)
    path = root / "events.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"attempt_id":"' in line and b"attempt.started" in line)
    aid = msgspec.json.decode(lines[at])["attempt_id"]
    lines[at] = lines[at].replace(aid.encode(), b"x" * len(aid))
    path.write_bytes(b"".join(lines))
    with pytest.raises(CorruptLogError, match=f"line {at + 1}"):
        status_json(root)


def test_a_ledger_of_the_previous_schema_is_emptied_for_a_rebuild(tmp_path: Path) -> None:
    """Opening a schema-2 ledger for writing empties it (last_seq -1, so the writer rebuilds it); status reads the log meanwhile."""
    import sqlite3

    root = _run(tmp_path, 4)
    path = root / "evidence" / "ledger.sqlite"
    path.unlink()
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "CREATE TABLE attempts (id TEXT PRIMARY KEY, slot INTEGER NOT NULL, task TEXT NOT NULL, "
                     "arm TEXT NOT NULL, repeat INTEGER NOT NULL, state TEXT NOT NULL, live INTEGER NOT NULL, "
                     "row TEXT NOT NULL);"
                     "INSERT INTO meta VALUES ('schema_version', '2'), ('last_seq', '7');")
    db.commit()
    db.close()
    assert msgspec.json.decode(status_json(root, now=0))["states_source"] == "events"
    ledger = Ledger(path)
    assert ledger.last_seq() == -1
    ledger.close()
    db = sqlite3.connect(path)
    assert [r[1] for r in db.execute("PRAGMA table_info(live_status)")] == ["slot", "id", "body"]
    assert [r[1] for r in db.execute("PRAGMA table_info(attempts)")][-1] == "row"
