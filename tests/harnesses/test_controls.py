"""The nop and oracle controls, and make_harness.

Both controls run through a real local sandbox (unisolated, and under bubblewrap where
available); their result is then graded by the task's own hidden verifier in a separate
verifier sandbox, as readiness checks do: nop must fail, oracle must pass.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pluginbench import harness_registry
from pluginbench.environments import LocalEnvironment, SandboxSpec, bwrap_available
from pluginbench.errors import ConfigError, PluginBenchError
from pluginbench.harnesses import (
    NO_MODEL_USAGE,
    AttemptContext,
    FrozenTreatment,
    NopHarness,
    OracleHarness,
    SimulatedHarness,
    make_harness,
)
from pluginbench.tasks import load_task
from tests._prereq import require

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
VANILLA = FrozenTreatment("vanilla", None, (), (), (), "none")
ISOLATIONS = ["none", "bubblewrap"]


def _environment(isolation: str, root: Path) -> LocalEnvironment:
    if isolation == "bubblewrap":
        require(shutil.which("bwrap") is not None and bwrap_available(), "bubblewrap")
    return LocalEnvironment(isolation=isolation, root=root)


# ------------------------------------------------------------------ make_harness


def test_make_harness_builds_each_control():
    """The three control names give the three control classes, none of them a real agent."""
    made = {name: make_harness(name) for name in ("nop", "oracle", "simulated")}
    assert isinstance(made["nop"], NopHarness)
    assert isinstance(made["oracle"], OracleHarness)
    assert isinstance(made["simulated"], SimulatedHarness)
    assert {h.name for h in made.values()} == {"nop", "oracle", "simulated"}
    assert not any(h.real for h in made.values())
    assert [h.needs_solution for h in made.values()] == [False, True, False]


def test_make_harness_refuses_an_unknown_name():
    """An unknown harness name is a config error naming runner.harness."""
    with pytest.raises(ConfigError) as info:
        make_harness("cursor")
    assert info.value.field == "runner.harness"


def test_make_harness_explains_a_missing_real_adapter(monkeypatch):
    """When a real harness's module cannot be imported the error says which and why."""
    monkeypatch.setitem(harness_registry._registry, "claude", "pluginbench.harnesses._no_such_adapter:ClaudeHarness")
    with pytest.raises(PluginBenchError, match="claude harness is not available"):
        make_harness("claude")


@pytest.mark.parametrize("harness", [NopHarness(), OracleHarness()])
def test_controls_deliver_nothing(tmp_path, harness):
    """A control ignores guidance: its delivery writes no file, even for a treatment."""
    guidance = tmp_path / "g.md"
    guidance.write_text("Run the tests.")
    home = tmp_path / "home"
    home.mkdir()
    receipt = harness.deliver(FrozenTreatment("t", None, (guidance,), (), (), "fp"), home)
    assert list(home.iterdir()) == []
    assert receipt["memory_file"] is None and receipt["skills"] == [] and receipt["plugins"] == []


# ------------------------------------------------------------------ through sandboxes


async def _code_then_grade(
    tmp_path: Path, isolation: str, harness, task_id: str, *, solution: Path | None = None
):
    """Run ``harness`` in a coding sandbox, then grade the exported workspace in a verifier
    sandbox with the task's hidden tests; return (run, launches, reward, attempt_dir)."""
    task = load_task(QUICKSTART / "tasks" / task_id)
    env = _environment(isolation, tmp_path / "boxes")
    home = tmp_path / "home"
    home.mkdir()
    harness.deliver(VANILLA, home)
    attempt_dir = tmp_path / "attempt"
    launches: list[list[str]] = []

    async def launched(argv):
        launches.append(list(argv))

    if solution is None and harness.needs_solution:
        solution = task.solution_dir
    coding = SandboxSpec(
        "run",
        "a1",
        "coding",
        task.id,
        workspace=task.workspace_dir,
        home=home,
        solution=solution,
        hidden=(task.root,),
    )
    exported = tmp_path / "submission"
    async with env.sandbox(coding) as sb:
        ctx = AttemptContext("run", "a1", task, VANILLA, None, None, 7, 60.0, attempt_dir, launched)
        run = await harness.run(sb, ctx)
        await sb.stop()
        await sb.export_workspace(exported)
    verifier = SandboxSpec(
        "run", "a1", "verifier", task.id, workspace=exported, tests=task.tests_dir
    )
    async with env.sandbox(verifier) as vb:
        await vb.exec(["bash", f"{vb.paths.tests}/test.sh"], timeout=60)
        await vb.get(f"{vb.paths.logs}/verifier/reward.txt", tmp_path / "reward.txt")
    return run, launches, (tmp_path / "reward.txt").read_text().strip(), attempt_dir


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_nop_changes_nothing_and_fails(tmp_path, isolation):
    """nop launches `true`, leaves the workspace as it was, uses zero tokens and gets reward 0."""
    run, launches, reward, _ = await _code_then_grade(
        tmp_path, isolation, NopHarness(), "roman-numerals"
    )
    assert launches == [["true"]]
    assert (run.exit_code, run.timed_out, run.error) == (0, False, None)
    assert run.usage == NO_MODEL_USAGE
    assert reward == "0"


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ISOLATIONS)
async def test_oracle_applies_the_solution_and_passes(tmp_path, isolation):
    """oracle runs solve.sh from the solution folder, keeps its output, uses zero tokens and gets reward 1."""
    run, launches, reward, attempt_dir = await _code_then_grade(
        tmp_path, isolation, OracleHarness(), "semver-prerelease"
    )
    assert len(launches) == 1 and launches[0][0] == "bash" and launches[0][1].endswith("/solve.sh")
    assert (run.exit_code, run.timed_out, run.error) == (0, False, None)
    assert run.usage == NO_MODEL_USAGE
    assert (attempt_dir / "agent" / "oracle.stdout.txt").is_file()
    assert (attempt_dir / "agent" / "oracle.stderr.txt").is_file()
    assert reward == "1"


@pytest.mark.anyio
async def test_oracle_reports_a_failing_solution(tmp_path):
    """A solve.sh that fails is reported with its exit code and stderr, and the task stays failing."""
    bad = tmp_path / "bad-solution"
    bad.mkdir()
    (bad / "solve.sh").write_text("#!/usr/bin/env bash\necho 'patch does not apply' >&2\nexit 4\n")
    run, _, reward, _ = await _code_then_grade(
        tmp_path, "none", OracleHarness(), "word-wrap", solution=bad
    )
    assert run.exit_code == 4
    assert run.error and "exited with 4" in run.error and "patch does not apply" in run.error
    assert run.usage == NO_MODEL_USAGE
    assert reward == "0"
