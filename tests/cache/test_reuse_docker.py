"""The vanilla cache on the docker backend: entries bind the frozen image IDs, and a second
evaluation reuses and regrades the vanilla attempt in a fresh verifier container."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests._prereq import require
from tests.actors.test_docker_runs import _engine_up
from tests.runs_helpers import QUICKSTART, events_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_second_docker_evaluation_reuses_the_vanilla_attempt(tmp_path: Path) -> None:
    """Run 2 on docker imports run 1's vanilla attempt (same image IDs in the entry) and launches no vanilla agent."""
    require(_engine_up(), "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env.pop("PLUGINBENCH_VANILLA_CACHE", None)
    config = tmp_path / "evaluation.yaml"
    config.write_text(yaml.safe_dump({
        "name": "dk", "tasks": {"source": str(QUICKSTART / "tasks"), "ids": ["roman-numerals"]},
        "runner": {"harness": "simulated", "model": "simulated-1"}, "repeats": 1, "jobs": 1,
        "timeout_seconds": 120, "environment": {"backend": "docker"},
    }))
    runs = []
    for name in ("r1", "r2"):
        done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(config), "-o", str(tmp_path / name),
                               "--foreground"], capture_output=True, text=True, env=env, timeout=900)
        assert done.returncode == 0, done.stdout + done.stderr
        runs.append(events_of(tmp_path / name))
    (cached,) = [e for e in runs[0] if e["type"] == "attempt.cached"]
    entry = json.loads((tmp_path / "xdg" / "pluginbench" / cached["entry"] / "entry.json").read_text())
    (prepared,) = [e for e in runs[0] if e["type"] == "task.prepared"]
    assert entry["images"] == [prepared["image"], prepared["verifier_image"]]
    assert [e["attempt_id"] for e in runs[1] if e["type"] == "attempt.reused"] == ["roman-numerals__vanilla__r1"]
    assert not [e for e in runs[1] if e["type"] == "agent.launched"]
    assert [e["outcome"] for e in runs[1] if e["type"] == "attempt.graded"] == \
        [e["outcome"] for e in runs[0] if e["type"] == "attempt.graded"]
