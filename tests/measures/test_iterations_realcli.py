"""Verification iterations counted on traces the real Claude Code and Codex CLIs write.

Each CLI runs the bundled ``verify-loop`` probe scenario through its real harness in a
local sandbox: tests fail, calc.py is fixed, tests run again piped (masked), a
here-document mentions pytest (data), tests run under pipefail. Hand count: 3 verification
commands, 1 iteration, 1 failed command.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pluginbench.environments import LocalEnvironment, SandboxSpec
from pluginbench.harnesses._claude import ClaudeHarness
from pluginbench.harnesses._codex import CodexHarness
from pluginbench.harnesses._port import AttemptContext, FrozenTreatment
from pluginbench.measures._iterations import count_attempt
from pluginbench.probe import PINNED, ProbeServer, bundled_scenario, cli_version, find_cli
from pluginbench.tasks import HarborTask
from tests._prereq import require

pytestmark = pytest.mark.realcli

HAND_COUNT = {"verification_commands": 3, "verification_iterations": 1, "failed_verification_commands": 1}
CALC = "def add(a, b):\n    return a - b\n"
TEST = ("import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n")
#: set to a folder to keep the recorded agent traces (how tests/data/quality/iterations was made)
RECORD = os.environ.get("PLUGINBENCH_RECORD_ITERATIONS")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _run(tmp: Path, name: str) -> Path:
    cli = find_cli(name)  # type: ignore[arg-type]
    require(cli is not None and cli_version(cli) == PINNED[name], f"{name} {PINNED[name]} (tools/install-clis.sh)")
    assert cli is not None
    work = tmp / "work"
    work.mkdir()
    (work / "calc.py").write_text(CALC)
    (work / "test_calc.py").write_text(TEST)
    home = tmp / "home"
    home.mkdir()
    vanilla = FrozenTreatment("vanilla", None, (), (), (), "v")
    task = HarborTask("t", tmp, "Make the tests pass.", "/app", None, 120.0, 60.0, "local", None, None,
                      None, None, (), {})
    attempt_dir = tmp / "attempt"
    with ProbeServer(bundled_scenario("verify-loop")) as probe:
        if name == "claude":
            harness = ClaudeHarness(cli, PINNED["claude"], probe.base_url, environ={"PATH": "/usr/bin:/bin"})
            model = "claude-sonnet-4-5"
        else:
            harness = CodexHarness(cli, PINNED["codex"], probe.base_url)
            model = "gpt-5.5"
        harness.deliver(vanilla, home)

        async def launched(argv):
            return None

        ctx = AttemptContext("run", "att", task, vanilla, model, "medium", 1, 120.0, attempt_dir, launched)
        spec = SandboxSpec("run", "att", "coding", "t", workspace=work, home=home, readonly=harness.readonly, egress=harness.egress("coding", None))
        async with LocalEnvironment(isolation="auto").sandbox(spec) as sb:
            await harness.run(sb, ctx)
            await sb.stop()
            await sb.export_workspace(tmp / "out")
        probe.wait_idle(timeout=60)
    assert (tmp / "out" / "calc.py").read_text() == CALC.replace("a - b", "(a + b)")  # the edit really landed
    if RECORD:
        dest = Path(RECORD) / name / "agent"
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(attempt_dir / "agent", dest)
    return attempt_dir


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["claude", "codex"])
async def test_real_cli_traces_give_the_hand_counted_iterations(tmp_path: Path, name: str) -> None:
    """The real CLI's saved traces of the verify-loop session count 3 commands, 1 iteration, 1 failure."""
    attempt_dir = await _run(tmp_path, name)
    got = count_attempt(attempt_dir)
    assert {k: (m.value, m.status) for k, m in got.items()} == {k: (v, "measured") for k, v in HAND_COUNT.items()}
    # the same fresh traces, as the attempt page and `show` read them: each tool call in order
    from pluginbench.viewer import load_timeline

    timeline = load_timeline(attempt_dir)
    assert timeline.root is not None and [s.name for s in timeline.root.steps if s.kind == "tool"] == {
        "claude": ["Bash", "Read", "Edit", "Bash", "Bash", "Bash"],
        "codex": ["exec_command", "apply_patch", "exec_command", "exec_command", "exec_command"]}[name]
