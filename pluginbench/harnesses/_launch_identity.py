"""The pinned launch of a vanilla attempt, as data for the vanilla cache key. Pure.

Derived from the same builders that make the real launch (``session_argv``,
the control requests of Claude's discovery, ``exec_argv`` and Codex's discovery settings) with placeholders (``<cli>``, ``<prompt>``...) for
per-attempt values, plus the pinned constants a session depends on (refused variables,
settings, built-ins). When a harness changes its launch, the key changes with it;
admission later checks each saved invocation against the ``argv`` here.
"""

from __future__ import annotations

from typing import Any

#: The treatment-delivery policy per harness; a new policy version must change it.
DELIVERY_POLICIES = {
    "claude": "claude-native-v1",
    "codex": "codex-native-v1",
    "simulated": "simulated-claude-layout-v1",
    "nop": "control-v1",
    "oracle": "control-v1",
}


def delivery_policy(harness: str) -> str:
    return DELIVERY_POLICIES.get(harness, f"{harness}-v1")


def launch_identity(harness: str, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
    """The pinned launch of ``harness`` for this model and effort, placeholders for the rest."""
    if harness == "claude":
        from . import _claude_launch as cl
        from ._claude_discovery import REQUESTS, SCHEMA

        m, effort = model or "<model>", reasoning or "<effort>"
        return {
            # One process: discovery's control requests, then the task as the first message.
            "argv": cl.session_argv("<cli>", m, effort, "<session>", subagents=subagents),
            "discovery": {"control_requests": [[sub, params] for sub, params in REQUESTS], "receipt": SCHEMA},
            "refused_variables": sorted(cl.REFUSED_VARIABLES),
            "settings": cl.PINNED_SETTINGS,
            "builtin_agents": sorted(cl.BUILTIN_AGENTS),
            "init_tools": sorted(cl.PINNED_TOOLS.get(m, ())),
            "pinned_version": cl.PINNED_VERSION,
        }
    if harness == "codex":
        from ._codex_config import discovery_settings, exec_argv

        settings = discovery_settings(model or "<model>", reasoning)
        return {
            "argv": exec_argv("<cli>", workdir="<workdir>", model=model or "<model>", reasoning=reasoning,
                              prompt="<prompt>", bypass_hook_trust=False),
            # Discovery renders the prompt with the launch's own settings (project docs on).
            "discovery": {"prompt_input_settings": settings, "receipt": "pluginbench.codex.native-treatment/2"},
        }
    if harness == "simulated":
        return {"argv": ["<python>", "<agent>"]}
    if harness == "nop":
        return {"argv": ["true"]}
    if harness == "oracle":
        return {"argv": ["bash", "<solve>"]}
    return {"argv": []}


def uncacheable_cli(harness: str, cli_version: str | None) -> str | None:
    """Why vanilla attempts of this CLI version are neither reused nor published, or ``None``.

    Claude Code's built-in commands, agents and init tools are part of the vanilla arm,
    and PluginBench pins them for one CLI version only; any other version codes its own
    vanilla arm every run."""
    if harness == "claude":
        from ._claude_launch import PINNED_VERSION

        if cli_version != PINNED_VERSION:
            return (f"Claude Code {cli_version} is not {PINNED_VERSION}, the version whose built-ins PluginBench pins; "
                    "this run codes its own vanilla arm and publishes nothing")
    return None
