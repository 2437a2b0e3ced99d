"""Pure: what one ``codex exec`` did, from its saved evidence (stdout and rollout texts)."""

from __future__ import annotations

from typing import Any

from ._codex_children import model_record
from ._codex_events import reachable_sessions, read_exec_stream, read_rollout, stream_gaps
from ._codex_usage import classify_provider_stop, read_usage_records, validate_usage
from ._port import AgentRun


def read_agent_run(stdout: str, rollouts: list[str], *, exit_code: int | None, timed_out: bool, seconds: float | None,
                   model: str | None = None, effort: str | None = None) -> AgentRun:
    """Pure: the :class:`AgentRun` of one exec from its stdout and rollout texts."""
    trace = read_exec_stream(stdout)
    parsed = [read_rollout(t) for t in rollouts]
    if trace.thread_id is None:
        sessions: list[Any] = []
        problems = ["stdout has no thread.started: root session unknown"]
    else:
        sessions, problems = reachable_sessions(trace.thread_id, parsed)
    usage = validate_usage(trace, sessions, problems, timed_out=timed_out,
                           records=[read_usage_records(t) for t in rollouts])
    stop = classify_provider_stop(trace, sessions[0] if sessions else None, timed_out=timed_out)
    error = trace.turn_failed
    if error is None and not timed_out and exit_code not in (0, None):
        error = f"codex exited {exit_code} without a turn.failed event"
    integrity = (*trace.integrity, *stream_gaps(trace, exit_code=exit_code, timed_out=timed_out))
    return AgentRun(exit_code=exit_code, timed_out=timed_out, coding_seconds=seconds, usage=usage,
                    error=error, provider_stop=stop,
                    model_record=model_record(sessions, model=model, effort=effort), integrity=integrity)
