"""Zero-cost discovery of what a Claude Code session loads (pure parts).

The CLI is started with the coding session's own flags plus ``--input-format stream-json
--no-session-persistence --settings {"disableAllHooks":true}``; stdin carries only control
requests and the local ``/cost`` command (answered by the CLI itself: a full
``system/init`` and a $0 ``result`` with ``local_command: "cost"``), then ``end_session``.
No user message reaches the model (measured on the real CLI; a recorded transcript is in
tests/data/samples/claude-code-2.1.328/discovery).

:func:`discovery_stdin` builds the input, :func:`build_receipt` folds stdout into the
receipt saved as ``native-treatment.json``, :func:`compare_receipt` lists every way it
differs from the declared treatment (empty = pass).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from ..treatments import MARKETPLACE, ClaudeTreatment
from ._claude_launch import BUILTIN_AGENTS, PINNED_SETTINGS

REQUESTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("initialize", {}),
    ("get_binary_version", {}),
    ("get_settings", {}),
    ("get_hooks_listing", {}),
    # "summary" is essential: without it the CLI sends ~20 count_tokens API requests.
    ("get_context_usage", {"detail": "summary"}),
    ("get_memory_dialog", {}),
    ("get_skills_dialog", {}),
    ("mcp_status", {}),
    ("get_usage", {}),
)
AFTER_COST: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_usage", {}),
    ("get_session_cost", {}),
    ("end_session", {"reason": "pluginbench_discovery_done"}),
)


def discovery_stdin() -> bytes:
    """Control requests, the local ``/cost`` turn, more control requests, end_session."""
    lines = []
    for i, (sub, params) in enumerate(REQUESTS, 1):
        lines.append({"type": "control_request", "request_id": f"pb_{i}_{sub}",
                      "request": {"subtype": sub, **params}})
    lines.append({"type": "user", "message": {"role": "user", "content": "/cost"},
                  "parent_tool_use_id": None, "session_id": ""})
    for j, (sub, params) in enumerate(AFTER_COST, len(REQUESTS) + 1):
        lines.append({"type": "control_request", "request_id": f"pb_{j}_after_{sub}",
                      "request": {"subtype": sub, **params}})
    return ("\n".join(json.dumps(x) for x in lines) + "\n").encode()


class Paths(NamedTuple):
    """Sandbox-side prefixes replaced by placeholders in the receipt."""

    config: str
    marketplace: str
    cwd: str


def _norm(value: Any, paths: Paths) -> Any:
    if isinstance(value, str):
        for prefix, label in ((paths.marketplace, "<marketplace>"), (paths.config, "<config>"),
                              (paths.cwd, "<cwd>")):
            if prefix and value.startswith(prefix):
                return label + value[len(prefix):]
        return value
    if isinstance(value, list):
        return [_norm(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v, paths) for k, v in value.items()}
    return value


def build_receipt(stdout: str, paths: Paths, *, probe: bool) -> dict[str, Any]:
    """The discovery receipt from the CLI's stdout (paths normalised to placeholders)."""
    responses: dict[str, Any] = {}
    errors: dict[str, str] = {}
    inits, results, hook_events, other = [], [], 0, 0
    for line in stdout.splitlines():
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            other += 1
            continue
        if ev.get("type") == "control_response":
            resp = ev.get("response") or {}
            rid = str(resp.get("request_id"))
            # "pb_<n>_<subtype>" / "pb_<n>_after_<subtype>": the last answer per subtype
            # wins, so get_usage reflects the state after the /cost turn.
            key = rid.split("_", 2)[-1].removeprefix("after_")
            if resp.get("subtype") == "success":
                responses[key] = resp.get("response") or {}
            else:
                errors[key] = str(resp.get("error"))
        elif ev.get("type") == "system" and ev.get("subtype") == "init":
            inits.append(ev)
        elif ev.get("type") == "system" and str(ev.get("subtype", "")).startswith("hook_"):
            hook_events += 1
        elif ev.get("type") == "result":
            results.append(ev)
    init = inits[0] if len(inits) == 1 else {}
    res = results[0] if len(results) == 1 else {}
    ctx = responses.get("get_context_usage", {})
    fm = (ctx.get("skills") or {}).get("skillFrontmatter") or []
    init_plugins = init.get("plugins") or []
    initialize = responses.get("initialize", {})
    settings = responses.get("get_settings", {})
    effective = {k: v for k, v in (settings.get("effective") or {}).items() if k != "disableAllHooks"}
    receipt = {
        "schema": "pluginbench.claude.native-treatment/1",
        "probe": probe,
        "delivery_policy": "claude-native-v1",
        "control_errors": errors,
        "cli_version": (responses.get("get_binary_version") or {}).get("version"),
        "init_count": len(inits),
        "init": {
            "claude_code_version": init.get("claude_code_version"),
            "model": init.get("model"),
            "permission_mode": init.get("permissionMode"),
            "api_key_source": init.get("apiKeySource"),
            "tools": init.get("tools"),
            "skills": init.get("skills"),
            "slash_commands": init.get("slash_commands"),
            "agents": init.get("agents"),
            "plugins": _norm(init_plugins, paths),
            "mcp_servers": init.get("mcp_servers"),
        },
        "skills": _norm([{k: s.get(k) for k in ("name", "source", "path", "pluginId")}
                         for s in fm if s.get("source") != "built-in"], paths),
        "builtin_skills": sorted(s.get("name") for s in fm if s.get("source") == "built-in"),
        "skills_dialog": [{k: s.get(k) for k in ("name", "source", "state")}
                          for s in (responses.get("get_skills_dialog") or {}).get("skills") or []],
        "commands": sorted(c["name"] for c in initialize.get("commands") or [] if not c.get("builtin")),
        "agents": _norm([{k: a.get(k) for k in ("agentType", "source", "pluginId", "path")}
                         for a in ctx.get("agents") or []], paths),
        "initialize_agents": sorted(a.get("name") for a in initialize.get("agents") or []),
        "plugins": [p for p in _norm(init_plugins, paths) if p.get("path") != "builtin"],
        "builtin_plugins": sorted(p.get("name") for p in init_plugins if p.get("path") == "builtin"),
        "hooks": _norm([{k: h.get(k) for k in ("event", "matcher", "source", "pluginName", "type", "commandText")}
                        for h in (responses.get("get_hooks_listing") or {}).get("hooks") or []], paths),
        "hooks_all_disabled": ((responses.get("get_hooks_listing") or {}).get("policy") or {}).get("allDisabled"),
        "hook_events_during_discovery": hook_events,
        "memory_files": _norm([{k: m.get(k) for k in ("path", "type")} for m in ctx.get("memoryFiles") or []], paths),
        "mcp_servers": (responses.get("mcp_status") or {}).get("mcpServers"),
        "settings": _norm(effective, paths),
        "setting_sources": sorted(s.get("source") for s in settings.get("sources") or []),
        "cost": {
            "local_command": res.get("local_command"),
            "total_cost_usd": res.get("total_cost_usd"),
            "model_usage": res.get("modelUsage"),
            "num_turns": res.get("num_turns"),
            "session_after": (responses.get("get_usage") or {}).get("session"),
            "session_cost_text": (responses.get("get_session_cost") or {}).get("text"),
        },
    }
    return receipt


class Expected(NamedTuple):
    """What discovery must report for one arm."""

    treatment: ClaudeTreatment
    cli_version: str
    model: str
    probe: bool


def expected_settings(t: ClaudeTreatment, marketplace: str = "<marketplace>") -> dict[str, Any]:
    settings = dict(PINNED_SETTINGS)
    if t.plugins:
        settings["extraKnownMarketplaces"] = {
            MARKETPLACE: {"source": {"source": "directory", "path": marketplace}}}
        settings["enabledPlugins"] = {f"{p.name}@{MARKETPLACE}": True for p in t.plugins}
    return settings


def compare_receipt(receipt: dict[str, Any], exp: Expected) -> list[str]:
    """Every difference between the receipt and the declared arm (empty when it passes)."""
    t, bad = exp.treatment, []
    if receipt.get("control_errors"):
        bad.append(f"control requests failed: {receipt['control_errors']}")
    cost = receipt.get("cost") or {}
    session = cost.get("session_after") or {}
    if (cost.get("local_command") != "cost" or cost.get("total_cost_usd") != 0 or cost.get("model_usage")
            or cost.get("num_turns") != 0 or session.get("total_cost_usd") != 0 or session.get("model_usage")):
        bad.append(f"no-model-call proof failed: {cost}")
    if receipt.get("hook_events_during_discovery") or receipt.get("hooks_all_disabled") is not True:
        bad.append("hooks were not disabled during discovery")
    init = receipt.get("init") or {}
    if receipt.get("init_count") != 1:
        bad.append(f"expected one system/init from /cost, got {receipt.get('init_count')}")
    if receipt.get("cli_version") != exp.cli_version or init.get("claude_code_version") != exp.cli_version:
        bad.append(f"CLI version {receipt.get('cli_version')!r} is not the pinned {exp.cli_version!r}")
    if init.get("model") != exp.model:
        bad.append(f"model {init.get('model')!r} is not {exp.model!r}")
    if not exp.probe and init.get("api_key_source") != "none":
        bad.append(f"a credential source other than the credentials file is active: {init.get('api_key_source')!r}")
    if init.get("mcp_servers") or receipt.get("mcp_servers"):
        bad.append(f"MCP servers loaded: {receipt.get('mcp_servers') or init.get('mcp_servers')}")
    # Skills: exactly the declared ones, each from its declared source and file.
    want_skills = sorted(
        (s.name, s.source, f"<config>/{s.relpath}" if s.plugin is None else f"<marketplace>/plugins/{s.plugin}/{s.relpath}")
        for s in t.skills)
    got_skills = sorted((s.get("name"), s.get("source"), s.get("path"))
                        for s in receipt.get("skills") or [])
    if got_skills != want_skills:
        bad.append(f"skills differ: declared {want_skills}, discovered {got_skills}")
    dialog = {s.get("name"): s for s in receipt.get("skills_dialog") or []}
    for s in t.skills:
        d = dialog.get(s.name)
        if d is None:
            bad.append(f"skill {s.name} missing from the skills dialog")
        elif s.model_invocable and d.get("state") != "on":
            bad.append(f"skill {s.name} is {d.get('state')!r}, not on")
        elif not s.model_invocable and d.get("state") == "off":
            bad.append(f"skill {s.name} is off")
    extra_dialog = sorted(set(dialog) - {s.name for s in t.skills})
    if extra_dialog:
        bad.append(f"undeclared skills in the skills dialog: {extra_dialog}")
    if sorted(receipt.get("commands") or []) != list(t.commands):
        bad.append(f"non-built-in commands {receipt.get('commands')} differ from declared {list(t.commands)}")
    # Agents: built-ins plus exactly the declared plugin agents.
    got_agents = sorted((a.get("agentType"), a.get("source"), a.get("pluginId")) for a in receipt.get("agents") or [])
    want_agents = sorted((a, "plugin", f"{a.split(':', 1)[0]}@{MARKETPLACE}") for a in t.agents)
    if got_agents != want_agents:
        bad.append(f"agents differ: declared {want_agents}, discovered {got_agents}")
    builtin = sorted(set(receipt.get("initialize_agents") or []) - set(t.agents))
    if builtin != sorted(BUILTIN_AGENTS):
        bad.append(f"built-in agents {builtin} are not the pinned {sorted(BUILTIN_AGENTS)}")
    want_mem = [{"path": "<config>/CLAUDE.md", "type": "User"}] if t.guidance else []
    if receipt.get("memory_files") != want_mem:
        bad.append(f"memory files {receipt.get('memory_files')} are not {want_mem}")
    got_plugins = sorted((p.get("name"), p.get("source"), p.get("path")) for p in receipt.get("plugins") or [])
    want_plugins = sorted((p.name, f"{p.name}@{MARKETPLACE}", f"<marketplace>/plugins/{p.name}") for p in t.plugins)
    if got_plugins != want_plugins:
        bad.append(f"plugins differ: declared {want_plugins}, discovered {got_plugins}")
    got_hooks = sorted((h.get("event"), h.get("matcher") or "", h.get("source"), h.get("pluginName"),
                        h.get("type"), h.get("commandText")) for h in receipt.get("hooks") or [])
    want_hooks = sorted((h.event, h.matcher, "pluginHook", f"{h.plugin}@{MARKETPLACE}", "command", h.command)
                        for h in t.hooks)
    if got_hooks != want_hooks:
        bad.append(f"hooks differ: declared {want_hooks}, discovered {got_hooks}")
    if receipt.get("settings") != expected_settings(t):
        bad.append(f"effective settings {receipt.get('settings')} are not the pinned {expected_settings(t)}")
    if receipt.get("setting_sources") != ["flagSettings", "userSettings"]:
        bad.append(f"setting sources {receipt.get('setting_sources')} are not user (+ the discovery flag)")
    return bad
