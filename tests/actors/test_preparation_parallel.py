"""Preparation runs readiness controls ``jobs`` tasks at a time: at jobs 2, two tasks' controls overlap."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pluginbench.actors import _preparation, create_run, run_worker
from pluginbench.config import load
from tests.runs_helpers import events_of, write_config


def test_readiness_controls_of_two_tasks_overlap_at_jobs_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With jobs 2 and two tasks, a control of one task runs while a control of the other does,
    never more than two at once, each task's oracle before its nop, and the run then codes."""
    spans: list[tuple[str, str, float, float]] = []
    real = _preparation.run_control

    async def timed(engine: Any, task_id: str, control: str) -> Any:
        start = time.monotonic()
        try:
            return await real(engine, task_id, control)
        finally:
            spans.append((task_id, control, start, time.monotonic()))

    monkeypatch.setattr(_preparation, "run_control", timed)
    # a cache of its own: readiness results another test cached for these tasks would skip the controls
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rd = create_run(load(write_config(tmp_path, jobs=2, treatments={})), tmp_path / "run")
    state = run_worker(rd.root, handle_signals=False)
    assert state.finished, state.failed
    assert sorted((t, c) for t, c, _, _ in spans) == [
        ("roman-numerals", "nop"), ("roman-numerals", "oracle"), ("word-wrap", "nop"), ("word-wrap", "oracle")]
    overlapping = [(a[:2], b[:2]) for a in spans for b in spans if a[0] < b[0] and a[2] < b[3] and b[2] < a[3]]
    assert overlapping, spans
    for _, _, start, _ in spans:
        assert sum(1 for _, _, s, e in spans if s <= start < e) <= 2
    for task in ("roman-numerals", "word-wrap"):
        oracle, nop = (next(s for s in spans if s[:2] == (task, c)) for c in ("oracle", "nop"))
        assert oracle[3] <= nop[2]
    checked = [e for e in events_of(rd.root) if e["type"] == "readiness.checked"]
    assert len(checked) == 4 and all(e["ok"] for e in checked)
