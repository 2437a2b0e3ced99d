"""The run aggregate: the one fold every projection and decision starts from.

:class:`RunState` changes only through :meth:`RunState.apply`, one event at a time, and
holds nothing that is not derived from events. ``apply`` updates the aggregate in place
(O(1) per event, so 100,000 events fold in well under a second) and is deterministic:
the same events give an equal state. Readers treat the state as read-only.

Attempt states: ``pending`` (planned, not started), ``running`` (sandbox made, agent
may be working), ``complete`` (graded and measured; never coded again), ``interrupted``
(ended without a usable session). Outcomes of complete attempts: ``pass``,
``overlap_pass`` (reward 1 and every listed test passed, but the patch changes paths the
hidden tests replace, so source-bound correctness is withheld), ``fail``, ``empty`` (the
graded patch is empty), ``unknown`` (with ``outcome_reason``).
"""

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec
from msgspec import field

from ..events import (
    ATTEMPT_STATES,
    VANILLA,
    ClusterNode,
    Event,
    Measure,
    NotMeasured,
    Phase,
    ReadinessChecked,
    ReadinessRow,
    ReviewerSpec,
    RunCreated,
    SourceOnlySelected,
    TaskPrepared,
    TreatmentFrozen,
    VanillaCacheChecked,
)
from ._check_votes import CheckVotes, Tally
from ._generation import Generations
from ._live_index import LiveIndex, SlotFacts
from ._records import Attempt as Attempt  # the record moved beside the others; its name stays here
from ._records import Discarded, MeasurementRevision, ReviewRecord, ReviewRevision
from ._state_fold import DISPATCH, resolve

STATES = ATTEMPT_STATES
#: The review revision a run's own review phase writes; ``pluginbench review`` adds others.
INITIAL_REVIEW = "initial"


class RunState(msgspec.Struct):
    """Everything known about a run, folded from its events."""

    created: RunCreated | None = None
    attempts: dict[str, Attempt] = field(default_factory=dict)
    live: dict[int, str] = field(default_factory=dict)  # slot -> live attempt id
    discarded: list[Discarded] = field(default_factory=list)
    prepared_tasks: dict[str, TaskPrepared] = field(default_factory=dict)
    frozen_treatments: dict[str, TreatmentFrozen] = field(default_factory=dict)
    readiness: dict[tuple[str, str], ReadinessChecked] = field(default_factory=dict)
    #: generated-guidance arms: each (arm, task)'s generating session and how it ended
    generations: Generations = field(default_factory=Generations)
    #: the llm checks' grader calls (``check_vote.*``)
    check_votes: CheckVotes = field(default_factory=CheckVotes)
    #: token sums over every ended review call (all revisions; cut-off calls unknown)
    review_tally: Tally = field(default_factory=Tally)
    #: task -> the vanilla cache lookup preparation recorded (key, inputs, decisions)
    vanilla_cache: dict[str, VanillaCacheChecked] = field(default_factory=dict)
    preparing: bool = False
    coding: bool = False
    stopping: str | None = None
    stopping_failure: bool = False
    #: the cluster nodes the current worker found (run.started), None on one machine
    nodes: list[ClusterNode] | None = None
    #: Dollars: from ``run.created``, replaced by a resume's ``run.started`` that sets one.
    cost_ceiling: float | None = None
    stopped: str | None = None
    failed: str | None = None
    finished: bool = False
    report: str | None = None
    worker_pid: int | None = None
    workers: int = 0
    repairs: int = 0
    #: attempts in a row (this worker) that ended with a failed call and no submission
    failed_calls_in_row: list[str] = field(default_factory=list)
    #: revision -> attempt id -> its review (the run's own phase is ``initial``)
    reviews: dict[str, dict[str, ReviewRecord]] = field(default_factory=dict)
    #: revisions started by ``pluginbench review``, in order
    review_revisions: dict[str, ReviewRevision] = field(default_factory=dict)
    #: measurement revisions started by ``pluginbench measure``, in order, and the selected one
    measurement_revisions: dict[str, MeasurementRevision] = field(default_factory=dict)
    measurement_selected: str | None = None
    #: preparation's readiness per task and measure, the pairs it does not measure, and the
    #: observer versions it bound (``measurement_readiness.checked``)
    measurement_readiness: list[ReadinessRow] = field(default_factory=list)
    prepared_not_measured: list[NotMeasured] = field(default_factory=list)
    observers: dict[str, str] = field(default_factory=dict)
    #: task -> each reference-measure column of its reference solution, as preparation measured it
    references: dict[str, dict[str, Measure]] = field(default_factory=dict)
    reference_seconds: dict[str, float] = field(default_factory=dict)
    #: the saved settings' SHA-256 as the selected measurement revision rewrote them
    revised_evaluation_sha256: str | None = None
    #: the open source-only round (attempt ids) and the attempts this worker graded source-only
    source_only_round: list[str] = field(default_factory=list)
    source_only_tried: set[str] = field(default_factory=set)
    #: the source-only index.json the report reads (the latest ``source_only.selected``)
    source_only_selected: SourceOnlySelected | None = None
    #: extension name -> attempt id ("" for the run) -> the data of its latest ``extension.recorded``
    extension_records: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    last_seq: int = 0
    last_type: str | None = None
    last_at: str | None = None
    #: the live index (:attr:`index`): built by one scan when first asked for, then kept by
    #: ``apply``; a fold that never asks (a report, status from the log) pays nothing per event
    _live_index: LiveIndex | None = None
    #: the open source-only round's attempts and how many of them this worker has not tried yet
    _round: set[str] = field(default_factory=set)
    _round_left: int = 0

    # The private fields (a leading underscore) are derived, kept by ``apply`` so per-event
    # questions need no scan: a state's value, its equality and its repr, is the others.

    def __eq__(self, other: object) -> bool:
        if type(other) is not RunState:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _VALUE_FIELDS)

    def __repr__(self) -> str:
        return "RunState(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in _VALUE_FIELDS) + ")"

    # ------------------------------------------------------------ queries

    @property
    def index(self) -> LiveIndex:
        """Counts and slot sets over the live attempts (:mod:`._live_index`), so per-event
        questions need no scan of all attempts; derived, not part of a state's value."""
        if self._live_index is None:
            self._live_index = LiveIndex()
            for slot in self.live:
                self._live_index.move(slot, None, self._facts(slot))
        return self._live_index

    def live_attempts(self) -> Iterator[Attempt]:
        """The attempt that currently holds each slot, in slot order."""
        for slot in sorted(self.live):
            yield self.attempts[self.live[slot]]

    def count(self, state: str) -> int:
        """Live attempts in ``state`` (from the index: no scan)."""
        return self.index.states[state]

    def first_pending(self, n: int) -> list[Attempt]:
        """Up to ``n`` live pending attempts, in slot order (from the index: no scan)."""
        return [self.attempts[self.live[slot]] for slot in self.index.first_pending(n)]

    def running_attempts(self) -> Iterator[Attempt]:
        """The live running attempts, in no particular order (from the index: no scan)."""
        for slot in self.index.running:
            yield self.attempts[self.live[slot]]

    @property
    def source_only_round_done(self) -> bool:
        """The open source-only round has every attempt tried by this worker."""
        return bool(self.source_only_round) and self._round_left == 0

    def extension_record(self, extension: str, attempt_id: str | None = None) -> dict[str, Any] | None:
        """What ``extension`` last recorded about ``attempt_id`` (or the run), or None."""
        return self.extension_records.get(extension, {}).get(attempt_id or "")

    @property
    def coding_capacity(self) -> int:
        """Coding attempts that may run at once: ``jobs``, or on a cluster the sum of the
        current worker's nodes' jobs."""
        if self.nodes is not None:  # none found: one, so a start waits for a node (and fails in time)
            return max(1, sum(n.jobs for n in self.nodes))
        return self.created.jobs if self.created is not None else 0

    @property
    def coding_in_flight(self) -> int:
        """Running attempts that hold a coding slot (a reused attempt is only regraded; an
        attempt graded and measured only waits for its review, which holds no slot)."""
        return self.index.coding

    @property
    def reviewer(self) -> ReviewerSpec | None:
        return self.created.reviewer if self.created is not None else None

    def review_of(self, attempt_id: str, revision: str = INITIAL_REVIEW) -> ReviewRecord | None:
        return self.reviews.get(revision, {}).get(attempt_id)

    def reviewed(self, attempt_id: str) -> bool:
        """The run's own review of ``attempt_id`` ended (findings, or failed with a reason)."""
        r = self.review_of(attempt_id)
        return r is not None and r.settled

    @property
    def selected_review(self) -> str | None:
        """The revision the report uses: the latest finished one started with select, else
        ``initial`` when the run has a reviewer."""
        chosen = INITIAL_REVIEW if self.reviewer is not None else None
        for rev in self.review_revisions.values():
            if rev.finished and rev.selected:
                chosen = rev.revision
        return chosen

    @property
    def reviewing(self) -> bool:
        """Only reviews are left: nothing codes, grades or measures, a review is outstanding
        (of the run's own phase, or of a revision ``pluginbench review`` is working on)."""
        if any(not r.finished for r in self.review_revisions.values()):
            return True
        if self.reviewer is None or not self.coding or not self.live:
            return False
        # a pending attempt, or a running one not graded and measured: not only reviews left
        if self.index.states["pending"] or self.index.unsettled:
            return False
        return self.index.unreviewed > 0

    @property
    def all_complete(self) -> bool:
        return bool(self.live) and self.index.states["complete"] == len(self.live)

    @property
    def phase(self) -> Phase:
        """not_started, starting, coding, reviewing, reporting, complete, stopped, failed."""
        if self.created is None:
            return "not_started"
        if any(not r.finished for r in self.review_revisions.values()):
            return "reviewing"
        if self.finished:
            return "complete"
        if self.failed is not None:
            return "failed"
        if self.stopped is not None:
            return "stopped"
        if self.reviewing:
            return "reviewing"
        if self.all_complete:
            return "reporting"
        if self.coding:
            return "coding"
        return "starting"

    # ------------------------------------------------------------ the fold

    def _facts(self, slot: int) -> SlotFacts | None:
        aid = self.live.get(slot)
        if aid is None:
            return None
        a = self.attempts[aid]
        so = a.source_only
        return SlotFacts(
            a.state, a.reused, a.arm == VANILLA, a.captured, a.graded and a.measured, self.reviewed(aid),
            None if so is None else so.status,
            f"{aid}: {so.reason}" if so is not None and so.status == "pending" and so.reason else None,
        )

    def _touched(self, event: Event) -> list[int]:
        """The slots whose live attempt ``event`` may change."""
        slots: list[int] = []
        aid = getattr(event, "attempt_id", None)
        if isinstance(aid, str) and aid in self.attempts:
            slots.append(self.attempts[aid].slot)
        slot = getattr(event, "slot", None)
        if isinstance(slot, int) and slot not in slots:
            slots.append(slot)
        return slots

    def apply(self, event: Event) -> "RunState":
        """Fold one event in; returns ``self`` for chaining. The live index moves by what
        the event changed in the slots it touches."""
        index = self._live_index
        if index is None or isinstance(event, RunCreated):
            self._apply(event)
            self._live_index = None  # (re)built from the slots when first asked for
            return self
        slots = self._touched(event)
        before = [self._facts(s) for s in slots]
        self._apply(event)
        for s, b in zip(slots, before, strict=True):
            index.move(s, b, self._facts(s))
        return self

    def _apply(self, event: Event) -> None:
        """The state change of one event: its handler looked up by the event's class (built
        once, :mod:`._state_fold`) instead of a class-pattern ``match`` tried case by case."""
        handler = DISPATCH.get(type(event)) or resolve(type(event))
        self.last_seq = event.seq
        self.last_at = event.at
        self.last_type = event.__struct_config__.tag  # type: ignore[assignment]  # msgspec types tags str | int | None; every event declares a str tag
        handler(self, event)

    # ------------------------------------------------------------ measurement revisions

    def selected_measurement(self) -> MeasurementRevision | None:
        return self.measurement_revisions.get(self.measurement_selected) if self.measurement_selected else None

    def current_measures(self, a: Attempt) -> dict[str, Measure]:
        """The attempt's measures as the report shows them: what the run collected, with the
        selected measurement revision's values over them."""
        rev = self.selected_measurement()
        if rev is None or a.attempt_id not in rev.measures:
            return a.measures
        return {**a.measures, **rev.measures[a.attempt_id]}

    def current_references(self) -> dict[str, dict[str, Measure]]:
        """Task -> metric -> its reference solution's measure as the report shows it: what the
        run measured in preparation, with the selected measurement revision's over it."""
        out = {task: dict(measures) for task, measures in self.references.items()}
        rev = self.selected_measurement()
        if rev is not None:
            for task, measures in rev.references.items():
                out.setdefault(task, {}).update(measures)
        return out

    @property
    def not_measured(self) -> list[NotMeasured]:
        rev = self.selected_measurement()
        return list(rev.not_measured) if rev is not None else list(self.prepared_not_measured)




def fold(events: Iterable[Event], state: RunState | None = None) -> RunState:
    """Apply ``events`` in order to ``state`` (a new one by default)."""
    st = state if state is not None else RunState()
    for e in events:
        st.apply(e)
    return st


#: the fields that make a state's value (its equality and repr): all but the derived, private ones
_VALUE_FIELDS = tuple(name for name in RunState.__struct_fields__ if not name.startswith("_"))
