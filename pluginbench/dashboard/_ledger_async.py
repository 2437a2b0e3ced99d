"""The ledger read from async code: aiosqlite, read-only (``mode=ro``), same rules as
:func:`pluginbench.projections.read_ledger` (the SQL and the decoding are shared, so
both readers accept and refuse the same files)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import aiosqlite

from ..projections import (
    READ_META_SQL,
    READ_MODE_SQL,
    READ_ROWS_SQL,
    LedgerView,
    ledger_uri,
    ledger_view,
)


async def read_ledger_async(path: Path) -> LedgerView | None:
    """The ledger's view, or ``None`` when it is missing, busy, hot or unreadable."""
    uri = ledger_uri(path)
    if uri is None:
        return None
    try:
        async with aiosqlite.connect(uri, uri=True, timeout=0.2, isolation_level=None) as db:
            await db.execute("BEGIN")  # meta and rows from one commit, as read_ledger does
            async with db.execute(READ_MODE_SQL) as cur:
                row = await cur.fetchone()
            mode = row[0] if row else None
            if str(mode).lower() != "delete":
                return None
            async with db.execute(READ_META_SQL) as cur:
                meta = {str(k): str(v) for k, v in await cur.fetchall()}
            async with db.execute(READ_ROWS_SQL) as cur:
                rows = list(await cur.fetchall())
    except (sqlite3.Error, OSError):
        return None
    return ledger_view(mode, meta, rows)
