"""The headline verdict per treatment: its kind and wording, from the same pure function every view renders."""

from __future__ import annotations

from typing import Any

import pytest

from pluginbench.stats import difference_interval, ratio_interval, verdict_for


def doc_of(diffs: list[float], *, complete: int | None = None, usd: tuple[float, float] | None = None) -> dict[str, Any]:
    """A minimal results document: vanilla and 'guided' on len(diffs) tasks with these per-task differences."""
    tasks = [f"t{i:02d}" for i in range(len(diffs))]
    iv, tok = difference_interval(diffs), ratio_interval([1.2] * len(diffs))
    summary = lambda e: {"estimate": e.estimate, "low": e.low, "high": e.high, "tasks": e.tasks,  # noqa: E731
                         "status": e.status, "level": e.level, "min_tasks": e.min_tasks}
    total = 2 * 3 * len(diffs)
    return {
        "arms": ["vanilla", "guided"], "tasks": tasks,
        "run": {"attempts_total": total, "attempts_complete": total if complete is None else complete, "repeats": 3},
        "per_task": {t: {"vanilla": {"passes": 1}, "guided": {"passes": 2}} for t in tasks},
        "deltas": {"guided": {
            "against": "vanilla",
            "per_task": {t: {"pass_rate_difference": d} for t, d in zip(tasks, diffs, strict=True)},
            "summary": {"pass_rate": summary(iv), "tokens": summary(tok)},
        }},
        "attempts": [{"arm": a, "task": t, "attempt_id": f"{t}.{a}.{k}"}
                     for t in tasks for a in ("vanilla", "guided") for k in range(3)],
        "costs": {"prices": {"as_of": "2026-11-01"} if usd else None,
                  "arms": {"vanilla": {"usd": usd[0]}, "guided": {"usd": usd[1]}} if usd else {},
                  # each attempt's share of its arm's dollars (3 repeats per task)
                  "attempts": {f"{t}.{a}.{k}": {"usd": usd[i] / (3 * len(tasks)), "lower_bound": False}
                               for t in tasks for i, a in enumerate(("vanilla", "guided")) for k in range(3)}
                  if usd else {}},
    }


UP = [1 / 3, 2 / 3, 1 / 3, 0.0, 1 / 3, 1 / 3, 2 / 3, 1 / 3]
CASES = [
    # case, diffs, kwargs, kind, words in the headline
    ("better", UP, {}, "better", ["guided is better than vanilla", "+37.5 pp", "sign-flip test at 0: p = 0.0078",
                                     "[90% range, no symmetry assumed: -15.2 pp to +68.1 pp] (the range includes 0",
                                     "tokens ×1.20"]),
    ("worse", [-d for d in UP], {}, "worse", ["guided is worse than vanilla", "-37.5 pp", "p = 0.0078", "the range includes 0"]),
    ("equivalent", [0.0, 0.0, 1 / 30, -1 / 30] * 12, {}, "equivalent",
     ["no difference larger than 8.2 pp against vanilla", "[90% range, no symmetry assumed: -8.2 pp to +8.1 pp]"]),
    # the sign-flip interval of 32 near-ties was ±0.7 pp, but ties do not rule out a 10 pp loss concentrated on
    # a few tasks: the bounded-mean interval shown (±11.9 pp) decides an equivalence claim
    ("near-ties of 32 tasks are not equivalent", [0.0, 0.0, 1 / 30, -1 / 30] * 8, {}, "undetermined",
     ["undetermined", "[90% range, no symmetry assumed: -11.9 pp to +11.9 pp]"]),
    ("six ties are not equivalent", [0.0] * 6, {}, "undetermined",
     ["undetermined", "[90% range, no symmetry assumed: -47.8 pp to +47.8 pp]"]),
    # a decided direction whose range excludes 0 needs no explanation
    ("worse without a note", [-1.0] * 6, {}, "worse", ["p = 0.016 [90% range, no symmetry assumed: -100.0 pp to -7.3 pp]; tokens"]),
    ("undetermined", [1 / 3, -1 / 3, 0.0, 1 / 3, -1 / 3, 2 / 3, 0.0], {}, "undetermined",
     ["undetermined", "more task(s) might decide it (roughly even odds: 7 task(s) say little about the spread)", "detect"]),
    ("too few tasks", [1 / 3, 1 / 3], {}, "undetermined", ["too few tasks for a 90% interval: 2 of 5"]),
    ("partial", UP, {"complete": 10}, "partial", ["no verdict yet", "10 of 48 attempts complete"]),
    ("stopped", UP, {"run_status": "stopped"}, "partial", ["no verdict yet", "run stopped"]),
    ("not exercised", UP, {"exercised": False, "exercised_reason": "no skill loaded in 24 of 24 attempts"},
     "not_exercised", ["no verdict", "not exercised: no skill loaded"]),
]


@pytest.mark.parametrize(("case", "diffs", "kw", "kind", "words"), CASES, ids=[c[0] for c in CASES])
def test_headline_wording(case: str, diffs: list[float], kw: dict[str, Any], kind: str, words: list[str]) -> None:
    """Each verdict kind reads as its own sentence with the effect, its interval and the tokens."""
    complete = kw.pop("complete", None)
    v = verdict_for(doc_of(diffs, complete=complete), "guided", **kw)
    assert v.kind == kind, v.headline
    for w in words:
        assert w in v.headline, (w, v.headline)
    assert "e-" not in v.headline  # no floating-point noise


def test_dollars_per_solved_task_and_cost_ratio() -> None:
    """With prices, the verdict gives the dollar ratio and the cost per solved task of both arms, dated."""
    v = verdict_for(doc_of(UP, usd=(2.0, 3.0)), "guided")
    assert v.cost_ratio == pytest.approx(1.5)
    assert v.usd_per_solved == pytest.approx(3.0 / 16) and v.usd_per_solved_against == pytest.approx(2.0 / 8)
    assert "dollars per attempt ×1.50" in v.headline and "prices of 2026-11-01" in v.headline


def test_cost_ratio_is_mean_dollars_per_attempt() -> None:
    """The dollar ratio divides mean dollars per attempt, so an arm with twice the attempts is not twice the cost;
    it carries its sign-flip interval, and a task with an attempt of unknown dollars is left out, named."""
    doc = doc_of(UP, usd=(2.0, 3.0))
    per = 3.0 / 24
    for k in range(3, 27):  # guided: 24 more attempts on t00 at the same dollars each
        doc["attempts"].append({"arm": "guided", "task": "t00", "attempt_id": f"t00.guided.{k}"})
        doc["costs"]["attempts"][f"t00.guided.{k}"] = {"usd": per, "lower_bound": False}
    v = verdict_for(doc, "guided")
    assert v.cost_ratio == pytest.approx(1.5) and v.cost_low == pytest.approx(1.5, abs=1e-5)
    assert "dollars per attempt ×1.50 [×1.50 to ×1.50]" in v.headline
    doc["costs"]["attempts"]["t01.vanilla.0"] = {"usd": None, "lower_bound": False}
    from pluginbench.stats import dollars_summary
    d = dollars_summary(doc, "guided", "vanilla", 0.9)
    assert d["tasks"] == 7 and d["excluded"] == [
        {"task": "t01", "reason": "vanilla: 1 of 3 attempt(s) without exact dollars"}]


def test_bundled_table_is_named_beside_the_dollars() -> None:
    """Dollars priced by the bundled table say so, with its date, and a stale table says it is old."""
    doc = doc_of(UP, usd=(2.0, 3.0))
    doc["costs"]["table"] = {"source": "bundled", "as_of": "2026-11-01", "age_warning": "old"}
    v = verdict_for(doc, "guided")
    assert "(prices of 2026-11-01, bundled table, older than 90 days at the run's date)" in v.headline


def test_undetermined_says_how_many_more_tasks() -> None:
    """An undetermined verdict says how many more tasks would likely decide it, and the sentence carries that count."""
    v = verdict_for(doc_of([1 / 3, -1 / 3, 0.0, 1 / 3, -1 / 3, 2 / 3, 0.0]), "guided")
    assert v.kind == "undetermined" and v.more_tasks is not None and v.more_tasks > 0
    assert f"about {v.more_tasks} more task(s)" in v.headline


def test_the_activation_section_decides_not_exercised() -> None:
    """verdicts() reads the activation measure's per-arm summary: a package no attempt used reads not exercised;
    one that was used keeps its verdict; a run without activation says nothing about it."""
    from pluginbench.stats import verdicts

    doc = doc_of(UP)
    assert verdicts(doc)[0].exercised is None
    doc["activation"] = {"per_arm": {"guided": {"exercised": False, "any": {"used": 0, "not_used": 22, "unknown": 2}}}}
    v = verdicts(doc)[0]
    assert v.kind == "not_exercised" and "none of its 22 attempt(s) with a transcript" in v.headline, v.headline
    doc["activation"]["per_arm"]["guided"] = {"exercised": True, "any": {"used": 20, "not_used": 4, "unknown": 0}}
    v = verdicts(doc)[0]
    assert v.kind == "better" and v.exercised is True


def test_holm_keeps_the_family_of_better_claims_at_alpha() -> None:
    """With several treatments against vanilla a better reading is claimed only when Holm's step-down correction keeps
    it: two treatments each at p = 3.5% (better alone) both read undetermined and say why; beside a strong one the
    same treatment is compared with 5% (step-down) and stays better; a single treatment is never corrected."""
    from pluginbench.stats import sign_flip_test, verdicts

    weak = [1 / 3] * 7 + [-1 / 3, 0.0, 0.0]
    assert sign_flip_test(weak, alternative="greater").p == pytest.approx(0.03515625)

    def family(first: list[float]) -> dict[str, Any]:
        doc = doc_of(first)
        doc["arms"].append("weak")
        doc["deltas"]["weak"] = {**doc["deltas"]["guided"], "per_task": {
            t: {"pass_rate_difference": d} for t, d in zip(doc["tasks"], weak, strict=True)}}
        return {v.treatment: v for v in verdicts(doc)}

    assert verdicts(doc_of(weak))[0].kind == "better"  # one treatment: unchanged
    both = family(list(reversed(weak)))
    assert [both[a].kind for a in ("guided", "weak")] == ["undetermined", "undetermined"], both["weak"].headline
    assert ("not claimed better: with 2 treatments against one comparator, Holm's correction stopped at its "
            "threshold p <= 0.025 and this one's sign-flip p is 0.035") in both["weak"].headline, both["weak"].headline
    strong = family(UP + [1 / 3, 1 / 3])
    assert [strong[a].kind for a in ("guided", "weak")] == ["better", "better"], strong["weak"].headline
