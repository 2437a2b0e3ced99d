"""Unknown is never zero: an agent harness that raises after ``agent.launched`` (while it runs the
agent or reads its trace) leaves the attempt's coding time unknown (``null``), or the wall time
it really measured before it failed; never the 0.0 s it used to record.

The harness is the real simulated adapter in a real local sandbox; only the fault is injected
(the sandbox's exec of the agent, or the adapter's stream parse, raises)."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pluginbench.actors import create_run, run_worker
from pluginbench.actors._pipeline import code_attempt
from pluginbench.cli import app
from pluginbench.config import load
from pluginbench.environments import LocalEnvironment, bwrap_available
from pluginbench.environments._local import LocalSandbox
from pluginbench.harnesses import FrozenTreatment, _simulated, make_harness
from pluginbench.projections import build_report
from pluginbench.tasks import load_task
from tests._prereq import require
from tests.runs_helpers import QUICKSTART, events_of, write_config

VANILLA = FrozenTreatment("vanilla", None, (), (), (), "none")


def _fail_the_agent_exec(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fault: the sandbox cannot start the simulated agent's process (every other exec runs)."""
    real = LocalSandbox.exec

    async def exec_(self: LocalSandbox, argv: Sequence[str], **kw: Any) -> Any:
        if len(argv) > 1 and str(argv[1]).endswith("/agent.py"):
            raise OSError("injected: the agent process could not be started")
        return await real(self, argv, **kw)

    monkeypatch.setattr(LocalSandbox, "exec", exec_)


async def _code(tmp_path: Path) -> Any:
    require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")
    task = load_task(QUICKSTART / "tasks" / "roman-numerals")

    async def launched(argv: object) -> None:
        return None

    return await code_attempt(
        environment=LocalEnvironment(isolation="bubblewrap", root=tmp_path / "boxes"),
        harness=make_harness("simulated"), run_id="r", attempt_id="a", task=task,
        starting_source=task.workspace_dir, treatment=VANILLA, attempt_dir=tmp_path / "attempt",
        model="simulated-1", reasoning=None, seed=3, timeout=60, hidden=(), launched=launched,
    )


@pytest.mark.anyio
async def test_a_harness_that_fails_before_measuring_leaves_the_coding_time_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent's exec raising after launch gives a harness error with coding_seconds None (execution.json: null)."""
    _fail_the_agent_exec(monkeypatch)
    result = await _code(tmp_path)
    assert result.run.error is not None and result.run.error.startswith("harness error: injected")
    assert result.run.coding_seconds is None
    assert result.run.usage.status == "unknown"
    assert json.loads((tmp_path / "attempt" / "execution.json").read_text())["coding_seconds"] is None


@pytest.mark.anyio
async def test_a_harness_that_fails_after_measuring_keeps_the_measured_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The adapter's stream parse raising after the agent ran keeps the wall time it measured (> 0, not 0.0)."""

    def broken(text: str) -> Any:
        raise ValueError("injected: the stream could not be read")

    monkeypatch.setattr(_simulated, "usage_from_stream", broken)
    result = await _code(tmp_path)
    assert result.run.error == "harness error: injected: the stream could not be read"
    assert isinstance(result.run.coding_seconds, float) and result.run.coding_seconds > 0
    assert json.loads((tmp_path / "attempt" / "execution.json").read_text())["coding_seconds"] == \
        result.run.coding_seconds


def test_a_run_whose_harness_failed_reports_its_coding_time_as_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """agent.exited carries coding_seconds null; results.json, the CSV, report.html and status show it as
    unknown, and the median coding time is unknown with the reason, never 0."""
    require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")
    _fail_the_agent_exec(monkeypatch)
    cfg = write_config(tmp_path, tasks=["roman-numerals"], treatments={}, jobs=1,
                       environment={"isolation": "bubblewrap"})
    rd = create_run(load(cfg), tmp_path / "run")
    run_worker(rd.root, handle_signals=False)
    (exited,) = [e for e in events_of(rd.root) if e["type"] == "agent.exited"]
    assert exited["coding_seconds"] is None and exited["error"].startswith("harness error: injected")
    build_report(rd.root)
    doc = json.loads((rd.root / "report" / "results.json").read_text())
    (attempt,) = doc["attempts"]
    assert attempt["coding_seconds"] is None
    assert doc["per_task"]["roman-numerals"]["vanilla"]["median_coding_seconds"] is None
    assert {(m["field"], m["reason"]) for m in doc["missing_values"]} >= {("coding_seconds", "no coding time was recorded")}
    rows = {r["measure"]: r for r in csv.DictReader((rd.root / "report" / "results.csv").open(encoding="utf-8"))}
    assert (rows["coding_seconds"]["value"], rows["coding_seconds"]["status"]) == ("", "unknown")
    html = (rd.root / "report" / "report.html").read_text()
    assert "no coding time was recorded" in html
    status = CliRunner().invoke(app, ["status", str(rd.root), "--json"])
    assert status.exit_code == 0 and json.loads(status.stdout)["attempts"][0]["minutes"] is None
