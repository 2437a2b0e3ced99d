"""Cost gates (cost_per_pass, cost_ratio) and the one definition of the per-treatment dollar figures."""

from __future__ import annotations

import math

import pytest

from pluginbench.errors import InputError
from pluginbench.stats import (
    DOLLARS,
    AttemptRecord,
    Package,
    cost_gate,
    cost_per_pass,
    cost_ratio,
    parse_gates,
)

P, F, U = "pass", "fail", "unknown"
TABLE = "bundled price table of 2026-12-01"


def pkg(name: str, spec: dict[str, list[tuple[str | None, float | None]]], prices: str | None = TABLE) -> Package:
    """A package from ``{task: [(outcome, dollars), ...]}``; None dollars carry a reason."""
    rows = tuple(
        AttemptRecord(f"{t}.{name}.{i}", t, o, {DOLLARS: usd}, {} if usd is not None else {DOLLARS: "no row for model 'm'"})
        for t, attempts in spec.items() for i, (o, usd) in enumerate(attempts)
    )
    return Package(name, "run", rows, prices=prices)


def gate(cost: str, factor: float | None = None):
    g = {"name": cost, "cost": cost, "against": "vanilla", "direction": "lower"}
    if factor is not None:
        g["factor"] = factor
    return parse_gates({"count_overlap_passes": True, "gates": [g]}, "gates.yaml").gates[0]


def test_definitions() -> None:
    """cost_ratio divides mean dollars per attempt; cost_per_pass is total dollars over passes; unknown stays unknown."""
    assert cost_ratio(6.0, 6, 2.0, 4) == pytest.approx(2.0)
    assert cost_ratio(None, 6, 2.0, 4) is None and cost_ratio(1.0, 1, 0.0, 1) is None and cost_ratio(1.0, 0, 1.0, 1) is None
    assert cost_per_pass(3.0, 4) == pytest.approx(0.75)
    assert cost_per_pass(3.0, 0) is None and cost_per_pass(None, 2) is None


def SIX(usd: float) -> dict[str, list[tuple[str | None, float | None]]]:
    """Six tasks, two attempts each, every attempt costing ``usd``."""
    return {f"t{i}": [(P, usd), (F, usd)] for i in range(6)}


CASES = [
    # id, gate, candidate, comparator, status, detail fragment
    ("ratio within factor on every task passes", ("cost_ratio", 1.2), SIX(1.1), SIX(1.0), "pass", "×1.10"),
    ("ratio above factor fails", ("cost_ratio", None), SIX(1.5), SIX(1.0), "fail", "×1.50"),
    ("identical dollars at factor 1 fail: a point ratio on the limit is not shown below it", ("cost_ratio", None),
     SIX(1.0), SIX(1.0), "fail", "p = 1"),
    ("a point ratio below the factor on too few tasks is undetermined", ("cost_ratio", 1.2),
     {"a": [(P, 1.1), (F, 1.1)]}, {"a": [(P, 1.0), (P, 1.0)]}, "undetermined", "too few tasks"),
    ("cheaper per pass passes", ("cost_per_pass", None), {"a": [(P, 1.0), (P, 1.0)]}, {"a": [(P, 1.0), (F, 1.0)]},
     "pass", "candidate $1.00 ($2.00 / 2)"),
    ("dearer per pass fails", ("cost_per_pass", 1.5), {"a": [(P, 2.0), (F, 2.0)]}, {"a": [(P, 1.0), (P, 1.0)]},
     "fail", "total dollars / passing attempts"),
    ("no pass at all on the candidate fails", ("cost_per_pass", None), {"a": [(F, 1.0)]}, {"a": [(P, 1.0)]},
     "fail", "unbounded (no pass)"),
    ("no pass on either side is undetermined", ("cost_per_pass", None), {"a": [(F, 1.0)]}, {"a": [(F, 1.0)]},
     "undetermined", "no pass on either side"),
    ("unknown correctness that decides it is undetermined", ("cost_per_pass", None),
     {"a": [(P, 1.0), (U, 1.0)]}, {"a": [(P, 0.8), (F, 0.8)]}, "undetermined", "unknown correctness decides the gate"),
    ("unknown dollars are undetermined, never passed", ("cost_ratio", 10.0), {"a": [(P, None), (P, 1.0)]},
     {"a": [(P, 1.0), (P, 1.0)]}, "undetermined", "candidate: 1 of 2 attempt(s) have unknown dollars (no row for model 'm')"),
    ("a one-sided task is undetermined", ("cost_ratio", None), {"a": [(P, 1.0)], "b": [(P, 1.0)]},
     {"a": [(P, 1.0)]}, "undetermined", "attempts from only one of the two packages on: b"),
]


@pytest.mark.parametrize(("case", "g", "cand", "comp", "status", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_cost_gate_rules(case, g, cand, comp, status, fragment) -> None:
    """Each cost gate passes, fails or is undetermined by its rule, and says why."""
    tasks = sorted(set(cand) | set(comp))
    row = cost_gate(gate(*g), pkg("candidate", cand), pkg("vanilla", comp), tasks, True)
    assert row.status == status, row.detail
    assert fragment in row.detail, row.detail
    assert row.kind == "cost"


def test_an_arm_without_prices_is_undetermined() -> None:
    """A package whose run has no price table, or one priced by a different table, never passes a cost gate."""
    cand = pkg("candidate", {"a": [(P, 1.0)]})
    for comp in (pkg("vanilla", {"a": [(P, 1.0)]}, prices=None),
                 pkg("vanilla", {"a": [(P, 1.0)]}, prices="the run's prices.json of 2025-01-01")):
        row = cost_gate(gate("cost_ratio", 5.0), cand, comp, ["a"], True)
        assert row.status == "undetermined" and "priced by different tables" in row.detail


def test_cost_per_pass_value_is_the_point_value() -> None:
    """The gate row carries both sides' dollars per pass, infinite ones as None."""
    row = cost_gate(gate("cost_per_pass"), pkg("candidate", {"a": [(F, 1.0)]}), pkg("vanilla", {"a": [(P, 2.0)]}), ["a"], True)
    assert row.candidate_value is None and row.comparator_value == pytest.approx(2.0)
    assert not math.isnan(row.comparator_value)


BAD = [
    ("unknown cost name", {"cost": "cost_per_passes"}, "gates[0].cost", "cost_per_pass, cost_ratio"),
    ("cost beside metrics", {"cost": "cost_ratio", "metrics": ["Input tokens"]}, "gates[0].cost", "exactly one"),
    ("cost gate the wrong way", {"cost": "cost_ratio", "direction": "higher"}, "gates[0].direction", "direction: lower"),
    ("cost gate with a statistic", {"cost": "cost_ratio", "statistic": "total"}, "gates[0].statistic", "cannot use statistic"),
    ("cost named as a metric", {"metrics": ["cost_ratio"], "statistic": "total", "cost": None}, "gates[0].metrics[0]",
     "cost: cost_ratio"),
]


@pytest.mark.parametrize(("case", "over", "field", "needle"), BAD, ids=[b[0] for b in BAD])
def test_bad_cost_gates_name_the_field(case, over, field, needle) -> None:
    """A malformed cost gate is an InputError (exit 2) naming the file, the field and the fix."""
    g = {"name": "c", "cost": "cost_ratio", "against": "vanilla", "direction": "lower", **over}
    g = {k: v for k, v in g.items() if v is not None}
    with pytest.raises(InputError) as info:
        parse_gates({"count_overlap_passes": True, "gates": [g]}, "ci/gates.yaml")
    err = info.value
    assert err.file == "ci/gates.yaml" and err.field == field
    assert needle in err.message + " " + (err.fix or ""), (err.message, err.fix)
