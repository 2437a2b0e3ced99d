"""Generated-guidance arms (``treatments.<arm>.generate``): per task, before coding, the agent
writes the instruction file for the task's starting repository, and that file, frozen and
hash-bound, is the arm's guidance on that task.

The generating session goes through exactly the coding path (:func:`code_attempt`): a fresh
default-deny sandbox of the task's coding role (no ``tests/``, no ``solution/``, no verifier),
the run's harness and CLI, its egress (the probe in a probe run), the arm's ``task_owned``
setting, delivery of nothing (a vanilla home), credential scrubbing. Only the instruction file
is carried over: it must be added or changed in the session's canonical patch (an unchanged
repository file is not a generated one); every other change the session made is listed and
left behind.

Events: ``generation.started`` (durable when the agent launches), then ``guidance.generated``
or ``generation.failed``. A resume never generates a pair whose generation ended, and generates
again a pair whose session started and never ended (killed with its worker; that session's
usage is unknown). Evidence: ``evidence/generated/<generation id>/`` holds the frozen file
and the session's ``session/`` folder (traces, receipt, ``model.patch``; the export is removed).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Sequence
from pathlib import Path

import anyio
import msgspec

from ..config import Generate
from ..errors import TreatmentError
from ..events import GenerationFailed, GenerationStarted, GuidanceGenerated, Usage
from ..harness_registry import harness_class
from ..harnesses import FrozenTreatment
from ..projections import RunState
from ..tasks import patch_paths
from ..treatments import admit_guidance
from ._context import Engine
from ._pipeline import code_attempt

#: Usage of a generating session whose agent never launched: no model call was made.
NOT_LAUNCHED = Usage(status="exact", input_tokens=0, cached_input_tokens=0, uncached_input_tokens=0,
                     output_tokens=0, total_tokens=0, reason="the generating agent never launched: no model call")


def generated_arms(engine: Engine) -> list[tuple[str, Generate]]:
    """The arms that generate their guidance, in config order."""
    return [(arm, t.generate) for arm, t in engine.evaluation.treatments.items() if t.generate is not None]


def generation_id(task: str, arm: str, n: int) -> str:
    """``<task>__<arm>__gen<n>``: the n-th generating session of (arm, task)."""
    return f"{task}__{arm}__gen{n}"


def bound_fingerprint(arm_fingerprint: str, spec: Generate, harness: str, sha256: str) -> str:
    """The arm's fingerprint on one task: its frozen settings (``task_owned``), the generating
    harness, model, effort and prompt, and the generated file's SHA-256. Pure."""
    settings = msgspec.json.encode([harness, spec.model, spec.reasoning, spec.kind, spec.instruction])
    # (a null reasoning is the runner's, which the run's own fingerprint binds)
    return hashlib.sha256(f"{arm_fingerprint}\0generate=".encode() + settings + f"\0generated={sha256}".encode()
                          ).hexdigest()


def task_treatment(base: FrozenTreatment, path: Path, sha256: str, fingerprint: str) -> FrozenTreatment:
    """The arm's treatment on one task: the generated file as its only guidance."""
    return base._replace(root=path.parent, guidance=(path,), skills=(), plugins=(), fingerprint=fingerprint,
                         generated=sha256)


def load_generated(engine: Engine, state: RunState) -> None:
    """Every ended generation into ``engine.generated`` (a resume after preparation)."""
    for arm, _spec in generated_arms(engine):
        for task_id in engine.task_sources:
            _load_one(engine, arm, task_id, state.generations.outcome(arm, task_id))


def _load_one(engine: Engine, arm: str, task_id: str, ended: GuidanceGenerated | GenerationFailed | None) -> None:
    if isinstance(ended, GuidanceGenerated):
        path = engine.run_dir.root / ended.path
        engine.generated[(arm, task_id)] = task_treatment(engine.treatments[arm], path, ended.sha256, ended.fingerprint)
    elif isinstance(ended, GenerationFailed):
        engine.generated[(arm, task_id)] = f"guidance generation failed: {ended.reason}"


async def generate_all(engine: Engine, state: RunState) -> None:
    """Generate every (arm, task) whose generation has not ended, ``jobs`` at a time, in task
    order; load the ones that ended into ``engine.generated``."""
    todo: list[tuple[str, Generate, str, int]] = []
    # only the planned (arm, task) pairs: a sequential run's max_tasks leaves tasks unplanned
    planned = {(s.arm, s.task) for s in state.created.slots} if state.created is not None else None
    for arm, spec in generated_arms(engine):
        for task_id in engine.task_sources:
            if planned is not None and (arm, task_id) not in planned:
                continue
            ended = state.generations.outcome(arm, task_id)
            if ended is not None:
                _load_one(engine, arm, task_id, ended)
                continue
            current = state.generations.by_pair.get((arm, task_id))
            tried = 0 if current is None else int(current.started.generation_id.rsplit("gen", 1)[-1])
            todo.append((arm, spec, task_id, tried + 1))
    if not todo:
        return
    limiter = anyio.CapacityLimiter(max(1, engine.evaluation.jobs))

    async def one(arm: str, spec: Generate, task_id: str, n: int) -> None:
        async with limiter:
            await generate_one(engine, arm, spec, task_id, n)

    async with anyio.create_task_group() as tg:
        for item in todo:
            tg.start_soon(one, *item)


async def generate_one(engine: Engine, arm: str, spec: Generate, task_id: str, n: int) -> None:
    """One generating session for (arm, task); records its events and sets ``engine.generated``."""
    from ._coding import attempt_seed

    out = engine.outbox
    gid = generation_id(task_id, arm, n)
    folder = engine.run_dir.evidence / "generated" / gid
    if folder.exists():
        shutil.rmtree(folder)
    cls = harness_class(engine.harness.name)
    file = str(cls.instruction_file)
    base = engine.treatments[arm]
    task = engine.tasks[task_id]
    started = GenerationStarted(arm=arm, task=task_id, generation_id=gid, harness=engine.harness.name,
                                model=spec.model, file=file)
    launched_flag = False

    async def launched(argv: Sequence[str]) -> None:
        nonlocal launched_flag
        await out.record(started)
        launched_flag = True

    async def failed(reason: str, usage: Usage, seconds: float | None, provider_stop: bool = False) -> None:
        if not launched_flag:
            await out.record(started)
        event = GenerationFailed(arm=arm, task=task_id, generation_id=gid, reason=reason, usage=usage,
                                 seconds=None if seconds is None else round(seconds, 3), provider_stop=provider_stop)
        await out.send(event)
        _load_one(engine, arm, task_id, event)

    session = folder / "session"
    empty_home = base._replace(root=None, guidance=(), skills=(), plugins=(), generated=None)
    try:
        result = await code_attempt(
            environment=engine.environment, harness=engine.harness, run_id=engine.run_id, attempt_id=gid,
            task=task._replace(instruction=spec.prompt(file)), starting_source=engine.starting_source(task_id),
            treatment=empty_home, attempt_dir=session, model=spec.model,
            reasoning=spec.effort(engine.evaluation.runner.reasoning),
            seed=attempt_seed(engine.evaluation.seed, gid), timeout=engine.attempt_timeout(task),
            hidden=engine.hidden, launched=launched, source=engine.source(task_id, "coding"), writes=file,
        )
    except Exception as exc:  # noqa: BLE001 - a generation that cannot run is the pair's outcome, not a crash
        why = f"{type(exc).__name__}: {exc}"
        await failed(f"the session could not run: {why}",
                     Usage(status="unknown", reason=why) if launched_flag else NOT_LAUNCHED, None)
        return
    run = result.run
    written = _read_written(session / "export", file, result.patch.path if result.patch is not None else None)
    shutil.rmtree(session / "export", ignore_errors=True)
    if run.provider_stop:
        await failed(f"the provider stopped the session: {run.provider_stop}", run.usage, run.coding_seconds, True)
        return
    if run.error:
        await failed(f"the agent failed: {run.error}", run.usage, run.coding_seconds)
        return
    if result.patch is None:
        await failed(f"no file could be taken from the session: {result.capture_error or 'no export'}",
                     run.usage, run.coding_seconds)
        return
    changed = patch_paths(result.patch.path.read_text(encoding="utf-8", errors="replace"))
    if written is None:
        await failed(f"the session did not write {file} (its changes: {', '.join(changed) or 'none'})",
                     run.usage, run.coding_seconds)
        return
    target = folder / file
    target.write_bytes(written)
    try:
        admit_guidance([target])
    except TreatmentError as exc:
        target.rename(folder / f"rejected-{file}")  # kept as evidence, never delivered
        await failed(f"the written {file} is not usable guidance: {exc}",
                     run.usage, run.coding_seconds)
        return
    sha = hashlib.sha256(written).hexdigest()
    event = GuidanceGenerated(
        arm=arm, task=task_id, generation_id=gid, file=file, path=target.relative_to(engine.run_dir.root).as_posix(),
        sha256=sha, bytes=len(written), fingerprint=bound_fingerprint(base.fingerprint, spec, engine.harness.name, sha),
        usage=run.usage, seconds=None if run.coding_seconds is None else round(run.coding_seconds, 3),
        exit_code=run.exit_code,
        discarded_changes=[p for p in changed if p != file],
    )
    await out.send(event)
    _load_one(engine, arm, task_id, event)


def _read_written(export: Path, file: str, patch: Path | None) -> bytes | None:
    """The content of ``file`` at the repository root when the session's canonical patch adds or
    changes it; None when the session left it as it was (a repository's own file is not a
    generated one), deleted it, or made no patch."""
    if patch is None:
        return None
    if file not in patch_paths(patch.read_text(encoding="utf-8", errors="replace")):
        return None
    target = export / file
    if target.is_symlink() or not target.is_file():
        return None
    return target.read_bytes()
