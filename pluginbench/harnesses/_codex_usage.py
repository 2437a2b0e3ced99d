"""Pure rules: Codex token usage validation and provider-stop classification.

Usage (product description, "Measurements: Tokens and time"): the attempt's usage is the
root session plus its reachable descendants, deduplicated by session, from the rollouts'
last ``token_count`` totals. It is ``exact`` only when the stream's ``turn.completed``
usage equals the root rollout's total; a disagreement, an unreadable record or a
missing root makes it ``unknown`` with the reason; a timeout, or a turn that failed
after responses were counted, leaves the observed totals as a labelled ``lower_bound``.
Unknown is never zero.

Every answer's usage must have been seen and valid (:func:`read_usage_records`): Codex
0.169.0 writes one ``token_usage_record`` (with the ``response_id``) per model response
that reported usage, and none for one that did not, while its ``token_count`` totals just
carry on, so an answer without usage is silently left out of an otherwise consistent total.
A session with more model responses (runs of model output items in its rollout) than
usage records, or a record whose counts are not non-negative integers, makes the usage a
labelled ``lower_bound`` of the counted responses. (A malformed count makes Codex itself
fail the turn: "failed to parse ResponseCompleted".) So does a response stream that broke
off and was retried ("Reconnecting... n/m (stream disconnected ...)", not an HTTP error
status): it may have been served input that no record reports.

Provider stops ("Concurrency and resume"): a turn that never completed, and

* failed before its first model turn (no usage, commands or agent messages), or
* whose rollout ends with a ``codex_error_info`` code for a limit, an authorization
  failure, or a server, connection or retry failure, or
* whose rollout ends with ``other`` right after Codex used up its "Reconnecting... n/n"
  retries on the same cause with no work in between, or
* that was cut off (timeout) while still reconnecting.

``other`` alone stays the agent's (it also covers the agent's own failed requests), as the
product description says, even for "stream disconnected before completion".
"""

import json
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from .._parsing import loads_json
from ..events import Usage, UsageStatus
from ._codex_events import (
    USAGE_KEYS,
    ExecTrace,
    Rollout,
    is_reconnect,
    is_work_event,
    reconnect_parts,
)

#: codex_error_info codes that mean the provider or account stopped the session.
_LIMIT_CODES = {"usage_limit_exceeded": "usage limit", "quota_exceeded": "usage limit"}
_AUTH_CODES = {"unauthorized": "authentication failure"}
_SERVER_CODES = {
    "internal_server_error": "provider server error",
    "server_overloaded": "provider server error",
}
_CONNECTION_CODES = {
    "http_connection_failed",
    "response_stream_connection_failed",
    "response_stream_disconnected",
    "response_too_many_failed_attempts",
}


#: Rollout ``response_item`` types the model produces (a run of them is one response).
_MODEL_ITEMS = {"function_call", "custom_tool_call", "reasoning", "local_shell_call", "web_search_call",
                "tool_search_call", "image_generation_call"}


class UsageRecords(NamedTuple):
    """How many model responses one rollout shows and how many reported valid usage."""

    session_id: str | None
    responses: int  # runs of model output items
    metered: int  # token_usage_record lines with valid counts
    faults: tuple[str, ...]  # token_usage_record lines whose counts are not valid


def _valid(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_usage_records(text: str) -> UsageRecords:
    """Count a rollout's model responses and its per-response usage records."""
    session_id: str | None = None
    responses = metered = 0
    faults: list[str] = []
    in_response = False
    for line in text.splitlines():
        try:
            rec = loads_json(line)
        except json.JSONDecodeError:
            continue  # read_rollout counts undecodable lines
        if not isinstance(rec, Mapping):
            continue
        raw = rec.get("payload")
        payload: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
        kind = rec.get("type")
        if kind == "session_meta" and session_id is None:
            sid = payload.get("id") or payload.get("session_id")
            session_id = sid if isinstance(sid, str) else None
        elif kind == "token_usage_record":
            usage = payload.get("usage")
            if isinstance(usage, Mapping) and all(_valid(usage.get(k)) for k in USAGE_KEYS):
                metered += 1
            else:
                faults.append(f"response {payload.get('response_id')}: usage {usage!r}")
        elif kind == "response_item":
            item = payload.get("type") if isinstance(payload.get("type"), str) else None
            model_made = item in _MODEL_ITEMS or (item == "message" and payload.get("role") == "assistant")
            if model_made and not in_response:
                responses += 1
            in_response = model_made
    return UsageRecords(session_id, responses, metered, tuple(faults))


def _usage_gaps(sessions: Sequence[Rollout], records: Sequence[UsageRecords]) -> list[str]:
    """Why some responses of the counted sessions reported no valid usage (empty: none)."""
    by_id = {r.session_id: r for r in records}
    gaps = []
    for session in sessions:
        rec = by_id.get(session.session_id)
        if rec is None:
            continue
        if rec.faults:
            gaps.append(f"session {session.session_id}: {len(rec.faults)} usage record(s) not valid "
                        f"({rec.faults[0]})")
        if rec.responses > rec.metered + len(rec.faults):
            gaps.append(f"session {session.session_id}: {rec.responses - rec.metered - len(rec.faults)} of "
                        f"{rec.responses} model responses reported no usage")
    return gaps


def _cut_retries(trace: ExecTrace) -> int:
    """Codex's "Reconnecting... n/m (cause)" notices for a stream that broke off (not an HTTP
    error status, whose answer served no tokens)."""
    n = 0
    for ev in trace.events:
        message = ev.get("message")
        if ev.get("type") != "error" or not isinstance(message, str) or not is_reconnect(message):
            continue
        parts = reconnect_parts(message)
        cause = parts[2] if parts is not None else ""
        if not cause.startswith("unexpected status"):
            n += 1
    return n


def usage_value(totals: Mapping[str, int], status: UsageStatus, reason: str | None) -> Usage:
    """A :class:`Usage` from Codex totals (input includes cached input)."""
    inp = totals["input_tokens"]
    cached = totals["cached_input_tokens"]
    out = totals["output_tokens"]
    return Usage(
        status=status,
        input_tokens=inp,
        cached_input_tokens=cached,
        uncached_input_tokens=inp - cached,
        output_tokens=out,
        reasoning_output_tokens=totals["reasoning_output_tokens"],
        total_tokens=inp + out,
        reason=reason,
    )


def _sum(rollouts: Sequence[Rollout]) -> dict[str, int]:
    return {k: sum((r.totals or {}).get(k, 0) for r in rollouts) for k in USAGE_KEYS}


def validate_usage(trace: ExecTrace, sessions: Sequence[Rollout], problems: Sequence[str], *, timed_out: bool,
                   records: Sequence[UsageRecords] = ()) -> Usage:
    """Cross-check the stream against the rollouts; see the module docstring for the rules.
    ``records`` (:func:`read_usage_records` of the same rollouts) downgrades an otherwise
    exact total whose responses did not all report valid usage to a lower bound."""
    if problems and not sessions:
        return Usage(status="unknown", reason="; ".join(problems))
    if trace.bad_lines and not timed_out:
        return Usage(status="unknown", reason=f"stdout has {trace.bad_lines} unreadable or malformed line(s)")
    counted = [r for r in sessions if r.totals is not None]
    if timed_out:
        if not counted:
            return Usage(status="unknown", reason="timed out before any token_count was recorded")
        why = "timed out: observed rollout totals are a lower bound"
        return usage_value(_sum(counted), "lower_bound", "; ".join([why, *problems]))
    if problems:
        return Usage(status="unknown", reason="; ".join(problems))
    root = sessions[0]
    if trace.usage is None:
        if trace.turn_failed is None:
            return Usage(status="unknown", reason="no turn.completed usage in stdout and the turn did not fail")
        if not counted:
            return Usage(status="unknown", reason="turn failed before any response was counted; usage not reported")
        why = f"turn failed ({trace.turn_failed}): counted responses are a lower bound"
        return usage_value(_sum(counted), "lower_bound", why)
    if root.totals is None:
        return Usage(status="unknown", reason="root rollout has no token_count totals to validate stdout usage")
    if any(root.totals[k] != trace.usage[k] for k in USAGE_KEYS):
        return Usage(
            status="unknown",
            reason=f"turn.completed usage {trace.usage} disagrees with root rollout total {root.totals}",
        )
    missing = [r.session_id for r in sessions[1:] if r.totals is None]
    if missing:
        why = f"descendant session(s) without token totals: {', '.join(str(m) for m in missing)}"
        return usage_value(_sum(counted), "lower_bound", why)
    gaps = _usage_gaps(sessions, records)
    cuts = _cut_retries(trace)
    if cuts:
        gaps.append(f"{cuts} response stream(s) were cut and retried (Reconnecting…); "
                    "their served tokens are reported nowhere")
    if gaps:
        return usage_value(_sum(sessions), "lower_bound", "; ".join([*gaps, "counted responses are a lower bound"]))
    return usage_value(_sum(sessions), "exact", None)


def _code_and_status(info: object) -> tuple[str | None, int | None]:
    """``codex_error_info`` is a bare string code or ``{code: {http_status_code: n}}``."""
    if isinstance(info, str):
        return info, None
    if isinstance(info, Mapping) and len(info) == 1:
        ((code, detail),) = info.items()
        status = detail.get("http_status_code") if isinstance(detail, Mapping) else None
        return str(code), status if isinstance(status, int) else None
    return None, None


def _category(code: str | None, status: int | None) -> str | None:
    """The provider-stop category of an error code, or None when it is the agent's."""
    if code is None:
        return None
    if code in _LIMIT_CODES:
        return _LIMIT_CODES[code]
    if code in _AUTH_CODES:
        return _AUTH_CODES[code]
    if code in _SERVER_CODES:
        return _SERVER_CODES[code]
    if code in _CONNECTION_CODES:
        if status == 429:
            return "rate limit"
        if status in (401, 403):
            return "authentication failure"
        if status is not None and status >= 500:
            return "provider server error"
        if status is None:
            return "connection failure"
        return None  # 400, 404, 413...: the request itself was invalid: the agent's
    return None


def _last_reconnect_tail(events: Sequence[Mapping[str, object]]) -> tuple[str | None, bool]:
    """The last reconnect notice and whether only the final error/turn.failed follow it."""
    last_idx = None
    for i, ev in enumerate(events):
        if ev.get("type") == "error" and isinstance(ev.get("message"), str) and is_reconnect(str(ev["message"])):
            last_idx = i
    if last_idx is None:
        return None, False
    after = events[last_idx + 1 :]
    clean = not any(is_work_event(ev) or ev.get("type") in ("turn.completed", "turn.started") for ev in after)
    return str(events[last_idx]["message"]), clean


def classify_provider_stop(trace: ExecTrace, root: Rollout | None, *, timed_out: bool) -> str | None:
    """The provider-stop cause (category and Codex's own message), or None when it is the agent's."""
    if trace.turns_completed and trace.turn_failed is None:
        return None
    events = trace.events
    notice, clean_tail = _last_reconnect_tail(events)
    if trace.turn_failed is None:
        if timed_out and notice is not None and clean_tail:
            return f"cut off while reconnecting: {notice}"
        return None
    message = trace.turn_failed
    if root is not None and root.completed and root.error_info is not None:
        code, status = _code_and_status(root.error_info)
        category = _category(code, status)
        if category is not None:
            return f"{category} ({code}): {root.error_message or message}"
        if code == "other" and notice is not None and clean_tail:
            parts = reconnect_parts(notice)
            if parts is not None and parts[0] == parts[1] and parts[2] == message:
                return f"provider error after {parts[1]} reconnect attempts (other): {message}"
    no_work = not any(is_work_event(ev) for ev in events)
    no_usage = root is None or root.totals is None
    if no_work and no_usage:
        return f"session failed before its first model turn: {message}"
    return None
