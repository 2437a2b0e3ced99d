"""Ratio gates divide by the task's reference solution value when the reports carry one."""

from __future__ import annotations

import pytest

from pluginbench.cli._compare_io import references_of
from pluginbench.stats import Package
from pluginbench.stats._gate_eval import metric_gate
from tests.stats._compare_data import gates, package
from tests.stats.test_gate_rules import LINES, SRC

P = "pass"
RATIO = {**LINES, "statistic": "mean_of_task_median_ratios"}


def _with_refs(p: Package, refs: dict[str, tuple[float | None, str | None]]) -> Package:
    return Package(p.name, p.run, p.attempts, {t: {"Source lines added": r} for t, r in refs.items()})


def _pair(refs: dict[str, tuple[float | None, str | None]], cand: dict, comp: dict) -> tuple[Package, Package]:
    c = package("candidate", {t: [P] * len(v) for t, v in cand.items()}, **{SRC: cand})
    v = package("vanilla", {t: [P] * len(v) for t, v in comp.items()}, **{SRC: comp})
    return _with_refs(c, refs), _with_refs(v, refs)


# (id, gate overrides, references, candidate values, comparator values, status, candidate, comparator, detail)
CASES = [
    ("both sides over the reference, within factor", {"factor": 1.1}, {"a": (10, None), "b": (4, None)},
     {"a": [11], "b": [4]}, {"a": [10], "b": [4]}, "pass", (1.1 + 1.0) / 2, 1.0, "over 2 task"),
    ("above factor × comparator's ratio fails", {"factor": 1.0}, {"a": (10, None), "b": (4, None)},
     {"a": [12], "b": [4]}, {"a": [10], "b": [4]}, "fail", 1.1, 1.0, ""),
    ("a reference below reference_floor leaves the task out", {"reference_floor": 5}, {"a": (10, None), "b": (4, None)},
     {"a": [10], "b": [None]}, {"a": [10], "b": [4]}, "pass", 1.0, 1.0, "1 left out"),
    ("an unavailable reference leaves the task out", {}, {"a": (10, None), "b": (None, "no solution.patch")},
     {"a": [10], "b": [3]}, {"a": [10], "b": [4]}, "pass", 1.0, 1.0, "1 left out"),
    ("a zero reference leaves the task out", {}, {"a": (10, None), "b": (0, None)},
     {"a": [10], "b": [3]}, {"a": [10], "b": [4]}, "pass", 1.0, 1.0, "1 left out"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_ratio_gate_uses_the_task_reference(case: tuple) -> None:
    """Each side's mean of task median / reference; the candidate's against factor × the comparator's."""
    _, overrides, refs, cand, comp, status, cv, pv, detail = case
    g = gates({**RATIO, **overrides}).gates[0]
    c, v = _pair(refs, cand, comp)
    res = metric_gate(g, c, v, sorted(set(cand) | set(comp)))
    assert res.status == status, res.detail
    assert res.candidate_value == pytest.approx(cv)
    assert res.comparator_value == pytest.approx(pv)
    assert detail in res.detail
    for t in res.per_task:
        assert t.reference == refs[t.task][0]


def test_left_out_reference_is_named_in_missing_values() -> None:
    """Missing values name the left-out task and the reference's own reason."""
    g = gates(RATIO).gates[0]
    c, v = _pair({"a": (10, None), "b": (None, "the task ships no solution/solution.patch")},
                 {"a": [10], "b": [3]}, {"a": [10], "b": [4]})
    res = metric_gate(g, c, v, ["a", "b"])
    assert any("b: left out" in m and "solution/solution.patch" in m for m in res.missing_values)


def test_without_references_the_comparator_median_is_the_reference() -> None:
    """Reports made before references: the ratio is candidate / comparator median, held against factor."""
    g = gates({**RATIO, "factor": 1.05}).gates[0]
    c = package("candidate", {"a": [P], "b": [P]}, **{SRC: {"a": [10], "b": [6]}})
    v = package("vanilla", {"a": [P], "b": [P]}, **{SRC: {"a": [10], "b": [5]}})
    res = metric_gate(g, c, v, ["a", "b"])
    assert (res.status, res.candidate_value, res.comparator_value) == ("fail", pytest.approx(1.1), None)


def test_results_json_references_map_to_compare_metrics() -> None:
    """results.json references become (value, reason) per compare metric; unavailable is None with its reason."""
    doc = {"references": {"a": {
        "source_lines_added": {"status": "measured", "value": 7, "reason": None},
        "test_lines_added": {"status": "unavailable", "value": None, "reason": "no patch"},
    }}}
    refs = references_of(doc)
    assert refs["a"]["Source lines added"] == (7.0, None)
    assert refs["a"]["Test lines added"] == (None, "no patch")
    assert references_of({}) == {}
