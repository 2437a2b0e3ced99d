"""The registry of actor extensions (see ``_actor_ext.py``): the reviewer, and any other
actor registered with :func:`register_extension` (tests register toy actors this way).

``requirements()`` is what makes an attempt complete beyond grading and measuring;
``ACTORS`` maps each command type to the actor loop that serves it (a live view: an
extension registered later is routed too).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ._actor_ext import ActorExtension, Requirement, SetupContext
from ._check_vote_rules import CHECK_VOTES
from ._review_rules import REVIEWER, Review
from ._reviewer import reviewer_actor
from ._reviewer_setup import setup_reviewer
from ._sequential import SEQUENTIAL_STOP

_EXTENSIONS: list[ActorExtension] = [
    REVIEWER._replace(actor=reviewer_actor, commands=(Review,), setup=setup_reviewer),
    SEQUENTIAL_STOP,
    CHECK_VOTES,
]


def register_extension(extension: ActorExtension) -> ActorExtension:
    """Add ``extension``; its name, requirement names and command types must be new."""
    taken = {r.name for x in _EXTENSIONS for r in x.requirements} | {"graded", "measured"}
    if any(x.name == extension.name for x in _EXTENSIONS):
        raise ValueError(f"actor extension {extension.name!r} is already registered")
    for r in extension.requirements:
        if r.name in taken:
            raise ValueError(f"actor extension {extension.name!r}: requirement {r.name!r} already exists")
        taken.add(r.name)
    routed = {t for x in _EXTENSIONS for t in x.commands}
    for t in extension.commands:
        if t in routed:
            raise ValueError(f"actor extension {extension.name!r}: command {t.__name__} is already routed")
    if extension.commands and extension.actor is None:
        raise ValueError(f"actor extension {extension.name!r} routes commands but has no actor")
    _EXTENSIONS.append(extension)
    return extension


def unregister_extension(name: str) -> None:
    _EXTENSIONS[:] = [x for x in _EXTENSIONS if x.name != name]


@contextmanager
def registered_extension(extension: ActorExtension) -> Iterator[ActorExtension]:
    """``extension`` registered for the duration of the block."""
    register_extension(extension)
    try:
        yield extension
    finally:
        unregister_extension(extension.name)


def extensions() -> tuple[ActorExtension, ...]:
    return tuple(_EXTENSIONS)


def extension_requirements() -> tuple[Requirement, ...]:
    """Every registered extension's requirements, in registration order."""
    return tuple(r for x in _EXTENSIONS for r in x.requirements)


def setup_extensions(ctx: SetupContext) -> dict[str, Any]:
    """Each registered extension's ``setup`` for one run, by extension name."""
    return {x.name: x.setup(ctx) for x in _EXTENSIONS if x.setup is not None}


class _Actors(Mapping[type, Callable[..., Coroutine[Any, Any, Any]]]):
    """Command type → the actor loop that serves it, read from the registry on each use."""

    def _now(self) -> dict[type, Callable[..., Coroutine[Any, Any, Any]]]:
        return {t: x.actor for x in _EXTENSIONS if x.actor is not None for t in x.commands}

    def __getitem__(self, key: type) -> Callable[..., Coroutine[Any, Any, Any]]:
        return self._now()[key]

    def __iter__(self) -> Iterator[type]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())


ACTORS: Mapping[type, Callable[..., Coroutine[Any, Any, Any]]] = _Actors()
