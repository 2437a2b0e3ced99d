"""The report header's run identity: what each setting was, and what does not apply."""

from __future__ import annotations

from typing import Any

import pytest

from pluginbench.projections._report_html import _identity


def _run(harness: str, cli_version: str | None) -> dict[str, Any]:
    return {
        "harness": harness, "model": "m", "reasoning": None, "cli_version": cli_version, "backend": "local",
        "isolation": "bubblewrap", "repeats": 1, "jobs": 1, "seed": 3, "attempts_complete": 4, "attempts_total": 4,
        "pluginbench_version": "0.1.0",
    }


def _cli_cell(html: str) -> str:
    return html.split("<dt>CLI version</dt><dd>", 1)[1].split("</dd>", 1)[0]


@pytest.mark.parametrize("harness", ["simulated", "oracle", "nop"])
def test_a_harness_without_an_agent_cli_says_so_instead_of_not_set(harness: str) -> None:
    """A simulated or control harness has no CLI: the header says none applies, never `not set`."""
    cell = _cli_cell(_identity(_run(harness, None)))
    assert f"none: the {harness} harness runs no agent CLI" in cell
    assert "not set" not in cell


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_real_harness_shows_its_pinned_cli_version_or_not_set(harness: str) -> None:
    """A real harness shows its pinned CLI version; without one recorded it still reads `not set`."""
    assert _cli_cell(_identity(_run(harness, "2.0.14"))) == "2.0.14"
    assert "not set" in _cli_cell(_identity(_run(harness, None)))
    assert "Reasoning</dt><dd><span class=\"flat\">not set" in _identity(_run(harness, "2.0.14"))
