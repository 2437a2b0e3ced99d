"""Synthetic run directories for the dashboard's core tests (no engine, real files)."""

from __future__ import annotations

from pathlib import Path

from pluginbench.projections._report import build_report
from tests.projections.test_report import UNKNOWN_USAGE, RunBuilder, exact


def synthetic_run(root: Path, *, harness: str = "simulated", name: str = "demo", report: bool = True,
                  model: str = "model-x") -> Path:
    """Two tasks × vanilla/guided × 2 repeats, one unknown usage and one unknown line count;
    with report/ unless ``report`` is false."""
    b = RunBuilder(root, ["task-a", "task-b"], repeats=2, harness=harness, name=name)
    b.complete("task-a", "vanilla", "pass", exact(1000, 200), repeat=0)
    b.complete("task-a", "vanilla", "fail", UNKNOWN_USAGE, repeat=1, lines=None)
    b.complete("task-a", "guided", "pass", exact(1100, 260), repeat=0)
    b.complete("task-a", "guided", "pass", exact(1100, 260), repeat=1)
    b.complete("task-b", "vanilla", "empty", exact(900, 100), repeat=0)
    b.close()
    (root / "evaluation-binding.json").write_text("{}")
    if report:
        build_report(root)
    if model != "model-x":
        import json

        doc = json.loads((root / "report" / "results.json").read_text())
        doc["run"]["model"] = model
        (root / "report" / "results.json").write_text(json.dumps(doc))
    return root
