"""``compare``'s paired headline assumes the spread of the runs' own repeats, as their reports do."""

from __future__ import annotations

from pluginbench import stats
from pluginbench.cli._compare import _paired_lines
from tests.stats._compare_data import PASSES, gates, package

TEN = ["pass"] * 6 + ["fail"] * 4


def test_the_paired_headline_of_two_tasks_uses_the_runs_repeats() -> None:
    """Two tasks at ten repeats: the 'more tasks would decide it' count is the one for ten repeats, not the default three."""
    vanilla = package("vanilla", {"a": ["pass"] * 4 + ["fail"] * 6, "b": ["pass"] * 4 + ["fail"] * 6})
    treated = package("td", {"a": TEN, "b": ["pass"] * 5 + ["fail"] * 5})
    split = next(s for s in stats.compare_packages([vanilla, treated], gates(PASSES), {}).splits if s.name == "all")
    pair = split.paired[0]
    at_ten = stats.verdict_of_paired(pair, repeats=10)
    assert at_ten.more_tasks != stats.verdict_of_paired(pair, repeats=3).more_tasks
    assert at_ten.headline in _paired_lines(split)[1]
