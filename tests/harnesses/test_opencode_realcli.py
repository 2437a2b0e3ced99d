"""The real opencode CLI 1.18.33 through OpencodeHarness, a bubblewrap sandbox and the loopback probe."""

from __future__ import annotations

import json

import pytest

from pluginbench.harnesses._opencode import OpencodeHarness
from tests.harnesses._keyed_realcli import (
    PLANTED,
    VANILLA,
    assert_usage_served,
    attempt,
    chat_system,
    guided,
    plant_config,
)

pytestmark = pytest.mark.realcli

MODEL = "gpt-4.1"
GUIDANCE = "PLUGINBENCH-OPENCODE-GUIDANCE: prefer small patches.\n"
#: a positional message with a space is quoted by the CLI; the adapter sends it on stdin verbatim
INSTRUCTION = 'Write "probe_output.txt".'


def _opencode(tmp, scenario, treatment, reasoning=None):
    return attempt(tmp, OpencodeHarness, scenario, treatment, model=MODEL, reasoning=reasoning,
                   instruction=INSTRUCTION, timeout=300, options={"model": MODEL, "reasoning": reasoning})


def _plant_host_home(host_home) -> None:
    """A real HOME with the operator's own opencode guidance, skill and config, and Claude/agents files."""
    cfg = host_home / ".config" / "opencode"
    plant_config(cfg, "AGENTS.md")
    (cfg / "opencode.json").write_text(json.dumps({"instructions": [str(host_home / "extra.md")]}))
    (host_home / "extra.md").write_text(PLANTED + " in extra.md\n")
    (host_home / ".claude").mkdir()
    (host_home / ".claude" / "CLAUDE.md").write_text(PLANTED + " in CLAUDE.md\n")
    (host_home / ".agents" / "skills" / "agents-skill").mkdir(parents=True)
    (host_home / ".agents" / "skills" / "agents-skill" / "SKILL.md").write_text(
        f"---\nname: agents-skill\ndescription: {PLANTED}\n---\n{PLANTED}\n")


def test_treatment_arrives_natively_receipt_matches_probe_usage_exact_no_leak(tmp_path, monkeypatch):
    """Guidance and a skill arrive through the private ~/.config/opencode, the no-model receipt
    lists exactly them and equals what the probe received, usage equals what the probe served,
    the run's effort reaches every model call as reasoning_effort, and guidance planted in the
    real HOME and XDG config never reaches the model."""
    host_home = tmp_path / "host-home"
    _plant_host_home(host_home)
    monkeypatch.setenv("HOME", str(host_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(host_home / ".config"))
    run, receipt, launched, requests, served = _opencode(tmp_path / "a", "edit-file", guided(tmp_path, GUIDANCE),
                                                         reasoning="high")

    assert launched == [0], "discovery made a model call"
    assert receipt["ok"], receipt["mismatches"]
    assert receipt["guidance_loaded"] and receipt["skills_loaded"] == ["careful-edits"]
    assert receipt["cli_skills"] == ["customize-opencode"]
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(r.rule == "opencode" for r in coding[:2])
    assert all(r.body.get("reasoning_effort") == "high" for r in coding)
    # the receipt equals what the probe received: exactly the listed instruction files and skills
    for r in coding:
        system = chat_system(r)
        assert [line.removeprefix("Instructions from: ") for line in system.splitlines()
                if line.startswith("Instructions from: ")] == receipt["instruction_files"]
        assert GUIDANCE.strip() in system
        listed = sorted(n.split("</name>")[0] for n in system.split("<name>")[1:])
        assert listed == sorted(receipt["skills_loaded"] + receipt["cli_skills"])
    assert not any(PLANTED in json.dumps(r.body) for r in requests)
    assert [r for r in requests if r.kind == "side"] == [], "a title or other side call was made"
    assert (tmp_path / "a" / "out" / "probe_output.txt").read_text() == "written by the pluginbench probe\n"
    assert_usage_served(run, served)


def test_vanilla_loads_nothing_and_a_429_is_a_provider_stop(tmp_path):
    """Vanilla's receipt lists no instruction file and no treatment skill, its requests carry
    none (nor an effort: none was set), and an HTTP 429 from the provider ends the session as
    a provider stop with unknown usage."""
    run, receipt, launched, requests, _ = _opencode(tmp_path, "quota-exhausted", VANILLA)

    assert launched == [0]
    assert receipt["ok"], receipt["mismatches"]
    assert receipt["instruction_files"] == [] and receipt["skills_loaded"] == []
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(r.status == 429 for r in coding)
    assert not any("Instructions from:" in chat_system(r) or "reasoning_effort" in r.body for r in coding)
    assert run.provider_stop is not None and "429" in run.provider_stop
    assert run.usage.status == "unknown"
