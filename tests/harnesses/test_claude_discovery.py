"""Discovery receipts from real Claude Code 2.1.328 control-protocol output, compared to declarations."""

from __future__ import annotations

import json
from pathlib import Path

from pluginbench.harnesses._claude_checks import after_run_checks
from pluginbench.harnesses._claude_discovery import (
    REQUESTS,
    Expected,
    Paths,
    build_receipt,
    compare_receipt,
    control_request,
    user_message,
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
    return build_receipt((DATA / "session.discovery.stdout.jsonl").read_text(), RECORDED, probe=True)


def test_control_phase_sends_no_user_message_and_only_summary_context_usage() -> None:
    """The control requests never include a model-calling subtype; context usage is asked in summary mode."""
    lines = [json.loads(control_request(i, sub, params)) for i, (sub, params) in enumerate(REQUESTS, 1)]
    subs = [ln["request"]["subtype"] for ln in lines]
    assert all(ln["type"] == "control_request" for ln in lines)
    assert "generate_session_title" not in subs and "side_question" not in subs
    ctx = [ln["request"] for ln in lines if ln["request"]["subtype"] == "get_context_usage"]
    assert ctx == [{"subtype": "get_context_usage", "detail": "summary"}]
    task = json.loads(user_message("Fix it."))
    assert task["type"] == "user" and task["message"] == {"role": "user", "content": "Fix it."}


def test_recorded_receipt_matches_its_declared_treatment(tmp_path: Path) -> None:
    """The receipt of the recorded attempt equals its declaration, with the zero-cost proof."""
    receipt = _receipt()
    assert compare_receipt(receipt, Expected(_declared(tmp_path), "2.1.328", MODEL, True)) == []
    assert receipt["usage_before_task"]["total_cost_usd"] == 0 and receipt["usage_before_task"]["model_usage"] == {}
    assert receipt["task_owned"]["memory_files"] == [] and receipt["task_owned"]["skills"] == []


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


def test_a_model_call_before_the_task_fails_the_proof(tmp_path: Path) -> None:
    """Session usage other than zero before the task was sent is a mismatch."""
    receipt = _receipt()
    receipt["usage_before_task"] = {**receipt["usage_before_task"], "total_cost_usd": 0.01,
                                    "model_usage": {MODEL: {"inputTokens": 3}}}
    problems = compare_receipt(receipt, Expected(_declared(tmp_path), "2.1.328", MODEL, True))
    assert any("no-model-call proof" in p for p in problems)


def test_task_owned_files_are_listed_apart_and_must_come_from_the_repository(tmp_path: Path) -> None:
    """Project CLAUDE.md and skills go to task_owned (vanilla stays clean); one outside the repository is refused."""
    vanilla = admit_claude_treatment([], [], [])
    lines = [
        {"type": "control_response", "response": {"subtype": "success", "request_id": "pb_5_get_context_usage",
         "response": {"memoryFiles": [{"path": "/app/CLAUDE.md", "type": "Project"}],
                      "skills": {"skillFrontmatter": [{"name": "repo-skill", "source": "projectSettings",
                                                       "path": "/app/.claude/skills/repo-skill/SKILL.md"}]},
                      "agents": []}}},
        {"type": "control_response", "response": {"subtype": "success", "request_id": "pb_7_get_skills_dialog",
         "response": {"skills": [{"name": "repo-skill", "source": "project", "state": "on"}]}}},
    ]
    stdout = "\n".join(json.dumps(x) for x in lines)
    receipt = build_receipt(stdout, RECORDED, probe=True)
    assert receipt["task_owned"]["memory_files"] == [{"path": "<cwd>/CLAUDE.md", "type": "Project"}]
    assert receipt["task_owned"]["skills"] == [{"name": "repo-skill", "source": "projectSettings",
                                                "path": "<cwd>/.claude/skills/repo-skill/SKILL.md"}]
    assert receipt["skills"] == [] and receipt["memory_files"] == [] and receipt["skills_dialog"] == []
    problems = " | ".join(compare_receipt(receipt, Expected(vanilla, "2.1.328", MODEL, True)))
    assert "skills differ" not in problems and "memory files" not in problems and "outside" not in problems
    outside = build_receipt(stdout.replace('"/app/CLAUDE.md"', '"/CLAUDE.md"'), RECORDED, probe=True)
    assert any("outside the task repository" in p
               for p in compare_receipt(outside, Expected(vanilla, "2.1.328", MODEL, True)))


def test_research_reference_config_is_refused_for_loose_user_items_and_mcp(tmp_path: Path) -> None:
    """The research's reference discovery (user agent, user command, MCP server) fails every check it should."""
    path = SAMPLES / "discovery" / "recipe.transcript.json"
    recipe = json.loads(path.read_text())
    stdout = "\n".join(json.dumps(r["msg"]) for r in recipe["received"])
    receipt = build_receipt(stdout, Paths("/lab/runs/ref/cfg", "/lab/fixtures/market", "/lab/runs/ref/work"),
                            probe=False)
    problems = " | ".join(compare_receipt(receipt, Expected(admit_claude_treatment([], [], []), "2.1.328",
                                                            "claude-sonnet-4-5", False)))
    for word in ("user-agent", "MCP servers", "user-cmd"):
        assert word in problems
    assert [s["name"] for s in receipt["task_owned"]["skills"]] == ["proj-skill"]


def test_after_run_checks_pass_on_the_recorded_attempt(tmp_path: Path) -> None:
    """The recorded coding session passes every after-run check against its receipt."""
    summary = parse_stream((DATA / "session.stdout.jsonl").read_text())
    assert after_run_checks(summary, _receipt(), _declared(tmp_path), model=MODEL, cli_version="2.1.328",
                            subagents=True, trees_unchanged=True) == []


def test_after_run_checks_catch_denials_missing_hooks_and_changed_trees(tmp_path: Path) -> None:
    """A denial, a missing SessionStart run, a wrong mode and a changed tree each fail a check."""
    text = (DATA / "session.stdout.jsonl").read_text()
    no_hook = "\n".join(ln for ln in text.splitlines() if "hook_" not in ln)
    mode = no_hook.replace('"permissionMode":"bypassPermissions"', '"permissionMode":"default"')
    denied = mode + '\n{"type":"system","subtype":"permission_denied","tool_name":"Bash"}'
    problems = " | ".join(after_run_checks(parse_stream(denied), _receipt(), _declared(tmp_path), model=MODEL,
                                           cli_version="2.1.328", subagents=True, trees_unchanged=False))
    for word in ("SessionStart:startup", "permission mode", "denial", "tree changed"):
        assert word in problems


def test_after_run_checks_refuse_agent_tool_when_subagents_are_off(tmp_path: Path) -> None:
    """With subagents off, an offered Task/Agent tool fails the pinned tool-set check."""
    summary = parse_stream((DATA / "session.stdout.jsonl").read_text())
    problems = after_run_checks(summary, _receipt(), _declared(tmp_path), model=MODEL, cli_version="2.1.328",
                                subagents=False, trees_unchanged=True)
    assert any("disallowed tools" in p and "Task" in p for p in problems)


def test_discovery_identity_ignores_the_attempt_and_binds_what_loaded(tmp_path: Path) -> None:
    """Receipts that differ only per attempt (session id, timings) share an identity; a changed component,
    task-owned file or launch flag changes it."""
    from pluginbench.harnesses import discovery_identity

    first = {**_receipt(), "argv": ["-p", "--model", MODEL, "--session-id", "a"], "attempt_id": "a1", "seconds": 1.0}
    second = {**first, "argv": ["-p", "--model", MODEL, "--session-id", "b"], "attempt_id": "a2", "seconds": 2.5,
              "usage_before_task": {**first["usage_before_task"], "total_duration_ms": 999}}
    ident = discovery_identity(first)
    assert ident == discovery_identity(second)
    assert ident.launch == ("-p", "--model", MODEL) and ident.passed is False
    assert discovery_identity({**first, "skills": []}).components_sha256 != ident.components_sha256
    changed_task = {**first, "task_owned": {**first["task_owned"], "memory_files": [{"path": "<cwd>/CLAUDE.md"}]}}
    assert discovery_identity(changed_task).task_owned_sha256 != ident.task_owned_sha256
    assert discovery_identity({**first, "argv": ["-p", "--model", "claude-x-1"]}).launch != ident.launch


def test_a_discovery_with_hooks_enabled_is_refused(tmp_path: Path) -> None:
    """A control phase that ran with hooks on (and ran the SessionStart hook) does not pass as discovery."""
    hooks_on = build_receipt((DATA / "session.control.stdout.jsonl").read_text(), RECORDED, probe=True)
    problems = " | ".join(compare_receipt(hooks_on, Expected(_declared(tmp_path), "2.1.328", MODEL, True)))
    assert "hooks were not disabled during discovery" in problems
    assert "hook event(s) during discovery" in problems
    recorded = _receipt()
    assert recorded["hooks_all_disabled"] is True and recorded["hook_events_before_task"] == 0
    assert recorded["discovery_flag_settings"] == {"disableAllHooks": True}


def test_discovery_argv_is_the_session_argv_with_hooks_disabled_and_its_own_session() -> None:
    """The discovery run keeps every coding flag, takes its own session id, persists nothing and disables hooks."""
    from pluginbench.harnesses._claude_discovery import discovery_argv
    from pluginbench.harnesses._claude_launch import session_argv

    coding = session_argv("claude", MODEL, "medium", "sid-code")
    argv = discovery_argv(coding, "sid-disc")
    assert argv[: len(coding)] == [a if a != "sid-code" else "sid-disc" for a in coding]
    assert argv[len(coding):] == ["--no-session-persistence", "--settings", '{"disableAllHooks":true}']
    assert coding.count("--settings") == 0  # one --settings only: the last one counts


def _manual_only(tmp: Path):
    from pluginbench.harnesses._port import FrozenTreatment
    from tests.harnesses._claude_pkg import write
    skill = tmp / "pkg" / "skills" / "manual-only"
    write(skill / "SKILL.md", "---\nname: manual-only\ndescription: Manual.\ndisable-model-invocation: true\n---\nbody\n")
    plugin = tmp / "pkg" / "plugins" / "pm"
    write(plugin / ".claude-plugin" / "plugin.json", json.dumps({"name": "pm", "version": "0.1.0"}))
    write(plugin / "skills" / "pman" / "SKILL.md",
          "---\nname: pman\ndescription: Plugin manual.\ndisable-model-invocation: true\n---\nbody\n")
    return FrozenTreatment("m", tmp / "pkg", (), (skill,), (plugin,), "fp")


def test_disable_model_invocation_skills_pass_as_user_invocable_only(tmp_path: Path) -> None:
    """Recorded real output: a loose and a plugin skill with disable-model-invocation: true pass
    discovery, are not among the skills offered to the model, and are listed user-invocable-only."""
    ft = _manual_only(tmp_path)
    declared = admit_claude_treatment(ft.guidance, ft.skills, ft.plugins)
    receipt = build_receipt((DATA / "manual-only.control.stdout.jsonl").read_text(), RECORDED, probe=True)
    assert compare_receipt(receipt, Expected(declared, "2.1.328", MODEL, True)) == []
    assert receipt["skills"] == []
    assert receipt["skills_user_invocable_only"] == [
        {"name": "manual-only", "source": "userSettings", "state": "user-invocable-only"},
        {"name": "pm:pman", "source": "plugin", "state": "user-invocable-only"}]


def test_a_model_invocable_declaration_refuses_a_user_invocable_only_skill(tmp_path: Path) -> None:
    """Declared model-invocable, found user-invocable-only (or the reverse): discovery fails naming the skill."""
    ft = _manual_only(tmp_path)
    for md in (ft.skills[0] / "SKILL.md", ft.plugins[0] / "skills" / "pman" / "SKILL.md"):
        md.write_text(md.read_text().replace("disable-model-invocation: true\n", ""))
    declared = admit_claude_treatment(ft.guidance, ft.skills, ft.plugins)
    receipt = build_receipt((DATA / "manual-only.control.stdout.jsonl").read_text(), RECORDED, probe=True)
    text = " | ".join(compare_receipt(receipt, Expected(declared, "2.1.328", MODEL, True)))
    assert "skills differ (offered to the model)" in text and "user-invocable-only skills differ" in text
    assert "skill manual-only is 'user-invocable-only', not on" in text


def test_coding_control_phase_equals_its_discovery_run_and_drift_is_named() -> None:
    """The recorded coding process's control answers (hooks on, hook events) equal the discovery receipt; an
    extra skill, disabled hooks or a model call before the task is each named."""
    from pluginbench.harnesses._claude_discovery import compare_coding

    coding = build_receipt((DATA / "session.control.stdout.jsonl").read_text(), RECORDED, probe=True)
    assert coding["hook_events_before_task"] > 0 and compare_coding(coding, _receipt()) == []
    drift = {**coding, "skills": [*coding["skills"], {"name": "ghost"}]}
    assert [p.split(":")[0] for p in compare_coding(drift, _receipt())] == [
        "the coding session's skills differs from the discovery receipt"]
    assert compare_coding({**coding, "hooks_all_disabled": True}, _receipt()) == [
        "hooks are disabled in the coding session"]
    spent = {**coding, "usage_before_task": {**coding["usage_before_task"], "total_cost_usd": 0.01}}
    assert "no-model-call proof failed" in compare_coding(spent, _receipt())[0]


def test_cache_key_ignores_the_session_id_and_follows_files_argv_and_facts() -> None:
    """Two attempts differing only in session id share a key; any delivered file, argv or judged fact changes it."""
    from pluginbench.harnesses._claude_cache import cache_key

    base = {"files": b"absent\ncli 1 2 3 4\n/cfg/settings.json abc  -\n", "cli_version": "2.1.328",
            "argv": ["claude", "-p", "--session-id", "s1"], "env": {"HOME": "/home/agent"}, "paths": ["/app"],
            "model": MODEL, "arm": "core", "treatment": "fp", "facts": {"trees": {"skill:x": "1"}}}
    key = cache_key(**base)
    assert cache_key(**{**base, "argv": ["claude", "-p", "--session-id", "s2"]}) == key
    for change in ({"files": base["files"] + b"/app/CLAUDE.md def  -\n"}, {"argv": ["claude", "-p", "--x"]},
                   {"facts": {"trees": {"skill:x": "2"}}}, {"cli_version": "2.1.329"}):
        assert cache_key(**{**base, **change}) != key
