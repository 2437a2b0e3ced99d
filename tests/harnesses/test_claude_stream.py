"""Stream parsing and provider-stop classification on real Claude Code 2.1.328 outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.harnesses._claude_stream import parse_stream, provider_stop

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "claude-code-2.1.328"
DATA = Path(__file__).parent / "data" / "claude-2.1.328"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_429_then_ok_counts_one_retry_and_is_not_a_stop() -> None:
    """A 429 the CLI recovered from is recorded as a retry with its announced wait, not a stop."""
    s = parse_stream(sample("03_err_429_then_ok.stream.jsonl"))
    assert s.api_retries == {"rate_limit": 1}
    assert s.announced_wait_ms == 1053
    assert provider_stop(s) is None


@pytest.mark.parametrize(("name", "words"), [
    ("04_err_429_always.stream.jsonl", "rate limit"),
    ("05_err_529_always.stream.jsonl", "provider error 529"),
    ("06_err_401.stream.jsonl", "authentication failure"),
])
def test_failed_result_with_provider_status_is_a_stop(name: str, words: str) -> None:
    """A failed result whose api_error_status is 429, 401 or 5xx is a provider stop naming the cause."""
    s = parse_stream(sample(name))
    cause = provider_stop(s)
    assert cause is not None and words in cause
    assert sum(s.api_retries.values()) == 2


def test_stream_error_fallback_and_max_turns_stay_the_agents() -> None:
    """A recovered mid-stream error and a max-turns stop are not provider stops."""
    assert provider_stop(parse_stream(sample("07_stream_error_fallback.stream.jsonl"))) is None
    s = parse_stream(sample("08_max_turns.stream.jsonl"))
    assert s.result is not None and s.result["subtype"] == "error_max_turns"
    assert provider_stop(s) is None


def test_rejected_rate_limit_event_is_a_stop_even_after_success() -> None:
    """A rejected rate_limit_event stops the run and names the window and reset time."""
    s = parse_stream((DATA / "rate_limit_rejected.stream.jsonl").read_text())
    assert s.result is not None and s.result["is_error"] is False
    cause = provider_stop(s)
    assert cause is not None and "five_hour" in cause and "2027-01-15T08:00:00Z" in cause


def test_rejected_window_used_on_overage_is_not_a_stop() -> None:
    """A rejected window the session goes past on extra usage is not a stop."""
    text = (DATA / "rate_limit_rejected.stream.jsonl").read_text().replace(
        '"isUsingOverage":false', '"isUsingOverage":true')
    assert provider_stop(parse_stream(text)) is None


def test_cut_off_while_retrying_is_a_stop() -> None:
    """A session whose stream ends on system/api_retry (no result) was cut off while retrying."""
    lines = sample("04_err_429_always.stream.jsonl").splitlines()
    cut = [ln for ln in lines if '"api_retry"' in ln or '"init"' in ln]
    cause = provider_stop(parse_stream(cut), timed_out=True)
    assert cause is not None and "timed out while retrying" in cause


def test_hooks_and_tools_are_read_from_a_real_plugin_stream() -> None:
    """The SessionStart hook run and the tool uses of a recorded attempt are parsed."""
    s = parse_stream((DATA / "treatment.stream.jsonl").read_text())
    assert len(s.inits) == 1 and s.bad_lines == 0
    assert [(h.name, h.exit_code, h.before_first_reply) for h in s.hooks] == [("SessionStart:startup", 0, True)]
    assert [t for t, _ in s.tool_uses] == ["Bash", "Write"]
