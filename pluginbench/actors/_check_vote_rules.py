"""The llm checks' cut-off votes: a rules-only actor extension (no I/O, no actor loop).

A vote is durably ``check_vote.started`` before the reviewer CLI grades (the collector's
``llm_voter``). When a worker starts (``run.started``) every vote still open was cut off by
the worker before it (killed mid-call): it may have been paid for, so it is recorded as
``check_vote.discarded`` with usage unknown, and the attempt, not yet measured, is measured
(and its llm checks graded) again by the core's recovery: visibly, never a silent second bill.
"""

from __future__ import annotations

from typing import Any

from ..events import CheckVoteDiscarded, Event, RunStarted, Usage
from ..projections import RunState
from ._actor_ext import ActorExtension, CoreRules, Emit

#: why a cut-off vote is discarded, and its usage
CUT_OFF = "the worker stopped during this grader call (killed or lost); the attempt's checks are graded again"
CUT_OFF_USAGE = Usage(status="unknown", reason="the worker stopped during this grader call before its usage was saved")


def decide_check_votes(state: RunState, event: Event, core: CoreRules) -> list[Any]:
    """On ``run.started``: one ``check_vote.discarded`` per vote an earlier worker left open."""
    if not isinstance(event, RunStarted):
        return []
    return [Emit(CheckVoteDiscarded(attempt_id=aid, check=check, vote=vote, reason=CUT_OFF, usage=CUT_OFF_USAGE))
            for (aid, check, vote) in state.check_votes.open]


CHECK_VOTES = ActorExtension(name="check_votes", decide=decide_check_votes)
