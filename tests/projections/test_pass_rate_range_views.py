"""The pass-rate range on report.html and the cross-agent page: coloured by the exact test at 0, and a decided
direction beside a range that includes 0 always says why."""

from __future__ import annotations

from pluginbench import stats
from pluginbench.projections._cross import _fmt_cell
from pluginbench.projections._report_html import _interval_text

# +37.5 pp over 8 tasks: sign-flip p 0.0078 at 0, the bounded-mean range -15.2 pp to +68.1 pp
UP = [1 / 3, 2 / 3, 1 / 3, 0.0, 1 / 3, 1 / 3, 2 / 3, 1 / 3]


def _summary(diffs: list[float]) -> dict:
    e = stats.difference_interval(diffs)
    return {"estimate": e.estimate, "low": e.low, "high": e.high, "tasks": e.tasks, "status": e.status,
            "level": e.level, "min_tasks": e.min_tasks, "p_greater": e.p_greater, "p_less": e.p_less}


def test_a_decided_difference_is_coloured_and_explains_a_range_through_zero() -> None:
    """The estimate is coloured when the sign-flip p at 0 is within α, and the range that includes 0 carries the note."""
    html = _interval_text(_summary(UP), stats.format_pp, higher_is_better=True, centre=0)
    assert '<span class="good">+37.5 pp</span>' in html
    assert "[-15.2 pp, +68.1 pp] 90% range, no symmetry assumed, 8 tasks; sign-flip test at 0: p = 0.0078" in html
    assert "the range includes 0 as it assumes nothing" in html


def test_an_undecided_difference_is_plain_and_has_no_note() -> None:
    """Six ties: p = 1 at 0, nothing coloured, no note (the range includes 0 and nothing is claimed)."""
    html = _interval_text(_summary([0.0] * 6), stats.format_pp, higher_is_better=True, centre=0)
    assert 'class="good"' not in html and 'class="bad"' not in html
    assert "p = 1.00" in html and "includes 0" not in html


def test_a_summary_without_p_keeps_the_interval_reading() -> None:
    """A token summary (no sign-flip p carried) is still coloured by its interval and labelled a CI."""
    tok = {"estimate": 1.2, "low": 1.1, "high": 1.3, "tasks": 6, "status": "ok", "level": 0.9, "min_tasks": 5}
    html = _interval_text(tok, stats.format_ratio, higher_is_better=False, centre=1)
    assert 'class="bad"' in html and "90% CI, 6 tasks" in html


def test_cross_agent_cell_explains_better_beside_a_range_through_zero() -> None:
    """A better cell whose range includes 0 says why; one whose range excludes 0 does not."""
    cell = {"verdict": "better", "effect_pp": 37.5, "low_pp": -15.2, "high_pp": 68.1, "tasks": 8,
            "headline": "h", "harness": "claude"}
    assert "the range includes 0" in _fmt_cell(cell)
    assert "the range includes 0" not in _fmt_cell({**cell, "low_pp": 2.0})
