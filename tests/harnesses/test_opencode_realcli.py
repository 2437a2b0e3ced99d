"""The real opencode CLI 1.18.33 through OpencodeHarness, a bubblewrap sandbox and the loopback probe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._opencode import OpencodeHarness
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment
from pluginbench.probe import ProbeServer, bundled_scenario, find_cli
from pluginbench.tasks._harbor import HarborTask
from tests._prereq import require

pytestmark = pytest.mark.realcli

MODEL = "gpt-4.1"
GUIDANCE = "PLUGINBENCH-OPENCODE-GUIDANCE: prefer small patches.\n"
PLANTED = "PLUGINBENCH-PLANTED-CONTAMINATION"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def cli() -> Path:
    path = find_cli("opencode")
    require(path is not None, "opencode 1.18.33 in .tools/clis (run tools/install-clis.sh)")
    assert path is not None
    return path


def _task(root: Path) -> HarborTask:
    return HarborTask(id="t", root=root, instruction='Write "probe_output.txt".', workdir="/app",
                      agent_timeout_sec=300, verifier_timeout_sec=60, build_timeout_sec=60, environment_mode="local",
                      docker_image=None, verifier_docker_image=None, cpus=None, memory_mb=None, collect=(),
                      metadata={})


def _plant_host_home(host_home: Path) -> None:
    """A real HOME with the operator's own opencode guidance, skill and config, and Claude/agents files."""
    cfg = host_home / ".config" / "opencode"
    (cfg / "skills" / "planted-skill").mkdir(parents=True)
    (cfg / "AGENTS.md").write_text(PLANTED + " in AGENTS.md\n")
    (cfg / "skills" / "planted-skill" / "SKILL.md").write_text(
        f"---\nname: planted-skill\ndescription: {PLANTED}\n---\n{PLANTED}\n")
    (cfg / "opencode.json").write_text(json.dumps({"instructions": [str(host_home / "extra.md")]}))
    (host_home / "extra.md").write_text(PLANTED + " in extra.md\n")
    (host_home / ".claude").mkdir()
    (host_home / ".claude" / "CLAUDE.md").write_text(PLANTED + " in CLAUDE.md\n")
    (host_home / ".agents" / "skills" / "agents-skill").mkdir(parents=True)
    (host_home / ".agents" / "skills" / "agents-skill" / "SKILL.md").write_text(
        f"---\nname: agents-skill\ndescription: {PLANTED}\n---\n{PLANTED}\n")


async def _attempt(tmp: Path, cli: Path, scenario: str, treatment: FrozenTreatment):
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    (ws / "README.md").write_text("starting source\n")
    home = tmp / "home"
    launched: list[int] = []
    with ProbeServer(bundled_scenario(scenario)) as probe:
        harness = OpencodeHarness(cli, "1.18.33", probe.base_url, model=MODEL)
        harness.deliver(treatment, home)

        async def on_launch(argv):
            launched.append(len(probe.requests))

        ctx = AttemptContext("run", "att", _task(tmp), treatment, MODEL, None, 1, 300.0, tmp / "attempt", on_launch)
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
    return "\n".join(str(m.get("content")) for m in req.body["messages"] if m.get("role") == "system")


@pytest.mark.anyio
async def test_treatment_arrives_natively_receipt_matches_probe_usage_exact_no_leak(tmp_path, cli, monkeypatch):
    """Guidance and a skill arrive through the private ~/.config/opencode, the no-model receipt
    lists exactly them and equals what the probe received, usage equals what the probe served,
    and guidance planted in the real HOME and XDG config never reaches the model."""
    host_home = tmp_path / "host-home"
    _plant_host_home(host_home)
    monkeypatch.setenv("HOME", str(host_home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(host_home / ".config"))
    pkg = tmp_path / "pkg"
    (pkg / "skills" / "careful-edits").mkdir(parents=True)
    (pkg / "AGENTS.md").write_text(GUIDANCE)
    (pkg / "skills" / "careful-edits" / "SKILL.md").write_text(
        "---\nname: careful-edits\ndescription: Edit carefully.\n---\nRead before you write.\n")
    t = FrozenTreatment("guided", pkg, (pkg / "AGENTS.md",), (pkg / "skills" / "careful-edits",), (), "fp")
    run, receipt, launched, requests, served = await _attempt(tmp_path / "a", cli, "edit-file", t)

    assert launched == [0], "discovery made a model call"
    assert receipt["ok"], receipt["mismatches"]
    assert receipt["guidance_loaded"] and receipt["skills_loaded"] == ["careful-edits"]
    assert receipt["cli_skills"] == ["customize-opencode"]
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(r.rule == "opencode" for r in coding[:2])
    # the receipt equals what the probe received: exactly the listed instruction files and skills
    for r in coding:
        system = _system(r)
        assert [line.removeprefix("Instructions from: ") for line in system.splitlines()
                if line.startswith("Instructions from: ")] == receipt["instruction_files"]
        assert GUIDANCE.strip() in system
        listed = sorted(n.split("</name>")[0] for n in system.split("<name>")[1:])
        assert listed == sorted(receipt["skills_loaded"] + receipt["cli_skills"])
    assert not any(PLANTED in json.dumps(r.body) for r in requests)
    assert [r for r in requests if r.kind == "side"] == [], "a title or other side call was made"
    assert (tmp_path / "a" / "out" / "probe_output.txt").read_text() == "written by the pluginbench probe\n"
    (model_usage,) = served.values()
    u = run.usage
    assert u.status == "exact", u.reason
    assert (u.input_tokens, u.cached_input_tokens, u.output_tokens, u.reasoning_output_tokens) == (
        model_usage.input_tokens, model_usage.cache_read_input_tokens, model_usage.output_tokens,
        model_usage.reasoning_tokens)
    assert run.provider_stop is None and run.exit_code == 0


@pytest.mark.anyio
async def test_vanilla_loads_nothing_and_a_429_is_a_provider_stop(tmp_path, cli):
    """Vanilla's receipt lists no instruction file and no treatment skill, its requests carry
    none, and an HTTP 429 from the provider ends the session as a provider stop with unknown usage."""
    vanilla = FrozenTreatment("vanilla", None, (), (), (), "v")
    run, receipt, launched, requests, _ = await _attempt(tmp_path, cli, "quota-exhausted", vanilla)

    assert launched == [0]
    assert receipt["ok"], receipt["mismatches"]
    assert receipt["instruction_files"] == [] and receipt["skills_loaded"] == []
    coding = [r for r in requests if r.kind == "coding"]
    assert coding and all(r.status == 429 for r in coding)
    assert not any("Instructions from:" in _system(r) for r in coding)
    assert run.provider_stop is not None and "429" in run.provider_stop
    assert run.usage.status == "unknown"
