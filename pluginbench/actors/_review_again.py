"""``pluginbench review RUN --revision NAME``: review every submission of a finished run
again, as review revision ``NAME``, with the frozen reviewer or another one.

The command owns ``run.lock`` while it works and is then the log's only writer: it records
``review_revision.started``, one ``review.started`` (durable, before each call) and
``review.completed``/``review.failed`` per submission, ``review_revision.finished``, then
rebuilds the report (``report.built``). A revision something stops (an error, Ctrl-C, a
provider stop) is recorded ``review_revision.finished`` with a ``reason``: failed, not
selected; one whose process was killed is recorded so by the next process that owns the run. Criteria, jobs and the review budget stay frozen;
packets are the run's own, verified against their bindings. Earlier revisions stay in
evidence (``evidence/reviews/<revision>/``). Refusals (exit 2) come before any call.
"""

import contextlib
import re
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, NamedTuple

import anyio

from ..errors import InputError, LockHeldError, PluginBenchError, RunDirError
from ..events import (
    Event,
    EventLog,
    ReportBuilt,
    ReviewerSpec,
    ReviewRevisionFinished,
    ReviewRevisionStarted,
    RunLock,
    live_owner,
    read_run_log,
)
from ..projections import INITIAL_REVIEW, Ledger, RunState, fold
from ..rundir import RunDir
from ..tasks import load_task
from ._context import Engine, cache_root
from ._review_rules import Review, abandoned_reason
from ._reviewer import review_submission
from ._reviewer_setup import make_reviewer, preflight
from ._runfiles import load_saved
from ._writer import RunWriter

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")


class ReviewPlan(NamedTuple):
    run_dir: RunDir
    revision: str
    reviewer: ReviewerSpec
    assigned: list[Review]
    probe: str | None  # the run's probe scenario, for a probe run's reviewer


def plan_review(run_dir: Path, revision: str, harness: str | None, model: str | None,
                effort: str | None) -> ReviewPlan:
    """Check every refusal and the reviewer's preflight; return what would be reviewed."""
    rd = RunDir(run_dir.resolve())
    saved = load_saved(rd)
    owner = live_owner(rd.root)
    if owner is not None:
        raise LockHeldError(f"the run is active (pid {owner.pid} owns run.lock)", file=str(rd.root),
                            fix="wait until it ends, or stop it with `pluginbench stop`, then review again")
    state = fold(read_run_log(rd.events).events)
    frozen = state.reviewer
    if frozen is None:
        raise RunDirError("the run has no reviewer", file=str(rd.evaluation), field="reviewer",
                          fix="review revisions need a run evaluated with a reviewer; start a new evaluation with one")
    captured = [a for a in state.live_attempts() if a.captured]
    pending = [a.attempt_id for a in state.live_attempts() if a.state != "complete"]
    pending += [a.attempt_id for a in captured if not state.reviewed(a.attempt_id)]
    if pending:
        raise RunDirError(f"the run's first review has not finished ({len(pending)} attempt(s) left, e.g. "
                          f"{pending[0]})", file=str(rd.root),
                          fix=f"finish it with: pluginbench run {rd.root}")
    if not _NAME.match(revision):
        raise InputError(f"revision name {revision!r} is not allowed", field="--revision",
                         fix="use lowercase letters, digits, '.', '_' and '-'")
    if revision == INITIAL_REVIEW or revision in state.review_revisions or \
            (rd.evidence / "reviews" / revision).exists():
        raise InputError(f"review revision '{revision}' already exists", file=str(rd.evidence / "reviews" / revision),
                         field="--revision", fix="choose a new name; earlier revisions stay in evidence")
    given = [harness, model, effort]
    if any(v is not None for v in given) and not all(v is not None for v in given):
        raise InputError("--reviewer-harness, --reviewer-model and --reviewer-effort go together",
                         field="--reviewer-harness", fix="give all three, or none to use the run's frozen reviewer")
    probe = saved.evaluation.runner.probe
    if harness is None:
        harness, model, effort = frozen.harness, frozen.model, frozen.reasoning
    _, version = preflight(harness, model, effort, probe=probe is not None, field="--reviewer")
    spec = ReviewerSpec(harness=harness, model=model or harness, reasoning=effort, cli_version=version,
                        timeout_seconds=frozen.timeout_seconds, criteria_sha256=frozen.criteria_sha256)
    assigned = [Review(a.attempt_id, a.task, a.patch_sha256 or "", revision) for a in captured]
    return ReviewPlan(rd, revision, spec, assigned, probe)


class _DirectOutbox:
    """The command's own single writer: each event is appended (and fsynced) at once."""

    def __init__(self, append: Callable[[Event], None]) -> None:
        self._append = append

    async def send(self, event: Event) -> None:
        self._append(event)

    async def record(self, event: Event) -> None:
        self._append(event)


@contextlib.contextmanager
def _probe_server(plan: ReviewPlan) -> Iterator[str | None]:
    if plan.probe is None:
        yield None
        return
    from ..probe import ProbeServer, load_scenario

    folder = plan.run_dir.evidence / "probe"
    folder.mkdir(parents=True, exist_ok=True)
    # written as each request settles (appended per process), so a killed worker keeps its receipt
    with ProbeServer(load_scenario(Path(plan.probe)), log=folder / "requests.jsonl", log_bodies=False) as server:
        try:
            yield server.base_url
        finally:
            server.wait_idle()


def run_review(plan: ReviewPlan, *, select: bool, progress: Callable[[str], None] = print) -> RunState:
    """Own the run, review every assigned submission, record the revision, rebuild the report."""
    rd = plan.run_dir
    saved = load_saved(rd)
    with RunLock(rd.root), EventLog(rd.events) as log, closing(Ledger(rd.ledger)) as ledger:
        state = fold(log.recovered)
        writer = RunWriter(log, state, ledger)  # the Supervisor's path: append, step, ledger

        def append(event: Event) -> None:
            writer.record(event)  # the run is finished: nothing it decides is run here

        for rev in state.review_revisions.values():
            if not rev.finished:  # a review command that ended before finishing it
                reason = abandoned_reason(state, rev.revision)
                progress(f"review revision {rev.revision} was left unfinished by a process that ended ({reason}); "
                         "it is recorded as failed and not selected")
                append(ReviewRevisionFinished(revision=rev.revision, selected=False, reason=reason))
        append(ReviewRevisionStarted(revision=plan.revision, reviewer=plan.reviewer,
                                     assigned=[r.attempt_id for r in plan.assigned], select=select))
        try:
            stops = _review_all(plan, state, saved, append, progress)
        except BaseException as exc:
            # Whatever stopped it (an error, Ctrl-C, a closed terminal), the revision did
            # not review everything: it is recorded as failed, never as finished.
            with contextlib.suppress(Exception):
                append(ReviewRevisionFinished(revision=plan.revision, selected=False, reason=_stopped_by(exc)))
            raise
        if stops:
            reason = f"provider stop ({stops[0]})"
            append(ReviewRevisionFinished(revision=plan.revision, selected=False, reason=reason))
            raise PluginBenchError(f"{reason} in review revision {plan.revision}; the revision is recorded as "
                                   "failed; review again later under a new name")
        append(ReviewRevisionFinished(revision=plan.revision, selected=select))
        from ..projections import build_report

        files = build_report(rd.root)
        append(ReportBuilt(path=str(files.report_html.relative_to(rd.root))))
        return state


def _review_all(plan: ReviewPlan, state: RunState, saved: Any, append: Callable[[Event], None],
                progress: Callable[[str], None]) -> list[str]:
    """Review every assigned submission (``jobs`` at a time); the provider stops met."""
    rd = plan.run_dir
    ev = saved.evaluation
    hidden = {rd.root, cache_root()}
    for t in ev.treatments.values():
        hidden.update(Path(p).resolve() for p in (*t.guidance, *t.skills, *t.plugins))
    with _probe_server(plan) as probe_url:
        engine = Engine(run_dir=rd, run_id=rd.run_id, evaluation=ev, environment=None,  # type: ignore[arg-type]  # report-only engine: re-reviewing needs no sandbox
                        harness=None, task_sources={}, outbox=_DirectOutbox(append),  # type: ignore[arg-type]  # no harness; events go straight to the log
                        hidden=tuple(sorted(hidden)))
        engine.tasks = {t: load_task(rd.frozen_task(t), t) for t in state.prepared_tasks}
        engine.reviewer = make_reviewer(plan.reviewer, probe_base_url=probe_url, hidden=engine.hidden)
        stops: list[str] = []

        async def main() -> None:
            limiter = anyio.CapacityLimiter(ev.jobs)

            async def one(job: Review) -> None:
                async with limiter:
                    if stops:
                        return
                    event = await review_submission(engine, engine.reviewer, job)
                    append(event)
                    if getattr(event, "provider_stop", False):
                        stops.append(f"{job.attempt_id}: {getattr(event, 'reason', None)}")
                    progress(f"{job.attempt_id}: " + _said(event))

            async with anyio.create_task_group() as tg:
                for job in plan.assigned:
                    tg.start_soon(one, job)

        anyio.run(main, backend="asyncio")
    return stops


def _stopped_by(exc: BaseException) -> str:
    """The first real cause of a stop, as one line (task groups wrap it in a group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"stopped by an error: {type(exc).__name__}" + (f": {text}" if text else "")


def _said(event: Any) -> str:
    findings = getattr(event, "findings", None)
    if findings is not None:
        return f"{len(findings)} finding(s)"
    return f"review failed: {event.reason}"

