"""decide() and schedule(): the Supervisor's pure decisions, one behaviour per test."""

from __future__ import annotations

from pluginbench.actors import (
    Archive,
    BuildReport,
    Emit,
    Grade,
    Measure,
    Prepare,
    derive_attempt_id,
    schedule,
)
from pluginbench.actors._decide import GradeSourceOnly, source_only_todo
from pluginbench.actors._step import settle, step
from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptDiscarded,
    AttemptGraded,
    AttemptInterrupted,
    AttemptReset,
    AttemptStarted,
    CodingStarted,
    Event,
    MeasuresCollected,
    ReportBuilt,
    RunCreated,
    RunFailed,
    RunFinished,
    RunStarted,
    RunStopped,
    RunStopping,
    SlotPlan,
    SourceOnlyGraded,
    SourceOnlyStarted,
    SubmissionCaptured,
    Usage,
    stamp,
)
from pluginbench.measures._source_only import FILTER_REVISION
from pluginbench.plan import attempt_id
from pluginbench.projections import RunState

USAGE = Usage(status="exact", input_tokens=10, output_tokens=2, total_tokens=12)


def created(n_tasks: int = 2, repeats: int = 1, jobs: int = 2) -> RunCreated:
    slots = []
    i = 0
    for t in range(n_tasks):
        for arm in ("vanilla", "core"):
            for r in range(1, repeats + 1):
                slots.append(SlotPlan(slot=i, task=f"t{t}", arm=arm, repeat=r, attempt_id=attempt_id(f"t{t}", arm, r)))
                i += 1
    return RunCreated(
        name="x", evaluation_sha256="0" * 64, harness="nop", model="nop", reasoning=None, backend="local",
        isolation="none", tasks=[f"t{t}" for t in range(n_tasks)], arms=["vanilla", "core"], repeats=repeats,
        jobs=jobs, seed=0, timeout_seconds=60, slots=slots,
    )


class Run:
    """Steps events (stamped with seq numbers) through the Supervisor's pure step and
    collects the commands each causes."""

    def __init__(self, *events: object) -> None:
        self.state = RunState()
        self.seq = 0
        for e in events:
            self.apply(e)

    def stamp(self, event: object) -> Event:
        self.seq += 1
        return stamp(event, seq=self.seq, at="2026-01-01T00:00:00.000Z")  # type: ignore[arg-type]

    def apply(self, event: object) -> list[object]:
        """The commands ``event`` causes (``step``: fold, then decide)."""
        state, commands = step(self.state, self.stamp(event))
        assert state is self.state
        return list(commands)

    def settle(self, event: object) -> list[object]:
        """Everything ``event`` causes, as the Supervisor runs it: emitted events recorded,
        then the starts; the commands for actors."""
        return list(settle(self.state, event, lambda e: step(self.state, self.stamp(e)).commands))  # type: ignore[arg-type]

    def start(self, aid: str) -> None:
        a = self.state.attempts[aid]
        self.apply(AttemptStarted(attempt_id=aid, slot=a.slot, task=a.task, arm=a.arm, repeat=a.repeat))

    def finish(self, aid: str, outcome: str = "pass") -> list[object]:
        self.apply(AgentLaunched(attempt_id=aid, argv=["x"]))
        self.apply(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE))
        self.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=False, files_changed=1))
        self.apply(AttemptGraded(attempt_id=aid, outcome=outcome, reward=1.0))
        return self.apply(MeasuresCollected(attempt_id=aid, measures={}))


def started_run(**kw: int) -> Run:
    run = Run(created(**kw), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(CodingStarted())
    return run


def test_a_new_run_prepares_first() -> None:
    """The first worker of a run is told to freeze inputs and check readiness."""
    run = Run(created())
    assert run.apply(RunStarted(pid=1, pgid=1, resumed=False)) == [Prepare()]


def test_nothing_starts_before_coding_started() -> None:
    """schedule() starts no attempt while preparation has not passed."""
    run = Run(created(), RunStarted(pid=1, pgid=1, resumed=False))
    assert schedule(run.state) == []


def test_schedule_fills_jobs_in_slot_order() -> None:
    """With jobs=2, the two lowest pending slots start and no more."""
    run = started_run(jobs=2)
    starts = schedule(run.state)
    assert [s.slot for s in starts] == [0, 1]
    for s in starts:
        run.start(s.attempt_id)
    assert schedule(run.state) == []


def test_a_finished_attempt_frees_its_job() -> None:
    """Completing one attempt lets exactly one more start."""
    run = started_run(jobs=1)
    first = schedule(run.state)[0]
    run.start(first.attempt_id)
    commands = run.finish(first.attempt_id)
    assert commands == [Emit(AttemptCompleted(attempt_id=first.attempt_id))]
    run.apply(AttemptCompleted(attempt_id=first.attempt_id))
    assert [s.slot for s in schedule(run.state)] == [1]


def test_captured_submission_is_graded_and_measured() -> None:
    """A captured patch is sent to the grader and the collector."""
    run = started_run()
    aid = schedule(run.state)[0].attempt_id
    run.start(aid)
    run.apply(AgentLaunched(attempt_id=aid, argv=[]))
    task = run.state.attempts[aid].task
    got = run.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=True, files_changed=0))
    assert got == [Grade(aid, task, "s"), Measure(aid, task, "s")]


def test_graded_but_unmeasured_attempt_is_not_complete() -> None:
    """Completion waits for both the grade and the measures."""
    run = started_run()
    aid = schedule(run.state)[0].attempt_id
    run.start(aid)
    run.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=False, files_changed=1))
    assert run.apply(AttemptGraded(attempt_id=aid, outcome="fail", reward=0.0)) == []


def test_all_complete_grades_source_only_then_builds_the_report_then_finishes() -> None:
    """The last completion opens the source-only round; its last grade asks for the report; report.built finishes."""
    run = started_run(n_tasks=1, jobs=2)
    ids = [s.attempt_id for s in schedule(run.state)]
    for aid in ids:
        run.start(aid)
    run.finish(ids[0])
    assert run.apply(AttemptCompleted(attempt_id=ids[0])) == []
    run.finish(ids[1])
    opened = SourceOnlyStarted(attempt_ids=ids, filter=FILTER_REVISION)
    assert run.apply(AttemptCompleted(attempt_id=ids[1])) == [Emit(opened)]
    task = run.state.attempts[ids[0]].task
    assert run.apply(opened) == [GradeSourceOnly(aid, task, "s", 1.0, None) for aid in ids]
    assert run.apply(SourceOnlyGraded(attempt_id=ids[0], filter=FILTER_REVISION, status="graded", reward=1.0)) == []
    assert run.apply(SourceOnlyGraded(attempt_id=ids[1], filter=FILTER_REVISION, status="pending",
                                      reason="the grader image is gone")) == [BuildReport()]
    assert run.apply(ReportBuilt(path="report/report.html")) == [Emit(RunFinished(report="report/report.html"))]


def test_a_finished_run_retries_pending_source_only_grades_on_the_next_run() -> None:
    """pluginbench run <run-dir> on a finished run re-grades only pending (or older-filter) source-only grades."""
    run = started_run(n_tasks=1, jobs=2)
    ids = [s.attempt_id for s in schedule(run.state)]
    for aid in ids:
        run.start(aid)
        run.finish(aid)
        run.apply(AttemptCompleted(attempt_id=aid))
    run.apply(SourceOnlyStarted(attempt_ids=ids, filter=FILTER_REVISION))
    run.apply(SourceOnlyGraded(attempt_id=ids[0], filter=FILTER_REVISION, status="unavailable", reason="rename"))
    run.apply(SourceOnlyGraded(attempt_id=ids[1], filter=FILTER_REVISION, status="pending", reason="image gone"))
    run.apply(ReportBuilt(path="report/report.html"))
    run.apply(RunFinished(report="report/report.html"))
    assert source_only_todo(run.state) == []  # this worker tried both already
    got = run.apply(RunStarted(pid=2, pgid=2, resumed=True))
    assert got == [Emit(SourceOnlyStarted(attempt_ids=[ids[1]], filter=FILTER_REVISION))]


def test_empty_and_ungraded_attempts_get_no_source_only_grade() -> None:
    """Only graded, non-empty submissions are owed a source-only grade; otherwise the report is built at once."""
    run = started_run(n_tasks=1, jobs=2)
    ids = [s.attempt_id for s in schedule(run.state)]
    for aid in ids:
        run.start(aid)
        run.apply(AgentLaunched(attempt_id=aid, argv=["x"]))
        run.apply(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE))
        run.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=aid == ids[0], files_changed=0))
        run.apply(AttemptGraded(attempt_id=aid, outcome="empty" if aid == ids[0] else "unknown", reward=None))
        run.apply(MeasuresCollected(attempt_id=aid, measures={}))
    run.apply(AttemptCompleted(attempt_id=ids[0]))
    assert run.apply(AttemptCompleted(attempt_id=ids[1])) == [BuildReport()]


def test_stop_starts_nothing_new_and_ends_when_drained() -> None:
    """After run.stopping no slot starts; the last running attempt's completion stops the run."""
    run = started_run(jobs=1)
    aid = schedule(run.state)[0].attempt_id
    run.start(aid)
    assert run.apply(RunStopping(reason="SIGTERM")) == []
    assert schedule(run.state) == []
    run.finish(aid)
    assert run.apply(AttemptCompleted(attempt_id=aid)) == [Emit(RunStopped(reason="SIGTERM"))]


def test_stop_with_nothing_running_stops_at_once() -> None:
    """A stop while idle ends the run immediately."""
    run = started_run()
    assert run.apply(RunStopping(reason="Ctrl-C")) == [Emit(RunStopped(reason="Ctrl-C"))]


def test_provider_stop_stops_the_run_as_a_failure() -> None:
    """An attempt stopped by its provider stops new attempts and ends the run failed, naming it."""
    run = started_run(jobs=2)
    a, b = (s.attempt_id for s in schedule(run.state))
    run.start(a)
    run.start(b)
    got = run.apply(AttemptInterrupted(attempt_id=a, reason="429 rate limit", provider_stop=True))
    assert len(got) == 1 and isinstance(got[0].event, RunStopping)  # type: ignore[attr-defined]
    assert got[0].event.failure and a in got[0].event.reason and "429" in got[0].event.reason  # type: ignore[attr-defined]
    run.apply(got[0].event)  # type: ignore[attr-defined]
    assert schedule(run.state) == []
    run.finish(b)
    final = run.apply(AttemptCompleted(attempt_id=b))
    assert len(final) == 1 and isinstance(final[0].event, RunFailed)  # type: ignore[attr-defined]


def test_resume_discards_launched_attempt_and_derives_a_new_id() -> None:
    """An attempt whose agent launched but whose submission was not saved is discarded and replaced."""
    run = started_run()
    aid = schedule(run.state)[0].attempt_id
    run.start(aid)
    run.apply(AgentLaunched(attempt_id=aid, argv=[]))
    got = run.apply(RunStarted(pid=2, pgid=2, resumed=True))
    discard = got[0].event  # type: ignore[attr-defined]
    assert isinstance(discard, AttemptDiscarded)
    assert discard.replaced_by == f"{aid}~2"
    assert discard.usage.status == "unknown"
    assert run.apply(discard) == [Archive(aid)]
    assert run.state.live[discard.slot] == f"{aid}~2"
    assert run.state.attempts[f"{aid}~2"].state == "pending"


def test_resume_resets_an_attempt_that_never_launched() -> None:
    """An attempt that never launched its agent goes back to pending under its own id."""
    run = started_run()
    aid = schedule(run.state)[0].attempt_id
    run.start(aid)
    got = run.apply(RunStarted(pid=2, pgid=2, resumed=True))
    assert isinstance(got[0].event, AttemptReset)  # type: ignore[attr-defined]
    run.apply(got[0].event)  # type: ignore[attr-defined]
    assert run.state.attempts[aid].state == "pending"


def test_resume_grades_a_captured_but_ungraded_attempt() -> None:
    """A submission saved before the crash is graded, never coded again."""
    run = started_run()
    aid = schedule(run.state)[0].attempt_id
    run.start(aid)
    run.apply(AgentLaunched(attempt_id=aid, argv=[]))
    run.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=False, files_changed=1))
    task = run.state.attempts[aid].task
    assert run.apply(RunStarted(pid=2, pgid=2, resumed=True)) == [Grade(aid, task, "s"), Measure(aid, task, "s")]


def test_resume_replaces_a_provider_stopped_attempt() -> None:
    """After a provider stop, resume discards the interrupted attempt so its slot is coded again."""
    run = started_run()
    aid = schedule(run.state)[0].attempt_id
    run.start(aid)
    run.apply(AgentLaunched(attempt_id=aid, argv=[]))
    run.apply(AgentExited(attempt_id=aid, exit_code=1, timed_out=False, coding_seconds=1.0, usage=USAGE))
    run.apply(AttemptInterrupted(attempt_id=aid, reason="429", provider_stop=True))
    got = run.apply(RunStarted(pid=2, pgid=2, resumed=True))
    assert isinstance(got[0].event, AttemptDiscarded)  # type: ignore[attr-defined]
    assert got[0].event.usage == USAGE  # type: ignore[attr-defined]


def test_resume_of_a_complete_run_rebuilds_the_report() -> None:
    """A run killed while reporting finishes its report on resume without coding."""
    run = started_run(n_tasks=1, jobs=2)
    for s in schedule(run.state):
        run.start(s.attempt_id)
        run.finish(s.attempt_id)
        run.apply(AttemptCompleted(attempt_id=s.attempt_id))
        run.apply(SourceOnlyGraded(attempt_id=s.attempt_id, filter=FILTER_REVISION, status="graded", reward=1.0))
    assert run.apply(RunStarted(pid=2, pgid=2, resumed=True)) == [BuildReport()]
    assert schedule(run.state) == []


def test_complete_attempts_are_never_scheduled_again() -> None:
    """Resume schedules only pending slots: complete ones are kept."""
    run = started_run(n_tasks=1, jobs=4)
    first = schedule(run.state)[0].attempt_id
    run.start(first)
    run.finish(first)
    run.apply(AttemptCompleted(attempt_id=first))
    run.apply(RunStarted(pid=2, pgid=2, resumed=True))
    assert first not in [s.attempt_id for s in schedule(run.state)]


def test_derived_ids_count_up() -> None:
    """Each replacement in the same slot gets the next free ~n."""
    run = started_run()
    assert derive_attempt_id("a__b__r1", run.state) == "a__b__r1~2"
    assert derive_attempt_id("a__b__r1~2", run.state) == "a__b__r1~3"


def test_three_failed_calls_in_a_row_stop_new_attempts() -> None:
    """Three attempts in a row ending with a failed call and no submission stop the run, naming them."""
    from pluginbench.events import SubmissionMissing

    run = started_run(n_tasks=3, jobs=4)
    ids = [s.attempt_id for s in schedule(run.state)]
    for aid in ids:
        run.start(aid)
    got: list[object] = []
    for aid in ids[:3]:
        run.apply(AgentLaunched(attempt_id=aid, argv=[]))
        run.apply(AgentExited(attempt_id=aid, exit_code=1, timed_out=False, coding_seconds=1.0, usage=USAGE,
                              error="call failed"))
        got = run.apply(SubmissionMissing(attempt_id=aid, reason="export failed"))
    stops = [c.event for c in got if isinstance(c, Emit) and isinstance(c.event, RunStopping)]  # type: ignore[attr-defined]
    assert len(stops) == 1 and stops[0].failure
    assert all(aid in stops[0].reason for aid in ids[:3])


def test_a_submission_resets_the_failed_call_count() -> None:
    """A captured submission between failures resets the count, so two plus two never stop the run."""
    from pluginbench.events import SubmissionMissing

    run = started_run(n_tasks=3, jobs=6)
    ids = [s.attempt_id for s in schedule(run.state)]
    for aid in ids:
        run.start(aid)
    for i, aid in enumerate(ids[:5]):
        run.apply(AgentLaunched(attempt_id=aid, argv=[]))
        run.apply(AgentExited(attempt_id=aid, exit_code=1, timed_out=False, coding_seconds=1.0, usage=USAGE, error="boom"))
        if i == 2:
            got = run.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=False, files_changed=1))
        else:
            got = run.apply(SubmissionMissing(attempt_id=aid, reason="x"))
        assert not any(isinstance(c, Emit) and isinstance(c.event, RunStopping) for c in got)  # type: ignore[attr-defined]


def test_a_missing_submission_completes_as_unknown() -> None:
    """An agent that ran but left no submission is graded unknown with the reason, never a fail."""
    from pluginbench.events import SubmissionMissing

    run = started_run()
    aid = schedule(run.state)[0].attempt_id
    run.start(aid)
    run.apply(AgentLaunched(attempt_id=aid, argv=[]))
    run.apply(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE))
    got = run.apply(SubmissionMissing(attempt_id=aid, reason="export failed"))
    graded = [c.event for c in got if isinstance(c, Emit) and isinstance(c.event, AttemptGraded)]  # type: ignore[attr-defined]
    assert graded and graded[0].outcome == "unknown" and "export failed" in graded[0].reason
