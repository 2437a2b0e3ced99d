"""Usage validation: result.modelUsage against transcripts, on real Claude Code outputs."""

from __future__ import annotations

import json
from pathlib import Path

from pluginbench.harnesses._claude_stream import parse_stream
from pluginbench.harnesses._claude_usage import (
    read_stream_answers,
    read_transcripts,
    validate_usage,
)
from tests.harnesses.test_claude_stream import DATA, sample

MODEL = "claude-sonnet-4-5"


def _pair(stream: str, transcript: str):
    return parse_stream(stream), read_transcripts(transcript.splitlines())


def _answers(stream: str):
    return read_stream_answers(stream.splitlines())


def test_tools_sample_validates_exactly_and_equals_what_the_stub_served() -> None:
    """The Bash/Write sample's transcript equals its modelUsage and the stub's served totals."""
    s, t = _pair(sample("02_tools_bash_write.stream.jsonl"), sample("02_tools_bash_write.transcript.jsonl"))
    usage, acct = validate_usage(s, t, runner_model=MODEL, cli_version="2.1.328",
                                 answers=_answers(sample("02_tools_bash_write.stream.jsonl")))
    assert usage.status == "exact", acct
    served = [json.loads(ln)["answered"]["usage"] for ln in sample("02_tools_bash_write.requests.jsonl").splitlines()]
    assert usage.input_tokens == sum(u["input_tokens"] + u["cache_read_input_tokens"]
                                     + u["cache_creation_input_tokens"] for u in served)
    assert usage.output_tokens == sum(u["output_tokens"] for u in served)
    assert acct["rule"] == "qualified-equal"


def test_recorded_attempt_usage_counts_cache_reads_and_writes() -> None:
    """Input is uncached + cache read + cache write, deduplicated by message id."""
    s, t = _pair((DATA / "treatment.stream.jsonl").read_text(), (DATA / "treatment.transcript.jsonl").read_text())
    usage, _ = validate_usage(s, t, runner_model=MODEL, cli_version="2.1.328",
                              answers=_answers((DATA / "treatment.stream.jsonl").read_text()))
    # Probe script: 1200+300+100, 1300+350+0, final 1400+200+50; outputs 40+30+12.
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (4900, 850, 82)
    assert usage.uncached_input_tokens == 4050 and usage.total_tokens == 4982


def test_transcript_disagreement_makes_usage_unknown() -> None:
    """A transcript missing a message makes usage unknown with the reason, never zero."""
    lines = (DATA / "treatment.transcript.jsonl").read_text().splitlines()
    first_msg = next(ln for ln in lines if '"type":"assistant"' in ln)
    mid = first_msg.split('"id":"', 1)[1].split('"', 1)[0]
    dropped = [ln for ln in lines if mid not in ln]
    s = parse_stream((DATA / "treatment.stream.jsonl").read_text())
    usage, acct = validate_usage(s, read_transcripts(dropped), runner_model=MODEL, cli_version="2.1.328",
                                 answers=_answers((DATA / "treatment.stream.jsonl").read_text()))
    assert usage.status == "unknown" and usage.input_tokens is None
    assert "transcripts" in (usage.reason or "")


def test_unqualified_version_accepts_untranscribed_runner_input_only() -> None:
    """On another CLI version only input is compared, and transcripts may fall short."""
    lines = (DATA / "treatment.transcript.jsonl").read_text().splitlines()
    first_msg = next(ln for ln in lines if '"type":"assistant"' in ln)
    mid = first_msg.split('"id":"', 1)[1].split('"', 1)[0]
    dropped = [ln for ln in lines if mid not in ln]
    stream = (DATA / "treatment.stream.jsonl").read_text().replace('"claude_code_version":"2.1.328"',
                                                                    '"claude_code_version":"2.1.400"')
    usage, acct = validate_usage(parse_stream(stream), read_transcripts(dropped), runner_model=MODEL,
                                 cli_version="2.1.400", answers=_answers(stream))
    assert usage.status == "exact" and acct["rule"] == "unqualified-input-only"
    assert acct["untranscribed"]["input"] == 1200


def test_timeout_and_api_error_leave_usage_unknown() -> None:
    """A timeout (no result) is unknown; so is a session without any transcript."""
    s = parse_stream(sample("04_err_429_always.stream.jsonl"))
    usage, _ = validate_usage(s, None, runner_model=MODEL, cli_version="2.1.328")
    assert usage.status == "unknown" and "transcript" in (usage.reason or "")
    cut = [ln for ln in sample("02_tools_bash_write.stream.jsonl").splitlines() if '"result"' not in ln]
    usage, _ = validate_usage(parse_stream(cut), None, runner_model=MODEL, cli_version="2.1.328", timed_out=True)
    assert usage.status == "unknown" and "timed out" in (usage.reason or "")


def test_wrong_runner_model_is_refused(tmp_path: Path) -> None:
    """Usage from a session on another model than the runner's is unknown."""
    s, t = _pair((DATA / "treatment.stream.jsonl").read_text(), (DATA / "treatment.transcript.jsonl").read_text())
    usage, _ = validate_usage(s, t, runner_model="claude-opus-5-5", cli_version="2.1.328",
                              answers=_answers((DATA / "treatment.stream.jsonl").read_text()))
    assert usage.status == "unknown" and "runner model" in (usage.reason or "")
