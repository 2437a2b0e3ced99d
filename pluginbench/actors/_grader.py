"""The grader actor: the hidden verifier on the canonical patch, in its own sandbox.

The agent's sandbox is gone by now; the verifier starts from the frozen starting source
plus ``model.patch``, so nothing the agent wrote (a reward file, edited tests) can set
its own reward.
"""

from __future__ import annotations

from anyio.streams.memory import MemoryObjectReceiveStream

from ..events import AttemptGraded
from ._context import Engine
from ._decide import Grade
from ._pipeline import grade_patch


async def grader_actor(engine: Engine, inbox: MemoryObjectReceiveStream[Grade]) -> None:
    async with inbox:
        async for job in inbox:
            await grade_one(engine, job.attempt_id, job.task)


async def grade_one(engine: Engine, attempt_id: str, task_id: str) -> None:
    attempt_dir = engine.run_dir.attempt(attempt_id)
    patch = attempt_dir / "model.patch"
    try:
        result = await grade_patch(
            environment=engine.environment,
            run_id=engine.run_id,
            attempt_id=attempt_id,
            task=engine.tasks[task_id],
            starting_source=engine.starting_source(task_id),
            patch_path=patch,
            empty=patch.stat().st_size == 0,
            out_dir=attempt_dir / "grading",
            hidden=engine.hidden,
            source=engine.source(task_id, "verifier"),
        )
    except Exception as exc:  # noqa: BLE001 - an ungraded attempt is unknown, never a fail
        await engine.outbox.send(
            AttemptGraded(attempt_id=attempt_id, outcome="unknown", reward=None, reason=f"grading failed: {exc}")
        )
        return
    await engine.outbox.send(
        AttemptGraded(attempt_id=attempt_id, outcome=result.outcome, reward=result.reward, reason=result.reason)
    )

