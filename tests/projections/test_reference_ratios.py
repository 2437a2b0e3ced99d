"""The pure reference fold and ratio rules of results.json (``references``, ``reference_ratios``)."""

from __future__ import annotations

from pluginbench.events import Measure
from pluginbench.projections._report_refs import reference_ratios
from pluginbench.projections._view import references_from_log


def test_recorded_references_become_rows_and_unknown_is_never_zero() -> None:
    """A measured reference keeps its value; an unknown one is unavailable with its reason, value null."""
    rows = references_from_log({"t": {
        "cyclomatic_added": Measure(value=4, unit="points"),
        "cognitive_added": Measure(value=None, unit="points", status="unknown", reason="analyzer missing"),
    }})
    assert rows == {"t": {
        "cognitive_added": {"status": "unavailable", "value": None, "reason": "analyzer missing"},
        "cyclomatic_added": {"status": "measured", "value": 4, "reason": None},
    }}


def test_ratios_per_task_and_arm_with_reasons_for_every_missing_ratio() -> None:
    """median / reference per task × arm; a negative or zero reference, an unavailable one and an
    unknown median give no ratio, each with its reason; each arm's median of task ratios counts
    only the tasks with a ratio."""
    refs = {
        "a": {"cyclomatic_added": {"status": "measured", "value": 4, "reason": None}},
        "b": {"cyclomatic_added": {"status": "measured", "value": -2, "reason": None}},
        "c": {"cyclomatic_added": {"status": "unavailable", "value": None, "reason": "the task ships no solution/solution.patch"}},
        "d": {"cyclomatic_added": {"status": "measured", "value": 2, "reason": None}},
    }
    per_task = {
        "a": {"vanilla": {"median_cyclomatic_added": 8}, "g": {"median_cyclomatic_added": 2}},
        "b": {"vanilla": {"median_cyclomatic_added": 3}, "g": {"median_cyclomatic_added": 3}},
        "c": {"vanilla": {"median_cyclomatic_added": 3}, "g": {"median_cyclomatic_added": 3}},
        "d": {"vanilla": {"median_cyclomatic_added": None}, "g": {"median_cyclomatic_added": 3}},
    }
    out = reference_ratios(refs, per_task, ["a", "b", "c", "d"], ["vanilla", "g"],
                           {"cyclomatic_added": "points", "cognitive_added": "points"})
    assert set(out) == {"cyclomatic_added"}
    cells = out["cyclomatic_added"]["per_task"]
    assert cells["a"]["vanilla"] == {"median": 8, "reference": 4, "ratio": 2.0, "reason": None}
    assert cells["b"]["g"]["ratio"] is None and "zero or negative" in cells["b"]["g"]["reason"]
    assert cells["c"]["g"]["reason"] == "reference unavailable: the task ships no solution/solution.patch"
    assert cells["d"]["vanilla"]["ratio"] is None and cells["d"]["vanilla"]["reason"] == "no measured value on this task and arm"
    assert out["cyclomatic_added"]["per_arm"] == {
        "vanilla": {"median_of_task_ratios": 2.0, "tasks": 1},
        "g": {"median_of_task_ratios": 1.0, "tasks": 2},  # a: 0.5, d: 1.5
    }
    assert out["cyclomatic_added"]["unit"] == "points"
