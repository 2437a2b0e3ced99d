"""The collector actor: every selected registered measure's collector on a captured submission.

The measures come from the registry (:mod:`pluginbench.measures`); this actor knows none
by name. Each collector gets a :class:`~pluginbench.measures.CollectorInput` built from
the run's frozen evidence and returns a value or an unknown with a reason for each column
it declares. A column it leaves out, a value under an undeclared name, a collector that
raises and a patch that fails its integrity check all become unknowns with the reason,
never zero and never a crash of the run.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Literal

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream

from .. import measures as registry
from ..environments import NO_EGRESS
from ..events import CheckVoteCast, CheckVoteStarted, Event, Measure, MeasuresCollected
from ..harness_registry import harness_class
from ..measures import CollectorInput, MeasureSpec
from ..rundir import patch_mismatch
from ._context import Engine
from ._decide import Measure as MeasureCommand
from ._pipeline import _spec, write_json


async def collector_actor(engine: Engine, inbox: MemoryObjectReceiveStream[MeasureCommand]) -> None:
    async with inbox:
        async for job in inbox:
            await collect_one(engine, job.attempt_id, job.patch_sha256)


def checked(spec: MeasureSpec, values: Mapping[str, Measure]) -> dict[str, Measure]:
    """``values`` restricted to ``spec``'s columns, each present (a missing column or a
    value of the wrong type is an unknown with the reason), plus the values under a
    prefix of ``spec``'s families."""
    out: dict[str, Measure] = {}
    for c in spec.columns:
        m = values.get(c.metric)
        if m is None:
            out[c.metric] = Measure(value=None, unit=c.unit, status="unknown",
                                    reason=f"the {spec.name} collector returned no value for it")
        elif not isinstance(m, Measure):
            out[c.metric] = Measure(value=None, unit=c.unit, status="unknown",
                                    reason=f"the {spec.name} collector returned {type(m).__name__}, not a Measure")
        else:
            out[c.metric] = m
    # Family values (names known per attempt) pass when they are Measures under a declared prefix.
    for key, m in values.items():
        if key not in out and isinstance(m, Measure) and any(key.startswith(f.metric) for f in spec.families):
            out[key] = m
    return out


async def run_collector(spec: MeasureSpec, inp: CollectorInput) -> dict[str, Measure]:
    """One collector's values (sync collectors run in a worker thread)."""
    assert spec.collect is not None
    try:
        if inspect.iscoroutinefunction(spec.collect):
            values = await spec.collect(inp)
        else:
            values = await anyio.to_thread.run_sync(spec.collect, inp)
            if inspect.isawaitable(values):
                values = await values
    except Exception as exc:  # noqa: BLE001 - a failing collector makes its own measures unknown
        return spec.unknown(f"the {spec.name} collector failed: {type(exc).__name__}: {exc}")
    return checked(spec, values)


def collector_input(engine: Engine, attempt_id: str, spec: MeasureSpec, patch: str) -> CollectorInput:
    """What ``spec``'s collector sees of ``attempt_id`` (frozen evidence of this run)."""
    attempt = engine.run_dir.attempt(attempt_id)
    task, arm = _task_and_arm(engine, attempt_id)
    task_dir = engine.run_dir.frozen_task(task)
    reference = task_dir / "solution" / "solution.patch"
    image = engine.images[task].coding if task in engine.images else None
    open_task_sandbox = task_sandbox_opener(engine, task, f"{attempt_id}.{spec.name}")
    return CollectorInput(
        attempt_id=attempt_id, task=task, arm=arm, patch=patch, attempt_dir=attempt, traces_dir=attempt / "agent",
        harness=engine.evaluation.runner.harness, task_dir=task_dir, starting_source=engine.starting_source(task),
        reference_patch=reference.read_text(encoding="utf-8", errors="replace") if reference.is_file() else None,
        task_image=image, open_task_sandbox=open_task_sandbox if task in engine.tasks else None,
        settings=registry.settings_for(spec, engine.evaluation.measurement_settings),
        work_dir=attempt / "measure" / spec.name,
        agent_traces=agent_traces(engine.evaluation.runner.harness),
        shared_dir=engine.run_dir.root / "evidence" / "measure-shared" / spec.name,
        llm_vote=llm_voter(engine.reviewer, engine.run_id, attempt_id=attempt_id, record=engine.outbox.record,
                           send=engine.outbox.send),
    )


def llm_voter(reviewer: Any, run_id: str, *, attempt_id: str | None = None,
              record: Callable[[Event], Awaitable[None]] | None = None,
              send: Callable[[Event], Awaitable[None]] | None = None) -> Callable[..., Any] | None:
    """The measure port's ``llm_vote``: one call of the run's reviewer CLI (host Claude Code or
    Codex, in the reviewer's read-only sandbox) on a grader's packet; None without a reviewer CLI.
    In a run (``record``/``send`` given) each call is ``check_vote.started`` durably before the
    CLI runs and ``check_vote.cast`` (verdict, usage) once it ends; a call that never launched
    made no model call and records neither."""
    if reviewer is None or reviewer.harness is None:
        return None
    from ..review import ask_in_packet  # the review call's stack, only for a run that votes

    async def vote(packet_root: Path, prompt: Callable[[str], str], out_dir: Path, *,
                   check: str = "", vote: int = 0, votes: int = 0) -> registry.VoteAnswer:
        launched = False

        async def started(argv: Sequence[str]) -> None:
            nonlocal launched
            write_json(out_dir / "invocation.json", {"reviewer": msgspec.to_builtins(reviewer.spec), "argv": list(argv)})
            if record is not None and attempt_id is not None:
                await record(CheckVoteStarted(attempt_id=attempt_id, check=check, vote=vote, votes=votes,
                                              harness=reviewer.spec.harness, model=reviewer.spec.model))
            launched = True

        got = await ask_in_packet(reviewer, packet_root, out_dir, run_id=run_id, prompt=prompt,
                                  started=started, what="grading")
        if launched and send is not None and attempt_id is not None:
            verdict, reason = _verdict(got.text, got.reason)
            await send(CheckVoteCast(attempt_id=attempt_id, check=check, vote=vote, verdict=verdict, usage=got.usage,
                                     reason=reason, seconds=got.seconds, provider_stop=got.provider_stop))
        return registry.VoteAnswer(got.text, got.reason, got.seconds, got.provider_stop,
                                   msgspec.to_builtins(got.usage))

    return vote


def _verdict(text: str | None, reason: str | None) -> tuple[Literal["pass", "fail"] | None, str | None]:
    """The vote's verdict as the llm grader reads it (``parse_vote``), or None and why."""
    if text is None:
        return None, reason or "the grader call failed"
    try:
        passed, why = registry.parse_vote(text)
    except ValueError as exc:
        return None, f"malformed vote: {exc}"
    return ("pass" if passed else "fail"), why


def task_sandbox_opener(engine: Engine, task: str, label: str) -> Callable[..., AbstractAsyncContextManager[Any]]:
    """The measure port's ``open_task_sandbox`` for ``task``: a fresh readiness sandbox of the
    frozen task (no credentials, hidden tests or solution). Keyword overrides of the
    :class:`~pluginbench.environments.SandboxSpec` (a sandboxed analyzer asks for
    ``network="none"`` and its read-only tool folders) apply to that one sandbox."""

    def open_task_sandbox(**overrides: Any) -> AbstractAsyncContextManager[Any]:
        # The measure port speaks ``network="none"`` (measures sit below environments);
        # here it becomes the sandbox's egress policy: nothing beyond its own loopback,
        # whatever the task's verifier network_mode would give a readiness sandbox.
        network = overrides.pop("network", None)
        if network is not None:
            if network != "none":
                raise ValueError(f"open_task_sandbox: network={network!r}; only 'none' is supported")
            overrides["egress"] = NO_EGRESS
        src = engine.source(task, "readiness")
        spec = _spec("readiness", engine.run_id, label, engine.tasks[task], src, engine.hidden)
        return engine.environment.sandbox(spec._replace(**overrides) if overrides else spec)

    return open_task_sandbox


def agent_traces(harness: str) -> bool:
    """Whether ``harness`` saves native agent traces (its port's ``agent_traces``)."""
    return bool(getattr(harness_class(harness), "agent_traces", False))


def _task_and_arm(engine: Engine, attempt_id: str) -> tuple[str, str]:
    """``<task>__<arm>__r<repeat>[~n]``: the plan's attempt id shape (a task id may hold ``__``)."""
    parts = attempt_id.rsplit("__", 2)
    return (parts[0], parts[1]) if len(parts) == 3 else (attempt_id, "")


async def collect_one(engine: Engine, attempt_id: str, patch_sha256: str | None = None) -> None:
    attempt_dir = engine.run_dir.attempt(attempt_id)
    specs = registry.collectors(engine.evaluation.measurements)
    measures: dict[str, Measure] = {}
    try:
        tampered = patch_mismatch(attempt_dir / "model.patch", patch_sha256)
        if tampered is not None:
            raise OSError(tampered)
        text = (attempt_dir / "model.patch").read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        reason = str(exc) if str(exc).startswith("patch integrity") else f"model.patch unreadable: {exc}"
        for spec in specs:
            measures.update(spec.unknown(reason))
    else:
        task = _task_and_arm(engine, attempt_id)[0]
        for spec in specs:
            skipped = engine.not_measured.get((task, spec.name))
            if skipped is not None:  # check saved this pair as not measured: no value is reported
                measures.update(spec.unknown(f"not measured: {skipped}"))
                continue
            measures.update(await run_collector(spec, collector_input(engine, attempt_id, spec, text)))
    write_json(attempt_dir / "measurements.json", {k: v for k, v in sorted(measures.items())})
    await engine.outbox.send(MeasuresCollected(attempt_id=attempt_id, measures=measures))
