"""``pluginbench measure RUN --measurements ... --revision NAME``: add measures to a finished
run from its saved submissions, as measurement revision ``NAME``. No model call; nothing is
coded again.

A revision runs every registered measure that has a collector (iterations, cyclomatic,
cognitive, dead_code, coverage, lines, and any other registration) through the same
:class:`~pluginbench.measures.CollectorInput` the collector actor builds, on each saved,
hash-checked submission, and measures each task's reference solution again with the
measures that declare ``reference=True`` (``stage="reference"``).

The command owns ``run.lock`` while it works and is then the log's only writer. It refuses
(exit 2, nothing written: no event, no ``measure/`` folder) an active run, an unfinished run (coding, measurement or first
review), a bad or existing revision name, an unknown measure or one the run already
measures, a ``--coverage-profiles`` key the run saved with a different profile; then,
after the readiness checks (each collector twice on each task's starting source), a
requested measure no task can measure, a measure the run measures now that no longer
passes its readiness check, and, with ``require_ready``, a new measure that is not ready
on every task. It records ``measurement_revision.started``, one
``measurement_revision.measured`` per submission, and ``measurement_revision.finished``. A
collected revision that loses an observation the selected revision measured (per metric
and attempt) stays in evidence, is not selected, the settings stay as they were, and the
command exits 2. Otherwise it rewrites ``evaluation.json`` and its binding (the new
measures, the merged coverage profiles), selects the revision and rebuilds the report.

Working files stay in ``measure/<name>/``: ``evaluation-before.json``, ``profiles.json``,
``measurement-readiness.json`` and each collection's raw report and command output.
"""

import contextlib
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import msgspec
import yaml

from .. import measures as measure_registry
from ..config import Evaluation, frozen_builtins, parse_evaluation
from ..errors import (
    ConfigError,
    InputError,
    LockHeldError,
    MeasurementError,
    PluginBenchError,
    RunDirError,
)
from ..events import (
    Event,
    EventLog,
    Measure,
    MeasurementRevisionFinished,
    MeasurementRevisionStarted,
    NotMeasured,
    ReadinessRow,
    ReportBuilt,
    RevisionMeasured,
    RunLock,
    live_owner,
    read_run_log,
)
from ..measures import (
    COVERAGE_METRICS,
    METRIC_UNITS,
    CoverageContext,
    CoverageProfile,
    CoverageReport,
    MeasurementSettings,
    OpenSandbox,
    changed_coverage,
    coverage_readiness,
    not_measured,
    observer_refusal,
    parse_profiles_mapping,
    resolve_profile,
    run_coverage,
    settings_of,
    task_language,
)
from ..projections import Ledger, RunState, fold
from ..rundir import RunDir, patch_mismatch
from ..tasks import load_task
from ._collector import collector_input, run_collector
from ._context import Engine, Outbox, TaskImages, cache_root
from ._decide import _abandoned_measure
from ._measure_readiness import measurement_readiness
from ._references import measure_reference
from ._runfiles import load_saved
from ._writer import RunWriter

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")

#: the measure whose readiness and collection keep their own path here (the starting-source
#: coverage report of its readiness check is the "before" of every submission's)
COVERAGE = "coverage"


def collectable() -> set[str]:
    """The registered measures a revision can collect: every one with a collector."""
    return {s.name for s in measure_registry.collectors(measure_registry.names()) if s.collect is not None}


class MeasurePlan(NamedTuple):
    run_dir: RunDir
    revision: str
    requested: list[str]
    #: every collector measure the revision collects (the run's earlier ones and the requested)
    collect: list[str]
    settings: MeasurementSettings
    evaluation: Evaluation
    raw_saved: dict[str, Any]
    attempts: list[tuple[str, str, str]]  # attempt id, task, patch sha256


def _unfinished(state: RunState) -> list[str]:
    left = [a.attempt_id for a in state.live_attempts() if a.state != "complete"]
    if state.created is not None and state.created.reviewer is not None:
        left += [a.attempt_id for a in state.live_attempts() if a.captured and not state.reviewed(a.attempt_id)]
    return left


def plan_measure(run_dir: Path, measurements: str, revision: str, coverage_profiles: Path | None,
                 task_profiles: dict[str, CoverageProfile] | None = None) -> MeasurePlan:
    """Every refusal that needs no sandbox; what the revision would collect. ``task_profiles``
    (task -> coverage profile): a killed revision's saved ``profiles.json``, measured again."""
    rd = RunDir(run_dir.resolve())
    saved = load_saved(rd)
    owner = live_owner(rd.root)
    if owner is not None and owner.pid != os.getpid():  # a resume that holds the lock measures again itself
        raise LockHeldError(f"the run is active (pid {owner.pid} owns run.lock)", file=str(rd.root),
                            fix="wait until it ends, or stop it with `pluginbench stop`, then measure again")
    state = fold(read_run_log(rd.events).events)
    left = _unfinished(state)
    if left or not state.live:
        raise RunDirError(f"the run's coding, measurement or first review has not finished ({len(left)} attempt(s) left"
                          + (f", e.g. {left[0]})" if left else ")"), file=str(rd.root),
                          fix=f"finish it with: pluginbench run {rd.root}")
    if not _NAME.match(revision):
        raise InputError(f"revision name {revision!r} is not allowed", field="--revision",
                         fix="use lowercase letters, digits, '.', '_' and '-'")
    if revision in state.measurement_revisions or (rd.root / "measure" / revision).exists():
        raise InputError(f"measurement revision '{revision}' already exists", file=str(rd.root / "measure" / revision),
                         field="--revision", fix="choose a new name; earlier revisions stay in evidence")
    requested = [m.strip() for m in measurements.split(",") if m.strip()]
    if not requested:
        raise InputError("no measure requested", field="--measurements", fix="name one or more, e.g. --measurements coverage")
    ev = saved.evaluation
    settings = settings_of(ev.measurement_settings)
    if coverage_profiles is not None:
        settings = _merge_profiles(settings, coverage_profiles)
    if task_profiles:
        settings = with_task_profiles(settings, {t: load_task(rd.frozen_task(t), t).metadata for t in task_profiles},
                                      task_profiles)
    known = sorted(measure_registry.names())
    can = collectable()
    for m in sorted({x for x in ev.measurements if x in can} | (set(requested) & can)):
        spec = measure_registry.get(m)
        refused = observer_refusal(spec, state.observers.get(m)) if spec is not None else None
        if refused is not None:  # a different observer version, or a source hash no version declares
            raise InputError(refused, field="--measurements", fix="measure this run with a PluginBench whose observer "
                             "version matches and declares its observer source, or start a new evaluation")
    for m in requested:
        if m not in known:
            raise InputError(f"unknown measure '{m}'", field="--measurements", fix="use any of: " + ", ".join(known))
        if m in ev.measurements:
            raise InputError(f"the run already measures '{m}'", field="--measurements",
                             fix="request only measures the run does not measure yet (see its evaluation.json)")
        if m not in can:
            raise InputError(f"'{m}' is recorded by the coding pipeline, not by a collector: a measurement revision "
                             "cannot add it", field="--measurements", fix="request any of: " + ", ".join(sorted(can)))
    if "coverage" in requested:
        reasons = [(t, _task_profile(settings, load_task(rd.frozen_task(t), t).metadata)) for t in sorted(state.prepared_tasks)]
        if reasons and all(profile is None for _, (profile, _) in reasons):
            task, (_, why) = reasons[0]
            raise InputError(f"no task can measure 'coverage' (e.g. {task}: not_configured: {why})",
                             field="--coverage-profiles", fix="pass --coverage-profiles FILE, a YAML coverage_profiles "
                             "mapping (language or repository_url -> profile)")
    collect = sorted({m for m in ev.measurements if m in can} | set(requested))
    attempts = [(a.attempt_id, a.task, a.patch_sha256 or "") for a in state.live_attempts() if a.captured]
    raw = json.loads(rd.evaluation.read_bytes())
    return MeasurePlan(rd, revision, requested, collect, settings, ev, raw.get("saved", {}), attempts)


def _merge_profiles(settings: MeasurementSettings, path: Path) -> MeasurementSettings:
    where = str(path)

    def bad(message: str, field: str, fix: str) -> ConfigError:
        return ConfigError(message, file=where, field=field, fix=fix)

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("the coverage profiles file does not exist", file=where, field="--coverage-profiles",
                          fix="pass a YAML coverage_profiles mapping") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the coverage profiles: {exc}", file=where, field="--coverage-profiles",
                          fix="pass a YAML coverage_profiles mapping") from None
    profiles = parse_profiles_mapping(raw, "coverage_profiles", bad)
    merged = dict(settings.coverage_profiles)
    for key, profile in profiles.items():
        if key in merged and merged[key] != profile:
            raise ConfigError(f"the run already saved coverage_profiles[{key!r}] with a different profile", file=where,
                              field=f"coverage_profiles[{key!r}]",
                              fix="pass the same profile the run saved (measure every run of a batch with the same file)")
        merged[key] = profile
    return msgspec.structs.replace(settings, coverage_profiles=merged)


def with_task_profiles(settings: MeasurementSettings, metadata: dict[str, dict[str, Any]],
                       task_profiles: dict[str, CoverageProfile]) -> MeasurementSettings:
    """``settings`` with each task's saved profile resolvable again: added under the task's
    repository URL (else its language) where the settings resolve it to another profile or
    none. A task with neither keeps what the settings give it (its profile was the shared one)."""
    merged = dict(settings.coverage_profiles)
    for task, profile in sorted(task_profiles.items()):
        meta = metadata.get(task, {})
        current, _ = _task_profile(msgspec.structs.replace(settings, coverage_profiles=merged), meta)
        if current == profile:
            continue
        url, language = meta.get("repository_url"), task_language(meta)
        key = str(url) if url else language
        if key:
            merged[key] = profile
    return msgspec.structs.replace(settings, coverage_profiles=merged)


def saved_profiles(work: Path) -> dict[str, CoverageProfile]:
    """A revision's ``profiles.json`` (task -> coverage profile); empty when it is missing or unreadable."""
    try:
        return msgspec.convert(json.loads((work / "profiles.json").read_bytes()), dict[str, CoverageProfile])
    except (OSError, ValueError, msgspec.ValidationError):
        return {}


def _task_profile(settings: MeasurementSettings, metadata: dict[str, Any]) -> tuple[CoverageProfile | None, str]:
    url = metadata.get("repository_url")
    return resolve_profile(settings, task_language(metadata), str(url) if url else None)


def _engine(plan: MeasurePlan, state: RunState) -> Engine:
    from ..environments import backend_of

    rd, ev = plan.run_dir, plan.evaluation
    hidden = {rd.root, cache_root()}
    environment = backend_of(ev).make(ev, f"{rd.run_id}-measure")
    engine = Engine(run_dir=rd, run_id=rd.run_id, evaluation=ev, environment=environment,
                    harness=None, task_sources={}, outbox=Outbox(None), hidden=tuple(sorted(hidden)))  # type: ignore[arg-type]  # measuring runs no agent and writes through its own RunWriter
    engine.tasks = {t: load_task(rd.frozen_task(t), t) for t in state.prepared_tasks}
    for t, prepared in state.prepared_tasks.items():
        if prepared.image is not None:
            engine.images[t] = TaskImages(prepared.image, prepared.verifier_image or prepared.image)
    return engine


class _Readiness(NamedTuple):
    rows: list[ReadinessRow]
    starting: dict[str, CoverageReport]  # task -> starting-source report
    profiles: dict[str, CoverageProfile]


async def _check(engine: Engine, plan: MeasurePlan, work: Path, progress: Callable[[str], None]) -> _Readiness:
    rows: list[ReadinessRow] = []
    starting: dict[str, CoverageReport] = {}
    profiles: dict[str, CoverageProfile] = {}
    generic = [m for m in plan.collect if m != COVERAGE]
    if generic:
        for row in await measurement_readiness(engine, sorted(engine.tasks), work / "readiness", generic):
            rows.append(row)
            progress(f"readiness {row.task} {row.measure}: {row.state}" + (f" ({row.reason})" if row.reason else ""))
    for task_id, task in sorted(engine.tasks.items()):
        if COVERAGE in plan.collect:
            profile, why = _task_profile(plan.settings, task.metadata)
            row, report = await coverage_readiness(_opener(engine, task_id, "coverage-starting"),
                                                   engine.starting_source(task_id), task_id, profile, why,
                                                   work / "readiness" / task_id / "coverage")
            rows.append(row)
            progress(f"readiness {task_id} coverage: {row.state}" + (f" ({row.reason})" if row.reason else ""))
            if report is not None and profile is not None:
                starting[task_id], profiles[task_id] = report, profile
    return _Readiness(rows, starting, profiles)


def _refusals(plan: MeasurePlan, rows: list[ReadinessRow], state: RunState) -> None:
    for measure in plan.requested:
        mine = [r for r in rows if r.measure == measure]
        if mine and not any(r.state == "ready" for r in mine):
            first = mine[0]
            raise InputError(f"no task can measure '{measure}' (e.g. {first.task}: {first.state}: {first.reason})",
                             field="--measurements", fix="configure it (for coverage: --coverage-profiles FILE) or drop it")
    earlier = [m for m in plan.collect if m not in plan.requested]
    already_missing = {(n.task, n.measure) for n in state.not_measured}
    for r in rows:
        if r.measure in earlier and r.state != "ready" and (r.task, r.measure) not in already_missing:
            raise InputError(f"'{r.measure}', which the run measures now, no longer passes its readiness check on task "
                             f"{r.task} ({r.state}: {r.reason}); the new revision would replace its values with unknown ones",
                             field="--measurements", fix="restore what it needs (e.g. the frozen task image), then measure again")
    if plan.settings.require_ready:
        for r in rows:
            if r.measure in plan.requested and r.state != "ready":
                raise InputError(f"'{r.measure}' is {r.state} on task {r.task}: {r.reason}", field="--measurements",
                                 fix="measurement_settings.require_ready is true: make it ready on every task, or drop it")


async def _collect(engine: Engine, plan: MeasurePlan, ready: _Readiness, skipped: dict[tuple[str, str], str],
                   work: Path, record: Callable[[RevisionMeasured], None], progress: Callable[[str], None]) -> None:
    """Every saved submission through every collector the revision collects, then each
    task's reference solution through the reference measures among them."""
    limiter = anyio.CapacityLimiter(plan.evaluation.jobs)
    specs = [s for s in measure_registry.collectors(plan.collect) if s.collect is not None and s.name != COVERAGE]
    shown = [c.metric for s in measure_registry.collectors(plan.requested) for c in s.columns][:4]

    async def one(attempt_id: str, task_id: str, patch_sha256: str) -> None:
        async with limiter:
            measures: dict[str, Measure] = {}
            if COVERAGE in plan.collect:
                measures.update(await _coverage_of(engine, task_id, attempt_id, ready, skipped, work))
            tampered = patch_mismatch(engine.run_dir.attempt(attempt_id) / "model.patch", patch_sha256 or None)
            text = ""
            if tampered is None:
                try:
                    text = (engine.run_dir.attempt(attempt_id) / "model.patch").read_text(encoding="utf-8", errors="replace")
                except OSError as exc:
                    tampered = f"model.patch unreadable: {exc}"
            for spec in specs:
                if tampered is not None:
                    measures.update(spec.unknown(tampered))
                elif (task_id, spec.name) in skipped:
                    measures.update(spec.unknown(f"not measured: {skipped[(task_id, spec.name)]}"))
                else:
                    inp = collector_input(engine, attempt_id, spec, text)._replace(
                        work_dir=work / "attempts" / attempt_id / spec.name)
                    measures.update(await run_collector(spec, inp))
            record(RevisionMeasured(revision=plan.revision, attempt_id=attempt_id, measures=measures))
            progress(f"{attempt_id}: " + ", ".join(_shown(name, measures.get(name)) for name in shown))

    async with anyio.create_task_group() as tg:
        for attempt_id, task_id, sha in plan.attempts:
            tg.start_soon(one, attempt_id, task_id, sha)
    references = [s for s in specs if s.reference]
    for task_id in sorted(engine.tasks) if references else []:
        measures = await measure_reference(engine, task_id, references, work / "references", skipped)
        record(RevisionMeasured(revision=plan.revision, attempt_id=task_id, measures=measures, stage="reference"))
        progress(reference_line(task_id, plan.requested, references, measures))


def reference_line(task_id: str, requested: list[str], references: list[measure_registry.MeasureSpec],
                   measures: dict[str, Measure]) -> str:
    """The progress line of one task's reference: the requested reference measures' first
    columns; when none of the requested measures takes a reference, the reference measures the
    revision measured again, naming the requested ones as not reference measures (pure)."""
    wanted = [s for s in references if s.name in requested]
    note = ""
    if not wanted:
        others = [m for m in requested if m not in {s.name for s in references}]
        note = f" ({', '.join(others)}: not a reference measure)" if others else ""
        wanted = references
    names = [c.metric for s in wanted for c in s.columns][:4]
    return f"reference {task_id}: " + ", ".join(_shown(name, measures.get(name)) for name in names) + note


def _shown(name: str, m: Measure | None) -> str:
    label = name.replace("_", " ")
    if m is None:
        return f"{label} not collected"
    return f"{label} {m.value:g}" if m.value is not None else f"{label} unknown ({m.reason})"


async def _coverage_of(engine: Engine, task_id: str, attempt_id: str, ready: _Readiness,
                       skipped: dict[tuple[str, str], str], work: Path) -> dict[str, Measure]:
    profile = ready.profiles.get(task_id)
    if profile is None:
        reason = skipped.get((task_id, "coverage"), "coverage is not ready on this task")
        return {m: Measure(value=None, unit=METRIC_UNITS[m], status="unknown", reason=f"not measured: {reason}")
                for m in COVERAGE_METRICS}
    shared = settings_of(engine.evaluation.measurement_settings)
    ctx = CoverageContext(profile.format, profile.tool_version, profile.source_scope or shared.source_scope,
                          profile.test_scope or shared.test_scope)
    patch = engine.run_dir.attempt(attempt_id) / "model.patch"
    try:
        text = patch.read_text(encoding="utf-8", errors="replace")
        after = await run_coverage(_opener(engine, task_id, f"{attempt_id}.coverage"), engine.starting_source(task_id),
                                   profile, text, work / "attempts" / attempt_id / "coverage")
    except (MeasurementError, OSError) as exc:
        return ctx.unknown_all(f"coverage unavailable: {exc}")
    return changed_coverage(text, ready.starting[task_id], after, ctx)


def _opener(engine: Engine, task_id: str, label: str) -> OpenSandbox:
    """A fresh sandbox of the frozen task (role readiness: no credentials, hidden tests or solution)."""

    from ._collector import task_sandbox_opener

    return task_sandbox_opener(engine, task_id, label)


def lost_observations(selected: dict[str, dict[str, Measure]], new: dict[str, dict[str, Measure]]) -> list[str]:
    """Metric/attempt pairs the selected revision measured that the new one does not (pure)."""
    lost = []
    for attempt_id, measures in sorted(selected.items()):
        for name, m in sorted(measures.items()):
            if m.status == "measured" and m.value is not None:
                got = new.get(attempt_id, {}).get(name)
                if got is None or got.status != "measured" or got.value is None:
                    lost.append(f"{name} of {attempt_id}")
    return lost


def _write_settings(plan: MeasurePlan) -> str:
    """Rewrite evaluation.json (new measures, merged profiles) and its binding; the new SHA-256."""
    rd = plan.run_dir
    raw_settings = dict(plan.evaluation.measurement_settings)
    if plan.settings.coverage_profiles:
        raw_settings["coverage_profiles"] = {k: msgspec.to_builtins(p) for k, p in sorted(plan.settings.coverage_profiles.items())}
    ev = msgspec.structs.replace(plan.evaluation, measurements=[*plan.evaluation.measurements, *plan.requested],
                                 measurement_settings=raw_settings)
    data = frozen_builtins(ev)  # a fixed-size, single-harness run's frozen settings stay as they were
    data["saved"] = plan.raw_saved
    parse_evaluation({k: v for k, v in data.items() if k != "saved"}, rd.evaluation)  # the schema still holds
    encoded = json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"
    tmp = rd.evaluation.with_suffix(".json.tmp")
    tmp.write_bytes(encoded)
    tmp.replace(rd.evaluation)
    digest = hashlib.sha256(encoded).hexdigest()
    btmp = rd.binding.with_suffix(".json.tmp")
    btmp.write_text(json.dumps({"evaluation_sha256": digest, "file": "evaluation.json"}, indent=2) + "\n")
    btmp.replace(rd.binding)
    return digest


def _checked(plan: MeasurePlan, state: RunState, progress: Callable[[str], None]) -> tuple[Engine, _Readiness, Path]:
    """The readiness checks and every refusal they decide, in a hidden scratch folder that
    becomes ``measure/<revision>/`` only when nothing is refused. A refusal (or any failure)
    removes the scratch folder and a ``measure/`` folder this call made, so it writes nothing."""
    parent = plan.run_dir.root / "measure"
    made_parent = not parent.exists()
    checking = parent / f".{plan.revision}.checking"
    shutil.rmtree(checking, ignore_errors=True)
    checking.mkdir(parents=True)
    try:
        engine = _engine(plan, state)
        ready = anyio.run(_check, engine, plan, checking, progress, backend="asyncio")
        _refusals(plan, ready.rows, state)
    except BaseException:
        shutil.rmtree(checking, ignore_errors=True)
        if made_parent:
            shutil.rmtree(parent, ignore_errors=True)  # only this call's (now empty) folder
        raise
    work = parent / plan.revision
    checking.rename(work)
    return engine, ready, work


def next_free_revision(rd: RunDir, state: RunState, revision: str) -> str:
    """The next free revision name after ``revision``: ``<name>-2``, ``<name>-3``, ..."""
    base = re.sub(r"-\d+$", "", revision)
    n = 2
    while f"{base}-{n}" in state.measurement_revisions or (rd.root / "measure" / f"{base}-{n}").exists():
        n += 1
    return f"{base}-{n}"


def measure_again(rd: RunDir, abandoned: list[str], progress: Callable[[str], None] = print) -> None:
    """After a resume recorded ``abandoned`` measurement revisions as failed (it holds
    run.lock), measure each one's added measures again under the next free revision name,
    with the coverage profiles that revision saved (``measure/<name>/profiles.json``). A revision that cannot be measured again now (the
    run is not finished, or a refusal) is said in one progress line, never raised: the
    run itself is done, and ``pluginbench measure`` can still be asked."""
    for revision in abandoned:
        state = fold(read_run_log(rd.events).events)
        rev = state.measurement_revisions.get(revision)
        if rev is None or not state.finished:
            continue
        new = next_free_revision(rd, state, revision)
        progress(f"measurement revision {revision} cannot continue ({rev.reason}); measuring it again as {new}")
        try:
            plan = plan_measure(rd.root, ",".join(rev.added), new, None,
                                saved_profiles(rd.root / "measure" / revision))
            run_measure(plan, progress, locked=True)
        except PluginBenchError as exc:
            progress(f"measurement revision {new} was not measured: {exc}")


def run_measure(plan: MeasurePlan, progress: Callable[[str], None] = print, *, locked: bool = False) -> RunState:
    """Own the run, check readiness, collect the revision, select it and rebuild the report.
    ``locked``: this process already holds run.lock (a resume measuring an abandoned revision again)."""
    rd = plan.run_dir
    with (contextlib.nullcontext() if locked else RunLock(rd.root)), EventLog(rd.events) as log, \
            closing(Ledger(rd.ledger)) as ledger:
        state = fold(log.recovered)
        writer = RunWriter(log, state, ledger)  # the Supervisor's path: append, step, ledger

        def append(event: Event) -> None:
            writer.record(event)  # the run is finished: nothing it decides is run here
        engine, ready, work = _checked(plan, state, progress)  # a refusal leaves nothing behind
        for rev in state.measurement_revisions.values():
            if not rev.finished:
                progress(f"measurement revision {rev.revision} was left unfinished by a process that ended; "
                         "it is recorded as finished and not selected")
                append(MeasurementRevisionFinished(revision=rev.revision, selected=False,
                                                   reason=_abandoned_measure(state, rev.revision)))
        shutil.copyfile(rd.evaluation, work / "evaluation-before.json")
        (work / "profiles.json").write_text(json.dumps(
            {t: msgspec.to_builtins(p) for t, p in sorted(ready.profiles.items())}, indent=2, sort_keys=True) + "\n")
        skipped_rows = not_measured(ready.rows)
        (work / "measurement-readiness.json").write_text(json.dumps(
            {"readiness": msgspec.to_builtins(ready.rows), "not_measured": msgspec.to_builtins(skipped_rows)},
            indent=2, sort_keys=True) + "\n")
        previous = state.not_measured
        skipped = {(n.task, n.measure): n.reason for n in [*previous, *skipped_rows]}
        merged_nm = sorted({(n.task, n.measure): n for n in [*previous, *skipped_rows]}.values(),
                           key=lambda n: (n.task, n.measure))
        append(MeasurementRevisionStarted(
            revision=plan.revision, measurements=plan.collect, added=plan.requested, readiness=ready.rows,
            not_measured=list(merged_nm),
            observers={m: s.observer_version for m in plan.collect if (s := measure_registry.get(m)) is not None}))

        def record(event: RevisionMeasured) -> None:
            append(event)

        columns = {c.metric for s in measure_registry.collectors(plan.collect) for c in s.columns}
        current = {a.attempt_id: {k: m for k, m in state.current_measures(a).items() if k in columns}
                   for a in state.live_attempts() if a.captured}
        current_refs = {t: {k: m for k, m in ms.items() if k in columns} for t, ms in state.current_references().items()}
        anyio.run(_collect, engine, plan, ready, skipped, work, record, progress, backend="asyncio")
        selected = state.selected_measurement()
        new = state.measurement_revisions[plan.revision]
        lost = lost_observations(current, new.measures) + [
            f"{x} (reference)" for x in lost_observations(current_refs, new.references)]
        if lost:
            measured_by = f"the selected revision {selected.revision}" if selected is not None else "the run"
            reason = f"it loses {len(lost)} observation(s) {measured_by} measured (e.g. {lost[0]})"
            append(MeasurementRevisionFinished(revision=plan.revision, selected=False, reason=reason))
            raise RunDirError(f"measurement revision {plan.revision} was collected but not selected: {reason}",
                              file=str(work), field="--revision",
                              fix="it stays in evidence; find why the collector failed on those submissions, "
                                  "then measure again under a new name")
        digest = _write_settings(plan)
        append(MeasurementRevisionFinished(revision=plan.revision, selected=True, evaluation_sha256=digest))
        from ..projections import build_report

        files = build_report(rd.root)
        append(ReportBuilt(path=str(files.report_html.relative_to(rd.root))))
        return state


def not_measured_for(state: RunState) -> list[NotMeasured]:
    return state.not_measured
