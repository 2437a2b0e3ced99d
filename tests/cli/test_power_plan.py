"""Power before spending: check and run --dry-run (text and --json) say what the planned run can detect."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli._cli_helpers import run_cli
from tests.runs_helpers import write_config


def test_dry_run_gives_mde_and_tasks_needed(tmp_path: Path) -> None:
    """The plan's power block has the MDE at 80% power for its tasks × repeats and tasks for +10/+5 pp, with its
    assumption, and the text plan prints the same sentence."""
    config = write_config(tmp_path)
    code, out = run_cli("run", str(config), "--dry-run", "--json")
    assert code == 0, out
    plan = json.loads(out)
    power = plan["power"]
    assert power["tasks"] == len(plan["tasks"]) and power["repeats"] == plan["repeats"]
    assert power["tasks_needed"]["+10 pp"] > len(plan["tasks"]) and power["tasks_needed"]["+5 pp"] > power["tasks_needed"]["+10 pp"]
    assert "Beta(2, 2)" in power["assumption"] and power["alpha"] == 0.05 and power["power"] == 0.8
    code, text = run_cli("run", str(config), "--dry-run")
    assert code == 0 and "power: Planned, before any result: with" in text and "+10 pp needs" in text
