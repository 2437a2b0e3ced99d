"""The Supervisor and its actors end to end on real local sandboxes, under asyncio and trio."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.actors import Supervisor, build_engine, create_run, load_saved
from pluginbench.config import load
from pluginbench.events import EventLog
from pluginbench.projections import Ledger, fold
from pluginbench.rundir import RunDir
from tests.runs_helpers import write_config


async def _drive(run_dir: Path) -> object:
    rd = RunDir(run_dir)
    saved = load_saved(rd)
    log = EventLog(rd.events)
    state = fold(log.recovered)
    ledger = Ledger(rd.ledger)
    engine = build_engine(rd, saved.evaluation, None)
    try:
        return await Supervisor(engine, log, ledger, state, handle_signals=False).run(resumed=False)
    finally:
        log.close()
        ledger.close()


@pytest.mark.anyio
@pytest.mark.parametrize("harness, expected", [("nop", {"empty"}), ("oracle", {"pass"})])
async def test_controls_run_to_completion(tmp_path: Path, harness: str, expected: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """nop leaves every patch empty and oracle passes every task, through the same path real agents take."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = write_config(tmp_path, harness=harness, tasks=["roman-numerals"], repeats=1, environment={"isolation": "none"})
    rd = create_run(load(config), tmp_path / "run")
    state = await _drive(rd.root)
    assert state.finished  # type: ignore[attr-defined]
    outcomes = {a.outcome for a in state.live_attempts()}  # type: ignore[attr-defined]
    assert outcomes == expected
    assert (rd.report_dir / "report.html").is_file()
    readiness = {(r.task, r.control): r.ok for r in state.readiness.values()}  # type: ignore[attr-defined]
    assert readiness == {("roman-numerals", "oracle"): True, ("roman-numerals", "nop"): True}
