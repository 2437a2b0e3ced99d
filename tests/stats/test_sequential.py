"""Sequential stopping's pure core: the confidence sequence against the authors' own values,
the per-gate decision table, the run's decision with its bounds, and the simulated plan."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pluginbench import stats
from pluginbench.stats._sequential_sim import expected

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "sequential" / "hedged_reference.json"


def rule(**kw: object) -> stats.StoppingRule:
    base: dict[str, object] = {"level": 0.9, "min_tasks": 1, "max_tasks": None, "smallest_effect": 0.05}
    base.update(kw)
    return stats.StoppingRule(**base)  # type: ignore[arg-type]


def rows(values: list[float | None], tokens: list[float | None] | None = None, arm: str = "t") -> list[stats.TaskValues]:
    toks = tokens or [None] * len(values)
    return [stats.TaskValues(task=f"k{i:03d}", pass_rate={arm: v}, tokens={arm: tok})
            for i, (v, tok) in enumerate(zip(values, toks, strict=True))]


@pytest.mark.parametrize("case", json.loads(REFERENCE.read_text())["cases"], ids=lambda c: c["name"])
def test_the_sequence_equals_the_authors_library_values(case: dict[str, object]) -> None:
    """Every lower and upper end equals what confseq.betting.hedged_cs computed for the same data and alpha."""
    got = stats.confidence_sequence(case["x"], float(case["alpha"]))  # type: ignore[arg-type]
    assert len(got) == len(case["lower"])  # type: ignore[arg-type]
    crosses = int(case.get("crosses_at", len(got)))  # type: ignore[call-overload]
    for (lo, hi), want_lo, want_hi in zip(got[:crosses], case["lower"], case["upper"], strict=False):  # type: ignore[call-overload]
        assert lo == pytest.approx(want_lo, abs=1e-9)
        assert hi == pytest.approx(want_hi, abs=1e-9)
    # where the library's running intersection crosses itself (lower > upper), the fold keeps its last interval
    assert all(point == got[crosses - 1] for point in got[crosses:])


def test_the_fold_resumed_from_a_prefix_equals_the_fold_from_scratch() -> None:
    """Folding one more task onto a cached prefix gives exactly the sequence folded from nothing."""
    xs = [0.5, 1.0, 0.25, 0.75, 1.0, 0.5, 0.0, 1.0] * 4
    stats.confidence_sequence(xs[:-1], 0.1)  # leaves the prefix's fold in the cache
    resumed = stats.confidence_sequence(xs, 0.1)
    fold = stats.BettingFold(0.1)
    scratch = []
    for x in xs:
        fold = fold.push(x)
        scratch.append((fold.low, fold.high))
    assert resumed == scratch


def test_until_decided_gives_the_same_decision_and_stops_folding() -> None:
    """A simulation's early stop reports the same decisions and tasks as the full fold, with no points after them."""
    values: list[float | None] = [1.0, 0.0, 1.0, 0.5, 1.0, 0.0] * 15
    full = stats.sequential_state(rule(), ["t"], rows(values))
    early = stats.sequential_state(rule(), ["t"], rows(values), until_decided=True)
    assert full.decided and early.decided_after == full.decided_after
    assert [g.decision for g in early.gates] == [g.decision for g in full.gates]
    at = early.gates[0].decided_at
    assert at is not None and len(early.gates[0].points) == at < len(full.gates[0].points)


@pytest.mark.parametrize(("metric", "low", "high", "want"), [
    ("pass_rate", 0.01, 0.30, "success"),        # lower end above 0
    ("pass_rate", -0.30, -0.01, "failure"),      # upper end below 0
    ("pass_rate", -0.10, 0.04, "futility"),      # excludes the smallest effect (0.05) but not 0
    ("pass_rate", -0.10, 0.20, None),            # contains 0 and the effect
    ("pass_rate", 0.0, 0.20, None),              # tie at 0: not above it
    ("pass_rate", -0.10, 0.05, None),            # tie at the smallest effect: not excluded
    ("pass_rate", -0.20, 0.0, "futility"),       # tie at 0 from above: not below 0, still futile
    ("tokens", math.log(0.8), math.log(1.1), "success"),   # ratio credibly below the factor 1.2
    ("tokens", math.log(1.3), math.log(1.9), "failure"),   # ratio credibly above it
    ("tokens", math.log(0.9), math.log(1.2), None),        # tie at the factor
])
def test_gate_decision_table(metric: str, low: float, high: float, want: str | None) -> None:
    """One interval gives success, failure, futility or no decision by the documented rule, ties undecided."""
    assert stats.gate_decision(metric, low, high, rule(token_factor=1.2)) == want


def test_a_large_effect_is_decided_success_and_stays_decided() -> None:
    """Every task +1: success after the first task whose sequence excludes 0; later tasks keep the decision."""
    state = stats.sequential_state(rule(), ["t"], rows([1.0] * 30))
    gate = state.gates[0]
    assert state.decided and gate.decision == "success"
    k = state.decided_after
    assert k is not None and 1 < k < 30
    assert gate.points[k - 1].low > 0 >= gate.points[k - 2].low
    assert stats.sequential_state(rule(), ["t"], rows([1.0] * k)).decided_after == k


def test_a_large_loss_is_decided_failure_or_first_futility() -> None:
    """Every task −1: failure when no futility line lies above 0; with one, the interval narrows
    past it first, so futility is decided there and stays decided."""
    assert stats.sequential_state(rule(smallest_effect=0.0), ["t"], rows([-1.0] * 30)).gates[0].decision == "failure"
    gate = stats.sequential_state(rule(), ["t"], rows([-1.0] * 30)).gates[0]
    at = gate.points[(gate.decided_at or 0) - 1]
    assert gate.decision == "futility" and 0 <= at.high < 0.05
    assert any(p.high < 0 for p in gate.points[gate.decided_at or 0:])


def test_futility_when_the_sequence_excludes_the_smallest_effect() -> None:
    """Differences of 0 on many tasks: futility once the upper end is below a smallest effect of 0.3 while 0 stays inside."""
    state = stats.sequential_state(rule(smallest_effect=0.3), ["t"], rows([0.0] * 80))
    gate = state.gates[0]
    assert gate.decision == "futility"
    at = gate.points[(gate.decided_at or 0) - 1]
    assert at.low <= 0 <= at.high < 0.3


def test_min_tasks_holds_back_a_decision() -> None:
    """With min_tasks above the task where it would decide, the decision waits for min_tasks."""
    early = stats.sequential_state(rule(), ["t"], rows([1.0] * 40)).decided_after or 0
    late = stats.sequential_state(rule(min_tasks=early + 5), ["t"], rows([1.0] * 40))
    assert late.decided_after == early + 5


def test_max_tasks_is_reported_and_ties_stay_undecided() -> None:
    """No effect over few tasks: nothing is decided and at_max says the cap was reached."""
    state = stats.sequential_state(rule(max_tasks=10), ["t"], rows([0.0, 1.0, -1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0]))
    assert not state.decided and state.at_max and state.decided_after is None


def test_unknown_tasks_are_left_out_not_counted_as_zero() -> None:
    """A task with unknown correctness adds no point to the sequence; the known tasks alone decide."""
    values: list[float | None] = [1.0, None] * 20
    gate = stats.sequential_state(rule(), ["t"], rows(values)).gates[0]
    assert gate.points[-1].tasks == 20 and gate.points[-1].estimate == 1.0


def test_every_gate_of_every_treatment_must_be_decided() -> None:
    """With a token gate, a decided pass rate alone does not decide the run; both decided do."""
    r = rule(token_factor=1.5)
    undecided_tokens = stats.sequential_state(r, ["t"], rows([1.0] * 30, [1.0, 2.5] * 15))
    assert undecided_tokens.gates[0].decision == "success" and undecided_tokens.gates[1].decision is None
    assert not undecided_tokens.decided
    both = stats.sequential_state(r, ["t"], rows([1.0] * 40, [0.5] * 40))
    assert both.decided and [g.decision for g in both.gates] == ["success", "success"]
    assert both.decided_after == max(g.decided_after or 0 for g in both.gates)


def test_the_interval_only_narrows() -> None:
    """The running intersection never widens from one task to the next."""
    values = [1.0, 0.0, -1.0, 0.5, 0.0, 1.0, 0.0, 0.5] * 5
    seq = stats.bounded_sequence(values, -1.0, 1.0, 0.9)
    for (lo0, hi0), (lo1, hi1) in zip(seq, seq[1:], strict=False):
        assert lo1 >= lo0 and hi1 <= hi0 and lo1 <= hi1


def test_task_order_is_seeded_and_cut_at_max_tasks() -> None:
    """The same seed gives the same order of the whole pool; max_tasks keeps its first tasks."""
    pool = [f"t{i}" for i in range(12)]
    a = stats.task_order(pool, 7, None)
    assert a == stats.task_order(pool, 7, None) and sorted(a) == sorted(pool) and a != pool
    assert stats.task_order(pool, 7, 5) == a[:5]


def test_the_plan_simulation_is_seeded_and_ranks_effects() -> None:
    """Simulated costs repeat exactly, and a larger effect is decided sooner and more often as success."""
    r = rule(min_tasks=5, max_tasks=60)
    big = expected(r, arms=2, repeats=1, pool=60, effect=0.5, simulations=20)
    assert big == expected(r, arms=2, repeats=1, pool=60, effect=0.5, simulations=20)
    none = expected(r, arms=2, repeats=1, pool=60, effect=0.0, simulations=20)
    assert big.mean_tasks < none.mean_tasks and big.success > none.success
    assert big.mean_attempts == pytest.approx(big.mean_tasks * 2, abs=0.1)


def test_a_batch_folds_each_row_as_the_single_fold_does() -> None:
    """BatchFold's rows (the plan's simulation) give exactly the intervals of one BettingFold per row (the run's decision)."""
    import random

    from pluginbench.stats._betting import BatchFold

    rng = random.Random(11)
    data = [[rng.choice([0.0, 1 / 6, 1 / 3, 0.5, 2 / 3, 5 / 6, 1.0]) for _ in range(70)] for _ in range(6)]
    batch = BatchFold(0.05, len(data))
    singles = [stats.BettingFold(0.05) for _ in data]
    for t in range(70):
        batch = batch.push([row[t] for row in data])
        singles = [f.push(row[t]) for f, row in zip(singles, data, strict=True)]
        assert list(zip(batch.lows().tolist(), batch.highs().tolist(), strict=True)) == [(f.low, f.high) for f in singles]


def test_the_plan_simulation_ends_every_run_as_the_decision_function_does() -> None:
    """Each batched simulated run ends (task count and decision) exactly as sequential_state ends the same data."""
    from pluginbench.stats._sequential_sim import endings, simulated_differences

    r = rule(min_tasks=5, max_tasks=80, token_factor=1.0)  # two gates: the pass-rate gate at half the error
    for effect in (0.0, 0.3):
        diffs = simulated_differences(1, effect, 80, 25, seed=3)
        got = endings(r, diffs)
        for row, end in zip(diffs.tolist(), got, strict=True):
            rows_ = [stats.TaskValues(task=str(i), pass_rate={"t": d}, tokens={"t": None}) for i, d in enumerate(row)]
            gate = stats.sequential_state(r, ["t"], rows_).gates[0]
            want = (gate.decided_after, gate.decision) if gate.decision else (80, "undecided")
            assert end == want


def cost_rows(costs: list[float | None], arm: str = "t") -> list[stats.TaskValues]:
    return [stats.TaskValues(task=f"k{i:03d}", pass_rate={arm: 1.0}, tokens={arm: None}, cost={arm: c})
            for i, c in enumerate(costs)]


@pytest.mark.parametrize(("low", "high", "want"), [
    (math.log(0.5), math.log(0.9), "success"),   # dollars credibly below the factor 1.0
    (math.log(1.1), math.log(2.0), "failure"),   # credibly above
    (math.log(0.8), math.log(1.0), None),        # tie at the factor: not below it
])
def test_cost_gate_decision_table(low: float, high: float, want: str | None) -> None:
    """The cost gate decides on its own factor (cost_factor), like the token gate on token_factor."""
    assert stats.gate_decision("cost", low, high, rule(cost_factor=1.0, token_factor=3.0)) == want


def test_a_cost_gate_is_sequenced_and_unknown_dollars_are_left_out() -> None:
    """With cost_factor the run has a cost gate after pass rate; tasks with unknown dollars add no point, are counted left out, and the run is decided only when the cost gate is."""
    r = rule(cost_factor=1.0)
    state = stats.sequential_state(r, ["t"], cost_rows([0.5, None] * 40))
    assert [g.metric for g in state.gates] == ["pass_rate", "cost"]
    cost = state.gates[1]
    assert cost.left_out == 40 and cost.points[-1].tasks == 40 and cost.points[-1].estimate == pytest.approx(0.5)
    assert cost.decision == "success" and state.decided
    unknown = stats.sequential_state(r, ["t"], cost_rows([None] * 80))
    assert unknown.gates[1].points == [] and unknown.gates[1].decision is None and not unknown.decided


def test_bonferroni_splits_the_error_over_treatments_and_gates() -> None:
    """Two treatments × (pass rate, tokens, cost) share 10% as 10%/6 each; `none` (old logs) keeps 10% per gate; the split widens each interval."""
    r = rule(token_factor=1.2, cost_factor=1.0)
    assert stats.family_size(r, 2) == 6 and stats.gate_alpha(r, 2) == pytest.approx(0.1 / 6)
    assert stats.family_size(rule(multiplicity="none", token_factor=1.2), 3) == 1
    assert stats.gate_alpha(rule(), 1) == pytest.approx(0.1)
    values = [1.0, 0.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0] * 6
    one = stats.sequential_state(rule(), ["a"], rows(values, arm="a")).gates[0]
    both = stats.sequential_state(rule(), ["a", "b"], [
        stats.TaskValues(task=f"k{i}", pass_rate={"a": v, "b": v}, tokens={"a": None, "b": None})
        for i, v in enumerate(values)])
    assert both.family == 2 and both.gates[0].level == pytest.approx(0.95) and one.level == pytest.approx(0.9)
    assert all(p.low <= q.low and p.high >= q.high for p, q in zip(both.gates[0].points, one.points, strict=True))
    assert any(p.low < q.low for p, q in zip(both.gates[0].points, one.points, strict=True))


def test_the_interval_is_where_the_papers_hedged_capital_stays_below_one_over_alpha() -> None:
    """Recomputed directly from Theorem 3 (a product over observations per candidate mean, no fold, no cache): a grid mean strictly inside the interval never had hedged capital reaching 1/α, and one outside it did at some earlier task — the property confseq's own tests check (test_cs_from_martingale)."""
    import numpy as np

    alpha, theta, n = 0.1, 0.5, 60
    x = np.random.default_rng(7).beta(5.0, 4.0, n)
    m = np.arange(1001) / 1000
    sigma2, s_x, s_sq = 0.25, 0.0, 0.0
    log_up = np.zeros_like(m)
    log_down = np.zeros_like(m)
    excluded = np.zeros((n, m.size), dtype=bool)
    limit = math.log(1 / (alpha * theta))
    for t in range(1, n + 1):
        lam = math.sqrt(2 * limit / (sigma2 * t * math.log(1 + t)))
        with np.errstate(divide="ignore"):
            log_up += np.log1p(np.minimum(lam, 0.5 / m) * (x[t - 1] - m))
            log_down += np.log1p(np.minimum(lam, 0.5 / (1 - m)) * (m - x[t - 1]))
        excluded[t - 1] = (log_up > limit) | (log_down > limit)
        s_x += x[t - 1]
        mu = min((0.5 + s_x) / (t + 1), 1.0)
        s_sq += (x[t - 1] - mu) ** 2
        sigma2 = (0.25 + s_sq) / (t + 1)
    ever = np.logical_or.accumulate(excluded, axis=0)
    for t, (lo, hi) in enumerate(stats.confidence_sequence(x.tolist(), alpha)):
        inside = (m > lo + 1e-3 + 1e-12) & (m < hi - 1e-3 - 1e-12)
        outside = (m < lo - 1e-12) | (m > hi + 1e-12)
        assert not ever[t][inside].any()
        assert ever[t][outside].all()
