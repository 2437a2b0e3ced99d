"""The vanilla cache in a run: consult it during preparation, publish finished attempts.

:func:`key_inputs` turns the run's settings and a frozen task into the cache key's
inputs (pure but for hashing the probe scenario file). :func:`consult` runs at the end
of preparation: per task it reads ``vanilla/<key>/<repeat>``, admits each entry with
:func:`pluginbench.cache.admit` (after rebuilding its canonical patch from the saved
export), imports the admitted ones into ``evidence/attempts/<id>/`` and reports
``vanilla_cache.checked`` and ``attempt.reused``. :func:`publication` builds the manifest
of a finished vanilla attempt for the Supervisor, which publishes it off the loop.
"""

from __future__ import annotations

import functools
import hashlib
import tempfile
from pathlib import Path
from typing import Any

import anyio
import msgspec

from .. import __version__
from ..cache import (
    AttemptRecord,
    EntryManifest,
    KeyInputs,
    admit,
    check_cache_root,
    cohort_of,
    entry_files,
    entry_of,
    import_entry,
    read_json,
    read_manifest,
    vanilla_cache_enabled,
    vanilla_key,
)
from ..config import Evaluation
from ..events import AttemptReused, CacheDecision, Usage, VanillaCacheChecked
from ..harnesses import delivery_policy, launch_identity, uncacheable_cli
from ..projections import VANILLA, Attempt, RunState
from ..tasks import fingerprint, scan_tree
from ._context import Engine
from ._patch import make_patch
from ._pipeline import write_json


def transport_of(ev: Evaluation) -> str:
    """``provider``, or ``probe:<sha256 of the scenario>``: a probe entry never serves a real run."""
    if ev.runner.probe is None:
        return "provider"
    try:
        return "probe:" + hashlib.sha256(Path(ev.runner.probe).read_bytes()).hexdigest()
    except OSError:
        return "probe:unreadable"


def key_inputs(
    ev: Evaluation, *, task_id: str, task_fingerprint: str, workdir: str, cli_version: str | None, isolation: str,
    transport: str | None = None,
) -> KeyInputs:
    """Everything the vanilla key of one task binds."""
    r = ev.runner
    return KeyInputs(
        launcher_version=__version__,
        harness=r.harness,
        cli_version=cli_version,
        model=r.model,
        reasoning=r.reasoning,
        capabilities=msgspec.to_builtins(ev.capabilities),
        delivery_policy=delivery_policy(r.harness),
        launch=launch_identity(r.harness, r.model, r.reasoning, subagents=ev.capabilities.subagents),
        transport=transport if transport is not None else transport_of(ev),
        task=task_id,
        task_fingerprint=task_fingerprint,
        workdir=workdir,
        backend=ev.environment.backend,
        isolation=isolation,
        container_cpus=ev.environment.container_cpus,
        container_memory_mb=ev.environment.container_memory_mb,
        timeout_seconds=ev.timeout_seconds,
        jobs=ev.jobs,
        seed=ev.seed,
        repeats=ev.repeats,
    )


def _vanilla_attempt(state: RunState, task: str, repeat: int) -> Attempt | None:
    for a in state.live_attempts():
        if a.task == task and a.arm == VANILLA and a.repeat == repeat:
            return a
    return None


def examine(
    entry: Path, *, key: str, repeat: int, inputs: KeyInputs, images: list[str] | None, starting_source: Path,
) -> tuple[str, str | None, EntryManifest | None]:
    """``("miss"|"hit"|"rejected", reason, manifest)`` for one saved entry (reads, never writes
    the cache). A symlink inside the entry raises :class:`~pluginbench.errors.CacheError`."""
    if not entry.exists():
        return "miss", None, None
    manifest = read_manifest(entry)
    if isinstance(manifest, str):
        return "rejected", manifest, None
    files = entry_files(entry / "attempt") if (entry / "attempt").is_dir() else {}
    attempt = entry / "attempt"
    reconstructed = None
    if manifest.attempt.patch_sha256 is not None and (attempt / "export").is_dir():
        try:
            with tempfile.TemporaryDirectory(prefix="pluginbench-cache-") as tmp:
                reconstructed = make_patch(starting_source, attempt / "export", Path(tmp) / "model.patch").sha256
        except Exception:  # noqa: BLE001 - an export that cannot be replayed is a refusal, said by admit
            reconstructed = None
    reason = admit(
        manifest, key=key, repeat=repeat, inputs=inputs, images=images, files=files,
        invocation=read_json(attempt / "invocation.json"), execution=read_json(attempt / "execution.json"),
        reconstructed_sha256=reconstructed, receipt=read_json(attempt / "native-treatment.json"),
    )
    return ("rejected", reason, None) if reason is not None else ("hit", None, manifest)


def task_inputs(engine: Engine, state: RunState, task_id: str) -> KeyInputs:
    from ._runfiles import effective_isolation

    task = engine.tasks[task_id]
    fp = fingerprint(scan_tree(engine.run_dir.frozen_task(task_id), context="frozen task"))
    created = state.created
    return key_inputs(
        engine.evaluation, task_id=task_id, task_fingerprint=fp, workdir=task.workdir,
        cli_version=created.harness_version if created else None, isolation=effective_isolation(engine.evaluation),
    )


async def consult(engine: Engine, state: RunState) -> None:
    """Look every task's vanilla repeats up, import the admitted ones, report decisions."""
    ev = engine.evaluation
    if not vanilla_cache_enabled(ev):
        return
    root = engine.cache_root
    await anyio.to_thread.run_sync(check_cache_root, root)
    for task_id in engine.task_sources:
        inputs = task_inputs(engine, state, task_id)
        key = vanilla_key(inputs)
        images = list(engine.images[task_id]) if task_id in engine.images else None
        decisions: list[CacheDecision] = []
        reuse: list[tuple[Attempt, EntryManifest]] = []
        refused = uncacheable_cli(inputs.harness, inputs.cli_version)
        for repeat in range(1, ev.repeats + 1):
            a = _vanilla_attempt(state, task_id, repeat)
            if a is None:
                continue
            if refused is not None:
                decisions.append(CacheDecision(repeat=repeat, attempt_id=a.attempt_id, decision="miss", reason=refused))
                continue
            if a.state != "pending":
                decisions.append(CacheDecision(repeat=repeat, attempt_id=a.attempt_id, decision="kept",
                                               reason="already reused or coded by this run"))
                continue
            examine_entry = functools.partial(
                examine, root / entry_of(key, repeat), key=key, repeat=repeat, inputs=inputs, images=images,
                starting_source=engine.starting_source(task_id))
            decision, reason, manifest = await anyio.to_thread.run_sync(examine_entry)
            decisions.append(CacheDecision(repeat=repeat, attempt_id=a.attempt_id, decision=decision, reason=reason))
            if manifest is not None:
                reuse.append((a, manifest))
        await engine.outbox.send(VanillaCacheChecked(
            task=task_id, key=key, cohort=cohort_of(key), inputs=msgspec.to_builtins(inputs), decisions=decisions,
            publish=refused is None, reason=refused,
        ))
        for a, m in reuse:
            entry = entry_of(key, m.repeat)
            receipt = {"origin_cohort": cohort_of(key), "origin_entry": entry, "origin_run": m.origin_run,
                       "origin_attempt": m.origin_attempt, "attempt_id": a.attempt_id}
            attempt_dir = engine.run_dir.attempt(a.attempt_id)
            await anyio.to_thread.run_sync(import_entry, root / entry, attempt_dir, receipt)
            rec = m.attempt
            usage = await anyio.to_thread.run_sync(current_usage, m, attempt_dir)
            await engine.outbox.send(AttemptReused(
                attempt_id=a.attempt_id, slot=a.slot, task=a.task, arm=a.arm, repeat=a.repeat,
                origin_cohort=cohort_of(key), origin_entry=entry, origin_run=m.origin_run,
                origin_attempt=m.origin_attempt, exit_code=rec.exit_code, timed_out=rec.timed_out,
                coding_seconds=rec.coding_seconds, usage=usage, error=rec.error,
                patch_sha256=rec.patch_sha256, empty=rec.empty, files_changed=rec.files_changed,
                missing_reason=rec.missing_reason,
            ))


def current_usage(m: EntryManifest, attempt_dir: Path) -> Usage:
    """Re-validate the imported attempt's usage from its saved traces with today's rules and
    save the result as ``execution-current.json``; ``execution.json`` keeps the origin's."""
    from ..harnesses import revalidate_usage

    rec = m.attempt
    try:
        usage = revalidate_usage(m.inputs.harness, attempt_dir, model=m.inputs.model, cli_version=m.inputs.cli_version,
                                 timed_out=rec.timed_out, exit_code=rec.exit_code, seconds=rec.coding_seconds)
    except Exception as exc:  # noqa: BLE001 - unreadable evidence makes usage unknown, never zero
        usage = Usage(status="unknown", reason=f"the saved traces could not be re-validated: {exc}")
    current = rec.usage if usage is None else usage
    write_json(attempt_dir / "execution-current.json", {
        "usage": msgspec.to_builtins(current), "recorded_usage": msgspec.to_builtins(rec.usage),
        "revalidated": usage is not None, "changed": current != rec.usage,
    })
    return current


def not_cacheable(a: Attempt, harness_real: bool) -> str | None:
    """Why a finished vanilla attempt is kept out of the cache, or ``None``."""
    if a.provider_stop or a.state == "interrupted":
        return "the provider stopped the session or the attempt was interrupted"
    if a.missing_reason and "credential" in a.missing_reason:
        return "the delivered credential was found in the attempt's files"
    if harness_real and not a.timed_out and a.usage is not None and a.usage.status == "unknown" and not (
        a.captured and not a.empty
    ):
        return "the session has no usage, timeout or change: it never reached the model"
    return None


def publication(engine: Engine, state: RunState, attempt_id: str) -> EntryManifest | str:
    """The manifest to publish for a finished vanilla attempt, or why it is not cached."""
    a = state.attempts[attempt_id]
    checked = state.vanilla_cache[a.task]
    reason = not_cacheable(a, engine.harness.real)
    if reason is not None:
        return reason
    prepared = state.prepared_tasks.get(a.task)
    images = [prepared.image, prepared.verifier_image] if prepared and prepared.image and prepared.verifier_image else None
    assert a.usage is not None
    return EntryManifest(
        key=checked.key, repeat=a.repeat, inputs=msgspec.convert(checked.inputs, KeyInputs), images=images,
        origin_run=engine.run_id, origin_attempt=a.attempt_id,
        attempt=AttemptRecord(
            exit_code=a.exit_code, timed_out=a.timed_out, coding_seconds=a.coding_seconds, usage=a.usage,
            error=a.agent_error, patch_sha256=a.patch_sha256 if a.captured else None,
            empty=a.empty if a.captured else None, files_changed=a.files_changed if a.captured else None,
            missing_reason=None if a.captured else a.missing_reason,
        ),
        files={},
    )


def plan_decisions(ev: Evaluation, tasks: dict[str, Any]) -> dict[str, Any]:
    """Hit or miss for every vanilla attempt, before any run exists (``check``, ``run --dry-run``).

    Computed from the saved entries and their inputs without validating their evidence;
    ``run`` admits each hit again before it reuses it."""
    from ..cache import resolve_cache_root
    from ..harness_registry import harness_class
    from ..plan import attempt_id
    from ._runfiles import effective_isolation, resolve_cli

    root = resolve_cache_root()
    out: dict[str, Any] = {"enabled": vanilla_cache_enabled(ev), "root": str(root), "attempts": [],
                           "planned_hits": 0}
    if not out["enabled"]:
        return out
    cli = resolve_cli(ev).version if harness_class(ev.runner.harness).cli is not None else None
    isolation = effective_isolation(ev)
    for task_id, task in tasks.items():
        fp = fingerprint(scan_tree(task.root, context=f"task '{task_id}'"))
        inputs = key_inputs(ev, task_id=task_id, task_fingerprint=fp, workdir=task.workdir, cli_version=cli,
                            isolation=isolation)
        key = vanilla_key(inputs)
        refused = uncacheable_cli(inputs.harness, inputs.cli_version)
        for repeat in range(1, ev.repeats + 1):
            entry = root / entry_of(key, repeat)
            if refused is not None:
                decision, reason = "miss", refused
            elif not entry.exists():
                decision, reason = "miss", None
            else:
                manifest = read_manifest(entry)
                if isinstance(manifest, str):
                    decision, reason = "miss", manifest
                elif manifest.inputs != inputs:
                    decision, reason = "miss", "the entry was saved for other settings"
                else:
                    decision, reason = "hit", None
            out["attempts"].append({
                "attempt_id": attempt_id(task_id, VANILLA, repeat), "task": task_id, "repeat": repeat,
                "cohort": cohort_of(key), "decision": decision, "reason": reason,
            })
    out["planned_hits"] = sum(1 for a in out["attempts"] if a["decision"] == "hit")
    return out
