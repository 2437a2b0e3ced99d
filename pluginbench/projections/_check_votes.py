"""The llm checks' grader calls as a pure fold: each vote from its ``check_vote.started`` to
``check_vote.cast`` or ``check_vote.discarded``.

A vote started and never ended is *open*: in flight while its worker lives, and cut off when
the worker was killed (the next worker records ``check_vote.discarded`` for it, with usage
unknown). A second start of the same (attempt, check, vote) while one is open supersedes it
and keeps it as discarded too, so a paid call is never dropped from the count. The cost
ceiling and status read :meth:`CheckVotes.calls` (every ended call with its model and usage)
and :meth:`CheckVotes.summary`. Logs written before these events carry the grader's tokens
only as the ``checks_grader_tokens`` measure (a total without the input/output split):
:func:`unlogged_grader_attempts` names those attempts so a reader says what it lacks.
"""

from collections.abc import Iterable
from typing import Any, NamedTuple

import msgspec
from msgspec import field

from ..events import (
    CheckVoteCast,
    CheckVoteDiscarded,
    CheckVoteStarted,
    ReviewCompleted,
    ReviewFailed,
    ReviewStarted,
    Usage,
)
from ..measures import CHECK_GRADER_TOKENS

__all__ = ["CheckVotes", "PaidCall", "Tally", "observe_review", "unlogged_grader_attempts"]

#: The usage of a vote started by a worker that was killed before it ended.
SUPERSEDED_USAGE = Usage(status="unknown", reason="the grader call was started again before it ended (its worker was killed)")


class PaidCall(NamedTuple):
    """One model call besides coding: who made it (``label``), the model its dollars are priced
    at (None: the run's reviewer model) and its usage receipt."""

    label: str
    model: str | None
    usage: Usage


class CheckVotes(msgspec.Struct):
    """Every llm-check vote of a run. Mutated only by :meth:`apply`."""

    #: (attempt, check, vote) -> the start of the vote now in flight (or cut off)
    open: dict[tuple[str, str, int], CheckVoteStarted] = field(default_factory=dict)
    #: votes that ended: cast or discarded, in log order
    ended: list[PaidCall] = field(default_factory=list)
    cast: int = 0
    discarded: int = 0
    passed: int = 0
    failed: int = 0
    #: attempts with at least one vote event
    attempts: set[str] = field(default_factory=set)
    #: token sums over the ended votes
    tally: "Tally" = field(default_factory=lambda: Tally())

    def apply(self, event: CheckVoteStarted | CheckVoteCast | CheckVoteDiscarded) -> None:
        key = (event.attempt_id, event.check, event.vote)
        label = f"{event.attempt_id} check {event.check!r} vote {event.vote}"
        self.attempts.add(event.attempt_id)
        if isinstance(event, CheckVoteStarted):
            previous = self.open.pop(key, None)
            if previous is not None:
                self.ended.append(PaidCall(label, previous.model, SUPERSEDED_USAGE))
                self.tally.add(SUPERSEDED_USAGE, previous.model, label)
                self.discarded += 1
            self.open[key] = event
            return
        started = self.open.pop(key, None)
        model = started.model if started is not None else None
        self.ended.append(PaidCall(label, model, event.usage))
        self.tally.add(event.usage, model, label)
        if isinstance(event, CheckVoteDiscarded):
            self.discarded += 1
            return
        self.cast += 1
        self.passed += event.verdict == "pass"
        self.failed += event.verdict == "fail"

    def calls(self) -> list[PaidCall]:
        """Every vote that ended (cast or discarded), with its model and usage."""
        return list(self.ended)

    def summary(self) -> dict[str, Any]:
        """Counts for status: started, in flight (or cut off), cast (pass, fail, no verdict), discarded."""
        return {"started": len(self.ended) + len(self.open), "open": len(self.open), "cast": self.cast,
                "passed": self.passed, "failed": self.failed, "no_verdict": self.cast - self.passed - self.failed,
                "discarded": self.discarded, "tokens": self.tally.view()}


def unlogged_grader_attempts(attempts: Iterable[Any], votes: CheckVotes) -> list[str]:
    """Attempts (with ``attempt_id`` and ``measures``) whose measures say llm-check grader calls
    were made (a token total, or an unknown one) but whose log has no ``check_vote`` event for
    them: a log from before those events."""
    out = []
    for a in attempts:
        m = a.measures.get(CHECK_GRADER_TOKENS) if a.measures else None
        if m is None or a.attempt_id in votes.attempts:
            continue
        if m.status != "measured" or (m.value or 0) > 0:
            out.append(a.attempt_id)
    return sorted(out)


_COUNTERS = ("input_tokens", "cached_input_tokens", "output_tokens", "total_tokens")


class Tally(msgspec.Struct):
    """Token sums over ended calls of one kind, O(1) per call: a counter is ``None`` (unknown)
    once any counted call did not measure it, never a partial sum shown as the total. For the
    cost ceiling it also keeps, per model (None: the run's reviewer model), the sums of the
    calls whose dollars can be priced (dollars are linear in the counts, so pricing the sums is
    pricing each call), and each call whose dollars cannot be, with the reason."""

    calls: int = 0
    unknown_calls: int = 0
    sums: dict[str, int | None] = field(default_factory=lambda: dict.fromkeys(_COUNTERS, 0))
    lower_bound: bool = False
    #: model -> [uncached + cached input, cached input, output, any call only a lower bound]
    priced: dict[str | None, list[int]] = field(default_factory=dict)
    #: (label, why its dollars are unknown) of each call that cannot be priced
    unpriced: list[tuple[str, str]] = field(default_factory=list)

    def add(self, usage: Usage, model: str | None = None, label: str = "a call") -> None:
        self.calls += 1
        if usage.status == "unknown":
            self.unknown_calls += 1
        self.lower_bound = self.lower_bound or usage.status != "exact"
        for k in _COUNTERS:
            v = getattr(usage, k) if usage.status != "unknown" else None
            if k == "total_tokens" and v is None and usage.status != "unknown" and usage.input_tokens is not None \
                    and usage.output_tokens is not None:
                v = usage.input_tokens + usage.output_tokens
            cur = self.sums[k]
            self.sums[k] = None if cur is None or v is None else cur + v
        self._price(usage, model, label)

    def _price(self, usage: Usage, model: str | None, label: str) -> None:
        """What ``stats.attempt_cost`` needs of one call: known status, input, cached input and output."""
        if usage.status == "exact" and not usage.total_tokens and not usage.input_tokens and not usage.output_tokens:
            return  # no token was used (the simulated reviewer): nothing to price
        inp, cached, out = usage.input_tokens, usage.cached_input_tokens, usage.output_tokens
        if usage.status == "unknown":
            self.unpriced.append((label, f"token usage unknown: {usage.reason or 'no reason recorded'}"))
        elif inp is None or out is None:
            self.unpriced.append((label, "input or output token count not reported"))
        elif cached is None:
            self.unpriced.append((label, "cached input token count not reported"))
        else:
            row = self.priced.setdefault(model, [0, 0, 0, 0])
            row[0] += inp
            row[1] += cached
            row[2] += out
            row[3] = row[3] or int(usage.status == "lower_bound")

    def view(self) -> dict[str, Any]:
        return {"calls": self.calls, "unknown_calls": self.unknown_calls, **self.sums, "lower_bound": self.lower_bound}


#: The usage of a review call a kill cut off (as the fold's review record keeps it).
CUT_REVIEW_USAGE = Usage(status="unknown", reason="the worker stopped during this review call")


def observe_review(tally: Tally, records: dict[str, dict[str, Any]], model: str | None,
                   event: ReviewStarted | ReviewCompleted | ReviewFailed) -> None:
    """Count a review call into ``tally`` as the fold's review records will hold it (called
    before the event is applied to ``records``, revision -> attempt -> record), priced at
    ``model`` (the revision's reviewer): an ended call's usage, or an unknown one for a call a
    new start finds still running (a kill cut it off)."""
    label = f"review of {event.attempt_id} ({event.revision})"
    if isinstance(event, ReviewStarted):
        rec = records.get(event.revision, {}).get(event.attempt_id)
        if rec is not None and rec.status == "started" and rec.calls:
            tally.add(CUT_REVIEW_USAGE, model, label)
        return
    tally.add(event.usage, model, label)
