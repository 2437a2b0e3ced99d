"""Projections: pure folds of the event log (and frozen evidence) into views.

Public surface: :class:`RunState`/:func:`fold` (the run aggregate), :func:`status_view`/:func:`status_of`
(``status --json`` as a pure view of the rows or the state, typed :class:`Status`; the I/O is in
:mod:`pluginbench.status`), :class:`Ledger`/:func:`read_ledger` (``evidence/ledger.sqlite``),
and :func:`build_report` (``report/``: results.json, results.csv, report.html).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Each public name and the module (and name there) it comes from. A name is imported when it
#: is first asked for (PEP 562), not with the package: ``status --json`` reads the ledger
#: through ``ledger_summary`` and ``status_of_groups`` without loading the fold, the report or
#: the measures behind them.
_LAZY: dict[str, tuple[str, str]] = {
    "OUTCOMES": ("..events", "OUTCOMES"),
    "VANILLA": ("..events", "VANILLA"),
    "CheckVotes": ("._check_votes", "CheckVotes"),
    "PaidCall": ("._check_votes", "PaidCall"),
    "Generations": ("._generation", "Generations"),
    "generation_rows": ("._generation", "generation_rows"),
    "generation_sessions": ("._generation", "generation_sessions"),
    "generation_totals": ("._generation", "generation_totals"),
    "CheckedFold": ("._integrity", "CheckedFold"),
    "check_frozen": ("._integrity", "check_frozen"),
    "check_results_version": ("._integrity", "check_results_version"),
    "fold_checked_log": ("._integrity", "fold_checked_log"),
    "frozen_changes": ("._integrity", "frozen_changes"),
    "ledger_last_seq": ("._integrity", "ledger_last_seq"),
    "read_checked_log": ("._integrity", "read_checked_log"),
    "Ledger": ("._ledger", "Ledger"),
    "LedgerSummary": ("._ledger_read", "LedgerSummary"),
    "LedgerView": ("._ledger_read", "LedgerView"),
    "READ_META_SQL": ("._ledger_read", "READ_META_SQL"),
    "READ_MODE_SQL": ("._ledger_read", "READ_MODE_SQL"),
    "READ_ROWS_SQL": ("._ledger_read", "READ_ROWS_SQL"),
    "ledger_summary": ("._ledger_read", "ledger_summary"),
    "ledger_uri": ("._ledger_read", "ledger_uri"),
    "ledger_view": ("._ledger_read", "ledger_view"),
    "read_ledger": ("._ledger_read", "read_ledger"),
    "read_ledger_summary": ("._ledger_read", "read_ledger_summary"),
    "legacy_grader_attempts": ("._paid_calls", "legacy_grader_attempts"),
    "PRICES_FILE": ("._prices", "PRICES_FILE"),
    "load_prices": ("._prices", "load_prices"),
    "tokens_dict": ("._report_data", "tokens_dict"),
    "served_report": ("._report_links", "served_report"),
    "PLOT_CSS": ("._report_plots", "PLOT_CSS"),
    "plots_section": ("._report_plots", "plots_section"),
    "sequential_html": ("._report_sequential", "sequential_html"),
    "SEQUENTIAL": ("._sequential", "SEQUENTIAL"),
    "decision_record": ("._sequential", "decision_record"),
    "sequential_of": ("._sequential", "sequential_of"),
    "sequential_section": ("._sequential", "sequential_section"),
    "stopping_rule": ("._sequential", "stopping_rule"),
    "task_rows": ("._sequential", "task_rows"),
    "Attempt": ("._state", "Attempt"),
    "INITIAL_REVIEW": ("._state", "INITIAL_REVIEW"),
    "RunState": ("._state", "RunState"),
    "STATES": ("._state", "STATES"),
    "fold": ("._state", "fold"),
    "status_of": ("._status", "status_of"),
    "status_view": ("._status", "status_view"),
    "Group": ("._status_groups", "Group"),
    "RunFacts": ("._status_groups", "RunFacts"),
    "status_of_groups": ("._status_groups", "status_of_groups"),
    "summable": ("._status_groups", "summable"),
    "side_lines": ("._status_notes", "side_lines"),
    "LeftRunning": ("._status_types", "LeftRunning"),
    "Owner": ("._status_types", "Owner"),
    "Status": ("._status_types", "Status"),
    "attempt_rows": ("._view", "attempt_rows"),
    "run_row": ("._view", "run_row"),
}


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where[0], __name__), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # the names above, for type checkers; ._report is imported when a report is built
    from pathlib import Path

    from ..events import OUTCOMES, VANILLA
    from ._check_votes import CheckVotes, PaidCall
    from ._cross import CrossReportFiles
    from ._generation import Generations, generation_rows, generation_sessions, generation_totals
    from ._integrity import (
        CheckedFold,
        check_frozen,
        check_results_version,
        fold_checked_log,
        frozen_changes,
        ledger_last_seq,
        read_checked_log,
    )
    from ._ledger import Ledger
    from ._ledger_read import (
        READ_META_SQL,
        READ_MODE_SQL,
        READ_ROWS_SQL,
        LedgerSummary,
        LedgerView,
        ledger_summary,
        ledger_uri,
        ledger_view,
        read_ledger,
        read_ledger_summary,
    )
    from ._paid_calls import legacy_grader_attempts
    from ._prices import PRICES_FILE, load_prices
    from ._report import ReportFiles
    from ._report_data import tokens_dict
    from ._report_links import served_report
    from ._report_plots import PLOT_CSS, plots_section
    from ._report_sequential import sequential_html
    from ._sequential import (
        SEQUENTIAL,
        decision_record,
        sequential_of,
        sequential_section,
        stopping_rule,
        task_rows,
    )
    from ._state import INITIAL_REVIEW, STATES, Attempt, RunState, fold
    from ._status import status_of, status_view
    from ._status_groups import Group, RunFacts, status_of_groups, summable
    from ._status_notes import side_lines
    from ._status_types import LeftRunning, Owner, Status
    from ._view import attempt_rows, run_row


def build_cross_report(group_root: Path) -> CrossReportFiles:
    """Rebuild a cross-agent evaluation's ``report/`` (the package × harness matrix) from its
    runs' logs; see :mod:`._cross`."""
    from ._cross import build_cross_report as _build

    return _build(group_root)


def build_report(run_dir: Path) -> ReportFiles:
    """Rebuild ``report/`` from the log and frozen evidence; see :mod:`._report`."""
    from ._report import build_report as _build

    return _build(run_dir)


#: The modules a run's first report build loads beyond what the run itself has loaded (the
#: report's own, and what it imports on first use), for :func:`warm_report`.
REPORT_MODULES = (
    "pluginbench.projections._report",
    "pluginbench.projections._report_reviews",
    "pluginbench.review._response",
    "pluginbench.stats._intervals",
    "pluginbench.stats._verdict",
)


def warm_report() -> None:
    """Load what :func:`build_report` loads on its first call (:data:`REPORT_MODULES`, the
    event decoder, and the bundled price table's reader and decoder), writing nothing: a run
    does it while an agent works, so its report is built warm after the last attempt."""
    for name in REPORT_MODULES:
        importlib.import_module(name)
    from ..events import decoder
    from ..stats import bundled_prices

    decoder()
    bundled_prices()


__all__ = [
    "REPORT_MODULES",
    "warm_report",
    "side_lines",
    "CheckVotes",
    "PaidCall",
    "legacy_grader_attempts",
    "served_report",
    "Generations",
    "generation_rows",
    "generation_sessions",
    "generation_totals",
    "SEQUENTIAL",
    "decision_record",
    "sequential_of",
    "sequential_section",
    "stopping_rule",
    "task_rows",
    "INITIAL_REVIEW",
    "OUTCOMES",
    "PLOT_CSS",
    "PRICES_FILE",
    "READ_META_SQL",
    "READ_MODE_SQL",
    "READ_ROWS_SQL",
    "STATES",
    "VANILLA",
    "Attempt",
    "CheckedFold",
    "Group",
    "LedgerSummary",
    "Ledger",
    "LedgerView",
    "LeftRunning",
    "Owner",
    "RunFacts",
    "RunState",
    "Status",
    "attempt_rows",
    "build_cross_report",
    "build_report",
    "fold",
    "fold_checked_log",
    "ledger_summary",
    "ledger_uri",
    "ledger_view",
    "load_prices",
    "plots_section",
    "sequential_html",
    "check_frozen",
    "check_results_version",
    "frozen_changes",
    "ledger_last_seq",
    "read_checked_log",
    "read_ledger",
    "read_ledger_summary",
    "run_row",
    "status_of",
    "status_of_groups",
    "status_view",
    "summable",
    "tokens_dict",
]
