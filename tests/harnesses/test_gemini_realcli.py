"""The real Gemini CLI 0.61.0 through GeminiHarness, a bubblewrap sandbox and the loopback probe."""

from __future__ import annotations

import hashlib
import json

import pytest

from pluginbench.harnesses._gemini import GeminiHarness
from tests.harnesses._keyed_realcli import (
    PLANTED,
    VANILLA,
    assert_usage_served,
    attempt,
    guided,
    plant_context_home,
)

pytestmark = pytest.mark.realcli

GUIDANCE = "PLUGINBENCH-GEMINI-GUIDANCE: prefer small patches.\n"
MODEL = "gemini-2.5-pro"


def _system(req) -> str:
    return json.dumps(req.body.get("systemInstruction"))


def _loaded_context(req) -> str:
    """The GEMINI.md text the CLI sent, between its own Context-from markers."""
    text = "".join(p.get("text", "") for p in req.body["systemInstruction"]["parts"])
    start = text.index("--- Context from: ")
    body = text[text.index("\n", start) + 1:]
    return body[:body.index("--- End of Context from: ")]


def test_treatment_arrives_natively_receipt_matches_probe_usage_exact_no_leak(tmp_path, monkeypatch):
    """Guidance arrives through the private ~/.gemini/GEMINI.md, the receipt's sha256 equals
    the context the probe received, usage equals what the probe served, and guidance planted
    in the real HOME never reaches the model."""
    host_home = tmp_path / "host-home"
    plant_context_home(host_home, ".gemini", "GEMINI.md")
    monkeypatch.setenv("HOME", str(host_home))
    run, receipt, launched, requests, served = attempt(tmp_path / "a", GeminiHarness, "edit-file",
                                                       guided(tmp_path, GUIDANCE), model=MODEL)

    assert launched == [0], "the receipt made a model call"
    assert receipt["ok"], receipt["mismatches"]
    assert receipt["guidance_loaded"] and receipt["skills_loaded"] == ["careful-edits"]
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(r.api == "gemini" for r in coding)
    for r in coding:
        sent = _loaded_context(r).encode()
        assert hashlib.sha256(sent.rstrip(b"\n") + b"\n").hexdigest() == receipt["gemini_md_sha256"], sent
    assert all("careful-edits" in json.dumps(r.body) for r in coding)
    assert not any(PLANTED in json.dumps(r.body) for r in requests)
    assert (tmp_path / "a" / "out" / "probe_output.txt").read_text() == "written by the pluginbench probe\n"
    assert_usage_served(run, served, thoughts_in_output=True)


def test_vanilla_loads_nothing_and_a_429_is_a_provider_stop(tmp_path):
    """Vanilla's receipt lists no context file and no skill, its requests carry none, and
    an HTTP 429 from the provider ends the session as a provider stop with unknown usage."""
    run, receipt, launched, requests, _ = attempt(tmp_path, GeminiHarness, "quota-exhausted", VANILLA, model=MODEL)

    assert launched == [0]
    assert receipt["ok"], receipt["mismatches"]
    assert not receipt["guidance_loaded"] and receipt["skills_loaded"] == [] and receipt["memory_files"] == []
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(r.status == 429 for r in coding)
    assert not any("Context from:" in _system(r) for r in coding)
    assert run.provider_stop is not None and "429" in run.provider_stop
    assert run.usage.status == "unknown"
