"""The Supervisor's step as a pure function: ``(state, event) → (state, commands)``.

:func:`step` folds one stamped event into the run state and says what follows from it
(``decide``). :func:`starts` says, when nothing is queued, which pending slots start now
and whether the cost ceiling stops the run. :func:`settle` is the Supervisor's whole
reaction to one event: the event and every event its decisions emit are recorded and
stepped in order, then the starts; it returns the commands for actors, in order. None of
them reads a clock, draws a random number or does I/O; the only effect is ``record``, the
caller's way to stamp and save an event (the Supervisor's writer; a test's seq counter).

The state is the fold's aggregate, updated in place (O(1) per event, as the fold is)
and returned, so a caller can chain steps.
"""

from collections import deque
from collections.abc import Callable
from typing import NamedTuple

from ..events import AttemptStarted, Event, RunStopping
from ..projections import RunState
from ..stats import Prices
from ._actor_ext import Emit
from ._ceiling import within_ceiling
from ._decide import Command, Start, decide, schedule


class Step(NamedTuple):
    """The state after one event, and the commands that follow from it."""

    state: RunState
    commands: list[Command]


class Starts(NamedTuple):
    """What the Supervisor starts when nothing is queued, and the ceiling's stop, if any."""

    starts: list[Start]
    stopping: RunStopping | None


def step(state: RunState, event: Event) -> Step:
    """Fold ``event`` (stamped: it has its ``seq``) into ``state``; the commands it causes."""
    state.apply(event)
    return Step(state, decide(state, event))


def starts(state: RunState, prices: Prices | None = None, prices_reason: str | None = None) -> Starts:
    """The pending slots that start now (``schedule``), cut to what fits under the cost
    ceiling; when fewer fit, the ``run.stopping`` that says why (recorded after them)."""
    wanted = schedule(state)
    check = within_ceiling(state, prices, prices_reason, len(wanted))
    stopping = None if check.reason is None else RunStopping(reason=check.reason)
    return Starts(wanted[: check.allowed], stopping)


#: Stamp and save one event, step it, and return its commands (``step(...).commands``).
Record = Callable[[Event], list[Command]]


def settle(
    state: RunState, first: Event, record: Record, prices: Prices | None = None, prices_reason: str | None = None
) -> list[Command]:
    """Everything ``first`` causes, with no ``await`` in between, so decisions never
    interleave: ``first`` and the events its decisions emit are recorded in order (each
    stepped before the next); whenever none is left, the slots that may start are
    recorded (``attempt.started``, each followed by its :class:`Start`) and a ceiling stop
    is recorded after them. Returns the commands for actors, in the order they arose."""
    out: list[Command] = []
    queue: deque[Event] = deque([first])
    while queue:
        _follow(record(queue.popleft()), queue, out)
        if queue:
            continue
        todo = starts(state, prices, prices_reason)
        for start in todo.starts:
            _follow(record(AttemptStarted(attempt_id=start.attempt_id, slot=start.slot, task=start.task,
                                          arm=start.arm, repeat=start.repeat)), queue, out)
            out.append(start)
        if todo.stopping is not None:
            queue.append(todo.stopping)
    return out


def _follow(commands: list[Command], queue: deque[Event], out: list[Command]) -> None:
    for command in commands:
        if isinstance(command, Emit):
            queue.append(command.event)
        else:
            out.append(command)
