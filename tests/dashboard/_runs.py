"""Synthetic run directories for the dashboard's core tests (no engine, real files)."""

from __future__ import annotations

import hashlib
import json
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
    # the binding names the frozen settings' hash, as a real run's does (report checks it)
    digest = hashlib.sha256((root / "evaluation.json").read_bytes()).hexdigest()
    (root / "evaluation-binding.json").write_text(json.dumps({"evaluation_sha256": digest}))
    if report:
        build_report(root)
    if model != "model-x":
        doc = json.loads((root / "report" / "results.json").read_text())
        doc["run"]["model"] = model
        (root / "report" / "results.json").write_text(json.dumps(doc))
    return root
