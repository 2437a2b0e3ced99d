"""A run with attempt evidence for the viewer's tests: the dashboard's synthetic run
(real events and report) plus attempt folders holding the agent traces the real, pinned
Claude Code and Codex CLIs wrote on the probe (tests/data/quality/iterations, see its README)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.dashboard._runs import synthetic_run

TRACES = Path(__file__).resolve().parents[1] / "data" / "quality" / "iterations"
PATCH = """diff --git a/calc.py b/calc.py
index 1111111..2222222 100644
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
diff --git a/notes.txt b/notes.txt
new file mode 100644
--- /dev/null
+++ b/notes.txt
@@ -0,0 +1 @@
+pytest && go test ./...
"""
CLAUDE_ID, CODEX_ID = "task-a.vanilla.0", "task-a.guided.0"


def _attempt(root: Path, attempt_id: str, harness: str, patch: str) -> Path:
    folder = root / "evidence" / "attempts" / attempt_id
    shutil.copytree(TRACES / harness / "agent", folder / "agent")
    (folder / "model.patch").write_text(patch)
    (folder / "grading" / "verifier").mkdir(parents=True)
    (folder / "grading" / "test-stdout.txt").write_text("\n".join(f"line {i}" for i in range(100)) + "\nHIDDEN-TESTS-OK\n")
    (folder / "grading" / "test-stderr.txt").write_text("")
    (folder / "grading" / "verifier" / "reward.json").write_text(json.dumps(
        {"reward": 1.0, "f2p_passed": 2, "f2p_total": 2, "p2p_failed_tests": ["tests/test_b.py::t"]}))
    (folder / "native-treatment.json").write_text(json.dumps({"memory": ["CLAUDE.md"], "skills": ["tdd"]}))
    (folder / "execution.json").write_text(json.dumps({"exit_code": 0, "timed_out": False, "coding_seconds": 3.5}))
    (folder / "invocation.json").write_text(json.dumps({"harness": harness, "model": "probe-model", "argv": []}))
    return folder


def inspect_run(root: Path) -> Path:
    """The synthetic run with two attempts' evidence: Claude Code (task-a vanilla #0) and
    Codex (task-a guided #0) traces, a two-file patch, grading output and a receipt."""
    synthetic_run(root)
    _attempt(root, CLAUDE_ID, "claude", PATCH)
    _attempt(root, CODEX_ID, "codex", PATCH.split("diff --git a/notes.txt")[0])
    return root
