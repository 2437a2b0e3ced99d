"""A whole evaluation whose arms write code of different quality on a Python and a Go task (simulated
agent, local backend, real analyzers and coverage.py): results.json, results.csv and report.html show
the differences per arm, grouped by language and analyzer and never pooled, with unknown values and
not-measured pairs listed with their reasons."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from pluginbench.measures._builtin import LINES_OBSERVER_VERSION
from pluginbench.measures._complexity_scan import analyzer_status
from pluginbench.measures._deadcode_scan import vulture_status
from pluginbench.projections._results_schema import validate as validate_results
from tests._prereq import require
from tests.cli._cli_helpers import run_cli

DATA = Path(__file__).parents[1] / "data" / "quality-eval"
RCA, VULTURE, COVPY = "python|rust-code-analysis 0.0.4", "python|vulture 2.16", "python|coverage-py-json 7.17.3"
LIZARD, STATICCHECK = "go|lizard 1.24.3", "go|staticcheck 2023.1"
PROFILE = {"command": ["sh", "coverage.sh"], "report_path": "coverage.json", "format": "coverage-py-json",
           "tool_version": "7.17.3"}
# Hand counts of the two candidates (tests/data/quality-eval/README.md shows the working).
HAND = {
    "sprawling": {"cyclomatic_added": 11, "cognitive_added": 20, "functions_added": 2,
                  "functions_over_cognitive_15": 1, "dead_code_candidates_added": 2, "duplicated_test_lines_added": 12,
                  "changed_lines_executable": 17, "changed_lines_covered": 14, "changed_line_coverage": 0.823529,
                  "redundant_added_tests": 1},
    "tidy": {"cyclomatic_added": 3, "cognitive_added": 3, "functions_added": 1, "functions_over_cognitive_15": 0,
             "dead_code_candidates_added": 0, "duplicated_test_lines_added": 0, "changed_lines_executable": 7,
             "changed_lines_covered": 7, "changed_line_coverage": 1.0, "redundant_added_tests": 0},
}
# The Go task's candidates (restock-go; no coverage profile for Go, so coverage is not measured there).
HAND_GO = {
    "sprawling": {"cyclomatic_added": 11, "cognitive_added": 19, "functions_added": 2,
                  "functions_over_cognitive_15": 1, "dead_code_candidates_added": 2, "duplicated_test_lines_added": 18},
    "tidy": {"cyclomatic_added": 4, "cognitive_added": 5, "functions_added": 1, "functions_over_cognitive_15": 0,
             "dead_code_candidates_added": 0, "duplicated_test_lines_added": 0},
}
COVERAGE_METRICS = ("changed_lines_executable", "changed_lines_covered", "changed_line_coverage", "redundant_added_tests")
#: which candidate each arm's agent applies (weights 0/1 in candidates.toml: no randomness)
ARM_CANDIDATE = {"vanilla": "sprawling", "placebo": "sprawling", "small-functions": "tidy"}
#: metric → (its Python group, its Go group): the report shows each arm's value per task in each
GROUPED = {
    "cyclomatic_added": (RCA, LIZARD), "cognitive_added": (RCA, LIZARD),
    "functions_over_cognitive_15": (RCA, LIZARD), "dead_code_candidates_added": (VULTURE, STATICCHECK),
    "changed_line_coverage": (COVPY, "go|unknown"), "redundant_added_tests": (COVPY, "go|unknown"),
}
DUP_GROUP = f"any|lines observer {LINES_OBSERVER_VERSION}"  # language-independent: both tasks in one group

pytestmark = pytest.mark.slow
#: one attempt per task and arm: the candidates are fixed (no randomness), so a second repeat would
#: measure the same code again
REPEATS = 1


class CodeQualityCells(HTMLParser):
    """The report's code-quality cells ((metric, group, task or None, arm) → data-value, title, text),
    the rows of the not-measured and measurement-revisions tables, and the section ids."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str, str | None, str], dict[str, str]] = {}
        self.not_measured: list[tuple[str, str]] = []
        self.sections: list[str] = []
        self._cell: dict[str, str] | None = None
        self._key: tuple[str, str, str | None, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "section":
            self.sections.append(a.get("id", ""))
        elif tag == "tr" and "data-not-measured-task" in a:
            self.not_measured.append((a["data-not-measured-task"], a["data-measure"]))
        elif tag == "td" and "data-metric" in a and "data-arm" in a:
            self._key = (a["data-metric"], a["data-group"], a.get("data-task"), a["data-arm"])
            self._cell = {"value": a["data-value"], "title": a.get("title", ""), "text": ""}

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._key is not None:
            self._cell["text"] = " ".join(self._cell["text"].split())
            self.cells[self._key] = self._cell
            self._cell = self._key = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data


@pytest.fixture(scope="module")
def quality_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished evaluation of restock (Python) and restock-go: vanilla and placebo write the sprawling
    candidate, small-functions the tidy one."""
    require(analyzer_status("python")[0] is not None and vulture_status()[0] is not None,
            "the pinned Python analyzers (pip install -e '.[dev]')")
    require(shutil.which("git") is not None and shutil.which("go") is not None, "git and Go (tools/setup.sh --dev)")
    pytest.importorskip("coverage")
    tmp = tmp_path_factory.mktemp("quality")
    cfg = {
        "name": "quality",
        "tasks": {"source": str(DATA / "tasks"), "ids": ["restock", "restock-go"]},
        "treatments": {"small-functions": {"guidance": [str(DATA / "guidance" / "small-functions.md")]},
                       "placebo": {"guidance": [str(DATA / "guidance" / "placebo.md")]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": REPEATS, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "none", "allow_unisolated": True},
        "measurements": ["tokens", "time", "lines", "iterations", "cyclomatic", "cognitive", "dead_code", "coverage"],
        "measurement_settings": {"coverage_profiles": {"python": PROFILE}},
    }
    (tmp / "evaluation.yaml").write_text(yaml.safe_dump(cfg))
    old_path, old_cache = os.environ["PATH"], os.environ.get("XDG_CACHE_HOME")
    # the coverage command runs `python -m coverage`: the test interpreter's bin (coverage.py 7.17.3, pytest) first
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{old_path}"
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    try:
        code, out = run_cli("run", str(tmp / "evaluation.yaml"), "--output", str(tmp / "run"), "--foreground")
    finally:
        os.environ["PATH"] = old_path
        if old_cache is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = old_cache
    assert code == 0, out
    return tmp / "run"


def _results(run: Path) -> dict[str, Any]:
    doc = json.loads((run / "report" / "results.json").read_text())
    validate_results(doc)
    return doc


def test_every_attempt_carries_its_candidates_hand_counted_quality(quality_run: Path) -> None:
    """Each attempt's code measures equal the hand count of the candidate its arm applies (all pass the
    hidden tests), with the language and analyzer they were measured with; on restock-go coverage is
    unknown (not measured: no coverage profile for Go), never 0."""
    doc = _results(quality_run)
    assert {r["outcome"] for r in doc["attempts"]} == {"pass"} and len(doc["attempts"]) == 6 * REPEATS
    for row in doc["attempts"]:
        go = row["task"] == "restock-go"
        hand = (HAND_GO if go else HAND)[ARM_CANDIDATE[row["arm"]]]
        got = {metric: row["measures"][metric]["value"] for metric in hand}
        assert got == hand, row["attempt_id"]
        groups = {k: (row["measures"][k]["language"], row["measures"][k]["analyzer"])
                  for k in ("cognitive_added", "dead_code_candidates_added")}
        assert groups == ({"cognitive_added": ("go", "lizard 1.24.3"),
                           "dead_code_candidates_added": ("go", "staticcheck 2023.1")} if go else
                          {"cognitive_added": ("python", "rust-code-analysis 0.0.4"),
                           "dead_code_candidates_added": ("python", "vulture 2.16")}), row["attempt_id"]
        if go:
            for metric in COVERAGE_METRICS:
                m = row["measures"][metric]
                assert m["value"] is None and m["reason"].startswith("not measured: not_configured"), (metric, m)
        assert row["measures"]["verification_iterations"]["value"] is None


def test_results_json_shows_the_differences_per_arm_grouped_by_language_and_analyzer(quality_run: Path) -> None:
    """code_measures gives each arm's task median and mean of task medians per (language, analyzer): the
    guided arm adds less complexity, no unused code, no duplicated or redundant tests and covers all its
    lines, its delta against vanilla per group says by how much, and each median has its ratio to the
    task's reference solution; the placebo arm matches vanilla; Python and Go values are never pooled (one group each);
    coverage is not measured on the Go task, which gets its own go|unknown group naming restock-go under
    unknown_tasks; the not-measured pair is listed with its reason."""
    doc = _results(quality_run)
    cm = doc["code_measures"]
    for metric, (py_group, go_group) in GROUPED.items():
        assert set(cm[metric]) == {py_group, go_group}, metric
        for task, group, hand in (("restock", py_group, HAND), ("restock-go", go_group, HAND_GO)):
            g = cm[metric][group]
            assert set(g["per_task"]) == {task}, (metric, group)  # never pooled across languages
            if metric not in hand["tidy"]:
                continue  # coverage on the Go task: unknown, checked below
            for arm, candidate in ARM_CANDIDATE.items():
                assert g["per_task"][task][arm]["median"] == hand[candidate][metric], (metric, task, arm)
                assert g["per_task"][task][arm]["n"] == REPEATS
                assert g["per_arm"][arm]["mean_of_task_medians"] == hand[candidate][metric], (metric, arm)
    for group, arm, delta in ((RCA, "small-functions", -17), (RCA, "placebo", 0), (LIZARD, "small-functions", -14)):
        assert cm["cognitive_added"][group]["per_arm"][arm]["delta_vs_vanilla"] == delta, (group, arm)
    # each task's solution.patch measured with the same collectors: the median's ratio to it, never a
    # division by a zero reference (RCA scores the Python solution's comprehension 0 cognitive points)
    ratios = {(metric, group, task, arm): (cm[metric][group]["per_task"][task][arm]["reference"],
                                           cm[metric][group]["per_task"][task][arm]["ratio_to_reference"])
              for metric, group, task in (("cyclomatic_added", LIZARD, "restock-go"), ("cognitive_added", RCA, "restock"),
                                          ("dead_code_candidates_added", VULTURE, "restock"))
              for arm in ("vanilla", "small-functions")}
    assert ratios == {
        ("cyclomatic_added", LIZARD, "restock-go", "vanilla"): (6, 1.833333),
        ("cyclomatic_added", LIZARD, "restock-go", "small-functions"): (6, 0.666667),
        ("cognitive_added", RCA, "restock", "vanilla"): (0, None),
        ("cognitive_added", RCA, "restock", "small-functions"): (0, None),
        ("dead_code_candidates_added", VULTURE, "restock", "vanilla"): (1, 2),  # Vulture: the solution's
        ("dead_code_candidates_added", VULTURE, "restock", "small-functions"): (1, 0),  # reorder has no caller
    }
    dup = cm["duplicated_test_lines_added"][DUP_GROUP]["per_arm"]
    assert {arm: dup[arm]["mean_of_task_medians"] for arm in ARM_CANDIDATE} == {
        "vanilla": 15, "placebo": 15, "small-functions": 0}  # (12 + 18) / 2: each task weighs the same
    cov = cm["changed_line_coverage"]["go|unknown"]  # not measured on the Go task: its own group, never Python's
    assert cov["per_arm"]["vanilla"]["tasks"] == 0 and cov["per_arm"]["vanilla"]["unknown_tasks"] == ["restock-go"]
    assert cov["per_task"]["restock-go"]["vanilla"]["median"] is None
    assert cov["per_task"]["restock-go"]["vanilla"]["reasons"][0].startswith("not measured: not_configured")
    assert [(n["task"], n["measure"]) for n in doc["not_measured"]] == [("restock-go", "coverage")]
    assert doc["measurement_revisions"] == [] and doc["measurement_history"] == []
    missing = {(m["task"], m["field"]) for m in doc["missing_values"]}
    assert ("restock-go", "measures.changed_line_coverage") in missing
    assert ("restock", "measures.verification_iterations") in missing
    iterations = cm["verification_iterations"]["any|iterations observer 2"]["per_task"]["restock"]["vanilla"]
    assert iterations["median"] is None and iterations["reasons"] == ["the simulated harness saves no agent transcript to count"]


def test_results_csv_rows_carry_language_and_analyzer(quality_run: Path) -> None:
    """results.csv has a row per attempt × code measure with its value, unit, language and analyzer;
    an unknown value is an empty cell with its reason."""
    rows = list(csv.DictReader(io.StringIO((quality_run / "report" / "results.csv").read_text())))
    cog = [r for r in rows if r["measure"] == "measures.cognitive_added"]
    assert len(cog) == 6 * REPEATS
    assert {(r["task"], r["language"], r["analyzer"], r["unit"]) for r in cog} == {
        ("restock", "python", "rust-code-analysis 0.0.4", "points"), ("restock-go", "go", "lizard 1.24.3", "points")}
    assert {(r["task"], r["arm"], r["value"]) for r in cog} == {
        ("restock", "vanilla", "20"), ("restock", "placebo", "20"), ("restock", "small-functions", "3"),
        ("restock-go", "vanilla", "19"), ("restock-go", "placebo", "19"), ("restock-go", "small-functions", "5")}
    go_cov = [r for r in rows if r["measure"] == "measures.changed_line_coverage" and r["task"] == "restock-go"]
    assert len(go_cov) == 3 * REPEATS and all(r["value"] == "" and r["status"] == "unknown" and r["reason"] for r in go_cov)


def test_report_html_shows_the_code_quality_per_arm_and_rebuilds_byte_for_byte(quality_run: Path) -> None:
    """report.html's Code quality table shows each arm's median per task and its mean over tasks for each
    (metric, language|analyzer) as results.json has it, with the ratio to the reference; unknown cells read unknown with the reason as
    their tooltip, never 0; Not measured lists restock-go's coverage; `pluginbench report` rebuilds the
    three files byte for byte from the log."""
    report = quality_run / "report"
    html = (report / "report.html").read_text()
    page = CodeQualityCells()
    page.feed(html)
    assert {"code-quality", "measurement-revisions", "not-measured", "missing-values"} <= set(page.sections)
    for metric, (py_group, go_group) in GROUPED.items():
        for task, group, hand in (("restock", py_group, HAND), ("restock-go", go_group, HAND_GO)):
            if metric not in hand["tidy"]:
                continue
            for arm, candidate in ARM_CANDIDATE.items():
                cell = page.cells[(metric, group, task, arm)]
                assert float(cell["value"]) == hand[candidate][metric] and f"(n={REPEATS})" in cell["text"], (metric, arm, cell)
                assert float(page.cells[(metric, group, None, arm)]["value"]) == hand[candidate][metric]
            assert (metric, group, "restock-go" if task == "restock" else "restock", "vanilla") not in page.cells
    assert "×1.83 of ref." in page.cells[("cyclomatic_added", LIZARD, "restock-go", "vanilla")]["text"]
    assert "of ref." not in page.cells[("cognitive_added", RCA, "restock", "vanilla")]["text"]  # reference 0
    go_cov = page.cells[("changed_line_coverage", "go|unknown", "restock-go", "small-functions")]
    assert go_cov["value"] == "" and go_cov["text"].startswith("unknown") and "no coverage profile" in go_cov["title"]
    unknown = page.cells[("verification_iterations", "any|iterations observer 2", "restock", "vanilla")]
    assert unknown["text"].startswith("unknown") and "no agent transcript" in unknown["title"]
    assert page.not_measured == [("restock-go", "coverage")]
    assert "measures.changed_line_coverage" in html.split('id="missing-values"')[1]
    before = {p.name: p.read_bytes() for p in report.iterdir()}
    code, out = run_cli("report", str(quality_run))
    assert code == 0, out
    assert {p.name: p.read_bytes() for p in report.iterdir()} == before


@pytest.mark.browser
def test_chromium_renders_the_code_quality_table(quality_run: Path, tmp_path: Path) -> None:
    """Debian's Chromium parses report.html into a DOM whose Code quality cells hold the same values
    (the tidy arm's 3 against vanilla's 20 Python cognitive points, 5 against 19 in Go) and unknown cells."""
    from tests.projections.test_report_browser import chromium

    dom = chromium(["--dump-dom", (quality_run / "report" / "report.html").as_uri()], tmp_path / "profile")
    page = CodeQualityCells()
    page.feed(dom.stdout.decode())
    values = {(group, arm): float(page.cells[("cognitive_added", group, task, arm)]["value"])
              for group, task in ((RCA, "restock"), (LIZARD, "restock-go")) for arm in ("vanilla", "small-functions")}
    assert values == {(RCA, "vanilla"): 20, (RCA, "small-functions"): 3, (LIZARD, "vanilla"): 19,
                      (LIZARD, "small-functions"): 5}
    assert page.cells[("changed_line_coverage", "go|unknown", "restock-go", "vanilla")]["text"].startswith("unknown")
