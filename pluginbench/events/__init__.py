"""Events: the immutable facts of a run, their log, and the lock of its one writer.

Public surface: the event types (see ``docs/events.md``), :func:`encode`/:func:`decode`,
:class:`EventLog` (the single writer), :func:`read_events`/:func:`read_log`/
:func:`follow` (readers), and :class:`RunLock`/:func:`live_owner`.
"""

from ._lock import (
    LOCK_NAME,
    Owner,
    RunLock,
    check_not_moved,
    live_owner,
    process_start_ticks,
    read_owner_record,
)
from ._log import EventLog, LogContents, follow, read_events, read_log, read_run_log, utc_now
from ._types import *  # noqa: F403
from ._types import EVENT_TYPES, Event, decode, encode, stamp, type_name

__all__ = [
    "EVENT_TYPES",
    "LOCK_NAME",
    "Event",
    "EventLog",
    "LogContents",
    "Owner",
    "RunLock",
    "check_not_moved",
    "decode",
    "encode",
    "follow",
    "live_owner",
    "process_start_ticks",
    "read_events",
    "read_log",
    "read_owner_record",
    "read_run_log",
    "stamp",
    "type_name",
    "utc_now",
]
