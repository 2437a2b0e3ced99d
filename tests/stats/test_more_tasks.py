"""The undetermined verdict's "more tasks" count is computed for the rules that decide (sign-flip at 0, betting interval)."""

from __future__ import annotations

import numpy as np

from pluginbench.stats import alpha_of, difference_interval, verdict_for
from pluginbench.stats._more_tasks import _decided, more_tasks
from tests.stats.test_verdict import doc_of

NEAR_TIES = [0.0, 0.0, 1 / 30, -1 / 30] * 7 + [0.0, 0.0]  # 30 near-tied tasks: the betting range is about ±12 pp


def test_thirty_near_tied_tasks_need_more_than_one_task_for_equivalence() -> None:
    """30 near-tied tasks are undetermined and the sentence asks for about 15 more, not "about 1 more task"."""
    v = verdict_for(doc_of(NEAR_TIES), "guided")
    assert v.kind == "undetermined"
    assert v.more_tasks is not None and v.more_tasks >= 10
    assert "about 1 more task" not in v.headline
    assert f"about {v.more_tasks} more task(s) would likely decide it" in v.headline


def test_the_count_does_decide_those_ties() -> None:
    """Extended by the count with more near-ties the run is decided equivalent; two more near-ties leave it undetermined."""
    more = verdict_for(doc_of(NEAR_TIES), "guided").more_tasks
    assert more is not None
    ext = NEAR_TIES + ([0.0, 0.0, 1 / 30, -1 / 30] * 200)[:more]
    assert verdict_for(doc_of(ext), "guided").kind == "equivalent"
    assert verdict_for(doc_of(NEAR_TIES + [0.0, 0.0]), "guided").kind == "undetermined"


def test_the_count_is_deterministic_given_the_run() -> None:
    """The same per-task differences give the same count and share every time."""
    d = [1 / 3, -1 / 3, 0.0, 1 / 3, -1 / 3, 2 / 3, 0.0, 0.0, 1 / 3]
    assert more_tasks(d, 0.05, 0.10) == more_tasks(list(d), 0.05, 0.10)


def test_a_count_out_of_reach_is_said_honestly() -> None:
    """Tasks that all differ by a whole ±1 with mean 0 cannot be decided within 500 tasks, and the sentence says so."""
    d = [1.0, -1.0] * 15
    got = more_tasks(d, 0.05, 0.10)
    assert got.more is None and got.probability < 0.8
    v = verdict_for(doc_of(d), "guided")
    assert v.kind == "undetermined" and v.more_tasks is None
    assert "not reachable within 500 tasks" in v.headline


def test_the_simulated_rule_agrees_with_the_verdicts_rules() -> None:
    """The vectorised decision the count simulates says decided exactly when the interval and sign-flip tests do."""
    rng = np.random.RandomState(7)
    alpha = alpha_of(0.90)
    for n in (8, 30, 60):
        for _ in range(15):
            d = list(rng.choice([0.0, 0.0, 0.0, 1 / 3, -1 / 3, 2 / 3, -2 / 3, 0.1, -0.1], size=n) * (rng.rand() < 0.7))
            iv = difference_interval(d)
            assert iv.low is not None and iv.high is not None and iv.p_greater is not None and iv.p_less is not None
            equivalent = max(-iv.low, iv.high) <= 0.10
            direction = min(iv.p_greater, iv.p_less) <= alpha
            sim = bool(_decided(np, np.asarray([d]), alpha, 0.10)[0])
            if equivalent:
                assert sim
            if not (equivalent or direction):
                assert not sim
