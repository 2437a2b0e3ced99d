"""The review and measurement-revision branches of :meth:`RunState.apply
<pluginbench.projections._state.RunState.apply>`: reviews of attempts (the run's own and
``pluginbench review`` revisions), and measurement revisions (``pluginbench measure``).

Kept apart so the aggregate's module stays one responsibility per file; the function
changes the state in place exactly as the branches did when they lived in ``_state``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import (
    Event,
    MeasurementReadinessChecked,
    MeasurementRevisionFinished,
    MeasurementRevisionStarted,
    ReferenceMeasured,
    ReviewCompleted,
    ReviewFailed,
    ReviewRevisionFinished,
    ReviewRevisionStarted,
    ReviewStarted,
    RevisionMeasured,
    Usage,
)
from ._records import MeasurementRevision, ReviewRecord, ReviewRevision

if TYPE_CHECKING:
    from ._state import RunState


def apply_revision_event(st: RunState, event: Event) -> None:
    """Apply one review or measurement-revision event to the run state ``st`` (in place)."""
    match event:
        case ReviewStarted():
            rec = st.reviews.setdefault(event.revision, {}).get(event.attempt_id)
            if rec is None:
                rec = ReviewRecord(event.attempt_id, event.revision)
                st.reviews[event.revision][event.attempt_id] = rec
            elif rec.status == "started" and rec.calls:
                # an earlier call a kill interrupted: its usage was never saved
                rec.earlier_usage.append(Usage(status="unknown", reason="the worker stopped during this review call"))
            elif rec.usage is not None:
                rec.earlier_usage.append(rec.usage)
            rec.status, rec.calls = "started", rec.calls + 1
            rec.findings, rec.usage, rec.reason, rec.seconds = [], None, None, None
        case ReviewCompleted():
            rec = st.reviews.setdefault(event.revision, {}).setdefault(
                event.attempt_id, ReviewRecord(event.attempt_id, event.revision))
            rec.status, rec.findings, rec.usage = "complete", list(event.findings), event.usage
            rec.seconds, rec.reason = event.seconds, None
        case ReviewFailed():
            rec = st.reviews.setdefault(event.revision, {}).setdefault(
                event.attempt_id, ReviewRecord(event.attempt_id, event.revision))
            rec.status = "stopped" if event.provider_stop else "failed"
            rec.findings, rec.usage, rec.reason, rec.seconds = [], event.usage, event.reason, event.seconds
        case ReviewRevisionStarted():
            st.review_revisions[event.revision] = ReviewRevision(
                event.revision, event.reviewer, list(event.assigned), event.select)
            st.reviews.setdefault(event.revision, {})
        case ReviewRevisionFinished():
            rev = st.review_revisions[event.revision]
            rev.finished, rev.selected, rev.reason = True, event.selected, event.reason
        case MeasurementReadinessChecked():
            st.measurement_readiness = list(event.readiness)
            st.prepared_not_measured = list(event.not_measured)
            st.observers = dict(event.observers)
        case ReferenceMeasured():
            st.references[event.task] = dict(event.measures)
            if event.seconds is not None:
                st.reference_seconds[event.task] = event.seconds
        case MeasurementRevisionStarted():
            st.observers.update(event.observers)
            st.measurement_revisions[event.revision] = MeasurementRevision(
                event.revision, list(event.measurements), list(event.added), list(event.readiness),
                list(event.not_measured))
        case RevisionMeasured():
            mrev = st.measurement_revisions[event.revision]
            target = mrev.references if event.stage == "reference" else mrev.measures
            target[event.attempt_id] = dict(event.measures)
        case MeasurementRevisionFinished():
            mrev = st.measurement_revisions[event.revision]
            mrev.finished, mrev.selected, mrev.reason = True, event.selected, event.reason
            if event.selected:
                st.measurement_selected = event.revision
                st.revised_evaluation_sha256 = event.evaluation_sha256
