"""references in results.json: each task's solution/solution.patch measured like an attempt."""

from __future__ import annotations

import json
from pathlib import Path

from pluginbench.actors import create_run, run_worker
from pluginbench.config import load
from pluginbench.measures import count_lines
from pluginbench.projections._report_refs import reference_ratio, references_section
from pluginbench.projections._results_schema import validate
from tests.runs_helpers import QUICKSTART, write_config

PATCH = """diff --git a/pkg/mod.py b/pkg/mod.py
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,2 +1,3 @@
-old
+new
+more
diff --git a/tests/test_mod.py b/tests/test_mod.py
--- a/tests/test_mod.py
+++ b/tests/test_mod.py
@@ -1 +1,2 @@
+assert True
"""


def test_reference_is_measured_with_the_line_collector_and_missing_is_unavailable(tmp_path: Path) -> None:
    """A shipped solution.patch gives measured source/test lines; a task without one, an
    unfrozen task, or runs without the lines measurement give unavailable with a reason, never 0."""
    (tmp_path / "a" / "solution").mkdir(parents=True)
    (tmp_path / "a" / "solution" / "solution.patch").write_text(PATCH)
    (tmp_path / "b").mkdir()
    refs = references_section(tmp_path, ["a", "b", "c"], ["tokens", "lines"])
    assert {m: v["value"] for m, v in refs["a"].items()} == {
        "source_lines_added": 2, "source_lines_removed": 1, "test_lines_added": 1, "test_lines_removed": 0}
    assert all(v["status"] == "measured" for v in refs["a"].values())
    assert refs["b"]["source_lines_added"] == {"status": "unavailable", "value": None,
                                               "reason": "the task ships no solution/solution.patch"}
    assert "not frozen" in refs["c"]["test_lines_added"]["reason"]
    no_lines = references_section(tmp_path, ["a"], ["tokens"])
    assert no_lines["a"]["source_lines_added"]["status"] == "unavailable"


def test_ratio_to_reference_needs_a_positive_measured_reference() -> None:
    """The ratio is value / reference; a zero, unavailable or missing reference gives none."""
    assert reference_ratio(6, {"status": "measured", "value": 4}) == 1.5
    assert reference_ratio(6, {"status": "measured", "value": 0}) is None
    assert reference_ratio(6, {"status": "unavailable", "value": None}) is None
    assert reference_ratio(None, {"status": "measured", "value": 4}) is None


def test_a_run_report_carries_references_and_shows_ratios(tmp_path: Path) -> None:
    """A simulated run's results.json has each task's reference equal to the line counts of
    its solution.patch, fits the typed schema, and report.html shows each arm's ratio."""
    config = write_config(tmp_path, jobs=1, repeats=1, tasks=["roman-numerals"])
    rd = create_run(load(config), tmp_path / "run")
    assert run_worker(rd.root, handle_signals=False).finished
    doc = json.loads((rd.root / "report" / "results.json").read_text())
    validate(doc)
    c = count_lines((QUICKSTART / "tasks" / "roman-numerals" / "solution" / "solution.patch").read_text())
    ref = doc["references"]["roman-numerals"]
    assert ref["source_lines_added"] == {"status": "measured", "value": c.source_added, "reason": None}
    assert ref["source_lines_removed"]["value"] == c.source_removed
    html = (rd.root / "report" / "report.html").read_text()
    median = doc["per_task"]["roman-numerals"]["vanilla"]["median_source_lines_added"]
    assert 'id="references-table"' in html
    assert f"{median:g} ({median / c.source_added:.2f}×)" in html
