"""An arm whose plugins run command hooks: total usage unknown, the native session's usage kept apart and labelled."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from pluginbench.events import Usage
from pluginbench.harnesses._port import HOOKS_UNMETERED, hook_arm_usage
from pluginbench.projections import build_report
from pluginbench.status import status_snapshot
from tests.projections.test_report import RunBuilder, exact, load


def test_hook_arm_usage_makes_the_total_unknown_and_keeps_the_session():
    """A validated session of a hook arm becomes an unknown total with the reason, the session kept with its own status."""
    native = exact(1200, 80)
    usage = hook_arm_usage(native)
    assert usage.status == "unknown" and usage.reason == HOOKS_UNMETERED
    assert usage.input_tokens is None and usage.output_tokens is None and usage.total_tokens is None
    s = usage.native_session
    assert s is not None and s.status == "exact" and s.native_session is None
    assert (s.input_tokens, s.output_tokens, s.total_tokens) == (1200, 80, native.total_tokens)
    assert s.reason.startswith("native CLI session only")
    partial = hook_arm_usage(Usage(status="lower_bound", input_tokens=5, output_tokens=1, reason="timed out"))
    assert partial.native_session.status == "lower_bound" and "timed out" in partial.native_session.reason


def _run(tmp_path: Path) -> Path:
    b = RunBuilder(tmp_path / "run", ["task-a"], treatments=("hooked",), harness="codex")
    b.complete("task-a", "vanilla", "pass", exact(1000, 100))
    b.complete("task-a", "hooked", "pass", hook_arm_usage(exact(1500, 90)))
    return b.close()


def test_results_json_reports_unknown_total_with_native_session(tmp_path: Path) -> None:
    """results.json: the hook arm's tokens are unknown (with the reason, in missing_values), native_session holds the
    session's counts and label, a note names the attempt, and the CSV has labelled native_session_tokens rows."""
    root = _run(tmp_path)
    doc = load(root)
    rows = {a["arm"]: a for a in doc["attempts"]}
    hooked, vanilla = rows["hooked"]["tokens"], rows["vanilla"]["tokens"]
    assert hooked["status"] == "unknown" and hooked["total"] is None and hooked["reason"] == HOOKS_UNMETERED
    assert hooked["native_session"]["input"] == 1500 and hooked["native_session"]["status"] == "exact"
    assert "unmetered" in hooked["native_session"]["label"]
    assert vanilla["native_session"] is None and vanilla["total"] == 1100
    missing = [m for m in doc["missing_values"] if m.get("attempt_id") == rows["hooked"]["attempt_id"]]
    assert any(m["field"] == "tokens" and m["reason"] == HOOKS_UNMETERED for m in missing), missing
    assert any(rows["hooked"]["attempt_id"] in n and "native CLI session" in n for n in doc["notes"])
    assert doc["per_task"]["task-a"]["hooked"]["mean_input_output_tokens"] is None
    files = build_report(root)
    table = list(csv.DictReader(io.StringIO(files.results_csv.read_text())))
    native_rows = {r["measure"]: r for r in table if r["measure"].startswith("native_session_tokens.")}
    assert len(native_rows) == 6 and native_rows["native_session_tokens.input"]["value"] == "1500"
    assert "unmetered" in native_rows["native_session_tokens.input"]["reason"]
    assert "native session" in files.report_html.read_text()


def test_status_keeps_native_session_sums_apart(tmp_path: Path) -> None:
    """status --json: the hook arm's token totals are unknown and its native sessions are summed apart, labelled."""
    snap = status_snapshot(_run(tmp_path))
    hooked = snap["arms"]["hooked"]["tokens"]
    assert hooked["total_tokens"] is None and hooked["lower_bound"] is True
    assert hooked["native_session"]["input_tokens"] == 1500 and hooked["native_session"]["attempts"] == 1
    assert "unmetered" in hooked["native_session"]["label"]
    assert snap["arms"]["vanilla"]["tokens"]["native_session"] is None
    assert json.dumps(snap)  # serialisable as status --json prints it
