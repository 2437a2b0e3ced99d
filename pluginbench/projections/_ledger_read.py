"""Reading ``evidence/ledger.sqlite`` (read-only): the view, and ``status --json``'s summary.

The reader half of :mod:`._ledger` (the writer): what a status read needs, so reading the
ledger imports no fold, no report and no measures. Readers open the file read-only
(``mode=ro``) and get ``None`` when it is busy, has a hot journal, is in another journal
mode or another schema, or records no log mark (then status folds the log).
"""

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ..events import LogMark
from ._status_groups import Group

#: 2: the run row in two meta values, ``run_static`` (encoded only when a non-attempt event
#: changes it) and ``run`` (the rest, encoded every event).
#: 3: each attempt's ``status --json`` row pre-encoded (``status``) and the columns status
#: sums by (:data:`GROUP_COLUMNS`); the log's ``log_bytes`` and ``log_crc32`` in meta. The
#: long ``row`` is the last column: reading the others never walks its overflow pages.
#: 4: the live attempts' ``status --json`` rows in their own table, ``live_status`` (keyed by
#: slot, so slot order is the table's order), each already in its final bytes (indented as it
#: stands in the ``attempts`` list); the status groups kept as the writer goes (``groups``: a
#: live attempt's row leaves its old group and joins its new one), so reading them costs the
#: number of groups, not of attempts; an index for the started attempts and one by task;
#: the log mark's tail CRC-32, inode and change time in meta
#: (:class:`~pluginbench.events.LogMark`). A ledger of another version is emptied and rebuilt
#: by the writer, and read by nobody.
LEDGER_SCHEMA_VERSION = 4

#: The attempt columns ``status`` groups and sums by, beside ``row`` (see :func:`group_of`).
GROUP_COLUMNS = ("arm", "state", "outcome", "reused", "tokens_status", "native",
                 "input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")

_SUMS = range(len(GROUP_COLUMNS) - 6)
MARK_KEYS = ("log_bytes", "log_crc32", "log_tail_crc32", "log_ino", "log_ctime_ns")


class LedgerView(NamedTuple):
    run: dict[str, Any]
    attempts: list[dict[str, Any]]  # live attempts in slot order
    last_seq: int
    #: the log's bytes the ledger was written at (None: a writer that did not say)
    log_mark: LogMark | None = None


READ_MODE_SQL = "PRAGMA journal_mode"
READ_META_SQL = "SELECT key, value FROM meta"
READ_ROWS_SQL = "SELECT row FROM attempts WHERE live=1 ORDER BY slot"


def ledger_uri(path: Path) -> str | None:
    """The read-only URI of a ledger worth opening, or ``None`` (missing, or a crashed
    writer's hot journal beside it)."""
    if not path.is_file() or Path(str(path) + "-journal").exists():
        return None
    return f"file:{path}?mode=ro"


def ledger_view(journal_mode: Any, meta: dict[str, str], rows: list[Any]) -> LedgerView | None:
    """The view from what a reader selected (``READ_*_SQL``); ``None`` when the ledger
    is in another journal mode, another schema, or does not decode. Shared by the
    synchronous reader below and the dashboard's aiosqlite reader."""
    if str(journal_mode).lower() != "delete":
        return None
    if meta.get("schema_version") != str(LEDGER_SCHEMA_VERSION) or "run" not in meta or "run_static" not in meta:
        return None
    try:
        # One decode of all rows as a JSON array: no Python call per row.
        attempts = msgspec.json.decode("[" + ",".join([r[0] for r in rows]) + "]")
        if not isinstance(attempts, list) or len(attempts) != len(rows):
            return None  # a row that is not one JSON value (e.g. "1,2") must not shift the rest
        run = {**json.loads(meta["run_static"]), **json.loads(meta["run"])}
        return LedgerView(dict(sorted(run.items())), attempts, int(meta["last_seq"]), mark_of(meta))
    except (ValueError, KeyError, TypeError, msgspec.DecodeError):
        return None


def mark_of(meta: dict[str, str]) -> LogMark | None:
    """The log mark the ledger's meta records, or None."""
    try:
        size, crc, *rest = (int(meta[k]) if k in meta else None for k in MARK_KEYS)
        if size is None or crc is None:
            return None
        return LogMark(size, crc, *rest)
    except ValueError:
        return None


class LedgerSummary:
    """What ``status --json`` and ``status --watch`` read from the ledger without decoding
    every attempt row: the run row, the groups of the live attempts (the ``groups`` table,
    a row per group), the event and log bytes it was written at, and the ids of the attempts that are
    not pending (those whose evidence folders are explained; ``None`` unless asked). The
    attempt rows are read on demand, from the same read transaction: valid only inside
    :func:`ledger_summary`'s ``with``."""

    def __init__(self, db: sqlite3.Connection, run: dict[str, Any], groups: list[Group], last_seq: int,
                 log_mark: LogMark, started: frozenset[str] | None) -> None:
        self._db = db
        self.run = run
        self.groups = groups
        self.last_seq = last_seq
        self.log_mark = log_mark
        self.started = started

    def attempt_batches(self, size: int = 8_192) -> Iterator[list[bytes]]:
        """Every live attempt's ``status --json`` bytes (:func:`status_body`), slot order, a
        batch at a time (the table's own order: no sort, no decode)."""
        cur = self._db.execute("SELECT body FROM live_status ORDER BY slot")
        while batch := cur.fetchmany(size):
            yield [r[0] for r in batch]

    def attempts_of(self, tasks: Sequence[str]) -> list[bytes]:
        """The ``status --json`` bytes of the live attempts of ``tasks`` and of every running
        attempt, slot order: the rows a view that shows those tasks needs."""
        marks = ",".join("?" * len(tasks))
        return [r[0] for r in self._db.execute(
            "SELECT body FROM live_status WHERE slot IN (SELECT slot FROM attempts INDEXED BY attempts_task "
            f"WHERE live=1 AND task IN ({marks}) UNION SELECT slot FROM attempts INDEXED BY attempts_state "
            "WHERE state='running' AND live=1) ORDER BY slot", tuple(tasks))]


_GROUP_SQL = "SELECT key, n, " + ", ".join(f"s{i}, c{i}" for i in _SUMS) + " FROM groups WHERE n > 0"
#: One string of the started ids (attempt ids are folder names without a newline): no Python call per row.
_STARTED_SQL = "SELECT group_concat(id, char(10)) FROM attempts INDEXED BY attempts_state WHERE state != 'pending'"


@contextlib.contextmanager
def ledger_summary(path: Path, *, started: bool = False) -> Iterator[LedgerSummary | None]:
    """The ledger's :class:`LedgerSummary`, read-only, in one read transaction held for the
    ``with``; ``None`` when it cannot be trusted right now or records no log mark (then
    status folds the log). ``started``: also the ids of the attempts that are not pending."""
    uri = ledger_uri(path)
    if uri is None:
        yield None
        return
    try:
        db = sqlite3.connect(uri, uri=True, timeout=0.2, isolation_level=None)
    except sqlite3.Error:
        yield None
        return
    try:
        summary = _summary(db, started)
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        summary = None
    try:
        yield summary
    finally:
        db.close()


def _summary(db: sqlite3.Connection, started: bool) -> LedgerSummary | None:
    db.execute("BEGIN")
    if str(db.execute(READ_MODE_SQL).fetchone()[0]).lower() != "delete":
        return None
    meta = dict(db.execute(READ_META_SQL).fetchall())
    mark = mark_of(meta)
    if meta.get("schema_version") != str(LEDGER_SCHEMA_VERSION) or mark is None:
        return None
    run = {**json.loads(meta["run_static"]), **json.loads(meta["run"])}
    groups = []
    for g in db.execute(_GROUP_SQL):
        arm, state, outcome, reused, tokens_status, native = json.loads(g[0])
        groups.append(Group(arm, state, outcome, reused, tokens_status, native, g[1],
                            tuple((g[2 + 2 * i], g[3 + 2 * i]) for i in _SUMS)))
    ids = None
    if started:
        joined = db.execute(_STARTED_SQL).fetchone()[0]
        ids = frozenset(joined.split("\n")) if joined else frozenset()
    db.text_factory = bytes
    return LedgerSummary(db, dict(sorted(run.items())), groups, int(meta["last_seq"]), mark, ids)


def read_ledger_summary(path: Path, *, started: bool = False) -> tuple[LedgerSummary, list[bytes]] | None:
    """:func:`ledger_summary` and every live attempt's ``status --json`` bytes, read at once
    (the summary's own readers are closed after it)."""
    with ledger_summary(path, started=started) as summary:
        if summary is None:
            return None
        return summary, [row for batch in summary.attempt_batches() for row in batch]


def read_ledger(path: Path) -> LedgerView | None:
    """The ledger's view, read-only; ``None`` when it cannot be trusted right now."""
    uri = ledger_uri(path)
    if uri is None:
        return None
    try:
        db = sqlite3.connect(uri, uri=True, timeout=0.2, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        # One read transaction: meta (last_seq, run row) and the attempt rows are the
        # same commit, never a mix of two.
        db.execute("BEGIN")
        mode = db.execute(READ_MODE_SQL).fetchone()[0]
        if str(mode).lower() != "delete":
            return None
        meta = dict(db.execute(READ_META_SQL).fetchall())
        return ledger_view(mode, meta, db.execute(READ_ROWS_SQL).fetchall())
    except sqlite3.Error:
        return None
    finally:
        db.close()
