"""The sequential section as the report, status and dashboard show it: the sentence, the plot
of each gate's interval narrowing over tasks with its boundaries, and the verdict read from
the sequence (not the fixed-N interval); all pure and identical on a rebuild."""

from __future__ import annotations

from pathlib import Path

import msgspec

from pluginbench import stats
from pluginbench.events import RunStopped
from pluginbench.projections import sequential_html, sequential_section
from tests.actors.test_sequential_decide import K, run_tasks, started


def _stopped_section() -> dict[str, object]:
    run = started(40)
    run_tasks(run, range(K))
    run.apply(RunStopped(reason="decided"))
    section = sequential_section(run.state)
    assert section is not None
    return section


def test_the_section_says_the_run_stopped_because_it_was_decided() -> None:
    """A decided, stopped run's section names the task it was decided after and that the interval is anytime-valid."""
    section = _stopped_section()
    assert section["decided"] and section["stopped_by_decision"] and section["decided_after"] == K
    sentence = str(section["sentence"])
    assert sentence.startswith(f"Stopped because it was decided: decided after {K} complete task(s) of 40 planned")
    assert "anytime-valid 90% confidence sequence" in sentence


def test_the_plot_draws_the_band_the_boundaries_and_the_decision() -> None:
    """The figure has the interval band, the estimate, both pass-rate boundaries, the decision line and one table row per task; a rebuild is byte-identical."""
    section = _stopped_section()
    html = sequential_html({"sequential": section})
    assert 'id="sequence-core-pass_rate"' in html and 'class="band"' in html and 'class="estimate"' in html
    assert "no difference +0.0 pp" in html and "smallest effect +5.0 pp" in html
    assert 'class="decided"' in html
    assert html.count("<tr><td>t") == K
    assert html == sequential_html({"sequential": _stopped_section()})


def test_a_fixed_size_run_has_no_section() -> None:
    """Without a stopping rule there is no sequential section (the fixed-size documents are unchanged)."""
    run = started(4, stopping=None)
    run_tasks(run, range(4))
    assert sequential_section(run.state) is None


def test_the_verdict_uses_the_sequence_and_a_decided_stop_is_not_partial() -> None:
    """With doc["sequential"], the verdict's interval is the sequence's last point, labelled anytime-valid, and a stop by decision still gives a verdict."""
    section = _stopped_section()
    gate = section["gates"][0]  # type: ignore[index]
    last = gate["points"][-1]
    doc = {
        "arms": ["vanilla", "core"], "tasks": [], "per_task": {}, "attempts": [], "costs": {},
        "run": {"attempts_total": 80, "attempts_complete": 2 * K, "repeats": 1},
        "deltas": {"core": {"against": "vanilla", "per_task": {}, "summary": {
            "pass_rate": {"estimate": 1.0, "low": 0.9, "high": 1.0, "tasks": K, "level": 0.9, "min_tasks": 5},
            "tokens": {}}}},
        "sequential": section,
    }
    v = stats.verdict_for(doc, "core", run_status="stopped")
    assert v.kind == "better" and v.low == last["low"] and v.high == last["high"]
    assert "90% anytime-valid" in v.headline
    doc["sequential"] = {**section, "stopped_by_decision": False}
    assert stats.verdict_for(doc, "core", run_status="stopped").kind == "partial"


def test_the_dashboard_run_page_draws_the_live_sequence(tmp_path: Path) -> None:
    """A sequential run's page carries the sentence and the report's sequence plot; a fixed-size run's page has neither."""
    from pluginbench.dashboard._html import run_fragment
    from pluginbench.dashboard._views import run_model
    from tests.dashboard._runs import synthetic_run
    from tests.dashboard.test_views import source

    model = run_model(source(synthetic_run(tmp_path / "a", report=False)))
    assert 'id="sequential"' not in run_fragment(model)
    html = run_fragment(msgspec.structs.replace(model, sequential=_stopped_section()))
    assert '<div id="sequential">' in html and 'id="sequence-core-pass_rate"' in html
    assert "Stopped because it was decided" in html


def test_a_cost_gate_and_the_bonferroni_split_are_drawn_and_said() -> None:
    """A run with a cost gate plots the dollars-per-attempt ratio with its own level, names the frozen price row, and states the multiplicity split."""
    from pluginbench.events import Usage
    from tests.actors.test_sequential_decide import COST_SPEC, PRICE, finish_with
    from tests.actors.test_sequential_decide import attempt_id as aid_of

    run = started(12, COST_SPEC)
    dear = Usage(status="exact", input_tokens=1000, cached_input_tokens=200, output_tokens=100, total_tokens=1100)
    cheap = Usage(status="exact", input_tokens=500, cached_input_tokens=100, output_tokens=50, total_tokens=550)
    for t in range(12):
        for arm, outcome, usage in (("vanilla", "fail", dear), ("core", "pass", cheap)):
            a = aid_of(f"t{t:02d}", arm, 1)
            run.start(a)
            finish_with(run, a, outcome, usage)
    section = sequential_section(run.state)
    assert section is not None
    html = sequential_html({"sequential": section})
    assert 'id="sequence-core-cost"' in html and "dollars-per-attempt ratio" in html
    assert "(95% alone, its Bonferroni share)" in html and "Multiplicity: 2 sequences" in html
    assert f"{PRICE.model} row of the config&#x27;s prices table as of {PRICE.as_of}, frozen when the run was created" in html


def test_an_undecided_run_that_ran_its_whole_pool_says_so() -> None:
    """No max_tasks and no decision by the last planned task: the sentence says every planned task ran, not 'not decided yet'."""
    run = started(3)
    run_tasks(run, range(3))
    section = sequential_section(run.state)
    assert section is not None and not section["decided"] and section["pool_done"]
    assert str(section["sentence"]).startswith("Not decided: every planned task ran (3 tasks)")
