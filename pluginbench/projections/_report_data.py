"""The report's content, as one JSON-ready document: a pure function of config and state.

:func:`results_document` turns the frozen config (``evaluation.json`` as a dict) and the
folded :class:`RunState` into the ``results.json`` document (schema version 2). The CSV and
HTML renderings are derived from this document only, so the three files never disagree.

Determinism: every mapping is emitted with sorted keys by the writer, every list has a
fixed order (tasks sorted; arms vanilla first, then treatments in config order; attempts
by task, arm, repeat, slot), and every float is rounded to :data:`DIGITS` places.
Unknown is never zero: an unmeasured value is ``null`` and appears in ``missing_values``
with a reason.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from .. import measures as measure_registry
from .. import stats
from ..config import capability_record_of
from ..events import OUTCOMES, VANILLA, Measure, ModelRecord, Usage
from ..harness_registry import is_simulated
from ._state import Attempt, RunState
from ._view import NATIVE_SESSION_LABEL

RESULTS_SCHEMA_VERSION = 2
DIGITS = 6
TOKEN_FIELDS = (
    ("input", "input_tokens"),
    ("cached_input", "cached_input_tokens"),
    ("uncached_input", "uncached_input_tokens"),
    ("output", "output_tokens"),
    ("reasoning_output", "reasoning_output_tokens"),
    ("total", "total_tokens"),
)
#: what a frozen config without ``measurements`` selected (runs made before the key existed)
DEFAULT_MEASUREMENTS = ("tokens", "time", "lines")
SIMULATED_NOTE = (
    "SIMULATED AGENT: these numbers come from PluginBench's deterministic stand-in agent, "
    "not a real coding agent"
)
PROBE_NOTE = (
    "PROBE RUN: the agent talked to PluginBench's scripted loopback model server, not a real "
    "model; these numbers test the pipeline, not the guidance"
)
UNISOLATED_NOTE = (
    "UNISOLATED RUN: attempts ran without a sandbox (isolation: {isolation}); the agent could read "
    "and change the host, so results may be contaminated"
)


HOST_ROOT_NOTE = (
    "environment.allow_host_root is true: the Docker engine may have mapped each sandbox's root to the "
    "host's root (no user-namespace remapping; each worker's engine_user_namespace is in run.started.runtime), "
    "so an agent shared the host root's per-user kernel limits"
)


def num(x: float | int | None) -> float | int | None:
    """A JSON-safe number: ints as-is, floats rounded to :data:`DIGITS`; non-finite → ``None``."""
    if x is None or isinstance(x, bool):
        return x
    if isinstance(x, int):
        return x
    if not math.isfinite(x):
        return None
    r = round(float(x), DIGITS)
    return 0.0 if r == 0 else r  # no "-0.0" in the output


# ---------------------------------------------------------------- attempt values


def tokens_dict(
    usage: Usage | None, missing_reason: str = "no usage was recorded"
) -> dict[str, Any]:
    if usage is None:
        out: dict[str, Any] = {k: None for k, _ in TOKEN_FIELDS}
        out.update(status="unknown", reason=missing_reason, native_session=None)
        return out
    out = {k: getattr(usage, attr) for k, attr in TOKEN_FIELDS}
    if usage.status == "unknown":  # counters beside an unknown status are not trusted
        out = {k: None for k in out}
    out.update(status=usage.status, reason=usage.reason)
    # An arm whose plugins run command hooks: the total is unknown, the native CLI
    # session's own usage is kept beside it, labelled, never summed into the total.
    native = getattr(usage, "native_session", None)
    out["native_session"] = None if native is None else {**tokens_dict(native), "label": NATIVE_SESSION_LABEL}
    return out


def _measure(m: Measure) -> dict[str, Any]:
    value, status, reason = m.value, m.status, m.reason
    if isinstance(value, float) and not math.isfinite(value):
        value, status, reason = None, "unknown", reason or f"non-finite value ({value!r})"
    if status != "measured":
        value = None
    elif value is None:
        status, reason = "unknown", reason or "no value recorded"
    out = {"value": num(value), "unit": m.unit, "status": status, "reason": reason}
    if m.language is not None or m.analyzer is not None:
        out["language"], out["analyzer"] = m.language, m.analyzer
    return out


def _not_complete_reason(a: Attempt) -> str:
    if a.state == "interrupted":
        return f"attempt interrupted: {a.interrupted_reason or 'no reason recorded'}"
    if a.state == "running":
        return "attempt is still running (or was cut off; resume finishes it)"
    return "attempt has not run yet"


def ineligible_reason(record: ModelRecord | None) -> str | None:
    """Why an attempt with ``record`` is left out of every comparison: a Codex child ran
    on another model or effort (``mixed``); None when it is eligible."""
    if record is not None and record.status == "mixed":
        return record.reason or "a child session ran on another model or effort"
    return None


def attempt_row(a: Attempt, tampered: str | None = None, source_only_filter: str | None = None,
                measures: Mapping[str, Measure] | None = None) -> dict[str, Any]:
    """One live attempt as reported; values of an incomplete attempt are all unknown.
    ``tampered`` is why the saved model.patch no longer matches its recorded sha256: the
    outcome is then unknown with that reason. ``source_only_filter`` is the revision of the
    selected (and verified) source-only index; a grade under any other revision is not shown.
    ``measures`` are the attempt's measures as the selected measurement revision has them
    (default: what the run collected)."""
    complete = a.state == "complete"
    shown = a.measures if measures is None else measures
    outcome = a.outcome if complete else None
    reason = a.outcome_reason
    if complete and outcome is None:
        outcome, reason = "unknown", reason or "attempt completed without a grade"
    if complete and tampered is not None:
        outcome, reason = "unknown", tampered
    return {
        "attempt_id": a.attempt_id,
        "slot": a.slot,
        "task": a.task,
        "arm": a.arm,
        "repeat": a.repeat,
        "state": a.state,
        "outcome": outcome,
        "outcome_reason": reason if complete else _not_complete_reason(a),
        "reward": num(a.reward) if complete and tampered is None else None,
        "native_grading": (
            {k: num(v) for k, v in sorted(a.native_grading.items())}
            if complete and tampered is None and a.native_grading is not None else None
        ),
        "overlap_paths": list(a.overlap_paths) if complete else [],
        **source_only_fields(
            a if complete and tampered is None and a.source_only is not None
            and a.source_only.filter == source_only_filter else None
        ),
        "tokens": tokens_dict(a.usage, "the agent never exited, so no usage was recorded"),
        "coding_seconds": num(a.coding_seconds),
        "measures": {k: _measure(m) for k, m in sorted(shown.items())} if complete else {},
        "evidence": f"evidence/attempts/{a.attempt_id}",
        "reused": a.reused,
        "origin_cohort": a.origin_cohort,
        "model_record": msgspec.to_builtins(a.model_record) if a.model_record is not None else None,
        "ineligible": ineligible_reason(a.model_record),
    }


def source_only_fields(a: Attempt | None) -> dict[str, Any]:
    """``source_only_reward`` (the replay's raw reward; compare it with the raw native reward
    in ``native_grading``, not with ``outcome``) and ``source_only_grading`` (everything the
    grade recorded), or both ``None`` when the attempt has no source-only grade."""
    g = a.source_only if a is not None else None
    if g is None:
        return {"source_only_reward": None, "source_only_grading": None}
    return {
        "source_only_reward": num(g.reward) if g.status == "graded" else None,
        "source_only_grading": {
            "status": g.status,
            "source_only_filter": g.filter,
            "reward": num(g.reward),
            "grading": {k: num(v) for k, v in sorted(g.grading.items())} if g.grading is not None else None,
            "removed_test_files": list(g.removed_test_files),
            "kept_reference_solution_files": list(g.kept_reference_solution_files),
            "kept_test_setup_files": list(g.kept_test_setup_files),
            "filtered_patch_sha256": g.filtered_patch_sha256,
            "nothing_removed": g.nothing_removed,
            "native_result_reused": g.native_result_reused,
            "trusted_test_overlap": list(g.trusted_test_overlap),
            "unavailable": g.reason if g.status == "unavailable" else None,
            "pending": g.reason if g.status == "pending" else None,
            "reason": g.reason,
            "seconds": num(g.seconds),
            "evidence": f"evidence/source-only/filter-{g.filter}/{a.attempt_id}" if a is not None else None,
        },
    }


def io_tokens(row: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """Input + output tokens of an attempt row (the token statistic), or ``None`` and why."""
    t = row["tokens"]
    if t["status"] == "unknown":
        return None, f"token usage unknown: {t['reason'] or 'no reason recorded'}"
    parts = (t["input"], t["output"])
    if any(p is None for p in parts):
        return None, "input or output token count not reported"
    if any(p < 0 for p in parts):
        return None, "negative token count"
    return float(parts[0] + parts[1]), None


def total_tokens(row: Mapping[str, Any]) -> tuple[float | None, str | None]:
    t = row["tokens"]
    if t["status"] == "unknown":
        return None, f"token usage unknown: {t['reason'] or 'no reason recorded'}"
    if t["total"] is None:
        return None, "total token count not reported"
    if t["total"] < 0:
        return None, "negative token count"
    return float(t["total"]), None


def expected_measures(run: Mapping[str, Any]) -> tuple[str, ...]:
    """Measures every complete attempt should carry: the columns of the selected collector
    measures in the registry."""
    return tuple(c.metric for c in measure_registry.collected_columns(run["measurements"]))


def summary_metrics(run: Mapping[str, Any]) -> tuple[str, ...]:
    """The columns each task × arm summary carries a median of (selected, registered)."""
    return tuple(c.metric for c in measure_registry.collected_columns(run["measurements"]) if c.summary)


_FIELDS: dict[str, str] = {}  # one string per field name (missing_values_for)


def missing_values_for(row: Mapping[str, Any], expected: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every unknown value of one attempt row, each with its reason. The entries of one row
    share one ``attempt_ids`` list and each field name is one string for all rows (a
    million-event run has hundreds of thousands of entries): read them, never change them."""
    ids = [row["attempt_id"]]

    def entry(field: str, reason: str | None) -> dict[str, Any]:
        return {
            "scope": "attempt",
            "attempt_id": row["attempt_id"],
            "attempt_ids": ids,
            "task": row["task"],
            "arm": row["arm"],
            "field": _FIELDS.setdefault(field, field),
            "reason": reason or "no reason recorded",
        }

    if row["state"] != "complete":
        return [entry("attempt", row["outcome_reason"])]
    out = []
    if row["outcome"] == "unknown":
        out.append(entry("outcome", row["outcome_reason"]))
    if row["reward"] is None:
        out.append(entry("reward", row["outcome_reason"] or "the verifier reported no reward"))
    t = row["tokens"]
    if t["status"] == "unknown":
        out.append(entry("tokens", t["reason"]))
    else:
        for k, _ in TOKEN_FIELDS:
            if t[k] is None:
                out.append(entry(f"tokens.{k}", t["reason"] or "not reported by the harness"))
            elif t[k] < 0:
                out.append(
                    entry(f"tokens.{k}", f"negative count {t[k]} is not a valid measurement")
                )
    if row["coding_seconds"] is None:
        out.append(entry("coding_seconds", "no coding time was recorded"))
    for name, m in row["measures"].items():
        if m["value"] is None and m["status"] != "not_applicable":  # not applicable is not missing
            out.append(entry(f"measures.{name}", m["reason"]))
    for name in expected:
        if name not in row["measures"]:
            out.append(entry(f"measures.{name}", "not collected for this attempt"))
    return out


# ---------------------------------------------------------------- per task × arm


def _median_of(rows: list[dict[str, Any]], get: Callable[[Mapping[str, Any]], float | None]) -> tuple[float | None, list[str]]:
    """Median over complete rows, or ``None`` with the ids of rows lacking the value."""
    vals, unknown = [], []
    for r in rows:
        v = get(r)
        if v is None:
            unknown.append(r["attempt_id"])
        else:
            vals.append(v)
    if unknown or not vals:
        return None, unknown
    return stats.median(vals), unknown


def _measure_value(name: str) -> Callable[[Mapping[str, Any]], float | None]:
    def get(r: Mapping[str, Any]) -> float | None:
        m = r["measures"].get(name)
        return None if m is None else m["value"]

    return get


def arm_summary(
    rows: list[dict[str, Any]], medians_of: tuple[str, ...] = (),
) -> tuple[dict[str, Any], list[tuple[str, str, list[str]]]]:
    """Counts, pass rate, Wilson 95% and medians of one task × arm.

    ``medians_of``: the measure columns it carries ``median_<column>`` of (:func:`summary_metrics`).
    Also returns its unknown summary values as ``(field, reason, attempt ids)``.
    """
    done = [r for r in rows if r["state"] == "complete"]
    counts = {o: sum(1 for r in done if r["outcome"] == o) for o in OUTCOMES}
    # An overlap pass is decided but not a confirmed pass: it is in the rate's denominator,
    # counted as a pass only in pass_rate_with_overlap (a gates file decides which counts).
    known = counts["pass"] + counts["overlap_pass"] + counts["fail"] + counts["empty"]
    w = stats.wilson_interval(counts["pass"], known)
    out: dict[str, Any] = {
        "attempts": len(rows),
        "complete": len(done),
        "passes": counts["pass"],
        "overlap_passes": counts["overlap_pass"],
        "fails": counts["fail"],
        "empties": counts["empty"],
        "unknowns": counts["unknown"],
        "pass_rate": num(counts["pass"] / known) if known else None,
        "pass_rate_with_overlap": num((counts["pass"] + counts["overlap_pass"]) / known) if known else None,
        "wilson_95": [num(w.low), num(w.high)] if w else None,
    }
    missing: list[tuple[str, str, list[str]]] = []
    if done and not known:
        missing.append(
            (
                "pass_rate",
                "every complete attempt has unknown correctness",
                [r["attempt_id"] for r in done],
            )
        )
    io = [io_tokens(r)[0] for r in done]
    io_bad = [r["attempt_id"] for r, v in zip(done, io, strict=True) if v is None]
    out["mean_input_output_tokens"] = (
        None if io_bad or not io else num(math.fsum(v for v in io if v is not None) / len(io))
    )
    medians = [
        ("median_total_tokens", lambda r: total_tokens(r)[0]),
        ("median_coding_seconds", lambda r: r["coding_seconds"]),
        *((f"median_{n}", _measure_value(n)) for n in medians_of),
    ]
    unknowns: list[tuple[str, list[str]]] = [("mean_input_output_tokens", io_bad)]
    for field, get in medians:
        value, bad = _median_of(done, get)
        out[field] = num(value)
        unknowns.append((field, bad))
    for field, bad in unknowns:
        if bad:
            missing.append((field, f"unknown for {len(bad)} of {len(done)} complete attempts", bad))
    return out, missing


# ---------------------------------------------------------------- run identity and notes


def run_identity(config: Mapping[str, Any], state: RunState, fallback_name: str) -> dict[str, Any]:
    c = state.created
    runner = config.get("runner") or {}
    env = config.get("environment") or {}
    harness = c.harness if c else runner.get("harness")
    backend = c.backend if c else env.get("backend")
    isolation = c.isolation if c else env.get("isolation")
    live = list(state.live_attempts())
    return {
        "name": config.get("name") or (c.name if c else None) or fallback_name,
        "harness": harness,
        "model": c.model if c else runner.get("model"),
        "reasoning": c.reasoning if c else runner.get("reasoning"),
        "cli_version": (c.harness_version if c and c.harness_version else runner.get("cli_version")),
        "cli_version_source": c.cli_version_source if c else None,
        "backend": backend,
        "isolation": isolation,
        "simulated": bool((c and c.simulated) or is_simulated(str(harness or ""))),
        "probe": bool((c and c.probe) or runner.get("probe")),
        # run.created records the backend's effective isolation label ("bubblewrap",
        # "docker", ...); only "none" (or a config-only view's "auto") is unisolated
        "isolated": isolation not in (None, "", "none", "auto"),
        "seed": c.seed if c else config.get("seed"),
        "repeats": c.repeats if c else config.get("repeats"),
        "jobs": c.jobs if c else config.get("jobs"),
        "timeout_seconds": c.timeout_seconds if c else config.get("timeout_seconds"),
        "capabilities": capability_record_of(dict(config)),
        "measurements": list(config.get("measurements", DEFAULT_MEASUREMENTS)),
        "evaluation_sha256": c.evaluation_sha256 if c else None,
        "pluginbench_version": (c.pluginbench_version or None) if c else None,
        "attempts_total": len(live),
        "attempts_complete": sum(1 for a in live if a.state == "complete"),
    }


def arm_order(config: Mapping[str, Any], state: RunState) -> list[str]:
    """Vanilla first, then treatments in config order, then any other arm seen (sorted)."""
    arms = [VANILLA, *[t for t in (config.get("treatments") or {}) if t != VANILLA]]
    seen = set(state.created.arms) if state.created else set()
    seen |= {a.arm for a in state.attempts.values()}
    return arms + sorted(seen - set(arms))


def actual_calls(state: RunState, arms: list[str]) -> dict[str, Any]:
    """The coding sessions this run actually launched (``agent.launched``): live and
    discarded attempts alike, so a resume's replaced attempts are counted; a reused vanilla
    attempt launched nothing here."""
    called = [a for a in state.attempts.values() if a.launched and not a.reused]
    discarded = {d.attempt_id for d in state.discarded}
    counts = Counter(a.arm for a in called)
    by_arm = {arm: counts.get(arm, 0) for arm in arms}
    for a in called:  # an arm no longer configured still made its calls
        by_arm.setdefault(a.arm, counts[a.arm])
    return {
        "coding_sessions": len(called),
        "by_arm": by_arm,
        "discarded": sum(1 for a in called if a.attempt_id in discarded),
        "planned": len(state.created.slots) if state.created is not None else 0,
    }


def reused_attempts(state: RunState) -> list[dict[str, Any]]:
    """Every live attempt imported from the vanilla cache, with its origin (cohort relative to the cache root)."""
    return [
        {
            "attempt_id": a.attempt_id, "task": a.task, "arm": a.arm, "repeat": a.repeat,
            "origin_cohort": a.origin_cohort, "origin_entry": a.origin_entry,
            "origin_run": a.origin_run, "origin_attempt": a.origin_attempt,
        }
        for a in sorted((a for a in state.live_attempts() if a.reused), key=lambda a: (a.task, a.repeat, a.attempt_id))
    ]


def notes_for(run: Mapping[str, Any], state: RunState, rows: list[dict[str, Any]]) -> list[str]:
    notes = []
    if run["simulated"]:
        notes.append(SIMULATED_NOTE)
    if run["probe"]:
        notes.append(PROBE_NOTE)
    if not run["isolated"]:
        notes.append(UNISOLATED_NOTE.format(isolation=run["isolation"]))
    if state.created is None:
        notes.append("The run has no run.created event yet: there is nothing to report.")
    elif run["attempts_complete"] < run["attempts_total"]:
        notes.append(
            f"Incomplete run: {run['attempts_complete']} of {run['attempts_total']} attempts are "
            "complete. Tasks with missing attempts are excluded from the paired statistics."
        )
    if state.discarded:
        notes.append(
            f"{len(state.discarded)} attempt(s) were discarded and replaced on resume; they and "
            "their token use are listed under discarded_attempts and not counted anywhere else."
        )
    reused = [a for a in state.live_attempts() if a.reused]
    if reused:
        cohorts = sorted({a.origin_cohort or "" for a in reused})
        notes.append(
            f"{len(reused)} vanilla attempt(s) were reused from the vanilla cache ({', '.join(cohorts)}, relative "
            "to the cache root): their patches, tokens and coding time come from an earlier run and were graded "
            "and measured again here. Reused attempts are not fresh independent samples; they are listed under "
            "reused_attempts."
        )
    bounds = [r["attempt_id"] for r in rows if r["tokens"]["status"] == "lower_bound"]
    if bounds:
        notes.append(
            f"Token usage is only a lower bound for {len(bounds)} attempt(s): " + ", ".join(bounds)
        )
    mixed = [r["attempt_id"] for r in rows if r.get("ineligible")]
    if mixed:
        notes.append(
            f"{len(mixed)} attempt(s) are ineligible and left out of every comparison: a child session ran on "
            "another model or effort than the runner's, so the attempt records no model (attempts[].ineligible, "
            "attempts[].model_record): " + ", ".join(mixed)
        )
    hooked = [r["attempt_id"] for r in rows if r["tokens"].get("native_session") is not None]
    if hooked:
        notes.append(
            f"Total token usage is unknown for {len(hooked)} attempt(s) whose arm runs command hooks "
            "(hook subprocesses are unmetered); their native CLI session usage is kept separately "
            "under tokens.native_session: " + ", ".join(hooked)
        )
    notes.append(
        "Pass rates count an empty patch as a failure and leave unknown correctness "
        "out of the rate; an overlap pass (the patch changed paths the hidden tests replace) "
        "is shown beside confirmed passes and counts as a pass only in pass_rate_with_overlap; "
        "token ratios divide mean input + output tokens per task."
    )
    return notes


# ---------------------------------------------------------------- comparison identity


def comparison_identity(config: Mapping[str, Any], state: RunState, run: Mapping[str, Any]) -> dict[str, Any]:
    """What ``compare`` checks before it compares this run's packages with another run's.

    The harness, model, requested reasoning and resolved CLI version; the capabilities;
    each task's frozen fingerprint and effective agent timeout; the measurement settings.
    Guidance, jobs, seed and container limits are deliberately absent: they may differ.
    """
    timeout = run["timeout_seconds"]
    tasks = sorted(state.prepared_tasks)
    return {
        "runner": {"harness": run["harness"], "model": run["model"], "reasoning": run["reasoning"]},
        "harness_version": run["cli_version"],
        # The capability record: settings as the harness applies them and what it cannot
        # enforce (not_enforced), so two runs agree only on the same effective policy.
        "capabilities": run["capabilities"],
        "tasks": {t: state.prepared_tasks[t].fingerprint for t in tasks},
        "task_limits": {
            t: {"effective": {"agent_timeout_seconds": timeout}} for t in tasks
        },
        # What each task's sandboxes could reach (the model endpoint, the web, nothing);
        # a run saved before it was recorded has none.
        "network": {t: dict(net) for t in tasks if (net := state.prepared_tasks[t].network)},
        # What each task's tests/test.sh got from [verifier.env] (task literals with their value,
        # host variables by name only); recorded only for tasks that declare one.
        **({"verifier_env": venv} if (venv := {t: {k: dict(v) for k, v in ve.items()} for t in tasks
                                                if (ve := state.prepared_tasks[t].verifier_env)}) else {}),
        # What every command of each task's sandboxes got from [environment.env] (literals); only for
        # tasks that declare one. Both arms of a run get the same; two runs must agree.
        **({"environment_env": eenv} if (eenv := {t: {k: dict(v) for k, v in ee.items()} for t in tasks
                                                  if (ee := state.prepared_tasks[t].environment_env)}) else {}),
        "measurement_settings": {"measurements": list(run["measurements"])},
        # Arms that started without the repository's own guidance (task_owned: remove);
        # like guidance, recorded here and not required to agree.
        "task_owned": {arm: str(t.get("task_owned", "keep")) for arm, t in sorted((config.get("treatments") or {}).items())
                       if isinstance(t, Mapping) and t.get("task_owned", "keep") != "keep"},
        # Arms whose guidance the agent generated per task (generate): the generating settings and
        # each task's file hash; like guidance, recorded here and not required to agree.
        **({"generated": gen} if (gen := _generated_identity(config, state)) else {}),
        # docker: sandboxes were allowed to run as the host's root (environment.allow_host_root);
        # recorded only when true, not required to agree
        **({"allow_host_root": True} if (config.get("environment") or {}).get("allow_host_root") else {}),
        **measurement_capabilities(state),
    }


def _generated_identity(config: Mapping[str, Any], state: RunState) -> dict[str, Any]:
    """Arm → its ``generate`` settings and task → the generated file's SHA-256 (null: none)."""
    out: dict[str, Any] = {}
    for arm, t in sorted((config.get("treatments") or {}).items()):
        g = t.get("generate") if isinstance(t, Mapping) else None
        if not isinstance(g, Mapping):
            continue
        files: dict[str, str | None] = {}
        for (a, task), gen in sorted(state.generations.by_pair.items()):
            if a == arm:
                files[task] = getattr(gen.result, "sha256", None)
        out[arm] = {"harness": g.get("harness") or config.get("runner", {}).get("harness"), "model": g.get("model"),
                    "reasoning": g.get("reasoning"), "kind": g.get("kind", "instruction_file"),
                    "instruction": "built-in" if g.get("instruction") is None else "custom", "files": files}
    return out


def measurement_capabilities(state: RunState) -> dict[str, Any]:
    """``measurement_capabilities`` (task → measure → readiness state, reason and tool
    version) and ``effective_observer_scripts`` (task → measure → the observer version bound
    to the run, for the measures ready on that task): preparation's readiness rows with the
    selected measurement revision's over them, so a revision's new measures join both."""
    rows = {(r.task, r.measure): r for r in state.measurement_readiness}
    rev = state.selected_measurement()
    if rev is not None:
        rows.update({(r.task, r.measure): r for r in rev.readiness})
    caps: dict[str, dict[str, Any]] = {}
    observers: dict[str, dict[str, str]] = {}
    for (task, measure), r in sorted(rows.items()):
        caps.setdefault(task, {})[measure] = {"state": r.state, "reason": r.reason, "tool_version": r.detail}
        if r.state == "ready" and measure in state.observers:
            observers.setdefault(task, {})[measure] = state.observers[measure]
    return {"measurement_capabilities": caps, "effective_observer_scripts": observers}


def token_provenance(run: Mapping[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Where the attempts' token counts come from, and how many are exact, bounds or unknown."""
    statuses: dict[str, int] = {}
    for r in rows:
        s = r["tokens"]["status"]
        statuses[s] = statuses.get(s, 0) + 1
    return {
        "harness": run["harness"],
        "cli_version": run["cli_version"],
        "statuses": dict(sorted(statuses.items())),
        "lower_bound_attempts": [r["attempt_id"] for r in rows if r["tokens"]["status"] == "lower_bound"],
        "unknown_attempts": [r["attempt_id"] for r in rows if r["tokens"]["status"] == "unknown"],
    }
