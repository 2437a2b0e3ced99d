"""`pluginbench review RUN --revision NAME`: revisions of a finished run's reviews, and every refusal."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pluginbench.events import RunLock
from pluginbench.projections._results_schema import validate
from tests.runs_helpers import write_config

pytestmark = pytest.mark.slow


def _pb(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=300,
                          input=stdin)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("reviewed")
    config = write_config(tmp, tasks=["roman-numerals"], repeats=1, reviewer={"harness": "simulated"})
    done = _pb("run", str(config), "--output", str(tmp / "run"), "--foreground", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp / "run"


def _copy(run: Path, dest: Path) -> Path:
    shutil.copytree(run, dest)
    (dest / "run.lock").unlink(missing_ok=True)  # it names the original folder
    return dest


def _results(run: Path) -> dict:
    return json.loads((run / "report" / "results.json").read_text())


def test_a_revision_is_selected_and_earlier_ones_stay_in_evidence(finished: Path, tmp_path: Path) -> None:
    """The new revision reviews every submission, becomes the report's selected review, and initial stays."""
    run = _copy(finished, tmp_path / "run")
    done = _pb("review", str(run), "--revision", "again", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 review call(s)" in done.stdout
    results = _results(run)
    validate(results)
    assert results["reviews"]["selected_revision"] == "again"
    assert results["comparison_identity"]["reviewer"]["revision"] == "again"
    assert [r["revision"] for r in results["reviews"]["revisions"]] == ["initial", "again"]
    assert "Revision <strong>again</strong>" in (run / "report" / "report.html").read_text()
    assert sorted(p.name for p in (run / "evidence" / "reviews").iterdir()) == ["again", "initial"]
    assert len(list((run / "evidence" / "reviews" / "initial").glob("*/review.json"))) == 2
    status = json.loads(_pb("status", str(run), "--json").stdout)
    assert status["phase"] == "complete"
    assert [(r["revision"], r["selected"], r["reviewed"]) for r in status["measures"]["review_revisions"]] == [
        ("initial", False, 2), ("again", True, 2)]


def test_no_select_records_the_revision_and_keeps_the_report_s_review(finished: Path, tmp_path: Path) -> None:
    """--no-select: the revision is in evidence and listed, the report still selects initial."""
    run = _copy(finished, tmp_path / "run")
    done = _pb("review", str(run), "--revision", "side", "--no-select", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    results = _results(run)
    assert results["reviews"]["selected_revision"] == "initial"
    assert [(r["revision"], r["selected"]) for r in results["reviews"]["revisions"]] == [
        ("initial", True), ("side", False)]


def _refused(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    for n in needles:
        assert n in done.stderr, done.stderr


def test_refusals_exit_2_and_write_nothing(finished: Path, tmp_path: Path) -> None:
    """An existing name, a bad name, partial or bad reviewer options, and no readable answer: exit 2, log unchanged."""
    run = _copy(finished, tmp_path / "run")
    log = (run / "events.jsonl").read_bytes()
    _refused(_pb("review", str(run), "--revision", "initial", "--yes"), "already exists", "--revision")
    _refused(_pb("review", str(run), "--revision", "Bad Name", "--yes"), "not allowed")
    _refused(_pb("review", str(run), "--revision", "r2", "--reviewer-harness", "claude", "--yes"), "go together")
    _refused(_pb("review", str(run), "--revision", "r2", "--reviewer-harness", "claude", "--reviewer-model", "sonnet",
                 "--reviewer-effort", "low", "--yes"), "--reviewer.model", "exact claude-* model id")
    _refused(_pb("review", str(run), "--revision", "r2", "--reviewer-harness", "gemini", "--reviewer-model", "g",
                 "--reviewer-effort", "low", "--yes"), "--reviewer.harness")
    _refused(_pb("review", str(run), "--revision", "r2", stdin=""), "no answer can be read", "pass --yes")
    assert (run / "events.jsonl").read_bytes() == log
    assert not (run / "evidence" / "reviews" / "r2").exists()


def test_an_active_run_is_refused(finished: Path, tmp_path: Path) -> None:
    """Another process owning run.lock: exit 2 naming the owner."""
    run = _copy(finished, tmp_path / "run")
    with RunLock(run):
        _refused(_pb("review", str(run), "--revision", "r2", "--yes"), "the run is active")


def test_a_run_without_a_reviewer_or_an_unfinished_first_review_is_refused(finished: Path, tmp_path: Path) -> None:
    """No reviewer in the run, or a first review not finished (the log cut before it ended): exit 2."""
    config = write_config(tmp_path, tasks=["roman-numerals"], repeats=1)
    plain = tmp_path / "plain"
    assert _pb("run", str(config), "--output", str(plain), "--foreground", "--yes").returncode == 0
    _refused(_pb("review", str(plain), "--revision", "r2", "--yes"), "has no reviewer")
    run = _copy(finished, tmp_path / "cut")
    lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
    first_review_end = next(i for i, line in enumerate(lines) if '"review.completed"' in line)
    (run / "events.jsonl").write_text("".join(lines[:first_review_end]))
    (run / "evidence" / "ledger.sqlite").unlink()
    _refused(_pb("review", str(run), "--revision", "r2", "--yes"), "first review has not finished", "pluginbench run")
