"""The preparation actor: freeze every input, then prove each task is gradable.

Freezing copies each task and each treatment into ``evidence/frozen/`` (refusing
symlinks, hardlinks, special files and escapes) and records its fingerprint. Readiness
runs the ``oracle`` (must produce a non-empty patch with reward 1) and ``nop`` (must
get reward 0) controls through exactly the coding, patch and verifier path of real
attempts. Passing results are cached under the cache root by task fingerprint, backend
and isolation; a failure is never cached, so it is retried next time. Preparation is
sequential, as the product describes; a failure ends the run before any coding call.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from .. import __version__
from ..config import Treatment
from ..errors import PluginBenchError, TaskError, TreatmentError
from ..events import (
    CodingStarted,
    PreparationStarted,
    ReadinessChecked,
    RunStopping,
    TaskPrepared,
    TreatmentFrozen,
)
from ..harnesses._port import FrozenTreatment
from ..projections._state import VANILLA, RunState
from ..tasks import fingerprint, freeze_tree, load_task, scan_tree
from ._context import Engine, cache_root
from ._pipeline import code_attempt, grade_patch, write_json


class ReadinessFailure(PluginBenchError):
    """A task's oracle did not pass or its nop did not fail."""


def freeze_task(source: Path, dest: Path, task_id: str) -> str:
    if dest.exists():
        entries = scan_tree(dest, context=f"frozen task '{task_id}'", error=TaskError)
        return fingerprint(entries)
    fp, _ = freeze_tree(source, dest, context=f"task '{task_id}'", error=TaskError)
    return fp


def freeze_treatment(arm: str, spec: Treatment, dest: Path) -> FrozenTreatment:
    """Copy an arm's guidance files, skill folders and plugin folders into ``dest``."""
    if dest.exists():
        shutil.rmtree(dest)
    guidance: list[Path] = []
    for i, raw in enumerate(spec.guidance):
        src = Path(raw)
        target = dest / "guidance" / f"{i:02d}-{src.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        guidance.append(target)
    skills: list[Path] = []
    for raw in spec.skills:
        src = Path(raw)
        target = dest / "skills" / src.name
        freeze_tree(src, target, context=f"skill {src}", error=TreatmentError)
        skills.append(target)
    plugins: list[Path] = []
    for raw in spec.plugins:
        src = Path(raw)
        target = dest / "plugins" / src.name
        freeze_tree(src, target, context=f"plugin {src}", error=TreatmentError)
        plugins.append(target)
    fp = fingerprint(scan_tree(dest, context=f"treatment '{arm}'")) if dest.exists() else hashlib.sha256(b"").hexdigest()
    return FrozenTreatment(arm, dest if dest.exists() else None, tuple(guidance), tuple(skills), tuple(plugins), fp)


def load_frozen(engine: Engine, state: RunState) -> None:
    """Load frozen tasks and treatments into ``engine`` (resume after preparation)."""
    for task_id, prepared in state.prepared_tasks.items():
        dest = engine.run_dir.frozen_task(task_id)
        fp = fingerprint(scan_tree(dest, context=f"frozen task '{task_id}'", error=TaskError))
        if fp != prepared.fingerprint:
            raise TaskError(
                f"frozen task '{task_id}' changed since it was prepared",
                file=str(dest),
                fix="restore the run directory from a backup or start a new run",
            )
        engine.tasks[task_id] = load_task(dest, task_id)
    for arm in _arms(engine):
        engine.treatments[arm] = _reload_treatment(engine, arm)


def _arms(engine: Engine) -> list[str]:
    return [VANILLA, *engine.evaluation.treatments]


def _reload_treatment(engine: Engine, arm: str) -> FrozenTreatment:
    dest = engine.run_dir.frozen_treatment(arm)
    if not dest.exists():
        return FrozenTreatment(arm, None, (), (), (), hashlib.sha256(b"").hexdigest())
    def listed(sub: str, dirs: bool) -> tuple[Path, ...]:
        folder = dest / sub
        if not folder.is_dir():
            return ()
        return tuple(sorted(p for p in folder.iterdir() if p.is_dir() == dirs))
    fp = fingerprint(scan_tree(dest, context=f"treatment '{arm}'"))
    return FrozenTreatment(arm, dest, listed("guidance", False), listed("skills", True), listed("plugins", True), fp)


def _readiness_key(engine: Engine, task_fp: str) -> str:
    env = engine.evaluation.environment
    raw = json.dumps([task_fp, env.backend, getattr(engine.environment, "isolation_mode", env.isolation), __version__])
    return hashlib.sha256(raw.encode()).hexdigest()


async def _run_control(engine: Engine, task_id: str, control: str) -> tuple[bool, float | None, str | None]:
    from ..harnesses import make_harness

    harness = make_harness(control)
    task = engine.tasks[task_id]
    out_dir = engine.run_dir.evidence / "readiness" / task_id / control
    if out_dir.exists():
        shutil.rmtree(out_dir)
    vanilla = FrozenTreatment(VANILLA, None, (), (), (), hashlib.sha256(b"").hexdigest())

    async def no_record(argv: object) -> None:
        return None

    result = await code_attempt(
        environment=engine.environment,
        harness=harness,
        run_id=engine.run_id,
        attempt_id=f"readiness-{control}-{task_id}",
        task=task,
        starting_source=engine.starting_source(task_id),
        treatment=vanilla,
        attempt_dir=out_dir,
        model=None,
        reasoning=None,
        seed=0,
        timeout=float(task.agent_timeout_sec or engine.evaluation.timeout_seconds),
        hidden=engine.hidden,
        launched=no_record,
    )
    if result.patch is None:
        return False, None, result.capture_error or result.run.error or "no patch"
    grade = await grade_patch(
        environment=engine.environment,
        run_id=engine.run_id,
        attempt_id=f"readiness-{control}-{task_id}",
        task=task,
        starting_source=engine.starting_source(task_id),
        patch_path=result.patch.path,
        empty=result.patch.empty,
        out_dir=out_dir / "grading",
        hidden=engine.hidden,
    )
    if control == "oracle":
        if result.patch.empty:
            return False, grade.reward, "the oracle produced an empty patch"
        ok = grade.reward == 1.0
        return ok, grade.reward, None if ok else f"the oracle got reward {grade.reward} ({grade.reason or 'verifier'})"
    ok = grade.reward == 0.0
    return ok, grade.reward, None if ok else f"nop got reward {grade.reward} ({grade.reason or 'verifier'}); the verifier must fail an unchanged source"


async def prepare(engine: Engine, state: RunState) -> None:
    """Freeze, check readiness, and report ``coding.started`` (or a failing stop)."""
    out = engine.outbox
    await out.send(PreparationStarted())
    try:
        for task_id, source in engine.task_sources.items():
            fp = freeze_task(source, engine.run_dir.frozen_task(task_id), task_id)
            task = load_task(engine.run_dir.frozen_task(task_id), task_id)
            if not task.has_workspace and engine.evaluation.environment.backend == "local":
                raise TaskError(
                    f"task '{task_id}' has no workspace/ folder for the local backend",
                    file=str(source / "workspace"),
                    fix="put the starting source in workspace/, or use environment.backend: docker",
                )
            engine.tasks[task_id] = task
            files = len(scan_tree(engine.run_dir.frozen_task(task_id), context="frozen task"))
            await out.send(TaskPrepared(task=task_id, fingerprint=fp, files=files, workdir=task.workdir))
        for arm in _arms(engine):
            spec = engine.evaluation.treatments.get(arm, Treatment())
            frozen = freeze_treatment(arm, spec, engine.run_dir.frozen_treatment(arm)) if arm != VANILLA else _reload_treatment(engine, arm)
            engine.treatments[arm] = frozen
            size = sum(p.stat().st_size for p in frozen.guidance)
            await out.send(
                TreatmentFrozen(
                    arm=arm, fingerprint=frozen.fingerprint, guidance_bytes=size,
                    skills=[p.name for p in frozen.skills], plugins=[p.name for p in frozen.plugins],
                )
            )
        for task_id in engine.task_sources:
            await _check_task(engine, task_id)
    except PluginBenchError as exc:
        await out.send(RunStopping(reason=f"preparation failed: {exc}", failure=True))
        return
    await out.send(CodingStarted())


async def _check_task(engine: Engine, task_id: str) -> None:
    out = engine.outbox
    task_fp = fingerprint(scan_tree(engine.run_dir.frozen_task(task_id), context="frozen task"))
    cache_file = cache_root() / "readiness" / f"{_readiness_key(engine, task_fp)}.json"
    cached: dict[str, dict[str, object]] = {}
    try:
        cached = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cached = {}
    for control in ("oracle", "nop"):
        hit = cached.get(control)
        if isinstance(hit, dict) and hit.get("ok") is True:
            await out.send(
                ReadinessChecked(task=task_id, control=control, ok=True, reward=hit.get("reward"), cached=True)  # type: ignore[arg-type]
            )
            continue
        ok, reward, reason = await _run_control(engine, task_id, control)
        await out.send(ReadinessChecked(task=task_id, control=control, ok=ok, reward=reward, cached=False, reason=reason))
        if not ok:
            raise ReadinessFailure(f"task '{task_id}' is not ready: {reason}")
        cached[control] = {"ok": True, "reward": reward}
        write_json(cache_file, cached)
