"""The real Gemini CLI 0.61.0 through GeminiHarness, a bubblewrap sandbox and the loopback probe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._gemini import GeminiHarness
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment
from pluginbench.probe import ProbeServer, bundled_scenario, find_cli
from pluginbench.tasks._harbor import HarborTask
from tests._prereq import require

pytestmark = pytest.mark.realcli

GUIDANCE = "PLUGINBENCH-GEMINI-GUIDANCE: prefer small patches.\n"
PLANTED = "PLUGINBENCH-PLANTED-CONTAMINATION"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cli() -> Path:
    path = find_cli("gemini")
    require(path is not None, "gemini 0.61.0 in .tools/clis (run tools/install-clis.sh)")
    assert path is not None
    return path


def _task(root: Path) -> HarborTask:
    return HarborTask(id="t", root=root, instruction="Write probe_output.txt.", workdir="/app", agent_timeout_sec=120,
                      verifier_timeout_sec=60, build_timeout_sec=60, environment_mode="local", docker_image=None,
                      verifier_docker_image=None, cpus=None, memory_mb=None, collect=(), metadata={})


def _plant_host_home(host_home: Path) -> None:
    """A real HOME with the operator's own Gemini context file, skill and settings."""
    gem = host_home / ".gemini"
    (gem / "skills" / "planted-skill").mkdir(parents=True)
    (gem / "GEMINI.md").write_text(PLANTED + " in GEMINI.md\n")
    (gem / "skills" / "planted-skill" / "SKILL.md").write_text(
        f"---\nname: planted-skill\ndescription: {PLANTED}\n---\n{PLANTED}\n")
    (gem / "settings.json").write_text(json.dumps({"context": {"fileName": ["GEMINI.md", "AGENTS.md"]}}))
    (host_home / "AGENTS.md").write_text(PLANTED + " in AGENTS.md\n")


async def _attempt(tmp: Path, cli: Path, scenario: str, treatment: FrozenTreatment):
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    (ws / "README.md").write_text("starting source\n")
    home = tmp / "home"
    with ProbeServer(bundled_scenario(scenario)) as probe:
        harness = GeminiHarness(cli, "0.61.0", probe.base_url)
        harness.deliver(treatment, home)
        launched: list[int] = []

        async def on_launch(argv):
            launched.append(len(probe.requests))

        ctx = AttemptContext("run", "att", _task(tmp), treatment, "gemini-2.5-pro", None, 1, 120.0,
                             tmp / "attempt", on_launch)
        spec = SandboxSpec("run", "att", "coding", "t", workspace=ws, home=home, readonly=harness.readonly,
                           egress=harness.egress("coding", None))
        async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
            run = await harness.run(sb, ctx)
            await sb.stop()
            await sb.export_workspace(tmp / "out")
        probe.wait_idle(timeout=30)
        requests = probe.requests
        served = probe.served_usage()
    receipt = json.loads((tmp / "attempt" / "native-treatment.json").read_text())
    return run, receipt, launched, requests, served


def _system(req) -> str:
    return json.dumps(req.body.get("systemInstruction"))


def _loaded_context(req) -> str:
    """The GEMINI.md text the CLI sent, between its own Context-from markers."""
    text = "".join(p.get("text", "") for p in req.body["systemInstruction"]["parts"])
    start = text.index("--- Context from: ")
    body = text[text.index("\n", start) + 1:]
    return body[:body.index("--- End of Context from: ")]


@pytest.mark.anyio
async def test_treatment_arrives_natively_receipt_matches_probe_usage_exact_no_leak(tmp_path, cli, monkeypatch):
    """Guidance arrives through the private ~/.gemini/GEMINI.md, the receipt's sha256 equals
    the context the probe received, usage equals what the probe served, and guidance planted
    in the real HOME never reaches the model."""
    import hashlib

    host_home = tmp_path / "host-home"
    _plant_host_home(host_home)
    monkeypatch.setenv("HOME", str(host_home))
    pkg = tmp_path / "pkg"
    (pkg / "skills" / "careful-edits").mkdir(parents=True)
    (pkg / "AGENTS.md").write_text(GUIDANCE)
    (pkg / "skills" / "careful-edits" / "SKILL.md").write_text(
        "---\nname: careful-edits\ndescription: Edit carefully.\n---\nRead before you write.\n")
    t = FrozenTreatment("guided", pkg, (pkg / "AGENTS.md",), (pkg / "skills" / "careful-edits",), (), "fp")
    run, receipt, launched, requests, served = await _attempt(tmp_path / "a", cli, "edit-file", t)

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
    (model_usage,) = served.values()
    u = run.usage
    assert u.status == "exact", u.reason
    assert (u.input_tokens, u.cached_input_tokens, u.output_tokens, u.reasoning_output_tokens) == (
        model_usage.input_tokens, model_usage.cache_read_input_tokens,
        model_usage.output_tokens + model_usage.reasoning_tokens, model_usage.reasoning_tokens)
    assert run.provider_stop is None and run.exit_code == 0


@pytest.mark.anyio
async def test_vanilla_loads_nothing_and_a_429_is_a_provider_stop(tmp_path, cli):
    """Vanilla's receipt lists no context file and no skill, its requests carry none, and
    an HTTP 429 from the provider ends the session as a provider stop with unknown usage."""
    vanilla = FrozenTreatment("vanilla", None, (), (), (), "v")
    run, receipt, launched, requests, _ = await _attempt(tmp_path, cli, "quota-exhausted", vanilla)

    assert launched == [0]
    assert receipt["ok"], receipt["mismatches"]
    assert not receipt["guidance_loaded"] and receipt["skills_loaded"] == [] and receipt["memory_files"] == []
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(r.status == 429 for r in coding)
    assert not any("Context from:" in _system(r) for r in coding)
    assert run.provider_stop is not None and "429" in run.provider_stop
    assert run.usage.status == "unknown"
