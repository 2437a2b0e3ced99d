"""Preparation runs image preparation and readiness controls ``jobs`` tasks at a time: at jobs 2, two tasks' work overlaps."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from pluginbench.actors import _context, _preparation, create_run, run_worker
from pluginbench.config import load
from pluginbench.errors import TaskError
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


def test_jobs_at_a_time_overlaps_bounds_and_keeps_item_order() -> None:
    """At jobs 2 two items are in progress together (each waits for the other to start), never
    more than two at once, and every result comes back in item order."""
    started = {name: anyio.Event() for name in ("a", "b", "c", "d")}
    running = [0, 0]

    async def work(name: str) -> str:
        running[0] += 1
        running[1] = max(running[1], running[0])
        started[name].set()
        partner = {"a": "b", "b": "a", "c": "d", "d": "c"}[name]
        with anyio.fail_after(20):  # one at a time would never see the partner start
            await started[partner].wait()
        running[0] -= 1
        return name.upper()

    async def main() -> _preparation.Done:
        return await _preparation.jobs_at_a_time(2, ["a", "b", "c", "d"], work)

    assert anyio.run(main) == (["A", "B", "C", "D"], None)
    assert running[1] == 2


def test_jobs_at_a_time_reports_the_first_failure_in_item_order() -> None:
    """A failing item cancels the items after it; the items before it still finish, and its
    exception is in its own slot, as one at a time would leave them."""
    first_may_finish = anyio.Event()

    async def work(name: str) -> str:
        if name == "a":
            await first_may_finish.wait()
            return "A"
        if name == "b":
            first_may_finish.set()
            raise ValueError("b broke")
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def main() -> _preparation.Done:
        with anyio.fail_after(20):
            return await _preparation.jobs_at_a_time(3, ["a", "b", "c"], work)

    results, failure = anyio.run(main)
    assert results == ["A", None, None]  # c was cancelled, never finished
    assert failure is not None and failure[0] == 1
    assert isinstance(failure[1], ValueError) and str(failure[1]) == "b broke"


def test_image_preparations_of_two_tasks_overlap_at_jobs_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an image backend and jobs 2, the second task's image preparation starts before the
    first's ends; task.prepared is still recorded in task order, and the second task's failure
    stops the run with its own message after the first task was reported."""
    both = {t: anyio.Event() for t in ("roman-numerals", "word-wrap")}

    async def prepare_images(engine: Any, task_id: str) -> Any:
        both[task_id].set()
        with anyio.fail_after(20):  # sequential preparation never sees the other task start
            for event in both.values():
                await event.wait()
        if task_id == "word-wrap":
            raise TaskError(f"task '{task_id}': image preparation refused for this test")
        return _context.TaskImages("sha256:coding", "sha256:verifier")

    real_backend_of = _preparation.backend_of

    class ImageBackend:
        def __init__(self, real: Any) -> None:
            self.real = real
            self.uses_images = True

        def __getattr__(self, name: str) -> Any:
            return getattr(self.real, name)

    monkeypatch.setattr(_preparation, "backend_of", lambda ev: ImageBackend(real_backend_of(ev)))
    monkeypatch.setattr(_preparation, "prepare_task_images", prepare_images)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rd = create_run(load(write_config(tmp_path, jobs=2, treatments={})), tmp_path / "run")
    state = run_worker(rd.root, handle_signals=False)
    assert state.failed
    events = events_of(rd.root)
    prepared = [e for e in events if e["type"] == "task.prepared"]
    assert [(e["task"], e["image"], e["verifier_image"]) for e in prepared] == [
        ("roman-numerals", "sha256:coding", "sha256:verifier")]
    stopping = [e for e in events if e["type"] == "run.stopping"]
    assert "image preparation refused for this test" in stopping[0]["reason"]
    assert all(e["type"] != "coding.started" for e in events)
