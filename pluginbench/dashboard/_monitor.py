"""The monitor: which runs exist and when to read each again (one background task).

Searches the folders again at most every ``discover_every`` seconds; every ``tick`` it
checks each run's file signature (a few ``stat`` calls) and reads the runs that are due
(:func:`~._reader.due`: an owned run at most every 2 s, any other only when a file
changed or its last read failed). Pages waiting for news block on
:meth:`Monitor.wait_for_change`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import anyio.to_thread

from ._discovery import find_runs
from ._reader import RunEntry, Signature, due, file_signature, refresh
from ._views import RunSource


def source_of(entry: RunEntry) -> RunSource:
    return RunSource(
        key=entry.key, root=str(entry.root), status=entry.status, settings=entry.settings,
        results=entry.results, stale=entry.stale, completed_at=tuple(entry.timeline.completed),
        rows=entry.result_rows, group=entry.group,
    )


class Monitor:
    def __init__(
        self,
        roots: Sequence[Path],
        *,
        discover_every: float = 10.0,
        owned_every: float = 2.0,
        tick: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.roots = list(roots)
        self.discover_every = discover_every
        self.owned_every = owned_every
        self.tick = tick
        self.clock = clock
        self.entries: dict[str, RunEntry] = {}
        self.generation = 0
        self.discovered_at = -math.inf
        self.closed = False
        self._changed = anyio.Event()

    def sources(self) -> list[RunSource]:
        return [source_of(e) for e in self.entries.values()]

    def source(self, key: str) -> RunSource | None:
        entry = self.entries.get(key)
        return None if entry is None else source_of(entry)

    def version_of(self, path: str) -> tuple[object, ...]:
        """What a page depends on: a Run page its run, Results the reports, Runs everything.
        A live stream renders again only when this changes."""
        if path == "/results":
            return tuple((k, e.results_version) for k, e in self.entries.items())
        if path.startswith("/run/"):
            entry = self.entries.get(path.split("/")[2])
            return (-1,) if entry is None else (entry.generation,)
        return (self.generation,)

    def _signal(self) -> None:
        self.generation += 1
        self._changed.set()
        self._changed = anyio.Event()

    async def step(self) -> None:
        """One round: maybe search again, then read every run that is due."""
        now = self.clock()
        changed = False
        if now - self.discovered_at >= self.discover_every:
            self.discovered_at = now
            found = await anyio.to_thread.run_sync(find_runs, self.roots)
            for key in [k for k in self.entries if k not in found]:
                del self.entries[key]
                changed = True
            for key, root in found.items():
                if key not in self.entries:
                    self.entries[key] = RunEntry(key=key, root=root)
                    changed = True
        entries = list(self.entries.values())
        sigs: list[Signature] = await anyio.to_thread.run_sync(lambda: [file_signature(e.root) for e in entries])
        for entry, sig in zip(entries, sigs, strict=True):
            if due(entry, sig, self.clock(), owned_every=self.owned_every) and await refresh(entry, clock=self.clock):
                changed = True
        if changed:
            self._signal()

    async def run(self, stop: anyio.Event) -> None:
        """Step every ``tick`` until ``stop`` is set (no cancellation needed to end it)."""
        while not stop.is_set():
            await self.step()
            with anyio.move_on_after(self.tick):
                await stop.wait()
        self.closed = True  # live streams end, so the server's graceful shutdown is quick
        self._signal()

    async def wait_for_change(self, generation: int, timeout: float) -> int:
        """The generation once it differs from ``generation``, or the same after ``timeout``."""
        with anyio.move_on_after(timeout):
            while self.generation == generation:
                await self._changed.wait()
        return self.generation
