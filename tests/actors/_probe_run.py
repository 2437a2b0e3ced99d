"""One real ``pluginbench run`` of a probe-driven evaluation in a subprocess, for the tests
that plant hostile agents: the model credentials of the caller never reach it, and its HOME
and cache root are the test's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

PROBE_TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
REFUSED = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN",
           "OPENAI_API_KEY", "CODEX_API_KEY")


def run_probe_evaluation(tmp_path: Path, config: dict[str, Any], timeout: float = 900) -> tuple[Path, list[dict[str, Any]]]:
    """Write ``config`` as ``tmp_path/evaluation.yaml``, run it in the foreground into
    ``tmp_path/run`` (asserting exit 0) and return the run folder and its decoded events."""
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    run = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k not in REFUSED}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run), "--foreground", "--yes"],
        capture_output=True, text=True, env=env, timeout=timeout,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return run, [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]


def claude_add_numbers(tmp_path: Path, name: str, scenario: Path, timeout_seconds: int) -> tuple[dict[str, Any], Path]:
    """A one-attempt Claude Code evaluation (bubblewrap) of the probe task ``add-numbers``, copied to
    ``tmp_path/tasks`` (its folder is returned, for a test to edit), against ``scenario``."""
    tasks = tmp_path / "tasks"
    shutil.copytree(PROBE_TASKS / "add-numbers", tasks / "add-numbers")
    config = {
        "name": name, "tasks": {"source": str(tasks), "ids": ["add-numbers"]}, "treatments": {},
        "runner": {"harness": "claude", "model": "claude-sonnet-4-5", "reasoning": "low", "probe": str(scenario)},
        "repeats": 1, "jobs": 1, "seed": 1, "timeout_seconds": timeout_seconds,
        "environment": {"isolation": "bubblewrap"},
    }
    return config, tasks / "add-numbers"
