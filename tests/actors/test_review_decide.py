"""The reviewer's decide rules: attempt completion is requirement data the reviewer extends."""

from __future__ import annotations

import msgspec

from pluginbench.actors import Emit, Grade, Measure, schedule
from pluginbench.actors._review_rules import Review
from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    AttemptCompleted,
    AttemptGraded,
    AttemptInterrupted,
    CodingStarted,
    Finding,
    MeasuresCollected,
    ReviewCompleted,
    ReviewerSpec,
    ReviewFailed,
    ReviewStarted,
    RunFailed,
    RunStarted,
    RunStopped,
    RunStopping,
    SubmissionCaptured,
    SubmissionMissing,
    Usage,
)
from tests.actors.test_decide import USAGE, Run, created

SPEC = ReviewerSpec(harness="simulated", model="simulated", reasoning=None, cli_version=None, timeout_seconds=60,
                    criteria_sha256="c" * 64)
AID = "t0__vanilla__r1"


def reviewed_run(jobs: int = 2) -> Run:
    run = Run(msgspec.structs.replace(created(n_tasks=1, jobs=jobs), reviewer=SPEC),
              RunStarted(pid=1, pgid=1, resumed=False), CodingStarted())
    return run


def capture(run: Run, aid: str = AID) -> list[object]:
    run.start(aid)
    run.apply(AgentLaunched(attempt_id=aid, argv=["x"]))
    run.apply(AgentExited(attempt_id=aid, exit_code=0, timed_out=False, coding_seconds=1.0, usage=USAGE))
    return run.apply(SubmissionCaptured(attempt_id=aid, patch_sha256="p" * 64, empty=False, files_changed=1))


def grade_and_measure(run: Run, aid: str = AID) -> list[object]:
    run.apply(AttemptGraded(attempt_id=aid, outcome="pass", reward=1.0))
    return run.apply(MeasuresCollected(attempt_id=aid, measures={}))


def test_review_is_issued_once_after_grading_and_measuring() -> None:
    """A captured submission is graded and measured first; the review follows, exactly once."""
    run = reviewed_run()
    assert capture(run) == [Grade(AID, "t0", "p" * 64), Measure(AID, "t0", "p" * 64)]
    assert run.apply(AttemptGraded(attempt_id=AID, outcome="pass", reward=1.0)) == []
    assert run.apply(MeasuresCollected(attempt_id=AID, measures={})) == [Review(AID, "t0", "p" * 64)]
    assert run.state.attempts[AID].state == "running"
    assert run.state.phase == "coding"  # the other attempt has not coded yet


def test_the_attempt_completes_only_when_the_review_ends() -> None:
    """Valid findings settle the review and complete the attempt."""
    run = reviewed_run()
    capture(run)
    grade_and_measure(run)
    run.apply(ReviewStarted(attempt_id=AID, revision="initial"))
    out = run.apply(ReviewCompleted(attempt_id=AID, revision="initial", usage=USAGE, seconds=1.0,
                                    findings=[Finding(severity="low", category="tests", title="x")]))
    assert out == [Emit(AttemptCompleted(attempt_id=AID))]


def test_a_malformed_review_fails_with_its_reason_and_still_completes() -> None:
    """A failed review is settled (reported as failed with its reason, never as zero findings)."""
    run = reviewed_run()
    capture(run)
    grade_and_measure(run)
    out = run.apply(ReviewFailed(attempt_id=AID, revision="initial", reason="malformed review: prose",
                                 usage=USAGE))
    assert out == [Emit(AttemptCompleted(attempt_id=AID))]
    rec = run.state.review_of(AID)
    assert rec is not None and rec.status == "failed" and rec.findings == [] and rec.reason == "malformed review: prose"


def test_a_provider_stop_in_a_review_stops_the_run_and_resume_reviews_again() -> None:
    """A provider stop is not settled: the run stops failed once drained; a resume issues the review again."""
    run = reviewed_run()
    capture(run)
    grade_and_measure(run)
    run.apply(ReviewStarted(attempt_id=AID, revision="initial"))
    out = run.apply(ReviewFailed(attempt_id=AID, revision="initial", reason="provider stop: 429",
                                 usage=Usage(status="unknown", reason="x"), provider_stop=True))
    assert len(out) == 1 and isinstance(out[0].event, RunStopping) and out[0].event.failure  # type: ignore[attr-defined]
    drained = run.apply(out[0].event)  # type: ignore[attr-defined]
    assert drained == [Emit(RunFailed(error=out[0].event.reason))]  # type: ignore[attr-defined]
    run.apply(drained[0].event)  # type: ignore[union-attr]
    resumed = run.apply(RunStarted(pid=2, pgid=2, resumed=True))
    assert Review(AID, "t0", "p" * 64) in resumed


def test_a_stopping_run_starts_no_review_and_does_not_wait_for_one() -> None:
    """After run.stopping a graded, measured attempt gets no review; the run ends stopped."""
    run = reviewed_run()
    capture(run)
    run.apply(AttemptGraded(attempt_id=AID, outcome="pass", reward=1.0))
    run.apply(RunStopping(reason="stop requested"))
    out = run.apply(MeasuresCollected(attempt_id=AID, measures={}))
    assert out == [Emit(RunStopped(reason="stop requested"))]
    run.apply(out[0].event)  # type: ignore[union-attr]
    resumed = run.apply(RunStarted(pid=2, pgid=2, resumed=True))
    assert Review(AID, "t0", "p" * 64) in resumed  # the review left pending is done by the resume


def test_a_failure_stop_with_a_pending_review_ends_failed_once_drained() -> None:
    """A provider stop in one attempt while another is graded: that one's review is left pending and the run ends run.failed."""
    run = reviewed_run()
    capture(run)
    other = "t0__core__r1"
    run.start(other)
    run.apply(AgentLaunched(attempt_id=other, argv=["x"]))
    out = run.apply(AttemptInterrupted(attempt_id=other, reason="429", provider_stop=True))
    assert len(out) == 1 and isinstance(out[0].event, RunStopping)  # type: ignore[attr-defined]
    assert run.apply(out[0].event) == []  # type: ignore[attr-defined]  (AID is still grading)
    run.apply(AttemptGraded(attempt_id=AID, outcome="pass", reward=1.0))
    out = run.apply(MeasuresCollected(attempt_id=AID, measures={}))
    assert len(out) == 1 and isinstance(out[0].event, RunFailed)  # type: ignore[union-attr]


def test_a_missing_submission_has_nothing_to_review() -> None:
    """No submission, no review: the attempt completes after its unknown grade."""
    run = reviewed_run()
    run.start(AID)
    out = run.apply(SubmissionMissing(attempt_id=AID, reason="no patch"))
    events = [c.event for c in out if isinstance(c, Emit)]
    for e in events:
        follow = run.apply(e)
    assert follow == [Emit(AttemptCompleted(attempt_id=AID))]


def test_reviews_hold_no_coding_slot_and_the_phase_is_reviewing() -> None:
    """An attempt waiting only for its review frees its coding slot; with all coding done the phase is reviewing."""
    run = reviewed_run(jobs=1)
    assert len(schedule(run.state)) == 1
    capture(run)
    assert schedule(run.state) == []
    grade_and_measure(run)
    assert [s.attempt_id for s in schedule(run.state)] == ["t0__core__r1"]
    capture(run, "t0__core__r1")
    grade_and_measure(run, "t0__core__r1")
    assert run.state.phase == "reviewing"


def test_a_run_without_a_reviewer_completes_after_grading_and_measuring() -> None:
    """No reviewer: the built-in requirements alone complete an attempt (unchanged behaviour)."""
    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False), CodingStarted())
    capture(run)
    run.apply(AttemptGraded(attempt_id=AID, outcome="pass", reward=1.0))
    assert run.apply(MeasuresCollected(attempt_id=AID, measures={})) == [Emit(AttemptCompleted(attempt_id=AID))]
