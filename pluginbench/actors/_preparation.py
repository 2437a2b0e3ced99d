"""The preparation actor: freeze every input, then prove each task is gradable.

Freezing copies each task and each treatment into ``evidence/frozen/`` (refusing
symlinks, hardlinks, special files and escapes) and records its fingerprint. Readiness
runs the ``oracle`` (must produce a non-empty patch with reward 1) and ``nop`` (must
get reward 0) controls through exactly the coding, patch and verifier path of real
attempts. Passing results are cached under the cache root by task fingerprint, backend
and isolation; a failure is never cached, so it is retried next time. Tasks are frozen
one after another in task order; their images (docker: task, verifier and coding images)
and their readiness controls are prepared ``jobs`` tasks at a time, which the capacity
check has made sure fit. Events still come in task order, and the first task (in task
order) that fails is the failure reported, as one at a time would. A failure ends the run
before any coding call.
"""

import hashlib
import json
import shutil
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import anyio

from .. import __version__
from ..config import Treatment
from ..environments import backend_of, network_policy
from ..errors import PluginBenchError, ReadinessFailure, TaskError, TreatmentError
from ..events import (
    CodingStarted,
    MeasurementReadinessChecked,
    PreparationStarted,
    ReadinessChecked,
    RunStopping,
    TaskPrepared,
    TreatmentFrozen,
)
from ..harness_registry import harness_class
from ..harnesses import FrozenTreatment
from ..projections import VANILLA, RunState
from ..tasks import (
    VerifierContract,
    admit_contract,
    bind_task_owned,
    fingerprint,
    freeze_tree,
    load_task,
    scan_tree,
)
from ._context import Engine, TaskImages, cache_root
from ._generate import generate_all, load_generated
from ._grader_proof import prove_grader_image
from ._pipeline import code_attempt, grade_patch, verifier_spec, write_json
from ._references import record_references
from ._task_env import environment_env
from ._vanilla import consult

T = TypeVar("T")
R = TypeVar("R")


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


def record_contract(engine: Engine, task_id: str) -> VerifierContract:
    """Admit the frozen task's verifier contract and keep it in the frozen evidence
    (``evidence/frozen/contracts/<task>.json``): who applies model.patch, the trusted
    payload's hashes, the paths the hidden tests replace."""
    contract = admit_contract(engine.tasks[task_id])
    engine.contracts[task_id] = contract
    write_json(engine.run_dir.evidence / "frozen" / "contracts" / f"{task_id}.json", contract)
    return contract


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
        engine.contracts[task_id] = admit_contract(engine.tasks[task_id])
        engine.verifier_env(task_id)  # on resume the host must still hold what the verifier reads
        if prepared.image is not None and prepared.verifier_image is not None:
            engine.images[task_id] = TaskImages(prepared.image, prepared.verifier_image)
    for arm in _arms(engine):
        spec = engine.evaluation.treatments.get(arm, Treatment())
        engine.treatments[arm] = with_task_owned(_reload_treatment(engine, arm), spec.task_owned)
    load_generated(engine, state)
    engine.not_measured = {(n.task, n.measure): n.reason for n in state.prepared_not_measured}


def common_limits(engine: Engine) -> tuple[float | None, int | None]:
    """The container limits every attempt gets: the config's common settings, else the
    tasks' declarations when they all agree (checked in the foreground)."""
    env = engine.evaluation.environment
    tasks = list(engine.tasks.values())
    cpus = env.container_cpus if env.container_cpus is not None else next((t.cpus for t in tasks if t.cpus), None)
    mem = env.container_memory_mb if env.container_memory_mb is not None else next((t.memory_mb for t in tasks if t.memory_mb), None)
    return cpus, mem


async def check_capacity(engine: Engine) -> None:
    """The backend's capacity check before preparation: ``jobs`` sandboxes of the common
    limits fit (never lowered); on docker, the engine answers with Linux containers."""
    cpus, mem = common_limits(engine) if engine.tasks else (
        engine.evaluation.environment.container_cpus, engine.evaluation.environment.container_memory_mb)
    await backend_of(engine.evaluation).check_capacity(engine.environment, engine.evaluation.jobs, cpus, mem)


async def prepare_task_images(engine: Engine, task_id: str) -> TaskImages:
    """Freeze the task's images; for an image task, export its starting source."""
    from ..environments import SandboxSpec

    env = engine.environment
    root = engine.run_dir.frozen_task(task_id)
    task = engine.tasks[task_id]
    harness = engine.harness
    cli = harness_class(harness.name).cli if harness.real else None  # the CLI the coding image carries
    record = _prepared_record(engine, task_id)
    cached = _read_json(record)
    if cached and await env.has_images(cached["image"], cached["coding"], cached["verifier"]):  # type: ignore[attr-defined]  # docker-only: the Environment port does not declare image and capacity methods
        image, coding, verifier = cached["image"], cached["coding"], cached["verifier"]
        engine.images[task_id] = TaskImages(coding, verifier)
        if not task.has_workspace:
            await _export_starting_source(engine, task_id, image)
        await prove_grader_image(engine, task_id)
        return engine.images[task_id]
    image = await env.prepare_image(root, task)  # type: ignore[attr-defined]  # docker-only: the Environment port does not declare image and capacity methods
    verifier = await env.verifier_image(root, task, image)  # type: ignore[attr-defined]  # docker-only: the Environment port does not declare image and capacity methods
    coding = image
    if cli is not None and harness.cli_version is not None:
        from ..probe import clis_dir

        coding, cli_inside = await env.coding_image(  # type: ignore[attr-defined]  # docker-only: the Environment port does not declare image and capacity methods
            image, harness.name, cli, harness.cli_version, engine.cli_root or clis_dir().parents[1])
        spec = SandboxSpec(run_id=engine.run_id, attempt_id=f"cli-check-{task_id}", role="readiness",
                           task=task_id, image=coding, workdir=task.workdir, hidden=engine.hidden)
        async with env.sandbox(spec) as sb:
            got = await sb.exec([cli_inside, "--version"], timeout=120)
        if got.exit_code != 0 or harness.cli_version not in got.stdout.decode(errors="replace"):
            raise TaskError(
                f"task '{task_id}': the coding image's {harness.name} --version said "
                f"{(got.stdout + got.stderr).decode(errors='replace').strip()[:200]!r}, expected {harness.cli_version}",
                fix="reinstall the pinned CLI with tools/install-clis.sh",
            )
    engine.images[task_id] = TaskImages(coding, verifier)
    write_json(record, {"task": task_id, "image": image, "coding": coding, "verifier": verifier,
                        "harness": harness.name if harness.real else None,
                        "cli_version": harness.cli_version if harness.real else None})
    if not task.has_workspace:
        await _export_starting_source(engine, task_id, image)
    await prove_grader_image(engine, task_id)
    return engine.images[task_id]


def _prepared_record(engine: Engine, task_id: str) -> Path:
    """The cache entry of a task's prepared images: keyed by the frozen task's content,
    the agent CLI and its version, and this PluginBench build."""
    harness = engine.harness
    fp = fingerprint(scan_tree(engine.run_dir.frozen_task(task_id), context="frozen task"))
    key = hashlib.sha256(json.dumps([
        fp, harness.name if harness.real else None, harness.cli_version if harness.real else None, __version__,
    ]).encode()).hexdigest()
    return cache_root() / "prepared" / f"{key}.json"


def _read_json(path: Path) -> dict[str, str] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and all(isinstance(data.get(k), str) for k in ("image", "coding", "verifier")) else None


async def _export_starting_source(engine: Engine, task_id: str, image: str) -> None:
    """An image task's /app, exported once so patches and graders start from the same tree."""
    from ..environments import SandboxSpec

    dest = engine.starting_source(task_id)
    if dest.exists():
        shutil.rmtree(dest)
    task = engine.tasks[task_id]
    spec = SandboxSpec(run_id=engine.run_id, attempt_id=f"export-{task_id}", role="readiness",
                       task=task_id, image=image, workdir=task.workdir, hidden=engine.hidden)
    async with engine.environment.sandbox(spec) as sb:
        await sb.stop()
        await sb.export_workspace(dest)


def with_task_owned(frozen: FrozenTreatment, task_owned: str) -> FrozenTreatment:
    """``frozen`` with the arm's ``task_owned`` setting; ``remove`` is bound into the
    fingerprint (an arm that removes the repository's guidance is never the same package)."""
    if task_owned == "keep":
        return frozen
    return frozen._replace(task_owned=task_owned, fingerprint=bind_task_owned(frozen.fingerprint, task_owned))


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


def _readiness_key(engine: Engine, task_id: str, task_fp: str) -> str:
    """Readiness holds for this task content, backend, effective isolation, images and build (and,
    for a task with ``[verifier.env]``, where each variable came from)."""
    images = engine.images.get(task_id)
    record = engine.verifier_env(task_id).record  # host values never enter the key: only where each came from
    solution = engine.solution_env(task_id).record  # the oracle's solve.sh: where each of its variables came from
    raw = json.dumps([
        task_fp, *backend_of(engine.evaluation).readiness_key(engine.evaluation),
        list(images) if images else None, __version__, *([record] if record else []),
        *([{"solution_env": solution}] if solution else []),
    ])
    return hashlib.sha256(raw.encode()).hexdigest()


class ControlResult(NamedTuple):
    ok: bool
    reward: float | None
    reason: str | None
    #: the verifier's last output lines and the control's evidence folder (failures only)
    verifier_tail: list[str] = []
    evidence: Path | None = None


TAIL_LINES = 20


def verifier_tail(grading: Path, lines: int = TAIL_LINES) -> list[str]:
    """The last ``lines`` lines the verifier printed (its stdout, then stderr, then a
    failed ``git apply``), so a failing control explains itself."""
    out: list[str] = []
    for name in ("test-stdout.txt", "test-stderr.txt", "apply.txt"):
        try:
            text = (grading / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out.extend(line.rstrip() for line in text.splitlines() if line.strip())
    return out[-lines:]


async def run_control(engine: Engine, task_id: str, control: str) -> ControlResult:
    result = await _run_control_raw(engine, task_id, control)
    if result.ok:
        return result
    out_dir = engine.run_dir.evidence / "readiness" / task_id / control
    return result._replace(verifier_tail=verifier_tail(out_dir / "grading"), evidence=out_dir)


async def _run_control_raw(engine: Engine, task_id: str, control: str) -> ControlResult:
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
        source=engine.source(task_id, "coding"),
        verifier=verifier_spec(engine.run_id, f"readiness-{control}-{task_id}", task, engine.starting_source(task_id),
                               engine.hidden, engine.source(task_id, "verifier")),
        solution_env=engine.solution_env(task_id) if harness.needs_solution else None,
    )
    if result.patch is None:
        return ControlResult(False, None, result.capture_error or result.run.error or "no patch")
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
        source=engine.source(task_id, "verifier"),
        contract=engine.contracts.get(task_id),
        verifier_env=engine.verifier_env(task_id),
    )
    if control == "oracle":
        if result.patch.empty:
            return ControlResult(False, grade.reward, "the oracle produced an empty patch")
        ok = grade.reward == 1.0
        return ControlResult(ok, grade.reward, None if ok else f"the oracle got reward {grade.reward} ({grade.reason or 'verifier'})")
    ok = grade.reward == 0.0
    return ControlResult(ok, grade.reward, None if ok else f"nop got reward {grade.reward} ({grade.reason or 'verifier'}); the verifier must fail an unchanged source")


class Done(NamedTuple):
    """What :func:`jobs_at_a_time` did: each item's result (None for an item that did not
    finish), and the first failure in item order (its index and exception), if any."""

    results: list[Any]
    failure: tuple[int, Exception] | None


async def jobs_at_a_time(jobs: int, items: Sequence[T], work: Callable[[T], Awaitable[R]]) -> Done:
    """``work`` on every item, at most ``jobs`` at once, results in item order. A failure
    cancels the items after it in order; the items before it run to the end, as they would
    have one at a time, so the failure reported is the first in item order."""
    results: list[Any] = [None] * len(items)
    failures: dict[int, Exception] = {}
    limiter = anyio.CapacityLimiter(max(1, jobs))
    scopes = [anyio.CancelScope() for _ in items]

    async def one(i: int) -> None:
        with scopes[i]:
            async with limiter:
                try:
                    results[i] = await work(items[i])
                except Exception as exc:  # noqa: BLE001 - handed back to the caller in item order
                    failures[i] = exc
                    for later in scopes[i + 1:]:
                        later.cancel()

    async with anyio.create_task_group() as tg:
        for i in range(len(items)):
            tg.start_soon(one, i)
    first = min(failures, default=None)
    return Done(results, (first, failures[first]) if first is not None else None)


async def prepare(engine: Engine, state: RunState) -> None:
    """Freeze, check readiness, and report ``coding.started`` (or a failing stop)."""
    out = engine.outbox
    await out.send(PreparationStarted())
    try:
        backend = backend_of(engine.evaluation)
        await check_capacity(engine)
        frozen_tasks: list[tuple[str, str, VerifierContract]] = []
        freeze_error: PluginBenchError | None = None
        for task_id, source in engine.task_sources.items():
            try:
                fp = freeze_task(source, engine.run_dir.frozen_task(task_id), task_id)
                task = load_task(engine.run_dir.frozen_task(task_id), task_id)
                if not task.has_workspace and backend.needs_workspace:
                    raise TaskError(
                        f"task '{task_id}' has no workspace/ folder for the {backend.name} backend",
                        file=str(source / "workspace"),
                        fix="put the starting source in workspace/, or use environment.backend: docker",
                    )
                engine.tasks[task_id] = task
                contract = record_contract(engine, task_id)
                engine.verifier_env(task_id)  # a host variable unset since check: refused before any sandbox
                engine.solution_env(task_id)
                environment_env(task)
                frozen_tasks.append((task_id, fp, contract))
            except PluginBenchError as exc:  # the tasks before it are still prepared and reported, in order
                freeze_error = exc
                break
        ids = [task_id for task_id, _, _ in frozen_tasks]
        done = (await jobs_at_a_time(engine.evaluation.jobs, ids, lambda t: prepare_task_images(engine, t))
                if backend.uses_images else Done([None] * len(ids), None))
        for i, ((task_id, fp, contract), prepared) in enumerate(zip(frozen_tasks, done.results, strict=True)):
            if done.failure is not None and done.failure[0] == i:
                raise done.failure[1]
            task = engine.tasks[task_id]
            files = len(scan_tree(engine.run_dir.frozen_task(task_id), context="frozen task"))
            await out.send(TaskPrepared(
                task=task_id, fingerprint=fp, files=files, workdir=task.workdir,
                image=prepared.coding if prepared else None, verifier_image=prepared.verifier if prepared else None,
                patch_applied_by=contract.patch_applied_by, contract=contract.kind,
                network=network_policy(engine.harness.egress("coding", task.agent_network_mode),
                                       task.verifier_network_mode),
                verifier_env=engine.verifier_env(task_id).record or None,
                environment_env=environment_env(task).record or None,
                solution_env=engine.solution_env(task_id).record or None,
            ))
        if freeze_error is not None:
            raise freeze_error
        for arm in _arms(engine):
            spec = engine.evaluation.treatments.get(arm, Treatment())
            frozen = freeze_treatment(arm, spec, engine.run_dir.frozen_treatment(arm)) if arm != VANILLA else _reload_treatment(engine, arm)
            frozen = with_task_owned(frozen, spec.task_owned)
            engine.treatments[arm] = frozen
            size = sum(p.stat().st_size for p in frozen.guidance)
            await out.send(
                TreatmentFrozen(
                    arm=arm, fingerprint=frozen.fingerprint, guidance_bytes=size,
                    skills=[p.name for p in frozen.skills], plugins=[p.name for p in frozen.plugins],
                )
            )
        await _check_tasks(engine)
        await generate_all(engine, state)  # after readiness: nothing is paid for on a task that cannot be graded
        await _check_measures(engine)
        await record_references(engine, list(engine.task_sources))
        await consult(engine, state)
    except PluginBenchError as exc:
        await out.send(RunStopping(reason=f"preparation failed: {exc}", failure=True))
        return
    await out.send(CodingStarted())


async def _check_measures(engine: Engine) -> None:
    """Readiness per task and selected measure; a measure ready on no task (or, with
    require_ready, any pair not ready) stops the run before coding."""
    from ..measures import settings_of
    from ._measure_readiness import (
        measurement_readiness,
        not_measured_of,
        readiness_document,
        write_readiness_files,
    )

    ev = engine.evaluation
    rows = await measurement_readiness(engine, list(engine.task_sources), engine.run_dir.root / "measure" / "readiness",
                                       shared_root=engine.run_dir.root / "evidence" / "measure-shared")
    require_ready = settings_of(ev.measurement_settings).require_ready
    doc = readiness_document(rows, require_ready, list(ev.measurements))
    write_readiness_files(engine.run_dir.root, doc)
    skipped = not_measured_of(doc)
    engine.not_measured = {(n.task, n.measure): n.reason for n in skipped}
    await engine.outbox.send(MeasurementReadinessChecked(readiness=rows, not_measured=skipped,
                                                         observers=doc["observers"], require_ready=require_ready,
                                                         observer_sources=doc["observer_sources"]))
    if doc["blocking"]:
        raise ReadinessFailure("measurement readiness: " + "; ".join(doc["blocking"]))


async def _check_tasks(engine: Engine) -> None:
    """Every task's readiness controls, ``jobs`` tasks at a time (the capacity check has
    made sure ``jobs`` sandboxes fit; a task's own controls run in order, oracle then nop,
    as they share its readiness cache entry). The first task (in task order) whose control
    fails stops the rest and its error is raised, as one at a time would."""
    done = await jobs_at_a_time(engine.evaluation.jobs, list(engine.task_sources),
                                lambda task_id: _check_task(engine, task_id))
    if done.failure is not None:  # the first in task order; the tasks after it were cancelled
        raise done.failure[1]


async def _check_task(engine: Engine, task_id: str) -> None:
    out = engine.outbox
    task_fp = fingerprint(scan_tree(engine.run_dir.frozen_task(task_id), context="frozen task"))
    cache_file = cache_root() / "readiness" / f"{_readiness_key(engine, task_id, task_fp)}.json"
    cached: dict[str, dict[str, object]] = {}
    try:
        cached = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cached = {}
    for control in ("oracle", "nop"):
        hit = cached.get(control)
        if isinstance(hit, dict) and hit.get("ok") is True:
            await out.send(
                ReadinessChecked(task=task_id, control=control, ok=True, cached=True,
                                 reward=r if isinstance(r := hit.get("reward"), (int, float)) else None)
            )
            continue
        ok, reward, reason, tail, evidence = await run_control(engine, task_id, control)
        await out.send(ReadinessChecked(
            task=task_id, control=control, ok=ok, reward=reward, cached=False, reason=reason, verifier_tail=tail,
            evidence=evidence.relative_to(engine.run_dir.root).as_posix() if evidence is not None else None,
        ))
        if not ok:
            raise ReadinessFailure(f"task '{task_id}' is not ready: {reason}")
        cached[control] = {"ok": True, "reward": reward}
        write_json(cache_file, cached)
