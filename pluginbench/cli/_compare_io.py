"""Reading compare's inputs: ``DIR[=ARM,ARM]`` arguments, results.json files, the gates file.

The edge between files and the pure core in :mod:`pluginbench.stats`: every problem is an
:class:`~pluginbench.errors.InputError` naming the file, the field and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import yaml

from ..errors import InputError
from ..measures import all_columns
from ..measures import measures as registered_measures
from ..projections import check_results_version
from ..rundir import RunDir
from ..stats import DOLLARS, AttemptRecord, GatesFile, Package, parse_gates
from ._common import refuse_group

#: results.json token field per gate metric name.
_TOKEN_METRICS = {
    "Input tokens": "input",
    "Cached input tokens": "cached_input",
    "Output tokens": "output",
    "Reasoning output tokens": "reasoning_output",
    "Total tokens": "total",
}
_BASE_METRICS = (*_TOKEN_METRICS, "Coding seconds")


def _measure_metrics() -> dict[str, str]:
    """Gate metric name → results.json measure column, for every registered gateable column."""
    return {c.gate_name: c.metric for c in all_columns() if c.gate_name}


class GateMetrics(tuple[str, ...]):
    """The metric names a gate may list; a name under a family prefix (``activation:``) is one
    too, since its components are only known per run. ``in`` answers for both."""

    families: tuple[str, ...] = ()

    def __contains__(self, name: object) -> bool:
        return super().__contains__(name) or (
            isinstance(name, str) and any(name.startswith(f) and len(name) > len(f) for f in self.families))


def _family_prefixes() -> tuple[str, ...]:
    """Gateable column families: the use-count family of the activation measure (a gate reads
    1 for an attempt that used the component, 0 for one that did not)."""
    return tuple(f.metric for m in registered_measures() for f in m.families if f.unit in ("uses", "pass"))


def gate_metrics() -> tuple[str, ...]:
    """The metric names a gate may list: tokens, coding time, the registered measures' columns
    and ``activation:<component>`` (see :class:`GateMetrics`)."""
    names = GateMetrics((*_BASE_METRICS, *_measure_metrics(), *(f"{f}<component>" for f in _family_prefixes())))
    names.families = _family_prefixes()
    return names


def family_metrics(measures_row: Mapping[str, Any]) -> dict[str, tuple[float | None, str | None]]:
    """Gate values of the family metrics in one attempt's ``measures``: 1 used, 0 not used, None unknown."""
    out: dict[str, tuple[float | None, str | None]] = {}
    for key, m in measures_row.items():
        if any(key.startswith(f) for f in _family_prefixes()) and isinstance(m, Mapping):
            v = _number(m.get("value"))
            out[key] = (None, m.get("reason") or "unknown") if v is None else (1.0 if v > 0 else 0.0, None)
    return out


def load_gates(path: Path) -> GatesFile:
    """The parsed, validated gates file."""
    from ..config import safe_load_unique

    if path.is_dir():
        raise InputError("the gates file is a folder", file=str(path), field="--gates",
                         fix="pass the gates.yaml file itself")
    try:
        raw = safe_load_unique(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(
            "the gates file does not exist", file=str(path), fix="pass --gates with a gates.yaml path"
        ) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(
            f"the gates file is not valid YAML: {getattr(exc, 'problem', None) or exc}".splitlines()[0],
            file=str(path), field=_yaml_where(exc),
            fix="write each key once" if "duplicate key" in str(exc) else "fix the YAML syntax (see docs/compare.md for an example)",
        ) from None
    return parse_gates(raw, str(path), gate_metrics())


def _yaml_where(exc: Exception) -> str | None:
    mark = getattr(exc, "problem_mark", None)
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else None


def check_split_tasks(gates: GatesFile, packages: Any, path: Path) -> None:
    """Every task a split names is in the compared runs: a misspelt one is refused, not left
    undetermined."""
    known = {a.task for p in packages for a in p.attempts}
    for name, tasks in gates.splits.items():
        for i, task in enumerate(tasks):
            if task not in known:
                raise InputError(
                    f"split '{name}' names task {task!r}, which no compared run has",
                    file=str(path), field=f"splits.{name}[{i}]",
                    fix="fix the task's spelling; the runs have: " + ", ".join(sorted(known)[:20]),
                )


def split_argument(arg: str) -> tuple[Path, list[str] | None]:
    """``DIR`` or ``DIR=ARM,ARM`` → the folder and the selected arms (``None``: all)."""
    if "=" not in arg:
        return Path(arg), None
    folder, _, arms = arg.rpartition("=")
    selected = [a.strip() for a in arms.split(",") if a.strip()]
    if not folder or not selected:
        raise InputError(
            f"cannot read the input {arg!r}",
            fix="write a run directory, optionally followed by =ARM,ARM (e.g. runs/a=vanilla,docs)",
        )
    return Path(folder), selected


def read_results(folder: Path) -> tuple[Path, dict[str, Any]]:
    """A run's ``report/results.json`` (or a results.json file given directly)."""
    path = folder if folder.is_file() else folder / "report" / "results.json"
    refuse_group(folder, "compare works within one harness (arms are never compared across harnesses)")
    try:
        doc = msgspec.json.decode(path.read_bytes())
    except FileNotFoundError:
        if not folder.exists():
            raise InputError(
                f"{folder} does not exist", file=str(folder),
                fix="pass a run directory made by `pluginbench run` (for example runs/<run>)",
            ) from None
        if not RunDir(folder.resolve()).is_run():
            raise InputError(
                f"{folder} is not a run directory", file=str(folder),
                fix="pass a folder made by `pluginbench run` (it holds evaluation.json and report/results.json)",
            ) from None
        raise InputError(
            "the run has no report/results.json",
            file=str(path),
            fix=f"build it with `pluginbench report {folder}` (this command rebuilds nothing)",
        ) from None
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        raise InputError(
            f"results.json is not valid JSON: {exc}",
            file=str(path),
            fix=f"rebuild it with `pluginbench report {folder}`",
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("attempts"), list):
        raise InputError(
            "results.json has no attempts list",
            file=str(path),
            field="attempts",
            fix=f"rebuild it with `pluginbench report {folder}`",
        )
    check_results_version(doc, path)
    return path, doc


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _dollars(cost: Mapping[str, Any] | None, no_table: str) -> tuple[float | None, str | None]:
    """An attempt's dollars from results.json ``costs.attempts`` (None with the reason when
    unknown or only a lower bound: a cost gate cannot pass on a floor)."""
    if cost is None:
        return None, no_table
    if cost.get("lower_bound"):
        return None, "only a lower bound was priced (some token counts are a floor)"
    usd = _number(cost.get("usd"))
    return usd, None if usd is not None else str(cost.get("reason") or "unknown dollars")


def price_label(doc: Mapping[str, Any]) -> str | None:
    """Which table priced a results.json's dollars, e.g. "bundled price table of 2026-12-01"."""
    costs = doc.get("costs") or {}
    table = costs.get("table") or {}
    as_of = (costs.get("prices") or {}).get("as_of")
    if as_of is None:
        return None
    kind = "bundled price table" if table.get("source") == "bundled" else "the run's prices.json"
    return f"{kind} of {as_of}"


def attempt_record(row: Mapping[str, Any], cost: Mapping[str, Any] | None = None,
                   no_table: str = "the run has no price table") -> AttemptRecord:
    """One results.json attempt row as the compare core sees it; ``cost`` is its entry in
    ``costs.attempts`` (``no_table`` says why there is none).

    Token counts that are only a lower bound, or unknown, are missing values (a gate
    cannot pass on them); an attempt that is not complete has no outcome.
    """
    metrics: dict[str, float | None] = {}
    reasons: dict[str, str] = {}
    metrics[DOLLARS], why = _dollars(cost, no_table)
    if why is not None:
        reasons[DOLLARS] = why
    tokens = row.get("tokens") or {}
    status = tokens.get("status")
    for name, key in _TOKEN_METRICS.items():
        v = _number(tokens.get(key))
        if status not in ("exact", "unvalidated"):
            v = None
            reasons[name] = (
                "only a lower bound was measured" if status == "lower_bound"
                else tokens.get("reason") or f"token status {status}"
            )
        elif v is None:
            reasons[name] = tokens.get("reason") or "not reported by the harness"
        metrics[name] = v
    metrics["Coding seconds"] = _number(row.get("coding_seconds"))
    if metrics["Coding seconds"] is None:
        reasons["Coding seconds"] = "no coding time was recorded"
    measures = row.get("measures") or {}
    for name, key in _measure_metrics().items():
        m = measures.get(key) or {}
        metrics[name] = _number(m.get("value"))
        if metrics[name] is None:
            reasons[name] = m.get("reason") or "not collected for this attempt"
    for name, (value, why) in family_metrics(measures).items():
        metrics[name] = value
        if why is not None:
            reasons[name] = why
    complete = row.get("state") == "complete"
    return AttemptRecord(
        attempt_id=str(row.get("attempt_id")),
        task=str(row.get("task")),
        outcome=(row.get("outcome") or "unknown") if complete else None,
        metrics=metrics,
        reasons=reasons,
    )


def references_of(doc: Mapping[str, Any]) -> dict[str, dict[str, tuple[float | None, str | None]]]:
    """results.json ``references`` keyed by compare metric names: task → metric → (value, reason)."""
    out: dict[str, dict[str, tuple[float | None, str | None]]] = {}
    for task, refs in (doc.get("references") or {}).items():
        if not isinstance(refs, Mapping):
            continue
        row: dict[str, tuple[float | None, str | None]] = {}
        for name, key in _measure_metrics().items():
            r = refs.get(key)
            if isinstance(r, Mapping):
                value = _number(r.get("value")) if r.get("status") == "measured" else None
                row[name] = (value, None if value is not None else str(r.get("reason") or "unavailable"))
        out[str(task)] = row
    return out


def load_inputs(args: list[str]) -> tuple[list[Package], dict[str, Mapping[str, Any] | None]]:
    """Every package the arguments select, and each run's saved comparison identity."""
    packages: list[Package] = []
    identities: dict[str, Mapping[str, Any] | None] = {}
    for arg in args:
        folder, selected = split_argument(arg)
        path, doc = read_results(folder)
        label = str(folder)
        identities[label] = doc.get("comparison_identity")
        rows = [r for r in doc["attempts"] if isinstance(r, Mapping)]
        arms = list(dict.fromkeys([*(doc.get("arms") or []), *(str(r.get("arm")) for r in rows)]))
        for arm in selected or []:
            if arm not in arms:
                raise InputError(
                    f"the run has no arm {arm!r}",
                    file=str(path),
                    field="arms",
                    fix="select one of: " + ", ".join(arms),
                )
        refs = references_of(doc)
        costs: Mapping[str, Any] = doc["costs"] if isinstance(doc.get("costs"), Mapping) else {}
        priced: Mapping[str, Any] = costs["attempts"] if isinstance(costs.get("attempts"), Mapping) else {}
        no_table = str(costs.get("reason") or "the run's report has no price table (rebuild it with pluginbench report)")
        for arm in selected or arms:
            attempts = tuple(attempt_record(r, priced.get(str(r.get("attempt_id"))), no_table)
                             for r in rows if r.get("arm") == arm)
            packages.append(Package(arm, label, attempts, refs, prices=price_label(doc)))
    return packages, identities


def load_sequences(args: list[str]) -> dict[str, Mapping[str, Any] | None]:
    """Each run's results.json ``sequential`` (a run made with comparison.stopping), by run label."""
    out: dict[str, Mapping[str, Any] | None] = {}
    for arg in args:
        folder, _ = split_argument(arg)
        seq = read_results(folder)[1].get("sequential")
        out[str(folder)] = seq if isinstance(seq, Mapping) else None
    return out


def load_vanilla(folder: Path) -> Package:
    """The vanilla package of a finished run, for A/A calibration."""
    path, doc = read_results(folder)
    costs: Mapping[str, Any] = doc["costs"] if isinstance(doc.get("costs"), Mapping) else {}
    priced: Mapping[str, Any] = costs["attempts"] if isinstance(costs.get("attempts"), Mapping) else {}
    rows = [attempt_record(r, priced.get(str(r.get("attempt_id"))), str(costs.get("reason") or "no price table"))
            for r in doc["attempts"] if isinstance(r, Mapping) and r.get("arm") == "vanilla"]
    if not rows:
        raise InputError(
            "the run has no vanilla attempts to resample",
            file=str(path),
            field="attempts",
            fix="calibrate with a run that has a vanilla arm",
        )
    pending = [a.attempt_id for a in rows if a.outcome is None]
    if pending:
        raise InputError(
            f"the run is not finished: {len(pending)} vanilla attempt(s) are not complete",
            file=str(path),
            fix=f"finish it with `pluginbench run {folder}`, then rebuild the report",
        )
    return Package("vanilla", str(folder), tuple(rows), prices=price_label(doc))
