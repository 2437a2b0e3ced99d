"""The one registration of actor extensions (see ``_actor_ext.py``)."""

from __future__ import annotations

from ._actor_ext import ActorExtension
from ._review_rules import REVIEWER

EXTENSIONS: tuple[ActorExtension, ...] = (REVIEWER,)
