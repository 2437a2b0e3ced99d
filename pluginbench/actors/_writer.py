"""The one path by which an event reaches ``events.jsonl``.

:meth:`RunWriter.record` appends (stamp ``seq`` and ``at``, write, fsync), steps the
state (fold and decide, :func:`._step.step`), updates the ledger and tells the observer.
The Supervisor records every event of a run through it; run creation records
``run.created`` through it too (a fresh state and ledger), and ``pluginbench review``
records its revision's events through it. Each holds ``run.lock`` while it writes, so
there is one writer at a time and every writer takes the same steps.
"""

from __future__ import annotations

from collections.abc import Callable

from ..events import Event, EventLog, LogMark
from ..projections import Ledger, RunState
from ._decide import Command
from ._step import step

Observer = Callable[[RunState, Event], None]


def _same_bytes(recorded: LogMark | None, now: LogMark) -> bool:
    """Whether the ledger was written at the log's bytes as they are (its size and CRC-32 of
    every byte, which the writer computed on opening the log; inode and change time aside)."""
    return recorded is not None and recorded[:2] == now[:2]


class RunWriter:
    """Append, step, update the ledger, observe: for one run, while its lock is held."""

    def __init__(self, log: EventLog, state: RunState, ledger: Ledger | None, observer: Observer | None = None) -> None:
        self.log = log
        self.state = state
        self.ledger = ledger
        self.observer = observer
        if ledger is not None and (ledger.last_seq() != state.last_seq or not _same_bytes(ledger.log_mark(), log.mark)):
            # a ledger behind the log, damaged, or written at other bytes (the log rewritten under
            # it): rebuilt from the fold first
            ledger.rebuild(state, log.mark)

    def record(self, event: Event) -> list[Command]:
        """Durably append ``event``, fold it in, and return the commands it causes."""
        stamped = self.log.append(event)
        commands = step(self.state, stamped).commands
        if self.ledger is not None:
            self.ledger.update(self.state, stamped, self.log.mark)
        if self.observer is not None:
            self.observer(self.state, stamped)
        return commands
