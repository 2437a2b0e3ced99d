"""Every gate rule and every undetermined case of "Compare runs", table-driven."""

from __future__ import annotations

import pytest

from pluginbench.stats import compare_packages
from pluginbench.stats._gate_eval import bound_gate, count_gate, metric_gate
from pluginbench.stats._paired import paired_comparison
from tests.stats._compare_data import PASSES, UNKNOWNS, gates, package

P, F, U, OV, E = "pass", "fail", "unknown", "overlap_pass", "empty"

# (id, gate overrides, overlap policy, candidate {task: outcomes}, comparator, status, detail fragment)
COUNT_CASES = [
    ("more passes pass", PASSES, True, {"a": [P, P, P]}, {"a": [P, P, F]}, "pass", "over 1 task"),
    ("fewer passes fail", PASSES, True, {"a": [P, F, F]}, {"a": [P, P, F]}, "fail", "passes"),
    ("tolerance absorbs one", {**PASSES, "tolerance": 1}, True, {"a": [P, F, F]}, {"a": [P, P, F]}, "pass", ""),
    ("tolerance is counted in attempts", {**PASSES, "tolerance": 1}, True, {"a": [F, F, F]}, {"a": [P, P, F]}, "fail", ""),
    (
        "summed over the split",
        PASSES, True, {"a": [P, P], "b": [F, F]}, {"a": [F, F], "b": [P, F]}, "pass", "over 2 task",
    ),
    (
        "per_task checks each task",
        {**PASSES, "per_task": True}, True, {"a": [P, P], "b": [F, F]}, {"a": [F, F], "b": [P, F]}, "fail", "",
    ),
    (
        "a task without attempts from one package is undetermined",
        PASSES, True, {"a": [P, P]}, {"a": [P, P], "b": [P, P]}, "undetermined", "no attempts from candidate on: b",
    ),
    (
        "a split task neither package ran is named as such",
        PASSES, True, {"a": [P, P]}, {"a": [P, P]}, "undetermined", "no attempts from either package on: c",
    ),
    (
        "different attempt counts are undetermined",
        PASSES, True, {"a": [P, P, P, F, F]}, {"a": [P, P, F]}, "undetermined", "different numbers of attempts on: a (5 vs 3)",
    ),
    (
        "unknowns that cannot change the result",
        PASSES, True, {"a": [P, P, U]}, {"a": [P, P, F]}, "pass", "every way of counting them agrees",
    ),
    (
        "candidate unknowns that decide it are undetermined",
        PASSES, True, {"a": [P, U, F]}, {"a": [P, P, F]}, "undetermined", "candidate has 1 unknown(s), vanilla has 0",
    ),
    (
        "comparator unknowns are counted both ways too",
        PASSES, True, {"a": [P, F, F]}, {"a": [P, U, F]}, "undetermined", "vanilla has 1",
    ),
    (
        "unknowns that make it fail every way",
        PASSES, True, {"a": [F, F, U]}, {"a": [P, P, P]}, "fail", "every way",
    ),
    ("counted overlap passes are passes", PASSES, True, {"a": [OV, OV, F]}, {"a": [P, F, F]}, "pass", ""),
    ("uncounted overlap passes are fails, not unknowns", PASSES, False, {"a": [OV, OV, F]}, {"a": [P, F, F]}, "fail", "passes: candidate 0"),
    ("an empty patch is a fail", PASSES, True, {"a": [E, E, P]}, {"a": [P, P, F]}, "fail", ""),
    ("an attempt that is not complete is unknown", PASSES, True, {"a": [P, None, F]}, {"a": [P, P, F]}, "undetermined", "1 unknown"),
    ("unknown gate: more unknowns fail", UNKNOWNS, True, {"a": [P, U, F]}, {"a": [P, P, F]}, "fail", "unknowns: candidate 1, vanilla 0"),
    ("unknown gate: an overlap pass is not an unknown", UNKNOWNS, False, {"a": [OV, P]}, {"a": [P, P]}, "pass", "unknowns: candidate 0"),
    ("unknown gate with tolerance", {**UNKNOWNS, "tolerance": 1}, True, {"a": [U, P]}, {"a": [P, P]}, "pass", ""),
]


@pytest.mark.parametrize(("case", "gate", "overlap", "cand", "comp", "status", "detail"), COUNT_CASES, ids=[c[0] for c in COUNT_CASES])
def test_count_gate_rules(case, gate, overlap, cand, comp, status, detail) -> None:
    """A pass or unknown count gate decides as the product description says, and its detail names why."""
    g = gates(gate, overlap=overlap).gates[0]
    tasks = sorted(set(cand) | set(comp) | ({"c"} if "either package" in detail else set()))
    res = count_gate(g, package("candidate", cand), package("vanilla", comp), tasks, overlap)
    assert res.status == status, res.detail
    assert detail in res.detail


TOKENS = {"name": "tokens", "metrics": ["Input tokens", "Output tokens"], "against": "vanilla", "direction": "lower"}
LINES = {"name": "lines", "metrics": ["Source lines added"], "against": "vanilla", "direction": "lower"}
SRC = "Source_lines_added"

# (id, gate, cand outcomes, cand metric values, comp outcomes, comp metric values, status, value, detail)
METRIC_CASES = [
    (
        "total within factor passes",
        {**LINES, "statistic": "total", "factor": 1.3},
        {"a": [10, 12], "b": [1, 1]}, {"a": [10, 10], "b": [1, 1]}, "pass", 24.0, "total over 2 task",
    ),
    (
        "total beyond factor fails",
        {**LINES, "statistic": "total", "factor": 1.1},
        {"a": [20, 20]}, {"a": [10, 10]}, "fail", 40.0, "",
    ),
    (
        "mean of task medians",
        {**LINES, "statistic": "mean_of_task_medians"},
        {"a": [1, 3, 100], "b": [4, 4, 4]}, {"a": [2, 2, 2], "b": [5, 5, 5]}, "pass", 3.5, "",
    ),
    (
        "higher direction scales the comparator by factor",
        {**LINES, "statistic": "mean_of_task_medians", "direction": "higher", "factor": 1.5},
        {"a": [14, 14]}, {"a": [10, 10]}, "fail", 14.0, "",
    ),
    (
        "mean of task median ratios",
        {**LINES, "statistic": "mean_of_task_median_ratios", "factor": 1.1},
        {"a": [10, 10], "b": [8, 8]}, {"a": [10, 10], "b": [5, 5]}, "fail", 1.3, "",
    ),
    (
        "reference_floor leaves a task out, and its missing values do not count",
        {**LINES, "statistic": "mean_of_task_median_ratios", "reference_floor": 10},
        {"a": [10, 10], "b": [None, 3]}, {"a": [20, 20], "b": [2, 2]}, "pass", 0.5, "1 left out",
    ),
    (
        "a zero reference leaves the task out",
        {**LINES, "statistic": "mean_of_task_median_ratios"},
        {"a": [5, 5], "b": [3, 3]}, {"a": [10, 10], "b": [0, 0]}, "pass", 0.5, "over 1 task",
    ),
    (
        "a negative reference leaves the task out",
        {**LINES, "statistic": "mean_of_task_median_ratios"},
        {"a": [5, 5], "b": [3, 3]}, {"a": [10, 10], "b": [-4, -4]}, "pass", 0.5, "1 left out",
    ),
    (
        "a missing reference leaves the task out",
        {**LINES, "statistic": "mean_of_task_median_ratios"},
        {"a": [5, 5], "b": [3, 3]}, {"a": [10, 10], "b": [None, 4]}, "pass", 0.5, "1 left out",
    ),
    (
        "a candidate attempt without a value is undetermined",
        {**LINES, "statistic": "mean_of_task_medians"},
        {"a": [5, None]}, {"a": [5, 5]}, "undetermined", None,
        "Source lines added missing: candidate measured 1 of 2 assigned attempts; vanilla measured 2 of 2",
    ),
    (
        "total is undetermined by a missing value too",
        {**LINES, "statistic": "total"},
        {"a": [5, 5]}, {"a": [None, 5]}, "undetermined", None, "vanilla measured 1 of 2",
    ),
    (
        "a task never measured makes the gate undetermined",
        {**LINES, "statistic": "total"},
        {"a": [5, 5], "b": [None, None]}, {"a": [5, 5], "b": [None, None]}, "undetermined", None, "measured 2 of 4",
    ),
    (
        "a ratio task with a good reference and a missing candidate value is undetermined",
        {**LINES, "statistic": "mean_of_task_median_ratios"},
        {"a": [None, 5]}, {"a": [5, 5]}, "undetermined", None, "candidate measured 1 of 2",
    ),
    (
        "measured repeat counts that differ are named",
        {**LINES, "statistic": "total", "factor": 2},
        {"a": [5, 5, 5]}, {"a": [5, 5]}, "pass", 15.0, "measured repeat counts differ on: a (3 vs 2)",
    ),
]


@pytest.mark.parametrize(
    ("case", "gate", "cand", "comp", "status", "value", "detail"), METRIC_CASES, ids=[c[0] for c in METRIC_CASES]
)
def test_metric_gate_rules(case, gate, cand, comp, status, value, detail) -> None:
    """A metric gate computes its statistic over tasks, leaves out unusable references, and is undetermined on any missing value."""
    g = gates(gate).gates[0]
    c = package("candidate", {t: [P] * len(v) for t, v in cand.items()}, **{SRC: cand})
    v = package("vanilla", {t: [P] * len(x) for t, x in comp.items()}, **{SRC: comp})
    res = metric_gate(g, c, v, sorted(set(cand) | set(comp)))
    assert res.status == status, res.detail
    if value is not None:
        assert res.candidate_value == pytest.approx(value)
    assert detail in res.detail


def test_ratio_gate_fails_above_factor() -> None:
    """A ratio gate compares the mean of task median ratios with factor: (1 + 1.2) / 2 = 1.1 is not <= 1.05."""
    g = gates({**LINES, "statistic": "mean_of_task_median_ratios", "factor": 1.05}).gates[0]
    c = package("candidate", {"a": [P], "b": [P]}, **{SRC: {"a": [10], "b": [6]}})
    v = package("vanilla", {"a": [P], "b": [P]}, **{SRC: {"a": [10], "b": [5]}})
    res = metric_gate(g, c, v, ["a", "b"])
    assert (res.status, res.candidate_value) == ("fail", pytest.approx(1.1))
    assert [t.ratio for t in res.per_task] == [pytest.approx(1.0), pytest.approx(1.2)]


def test_metric_gate_one_sided_task_is_undetermined() -> None:
    """A metric gate is undetermined when a task it counts has attempts from only one package, and names that task."""
    g = gates({**TOKENS, "statistic": "mean_of_task_medians"}).gates[0]
    c = package("candidate", {"a": [P], "b": [P]})
    v = package("vanilla", {"a": [P]})
    res = metric_gate(g, c, v, ["a", "b"])
    assert res.status == "undetermined"
    assert "attempts from only one of the two packages on: b" in res.detail
    assert res.tasks_compared == 1


def test_missing_values_name_the_attempts_and_reasons() -> None:
    """The gate's missing values name each attempt without a value, and each left-out ratio task with its reason."""
    g = gates({**LINES, "statistic": "mean_of_task_median_ratios", "reference_floor": 3}).gates[0]
    c = package("candidate", {"a": [P, P], "b": [P]}, **{SRC: {"a": [None, 2], "b": [1]}})
    v = package("vanilla", {"a": [P, P], "b": [P]}, **{SRC: {"a": [4, 4], "b": [1]}})
    res = metric_gate(g, c, v, ["a", "b"])
    assert res.status == "undetermined"
    assert any(m.startswith("a: candidate a__candidate__r0: Source lines added") for m in res.missing_values)
    assert any("b: left out of 'lines'" in m and "below reference_floor 3" in m for m in res.missing_values)


BOUND_P = {"name": "ni", "correctness": "passes", "against": "vanilla", "direction": "higher", "bound": "lower", "margin": -0.05}
BOUND_T = {"name": "ceiling", "metrics": ["Input tokens", "Output tokens"], "against": "vanilla", "direction": "lower", "bound": "upper", "factor": 1.3}


def _bound(gate: dict, cand: dict, comp: dict, cand_tokens=None, comp_tokens=None):
    from tests.stats._compare_data import attempt

    def pkg(name, spec, tok):
        rows = [
            attempt(t, o, i=i, pkg=name, tokens=(tok or {}).get(t, (100, 10)))
            for t, outs in spec.items()
            for i, o in enumerate(outs)
        ]
        from pluginbench.stats import Package

        return Package(name, "r", tuple(rows))

    c, v = pkg("candidate", cand, cand_tokens), pkg("vanilla", comp, comp_tokens)
    tasks = sorted(set(cand) | set(comp))
    g = gates(gate).gates[0]
    return bound_gate(g, c, v, paired_comparison(tasks, c, v, count_overlap_passes=True))


SIX = [f"t{i}" for i in range(6)]
BOUND_CASES = [
    ("too few tasks", BOUND_P, {t: [P] for t in SIX[:4]}, {t: [P] for t in SIX[:4]}, None, "undetermined", "too few tasks: 4"),
    ("an excluded task in the split", BOUND_P, {**{t: [P] for t in SIX}, "t6": [U]}, {t: [P] for t in [*SIX, "t6"]}, None, "undetermined", "t6: candidate: unknown correctness"),
    ("a missing attempt excludes the task", BOUND_P, {t: [P] for t in SIX}, {t: [P] for t in [*SIX, "t6"]}, None, "undetermined", "t6: no attempts in candidate"),
    # six ties cannot rule out a treatment 5 pp worse (one task in twenty always lost): the
    # betting test for a bounded mean decides a non-zero margin, not the sign-flip test
    ("six ties do not meet a -5 point margin", BOUND_P, {t: [P] for t in SIX}, {t: [P] for t in SIX}, None, "fail", "lower bound -47.8 pp by the betting test"),
    ("six clear wins meet a -5 point margin", BOUND_P, {t: [P] for t in SIX}, {t: [F] for t in SIX}, None, "pass", "p = 0.0"),
    ("margin 0 keeps the exact sign-flip test", {**BOUND_P, "margin": 0.0}, {t: [P] for t in SIX}, {t: [F] for t in SIX}, None, "pass", "[+7.3 pp, +100.0 pp] (no symmetry assumed), one-sided sign-flip lower bound +100.0 pp"),
    ("a lower endpoint below the margin fails", BOUND_P, {t: [F] if t == "t0" else [P] for t in SIX}, {t: [P] for t in SIX}, None, "fail", ""),
    ("equal tokens meet a 1.3 ceiling", BOUND_T, {t: [P] for t in SIX}, {t: [P] for t in SIX}, None, "pass", "interval [×1, ×1]"),
    ("double tokens break the ceiling", BOUND_T, {t: [P] for t in SIX}, {t: [P] for t in SIX}, {t: (200, 20) for t in SIX}, "fail", ""),
    ("a missing token count excludes the task", BOUND_T, {t: [P] for t in SIX}, {t: [P] for t in SIX}, {"t3": (None, 20)}, "undetermined", "t3: candidate token total missing"),
]


@pytest.mark.parametrize(("case", "gate", "cand", "comp", "ctok", "status", "detail"), BOUND_CASES, ids=[c[0] for c in BOUND_CASES])
def test_bound_gate_rules(case, gate, cand, comp, ctok, status, detail) -> None:
    """A bound gate passes when its one-sided test at the limit rejects (sign-flip; a non-zero pass-rate margin by the bounded-mean betting test), and is undetermined with too few or excluded tasks."""
    res = _bound(gate, cand, comp, cand_tokens=ctok)
    assert res.status == status, res.detail
    assert detail in res.detail


def test_exit_status_orders_fail_over_undetermined() -> None:
    """compare's exit code is 1 when any gate fails, else 3 when any is undetermined, else 0."""
    cand = package("candidate", {"a": [P, P]})
    van = package("vanilla", {"a": [P, F]})
    ok = compare_packages([cand, van], gates(PASSES), {"run-a": None})
    assert (ok.status, ok.exit_code) == ("pass", 0)
    und = compare_packages(
        [cand, van], gates(PASSES, {**BOUND_P, "name": "b"}), {"run-a": None}
    )
    assert (und.status, und.exit_code) == ("undetermined", 3)
    bad = compare_packages(
        [cand, van], gates({**PASSES, "direction": "lower"}, {**BOUND_P, "name": "b"}), {"run-a": None}
    )
    assert (bad.status, bad.exit_code) == ("fail", 1)


def test_splits_and_all_are_decided_separately() -> None:
    """A named split without an unmeasured task decides the gate while the all section stays undetermined."""
    cand = package("candidate", {"a": [P, P], "b": [P, P]}, **{SRC: {"a": [1, 1], "b": [None, None]}})
    van = package("vanilla", {"a": [P, P], "b": [P, P]}, **{SRC: {"a": [1, 1], "b": [None, None]}})
    res = compare_packages(
        [cand, van], gates({**LINES, "statistic": "total"}, splits={"measured": ["a"]}), {"run-a": None}
    )
    assert [(s.name, s.gates[0].status) for s in res.splits] == [("measured", "pass"), ("all", "undetermined")]


def test_candidate_rows_alone_decide_the_exit_code() -> None:
    """With candidate v2 only v2's gate rows decide: v1 failing against vanilla is shown as context, not an exit 1."""
    from pluginbench.errors import InputError

    van = package("vanilla", {"a": [P, P], "b": [P, P]})
    v1 = package("v1", {"a": [P, F], "b": [P, P]})
    v2 = package("v2", {"a": [P, P], "b": [P, P]})
    g = gates(PASSES, {**PASSES, "name": "v2 vs v1", "against": "v1"})
    assert compare_packages([van, v1, v2], g, {"run-a": None}).exit_code == 1
    res = compare_packages([van, v1, v2], g, {"run-a": None}, candidate="v2")
    assert (res.status, res.exit_code, res.candidate) == ("pass", 0, "v2")
    context = [r for s in res.splits for r in s.gates if not r.deciding]
    assert {(r.candidate, r.against, r.status) for r in context} >= {("v1", "vanilla", "fail")}
    assert all(r.candidate == "v2" for s in res.splits for r in s.gates if r.deciding)
    assert compare_packages([van, v1, v2], g, {"run-a": None}, candidate="v1").exit_code == 1
    with pytest.raises(InputError, match="not one of the compared packages"):
        compare_packages([van, v1, v2], g, {"run-a": None}, candidate="v3")
