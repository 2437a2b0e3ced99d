"""Work a run offers for an agent CLI's start-up runs once, only when a harness waits (issue 27)."""

from __future__ import annotations

import threading

from pluginbench.harnesses import offer_while_starting, start_offered, withdraw_offer


def test_offered_work_runs_once_in_the_callers_thread_when_a_cli_starts() -> None:
    """Offered work runs only once a harness starts waiting on a CLI, in the caller's own thread (no import races), and only once."""
    ran: list[int] = []

    def work() -> None:
        ran.append(threading.get_ident())

    offer_while_starting(work)
    assert not ran
    start_offered()
    start_offered()  # a second CLI start finds nothing left to run
    assert ran == [threading.get_ident()]


def test_withdrawn_or_failing_work_never_reaches_the_harness() -> None:
    """Work withdrawn before a CLI starts never runs, and work that raises does not stop the work after it."""
    ran: list[str] = []

    def withdrawn() -> None:
        ran.append("withdrawn")

    def failing() -> None:
        raise RuntimeError("boom")

    def last() -> None:
        ran.append("last")

    offer_while_starting(withdrawn)
    withdraw_offer(withdrawn)
    offer_while_starting(failing)
    offer_while_starting(last)
    start_offered()
    assert ran == ["last"]
