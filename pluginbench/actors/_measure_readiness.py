"""Readiness per task and measure, in preparation (``run``) and in ``check``: every selected
measure that declares a readiness check runs it on each task's starting source, and then its
collector twice on the starting source (an empty submission); two runs that disagree make
the pair ``broken`` with the difference (coverage's check runs its command twice itself). A
measure whose observer source hash no version declares, or another version declares, is
``broken`` on every task (:mod:`pluginbench.measures._observers`). The rows, the pairs the run will not measure and the frozen observer
versions are recorded (``measurement_readiness.checked``) and written to
``measurement-readiness.json`` and ``check.json`` in the run directory. A measure ready on
no task, or with ``measurement_settings.require_ready`` any pair that is not ready, stops
the run before its first coding attempt.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import msgspec

from .. import measures as registry
from ..events import NotMeasured, ReadinessRow
from ..measures import (
    CollectorInput,
    MeasureSpec,
    ReadinessInput,
    blocking,
    not_measured,
    observer_refusal,
    observer_sources,
    warnings,
)
from ._collector import task_sandbox_opener
from ._context import Engine


def observer_versions(selection: list[str]) -> dict[str, str]:
    """The observer version of every selected measure, as the registry declares it now."""
    return {spec.name: spec.observer_version for spec in registry.selected(selection)}


async def measurement_readiness(engine: Engine, tasks: list[str], work_root: Path,
                                selection: list[str] | None = None,
                                shared_root: Path | None = None) -> list[ReadinessRow]:
    """One row per task and selected measure (``selection``, by default the run's) that has a
    readiness check. ``shared_root``: the run's ``evidence/measure-shared`` (a check may leave
    once-per-task evidence there)."""
    rows: list[ReadinessRow] = []
    ev = engine.evaluation
    for spec in registry.selected(ev.measurements if selection is None else selection):
        if spec.check is None:
            continue
        refused = observer_refusal(spec)
        if refused is not None:
            rows.extend(ReadinessRow(task=t, measure=spec.name, state="broken", reason=refused) for t in tasks)
            continue
        for task_id in tasks:
            opener = task_sandbox_opener(engine, task_id, f"readiness-{spec.name}-{task_id}")
            image = engine.images[task_id].coding if task_id in engine.images else None
            inp = ReadinessInput(task=task_id, task_dir=engine.run_dir.frozen_task(task_id),
                                 starting_source=engine.starting_source(task_id), task_image=image,
                                 open_task_sandbox=opener if task_id in engine.tasks else None,
                                 settings=registry.settings_for(spec, ev.measurement_settings),
                                 work_dir=work_root / task_id / spec.name,
                                 shared_dir=shared_root / spec.name if shared_root is not None else None)
            try:
                got = spec.check(inp)
                if inspect.isawaitable(got):
                    got = await got
                state, reason, detail = got.state, got.reason, got.tool_version
            except Exception as exc:  # noqa: BLE001 - a failing check makes that pair broken, with the error
                state, reason, detail = "broken", f"the readiness check failed: {type(exc).__name__}: {exc}", None
            if state not in ("ready", "not_configured", "broken"):
                state, reason = "broken", f"readiness {state}: {reason or 'no reason given'}"
            if state == "ready" and spec.collect is not None and not spec.check_runs_twice:
                differs = await _twice_on_starting_source(engine, spec, inp)
                if differs is not None:
                    state, reason = "broken", differs
            rows.append(ReadinessRow(task=task_id, measure=spec.name, state=state, reason=reason, detail=detail))
    return rows


async def _twice_on_starting_source(engine: Engine, spec: MeasureSpec, inp: ReadinessInput) -> str | None:
    """Run ``spec``'s collector twice on the starting source (an empty submission): None when
    both runs give the same value and status for every column, else the difference. Reasons
    may name each run's own scratch folder, so they are not compared."""
    from ._collector import agent_traces, run_collector

    runs = []
    for repeat in (1, 2):
        scratch = inp.work_dir / f"starting-{repeat}"
        runs.append(await run_collector(spec, CollectorInput(
            attempt_id=f"readiness-{inp.task}", task=inp.task, arm="", patch="", attempt_dir=scratch,
            traces_dir=scratch / "agent", harness=engine.evaluation.runner.harness, task_dir=inp.task_dir,
            starting_source=inp.starting_source, reference_patch=None, task_image=inp.task_image,
            open_task_sandbox=inp.open_task_sandbox, settings=inp.settings, work_dir=scratch / spec.name,
            agent_traces=agent_traces(engine.evaluation.runner.harness))))
    first, second = runs
    changed = [c.metric for c in spec.columns
               if (first[c.metric].value, first[c.metric].status) != (second[c.metric].value, second[c.metric].status)]
    if not changed:
        return None
    shown = "; ".join(f"{m}: {_shown(first[m])} then {_shown(second[m])}" for m in changed[:3])
    return f"two runs of the {spec.name} collector on the starting source differ ({shown})"


def _shown(m: Any) -> str:
    return f"{m.value!r}" if m.status == "measured" else f"{m.status} ({m.reason})"


def readiness_document(rows: list[ReadinessRow], require_ready: bool, selection: list[str]) -> dict[str, Any]:
    """What measurement-readiness.json and check.json's ``measurements`` hold (pure)."""
    stops = blocking(rows, require_ready)
    return {
        "readiness": msgspec.to_builtins(rows),
        "observers": observer_versions(selection),
        "observer_sources": observer_sources(registry.selected(selection)),
        "require_ready": require_ready,
        "blocking": stops,
        # with require_ready the check stops instead, so it saves no list and prints no warning
        "not_measured": [] if stops else msgspec.to_builtins(not_measured(rows)),
        "warnings": [] if stops else warnings(rows),
    }


def write_readiness_files(root: Path, doc: dict[str, Any], controls: list[dict[str, Any]] | None = None) -> None:
    text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    (root / "measurement-readiness.json").write_text(text)
    check = {"measurements": doc, "warnings": doc["warnings"], "not_measured": doc["not_measured"]}
    if controls is not None:
        check["controls"] = controls
    (root / "check.json").write_text(json.dumps(check, indent=2, sort_keys=True) + "\n")


def not_measured_of(doc: dict[str, Any]) -> list[NotMeasured]:
    return [NotMeasured(**n) for n in doc["not_measured"]]
