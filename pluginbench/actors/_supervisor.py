"""The Supervisor: the one writer of the log, and the loop that drives a run.

Its whole job is::

    event -> log.append -> state.apply -> ledger.update -> decide/schedule -> send

Actors (preparation, coding ×jobs, grader, collector) run in one task group and talk
to it only through memory-object streams; the Supervisor is the only code that appends
to ``events.jsonl``. Processing an event and everything it causes happens without an
``await`` in between, so decisions never interleave.

Stopping is cooperative: SIGTERM or Ctrl-C records ``run.stopping``; ``schedule`` then
starts nothing new and the run ends ``run.stopped`` once the attempts in flight have
finished and been kept. Further Ctrl-Cs only say how many calls are still awaited,
because those calls are already paid for.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
from collections import deque
from collections.abc import Callable

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectSendStream

from ..events import (
    AttemptCached,
    AttemptStarted,
    Event,
    EventLog,
    ReportBuilt,
    RunStarted,
    RunStopping,
)
from ..projections import Ledger, RunState, load_prices
from ..stats import Prices
from ._ceiling import within_ceiling
from ._coding import coding_actor
from ._collector import collector_actor
from ._context import Engine, Envelope, Outbox
from ._decide import (
    Archive,
    BuildReport,
    Emit,
    Grade,
    GradeSourceOnly,
    Measure,
    Prepare,
    Publish,
    SelectSourceOnly,
    Start,
    decide,
    schedule,
)
from ._extension_actors import ACTORS
from ._grader import grader_actor
from ._preparation import load_frozen, prepare
from ._source_only import select_index
from ._vanilla import publication

Observer = Callable[[RunState, Event], None]


class Supervisor:
    def __init__(
        self,
        engine: Engine,
        log: EventLog,
        ledger: Ledger,
        state: RunState,
        *,
        observer: Observer | None = None,
        handle_signals: bool = True,
        report_builder: Callable[[], str] | None = None,
        cost_ceiling: float | None = None,
    ) -> None:
        self.engine = engine
        self.log = log
        self.ledger = ledger
        self.state = state
        self.observer = observer
        self.handle_signals = handle_signals
        self.report_builder = report_builder
        self._tg: TaskGroup | None = None
        self._coding: MemoryObjectSendStream[Start] | None = None
        self._grading: MemoryObjectSendStream[Grade] | None = None
        self._measuring: MemoryObjectSendStream[Measure] | None = None
        self._inbox: MemoryObjectSendStream[Envelope] | None = None
        self._extensions: dict[type, MemoryObjectSendStream[object]] = {}
        self._prep_scope: anyio.CancelScope | None = None
        self._interrupts = 0
        self.cost_ceiling = cost_ceiling
        self._prices: Prices | None = None
        self._prices_reason: str | None = None

    @property
    def terminal(self) -> bool:
        s = self.state
        return s.finished or s.stopped is not None or s.failed is not None

    async def run(self, *, resumed: bool, foreground: bool = False) -> RunState:
        jobs = self.engine.evaluation.jobs
        inbox_send, inbox_recv = anyio.create_memory_object_stream[Envelope](math.inf)
        coding_send, coding_recv = anyio.create_memory_object_stream[Start](jobs)
        grade_send, grade_recv = anyio.create_memory_object_stream[Grade](math.inf)
        measure_send, measure_recv = anyio.create_memory_object_stream[Measure](math.inf)
        self.engine.outbox = Outbox(inbox_send)
        self._inbox, self._coding, self._grading, self._measuring = inbox_send, coding_send, grade_send, measure_send
        self._prep_scope = anyio.CancelScope()
        if self.state.coding:
            load_frozen(self.engine, self.state)
        self._prices, self._prices_reason = load_prices(self.engine.run_dir.root)
        async with anyio.create_task_group() as tg:
            self._tg = tg
            async with coding_recv, grade_recv, measure_recv:
                for _ in range(jobs):
                    tg.start_soon(coding_actor, self.engine, coding_recv.clone())
                    tg.start_soon(grader_actor, self.engine, grade_recv.clone())
                tg.start_soon(collector_actor, self.engine, measure_recv.clone())
            for command_type, actor in ACTORS.items():
                ext_send, ext_recv = anyio.create_memory_object_stream[object](math.inf)
                self._extensions[command_type] = ext_send
                async with ext_recv:
                    for _ in range(jobs):
                        tg.start_soon(actor, self.engine, ext_recv.clone())
            signal_scope = anyio.CancelScope()
            if self.handle_signals:
                tg.start_soon(self._watch_signals, signal_scope)
            if resumed:
                await self._stop_left_running()
            if self.log.repair is not None:
                self._record(self.log.repair)
            pid = os.getpid()
            self._record(RunStarted(pid=pid, pgid=os.getpgid(pid), resumed=resumed, foreground=foreground,
                                    cost_ceiling=self.cost_ceiling))
            async with inbox_recv:
                while not self.terminal:
                    envelope = await inbox_recv.receive()
                    self._record(envelope.event)
                    if envelope.done is not None:
                        envelope.done.set()
            self._prep_scope.cancel()
            signal_scope.cancel()
            for stream in (coding_send, grade_send, measure_send, inbox_send, *self._extensions.values()):
                stream.close()
        return self.state

    # ------------------------------------------------------------------ the loop body

    def _append(self, event: Event) -> Event:
        stamped = self.log.append(event)
        self.state.apply(stamped)
        self.ledger.update(self.state, stamped)
        if self.observer is not None:
            self.observer(self.state, stamped)
        return stamped

    def _record(self, first: Event) -> None:
        queue: deque[Event] = deque([first])
        while queue:
            event = self._append(queue.popleft())
            for command in decide(self.state, event):
                match command:
                    case Emit(event=e):
                        queue.append(e)
                    case Prepare():
                        assert self._tg is not None
                        self._tg.start_soon(self._prepare)
                    case Grade() | GradeSourceOnly():
                        assert self._grading is not None
                        self._grading.send_nowait(command)
                    case Measure():
                        assert self._measuring is not None
                        self._measuring.send_nowait(command)
                    case SelectSourceOnly():
                        queue.append(select_index(self.engine))
                    case BuildReport():
                        assert self._tg is not None
                        self._tg.start_soon(self._build_report)
                    case Archive(attempt_id=aid):
                        self._archive(aid)
                    case Publish(attempt_id=aid):
                        assert self._tg is not None
                        self._tg.start_soon(self._publish, aid, publication(self.engine, self.state, aid))
                    case _ if type(command) in self._extensions:
                        self._extensions[type(command)].send_nowait(command)
            if not queue:
                starts = schedule(self.state)
                check = within_ceiling(self.state, self._prices, self._prices_reason, len(starts))
                if check.reason is not None:
                    queue.append(RunStopping(reason=check.reason))  # after the starts that fit
                for start in starts[: check.allowed]:
                    self._append(
                        AttemptStarted(
                            attempt_id=start.attempt_id, slot=start.slot, task=start.task,
                            arm=start.arm, repeat=start.repeat,
                        )
                    )
                    assert self._coding is not None
                    self._coding.send_nowait(start)

    # ------------------------------------------------------------------ helpers

    async def _stop_left_running(self) -> None:
        """Resume stops what a killed worker left running before anything codes again."""
        stop = getattr(self.engine.environment, "stop_left_running", None)
        if stop is None:
            return
        try:
            left = await stop(self.engine.run_id)
        except Exception as exc:  # noqa: BLE001 - said, not fatal: the next resume tries again
            print(f"could not check for sandboxes left running: {exc}", flush=True)
            return
        for thing in left:
            print(f"stopped {thing}, left running by an attempt that a kill interrupted", flush=True)

    def _archive(self, attempt_id: str) -> None:
        """Keep a replaced attempt's evidence (invocation, any usage) out of the live tree."""
        src = self.engine.run_dir.attempt(attempt_id)
        if not src.exists():
            return
        dest = self.engine.run_dir.discarded(attempt_id)
        n = 1
        while dest.exists():
            n += 1
            dest = dest.with_name(f"{attempt_id}.{n}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        src.rename(dest)

    async def _publish(self, attempt_id: str, manifest: object) -> None:
        """Publish a finished vanilla attempt off the loop, then record ``attempt.cached``."""
        from ..cache import EntryManifest, publish_entry

        if isinstance(manifest, EntryManifest):
            try:
                entry, reason = await anyio.to_thread.run_sync(
                    publish_entry, self.engine.cache_root, manifest, self.engine.run_dir.attempt(attempt_id))
            except Exception as exc:  # noqa: BLE001 - best effort: the attempt stays this run's own
                entry, reason = None, f"{type(exc).__name__}: {exc}"
        else:
            entry, reason = None, str(manifest)
        if entry is None:
            print(f"vanilla attempt {attempt_id} is not cached: {reason}", flush=True)
        assert self._inbox is not None
        # The run may already have ended (failed); the entry itself is complete either way.
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._inbox.send(Envelope(AttemptCached(attempt_id=attempt_id, entry=entry, reason=reason), None))

    async def _prepare(self) -> None:
        assert self._prep_scope is not None
        with self._prep_scope:
            await prepare(self.engine, self.state)

    async def _build_report(self) -> None:
        assert self._inbox is not None
        if self.report_builder is None:
            from ..projections import build_report

            run_dir = self.engine.run_dir.root

            def builder() -> str:
                files = build_report(run_dir)
                return str(files.report_html.relative_to(run_dir))
        else:
            builder = self.report_builder
        try:
            path = await anyio.to_thread.run_sync(builder)
        except Exception as exc:  # noqa: BLE001 - the run ends failed, with the reason
            await self._inbox.send(Envelope(RunStopping(reason=f"the report could not be built: {exc}", failure=True), None))
            return
        await self._inbox.send(Envelope(ReportBuilt(path=path), None))

    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        assert self._inbox is not None
        with scope, anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                self._interrupts += 1
                if self._interrupts == 1:
                    name = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C"
                    await self._inbox.send(
                        Envelope(RunStopping(reason=f"stop requested ({name}); running attempts finish and are kept"), None)
                    )
                else:
                    waiting = self.state.count("running")
                    print(
                        f"still waiting for {waiting} running attempt(s); their model calls are paid "
                        "for, so they finish and are kept",
                        file=sys.stderr,
                        flush=True,
                    )
