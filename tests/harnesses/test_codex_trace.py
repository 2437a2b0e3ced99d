"""Codex trace readers, usage validation and provider-stop rules, on real 0.169.0 samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.harnesses._codex import read_agent_run
from pluginbench.harnesses._codex_events import (
    reachable_sessions,
    read_exec_stream,
    read_rollout,
    reconnect_parts,
)
from pluginbench.harnesses._codex_usage import classify_provider_stop, validate_usage

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "codex-0.169.0"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def lines(*events: dict) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def rollout_lines(thread: str, totals: list[dict] | None, error: dict | None = None, parent: str | None = None) -> str:
    """A synthetic rollout shaped like the real ones (session_meta, token_count, task_complete)."""
    meta = {"id": thread, "session_id": thread, "source": "exec" if parent is None else {"subagent": {"thread_spawn": {"parent_thread_id": parent}}}}
    recs = [{"type": "session_meta", "payload": meta}]
    for t in totals or []:
        recs.append({"type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": {**t, "total_tokens": t["input_tokens"] + t["output_tokens"]}}}})
    recs.append({"type": "event_msg", "payload": {"type": "task_complete", "error": error}})
    return lines(*recs)


def tot(i: int, c: int, o: int, r: int) -> dict:
    return {"input_tokens": i, "cached_input_tokens": c, "cache_write_input_tokens": 0, "output_tokens": o, "reasoning_output_tokens": r}


def test_shell_sample_stream_is_read():
    """The real shell sample yields its thread id, one command, one message and summed usage."""
    trace = read_exec_stream(sample("shell.stdout.jsonl"))
    assert trace.thread_id == "01a22a54-8028-7281-85d5-b220b891f706"
    assert (trace.turns_completed, trace.commands, trace.agent_messages) == (1, 1, 1)
    assert trace.usage == {"input_tokens": 2010, "cached_input_tokens": 800, "output_tokens": 101, "reasoning_output_tokens": 14}
    assert trace.turn_failed is None and trace.bad_lines == 0


def test_hooks_bypass_sample_usage_is_exact_against_its_rollout():
    """The real hooks-bypass stream and its rollout agree, so usage is exact with uncached split out."""
    run = read_agent_run(sample("hooks-bypass.stdout.jsonl"), [sample("rollout-hooks-bypass.jsonl")],
                         exit_code=0, timed_out=False, seconds=2.0)
    u = run.usage
    assert u.status == "exact", u.reason
    assert (u.input_tokens, u.cached_input_tokens, u.uncached_input_tokens) == (2010, 800, 1210)
    assert (u.output_tokens, u.reasoning_output_tokens, u.total_tokens) == (101, 14, 2111)
    assert run.provider_stop is None and run.error is None


def test_disagreeing_stream_usage_is_unknown_never_zero():
    """When turn.completed usage differs from the rollout total, usage is unknown with a reason."""
    stdout = sample("hooks-bypass.stdout.jsonl").replace('"input_tokens":2010', '"input_tokens":2011')
    run = read_agent_run(stdout, [sample("rollout-hooks-bypass.jsonl")], exit_code=0, timed_out=False, seconds=1)
    assert run.usage.status == "unknown"
    assert run.usage.input_tokens is None and "disagrees" in (run.usage.reason or "")


def test_missing_rollout_makes_usage_unknown():
    """Without the root session's rollout the stream's usage cannot be validated."""
    run = read_agent_run(sample("shell.stdout.jsonl"), [], exit_code=0, timed_out=False, seconds=1)
    assert run.usage.status == "unknown" and "no rollout" in (run.usage.reason or "")


def test_resumed_rollout_totals_are_thread_cumulative():
    """The resumed-thread rollout's last token_count is the cumulative thread total (research §8)."""
    r = read_rollout(sample("rollout-resumed-thread.jsonl"))
    assert r.totals == {"input_tokens": 3010, "cached_input_tokens": 1200, "output_tokens": 151, "reasoning_output_tokens": 21}
    assert r.token_counts == 3 and r.completed


def test_timeout_leaves_labelled_lower_bound_from_rollout():
    """A timed-out exec (torn stdout, no turn.completed) reports the rollout's observed totals as a lower bound."""
    full = sample("hooks-bypass.stdout.jsonl").splitlines()
    cut = "\n".join(line for line in full if '"turn.completed"' not in line) + '\n{"type":"item.comp'
    run = read_agent_run(cut, [sample("rollout-hooks-bypass.jsonl")], exit_code=None, timed_out=True, seconds=60)
    assert run.usage.status == "lower_bound"
    assert run.usage.input_tokens == 2010 and "timed out" in (run.usage.reason or "")


def test_timeout_without_any_count_is_unknown():
    """A timeout before any token_count is unknown, not a zero lower bound."""
    stdout = lines({"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"})
    run = read_agent_run(stdout, [rollout_lines("t1", None)], exit_code=None, timed_out=True, seconds=9)
    assert run.usage.status == "unknown" and run.usage.total_tokens is None


def test_descendants_are_added_and_unrelated_sessions_ignored():
    """Root plus a subagent child are summed; an unrelated session and a duplicate copy are not counted."""
    stdout = lines({"type": "thread.started", "thread_id": "root"}, {"type": "turn.started"},
                   {"type": "turn.completed", "usage": tot(100, 10, 5, 1)})
    root = rollout_lines("root", [tot(50, 5, 2, 0), tot(100, 10, 5, 1)])
    child = rollout_lines("kid", [tot(30, 3, 4, 2)], parent="root")
    other = rollout_lines("stranger", [tot(999, 0, 9, 0)])
    run = read_agent_run(stdout, [root, child, child, other], exit_code=0, timed_out=False, seconds=1)
    assert run.usage.status == "exact", run.usage.reason
    assert (run.usage.input_tokens, run.usage.output_tokens, run.usage.reasoning_output_tokens) == (130, 9, 3)


def test_child_without_totals_gives_lower_bound():
    """A reachable child session with no token totals makes the sum a labelled lower bound."""
    stdout = lines({"type": "thread.started", "thread_id": "root"},
                   {"type": "turn.completed", "usage": tot(100, 10, 5, 1)})
    trace = read_exec_stream(stdout)
    sessions, problems = reachable_sessions("root", [read_rollout(rollout_lines("root", [tot(100, 10, 5, 1)])),
                                                     read_rollout(rollout_lines("kid", None, parent="root"))])
    u = validate_usage(trace, sessions, problems, timed_out=False)
    assert u.status == "lower_bound" and "kid" in (u.reason or "") and u.input_tokens == 100


@pytest.mark.parametrize(
    ("name", "rollout", "expect"),
    [
        ("err429.stdout.jsonl", "rollout-err429.jsonl", "rate limit"),
        ("shell.stdout.jsonl", None, None),
        ("cmdfail.stdout.jsonl", None, None),
    ],
)
def test_real_samples_provider_stop(name, rollout, expect):
    """The real 429 sample is a rate-limit stop; completed sessions (even with a failing command) are not."""
    trace = read_exec_stream(sample(name))
    root = read_rollout(sample(rollout)) if rollout else None
    cause = classify_provider_stop(trace, root, timed_out=False)
    if expect is None:
        assert cause is None
    else:
        assert cause is not None and cause.startswith(expect) and "429 Too Many Requests" in cause


@pytest.mark.parametrize(
    ("name", "info", "expect"),
    [
        ("err401.stdout.jsonl", {"http_connection_failed": {"http_status_code": 401}}, "authentication failure"),
        ("err500.stdout.jsonl", "internal_server_error", "provider server error"),
        ("quota.stdout.jsonl", "usage_limit_exceeded", "usage limit"),
        ("streamfail.stdout.jsonl", {"response_stream_disconnected": {"http_status_code": None}}, "connection failure"),
    ],
)
def test_real_error_streams_with_their_error_codes_are_stops(name, info, expect):
    """Real failing streams paired with the rollout error codes Codex writes are classified by cause."""
    trace = read_exec_stream(sample(name))
    root = read_rollout(rollout_lines(trace.thread_id or "x", None, {"message": trace.turn_failed, "codex_error_info": info}))
    cause = classify_provider_stop(trace, root, timed_out=False)
    assert cause is not None and cause.startswith(expect) and (trace.turn_failed or "") in cause


def _failed_after_work(error_info: object, reconnects: list[str], final: str) -> tuple:
    events = [{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
              {"type": "item.completed", "item": {"id": "i0", "type": "command_execution", "command": "ls", "exit_code": 0, "status": "completed"}}]
    events += [{"type": "error", "message": m} for m in reconnects]
    events += [{"type": "error", "message": final}, {"type": "turn.failed", "error": {"message": final}}]
    trace = read_exec_stream(lines(*events))
    root = read_rollout(rollout_lines("t", [tot(10, 0, 1, 0)], {"message": final, "codex_error_info": error_info}))
    return trace, root


def test_other_after_exhausted_reconnects_with_same_cause_is_a_stop():
    """``other`` right after "Reconnecting... 5/5" on the same cause is a provider stop."""
    cause = "stream disconnected before completion: boom"
    notes = [f"Reconnecting... {i}/5 ({cause})" for i in range(1, 6)]
    trace, root = _failed_after_work("other", notes, cause)
    assert classify_provider_stop(trace, root, timed_out=False) == f"provider error after 5 reconnect attempts (other): {cause}"


@pytest.mark.parametrize(
    ("notes", "final"),
    [
        (["Reconnecting... 1/5 (boom)"], "boom"),  # retries not used up
        ([f"Reconnecting... {i}/5 (boom)" for i in range(1, 6)], "something else"),  # different cause
        ([], "boom"),  # other alone
    ],
)
def test_other_without_exhausted_same_cause_reconnects_is_the_agents(notes, final):
    """``other`` that does not follow used-up retries on the same cause stays the agent's attempt."""
    trace, root = _failed_after_work("other", notes, final)
    assert classify_provider_stop(trace, root, timed_out=False) is None


def test_agent_side_codes_after_work_are_not_stops():
    """Context-window and invalid-request failures after the agent worked stay the agent's."""
    for info in ("context_window_exceeded", "bad_request", {"http_connection_failed": {"http_status_code": 400}}):
        trace, root = _failed_after_work(info, [], "nope")
        assert classify_provider_stop(trace, root, timed_out=False) is None, info


def test_failure_before_first_turn_is_a_stop():
    """A turn.failed with no usage, commands or messages (the real missing-key sample) is fatal."""
    trace = read_exec_stream(sample("nokey-env.stdout.jsonl"))
    cause = classify_provider_stop(trace, None, timed_out=False)
    assert cause is not None and cause.startswith("session failed before its first model turn")
    assert "STUB_API_KEY" in cause


def test_cut_off_while_reconnecting_is_a_stop_but_not_after_work_resumed():
    """A timeout during "Reconnecting..." is a stop; a reconnect that work follows is not."""
    base = [{"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"}]
    waiting = base + [{"type": "error", "message": "Reconnecting... 2/5 (connection refused)"}]
    assert classify_provider_stop(read_exec_stream(lines(*waiting)), None, timed_out=True) is not None
    resumed = waiting + [{"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": "hi"}}]
    assert classify_provider_stop(read_exec_stream(lines(*resumed)), None, timed_out=True) is None
    assert classify_provider_stop(read_exec_stream(lines(*waiting)), None, timed_out=False) is None


def test_drop_sample_messages_after_last_reconnect_block_the_other_rule():
    """In the real dropped-stream sample a message follows the last 5/5 notice, so ``other`` stays the agent's while a stream-disconnect code is a stop."""
    trace = read_exec_stream(sample("drop.stdout.jsonl"))
    assert trace.agent_messages == 6  # an agent_message per attempt is not a result

    def root(info: object):
        return read_rollout(rollout_lines(trace.thread_id or "x", None, {"message": trace.turn_failed, "codex_error_info": info}))

    assert classify_provider_stop(trace, root("other"), timed_out=False) is None
    cause = classify_provider_stop(trace, root({"response_stream_disconnected": {"http_status_code": None}}), timed_out=False)
    assert cause is not None and cause.startswith("connection failure")


def test_reconnect_notice_parts():
    """Counted reconnect notices split into attempt, limit and cause."""
    assert reconnect_parts("Reconnecting... 2/5 (unexpected status 401 (x))") == (2, 5, "unexpected status 401 (x)")
    assert reconnect_parts("Reconnecting… waiting for network") is None


# -- lines the agent writes into Codex's stdout -----------------------------------------------

from pluginbench.harnesses._codex import read_agent_run as _read_run  # noqa: E402
from pluginbench.harnesses._codex_events import read_exec_stream as _read_exec  # noqa: E402

_CODEX = Path(__file__).resolve().parents[1] / "data" / "samples" / "codex-0.169.0"


def _with_forged(line: str) -> str:
    """The real shell sample with ``line`` written while its command ran."""
    lines = (_CODEX / "shell.stdout.jsonl").read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if '"item.completed"' in ln and "command_execution" in ln)
    return "\n".join(lines[:at] + [line] + lines[at:]) + "\n"


@pytest.mark.parametrize("line", [
    '{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}',
    '{"type":"error","message":"Reconnecting... 5/5 (stream disconnected)"}',
    '{"type":"turn.completed","usage":{"input_tokens":9999999,"cached_input_tokens":0,"output_tokens":1,'
    '"reasoning_output_tokens":0}}',
])
def test_a_turn_line_written_while_a_command_runs_is_ignored_and_noted(line: str) -> None:
    """A turn.failed, error notice or turn.completed that appears while a command runs cannot be Codex's:
    no provider stop, no usage from it, and an integrity note names it."""
    text = _with_forged(line)
    clean = _read_exec((_CODEX / "shell.stdout.jsonl").read_text())
    trace = _read_exec(text)
    assert trace.turn_failed is None and trace.notices == () and trace.usage == clean.usage
    assert len(trace.integrity) == 1 and "while a command was running" in trace.integrity[0]
    run = _read_run(text, [], exit_code=0, timed_out=True, seconds=1.0)
    assert run.provider_stop is None and run.integrity == trace.integrity


def test_an_incomplete_stdout_is_noted_not_silently_unknown() -> None:
    """A Codex stdout that lost its first lines (as a truncation would) gives unknown usage with an
    integrity note saying the output is incomplete."""
    lines = (_CODEX / "shell.stdout.jsonl").read_text().splitlines()
    run = _read_run("\n".join(lines[3:]) + "\n", [], exit_code=0, timed_out=False, seconds=1.0)
    assert run.usage.status == "unknown"
    assert any("no thread.started" in n for n in run.integrity)


def test_the_real_samples_carry_no_integrity_note() -> None:
    """Every recorded Codex stdout sample reads without an integrity note."""
    for path in sorted(_CODEX.glob("*.stdout.jsonl")):
        assert _read_exec(path.read_text()).integrity == (), path.name
