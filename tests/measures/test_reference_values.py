"""Reference values: a fresh run measures each task's solution/solution.patch once, with the
real line, complexity (rust-code-analysis) and unused-code (Vulture) collectors, and the report
shows the code measures as a ratio to it; a task without a solution patch is unavailable.

Fixture and hand counts: tests/data/reference/README.md."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.cli._cli_helpers import run_cli
from tests.runs_helpers import events_of

TASKS = Path(__file__).parents[1] / "data" / "reference" / "tasks"
CODE = ["tokens", "time", "lines", "cyclomatic", "cognitive", "dead_code"]

pytestmark = pytest.mark.slow


def reference_config(tmp: Path, measurements: list[str]) -> Path:
    guidance = tmp / "testing.md"
    guidance.write_text("Always add tests for new code.\n")
    cfg = {
        "name": "refs",
        "tasks": {"source": str(TASKS), "ids": ["clamp-ref", "clamp-nosolution"]},
        "treatments": {"tests-first": {"guidance": [str(guidance)]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 2, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "none", "allow_unisolated": True},
        "measurements": measurements,
    }
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def code_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("refs")
    code, out = run_cli("run", str(reference_config(tmp, CODE)), "--output", str(tmp / "run"), "--foreground")
    assert code == 0, out
    return tmp / "run"


def test_each_reference_is_measured_once_per_task_with_the_real_analyzers(code_run: Path) -> None:
    """Preparation records one reference.measured per task (not per attempt, 8 attempts here),
    before coding; clamp-ref's values are the hand counts (cyclomatic 2, cognitive 1, one
    function, 6 source lines, 1 unused candidate), and clamp-nosolution's are unknown with
    the reason, never 0."""
    events = events_of(code_run)
    types = [e["type"] for e in events]
    refs = [e for e in events if e["type"] == "reference.measured"]
    assert sorted(e["task"] for e in refs) == ["clamp-nosolution", "clamp-ref"]
    assert types.index("reference.measured") < types.index("coding.started")
    assert types.count("measures.collected") == 8
    got = {k: (m["status"], m["value"]) for k, m in refs[[e["task"] for e in refs].index("clamp-ref")]["measures"].items()}
    expected = {"cyclomatic_added": 2, "cognitive_added": 1, "functions_added": 1, "functions_over_cognitive_15": 0,
                "source_files_added": 0, "source_lines_added": 6, "test_lines_added": 0,
                "dead_code_candidates_added": 1, "duplicated_test_lines_added": 0}
    assert {k: got[k] for k in expected} == {k: ("measured", v) for k, v in expected.items()}
    cyc = next(e for e in refs if e["task"] == "clamp-ref")["measures"]["cyclomatic_added"]
    assert cyc["language"] == "python" and "rust-code-analysis" in cyc["analyzer"]
    none = next(e for e in refs if e["task"] == "clamp-nosolution")["measures"]
    assert all(m["value"] is None and m["status"] == "unknown" and m["reason"] == "the task ships no solution/solution.patch"
               for m in none.values()), none
    assert (code_run / "evidence" / "references" / "clamp-ref").is_dir()


def test_results_json_has_references_and_ratios_per_arm_and_task(code_run: Path) -> None:
    """results.json references hold every reference metric (unavailable with the reason for the
    task without a patch), and reference_ratios divide each task × arm median by it: cyclomatic
    5/2 = 2.5 and cognitive 3/1 = 3 on both arms, unused candidates 1/1 (tested) and 2/1
    (untested); a zero reference gives no ratio, with the reason."""
    doc = json.loads((code_run / "report" / "results.json").read_text())
    refs = doc["references"]
    assert refs["clamp-ref"]["cognitive_added"] == {"status": "measured", "value": 1, "reason": None}
    assert refs["clamp-nosolution"]["cyclomatic_added"] == {
        "status": "unavailable", "value": None, "reason": "the task ships no solution/solution.patch"}
    ratios = doc["reference_ratios"]
    cyc = ratios["cyclomatic_added"]["per_task"]["clamp-ref"]
    assert {arm: (c["median"], c["reference"], c["ratio"]) for arm, c in cyc.items()} == {
        "vanilla": (5, 2, 2.5), "tests-first": (5, 2, 2.5)}
    assert ratios["cognitive_added"]["per_arm"]["vanilla"] == {"median_of_task_ratios": 3.0, "tasks": 1}
    dead = ratios["dead_code_candidates_added"]["per_task"]["clamp-ref"]
    assert {arm: c["ratio"] for arm, c in dead.items()} == {"vanilla": 2.0, "tests-first": 1.0}
    missing = ratios["cyclomatic_added"]["per_task"]["clamp-nosolution"]["vanilla"]
    assert missing["ratio"] is None and missing["reason"] == (
        "reference unavailable: the task ships no solution/solution.patch")
    zero = ratios["test_lines_added"]["per_task"]["clamp-ref"]["tests-first"]
    assert zero["ratio"] is None and "zero or negative" in zero["reason"]
    assert "reference_ratios" in doc and "iterations" not in json.dumps(refs)


def test_report_html_shows_reference_and_ratio(code_run: Path) -> None:
    """report.html's reference section shows clamp-ref's cyclomatic reference 2 with each arm's
    median 5 at 2.50×, and clamp-nosolution's reference as unavailable with the reason."""
    html = (code_run / "report" / "report.html").read_text()
    row = re.search(r'<tr data-reference-task="clamp-ref" data-metric="cyclomatic_added">(.*?)</tr>', html)
    assert row is not None
    assert '<td class="num">2</td>' in row.group(1) and row.group(1).count("5 (2.50×)") == 2
    none = re.search(r'<tr data-reference-task="clamp-nosolution" data-metric="cognitive_added">(.*?)</tr>', html)
    assert none is not None and "unavailable (the task ships no solution/solution.patch)" in none.group(1)


def test_compare_reads_the_code_references_for_ratio_gates(code_run: Path, tmp_path: Path) -> None:
    """compare's ratio gate divides by the code-measure reference: clamp-ref is compared at
    cognitive 3/1, clamp-nosolution is left out naming the missing reference."""
    gates = tmp_path / "gates.yaml"
    gates.write_text(yaml.safe_dump({"count_overlap_passes": True, "gates": [{
        "name": "cog", "metrics": ["Net cognitive complexity added"], "statistic": "mean_of_task_median_ratios",
        "against": "vanilla", "direction": "lower", "factor": 1.1}]}))
    code, out = run_cli("compare", str(code_run), "--gates", str(gates), "--json")
    assert code == 0, out
    gate = json.loads(out)["splits"][0]["gates"][0]
    rows = {r["task"]: r for r in gate["per_task"]}
    assert (rows["clamp-ref"]["reference"], rows["clamp-ref"]["comparator_ratio"]) == (1.0, 3.0)
    assert "the task ships no solution/solution.patch" in rows["clamp-nosolution"]["left_out"]
    assert gate["tasks_compared"] == 1


def test_status_lists_the_recorded_references(code_run: Path) -> None:
    """status --json's measures.references shows the references the log recorded (clamp-ref's
    cyclomatic 2; clamp-nosolution unavailable with the reason)."""
    code, out = run_cli("status", str(code_run), "--json")
    assert code == 0, out
    refs = json.loads(out)["measures"]["references"]
    assert refs["clamp-ref"]["cyclomatic_added"] == {"status": "measured", "value": 2, "reason": None}
    assert refs["clamp-nosolution"]["cognitive_added"]["reason"] == "the task ships no solution/solution.patch"
