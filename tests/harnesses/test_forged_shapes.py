"""A line an agent writes into its Claude Code or Codex stream or transcript with a field of the wrong
type (``"message": 1``) is an undecodable line, never an exception in the host's parse (which
recorded the attempt as a harness error with a coding time of 0.0 s and no integrity note)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pluginbench.harnesses._claude import ClaudeHarness
from pluginbench.harnesses._claude_stream import final_and_writes, parse_stream

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "quality" / "iterations" / "claude"

#: each crashed the parse before (AttributeError, TypeError: unhashable or not iterable)
FORGED = [
    {"type": "assistant", "message": 1},
    {"type": "assistant", "message": {"id": "m", "content": 1}},
    {"type": "assistant", "message": {"id": [1], "model": "claude-sonnet-4-5", "usage": {"input_tokens": 1}}},
    {"type": "result", "subtype": "success", "modelUsage": 1},
    {"type": "system", "subtype": []},
]


@pytest.mark.parametrize("forged", FORGED, ids=[json.dumps(f)[:40] for f in FORGED])
def test_a_forged_line_of_the_wrong_shape_is_counted_as_undecodable(tmp_path: Path, forged: dict[str, object]) -> None:
    """In stdout it is a bad line of the stream; in the transcript the usage is unknown because of it."""
    attempt = tmp_path / "attempt"
    shutil.copytree(SAMPLE, attempt)
    line = json.dumps(forged) + "\n"
    stdout = attempt / "agent" / "stdout.jsonl"
    clean = ClaudeHarness.revalidate_usage(attempt, model="claude-sonnet-4-5", cli_version="2.1.328",
                                           timed_out=False, exit_code=0, seconds=1.0)
    stdout.write_text(stdout.read_text() + line)
    summary = parse_stream(stdout.read_text())
    assert summary.bad_lines == 1
    final_and_writes(stdout.read_text())
    assert ClaudeHarness.revalidate_usage(attempt, model="claude-sonnet-4-5", cli_version="2.1.328",
                                          timed_out=False, exit_code=0, seconds=1.0) is not None
    (transcript,) = (attempt / "agent" / "transcripts").glob("*.jsonl")
    transcript.write_text(transcript.read_text() + line)
    usage = ClaudeHarness.revalidate_usage(attempt, model="claude-sonnet-4-5", cli_version="2.1.328",
                                           timed_out=False, exit_code=0, seconds=1.0)
    assert clean is not None and clean.status != "unknown"
    assert usage is not None and usage.status == "unknown" and "undecodable transcript" in (usage.reason or "")


CODEX = Path(__file__).resolve().parents[1] / "data" / "quality" / "iterations" / "codex"


def test_a_codex_line_whose_type_is_not_text_is_undecodable(tmp_path: Path) -> None:
    """A stdout event and a rollout item whose ``type`` is a list (an unhashable lookup before) leave the usage readable."""
    from pluginbench.harnesses._codex import CodexHarness

    attempt = tmp_path / "attempt"
    shutil.copytree(CODEX, attempt)
    stdout = attempt / "agent" / "stdout.jsonl"
    stdout.write_text(stdout.read_text() + json.dumps({"type": []}) + "\n")
    (rollout,) = (attempt / "agent" / "rollouts").rglob("rollout-*.jsonl")
    rollout.write_text(rollout.read_text() + json.dumps({"type": "response_item", "payload": {"type": []}}) + "\n")
    usage = CodexHarness.revalidate_usage(attempt, model="gpt-5.5", cli_version="0.169.0", timed_out=False,
                                          exit_code=0, seconds=1.0)
    assert usage is not None
