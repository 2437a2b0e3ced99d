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



@pytest.mark.parametrize("estimate", [1.0, 0.5, 0.0, -1.0])
def test_too_few_tasks_note_stays_inside_the_plot(tmp_path, estimate: float) -> None:
    """The 'too few tasks for an interval' note sits on the side of the summary dot that has room, so it ends inside the plot width."""
    import re

    from pluginbench.projections._report_plots import WIDTH

    doc = load(sample_run(tmp_path / "run"))
    doc["deltas"]["guided"]["summary"]["pass_rate"].update(status="too_few_tasks", estimate=estimate, low=None, high=None)
    svg = forest_plot(doc, "guided")
    note = re.search(r'<text class="excluded" x="([0-9.]+)"( text-anchor="end")? [^>]*>too few tasks for an interval<', svg)
    assert note is not None, svg
    x, anchored_end = float(note.group(1)), note.group(2) is not None
    width = 170  # the note's width at the report's 12 px font, generously
    assert (x <= WIDTH and x - width >= 0) if anchored_end else (x + width <= WIDTH)


PRICES = {"as_of": "2026-11-01", "models": {"model-x": {"input_per_million": 3.0, "cached_input_per_million": 0.3, "output_per_million": 15.0}}}


def test_report_prices_attempts_tasks_and_arms_from_prices_json(tmp_path) -> None:
    """With a dated prices.json beside evaluation.json the report has dollars per attempt, task × arm and arm,
    each with its basis; an attempt with unknown tokens has unknown dollars, and so do the sums that count it."""
    import json

    from pluginbench.events._types import Usage
    from tests.projections.test_report import UNKNOWN_USAGE, RunBuilder

    usage = Usage(status="exact", input_tokens=1_000_000, cached_input_tokens=400_000, output_tokens=100_000, total_tokens=1_100_000)
    b = RunBuilder(tmp_path / "run", ["t1", "t2"])
    b.complete("t1", "vanilla", "pass", usage)
    b.complete("t1", "guided", "pass", usage)
    b.complete("t2", "vanilla", "fail", usage)
    b.complete("t2", "guided", "pass", UNKNOWN_USAGE)
    root = b.close()
    (root / "prices.json").write_text(json.dumps(PRICES))
    doc = load(root)
    costs = doc["costs"]
    assert costs["prices"]["as_of"] == "2026-11-01" and costs["reason"] is None
    c = costs["attempts"]["t1.vanilla.0"]
    assert c["usd"] == pytest.approx(3.42) and "as of 2026-11-01" in c["basis"]  # 600k×3 + 400k×0.3 + 100k×15 per M
    assert costs["per_task"]["t1"]["guided"]["usd"] == pytest.approx(3.42)
    assert costs["arms"]["vanilla"]["usd"] == pytest.approx(6.84)
    assert costs["attempts"]["t2.guided.0"]["usd"] is None
    assert costs["arms"]["guided"]["usd"] is None and "1 of 2 attempts" in costs["arms"]["guided"]["reason"]
    html = (root / "report" / "report.html").read_text()
    assert 'id="cost-arms"' in html and 'id="cost-pass-rate"' in html and "$6.8400" in html


def test_report_without_or_with_bad_prices_says_why(tmp_path) -> None:
    """Without prices.json and a model the bundled table lacks, every dollar figure is unknown with the reason
    (and no cost plot is drawn); an invalid prices.json is never replaced by the bundled table: it names its field and fix."""
    root = sample_run(tmp_path / "run")
    doc = load(root)
    assert doc["costs"]["table"]["source"] == "bundled" and doc["costs"]["arms"]["vanilla"]["usd"] is None
    assert 'id="cost-pass-rate"' not in (root / "report" / "report.html").read_text()
    (root / "prices.json").write_text('{"as_of": "yesterday", "models": {}}')
    doc = load(root)
    assert doc["costs"]["prices"] is None and "field as_of" in doc["costs"]["reason"]
    assert doc["costs"]["table"]["source"] == "none"


def test_report_command_warns_on_stderr_about_an_unusable_prices_json(tmp_path) -> None:
    """pluginbench report still builds the report (exit 0) but says on stderr that the prices.json it found is invalid, naming the field; no warning without one."""
    from typer.testing import CliRunner

    from pluginbench.actors import create_run
    from pluginbench.cli import app
    from pluginbench.config import load as load_config
    from tests.runs_helpers import write_config

    config = write_config(tmp_path, tasks=["roman-numerals"], repeats=1)
    root = create_run(load_config(config), tmp_path / "run").root
    quiet = CliRunner().invoke(app, ["report", str(root)])
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr
    (root / "prices.json").write_text('{"as_of": "yesterday", "models": {}}')
    res = CliRunner().invoke(app, ["report", str(root)])
    assert res.exit_code == 0, res.output
    assert "report:" in res.stdout
    assert "warning: prices.json is invalid" in res.stderr and "field as_of" in res.stderr


def test_a_run_without_prices_json_gets_dollars_from_the_bundled_table_with_its_date(tmp_path) -> None:
    """A run of a pinned model with no prices.json is priced by the bundled table: results.json records
    the table (bundled, its file and date) and report.html shows that date beside the dollars."""
    from pluginbench.events._types import Usage
    from pluginbench.stats import bundled_prices
    from tests.projections.test_report import RunBuilder

    table = bundled_prices()
    usage = Usage(status="exact", input_tokens=1_000_000, cached_input_tokens=400_000, output_tokens=100_000, total_tokens=1_100_000)
    b = RunBuilder(tmp_path / "run", ["t1"], model="claude-sonnet-4-5")
    b.complete("t1", "vanilla", "pass", usage)
    b.complete("t1", "guided", "pass", usage)
    root = b.close()
    doc = load(root)
    costs = doc["costs"]
    assert costs["table"] == {"source": "bundled", "file": "pluginbench/stats/prices.json", "as_of": table.as_of,
                              "age_warning": None}
    row = table.models["claude-sonnet-4-5"]
    expected = (600_000 * row.input_per_million + 400_000 * row.cached_input_per_million
                + 100_000 * row.output_per_million) / 1_000_000
    assert costs["arms"]["vanilla"]["usd"] == pytest.approx(expected)
    assert "the bundled price table as of " + table.as_of in costs["attempts"]["t1.vanilla.0"]["basis"]
    html = (root / "report" / "report.html").read_text()
    assert f"Cost against pass rate (prices of {table.as_of}, bundled table)" in html
    assert "Prices from the bundled price table" in html and f"as of <strong>{table.as_of}</strong>" in html
    before = (root / "report" / "results.json").read_bytes(), html
    load(root)  # a rebuild is byte-identical
    assert ((root / "report" / "results.json").read_bytes(), (root / "report" / "report.html").read_text()) == before


def test_a_run_whose_date_is_long_after_the_table_warns_and_its_own_prices_json_wins(tmp_path) -> None:
    """An unknown model gets unknown dollars naming the bundled table; a run's own prices.json overrides the
    bundled table and an old one, 90+ days before run.created, carries the age warning in results.json and report.html."""
    import json

    root = sample_run(tmp_path / "run")
    doc = load(root)
    assert doc["costs"]["table"]["source"] == "bundled"
    assert doc["costs"]["arms"]["vanilla"]["usd"] is None
    assert "the bundled price table has no row for model 'model-x'" in doc["costs"]["arms"]["vanilla"]["reason"]
    old = {**PRICES, "as_of": "2025-06-01"}  # the sample run was created 2026-01-01
    (root / "prices.json").write_text(json.dumps(old))
    doc = load(root)
    table = doc["costs"]["table"]
    assert table["source"] == "run" and table["as_of"] == "2025-06-01" and doc["costs"]["prices"]["as_of"] == "2025-06-01"
    assert table["age_warning"] and "214 days before this run (2026-01-01)" in table["age_warning"]
    html = (root / "report" / "report.html").read_text()
    assert 'id="prices-age"' in html and "214 days before this run" in html
