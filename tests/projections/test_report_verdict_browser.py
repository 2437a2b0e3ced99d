"""The verdict is the first thing a person sees on report.html, rendered by real headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pluginbench.projections._report import build_report
from tests.projections.test_report import six_task_run
from tests.projections.test_report_browser import chromium, png_pixels

pytestmark = pytest.mark.browser

GREEN = (0x0A, 0x6B, 0x2A)  # #verdict .verdict-better in _report_verdict


def _near(px: bytes, i: int, colour: tuple[int, int, int], tol: int = 40) -> bool:
    return all(abs(px[i + k] - colour[k]) <= tol for k in range(3))


def test_headline_is_first_on_the_page(tmp_path: Path) -> None:
    """A treatment better on all six tasks: the DOM's first section is the verdict (then paired comparison, plots,
    per-task tables), and the top of the screenshot shows its green headline before anything else below it."""
    root = six_task_run(tmp_path / "run", {f"t{i}": 2 for i in range(1, 7)})
    files = build_report(root)
    doc = json.loads(files.results_json.read_text())
    (v,) = doc["verdicts"]
    assert v["kind"] == "better", v["headline"]
    dom = chromium(["--dump-dom", files.report_html.as_uri()], tmp_path / "profile").stdout.decode()
    body = dom.split("<body>", 1)[1].lstrip()
    assert body.startswith('<section id="verdict">'), body[:200]
    assert v["headline"].split(":")[0] in body[:1000]
    # then the paired comparison with its plot, then the per-task tables
    order = [body.index(f'<section id="{s}">') for s in ("verdict", "paired", "plots", "per-task")]
    assert order == sorted(order), order
    shot = tmp_path / "top.png"
    chromium([f"--screenshot={shot}", "--window-size=1280,400", "--hide-scrollbars", files.report_html.as_uri()],
             tmp_path / "profile2")
    width, height, rows = png_pixels(shot.read_bytes())
    green_rows = [y for y, row in enumerate(rows) if any(_near(row, x * 3, GREEN) for x in range(width))]
    assert green_rows, "no green headline painted in the first 400 px"
    assert green_rows[0] < 150, green_rows[:5]  # the headline sits at the very top
