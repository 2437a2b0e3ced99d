"""The ledger's proof that the log is still the one it folded (issue 27, item 3).

``status --json`` answers from the ledger only while the log holds exactly the bytes the
ledger was written at: checked from the file's inode, change time, size and last 16 KiB,
and from the CRC-32 of every byte when any of those moved. A stale ledger (a line appended,
the tail rewritten) is never shown: status folds the log, and the next writer rebuilds it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import msgspec
import pytest

from pluginbench.actors._writer import RunWriter
from pluginbench.events import (
    TAIL_BYTES,
    EventLog,
    LogMark,
    RunStopping,
    log_mark_holds,
    log_mark_holds_fully,
    read_log,
    read_log_mark,
)
from pluginbench.projections import Ledger, fold
from pluginbench.status import status_json
from tests.projections.test_state_ledger import CLOCK
from tests.status.test_status_json import _full, _run


def _source(root: Path) -> str:
    return str(msgspec.json.decode(status_json(root, now=0))["states_source"])


def _rewrite(path: Path, old: bytes, new: bytes) -> None:
    """Rewrite the file in place (same inode), a clock tick after its last write, so its change time moves."""
    assert len(old) == len(new)
    before = os.stat(path).st_ctime_ns
    data = path.read_bytes()
    at = data.rindex(old)
    time.sleep(0.02)  # file times are tick-coarse (at most 10 ms on Linux)
    with open(path, "r+b") as fh:
        fh.seek(at)
        fh.write(new)
    assert os.stat(path).st_ctime_ns != before


def _resume(root: Path) -> None:
    """What a writer does on opening the run: fold the log, open the ledger (rebuilt when stale)."""
    path = root / "events.jsonl"
    state = fold(read_log(path).events)
    with EventLog(path, clock=lambda: CLOCK) as log:
        ledger = Ledger(root / "evidence" / "ledger.sqlite")
        RunWriter(log, state, ledger)
        ledger.close()


def test_an_appended_line_makes_the_ledger_stale_until_a_writer_rebuilds_it(tmp_path: Path) -> None:
    """A complete event appended behind the ledger's back: status folds the log (same bytes as the full read); a writer's rebuild makes the ledger answer again, byte-identically."""
    root = _run(tmp_path, 6)
    path = root / "events.jsonl"
    line = path.read_bytes().splitlines(keepends=True)[-1]
    last = msgspec.json.decode(line)
    with open(path, "ab") as fh:  # an event the ledger never saw, as a second writer would leave it
        fh.write(msgspec.json.encode({**last, "seq": last["seq"] + 1, "type": "run.stopping", "reason": "x"}) + b"\n")
    assert _source(root) == "events"
    assert status_json(root, now=0) == _full(root)
    _resume(root)
    assert _source(root) == "ledger"
    assert status_json(root, now=0) == _full(root)


def test_a_rewritten_tail_of_the_same_length_is_seen_and_rebuilt(tmp_path: Path) -> None:
    """The last event rewritten in place (same length, same seq): the ledger is not trusted, and a writer, whose seq check alone would pass, rebuilds it from the rewritten log."""
    root = _run(tmp_path, 2)
    path = root / "events.jsonl"
    with EventLog(path, clock=lambda: CLOCK) as log:  # a last event with a reason to rewrite
        stamped = log.append(RunStopping(reason="first"))
        ledger = Ledger(root / "evidence" / "ledger.sqlite")
        state = fold(read_log(path).events)
        ledger.rebuild(state, log.mark)
        ledger.close()
    assert _source(root) == "ledger"
    _rewrite(path, b'"reason":"first"', b'"reason":"again"')
    assert _source(root) == "events"
    out = status_json(root, now=0)
    assert b'"reason": "again"' in out and out == _full(root)
    _resume(root)
    ledger = Ledger(root / "evidence" / "ledger.sqlite")
    assert ledger.last_seq() == stamped.seq and ledger.log_mark() == read_log_mark(path)
    ledger.close()
    assert _source(root) == "ledger"
    assert status_json(root, now=0) == _full(root) and b'"reason": "again"' in _full(root)


def test_the_cheap_proof_reads_the_tail_and_the_full_proof_every_byte(tmp_path: Path) -> None:
    """What the documented limit is: a head rewritten while inode, change time, size and tail stay the mark's passes the cheap proof, never the full one; a moved change time sends the cheap proof to the full one."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(b'{"seq":%d}\n' % i for i in range(1, 4001)))  # ~50 KiB: more than the tail
    mark = read_log_mark(path)
    assert mark.size > 2 * TAIL_BYTES
    assert log_mark_holds(path, mark) == b"" and log_mark_holds_fully(path, mark) == b""
    time.sleep(0.02)  # a tick later, as any later edit is
    with open(path, "r+b") as fh:
        fh.seek(8)
        fh.write(b"9")  # {"seq":1} -> {"seq":9}, far before the tail
    st = os.stat(path)
    forged = LogMark(mark.size, mark.crc32, mark.tail_crc32, st.st_ino, st.st_ctime_ns)
    assert log_mark_holds(path, forged) == b""  # the limit: only a same-tick rewrite or a reset clock gets here
    assert log_mark_holds_fully(path, forged) is None
    assert st.st_ctime_ns != mark.ctime_ns
    assert log_mark_holds(path, mark) is None  # the change time moved: the whole CRC-32 decides


@pytest.mark.parametrize("seed", [0, 7, 11])
def test_status_json_from_the_ledger_is_the_logs_bytes(tmp_path: Path, seed: int) -> None:
    """The same run's status --json from the ledger and, with the ledger moved aside, from a fold of the log: byte-identical but for where the states came from."""
    root = _run(tmp_path, seed)
    ledger = root / "evidence" / "ledger.sqlite"
    stamp = os.stat(root / "events.jsonl").st_mtime_ns
    os.utime(ledger, ns=(stamp, stamp))  # the heartbeat is the newest write: the log's either way
    from_ledger = status_json(root, now=0)
    assert b'"states_source": "ledger"' in from_ledger
    ledger.rename(root / "ledger.aside")
    from_log = status_json(root, now=0)
    assert from_ledger.replace(b'"states_source": "ledger"', b'"states_source": "events"') == from_log
