"""The loopback model server the real Claude Code and Codex CLIs talk to in probe mode.

It speaks Anthropic Messages (``POST /v1/messages``, streaming and not, plus
``count_tokens``), OpenAI Responses (``POST /v1/responses``, streaming), OpenAI Chat
Completions and the Gemini API (``/v1beta/models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse``), answers from a
:class:`Scenario` (ordered rules; the step is the number of assistant turns already in the
conversation, so the server is stateless and concurrent sessions do not interfere),
records every request, and reports exactly the usage it served. It binds only to loopback
and refuses real-looking credentials. Probe mode is a labelled test/doctor mode: the real
run path never points a CLI at it.

Public API::

    scenario = load_scenario("pluginbench/probe/scenarios/edit-file.yaml")
    with ProbeServer(scenario) as probe:
        env = launch_env("anthropic", probe.base_url).env
        ...  # run the CLI
        probe.wait_idle()
        probe.served_usage()   # {model: StepUsage} over completed coding turns
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError
from ._clis import (
    PINNED,
    VERSIONS_ENV,
    adopt_versions,
    cli_version,
    clis_dir,
    find_cli,
    prefetch_version,
    versions_env,
)
from ._launch import (
    PROBE_ANTHROPIC_KEY,
    PROBE_GEMINI_KEY,
    PROBE_OPENAI_ENV_KEY,
    PROBE_OPENAI_KEY,
    PROBE_PROVIDER_ID,
    PROBE_TOKENS,
    LaunchEnv,
    launch_env,
)
from ._match import Choice, assistant_turns, choose, is_coding
from ._scenario import ErrorSpec, Rule, Scenario, Step, StepUsage, ToolCall, When, load_scenario

if TYPE_CHECKING:
    from ._server import ProbeRequest, ProbeServer, serve_forever

#: the server's names, imported on first use: the server and its HTTP layer (``_http``)
#: cost every run that only asks a CLI's version or builds a launch environment
_SERVER_NAMES = frozenset({"ProbeRequest", "ProbeServer", "serve_forever"})


def __getattr__(name: str) -> Any:
    if name in _SERVER_NAMES:
        from . import _server

        value = getattr(_server, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

SCENARIOS_DIR = Path(__file__).parent / "scenarios"


def bundled_scenario(name: str) -> Scenario:
    """A bundled example scenario by name (``text``, ``edit-file``, ``guided``, ...)."""
    return load_scenario(SCENARIOS_DIR / f"{name}.yaml")


__all__ = [
    "PINNED",
    "PROBE_ANTHROPIC_KEY",
    "PROBE_GEMINI_KEY",
    "PROBE_OPENAI_ENV_KEY",
    "PROBE_OPENAI_KEY",
    "PROBE_PROVIDER_ID",
    "PROBE_TOKENS",
    "SCENARIOS_DIR",
    "VERSIONS_ENV",
    "adopt_versions",
    "Choice",
    "ErrorSpec",
    "LaunchEnv",
    "ProbeRequest",
    "ProbeServer",
    "Rule",
    "Scenario",
    "ScenarioError",
    "Step",
    "StepUsage",
    "ToolCall",
    "When",
    "assistant_turns",
    "bundled_scenario",
    "choose",
    "cli_version",
    "prefetch_version",
    "clis_dir",
    "find_cli",
    "is_coding",
    "launch_env",
    "load_scenario",
    "serve_forever",
    "versions_env",
]
