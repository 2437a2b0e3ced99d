"""One writer: every event reaches events.jsonl through the Supervisor's writer path (RunWriter)."""

from __future__ import annotations

import ast
from pathlib import Path

from pluginbench.actors import create_run
from pluginbench.actors._decide import decide
from pluginbench.config import load
from pluginbench.events import read_events
from pluginbench.projections import RunState, fold, read_ledger
from pluginbench.projections._view import attempt_rows, run_row
from tests.runs_helpers import write_config

PACKAGE = Path(__file__).resolve().parents[2] / "pluginbench"


def test_run_created_is_written_by_the_supervisors_writer(tmp_path: Path) -> None:
    """Creating a run appends run.created and updates the ledger as the Supervisor's writer does, so both agree from the first event."""
    rd = create_run(load(write_config(tmp_path)), tmp_path / "run")
    events = read_events(rd.events)
    assert [type(e).__name__ for e in events] == ["RunCreated"]
    view = read_ledger(rd.ledger)
    assert view is not None and view.last_seq == 1
    state = fold(events)
    assert (view.run, view.attempts) == (run_row(state), attempt_rows(state))


def test_nothing_follows_from_run_created() -> None:
    """decide() asks for nothing on run.created alone, so creation drops no command by not running a loop."""
    from tests.actors.test_decide import created

    state = RunState()
    event = created()
    state.apply(event)
    assert decide(state, event) == []


def _appends_to_a_log(tree: ast.AST) -> list[int]:
    """Lines calling ``<…log>.append(…)`` (an EventLog's append)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append":
            target = node.func.value
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name == "log":
                lines.append(node.lineno)
    return lines


def test_only_the_writer_appends_to_the_log() -> None:
    """RunWriter.record is the one caller of EventLog.append; the one exception is the worker's run.failed on a full disk (the ledger cannot be written then)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "events":
            continue  # the log itself
        text = path.read_text()
        if "EventLog" not in text:
            continue  # a module that never holds the log (a list called ``log`` is not it)
        lines = _appends_to_a_log(ast.parse(text))
        if lines:
            found[str(path.relative_to(PACKAGE))] = len(lines)
    assert found == {"actors/_writer.py": 1, "actors/_worker.py": 1}
    worker = (PACKAGE / "actors" / "_worker.py").read_text()
    assert "log.append(RunFailed(" in worker
