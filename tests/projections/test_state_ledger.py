"""The fold and the ledger agree: random runs rebuild to the same views, from either source."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pluginbench.actors._step import settle
from pluginbench.actors._writer import RunWriter
from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    AttemptGraded,
    CodingStarted,
    EventLog,
    Measure,
    MeasuresCollected,
    RunStarted,
    RunStopping,
    SubmissionCaptured,
    Usage,
    read_events,
)
from pluginbench.projections import Ledger, RunState, fold, read_ledger
from pluginbench.projections._view import attempt_rows, run_row
from pluginbench.status import status_snapshot
from tests.actors.test_decide import created

CLOCK = "2026-01-01T00:00:00.000Z"


def random_run(seed: int, path: Path, ledger: Ledger | None = None) -> RunState:
    """Drive the Supervisor's step (its writer and ``settle``: decide, then schedule) with
    random agent behaviour and random crashes (new workers)."""
    rng = random.Random(seed)
    state = RunState()
    log = EventLog(path, clock=lambda: CLOCK)
    writer = RunWriter(log, state, ledger)

    def record(event: object) -> None:
        settle(state, event, writer.record)  # type: ignore[arg-type]

    record(created(n_tasks=rng.randint(1, 3), repeats=rng.randint(1, 2), jobs=rng.randint(1, 3)))
    record(RunStarted(pid=1, pgid=1, resumed=False))
    record(CodingStarted())
    for _ in range(rng.randint(5, 80)):
        if state.finished or state.failed or state.stopped:
            break
        running = [a for a in state.live_attempts() if a.state == "running"]
        roll = rng.random()
        if roll < 0.05:
            record(RunStarted(pid=2, pgid=2, resumed=True))  # a crash and a new worker
            if not state.coding:
                record(CodingStarted())
            continue
        if roll < 0.08:
            record(RunStopping(reason="stop"))
            continue
        if not running:
            continue
        a = rng.choice(running)
        aid = a.attempt_id
        if not a.launched:
            record(AgentLaunched(attempt_id=aid, argv=["agent"]))
        elif not a.exited:
            usage = rng.choice([
                Usage(status="exact", input_tokens=rng.randint(1, 999), output_tokens=rng.randint(0, 99), total_tokens=None),
                Usage(status="unknown", reason="trace missing"),
            ])
            record(AgentExited(attempt_id=aid, exit_code=0, timed_out=rng.random() < 0.1, coding_seconds=rng.random() * 9, usage=usage))
        elif not a.captured:
            record(SubmissionCaptured(attempt_id=aid, patch_sha256="s", empty=rng.random() < 0.2, files_changed=1))
        elif not a.graded:
            outcome = rng.choice(["pass", "fail", "empty", "unknown"])
            record(AttemptGraded(attempt_id=aid, outcome=outcome, reward=None if outcome == "unknown" else 1.0, reason="why" if outcome == "unknown" else None))
        elif not a.measured:
            record(MeasuresCollected(attempt_id=aid, measures={"source_lines_added": Measure(value=rng.randint(0, 50), unit="lines")}))
    log.close()
    return state


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=10**6))
def test_fold_of_the_saved_log_equals_the_live_state(tmp_path_factory: object, seed: int) -> None:
    """Re-folding events.jsonl gives exactly the views the live state gave."""
    path = Path(tmp_path_factory.mktemp("run")) / "events.jsonl"  # type: ignore[attr-defined]
    live = random_run(seed, path)
    again = fold(read_events(path))
    assert attempt_rows(again) == attempt_rows(live)
    assert run_row(again) == run_row(live)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=10**6))
def test_incremental_ledger_equals_the_fold(tmp_path_factory: object, seed: int) -> None:
    """The ledger updated event by event holds the same rows as a fresh fold of the log."""
    root = Path(tmp_path_factory.mktemp("run"))  # type: ignore[attr-defined]
    ledger = Ledger(root / "ledger.sqlite")
    live = random_run(seed, root / "events.jsonl", ledger)
    ledger.close()
    view = read_ledger(root / "ledger.sqlite")
    assert view is not None
    assert view.attempts == attempt_rows(live)
    assert view.run == run_row(live)
    assert view.last_seq == live.last_seq


def test_status_from_ledger_and_from_log_agree(tmp_path: Path) -> None:
    """status reports the same run whether it reads the ledger or folds the log."""
    (tmp_path / "evidence").mkdir()
    (tmp_path / "evaluation.json").write_text("{}")
    (tmp_path / "evaluation-binding.json").write_text("{}")
    ledger = Ledger(tmp_path / "evidence" / "ledger.sqlite")
    random_run(7, tmp_path / "events.jsonl", ledger)
    ledger.close()
    from_ledger = status_snapshot(tmp_path, now=0)
    (tmp_path / "evidence" / "ledger.sqlite").unlink()
    from_log = status_snapshot(tmp_path, now=0)
    assert from_ledger["states_source"] == "ledger"
    assert from_log["states_source"] == "events"
    for snap in (from_ledger, from_log):
        snap.pop("states_source")
        snap.pop("heartbeat")
    assert from_ledger == from_log


def test_a_lagging_ledger_is_not_trusted(tmp_path: Path) -> None:
    """When the log has events the ledger has not seen, status folds the log instead."""
    (tmp_path / "evidence").mkdir()
    ledger = Ledger(tmp_path / "evidence" / "ledger.sqlite")
    random_run(3, tmp_path / "events.jsonl", ledger)
    ledger.close()
    with EventLog(tmp_path / "events.jsonl", clock=lambda: CLOCK) as log:
        log.append(RunStopping(reason="late"))
    assert status_snapshot(tmp_path, now=0)["states_source"] == "events"


def test_a_damaged_ledger_is_replaced_and_rebuilt(tmp_path: Path) -> None:
    """A ledger file that is not a database is replaced; the writer rebuilds it from the fold."""
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    state = random_run(5, tmp_path / "events.jsonl")
    ledger = Ledger(path)
    assert ledger.last_seq() == -1
    ledger.rebuild(state)
    ledger.close()
    view = read_ledger(path)
    assert view is not None and view.attempts == attempt_rows(state)
