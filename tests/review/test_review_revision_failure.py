"""A review revision something stops is recorded as failed with its reason, never as finished."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pluginbench.actors import _review_again
from pluginbench.cli import app
from pluginbench.dashboard._html import run_fragment
from pluginbench.dashboard._views import run_model
from pluginbench.events import (
    EventLog,
    ReviewRevisionFinished,
    ReviewRevisionStarted,
    RunLock,
    read_run_log,
)
from pluginbench.projections import fold
from pluginbench.projections._view import review_revisions
from tests.cli._cli_helpers import run_cli
from tests.dashboard.test_views import source
from tests.runs_helpers import write_config


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished simulated run of 2 tasks × 2 arms reviewed by the simulated reviewer."""
    tmp = tmp_path_factory.mktemp("reviewed")
    config = write_config(tmp, reviewer={"harness": "simulated"}, jobs=1)
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(config), "--output", str(tmp / "run"),
                           "--foreground", "--yes"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp / "run"


def _copy(run: Path, dest: Path) -> Path:
    shutil.copytree(run, dest)
    (dest / "run.lock").unlink(missing_ok=True)  # it names the original folder
    return dest


def _fail_on_second_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reviewer answers the first submission, then raises on the next one."""
    real = _review_again.review_submission
    calls = []

    async def flaky(engine: Any, reviewer: Any, job: Any) -> Any:
        calls.append(job.attempt_id)
        if len(calls) > 1:
            raise RuntimeError("the reviewer broke")
        return await real(engine, reviewer, job)

    monkeypatch.setattr(_review_again, "review_submission", flaky)


def _review_broken(run: Path, name: str) -> None:
    """`pluginbench review` with the broken reviewer: the error reaches the caller."""
    result = CliRunner().invoke(app, ["review", str(run), "--revision", name, "--yes"])
    assert result.exit_code != 0
    assert "the reviewer broke" in repr(result.exception), result.output


def _revision(run: Path, name: str) -> dict[str, Any]:
    code, out = run_cli("status", str(run), "--json")
    assert code == 0, out
    return next(r for r in json.loads(out)["measures"]["review_revisions"] if r["revision"] == name)


def test_a_revision_stopped_by_an_error_reads_failed_with_its_reason(finished: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A reviewer error mid-revision: status (json and terminal) and the report say failed with the error, 1 of 4 reviewed, not selected; the run stays complete."""
    run = _copy(finished, tmp_path / "run")
    _fail_on_second_call(monkeypatch)
    _review_broken(run, "fourth")
    rev = _revision(run, "fourth")
    assert (rev["status"], rev["selected"], rev["reviewed"], rev["assigned"]) == ("failed", False, 1, 4), rev
    assert rev["reason"] == "stopped by an error: RuntimeError: the reviewer broke"
    code, out = run_cli("status", str(run))
    assert code == 0, out
    assert "fourth (simulated, 1/4 reviewed, failed: stopped by an error: RuntimeError: the reviewer broke)" in out, out
    assert "finished" not in out.split("fourth (", 1)[1].split(")", 1)[0]
    code, status = run_cli("status", str(run), "--json")
    assert json.loads(status)["phase"] == "complete"
    code, out = run_cli("report", str(run))
    assert code == 0, out
    rows = json.loads((run / "report" / "results.json").read_text())["reviews"]["revisions"]
    fourth = next(r for r in rows if r["revision"] == "fourth")
    assert (fourth["finished"], fourth["selected"]) == (False, False)
    assert fourth["failed_reason"] == "stopped by an error: RuntimeError: the reviewer broke"
    assert "failed: stopped by an error" in (run / "report" / "report.html").read_text()
    page = run_fragment(run_model(source(run)))
    assert "fourth (failed: stopped by an error: RuntimeError: the reviewer broke)" in page, page


def test_a_new_revision_after_a_failed_one_finishes_and_is_selected(finished: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """After a failed revision, reviewing again under a new name reviews all 4 and becomes the selected one; the failed one stays failed."""
    run = _copy(finished, tmp_path / "run")
    _fail_on_second_call(monkeypatch)
    _review_broken(run, "fourth")
    monkeypatch.undo()
    code, out = run_cli("review", str(run), "--revision", "fifth", "--yes")
    assert code == 0, out
    assert _revision(run, "fourth")["status"] == "failed"
    fifth = _revision(run, "fifth")
    assert (fifth["status"], fifth["selected"], fifth["reviewed"], fifth["assigned"]) == ("finished", True, 4, 4)
    assert fifth["reason"] is None


def test_a_revision_whose_process_ended_reads_interrupted_then_failed(finished: Path, tmp_path: Path) -> None:
    """A revision left running by a killed process reads interrupted; the next owner records it failed with how far it got, never finished."""
    run = _copy(finished, tmp_path / "run")
    state = fold(read_run_log(run / "events.jsonl").events)
    # What a killed `pluginbench review` leaves: the revision started, nothing ended it.
    with RunLock(run), EventLog(run / "events.jsonl") as log:
        log.append(ReviewRevisionStarted(revision="killed", reviewer=state.reviewer, assigned=["a", "b"]))
    code, out = run_cli("status", str(run))
    assert "killed (simulated, 0/2 reviewed, interrupted)" in out, out
    code, out = run_cli("review", str(run), "--revision", "after", "--yes")
    assert code == 0, out
    assert "review revision killed was left unfinished by a process that ended" in out
    events = read_run_log(run / "events.jsonl").events
    ended = [e for e in events if isinstance(e, ReviewRevisionFinished) and e.revision == "killed"]
    assert len(ended) == 1 and not ended[0].selected
    assert ended[0].reason == "left unfinished by a process that ended, 0 of 2 submissions reviewed"
    assert _revision(run, "killed")["status"] == "failed"


def test_a_log_that_closed_an_abandoned_revision_without_a_reason_reads_failed(finished: Path) -> None:
    """A revision closed (by an older build) with 1 of 2 reviewed and no reason is failed in status, not finished."""
    events = list(read_run_log(finished / "events.jsonl").events)
    state = fold(events)
    attempt = next(iter(state.live_attempts())).attempt_id
    old = fold([*events, ReviewRevisionStarted(revision="old", reviewer=state.reviewer, assigned=[attempt, "other"]),
                ReviewRevisionFinished(revision="old", selected=False)])
    old.reviews["old"] = dict(state.reviews["initial"])
    row = next(r for r in review_revisions(old) if r["revision"] == "old")
    assert (row["status"], row["reviewed"], row["reason"]) == ("failed", 1, "ended with 1 of 2 submissions reviewed")


def test_a_resume_records_a_revision_whose_process_ended_as_failed(finished: Path, tmp_path: Path) -> None:
    """`pluginbench run <run>` on a run with a revision a killed process left records it failed with how far it got, not finished."""
    run = _copy(finished, tmp_path / "run")
    state = fold(read_run_log(run / "events.jsonl").events)
    with RunLock(run), EventLog(run / "events.jsonl") as log:
        log.append(ReviewRevisionStarted(revision="killed", reviewer=state.reviewer, assigned=["a", "b"]))
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(run), "--foreground", "--yes"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rev = _revision(run, "killed")
    assert (rev["status"], rev["selected"]) == ("failed", False)
    assert rev["reason"] == "left unfinished by a process that ended, 0 of 2 submissions reviewed"
