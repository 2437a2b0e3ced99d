"""decide() and schedule() with the vanilla cache: pure decisions, no I/O."""

from __future__ import annotations

from pluginbench.actors import BuildReport, Emit, Grade, Measure, schedule
from pluginbench.actors._decide import Publish
from pluginbench.events import (
    AttemptCached,
    AttemptCompleted,
    AttemptGraded,
    AttemptReused,
    CacheDecision,
    ReportBuilt,
    RunFinished,
    RunStarted,
    RunStopped,
    RunStopping,
    SubmissionMissing,
    VanillaCacheChecked,
)
from tests.actors.test_decide import USAGE, Run, created, started_run


def _checked(task: str = "t0") -> VanillaCacheChecked:
    return VanillaCacheChecked(task=task, key="k", cohort="vanilla/k", inputs={},
                               decisions=[CacheDecision(repeat=1, attempt_id=f"{task}__vanilla__r1", decision="miss")])


def _reused(aid: str = "t0__vanilla__r1", patch: str | None = "p") -> AttemptReused:
    return AttemptReused(
        attempt_id=aid, slot=0, task="t0", arm="vanilla", repeat=1, origin_cohort="vanilla/k", origin_entry="vanilla/k/1",
        origin_run="r0", origin_attempt=aid, exit_code=0, timed_out=False, coding_seconds=2.0, usage=USAGE,
        patch_sha256=patch, empty=False if patch else None, files_changed=1 if patch else None,
        missing_reason=None if patch else "could not export",
    )


def test_a_reused_attempt_is_regraded_and_measured_not_coded() -> None:
    """attempt.reused with a patch asks for grading and measuring; the slot is not pending, so nothing codes it."""
    run = started_run(n_tasks=1)
    out = run.apply(_reused())
    assert out == [Grade("t0__vanilla__r1", "t0", "p"), Measure("t0__vanilla__r1", "t0", "p")]
    assert "t0__vanilla__r1" not in [s.attempt_id for s in schedule(run.state)]


def test_a_reused_attempt_without_a_submission_completes_unknown() -> None:
    """A cached failure without a patch is graded unknown with its reason, as a fresh one would be."""
    run = started_run(n_tasks=1)
    out = run.apply(_reused(patch=None))
    graded = [c.event for c in out if isinstance(c, Emit) and isinstance(c.event, AttemptGraded)]
    assert graded and graded[0].outcome == "unknown" and "could not export" in (graded[0].reason or "")


def test_regrading_a_reused_attempt_does_not_take_a_coding_slot() -> None:
    """With jobs=1, a reused attempt being regraded leaves the one coding slot free."""
    run = started_run(n_tasks=1, jobs=1)
    run.apply(_reused())
    assert [s.attempt_id for s in schedule(run.state)] == ["t0__core__r1"]


def test_a_finished_vanilla_attempt_is_published_once_its_task_was_looked_up() -> None:
    """Completion of a coded vanilla attempt asks to publish it; a treatment attempt or an unlooked-up task does not."""
    run = Run(created(n_tasks=2), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(_checked("t0"))
    from pluginbench.events import CodingStarted

    run.apply(CodingStarted())
    for aid in ("t0__vanilla__r1", "t0__core__r1", "t1__vanilla__r1"):
        run.start(aid)
    published = [c for aid in ("t0__vanilla__r1", "t0__core__r1", "t1__vanilla__r1")
                 for c in _capture(run, aid) if isinstance(c, Publish)]
    assert published == [Publish("t0__vanilla__r1", "t0", 1)]


def _capture(run: Run, aid: str) -> list[object]:
    from pluginbench.events import AgentExited, AgentLaunched, SubmissionCaptured

    run.apply(AgentLaunched(attempt_id=aid, argv=["x"]))
    run.apply(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE))
    from pluginbench.events import MeasuresCollected

    run.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=False, files_changed=1))
    run.apply(AttemptGraded(attempt_id=aid, outcome="fail", reward=0.0))
    run.apply(MeasuresCollected(attempt_id=aid, measures={}))
    return run.apply(AttemptCompleted(attempt_id=aid))


def test_a_missing_submission_is_published_too() -> None:
    """Failures are cached: a vanilla attempt completed after submission.missing is published."""
    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(_checked())
    from pluginbench.events import AgentExited, AgentLaunched, CodingStarted

    run.apply(CodingStarted())
    run.start("t0__vanilla__r1")
    run.apply(AgentLaunched(attempt_id="t0__vanilla__r1", argv=["x"]))
    run.apply(AgentExited(attempt_id="t0__vanilla__r1", exit_code=1, timed_out=False, coding_seconds=1.0, usage=USAGE))
    run.apply(SubmissionMissing(attempt_id="t0__vanilla__r1", reason="export failed"))
    from pluginbench.events import MeasuresCollected

    run.apply(MeasuresCollected(attempt_id="t0__vanilla__r1", measures={}))
    run.apply(AttemptGraded(attempt_id="t0__vanilla__r1", outcome="unknown", reward=None))
    out = run.apply(AttemptCompleted(attempt_id="t0__vanilla__r1"))
    assert Publish("t0__vanilla__r1", "t0", 1) in out


def test_the_run_finishes_only_after_pending_publications_are_recorded() -> None:
    """report.built does not finish the run while a publication is outstanding; attempt.cached then finishes it."""
    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(_checked())
    from pluginbench.events import CodingStarted

    run.apply(CodingStarted())
    for aid in ("t0__vanilla__r1", "t0__core__r1"):
        run.start(aid)
        run.finish(aid)
        run.apply(AttemptCompleted(attempt_id=aid))
    assert run.apply(ReportBuilt(path="report/report.html")) == []
    out = run.apply(AttemptCached(attempt_id="t0__vanilla__r1", entry="vanilla/k/1"))
    assert out == [Emit(RunFinished(report="report/report.html"))]


def test_a_stopping_run_drains_its_publications_before_it_stops() -> None:
    """A stop waits for the outstanding publication, so a run that stops midway still caches what finished."""
    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(_checked())
    from pluginbench.events import CodingStarted

    run.apply(CodingStarted())
    run.start("t0__vanilla__r1")
    run.finish("t0__vanilla__r1")
    run.apply(AttemptCompleted(attempt_id="t0__vanilla__r1"))
    assert run.apply(RunStopping(reason="stop")) == []
    out = run.apply(AttemptCached(attempt_id="t0__vanilla__r1", entry=None, reason="exists"))
    assert out == [Emit(RunStopped(reason="stop"))]


def test_resume_publishes_what_a_kill_left_unpublished() -> None:
    """A new worker re-issues Publish for a finished vanilla attempt whose attempt.cached was never recorded."""
    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(_checked())
    from pluginbench.events import CodingStarted

    run.apply(CodingStarted())
    run.start("t0__vanilla__r1")
    run.finish("t0__vanilla__r1")
    run.apply(AttemptCompleted(attempt_id="t0__vanilla__r1"))
    out = run.apply(RunStarted(pid=2, pgid=2, resumed=True))
    assert Publish("t0__vanilla__r1", "t0", 1) in out
    run.apply(AttemptCached(attempt_id="t0__vanilla__r1", entry="vanilla/k/1"))
    assert not [c for c in run.apply(RunStarted(pid=3, pgid=3, resumed=True)) if isinstance(c, Publish)]


def test_an_all_reused_run_builds_its_report_only_after_coding_started() -> None:
    """Reused attempts that complete during preparation do not build the report before coding.started."""
    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(_reused())
    run.apply(AttemptGraded(attempt_id="t0__vanilla__r1", outcome="pass", reward=1.0))
    from pluginbench.events import MeasuresCollected

    run.apply(MeasuresCollected(attempt_id="t0__vanilla__r1", measures={}))
    out = run.apply(AttemptCompleted(attempt_id="t0__vanilla__r1"))
    assert BuildReport() not in out


def test_a_task_whose_lookup_forbids_publication_is_never_published() -> None:
    """vanilla_cache.checked with publish false (an unpinned Claude version) keeps its vanilla attempts out of the cache."""
    import msgspec

    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False))
    run.apply(msgspec.structs.replace(_checked(), publish=False, reason="unpinned"))
    from pluginbench.events import CodingStarted

    run.apply(CodingStarted())
    run.start("t0__vanilla__r1")
    assert not [c for c in _capture(run, "t0__vanilla__r1") if isinstance(c, Publish)]
