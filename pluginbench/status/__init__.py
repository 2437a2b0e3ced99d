"""The status adapter: the I/O around the pure status view.

:func:`read_status` reads what ``pluginbench status`` shows (the lock's owner, the clock,
file times, the log once, the ledger read-only, the selected measurements, and, for a run
no process owns, what its backend says a killed worker left, through the backend port)
and hands it to :func:`pluginbench.projections.status_view`, which computes the typed
:class:`~pluginbench.projections.Status`. ``status``, ``status --json``, ``status --watch``
and the dashboard all read status here; :func:`status_json` is ``status --json``'s bytes,
from the ledger's groups and pre-encoded rows when the log is still what the ledger folded;
:func:`watch_snapshot` is what ``status --watch`` redraws from, the same way plus the rows
of the tasks it shows, and :func:`terminal_snapshot` what plain ``status`` draws (every
attempt, only the fields the terminal view reads).
"""

from ._read import (
    left_running_check,
    read_status,
    status_json,
    status_snapshot,
    terminal_snapshot,
    watch_snapshot,
    write_status_json,
)

__all__ = ["left_running_check", "read_status", "status_json", "status_snapshot", "terminal_snapshot",
           "watch_snapshot", "write_status_json"]
