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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..events import Event, LogMark
from ._ledger_read import GROUP_COLUMNS, LEDGER_SCHEMA_VERSION, MARK_KEYS, READ_META_SQL, mark_of
from ._state import RunState
from ._status_groups import group_of
from ._status_types import AttemptStatus
from ._view import ATTEMPT_EVENTS, attempt_row, run_dynamic, run_static

_SUMS = range(len(GROUP_COLUMNS) - 6)
_SUM_COLUMNS = ", ".join(f"s{i} INTEGER NOT NULL, c{i} INTEGER NOT NULL" for i in _SUMS)
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

_STATUS_ENCODER = msgspec.json.Encoder(order="sorted")
#: The attempt row's keys ``status --json`` shows (its ``attempts`` items).
_STATUS_KEYS = AttemptStatus.__struct_fields__


def status_body(row: dict[str, Any]) -> bytes:
    """An attempt row as it stands in ``status --json``'s ``attempts`` list: its typed keys,
    sorted, indented two steps (the list is one level in), without a separating comma."""
    compact = _STATUS_ENCODER.encode({k: row[k] for k in _STATUS_KEYS})
    return b"    " + msgspec.json.format(compact, indent=2).replace(b"\n", b"\n    ")


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
        self._db.execute("DELETE FROM meta WHERE key IN (" + ",".join("?" * len(MARK_KEYS)) + ")", MARK_KEYS)
        if mark is not None:
            rows += [(k, str(v)) for k, v in zip(MARK_KEYS, mark, strict=True) if v is not None]
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

