"""Code Mode tool access through the real Codex CLI 0.169.0: explicitly on for every arm and for reviews."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._codex import CodexHarness
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment
from pluginbench.probe import SCENARIOS_DIR, ProbeServer, load_scenario
from pluginbench.review._call import EMPTY_TREATMENT
from tests.harnesses.test_codex_realcli import (
    cli,  # noqa: F401 - fixture
    task,
)

pytestmark = pytest.mark.realcli
#: The tools Code Mode adds on 0.169.0 (measured: absent with the feature at its default).
CODE_MODE_TOOLS = {"exec", "wait"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _offered_tools(tmp: Path, cli_path: Path, treatment: FrozenTreatment) -> set[str]:
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "README.md").write_text("starting source\n")
    home = tmp / "home"
    with ProbeServer(load_scenario(SCENARIOS_DIR / "text.yaml")) as probe:
        harness = CodexHarness(cli_path, "0.169.0", probe.base_url)
        harness.deliver(treatment, home)

        async def launched(argv):
            return None

        ctx = AttemptContext("run", "att", task(tmp, "Say hello."), treatment, "gpt-5.5", "medium", 1, 120.0,
                             tmp / "attempt", launched)
        spec = SandboxSpec("run", "att", "coding", "t", workspace=ws, home=home, readonly=harness.readonly, egress=harness.egress("coding", None))
        async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
            run = await harness.run(sb, ctx)
            await sb.stop()
        probe.wait_idle(timeout=60)
        coding = [r for r in probe.requests if r.kind == "coding"]
    assert run.exit_code == 0 and coding
    return {str(t.get("name") or t.get("type")) for t in coding[0].body.get("tools", [])}


@pytest.mark.anyio
@pytest.mark.parametrize("arm", ["vanilla", "guided", "review"])
async def test_every_arm_and_review_is_offered_code_mode_tools(cli: Path, tmp_path: Path, arm: str) -> None:  # noqa: F811
    """Vanilla, a treatment and a review call each run with Code Mode on: the model is offered exec and wait."""
    if arm == "guided":
        (tmp_path / "AGENTS.md").write_text("Be careful.\n")
        treatment = FrozenTreatment("guided", tmp_path, (tmp_path / "AGENTS.md",), (), (), "g")
    elif arm == "review":
        treatment = EMPTY_TREATMENT  # what a review call delivers
    else:
        treatment = FrozenTreatment("vanilla", None, (), (), (), "v")
    tools = await _offered_tools(tmp_path, cli, treatment)
    assert tools >= CODE_MODE_TOOLS and "exec_command" in tools
    cfg = tomllib.loads((tmp_path / "home" / ".codex" / "config.toml").read_text())
    assert cfg["features"]["code_mode"] is True
