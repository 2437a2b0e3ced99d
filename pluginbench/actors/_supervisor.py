"""The Supervisor: the one writer of the log, and the loop that drives a run.

Its whole job is::

    event -> writer.record (log.append, step = apply + decide, ledger.update) -> schedule -> send

The decisions are the pure :func:`._step.settle` (``step`` per event, then the starts);
this class is the I/O around it. Actors (preparation, coding ×jobs, grader, collector,
extensions) run in one task group and talk to it only through bounded memory-object
streams; the Supervisor is the only code that appends to ``events.jsonl``
(:class:`._writer.RunWriter`). Processing an event and everything it causes happens
without an ``await`` in between, so decisions never interleave.

Channels are bounded. The inbox holds ``inbox_capacity`` events: an actor whose result
finds it full waits until the Supervisor has recorded what is ahead (back-pressure; the
event is never dropped). Commands go out through :class:`._feed.Feed`: ``Start`` (the
schedule never starts more than ``jobs``), ``Grade``, ``Measure`` and each extension's
commands, each channel ``jobs`` deep; the Supervisor itself never waits on an actor.

Stopping is cooperative: SIGTERM or Ctrl-C records ``run.stopping``; ``schedule`` then
starts nothing new and the run ends ``run.stopped`` once the attempts in flight have
finished and been kept. Further Ctrl-Cs only say how many calls are still awaited,
because those calls are already paid for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._parsing import visible
from ..events import (
    AgentLaunched,
    AttemptCached,
    ClusterChanged,
    Event,
    EventLog,
    ReportBuilt,
    RunFailed,
    RunStarted,
    RunStopping,
)
from ..harnesses import offer_while_starting, withdraw_offer
from ..projections import Ledger, RunState, frozen_changes, load_prices, warm_report
from ..stats import Prices
from ._coding import coding_actor
from ._collector import collector_actor
from ._context import Engine, Envelope, Outbox
from ._decide import (
    Archive,
    BuildReport,
    Command,
    Grade,
    GradeSourceOnly,
    Measure,
    Prepare,
    Publish,
    SelectSourceOnly,
    Start,
)
from ._extension_actors import ACTORS
from ._feed import Feed
from ._grader import grader_actor
from ._preparation import load_frozen, prepare
from ._source_only import select_index
from ._step import settle
from ._vanilla import publication
from ._writer import Observer, RunWriter

#: Events the inbox holds before an actor's send waits for the Supervisor.
#: An actor: an async function of the engine and its command channel.
Actor = Callable[..., Coroutine[Any, Any, Any]]

INBOX_CAPACITY = 64

__all__ = ["INBOX_CAPACITY", "Observer", "Supervisor"]


#: How often a cluster run asks which worker nodes take attempts.
NODE_POLL_SECONDS = 5.0


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
        inbox_capacity: int = INBOX_CAPACITY,
        collectors: int | None = None,
    ) -> None:
        self.engine = engine
        self.log = log
        self.ledger = ledger
        self.state = state
        self.writer = RunWriter(log, state, ledger, observer)
        self.inbox_capacity = inbox_capacity
        #: collector actors; None: the evaluation's ``jobs`` (a benchmark compares one)
        self.collectors = collectors
        self.handle_signals = handle_signals
        self.report_builder = report_builder
        self._tg: TaskGroup | None = None
        self.feeds: dict[str, Feed[object]] = {}  # coding, grading, measuring, then each extension's command type
        self._inbox: MemoryObjectSendStream[Envelope] | None = None
        self._extensions: dict[type, Feed[object]] = {}
        self._prep_scope: anyio.CancelScope | None = None
        self._interrupts = 0
        self.cost_ceiling = cost_ceiling
        self._prices: Prices | None = None
        self._prices_reason: str | None = None
        #: coding (and grading, extension) actors running per pool; on a cluster it grows
        #: when nodes join, from a spare receiver kept per pool
        self._pool_size = 0
        self._spares: list[tuple[MemoryObjectReceiveStream[object], Actor]] = []

    @property
    def terminal(self) -> bool:
        s = self.state
        return s.finished or s.stopped is not None or s.failed is not None

    async def run(self, *, resumed: bool, foreground: bool = False) -> RunState:
        # On a cluster backend ``jobs`` is per node: as many coding actors as the nodes' slots.
        nodes = self.engine.cluster_nodes
        jobs = max(1, sum(n.jobs for n in nodes)) if nodes is not None else self.engine.evaluation.jobs
        inbox_send, inbox_recv = anyio.create_memory_object_stream[Envelope](self.inbox_capacity)
        self.feeds = {"coding": Feed(jobs), "grading": Feed(jobs), "measuring": Feed(jobs)}
        for command_type in ACTORS:
            self._extensions[command_type] = self.feeds[command_type.__name__] = Feed(jobs)
        self.engine.outbox = Outbox(inbox_send)
        self._inbox = inbox_send
        self._prep_scope = anyio.CancelScope()
        if self.state.coding:
            changed = frozen_changes(self.engine.run_dir, self.state)
            if changed:  # recorded (once), so status, the report and the next resume all say why
                error = (f"frozen evidence changed since it was frozen: {'; '.join(changed)}; restore the run "
                         "directory from a backup, or start a new run")
                if self.state.failed != error:
                    self.writer.record(RunFailed(error=error))
                return self.state
            load_frozen(self.engine, self.state)
        self._prices, self._prices_reason = load_prices(self.engine.run_dir.root)
        if self.report_builder is None:  # the report's modules load while an agent CLI starts up
            offer_while_starting(warm_report)
        try:
            return await self._run(jobs, inbox_send, inbox_recv, resumed=resumed, foreground=foreground)
        finally:
            withdraw_offer(warm_report)

    async def _run(self, jobs: int, inbox_send: MemoryObjectSendStream[Envelope],
                   inbox_recv: MemoryObjectReceiveStream[Envelope], *, resumed: bool, foreground: bool) -> RunState:
        nodes = self.engine.cluster_nodes
        feeding = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            pools: list[tuple[Feed[object], Actor]] = [
                (self.feeds["coding"], coding_actor), (self.feeds["grading"], grader_actor)]
            pools += [(self._extensions[t], actor) for t, actor in ACTORS.items()]
            for feed, actor in pools:
                self._start_pool(tg, feed.receive_stream, actor, jobs, spare=nodes is not None)
            self._pool_size = jobs
            # collectors run on this machine (coverage runs a test suite): ``jobs`` of them at once,
            # even when a cluster's nodes give more coding slots
            self._start_pool(tg, self.feeds["measuring"].receive_stream, collector_actor,
                             max(1, self.collectors or self.engine.evaluation.jobs))
            tg.start_soon(self._feed_all, feeding)
            watching = anyio.CancelScope()
            if nodes is not None:
                tg.start_soon(self._watch_nodes, watching)
            signal_scope = anyio.CancelScope()
            if self.handle_signals:
                tg.start_soon(self._watch_signals, signal_scope)
            if resumed:
                await self._stop_left_running()
            if self.log.repair is not None:
                self._record(self.log.repair)
            pid = os.getpid()
            self._record(RunStarted(pid=pid, pgid=os.getpgid(pid), resumed=resumed, foreground=foreground,
                                    cost_ceiling=self.cost_ceiling, nodes=self.engine.cluster_nodes,
                                    runtime=self.engine.runtime, accepted=self.engine.accepted or None))
            async with inbox_recv:
                while not self.terminal:
                    envelope = await inbox_recv.receive()
                    if self._refused(envelope):
                        continue
                    self._record(envelope.event)
                    if isinstance(envelope.event, ClusterChanged):
                        self._grow_pools(tg, self.state.coding_capacity)
                    if envelope.done is not None:
                        envelope.done.set()
            assert self._prep_scope is not None  # set by run() before it calls _run()
            self._prep_scope.cancel()
            signal_scope.cancel()
            watching.cancel()
            feeding.cancel()
            for feed in self.feeds.values():
                feed.close()
            for spare, _ in self._spares:
                spare.close()
            inbox_send.close()
        return self.state

    def _refused(self, envelope: Envelope) -> bool:
        """A stopping run launches no agent: an ``agent.launched`` that arrives after
        ``run.stopping`` is not recorded, and its coding actor is told (it resets the
        attempt to pending instead of starting the agent)."""
        if not isinstance(envelope.event, AgentLaunched) or self.state.stopping is None:
            return False
        if envelope.refusal is not None:
            envelope.refusal.append(f"the run is stopping ({self.state.stopping}); the agent was not launched")
        if envelope.done is not None:
            envelope.done.set()
        return True

    def _start_pool(self, tg: TaskGroup, receive: MemoryObjectReceiveStream[object], actor: Actor,
                    n: int, *, spare: bool = False) -> None:
        """``n`` actors sharing one channel; each holds its own clone, so the channel ends
        when the Supervisor closes its sending side and the actors have drained it. With
        ``spare``, one more clone is kept to start actors later (a node joined)."""
        with receive:
            for _ in range(n):
                tg.start_soon(actor, self.engine, receive.clone())
            if spare:
                self._spares.append((receive.clone(), actor))

    def _grow_pools(self, tg: TaskGroup, capacity: int) -> None:
        """A cluster grew: enough coding/grading/extension actors for ``capacity`` at once
        (never fewer than before; idle ones cost nothing, ``schedule`` bounds the starts)."""
        more = capacity - self._pool_size
        if more <= 0:
            return
        for spare, actor in self._spares:
            for _ in range(more):
                tg.start_soon(actor, self.engine, spare.clone())
        self._pool_size = capacity

    async def _watch_nodes(self, scope: anyio.CancelScope) -> None:
        """On a cluster backend, ask which worker nodes take attempts every
        :data:`NODE_POLL_SECONDS`; a change is recorded (``cluster.changed``), so a node
        that joins raises coding capacity in this run, without a resume."""
        find = getattr(self.engine.environment, "cluster_nodes", None)
        if find is None:
            return
        with scope:
            while True:
                await anyio.sleep(NODE_POLL_SECONDS)
                if self.terminal or self.state.stopping is not None:
                    continue
                try:
                    nodes = await anyio.to_thread.run_sync(find)
                except Exception:  # noqa: BLE001 - the cluster did not answer this time; ask again later
                    continue
                if nodes and nodes != self.state.nodes and self.engine.outbox is not None:
                    await self.engine.outbox.send(ClusterChanged(nodes=nodes))

    async def _feed_all(self, scope: anyio.CancelScope) -> None:
        with scope:
            async with anyio.create_task_group() as tg:
                for feed in self.feeds.values():
                    tg.start_soon(feed.run)

    # ------------------------------------------------------------------ the loop body

    def _record(self, first: Event) -> None:
        """Record ``first`` and everything it causes (:func:`settle`, pure but for the
        writer), then hand each command to its actor or do it."""
        commands = settle(self.state, first, self.writer.record, self._prices, self._prices_reason)
        for command in commands:
            self._dispatch(command)

    def _dispatch(self, command: Command | Start) -> None:
        match command:
            case Start():
                self.feeds["coding"].put(command)
            case Prepare():
                assert self._tg is not None
                self._tg.start_soon(self._prepare)
            case Grade() | GradeSourceOnly():
                self.feeds["grading"].put(command)
            case Measure():
                self.feeds["measuring"].put(command)
            case SelectSourceOnly():
                self._record(select_index(self.engine))
            case BuildReport():
                assert self._tg is not None
                self._tg.start_soon(self._build_report)
            case Archive(attempt_id=aid):
                self._archive(aid)
            case Publish(attempt_id=aid):
                assert self._tg is not None
                self._tg.start_soon(self._publish, aid, publication(self.engine, self.state, aid))
            case _ if type(command) in self._extensions:
                self._extensions[type(command)].put(command)

    # ------------------------------------------------------------------ helpers

    async def _stop_left_running(self) -> None:
        """Resume removes the sandboxes a killed worker left stopped (exited or never
        started) and stops, never removes, what it left running, before anything codes again."""
        remove = getattr(self.engine.environment, "remove_left_stopped", None)
        if remove is not None:
            try:
                for thing in await remove(self.engine.run_id):
                    print(visible(f"removed {thing}, left stopped by an attempt that a kill interrupted"), flush=True)
            except Exception as exc:  # noqa: BLE001 - said, not fatal: the next resume tries again
                print(visible(f"could not remove sandboxes left stopped: {exc}"), flush=True)
        stop = getattr(self.engine.environment, "stop_left_running", None)
        if stop is None:
            return
        try:
            left = await stop(self.engine.run_id)
        except Exception as exc:  # noqa: BLE001 - said, not fatal: the next resume tries again
            print(visible(f"could not check for sandboxes left running: {exc}"), flush=True)
            return
        for thing in left:
            print(visible(f"stopped {thing}, left running by an attempt that a kill interrupted"), flush=True)

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
        # A worker killed mid-attempt never reached the pipeline's own scrub.
        from ._pipeline import scrub_attempt

        scrub_attempt(self.engine.harness.secrets(), dest)

    async def _publish(self, attempt_id: str, manifest: object) -> None:
        """Publish a finished vanilla attempt off the loop, then record ``attempt.cached``."""
        from ..cache import EntryManifest, publish_entry
        from ..harnesses import scan_for_secrets

        attempt_dir = self.engine.run_dir.attempt(attempt_id)
        leaks = await anyio.to_thread.run_sync(scan_for_secrets, [attempt_dir], self.engine.harness.secrets())
        if leaks:  # never reached after the pipeline's scrub; the cache must not be the place to find out
            manifest = "a form of the delivered credential is in " + ", ".join(
                str(p.relative_to(attempt_dir)) for p, _ in leaks)
        if isinstance(manifest, EntryManifest):
            try:
                entry, reason = await anyio.to_thread.run_sync(
                    publish_entry, self.engine.cache_root, manifest, self.engine.run_dir.attempt(attempt_id))
            except Exception as exc:  # noqa: BLE001 - best effort: the attempt stays this run's own
                entry, reason = None, f"{type(exc).__name__}: {exc}"
        else:
            entry, reason = None, str(manifest)
        if entry is None:
            print(visible(f"vanilla attempt {attempt_id} is not cached: {reason}"), flush=True)
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
