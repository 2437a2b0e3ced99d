"""Pure parts of the Qwen Code harness and the probe's Chat Completions: no CLI, no sockets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.config import Capabilities
from pluginbench.errors import ConfigError
from pluginbench.harnesses._qwen import QwenHarness
from pluginbench.harnesses._qwen_config import exec_argv, settings_json
from pluginbench.harnesses._qwen_trace import (
    classify_provider_stop,
    compare,
    read_context,
    validate_usage,
)
from pluginbench.probe import load_scenario
from pluginbench.probe._chat import build_message, stream_events
from pluginbench.probe._match import assistant_turns, choose, request_cwd

SESSION = "s-1"
CONTEXT_RESULT = (
    "## Context Usage\n\n**Memory files**\n  └ ~/.qwen/output-language.md         211 tokens (0.0%)\n"
    "  └ ~/.qwen/QWEN.md                     11 tokens (0.0%)\n\n**Skills**\n"
    "  └ review                             197 tokens (0.0%)\n  └ careful-edits (active)   40 tokens (0.0%)\n"
)


def _line(obj: dict) -> str:
    return json.dumps(obj) + "\n"


def _context_stdout(result: str = CONTEXT_RESULT, turns: int = 0) -> str:
    return (_line({"type": "system", "subtype": "init", "session_id": SESSION, "qwen_code_version": "0.24.4"})
            + _line({"type": "result", "is_error": False, "num_turns": turns, "result": result}))


def _session(answers: list[tuple[int, int, int]], *, log: list[tuple[int, int, int]] | None = None,
             total: tuple[int, int, int] | None = None) -> tuple[str, str, str]:
    log = answers if log is None else log
    s = [sum(a[i] for a in answers) for i in range(3)] if total is None else list(total)
    stdout = (_line({"type": "system", "subtype": "init", "session_id": SESSION})
              + _line({"type": "result", "is_error": False, "num_turns": len(answers),
                       "usage": {"input_tokens": s[0], "output_tokens": s[1], "cache_read_input_tokens": s[2]}}))
    usage_log = "".join(_line({"sessionId": SESSION, "inputTokens": i, "outputTokens": o, "cachedTokens": c})
                        for i, o, c in log)
    transcript = "".join(_line({"type": "system", "systemPayload": {"uiEvent": {
        "event.name": "qwen-code.api_response", "status_code": 200, "input_token_count": i,
        "output_token_count": o, "cached_content_token_count": c, "thoughts_token_count": 1}}}) for i, o, c in answers)
    return stdout, usage_log, transcript


def test_context_listing_reads_memory_files_and_skills():
    """/context -d's memory files and skills are read from its result text, with no model call."""
    listing = read_context(_context_stdout())
    assert listing.memory_files == ("~/.qwen/output-language.md", "~/.qwen/QWEN.md")
    assert listing.skills == ("careful-edits", "review") and listing.model_calls == 0 and listing.ok


@pytest.mark.parametrize(("guidance", "skills", "vanilla", "problem"), [
    (True, ("careful-edits",), ("review",), None),
    (False, ("careful-edits",), ("review",), "loaded but the arm declares no guidance"),
    (True, ("other",), None, "the declared skill 'other' did not load"),
    (True, (), ("review",), "skill 'careful-edits' loaded from outside the treatment"),
])
def test_receipt_compares_what_loaded_with_the_declaration(guidance, skills, vanilla, problem):
    """The receipt passes only when exactly the declared QWEN.md and skills load beside the CLI's own."""
    receipt = compare(read_context(_context_stdout()), guidance=guidance, skills=skills, vanilla_skills=vanilla)
    assert receipt["ok"] == (problem is None)
    assert problem is None or any(problem in m for m in receipt["mismatches"])


def test_receipt_refuses_a_foreign_memory_file_and_a_model_call():
    """A memory file from outside the treatment (auto memory) or a model call fails discovery."""
    text = CONTEXT_RESULT.replace("**Skills**", "  └ auto memory   1.2k tokens (0.1%)\n\n**Skills**")
    receipt = compare(read_context(_context_stdout(text, turns=1)), guidance=True, skills=(), vanilla_skills=None)
    assert not receipt["ok"] and len(receipt["mismatches"]) == 2


def test_usage_is_exact_only_when_three_records_agree():
    """Usage is exact when transcript, usage log and result agree; any disagreement or a
    zero-usage answer makes it unknown with a reason, never zero."""
    exact = validate_usage(*_session([(1200, 40, 300), (1300, 30, 350)]), timed_out=False)
    assert (exact.status, exact.input_tokens, exact.cached_input_tokens, exact.uncached_input_tokens,
            exact.output_tokens, exact.reasoning_output_tokens, exact.total_tokens) == (
        "exact", 2500, 650, 1850, 70, 2, 2570)
    for bad in (_session([(1200, 40, 300)], log=[]), _session([(1200, 40, 300)], total=(1, 40, 300)),
                _session([(0, 0, 0)])):
        u = validate_usage(*bad, timed_out=False)
        assert u.status == "unknown" and u.reason and u.input_tokens is None
    assert validate_usage(*_session([(1, 1, 0)]), timed_out=True).status == "unknown"


def test_a_429_error_result_is_a_provider_stop():
    """An error result naming HTTP 429 (or a spent quota) is a provider stop; other errors are not."""
    def stdout(msg: str) -> str:
        return _line({"type": "system", "subtype": "init", "session_id": SESSION}) + _line(
            {"type": "result", "is_error": True, "error": {"message": msg}})
    assert "429" in (classify_provider_stop(stdout("[API Error: 429 slow down]"), "", timed_out=False) or "")
    assert classify_provider_stop(stdout("[API Error: 401 bad key]"), "", timed_out=False).startswith("authentication")
    assert classify_provider_stop(stdout("tool crashed"), "", timed_out=False) is None


def test_launch_settings_and_capabilities():
    """The pinned launch has the prompt last and excludes the agent tool when sub-agents are off;
    probe settings never retry and keep auto-memory off."""
    argv = exec_argv("qwen", model="m", prompt="P", subagents=False)
    assert argv[-1] == "P" and "--exclude-tools" in argv and "--output-format" in argv
    settings = json.loads(settings_json(probe=True, capabilities=Capabilities(subagents=False)))
    assert settings["model"]["generationConfig"]["maxRetries"] == 0
    assert settings["memory"]["enableManagedAutoMemory"] is False and settings["tools"]["exclude"] == ["agent"]
    policy = QwenHarness.capability_policy(Capabilities(subagents=False))
    assert policy["subagents"]["enforcement"] == "enforced"
    deep = json.loads(settings_json(probe=False, capabilities=Capabilities(max_depth=2)))
    assert deep["model"]["maxSubagentDepth"] == 2 and "tools" not in deep
    assert QwenHarness.capability_policy(Capabilities(max_depth=2))["max_depth"]["enforcement"] == "enforced"


def test_plugins_are_refused_at_admission_naming_the_cli(tmp_path: Path):
    """An arm with plugins is refused before a run exists, naming Qwen Code."""
    class T:
        guidance: list[str] = []
        skills: list[str] = []
        plugins = [str(tmp_path)]

    class Ev:
        treatments = {"p": T()}

    with pytest.raises(ConfigError, match="Qwen Code"):
        QwenHarness.admit_evaluation(Ev(), probe=True)


def test_probe_chat_answers_render_tools_usage_and_turns():
    """Chat Completions: the portable shell maps to the offered function, {{cwd}} comes from
    Qwen Code's prompt, usage rides the last chunk, turns count assistant messages."""
    scenario = load_scenario(Path(__file__).resolve().parents[2] / "pluginbench/probe/scenarios/edit-file.yaml")
    body = {"model": "m", "stream": True,
            "messages": [{"role": "system", "content": "I'm currently working in the directory: /app\n"},
                         {"role": "user", "content": "go"}],
            "tools": [{"type": "function", "function": {"name": "run_shell_command"}},
                      {"type": "function", "function": {"name": "write_file"}}]}
    assert assistant_turns("chat", body) == 0 and request_cwd("chat", body) == "/app"
    step = choose(scenario, "chat", body).step
    msg = build_message(step, body, "/app")
    assert msg["tool_calls"][0]["function"]["name"] == "run_shell_command"
    events = stream_events(msg, {"prompt_tokens": 1200}, "m")
    assert events[-1] == b"data: [DONE]\n\n" and b'"usage":{"prompt_tokens":1200}' in events[-2]
    second = choose(scenario, "chat", {**body, "messages": [*body["messages"], {"role": "assistant"}]}).step
    assert json.loads(build_message(second, body, "/app")["tool_calls"][0]["function"]["arguments"])[
        "file_path"] == "/app/probe_output.txt"


def test_docker_coding_image_carries_a_private_node_for_a_node_major_pin(tmp_path: Path):
    """A pin with node_major gets the host's node and a wrapper running its entry point; a
    native pin keeps its .bin link; a node older than required is refused naming both versions."""
    import io
    import shutil
    import tarfile

    from pluginbench.environments._docker_derived import _context, private_node
    from pluginbench.errors import EnvironmentFailure
    from pluginbench.harness_registry import CliPin

    if shutil.which("node") is None:
        pytest.skip("no node on this host")
    modules = tmp_path / "node_modules"
    (modules / "@x" / "pkg").mkdir(parents=True)
    (modules / "@x" / "pkg" / "cli.js").write_text("console.log(1)\n")
    (modules / ".bin").mkdir()
    (modules / ".bin" / "x").symlink_to("../@x/pkg/cli.js")
    needs = CliPin(command="x", package="@x/pkg", version="1.0.0", node_major=1)
    buf = io.BytesIO()
    _context(tmp_path, "x", needs, "sha256:base", buf)
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tf:
        wrapper = tf.extractfile("clis/node_modules/.bin/x")
        assert wrapper is not None and wrapper.read() == (
            b'#!/bin/sh\nexec /opt/pluginbench/clis/node/bin/node /opt/pluginbench/clis/node_modules/@x/pkg/cli.js "$@"\n')
        assert tf.getmember("clis/node/bin/node").isfile()
    buf = io.BytesIO()
    _context(tmp_path, "x", CliPin(command="x", package="@x/pkg", version="1.0.0"), "sha256:base", buf)
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tf:
        assert tf.getmember("clis/node_modules/.bin/x").issym() and "clis/node/bin/node" not in tf.getnames()
    with pytest.raises(EnvironmentFailure, match="needs node 999 or newer"):
        private_node(CliPin(command="x", package="@x/pkg", version="1.0.0", node_major=999))
    assert QwenHarness.cli is not None and QwenHarness.cli.node_major == 20
