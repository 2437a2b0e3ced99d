"""Indexes over a run's live attempts, kept by the fold so every question the Supervisor
asks per event is answered without scanning all attempts.

:class:`LiveIndex` holds, for the attempt that currently holds each slot, counts by state
and by the facts the decisions and the ledger's run row ask about (running and holding a
coding slot, vanilla, reused, captured, reviewed, source-only status), the slots that are
pending (in slot order, for ``schedule``) and the slots that are running. It is derived
only: :meth:`RunState.apply` snapshots the facts of the slots an event touches before and
after folding it and moves the counts by the difference (:meth:`LiveIndex.move`), so the
index is the same function of the events as the rest of the state, at O(1) per event.
"""

from collections import Counter
from typing import NamedTuple


class SlotFacts(NamedTuple):
    """What the index counts about one live attempt."""

    state: str
    reused: bool
    vanilla: bool
    captured: bool
    #: graded and measured (the core requirements done)
    settled: bool
    #: its review in the run's own (initial) revision ended
    reviewed: bool
    #: its latest source-only grade's status, or None
    source_only: str | None
    #: ``"<attempt id>: <reason>"`` when that grade is pending with a reason
    pending_reason: str | None


class LiveIndex:
    """Counts and slot sets over the live attempts (see the module docstring)."""

    __slots__ = ("states", "coding", "unsettled", "unreviewed", "vanilla", "reused", "captured",
                 "captured_reviewed", "source_only", "pending_reasons", "running", "_pending", "_order",
                 "_head", "_dirty")

    def __init__(self) -> None:
        self.states: Counter[str] = Counter()
        #: running, not reused, not graded and measured: holds a coding slot
        self.coding = 0
        #: running and not graded and measured
        self.unsettled = 0
        #: running and its initial review not ended
        self.unreviewed = 0
        self.vanilla = 0
        self.reused = 0
        self.captured = 0
        self.captured_reviewed = 0
        self.source_only: Counter[str] = Counter()
        #: slot -> "<attempt id>: <reason>" of a pending source-only grade
        self.pending_reasons: dict[int, str] = {}
        #: slots whose live attempt is running
        self.running: set[int] = set()
        self._pending: set[int] = set()
        #: the pending slots sorted, read from ``_head``; entries no longer pending are skipped
        self._order: list[int] = []
        self._head = 0
        self._dirty = False

    def move(self, slot: int, before: SlotFacts | None, after: SlotFacts | None) -> None:
        """The live attempt of ``slot`` changed from ``before`` to ``after`` (None: no live attempt)."""
        if before == after:
            return
        if before is not None:
            self._count(slot, before, -1)
        if after is not None:
            self._count(slot, after, 1)

    def _count(self, slot: int, f: SlotFacts, sign: int) -> None:
        self.states[f.state] += sign
        running = f.state == "running"
        if running:
            if sign > 0:
                self.running.add(slot)
            else:
                self.running.discard(slot)
            if not f.settled:
                self.unsettled += sign
                if not f.reused:
                    self.coding += sign
            if not f.reviewed:
                self.unreviewed += sign
        elif f.state == "pending":
            if sign > 0:
                self._pending.add(slot)
                self._dirty = True
            else:
                self._pending.discard(slot)
                self._advance()
        self.vanilla += sign if f.vanilla else 0
        self.reused += sign if f.reused else 0
        if f.captured:
            self.captured += sign
            self.captured_reviewed += sign if f.reviewed else 0
        if f.source_only is not None:
            self.source_only[f.source_only] += sign
        if f.pending_reason is not None:
            if sign > 0:
                self.pending_reasons[slot] = f.pending_reason
            else:
                self.pending_reasons.pop(slot, None)

    def _advance(self) -> None:
        if self._dirty:
            return
        order, pending = self._order, self._pending
        while self._head < len(order) and order[self._head] not in pending:
            self._head += 1

    def first_pending(self, n: int) -> list[int]:
        """Up to ``n`` pending slots, lowest first."""
        if self._dirty:  # slots became pending (run.created, a reset or a discard): sort once
            self._order, self._head, self._dirty = sorted(self._pending), 0, False
        out: list[int] = []
        order, pending, i = self._order, self._pending, self._head
        while len(out) < n and i < len(order):
            if order[i] in pending:
                out.append(order[i])
            i += 1
        return out

    @property
    def pending(self) -> int:
        return len(self._pending)
