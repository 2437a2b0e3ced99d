"""Fake credentials and the launch settings that point a real CLI at the probe.

PROBE MODE ONLY. These settings exist so the real Claude Code and Codex CLIs talk to the
loopback probe in tests and in ``pluginbench doctor``. The real-run path never sets
``ANTHROPIC_BASE_URL`` (nor a Codex provider ``base_url``) and never uses these fake
keys; a run whose launch env carries them is a labelled probe run, not a measurement.
"""

import msgspec

# Fake credentials: the probe accepts these and refuses anything shaped like a real key.
# They deliberately do not start with "sk-", so no scanner mistakes them for real ones.
PROBE_ANTHROPIC_KEY = "pluginbench-probe-fake-anthropic-key"
PROBE_OPENAI_KEY = "pluginbench-probe-fake-openai-key"
PROBE_GEMINI_KEY = "pluginbench-probe-fake-gemini-key"
PROBE_TOKENS = frozenset({PROBE_ANTHROPIC_KEY, PROBE_OPENAI_KEY, PROBE_GEMINI_KEY})

#: Environment variable Codex reads the probe key from (``env_key`` of the provider).
PROBE_OPENAI_ENV_KEY = "PLUGINBENCH_PROBE_API_KEY"
#: Codex provider id used for the probe (a custom id avoids the WebSocket attempts that
#: the built-in ``openai`` provider makes).
PROBE_PROVIDER_ID = "pluginbench-probe"


class LaunchEnv(msgspec.Struct, frozen=True, kw_only=True):
    """What a CLI needs to reach the probe.

    ``env``: variables to add to the CLI's (otherwise minimal) environment.
    ``config_toml``: Codex only — a complete ``$CODEX_HOME/config.toml`` selecting the
    probe provider (top-level keys first, so append other tables after it).
    ``config_args``: Codex only — the same settings as ``-c key=value`` overrides, for a
    config.toml the harness owns.
    """

    api: str
    env: dict[str, str]
    config_toml: str | None = None
    config_args: tuple[str, ...] = ()


def launch_env(api: str, base_url: str) -> LaunchEnv:
    """Probe-mode launch settings for ``api`` (``anthropic`` = Claude Code, ``responses`` = Codex,
    ``chat`` = Qwen Code, ``gemini`` = Gemini CLI).

    Claude Code (facts measured on 2.1.328): ``ANTHROPIC_BASE_URL`` and a key are all it
    needs offline; ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` stops the bootstrap,
    telemetry and ``HEAD /api/hello`` calls that cost ~7 s on a black-holed network;
    ``CLAUDE_CODE_MAX_RETRIES=2`` keeps scripted errors from retrying for minutes (the CLI
    retries 401 too). The harness still adds ``HOME``, ``CLAUDE_CONFIG_DIR``,
    ``CLAUDE_CODE_TMPDIR`` and, as root with bypassPermissions, ``IS_SANDBOX=1``.

    Codex (0.169.0): a custom provider with ``wire_api = "responses"`` (``chat`` is
    rejected) posting to ``{base_url}/v1/responses``, its key read from
    :data:`PROBE_OPENAI_ENV_KEY`; HTTP and stream retries are off so scripted errors fail
    at once. The harness adds ``CODEX_HOME``, a ``TMPDIR`` outside it, and picks a bundled
    model slug (e.g. ``gpt-5.5``) so Codex offers ``apply_patch``.

    Chat Completions (Qwen Code 0.24.4, ``--auth-type openai``): ``OPENAI_BASE_URL``
    (``{base_url}/v1``; the CLI posts to ``/chat/completions`` under it) and the fake key as
    ``OPENAI_API_KEY``, in the agent process's environment only.

    Gemini API (Gemini CLI 0.61.0, ``gemini-api-key`` auth): ``GOOGLE_GEMINI_BASE_URL`` (the
    base; the CLI posts to ``/v1beta/models/{model}:streamGenerateContent?alt=sse`` under it,
    plain http allowed for loopback only) and the fake key as ``GEMINI_API_KEY``, sent as
    ``x-goog-api-key``.

    The real-run path never calls this and never sets ``ANTHROPIC_BASE_URL``.
    """
    base = base_url.rstrip("/")
    if api == "anthropic":
        return LaunchEnv(api=api, env={
            "ANTHROPIC_BASE_URL": base,
            "ANTHROPIC_API_KEY": PROBE_ANTHROPIC_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "2",
        })
    if api == "responses":
        pid = PROBE_PROVIDER_ID
        provider = {
            "name": '"PluginBench probe"',
            "base_url": f'"{base}/v1"',
            "env_key": f'"{PROBE_OPENAI_ENV_KEY}"',
            "wire_api": '"responses"',
            "request_max_retries": "0",
            "stream_max_retries": "0",
            "stream_idle_timeout_ms": "30000",
        }
        toml = "\n".join([
            f'model_provider = "{pid}"',
            "check_for_update_on_startup = false",
            "",
            "[analytics]",
            "enabled = false",
            "",
            f'[model_providers.{pid}]',
            *(f"{k} = {v}" for k, v in provider.items()),
            "",
        ])
        args = (f'model_provider="{pid}"', "check_for_update_on_startup=false",
                "analytics.enabled=false",
                *(f"model_providers.{pid}.{k}={v}" for k, v in provider.items()))
        return LaunchEnv(api=api, env={PROBE_OPENAI_ENV_KEY: PROBE_OPENAI_KEY},
                         config_toml=toml,
                         config_args=tuple(a for arg in args for a in ("-c", arg)))
    if api == "chat":
        return LaunchEnv(api=api, env={"OPENAI_BASE_URL": f"{base}/v1", "OPENAI_API_KEY": PROBE_OPENAI_KEY})
    if api == "gemini":
        return LaunchEnv(api=api, env={"GOOGLE_GEMINI_BASE_URL": base, "GEMINI_API_KEY": PROBE_GEMINI_KEY})
    raise ValueError(f"unknown api {api!r} (use 'anthropic', 'responses', 'chat' or 'gemini')")
