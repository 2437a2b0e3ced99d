"""Credentials never survive in saved evidence or the graded workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from pluginbench.actors._pipeline import code_attempt
from pluginbench.environments import LocalEnvironment
from pluginbench.harnesses import FrozenTreatment, NopHarness
from pluginbench.harnesses._port import NO_MODEL_USAGE, AgentRun
from pluginbench.tasks import load_task

TOKEN = "sk-test-credential-0123456789abcdef"
TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"


class LeakyHarness(NopHarness):
    """A stand-in agent (engine logic under test, not an agent) that leaks its credential."""

    def secrets(self) -> list[str]:
        return [TOKEN]

    async def run(self, sandbox, ctx):  # type: ignore[no-untyped-def]
        await ctx.launched(["leak"])
        (ctx.attempt_dir / "agent" / "stdout.jsonl").write_text(f'{{"echo": "{TOKEN}"}}\n')
        await sandbox.exec(["sh", "-c", f"echo {TOKEN} > leaked.txt"])
        return AgentRun(exit_code=0, timed_out=False, coding_seconds=0.1, usage=NO_MODEL_USAGE)


@pytest.mark.anyio
async def test_a_leaked_credential_is_redacted_and_the_attempt_not_graded(tmp_path: Path) -> None:
    """The token is redacted from evidence, the export is deleted, and no patch is made."""
    task = load_task(TASKS / "add-numbers", "add-numbers")

    async def launched(argv: object) -> None:
        return None

    attempt = tmp_path / "attempt"
    result = await code_attempt(
        environment=LocalEnvironment(isolation="none"), harness=LeakyHarness(), run_id="r", attempt_id="a",
        task=task, starting_source=task.workspace_dir, treatment=FrozenTreatment("vanilla", None, (), (), (), "0"),
        attempt_dir=attempt, model=None, reasoning=None, seed=0, timeout=30, hidden=(), launched=launched,
    )
    assert result.patch is None
    assert result.capture_error and "leaked.txt" in result.capture_error and "agent/stdout.jsonl" in result.capture_error
    assert not (attempt / "export").exists()
    for path in attempt.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert b"<redacted credential>" in (attempt / "agent" / "stdout.jsonl").read_bytes()
