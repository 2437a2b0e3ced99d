"""``pluginbench measure`` on a finished run in bubblewrap sandboxes: a refusal after the
readiness checks writes nothing (not even an empty ``measure/`` folder), a coverage tool the
sandbox cannot see is named with the fix, and a revision of a measure that takes no
reference prints a meaningful reference line."""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests._prereq import require
from tests.cli._cli_helpers import run_cli

DATA = Path(__file__).parents[1] / "data" / "coverage"
PROFILE = {"report_path": "coverage.json", "format": "coverage-py-json", "tool_version": "7.17.3"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A simulated two-arm run of the clamp task, finished, sandboxed by bubblewrap."""
    require(shutil.which("bwrap") is not None, "bubblewrap")
    tmp = tmp_path_factory.mktemp("measure-bwrap")
    guidance = tmp / "testing.md"
    guidance.write_text("Always add tests for new code.\n")
    cfg = tmp / "evaluation.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": "cov-bwrap", "tasks": {"source": str(DATA / "tasks"), "ids": ["clamp"]},
        "treatments": {"tests-first": {"guidance": [str(guidance)]}},
        "runner": {"harness": "simulated", "model": "simulated-1"},
        "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 120,
        "environment": {"isolation": "bubblewrap"},
    }))
    code, out = run_cli("run", str(cfg), "--output", str(tmp / "run"), "--foreground")
    assert code == 0, out
    return tmp / "run"


def _copy(run: Path, tmp: Path) -> Path:
    dst = tmp / "run-copy"
    shutil.copytree(run, dst, symlinks=True)
    (dst / "run.lock").unlink(missing_ok=True)
    return dst


def _tree(run: Path) -> dict[str, str]:
    """Every file and folder of the run but its rebuildable ledger, with each file's SHA-256."""
    out = {}
    for p in sorted(run.rglob("*")):
        rel = str(p.relative_to(run))
        if rel.startswith("evidence/ledger.sqlite") or rel == "run.lock":
            continue
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def _measure_coverage(run: Path, tmp: Path, command: list[str], *extra: str) -> tuple[int, str]:
    profiles = tmp / "cov.yaml"
    profiles.write_text(yaml.safe_dump({"python": {**PROFILE, "command": command}}))
    return run_cli("measure", str(run), "--measurements", "coverage", "--coverage-profiles", str(profiles),
                   "--revision", "x", "--yes", *extra)


@pytest.mark.parametrize("command", [
    ["sh", "-c", "true"],  # runs, writes no report
    [sys.executable, "-m", "coverage", "run", "-m", "pytest"],  # a virtualenv's Python, outside the sandbox
])
def test_a_refusal_after_the_readiness_checks_writes_nothing(finished_run: Path, tmp_path: Path,
                                                             command: list[str]) -> None:
    """A request refused by its readiness checks (coverage ready on no task) exits 2 and leaves
    the run's files and folders exactly as they were: no ``measure/`` folder, no scratch."""
    run = _copy(finished_run, tmp_path)
    assert not (run / "measure").exists()
    before = _tree(run)
    code, out = _measure_coverage(run, tmp_path, command)
    assert code == 2 and "\nerror: no task can measure 'coverage'" in out and "Traceback" not in out, out
    assert _tree(run) == before
    assert not (run / "measure").exists()


@pytest.mark.parametrize("command, shown", [
    ([sys.executable, "-m", "coverage", "run", "-m", "pytest"], sys.executable),  # bubblewrap's failed exec
    (["sh", "-c", "pluginbench-no-such-coverage-tool run -m pytest"], "exit 127"),  # the shell's not found
])
def test_a_coverage_tool_the_sandbox_cannot_see_is_named_with_where_to_install_it(
        finished_run: Path, tmp_path: Path, command: list[str], shown: str) -> None:
    """A coverage command whose tool lives outside the bubblewrap sandbox's system folders is
    refused naming the command, what the sandbox sees and where to install the tool."""
    run = _copy(finished_run, tmp_path)
    code, out = _measure_coverage(run, tmp_path, command)
    assert code == 2, out
    flat = " ".join(out.split())
    assert "found no coverage tool inside the sandbox" in flat and shown in flat, out
    assert "sees only the system folders /usr" in flat and "install the tool under /usr" in flat, out


def test_an_iterations_revision_prints_what_the_reference_measured(finished_run: Path, tmp_path: Path) -> None:
    """Adding iterations (a measure that takes no reference) prints the reference line with the
    reference measures the revision measured again and says iterations is not a reference measure."""
    run = _copy(finished_run, tmp_path)
    code, out = run_cli("measure", str(run), "--measurements", "iterations", "--revision", "it", "--yes")
    assert code == 0, out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("reference clamp:")]
    assert line.startswith("reference clamp: source lines added ") and "(iterations: not a reference measure)" in line, line
