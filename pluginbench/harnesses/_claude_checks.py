"""After-run checks of a Claude Code coding session (pure).

A failed check keeps the attempt (and its verifier result); its execution outcome is a
failure with the reasons in ``execution.json``.
"""

from __future__ import annotations

import json
from typing import Any

from ..treatments import ClaudeTreatment
from ._claude_launch import PINNED_TOOLS, PINNED_VERSION, disallowed_tools
from ._claude_stream import StreamSummary, loads_line


def _matches_startup(matcher: str) -> bool:
    return matcher in ("", "*") or "startup" in matcher.split("|")


def after_run_checks(
    summary: StreamSummary,
    receipt: dict[str, Any],
    treatment: ClaudeTreatment,
    *,
    model: str,
    cli_version: str | None,
    subagents: bool,
    trees_unchanged: bool,
) -> list[str]:
    """Every failed after-run check, as a sentence (empty when all pass)."""
    bad: list[str] = []
    if len(summary.inits) != 1:
        return [f"expected one system/init, found {len(summary.inits)}"]
    init, session = summary.inits[0], receipt.get("session") or {}
    if init.get("claude_code_version") != session.get("claude_code_version"):
        bad.append("system/init claude_code_version differs from the discovery receipt")
    if sorted(init.get("slash_commands") or []) != list(session.get("commands") or []):
        bad.append("system/init slash_commands differ from the commands discovery saw")
    if sorted(init.get("agents") or []) != list(session.get("agents") or []):
        bad.append("system/init agents differ from the agents discovery saw")
    plugins = sorted(str(p.get("source")) for p in init.get("plugins") or [] if p.get("path") != "builtin")
    if plugins != list(receipt.get("plugins") or []):
        bad.append(f"system/init plugins {plugins} differ from the discovery receipt")
    if init.get("model") != model:
        bad.append(f"system/init model {init.get('model')!r} is not the runner model {model!r}")
    if init.get("mcp_servers"):
        bad.append(f"MCP servers present: {init.get('mcp_servers')}")
    if init.get("apiKeySource") != "none":
        bad.append(f"an API key is active ({init.get('apiKeySource')!r}); only the credentials file may be")
    if init.get("permissionMode") != "bypassPermissions":
        bad.append(f"permission mode is {init.get('permissionMode')!r}, not bypassPermissions")
    denied = list(summary.denials) + list((summary.result or {}).get("permission_denials") or [])
    if denied:
        bad.append(f"{len(denied)} permission denial(s) recorded")
    tools = list(init.get("tools") or [])
    refused = set(disallowed_tools(subagents)) | (set() if subagents else {"Task"})
    if refused & set(tools):
        bad.append(f"disallowed tools offered: {sorted(refused & set(tools))}")
    if cli_version == PINNED_VERSION:
        pinned = PINNED_TOOLS.get(model)
        if pinned is not None:
            want = [t for t in pinned if subagents or t != "Task"]
            if tools != want:
                bad.append(f"offered tools {tools} are not the pinned set {want}")
    # Hooks: every declared SessionStart hook matching "startup" ran once before the first reply.
    # The task repository's own settings hooks run on every arm alike.
    task_hooks = [(str(h.get("event")), str(h.get("matcher") or ""))
                  for h in (receipt.get("task_owned") or {}).get("hooks") or []]
    startup = [h for h in treatment.hooks if h.event == "SessionStart" and _matches_startup(h.matcher)]
    startup_count = len(startup) + sum(1 for ev, m in task_hooks if ev == "SessionStart" and _matches_startup(m))
    ran = [h for h in summary.hooks if h.name == "SessionStart:startup"]
    if len(ran) != startup_count:
        bad.append(f"{len(ran)} SessionStart:startup hook run(s), expected {startup_count}")
    declared_events = {h.event for h in treatment.hooks} | {ev for ev, _ in task_hooks}
    for h in summary.hooks:
        if h.event not in declared_events:
            bad.append(f"hook {h.name} ran but is not declared")
        elif not h.started or h.outcome is None or str(h.outcome).startswith("responses="):
            bad.append(f"hook {h.name} did not start and respond exactly once")
        elif h.event == "SessionStart" and (h.exit_code != 0 or not h.before_first_reply):
            bad.append(f"SessionStart hook {h.name} exited {h.exit_code} or ran after the first reply")
        elif h.event != "SessionStart" and h.exit_code not in (0, 2):
            bad.append(f"hook {h.name} exited {h.exit_code}")
    if not trees_unchanged:
        bad.append("a delivered skill or plugin tree changed during the run")
    return bad


def execution_outcome(checks: list[str], *, timed_out: bool, provider_stop: str | None,
                      result: dict[str, Any] | None) -> tuple[str, list[str]]:
    """The attempt's execution outcome (``success`` or ``failure``) and every reason it failed.

    A failed after-run check makes it a failure, as does a timeout, a provider stop, a
    missing ``result`` or one marked ``is_error``; the attempt is still graded (its verifier
    result is kept), this only records how the execution itself went."""
    reasons = [f"after-run check failed: {c}" for c in checks]
    if timed_out:
        reasons.append("the session timed out")
    if provider_stop:
        reasons.append(f"provider stop: {provider_stop}")
    if result is None and not timed_out:
        reasons.append("the session ended without a result")
    elif result is not None and result.get("is_error"):
        reasons.append(f"the session's result is an error ({result.get('terminal_reason') or result.get('subtype')})")
    return ("failure" if reasons else "success"), reasons


def effective_effort(transcripts: tuple[list[str], list[list[str]]] | None,
                     requested: str | None) -> tuple[str | None, str]:
    """The reasoning effort the session's API requests carried, and the native evidence.

    Claude Code 2.1.328 records every API request's parameters in the transcripts
    (``api-request`` entries, ``params.output_config.effort``). It sends the requested
    effort only to models that take one (``claude-opus-5-5``: ``"medium"``); for others
    (``claude-sonnet-4-5``) it sends no effort at all, only a thinking budget, so the
    effective effort is None although one was requested. None also when the requests
    disagree or none was recorded; the evidence says which."""
    if transcripts is None:
        return None, "no session transcript, so no API request parameters"
    root, subs = transcripts
    efforts: list[str | None] = []
    thinking: set[str] = set()
    for line in [*root, *(ln for s in subs for ln in s)]:
        if '"api-request"' not in line:
            continue
        try:
            ev = loads_line(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(ev, dict) or ev.get("type") != "api-request":
            continue
        raw_params = ev.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        raw_out = params.get("output_config")
        out: dict[str, Any] = raw_out if isinstance(raw_out, dict) else {}
        effort = out.get("effort")
        efforts.append(effort if isinstance(effort, str) else None)
        thinking.add(json.dumps(params.get("thinking"), sort_keys=True))
    if not efforts:
        return None, "the transcripts record no API request"
    distinct = sorted({str(e) for e in efforts})
    if len(distinct) > 1:
        return None, f"the {len(efforts)} API requests disagree on output_config.effort: {distinct}"
    if efforts[0] is None:
        return None, (f"none of the {len(efforts)} API requests carried output_config.effort (requested "
                      f"{requested!r}; the CLI sent only thinking {', '.join(sorted(thinking))})")
    return efforts[0], f"output_config.effort of all {len(efforts)} API requests"
