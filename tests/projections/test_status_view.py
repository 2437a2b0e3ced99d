"""status as a pure view: (state, run facts, now) → Status, with no I/O in projections/."""

from __future__ import annotations

import ast
from pathlib import Path

import msgspec

from pluginbench.events import (
    AgentExited,
    AgentLaunched,
    AttemptStarted,
    CodingStarted,
    RunStarted,
    RunStopping,
    SubmissionCaptured,
    _vocab,
)
from pluginbench.projections import RunFacts, RunState, Status, status_of, status_view
from pluginbench.projections._status_types import LeftRunning, Owner
from pluginbench.projections._view import attempt_rows, run_row
from tests.actors.test_decide import USAGE, Run, created

ROOT = Path(__file__).resolve().parents[2]
AID = "t0__vanilla__r1"


def facts(**kw: object) -> RunFacts:
    base: dict[str, object] = {
        "run_dir": "/runs/a b", "owner": None, "newest_write": 100.0, "last_event": {"seq": 1, "type": "run.created"},
        "torn_tail_bytes": 0, "states_source": "events", "selected_measures": ["lines"], "report_html": None,
        "log": None, "left_running": None,
    }
    return RunFacts(**{**base, **kw})  # type: ignore[arg-type]


def coding_run() -> RunState:
    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False), CodingStarted())
    run.start(AID)
    run.apply(AgentLaunched(attempt_id=AID, argv=["x"]))
    run.apply(AgentExited(attempt_id=AID, exit_code=0, timed_out=False, coding_seconds=90.0, usage=USAGE))
    run.apply(SubmissionCaptured(attempt_id=AID, patch_sha256="p", empty=False, files_changed=1))
    return run.state


def test_the_view_is_a_function_of_its_inputs() -> None:
    """The same state, facts and now give the same Status, and the state's own rows give what the fold gives."""
    state = coding_run()
    a = status_of(state, facts(), 130.0)
    b = status_view(run_row(state), attempt_rows(state), facts(), 130.0)
    assert isinstance(a, Status) and a == b
    assert msgspec.json.encode(a) == msgspec.json.encode(status_of(state, facts(), 130.0))


def test_the_heartbeat_age_is_measured_at_now() -> None:
    """The heartbeat is the newest write's time and its age at the given now; no write gives no heartbeat."""
    state = coding_run()
    hb = status_of(state, facts(newest_write=100.0), 142.26).heartbeat
    assert hb is not None and (hb.at, hb.age_seconds) == ("1970-01-01T00:01:40.000Z", 42.3)
    assert status_of(state, facts(newest_write=100.0), 50.0).heartbeat.age_seconds == 0.0  # type: ignore[union-attr]
    assert status_of(state, facts(newest_write=None), 142.0).heartbeat is None


def test_an_active_phase_without_an_owner_is_interrupted_and_can_be_resumed() -> None:
    """A coding run no process owns shows as interrupted with a shell-quoted resume command; an owned one shows coding."""
    state = coding_run()
    orphan = status_of(state, facts(), 0.0)
    assert (orphan.phase, orphan.active, orphan.owner) == ("interrupted", False, None)
    assert orphan.resume_command == "pluginbench run '/runs/a b'"
    owned = status_of(state, facts(owner=Owner(pid=7, pgid=7, started_at="t")), 0.0)
    assert (owned.phase, owned.active, owned.resume_command) == ("coding", True, None)
    assert owned.owner == Owner(pid=7, pgid=7, started_at="t")


def test_counts_tokens_and_rows_come_from_the_state() -> None:
    """States, per-arm counts, token sums and attempt rows are the state's; the facts pass through unchanged."""
    state = coding_run()
    left = LeftRunning(checked=True, error=None, containers=[], folders=["/tmp/x"], stop_command=None)
    s = status_of(state, facts(left_running=left, torn_tail_bytes=3), 0.0)
    assert s.states == {"pending": 1, "running": 1, "complete": 0, "interrupted": 0}
    assert s.arms["vanilla"].states["running"] == 1 and s.arms["vanilla"].tokens.total_tokens == 12
    assert s.tokens.total_tokens == 12 and s.tokens.lower_bound is False
    assert [a.id for a in s.attempts] == [AID, "t0__core__r1"]
    assert s.attempts[0].minutes == 1.5 and s.attempts[1].tokens_status == "not_started"
    assert (s.left_running, s.torn_tail_bytes, s.measures.selected) == (left, 3, ["lines"])


def test_tokens_so_far_count_complete_attempts_and_the_running_ones() -> None:
    """Beside the total, the status carries the complete attempts' tokens and how many counted attempts still run
    (one running attempt, none complete: 0 so far over 0 complete, 1 running)."""
    t = status_of(coding_run(), facts(), 0.0).tokens
    assert (t.complete_total_tokens, t.complete_attempts, t.running_attempts) == (0, 0, 1)


def test_a_stopping_run_says_why() -> None:
    """A requested stop is shown with its reason while the run drains."""
    run = Run(created(n_tasks=1), RunStarted(pid=1, pgid=1, resumed=False), CodingStarted())
    run.apply(AttemptStarted(attempt_id=AID, slot=0, task="t0", arm="vanilla", repeat=1))
    run.apply(RunStopping(reason="stop requested"))
    assert status_of(run.state, facts(owner=Owner(pid=1, pgid=1, started_at="t")), 0.0).stopping == "stop requested"


_VOCABULARY = {n for n in vars(_vocab) if not n.startswith("_")} - {"Literal", "get_args", "annotations"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if module == "..events" and all(a.name in _VOCABULARY for a in node.names):
                continue  # the closed vocabularies (Literal types, value tuples) are pure data
            names.add(module)
    return names


def test_the_status_view_does_no_io() -> None:
    """projections/ status modules import no clock, file system, lock or backend; projections/ imports no environment at all."""
    for name in ("_status.py", "_status_types.py"):
        imported = _imports(ROOT / "pluginbench" / "projections" / name)
        assert not imported & {"time", "os", "pathlib", "sqlite3", "..events", "..environments", "..rundir"}, name
    for path in (ROOT / "pluginbench" / "projections").glob("*.py"):
        assert not any("environments" in m for m in _imports(path)), path.name
