"""The run's model calls besides coding and guidance generation, as a pure view of the folded
state: every review call (each revision's reviewer) and every llm-check vote (the run's
reviewer CLI), each with the model its dollars are priced at and its usage receipt.

A call whose usage was never saved (a kill mid-call, a discarded vote) is in the list with
usage ``unknown`` and the reason; a call still in flight is not (it is counted when it ends).
The report prices these at their model's row (``costs.beside_coding``); the cost ceiling
prices the same calls from the fold's per-model sums (``RunState.review_tally``,
``CheckVotes.tally``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._check_votes import PaidCall, unlogged_grader_attempts

if TYPE_CHECKING:
    from ._state import RunState

__all__ = ["beside_coding", "legacy_grader_attempts", "review_calls"]


def review_calls(state: RunState) -> list[PaidCall]:
    """Every ended review call of every revision (earlier calls a kill or a provider stop cut
    off included), at the revision's reviewer model."""
    out: list[PaidCall] = []
    for revision, records in state.reviews.items():
        spec = state.review_revisions[revision].reviewer if revision in state.review_revisions else state.reviewer
        model = spec.model if spec is not None else None
        for aid, rec in records.items():
            label = f"review of {aid} ({revision})"
            out.extend(PaidCall(label, model, u) for u in rec.earlier_usage)
            if rec.status != "started" and rec.usage is not None:
                out.append(PaidCall(label, model, rec.usage))
    return out


def legacy_grader_attempts(state: RunState) -> list[str]:
    """Attempts whose llm-check grader tokens are only in their measures (a log written before
    ``check_vote`` events): their dollars cannot be priced and are unknown, never 0. A run
    without a reviewer has no llm check (it needs the reviewer's CLI): none."""
    if state.reviewer is None:
        return []
    return unlogged_grader_attempts(state.attempts.values(), state.check_votes)


def beside_coding(state: RunState) -> dict[str, list[tuple[str | None, dict[str, Any]]]] | None:
    """The report's ``costs.beside_coding`` input: kind (``review_calls``, ``check_votes``) ->
    (model, results.json tokens) of each ended call; None when the run has neither."""
    from ._report_data import tokens_dict

    reviewer_model = state.reviewer.model if state.reviewer is not None else None
    kinds = {"review_calls": review_calls(state),
             "check_votes": [c._replace(model=c.model or reviewer_model) for c in state.check_votes.calls()]}
    out = {k: [(c.model, tokens_dict(c.usage)) for c in calls] for k, calls in kinds.items() if calls}
    return out or None
