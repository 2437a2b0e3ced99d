"""Leaving the process at the end of a run without the interpreter's teardown.

When a process ends normally, Python clears every module and frees every object one by
one. A run loads about 600 modules, so that teardown is 10-20 ms after the run's last
event, about a third of what a one-attempt run spends after its attempt. A run keeps
nothing for the end: every event is fsynced when it is appended, every file is written
whole before it is renamed into place, and a run killed with ``-9`` at any point loses
nothing. So the commands that own a run (:data:`QUICK_EXIT_COMMANDS`) end with
:func:`exit_quickly`: the exit handlers (:mod:`atexit`, which also finalizes
``weakref.finalize`` objects and saves a coverage measurement) run, stdout and stderr are
flushed, and the process ends with ``os._exit``.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

#: the commands whose console process ends through :func:`exit_quickly`
QUICK_EXIT_COMMANDS = frozenset({"run", "worker", "demo"})
#: the status Python itself exits with when it cannot flush stdout at exit
FLUSH_FAILED = 120


def _flush() -> bool:
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _other_threads() -> bool:
    """Whether a non-daemon thread other than this one is alive (a normal exit joins it)."""
    me = threading.current_thread()
    return any(t is not me and not t.daemon and t.is_alive() for t in threading.enumerate())


def exit_quickly(exc: SystemExit) -> NoReturn:
    """End the process with ``exc``'s status, skipping the interpreter's teardown.

    The exit handlers run and stdout and stderr are flushed first. ``exc`` is raised again
    (the normal exit, with everything it does) when its code is a message rather than a
    number (Python prints it), when a non-daemon thread is still alive (a normal exit
    waits for it), or when stdout or stderr cannot be flushed (Python reports it)."""
    code = exc.code
    if (code is not None and not isinstance(code, int)) or _other_threads() or not _flush():
        raise exc
    atexit._run_exitfuncs()  # the handlers a normal exit runs; they may print
    os._exit((code or 0) if _flush() else FLUSH_FAILED)
