"""Work a run offers for the moments a harness waits on its agent CLI's start-up.

An agent CLI takes about half a second to start (a Node.js process loading its bundle)
before it answers anything; the run's process then only waits. The run offers work that
would otherwise sit on its critical path later, done in advance and with no observable
effect (:func:`pluginbench.projections.warm_report`: loading the report's modules);
a harness calls :func:`start_offered` when it starts waiting on its CLI's start-up. Nothing
offered runs unless a CLI starts, and each offer runs at most once, in a background thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_offered: list[Callable[[], None]] = []
_lock = threading.Lock()


def offer_while_starting(work: Callable[[], None]) -> None:
    """Run ``work`` (once, in a background thread) the next time a harness waits on its CLI's start-up."""
    with _lock:
        _offered.append(work)


def withdraw_offer(work: Callable[[], None]) -> None:
    """Take back ``work`` if it has not started (the run that offered it has ended)."""
    with _lock:
        if work in _offered:
            _offered.remove(work)


def start_offered() -> None:
    """Start everything offered so far in one background thread: the caller now waits on a
    CLI's start-up. A failure there is ignored: the work is only ever done in advance, and
    whoever needs it later does it again (and reports what fails)."""
    with _lock:
        work = list(_offered)
        _offered.clear()
    if work:
        threading.Thread(target=_run, args=(work,), name="pluginbench-while-starting", daemon=True).start()


def _run(work: list[Callable[[], None]]) -> None:
    for w in work:
        try:
            w()
        except Exception:  # noqa: BLE001, S112 - advance work only (see start_offered)
            continue
