"""Bounded channels: a slow consumer makes producers wait, and nothing is lost (also across a crash and resume)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from pluginbench.actors import Supervisor, build_engine, create_run, load_saved
from pluginbench.actors._context import Envelope, Outbox
from pluginbench.actors._feed import Feed
from pluginbench.config import load
from pluginbench.events import EventLog, RunStopping, read_events
from pluginbench.projections import Ledger, RunState, fold
from pluginbench.rundir import RunDir
from tests.runs_helpers import events_of, write_config


@pytest.mark.anyio
async def test_a_full_inbox_makes_actors_wait_and_every_event_arrives_in_order() -> None:
    """Three actors sending 30 events into an inbox of 2 wait while it is full; a slow reader then gets all 30, each actor's in order."""
    send, receive = anyio.create_memory_object_stream[Envelope](2)
    outbox = Outbox(send)

    async def actor(n: int) -> None:
        for i in range(10):
            await outbox.send(RunStopping(reason=f"{n}:{i}"))

    got: list[str] = []
    async with anyio.create_task_group() as tg:
        for n in range(3):
            tg.start_soon(actor, n)
        await anyio.wait_all_tasks_blocked()
        stats = send.statistics()
        assert (stats.current_buffer_used, stats.tasks_waiting_send) == (2, 3)  # the buffer is full; all three wait
        async with receive:
            for _ in range(30):
                envelope = await receive.receive()
                got.append(envelope.event.reason)  # type: ignore[union-attr]
                assert send.statistics().current_buffer_used <= 2
                await anyio.sleep(0)  # a slow consumer: one event per turn
    assert len(got) == 30
    for n in range(3):
        assert [g for g in got if g.startswith(f"{n}:")] == [f"{n}:{i}" for i in range(10)]


@pytest.mark.anyio
async def test_a_feed_never_blocks_the_supervisor_and_hands_over_in_order() -> None:
    """put() returns at once; the channel holds at most its capacity while the pool is busy; every command arrives once, in order."""
    feed: Feed[int] = Feed(2)
    for i in range(10):
        feed.put(i)  # the Supervisor never waits
    got: list[int] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(feed.run)
        await anyio.wait_all_tasks_blocked()
        assert (feed.statistics().current_buffer_used, feed.statistics().tasks_waiting_send) == (2, 1)
        assert feed.waiting == 8 and feed.most_waiting == 10
        async with feed.receive_stream:
            for _ in range(10):
                got.append(await feed.receive_stream.receive())
                assert feed.statistics().current_buffer_used <= 2
        await anyio.wait_all_tasks_blocked()
        assert feed.waiting == 0
        tg.cancel_scope.cancel()
    assert got == list(range(10))


class _Crash(Exception):
    pass


def _slow_grading(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    from pluginbench.actors import _grader

    real = _grader.grade_one

    async def slow(*args: Any, **kwargs: Any) -> None:
        await anyio.sleep(seconds)
        await real(*args, **kwargs)

    monkeypatch.setattr(_grader, "grade_one", slow)


async def _drive(run_dir: Path, *, inbox: int, crash_after_grades: int | None = None) -> tuple[RunState, dict[str, int]]:
    """One worker over ``run_dir`` (resumed when the log says so); ``crash_after_grades``
    ends it like a kill once that many gradings were recorded in this worker."""
    rd = RunDir(run_dir)
    saved = load_saved(rd)
    log = EventLog(rd.events)
    state = fold(log.recovered)
    ledger = Ledger(rd.ledger)
    engine = build_engine(rd, saved.evaluation, None)
    seen = {"grades": 0, "most_ungraded": 0}

    def observe(s: RunState, event: object) -> None:
        ungraded = sum(1 for a in s.live_attempts() if a.state == "running" and a.captured and not a.graded)
        seen["most_ungraded"] = max(seen["most_ungraded"], ungraded)
        if type(event).__name__ == "AttemptGraded":
            seen["grades"] += 1
            if crash_after_grades is not None and seen["grades"] >= crash_after_grades:
                raise _Crash

    supervisor = Supervisor(engine, log, ledger, state, observer=observe, handle_signals=False, inbox_capacity=inbox)
    try:
        final = await supervisor.run(resumed=state.workers > 0)
        seen["most_waiting_grades"] = supervisor.feeds["grading"].most_waiting
        return final, seen
    finally:
        log.close()
        ledger.close()


@pytest.mark.anyio
async def test_slow_grading_holds_back_coding_and_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With graders slower than coders and an inbox of one event, no more than jobs submissions wait for grading, and every attempt is graded and measured exactly once."""
    _slow_grading(monkeypatch, 0.2)
    config = write_config(tmp_path, tasks=["roman-numerals", "word-wrap"], repeats=1, jobs=2,
                          environment={"isolation": "none"})
    rd = create_run(load(config), tmp_path / "run")
    state, seen = await _drive(rd.root, inbox=1)
    assert state.finished
    assert seen["most_ungraded"] <= 2  # the coding slots (jobs) are the back-pressure on coding
    events = events_of(rd.root)
    graded = Counter(e["attempt_id"] for e in events if e["type"] == "attempt.graded")
    measured = Counter(e["attempt_id"] for e in events if e["type"] == "measures.collected")
    live = [a.attempt_id for a in state.live_attempts()]
    assert len(live) == 4 and all(a.state == "complete" for a in state.live_attempts())
    assert graded == measured == Counter(live)  # each exactly once


@pytest.mark.anyio
async def test_a_crash_with_grades_waiting_loses_nothing_on_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that dies after its first grading, with submissions still waiting for graders, leaves the log whole; the next worker grades every waiting submission once and finishes."""
    _slow_grading(monkeypatch, 0.2)
    config = write_config(tmp_path, tasks=["roman-numerals", "word-wrap"], repeats=2, jobs=2,
                          environment={"isolation": "none"})
    rd = create_run(load(config), tmp_path / "run")
    with pytest.raises(BaseException) as crashed:
        await _drive(rd.root, inbox=1, crash_after_grades=1)
    assert crashed.group_contains(_Crash) if isinstance(crashed.value, BaseExceptionGroup) else crashed.type is _Crash
    before = fold(read_events(rd.events))
    captured_ungraded = [a.attempt_id for a in before.live_attempts() if a.captured and not a.graded]
    state, _ = await _drive(rd.root, inbox=1)
    assert state.finished and all(a.state == "complete" for a in state.live_attempts())
    events = events_of(rd.root)
    graded = Counter(e["attempt_id"] for e in events if e["type"] == "attempt.graded")
    assert all(graded[aid] == 1 for aid in captured_ungraded)  # waiting ones graded once, after the resume
    assert all(graded[a.attempt_id] == 1 for a in state.live_attempts())
    assert max(graded.values()) == 1
