"""The coding actor: one attempt at a time from its channel, each in a fresh sandbox.

It reports ``agent.launched`` (durably, before the agent process starts),
``agent.exited`` and ``submission.captured``, or ``attempt.interrupted`` when no usable
session came out of it. It never decides anything and never writes the log.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from anyio.streams.memory import MemoryObjectReceiveStream

from ..errors import LaunchRefused, WorkerLost
from ..events import (
    AgentExited,
    AgentLaunched,
    AttemptInterrupted,
    AttemptReset,
    SubmissionCaptured,
    SubmissionMissing,
)
from ._context import Engine
from ._decide import Start
from ._pipeline import code_attempt, verifier_spec


def attempt_seed(run_seed: int, attempt_id: str) -> int:
    """A per-attempt seed that depends only on the run seed and the attempt id."""
    return int.from_bytes(hashlib.sha256(f"{run_seed}:{attempt_id}".encode()).digest()[:8], "big")


async def coding_actor(engine: Engine, inbox: MemoryObjectReceiveStream[Start]) -> None:
    async with inbox:
        async for job in inbox:
            await code_one(engine, job)


async def code_one(engine: Engine, job: Start) -> None:
    out = engine.outbox
    task = engine.tasks[job.task]
    attempt_dir = engine.run_dir.attempt(job.attempt_id)

    async def launched(argv: Sequence[str]) -> None:
        await out.record(AgentLaunched(attempt_id=job.attempt_id, argv=[str(a) for a in argv],
                                       node=engine.node_of(job.attempt_id)))

    ev = engine.evaluation
    treatment = engine.treatment_for(job.arm, job.task)
    if isinstance(treatment, str):  # a generated-guidance arm whose generation failed on this task
        await out.send(SubmissionMissing(attempt_id=job.attempt_id,
                                         reason=f"{treatment}; the arm was not run on this task (no agent launched)"))
        return
    try:
        result = await code_attempt(
            environment=engine.environment,
            harness=engine.harness,
            run_id=engine.run_id,
            attempt_id=job.attempt_id,
            task=task,
            starting_source=engine.starting_source(job.task),
            treatment=treatment,
            attempt_dir=attempt_dir,
            model=ev.runner.model,
            reasoning=ev.runner.reasoning,
            seed=attempt_seed(ev.seed, job.attempt_id),
            timeout=engine.attempt_timeout(task),
            hidden=engine.hidden,
            launched=launched,
            source=engine.source(job.task, "coding"),
            # the attempt's own grading sandbox, made while the agent codes where the backend can
            verifier=verifier_spec(engine.run_id, job.attempt_id, task, engine.starting_source(job.task),
                                   engine.hidden, engine.source(job.task, "verifier")),
            solution_env=engine.solution_env(job.task) if engine.harness.needs_solution else None,
        )
    except LaunchRefused as exc:  # stopping: the agent never started; the slot waits for the resume
        await out.send(AttemptReset(attempt_id=job.attempt_id, reason=str(exc)))
        return
    except WorkerLost as exc:  # the cluster node died under it: recoded, not a failed run
        await out.send(AttemptInterrupted(attempt_id=job.attempt_id, reason=str(exc), worker_lost=True))
        return
    except Exception as exc:  # noqa: BLE001 - reported as an event; the Supervisor decides
        await out.send(
            AttemptInterrupted(attempt_id=job.attempt_id, reason=f"{type(exc).__name__}: {exc}")
        )
        return
    run = result.run
    await out.send(
        AgentExited(
            attempt_id=job.attempt_id,
            exit_code=run.exit_code,
            timed_out=run.timed_out,
            coding_seconds=None if run.coding_seconds is None else round(run.coding_seconds, 3),
            usage=run.usage,
            error=run.error,
            model_record=run.model_record,
            integrity=list(run.integrity),
            resource_limit=run.resource_limit,
        )
    )
    if run.provider_stop:
        await out.send(
            AttemptInterrupted(attempt_id=job.attempt_id, reason=run.provider_stop, provider_stop=True)
        )
        return
    if result.patch is None:
        await out.send(SubmissionMissing(attempt_id=job.attempt_id, reason=result.capture_error or "no submission"))
        return
    await out.send(
        SubmissionCaptured(
            attempt_id=job.attempt_id,
            patch_sha256=result.patch.sha256,
            empty=result.patch.empty,
            files_changed=result.patch.files_changed,
        )
    )
