"""Reading Gemini CLI 0.61.0's own output (real recordings in tests/data): usage, provider stops, receipts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.config import Capabilities
from pluginbench.harnesses._gemini import delivered_receipt
from pluginbench.harnesses._gemini_trace import (
    classify_provider_stop,
    settings_json,
    validate_usage,
)

DATA = Path(__file__).parent / "data" / "gemini-0.61.0"
STDOUT = (DATA / "stdout.jsonl").read_text()
TRANSCRIPT = (DATA / "transcript.jsonl").read_text()


def test_usage_is_exact_when_the_transcript_and_the_result_agree() -> None:
    """The recorded session's usage equals what the probe served: input 4000 (1050 cached),
    output 82 candidates + 13 thoughts, total input + output."""
    u = validate_usage(STDOUT, TRANSCRIPT, timed_out=False)
    assert u.status == "exact", u.reason
    assert (u.input_tokens, u.cached_input_tokens, u.uncached_input_tokens, u.output_tokens,
            u.reasoning_output_tokens, u.total_tokens) == (4000, 1050, 2950, 95, 13, 4095)


def _tamper_result(field: str, value: object) -> str:
    lines = []
    for line in STDOUT.splitlines():
        ev = json.loads(line)
        if ev["type"] == "result":
            ev["stats"][field] = value
        lines.append(json.dumps(ev))
    return "\n".join(lines)


@pytest.mark.parametrize(("stdout", "transcript", "timed_out", "why"), [
    (STDOUT, TRANSCRIPT, True, "timed out"),
    (STDOUT, "", False, "no model answer"),
    ("\n".join(STDOUT.splitlines()[:-1]), TRANSCRIPT, False, "no init or result"),
    (_tamper_result("input_tokens", 3999), TRANSCRIPT, False, "input_tokens"),
    (_tamper_result("total_tokens", 4082), TRANSCRIPT, False, "total_tokens"),
    (STDOUT, TRANSCRIPT.replace('"input":1500', '"input":0'), False, "carried no usage"),
])
def test_usage_is_unknown_with_a_reason_when_records_disagree(stdout: str, transcript: str, timed_out: bool,
                                                               why: str) -> None:
    """A timeout, a missing record, an answer without usage or a disagreement is unknown, never zero."""
    u = validate_usage(stdout, transcript, timed_out=timed_out)
    assert u.status == "unknown" and u.input_tokens is None and why in (u.reason or ""), u.reason


def test_a_quota_429_is_a_provider_stop_and_success_is_not() -> None:
    """The recorded daily-quota refusal and plain rate limit are rate-limit provider stops, the recorded 401 an
    authentication stop, and the successful session is none."""
    stop = classify_provider_stop((DATA / "stdout-quota.jsonl").read_text(), "", timed_out=False)
    assert stop is not None and stop.startswith("rate limited (HTTP 429)")
    assert classify_provider_stop(STDOUT, "", timed_out=False) is None
    limited = classify_provider_stop((DATA / "stdout-ratelimit.jsonl").read_text(), "", timed_out=False)
    assert limited is not None and limited.startswith("rate limited (HTTP 429)")
    auth = classify_provider_stop((DATA / "stdout-auth.jsonl").read_text(), "", timed_out=False)
    assert auth is not None and auth.startswith("authentication refused (HTTP 401)")


def test_settings_turn_off_telemetry_updates_and_prompts() -> None:
    """The private settings select API-key auth, turn off updates, telemetry, usage statistics
    and folder trust, bound retries (1 attempt on the probe, 3 real), and remove invoke_agent
    when sub-agents are off."""
    s = json.loads(settings_json(probe=True, capabilities=Capabilities(subagents=False)))
    assert s["general"]["maxAttempts"] == 1
    assert json.loads(settings_json(probe=False, capabilities=Capabilities()))["general"]["maxAttempts"] == 3
    assert s["security"]["auth"]["selectedType"] == "gemini-api-key" and s["security"]["folderTrust"]["enabled"] is False
    assert s["telemetry"]["enabled"] is False and s["privacy"]["usageStatisticsEnabled"] is False
    assert s["general"]["enableAutoUpdate"] is False and s["tools"]["exclude"] == ["invoke_agent"]


def test_the_delivered_home_receipt_names_every_mismatch(tmp_path: Path) -> None:
    """Vanilla with an empty ~/.gemini passes; a stray AGENTS.md, an undeclared skill and a
    missing declared GEMINI.md are each named."""
    (tmp_path / ".gemini").mkdir()
    assert delivered_receipt(tmp_path, guidance=None, skills=())["ok"]
    (tmp_path / ".gemini" / "AGENTS.md").write_text("x")
    (tmp_path / ".gemini" / "skills" / "stray").mkdir(parents=True)
    (tmp_path / ".gemini" / "skills" / "stray" / "SKILL.md").write_text("x")
    r = delivered_receipt(tmp_path, guidance=b"declared\n", skills=())
    assert not r["ok"] and len(r["mismatches"]) == 3, r["mismatches"]


def test_plugins_are_refused_naming_gemini_cli(tmp_path: Path) -> None:
    """An arm with plugins is refused at admission naming Gemini CLI and the field; the docker backend is
    accepted (its coding image carries node 20+ privately)."""
    from types import SimpleNamespace

    from pluginbench.errors import ConfigError
    from pluginbench.harnesses._gemini import GeminiHarness

    ev = SimpleNamespace(treatments={"p": SimpleNamespace(plugins=["x"], guidance=[], skills=[])})
    with pytest.raises(ConfigError) as err:
        GeminiHarness.admit_evaluation(ev, probe=True)
    assert "Gemini CLI" in str(err.value) and err.value.field == "treatments.p.plugins"
    GeminiHarness.validate_config(SimpleNamespace(environment=SimpleNamespace(backend="docker")), tmp_path / "e.yaml")
    assert GeminiHarness.cli is not None and GeminiHarness.cli.node_major == 20
