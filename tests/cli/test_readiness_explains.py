"""A failing readiness control explains itself: the verifier's last lines and the evidence folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.runs_helpers import QUICKSTART


def _broken_task(tmp: Path) -> Path:
    """roman-numerals whose verifier prints a diagnosis and always writes reward 0 (so the oracle fails)."""
    source = tmp / "tasks"
    shutil.copytree(QUICKSTART / "tasks" / "roman-numerals", source / "roman-numerals")
    test = source / "roman-numerals" / "tests" / "test.sh"
    test.write_text('#!/bin/sh\nfor i in 1 2 3; do echo "line $i"; done\necho "VERIFIER-DIAGNOSIS: submitted model.patch failed"\n'
                    'mkdir -p "$LOGS_DIR/verifier"; echo 0 > "$LOGS_DIR/verifier/reward.txt"\n')
    test.chmod(0o755)
    path = tmp / "evaluation.yaml"
    path.write_text(yaml.safe_dump({
        "name": "broken", "tasks": {"source": str(source), "ids": ["roman-numerals"]}, "treatments": {},
        "runner": {"harness": "oracle"}, "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": 60,
        "environment": {"isolation": "none"},
    }))
    return path


def _cli(*args: str, env_home: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "XDG_CACHE_HOME": str(env_home), "TMPDIR": str(env_home.parent)}
    return subprocess.run([sys.executable, "-m", "pluginbench", *args], capture_output=True, text=True, timeout=300,
                          env=env)


def test_check_prints_and_json_carries_the_verifier_tail_and_evidence(tmp_path: Path) -> None:
    """check on a failing oracle prints the verifier's last lines and an evidence folder that exists; --json has both."""
    config = _broken_task(tmp_path)
    done = _cli("check", str(config), env_home=tmp_path / "cache")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "VERIFIER-DIAGNOSIS: submitted model.patch failed" in done.stderr
    evidence = next(line.split("evidence: ", 1)[1] for line in done.stderr.splitlines() if "evidence: " in line)
    assert Path(evidence, "grading", "test-stdout.txt").is_file()
    got = json.loads(_cli("check", str(config), "--json", env_home=tmp_path / "cache").stdout)
    oracle = next(r for r in got["readiness"] if r["control"] == "oracle")
    assert oracle["ok"] is False and oracle["verifier_tail"][-1] == "VERIFIER-DIAGNOSIS: submitted model.patch failed"
    assert oracle["verifier_tail"][0] == "line 1" and Path(oracle["evidence"]).is_dir()
    assert got["contracts"]["roman-numerals"]["patch_applied_by"] == "pluginbench"


@pytest.mark.slow
def test_run_prints_the_verifier_tail_and_evidence_of_a_failed_control(tmp_path: Path) -> None:
    """A run whose readiness fails prints the verifier's last lines and the run's evidence folder for the control."""
    config = _broken_task(tmp_path)
    run = tmp_path / "run"
    done = _cli("run", str(config), "--output", str(run), "--foreground", "--yes", env_home=tmp_path / "cache")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "VERIFIER-DIAGNOSIS: submitted model.patch failed" in done.stderr
    assert f"evidence: {run.resolve()}/evidence/readiness/roman-numerals/oracle" in done.stderr
    assert (run / "evidence" / "readiness" / "roman-numerals" / "oracle" / "grading" / "test-stdout.txt").is_file()
