"""Projections: pure folds of the event log (and frozen evidence) into views.

Public surface: :class:`RunState`/:func:`fold` (the run aggregate), :func:`status_view`/:func:`status_of`
(``status --json`` as a pure view of the rows or the state, typed :class:`Status`; the I/O is in
:mod:`pluginbench.status`), :class:`Ledger`/:func:`read_ledger` (``evidence/ledger.sqlite``),
and :func:`build_report` (``report/``: results.json, results.csv, report.html).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import OUTCOMES, VANILLA
from ._check_votes import CheckVotes, PaidCall
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
from ._ledger import (
    READ_META_SQL,
    READ_MODE_SQL,
    READ_ROWS_SQL,
    Ledger,
    LedgerSummary,
    LedgerView,
    ledger_summary,
    ledger_uri,
    ledger_view,
    read_ledger,
    read_ledger_summary,
)
from ._paid_calls import legacy_grader_attempts
from ._report_cost import PRICES_FILE, load_prices
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
from ._status import Group, RunFacts, status_of, status_of_groups, status_view, summable
from ._status_notes import side_lines
from ._status_types import LeftRunning, Owner, Status
from ._view import attempt_rows, run_row

if TYPE_CHECKING:  # ._report is imported when a report is built, not with the package
    from pathlib import Path

    from ._cross import CrossReportFiles
    from ._report import ReportFiles


def build_cross_report(group_root: Path) -> CrossReportFiles:
    """Rebuild a cross-agent evaluation's ``report/`` (the package × harness matrix) from its
    runs' logs; see :mod:`._cross`."""
    from ._cross import build_cross_report as _build

    return _build(group_root)


def build_report(run_dir: Path) -> ReportFiles:
    """Rebuild ``report/`` from the log and frozen evidence; see :mod:`._report`."""
    from ._report import build_report as _build

    return _build(run_dir)


__all__ = [
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
