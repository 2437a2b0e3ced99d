"""Constant work per event: the fold's live index answers the Supervisor's questions as a scan
of every attempt would, the ledger agrees with the fold after every event, and driving a
10,000-attempt run does not scan all attempts per event."""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from pluginbench.actors._decide import Start
from pluginbench.actors._step import settle, step
from pluginbench.actors._writer import RunWriter
from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    AttemptGraded,
    CodingStarted,
    Event,
    EventLog,
    LogMark,
    MeasuresCollected,
    ReviewCompleted,
    ReviewerSpec,
    ReviewFailed,
    ReviewStarted,
    RunStarted,
    SourceOnlyGraded,
    SubmissionCaptured,
    read_events,
    stamp,
)
from pluginbench.measures import FILTER_REVISION
from pluginbench.projections import Ledger, RunState, read_ledger, read_ledger_summary
from pluginbench.projections._ledger import status_body
from pluginbench.projections._status import group_of, group_rows
from pluginbench.projections._view import attempt_rows, run_row
from tests.actors.test_decide import USAGE, created
from tests.projections.test_state_ledger import random_run

ROOT = Path(__file__).resolve().parents[2]
SPEC = ReviewerSpec(harness="simulated", model="simulated", reasoning=None, cli_version=None, timeout_seconds=60,
                    criteria_sha256="c" * 64)


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_supervisor", ROOT / "bench" / "bench_supervisor.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scanned(state: RunState) -> dict[str, object]:
    """The index's answers computed the slow way, by scanning every live attempt."""
    live = list(state.live_attempts())
    running = [a for a in live if a.state == "running"]
    reviewing = False
    if any(not r.finished for r in state.review_revisions.values()):
        reviewing = True
    elif state.reviewer is not None and state.coding and state.live:
        blocked = any(a.state == "pending" or (a.state == "running" and not (a.graded and a.measured)) for a in live)
        reviewing = not blocked and any(not state.reviewed(a.attempt_id) for a in running)
    so = [a.source_only for a in live if a.source_only is not None]
    return {
        "counts": {s: sum(1 for a in live if a.state == s) for s in ("pending", "running", "complete", "interrupted")},
        "coding": sum(1 for a in running if not a.reused and not (a.graded and a.measured)),
        "all_complete": bool(live) and all(a.state == "complete" for a in live),
        "reviewing": reviewing,
        "pending": [a.slot for a in live if a.state == "pending"],
        "running": sorted(a.slot for a in running),
        "vanilla": sum(1 for a in live if a.arm == "vanilla"),
        "captured": sum(1 for a in live if a.captured),
        "reviewed": sum(1 for a in live if a.captured and state.reviewed(a.attempt_id)),
        "source_only": {s: sum(1 for g in so if g.status == s) for s in ("graded", "pending", "unavailable")},
        "round_done": bool(state.source_only_round)
        and all(aid in state.source_only_tried for aid in state.source_only_round),
    }


def indexed(state: RunState) -> dict[str, object]:
    """The same answers from the index."""
    ix = state.index
    return {
        "counts": {s: state.count(s) for s in ("pending", "running", "complete", "interrupted")},
        "coding": state.coding_in_flight,
        "all_complete": state.all_complete,
        "reviewing": state.reviewing,
        "pending": [a.slot for a in state.first_pending(len(state.attempts) + 1)],
        "running": sorted(a.slot for a in state.running_attempts()),
        "vanilla": ix.vanilla,
        "captured": ix.captured,
        "reviewed": ix.captured_reviewed,
        "source_only": {s: ix.source_only[s] for s in ("graded", "pending", "unavailable")},
        "round_done": state.source_only_round_done,
    }


class CheckingLedger(Ledger):
    """A ledger that, after every update, checks its view and the index against the fold."""

    def update(self, state: RunState, event: Event, mark: LogMark | None = None) -> None:
        super().update(state, event, mark)
        view = read_ledger(self.path)
        assert view is not None
        assert (view.run, view.attempts) == (run_row(state), attempt_rows(state)), event
        assert indexed(state) == scanned(state), event
        read = read_ledger_summary(self.path)
        assert read is not None
        summary, bodies = read  # the groups kept as the writer goes are those of the rows; the bodies, theirs
        assert sorted(summary.groups, key=repr) == sorted(group_rows([group_of(r) for r in attempt_rows(state)]), key=repr), event
        assert bodies == [status_body(r) for r in attempt_rows(state)], event


@pytest.mark.parametrize("seed", range(12))
def test_index_and_ledger_agree_with_a_scan_after_every_event(tmp_path: Path, seed: int) -> None:
    """Through random runs with crashes (resets, discards) and stops, the index answers as a
    scan of all attempts does and the ledger's rows equal the fold's, after every event."""
    ledger = CheckingLedger(tmp_path / "ledger.sqlite")
    random_run(seed * 7919, tmp_path / "events.jsonl", ledger)
    ledger.close()


def test_index_follows_reviews_and_source_only_grades(tmp_path: Path) -> None:
    """With a reviewer and a source-only round (pending grades with reasons, a failed review,
    a review started again), the index and the ledger still agree with the fold."""
    rng = random.Random(5)
    state = RunState()
    log = EventLog(tmp_path / "events.jsonl", clock=lambda: "2026-01-01T00:00:00.000Z")
    ledger = CheckingLedger(tmp_path / "ledger.sqlite")
    writer = RunWriter(log, state, ledger)
    inbox: list[Event] = [msgspec.structs.replace(created(n_tasks=3, jobs=2), reviewer=SPEC),
                          RunStarted(pid=1, pgid=1, resumed=False), CodingStarted()]
    while inbox and not state.finished:
        for command in settle(state, inbox.pop(0), writer.record):
            name = type(command).__name__
            aid = getattr(command, "attempt_id", "")
            if isinstance(command, Start):
                inbox += [AgentLaunched(attempt_id=aid, argv=["x"]),
                          AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE),
                          SubmissionCaptured(attempt_id=aid, patch_sha256="p" * 64, empty=False, files_changed=1)]
            elif name == "Grade":
                inbox.append(AttemptGraded(attempt_id=aid, outcome="pass", reward=1.0))
            elif name == "Measure":
                inbox.append(MeasuresCollected(attempt_id=aid, measures={}))
            elif name == "Review":
                inbox.append(ReviewStarted(attempt_id=aid, revision="initial"))
                if rng.random() < 0.3:
                    inbox.append(ReviewStarted(attempt_id=aid, revision="initial"))
                inbox.append(ReviewFailed(attempt_id=aid, revision="initial", reason="no answer", usage=USAGE)
                             if rng.random() < 0.3 else
                             ReviewCompleted(attempt_id=aid, revision="initial", findings=[], usage=USAGE, seconds=1.0))
            elif name == "GradeSourceOnly":
                status = rng.choice(["graded", "pending", "unavailable"])
                inbox.append(SourceOnlyGraded(attempt_id=aid, filter=FILTER_REVISION, status=status,
                                              reward=1.0 if status == "graded" else None,
                                              reason=None if status == "graded" else "image gone"))
            elif name in ("SelectSourceOnly", "BuildReport"):
                inbox.clear()  # the end of what this test follows
    ledger.close()
    log.close()
    assert state.index.captured == 6 and state.index.source_only.total() == 6
    assert len(read_events(tmp_path / "events.jsonl")) == state.last_seq


def test_driving_a_10000_attempt_run_does_not_scan_all_attempts_per_event(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The last 100 attempts of a 10,000-attempt run, driven to the end of the run through the
    Supervisor's path (writer, settle, ledger), look at a few times 10,000 attempts in all (the
    run's end scans once), not 10,000 per event as scanning schedule and decide did."""
    bench = _bench()
    plan = bench.created(10_000, jobs=4)
    state = RunState()
    for seq, event in enumerate(bench.fast_forward(plan, 9_900), start=1):
        state.apply(stamp(event, seq=seq, at="2026-01-01T00:00:00.000Z"))
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.rebuild(state)
    looked = [0]
    original = RunState.live_attempts

    def counting(self: RunState) -> Iterator[object]:
        for a in original(self):
            looked[0] += 1
            yield a

    monkeypatch.setattr(RunState, "live_attempts", counting)
    events = [0]

    def record(event: Event) -> list[object]:
        """The writer's steps but the fsync'd append (stamp, step, ledger update)."""
        events[0] += 1
        stamped = stamp(event, seq=state.last_seq + 1, at="2026-01-01T00:00:00.000Z")
        commands: list[object] = list(step(state, stamped).commands)
        ledger.update(state, stamped)
        return commands

    bench.drive(state, record, RunStarted(pid=2, pgid=2, resumed=True))
    ledger.close()
    assert state.finished and events[0] > 800
    assert looked[0] <= 6 * 10_000, f"{looked[0]} attempts looked at for {events[0]} events"
