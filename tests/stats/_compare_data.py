"""Builders of compare-core inputs for the table-driven gate tests."""

from __future__ import annotations

from pluginbench.stats import AttemptRecord, Package, parse_gates

IN, OUT = "Input tokens", "Output tokens"


def attempt(
    task: str, outcome: str | None = "pass", *, i: int = 0, pkg: str = "p", tokens: tuple[float | None, float | None] = (100, 10),
    **metrics: float | None,
) -> AttemptRecord:
    """One attempt; ``metrics`` keys use underscores for spaces (``Source_lines_added``)."""
    values: dict[str, float | None] = {IN: tokens[0], OUT: tokens[1]}
    values.update({k.replace("_", " "): v for k, v in metrics.items()})
    return AttemptRecord(f"{task}__{pkg}__r{i}", task, outcome, values, {})


def package(name: str, spec: dict[str, list[str | None]], run: str = "run-a", **metric_spec: dict[str, list[float | None]]) -> Package:
    """A package from ``{task: [outcome, ...]}`` plus per-metric ``{task: [value, ...]}``."""
    rows = []
    for task, outcomes in spec.items():
        for i, o in enumerate(outcomes):
            extra = {m: vals[task][i] for m, vals in metric_spec.items() if task in vals}
            rows.append(attempt(task, o, i=i, pkg=name, **extra))
    return Package(name, run, tuple(rows))


def gates(*gate_dicts: dict, overlap: bool = True, splits: dict | None = None):
    raw = {"count_overlap_passes": overlap, "gates": list(gate_dicts)}
    if splits:
        raw["splits"] = splits
    return parse_gates(raw, "gates.yaml")


PASSES = {"name": "passes", "correctness": "passes", "against": "vanilla", "direction": "higher"}
UNKNOWNS = {"name": "unknowns", "correctness": "unknown", "against": "vanilla", "direction": "lower"}
