"""opencode's pinned launch, private configuration and environment (pure).

Facts measured on ``opencode-ai`` 1.18.33 (a self-contained Bun binary; no node needed)
against the loopback probe:

* Headless: ``opencode run --format json`` prints one JSON event per line (``step_start``,
  ``text``, ``tool_use``, ``step_finish`` with the step's tokens, ``error``). A positional
  message with a space is re-quoted by the CLI (``"fix it"`` reaches the model with the
  quotes), so the instruction goes on stdin, which it reads verbatim. ``--title`` names the
  session, so no title-generation model call is made. ``--auto`` approves every permission
  not explicitly denied.
* Its configuration lives in ``$XDG_CONFIG_HOME/opencode`` (``opencode.json``, the global
  instruction file ``AGENTS.md``, user skills ``skills/<name>/SKILL.md``); sessions in an
  SQLite database under ``$XDG_DATA_HOME/opencode``. With HOME and the four XDG folders
  private, nothing of the operator's own opencode, ``~/.claude`` or ``~/.agents`` is read.
* A custom provider with ``npm: @ai-sdk/openai-compatible`` (bundled in the binary) posts to
  ``{baseURL}/chat/completions`` (streaming, ``stream_options.include_usage``); its key is
  read from the environment (``{env:OPENAI_API_KEY}``), so no file holds it.
* ``OPENCODE_DISABLE_MODELS_FETCH``, ``OPENCODE_DISABLE_AUTOUPDATE`` and
  ``OPENCODE_DISABLE_DEFAULT_PLUGINS`` stop the models.dev download, the update check and
  the built-in auth plugins; ``share: disabled``, ``snapshot: false``, ``lsp: false`` and
  ``formatter: false`` stop sharing, git snapshots and language-server/formatter downloads.
* An effort in the model's ``options`` (``reasoningEffort``) is sent as the request's
  ``reasoning_effort`` on every model call (the OpenAI values: none, minimal, low, medium,
  high, xhigh); ``--variant`` would need the same declared as a named variant, so the
  option is set directly.
* ``opencode debug skill`` / ``debug paths`` / ``debug config`` answer locally, with no
  model call (the discovery receipt); ``opencode export <session>`` prints the session's
  stored messages and token totals (the transcript usage is validated against).
"""

from __future__ import annotations

import json
from typing import Any

from ..config import Capabilities
from ._qwen_config import KEY_VARIABLE, REAL_BASE_URL  # the same OpenAI-compatible endpoint and key

__all__ = ["CONFIG_DIR", "DATA_DIR", "DISCOVERY_COMMANDS", "EFFORTS", "KEY_VARIABLE", "PROVIDER_ID", "REAL_BASE_URL",
           "SEPARATOR", "TITLE", "config_json", "discovery_script", "exec_argv", "export_argv", "launch_env"]

#: The provider id of the private configuration (the model is ``pluginbench/<runner.model>``).
PROVIDER_ID = "pluginbench"
#: The private opencode config folder under HOME (``XDG_CONFIG_HOME`` is ``HOME/.config``).
CONFIG_DIR = ".config/opencode"
#: The private data folder (sessions database, logs) under HOME.
DATA_DIR = ".local/share/opencode"
#: The session title (a given title means no title-generation model call).
TITLE = "pluginbench"
#: The no-model discovery commands, in the order their outputs are separated.
DISCOVERY_COMMANDS = (("debug", "paths"), ("debug", "skill"), ("debug", "config"))
#: The line that separates the discovery outputs on stdout.
SEPARATOR = "----pluginbench-opencode-discovery----"
#: The ``runner.reasoning`` values opencode passes: the OpenAI ``reasoning_effort`` values.
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")


def config_json(*, base_url: str, model: str, capabilities: Capabilities, reasoning: str | None = None) -> str:
    """The private ``opencode.json``: one OpenAI-compatible provider (the probe or the real
    endpoint) with the run's model, sharing, snapshots, LSP, formatters and updates off;
    ``capabilities.subagents: false`` denies the ``task`` tool (opencode's sub-agents); a
    ``reasoning`` effort is the model's ``reasoningEffort`` option (none: the text is as
    without it)."""
    entry: dict[str, Any] = {"name": model}
    if reasoning is not None:
        entry["options"] = {"reasoningEffort": reasoning}
    cfg: dict[str, Any] = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "snapshot": False,
        "lsp": False,
        "formatter": False,
        "model": f"{PROVIDER_ID}/{model}",
        "small_model": f"{PROVIDER_ID}/{model}",
        "enabled_providers": [PROVIDER_ID],
        "provider": {
            PROVIDER_ID: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "PluginBench endpoint",
                "options": {"baseURL": base_url, "apiKey": "{env:" + KEY_VARIABLE + "}"},
                "models": {model: entry},
            }
        },
    }
    if not capabilities.subagents:
        cfg["permission"] = {"task": "deny"}
    return json.dumps(cfg, indent=2, sort_keys=True) + "\n"


def exec_argv(cli: str, *, model: str) -> list[str]:
    """The pinned headless launch (the instruction goes on stdin)."""
    return [cli, "run", "--format", "json", "--model", f"{PROVIDER_ID}/{model}", "--title", TITLE, "--auto"]


def discovery_script(cli: str) -> list[str]:
    """One ``sh -c`` that runs the three no-model discovery commands with the launch's own
    environment and folder, then tells which global instruction candidates exist (opencode
    1.18.33's lookup order: ``$OPENCODE_CONFIG_DIR``, the config folder, ``~/.claude``).
    The four outputs are split by :data:`SEPARATOR`. The commands run one after the other:
    two at once on a fresh HOME race to create the sessions database (measured: "Failed
    query: CREATE TABLE `workspace`")."""
    sep = f"echo {SEPARATOR}"
    cmds = [f'"$0" {" ".join(c)}' for c in DISCOVERY_COMMANDS]
    files = ('for f in "$XDG_CONFIG_HOME/opencode/AGENTS.md" "$XDG_CONFIG_HOME/opencode/AGENTS.local.md" '
             '"$HOME/.claude/CLAUDE.md" "$HOME/.claude/CLAUDE.local.md"; do [ -f "$f" ] && echo "$f"; done; true')
    return ["sh", "-c", "set -e; " + f"; {sep}; ".join([*cmds, files]), cli]


def export_argv(cli: str, session: str) -> list[str]:
    """The CLI's own export of one stored session (no model call)."""
    return [cli, "export", session]


def launch_env(*, home: str, tmp: str, key: str) -> dict[str, str]:
    """The agent process's whole environment: a private HOME, XDG folders and TMPDIR, the
    key (the probe's fake key in probe mode), and the switches that keep it offline."""
    return {
        "HOME": home,
        "XDG_CONFIG_HOME": f"{home}/.config",
        "XDG_DATA_HOME": f"{home}/.local/share",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "XDG_STATE_HOME": f"{home}/.local/state",
        "TMPDIR": tmp,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        KEY_VARIABLE: key,
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "NO_COLOR": "1",
    }
