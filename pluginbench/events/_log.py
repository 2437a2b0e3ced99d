"""The append-only event log, ``events.jsonl``: one JSON object a line, the truth.

Contract:

* Only one writer at a time (the holder of ``run.lock``). :class:`EventLog` assigns the
  next contiguous ``seq``, writes the whole line in one ``write`` and fsyncs before
  :meth:`EventLog.append` returns, so an event that was appended survives a crash.
* A crash mid-write leaves a *torn* last line without its newline. Readers ignore it;
  the next writer truncates it away and records :class:`LogRepaired` with the size and
  hash of what it dropped.
* A line before the last that does not decode, or a ``seq`` gap or duplicate, is
  corruption: :class:`CorruptLogError`, never silently skipped.
"""

import datetime as _dt
import hashlib
import os
import stat
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

import msgspec

from .._gc import paused_gc
from ..errors import CorruptLogError
from ._types import (
    EVENT_TYPES,
    AttemptDiscarded,
    Event,
    LogRepaired,
    RevisionMeasured,
    RunCreated,
    decode,
    decode_many,
    encode,
    stamp,
    type_name,
)


class LogContents(NamedTuple):
    """What a reader found: the complete events and any torn tail bytes."""

    events: list[Event]
    torn_tail: bytes
    valid_size: int


def utc_now() -> str:
    """The current UTC time as ISO-8601 with milliseconds and a ``Z``."""
    now = _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _parse(data: bytes, path: Path) -> LogContents:
    """Every complete line decoded and seq-checked in one tight pass; on any failure the
    line-by-line :func:`_parse_lines` runs instead, so errors name the same line and say
    the same thing whichever path found them."""
    *lines, tail = data.split(b"\n")
    try:
        with paused_gc():
            events = decode_many(lines)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return _parse_lines(data, path)
    if [e.seq for e in events] != list(range(1, len(events) + 1)):
        return _parse_lines(data, path)
    if not tail:
        return LogContents(events, b"", len(data))
    return _with_tail(events, tail, data, path)


def _with_tail(events: list[Event], tail: bytes, data: bytes, path: Path) -> LogContents:
    try:
        event = decode(tail)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return LogContents(events, tail, len(data) - len(tail))
    # Complete JSON that only lacks its newline: keep it, the writer adds "\n".
    _check_seq(events, event, path, len(events) + 1)
    events.append(event)
    return LogContents(events, b"", len(data))


def _parse_lines(data: bytes, path: Path) -> LogContents:
    events: list[Event] = []
    pos = 0
    size = len(data)
    lineno = 0
    while pos < size:
        end = data.find(b"\n", pos)
        lineno += 1
        if end == -1:
            tail = data[pos:]
            try:
                event = decode(tail)
            except (msgspec.DecodeError, msgspec.ValidationError):
                return LogContents(events, tail, pos)
            # Complete JSON that only lacks its newline: keep it, the writer adds "\n".
            _check_seq(events, event, path, lineno)
            events.append(event)
            return LogContents(events, b"", size)
        line = data[pos:end]
        try:
            event = decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            what = "is blank (the log holds one event per line, no empty lines)" if not line.strip() \
                else f"does not decode: {exc}"
            raise CorruptLogError(
                f"line {lineno} of the event log {what}",
                file=str(path),
                field=f"line {lineno}",
                fix="restore events.jsonl from a backup; PluginBench never rewrites a "
                "complete line, so this was changed by hand or by another tool",
            ) from exc
        _check_seq(events, event, path, lineno)
        events.append(event)
        pos = end + 1
    return LogContents(events, b"", size)


def _check_seq(events: list[Event], event: Event, path: Path, lineno: int) -> None:
    expected = events[-1].seq + 1 if events else 1
    if event.seq != expected:
        kind = "duplicate" if event.seq < expected else "gap"
        raise CorruptLogError(
            f"seq {kind} in the event log: line {lineno} has seq {event.seq}, expected {expected}",
            file=str(path),
            field=f"line {lineno}.seq",
            fix="the log was edited or two writers ran at once; restore it from a backup "
            "or start a new run",
        )


def require_regular(path: Path) -> None:
    """Refuse an event log that exists but is no regular file (a FIFO would block every
    reader and writer, a device would never end): never opened, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError:
        return  # said by the read itself, with its own reason
    if not stat.S_ISREG(mode):
        raise CorruptLogError(
            "the event log is not a regular file (a folder, FIFO, socket or device)",
            file=str(path),
            fix="restore events.jsonl from a backup as a regular file, or start a new run; nothing was written",
        )


def read_log(path: Path) -> LogContents:
    """Read every complete event; a missing file is an empty log."""
    require_regular(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LogContents([], b"", 0)
    return _parse(data, path)


def read_run_log(path: Path) -> LogContents:
    """Read the log of an existing run: like :func:`read_log`, but a missing or empty log
    is refused. Every run's log begins with ``run.created``, so a run directory without
    one lost its truth; rebuilding views from nothing would overwrite good ones."""
    if not path.exists():
        raise CorruptLogError(
            "the event log is missing",
            file=str(path),
            fix="restore events.jsonl from a backup, or start a new run; nothing was written "
            "(report/ and the ledger are rebuilt only from a log)",
        )
    contents = read_log(path)
    if not contents.events:
        raise CorruptLogError(
            "the event log is empty" + (f" (only {len(contents.torn_tail)} bytes of a torn line)" if contents.torn_tail else ""),
            file=str(path),
            fix="restore events.jsonl from a backup, or start a new run; nothing was written "
            "(report/ and the ledger are rebuilt only from a log)",
        )
    if not isinstance(contents.events[0], RunCreated):
        raise CorruptLogError(
            "the event log does not begin with run.created",
            file=str(path),
            field="line 1",
            fix="restore events.jsonl from a backup, or start a new run",
        )
    check_structure(contents.events, path)
    return contents


_RESTORE = ("restore events.jsonl from a backup; PluginBench never rewrites a complete line, so it was "
            "changed by hand or by another tool; nothing was written (report/, the ledger and the "
            "evidence are rebuilt or resumed only from a sound log)")


def check_structure(events: list[Event], path: Path) -> None:
    """Refuse a log whose events contradict its own structure, before anything folds it:
    an event version newer than this PluginBench reads (``v``), a second ``run.created``,
    or an event about an attempt the run never planned nor derived (a replacement named by
    ``attempt.discarded``). Raises :class:`CorruptLogError` naming the line."""
    if not events or not isinstance(events[0], RunCreated):
        return
    known = {p.attempt_id for p in events[0].slots}
    for lineno, event in enumerate(events, 1):
        current = _CURRENT_VERSION[type(event)]
        if event.v != current:
            raise CorruptLogError(
                f"line {lineno} ({type_name(event)}) has event version v={event.v}; this PluginBench "
                f"reads version {current} of it",
                file=str(path),
                field=f"line {lineno}.v",
                fix="read the run with the PluginBench release that wrote it (upgrade pluginbench), "
                "or restore events.jsonl from a backup; nothing was written",
            )
        if lineno > 1 and isinstance(event, RunCreated):
            raise CorruptLogError(
                f"line {lineno} is a second run.created (the run was created on line 1)",
                file=str(path),
                field=f"line {lineno}",
                fix=_RESTORE,
            )
        fields = _ATTEMPT_FIELDS.get(type(event))
        if fields is None or (isinstance(event, RevisionMeasured) and event.stage != "submission"):
            continue  # a reference-stage measurement names its task in attempt_id
        for name in fields:
            value = getattr(event, name)
            for aid in value if isinstance(value, list) else (value,):
                if aid is not None and aid not in known:
                    raise CorruptLogError(
                        f"line {lineno} ({type_name(event)}) names attempt {aid!r}, which the run never "
                        "planned nor derived",
                        file=str(path),
                        field=f"line {lineno}.{name}",
                        fix=_RESTORE,
                    )
        if isinstance(event, AttemptDiscarded):
            known.add(event.replaced_by)


#: How many bytes before a mark's end its ``tail_crc32`` covers.
TAIL_BYTES = 1 << 14


class LogMark(NamedTuple):
    """The first ``size`` bytes of a log, what the writer had written when it recorded a view
    of them (the ledger keeps it): their CRC-32, the CRC-32 of their last :data:`TAIL_BYTES`,
    and the file's inode and change time (``st_ctime_ns``) right after they were written.

    A reader proves the log it would fold is still the log on disk from the cheap part when
    it can (:func:`log_mark_holds`): same inode, same change time, same size, same tail.
    Every write to the file (an append, a rewrite in place, a truncation) and every
    ``chmod``/``utime``/link moves the change time, which no program can set back; a file put
    in its place has another inode. What that cannot see: a rewrite within the same clock
    tick as the writer's last append (the kernel's file times are tick-coarse; only a second
    writer racing the holder of ``run.lock`` could do it), or a reset system clock. Whenever
    anything but the tail differs, the whole CRC-32 decides (a copied run folder: a new
    inode; a torn tail after the mark: a newer change time), as before."""

    size: int
    crc32: int
    tail_crc32: int | None = None
    ino: int | None = None
    ctime_ns: int | None = None


def _crc_of(path: Path) -> tuple[int, int]:
    size = crc = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            size += len(block)
            crc = zlib.crc32(block, crc)
    return size, crc


def read_log_mark(path: Path) -> LogMark:
    """The :class:`LogMark` of the whole file at ``path`` as it is now (reads every byte)."""
    with path.open("rb") as fh:
        st = os.fstat(fh.fileno())
        size = crc = 0
        for block in iter(lambda: fh.read(1 << 22), b""):
            size += len(block)
            crc = zlib.crc32(block, crc)
        return LogMark(size, crc, zlib.crc32(_tail_of(fh, size)), st.st_ino, st.st_ctime_ns)


def _tail_of(fh: BinaryIO, end: int) -> bytes:
    start = max(0, end - TAIL_BYTES)
    fh.seek(start)
    return fh.read(end - start)


def log_mark_holds(path: Path, mark: LogMark) -> bytes | None:
    """Whether the first ``mark.size`` bytes of the log at ``path`` are still the bytes the
    mark was taken of, ending a line: then the bytes after them (a torn tail, or events the
    mark's holder has not seen), else ``None``.

    When the file's inode, change time and size are the mark's and its last
    :data:`TAIL_BYTES` have ``mark.tail_crc32``, that is the proof (it reads 16 KiB); else
    the first ``mark.size`` bytes are read, a block at a time, against ``mark.crc32``. See
    :class:`LogMark` for what the cheap proof cannot see; :func:`log_mark_holds_fully`
    always reads every byte."""
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            if (mark.tail_crc32 is not None and mark.size and st.st_size == mark.size and st.st_ino == mark.ino
                    and st.st_ctime_ns == mark.ctime_ns):
                tail = _tail_of(fh, mark.size)
                if tail.endswith(b"\n") and zlib.crc32(tail) == mark.tail_crc32:
                    return b""
            return _holds_fully(fh, mark)
    except OSError:
        return None


def log_mark_holds_fully(path: Path, mark: LogMark) -> bytes | None:
    """:func:`log_mark_holds` that always reads the first ``mark.size`` bytes against
    ``mark.crc32`` (and the tail against ``mark.tail_crc32`` when recorded)."""
    try:
        with path.open("rb") as fh:
            return _holds_fully(fh, mark)
    except OSError:
        return None


def _holds_fully(fh: BinaryIO, mark: LogMark) -> bytes | None:
    crc = 0
    left = mark.size
    fh.seek(0)
    while left > 0:
        block = fh.read(min(left, 1 << 22))
        if not block:
            return None
        crc = zlib.crc32(block, crc)
        left -= len(block)
    if mark.size:
        fh.seek(mark.size - 1)
        if fh.read(1) != b"\n":
            return None
    rest = fh.read()
    if crc != mark.crc32:
        return None
    if mark.tail_crc32 is not None and zlib.crc32(_tail_of(fh, mark.size)) != mark.tail_crc32:
        return None
    return rest


def last_line_before(path: Path, end: int) -> bytes:
    """The complete line that ends at byte ``end`` (exclusive; ``end`` follows its newline)."""
    with path.open("rb") as fh:
        start = end - 1
        block = 1 << 16
        while True:
            lo = max(0, start - block)
            fh.seek(lo)
            chunk = fh.read(start - lo)
            cut = chunk.rfind(b"\n")
            if cut >= 0 or lo == 0:
                begin = lo + cut + 1
                break
            block *= 4
        fh.seek(begin)
        return fh.read(end - begin)


class StreamedLog(NamedTuple):
    """What :func:`stream_run_log` found besides the events it handed on."""

    last: Event
    torn_tail: bytes
    valid_size: int
    lines: int


def stream_run_log(path: Path, sink: Callable[[Event], object]) -> StreamedLog | None:
    """Read a run's log one line at a time, handing each complete event to ``sink`` in order,
    holding no list of events (a million-event log folds in the memory of its fold).

    It checks what :func:`read_run_log` checks (every complete line decodes, ``seq`` runs
    1, 2, 3…, one ``run.created`` first, known event versions, no unplanned attempt) and
    returns ``None`` at the first thing that is not so, after handing on only the events
    before it: the caller then reads the log with :func:`read_run_log`, whose error names
    the line, so both readers refuse a damaged log with the same words."""
    require_regular(path)
    if not path.exists():
        return None
    known: set[str] = set()
    last: Event | None = None
    lines = size = 0
    with path.open("rb") as fh, paused_gc():
        for line in fh:
            if not line.endswith(b"\n"):  # the last line, without its newline: torn or complete
                try:
                    event = decode(line)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    return None if last is None else StreamedLog(last, line, size, lines)
            else:
                try:
                    event = decode(line)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    return None
            lines += 1
            if not _sound(event, lines, known):
                return None
            sink(event)
            last = event
            size += len(line)
    return None if last is None else StreamedLog(last, b"", size, lines)


def _sound(event: Event, lineno: int, known: set[str]) -> bool:
    """Whether ``event`` on line ``lineno`` passes :func:`read_run_log`'s checks (``known``:
    the attempts planned or derived so far, grown here)."""
    if event.seq != lineno or event.v != _CURRENT_VERSION[type(event)]:
        return False
    if lineno == 1:
        if not isinstance(event, RunCreated):
            return False
        known.update(p.attempt_id for p in event.slots)
        return True
    if isinstance(event, RunCreated):
        return False
    fields = _ATTEMPT_FIELDS.get(type(event))
    if fields is not None and not (isinstance(event, RevisionMeasured) and event.stage != "submission"):
        for name in fields:
            value = getattr(event, name)
            for aid in value if isinstance(value, list) else (value,):
                if aid is not None and aid not in known:
                    return False
    if isinstance(event, AttemptDiscarded):
        known.add(event.replaced_by)
    return True


#: Each event type's current version (its ``v`` default).
_CURRENT_VERSION: dict[type, int] = {  # the defaults are the trailing fields' (no type hints resolved: cheap at import)
    t: t.__struct_defaults__[t.__struct_fields__.index("v") - len(t.__struct_fields__) + len(t.__struct_defaults__)]
    for t in EVENT_TYPES
}
#: The fields of each event type that name an attempt of this run (another run's
#: ``origin_attempt`` is not one).
_ATTEMPT_FIELDS: dict[type, tuple[str, ...]] = {
    t: names for t in EVENT_TYPES
    if (names := tuple(n for n in t.__struct_fields__ if n in ("attempt_id", "attempt_ids")))
}


def read_events(path: Path) -> list[Event]:
    """Every complete event in order (torn tail ignored)."""
    return read_log(path).events


class EventLog:
    """The single writer of one ``events.jsonl``.

    Open it only while holding ``run.lock``. Opening repairs a torn tail (and records
    :class:`LogRepaired` as the first appended event). :meth:`append` is synchronous
    and durable: it returns after ``fsync``.
    """

    def __init__(self, path: Path, *, clock: Callable[[], str] = utc_now) -> None:
        self.path = path
        self._clock = clock
        contents = read_log(path)
        self._events_seen = len(contents.events)
        self._last_seq = contents.events[-1].seq if contents.events else 0
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.recovered: list[Event] = list(contents.events)
        self.repair: LogRepaired | None = None
        if contents.torn_tail:
            os.ftruncate(self._fd, contents.valid_size)
            os.fsync(self._fd)
            self.repair = LogRepaired(
                dropped_bytes=len(contents.torn_tail),
                dropped_sha256=hashlib.sha256(contents.torn_tail).hexdigest(),
            )
        elif contents.valid_size and not path.read_bytes().endswith(b"\n"):
            os.write(self._fd, b"\n")
            os.fsync(self._fd)
        self._size, self._crc = _crc_of(path)
        with path.open("rb") as fh:
            self._tail = _tail_of(fh, self._size)
        self._stat = os.fstat(self._fd)

    @property
    def mark(self) -> LogMark:
        """The log's bytes so far: how many, their CRC-32, the CRC-32 of their last
        :data:`TAIL_BYTES`, and the file's inode and change time after the last write (kept
        up to date by :meth:`append`)."""
        return LogMark(self._size, self._crc, zlib.crc32(self._tail), self._stat.st_ino, self._stat.st_ctime_ns)

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def append(self, event: Event) -> Event:
        """Stamp ``seq`` and ``at``, write one line, fsync; return the stamped event."""
        stamped = stamp(event, seq=self._last_seq + 1, at=self._clock())
        line = encode(stamped) + b"\n"
        written = os.write(self._fd, line)
        while written < len(line):  # a short write on a full disk: finish or raise
            written += os.write(self._fd, line[written:])
        os.fsync(self._fd)
        self._last_seq = stamped.seq
        self._size += len(line)
        self._crc = zlib.crc32(line, self._crc)
        self._tail = (self._tail[max(0, len(self._tail) + len(line) - TAIL_BYTES):] + line)[-TAIL_BYTES:]
        self._stat = os.fstat(self._fd)
        return stamped

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "EventLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def follow(
    path: Path,
    *,
    poll_seconds: float = 0.2,
    stop: Callable[[], bool] = lambda: False,
    start_seq: int = 0,
) -> Iterator[Event]:
    """Yield every event with ``seq > start_seq``, then new ones as they are appended.

    Polls the file; a partial last line is held back until its newline arrives. Ends
    when ``stop()`` returns true after a poll that found nothing new.
    """
    offset = 0
    buffer = b""
    expected = None
    while True:
        require_regular(path)
        try:
            with path.open("rb") as fh:
                fh.seek(offset)
                chunk = fh.read()
        except FileNotFoundError:
            chunk = b""
        if chunk:
            offset += len(chunk)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if not line:
                    continue
                event = decode(line)
                if expected is not None and event.seq != expected:
                    raise CorruptLogError(
                        f"seq jumped from {expected - 1} to {event.seq} while following",
                        file=str(path),
                        fix="the log was rewritten while being followed",
                    )
                expected = event.seq + 1
                if event.seq > start_seq:
                    yield event
            continue
        if stop():
            return
        time.sleep(poll_seconds)
