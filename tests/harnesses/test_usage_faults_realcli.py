"""Faulty usage served by the probe, through the real Claude Code and Codex CLIs: never exact.

Each case checks the attempt's usage against the probe's own request log (what it served)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.harnesses._port import FrozenTreatment
from pluginbench.probe import SCENARIOS_DIR, ProbeServer, load_scenario
from tests.harnesses._claude_pkg import vanilla
from tests.harnesses.test_claude_realcli import _attempt as claude_attempt
from tests.harnesses.test_claude_realcli import cli as claude_cli  # noqa: F401 - fixture
from tests.harnesses.test_codex_realcli import attempt as codex_attempt
from tests.harnesses.test_codex_realcli import cli as codex_cli  # noqa: F401 - fixture

pytestmark = pytest.mark.realcli


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _served_totals(served) -> tuple[int, int]:
    """(input incl. cache, output) the probe served with valid usage, over all models."""
    inp = sum(u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens for u in served.values())
    return inp, sum(u.output_tokens for u in served.values())


async def _claude(cli: Path, tmp: Path, scenario: str):
    with ProbeServer(load_scenario(SCENARIOS_DIR / scenario)) as probe:
        _, run, _, _, _ = await claude_attempt(cli, tmp, probe, vanilla(), "f")
        probe.wait_idle(timeout=60)
        coding = [r for r in probe.requests if r.kind == "coding"]
        return run, coding, probe.served_usage()


@pytest.mark.anyio
@pytest.mark.parametrize("scenario", ["usage-omitted.yaml", "usage-malformed.yaml"])
async def test_claude_without_any_valid_usage_is_unknown(claude_cli: Path, tmp_path: Path, scenario: str) -> None:  # noqa: F811
    """Claude Code reports 0 (or a negative total) for answers without valid usage; the attempt's usage is unknown."""
    run, coding, served = await _claude(claude_cli, tmp_path, scenario)
    assert len(coding) == 3 and all(r.usage_fault is not None for r in coding) and served == {}
    assert run.usage.status == "unknown" and run.usage.total_tokens is None
    assert "no answer carried valid usage" in (run.usage.reason or "")
    assert run.provider_stop is None and run.exit_code == 0


@pytest.mark.anyio
async def test_claude_one_answer_without_usage_is_a_lower_bound_of_what_was_served(claude_cli: Path, tmp_path: Path) -> None:  # noqa: F811
    """One of three answers without usage: a labelled lower bound equal to the served valid answers."""
    run, coding, served = await _claude(claude_cli, tmp_path, "usage-omitted-one.yaml")
    assert [r.usage_fault for r in coding] == [None, "omitted", None]
    assert run.usage.status == "lower_bound" and "1 of 3 answers" in (run.usage.reason or "")
    assert (run.usage.input_tokens, run.usage.output_tokens) == _served_totals(served) == (2600, 52)


@pytest.mark.anyio
async def test_claude_unrecovered_stream_cut_is_a_provider_stop(claude_cli: Path, tmp_path: Path) -> None:  # noqa: F811
    """Every stream cut, Claude Code retries and gives up: a provider stop, usage unknown (not exact 0)."""
    run, coding, _ = await _claude(claude_cli, tmp_path, "drop-stream.yaml")
    assert len(coding) >= 3 and all(r.answer == "drop_stream" and not r.completed for r in coding)
    assert run.provider_stop is not None and run.provider_stop.startswith("connection failure")
    assert run.usage.status == "unknown" and run.usage.total_tokens is None


VANILLA = FrozenTreatment("vanilla", None, (), (), (), "v")


@pytest.mark.anyio
async def test_codex_without_any_usage_is_unknown(codex_cli: Path, tmp_path: Path) -> None:  # noqa: F811
    """No answer carries usage: Codex's usage is unknown, never zero."""
    run, _, _, served, _, _ = await codex_attempt(tmp_path, codex_cli, str(SCENARIOS_DIR / "usage-omitted.yaml"), VANILLA)
    assert served == {}
    assert run.usage.status == "unknown" and run.usage.total_tokens is None


@pytest.mark.anyio
async def test_codex_one_answer_without_usage_is_a_lower_bound_of_what_was_served(codex_cli: Path, tmp_path: Path) -> None:  # noqa: F811
    """Codex's totals silently skip an answer without usage; the attempt is a labelled lower bound."""
    run, _, _, served, _, _ = await codex_attempt(tmp_path, codex_cli, str(SCENARIOS_DIR / "usage-omitted-one.yaml"), VANILLA)
    assert run.usage.status == "lower_bound" and "1 of 3 model responses reported no usage" in (run.usage.reason or "")
    (u,) = served.values()
    assert (run.usage.input_tokens, run.usage.output_tokens) == (u.input_tokens, u.output_tokens) == (2600, 52)


@pytest.mark.anyio
async def test_codex_malformed_usage_is_unknown(codex_cli: Path, tmp_path: Path) -> None:  # noqa: F811
    """A string and a negative count: Codex fails the turn on it and the usage is unknown."""
    run, _, _, served, _, _ = await codex_attempt(tmp_path, codex_cli, str(SCENARIOS_DIR / "usage-malformed.yaml"), VANILLA)
    assert served == {}
    assert run.usage.status == "unknown" and run.usage.total_tokens is None
    assert "failed to parse" in (run.error or "")


@pytest.mark.anyio
async def test_codex_unrecovered_stream_cut_is_a_provider_stop(codex_cli: Path, tmp_path: Path) -> None:  # noqa: F811
    """Every stream cut before the first model turn: Codex's session is a provider stop, usage unknown."""
    run, _, _, _, _, _ = await codex_attempt(tmp_path, codex_cli, str(SCENARIOS_DIR / "drop-stream.yaml"), VANILLA)
    assert run.provider_stop is not None and run.usage.status == "unknown"
