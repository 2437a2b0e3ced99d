"""The capability policy: what each harness enforces, the Codex config it becomes, and where it is recorded."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from typer.testing import CliRunner

from pluginbench.cli import app
from pluginbench.config import Capabilities, capability_record, capability_record_of, load
from pluginbench.harnesses._codex import CodexHarness
from pluginbench.harnesses._codex_config import config_toml
from pluginbench.harnesses._port import FrozenTreatment
from tests.cli._cli_helpers import assert_refused, edit
from tests.runs_helpers import write_config

PROBE = "http://127.0.0.1:45678"


def test_codex_enforces_subagents_and_threads_but_not_depth():
    """On Codex subagents and max_threads are enforced (threads default to 4), max_depth is not_enforced."""
    rec = capability_record("codex", Capabilities())
    assert (rec["subagents"]["value"], rec["max_threads"]["value"], rec["max_depth"]["value"]) == (True, 4, 1)
    assert rec["subagents"]["enforcement"] == rec["max_threads"]["enforcement"] == "enforced"
    assert rec["max_depth"]["enforcement"] == "not_enforced" and rec["not_enforced"] == ["child_model", "max_depth"]
    assert capability_record("codex", Capabilities(max_threads=2, max_depth=3))["max_threads"]["value"] == 2


def test_claude_records_threads_and_depth_as_not_enforced():
    """On Claude Code max_threads and max_depth are not_enforced and subagents is enforced through the Agent tool."""
    rec = capability_record("claude", Capabilities(subagents=False))
    assert rec["not_enforced"] == ["max_depth", "max_threads"]
    assert rec["subagents"] == {"value": False, "enforcement": "enforced", "how": "the Agent tool is disallowed"}


def test_controls_record_not_applicable_and_the_mapping_form_agrees():
    """Controls start no native agent (not_applicable); the record from a saved config equals the typed one."""
    rec = capability_record("simulated", Capabilities())
    assert {rec[k]["enforcement"] for k in ("subagents", "max_threads", "max_depth")} == {"not_applicable"}
    assert rec["not_enforced"] == []
    saved = {"runner": {"harness": "codex"}, "capabilities": {"subagents": True, "max_threads": 3, "max_depth": None}}
    assert capability_record_of(saved) == capability_record("codex", Capabilities(max_threads=3))


def test_codex_config_carries_the_capability_policy():
    """config.toml sets [agents] max_threads/max_depth and hides the V2 spawn tool's model/effort when subagents are on, and turns both agent runtimes off when not."""
    on = tomllib.loads(config_toml(probe=None, capabilities=Capabilities(max_threads=2, max_depth=2)))
    assert on["agents"] == {"max_threads": 2, "max_depth": 2}
    assert "multi_agent" not in on["features"]
    assert on["features"]["multi_agent_v2"] == {"expose_spawn_agent_model_overrides": False}
    default = tomllib.loads(config_toml(probe=None))
    assert default["agents"] == {"max_threads": 4, "max_depth": 1}
    off = tomllib.loads(config_toml(probe=None, capabilities=Capabilities(subagents=False)))
    assert off["features"]["multi_agent"] is False and off["features"]["multi_agent_v2"] is False
    assert "agents" not in off


def test_codex_delivery_writes_the_policy_and_records_it_in_the_receipt(tmp_path):
    """The harness's delivered config.toml carries the run's capabilities and the receipt records them."""
    harness = CodexHarness("/x/codex", "0.169.0", PROBE, capabilities=Capabilities(subagents=False))
    receipt = harness.deliver(FrozenTreatment("vanilla", None, (), (), (), "f"), tmp_path / "home")
    cfg = tomllib.loads((tmp_path / "home" / ".codex" / "config.toml").read_text())
    assert cfg["features"]["multi_agent"] is False
    assert receipt["capabilities"] == capability_record("codex", Capabilities(subagents=False))


def test_dry_run_plan_records_capabilities(tmp_path: Path) -> None:
    """run --dry-run --json carries the capability record with its not_enforced list."""
    config = write_config(tmp_path, repeats=1)
    result = CliRunner().invoke(app, ["run", str(config), "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    caps = json.loads(result.output)["capabilities"]
    assert caps["not_enforced"] == [] and caps["subagents"]["enforcement"] == "not_applicable"
    text = CliRunner().invoke(app, ["run", str(config), "--dry-run"])
    assert "capabilities: subagents true (not_applicable), max_threads null (not_applicable)" in text.output


def test_max_depth_below_one_is_refused(tmp_path: Path) -> None:
    """capabilities.max_depth 0 is refused with the field and the fix."""
    config = edit(write_config(tmp_path), capabilities={"max_depth": 0})
    result = CliRunner().invoke(app, ["check", str(config)])
    assert_refused(result.exit_code, result.output, "capabilities.max_depth", "1 or more")


def test_results_json_identity_records_capabilities(tmp_path: Path) -> None:
    """results.json's run identity and comparison identity carry the capability record (with not_enforced)."""
    from tests.projections.test_report import RunBuilder, exact, load

    b = RunBuilder(tmp_path / "run", ["task-a"], harness="codex")
    b.complete("task-a", "vanilla", "pass", exact(100, 10))
    doc = load(b.close())
    run = doc["run"]
    assert run["capabilities"] == capability_record("codex", Capabilities())
    assert run["capabilities"]["not_enforced"] == ["child_model", "max_depth"]
    assert doc["comparison_identity"]["capabilities"] == run["capabilities"]


def test_claude_refuses_max_threads_and_max_depth_when_set(tmp_path: Path) -> None:
    """A Claude run with capabilities.max_threads or max_depth set is refused naming the field; subagents alone is fine."""
    claude = {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low", "probe": "scenario.yaml"}
    for key in ("max_threads", "max_depth"):
        folder = tmp_path / key
        folder.mkdir()
        config = edit(write_config(folder), runner=claude, capabilities={key: 2})
        result = CliRunner().invoke(app, ["run", str(config), "--dry-run", "--json"])
        assert_refused(result.exit_code, result.output, f"capabilities.{key}", "not enforced by Claude Code")
    folder = tmp_path / "ok"
    folder.mkdir()
    ok = load(edit(write_config(folder), runner=claude, capabilities={"subagents": False}))
    assert ok.evaluation.capabilities.subagents is False
