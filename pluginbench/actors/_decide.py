"""The Supervisor's decisions, as pure functions of the folded state.

``decide(state, event)`` says what must happen *because of* ``event`` (grade a captured
submission, complete a graded and measured attempt, discard an attempt a crash
interrupted, build the report, end a drained run). ``schedule(state)`` says which
pending slots may start now, given ``jobs`` and whether the run is stopping. Neither
does I/O, reads a clock or draws a random number, so both are tested exhaustively and
resume is nothing more than the same fold over the saved log followed by ``decide``.
"""

from typing import Any, NamedTuple

from ..events import (
    AttemptCached,
    AttemptCompleted,
    AttemptDiscarded,
    AttemptGraded,
    AttemptInterrupted,
    AttemptReset,
    AttemptReused,
    CodingStarted,
    Event,
    MeasurementRevisionFinished,
    MeasuresCollected,
    ReportBuilt,
    RunFailed,
    RunFinished,
    RunStarted,
    RunStopped,
    RunStopping,
    SourceOnlyGraded,
    SourceOnlySelected,
    SourceOnlyStarted,
    SubmissionCaptured,
    SubmissionMissing,
    Usage,
)
from ..measures import FILTER_REVISION
from ..projections import VANILLA, Attempt, RunState
from ._actor_ext import CoreRules, Emit, Requirement
from ._extensions import extension_requirements, extensions

# ------------------------------------------------------------------ commands


class Prepare(NamedTuple):
    """Freeze inputs and check readiness, then record ``coding.started``."""


class Grade(NamedTuple):
    attempt_id: str
    task: str
    #: the sha256 recorded at capture: the grader checks model.patch against it first
    patch_sha256: str | None = None


class Measure(NamedTuple):
    attempt_id: str
    task: str
    patch_sha256: str | None = None


class GradeSourceOnly(NamedTuple):
    """Replay the attempt's verifier on its patch without the agent's test files."""

    attempt_id: str
    task: str
    patch_sha256: str | None
    #: the native grade, reused when the filter removes nothing
    native_reward: float | None
    native_grading: dict[str, float] | None


class SelectSourceOnly(NamedTuple):
    """Bind the current filter revision's source-only ``index.json`` (its SHA-256) with
    ``source_only.selected``; the report then reads only that index."""


class BuildReport(NamedTuple):
    """Rebuild ``report/`` and record ``report.built``."""


class Archive(NamedTuple):
    """Move a discarded attempt's evidence to ``evidence/discarded/``."""

    attempt_id: str


class Publish(NamedTuple):
    """Publish a finished vanilla attempt to the vanilla cache, then record ``attempt.cached``."""

    attempt_id: str
    task: str
    repeat: int


class Start(NamedTuple):
    """Start coding this slot's live attempt."""

    attempt_id: str
    slot: int
    task: str
    arm: str
    repeat: int


#: the core commands; a registered actor extension adds its own command types (``Review``…),
#: NamedTuples like these, routed by type to its actor
Command = Prepare | Grade | Measure | SelectSourceOnly | BuildReport | Archive | Publish | Emit | tuple[Any, ...]

#: What makes an attempt complete, as data: grading and measuring (issued together at
#: capture, in flight until done), then every registered extension's requirements (the
#: reviewer's review) for runs they apply to.
GRADED = Requirement("graded", lambda s: True, lambda s, a: a.graded, lambda a: Grade(a.attempt_id, a.task, a.patch_sha256),
                     in_flight=lambda s, a: not a.graded)
MEASURED = Requirement("measured", lambda s: True, lambda s, a: a.measured,
                       lambda a: Measure(a.attempt_id, a.task, a.patch_sha256), in_flight=lambda s, a: not a.measured)
CORE_REQUIREMENTS: tuple[Requirement, ...] = (GRADED, MEASURED)


def requirements() -> tuple[Requirement, ...]:
    """The completion rule now: the core requirements, then each registered extension's."""
    return (*CORE_REQUIREMENTS, *extension_requirements())

FAILED_CALLS_LIMIT = 3
#: Paid attempts of one slot lost in this run (its sandbox or cluster node ended under the
#: agent, or a worker died under it) after which the run stops instead of paying for the
#: slot again: a replacement is never the agent's outcome, so an agent that can end its own
#: sandbox would otherwise be re-coded without end.
LOSSES_PER_SLOT_LIMIT = 3

UNKNOWN_USAGE_KILLED = Usage(
    status="unknown", reason="the worker was killed before the attempt saved its execution receipt"
)


def derive_attempt_id(attempt_id: str, state: RunState) -> str:
    """The id of the attempt that replaces ``attempt_id`` in its slot: ``<base>~<n>``."""
    base, _, gen = attempt_id.partition("~")
    n = int(gen) + 1 if gen.isdigit() else 2
    while f"{base}~{n}" in state.attempts:
        n += 1
    return f"{base}~{n}"


def _requirements(state: RunState) -> list[Requirement]:
    return [r for r in requirements() if r.applies(state)]


def _complete(state: RunState, a: Attempt) -> bool:
    return all(r.done(state, a) for r in _requirements(state))


def _ready(state: RunState, a: Attempt, *, just_done: str | None = None, downstream_only: bool) -> list[Command]:
    """Commands for the requirements of ``a`` that are not done and whose ``after`` ones
    are; ``downstream_only`` (after an event) skips those without ``after``, which were
    issued at capture and may still be in flight, and those in flight. With ``just_done``
    (the requirement the event settled) only the requirements waiting on it are issued, so
    one that another requirement's completion finds already issued is not issued twice.
    A stopping run starts no downstream work."""
    reqs = _requirements(state)
    done = {r.name for r in reqs if r.done(state, a)}
    out: list[Command] = []
    for r in reqs:
        if r.name in done or not set(r.after) <= done:
            continue
        if r.after and state.stopping is not None:
            continue
        if downstream_only and (not r.after or r.in_flight(state, a)):
            continue
        if just_done is not None and just_done not in r.after:
            continue
        out.append(r.command(a))
    return out


def _progress(state: RunState, attempt_id: str, just_done: str | None = None) -> list[Command]:
    """After one of ``attempt_id``'s requirements (``just_done``) got done: complete it, or
    start what waited on it."""
    a = state.attempts[attempt_id]
    if a.state != "running":
        return []
    if _complete(state, a):
        return [Emit(AttemptCompleted(attempt_id=a.attempt_id))]
    # A stopping run starts no downstream requirement (a review); the attempt then waits
    # for the resume, holding nothing in flight, so the run may be drained now.
    return [*_ready(state, a, just_done=just_done, downstream_only=True), *_drained(state)]


def _in_flight(state: RunState) -> int:
    """Running attempts with work in progress: coding, or any requirement in flight
    (grading, measuring, a started extension call). An attempt that only waits for a
    requirement not begun (a review a stopping run will not start) is not in flight."""
    reqs = _requirements(state)
    return sum(1 for a in state.running_attempts() if any(r.in_flight(state, a) for r in reqs))


def _publish(state: RunState, a: Attempt) -> list[Command]:
    """Publish ``a`` when it is a vanilla attempt this run coded and completed, the cache
    was consulted for its task (so its key is known), and it was not published yet.
    Completion means grading and measuring are done, so nothing writes into its folder
    while it is copied. Failures and unknowns are published; provider stops and
    interrupted attempts never complete, so they never reach here."""
    if (
        a.arm != VANILLA
        or a.reused
        or a.cached is not None
        or a.task not in state.vanilla_cache
        or not state.vanilla_cache[a.task].publish
        or a.state != "complete"
        or a.provider_stop
    ):
        return []
    return [Publish(a.attempt_id, a.task, a.repeat)]


def _publishing(state: RunState) -> int:
    """Finished vanilla attempts whose publication has not been recorded yet."""
    return sum(1 for a in state.live_attempts() if _publish(state, a))


def _recover(state: RunState) -> list[Command]:
    """What a new worker must do with attempts an earlier worker left unfinished."""
    commands: list[Command] = []
    for a in state.live_attempts():
        settled = a.captured or a.missing_reason is not None
        commands.extend(_publish(state, a))
        if not a.launched and a.state in ("running", "interrupted"):
            commands.append(
                Emit(AttemptReset(attempt_id=a.attempt_id, reason=a.interrupted_reason or "the worker stopped before the agent launched"))
            )
        elif a.state == "interrupted" or (a.state == "running" and not settled):
            reason = a.interrupted_reason or (
                "interrupted: the worker stopped after the agent launched and before its "
                "submission was saved; the paid call is not replayed"
            )
            commands.append(
                Emit(
                    AttemptDiscarded(
                        attempt_id=a.attempt_id,
                        slot=a.slot,
                        replaced_by=derive_attempt_id(a.attempt_id, state),
                        reason=reason,
                        usage=a.usage or UNKNOWN_USAGE_KILLED,
                    )
                )
            )
        elif a.state == "running":
            commands.extend(_finish_captured(state, a))
    return commands


def _abandoned_measure(state: RunState, revision: str) -> str:
    """Why a measurement revision still collecting when its process ended failed, with its progress."""
    rev = state.measurement_revisions[revision]
    assigned = sum(1 for a in state.live_attempts() if a.captured)
    return f"left unfinished by a process that ended, {len(rev.measures)} of {assigned} submissions measured"


def _replace_lost(state: RunState, a: Attempt, reason: str) -> Event:
    """An attempt whose cluster node was lost, handled as a resume handles a killed
    worker's: reset when its agent never launched, else discarded and replaced (the paid
    call is not replayed)."""
    if not a.launched:
        return AttemptReset(attempt_id=a.attempt_id, reason=f"{reason}; the agent had not launched")
    return AttemptDiscarded(
        attempt_id=a.attempt_id, slot=a.slot, replaced_by=derive_attempt_id(a.attempt_id, state),
        reason=f"interrupted: {reason} after the agent launched and before its submission was saved; "
        "the paid call is not replayed",
        usage=a.usage or Usage(status="unknown", reason=f"{reason} before the attempt saved its execution receipt"),
    )


def _finish_captured(state: RunState, a: Attempt) -> list[Command]:
    """On resume: complete a settled attempt, or issue every requirement it still lacks
    (a review a killed worker had started is issued again)."""
    if _complete(state, a):
        return [Emit(AttemptCompleted(attempt_id=a.attempt_id))]
    return _ready(state, a, downstream_only=False)


CORE = CoreRules(progress=_progress, drained=lambda state: _drained(state))


def source_only_todo(state: RunState, *, next_worker: bool = False) -> list[str]:
    """Graded attempts still owed a source-only grade under the current filter revision:
    never graded, graded under another revision, or pending and not yet tried by this worker
    (``next_worker``: what the next ``pluginbench run <run-dir>`` would replay)."""
    todo = []
    for a in state.live_attempts():
        if a.state != "complete" or not a.captured or a.empty or a.reward is None:
            continue
        done = a.source_only
        if (done is None or done.filter != FILTER_REVISION
                or (done.status == "pending" and (next_worker or a.attempt_id not in state.source_only_tried))):
            todo.append(a.attempt_id)
    return todo


def source_only_unselected(state: RunState) -> bool:
    """Grades exist under the current filter revision but its index is not the selected one
    (a run graded before selections were recorded)."""
    selected = state.source_only_selected
    return (selected is None or selected.filter != FILTER_REVISION) and any(
        a.source_only is not None and a.source_only.filter == FILTER_REVISION for a in state.live_attempts()
    )


def _finish_run(state: RunState) -> list[Command]:
    """Every attempt is complete: the source-only round first (when one is owed), the selection
    of its index, then the report."""
    todo = source_only_todo(state)
    if todo:
        return [Emit(SourceOnlyStarted(attempt_ids=todo, filter=FILTER_REVISION))]
    if source_only_unselected(state):
        return [SelectSourceOnly()]
    return [BuildReport()]


def _drained(state: RunState) -> list[Command]:
    """End a stopping run once nothing is in flight."""
    if state.stopping is None or state.stopped is not None or state.failed is not None:
        return []
    if _in_flight(state) or _publishing(state):
        return []
    if state.stopping_failure:
        return [Emit(RunFailed(error=state.stopping))]
    return [Emit(RunStopped(reason=state.stopping))]


def decide(state: RunState, event: Event) -> list[Command]:
    """Commands that follow from ``event`` (already applied to ``state``): the core rules,
    then each registered extension's rules."""
    if state.failed is not None and not isinstance(event, RunStarted):
        return []
    commands = _decide_core(state, event)
    for extension in extensions():
        commands.extend(extension.decide(state, event, CORE))
    return commands


def _decide_core(state: RunState, event: Event) -> list[Command]:
    match event:
        case RunStarted():
            # The worker holds run.lock: a measurement revision still collecting was left by a
            # `pluginbench measure` that ended; it failed and is not selected (the worker
            # measures it again under the next free name once the run is finished).
            commands: list[Command] = [Emit(MeasurementRevisionFinished(revision=r.revision, selected=False,
                                                         reason=_abandoned_measure(state, r.revision)))
                        for r in state.measurement_revisions.values() if not r.finished]
            commands += _recover(state)
            if not state.coding:
                commands.append(Prepare())
            elif state.all_complete and not state.finished:
                commands.extend(_finish_run(state))
            return commands
        case CodingStarted():
            return _finish_run(state) if state.all_complete else []
        case SubmissionCaptured():
            a = state.attempts[event.attempt_id]
            return [Grade(a.attempt_id, a.task, a.patch_sha256), Measure(a.attempt_id, a.task, a.patch_sha256)]
        case AttemptReused():
            a = state.attempts[event.attempt_id]
            if a.captured:
                return [Grade(a.attempt_id, a.task, a.patch_sha256), Measure(a.attempt_id, a.task, a.patch_sha256)]
            return [
                Emit(AttemptGraded(attempt_id=a.attempt_id, outcome="unknown", reward=None,
                                   reason=f"no submission: {a.missing_reason}")),
                Emit(MeasuresCollected(attempt_id=a.attempt_id, measures={})),
            ]
        case AttemptCached():
            if state.stopping is not None:
                return _drained(state)
            if state.all_complete and not state.finished and state.report is not None and not _publishing(state):
                return [Emit(RunFinished(report=state.report))]
            return []
        case SubmissionMissing():
            out: list[Command] = [
                Emit(AttemptGraded(attempt_id=event.attempt_id, outcome="unknown", reward=None,
                                   reason=f"no submission: {event.reason}")),
                Emit(MeasuresCollected(attempt_id=event.attempt_id, measures={})),
            ]
            if len(state.failed_calls_in_row) >= FAILED_CALLS_LIMIT and state.stopping is None:
                names = ", ".join(
                    f"{aid} ({state.attempts[aid].agent_error})" for aid in state.failed_calls_in_row[-FAILED_CALLS_LIMIT:]
                )
                out.append(Emit(RunStopping(
                    reason=f"{FAILED_CALLS_LIMIT} attempts in a row ended with a failed call and no submission: {names}",
                    failure=True,
                )))
            return out
        case AttemptGraded():
            return _progress(state, event.attempt_id, GRADED.name)
        case MeasuresCollected():
            return _progress(state, event.attempt_id, MEASURED.name)
        case AttemptCompleted():
            publish = _publish(state, state.attempts[event.attempt_id])
            if state.all_complete and state.stopping is None and state.coding:
                return [*publish, *_finish_run(state)]
            return [*publish, *_drained(state)]
        case SourceOnlyStarted():
            return [
                GradeSourceOnly(aid, a.task, a.patch_sha256, a.reward, a.native_grading)
                for aid in event.attempt_ids
                for a in (state.attempts[aid],)
            ]
        case SourceOnlyGraded():
            if state.stopping is not None:
                return _drained(state)
            if state.source_only_round_done:
                return [SelectSourceOnly()]
            return []
        case SourceOnlySelected():
            if state.stopping is not None:
                return _drained(state)
            return [BuildReport()]
        case AttemptInterrupted() if event.worker_lost:
            a = state.attempts[event.attempt_id]
            lost = 1 + sum(1 for d in state.discarded if d.slot == a.slot)
            if a.launched and lost >= LOSSES_PER_SLOT_LIMIT:  # left interrupted: a resume replaces it
                if state.stopping is not None:
                    return _drained(state)
                return [Emit(RunStopping(
                    reason=f"{lost} paid attempts of task {a.task}, arm {a.arm}, repeat {a.repeat} were lost in this "
                           f"run, the last {a.attempt_id}: {event.reason}; the run stops instead of paying for the slot "
                           "again (evidence/discarded/ holds the lost ones; a resume codes the slot again)",
                    failure=True))]
            return [Emit(_replace_lost(state, a, event.reason))]
        case AttemptInterrupted():
            if state.stopping is None:
                cause = "provider stop" if event.provider_stop else "attempt failed before a submission"
                return [
                    Emit(
                        RunStopping(
                            reason=f"{cause} in attempt {event.attempt_id}: {event.reason}",
                            failure=True,
                        )
                    )
                ]
            return _drained(state)
        case RunStopping():
            return _drained(state)
        case ReportBuilt():
            if state.all_complete and not state.finished and state.stopping is None and not _publishing(state):
                return [Emit(RunFinished(report=event.path))]
            return []
        case AttemptDiscarded():
            return [Archive(event.attempt_id), *_drained(state)]
        case AttemptReset():
            return [Archive(event.attempt_id), *_drained(state)]
    return []


def schedule(state: RunState) -> list[Start]:
    """Pending slots that may start now, in slot order, up to ``jobs`` running at once."""
    if (
        state.created is None
        or not state.coding
        or state.stopping is not None
        or state.failed is not None
        or state.stopped is not None
    ):
        return []
    free = state.coding_capacity - state.coding_in_flight
    if free <= 0:
        return []
    return [Start(a.attempt_id, a.slot, a.task, a.arm, a.repeat) for a in state.first_pending(free)]
