"""The actor extension point: what an actor adds to the Supervisor's decisions, as data.

An actor is its module (the loop that does the I/O), its events (in ``events/_types.py``),
its decide rules and one registration in ``_extensions.py``. The rules are pure:

* :class:`Requirement`: something every attempt needs before it is complete (grading and
  measuring are the built-in ones). ``applies(state)`` says whether the run needs it at
  all, ``done(state, attempt)`` whether the attempt has it, ``after`` which requirements
  must be done first, and ``command(attempt)`` the command that gets it done.
* ``decide(state, event, core)``: the commands the actor's own events cause (``core`` gives
  the shared rules: an attempt's next step, draining a stopping run).

The Supervisor runs each extension's actor for its command type (``_extension_actors.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ..events import Event
from ..projections import Attempt, RunState


class Emit(NamedTuple):
    """Record this event next (the Supervisor appends it, then decides again)."""

    event: Event


class Requirement(NamedTuple):
    name: str
    applies: Callable[[RunState], bool]
    done: Callable[[RunState, Attempt], bool]
    command: Callable[[Attempt], Any]
    after: tuple[str, ...] = ()
    #: whether the attempt's work for it is in progress now (a stopping run waits for it)
    in_flight: Callable[[RunState, Attempt], bool] = lambda state, a: False


class CoreRules(NamedTuple):
    """The core decisions an extension's rules may defer to (all pure)."""

    #: the next commands of an attempt whose requirement just got done (or its completion)
    progress: Callable[[RunState, str], list[Any]]
    #: end a stopping run once nothing is in flight
    drained: Callable[[RunState], list[Any]]


class ActorExtension(NamedTuple):
    name: str
    requirements: tuple[Requirement, ...]
    decide: Callable[[RunState, Event, CoreRules], list[Any]]
