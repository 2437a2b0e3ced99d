"""Pure builders of Codex's private configuration, launch argv and environment.

Pinned facts (measured by the team on Codex 0.169.0):

* ``codex exec`` always runs with approval ``never``; the sandbox mode is
  ``danger-full-access`` because PluginBench's own sandbox (bubblewrap/docker) is the
  boundary and Codex's nested bubblewrap cannot start inside it.
* A custom provider id with ``wire_api = "responses"`` is the only way to reach the
  loopback probe without WebSocket retries; its key comes from ``env_key``.
* ``TMPDIR`` must not contain ``CODEX_HOME`` (helper binaries are refused there).
* Stdin must be closed, or Codex waits for EOF and appends a ``<stdin>`` block.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..config import Capabilities
from ..errors import InputError

#: The most concurrently running Codex children, and the default.
CODEX_MAX_THREADS = 4
#: Codex's depth preference when none is set.
CODEX_DEFAULT_MAX_DEPTH = 1


def codex_settings(caps: Capabilities) -> tuple[bool, int, int]:
    """(subagents, max_threads, max_depth) as the private Codex config carries them."""
    threads = CODEX_MAX_THREADS if caps.max_threads is None else min(caps.max_threads, CODEX_MAX_THREADS)
    depth = CODEX_DEFAULT_MAX_DEPTH if caps.max_depth is None else caps.max_depth
    return caps.subagents, threads, depth

#: The private marketplace every plugin installs through.
MARKETPLACE = "pluginbench-local"
#: Where the private CODEX_HOME and the local marketplace live inside the sandbox HOME.
CODEX_DIR = ".codex"
MARKET_DIR = ".pluginbench-market"


def _toml_str(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes for every character.
    return json.dumps(value, ensure_ascii=False)


#: ``[features.multi_agent_v2]`` key that hides the V2 spawn tool's model and effort fields.
V2_HIDE_SPAWN_OVERRIDES = "expose_spawn_agent_model_overrides"


def config_toml(
    *, probe: tuple[str, Mapping[str, str]] | None, capabilities: Capabilities | None = None
) -> str:
    """The private ``config.toml``, identical for every arm.

    Code Mode tool access is on (``features.code_mode``) for every arm and every review
    call. The remote plugin catalog and app integrations are off for every arm, update checks
    and analytics are off, approval is never and Codex's own sandbox is off (the
    attempt's sandbox is the boundary). ``probe`` is ``(provider id, provider table)``
    from :func:`pluginbench.probe.launch_env` (values already TOML-encoded): the loopback
    provider is selected with a custom id; real runs keep the built-in provider.

    The capability policy (:func:`codex_settings`): ``subagents:
    false`` turns both native agent runtimes off (``features.multi_agent`` and
    ``features.multi_agent_v2``, checked with ``--strict-config``: the V1 namespace
    ``multi_agent_v1`` then leaves the model-visible tool list); otherwise
    ``[agents] max_threads`` (at most 4) and ``max_depth`` (a V1 preference) are set, the
    V2 spawn tool's ``model``/``reasoning_effort`` fields are hidden, and the model keeps
    choosing its runtime.
    """
    subagents, max_threads, max_depth = codex_settings(capabilities or Capabilities())
    lines = [
        "# Written by PluginBench: the private Codex configuration of one attempt.",
        "check_for_update_on_startup = false",
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
    ]
    if probe is not None:
        lines.append(f"model_provider = {_toml_str(probe[0])}")
    lines += [
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[features]",
        "apps = false",
        "remote_plugin = false",
        # Code Mode tool access, explicitly on (the product's fixed setting for vanilla,
        # treatments and reviews alike). On 0.169.0 the feature is off by default; on, the
        # model is offered the ``exec`` and ``wait`` tools (checked against the real CLI).
        "code_mode = true",
    ]
    if not subagents:
        lines += ["multi_agent = false", "multi_agent_v2 = false"]
    else:
        # V2 only: drop the spawn tool's ``model``/``reasoning_effort`` fields (checked on
        # 0.169.0: a table without ``enabled`` leaves the runtime to the model, and V1's
        # spawn_agent keeps its fields). Not a lock: children on another model or effort
        # are still detected from the rollouts and make the attempt ineligible.
        lines += [f"multi_agent_v2 = {{ {V2_HIDE_SPAWN_OVERRIDES} = false }}"]
        lines += ["", "[agents]", f"max_threads = {max_threads}", f"max_depth = {max_depth}"]
    if probe is not None:
        provider_id, table = probe
        lines += ["", f"[model_providers.{_toml_str(provider_id)}]"]
        lines += [f"{k} = {v}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def exec_argv(
    cli: str,
    *,
    workdir: str,
    model: str,
    reasoning: str | None,
    prompt: str,
    bypass_hook_trust: bool,
) -> list[str]:
    """The pinned ``codex exec`` argv. The prompt is the last argument, after ``--``."""
    argv = [cli, "exec", "--json", "--strict-config", "--skip-git-repo-check", "-C", workdir, "-m", model]
    if reasoning is not None:
        argv += ["-c", f"model_reasoning_effort={_toml_str(reasoning)}"]
    if bypass_hook_trust:
        # Hooks of the verified, frozen plugin packages only: untrusted hooks are skipped
        # silently otherwise (research §10.4).
        argv.append("--dangerously-bypass-hook-trust")
    argv += ["--", prompt]
    return argv


def discovery_settings(model: str | None, reasoning: str | None) -> list[str]:
    """The ``-c`` settings ``codex debug prompt-input`` renders with: the exec launch's own
    model and effort (and, as in the launch, the repository's project docs on)."""
    args = ["-c", f"model={json.dumps(model)}"] if model else []
    if reasoning is not None:
        args += ["-c", f"model_reasoning_effort={_toml_str(reasoning)}"]
    return args


def launch_env(*, home: str, tmp: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every Codex command: private HOME/CODEX_HOME, TMPDIR outside it."""
    codex_home = f"{home.rstrip('/')}/{CODEX_DIR}"
    if tmp.rstrip("/") == home.rstrip("/") or codex_home.startswith(tmp.rstrip("/") + "/"):
        raise ValueError(f"TMPDIR {tmp} contains CODEX_HOME {codex_home}; Codex refuses its helpers there")
    env = {"HOME": home, "CODEX_HOME": codex_home, "TMPDIR": tmp, "NO_COLOR": "1"}
    env.update(extra or {})
    return env


#: Where discovery's proxies point: a port on the sandbox's own loopback that nothing
#: listens on, so a connection is refused by the sandbox's kernel before any name lookup.
OFFLINE_PROXY = "http://127.0.0.1:9"


def offline_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for the no-model discovery commands, which need no network at all.

    Every Codex process (0.169.0) starts the curated-plugins sync when plugins are on, with
    no setting to turn it off: ``git ls-remote https://github.com/openai/plugins.git``,
    then ``api.github.com`` and ``chatgpt.com`` over HTTP(S) (seen in the sandbox's egress
    log and with strace). Here git may use only local repositories (``GIT_ALLOW_PROTOCOL=file``:
    the local marketplace still installs) and the HTTP clients go to a proxy that refuses
    on the sandbox's own loopback, so discovery makes no network call, and no name lookup.
    What Codex loads does not change: the sync cannot reach its server from a sandbox.
    """
    out = dict(env)
    out["GIT_ALLOW_PROTOCOL"] = "file"
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        out[name] = OFFLINE_PROXY
    out["NO_PROXY"] = out["no_proxy"] = ""
    return out


def marketplace_json(plugins: Sequence[str]) -> str:
    """The private local marketplace listing each plugin under ``./plugins/<name>``."""
    doc = {
        "name": MARKETPLACE,
        "plugins": [{"name": n, "source": {"source": "local", "path": f"./plugins/{n}"}} for n in plugins],
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


#: Requests for the no-model discovery session (``codex app-server`` JSON-RPC on stdio).
def app_server_requests(cwd: str) -> list[dict[str, object]]:
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "pluginbench", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "skills/list", "params": {"cwds": [cwd]}},
        {"jsonrpc": "2.0", "id": 3, "method": "hooks/list", "params": {"cwds": [cwd]}},
        {"jsonrpc": "2.0", "id": 4, "method": "plugin/list", "params": {"cwds": [cwd]}},
    ]


#: POSIX sh: feed the requests (``$1``) and keep stdin open until every answer (ids 2-4)
#: came, so the server answers before it sees EOF (at most 30 s); then print everything
#: the server wrote (a copy is kept in ``$2``). No polling: the answers are counted as
#: they arrive, and the count is the signal (through a FIFO held open read-write, so
#: neither side can block on opening it) that closes the server's stdin at once.
APP_SERVER_SCRIPT = r"""
req="$1"; out="$2"; shift 2
rm -f "$out.fifo" && mkfifo -m 600 "$out.fifo" && exec 4<>"$out.fifo" && rm -f "$out.fifo" || exit 125
{ printf '%s' "$req"; read -r _ <&4; } | "$@" app-server 4>&- | tee "$out" | {
  n=$(timeout 30 grep -m 3 -c -E '"id":(2|3|4),'); echo "${n:-0}" >&4; cat > /dev/null; }
cat "$out"
"""


def probe_settings(base_url: str) -> tuple[str, str, str, dict[str, str]]:
    """(provider id, key variable, fake key, provider table) from the probe's launch settings."""
    from ..probe import PROBE_OPENAI_KEY
    from ..probe import launch_env as probe_launch_env

    launch = probe_launch_env("responses", base_url)
    provider_id = ""
    table: dict[str, str] = {}
    for arg in launch.config_args[1::2]:
        key, _, value = arg.partition("=")
        if key == "model_provider":
            provider_id = json.loads(value)
        elif key.startswith("model_providers."):
            table[key.split(".", 2)[2]] = value
    ((key_var, key),) = launch.env.items()
    if key != PROBE_OPENAI_KEY or not provider_id:
        raise InputError("probe launch settings carry an unexpected credential", fix="use the probe's fake key")
    return provider_id, key_var, key, table
