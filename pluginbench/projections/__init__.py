"""Projections: pure folds of the event log (and frozen evidence) into views.

Public surface: :class:`RunState`/:func:`fold` (the run aggregate), :func:`status_view`/:func:`status_of`
(``status --json`` as a pure view of the rows or the state, typed :class:`Status`; the I/O is in
:mod:`pluginbench.status`), :class:`Ledger`/:func:`read_ledger` (``evidence/ledger.sqlite``),
and :func:`build_report` (``report/``: results.json, results.csv, report.html).
"""

from ._ledger import Ledger, LedgerView, read_ledger
from ._state import OUTCOMES, STATES, VANILLA, Attempt, RunState, fold
from ._status import RunFacts, status_of, status_view
from ._status_types import Status


def build_report(run_dir):  # type: ignore[no-untyped-def]
    """Rebuild ``report/`` from the log and frozen evidence; see :mod:`._report`."""
    from ._report import build_report as _build

    return _build(run_dir)


__all__ = [
    "OUTCOMES",
    "STATES",
    "VANILLA",
    "Attempt",
    "Ledger",
    "LedgerView",
    "RunFacts",
    "RunState",
    "Status",
    "build_report",
    "fold",
    "read_ledger",
    "status_of",
    "status_view",
]
