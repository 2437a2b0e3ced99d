"""A DeepSWE-shaped task on docker, end to end: a prebuilt image built locally FROM the base
image, ``model.patch`` declared as an artifact, a collect command, and DeepSWE's grader that
applies the patch itself, resets the files ``test.patch`` replaces and scores node ids."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pluginbench.projections._results_schema import validate as validate_results
from tests._prereq import require
from tests.runs_helpers import events_of

from .test_docker_runs import _engine_up, cli, config

pytestmark = [pytest.mark.docker, pytest.mark.slow]
SHAPED = Path(__file__).resolve().parents[1] / "data" / "deepswe-shaped"
TASK = SHAPED / "calc-clamp"
CASES = SHAPED / "cases"
IMAGE = "pluginbench-test/deepswe-calc:v1"


@pytest.fixture(scope="module")
def task_image() -> str:
    require(_engine_up(), "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")
    subprocess.run(["docker", "build", "-q", "-t", IMAGE, str(TASK / "environment")], check=True,
                   capture_output=True, timeout=600)
    head = subprocess.run(["docker", "run", "--rm", IMAGE, "git", "-C", "/app", "rev-parse", "HEAD"],
                          check=True, capture_output=True, text=True, timeout=120).stdout.strip()
    assert head == json.loads((TASK / "tests" / "config.json").read_text())["base_commit"]
    return IMAGE


def variant(source: Path, name: str, *, candidate: str | None = None, solve: str | None = None) -> None:
    """A copy of the task whose simulated agent applies ``candidate`` or whose oracle runs ``solve``."""
    dest = source / name
    shutil.copytree(TASK, dest)
    toml = dest / "task.toml"  # each copy is its own task (two tasks may not share a [task] name)
    toml.write_text(toml.read_text().replace('name = "pluginbench-test/calc-clamp"', f'name = "pluginbench-test/{name}"'))
    if candidate is not None:
        (dest / "simulated").mkdir()
        shutil.copyfile(CASES / candidate, dest / "simulated" / candidate)
        (dest / "simulated" / "candidates.toml").write_text(
            f'keywords = []\n[[candidates]]\nname = "{name}"\npatch = "{candidate}"\nexpect = "pass"\nweight = 1\n'
            'guided_weight = 1\nsummary = "scripted"\n')
    if solve is not None:
        shutil.copyfile(CASES / solve, dest / "solution" / "solve.sh")
        (dest / "solution" / "solve.sh").chmod(0o755)


def run(tmp: Path, name: str, harness: str, tasks: list[str], source: Path) -> tuple[Path, dict[str, Any]]:
    out = tmp / name
    path = config(tmp, name=name, tasks={"source": str(source), "ids": tasks}, treatments={},
                  runner={"harness": harness, "model": "simulated-1" if harness == "simulated" else None}, jobs=2)
    cli("run", str(path), "--output", str(out), "--foreground")
    results = json.loads((out / "report" / "results.json").read_text())
    validate_results(results)
    return out, results


def by_task(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["task"]: a for a in results["attempts"]}


def test_deepswe_shaped_task_grades_like_harbor(task_image: str, tmp_path: Path) -> None:
    """On docker the verifier gets model.patch only as an artifact: readiness passes (oracle 1, nop 0), the oracle
    passes, an agent artifact never replaces the canonical patch, and the contract is frozen and shown by check."""
    source = tmp_path / "tasks"
    source.mkdir()
    shutil.copytree(TASK, source / "calc-clamp")
    variant(source, "artifact", solve="artifact-solve.sh")
    checked = cli("check", str(config(tmp_path, tasks={"source": str(source), "ids": ["calc-clamp"]},
                                      treatments={}, runner={"harness": "oracle"})), "--json")
    report = json.loads(checked.stdout)
    assert report["contracts"]["calc-clamp"]["patch_applied_by"] == "verifier"
    assert report["contracts"]["calc-clamp"]["kind"] == "deepswe"
    assert [(r["control"], r["ok"], r["reward"]) for r in report["readiness"]] == [("oracle", True, 1.0), ("nop", True, 0.0)]

    out, results = run(tmp_path, "oracle", "oracle", ["artifact", "calc-clamp"], source)
    rows = by_task(results)
    assert rows["calc-clamp"]["outcome"] == "pass"
    assert rows["calc-clamp"]["native_grading"] == {
        "f2p": 1.0, "f2p_passed": 3.0, "f2p_total": 3.0, "p2p": 1.0, "p2p_passed": 1.0, "p2p_total": 1.0, "partial": 1.0}
    assert rows["artifact"]["outcome"] == "pass"
    evidence = out / rows["artifact"]["evidence"]
    assert "return value" in (evidence / "artifacts" / "model.patch").read_text()  # the collected, wrong commit
    assert "max(low, min(value, high))" in (evidence / "model.patch").read_text()  # the canonical, graded one
    prepared = {e["task"]: e for e in events_of(out) if e["type"] == "task.prepared"}
    assert prepared["calc-clamp"]["patch_applied_by"] == "verifier" and prepared["calc-clamp"]["contract"] == "deepswe"
    frozen = json.loads((out / "evidence" / "frozen" / "contracts" / "calc-clamp.json").read_text())
    assert frozen["replaced_paths"] == ["run_tests.py", "tests/check_calc.py"]
    proof = json.loads((out / "evidence" / "frozen" / "contracts" / "calc-clamp.proof.json").read_text())
    assert proof["base_commit"] == frozen["base_commit"] and proof["payload"] == frozen["payload"]
    readiness = [(e["task"], e["control"], e["ok"]) for e in events_of(out) if e["type"] == "readiness.checked"]
    assert sorted(readiness) == [("artifact", "nop", True), ("artifact", "oracle", True),
                                 ("calc-clamp", "nop", True), ("calc-clamp", "oracle", True)]

    _, nop = run(tmp_path, "nop", "nop", ["calc-clamp"], source)
    # A grader image whose /app is not at the base commit is refused before readiness.
    variant(source, "moved")
    moved = source / "moved"
    (moved / "tests" / "Dockerfile").write_text(
        (moved / "tests" / "Dockerfile").read_text() + "RUN chmod +x /app/calc.py\n")
    refused = cli("check", str(config(tmp_path, tasks={"source": str(source), "ids": ["moved"]}, treatments={},
                                      runner={"harness": "oracle"})), check=False)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "differs from the frozen starting source" in refused.stderr
    (row,) = nop["attempts"]
    assert row["outcome"] == "empty" and row["reward"] == 0.0


def test_deepswe_shaped_overlap_and_source_only(task_image: str, tmp_path: Path) -> None:
    """A patch that also edits a file test.patch replaces is an overlap_pass shown beside confirmed passes; a correct
    patch with a broken agent test file fails natively and passes the source-only grade without that file."""
    source = tmp_path / "tasks"
    variant(source, "overlap", candidate="overlap.patch")
    variant(source, "agent-test-fails", candidate="agent-test-fails.patch")
    out, results = run(tmp_path, "simulated", "simulated", ["agent-test-fails", "overlap"], source)
    rows = by_task(results)
    overlap = rows["overlap"]
    assert overlap["outcome"] == "overlap_pass" and overlap["reward"] == 1.0
    assert overlap["overlap_paths"] == ["tests/check_calc.py"]
    assert results["per_task"]["overlap"]["vanilla"]["overlap_passes"] == 1
    assert results["per_task"]["overlap"]["vanilla"]["passes"] == 0
    failing = rows["agent-test-fails"]
    assert failing["outcome"] == "fail" and failing["native_grading"]["p2p_passed"] == 0.0
    assert failing["source_only_reward"] == 1.0
    grading = failing["source_only_grading"]
    assert grading["removed_test_files"] == ["tests/check_extra.py"] and grading["status"] == "graded"
    assert grading["nothing_removed"] is False and grading["native_result_reused"] is False
    assert overlap["source_only_grading"]["removed_test_files"] == ["tests/check_calc.py"]
    csv = (out / "report" / "results.csv").read_text()
    assert "native.p2p_passed" in csv and "source_only.reward" in csv
    html = (out / "report" / "report.html").read_text()
    assert "overlap pass" in html
