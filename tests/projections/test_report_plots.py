"""The report's plots as pure functions of results.json (the browser lane checks the rendering)."""

from __future__ import annotations

import pytest

from pluginbench.projections._report_plots import (
    distribution_plot,
    forest_plot,
    forest_rows,
    nice_ticks,
)
from tests.projections.test_report import load, sample_run


@pytest.mark.parametrize(
    ("top", "ticks"),
    [(1.0, [0.0, 0.5, 1.0]), (29_602.0, [0, 10_000, 20_000]), (0.72, [0.0, 0.2, 0.4, 0.6]), (0.0, [0.0])],
)
def test_nice_ticks_are_round(top: float, ticks: list[float]) -> None:
    """Axis ticks step by 1, 2 or 5 times a power of ten from 0 up to the largest value."""
    assert nice_ticks(top) == pytest.approx(ticks)


def test_forest_rows_carry_newcombe_intervals_and_exclusions(tmp_path) -> None:
    """Each usable task has its difference inside its interval; an excluded task has none and says why."""
    doc = load(sample_run(tmp_path / "run"))
    rows = {r["task"]: r for r in forest_rows(doc, "guided")}
    b = rows["task-b"]  # 0/3 vanilla, 3/3 guided
    assert b["difference"] == 1.0 and b["low"] == pytest.approx(0.2, abs=0.2) and b["high"] == 1.0
    e = rows["task-e"]  # an unknown grade excludes it
    assert e["difference"] is None and e["low"] is None and "unknown correctness" in e["excluded"]


def test_plots_are_deterministic_and_scriptless(tmp_path) -> None:
    """The same document gives the same SVG, with no script and no external reference."""
    doc = load(sample_run(tmp_path / "run"))
    for make in (lambda: forest_plot(doc, "guided"), lambda: distribution_plot(doc, "tokens")):
        svg = make()
        assert svg == make()
        assert "<script" not in svg and "http" not in svg and "href" not in svg
