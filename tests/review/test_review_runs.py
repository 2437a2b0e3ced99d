"""Whole simulated evaluations with the labelled simulated reviewer, and reviewer config refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pluginbench.projections._results_schema import validate
from pluginbench.review import simulated_findings
from tests.runs_helpers import write_config


def _pb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_simulated_reviewer_reviews_every_submission_and_is_labelled(tmp_path: Path) -> None:
    """Every submission gets deterministic findings; the report and status say the reviewer is simulated."""
    config = write_config(tmp_path, tasks=["roman-numerals"], repeats=2, reviewer={"harness": "simulated"})
    run_dir = tmp_path / "run"
    done = _pb("run", str(config), "--output", str(run_dir), "--foreground", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    validate(results)
    reviews = results["reviews"]
    assert reviews["reviewer"]["simulated"] is True and reviews["usage"]["total"] == 0
    assert len(reviews["per_attempt"]) == 4
    for aid, row in reviews["per_attempt"].items():
        patch = (run_dir / "evidence" / "attempts" / aid / "model.patch").read_text()
        assert row["status"] == "complete" and row["findings"] == len(simulated_findings(patch))
    html = (run_dir / "report" / "report.html").read_text()
    assert 'id="reviews"' in html and "SIMULATED reviewer" in html and 'id="review-arms"' in html
    assert results["comparison_identity"]["review_criteria_sha256"] == reviews["reviewer"]["review_criteria_sha256"]
    status = json.loads(_pb("status", str(run_dir), "--json").stdout)
    assert status["measures"]["review_revisions"] == [
        {"revision": "initial", "status": "finished", "selected": True, "reviewed": 4, "assigned": 4,
         "harness": "simulated", "model": "simulated", "reason": None}]


@pytest.mark.parametrize("reviewer, field", [
    ({"harness": "gemini", "model": "x"}, "reviewer.harness"),
    ({"harness": "claude", "model": "sonnet", "reasoning": "low"}, "reviewer.model"),
    ({"harness": "claude", "model": "claude-sonnet-4-5"}, "reviewer.reasoning"),
    ({"harness": "codex", "model": "gpt-5.5", "cli_version": "0.169.0"}, "reviewer.cli_version"),
    ({"harness": "simulated", "timeout_seconds": 0}, "reviewer.timeout_seconds"),
    ({"harness": "simulated", "criteria": "missing.md"}, "reviewer.criteria"),
])
def test_a_bad_reviewer_is_refused_before_anything_is_written(tmp_path: Path, reviewer: dict[str, Any],
                                                              field: str) -> None:
    """Exit 2 naming the reviewer field; no run folder."""
    config = write_config(tmp_path, tasks=["roman-numerals"], reviewer=reviewer)
    done = _pb("run", str(config), "--output", str(tmp_path / "run"), "--foreground", "--yes")
    assert done.returncode == 2, done.stdout + done.stderr
    assert field in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "run").exists()
