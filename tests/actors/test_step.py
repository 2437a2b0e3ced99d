"""The Supervisor's step as a pure function: step(state, event) → (state, commands), and settle, the whole reaction to one event."""

from __future__ import annotations

from pluginbench.actors import Grade, Measure, Prepare
from pluginbench.actors._decide import Start
from pluginbench.actors._step import Step, settle, starts, step
from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    CodingStarted,
    Event,
    RunStarted,
    RunStopping,
    SubmissionCaptured,
    SubmissionMissing,
    stamp,
)
from pluginbench.projections import RunState
from tests.actors.test_decide import USAGE, Run, created


class Recorder:
    """Stamps events with seq numbers like the log, steps them, and keeps what was recorded."""

    def __init__(self, state: RunState) -> None:
        self.state, self.recorded = state, []  # type: tuple[RunState, list[str]]

    def __call__(self, event: Event) -> list[object]:
        stamped = stamp(event, seq=self.state.last_seq + 1, at="t")
        self.recorded.append(stamped.__struct_config__.tag)  # type: ignore[attr-defined]
        return step(self.state, stamped).commands  # type: ignore[return-value]


def test_step_folds_the_event_and_returns_its_commands() -> None:
    """step returns the state with the event folded in and what decide says about it."""
    state = RunState()
    state.apply(stamp(created(), seq=1, at="t"))
    result = step(state, stamp(RunStarted(pid=1, pgid=1, resumed=False), seq=2, at="t"))
    assert isinstance(result, Step) and result.state is state
    assert (state.last_seq, state.workers, result.commands) == (2, 1, [Prepare()])


def test_settle_records_the_starts_then_hands_them_out() -> None:
    """After coding.started, settle records attempt.started for each free job (slot order) and returns their Start commands."""
    run = Run(created(n_tasks=2, jobs=2), RunStarted(pid=1, pgid=1, resumed=False))
    rec = Recorder(run.state)
    commands = settle(run.state, CodingStarted(), rec)
    assert rec.recorded == ["coding.started", "attempt.started", "attempt.started"]
    assert [type(c) for c in commands] == [Start, Start] and [c.slot for c in commands] == [0, 1]  # type: ignore[attr-defined]
    assert run.state.coding_in_flight == 2 and starts(run.state).starts == []


def test_settle_follows_emitted_events_before_starting_the_next_attempt() -> None:
    """A missing submission completes as unknown (graded, measured, completed, all recorded) and only then is the freed job filled."""
    run = Run(created(n_tasks=2, jobs=1), RunStarted(pid=1, pgid=1, resumed=False))
    rec = Recorder(run.state)
    first = settle(run.state, CodingStarted(), rec)
    aid = first[0].attempt_id  # type: ignore[attr-defined]
    settle(run.state, AgentLaunched(attempt_id=aid, argv=["x"]), rec)
    settle(run.state, AgentExited(attempt_id=aid, exit_code=1, timed_out=False, coding_seconds=1.0, usage=USAGE), rec)
    rec.recorded.clear()
    commands = settle(run.state, SubmissionMissing(attempt_id=aid, reason="no diff"), rec)
    assert rec.recorded == ["submission.missing", "attempt.graded", "measures.collected", "attempt.completed",
                            "attempt.started"]
    assert [type(c) for c in commands] == [Start] and commands[0].slot == 1  # type: ignore[attr-defined]


def test_settle_returns_actor_commands_in_order() -> None:
    """A captured submission asks for grading then measuring, and nothing starts while the job is held."""
    run = Run(created(n_tasks=1, jobs=1), RunStarted(pid=1, pgid=1, resumed=False))
    rec = Recorder(run.state)
    aid = settle(run.state, CodingStarted(), rec)[0].attempt_id  # type: ignore[attr-defined]
    settle(run.state, AgentLaunched(attempt_id=aid, argv=["x"]), rec)
    settle(run.state, AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE), rec)
    commands = settle(run.state, SubmissionCaptured(attempt_id=aid, patch_sha256="p", empty=False, files_changed=1), rec)
    assert commands == [Grade(aid, "t0", "p"), Measure(aid, "t0", "p")]


def test_a_stop_while_idle_is_recorded_to_the_end() -> None:
    """run.stopping with nothing in flight settles into run.stopped in the same reaction."""
    run = Run(created(n_tasks=1, jobs=1), RunStarted(pid=1, pgid=1, resumed=False))
    rec = Recorder(run.state)
    assert settle(run.state, RunStopping(reason="stop"), rec) == []
    assert rec.recorded == ["run.stopping", "run.stopped"]
