"""Reading one run for the dashboard: status, frozen settings, results, timeline.

The I/O edge of the dashboard. Status comes from the one status code
(:func:`~pluginbench.status.status_snapshot`) with the ledger read through
aiosqlite and the Docker check switched off (``left_running`` is null on every poll).
A read that fails (a file caught mid-write, a log that does not decode) keeps the last
good view and marks the entry stale with the reason; the monitor tries again.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread
import msgspec

from ..errors import PluginBenchError
from ..rundir import GroupDir, RunDir
from ..status import status_snapshot
from ._ledger_async import read_ledger_async
from ._timeline import Timeline
from ._views import ResultRow, RunSource, result_rows

Signature = tuple[tuple[int, int] | None, ...]


def file_signature(root: Path) -> Signature:
    """(mtime_ns, size) of every file whose change means the run changed."""
    rd = RunDir(root)
    out: list[tuple[int, int] | None] = []
    for p in (rd.events, rd.lock, rd.ledger, rd.log, rd.report_dir / "results.json", rd.report_dir / "report.html"):
        try:
            st = os.stat(p, follow_symlinks=False)
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


@dataclass
class RunEntry:
    """What the dashboard knows of one run: the last good reads and whether they are stale."""

    key: str
    root: Path
    status: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None
    results: dict[str, Any] | None = None
    timeline: Timeline = field(default_factory=Timeline)
    stale: str | None = None  # why the last read failed, while an older view is shown
    read_at: float = float("-inf")  # monotonic time of the last read attempt
    signature: Signature | None = None
    results_signature: tuple[int, int] | None = None
    result_rows: tuple[ResultRow, ...] = ()
    results_version: int = 0  # bumped when results.json changed (the Results page's news)
    generation: int = 0  # bumped when anything the pages show changed
    #: the cross-agent evaluation's folder this run is one harness of (None: a run on its own)
    group: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.status and self.status.get("active"))


def _read_json(path: Path) -> Any:
    return json.loads(path.read_bytes())


async def refresh(entry: RunEntry, *, clock: Any = time.monotonic) -> bool:
    """Read the run again; True when what the page shows changed."""
    entry.read_at = clock()
    entry.group = str(entry.root.parent) if GroupDir(entry.root.parent).is_group() else None
    sig = await anyio.to_thread.run_sync(file_signature, entry.root)
    rd = RunDir(entry.root)
    before = (entry.status, entry.results, entry.stale, len(entry.timeline.completed))
    problems: list[str] = []
    try:
        view = await read_ledger_async(rd.ledger)
        snap = await anyio.to_thread.run_sync(
            partial(status_snapshot, entry.root, ledger_reader=lambda _p: view, check_left_running=False)
        )
        entry.status = snap
    except (PluginBenchError, OSError, ValueError, msgspec.MsgspecError) as exc:
        problems.append(f"status: {exc}")
    if entry.settings is None:
        try:
            entry.settings = await anyio.to_thread.run_sync(_read_json, rd.evaluation)
        except (OSError, ValueError) as exc:
            problems.append(f"evaluation.json: {exc}")
    results_path = rd.report_dir / "results.json"
    rsig = sig[4]
    if rsig is None:
        if entry.results is not None:
            entry.results_version += 1
        entry.results, entry.results_signature, entry.result_rows = None, None, ()
    elif rsig != entry.results_signature:
        try:
            doc = await anyio.to_thread.run_sync(_read_json, results_path)
            if not isinstance(doc, dict) or not isinstance(doc.get("attempts"), list):
                raise ValueError("not a results document (no attempts list)")
            entry.results, entry.results_signature = doc, rsig
            entry.result_rows = tuple(result_rows(RunSource(
                key=entry.key, root=str(entry.root), status=None, settings=None, results=doc, stale=None)))
            entry.results_version += 1
        except (OSError, ValueError) as exc:
            problems.append(f"report/results.json: {exc}")
    await anyio.to_thread.run_sync(entry.timeline.tail, rd.events)
    entry.signature = sig
    entry.stale = "; ".join(problems) or None
    changed = before != (entry.status, entry.results, entry.stale, len(entry.timeline.completed))
    if changed:
        entry.generation += 1
    return changed


def due(entry: RunEntry, signature: Signature, now: float, *, owned_every: float = 2.0) -> bool:
    """Whether the monitor should read ``entry`` now (pure).

    A run a process owns is read at most every ``owned_every`` seconds; any other run
    only when one of its files changed, or again after a failed read."""
    since = now - entry.read_at
    if entry.status is None and entry.stale is None:
        return True
    if entry.active or entry.stale:
        return since >= owned_every
    return signature != entry.signature
