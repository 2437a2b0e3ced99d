"""The sequential stop in the Supervisor's pure decisions: a decided run records the decision
once and stops (running attempts finish, nothing new starts); a resume re-stops a decided run
or records a decision a killed worker reached; a fixed-size run is untouched; the decision is
a fold of the log, so a refold gives the same record."""

from __future__ import annotations

import pytest

from pluginbench.actors import Emit, schedule
from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptGraded,
    CodingStarted,
    Event,
    ExtensionRecorded,
    FrozenPrice,
    MeasuresCollected,
    RunCreated,
    RunStarted,
    RunStopped,
    RunStopping,
    SlotPlan,
    StoppingSpec,
    SubmissionCaptured,
    Usage,
)
from pluginbench.plan import attempt_id
from pluginbench.projections import (
    SEQUENTIAL,
    decision_record,
    fold,
    sequential_of,
    sequential_section,
)
from pluginbench.projections._sequential import task_rows
from tests.actors.test_decide import USAGE, Run

SPEC = StoppingSpec(level=0.9, min_tasks=2, max_tasks=None, smallest_effect=0.05)


def created(n_tasks: int, stopping: StoppingSpec | None = SPEC) -> RunCreated:
    slots = [SlotPlan(slot=2 * t + i, task=f"t{t:02d}", arm=arm, repeat=1, attempt_id=attempt_id(f"t{t:02d}", arm, 1))
             for t in range(n_tasks) for i, arm in enumerate(("vanilla", "core"))]
    return RunCreated(
        name="x", evaluation_sha256="0" * 64, harness="nop", model="nop", reasoning=None, backend="local",
        isolation="none", tasks=[f"t{t:02d}" for t in range(n_tasks)], arms=["vanilla", "core"], repeats=1,
        jobs=2, seed=0, timeout_seconds=60, slots=slots, stopping=stopping,
    )


def drain(run: Run, commands: list[object]) -> list[object]:
    """Record every emitted event in turn (as the Supervisor does, without starting slots);
    all the commands that arose."""
    out: list[object] = []
    queue = list(commands)
    while queue:
        c = queue.pop(0)
        out.append(c)
        if isinstance(c, Emit):
            queue.extend(run.apply(c.event))
    return out


def finish(run: Run, aid: str, outcome: str) -> list[object]:
    return drain(run, run.finish(aid, outcome))


def run_tasks(run: Run, tasks: range) -> list[object]:
    """Code both arms of each task (vanilla fails, core passes); the commands of the last completion."""
    out: list[object] = []
    for t in tasks:
        for arm, outcome in (("vanilla", "fail"), ("core", "pass")):
            aid = attempt_id(f"t{t:02d}", arm, 1)
            run.start(aid)
            out = finish(run, aid, outcome)
    return out


def emitted(commands: list[object], kind: type) -> list[object]:
    return [c.event for c in commands if isinstance(c, Emit) and isinstance(c.event, kind)]


def started(n_tasks: int, stopping: StoppingSpec | None = SPEC) -> Run:
    run = Run(created(n_tasks, stopping), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(CodingStarted())
    return run


def _decision_task() -> int:
    run = started(40)
    for t in range(40):
        run_tasks(run, range(t, t + 1))
        seq = sequential_of(run.state)
        if seq is not None and seq.decided:
            return t + 1
    raise AssertionError("never decided")


K = _decision_task()


def test_the_deciding_completion_records_the_decision_and_stops_the_run() -> None:
    """The attempt that completes the K-th task emits extension.recorded (sequential) then run.stopping with its reason."""
    run = started(40)
    before = run_tasks(run, range(K - 1))
    assert not emitted(before, RunStopping)
    commands = run_tasks(run, range(K - 1, K))
    records = emitted(commands, ExtensionRecorded)
    stops = emitted(commands, RunStopping)
    assert len(records) == 1 and records[0].extension == SEQUENTIAL  # type: ignore[attr-defined]
    data = records[0].data  # type: ignore[attr-defined]
    assert data["decided_after"] == K and data["gates"][0]["decision"] == "success"
    assert len(stops) == 1 and stops[0].reason == data["reason"]  # type: ignore[attr-defined]


def test_after_the_stop_nothing_new_starts_and_the_decision_is_recorded_once() -> None:
    """Settled as the Supervisor runs it, the decided run starts no slot and a later completion records nothing more."""
    run = started(40)
    run_tasks(run, range(K - 1))
    for arm, outcome in (("vanilla", "fail"), ("core", "pass")):
        aid = attempt_id(f"t{K - 1:02d}", arm, 1)
        run.start(aid)
        if arm == "core":
            run.start(attempt_id(f"t{K:02d}", "vanilla", 1))  # in flight when the decision comes
        finish(run, aid, outcome)
    assert run.state.stopping is not None and schedule(run.state) == []
    later = finish(run, attempt_id(f"t{K:02d}", "vanilla", 1), "fail")
    assert not emitted(later, ExtensionRecorded) and emitted(later, RunStopped)


def test_a_resume_of_a_decided_run_stops_again_with_the_same_reason() -> None:
    """run.started after the decision emits run.stopping again, with no second record."""
    run = started(40)
    run_tasks(run, range(K))
    run.apply(RunStopped(reason="x"))
    commands = drain(run, run.apply(RunStarted(pid=2, pgid=2, resumed=True)))
    assert not emitted(commands, ExtensionRecorded)
    stops = emitted(commands, RunStopping)
    assert len(stops) == 1 and stops[0].reason.startswith(f"decided after {K} complete task")  # type: ignore[attr-defined]


def test_a_resume_records_a_decision_the_killed_worker_reached_but_did_not_record() -> None:
    """The deciding completion is in the log, its record is not (a kill -9 between them): run.started records the same decision."""
    run = started(40)
    run_tasks(run, range(K - 1))
    vanilla, core = attempt_id(f"t{K - 1:02d}", "vanilla", 1), attempt_id(f"t{K - 1:02d}", "core", 1)
    run.start(vanilla)
    finish(run, vanilla, "fail")
    run.start(core)
    for e in (AgentLaunched(attempt_id=core, argv=["x"]),
              AgentExited(attempt_id=core, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE),
              SubmissionCaptured(attempt_id=core, patch_sha256="s", empty=False, files_changed=1),
              AttemptGraded(attempt_id=core, outcome="pass", reward=1.0),
              MeasuresCollected(attempt_id=core, measures={}),
              AttemptCompleted(attempt_id=core)):
        run.state.apply(run.stamp(e))  # folded as a log holds it, nothing decided after: the worker died
    assert run.state.extension_record(SEQUENTIAL) is None
    commands = drain(run, run.apply(RunStarted(pid=2, pgid=2, resumed=True)))
    records = emitted(commands, ExtensionRecorded)
    seq = sequential_of(run.state)
    assert seq is not None and len(records) == 1 and records[0].data == decision_record(seq)  # type: ignore[attr-defined]
    assert records[0].data["decided_after"] == K  # type: ignore[attr-defined]
    assert emitted(commands, RunStopping)


def test_a_decision_on_the_last_task_lets_the_run_finish() -> None:
    """When the deciding task is the last planned one, the decision is recorded and no stop is asked."""
    run = started(K)
    commands = run_tasks(run, range(K))
    assert emitted(commands, ExtensionRecorded) and not emitted(commands, RunStopping)


def test_a_fixed_size_run_records_nothing() -> None:
    """Without a stopping rule, the same outcomes cause no record and no stop."""
    run = started(40, stopping=None)
    commands = run_tasks(run, range(K))
    assert not emitted(commands, ExtensionRecorded) and not emitted(commands, RunStopping)
    assert sequential_of(run.state) is None


def test_the_decision_is_a_fold_of_the_log() -> None:
    """Refolding the same stamped events gives the same sequential state and decision record."""
    run = started(40)
    kept: list[Event] = []
    stamp = run.stamp

    def keep(event: object) -> Event:
        kept.append(stamp(event))
        return kept[-1]

    run.stamp = keep  # type: ignore[method-assign]
    run_tasks(run, range(K + 2))
    again = fold(kept, started(40).state)
    assert sequential_of(again) == sequential_of(run.state)
    assert again.extension_record(SEQUENTIAL) == run.state.extension_record(SEQUENTIAL) is not None


PRICE = FrozenPrice(model="nop", input_per_million=3.0, cached_input_per_million=0.3, output_per_million=15.0,
                    as_of="2026-11-01", source="run")
COST_SPEC = StoppingSpec(level=0.9, min_tasks=2, max_tasks=None, smallest_effect=0.05, cost_factor=1.0, price=PRICE,
                         multiplicity="bonferroni")


def finish_with(run: Run, aid: str, outcome: str, usage: Usage) -> list[object]:
    """Complete ``aid`` with ``outcome`` and token ``usage``."""
    run.apply(AgentLaunched(attempt_id=aid, argv=["x"]))
    run.apply(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=usage))
    run.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=False, files_changed=1))
    run.apply(AttemptGraded(attempt_id=aid, outcome=outcome, reward=1.0))
    return drain(run, run.apply(MeasuresCollected(attempt_id=aid, measures={})))


def test_the_cost_gate_prices_attempts_with_the_frozen_row_and_leaves_unknown_dollars_out() -> None:
    """Per task the cost value is the ratio of mean dollars at the frozen price row (core half as dear: 0.5); a task whose usage lacks the cached-input count has unknown dollars and is left out of the cost gate, named in the sentence, never 0."""
    run = started(30, COST_SPEC)
    dear = Usage(status="exact", input_tokens=1000, cached_input_tokens=200, output_tokens=100, total_tokens=1100)
    cheap = Usage(status="exact", input_tokens=500, cached_input_tokens=100, output_tokens=50, total_tokens=550)
    unknown = Usage(status="exact", input_tokens=500, output_tokens=50, total_tokens=550)  # no cached-input count
    for t in range(30):
        for arm, outcome, usage in (("vanilla", "fail", dear), ("core", "pass", unknown if t % 3 == 0 else cheap)):
            aid = attempt_id(f"t{t:02d}", arm, 1)
            run.start(aid)
            finish_with(run, aid, outcome, usage)
    rows = task_rows(run.state)
    assert [r.cost["core"] for r in rows[:4]] == [None, pytest.approx(0.5), pytest.approx(0.5), None]
    seq = sequential_of(run.state)
    assert seq is not None and [g.metric for g in seq.gates] == ["pass_rate", "cost"] and seq.family == 2
    assert seq.gates[1].left_out == 10 and seq.gates[1].decision == "success"
    section = sequential_section(run.state)
    assert section is not None and section["price"]["as_of"] == "2026-11-01"
    assert "10 task(s) left out for unknown dollars, never counted as 0" in section["sentence"]
    assert "together at 90%" in section["sentence"] and "95%" in section["sentence"]
