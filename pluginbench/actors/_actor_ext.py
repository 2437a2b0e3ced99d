"""The actor extension point: what an actor adds to the Supervisor's decisions, as data.

An actor is its module (the loop that does the I/O), its events, its decide rules and one
registration (:func:`._extensions.register_extension`; the built-in ones are listed in
``_extensions.py``). Its events are its own typed events in ``events/_types.py`` or the
generic ``extension.recorded`` (:class:`~pluginbench.events.ExtensionRecorded`, folded
into ``RunState.extension_records``), which needs no edit outside the actor's module.
The rules are pure:

* :class:`Requirement`: something every attempt needs before it is complete (grading and
  measuring are the built-in ones). ``applies(state)`` says whether the run needs it at
  all, ``done(state, attempt)`` whether the attempt has it, ``after`` which requirements
  must be done first, and ``command(attempt)`` the command that gets it done.
* ``decide(state, event, core)``: the commands the actor's own events cause (``core`` gives
  the shared rules: an attempt's next step, draining a stopping run).

``actor`` is the loop the Supervisor starts (``jobs`` of it) for the command types in
``commands``; it reads commands from its channel and reports events through
``engine.outbox``, like every actor.
"""

from collections.abc import Callable, Coroutine
from pathlib import Path
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

    #: ``progress(state, attempt_id, requirement_name)``: the next commands of an attempt
    #: whose requirement just got done (its completion, or what waited on that requirement)
    progress: Callable[..., list[Any]]
    #: end a stopping run once nothing is in flight
    drained: Callable[[RunState], list[Any]]


def no_rules(state: RunState, event: Event, core: CoreRules) -> list[Any]:
    return []


class SetupContext(NamedTuple):
    """What an extension's ``setup`` sees when a worker builds the run's engine."""

    evaluation: Any
    #: the run's ``run.created`` (None before the run exists)
    created: Any
    #: the loopback model server of a probe run, or None
    probe_base_url: str | None
    #: host paths no sandbox may read (the run, the cache, task and treatment sources)
    hidden: tuple[Path, ...]


class ActorExtension(NamedTuple):
    name: str
    requirements: tuple[Requirement, ...] = ()
    decide: Callable[[RunState, Event, CoreRules], list[Any]] = no_rules
    #: the actor loop, ``async (engine, receive_stream) -> None``; None for rules-only extensions
    actor: Callable[..., Coroutine[Any, Any, Any]] | None = None
    #: the command types the Supervisor routes to ``actor``
    commands: tuple[type, ...] = ()
    #: builds what the actor needs for one run (a CLI adapter, a client…) when the worker
    #: builds its engine; the result is ``engine.extensions[name]`` (None: nothing to build)
    setup: Callable[[SetupContext], Any] | None = None
