"""The report's SVG plots opened in Debian's Chromium (Selenium + chromium-driver): every element is
rendered with a real size, placed where its value says, and readable without the picture."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pluginbench.projections._report import build_report
from tests._prereq import require
from tests.projections.test_report import sample_run

pytestmark = pytest.mark.browser

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,1600")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict]]:
    require(shutil.which("chromium") is not None and Path(DRIVER).exists(), "chromium and chromium-driver (tools/install-chromium.sh)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    tmp = tmp_path_factory.mktemp("plots")
    root = sample_run(tmp / "run")
    (root / "prices.json").write_text(json.dumps({"as_of": "2026-11-01", "models": {"model-x": {
        "input_per_million": 3.0, "cached_input_per_million": 0.3, "output_per_million": 15.0}}}))
    files = build_report(root)
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={tmp / 'profile'}")
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        driver.get(files.report_html.as_uri())
        yield driver, json.loads(files.results_json.read_text())
    finally:
        driver.quit()


def bbox(driver: Any, css: str) -> list[dict[str, float]]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => {"
        " const b = e.getBBox(); return {x: b.x, y: b.y, width: b.width, height: b.height}; });",
        css,
    )


def test_forest_plot_elements_sit_at_their_values(page: tuple[Any, dict]) -> None:
    """The forest plot has one row per task, a dot at each usable task's difference on the axis, an
    interval line around it, and the summary diamond spanning the 90% range of the mean (bounded-mean interval)."""
    driver, doc = page
    svg = "#forest-guided"
    assert driver.execute_script(f"return document.querySelector('{svg}').getAttribute('role')") == "img"
    zero = bbox(driver, f"{svg} .zero-line")[0]["x"]
    grid = sorted(b["x"] for b in bbox(driver, f"{svg} .grid-line"))
    scale = (grid[-1] - grid[0]) / 2.0  # pixels per 1.0 of difference (−1 … +1)
    per_task = doc["deltas"]["guided"]["per_task"]
    usable = [t for t in doc["tasks"] if per_task[t]["pass_rate_difference"] is not None]
    dots = bbox(driver, f"{svg} .forest-task circle.estimate")
    lines = bbox(driver, f"{svg} .forest-task line.ci")
    assert len(dots) == len(lines) == len(usable) and len(usable) < len(doc["tasks"])  # one task excluded
    for task, dot, line in zip(usable, dots, lines, strict=True):
        centre = dot["x"] + dot["width"] / 2
        assert centre == pytest.approx(zero + per_task[task]["pass_rate_difference"] * scale, abs=1.0)
        assert dot["width"] > 0 and line["width"] > 0
        assert line["x"] <= centre <= line["x"] + line["width"]
    summary = doc["deltas"]["guided"]["summary"]["pass_rate"]
    (diamond,) = bbox(driver, f"{svg} .summary-diamond")
    assert diamond["x"] == pytest.approx(zero + summary["low"] * scale, abs=1.0)
    assert diamond["x"] + diamond["width"] == pytest.approx(zero + summary["high"] * scale, abs=1.0)
    excluded = driver.execute_script(f"return Array.from(document.querySelectorAll('{svg} .forest-task .excluded')).map(e => e.closest('g').dataset.task)")
    assert excluded == [t for t in doc["tasks"] if t not in usable]


def test_distribution_plots_draw_every_measured_attempt(page: tuple[Any, dict]) -> None:
    """Each arm's strip holds one visible dot per complete attempt with a value, and a median bar."""
    driver, doc = page
    for arm in doc["arms"]:
        rows = [r for r in doc["attempts"] if r["arm"] == arm and r["state"] == "complete"]
        with_tokens = [r for r in rows if r["tokens"]["status"] == "exact"]
        dots = bbox(driver, f'#dist-tokens g[data-arm="{arm}"] circle.dot')
        assert len(dots) == len(with_tokens) < len(rows)  # task-f's unknown-token attempt is not drawn
        assert all(d["width"] > 0 for d in dots)
        assert len(bbox(driver, f'#dist-tokens g[data-arm="{arm}"] line.median')) == 1
        assert len(bbox(driver, f'#dist-time g[data-arm="{arm}"] circle.dot')) == len(rows)


def test_plots_have_screen_reader_text_and_table_fallbacks(page: tuple[Any, dict]) -> None:
    """Every figure names its title and description through aria-labelledby, the description states the
    values, and a data table with one row per task (or arm) sits beside it."""
    driver, doc = page
    figures = driver.execute_script(
        "return Array.from(document.querySelectorAll('svg.plot')).map(s => ({id: s.id,"
        " labels: s.getAttribute('aria-labelledby').split(' ').map(i => document.getElementById(i).textContent),"
        " rows: document.getElementById(s.id + '-table').querySelectorAll('tbody tr').length}))"
    )
    # no cost figure: no arm of the sample has dollars (a plot of nothing is not drawn)
    assert [f["id"] for f in figures] == ["forest-guided", "dist-tokens", "dist-time"]
    forest = figures[0]
    assert forest["labels"][0].startswith("Pass-rate difference by task")
    assert "task-b: +100 pp" in forest["labels"][1] and "Summary: mean" in forest["labels"][1]
    assert forest["rows"] == len(doc["tasks"]) + 1
    assert figures[1]["rows"] == figures[2]["rows"] == len(doc["arms"])
    assert "without a value" in figures[1]["labels"][1]  # unknown tokens are counted, not drawn as 0


def test_cost_plot_draws_no_point_for_unknown_dollars(page: tuple[Any, dict]) -> None:
    """The sample's token counts lack the cached share, so its dollars are unknown: no cost figure is drawn
    (no point, no $0) and the cost table says unknown, never $0."""
    driver, doc = page
    assert doc["costs"]["arms"]["vanilla"]["usd"] is None
    assert bbox(driver, "#cost-pass-rate .cost-point") == []
    assert "unknown" in driver.execute_script("return document.getElementById('cost-arms').textContent")
    assert "$0" not in driver.execute_script("return document.getElementById('cost-arms').textContent")
