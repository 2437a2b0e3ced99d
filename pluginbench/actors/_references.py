"""Reference values: each task's reference solution measured like a submission.

When a task ships ``solution/solution.patch`` (kept in the run's frozen copy of the task),
every selected measure that declares ``reference=True`` (lines, complexity, unused code; not
coverage or transcript counts) runs its collector on that patch applied to the frozen
starting source, once per task: in preparation of a fresh run, and in each measurement
revision for the measures it collects. Reports then show code measures as a ratio to it.

A task without a solution patch, a (task, measure) pair the run does not measure, and a
reference the collector could not measure are unknown with the reason, never 0. The values
are recorded as events (``reference.measured``, or ``measurement_revision.measured`` with
``stage="reference"``), so the report reads them from the log and runs no analyzer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from .. import measures as registry
from ..events import Measure, ReferenceMeasured
from ..measures import CollectorInput, MeasureSpec
from ._collector import run_collector, task_sandbox_opener
from ._context import Engine

NO_SOLUTION = "the task ships no solution/solution.patch"


def reference_specs(selection: list[str]) -> list[MeasureSpec]:
    """The selected measures whose collector also measures reference solutions."""
    return [spec for spec in registry.collectors(selection) if spec.reference and spec.collect is not None]


def reference_patch(engine: Engine, task: str) -> str | None:
    """The frozen task's ``solution/solution.patch`` as text, or None when it ships none."""
    path = engine.run_dir.frozen_task(task) / "solution" / "solution.patch"
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def reference_input(engine: Engine, task: str, spec: MeasureSpec, patch: str, work_root: Path) -> CollectorInput:
    """What ``spec``'s collector sees of ``task``'s reference solution: the patch in place of a
    submission, no traces, the frozen task and starting source, scratch under ``work_root``."""
    folder = work_root / task
    open_task_sandbox = task_sandbox_opener(engine, task, f"reference-{task}.{spec.name}")
    image = engine.images[task].coding if task in engine.images else None
    return CollectorInput(
        attempt_id=f"reference-{task}", task=task, arm="reference", patch=patch, attempt_dir=folder,
        traces_dir=folder / "agent", harness="reference", task_dir=engine.run_dir.frozen_task(task),
        starting_source=engine.starting_source(task), reference_patch=patch, task_image=image,
        open_task_sandbox=open_task_sandbox if task in engine.tasks else None,
        settings=registry.settings_for(spec, engine.evaluation.measurement_settings),
        work_dir=folder / "measure" / spec.name,
    )


async def measure_reference(engine: Engine, task: str, specs: list[MeasureSpec], work_root: Path,
                            skipped: Mapping[tuple[str, str], str]) -> dict[str, Measure]:
    """Every column of ``specs`` for ``task``'s reference solution: a value, or an unknown
    with the reason (no solution patch, a pair the run does not measure, the collector's own)."""
    try:
        patch = reference_patch(engine, task)
    except OSError as exc:
        return {k: v for spec in specs for k, v in spec.unknown(f"solution/solution.patch unreadable: {exc}").items()}
    out: dict[str, Measure] = {}
    for spec in specs:
        if patch is None:
            out.update(spec.unknown(NO_SOLUTION))
        elif (task, spec.name) in skipped:
            out.update(spec.unknown(f"not measured: {skipped[(task, spec.name)]}"))
        else:
            out.update(await run_collector(spec, reference_input(engine, task, spec, patch, work_root)))
    return out


async def record_references(engine: Engine, tasks: list[str]) -> None:
    """Preparation of a fresh run: each task's reference measured once, as ``reference.measured``."""
    specs = reference_specs(list(engine.evaluation.measurements))
    if not specs:
        return
    work_root = engine.run_dir.evidence / "references"
    for task in tasks:
        started = time.monotonic()
        measures = await measure_reference(engine, task, specs, work_root, engine.not_measured)
        await engine.outbox.send(ReferenceMeasured(task=task, measures=measures,
                                                   seconds=round(time.monotonic() - started, 3)))
