"""The actor loop of each registered extension, by the command type it serves (the
Supervisor starts ``jobs`` of each and routes its commands there)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ._review_rules import Review
from ._reviewer import reviewer_actor

ACTORS: dict[type, Callable[..., Awaitable[Any]]] = {Review: reviewer_actor}
