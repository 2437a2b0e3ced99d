"""The usage fold under faulty answers: missing, malformed, negative or cut usage is never exact."""

from __future__ import annotations

import json

import pytest

from pluginbench.harnesses._claude_stream import parse_stream
from pluginbench.harnesses._claude_usage import (
    read_stream_answers,
    read_transcripts,
    unrecovered_cut,
    usage_fault,
    validate_usage,
)
from pluginbench.harnesses._codex_events import read_exec_stream, read_rollout
from pluginbench.harnesses._codex_usage import read_usage_records
from pluginbench.harnesses._codex_usage import validate_usage as codex_validate
from tests.harnesses.test_claude_stream import DATA

MODEL = "claude-sonnet-4-5"
STREAM = (DATA / "treatment.stream.jsonl").read_text()
TRANSCRIPT = (DATA / "treatment.transcript.jsonl").read_text()


def _edit_answers(stream: str, usage_of: dict[int, object]) -> str:
    """The stream with the usage of its n-th distinct assistant answer replaced (None drops it)."""
    out, ids = [], []
    for line in stream.splitlines():
        ev = json.loads(line) if line.strip() else None
        if isinstance(ev, dict) and ev.get("type") == "assistant" and ev["message"].get("model") != "<synthetic>":
            mid = ev["message"]["id"]
            if mid not in ids:
                ids.append(mid)
            n = ids.index(mid)
            if n in usage_of:
                ev["message"]["usage"] = usage_of[n]
            line = json.dumps(ev)
        out.append(line)
    return "\n".join(out) + "\n"


def _claude(stream: str, transcript: str = TRANSCRIPT):
    return validate_usage(parse_stream(stream), read_transcripts(transcript.splitlines()), runner_model=MODEL,
                          cli_version="2.1.328", answers=read_stream_answers(stream.splitlines()))


@pytest.mark.parametrize(("usage", "fault"), [
    (None, "no usage"), ("12", "usage is str, not an object"), ({"output_tokens": 3}, "input_tokens missing"),
    ({"input_tokens": "many", "output_tokens": 1}, "input_tokens is 'many'"),
    ({"input_tokens": 5, "output_tokens": -7}, "output_tokens is -7"),
    ({"input_tokens": 5, "output_tokens": 1.5}, "output_tokens is 1.5"),
    ({"input_tokens": True, "output_tokens": 1}, "input_tokens is True"),
    ({"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": -1}, "cache_read_input_tokens is -1"),
    ({"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": None}, None),
    ({"input_tokens": 0, "output_tokens": 0}, None),
])
def test_an_answer_usage_is_valid_only_with_non_negative_integer_counts(usage, fault) -> None:
    """Missing, non-integer, boolean and negative counts are faults; null cache counts are not."""
    assert usage_fault(usage) == fault


def test_valid_answers_stay_exact() -> None:
    """The recorded attempt with every answer's usage valid is exact (the control case)."""
    usage, acct = _claude(STREAM)
    assert usage.status == "exact" and acct["answer_faults"] == {} and acct["cut_retries"] == 0


def test_no_usage_in_any_answer_is_unknown_not_zero() -> None:
    """All answers without usage: unknown with the reason, no count at all."""
    usage, _ = _claude(_edit_answers(STREAM, {0: None, 1: None, 2: None}))
    assert usage.status == "unknown" and usage.total_tokens is None
    assert "no answer carried valid usage" in (usage.reason or "")


def test_no_usage_in_one_answer_is_a_labelled_lower_bound_of_the_others() -> None:
    """One answer of three without usage: a lower bound of the two validated answers, labelled."""
    exact, _ = _claude(STREAM)
    usage, acct = _claude(_edit_answers(STREAM, {1: None}))
    assert usage.status == "lower_bound" and "1 of 3 answers carried no valid usage" in (usage.reason or "")
    assert usage.input_tokens is not None and exact.input_tokens is not None
    # The second answer served 1300+350+0 input and 30 output tokens (see the probe script).
    assert exact.input_tokens - usage.input_tokens == 1650
    assert exact.output_tokens - usage.output_tokens == 30
    assert list(acct["answer_faults"].values()) == ["no usage"]


def test_malformed_usage_in_every_answer_is_unknown() -> None:
    """A string and a negative count in every answer: unknown, never a negative total."""
    bad = {"input_tokens": "many", "output_tokens": -7}
    usage, _ = _claude(_edit_answers(STREAM, {0: bad, 1: bad, 2: bad}))
    assert usage.status == "unknown" and usage.total_tokens is None


def test_negative_counts_in_model_usage_or_transcripts_are_refused() -> None:
    """A negative modelUsage or transcript count makes usage unknown even when both sides agree."""
    stream = STREAM.replace('"outputTokens":', '"outputTokens":-', 1)
    usage, _ = _claude(stream)
    assert usage.status == "unknown" and "is -" in (usage.reason or "")
    transcript = TRANSCRIPT.replace('"output_tokens":', '"output_tokens":-', 1)
    usage, _ = _claude(STREAM, transcript)
    assert usage.status == "unknown"


def test_a_cut_and_retried_call_makes_usage_a_lower_bound() -> None:
    """A stream cut mid-answer and retried served tokens nobody reports: a lower bound, not exact."""
    retry = json.dumps({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 2,
                        "retry_delay_ms": 500, "error_status": None, "error": "unknown"})
    lines = STREAM.splitlines()
    at = next(i for i, ln in enumerate(lines) if '"type":"assistant"' in ln)
    usage, acct = _claude("\n".join([*lines[:at], retry, *lines[at:]]) + "\n")
    assert usage.status == "lower_bound" and acct["cut_retries"] == 1
    assert "cut mid-stream and retried" in (usage.reason or "")
    http = retry.replace('"error_status": null', '"error_status": 529')
    usage, _ = _claude("\n".join([*lines[:at], http, *lines[at:]]) + "\n")
    assert usage.status == "exact"  # an HTTP error answer served no tokens


def test_an_unrecovered_connection_failure_is_a_provider_stop() -> None:
    """Claude Code's connection_failed result after its retries is a provider stop; other errors are not."""
    result = {"type": "result", "subtype": "success", "is_error": True, "api_error_status": None,
              "api_error": "connection_failed", "result": "API Error: Connection to the API was lost (ECONNRESET)."}
    retries = [{"type": "system", "subtype": "api_retry", "attempt": n, "max_retries": 2, "error_status": None}
               for n in (1, 2)]
    text = "\n".join(json.dumps(e) for e in [*retries, result])
    cause = unrecovered_cut(parse_stream(text))
    assert cause is not None and cause.startswith("connection failure") and "2 retries" in cause
    assert unrecovered_cut(parse_stream(json.dumps({**result, "api_error": "invalid_request"}))) is None
    assert unrecovered_cut(parse_stream(json.dumps({**result, "is_error": False}))) is None


def _rollout(thread: str, responses: list[dict | None | str]) -> str:
    """A Codex 0.169.0-shaped rollout: one function_call per response, a token_usage_record per
    response whose usage is given (None: the response reported none)."""
    recs: list[dict] = [{"type": "session_meta", "payload": {"id": thread, "source": "exec"}},
                        {"type": "response_item", "payload": {"type": "message", "role": "user"}}]
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0}
    for n, usage in enumerate(responses):
        recs.append({"type": "response_item", "payload": {"type": "function_call", "call_id": f"c{n}"}})
        if usage is not None:
            recs.append({"type": "token_usage_record", "payload": {"response_id": f"r{n}", "usage": usage}})
            if isinstance(usage, dict) and all(isinstance(v, int) for v in usage.values()):
                total = {k: total[k] + usage[k] for k in total}
        recs.append({"type": "response_item", "payload": {"type": "function_call_output", "call_id": f"c{n}"}})
        recs.append({"type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": total}}})
    recs.append({"type": "event_msg", "payload": {"type": "task_complete", "error": None}})
    return "".join(json.dumps(r) + "\n" for r in recs), total


def _codex(responses):
    text, total = _rollout("t1", responses)
    stdout = "".join(json.dumps(e) + "\n" for e in [
        {"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"},
        {"type": "turn.completed", "usage": total}])
    root = read_rollout(text)
    return codex_validate(read_exec_stream(stdout), [root], [], timed_out=False,
                          records=[read_usage_records(text)])


U = {"input_tokens": 1000, "cached_input_tokens": 100, "output_tokens": 40, "reasoning_output_tokens": 4}


def test_codex_responses_all_metered_are_exact() -> None:
    """Every response with a valid usage record: exact (the control case)."""
    usage = _codex([U, U, U])
    assert usage.status == "exact" and usage.input_tokens == 3000


def test_codex_one_response_without_usage_is_a_labelled_lower_bound() -> None:
    """A response with no usage record leaves the consistent total a lower bound, with the reason."""
    usage = _codex([U, None, U])
    assert usage.status == "lower_bound" and usage.input_tokens == 2000
    assert "1 of 3 model responses reported no usage" in (usage.reason or "")


def test_codex_malformed_usage_record_is_a_lower_bound() -> None:
    """A usage record whose counts are not non-negative integers is not counted as valid."""
    usage = _codex([U, {**U, "output_tokens": -7}, U])
    assert usage.status == "lower_bound" and "not valid" in (usage.reason or "")


def test_codex_records_count_runs_of_model_items_as_responses() -> None:
    """Parallel calls of one response count once; an assistant message after tool output starts another."""
    text = "".join(json.dumps(r) + "\n" for r in [
        {"type": "session_meta", "payload": {"id": "t"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user"}},
        {"type": "response_item", "payload": {"type": "reasoning"}},
        {"type": "response_item", "payload": {"type": "function_call"}},
        {"type": "response_item", "payload": {"type": "function_call"}},
        {"type": "token_usage_record", "payload": {"usage": U}},
        {"type": "response_item", "payload": {"type": "function_call_output"}},
        {"type": "response_item", "payload": {"type": "function_call_output"}},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant"}},
    ])
    rec = read_usage_records(text)
    assert (rec.session_id, rec.responses, rec.metered, rec.faults) == ("t", 2, 1, ())


@pytest.mark.parametrize("bad", [None, "many", -7, 1.5, True])
def test_simulated_harness_refuses_faulty_result_usage(bad) -> None:
    """The simulated harness's usage is unknown with the reason for a missing, malformed, negative or non-integer count."""
    from pluginbench.harnesses import usage_from_stream

    good = {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}
    assert usage_from_stream(json.dumps({"type": "result", "usage": good})).status == "exact"
    faulty = {**good, "output_tokens": bad} if bad is not None else {k: v for k, v in good.items() if k != "output_tokens"}
    usage = usage_from_stream(json.dumps({"type": "result", "usage": faulty}))
    assert usage.status == "unknown" and usage.total_tokens is None and "output_tokens" in (usage.reason or "")


def test_codex_stream_cut_and_retried_then_recovered_is_a_lower_bound() -> None:
    """A stream Codex reconnected after it broke off leaves the completed turn's total a lower bound; an HTTP-status retry does not."""
    text, total = _rollout("t1", [U, U])
    root = read_rollout(text)

    def run(notice: str):
        stdout = "".join(json.dumps(e) + "\n" for e in [
            {"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"},
            {"type": "error", "message": notice}, {"type": "turn.completed", "usage": total}])
        return codex_validate(read_exec_stream(stdout), [root], [], timed_out=False, records=[read_usage_records(text)])

    cut = run("Reconnecting... 1/5 (stream disconnected before completion: stream closed before response.completed)")
    assert cut.status == "lower_bound" and "cut and retried" in (cut.reason or "")
    assert run("Reconnecting... 1/5 (unexpected status 503 Service Unavailable: x)").status == "exact"


def test_every_request_refused_with_an_http_status_is_an_exact_zero() -> None:
    """Recorded real 429 session: no answer served and none cut, so zero tokens is seen and exact; a cut retry
    or a non-zero modelUsage in the same session makes it unknown again."""
    stream = (DATA / "rate-limited.stream.jsonl").read_text()
    transcript = (DATA / "rate-limited.transcript.jsonl").read_text()
    usage, acct = _claude(stream, transcript)
    assert (usage.status, usage.total_tokens, acct["rule"]) == ("exact", 0, "refused"), usage.reason
    assert "refused with HTTP 429" in (usage.reason or "")
    cut = json.dumps({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 2, "error_status": None})
    assert _claude(cut + "\n" + stream, transcript)[0].status == "unknown"
    lines = [json.loads(ln) for ln in stream.splitlines() if ln.strip()]
    for ev in lines:
        if ev.get("type") == "result":
            ev["modelUsage"] = {MODEL: {"inputTokens": 5, "outputTokens": 1}}
    spent = "\n".join(json.dumps(ev) for ev in lines) + "\n"
    assert _claude(spent, transcript)[0].status == "unknown"
