"""The collector actor: measures of a captured submission (lines, by source and test)."""

from __future__ import annotations

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from ..events import Measure, MeasuresCollected
from ..measures import count_lines
from ..rundir import patch_mismatch
from ._context import Engine
from ._decide import Measure as MeasureCommand
from ._pipeline import write_json


async def collector_actor(engine: Engine, inbox: MemoryObjectReceiveStream[MeasureCommand]) -> None:
    async with inbox:
        async for job in inbox:
            await collect_one(engine, job.attempt_id, job.patch_sha256)


def measure_patch(patch_text: str, selected: list[str]) -> dict[str, Measure]:
    """The selected patch measures; ``lines`` gives four counts."""
    out: dict[str, Measure] = {}
    if "lines" in selected:
        c = count_lines(patch_text)
        out["source_lines_added"] = Measure(value=c.source_added, unit="lines")
        out["source_lines_removed"] = Measure(value=c.source_removed, unit="lines")
        out["test_lines_added"] = Measure(value=c.test_added, unit="lines")
        out["test_lines_removed"] = Measure(value=c.test_removed, unit="lines")
        out["binary_files_changed"] = Measure(value=c.binary_files, unit="files")
    return out


async def collect_one(engine: Engine, attempt_id: str, patch_sha256: str | None = None) -> None:
    attempt_dir = engine.run_dir.attempt(attempt_id)
    selected = list(engine.evaluation.measurements)
    try:
        tampered = patch_mismatch(attempt_dir / "model.patch", patch_sha256)
        if tampered is not None:
            raise OSError(tampered)
        text = (attempt_dir / "model.patch").read_text(encoding="utf-8", errors="replace")
        measures = await anyio.to_thread.run_sync(measure_patch, text, selected)
    except OSError as exc:
        reason = str(exc) if str(exc).startswith("patch integrity") else f"model.patch unreadable: {exc}"
        measures = {
            name: Measure(value=None, unit="lines", status="unknown", reason=reason)
            for name in ("source_lines_added", "source_lines_removed", "test_lines_added", "test_lines_removed")
        } if "lines" in selected else {}
    write_json(attempt_dir / "measurements.json", {k: v for k, v in sorted(measures.items())})
    await engine.outbox.send(MeasuresCollected(attempt_id=attempt_id, measures=measures))
