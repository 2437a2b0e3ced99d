"""Zero-cost discovery of what a Claude Code session loads (pure parts).

Discovery is its own run of the pinned CLI (:func:`discovery_argv`: the coding session's
own argv with another session id, ``--settings '{"disableAllHooks":true}'`` and no
session persistence), before the coding process starts: stdin carries only control
requests, which the CLI answers from local state without any API request (measured on
the real CLI; a recorded transcript is in tests/data/samples/claude-code-2.1.328/discovery),
then ``end_session``. Hooks are disabled there, as the product description says: Claude
Code runs SessionStart hooks at process start, before it reads stdin, so a discovery in
the coding process would run them before the receipt is judged. The hook listing is the
same with hooks disabled (``policy.allDisabled`` is then true), so the receipt still lists
every declared hook, and no hook may have run. Only a passing receipt starts the coding
process (a passing receipt is reused for later attempts of an identical setup, see
:mod:`._claude_cache`); the coding process's own control answers must equal it
(:func:`compare_coding`) before the task is sent, and its after-run checks compare its
``system/init`` with the receipt.
The local ``/cost`` command is not used: its output would become part of the
conversation the model sees.

What loaded is split by where it comes from: the treatment's components (the private
user config and marketplace) and the task's own files (``CLAUDE.md`` and ``.claude/`` of
the task repository, loaded as the real CLI loads them for a user in that repository,
identical for every arm). Vanilla declares no component; its task-owned files may be
anything the repository holds, but nothing task-owned may come from outside it.

:func:`control_request` / :func:`user_message` build the input lines,
:func:`build_receipt` folds the control-phase stdout into the receipt saved as
``native-treatment.json``, :func:`compare_receipt` lists every way it differs from the
declared arm (empty = pass).
"""

import json
from typing import Any, NamedTuple

from ..treatments import MARKETPLACE, ClaudeTreatment
from ._claude_launch import BUILTIN_AGENTS, PINNED_SETTINGS
from ._claude_stream import loads_line

SCHEMA = "pluginbench.claude.native-treatment/2"
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
#: The settings flag discovery adds (folded into one ``--settings``: only the last counts).
DISCOVERY_SETTINGS: dict[str, Any] = {"disableAllHooks": True}


def discovery_argv(session_argv: list[str], discovery_session_id: str) -> list[str]:
    """The discovery run's argv: the coding session's, under its own session id, with hooks
    disabled and nothing persisted (so no transcript of it sits beside the coding one)."""
    argv = list(session_argv)
    if "--session-id" in argv:
        argv[argv.index("--session-id") + 1] = discovery_session_id
    return [*argv, "--no-session-persistence", "--settings", json.dumps(DISCOVERY_SETTINGS, separators=(",", ":"))]


#: Sources of the task repository's own files (``projectSettings`` in control answers,
#: ``project`` in the skills dialog, ``Project`` for memory files).
TASK_SOURCES = frozenset({"projectSettings", "project", "Project"})


def request_id(index: int, subtype: str) -> str:
    return f"pb_{index}_{subtype}"


def control_request(index: int, subtype: str, params: dict[str, Any] | None = None) -> bytes:
    line = {"type": "control_request", "request_id": request_id(index, subtype),
            "request": {"subtype": subtype, **(params or {})}}
    return (json.dumps(line) + "\n").encode()


def user_message(text: str) -> bytes:
    """The task, as the first (and only) user message of the session."""
    line = {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None,
            "session_id": ""}
    return (json.dumps(line) + "\n").encode()


def end_session(index: int) -> bytes:
    return control_request(index, "end_session", {"reason": "pluginbench_done"})


def response_id(line: str) -> str | None:
    """The request id a stdout line answers, or None when it is not a control response."""
    try:
        ev = loads_line(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(ev, dict) or ev.get("type") != "control_response":
        return None
    return str((ev.get("response") or {}).get("request_id"))


def is_result(line: str) -> bool:
    try:
        ev = loads_line(line)
    except json.JSONDecodeError:
        return False
    return isinstance(ev, dict) and ev.get("type") == "result"


class Paths(NamedTuple):
    """Sandbox-side prefixes replaced by placeholders in the receipt."""

    config: str
    marketplace: str
    cwd: str


def _norm(value: Any, paths: Paths) -> Any:
    if isinstance(value, str):
        for prefix, label in ((paths.marketplace, "<marketplace>"), (paths.config, "<config>"),
                              (paths.cwd, "<cwd>")):
            if prefix and (value == prefix or value.startswith(prefix.rstrip("/") + "/")):
                return label + value[len(prefix):]
        return value
    if isinstance(value, list):
        return [_norm(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v, paths) for k, v in value.items()}
    return value


def _task_owned(value: str | None) -> bool:
    return value in TASK_SOURCES


def build_receipt(stdout: str, paths: Paths, *, probe: bool) -> dict[str, Any]:
    """The discovery receipt from the control phase's stdout (paths normalised to placeholders)."""
    responses: dict[str, Any] = {}
    errors: dict[str, str] = {}
    hook_events = 0
    for line in stdout.splitlines():
        try:
            ev = loads_line(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(ev, dict):
            continue
        if ev.get("type") == "control_response":
            resp = ev.get("response") or {}
            key = str(resp.get("request_id")).split("_", 2)[-1]
            if resp.get("subtype") == "success":
                responses[key] = resp.get("response") or {}
            else:
                errors[key] = str(resp.get("error"))
        elif ev.get("type") == "system" and str(ev.get("subtype", "")).startswith("hook_"):
            hook_events += 1
    ctx = responses.get("get_context_usage", {})
    fm = [s for s in (ctx.get("skills") or {}).get("skillFrontmatter") or [] if s.get("source") != "built-in"]
    initialize = responses.get("initialize", {})
    settings = responses.get("get_settings", {})
    sources = {str(s.get("source")): s.get("settings") or {} for s in settings.get("sources") or []}
    enabled = sources.get("userSettings", {}).get("enabledPlugins") or {}
    hooks = [{k: h.get(k) for k in ("event", "matcher", "source", "pluginName", "type", "commandText")}
             for h in (responses.get("get_hooks_listing") or {}).get("hooks") or []]
    agents = [{k: a.get(k) for k in ("agentType", "source", "pluginId", "path")} for a in ctx.get("agents") or []]
    memory = [{k: m.get(k) for k in ("path", "type")} for m in ctx.get("memoryFiles") or []]
    dialog = [{k: s.get(k) for k in ("name", "source", "state")}
              for s in (responses.get("get_skills_dialog") or {}).get("skills") or []]
    commands = [c for c in initialize.get("commands") or [] if not c.get("builtin")]

    def project_command(c: dict[str, Any]) -> bool:
        return str(c.get("description") or "").endswith(" (project)")

    return {
        "schema": SCHEMA,
        "probe": probe,
        "delivery_policy": "claude-native-v1",
        "method": "control requests in a discovery run with hooks disabled, before the coding process (no model call)",
        "control_errors": errors,
        "answered": sorted(responses),
        "cli_version": (responses.get("get_binary_version") or {}).get("version"),
        "session": {
            "claude_code_version": initialize.get("claude_code_version"),
            "permission_mode": initialize.get("current_permission_mode"),
            "model": (settings.get("applied") or {}).get("model"),
            "commands": sorted(str(c.get("name")) for c in initialize.get("commands") or []),
            "agents": sorted(str(a.get("name")) for a in initialize.get("agents") or []),
        },
        # The treatment's components (private config and marketplace). "skills" are the
        # ones offered to the model (context frontmatter); a skill with
        # disable-model-invocation: true is never offered, only listed by the dialog.
        "skills": _norm([{k: s.get(k) for k in ("name", "source", "path", "pluginId")}
                         for s in fm if not _task_owned(s.get("source"))], paths),
        "skills_user_invocable_only": _user_invocable_only(dialog, fm),
        "skills_dialog": [s for s in dialog if not _task_owned(s.get("source"))],
        "commands": sorted(str(c["name"]) for c in commands if not project_command(c)),
        "agents": _norm([a for a in agents if not _task_owned(a.get("source"))], paths),
        "plugins": sorted(k for k, v in enabled.items() if v),
        "hooks": _norm([h for h in hooks if not _task_owned(h.get("source"))], paths),
        "memory_files": _norm([m for m in memory if not _task_owned(m.get("type"))], paths),
        "settings": _norm(sources.get("userSettings", {}), paths),
        # The task repository's own files: identical for every arm, never a component.
        "task_owned": {
            "memory_files": _norm([m for m in memory if _task_owned(m.get("type"))], paths),
            "skills": _norm([{k: s.get(k) for k in ("name", "source", "path")}
                             for s in fm if _task_owned(s.get("source"))], paths),
            "commands": sorted(str(c["name"]) for c in commands if project_command(c)),
            "agents": _norm([a for a in agents if _task_owned(a.get("source"))], paths),
            "hooks": _norm([h for h in hooks if _task_owned(h.get("source"))], paths),
            "settings": _norm(sources.get("projectSettings"), paths),
        },
        "setting_sources": sorted(k for k in sources if k != "flagSettings"),
        # What the discovery run's own --settings flag set (disableAllHooks), kept apart.
        "discovery_flag_settings": sources.get("flagSettings"),
        "hooks_all_disabled": ((responses.get("get_hooks_listing") or {}).get("policy") or {}).get("allDisabled"),
        "hook_events_before_task": hook_events,
        "mcp_servers": (responses.get("mcp_status") or {}).get("mcpServers"),
        "usage_before_task": (responses.get("get_usage") or {}).get("session"),
    }


#: The skills dialog's source names, as the context frontmatter names them.
_DIALOG_SOURCE = {"user": "userSettings", "plugin": "plugin"}


def _user_invocable_only(dialog: list[dict[str, Any]], fm: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The treatment's skills the dialog lists as ``user-invocable-only`` (name, source, state).

    They are absent from the frontmatter the model receives, so they carry no path."""
    offered = {s.get("name") for s in fm}
    return sorted(({"name": d.get("name"), "source": _DIALOG_SOURCE.get(str(d.get("source")), d.get("source")),
                    "state": d.get("state")}
                   for d in dialog if d.get("state") == "user-invocable-only" and not _task_owned(d.get("source"))
                   and d.get("name") not in offered), key=lambda d: str(d["name"]))


class Expected(NamedTuple):
    """What discovery must report for one arm."""

    treatment: ClaudeTreatment
    cli_version: str | None  # None (unresolved) never matches a reported version
    model: str
    probe: bool


def expected_settings(t: ClaudeTreatment, marketplace: str = "<marketplace>") -> dict[str, Any]:
    settings = dict(PINNED_SETTINGS)
    if t.plugins:
        settings["extraKnownMarketplaces"] = {
            MARKETPLACE: {"source": {"source": "directory", "path": marketplace}}}
        settings["enabledPlugins"] = {f"{p.name}@{MARKETPLACE}": True for p in t.plugins}
    return settings


def _under(path: object, prefix: str) -> bool:
    return isinstance(path, str) and path.startswith(prefix + "/")


def compare_receipt(receipt: dict[str, Any], exp: Expected) -> list[str]:
    """Every difference between the receipt and the declared arm (empty when it passes)."""
    t, bad = exp.treatment, _control_problems(receipt)
    session = receipt.get("session") or {}
    if receipt.get("cli_version") != exp.cli_version or session.get("claude_code_version") != exp.cli_version:
        bad.append(f"CLI version {receipt.get('cli_version')!r} is not the pinned {exp.cli_version!r}")
    if session.get("model") != exp.model:
        bad.append(f"model {session.get('model')!r} is not {exp.model!r}")
    if session.get("permission_mode") != "bypassPermissions":
        bad.append(f"permission mode {session.get('permission_mode')!r} is not bypassPermissions")
    if receipt.get("hooks_all_disabled") is not True:
        bad.append("hooks were not disabled during discovery (policy.allDisabled is not true)")
    if receipt.get("hook_events_before_task"):
        bad.append(f"{receipt.get('hook_events_before_task')} hook event(s) during discovery: no hook may run")
    if receipt.get("discovery_flag_settings") != DISCOVERY_SETTINGS:
        bad.append(f"discovery flag settings {receipt.get('discovery_flag_settings')} are not {DISCOVERY_SETTINGS}")
    if receipt.get("mcp_servers"):
        bad.append(f"MCP servers loaded: {receipt.get('mcp_servers')}")
    # Skills: exactly the declared ones, each from its declared source and file.
    want_skills = sorted(
        (s.name, s.source, f"<config>/{s.relpath}" if s.plugin is None else f"<marketplace>/plugins/{s.plugin}/{s.relpath}")
        for s in t.skills if s.model_invocable)
    got_skills = sorted((s.get("name"), s.get("source"), s.get("path"))
                        for s in receipt.get("skills") or [])
    if got_skills != want_skills:
        bad.append(f"skills differ (offered to the model): declared {want_skills}, discovered {got_skills}")
    # disable-model-invocation: true -> listed by the dialog only, from the declared source.
    want_manual = sorted((s.name, s.source) for s in t.skills if not s.model_invocable)
    got_manual = sorted((s.get("name"), s.get("source")) for s in receipt.get("skills_user_invocable_only") or [])
    if got_manual != want_manual:
        bad.append(f"user-invocable-only skills differ: declared {want_manual}, discovered {got_manual}")
    dialog = {s.get("name"): s for s in receipt.get("skills_dialog") or []}
    for s in t.skills:
        d = dialog.get(s.name)
        if d is None:
            bad.append(f"skill {s.name} missing from the skills dialog")
        elif s.model_invocable and d.get("state") != "on":
            bad.append(f"skill {s.name} is {d.get('state')!r}, not on")
        elif not s.model_invocable and d.get("state") != "user-invocable-only":
            bad.append(f"skill {s.name} is {d.get('state')!r}, not user-invocable-only")
    extra_dialog = sorted(set(dialog) - {s.name for s in t.skills})
    if extra_dialog:
        bad.append(f"undeclared skills in the skills dialog: {extra_dialog}")
    if sorted(receipt.get("commands") or []) != list(t.commands):
        bad.append(f"non-built-in commands {receipt.get('commands')} differ from declared {list(t.commands)}")
    # Agents: built-ins plus exactly the declared plugin agents (plus the task's own).
    got_agents = sorted((a.get("agentType"), a.get("source"), a.get("pluginId")) for a in receipt.get("agents") or [])
    want_agents = sorted((a, "plugin", f"{a.split(':', 1)[0]}@{MARKETPLACE}") for a in t.agents)
    if got_agents != want_agents:
        bad.append(f"agents differ: declared {want_agents}, discovered {got_agents}")
    task = receipt.get("task_owned") or {}
    task_agents = {a.get("agentType") for a in task.get("agents") or []}
    builtin = sorted(set(session.get("agents") or []) - set(t.agents) - task_agents)
    if builtin != sorted(BUILTIN_AGENTS):
        bad.append(f"built-in agents {builtin} are not the pinned {sorted(BUILTIN_AGENTS)}")
    want_mem = [{"path": "<config>/CLAUDE.md", "type": "User"}] if t.guidance else []
    if receipt.get("memory_files") != want_mem:
        bad.append(f"memory files {receipt.get('memory_files')} are not {want_mem}")
    want_plugins = sorted(f"{p.name}@{MARKETPLACE}" for p in t.plugins)
    if receipt.get("plugins") != want_plugins:
        bad.append(f"plugins differ: declared {want_plugins}, enabled {receipt.get('plugins')}")
    got_hooks = sorted((h.get("event"), h.get("matcher") or "", h.get("source"), h.get("pluginName"),
                        h.get("type"), h.get("commandText")) for h in receipt.get("hooks") or [])
    want_hooks = sorted((h.event, h.matcher, "pluginHook", f"{h.plugin}@{MARKETPLACE}", "command", h.command)
                        for h in t.hooks)
    if got_hooks != want_hooks:
        bad.append(f"hooks differ: declared {want_hooks}, discovered {got_hooks}")
    if receipt.get("settings") != expected_settings(t):
        bad.append(f"user settings {receipt.get('settings')} are not the pinned {expected_settings(t)}")
    extra_sources = sorted(set(receipt.get("setting_sources") or []) - {"userSettings", "projectSettings"})
    if "userSettings" not in (receipt.get("setting_sources") or []) or extra_sources:
        bad.append(f"setting sources {receipt.get('setting_sources')} are not user (+ the task's project settings)")
    # Task-owned files come from the task repository and nowhere else.
    for kind, key in (("memory file", "memory_files"), ("skill", "skills"), ("agent", "agents")):
        for item in task.get(key) or []:
            if not _under(item.get("path"), "<cwd>"):
                bad.append(f"a project {kind} loaded from outside the task repository: {item.get('path')}")
    return bad


def _answered(receipt: dict[str, Any]) -> list[str]:
    return list(receipt.get("answered") or [])


def _control_problems(receipt: dict[str, Any]) -> list[str]:
    """Failed or unanswered control requests, and the no-model-call proof (either process)."""
    bad = []
    if receipt.get("control_errors"):
        bad.append(f"control requests failed: {receipt['control_errors']}")
    missing = sorted({sub for sub, _ in REQUESTS} - {"get_binary_version"} - set(_answered(receipt)))
    if missing:
        bad.append(f"control requests unanswered: {missing}")
    usage = receipt.get("usage_before_task") or {}
    if (usage.get("total_cost_usd") != 0 or usage.get("model_usage") != {}
            or usage.get("total_api_duration_ms") != 0):
        bad.append(f"no-model-call proof failed before the task: {usage}")
    return bad


#: Control-phase fields that differ between the discovery run and the coding process by
#: design (its own flag settings and hook policy, the hooks that ran at its start, its
#: clock); every other field of :func:`build_receipt` must be equal.
PROCESS_FIELDS = frozenset({"method", "answered", "discovery_flag_settings", "hooks_all_disabled",
                            "hook_events_before_task", "usage_before_task"})


def compare_coding(coding: dict[str, Any], receipt: dict[str, Any]) -> list[str]:
    """Every way the coding process's own control phase differs from the passing discovery
    receipt it runs under (empty: this process loaded exactly what discovery saw).

    ``coding`` is :func:`build_receipt` of the coding process's control answers; its hooks
    must be on (no discovery flag settings), and no model call may have happened."""
    bad = _control_problems(coding)
    if coding.get("hooks_all_disabled") is not False:
        bad.append("hooks are disabled in the coding session")
    if coding.get("discovery_flag_settings") is not None:
        bad.append(f"the coding session has flag settings {coding.get('discovery_flag_settings')}")
    for key in sorted(set(coding) - PROCESS_FIELDS):
        if coding.get(key) != receipt.get(key):
            bad.append(f"the coding session's {key} differs from the discovery receipt: "
                       f"{json.dumps(coding.get(key), sort_keys=True, default=str)[:300]}")
    return bad
