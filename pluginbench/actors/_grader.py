"""The grader actor: the hidden verifier on the canonical patch, in its own sandbox.

The agent's sandbox is gone by now; the verifier starts from the frozen starting source
(or verifier image) and gets ``model.patch``, applied by PluginBench or handed over as an
artifact as the task's contract says, so nothing the agent wrote (a reward file, edited
tests) can set its own reward. The patch's sha256 is checked against the one recorded at
capture first; a mismatch is graded unknown with the reason.
"""

from __future__ import annotations

from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from ..errors import WorkerLost
from ..events import AttemptGraded
from ..rundir import patch_mismatch
from ._context import Engine
from ._decide import Grade, GradeSourceOnly
from ._pipeline import grade_patch
from ._prestart import discard_prestarted
from ._reward import GradeResult
from ._source_only import source_only_one


async def grader_actor(engine: Engine, inbox: MemoryObjectReceiveStream[Grade | GradeSourceOnly]) -> None:
    """Grade each job of the channel until it closes; on the way out (the run ended, or the
    worker is cancelled) remove every grading container pre-started for an attempt that no
    grading took (a grade the worker never got to)."""
    try:
        async with inbox:
            async for job in inbox:
                if isinstance(job, GradeSourceOnly):
                    await source_only_one(engine, job)
                else:
                    await grade_one(engine, job.attempt_id, job.task, job.patch_sha256)
    finally:
        with anyio.CancelScope(shield=True):
            await discard_prestarted(engine.environment, engine.run_id)


async def grade_one(engine: Engine, attempt_id: str, task_id: str, patch_sha256: str | None = None) -> None:
    attempt_dir = engine.run_dir.attempt(attempt_id)
    patch = attempt_dir / "model.patch"
    tampered = patch_mismatch(patch, patch_sha256)
    if tampered is not None:
        await engine.outbox.send(AttemptGraded(attempt_id=attempt_id, outcome="unknown", reward=None, reason=tampered))
        return
    try:
        result = await _grade_on_a_live_node(
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
            contract=engine.contracts.get(task_id),
            secrets=engine.harness.secrets(),
            verifier_env=engine.verifier_env(task_id),
        )
    except Exception as exc:  # noqa: BLE001 - an ungraded attempt is unknown, never a fail
        await engine.outbox.send(
            AttemptGraded(attempt_id=attempt_id, outcome="unknown", reward=None, reason=f"grading failed: {exc}")
        )
        return
    await engine.outbox.send(
        AttemptGraded(attempt_id=attempt_id, outcome=result.outcome, reward=result.reward, reason=result.reason,
                      native_grading=result.native_grading, overlap_paths=list(result.overlap_paths))
    )



#: Grading a saved submission again costs no model call, so a lost node is retried.
_LOST_NODE_RETRIES = 3


async def _grade_on_a_live_node(**kwargs: Any) -> GradeResult:
    """``grade_patch``, again on another node when the cluster node grading it was lost."""
    for attempt in range(_LOST_NODE_RETRIES + 1):
        try:
            return await grade_patch(**kwargs)
        except WorkerLost:
            if attempt == _LOST_NODE_RETRIES:
                raise
    raise AssertionError("unreachable")
