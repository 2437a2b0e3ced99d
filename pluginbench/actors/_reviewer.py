"""The reviewer actor: build (or verify) a submission's review packet, run the review
call, and report ``review.started`` (durable, before any model call) and then
``review.completed`` or ``review.failed``. Its evidence goes to
``evidence/reviews/<revision>/<attempt>/`` (prompt, traces, ``review.json``), never
into the attempt's own folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream

from ..events import Event, ReviewCompleted, ReviewFailed, ReviewStarted, Usage
from ._context import Engine
from ._pipeline import write_json
from ._review_rules import Review

if TYPE_CHECKING:  # the review call's stack loads with the first review (a run without one never does)
    from ..review import Reviewer


def criteria_path(engine: Engine) -> Path:
    return engine.run_dir.evidence / "frozen" / "review-criteria.md"


async def reviewer_actor(engine: Engine, inbox: MemoryObjectReceiveStream[Review]) -> None:
    async with inbox:
        async for job in inbox:
            assert engine.reviewer is not None
            event = await review_submission(engine, engine.reviewer, job)
            await engine.outbox.send(event)


async def review_submission(engine: Engine, reviewer: Reviewer, job: Review) -> Event:
    """One review; returns its ending event (the caller sends it)."""
    from ..review import build_packet, review_once

    rd = engine.run_dir
    out_dir = rd.evidence / "reviews" / job.revision / job.attempt_id
    task = engine.tasks[job.task]
    try:
        packet = await anyio.to_thread.run_sync(lambda: build_packet(
            rd.evidence, job.attempt_id, task=job.task, patch=rd.attempt(job.attempt_id) / "model.patch",
            patch_sha256=job.patch_sha256, starting_source=engine.starting_source(job.task),
            instruction=task.instruction, criteria=criteria_path(engine).read_bytes()))
    except Exception as exc:  # noqa: BLE001 - no packet, no call: a failed review with the reason
        return ReviewFailed(attempt_id=job.attempt_id, revision=job.revision, reason=f"no review packet: {exc}",
                            usage=Usage(status="unknown", reason="no review call was made"))

    async def started(argv: Sequence[str]) -> None:
        write_json(out_dir / "invocation.json", {"attempt_id": job.attempt_id, "revision": job.revision,
                                                 "reviewer": msgspec.to_builtins(reviewer.spec), "argv": list(argv)})
        await engine.outbox.record(ReviewStarted(attempt_id=job.attempt_id, revision=job.revision))

    outcome = await review_once(reviewer, packet, out_dir, run_id=engine.run_id, started=started)
    write_json(out_dir / "review.json", {
        "attempt_id": job.attempt_id, "revision": job.revision, "reviewer": msgspec.to_builtins(reviewer.spec),
        "packet_binding": packet.binding, "findings": msgspec.to_builtins(outcome.findings),
        "reason": outcome.reason, "usage": msgspec.to_builtins(outcome.usage), "seconds": outcome.seconds,
        "provider_stop": outcome.provider_stop,
    })
    if outcome.findings is None:
        return ReviewFailed(attempt_id=job.attempt_id, revision=job.revision, reason=outcome.reason or "failed",
                            usage=outcome.usage, seconds=outcome.seconds, provider_stop=outcome.provider_stop)
    return ReviewCompleted(attempt_id=job.attempt_id, revision=job.revision, findings=outcome.findings,
                           usage=outcome.usage, seconds=outcome.seconds)
