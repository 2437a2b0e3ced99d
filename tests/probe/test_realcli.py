"""The REAL Claude Code and Codex CLIs driven offline by the probe (tools/install-clis.sh)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from pluginbench.probe import (
    PINNED,
    PROBE_OPENAI_ENV_KEY,
    ProbeServer,
    bundled_scenario,
    cli_version,
    find_cli,
    launch_env,
)
from tests._prereq import require

pytestmark = pytest.mark.realcli

MARKER = "PLUGINBENCH-GUIDANCE-MARKER"
CLAUDE_MODEL = "claude-sonnet-4-5"
CODEX_MODEL = "gpt-5.5"  # a bundled slug: Codex then offers apply_patch


def _cli(name: str) -> Path:
    path = find_cli(name)
    require(path is not None and cli_version(path) == PINNED[name],
            f"{name} {PINNED[name]} (run tools/install-clis.sh)")
    assert path is not None
    return path


class Run:
    def __init__(self, rc: int, stdout: str, stderr: str, wall: float, work: Path):
        self.rc, self.stderr, self.wall, self.work = rc, stderr, wall, work
        self.events = [json.loads(line) for line in stdout.splitlines() if line.strip().startswith("{")]

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == type_]


def run_claude(tmp: Path, probe: ProbeServer, *, claude_md: str | None = None,
               env_over: dict[str, str] | None = None) -> Run:
    """``claude -p`` headless with a private HOME, CLAUDE_CONFIG_DIR and tmp, pointed at the probe."""
    claude = _cli("claude")
    dirs = {d: tmp / d for d in ("home", "cfg", "tmp", "work")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    if claude_md is not None:
        (dirs["cfg"] / "CLAUDE.md").write_text(claude_md)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(dirs["home"]),
           "CLAUDE_CONFIG_DIR": str(dirs["cfg"]), "CLAUDE_CODE_TMPDIR": str(dirs["tmp"]),
           **launch_env("anthropic", probe.base_url).env}
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # bypassPermissions refuses root otherwise
    env.update(env_over or {})
    argv = [str(claude), "-p", "Please do the task.", "--output-format", "stream-json",
            "--verbose", "--model", CLAUDE_MODEL, "--max-turns", "10",
            "--permission-mode", "bypassPermissions", "--strict-mcp-config",
            "--setting-sources", "user"]
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, cwd=dirs["work"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    run = Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start, dirs["work"])
    probe.wait_idle(timeout=60)
    print(f"claude run: rc={run.rc} wall={run.wall:.2f}s")
    return run


def run_codex(tmp: Path, probe: ProbeServer, *, agents_md: str | None = None,
              env_over: dict[str, str] | None = None) -> Run:
    """``codex exec --json`` with a private CODEX_HOME whose config.toml points at the probe."""
    codex = _cli("codex")
    dirs = {d: tmp / d for d in ("codex_home", "tmp", "work", "home")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    le = launch_env("responses", probe.base_url)
    (dirs["codex_home"] / "config.toml").write_text(le.config_toml or "")
    if agents_md is not None:
        (dirs["codex_home"] / "AGENTS.md").write_text(agents_md)
    # TMPDIR must not contain CODEX_HOME, or Codex's helper binaries are refused.
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(dirs["home"]),
           "CODEX_HOME": str(dirs["codex_home"]), "TMPDIR": str(dirs["tmp"]), **le.env}
    env.update(env_over or {})
    argv = [str(codex), "exec", "--json", "--skip-git-repo-check", "-s", "danger-full-access",
            "-m", CODEX_MODEL, "-C", str(dirs["work"]), "Please do the task."]
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    run = Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start, dirs["work"])
    probe.wait_idle(timeout=60)
    print(f"codex run: rc={run.rc} wall={run.wall:.2f}s")
    return run


def test_claude_code_edits_a_file_and_reports_served_usage_exactly(tmp_path: Path) -> None:
    """Claude Code runs the scripted Bash and Write for real and its result usage equals what the probe served."""
    with ProbeServer(bundled_scenario("edit-file")) as probe:
        run = run_claude(tmp_path, probe)
        served = probe.served_usage()
        probe.wait_idle(timeout=60)
        recs = probe.requests
    assert run.rc == 0, run.stderr
    assert (run.work / "probe_output.txt").read_text() == "written by the pluginbench probe\n"
    (result,) = run.of("result")
    assert result["is_error"] is False and result["result"] == "Done: probe_output.txt is written."
    bash_out = [b for e in run.of("user") for b in e["message"]["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"][0]["content"]
    assert str(run.work) in json.dumps(bash_out)  # `pwd` really ran in the work dir
    assert [(r.kind, r.rule, r.step) for r in recs] == [
        ("coding", "claude-code", 0), ("coding", "claude-code", 1), ("coding", "claude-code", 2)]
    want = served[CLAUDE_MODEL]
    mu = result["modelUsage"][CLAUDE_MODEL]
    assert (mu["inputTokens"], mu["outputTokens"], mu["cacheReadInputTokens"],
            mu["cacheCreationInputTokens"]) == (want.input_tokens, want.output_tokens,
                                                want.cache_read_input_tokens,
                                                want.cache_creation_input_tokens)
    u = result["usage"]
    assert (u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"],
            u["cache_creation_input_tokens"]) == (want.input_tokens, want.output_tokens,
                                                  want.cache_read_input_tokens,
                                                  want.cache_creation_input_tokens)


def test_codex_runs_shell_and_apply_patch_and_reports_served_usage_exactly(tmp_path: Path) -> None:
    """Codex runs the scripted shell command and patch for real and turn.completed usage equals what was served."""
    with ProbeServer(bundled_scenario("edit-file")) as probe:
        run = run_codex(tmp_path, probe)
        served = probe.served_usage()
        probe.wait_idle(timeout=60)
        recs = probe.requests
    assert run.rc == 0, run.stderr
    assert (run.work / "probe_output.txt").read_text() == "written by the pluginbench probe\n"
    items = [e["item"] for e in run.of("item.completed")]
    (cmd,) = [i for i in items if i["type"] == "command_execution"]
    assert cmd["exit_code"] == 0 and str(run.work) in cmd["aggregated_output"]
    (change,) = [i for i in items if i["type"] == "file_change"]
    assert change["status"] == "completed"
    assert [(r.kind, r.rule, r.step) for r in recs] == [
        ("coding", "codex", 0), ("coding", "codex", 1), ("coding", "codex", 2)]
    want = served[CODEX_MODEL]
    (done,) = run.of("turn.completed")
    assert done["usage"] == {"input_tokens": want.input_tokens,
                             "cached_input_tokens": want.cache_read_input_tokens,
                             "cache_write_input_tokens": want.cache_creation_input_tokens,
                             "output_tokens": want.output_tokens,
                             "reasoning_output_tokens": want.reasoning_tokens}


def test_claude_code_guidance_in_private_config_changes_behaviour(tmp_path: Path) -> None:
    """With the marker in the private CLAUDE.md the probe's agent writes the right fix; without it, the wrong one."""
    with ProbeServer(bundled_scenario("guided")) as probe:
        guided = run_claude(tmp_path / "guided", probe, claude_md=f"# Guidance\n{MARKER}: add adds.\n")
        vanilla = run_claude(tmp_path / "vanilla", probe)
        rules = [r.rule for r in probe.requests]
    assert guided.rc == 0 and vanilla.rc == 0
    assert (guided.work / "solution.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (vanilla.work / "solution.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert rules == ["claude-code-guided"] * 2 + ["claude-code-vanilla"] * 2


def test_codex_guidance_in_codex_home_changes_behaviour(tmp_path: Path) -> None:
    """With the marker in CODEX_HOME/AGENTS.md Codex applies the right fix; without it, the wrong one."""
    with ProbeServer(bundled_scenario("guided")) as probe:
        guided = run_codex(tmp_path / "guided", probe, agents_md=f"# Guidance\n{MARKER}: add adds.\n")
        vanilla = run_codex(tmp_path / "vanilla", probe)
        rules = [r.rule for r in probe.requests]
    assert guided.rc == 0 and vanilla.rc == 0
    assert (guided.work / "solution.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (vanilla.work / "solution.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert rules == ["codex-guided"] * 2 + ["codex-vanilla"] * 2


def test_claude_code_rate_limit_is_an_api_error(tmp_path: Path) -> None:
    """A scripted 429 makes Claude Code retry (CLAUDE_CODE_MAX_RETRIES=2) and end with api_error 429."""
    with ProbeServer(bundled_scenario("rate-limit")) as probe:
        run = run_claude(tmp_path, probe)
        probe.wait_idle(timeout=60)
        recs = probe.requests
        served = probe.served_usage()
    (result,) = run.of("result")
    assert run.rc == 1 and result["is_error"] is True and result["api_error_status"] == 429
    assert len(run.events) and len([e for e in run.of("system") if e.get("subtype") == "api_retry"]) == 2
    assert [(r.status, r.step) for r in recs] == [(429, 0)] * 3
    assert served == {}


def test_codex_rate_limit_fails_the_turn(tmp_path: Path) -> None:
    """A scripted 429 fails Codex's turn at once (provider retries are off in probe mode)."""
    with ProbeServer(bundled_scenario("rate-limit")) as probe:
        run = run_codex(tmp_path, probe)
        probe.wait_idle(timeout=60)
        recs = probe.requests
    assert run.rc == 1 and run.of("turn.failed")
    assert "429" in run.of("turn.failed")[0]["error"]["message"]
    assert [r.status for r in recs] == [429]


def test_claude_code_with_a_real_looking_key_is_refused(tmp_path: Path) -> None:
    """A real-looking Anthropic key reaching the probe is refused with 401 and flagged."""
    with ProbeServer(bundled_scenario("text")) as probe:
        run = run_claude(tmp_path, probe,
                         env_over={"ANTHROPIC_API_KEY": "sk-ant-api03-" + "x" * 40})
        probe.wait_idle(timeout=60)
        recs = probe.requests
    (result,) = run.of("result")
    assert run.rc == 1 and result["api_error_status"] == 401
    assert recs and all(r.refused_real_credential and r.status == 401 for r in recs)
    assert "sk-ant-api03" not in json.dumps([r.headers for r in recs])


def test_codex_with_a_real_looking_key_is_refused(tmp_path: Path) -> None:
    """A real-looking OpenAI key reaching the probe is refused with 401 and flagged."""
    with ProbeServer(bundled_scenario("text")) as probe:
        run = run_codex(tmp_path, probe, env_over={PROBE_OPENAI_ENV_KEY: "sk-proj-" + "y" * 40})
        probe.wait_idle(timeout=60)
        recs = probe.requests
    assert run.rc == 1 and "401" in run.of("turn.failed")[0]["error"]["message"]
    assert [(r.refused_real_credential, r.status) for r in recs] == [(True, 401)]


def test_claude_code_cut_streams_fall_back_to_non_streaming(tmp_path: Path) -> None:
    """Cut streams make Claude Code retry, then try once without streaming, then fail with no usage."""
    with ProbeServer(bundled_scenario("drop-stream")) as probe:
        run = run_claude(tmp_path, probe)
        probe.wait_idle(timeout=60)  # a cut stream is recorded when its connection ends
        recs = probe.requests
        served = probe.served_usage()
    (result,) = run.of("result")
    assert run.rc == 1 and result["is_error"] is True
    # Racy in the CLI: it may count the input usage that cut streams' message_start
    # announced (whole streams' worth, at most one per streamed request), or nothing.
    counted = result["modelUsage"].get(CLAUDE_MODEL, {}).get("inputTokens", 0)
    per_stream = recs[0].usage.input_tokens if recs[0].usage else 0
    streamed = sum(1 for r in recs if r.stream)
    assert per_stream > 0 and counted % per_stream == 0 and counted <= streamed * per_stream
    assert [r.stream for r in recs] == [True, True, True, False]
    assert all(r.answer == "drop_stream" and not r.completed for r in recs)
    assert served == {}


def test_codex_cut_stream_fails_the_turn(tmp_path: Path) -> None:
    """A cut stream fails Codex's turn (stream retries are off in probe mode)."""
    with ProbeServer(bundled_scenario("drop-stream")) as probe:
        run = run_codex(tmp_path, probe)
        probe.wait_idle(timeout=60)
        recs = probe.requests
    assert run.rc == 1 and "stream disconnected" in run.of("turn.failed")[0]["error"]["message"]
    assert [(r.answer, r.completed) for r in recs] == [("drop_stream", False)]
