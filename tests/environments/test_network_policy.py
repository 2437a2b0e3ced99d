"""A task's network_mode: parsed per phase, turned into each sandbox's policy, shown in the plan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pluginbench.cli import app
from pluginbench.errors import TaskError
from pluginbench.probe import find_cli
from pluginbench.tasks import load_task
from tests._prereq import require

ADD_NUMBERS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks" / "add-numbers"


def _task(tmp: Path, extra: dict[str, str]) -> Path:
    """add-numbers with ``extra`` (table -> TOML lines) appended to its tables."""
    root = tmp / "tasks" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, root)
    text = (root / "task.toml").read_text()
    for table, lines in extra.items():
        text = text.replace(f"[{table}]\n", f"[{table}]\n{lines}\n")
    (root / "task.toml").write_text(text)
    return root


def test_network_mode_is_read_per_phase_with_environment_and_allow_internet_fallbacks(tmp_path):
    """[agent] and [verifier] network_mode win; [environment].network_mode, then allow_internet, fill in; none
    declared is None."""
    t = load_task(_task(tmp_path / "a", {"agent": 'network_mode = "no-network"', "verifier": 'network_mode = "public"'}))
    assert (t.agent_network_mode, t.verifier_network_mode) == ("no-network", "public")
    t = load_task(_task(tmp_path / "b", {"environment": 'network_mode = "no-network"'}))
    assert (t.agent_network_mode, t.verifier_network_mode) == ("no-network", "no-network")
    t = load_task(_task(tmp_path / "c", {"environment": "allow_internet = true"}))
    assert (t.agent_network_mode, t.verifier_network_mode) == ("public", "public")
    t = load_task(_task(tmp_path / "d", {}))
    assert (t.agent_network_mode, t.verifier_network_mode) == (None, None)


def test_an_unknown_network_mode_names_the_field(tmp_path):
    """network_mode = "host" is refused, naming agent.network_mode and the allowed values."""
    with pytest.raises(TaskError) as raised:
        load_task(_task(tmp_path, {"agent": 'network_mode = "host"'}))
    assert raised.value.field == "agent.network_mode" and "no-network" in str(raised.value.fix)


def test_dry_run_shows_each_tasks_network_policy(tmp_path):
    """run --dry-run (text and --json) says a probe run's coding sandbox reaches only the probe and a verifier
    of a no-network task nothing."""
    _task(tmp_path, {"verifier": 'network_mode = "no-network"'})
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump({"name": "s", "final": {"text": "ok"}}))
    config = tmp_path / "evaluation.yaml"
    config.write_text(yaml.safe_dump({
        "name": "net", "tasks": {"source": str(tmp_path / "tasks"), "ids": ["add-numbers"]}, "treatments": {},
        "runner": {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low", "probe": str(scenario)},
        "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 60,
    }))
    require(find_cli("claude") is not None, "claude CLI (tools/install-clis.sh)")
    result = CliRunner().invoke(app, ["run", str(config), "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["network"] == {
        "add-numbers": {"coding": "loopback + probe", "verifier": "loopback only"}}
    text = CliRunner().invoke(app, ["run", str(config), "--dry-run"]).output
    assert "network add-numbers: coding loopback + probe; verifier and readiness loopback only" in text
