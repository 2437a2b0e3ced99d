"""The pinned Claude Code launch: argv, environment, settings, credentials (pure).

Everything an arm's session sees is fixed here, identical across vanilla and treatments.
Measured on CLI 2.1.328 (the team's measurements of the real CLI; samples in tests/data/samples): ``IS_SANDBOX=1`` is
needed for ``bypassPermissions`` as root; ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``
removes every non-API call; ``CLAUDE_CODE_TMPDIR`` keeps sockets and probes out of /tmp.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..harness_registry import CliPin, SpecProblem

#: The pinned, qualified CLI (what the research measured); ``tools/install-clis.sh``
#: installs it and ``doctor`` checks the flags the launch below uses.
CLI = CliPin(
    command="claude", package="@anthropic-ai/claude-code", version="2.1.328",
    launch_flags=("--output-format", "--permission-mode", "--setting-sources", "--strict-mcp-config",
                  "--disallowedTools", "--include-hook-events", "--effort", "--input-format"),
)
PINNED_VERSION = CLI.version
DISALLOWED_TOOLS = ("RemoteTrigger", "CronCreate", "ScheduleWakeup", "SendMessage", "Workflow")
#: init.tools of the pinned launch on 2.1.328, measured per model with OAuth credentials.
#: ``Agent`` appears as ``Task`` in init and disappears when Agent is disallowed.
PINNED_TOOLS: dict[str, tuple[str, ...]] = {
    "claude-sonnet-4-5": (
        "Task", "Bash", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
        "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings", "Skill", "TaskCreate",
        "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "WebFetch", "WebSearch", "Write",
    ),
    "claude-opus-5-5": (
        "Task", "Bash", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
        "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings", "Skill", "TaskStop",
        "ToolSearch", "WebFetch", "WebSearch", "Write",
    ),
}
#: Built-in agents of 2.1.328 (initialize.agents / init.agents).
BUILTIN_AGENTS = ("claude", "Explore", "general-purpose", "Plan", "statusline-setup")
#: The private settings.json of every arm (the plugin install adds its marketplace keys).
PINNED_SETTINGS: dict[str, Any] = {"autoMemoryEnabled": False}
#: Refused in the operator environment and in every command.
REFUSED_VARIABLES = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
    "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_FOUNDRY_BASE_URL",
    "ANTHROPIC_FOUNDRY_RESOURCE", "ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_VERTEX_PROJECT_ID",
    "AWS_BEARER_TOKEN_BEDROCK", "CLAUDE_CODE_SKIP_BEDROCK_AUTH", "CLAUDE_CODE_SKIP_VERTEX_AUTH",
    "CLAUDE_CODE_SKIP_FOUNDRY_AUTH", "DISABLE_PROMPT_CACHING", "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
)
TOKEN_VARIABLE = "CLAUDE_CODE_OAUTH_TOKEN"
MODEL_ID = re.compile(r"^claude-[a-z0-9]+(?:-[a-z0-9]+)*$")
FLOATING = re.compile(r"(^|-)(latest)$")
REASONING = ("low", "medium", "high", "xhigh", "max")
CONFIG_DIR_NAME = ".claude-config"
MARKETPLACE_DIR_NAME = ".pluginbench-marketplace"
TMP_DIR_NAME = ".claude-tmp"


def check_operator_env(environ: Mapping[str, str], *, probe: bool = False) -> None:
    """Refuse a bad operator environment before anything starts (InputError).

    Refused variables stop every run. A real run needs ``CLAUDE_CODE_OAUTH_TOKEN``; a
    probe run refuses it, because a probe must never carry a real credential.
    """
    # Set at all is refused, empty too: ANTHROPIC_API_KEY= still changes how the CLI authenticates.
    bad = sorted(v for v in REFUSED_VARIABLES if v in environ)
    if bad:
        empty = [v for v in bad if not environ[v]]
        raise InputError(
            f"refused variable(s) set in the environment that runs pluginbench: {', '.join(bad)}"
            + (f" ({', '.join(empty)} set but empty)" if empty else ""),
            field="environment", fix=f"unset {' '.join(bad)}; Claude Code runs authenticate only "
            f"with {TOKEN_VARIABLE} (a subscription token), delivered as a private credentials file")
    token = environ.get(TOKEN_VARIABLE, "")
    if probe and token:
        raise InputError(f"{TOKEN_VARIABLE} is set, but this is a probe run against the loopback "
                         "model server; real credentials are refused in probe mode",
                         field="environment", fix=f"unset {TOKEN_VARIABLE} for probe runs")
    if not probe and not token:
        raise InputError(f"{TOKEN_VARIABLE} is not set", field="environment",
                         fix=f"export {TOKEN_VARIABLE} (run `claude setup-token`) in the environment "
                         "that runs pluginbench")


def check_model(model: str | None, reasoning: str | None) -> tuple[str, str]:
    """Exact ``claude-*`` model ids only (aliases and ``-latest`` refused); effort required."""
    if not model or not MODEL_ID.match(model) or FLOATING.search(model):
        raise InputError(f"model {model!r} is not an exact claude-* model id", field="runner.model",
                         fix="set an exact id such as claude-sonnet-4-5; aliases like sonnet are refused")
    if reasoning not in REASONING:
        raise InputError(f"reasoning {reasoning!r} is not one of {', '.join(REASONING)}",
                         field="runner.reasoning", fix="set runner.reasoning")
    return model, reasoning


#: What config validation accepts as an exact model id (aliases and ``-latest`` refused).
CONFIG_MODEL_ID = re.compile(r"^claude-[a-z0-9]+(?:[-.][a-z0-9]+)+$")
MODEL_ALIASES = frozenset({"sonnet", "opus", "haiku", "default", "best", "opusplan"})


def spec_problem(model: str | None, reasoning: str | None) -> SpecProblem | None:
    """Config validation's rule for Claude Code (runner and reviewer): an explicit effort
    and an exact ``claude-*`` model id; ``None`` when both hold. Pure."""
    if reasoning not in REASONING:
        return SpecProblem(f"Claude Code needs an explicit effort, got {reasoning!r}", "reasoning",
                           "use one of: " + ", ".join(REASONING))
    if model and (model in MODEL_ALIASES or not CONFIG_MODEL_ID.match(model) or model.endswith("-latest")):
        return SpecProblem(f"'{model}' is not an exact claude-* model id", "model",
                           "use an exact id such as claude-sonnet-4-5; floating aliases are refused")
    return None


def credentials_json(token: str) -> bytes:
    """The private ``.credentials.json`` Claude Code reads a subscription token from."""
    return json.dumps({"claudeAiOauth": {
        "accessToken": token, "refreshToken": None, "expiresAt": None,
        "scopes": ["user:inference"], "subscriptionType": None}}).encode()


def disallowed_tools(subagents: bool) -> tuple[str, ...]:
    return DISALLOWED_TOOLS + (() if subagents else ("Agent",))


#: Where settings, memory (CLAUDE.md), skills, agents and commands load from: the private
#: user config (the treatment) and the task repository (``CLAUDE.md``, ``.claude/``), as
#: for a user working in that repository. ``local`` (the user's own uncommitted
#: ``settings.local.json``) is no part of a task.
SETTING_SOURCES = "user,project"


def session_argv(cli: str, model: str, effort: str, session_id: str, *, subagents: bool = True) -> list[str]:
    """The coding process of an attempt: stream-json in and out.

    Its control phase (no model call) is compared with the discovery receipt before the
    task goes in as the first user message, so the receipt describes the session that
    codes; the discovery run is this argv with :func:`._claude_discovery.discovery_argv`.
    """
    return [
        cli, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
        "--model", model, "--effort", effort,
        "--permission-mode", "bypassPermissions",
        "--setting-sources", SETTING_SOURCES, "--strict-mcp-config",
        "--disallowedTools", ",".join(disallowed_tools(subagents)),
        "--include-hook-events",
        "--session-id", session_id,
    ]


def pinned_env(
    home: str, *, path: str, model: str, probe_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment of a Claude command (nothing inherited).

    Never holds a credential: the token travels as ``.credentials.json``. In probe mode
    ``probe_env`` adds the loopback base URL (and only that kind of setting).
    """
    env = {
        "PATH": path,
        "HOME": home,
        "CLAUDE_CONFIG_DIR": f"{home}/{CONFIG_DIR_NAME}",
        "CLAUDE_CODE_TMPDIR": f"{home}/{TMP_DIR_NAME}",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
        "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1",
        # Subagents run on the runner model: FORCE makes the CLI ignore an Agent call's
        # model and an agent's model: frontmatter.
        "CLAUDE_CODE_SUBAGENT_MODEL": model,
        "CLAUDE_CODE_SUBAGENT_MODEL_FORCE": "1",
        "IS_SANDBOX": "1",
    }
    if probe_env:
        env.update(probe_env)
    return env


def check_command_env(env: Mapping[str, str], *, probe: bool) -> list[str]:
    """Reasons a command environment breaks the pins (empty when it is fine)."""
    allowed = {"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"} if probe else set()
    problems = [f"refused variable {v} is set" for v in REFUSED_VARIABLES if v in env and v not in allowed]
    if TOKEN_VARIABLE in env:
        problems.append(f"{TOKEN_VARIABLE} must not be in a command's environment")
    for key, value in (("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"), ("DISABLE_AUTOUPDATER", "1"),
                       ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1"), ("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS", "1")):
        if env.get(key) != value:
            problems.append(f"{key} must be {value}")
    return problems
