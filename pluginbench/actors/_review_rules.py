"""The reviewer's decide rules (pure): every submission of a run with a reviewer is
reviewed after it is graded and measured, and the attempt completes only then.

A review that ended with findings or with a failure reason settles the requirement (a
failed review is reported as failed, never as zero findings). A provider stop leaves it
unsettled and stops the run with a failure, as a provider stop in coding does; a resume
issues the review again. A stopping run starts no new review.
"""

from typing import Any, NamedTuple

from ..events import (
    Event,
    ReviewCompleted,
    ReviewFailed,
    ReviewRevisionFinished,
    RunStarted,
    RunStopping,
)
from ..projections import INITIAL_REVIEW, Attempt, RunState
from ._actor_ext import ActorExtension, CoreRules, Emit, Requirement


class Review(NamedTuple):
    """Review ``attempt_id``'s submission in ``revision``."""

    attempt_id: str
    task: str
    patch_sha256: str
    revision: str = INITIAL_REVIEW


def _applies(state: RunState) -> bool:
    return state.reviewer is not None


def _done(state: RunState, a: Attempt) -> bool:
    """Reviewed, or nothing to review (no submission was captured)."""
    return not a.captured or state.reviewed(a.attempt_id)


def _in_flight(state: RunState, a: Attempt) -> bool:
    r = state.review_of(a.attempt_id)
    return r is not None and r.status == "started"


REVIEWED = Requirement(
    name="reviewed", applies=_applies, done=_done, command=lambda a: Review(a.attempt_id, a.task, a.patch_sha256 or ""),
    after=("graded", "measured"), in_flight=_in_flight,
)


def abandoned_reason(state: RunState, revision: str) -> str:
    """Why a revision still running when its process ended failed, with its progress."""
    rev = state.review_revisions[revision]
    recs = state.reviews.get(revision, {})
    reviewed = sum(1 for aid in rev.assigned if aid in recs and recs[aid].settled)
    return f"left unfinished by a process that ended, {reviewed} of {len(rev.assigned)} submissions reviewed"


def decide_review(state: RunState, event: Event, core: CoreRules) -> list[Any]:
    match event:
        case RunStarted():
            # The worker holds run.lock: a revision still unfinished was left by a
            # `pluginbench review` that ended; it failed, and is not selected.
            return [Emit(ReviewRevisionFinished(revision=r.revision, selected=False,
                                                reason=abandoned_reason(state, r.revision)))
                    for r in state.review_revisions.values() if not r.finished]
        case ReviewFailed(provider_stop=True, revision=rev) if rev == INITIAL_REVIEW:
            if state.stopping is None:
                return [Emit(RunStopping(reason=f"provider stop in the review of {event.attempt_id}: {event.reason}",
                                         failure=True))]
            return core.drained(state)
        case ReviewCompleted(revision=rev) | ReviewFailed(revision=rev) if rev == INITIAL_REVIEW:
            return core.progress(state, event.attempt_id, REVIEWED.name)
    return []


REVIEWER = ActorExtension(name="reviewer", requirements=(REVIEWED,), decide=decide_review)
