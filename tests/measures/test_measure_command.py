"""``pluginbench measure``: a finished run gains a coverage revision measured by real
coverage.py in fresh sandboxes of its frozen task, and every refusal exits 2 with its message."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from pluginbench.measures._coverage_spec import COVERAGE_OBSERVER_VERSION
from tests.cli._cli_helpers import assert_refused, run_cli
from tests.runs_helpers import events_of

DATA = Path(__file__).parents[1] / "data" / "coverage"
PROFILE = {
    "command": ["sh", "coverage.sh"],
    "report_path": "coverage.json",
    "format": "coverage-py-json",
    "tool_version": "7.17.3",
}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def venv_path():
    """The coverage command runs `python -m coverage`: the test interpreter's bin folder
    (which has coverage.py 7.17.3 and pytest) goes first on PATH."""
    pytest.importorskip("coverage")
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{old}"
    yield
    os.environ["PATH"] = old


def _config(tmp: Path, **extra) -> Path:
    guidance = tmp / "testing.md"
    guidance.write_text("Always add tests for new code.\n")
    cfg = {
        "name": "cov",
        "tasks": {"source": str(DATA / "tasks"), "ids": ["clamp"]},
        "treatments": {"tests-first": {"guidance": [str(guidance)]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 2, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "none", "allow_unisolated": True},
        **extra,
    }
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, venv_path) -> Path:
    tmp = tmp_path_factory.mktemp("measure")
    code, out = run_cli("run", str(_config(tmp)), "--output", str(tmp / "run"), "--foreground")
    assert code == 0, out
    return tmp / "run"


def _copy(run: Path, tmp: Path) -> Path:
    dst = tmp / "run-copy"
    shutil.copytree(run, dst, symlinks=True)
    (dst / "run.lock").unlink(missing_ok=True)
    return dst


def _profiles(tmp: Path, profile: dict | None = None) -> Path:
    path = tmp / "profiles.yaml"
    path.write_text(yaml.safe_dump({"python": profile or PROFILE}))
    return path


def test_measure_adds_a_selected_coverage_revision(finished_run: Path, tmp_path: Path) -> None:
    """measure --measurements coverage adds revision r1 from the saved submissions: every attempt
    gets changed-line coverage from real coverage.py (0.6 for the tested candidate with one
    redundant test; 0.2 for the untested one, whose def lines run at import), the settings gain the measure and the profile, the report shows it
    in Code quality and lists the selected revision under Measurement revisions."""
    run = _copy(finished_run, tmp_path)
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r1",
                        "--coverage-profiles", str(_profiles(tmp_path)), "--yes")
    assert code == 0, out
    assert "readiness clamp coverage: ready" in out
    types = [e["type"] for e in events_of(run)]
    stages = [e["stage"] for e in events_of(run) if e["type"] == "measurement_revision.measured"]
    assert (stages.count("submission"), stages.count("reference")) == (4, 1)  # lines measure the reference again
    assert "measurement_revision.started" in types and types[-2:] == ["measurement_revision.finished", "report.built"]
    finished = [e for e in events_of(run) if e["type"] == "measurement_revision.finished"][-1]
    assert finished["selected"] is True
    ev = json.loads((run / "evaluation.json").read_text())
    assert "coverage" in ev["measurements"]
    assert ev["measurement_settings"]["coverage_profiles"]["python"]["tool_version"] == "7.17.3"
    assert (run / "measure" / "r1" / "evaluation-before.json").is_file()
    assert (run / "measure" / "r1" / "measurement-readiness.json").is_file()
    results = json.loads((run / "report" / "results.json").read_text())
    values = {}
    for row in results["attempts"]:
        m = row["measures"]["changed_line_coverage"]
        assert m["status"] == "measured", m
        values[row["attempt_id"]] = (m["value"], row["measures"]["redundant_added_tests"]["value"],
                                     row["measures"]["changed_lines_covered"]["value"])
    assert set(values.values()) == {(0.6, 1, 6), (0.2, 0, 2)}, values
    history = results["measurement_history"]
    assert [h["revision"] for h in history] == ["r1"] and history[0]["selected"] is True
    assert results["measurement_revisions"] == [{"revision": "r1", "status": "selected", "selected": True}]
    html = (run / "report" / "report.html").read_text()
    revisions = html.split('id="measurement-revisions-table"')[1].split("</table>")[0]
    assert 'data-revision="r1"' in revisions and '<td class="revision-status">selected</td>' in revisions
    quality = html.split('id="code-quality-table"')[1].split("</table>")[0]
    assert 'data-metric="changed_line_coverage" data-group="python|coverage-py-json 7.17.3"' in quality
    # the run's saved settings still verify, so the run and its report stay usable
    code, out = run_cli("report", str(run))
    assert code == 0, out


def test_refusals_exit_2_and_change_nothing(finished_run: Path, tmp_path: Path) -> None:
    """Each refusal exits 2 with its message and leaves the log and settings as they were."""
    run = _copy(finished_run, tmp_path)
    before = ((run / "events.jsonl").read_bytes(), (run / "evaluation.json").read_bytes())
    profiles = _profiles(tmp_path)
    cases = [
        (["--measurements", "tokens", "--revision", "a"], "the run already measures 'tokens'"),
        (["--measurements", "sparkle", "--revision", "a"], "unknown measure 'sparkle'"),
        (["--measurements", "coverage", "--revision", "Bad Name"], "revision name 'Bad Name' is not allowed"),
        (["--measurements", "", "--revision", "a"], "no measure requested"),
        (["--measurements", "coverage", "--revision", "a"], "no task can measure 'coverage'"),
        (["--measurements", "coverage", "--revision", "a", "--coverage-profiles", str(tmp_path / "nope.yaml")],
         "the coverage profiles file does not exist"),
    ]
    bad_profile = tmp_path / "bad.yaml"
    bad_profile.write_text(yaml.safe_dump({"python": {**PROFILE, "report_path": "/abs/cov.json"}}))
    cases.append((["--measurements", "coverage", "--revision", "a", "--coverage-profiles", str(bad_profile)],
                  "must be relative to the repository root"))
    for args, message in cases:
        code, out = run_cli("measure", str(run), *args, "--yes")
        assert_refused(code, out, message)
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "a",
                        "--coverage-profiles", str(profiles))
    assert code == 2 and "\nerror: measurement revision a runs collectors" in out and "pass --yes" in out, out
    assert ((run / "events.jsonl").read_bytes(), (run / "evaluation.json").read_bytes()) == before
    assert not (run / "measure" / "a").exists()


def test_existing_name_conflicting_profile_and_broken_readiness_are_refused(finished_run: Path, tmp_path: Path) -> None:
    """After a revision: its name is refused, coverage is already measured, a profile key saved
    with another profile is refused; on a fresh copy a command that writes no report leaves
    coverage ready on no task, which is refused before anything is recorded."""
    run = _copy(finished_run, tmp_path)
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r1",
                        "--coverage-profiles", str(_profiles(tmp_path)), "--yes")
    assert code == 0, out
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r1", "--yes")
    assert_refused(code, out, "measurement revision 'r1' already exists")
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r2", "--yes")
    assert_refused(code, out, "the run already measures 'coverage'")
    other_profile = tmp_path / "other"
    other_profile.mkdir()
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r2", "--yes",
                        "--coverage-profiles", str(_profiles(other_profile, {**PROFILE, "tool_version": "7.0.0"})))
    assert_refused(code, out, "the run already saved coverage_profiles['python'] with a different profile")

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    other = _copy(finished_run, fresh)
    log = (other / "events.jsonl").read_bytes()
    broken = _profiles(fresh, {**PROFILE, "report_path": "nowhere.json"})
    code, out = run_cli("measure", str(other), "--measurements", "coverage", "--revision", "b",
                        "--coverage-profiles", str(broken), "--yes")
    assert code == 2, out
    assert "\nerror: no task can measure 'coverage'" in out and "wrote no nowhere.json" in out
    assert "Traceback" not in out
    assert (other / "events.jsonl").read_bytes() == log
    assert not (other / "measure" / "b").exists()


def test_unfinished_and_active_runs_are_refused(tmp_path: Path, venv_path) -> None:
    """A run whose coding has not finished is refused with the command that finishes it."""
    code, out = run_cli("run", str(_config(tmp_path)), "--output", str(tmp_path / "run"), "--foreground")
    assert code == 0, out
    run = tmp_path / "run"
    lines = (run / "events.jsonl").read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if '"attempt.completed"' in line)
    (run / "events.jsonl").write_text("\n".join(lines[:cut]) + "\n")
    (run / "evidence" / "ledger.sqlite").unlink(missing_ok=True)
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "a", "--yes")
    assert_refused(code, out, "has not finished", "pluginbench run")


def test_status_lists_the_revision_and_resume_accepts_rewritten_settings(finished_run: Path, tmp_path: Path) -> None:
    """After a revision, status --json lists it as selected, and `run` on the finished run
    accepts the settings the revision rewrote (their hash is the one the log recorded)."""
    run = _copy(finished_run, tmp_path)
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r1",
                        "--coverage-profiles", str(_profiles(tmp_path)), "--yes")
    assert code == 0, out
    code, out = run_cli("status", str(run), "--json")
    assert code == 0, out
    measures = json.loads(out)["measures"]
    assert measures["measurement_revisions"] == [{"revision": "r1", "status": "selected", "selected": True}]
    assert "coverage" in measures["selected"]
    code, out = run_cli("run", str(run), "--foreground")
    assert code == 0, out


def test_a_fresh_run_selecting_coverage_collects_it(tmp_path: Path, venv_path) -> None:
    """A run that selects coverage with a profile collects it per attempt through the collector
    actor: the guided arm (tests-first) gets 0.6 with one redundant test, vanilla 0.2, and the
    report groups the medians by language and analyzer."""
    counter = tmp_path / "coverage-runs.txt"  # outside the sandboxes: one line per run of the command
    counted = {**PROFILE, "command": ["sh", "-c", f"echo run >> {counter}; sh coverage.sh"]}
    config = _config(tmp_path, measurements=["tokens", "time", "lines", "coverage"],
                     measurement_settings={"coverage_profiles": {"python": counted}})
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "run"), "--foreground")
    assert code == 0, out
    results = json.loads((tmp_path / "run" / "report" / "results.json").read_text())
    # readiness's two starting runs, then one per submission: readiness's first is the collectors' starting report
    assert counter.read_text().count("run") == 2 + len(results["attempts"])
    got = {r["arm"]: r["measures"]["changed_line_coverage"]["value"] for r in results["attempts"]}
    assert got == {"vanilla": 0.2, "tests-first": 0.6}, got
    group = results["code_measures"]["changed_line_coverage"]["python|coverage-py-json 7.17.3"]
    assert group["per_task"]["clamp"]["tests-first"] == {"median": 0.6, "n": 2, "unknown": 0, "reasons": [],
                                                         "reference": None, "ratio_to_reference": None,
                                                         "status": "measured", "not_applicable": 0}
    assert group["per_arm"]["vanilla"]["median_of_task_medians"] == 0.2
    # the starting source's coverage ran once for the task (4 attempts), kept as evidence and reused
    shared = tmp_path / "run" / "evidence" / "measure-shared" / "coverage"
    folders = sorted(p.name for p in shared.iterdir())
    assert len(folders) == 1 and folders[0].startswith("starting-"), folders
    assert (shared / folders[0] / "report.raw").is_file()
    assert (shared / folders[0] / "source.txt").read_text().startswith("readiness")
    for row in results["attempts"]:
        work = tmp_path / "run" / row["evidence"] / "measure" / "coverage"
        assert (work / "starting.txt").read_text().strip() == str(shared / folders[0])
        assert not (work / "starting").exists() and (work / "submission" / "report.raw").is_file()


def test_preparation_checks_coverage_per_task_and_saves_readiness(tmp_path: Path, venv_path) -> None:
    """A run that selects coverage runs its readiness check (the command twice on the starting
    source) before coding: measurement-readiness.json and check.json in the run directory say
    ready, bind the observer versions, and the log records them."""
    config = _config(tmp_path, repeats=1, measurements=["tokens", "time", "lines", "coverage"],
                     measurement_settings={"coverage_profiles": {"python": PROFILE}})
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "run"), "--foreground")
    assert code == 0, out
    run = tmp_path / "run"
    doc = json.loads((run / "measurement-readiness.json").read_text())
    assert doc["readiness"] == [{"task": "clamp", "measure": "coverage", "state": "ready", "reason": None,
                                 "detail": "7.17.3"}]
    assert doc["observers"]["coverage"] == COVERAGE_OBSERVER_VERSION and doc["not_measured"] == [] and doc["blocking"] == []
    assert json.loads((run / "check.json").read_text())["measurements"] == doc
    checked = [e for e in events_of(run) if e["type"] == "measurement_readiness.checked"]
    assert len(checked) == 1 and checked[0]["observers"]["coverage"] == COVERAGE_OBSERVER_VERSION


def test_coverage_ready_on_no_task_stops_the_run_before_coding(tmp_path: Path, venv_path) -> None:
    """A coverage command that writes no report leaves coverage broken on every task: the run
    stops before its first coding attempt, saying why."""
    config = _config(tmp_path, repeats=1, measurements=["tokens", "time", "lines", "coverage"],
                     measurement_settings={"coverage_profiles": {"python": {**PROFILE, "report_path": "none.json"}}})
    code, out = run_cli("run", str(config), "--output", str(tmp_path / "run"), "--foreground")
    assert code != 0, out
    types = [e["type"] for e in events_of(tmp_path / "run")]
    assert "agent.launched" not in types and "coding.started" not in types
    stopping = [e for e in events_of(tmp_path / "run") if e["type"] == "run.stopping"][-1]
    assert "coverage is ready on no task" in stopping["reason"] and "wrote no none.json" in stopping["reason"]


def test_a_different_frozen_observer_version_is_refused(finished_run: Path, tmp_path: Path) -> None:
    """A run whose coverage observer was frozen at another version (here version 2, before Go
    line-directive attribution) is refused: its values could differ for the same input."""
    run = _copy(finished_run, tmp_path)
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r1",
                        "--coverage-profiles", str(_profiles(tmp_path)), "--yes")
    assert code == 0, out
    log = run / "events.jsonl"
    frozen = f'"observers":{{"coverage":"{COVERAGE_OBSERVER_VERSION}"'
    assert frozen in log.read_text()
    log.write_text(log.read_text().replace(frozen, '"observers":{"coverage":"2"'))
    (run / "evidence" / "ledger.sqlite").unlink(missing_ok=True)
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r2", "--yes")
    assert_refused(code, out, "the run froze the 'coverage' observer at version 2")


def test_an_observer_source_no_version_declares_is_refused(finished_run: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """When this build's coverage observer source hash is declared by no observer version (its code
    changed without a declaration), measure refuses with exit 2 and records nothing."""
    from pluginbench.measures._observers_declared import DECLARED

    monkeypatch.setitem(DECLARED, "coverage", {COVERAGE_OBSERVER_VERSION: ("0" * 64,)})
    run = _copy(finished_run, tmp_path)
    before = (run / "events.jsonl").read_text()
    code, out = run_cli("measure", str(run), "--measurements", "coverage", "--revision", "r1",
                        "--coverage-profiles", str(_profiles(tmp_path)), "--yes")
    assert_refused(code, out, "the 'coverage' observer source", "is declared by no observer version")
    assert (run / "events.jsonl").read_text() == before and not (run / "measure" / "r1").exists()


def test_coverage_whose_two_starting_runs_differ_is_broken_with_the_reason(tmp_path: Path, venv_path) -> None:
    """Readiness runs the coverage command twice on the starting source: a command whose second run
    measures other lines (here it adds a source file) is broken for that task, naming the file, and
    coverage ready on no task stops the check."""
    marker = tmp_path / "ran-once"
    drifting = {**PROFILE, "command": ["sh", "-c", f"if [ -e {marker} ]; then printf 'def g():\\n    return 1\\n' "
                                                    f"> calc/drift.py; else touch {marker}; fi; sh coverage.sh"]}
    config = _config(tmp_path, measurements=["tokens", "time", "lines", "coverage"],
                     measurement_settings={"coverage_profiles": {"python": drifting}})
    code, out = run_cli("check", str(config), "--json")
    doc = json.loads(out[out.index("{"):])
    row = doc["measurements"]["readiness"][0]
    assert row["state"] == "broken", row
    assert row["reason"] == "two runs on the starting source measured different lines (calc/drift.py)"
    assert code != 0 and "coverage is ready on no task" in " ".join(doc["measurements"]["blocking"])


def test_check_prints_readiness_per_measure(tmp_path: Path, venv_path) -> None:
    """check runs each selected measure's readiness per task and prints it, with the warning
    for a pair it will not measure; --json carries the rows, warnings and not_measured."""
    config = _config(tmp_path, measurements=["tokens", "time", "lines", "coverage"],
                     measurement_settings={"coverage_profiles": {"python": PROFILE}})
    code, out = run_cli("check", str(config))
    assert code == 0, out
    assert "measure readiness clamp: coverage ready" in out
    code, out = run_cli("check", str(config), "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["measurements"]["readiness"][0]["state"] == "ready"
    assert doc["warnings"] == [] and doc["not_measured"] == []
