"""``evidence/ledger.sqlite``: attempt states as SQL, for fast status and resume checks.

A projection, never the truth: the single writer (the Supervisor) updates it after
every appended event, in rollback-journal mode, and rebuilds it from the fold whenever
its recorded ``last_seq`` disagrees with the log. Readers open it read-only
(``mode=ro``) and fall back to folding the log when it is busy, has a hot journal, is
in another journal mode, or lags the log.

Uses the standard library's ``sqlite3`` rather than aiosqlite: every write is a few
rows on a local file, the ledger must also work inside the trio-tested core, and a
synchronous write keeps "after event N is appended, the ledger shows N" exact.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from ..events import Event, LogMark
from ._state import RunState
from ._status import Group, group_of
from ._status_types import AttemptStatus
from ._view import ATTEMPT_EVENTS, attempt_row, run_dynamic, run_static

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

_SUM_COLUMNS = ", ".join(f"s{i} INTEGER NOT NULL, c{i} INTEGER NOT NULL" for i in range(len(GROUP_COLUMNS) - 6))
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS attempts (
  id TEXT PRIMARY KEY, slot INTEGER NOT NULL, task TEXT NOT NULL, arm TEXT NOT NULL,
  repeat INTEGER NOT NULL, state TEXT NOT NULL, live INTEGER NOT NULL,
  outcome TEXT, reused INTEGER NOT NULL, tokens_status TEXT NOT NULL, native INTEGER NOT NULL,
  input_tokens INTEGER, cached_input_tokens INTEGER, output_tokens INTEGER, reasoning_output_tokens INTEGER,
  total_tokens INTEGER, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_live ON attempts (live, slot);
CREATE INDEX IF NOT EXISTS attempts_state ON attempts (state, id);
CREATE INDEX IF NOT EXISTS attempts_task ON attempts (live, task, slot);
CREATE TABLE IF NOT EXISTS live_status (slot INTEGER PRIMARY KEY, id TEXT NOT NULL, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS groups (key TEXT PRIMARY KEY, n INTEGER NOT NULL, {_SUM_COLUMNS});
"""

_SUMS = range(len(GROUP_COLUMNS) - 6)
#: Adds one attempt's share (or takes it away: every number negated) to its group.
_GROUP_ADD_SQL = ("INSERT INTO groups (key, n, " + ", ".join(f"s{i}, c{i}" for i in _SUMS) + ") VALUES ("
                  + ",".join("?" * (2 + 2 * len(_SUMS))) + ") ON CONFLICT(key) DO UPDATE SET n=n+excluded.n, "
                  + ", ".join(f"s{i}=s{i}+excluded.s{i}, c{i}=c{i}+excluded.c{i}" for i in _SUMS))
_OLD_GROUP_SQL = "SELECT live, " + ", ".join(GROUP_COLUMNS) + " FROM attempts WHERE id=?"

_COLUMNS = ("id", "slot", "task", "arm", "repeat", "state", "live", "outcome", "reused", "tokens_status", "native",
            *GROUP_COLUMNS[6:], "row")
#: An upsert (not ``INSERT OR REPLACE``): an index whose columns did not change is not rewritten.
_PUT_SQL = ("INSERT INTO attempts (" + ", ".join(_COLUMNS) + ") VALUES (" + ",".join("?" * len(_COLUMNS))
            + ") ON CONFLICT(id) DO UPDATE SET " + ", ".join(f"{c}=excluded.{c}" for c in _COLUMNS[1:]))
_PUT_LIVE_SQL = ("INSERT INTO live_status (slot, id, body) VALUES (?, ?, ?) "
                 "ON CONFLICT(slot) DO UPDATE SET id=excluded.id, body=excluded.body")
_MARK_KEYS = ("log_bytes", "log_crc32", "log_tail_crc32", "log_ino", "log_ctime_ns")

_STATUS_ENCODER = msgspec.json.Encoder(order="sorted")
#: The attempt row's keys ``status --json`` shows (its ``attempts`` items).
_STATUS_KEYS = AttemptStatus.__struct_fields__


def status_body(row: dict[str, Any]) -> bytes:
    """An attempt row as it stands in ``status --json``'s ``attempts`` list: its typed keys,
    sorted, indented two steps (the list is one level in), without a separating comma."""
    compact = _STATUS_ENCODER.encode({k: row[k] for k in _STATUS_KEYS})
    return b"    " + msgspec.json.format(compact, indent=2).replace(b"\n", b"\n    ")


class LedgerView(NamedTuple):
    run: dict[str, Any]
    attempts: list[dict[str, Any]]  # live attempts in slot order
    last_seq: int
    #: the log's bytes the ledger was written at (None: a writer that did not say)
    log_mark: LogMark | None = None


class Ledger:
    """The writer. Open only while holding ``run.lock``."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        #: whether ``run_static`` in the file is the current state's (written by this writer)
        self._static_written = False
        try:
            self._db = self._open(path)
        except sqlite3.DatabaseError:
            # A projection is never precious: a damaged file is replaced and rebuilt
            # (the caller rebuilds whenever last_seq disagrees with the log).
            path.unlink(missing_ok=True)
            Path(str(path) + "-journal").unlink(missing_ok=True)
            self._db = self._open(path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode=DELETE")
        # No fsync: the log is the durable truth and the ledger is rebuilt from it
        # whenever its last_seq disagrees; a rollback journal still keeps readers
        # from seeing half a transaction.
        db.execute("PRAGMA synchronous=OFF")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        version = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if version is not None and version[0] != str(LEDGER_SCHEMA_VERSION):
            # Another schema's ledger: emptied, so last_seq disagrees and the writer rebuilds it.
            db.execute("DROP TABLE IF EXISTS attempts")
            db.execute("DROP TABLE IF EXISTS live_status")
            db.execute("DROP TABLE IF EXISTS groups")
            db.execute("DELETE FROM meta")
        db.executescript(_SCHEMA)
        db.execute("SELECT count(*) FROM meta").fetchone()
        return db

    def last_seq(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key='last_seq'").fetchone()
        return int(row[0]) if row else -1

    def log_mark(self) -> LogMark | None:
        """The log mark the ledger was last written at (None: none recorded)."""
        return mark_of(dict(self._db.execute(READ_META_SQL).fetchall()))

    def rebuild(self, state: RunState, mark: LogMark | None = None) -> None:
        """Every row again from ``state``; ``mark``: the log's bytes ``state`` is the fold of."""
        with self._tx():
            self._db.execute("DELETE FROM attempts")
            self._db.execute("DELETE FROM live_status")
            self._db.execute("DELETE FROM groups")
            for a in state.attempts.values():
                live = state.live.get(a.slot) == a.attempt_id
                self._put(attempt_row(a, live=live))
            self._meta(state, static=True, mark=mark)

    def update(self, state: RunState, event: Event, mark: LogMark | None = None) -> None:
        """Write what ``event`` changed: its attempts, and the run row (its static part only
        after an event that may change it, so an attempt's event costs the same at any size).
        ``mark``: the log's bytes through ``event`` (None: not known, and none is kept)."""
        tag = event.__struct_config__.tag
        with self._tx():
            ids = [getattr(event, "attempt_id", None), getattr(event, "replaced_by", None)]
            if tag == "run.created":
                ids = list(state.attempts)
            for aid in ids:
                if aid and aid in state.attempts:
                    a = state.attempts[aid]
                    self._put(attempt_row(a, live=state.live.get(a.slot) == aid))
            self._meta(state, static=tag not in ATTEMPT_EVENTS or not self._static_written, mark=mark)

    def _put(self, row: dict[str, Any]) -> None:
        group = group_of(row)
        old = self._db.execute(_OLD_GROUP_SQL, (row["id"],)).fetchone()
        if not (old and old[0] and row["live"] and tuple(old[1:]) == group):
            if old and old[0]:
                self._add(old[1:], -1)
            if row["live"]:
                self._add(group, 1)
        arm, state, *rest = group
        self._db.execute(_PUT_SQL, (row["id"], row["slot"], row["task"], arm, row["repeat"], state, int(row["live"]),
                                    *rest, json.dumps(row, sort_keys=True)))
        if row["live"]:
            self._db.execute(_PUT_LIVE_SQL, (row["slot"], row["id"], status_body(row)))
        else:
            self._db.execute("DELETE FROM live_status WHERE slot=? AND id=?", (row["slot"], row["id"]))

    def _add(self, group: Sequence[Any], sign: int) -> None:
        values: list[int] = []
        for v in group[6:]:
            values += (sign * (v or 0), sign * (v is not None))
        self._db.execute(_GROUP_ADD_SQL, (json.dumps(list(group[:6])), sign, *values))

    def _meta(self, state: RunState, *, static: bool, mark: LogMark | None = None) -> None:
        rows = [
            ("schema_version", str(LEDGER_SCHEMA_VERSION)),
            ("last_seq", str(state.last_seq)),
            ("run", json.dumps(run_dynamic(state), sort_keys=True)),
        ]
        if static:
            rows.append(("run_static", json.dumps(run_static(state), sort_keys=True)))
        self._db.execute("DELETE FROM meta WHERE key IN (" + ",".join("?" * len(_MARK_KEYS)) + ")", _MARK_KEYS)
        if mark is not None:
            rows += [(k, str(v)) for k, v in zip(_MARK_KEYS, mark, strict=True) if v is not None]
        self._db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", rows)
        self._static_written = self._static_written or static

    def _tx(self) -> _Tx:
        return _Tx(self._db)

    def close(self) -> None:
        self._db.close()


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if not exc_type:
            self.db.execute("COMMIT")
            return
        # SQLite may have rolled back already (e.g. "database or disk is full"): keep that cause.
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("ROLLBACK")


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
        size, crc, *rest = (int(meta[k]) if k in meta else None for k in _MARK_KEYS)
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

    def attempt_batches(self, size: int = 4_000) -> Iterator[list[bytes]]:
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
