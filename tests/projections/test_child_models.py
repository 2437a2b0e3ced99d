"""An attempt whose Codex child ran on another model or effort records no model, is
marked ineligible in results.json and is left out of every comparison."""

from __future__ import annotations

from pathlib import Path

from pluginbench.events import ChildModel, ModelRecord, Usage

from .test_report import RunBuilder, load

USAGE = Usage(status="exact", input_tokens=100, cached_input_tokens=0, uncached_input_tokens=100,
              output_tokens=10, reasoning_output_tokens=0, total_tokens=110)
SINGLE = ModelRecord(status="single", model="model-x", effort="high", children=0)
MIXED = ModelRecord(status="mixed", model=None, children=1,
                    mismatched=[ChildModel(session_id="c1", model="gpt-5.6-luna", effort="high")],
                    reason="child session(s) on another model or effort than model-x (effort high): c1; "
                    "the attempt is ineligible")


def test_a_mixed_attempt_is_ineligible_and_left_out_of_comparisons(tmp_path: Path) -> None:
    """results.json shows the mixed attempt's model record and ineligible reason, names it in a note, and its arm's summary counts only eligible attempts."""
    b = RunBuilder(tmp_path / "run", ["task-a"], repeats=2, harness="codex")
    b.complete("task-a", "vanilla", "pass", USAGE, repeat=0, model_record=SINGLE)
    b.complete("task-a", "vanilla", "pass", USAGE, repeat=1, model_record=SINGLE)
    b.complete("task-a", "guided", "pass", USAGE, repeat=0, model_record=SINGLE)
    mixed = b.complete("task-a", "guided", "fail", USAGE, repeat=1, model_record=MIXED)
    doc = load(b.close())
    rows = {r["attempt_id"]: r for r in doc["attempts"]}
    assert rows[mixed]["ineligible"] == MIXED.reason
    assert rows[mixed]["model_record"]["status"] == "mixed" and rows[mixed]["model_record"]["model"] is None
    assert rows[mixed]["model_record"]["mismatched"] == [{"session_id": "c1", "model": "gpt-5.6-luna", "effort": "high"}]
    assert all(r["ineligible"] is None for aid, r in rows.items() if aid != mixed)
    assert rows["task-a.vanilla.0"]["model_record"]["model"] == "model-x"
    assert any("ineligible" in n and mixed in n for n in doc["notes"])
    guided, vanilla = doc["per_task"]["task-a"]["guided"], doc["per_task"]["task-a"]["vanilla"]
    # the guided fail came from the mixed attempt: only its eligible pass is counted
    assert guided["attempts"] == 1 and vanilla["attempts"] == 2
