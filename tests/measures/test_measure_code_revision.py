"""``pluginbench measure`` with the code measures: a finished run (lines only) gains
cyclomatic, cognitive, dead_code and iterations as a revision, measured by the real
analyzers (rust-code-analysis, Vulture) on its saved submissions and on each task's
reference solution, with no model call; the report is rebuilt with the selected revision;
every refusal exits 2 and writes nothing.

Fixture and hand counts: tests/data/reference/README.md."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli._cli_helpers import assert_refused, run_cli
from tests.measures.test_reference_values import reference_config
from tests.runs_helpers import events_of

pytestmark = pytest.mark.slow

ADDED = "cyclomatic,cognitive,dead_code,iterations"


@pytest.fixture(scope="module")
def lines_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("lines-run")
    config = reference_config(tmp, ["tokens", "time", "lines"])
    code, out = run_cli("run", str(config), "--output", str(tmp / "run"), "--foreground")
    assert code == 0, out
    return tmp / "run"


def _copy(run: Path, tmp: Path, name: str = "run-copy") -> Path:
    dst = tmp / name
    shutil.copytree(run, dst, symlinks=True)
    (dst / "run.lock").unlink(missing_ok=True)
    return dst


def _snapshot(run: Path) -> tuple[bytes, bytes]:
    return (run / "events.jsonl").read_bytes(), (run / "evaluation.json").read_bytes()


def test_code_measures_are_added_as_a_selected_revision(lines_run: Path, tmp_path: Path) -> None:
    """The revision measures every saved submission (cyclomatic 5, cognitive 3 on both
    candidates; unused candidates 1 tested, 2 untested) and each task's reference (clamp-ref:
    cyclomatic 2, cognitive 1; clamp-nosolution unavailable), iterations are unknown with the
    simulated harness's reason, the settings and comparison identity gain the measures and
    their readiness, and the rebuilt report shows the revision's values and ratios."""
    run = _copy(lines_run, tmp_path)
    launched = sum(1 for e in events_of(run) if e["type"] == "agent.launched")
    code, out = run_cli("measure", str(run), "--measurements", ADDED, "--revision", "code", "--yes")
    assert code == 0, out
    assert "readiness clamp-ref cyclomatic: ready" in out and "readiness clamp-ref iterations: ready" in out
    events = events_of(run)
    assert sum(1 for e in events if e["type"] == "agent.launched") == launched  # nothing coded again
    measured = [e for e in events if e["type"] == "measurement_revision.measured"]
    assert sorted(e["attempt_id"] for e in measured if e["stage"] == "reference") == ["clamp-nosolution", "clamp-ref"]
    assert sum(1 for e in measured if e["stage"] == "submission") == 8
    started = next(e for e in events if e["type"] == "measurement_revision.started")
    assert started["added"] == ADDED.split(",")
    assert {(r["task"], r["measure"], r["state"]) for r in started["readiness"]} >= {
        ("clamp-ref", "cyclomatic", "ready"), ("clamp-ref", "dead_code", "ready"), ("clamp-nosolution", "cognitive", "ready")}
    assert started["observers"]["cyclomatic"] == "1" and started["observers"]["iterations"] == "2"
    assert [e["type"] for e in events][-2:] == ["measurement_revision.finished", "report.built"]
    assert events[-2]["selected"] is True

    evaluation = json.loads((run / "evaluation.json").read_text())
    assert evaluation["measurements"][-4:] == ADDED.split(",")
    assert (run / "measure" / "code" / "evaluation-before.json").is_file()

    doc = json.loads((run / "report" / "results.json").read_text())
    for row in doc["attempts"]:
        m = row["measures"]
        assert (m["cyclomatic_added"]["value"], m["cognitive_added"]["value"]) == (5, 3), row["attempt_id"]
        assert m["dead_code_candidates_added"]["value"] == (1 if m["test_lines_added"]["value"] else 2)
        assert m["verification_iterations"]["value"] is None
        assert "saves no agent transcript" in m["verification_iterations"]["reason"]
    assert doc["references"]["clamp-ref"]["cyclomatic_added"]["value"] == 2
    assert doc["references"]["clamp-ref"]["source_lines_added"]["value"] == 6
    assert doc["references"]["clamp-nosolution"]["cognitive_added"]["status"] == "unavailable"
    cyc = doc["reference_ratios"]["cyclomatic_added"]["per_task"]["clamp-ref"]
    assert {arm: c["ratio"] for arm, c in cyc.items()} == {"vanilla": 2.5, "tests-first": 2.5}
    assert [h["revision"] for h in doc["measurement_history"]] == ["code"] and doc["measurement_history"][0]["selected"]
    identity = doc["comparison_identity"]
    assert set(ADDED.split(",")) <= set(identity["measurement_settings"]["measurements"])
    assert identity["measurement_capabilities"]["clamp-ref"]["cognitive"]["state"] == "ready"
    assert identity["effective_observer_scripts"]["clamp-ref"]["dead_code"] == "2"
    html = (run / "report" / "report.html").read_text()
    assert 'data-reference-task="clamp-ref" data-metric="cognitive_added"' in html and "3 (3.00×)" in html
    code, out = run_cli("report", str(run))  # the rewritten settings still verify
    assert code == 0, out


def test_code_revision_refusals_exit_2_and_write_nothing(lines_run: Path, tmp_path: Path) -> None:
    """Unknown, already-measured and pipeline-only measures, a bad or existing name and an
    active run are refused with exit 2 and their message; the log, the settings and measure/
    stay as they were."""
    run = _copy(lines_run, tmp_path)
    before = _snapshot(run)
    cases = [
        (["--measurements", "sparkle", "--revision", "a"], "unknown measure 'sparkle'"),
        (["--measurements", "lines,cyclomatic", "--revision", "a"], "the run already measures 'lines'"),
        (["--measurements", "tokens", "--revision", "a"], "the run already measures 'tokens'"),
        (["--measurements", "cognitive", "--revision", "../x"], "revision name '../x' is not allowed"),
    ]
    for args, message in cases:
        code, out = run_cli("measure", str(run), *args, "--yes")
        assert_refused(code, out, message)
    assert _snapshot(run) == before and not (run / "measure" / "a").exists()

    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pluginbench.events import RunLock\n"
         "with RunLock(__import__('pathlib').Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(120)\n",
         str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, out = run_cli("measure", str(run), "--measurements", "cognitive", "--revision", "a", "--yes")
        assert_refused(code, out, "the run is active")
    finally:
        holder.kill()
        holder.wait(timeout=30)
    (run / "run.lock").unlink(missing_ok=True)
    assert _snapshot(run) == before

    code, out = run_cli("measure", str(run), "--measurements", "cognitive", "--revision", "a", "--yes")
    assert code == 0, out
    after = _snapshot(run)
    code, out = run_cli("measure", str(run), "--measurements", "cyclomatic", "--revision", "a", "--yes")
    assert_refused(code, out, "measurement revision 'a' already exists")
    code, out = run_cli("measure", str(run), "--measurements", "cognitive", "--revision", "b", "--yes")
    assert_refused(code, out, "the run already measures 'cognitive'")
    assert _snapshot(run) == after


def test_a_revision_that_loses_an_observation_is_not_selected(lines_run: Path, tmp_path: Path) -> None:
    """After a cognitive revision, one saved submission's patch is altered: the next revision
    (adding dead_code) cannot measure its cognitive and lines values (8 columns) any more, as
    the patch fails its hash check, so it stays in evidence,
    unselected, the command exits 2 naming the lost observation, and the settings and the
    selected revision are unchanged."""
    run = _copy(lines_run, tmp_path)
    code, out = run_cli("measure", str(run), "--measurements", "cognitive", "--revision", "first", "--yes")
    assert code == 0, out
    settings = (run / "evaluation.json").read_bytes()
    victim = next(p for p in sorted((run / "evidence" / "attempts").iterdir()) if p.name.startswith("clamp-ref__"))
    (victim / "model.patch").write_text((victim / "model.patch").read_text() + "\n")
    code, out = run_cli("measure", str(run), "--measurements", "dead_code", "--revision", "second", "--yes")
    assert code == 2 and "Traceback" not in out, out
    assert "\nerror: measurement revision second was collected but not selected" in out, out
    assert "loses 8 observation(s)" in out and f"of {victim.name})" in out, out
    finished = [e for e in events_of(run) if e["type"] == "measurement_revision.finished"]
    assert [(e["revision"], e["selected"]) for e in finished] == [("first", True), ("second", False)]
    assert (run / "evaluation.json").read_bytes() == settings
    assert (run / "measure" / "second").is_dir()


def test_a_code_measure_no_task_can_measure_or_one_that_regressed_is_refused(
        lines_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the installed rust-code-analysis no longer matching its pin (the real version check),
    cyclomatic is broken on every task: requesting it is refused before anything is recorded; and
    after a cognitive revision, adding dead_code is refused because cognitive, which the run
    measures now, no longer passes its readiness check (its values would become unknown)."""
    from pluginbench.measures import _complexity_scan

    run = _copy(lines_run, tmp_path)
    code, out = run_cli("measure", str(run), "--measurements", "cognitive", "--revision", "first", "--yes")
    assert code == 0, out
    before = _snapshot(run)
    package = _complexity_scan.ANALYZER_PACKAGE["python"]
    monkeypatch.setitem(_complexity_scan.PINNED, package, "0.0.0")
    code, out = run_cli("measure", str(run), "--measurements", "cyclomatic", "--revision", "cyc", "--yes")
    assert code == 2 and "\nerror: no task can measure 'cyclomatic'" in out and "0.0.0 is pinned" in out, out
    code, out = run_cli("measure", str(run), "--measurements", "dead_code", "--revision", "dead", "--yes")
    assert code == 2 and "\nerror: 'cognitive', which the run measures now, no longer passes its readiness check" in out, out
    assert "Traceback" not in out
    assert _snapshot(run) == before
    assert not (run / "measure" / "cyc").exists() and not (run / "measure" / "dead").exists()


def test_resume_records_a_killed_measure_revision_and_measures_it_again_under_the_next_free_name(
        lines_run: Path, tmp_path: Path) -> None:
    """A `measure` killed after measurement_revision.started: the resume records it failed with its progress and measures it again as <name>-2, selected."""
    from pluginbench.events import EventLog, MeasurementRevisionStarted, RunLock

    run = _copy(lines_run, tmp_path)
    with RunLock(run), EventLog(run / "events.jsonl") as log:  # what the killed `measure` had written
        log.append(MeasurementRevisionStarted(revision="cut", measurements=["cognitive"], added=["cognitive"]))
    (run / "measure" / "cut").mkdir(parents=True)
    code, out = run_cli("run", str(run), "--foreground")
    assert code == 0, out
    assert "measurement revision cut cannot continue" in out and "measuring it again as cut-2" in out
    events = events_of(run)
    finished = {e["revision"]: e for e in events if e["type"] == "measurement_revision.finished"}
    assert finished["cut"]["selected"] is False
    assert finished["cut"]["reason"] == "left unfinished by a process that ended, 0 of 8 submissions measured"
    assert finished["cut-2"]["selected"] is True
    assert sum(1 for e in events if e["type"] == "measurement_revision.measured" and e["revision"] == "cut-2"
               and e["stage"] == "submission") == 8
    assert json.loads((run / "evaluation.json").read_text())["measurements"][-1] == "cognitive"


def test_a_killed_revision_is_planned_again_with_its_own_saved_profiles(lines_run: Path, tmp_path: Path) -> None:
    """A killed revision that added coverage with --coverage-profiles (not in the run's settings) is
    planned again from its saved profiles.json: without them no task can measure coverage, with them
    each task resolves to the profile it was readied with."""
    from pluginbench.actors._measure_again import plan_measure, saved_profiles
    from pluginbench.errors import InputError
    from pluginbench.measures._coverage_profile import CoverageProfile

    run = _copy(lines_run, tmp_path)
    work = run / "measure" / "cut"
    work.mkdir(parents=True)
    profile = {"command": ["sh", "coverage.sh"], "report_path": "coverage.json", "format": "coverage-py-json",
               "tool_version": "7.17.3"}
    (work / "profiles.json").write_text(json.dumps({"clamp-ref": profile, "clamp-nosolution": profile}))
    with pytest.raises(InputError, match="no task can measure 'coverage'"):
        plan_measure(run, "coverage", "cut-2", None)
    plan = plan_measure(run, "coverage", "cut-2", None, saved_profiles(work))
    assert plan.settings.coverage_profiles == {"python": CoverageProfile(**profile)}
    assert saved_profiles(run / "measure" / "missing") == {}
