"""Receipts list exactly what the real CLIs give the model (issue 23): Claude Code's
user-invocable-only skills pass discovery, Codex's unoffered system skills are not listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.harnesses._port import FrozenTreatment
from pluginbench.probe import ProbeServer, find_cli, load_scenario
from tests._prereq import require
from tests.harnesses import test_claude_realcli as claude_rc
from tests.harnesses import test_codex_realcli as codex_rc
from tests.harnesses._claude_pkg import write

pytestmark = pytest.mark.realcli


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _manual_only_package(tmp: Path) -> FrozenTreatment:
    skill = tmp / "pkg" / "skills" / "manual-only"
    write(skill / "SKILL.md", "---\nname: manual-only\ndescription: Manual.\ndisable-model-invocation: true\n---\nbody\n")
    plugin = tmp / "pkg" / "plugins" / "pm"
    write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "pm", "version": "0.1.0"}))
    write(plugin / "skills" / "pman" / "SKILL.md",
          "---\nname: pman\ndescription: Plugin manual.\ndisable-model-invocation: true\n---\nbody\n")
    return FrozenTreatment("manual", tmp / "pkg", (), (skill,), (plugin,), "fp")


@pytest.mark.anyio
async def test_claude_disable_model_invocation_skills_pass_discovery(tmp_path: Path) -> None:
    """A loose and a plugin skill with disable-model-invocation: true pass discovery on the real CLI; the
    receipt lists them user-invocable-only and not among the skills offered to the model; the attempt codes."""
    cli = find_cli("claude")
    require(cli is not None, "Claude Code in .tools/clis (tools/install-clis.sh)")
    assert cli is not None
    scen = load_scenario(write(tmp_path / "s.yaml", claude_rc.SCENARIO))
    with ProbeServer(scen) as probe:
        _, run, adir, out, _ = await claude_rc._attempt(cli, tmp_path, probe, _manual_only_package(tmp_path), "m")
        probe.wait_idle(timeout=60)
    receipt = json.loads((adir / "native-treatment.json").read_text())
    assert receipt["passed"], receipt["problems"]
    assert receipt["skills"] == []
    assert receipt["skills_user_invocable_only"] == [
        {"name": "manual-only", "source": "userSettings", "state": "user-invocable-only"},
        {"name": "pm:pman", "source": "plugin", "state": "user-invocable-only"}]
    assert sorted(receipt["commands"]) == ["manual-only", "pm:pman"]
    assert run.error is None and (out / "answer.txt").read_text() == "vanilla\n"


@pytest.mark.anyio
async def test_codex_receipt_lists_only_offered_system_skills(tmp_path: Path) -> None:
    """The real Codex receipt's ambient skills are exactly the system skills its rendered input
    offers (review-agent is installed but never offered), and the declared skill is offered."""
    cli = find_cli("codex")
    require(cli is not None, "codex in .tools/clis (tools/install-clis.sh)")
    assert cli is not None
    pkg = tmp_path / "pkg"
    treatment = FrozenTreatment("s", pkg, (), (codex_rc.skill(pkg),), (codex_rc.plugin(pkg),), "fp")
    run, error, _, _, _, adir = await codex_rc.attempt(tmp_path, cli, "edit-file.yaml", treatment)
    assert error is None and run is not None
    receipt = json.loads((adir / "native-treatment.json").read_text())
    assert receipt["ok"], receipt["mismatches"]
    assert "system:review-agent" not in receipt["ambient_skills"]
    offered = receipt["offered_skills"]
    assert {s.split(":", 1)[1] for s in receipt["ambient_skills"]} <= set(offered)
    assert "careful-edits" in offered and "starter:plug-skill" in offered and "review-agent" not in offered
