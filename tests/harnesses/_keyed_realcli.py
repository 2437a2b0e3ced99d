"""What the real-CLI tests of the keyed CLIs (Qwen Code, Gemini CLI, opencode) share.

:func:`attempt` drives one attempt of the pinned CLI through its adapter, a bubblewrap
sandbox and the loopback probe; :func:`guided` and :data:`VANILLA` are the two arms,
:func:`plant_config` the operator's own files a private HOME must keep out, and
:func:`whole_probe_evaluation` a whole probe evaluation through ``pluginbench run`` (one
test file per harness, so the suite's workers run them side by side).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._keyed import KeyedCliHarness
from pluginbench.harnesses._port import AgentRun, AttemptContext, FrozenTreatment
from pluginbench.probe import SCENARIOS_DIR, ProbeServer, bundled_scenario, find_cli
from pluginbench.tasks._harbor import HarborTask
from tests._prereq import require

TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
MARKER = "PLUGINBENCH-GUIDANCE-MARKER"
#: what the operator's own files say: it must never reach the model
PLANTED = "PLUGINBENCH-PLANTED-CONTAMINATION"
VANILLA = FrozenTreatment("vanilla", None, (), (), (), "v")


def pinned_cli(harness: type[KeyedCliHarness]) -> Path:
    """The harness's pinned CLI from .tools/clis (skipped locally, a failure under CI, when missing)."""
    path = find_cli(harness.name)
    version = harness.cli.version if harness.cli else "?"
    require(path is not None, f"{harness.name} {version} in .tools/clis (run tools/install-clis.sh)")
    assert path is not None
    return path


def guided(tmp: Path, guidance: str) -> FrozenTreatment:
    """The arm ``guided``: ``guidance`` as the package's AGENTS.md and the skill ``careful-edits``."""
    pkg = tmp / "pkg"
    (pkg / "skills" / "careful-edits").mkdir(parents=True)
    (pkg / "AGENTS.md").write_text(guidance)
    (pkg / "skills" / "careful-edits" / "SKILL.md").write_text(
        "---\nname: careful-edits\ndescription: Edit carefully.\n---\nRead before you write.\n")
    return FrozenTreatment("guided", pkg, (pkg / "AGENTS.md",), (pkg / "skills" / "careful-edits",), (), "fp")


def plant_config(folder: Path, instruction: str) -> None:
    """The operator's own config ``folder``: an instruction file and a skill ``planted-skill``
    that say :data:`PLANTED`."""
    (folder / "skills" / "planted-skill").mkdir(parents=True)
    (folder / instruction).write_text(f"{PLANTED} in {instruction}\n")
    (folder / "skills" / "planted-skill" / "SKILL.md").write_text(
        f"---\nname: planted-skill\ndescription: {PLANTED}\n---\n{PLANTED}\n")


def plant_context_home(host_home: Path, folder: str, instruction: str) -> None:
    """A real HOME whose ``folder`` (``.qwen``, ``.gemini``) holds the operator's own
    instruction file, skill and settings naming ``instruction`` and AGENTS.md as context
    files, with an AGENTS.md of its own beside them."""
    plant_config(host_home / folder, instruction)
    (host_home / folder / "settings.json").write_text(json.dumps({"context": {"fileName": [instruction, "AGENTS.md"]}}))
    (host_home / "AGENTS.md").write_text(PLANTED + " in AGENTS.md\n")


def assert_usage_served(run: AgentRun, served: dict[str, Any], *, thoughts_in_output: bool = False) -> None:
    """The session ended cleanly and its usage is exact and equals what the probe served
    (``thoughts_in_output``: the CLI counts reasoning tokens inside its output tokens)."""
    (model_usage,) = served.values()
    u = run.usage
    assert u.status == "exact", u.reason
    output = model_usage.output_tokens + (model_usage.reasoning_tokens if thoughts_in_output else 0)
    assert (u.input_tokens, u.cached_input_tokens, u.output_tokens, u.reasoning_output_tokens) == (
        model_usage.input_tokens, model_usage.cache_read_input_tokens, output, model_usage.reasoning_tokens)
    assert run.provider_stop is None and run.exit_code == 0


def chat_system(req: Any) -> str:
    """The system messages of an OpenAI-compatible chat request the probe received."""
    return "\n".join(str(m.get("content")) for m in req.body["messages"] if m.get("role") == "system")


class Attempt(NamedTuple):
    run: AgentRun
    #: the saved native-treatment.json
    receipt: dict[str, Any]
    #: how many requests the probe had received when the coding session launched
    launched: list[int]
    requests: tuple[Any, ...]
    served: dict[str, Any]


def attempt(tmp: Path, harness: type[KeyedCliHarness], scenario: str, treatment: FrozenTreatment, *, model: str,
            reasoning: str | None = None, instruction: str = "Write probe_output.txt.", timeout: int = 120,
            options: dict[str, Any] | None = None) -> Attempt:
    """One attempt of ``harness``'s pinned CLI on a one-file workspace in a sandbox (bubblewrap
    where it works) against the probe playing ``scenario``; the workspace is exported to
    ``tmp/out``. ``options`` go to the adapter's constructor."""
    cli = pinned_cli(harness)
    return asyncio.run(_attempt(tmp, harness, cli, scenario, treatment, model, reasoning, instruction, timeout,
                                options or {}))


async def _attempt(tmp: Path, harness_cls: type[KeyedCliHarness], cli: Path, scenario: str,
                   treatment: FrozenTreatment, model: str, reasoning: str | None, instruction: str, timeout: int,
                   options: dict[str, Any]) -> Attempt:
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    (ws / "README.md").write_text("starting source\n")
    home = tmp / "home"
    launched: list[int] = []
    task = HarborTask(id="t", root=tmp, instruction=instruction, workdir="/app", agent_timeout_sec=timeout,
                      verifier_timeout_sec=60, build_timeout_sec=60, environment_mode="local", docker_image=None,
                      verifier_docker_image=None, cpus=None, memory_mb=None, collect=(), metadata={})
    version = harness_cls.cli.version if harness_cls.cli else ""
    with ProbeServer(bundled_scenario(scenario)) as probe:
        harness = harness_cls(cli, version, probe.base_url, **options)
        harness.deliver(treatment, home)

        async def on_launch(argv: Any) -> None:
            launched.append(len(probe.requests))

        ctx = AttemptContext("run", "att", task, treatment, model, reasoning, 1, float(timeout), tmp / "attempt",
                             on_launch)
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
    return Attempt(run, receipt, launched, requests, served)


def whole_probe_evaluation(tmp_path: Path, harness: str, model: str) -> None:
    """Run the guided scenario's whole evaluation with ``harness`` in bubblewrap and check it."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    guidance = tmp_path / "pkg" / "AGENTS.md"
    guidance.parent.mkdir(parents=True)
    guidance.write_text(f"# Guidance\n{MARKER}: write guided answers.\n")
    config = {
        "name": f"probe-{harness}", "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"guided": {"guidance": [str(guidance)]}},
        "runner": {"harness": harness, "model": model, "probe": str(SCENARIOS_DIR / "guided.yaml")},
        "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 180, "environment": {"isolation": "bubblewrap"},
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run_dir),
                           "--foreground", "--yes"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    assert results["run"]["probe"] is True
    per = results["per_task"]["add-numbers"]
    assert per["vanilla"]["pass_rate"] == 0.0 and per["guided"]["pass_rate"] == 1.0
    served_in = served_out = 0
    for line in (run_dir / "evidence" / "probe" / "requests.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["kind"] == "coding" and r["completed"] and r["status"] == 200 and r["usage"]:
            served_in += r["usage"]["input_tokens"]
            served_out += r["usage"]["output_tokens"]
    attempts = results["attempts"]
    assert all(a["tokens"]["status"] == "exact" for a in attempts), [a["tokens"] for a in attempts]
    assert (sum(a["tokens"]["input"] for a in attempts), sum(a["tokens"]["output"] for a in attempts)) == (
        served_in, served_out)
    assert "PROBE" in (run_dir / "report" / "report.html").read_text()
