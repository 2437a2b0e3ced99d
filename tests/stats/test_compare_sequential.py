"""``compare`` on a sequential run: the same run's treatment-vs-vanilla pair shows and gates on
the run's anytime-valid interval over the tasks that entered the sequence; other pairs and
fixed-size runs keep the fixed-size interval (bounded mean, betting)."""

from __future__ import annotations

from typing import Any

from pluginbench import stats
from pluginbench.stats._bounded import METHOD as BOUNDED_METHOD
from tests.stats._compare_data import gates, package

BOUND = {"name": "better", "against": "vanilla", "direction": "higher", "correctness": "passes", "bound": "lower",
         "margin": 0.0}
TASKS = [f"t{i}" for i in range(12)]


def _sequence(low: float, tasks: list[str]) -> dict[str, Any]:
    points = [{"task": t, "tasks": i + 1, "estimate": 1.0, "low": low if i == len(tasks) - 1 else -1.0, "high": 1.0}
              for i, t in enumerate(tasks)]
    return {"rule": {"level": 0.9}, "gates": [{"arm": "td", "metric": "pass_rate", "points": points}]}


def _packages(run: str = "run-a") -> list[stats.Package]:
    # ten tasks ran (+1 each); the stop left t10 and t11 unrun (their attempts are not complete)
    done = {t: ["pass"] for t in TASKS[:10]}
    unrun = {t: [None] for t in TASKS[10:]}
    vanilla = package("vanilla", {**{t: ["fail"] for t in TASKS[:10]}, **unrun}, run="run-a")
    return [vanilla, package("td", {**done, **unrun}, run=run)]


def test_the_same_runs_pair_uses_the_sequence_and_drops_unrun_tasks() -> None:
    """The all-tasks pair shows the sequence's last interval and method, lists only sequenced tasks, and its bound gate passes at the endpoint."""
    result = stats.compare_packages(_packages(), gates(BOUND), {}, sequences={"run-a": _sequence(0.2, TASKS[:10])})
    split = next(s for s in result.splits if s.name == "all")
    pair = split.paired[0]
    assert pair.pass_rate.method == stats.sequential_method() and pair.pass_rate.low == 0.2
    assert [p.task for p in pair.per_task] == TASKS[:10] and not pair.excluded("pass_rate")
    row = split.gates[0]
    assert row.status == stats.PASSED and "anytime-valid" in row.limit and row.candidate_value == 0.2
    assert "anytime-valid" in stats.verdict_of_paired(pair).headline


def test_an_endpoint_not_above_the_margin_fails_the_bound_gate() -> None:
    """A sequence whose lower end is at or below the margin fails the bound gate (decided by the endpoint)."""
    result = stats.compare_packages(_packages(), gates(BOUND), {}, sequences={"run-a": _sequence(0.0, TASKS[:10])})
    row = next(s for s in result.splits if s.name == "all").gates[0]
    assert row.status == stats.FAILED and row.candidate_value == 0.0


def test_pairs_across_runs_and_fixed_size_runs_keep_the_fixed_size_interval() -> None:
    """A treatment from another run, or no saved sequence, is compared with the fixed-size interval (bounded mean; unrun tasks excluded)."""
    for pkgs, seqs in ((_packages(run="run-b"), {"run-a": _sequence(0.2, TASKS[:10])}), (_packages(), {})):
        split = next(s for s in stats.compare_packages(pkgs, gates(BOUND), {}, sequences=seqs).splits if s.name == "all")
        pair = split.paired[0]
        assert pair.pass_rate.method == BOUNDED_METHOD
        assert {p.task for p in pair.excluded("pass_rate")} == set(TASKS[10:])


def test_a_run_with_a_cost_gate_shows_that_sequence_for_dollars() -> None:
    """When the run's sequence has a cost gate, the pair's dollars interval is that sequence's last point (anytime-valid), not the sign-flip one."""
    seq = _sequence(0.2, TASKS[:10])
    seq["gates"].append({"arm": "td", "metric": "cost", "points": [
        {"task": t, "tasks": i + 1, "estimate": 0.5, "low": 0.4, "high": 0.7} for i, t in enumerate(TASKS[:10])]})
    pair = next(s for s in stats.compare_packages(_packages(), gates(BOUND), {}, sequences={"run-a": seq}).splits
                if s.name == "all").paired[0]
    assert pair.dollars is not None and pair.dollars.method == stats.sequential_method()
    assert (pair.dollars.estimate, pair.dollars.low, pair.dollars.high) == (0.5, 0.4, 0.7)
