"""The source-only grade of one attempt: the unchanged native verifier replayed on the
saved ``model.patch`` without the agent's test files, in the frozen grader image, with no
model call (filter: :mod:`pluginbench.measures._source_only`).

Evidence goes to ``evidence/source-only/filter-<revision>/<attempt>/`` (the filtered
``model.patch``, the replay's ``grading/``, ``grade.json``) and every grade is listed in
that folder's ``index.json``; an earlier revision's folder stays where it is. A grade whose
grader image (docker) or starting source is gone is ``pending`` and tried again by the next
``pluginbench run <run-dir>``.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import msgspec

from ..environments import backend_of
from ..events import SourceOnlyGraded, SourceOnlySelected
from ..measures import FILTER_REVISION, filter_patch
from ..rundir import patch_mismatch
from ._context import Engine
from ._decide import GradeSourceOnly
from ._pipeline import grade_patch, write_json


def source_only_dir(engine: Engine) -> Path:
    return engine.run_dir.evidence / "source-only" / f"filter-{FILTER_REVISION}"


async def source_only_one(engine: Engine, job: GradeSourceOnly) -> None:
    started = time.monotonic()
    try:
        event = await _grade(engine, job)
    except Exception as exc:  # noqa: BLE001 - a replay that broke is pending, never a fail
        event = SourceOnlyGraded(attempt_id=job.attempt_id, filter=FILTER_REVISION, status="pending",
                                 reason=f"the verifier replay failed: {exc}")
    event = msgspec.structs.replace(event, seconds=round(time.monotonic() - started, 3))
    _record(engine, event)
    await engine.outbox.send(event)


async def _missing_grader(engine: Engine, task_id: str) -> str | None:
    """Why the frozen grader cannot run now (its image or starting source is gone), or None."""
    if backend_of(engine.evaluation).uses_images:
        images = engine.images.get(task_id)
        if images is None:
            return f"the frozen images of task '{task_id}' are not loaded"
        if not await engine.environment.has_images(images.verifier):  # type: ignore[attr-defined]  # docker-only: the Environment port does not declare image and capacity methods
            return f"the grader image {images.verifier[:19]} of task '{task_id}' is gone from the Docker engine"
        return None
    if not engine.starting_source(task_id).is_dir():
        return f"the frozen starting source of task '{task_id}' is gone"
    return None


async def _grade(engine: Engine, job: GradeSourceOnly) -> SourceOnlyGraded:
    base: dict[str, Any] = {"attempt_id": job.attempt_id, "filter": FILTER_REVISION}
    patch = engine.run_dir.attempt(job.attempt_id) / "model.patch"
    tampered = patch_mismatch(patch, job.patch_sha256)
    if tampered is not None:
        return SourceOnlyGraded(**base, status="unavailable", reason=tampered)
    task = engine.tasks[job.task]
    contract = engine.contracts.get(job.task)
    solution_file = task.solution_dir / "solution.patch"
    solution = solution_file.read_bytes().decode("latin-1") if solution_file.is_file() else None
    filtered = filter_patch(patch.read_bytes().decode("latin-1"), solution,
                            contract.replaced_paths if contract else [])
    fields: dict[str, Any] = {
        **base,
        "removed_test_files": filtered.removed_test_files,
        "kept_reference_solution_files": filtered.kept_reference_solution_files,
        "kept_test_setup_files": filtered.kept_test_setup_files,
        "trusted_test_overlap": filtered.trusted_test_overlap,
        "filtered_patch_sha256": None if filtered.unavailable else filtered.sha256,
        "nothing_removed": filtered.unavailable is None and filtered.nothing_removed,
    }
    if filtered.unavailable is not None:
        return SourceOnlyGraded(**fields, status="unavailable", reason=filtered.unavailable)
    if filtered.nothing_removed:
        return SourceOnlyGraded(**fields, status="graded", reward=job.native_reward, grading=job.native_grading,
                                native_result_reused=True)
    missing = await _missing_grader(engine, job.task)
    if missing is not None:
        return SourceOnlyGraded(**fields, status="pending", reason=missing)
    out = source_only_dir(engine) / job.attempt_id
    out.mkdir(parents=True, exist_ok=True)
    filtered_path = out / "model.patch"
    filtered_path.write_bytes(filtered.text.encode("latin-1"))
    result = await grade_patch(
        environment=engine.environment,
        run_id=engine.run_id,
        attempt_id=f"{job.attempt_id}-source-only",
        task=task,
        starting_source=engine.starting_source(job.task),
        patch_path=filtered_path,
        empty=not filtered.text,
        out_dir=out / "grading",
        hidden=engine.hidden,
        source=engine.source(job.task, "verifier"),
        contract=contract,
        verifier_env=engine.verifier_env(job.task),
    )
    return SourceOnlyGraded(**fields, status="graded", reward=result.reward, grading=result.native_grading,
                            reason=None if result.reward is not None else result.reason)


def _record(engine: Engine, event: SourceOnlyGraded) -> None:
    """``grade.json`` beside the replay, and the revision's ``index.json``. Synchronous on
    purpose: graders share one event loop, so no other grade interleaves its update."""
    folder = source_only_dir(engine)
    row = {k: v for k, v in msgspec.to_builtins(event).items() if k not in ("seq", "at", "v", "type")}
    row["source_only_filter"] = FILTER_REVISION
    write_json(folder / event.attempt_id / "grade.json", row)
    index_path = folder / "index.json"
    try:
        index = json.loads(index_path.read_text())
    except (OSError, ValueError):
        index = {"source_only_filter": FILTER_REVISION, "grades": {}}
    index["grades"][event.attempt_id] = row
    # In attempt order, not completion order: its sha256 is bound into results.json, which
    # must not depend on which concurrent attempt finished first.
    index["grades"] = dict(sorted(index["grades"].items()))
    write_json(index_path, index)


def select_index(engine: Engine) -> SourceOnlySelected:
    """Bind the current revision's ``index.json`` by the SHA-256 of its bytes now (``missing``
    when it is not on disk, which the report then flags)."""
    index_path = source_only_dir(engine) / "index.json"
    try:
        data = index_path.read_bytes()
        digest, grades = hashlib.sha256(data).hexdigest(), len(json.loads(data).get("grades", {}))
    except (OSError, ValueError, AttributeError):
        digest, grades = "missing", 0
    return SourceOnlySelected(filter=FILTER_REVISION, index=str(index_path.relative_to(engine.run_dir.root)),
                              index_sha256=digest, grades=grades)
