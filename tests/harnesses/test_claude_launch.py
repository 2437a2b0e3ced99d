"""The pinned Claude Code launch, operator-environment checks, the registry and the secret scan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.errors import InputError
from pluginbench.harnesses import make_harness
from pluginbench.harnesses._claude import ClaudeHarness
from pluginbench.harnesses._claude_launch import (
    REFUSED_VARIABLES,
    check_command_env,
    check_model,
    check_operator_env,
    credentials_json,
    pinned_env,
    session_argv,
)
from pluginbench.harnesses._secrets import scan_for_secret


@pytest.mark.parametrize("var", REFUSED_VARIABLES)
def test_each_refused_variable_stops_before_anything_starts(var: str) -> None:
    """Every refused variable in the operator environment raises InputError naming it."""
    with pytest.raises(InputError, match=var):
        check_operator_env({var: "x", "CLAUDE_CODE_OAUTH_TOKEN": "t"})


def test_real_run_needs_the_token_and_probe_refuses_it() -> None:
    """A real run needs CLAUDE_CODE_OAUTH_TOKEN; a probe run refuses it."""
    check_operator_env({"CLAUDE_CODE_OAUTH_TOKEN": "t"})
    check_operator_env({}, probe=True)
    with pytest.raises(InputError, match="not set"):
        check_operator_env({})
    with pytest.raises(InputError, match="probe"):
        check_operator_env({"CLAUDE_CODE_OAUTH_TOKEN": "t"}, probe=True)


@pytest.mark.parametrize("model", ["sonnet", "opus", "claude-sonnet-latest", "gpt-5", "", None])
def test_floating_or_foreign_models_are_refused(model: str | None) -> None:
    """Aliases, -latest and non-claude ids are refused; exact ids pass."""
    with pytest.raises(InputError):
        check_model(model, "medium")
    assert check_model("claude-sonnet-4-5", "high") == ("claude-sonnet-4-5", "high")


def test_pinned_argv_and_environment() -> None:
    """One stream-json process carries discovery and coding (no prompt in argv); the env holds no credential."""
    argv = session_argv("claude", "claude-sonnet-4-5", "medium", "sid-1", subagents=False)
    assert argv[:4] == ["claude", "-p", "--input-format", "stream-json"]
    assert argv[argv.index("--session-id") + 1] == "sid-1" and "--settings" not in argv
    assert argv[argv.index("--disallowedTools") + 1] == "RemoteTrigger,CronCreate,ScheduleWakeup,SendMessage,Workflow,Agent"
    for flag in ("--strict-mcp-config", "--include-hook-events", "--verbose"):
        assert flag in argv
    assert argv[argv.index("--permission-mode") + 1] == "bypassPermissions"
    # The task repository's own CLAUDE.md and .claude/ load, as for a user in that repository.
    assert argv[argv.index("--setting-sources") + 1] == "user,project"
    env = pinned_env("/home/agent", path="/usr/bin", model="claude-sonnet-4-5")
    assert env["CLAUDE_CONFIG_DIR"] == "/home/agent/.claude-config"
    assert env["CLAUDE_CODE_SUBAGENT_MODEL"] == "claude-sonnet-4-5"
    assert check_command_env(env, probe=False) == []
    assert check_command_env({**env, "ANTHROPIC_API_KEY": "k"}, probe=False)
    assert check_command_env({**env, "CLAUDE_CODE_OAUTH_TOKEN": "k"}, probe=False)


def test_credentials_file_shape() -> None:
    """The token is delivered as claudeAiOauth.accessToken in .credentials.json."""
    assert json.loads(credentials_json("tok"))["claudeAiOauth"]["accessToken"] == "tok"


def test_registry_builds_the_claude_harness() -> None:
    """make_harness("claude", ...) builds ClaudeHarness with its options."""
    h = make_harness("claude", cli_path="/x/claude", cli_version="2.1.328", probe_base_url="http://127.0.0.1:1",
                     environ={})
    assert isinstance(h, ClaudeHarness) and h.real and not h.needs_solution and h.probe


def test_secret_scan_finds_the_token_in_artifacts(tmp_path: Path) -> None:
    """Files containing the token are listed; others and an empty secret are not."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "leak.txt").write_text("xx secret-token yy")
    (tmp_path / "clean.txt").write_text("nothing")
    assert scan_for_secret([tmp_path], "secret-token") == [tmp_path / "a" / "leak.txt"]
    assert scan_for_secret([tmp_path], "") == []
