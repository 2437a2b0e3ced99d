"""The fold finds each event's state change by a lookup of its class: every event type of the
log has a handler of its own, and an event of a subclass folds as the class-pattern ``match``
folded it (as its event type, review calls counted once)."""

from __future__ import annotations

from pluginbench.events import (
    EVENT_TYPES,
    AttemptStarted,
    ReviewStarted,
    RunCreated,
    SlotPlan,
)
from pluginbench.projections._state import fold
from pluginbench.projections._state_fold import DISPATCH, _ignore


class _LateStarted(AttemptStarted, frozen=True, tag="test.late_started"):
    """An event class the dispatch table was not built with (resolved on first sight)."""


class _LateReview(ReviewStarted, frozen=True, tag="test.late_review"):
    """A review call of a class the dispatch table was not built with."""


def _created() -> RunCreated:
    slot = SlotPlan(slot=0, task="t", arm="vanilla", repeat=1, attempt_id="t__vanilla__r1")
    return RunCreated(seq=1, name="n", evaluation_sha256="0" * 64, harness="nop", model="nop",
                      reasoning=None, backend="local", isolation="none", tasks=["t"], arms=["vanilla"],
                      repeats=1, jobs=1, seed=0, timeout_seconds=60, slots=[slot])


def test_every_event_type_of_the_log_has_its_own_handler() -> None:
    """No event type of the log falls through to the do-nothing handler."""
    assert [t.__name__ for t in EVENT_TYPES if DISPATCH[t] is _ignore] == []


def test_an_event_of_a_subclass_folds_as_its_event_type() -> None:
    """A subclass of attempt.started starts the attempt, and one of review.started opens the
    review and, started again, counts the cut-off call once, as their event types do."""
    st = fold([
        _created(),
        _LateStarted(seq=2, attempt_id="t__vanilla__r1", slot=0, task="t", arm="vanilla", repeat=1),
        _LateReview(seq=3, attempt_id="t__vanilla__r1", revision="initial"),
        _LateReview(seq=4, attempt_id="t__vanilla__r1", revision="initial"),
    ])
    assert st.attempts["t__vanilla__r1"].state == "running"
    assert st.attempts["t__vanilla__r1"].started_seq == 2
    assert st.review_of("t__vanilla__r1") is not None
    assert (st.review_tally.calls, st.review_tally.unknown_calls) == (1, 1)
    assert (st.last_seq, st.last_type) == (4, "test.late_review")
