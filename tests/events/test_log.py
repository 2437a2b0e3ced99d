"""The event log: durable appends, torn-line repair, and refusal of corruption."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from pluginbench.errors import CorruptLogError
from pluginbench.events import (
    AttemptStarted,
    EventLog,
    LogRepaired,
    RunStopped,
    RunStopping,
    decode,
    encode,
    follow,
    read_events,
    read_log,
)

CLOCK = "2026-01-01T00:00:00.000Z"


def _log(path: Path) -> EventLog:
    return EventLog(path, clock=lambda: CLOCK)


def test_append_assigns_contiguous_seq_and_reads_back(tmp_path: Path) -> None:
    """Appended events get seq 1, 2, 3 and read back equal, one JSON line each."""
    path = tmp_path / "events.jsonl"
    with _log(path) as log:
        written = [log.append(RunStopping(reason=f"r{i}")) for i in range(3)]
    assert [e.seq for e in written] == [1, 2, 3]
    assert read_events(path) == written
    assert path.read_bytes().count(b"\n") == 3


def test_encode_decode_roundtrip_keeps_type_tag(tmp_path: Path) -> None:
    """Every line carries its type tag and decodes to the same struct."""
    event = RunStopped(reason="x", seq=4, at=CLOCK)
    line = encode(event)
    assert b'"type":"run.stopped"' in line
    assert decode(line) == event


def test_reader_ignores_a_torn_last_line(tmp_path: Path) -> None:
    """A crash mid-write leaves a partial last line that readers skip."""
    path = tmp_path / "events.jsonl"
    with _log(path) as log:
        log.append(RunStopping(reason="a"))
    with path.open("ab") as fh:
        fh.write(b'{"type":"run.stopping","reas')
    contents = read_log(path)
    assert [e.seq for e in contents.events] == [1]
    assert contents.torn_tail == b'{"type":"run.stopping","reas'


def test_next_writer_repairs_torn_line_and_records_it(tmp_path: Path) -> None:
    """The next writer truncates the torn tail and offers a log.repaired event with its hash."""
    path = tmp_path / "events.jsonl"
    with _log(path) as log:
        log.append(RunStopping(reason="a"))
    torn = b'{"type":"run.sto'
    with path.open("ab") as fh:
        fh.write(torn)
    with _log(path) as log:
        assert isinstance(log.repair, LogRepaired)
        assert log.repair.dropped_bytes == len(torn)
        assert log.repair.dropped_sha256 == hashlib.sha256(torn).hexdigest()
        stamped = log.append(log.repair)
        assert stamped.seq == 2
    events = read_events(path)
    assert [type(e).__name__ for e in events] == ["RunStopping", "LogRepaired"]
    assert not path.read_bytes().endswith(torn)


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    """A whole event that only lacks its newline is an event, not damage."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(encode(RunStopping(reason="a", seq=1, at=CLOCK)))
    with _log(path) as log:
        assert log.repair is None
        assert log.append(RunStopping(reason="b")).seq == 2
    assert [e.seq for e in read_events(path)] == [1, 2]


@pytest.mark.parametrize("seqs, kind", [([1, 3], "gap"), ([1, 2, 2], "duplicate"), ([2], "gap")])
def test_seq_gap_or_duplicate_is_refused(tmp_path: Path, seqs: list[int], kind: str) -> None:
    """A seq that does not follow its predecessor is corruption, named as gap or duplicate."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(encode(RunStopping(reason="x", seq=s, at=CLOCK)) + b"\n" for s in seqs))
    with pytest.raises(CorruptLogError, match=kind):
        read_events(path)
    with pytest.raises(CorruptLogError):
        EventLog(path)


def test_undecodable_line_before_the_end_is_refused(tmp_path: Path) -> None:
    """Garbage in the middle of the log is never skipped silently."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(
        encode(RunStopping(reason="x", seq=1, at=CLOCK)) + b"\nnot json\n"
        + encode(RunStopping(reason="y", seq=2, at=CLOCK)) + b"\n"
    )
    with pytest.raises(CorruptLogError) as info:
        read_events(path)
    assert info.value.field == "line 2"


def test_a_blank_line_is_refused_as_blank(tmp_path: Path) -> None:
    """A blank line inside the log is refused naming its line as blank, not as truncated input."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(encode(RunStopping(reason="x", seq=1, at=CLOCK)) + b"\n\n"
                     + encode(RunStopping(reason="y", seq=2, at=CLOCK)) + b"\n")
    with pytest.raises(CorruptLogError, match="line 2 of the event log is blank") as info:
        read_events(path)
    assert info.value.field == "line 2"


def test_missing_log_reads_as_empty(tmp_path: Path) -> None:
    """A run with no log yet has no events rather than an error."""
    assert read_events(tmp_path / "events.jsonl") == []


def test_follow_yields_events_appended_later(tmp_path: Path) -> None:
    """follow() prints what exists, then new events as another writer appends them."""
    path = tmp_path / "events.jsonl"
    log = _log(path)
    log.append(RunStopping(reason="first"))
    done = threading.Event()

    def writer() -> None:
        time.sleep(0.3)
        log.append(RunStopping(reason="second"))
        time.sleep(0.3)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    got = [e.reason for e in follow(path, poll_seconds=0.05, stop=done.is_set)]  # type: ignore[attr-defined]
    thread.join()
    log.close()
    assert got == ["first", "second"]


def test_a_negative_slot_edited_into_a_line_is_refused_naming_line_and_field(tmp_path: Path) -> None:
    """A slot edited to a negative number is refused like any damaged line, naming the line and the field path."""
    path = tmp_path / "events.jsonl"
    started = encode(AttemptStarted(attempt_id="a1", slot=3, task="t", arm="vanilla", repeat=0, seq=2, at=CLOCK))
    good = encode(RunStopping(reason="x", seq=1, at=CLOCK)) + b"\n"
    path.write_bytes(good + started.replace(b'"slot":3', b'"slot":-3') + b"\n")
    with pytest.raises(CorruptLogError, match=r"line 2 of the event log does not decode: .*>= 0.*slot") as info:
        read_events(path)
    assert info.value.field == "line 2"
    path.write_bytes(good + started + b"\n")
    assert read_events(path)[1].slot == 3
