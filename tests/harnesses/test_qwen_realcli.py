"""The real Qwen Code CLI 0.24.4 through QwenHarness, a bubblewrap sandbox and the loopback probe."""

from __future__ import annotations

import json

import pytest

from pluginbench.harnesses._qwen import QwenHarness
from tests.harnesses._keyed_realcli import (
    PLANTED,
    VANILLA,
    assert_usage_served,
    attempt,
    chat_system,
    guided,
    plant_context_home,
)

pytestmark = pytest.mark.realcli

GUIDANCE = "PLUGINBENCH-QWEN-GUIDANCE: prefer small patches.\n"
MODEL = "qwen3-coder-plus"


def test_treatment_arrives_natively_receipt_matches_probe_usage_exact_no_leak(tmp_path, monkeypatch):
    """Guidance and a skill arrive through the private ~/.qwen, the no-model receipt lists
    exactly them and equals what the probe received, usage equals what the probe served,
    and guidance planted in the real HOME never reaches the model."""
    host_home = tmp_path / "host-home"
    plant_context_home(host_home, ".qwen", "QWEN.md")
    monkeypatch.setenv("HOME", str(host_home))
    run, receipt, launched, requests, served = attempt(tmp_path / "a", QwenHarness, "edit-file",
                                                       guided(tmp_path, GUIDANCE), model=MODEL)

    assert launched == [0], "discovery made a model call"
    assert receipt["ok"], receipt["mismatches"]
    assert receipt["guidance_loaded"] and receipt["skills_loaded"] == ["careful-edits"]
    assert "~/.qwen/QWEN.md" in receipt["memory_files"]
    assert "planted-skill" not in receipt["cli_skills"]
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(GUIDANCE.strip() in chat_system(r) for r in coding)
    assert all("careful-edits" in json.dumps(r.body) for r in coding)
    assert not any(PLANTED in json.dumps(r.body) for r in requests)
    assert (tmp_path / "a" / "out" / "probe_output.txt").read_text() == "written by the pluginbench probe\n"
    assert_usage_served(run, served)


def test_vanilla_loads_nothing_and_a_429_is_a_provider_stop(tmp_path):
    """Vanilla's receipt lists no guidance and no treatment skill, its requests carry none,
    and an HTTP 429 from the provider ends the session as a provider stop with unknown usage."""
    run, receipt, launched, requests, _ = attempt(tmp_path, QwenHarness, "quota-exhausted", VANILLA, model=MODEL)

    assert launched == [0]
    assert receipt["ok"], receipt["mismatches"]
    assert not receipt["guidance_loaded"] and receipt["skills_loaded"] == []
    assert [m for m in receipt["memory_files"] if m != "~/.qwen/output-language.md"] == []
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(r.status == 429 for r in coding)
    assert not any("QWEN-GUIDANCE" in json.dumps(r.body) for r in requests)
    assert run.provider_stop is not None and "429" in run.provider_stop
    assert run.usage.status == "unknown"
