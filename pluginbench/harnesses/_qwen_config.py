"""Qwen Code's pinned launch, private settings and environment (pure).

Facts measured on ``@qwen-code/qwen-code`` 0.24.4 against the loopback probe:

* Headless: a positional prompt with ``--output-format stream-json`` prints one JSON event
  per line (``system/init``, ``assistant``, ``user``, ``result``); ``--approval-mode yolo``
  runs tools without asking; ``--auth-type openai`` selects the OpenAI-compatible provider,
  which reads ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` from the environment and posts to
  ``{OPENAI_BASE_URL}/chat/completions`` (streaming, ``stream_options.include_usage``).
* Its global instruction file is ``~/.qwen/QWEN.md``; user skills are
  ``~/.qwen/skills/<name>/SKILL.md``; settings ``~/.qwen/settings.json``. With HOME a private
  folder nothing of the operator's own ``~/.qwen`` is read.
* Managed auto-memory (``memory.enableManagedAutoMemory``, on by default) adds an "auto
  memory" file to every prompt: off here, so vanilla loads nothing but the CLI's own files.
* ``model.generationConfig.maxRetries`` bounds its rate-limit retries; a 429 whose message
  says a quota is exceeded and when it resets fails at once.
* ``/context -d`` as the prompt answers locally, with no model call: the memory files and
  skills the session would load (the discovery receipt).
"""

from __future__ import annotations

import json
from typing import Any

from ..config import Capabilities

#: The private Qwen Code folder under HOME.
QWEN_DIR = ".qwen"
#: The model API host a real run reaches (the OpenAI-compatible endpoint).
REAL_BASE_URL = "https://api.openai.com/v1"
#: The host variable a real run's key is read from (OpenAI-compatible harnesses).
KEY_VARIABLE = "OPENAI_API_KEY"
#: The no-model discovery prompt (a local slash command).
DISCOVERY_PROMPT = "/context -d"


def settings_json(*, probe: bool, capabilities: Capabilities) -> str:
    """The private ``~/.qwen/settings.json``: update checks, telemetry and managed
    auto-memory off; chat recording and usage statistics on (``privacy.usageStatisticsEnabled``
    also gates the local usage log ``~/.qwen/usage/``, one of the three usage records; the
    sandbox's egress allow-list keeps any upload from leaving); bounded retries
    (none in probe mode, so a scripted error is answered at once)."""
    settings: dict[str, Any] = {
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "chatRecording": True},
        "telemetry": {"enabled": False},
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False, "enableAutoSkill": False},
        "model": {"generationConfig": {"maxRetries": 0 if probe else 2,
                                       "retryInitialDelayMs": 50 if probe else 2000,
                                       "retryMaxDelayMs": 100 if probe else 30000}},
    }
    if not capabilities.subagents:
        settings["tools"] = {"exclude": ["agent"]}
    elif capabilities.max_depth is not None:
        settings["model"]["maxSubagentDepth"] = capabilities.max_depth
    return json.dumps(settings, indent=2, sort_keys=True) + "\n"


def exec_argv(cli: str, *, model: str, prompt: str, subagents: bool = True) -> list[str]:
    """The pinned headless launch (the prompt last)."""
    argv = [cli, "--auth-type", "openai", "--model", model, "--output-format", "stream-json",
            "--approval-mode", "yolo", "--chat-recording"]
    if not subagents:
        argv += ["--exclude-tools", "agent"]
    return [*argv, prompt]


def launch_env(*, home: str, tmp: str, base_url: str, key: str) -> dict[str, str]:
    """The agent process's whole environment: a private HOME and TMPDIR, the endpoint and
    its key (the probe's fake key in probe mode)."""
    return {
        "HOME": home,
        "TMPDIR": tmp,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": key,
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
        # no second node process re-launched with a bigger heap: halves startup in a sandbox
        "QWEN_CODE_NO_RELAUNCH": "1",
        "NO_COLOR": "1",
    }
