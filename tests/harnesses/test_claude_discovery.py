"""Discovery receipts from real Claude Code 2.1.328 control-protocol output, compared to declarations."""

from __future__ import annotations

import json
from pathlib import Path

from pluginbench.harnesses._claude_checks import after_run_checks
from pluginbench.harnesses._claude_discovery import (
    Expected,
    Paths,
    build_receipt,
    compare_receipt,
    discovery_stdin,
)
from pluginbench.harnesses._claude_stream import parse_stream
from pluginbench.treatments import admit_claude_treatment
from tests.harnesses._claude_pkg import sample_treatment
from tests.harnesses.test_claude_stream import DATA, SAMPLES

MODEL = "claude-sonnet-4-5"
RECORDED = Paths("/home/agent/.claude-config", "/home/agent/.pluginbench-marketplace", "/app")


def _declared(tmp: Path):
    ft = sample_treatment(tmp)
    return admit_claude_treatment(ft.guidance, ft.skills, ft.plugins)


def _receipt() -> dict:
    return build_receipt((DATA / "treatment.discovery.stdout.jsonl").read_text(), RECORDED, probe=True)


def test_stdin_sends_no_user_message_but_the_local_cost_command() -> None:
    """Discovery input holds control requests, one /cost turn, and context usage only in summary mode."""
    lines = [json.loads(ln) for ln in discovery_stdin().decode().splitlines()]
    users = [ln for ln in lines if ln["type"] == "user"]
    assert [u["message"]["content"] for u in users] == ["/cost"]
    subs = [ln["request"]["subtype"] for ln in lines if ln["type"] == "control_request"]
    assert "generate_session_title" not in subs and "side_question" not in subs
    ctx = [ln["request"] for ln in lines if ln.get("request", {}).get("subtype") == "get_context_usage"]
    assert ctx == [{"subtype": "get_context_usage", "detail": "summary"}]
    assert subs[-1] == "end_session"


def test_recorded_receipt_matches_its_declared_treatment(tmp_path: Path) -> None:
    """The receipt of the recorded attempt equals its declaration, with the zero-cost proof."""
    receipt = _receipt()
    assert compare_receipt(receipt, Expected(_declared(tmp_path), "2.1.328", MODEL, True)) == []
    assert receipt["cost"]["local_command"] == "cost" and receipt["cost"]["total_cost_usd"] == 0


def test_vanilla_declaration_refuses_the_recorded_components(tmp_path: Path) -> None:
    """Against a vanilla declaration the same receipt fails on skills, plugins, hooks and memory."""
    vanilla = admit_claude_treatment([], [], [])
    problems = compare_receipt(_receipt(), Expected(vanilla, "2.1.328", MODEL, True))
    text = " | ".join(problems)
    for word in ("skills differ", "plugins differ", "hooks differ", "memory files", "tidy-code"):
        assert word in text


def test_other_pinned_version_or_model_is_a_mismatch(tmp_path: Path) -> None:
    """A different pinned version or model is reported."""
    declared = _declared(tmp_path)
    assert any("CLI version" in p for p in compare_receipt(_receipt(), Expected(declared, "2.1.322", MODEL, True)))
    assert any("model" in p for p in compare_receipt(_receipt(), Expected(declared, "2.1.328", "claude-x-1", True)))


def test_real_run_requires_the_credentials_file_as_only_source(tmp_path: Path) -> None:
    """Outside probe mode an API key source other than none is refused."""
    receipt = _receipt()
    receipt["init"]["api_key_source"] = "ANTHROPIC_API_KEY"
    problems = compare_receipt(receipt, Expected(_declared(tmp_path), "2.1.328", MODEL, False))
    assert any("credential source" in p for p in problems)


def test_research_reference_config_is_refused_for_loose_project_and_mcp_items(tmp_path: Path) -> None:
    """The research's reference discovery (user agent, project skill, MCP server) fails every check it should."""
    path = SAMPLES / "discovery" / "recipe.transcript.json"
    recipe = json.loads(path.read_text())
    stdout = "\n".join(json.dumps(r["msg"]) for r in recipe["received"])
    receipt = build_receipt(stdout, Paths("/lab/runs/ref/cfg", "/lab/fixtures/market", "/lab/runs/ref/work"),
                            probe=False)
    problems = " | ".join(compare_receipt(receipt, Expected(admit_claude_treatment([], [], []), "2.1.328",
                                                            "claude-sonnet-4-5", False)))
    for word in ("proj-skill", "user-agent", "MCP servers", "user-cmd", "credential"):
        assert word in problems
    assert receipt["cost"]["total_cost_usd"] == 0 and receipt["cost"]["session_after"]["model_usage"] == {}


def test_after_run_checks_pass_on_the_recorded_attempt(tmp_path: Path) -> None:
    """The recorded coding session passes every after-run check against its receipt."""
    summary = parse_stream((DATA / "treatment.stream.jsonl").read_text())
    assert after_run_checks(summary, _receipt(), _declared(tmp_path), model=MODEL, cli_version="2.1.328",
                            subagents=True, trees_unchanged=True) == []


def test_after_run_checks_catch_denials_missing_hooks_and_changed_trees(tmp_path: Path) -> None:
    """A denial, a missing SessionStart run, a wrong mode and a changed tree each fail a check."""
    text = (DATA / "treatment.stream.jsonl").read_text()
    no_hook = "\n".join(ln for ln in text.splitlines() if "hook_" not in ln)
    mode = no_hook.replace('"permissionMode":"bypassPermissions"', '"permissionMode":"default"')
    denied = mode + '\n{"type":"system","subtype":"permission_denied","tool_name":"Bash"}'
    problems = " | ".join(after_run_checks(parse_stream(denied), _receipt(), _declared(tmp_path), model=MODEL,
                                           cli_version="2.1.328", subagents=True, trees_unchanged=False))
    for word in ("SessionStart:startup", "permission mode", "denial", "tree changed"):
        assert word in problems


def test_after_run_checks_refuse_agent_tool_when_subagents_are_off(tmp_path: Path) -> None:
    """With subagents off, an offered Task/Agent tool fails the pinned tool-set check."""
    summary = parse_stream((DATA / "treatment.stream.jsonl").read_text())
    problems = after_run_checks(summary, _receipt(), _declared(tmp_path), model=MODEL, cli_version="2.1.328",
                                subagents=False, trees_unchanged=True)
    assert any("disallowed tools" in p and "Task" in p for p in problems)
