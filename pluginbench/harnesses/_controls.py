"""The ``nop`` and ``oracle`` controls: readiness checks that make no model call.

Every task must fail under ``nop`` (the starting source does not already pass) and
pass under ``oracle`` (the reference solution passes the hidden verifier), through the
same sandbox, patch and verifier path as a real agent. Neither reads guidance: their
delivery writes nothing, and their usage is exactly zero tokens, because they make no
model call (:data:`NO_MODEL_USAGE`), which is measured, not assumed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._parsing import file_tail
from ..environments import Sandbox
from ._port import NO_MODEL_USAGE, AgentRun, AttemptContext, FrozenTreatment, HarnessBase


def _control_receipt(name: str) -> dict[str, object]:
    return {
        "config_dir": None,
        "memory_file": None,
        "skills": [],
        "plugins": [],
        "note": f"{name} is a control harness: it reads no guidance, so nothing was delivered",
    }


class NopHarness(HarnessBase):
    """Does nothing: runs ``true`` in the workspace and leaves it unchanged."""

    name = "nop"
    summary = "control: does nothing (readiness: every task must fail)"
    delivery_policy = "control-v1"

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        return {"argv": ["true"]}

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write nothing; return a receipt that says so."""
        return _control_receipt(self.name)

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """Launch ``true`` in the workspace; usage is exactly zero."""
        argv = ["true"]
        await ctx.launched(argv)
        res = await sandbox.exec(argv, cwd=sandbox.paths.app, timeout=ctx.timeout_seconds)
        ctx.ran(res.seconds)
        error = None
        if res.timed_out:
            error = f"timed out after {ctx.timeout_seconds:g}s"
        elif res.exit_code != 0:
            error = f"true exited with {res.exit_code}"
        return AgentRun(
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            coding_seconds=res.seconds,
            usage=NO_MODEL_USAGE,
            error=error,
        )


class OracleHarness(HarnessBase):
    """Applies the reference solution: ``bash $SOLUTION_DIR/solve.sh`` in the workspace.

    The engine gives an oracle sandbox the task's ``solution/`` (``needs_solution``).
    The script's output is kept as ``agent/oracle.stdout.txt`` and
    ``agent/oracle.stderr.txt`` under the attempt folder.
    """

    name = "oracle"
    summary = "control: applies the reference solution (readiness: every task must pass)"
    needs_solution = True
    delivery_policy = "control-v1"

    @classmethod
    def launch_identity(cls, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
        return {"argv": ["bash", "<solve>"]}

    def deliver(self, treatment: FrozenTreatment, home: Path) -> dict[str, object]:
        """Write nothing; return a receipt that says so."""
        return _control_receipt(self.name)

    async def run(self, sandbox: Sandbox, ctx: AttemptContext) -> AgentRun:
        """Run ``solve.sh``; a non-zero exit is reported as the error."""
        agent_dir = ctx.attempt_dir / "agent"
        agent_dir.mkdir(parents=True, exist_ok=True)
        script = f"{sandbox.paths.solution.rstrip('/')}/solve.sh"
        argv = ["bash", script]
        await ctx.launched(argv)
        stderr_path = agent_dir / "oracle.stderr.txt"
        res = await sandbox.exec(
            argv,
            cwd=sandbox.paths.app,
            timeout=ctx.timeout_seconds,
            stdout_path=agent_dir / "oracle.stdout.txt",
            stderr_path=stderr_path,
        )
        ctx.ran(res.seconds)
        error = None
        if res.timed_out:
            error = f"solve.sh timed out after {ctx.timeout_seconds:g}s"
        elif res.exit_code != 0:
            tail = file_tail(stderr_path).strip()[-500:]
            error = f"solve.sh exited with {res.exit_code}" + (f": {tail}" if tail else "")
        return AgentRun(
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            coding_seconds=res.seconds,
            usage=NO_MODEL_USAGE,
            error=error,
        )
