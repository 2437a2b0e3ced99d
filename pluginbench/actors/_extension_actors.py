"""The actor loop of each registered extension, by the command type it serves (the
Supervisor starts ``jobs`` of each and routes its commands there). Read from the one
registration in ``_extensions.py``."""

from __future__ import annotations

from ._extensions import ACTORS

__all__ = ["ACTORS"]
