"""The report projection: ``report/results.json``, ``results.csv`` and ``report.html``.

:func:`build_report` reads ``evaluation.json`` and ``events.jsonl`` of a run directory,
folds the events, and writes the three files atomically (temp file, then
``os.replace``). It makes no model call and reads no clock: rebuilding from the same
inputs gives byte-identical files, and no absolute path appears in them (evidence paths
are relative to the run directory). :func:`results_document` is the pure core.
"""

import hashlib
import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import msgspec

from .. import stats
from .._gc import paused_gc
from ..errors import RunDirError
from ..measures import collected_columns
from ..rundir import RunDir, patch_mismatch, sha256_file
from ..stats import Prices
from ._generation import generation_rows, generation_totals
from ._integrity import check_frozen, fold_checked_log
from ._paid_calls import beside_coding
from ._prices import report_prices
from ._report_activation import activation_notes, activation_section
from ._report_checks import checks_section
from ._report_code import (
    code_measures_section,
    measurement_history,
    measurement_revisions,
    not_measured_rows,
    revision_references,
)
from ._report_cost import costs_section
from ._report_data import (
    DEFAULT_MEASUREMENTS,
    HOST_ROOT_NOTE,
    RESULTS_SCHEMA_VERSION,
    actual_calls,
    arm_order,
    arm_summary,
    attempt_row,
    comparison_identity,
    expected_measures,
    missing_values_for,
    notes_for,
    reused_attempts,
    run_identity,
    summary_metrics,
    token_provenance,
    tokens_dict,
)
from ._report_files import csv_text, json_text, write_csv, write_json
from ._report_html import render_html
from ._report_paired import paired_deltas
from ._report_refs import reference_ratios, references_section
from ._sequential import sequential_section
from ._state import RunState
from ._view import references_from_log

__all__ = ["ReportFiles", "build_report", "csv_text", "json_text", "report_document", "results_document", "write_csv",
           "write_json"]


class ReportFiles(NamedTuple):
    """Where the three report files were written."""

    results_json: Path
    results_csv: Path
    report_html: Path


def results_document(
    config: Mapping[str, Any], state: RunState, *, fallback_name: str,
    prices: Prices | None = None, prices_reason: str | None = "no prices.json beside evaluation.json: dollars are unknown",
    tampered: Mapping[str, str] | None = None,
    price_source: str = "run", price_file: str = "prices.json", price_age_warning: str | None = None,
    references: Mapping[str, Any] | None = None,
    source_only_index: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The results.json document (schema version 2) for a config, a folded state and the run's prices.
    ``tampered`` maps attempt ids whose saved model.patch no longer matches its recorded
    sha256 to the reason; those attempts are reported unknown. ``source_only_index`` is the
    selected source-only index as checked on disk (:func:`source_only_index`); rows show
    source-only grades only from it, and only when it is verified."""
    run = run_identity(config, state, fallback_name)
    arms = arm_order(config, state)
    arm_index = {a: i for i, a in enumerate(arms)}
    live = sorted(
        state.live_attempts(),
        key=lambda a: (a.task, arm_index[a.arm], a.repeat, a.slot, a.attempt_id),
    )
    so_filter = (source_only_index["filter"] if source_only_index is not None
                 and source_only_index["status"] == "verified" else None)
    rows = [attempt_row(a, (tampered or {}).get(a.attempt_id), so_filter, state.current_measures(a)) for a in live]
    tasks = sorted(set(state.created.tasks if state.created else []) | {r["task"] for r in rows})
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if not r["ineligible"]:  # a child on another model or effort: left out of every comparison
            grouped[(r["task"], r["arm"])].append(r)

    expected = expected_measures(run)
    medians = summary_metrics(run)
    missing = [m for r in rows for m in missing_values_for(r, expected)]
    per_task: dict[str, dict[str, Any]] = {}
    for task in tasks:
        per_task[task] = {}
        for arm in arms:
            summary, unknown = arm_summary(grouped.get((task, arm), []), medians)
            per_task[task][arm] = summary
            missing.extend(
                {
                    "scope": "task_arm",
                    "attempt_id": None,
                    "attempt_ids": ids,
                    "task": task,
                    "arm": arm,
                    "field": f"per_task.{f}",
                    "reason": why,
                }
                for f, why, ids in unknown
            )
    discarded = [
        {
            "attempt_id": d.attempt_id,
            "slot": d.slot,
            "task": d.task,
            "arm": d.arm,
            "repeat": d.repeat,
            "replaced_by": d.replaced_by,
            "reason": d.reason,
            "tokens": tokens_dict(d.usage),
        }
        for d in sorted(
            state.discarded, key=lambda d: (d.task, arm_index.get(d.arm, 0), d.repeat, d.attempt_id)
        )
    ]
    from ._report_reviews import review_identity_field, reviews_section

    reviews = reviews_section(state, arms, tasks)
    identity = comparison_identity(config, state, run)
    reviewer = review_identity_field(state)
    if reviewer is not None:  # compare checks reviewer.harness/model/reasoning and review_criteria_sha256
        identity["reviewer"] = reviewer
        identity["review_criteria_sha256"] = (reviews or {}).get("reviewer", {}).get("review_criteria_sha256")
    all_references = _with_revision_references(references, state)
    generating = any(isinstance(t, Mapping) and t.get("generate") is not None
                     for t in (config.get("treatments") or {}).values())
    gen_rows = generation_rows(state.generations) if generating else []
    doc = {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "run": run,
        "comparison_identity": identity,
        "token_provenance": token_provenance(run, rows),
        "arms": arms,
        "tasks": tasks,
        "attempts": rows,
        "per_task": per_task,
        "deltas": paired_deltas(tasks, arms, grouped, confidence_level(config)),
        "missing_values": missing,
        "discarded_attempts": discarded,
        "actual_calls": actual_calls(state, arms),
        "reused_attempts": reused_attempts(state),
        **({"reviews": reviews} if reviews is not None else {}),
        "costs": costs_section(prices, prices_reason, run["model"], rows, tasks, arms, source=price_source,
                               file=price_file, age_warning=price_age_warning,
                               generation=[r for r in gen_rows if r["task"] in tasks], calls=beside_coding(state)),
        # present only when an arm generates its guidance (treatments.<arm>.generate)
        **({"generated": {"sessions": gen_rows, "arms": generation_totals(state.generations)}} if generating else {}),
        "notes": notes_for(run, state, rows) + ([HOST_ROOT_NOTE] if identity.get("allow_host_root") else []) + (
            [f"Source-only grades withheld: {source_only_index['reason']}"]
            if source_only_index is not None and source_only_index["reason"] else []
        ) + activation_notes(activation_section(rows, arms, run["measurements"])),
        "references": all_references,
        "reference_ratios": reference_ratios(
            all_references, per_task, tasks, arms,
            {c.metric: c.unit for c in collected_columns(run["measurements"]) if c.summary}),
        "code_measures": code_measures_section(state, rows, tasks, arms, run["measurements"], all_references,
                                               confidence_level(config)),
        "measurement_history": measurement_history(state),
        "measurement_revisions": measurement_revisions(state),
        "not_measured": not_measured_rows(state),
        "source_only_index": dict(source_only_index) if source_only_index is not None else None,
        # present only when the run selected the activation measure
        **({"activation": act} if (act := activation_section(rows, arms, run["measurements"])) is not None else {}),
        # present only when the run selected the checks measure
        **({"checks": chk} if (chk := checks_section(rows, arms, run["measurements"])) is not None else {}),
    }
    # The headline is a pure function of this document and the run's phase; a run still
    # reporting and the same run finished read the same (byte-identical rebuilds).
    phase = "complete" if state.phase in ("complete", "reporting") else state.phase
    sequential = sequential_section(state)
    if sequential is not None:  # a sequential run (comparison.stopping); a fixed-size run's document is unchanged
        doc["sequential"] = sequential
        doc["notes"] = [*doc["notes"], sequential["sentence"]]  # type: ignore[misc]  # doc is a dict[str, object]; notes is always a list here
    settings = config.get("statistics") or {}
    deltas: dict[str, Any] = doc["deltas"]  # type: ignore[assignment]  # paired_deltas' dict
    for arm, delta in deltas.items():
        delta["summary"]["dollars"] = stats.dollars_summary(doc, arm, delta["against"], confidence_level(config))
    doc["verdicts"] = [msgspec.to_builtins(v) for v in stats.verdicts(
        doc, run_status=phase, equivalence_margin=float(settings.get("equivalence_margin", stats.EQUIVALENCE_MARGIN)))]
    doc["power"] = msgspec.to_builtins(stats.plan(
        len(tasks), int(run["repeats"] or 1), stats.alpha_of(confidence_level(config)),
        power=float(settings.get("power", stats.POWER))))
    return doc


def confidence_level(config: Mapping[str, Any]) -> float:
    """The run's one confidence level (``statistics.confidence_level``; 0.90 for runs frozen before it existed)."""
    return float((config.get("statistics") or {}).get("confidence_level", stats.LEVEL))


def _with_revision_references(references: Mapping[str, Any] | None, state: RunState) -> dict[str, Any]:
    """The references the log recorded (preparation's, with the selected measurement
    revision's over them). A run recorded before reference events existed keeps the lines
    references counted from its frozen patches, with the revision's added."""
    if state.references:
        return references_from_log(state.current_references())
    out = {task: dict(metrics) for task, metrics in (references or {}).items()}
    for task, metrics in revision_references(state).items():
        out.setdefault(task, {}).update(metrics)
    return out


def _write_all(files: dict[Path, Callable[[TextIO], None]]) -> None:
    """Write every report file through a temporary file beside it, then replace them
    together: a folder that cannot be written (read-only, full) raises
    :class:`RunDirError` naming the file, leaves no temporary file, and leaves the earlier
    report files as they were."""
    staged: list[tuple[str, Path]] = []
    path = next(iter(files))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for path, write in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="", buffering=1 << 20) as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)  # mkstemp makes 0600; reports are meant to be shared and served
        for tmp, path in staged:
            os.replace(tmp, path)
    except OSError as exc:
        raise RunDirError(
            f"cannot write {path.parent.name}/{path.name}: {exc.strerror or exc}",
            file=str(path),
            fix=f"make {path.parent} writable and free space on its disk, then run: pluginbench report "
            f"{path.parent.parent}; the earlier report files are unchanged",
        ) from None
    finally:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)


def _read_config(path: Path) -> dict[str, Any]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RunDirError(
            "not a run directory: evaluation.json is missing",
            file=str(path),
            fix="pass the run directory that `pluginbench run` created",
        ) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunDirError(
            f"evaluation.json is not valid JSON: {exc}",
            file=str(path),
            fix="restore the run's frozen evaluation.json; PluginBench never edits it",
        ) from exc
    if not isinstance(raw, dict):
        raise RunDirError(
            "evaluation.json must hold a JSON object",
            file=str(path),
            fix="restore the run's frozen evaluation.json",
        )
    return raw


def _check_settings_bound(rd: RunDir, state: RunState) -> None:
    """evaluation.json is the one its binding names, and the one ``run.created`` (or the
    selected measurement revision) recorded: an edited or re-bound settings file is refused."""
    digest = hashlib.sha256(rd.evaluation.read_bytes()).hexdigest()
    fix = "restore the run's evaluation-binding.json; PluginBench never edits it"
    try:
        binding = json.loads(rd.binding.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return  # no binding (a hand-built evidence folder): nothing names the settings to hold them to
    except (OSError, ValueError) as exc:
        raise RunDirError(f"evaluation-binding.json cannot be read: {exc}", file=str(rd.binding), fix=fix) from None
    if not isinstance(binding, dict):
        raise RunDirError("evaluation-binding.json is not a JSON object",
                          file=str(rd.binding), fix=fix)
    bound = binding.get("evaluation_sha256")
    if bound != digest:
        raise RunDirError("evaluation.json does not match its hash binding", file=str(rd.evaluation),
                          field="evaluation_sha256", fix="the saved settings were edited; restore them or start a new run")
    created = state.created
    if created is not None and created.evaluation_sha256 and digest != (state.revised_evaluation_sha256
                                                                        or created.evaluation_sha256):
        raise RunDirError(
            "evaluation.json is not the settings this run was created with (its hash differs from run.created)",
            file=str(rd.evaluation), field="evaluation_sha256",
            fix="restore the original evaluation.json and evaluation-binding.json, or start a new run with the new settings")


def task_sources(rd: RunDir) -> list[dict[str, Any]] | None:
    """The run's frozen ``tasks.urls`` / ``tasks.dataset`` pins (never resolved again), or None
    for local tasks."""
    if not rd.remote_pins.is_file():
        return None
    from ..tasks import read_pins

    keep = ("task_id", "url", "pinned_url", "commit", "tree", "fingerprint")
    return [{k: getattr(p, k) for k in keep} for p in read_pins(rd.remote_pins)]


def task_dataset(rd: RunDir) -> dict[str, Any] | None:
    """The run's frozen Harbor registry dataset pin (never resolved again), or None."""
    if not rd.remote_dataset.is_file():
        return None
    from ..tasks import read_dataset_pin

    pin = read_dataset_pin(rd.remote_dataset)
    return {"name": pin.name, "version": pin.version, "registry_sha256": pin.registry_sha256,
            "content_hash": pin.content_hash, "tasks": list(pin.tasks)}


def source_only_index(rd: RunDir, state: RunState) -> dict[str, Any] | None:
    """The selected source-only index (the latest ``source_only.selected``) checked against
    its bound SHA-256; only this index is read, earlier revisions' indexes stay unread."""
    selected = state.source_only_selected
    if selected is None:
        return None
    doc = {"filter": selected.filter, "index": selected.index, "sha256": selected.index_sha256,
           "status": "verified", "reason": None}
    try:
        digest = hashlib.sha256((rd.root / selected.index).read_bytes()).hexdigest()
    except OSError:
        return {**doc, "status": "missing",
                "reason": f"{selected.index} is gone; its source-only grades are not reported"}
    if digest != selected.index_sha256:
        return {**doc, "status": "changed",
                "reason": f"{selected.index} has sha256 {digest}, not the {selected.index_sha256} bound in "
                          "events.jsonl when it was selected; its source-only grades are not reported"}
    return doc


def treatment_files(rd: RunDir, state: RunState) -> dict[str, Any]:
    """What was tested: each frozen arm's files (path under its frozen folder, bytes, sha256),
    with the fingerprint, skills and plugins ``treatment.frozen`` recorded."""
    out: dict[str, Any] = {}
    for arm, ev in sorted(state.frozen_treatments.items()):
        root = rd.frozen_treatment(arm)
        files = []
        if root.is_dir():
            for p in sorted(q for q in root.rglob("*") if q.is_file() and not q.is_symlink()):
                files.append({"path": p.relative_to(root).as_posix(), "bytes": p.stat().st_size, "sha256": sha256_file(p)})
        out[arm] = {"fingerprint": ev.fingerprint, "guidance_bytes": ev.guidance_bytes,
                    "skills": list(ev.skills), "plugins": list(ev.plugins), "files": files}
    return out


def build_report(run_dir: Path) -> ReportFiles:
    """Rebuild ``report/`` of ``run_dir`` from its config and event log; returns the paths."""
    rd = RunDir(Path(run_dir))
    files = ReportFiles(
        rd.report_dir / "results.json", rd.report_dir / "results.csv", rd.report_dir / "report.html"
    )
    # The fold and the document are millions of objects that live until the files are
    # written, and they hold no cycles: the cyclic collector would only rescan them.
    with paused_gc():
        doc = report_document(rd)  # the fold is gone once it returns: the writers need only the document
        _write_all({files.results_json: lambda out: write_json(out, doc),
                    files.results_csv: lambda out: write_csv(out, doc),
                    files.report_html: lambda out: _write_text(out, render_html(doc))})
    return files


def _write_text(out: TextIO, text: str) -> None:
    out.write(text)


def report_document(rd: RunDir) -> dict[str, Any]:
    """The results.json document of a run directory, folded from its config, log and frozen
    evidence (refused, as :func:`build_report` is, when any of them is damaged or changed)."""
    config = _read_config(rd.evaluation)
    state = fold_checked_log(rd).state  # a missing, empty or damaged log never overwrites a report
    _check_settings_bound(rd, state)  # nor do settings edited after the run froze them
    check_frozen(rd, state)  # nor does evidence changed since it was frozen
    attempts = os.path.join(rd.evidence, "attempts")  # rd.attempt(id) / "model.patch", without a Path per attempt
    tampered = {
        a.attempt_id: why for a in state.live_attempts()
        if a.state == "complete" and a.captured
        and (why := patch_mismatch(os.path.join(attempts, a.attempt_id, "model.patch"), a.patch_sha256)) is not None
    }
    choice = report_prices(rd.root, state.created.at if state.created else None)
    doc = results_document(
        config, state, fallback_name=rd.root.resolve().name, prices=choice.prices, prices_reason=choice.reason,
        price_source=choice.source, price_file=choice.file, price_age_warning=choice.age_warning,
        tampered=tampered, source_only_index=source_only_index(rd, state),
        references=references_section(rd.evidence / "frozen" / "tasks", state.created.tasks if state.created else [],
                                      config.get("measurements", DEFAULT_MEASUREMENTS)),
    )
    sources = task_sources(rd)
    if sources is not None:
        doc["run"]["task_sources"] = sources
    dataset = task_dataset(rd)
    if dataset is not None:
        doc["run"]["task_dataset"] = dataset
    doc["treatments"] = treatment_files(rd, state)
    return doc
