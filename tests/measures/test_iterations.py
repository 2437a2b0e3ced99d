"""Verification iterations from saved traces: the recorded real-CLI traces and synthetic variations."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pluginbench.measures._iterations import count_attempt, count_trace
from pluginbench.measures._traces import Command, Edit, Trace, claude_trace, codex_exec_trace

from ._quality_helpers import QUALITY

RECORDED = QUALITY / "iterations"
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
HAND = {"verification_commands": 3, "verification_iterations": 1, "failed_verification_commands": 1}


def test_which_harness_saves_traces_comes_from_the_harness_port(tmp_path: Path) -> None:
    """The collector actor asks each harness adapter (``agent_traces``) whether it saves agent traces, so a
    newly registered harness that declares them gets its transcripts counted; one that does not gets an
    unknown with the reason, never zero."""
    from pluginbench.actors._collector import agent_traces
    from pluginbench.harness_registry import register_harness, unregister_harness
    from pluginbench.harnesses import HarnessBase
    from pluginbench.measures._quality import collect_iterations

    from ._quality_helpers import fixture_input

    assert (agent_traces("claude"), agent_traces("codex")) == (True, True)
    assert (agent_traces("simulated"), agent_traces("oracle"), agent_traces("nop")) == (False, False, False)

    class TracingToy(HarnessBase):
        name = "tracing-toy"
        agent_traces = True

    register_harness(TracingToy)
    try:
        assert agent_traces("tracing-toy") is True
    finally:
        unregister_harness("tracing-toy")
    attempt = tmp_path / "attempt"
    shutil.copytree(RECORDED / "claude", attempt)
    inp = fixture_input(tmp_path, "python", harness="claude")
    assert values(collect_iterations(inp)) == HAND
    unseen = collect_iterations(inp._replace(agent_traces=False, harness="tracing-free"))
    assert unseen["verification_commands"].value is None
    assert unseen["verification_commands"].reason == "the tracing-free harness saves no agent transcript to count"


def values(got: dict) -> dict:
    return {k: m.value for k, m in got.items()}


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_recorded_real_cli_traces_give_the_hand_count(harness: str) -> None:
    """The traces Claude Code and Codex wrote for the verify-loop session: 3 commands, 1 iteration, 1 failed."""
    assert values(count_attempt(RECORDED / harness)) == HAND


def test_codex_stdout_alone_gives_the_same_count(tmp_path: Path) -> None:
    """Without a saved rollout, the root trace is read from codex exec --json stdout, with the same count
    when the launch's -C folder is recorded, and incomplete when it is not (an edit may lie outside it)."""
    (tmp_path / "agent").mkdir()
    shutil.copy(RECORDED / "codex" / "agent" / "stdout.jsonl", tmp_path / "agent" / "stdout.jsonl")
    unsure = count_attempt(tmp_path)
    assert all(m.value is None and "no recorded outcome" in (m.reason or "") for m in unsure.values())
    (tmp_path / "invocation.json").write_text(json.dumps({"argv": ["codex", "exec", "--json", "-C", "/app"]}))
    assert values(count_attempt(tmp_path)) == HAND


def test_shared_samples_have_commands_but_no_verification() -> None:
    """The shared real samples run shell commands that are not verification: zero, measured (not unknown)."""
    trace, _ = claude_trace((SAMPLES / "claude-code-2.1.328" / "02_tools_bash_write.transcript.jsonl").read_text(), "root")
    assert count_trace(trace)[:3] == (0, 0, 0)
    cmdfail = codex_exec_trace((SAMPLES / "codex-0.169.0" / "cmdfail.stdout.jsonl").read_text())
    assert cmdfail.actions == (Command("echo to-stderr >&2; echo to-stdout; exit 3", True, 3, False),)
    assert count_trace(cmdfail).commands == 0


def test_no_saved_trace_is_unknown_never_zero(tmp_path: Path) -> None:
    """An attempt folder without agent traces gives unknown counts with the reason."""
    got = count_attempt(tmp_path)
    assert all(m.value is None and m.status == "unknown" and "no saved agent trace" in (m.reason or "")
               for m in got.values())


# ---------------------------------------------------------------- synthetic Claude transcripts

CWD = "/app"


def _use(uid: str, tool: str, inp: dict) -> dict:
    return {"type": "assistant", "cwd": CWD, "message": {"content": [{"type": "tool_use", "id": uid, "name": tool, "input": inp}]}}


def _result(uid: str, text: str = "ok", *, error: bool = False, extra: dict | None = None) -> dict:
    return {"type": "user", "cwd": CWD, "message": {"content": [{"type": "tool_result", "tool_use_id": uid,
                                                                 "content": text, "is_error": error}]},
            "toolUseResult": extra or {}}


def _bash(uid: str, cmd: str, text: str = "ok", *, error: bool = False, extra: dict | None = None) -> list[dict]:
    return [_use(uid, "Bash", {"command": cmd}), _result(uid, text, error=error, extra=extra)]


def _edit(uid: str, path: str, *, error: bool = False) -> list[dict]:
    return [_use(uid, "Edit", {"file_path": path, "old_string": "a", "new_string": "b"}),
            _result(uid, "done", error=error)]


def _attempt(tmp: Path, root: list[dict], subagents: list[list[dict]] = ()) -> Path:
    d = tmp / "agent" / "transcripts"
    d.mkdir(parents=True)
    (d / "s.jsonl").write_text("".join(json.dumps(e) + "\n" for e in root))
    for n, sub in enumerate(subagents):
        (d / "s" / "subagents").mkdir(parents=True, exist_ok=True)
        (d / "s" / "subagents" / f"agent-{n}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in sub))
    return tmp


def test_subagent_traces_are_counted_and_summed(tmp_path: Path) -> None:
    """A loop in the root and a loop in a subagent trace: each counts within its trace, summed per attempt."""
    root = [*_bash("1", "pytest", "Exit code 1\nF", error=True), *_edit("2", "/app/a.py"), *_bash("3", "pytest"),
            _use("4", "Task", {"prompt": "check"}), _result("4")]
    sub = [*_bash("5", "go test ./..."), *_edit("6", "b_test.go"), *_bash("7", "go test ./...")]
    assert values(count_attempt(_attempt(tmp_path, root, [sub]))) == {
        "verification_commands": 4, "verification_iterations": 2, "failed_verification_commands": 1}


def test_a_missing_subagent_trace_makes_the_attempt_incomplete(tmp_path: Path) -> None:
    """A Task call without its subagent transcript leaves every count unknown (it could hide commands)."""
    root = [*_bash("1", "pytest"), _use("2", "Task", {"prompt": "x"}), _result("2")]
    got = count_attempt(_attempt(tmp_path, root))
    assert all(m.value is None and "subagent" in (m.reason or "") for m in got.values())


def test_edits_outside_the_workspace_and_failed_edits_do_not_make_an_iteration(tmp_path: Path) -> None:
    """Only applied workspace edits count: an edit in /tmp and a failed edit between two runs make no iteration."""
    root = [*_bash("1", "pytest"), *_edit("2", "/tmp/scratch.py"), *_edit("3", "/app/a.py", error=True),
            *_bash("4", "pytest")]
    assert values(count_attempt(_attempt(tmp_path, root))) == {
        "verification_commands": 2, "verification_iterations": 0, "failed_verification_commands": 0}


def test_refused_commands_are_excluded_and_ad_hoc_scripts_are_not_verification(tmp_path: Path) -> None:
    """A command refused before starting and `python check.py` are not counted."""
    root = [*_bash("1", "pytest", "<tool_use_error>Permission denied</tool_use_error>", error=True),
            *_bash("2", "python check.py"), *_bash("3", "pytest")]
    assert values(count_attempt(_attempt(tmp_path, root))) == {
        "verification_commands": 1, "verification_iterations": 0, "failed_verification_commands": 0}


def test_an_interrupted_command_counts_with_an_unknown_outcome(tmp_path: Path) -> None:
    """An interrupted verification command is counted; the failed count becomes unknown with the reason."""
    root = [*_bash("1", "pytest", "interrupted", error=True, extra={"interrupted": True}), *_edit("2", "a.py"),
            *_bash("3", "pytest")]
    got = count_attempt(_attempt(tmp_path, root))
    assert (got["verification_commands"].value, got["verification_iterations"].value) == (2, 1)
    assert got["failed_verification_commands"].value is None
    assert "interrupted" in (got["failed_verification_commands"].reason or "")


def test_an_unresolved_final_command_keeps_the_failed_count_unknown(tmp_path: Path) -> None:
    """A last verification command with no result (a cut-off session) counts; whether it failed is unknown."""
    root = [*_bash("1", "pytest"), *_edit("2", "a.py"), _use("3", "Bash", {"command": "pytest"})]
    got = count_attempt(_attempt(tmp_path, root))
    assert (got["verification_commands"].value, got["verification_iterations"].value) == (2, 1)
    assert got["failed_verification_commands"].status == "unknown"


def test_a_malformed_command_that_could_verify_makes_the_attempt_incomplete(tmp_path: Path) -> None:
    """An unterminated quote with `pytest` inside could change the count: every count is unknown."""
    root = [*_bash("1", "echo 'oops; pytest"), *_bash("2", "pytest")]
    got = count_attempt(_attempt(tmp_path, root))
    assert all(m.value is None and "incomplete" in (m.reason or "") for m in got.values())


def test_a_malformed_command_that_cannot_verify_is_ignored(tmp_path: Path) -> None:
    """An unterminated quote around `ls` cannot change a count: ignored, the counts stay measured."""
    root = [*_bash("1", "echo 'oops; ls"), *_bash("2", "pytest")]
    assert values(count_attempt(_attempt(tmp_path, root)))["verification_commands"] == 1


def test_masked_failures_are_not_failed_commands() -> None:
    """`pytest | tail` exiting 0 after a failure and `pytest || true` are masked: not counted as failed."""
    trace = Trace("t", (Command("pytest | tail", True, 0, False), Command("pytest || true", True, 0, False),
                        Command("pytest", True, 2, False), Edit("a.py", None), Command("pytest", True, 0, False)))
    got = count_trace(trace)
    assert (got.commands, got.failed) == (4, 1)
    assert got.ambiguous and "no recorded outcome" in got.ambiguous[0]


# ---------------------------------------------------------------- synthetic Codex rollouts


def _rollout(calls: list[tuple[str, str, object, str | None]]) -> str:
    """A rollout with session_meta (cwd /app) and (name, call_id, arguments, output) calls."""
    lines = [{"type": "session_meta", "payload": {"cwd": "/app", "id": "s"}}]
    for name, cid, args, out in calls:
        kind = "custom_tool_call" if name == "apply_patch" else "function_call"
        key = "input" if kind == "custom_tool_call" else "arguments"
        lines.append({"type": "response_item", "payload": {"type": kind, "name": name, "call_id": cid,
                                                            key: args if isinstance(args, str) else json.dumps(args)}})
        if out is not None:
            lines.append({"type": "response_item", "payload": {"type": f"{kind}_output", "call_id": cid, "output": out}})
    return "".join(json.dumps(x) + "\n" for x in lines)


def _codex_attempt(tmp: Path, *rollouts: str) -> Path:
    d = tmp / "agent" / "rollouts"
    d.mkdir(parents=True)
    for n, text in enumerate(rollouts):
        (d / f"rollout-{n}.jsonl").write_text(text)
    return tmp


PATCH = "*** Begin Patch\n*** Update File: calc.py\n@@\n-a\n+b\n*** End Patch\n"


def test_codex_child_rollouts_are_counted_and_missing_children_make_it_incomplete(tmp_path: Path) -> None:
    """A root rollout that spawned one subagent and its child rollout: loops in both are summed; without the
    child's rollout the attempt is incomplete."""
    root = _rollout([("exec_command", "1", {"cmd": "go test ./..."}, "Process exited with code 1\nFAIL"),
                     ("apply_patch", "2", PATCH, json.dumps({"output": "Success.", "metadata": {"exit_code": 0}})),
                     ("exec_command", "3", {"cmd": "go test ./..."}, "Process exited with code 0\nok"),
                     ("spawn_agent", "4", {"message": "review"}, "spawned")])
    child = _rollout([("exec_command", "5", {"cmd": "cargo test"}, "Process exited with code 0"),
                      ("apply_patch", "6", PATCH, "Success. Updated the following files"),
                      ("exec_command", "7", {"cmd": "cargo test | tail"}, "Process exited with code 0")])
    assert values(count_attempt(_codex_attempt(tmp_path / "both", root, child))) == {
        "verification_commands": 4, "verification_iterations": 2, "failed_verification_commands": 1}
    alone = count_attempt(_codex_attempt(tmp_path / "root", root))
    assert all(m.value is None and "child rollout" in (m.reason or "") for m in alone.values())


def test_codex_failed_patch_and_still_running_command(tmp_path: Path) -> None:
    """A patch whose output says it failed is no edit; a command still running when its output was read has
    no exit code, so the failed count is unknown."""
    root = _rollout([("exec_command", "1", {"cmd": "pytest"}, "Process exited with code 0"),
                     ("apply_patch", "2", PATCH, "error: patch did not apply"),
                     ("exec_command", "3", {"cmd": "pytest"}, "Process running with session ID 7")])
    got = count_attempt(_codex_attempt(tmp_path, root))
    assert (got["verification_commands"].value, got["verification_iterations"].value) == (2, 0)
    assert got["failed_verification_commands"].value is None
