"""Work a run offers for the moments a harness waits on its agent CLI's start-up.

An agent CLI takes about half a second to start (loading its bundle)
before it answers anything; the run's process then only waits. The run offers work that
would otherwise sit on its critical path later, done in advance and with no observable
effect (:func:`pluginbench.projections.warm_report`: loading the report's modules);
a harness calls :func:`start_offered` when it starts waiting on its CLI's start-up. Nothing
offered runs unless a CLI starts, and each offer runs at most once, in the caller's thread
(the run's event loop, which would only wait then): work that imports modules never races
another thread's imports for a module lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_offered: list[Callable[[], None]] = []
_lock = threading.Lock()


def offer_while_starting(work: Callable[[], None]) -> None:
    """Run ``work`` (once) the next time a harness waits on its CLI's start-up."""
    with _lock:
        _offered.append(work)


def withdraw_offer(work: Callable[[], None]) -> None:
    """Take back ``work`` if it has not started (the run that offered it has ended)."""
    with _lock:
        if work in _offered:
            _offered.remove(work)


def start_offered() -> None:
    """Do everything offered so far, here and now: the caller is about to wait on a CLI's
    start-up (about 0.5 s; the work takes a few tens of milliseconds). A failure is
    ignored: the work is only ever done in advance, and whoever needs it later does it
    again (and reports what fails)."""
    with _lock:
        work = list(_offered)
        _offered.clear()
    for w in work:
        try:
            w()
        except Exception:  # noqa: BLE001, S112 - advance work only (see start_offered)
            continue
