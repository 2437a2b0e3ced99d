"""The actor extension point: a toy actor registered from inside tests/ (its module here, its
events the generic extension.recorded, its rules and one registration) extends when an attempt
is complete, beside the reviewer, and runs through a whole evaluation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from anyio.streams.memory import MemoryObjectReceiveStream

from pluginbench.actors import (
    ActorExtension,
    CoreRules,
    Emit,
    Requirement,
    SetupContext,
    register_extension,
    registered_extension,
    requirements,
)
from pluginbench.actors._extension_actors import ACTORS
from pluginbench.actors._review_rules import Review
from pluginbench.events import (
    AttemptCompleted,
    AttemptGraded,
    Event,
    ExtensionRecorded,
    Finding,
    MeasuresCollected,
    ReviewCompleted,
)
from pluginbench.projections._state import Attempt, RunState
from tests.actors.test_review_decide import AID, capture, reviewed_run
from tests.runs_helpers import events_of, write_config

TOY = "toy-stamper"


class Stamp(NamedTuple):
    """Stamp ``attempt_id``'s evidence folder (the toy actor's command)."""

    attempt_id: str


def _stamped(state: RunState, a: Attempt) -> bool:
    return not a.captured or state.extension_record(TOY, a.attempt_id) is not None


def _decide(state: RunState, event: Event, core: CoreRules) -> list[object]:
    if isinstance(event, ExtensionRecorded) and event.extension == TOY and event.attempt_id:
        return core.progress(state, event.attempt_id, "stamped")
    return []


def _setup(ctx: SetupContext) -> dict[str, str]:
    """The toy's per-run resource, built when the worker builds the engine."""
    assert ctx.created is not None and ctx.evaluation is not None
    return {"run": ctx.created.name}


async def _stamper(engine: object, inbox: MemoryObjectReceiveStream[Stamp]) -> None:
    """The toy actor loop: write stamp.json (with its setup's resource) into the attempt's evidence, then
    report it."""
    async with inbox:
        async for job in inbox:
            folder = engine.run_dir.attempt(job.attempt_id)  # type: ignore[attr-defined]
            made = engine.extensions[TOY]  # type: ignore[attr-defined]
            (folder / "stamp.json").write_text(json.dumps({"stamped": job.attempt_id, **made}))
            await engine.outbox.send(  # type: ignore[attr-defined]
                ExtensionRecorded(extension=TOY, attempt_id=job.attempt_id, data={"file": "stamp.json"}))


STAMPER = ActorExtension(
    name=TOY,
    requirements=(Requirement(name="stamped", applies=lambda s: True, done=_stamped,
                              command=lambda a: Stamp(a.attempt_id), after=("graded", "measured")),),
    decide=_decide,
    actor=_stamper,
    commands=(Stamp,),
    setup=_setup,
)


@pytest.fixture
def stamper() -> Iterator[ActorExtension]:
    with registered_extension(STAMPER) as ext:
        yield ext


def test_registration_extends_the_completion_rule_and_the_routing(stamper: ActorExtension) -> None:
    """Registered, the toy's requirement joins the completion rule after the core ones and its command type is
    routed to its actor; a second registration of the same name is refused."""
    names = [r.name for r in requirements()]
    assert names[:2] == ["graded", "measured"] and names.index("stamped") > names.index("reviewed")
    assert ACTORS[Stamp] is _stamper and Review in ACTORS
    with pytest.raises(ValueError, match="already registered"):
        register_extension(STAMPER)


def test_without_the_registration_the_rule_is_graded_measured_reviewed() -> None:
    """Unregistered, nothing of the toy remains in the rule or the routing."""
    assert [r.name for r in requirements()] == ["graded", "measured", "reviewed"]
    assert Stamp not in ACTORS


def test_the_attempt_waits_for_both_the_review_and_the_stamp(stamper: ActorExtension) -> None:
    """After grading and measuring both extensions' commands are issued once; the review ending does not
    issue the stamp again nor complete the attempt; the stamp does."""
    run = reviewed_run()
    capture(run)
    run.apply(AttemptGraded(attempt_id=AID, outcome="pass", reward=1.0))
    out = run.apply(MeasuresCollected(attempt_id=AID, measures={}))
    assert out == [Review(AID, "t0", "p" * 64), Stamp(AID)]
    out = run.apply(ReviewCompleted(attempt_id=AID, revision="initial", usage=run.state.attempts[AID].usage,
                                    seconds=1.0, findings=[Finding(severity="low", category="tests", title="x")]))
    assert out == [] and run.state.attempts[AID].state == "running"
    out = run.apply(ExtensionRecorded(extension=TOY, attempt_id=AID, data={"file": "stamp.json"}))
    assert out == [Emit(AttemptCompleted(attempt_id=AID))]
    assert run.state.extension_record(TOY, AID) == {"file": "stamp.json"}


@pytest.mark.anyio
async def test_a_toy_actor_runs_through_a_whole_evaluation(tmp_path: Path, stamper: ActorExtension,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker runs the toy's setup, the Supervisor starts the registered toy actor, routes its commands
    to it and records its events; every attempt completes only after its stamp, and the run finishes with
    its report."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from pluginbench.actors import Supervisor, build_engine, create_run, load_saved
    from pluginbench.config import load
    from pluginbench.events import EventLog
    from pluginbench.projections._ledger import Ledger
    from pluginbench.projections._state import fold

    config = write_config(tmp_path, harness="oracle", tasks=["roman-numerals"], repeats=1, jobs=2,
                          environment={"isolation": "none"}, name="toy-run")
    rd = create_run(load(config), tmp_path / "run")
    log = EventLog(rd.events)
    ledger = Ledger(rd.ledger)
    state = fold(log.recovered)
    engine = build_engine(rd, load_saved(rd).evaluation, None, state.created)
    try:
        state = await Supervisor(engine, log, ledger, state, handle_signals=False).run(resumed=False)
    finally:
        log.close()
        ledger.close()
    assert state.finished  # type: ignore[attr-defined]
    events = events_of(rd.root)
    completed = {e["attempt_id"]: i for i, e in enumerate(events) if e["type"] == "attempt.completed"}
    stamped = {e["attempt_id"]: i for i, e in enumerate(events) if e["type"] == "extension.recorded"}
    assert len(completed) == 2 and set(stamped) == set(completed)
    assert all(stamped[a] < completed[a] for a in completed)
    for aid in completed:
        assert json.loads((rd.attempt(aid) / "stamp.json").read_text()) == {"stamped": aid, "run": "toy-run"}
    assert (rd.report_dir / "results.json").is_file()
