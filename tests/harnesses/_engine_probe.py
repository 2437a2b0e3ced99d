"""A whole probe evaluation with a real CLI: vanilla fails, the guided arm passes, and the
tokens results.json reports equal what the loopback probe served (one body, one file per
harness so the suite's workers run them side by side)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from pluginbench.probe import SCENARIOS_DIR, find_cli
from tests._prereq import require

TASKS = Path(__file__).resolve().parents[1] / "data" / "probe-tasks"
MARKER = "PLUGINBENCH-GUIDANCE-MARKER"


def whole_probe_evaluation(tmp_path: Path, harness: str, model: str) -> None:
    """Run the guided scenario's whole evaluation with ``harness`` in bubblewrap and check it."""
    require(find_cli(harness) is not None, f"{harness} CLI (tools/install-clis.sh)")
    require(shutil.which("bwrap") is not None, "bubblewrap")
    guidance = tmp_path / "pkg" / "AGENTS.md"
    guidance.parent.mkdir(parents=True)
    guidance.write_text(f"# Guidance\n{MARKER}: write guided answers.\n")
    config = {
        "name": f"probe-{harness}", "tasks": {"source": str(TASKS), "ids": ["add-numbers"]},
        "treatments": {"guided": {"guidance": [str(guidance)]}},
        "runner": {"harness": harness, "model": model, "probe": str(SCENARIOS_DIR / "guided.yaml")},
        "repeats": 1, "jobs": 2, "seed": 1, "timeout_seconds": 180, "environment": {"isolation": "bubblewrap"},
    }
    path = tmp_path / "evaluation.yaml"
    path.write_text(yaml.safe_dump(config))
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "pluginbench", "run", str(path), "--output", str(run_dir),
                           "--foreground", "--yes"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((run_dir / "report" / "results.json").read_text())
    assert results["run"]["probe"] is True
    per = results["per_task"]["add-numbers"]
    assert per["vanilla"]["pass_rate"] == 0.0 and per["guided"]["pass_rate"] == 1.0
    served_in = served_out = 0
    for line in (run_dir / "evidence" / "probe" / "requests.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["kind"] == "coding" and r["completed"] and r["status"] == 200 and r["usage"]:
            served_in += r["usage"]["input_tokens"]
            served_out += r["usage"]["output_tokens"]
    attempts = results["attempts"]
    assert all(a["tokens"]["status"] == "exact" for a in attempts), [a["tokens"] for a in attempts]
    assert (sum(a["tokens"]["input"] for a in attempts), sum(a["tokens"]["output"] for a in attempts)) == (
        served_in, served_out)
    assert "PROBE" in (run_dir / "report" / "report.html").read_text()
