"""bench/bench_aa_gates.py at small scale: the new decision stays at or below nominal in A/A data."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from pluginbench import stats

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_aa_gates", ROOT / "bench" / "bench_aa_gates.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_new_method_is_at_or_below_nominal_in_aa_simulation() -> None:
    """With no true difference (200 seeded null experiments at 6 and 12 tasks) each bound gate's new pass rate is
    at most 5% plus three Monte Carlo standard errors, and the bench's table is the same for the same seed."""
    bench = _bench()
    rows = bench.aa_table([6, 12], sims=200, seed=1)
    limit = 0.05 + 3 * (0.05 * 0.95 / 200) ** 0.5
    for r in rows:
        assert r["new"] / r["sims"] <= limit, r
    assert {r["gate"] for r in rows} == set(bench.GATES)
    assert bench.MISMATCHES == []  # the report's intervals decide exactly as the tests they invert
    assert bench.aa_table([6], sims=20, seed=1) == bench.aa_table([6], sims=20, seed=1)


def test_power_plan_matches_simulated_power() -> None:
    """At the tasks the plan asks for +20 pp the simulated power of the margin-0 gate is near 80% (±15 points at 150 sims)."""
    bench = _bench()
    need = stats.tasks_needed(0.20, stats.assumed_sd(3), 0.05)
    assert abs(bench.simulated_power(need, 0.20, sims=150, seed=0) - 0.80) <= 0.15
