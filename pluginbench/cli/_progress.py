"""Progress for a run being driven in this process: a rich view in the terminal, or
plain lines in ``run.log`` for the background worker. Both only observe events."""

from __future__ import annotations

import datetime as _dt
import sys
import time
from types import TracebackType
from typing import Any

from ..events import Event, type_name
from ..projections import RunState
from ..rundir import RunDir
from ._common import visible
from ._lines import is_terminal, say

#: the outcome words coloured in an attempt's line, and their colours
_MARK = {"pass": "green", "overlap_pass": "green", "fail": "red", "empty": "yellow", "unknown": "magenta"}


#: per-task and per-attempt bookkeeping lines a foreground terminal shows only with
#: ``--verbose`` (run.log always has them); a failed readiness check is always shown
VERBOSE_ONLY = frozenset({"readiness.checked", "vanilla_cache.checked", "attempt.reused", "attempt.cached"})


def describe(state: RunState, event: Event, *, verbose: bool = True) -> str | None:
    """A one-line human description of the events worth a line; None for the rest (and,
    unless ``verbose``, for the :data:`VERBOSE_ONLY` lines)."""
    kind = type_name(event)
    if not verbose and kind in VERBOSE_ONLY and not (kind == "readiness.checked" and not getattr(event, "ok", True)):
        return None
    aid = getattr(event, "attempt_id", None)
    a = state.attempts.get(aid) if aid else None
    match kind:
        case "run.started":
            return "worker started" + (" (resuming)" if getattr(event, "resumed", False) else "")
        case "log.repaired":
            return f"repaired a torn last line in events.jsonl ({getattr(event, 'dropped_bytes', 0)} bytes dropped)"
        case "preparation.started":
            return "preparing: freezing tasks and treatments, checking readiness (oracle must pass, nop must fail)"
        case "readiness.checked":
            ok = getattr(event, "ok", False)
            cached = " (cached)" if getattr(event, "cached", False) else ""
            return f"readiness {getattr(event, 'task', '')}: {getattr(event, 'control', '')} {'ok' if ok else 'FAILED'}{cached}"
        case "vanilla_cache.checked":
            decisions = getattr(event, "decisions", [])
            parts = ", ".join(f"r{d.repeat} {d.decision}" + (f" ({d.reason})" if d.reason and d.decision == "rejected" else "")
                              for d in decisions)
            return f"vanilla cache {getattr(event, 'task', '')} ({getattr(event, 'cohort', '')}): {parts or 'nothing to look up'}"
        case "attempt.reused":
            return f"attempt {aid} reused from {getattr(event, 'origin_entry', '')} (run {getattr(event, 'origin_run', '')}); regrading"
        case "attempt.cached":
            entry = getattr(event, "entry", None)
            return f"attempt {aid} cached as {entry}" if entry else f"attempt {aid} not cached: {getattr(event, 'reason', '')}"
        case "generation.started":
            return (f"generating {getattr(event, 'file', '')} for {getattr(event, 'arm', '')} on "
                    f"{getattr(event, 'task', '')} ({getattr(event, 'generation_id', '')})")
        case "guidance.generated":
            usage = getattr(event, "usage", None)
            tokens = f"{usage.total_tokens:,}" if usage is not None and usage.total_tokens is not None else "unknown"
            return (f"guidance generated for {getattr(event, 'arm', '')} on {getattr(event, 'task', '')}: "
                    f"{getattr(event, 'file', '')} sha256 {str(getattr(event, 'sha256', ''))[:12]}, "
                    f"{getattr(event, 'bytes', 0)} bytes (tokens {tokens})")
        case "generation.failed":
            return (f"guidance generation FAILED for {getattr(event, 'arm', '')} on {getattr(event, 'task', '')}: "
                    f"{getattr(event, 'reason', '')}; that arm does not run on this task")
        case "coding.started":
            return "coding started"
        case "attempt.completed":
            if a is None:
                return None
            tokens = f"{a.usage.total_tokens:,}" if a.usage and a.usage.total_tokens is not None else "unknown"
            reused = " (reused)" if a.reused else ""
            return f"{a.task} · {a.arm} · r{a.repeat}: {a.outcome} (tokens {tokens}){reused}"
        case "attempt.interrupted":
            return f"attempt {aid} interrupted: {getattr(event, 'reason', '')}"
        case "attempt.discarded":
            return f"attempt {aid} discarded; {getattr(event, 'replaced_by', '')} takes its slot"
        case "run.stopping":
            return f"stopping: {getattr(event, 'reason', '')}"
        case "run.stopped":
            return f"stopped: {getattr(event, 'reason', '')}"
        case "run.failed":
            return f"failed: {getattr(event, 'error', '')}"
        case "report.built":
            return f"report written: {getattr(event, 'path', '')}"
        case "run.finished":
            return "finished"
    return None


def log_line(state: RunState, event: Event) -> None:
    """Observer for the background worker: one plain line per notable event (``run.log``, read
    with ``tail -f``: names and reasons go through :func:`visible`, as on the console)."""
    text = describe(state, event)
    if text is not None:
        sys.stdout.write(f"{event.at} {visible(text)}\n")
        sys.stdout.flush()


class ForegroundProgress:
    """A progress bar over the run's attempts with a line per notable event.

    In a terminal the bar is rich's live view. Written to a file or a pipe (CI logs,
    ``| tee``) it would be drawn once, at the end: there the same lines are printed and
    the end is one plain line instead, ``  complete · 0 running 2/2 0:00:01`` (phase,
    attempts done of all, time), without importing rich's progress and live-view modules
    (about 8 ms of a run's start)."""

    def __init__(self, rd: RunDir, *, verbose: bool = False) -> None:
        self.rd = rd
        self.verbose = verbose
        self.progress: Any = None
        self._started = time.monotonic()
        self._summary: tuple[str, int | None, int] = ("starting", None, 0)
        if is_terminal(sys.stdout):
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            from ._console import console

            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=False,
            )
            self.bar = self.progress.add_task("starting", total=None)

    def __enter__(self) -> ForegroundProgress:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self.progress is not None:
            self.progress.stop()
            return
        description, total, done = self._summary
        width = len(str(total)) if total is not None else 1
        elapsed = _dt.timedelta(seconds=max(0, int(time.monotonic() - self._started)))
        say(f"  {description} {done:{width}d}/{total if total is not None else '?'} {elapsed}")

    def observe(self, state: RunState, event: Event) -> None:
        text = describe(state, event, verbose=self.verbose)
        if text is not None:
            for key, colour in _MARK.items():
                if text.endswith(f": {key}") or f": {key} (" in text:
                    before, _, after = text.partition(f": {key}")
                    say(f"{before}: ", (key, colour), after)
                    break
            else:
                say(text)
        total = len(state.live)
        done = state.count("complete")
        running = state.count("running")
        self._summary = (f"{state.phase} · {running} running", total or None, done)
        if self.progress is not None:
            self.progress.update(self.bar, total=total or None, completed=done, description=self._summary[0])
