"""A/A calibration: identical-content packages resampled from vanilla, false-positive rates per gate."""

from __future__ import annotations

import random

import pytest

from pluginbench.stats import AttemptRecord, Package
from pluginbench.stats._calibrate import AA_TREATMENT, aa_packages, calibrate
from tests.stats._compare_data import IN, OUT, gates

COUNT = {"name": "passes", "correctness": "passes", "against": "vanilla", "direction": "higher"}
LENIENT = {**COUNT, "name": "lenient", "tolerance": 1000}
TOKENS_EQUAL = {"name": "tokens", "metrics": [IN, OUT], "statistic": "mean_of_task_medians",
                "against": "vanilla", "direction": "lower", "factor": 1.0}
NI = {"name": "ni", "correctness": "passes", "against": "vanilla", "direction": "higher", "bound": "lower", "margin": -0.05}
CEIL = {"name": "ceiling", "metrics": [IN, OUT], "against": "vanilla", "direction": "lower", "bound": "upper", "factor": 1.3}


def simulated_vanilla(tasks: int = 8, repeats: int = 4, seed: int = 11) -> Package:
    """A finished vanilla arm with task-specific pass rates and token spreads (no true treatment effect exists)."""
    rng = random.Random(seed)
    rows = []
    for t in range(tasks):
        p = rng.uniform(0.2, 0.9)
        for r in range(repeats):
            rows.append(AttemptRecord(
                f"t{t}__vanilla__r{r}", f"t{t}", "pass" if rng.random() < p else "fail",
                {IN: float(rng.randint(8_000, 30_000)), OUT: float(rng.randint(500, 3_000))}, {},
            ))
    return Package("vanilla", "runs/sim", tuple(rows))


def test_aa_packages_resample_vanilla_per_task() -> None:
    """Each seed gives vanilla and the A/A treatment the same number of attempts per task, all drawn from that task's vanilla attempts."""
    van = simulated_vanilla()
    a, b = aa_packages(van, seed=3)
    assert (a.name, b.name) == ("vanilla", AA_TREATMENT)
    for task in van.tasks():
        originals = {x.attempt_id: x for x in van.on(task)}
        for pkg in (a, b):
            rows = pkg.on(task)
            assert len(rows) == len(originals)
            for row in rows:
                src = originals[row.attempt_id.split("~")[0]]
                assert (row.task, row.outcome, row.metrics) == (src.task, src.outcome, src.metrics)
    assert aa_packages(van, seed=3)[1].attempts == b.attempts
    assert aa_packages(van, seed=4)[1].attempts != b.attempts


def test_calibration_with_zero_true_difference() -> None:
    """With no true difference, a gate that cannot fail has rate 0, an untolerant token gate fails about half the
    seeds, and the bound gates' false-positive rates are measured against their 5% nominal level."""
    cal = calibrate(simulated_vanilla(), gates(COUNT, LENIENT, TOKENS_EQUAL, NI, CEIL), seeds=200)
    rows = {r.gate: r for r in cal.gates if r.split == "all"}
    assert (cal.seeds, cal.tasks, cal.vanilla_attempts) == (200, 8, 32)
    assert rows["lenient"].false_positive_rate == 0.0 and rows["lenient"].nominal is None
    assert 0.3 <= rows["tokens"].false_positive_rate <= 0.7
    assert 0.0 < rows["passes"].false_positive_rate < 0.7
    for name in ("ni", "ceiling"):
        r = rows[name]
        assert (r.nominal, r.determined, r.undetermined) == (0.05, 200, 0)
        assert 0.0 <= r.false_positive_rate <= 0.10
        assert r.rate_low <= r.false_positive_rate <= r.rate_high
        assert r.exceeds_nominal == (r.rate_low > 0.05)
        assert (r.exceeds_nominal is True) == (f"{name} (all)" in cal.exceeding)


def test_calibration_is_deterministic() -> None:
    """The same run, gates and seed count give the same calibration."""
    g = gates(COUNT, NI)
    assert calibrate(simulated_vanilla(), g, seeds=30) == calibrate(simulated_vanilla(), g, seeds=30)


def test_bound_gate_with_too_few_tasks_is_never_determined() -> None:
    """With fewer than five tasks a 90% bound gate cannot be decided: every seed is undetermined and no rate is claimed."""
    cal = calibrate(simulated_vanilla(tasks=4), gates(NI), seeds=20)
    (row,) = cal.gates
    assert (row.determined, row.undetermined, row.false_positive_rate, row.exceeds_nominal) == (0, 20, None, None)


def test_seeds_must_be_positive() -> None:
    """Zero seeds is refused."""
    with pytest.raises(ValueError):
        calibrate(simulated_vanilla(), gates(COUNT), seeds=0)


def test_bound_gates_are_calibrated_at_their_own_limit() -> None:
    """A non-inferiority gate (margin -5 pp) is judged on A/A data moved onto its margin: it passes such a
    treatment at most about alpha of the time, while a count of "low > 0" would call it near 0% or near 100%."""
    lax = {**NI, "name": "lax", "margin": -0.5}
    cal = calibrate(simulated_vanilla(tasks=12), gates(NI, lax, CEIL), seeds=150)
    rows = {r.gate: r for r in cal.gates if r.split == "all"}
    for name in ("ni", "lax", "ceiling"):
        assert rows[name].determined == 150
        assert rows[name].false_positive_rate <= 0.05 + 3 * (0.05 * 0.95 / 150) ** 0.5, name
    assert "margin" in rows["ni"].definition and "factor" in rows["ceiling"].definition


def test_cost_ratio_gate_is_calibrated_at_its_factor() -> None:
    """A cost_ratio gate is judged like a bound gate: with the treatment's dollars moved onto its factor it passes
    at most about alpha of the time (the old point-ratio rule passed identical arms about half the time)."""
    from pluginbench.stats import DOLLARS

    base = simulated_vanilla(tasks=12)
    priced = Package(base.name, base.run, tuple(a._replace(metrics={**a.metrics, DOLLARS: (a.metrics[IN] or 0) * 3e-6})
                                                for a in base.attempts), prices="table")
    ratio = {"name": "cheaper", "cost": "cost_ratio", "against": "vanilla", "direction": "lower", "factor": 1.0}
    cal = calibrate(priced, gates(ratio), seeds=150)
    row = next(r for r in cal.gates if r.split == "all")
    assert row.kind == "cost_ratio" and row.nominal == 0.05 and row.determined == 150
    assert row.false_positive_rate <= 0.05 + 3 * (0.05 * 0.95 / 150) ** 0.5
    assert "factor" in row.definition
