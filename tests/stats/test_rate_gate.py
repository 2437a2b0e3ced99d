"""The rate gate: a fixed threshold on a 0/1 share of attempts, decided by the exact one-sided binomial test
(Clopper–Pearson bound shown); unknowns never count as zero; bad gates refused naming the field."""

from __future__ import annotations

import pytest
from scipy import stats as sp

from pluginbench.errors import InputError
from pluginbench.stats import compare_packages, parse_gates
from pluginbench.stats._rate_gate import binomial_tail, clopper_pearson, rate_decision
from pluginbench.stats._records import AttemptRecord, Package

METRIC = "activation:skill:x"
ALLOWED = ("Coding seconds", METRIC, "check:said-done")


def _pkg(name: str, values: list[float | None], tasks: int = 5) -> Package:
    return Package(name, "run", tuple(
        AttemptRecord(f"t{i % tasks}__{name}__r{i}", f"t{i % tasks}", "pass", {METRIC: v},
                      {} if v is not None else {METRIC: "no transcript"})
        for i, v in enumerate(values)))


def _gate(threshold: float = 0.8, direction: str = "higher") -> dict:
    return {"name": "used", "against": "vanilla", "direction": direction, "rate": METRIC, "threshold": threshold}


def _decide(values: list[float | None], **kw: object) -> object:
    gates = parse_gates({"count_overlap_passes": False, "gates": [_gate(**kw)]}, "gates.yaml", ALLOWED)
    result = compare_packages([_pkg("skill", values), _pkg("vanilla", [0.0] * 5)], gates, {})
    [row] = [g for g in result.splits[-1].gates if g.candidate == "skill"]
    return row


@pytest.mark.parametrize(("k", "n", "p"), [(0, 5, 0.3), (3, 5, 0.3), (5, 5, 0.9), (17, 30, 0.5), (28, 30, 0.8),
                                           (0, 1, 0.5), (40, 40, 0.99)])
def test_exact_tails_and_bounds_agree_with_scipy(k: int, n: int, p: float) -> None:
    """The binomial tails and one-sided Clopper–Pearson bounds equal SciPy's binomial and beta quantiles."""
    assert binomial_tail(k, n, p) == pytest.approx(sp.binom.sf(k - 1, n, p), rel=1e-9, abs=1e-15)
    assert binomial_tail(k, n, p, upper=False) == pytest.approx(sp.binom.cdf(k, n, p), rel=1e-9, abs=1e-15)
    lo = sp.beta.ppf(0.05, k, n - k + 1) if k > 0 else 0.0
    hi = sp.beta.ppf(0.95, k + 1, n - k) if k < n else 1.0
    assert clopper_pearson(k, n, 0.05) == pytest.approx(lo, abs=1e-9)
    assert clopper_pearson(k, n, 0.05, lower=False) == pytest.approx(hi, abs=1e-9)


def test_false_pass_rate_on_the_threshold_is_at_most_alpha() -> None:
    """With the true rate exactly on the threshold the gate passes with probability <= alpha (exact, every n)."""
    for threshold in (0.5, 0.8, 0.9):
        for n in range(1, 61):
            fpr = sum(sp.binom.pmf(k, n, threshold) for k in range(n + 1)
                      if rate_decision(k, n, threshold, "higher", 0.90)[0])
            assert fpr <= 0.05 + 1e-12, (threshold, n, fpr)


def test_pass_fail_and_the_shown_bound() -> None:
    """15 of 15 uses clear 0.8 (Clopper–Pearson lower bound shown); 12 of 15 does not (fail, not undetermined)."""
    row = _decide([1.0] * 15)
    assert row.status == "pass" and row.kind == "rate" and row.candidate_value == 1.0
    assert "15 of 15" in row.detail and "Clopper–Pearson lower bound 0.819" in row.detail
    assert row.comparator_value == 0.0 and row.limit.startswith("rate >= 0.8")
    low = _decide([1.0] * 12 + [0.0] * 3)
    assert low.status == "fail" and low.candidate_value == 0.8
    assert _decide([0.0] * 15, threshold=0.3, direction="lower").status == "pass"


def test_unknown_attempts_are_never_zero() -> None:
    """Unknowns are counted against and then for the candidate: decided only when both agree, else undetermined."""
    either = _decide([1.0] * 13 + [None] * 2)
    assert either.status == "undetermined" and "2 attempt(s) unknown" in either.detail
    assert either.missing_values == [f"{METRIC}: no transcript"]
    assert _decide([1.0] * 25 + [None]).status == "pass"
    assert _decide([0.0] * 14 + [None]).status == "fail"
    assert _decide([None] * 5).status == "undetermined"


def test_a_non_share_metric_is_undetermined() -> None:
    """A metric with values other than 0 and 1 is not a rate: undetermined with the reason."""
    row = _decide([1.0, 2.0, 0.0])
    assert row.status == "undetermined" and "not a 0/1 value" in row.detail


@pytest.mark.parametrize(("gate", "field", "needle"), [
    ({"threshold": 1.0}, "threshold", "between 0 and 1"),
    ({"threshold": None}, "threshold", "between 0 and 1"),
    ({"rate": "Tokens of joy"}, "rate", "unknown metric"),
    ({"factor": 1.1}, "factor", "cannot use factor"),
    ({"metrics": ["Coding seconds"]}, "rate", "exactly one of correctness, metrics, cost and rate"),
    ({"rate": None, "metrics": ["Coding seconds"], "statistic": "total"}, "threshold", "belongs to rate gates"),
    ({"per_task": True}, "per_task", "cannot use per_task"),
])
def test_bad_rate_gate_is_refused_naming_the_field(gate: dict, field: str, needle: str) -> None:
    """A rate gate without a threshold in (0, 1), on an unknown metric, or mixed with other kinds is refused."""
    raw = {"count_overlap_passes": False, "gates": [{**_gate(), **gate}]}
    with pytest.raises(InputError) as caught:
        parse_gates(raw, "gates.yaml", ALLOWED)
    assert caught.value.field == f"gates[0].{field}" and needle in str(caught.value)
