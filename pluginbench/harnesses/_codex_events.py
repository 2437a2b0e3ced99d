"""Pure readers of Codex CLI 0.169.0 traces: the ``exec --json`` stream and session rollouts.

Nothing here touches the file system or a process: callers pass text in and get frozen
values back, so every rule is tested on the real samples and on synthetic event lists.

Facts these readers rely on (the team's measurements of Codex 0.169.0; real samples in
``tests/data/samples/codex-0.169.0``):

* stdout is one JSON object a line: ``thread.started``, ``turn.started``,
  ``item.started``/``item.completed``, ``turn.completed{usage}``,
  ``turn.failed{error.message}`` and non-fatal top-level ``error{message}`` notices
  ("Reconnecting... n/m (cause)").
* ``turn.completed.usage`` is the thread-cumulative total of every model response in the
  exec (no ``total_tokens``).
* A rollout (``sessions/YYYY/MM/DD/rollout-*-<thread>.jsonl``) starts with
  ``session_meta`` and holds one ``event_msg/token_count`` per model response whose
  ``info.total_token_usage`` is the running thread total, and ends with
  ``event_msg/task_complete`` whose ``error.codex_error_info`` says why a turn failed.
"""

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .._parsing import loads_json

#: Usage keys shared by ``turn.completed.usage`` and ``token_count.total_token_usage``.
USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")

_RECONNECT = re.compile(r"^Reconnecting\.{3}|^Reconnecting…")
_RECONNECT_COUNTED = re.compile(r"^Reconnecting(?:\.{3}|…)\s*(\d+)/(\d+)\s*\((.*)\)\s*$", re.S)
_WORK_ITEMS = frozenset({"command_execution", "agent_message", "file_change", "mcp_tool_call", "web_search"})


def parse_jsonl(text: str) -> tuple[list[dict[str, Any]], int]:
    """Parse JSON lines; return the objects and how many non-empty lines were not objects.

    A torn last line (a process killed mid-write) is counted as bad, never guessed at.
    """
    out: list[dict[str, Any]] = []
    bad = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            obj = loads_json(line)
        except ValueError:
            bad += 1
            continue
        # a "type" that is not text (a list) cannot be Codex's, and would fail every lookup by it
        if isinstance(obj, dict) and (obj.get("type") is None or isinstance(obj["type"], str)):
            out.append(obj)
        else:
            bad += 1
    return out, bad


class ExecTrace(NamedTuple):
    """What one ``codex exec --json`` stdout says."""

    thread_id: str | None
    turns_started: int
    turns_completed: int
    turn_failed: str | None  # the last turn.failed message
    usage: dict[str, int] | None  # sum of turn.completed usage, None when none completed
    commands: int
    agent_messages: int
    file_changes: int
    notices: tuple[str, ...]  # top-level ``error`` messages, in order
    bad_lines: int
    events: tuple[dict[str, Any], ...]
    #: what in the stream cannot be Codex's own, one note each (see :func:`in_turn`)
    integrity: tuple[str, ...] = ()


def _usage_of(raw: object) -> dict[str, int] | None:
    if not isinstance(raw, Mapping):
        return None
    out: dict[str, int] = {}
    for key in USAGE_KEYS:
        value = raw.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
        out[key] = value
    return out


#: the lines that end a turn or announce a provider problem: never written while a
#: command runs, since Codex is then waiting for the command, not for the model
_TURN_LINES = frozenset({"turn.completed", "turn.failed", "error"})


def in_turn(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """``events`` without the turn-ending and ``error`` lines that arrived while one of the
    session's commands was running (from its ``item.started`` to the *last*
    ``item.completed`` with its id), with a note for each left out and for each command
    completed more than once. The agent's commands can reopen Codex's stdout through
    ``/proc/<pid>/fd/1`` and write such lines; Codex itself cannot while it waits."""
    started: dict[str, int] = {}
    ended: dict[str, int] = {}
    completions: dict[str, int] = {}
    for i, ev in enumerate(events):
        item = ev.get("item")
        if not isinstance(item, Mapping) or item.get("type") != "command_execution" or not isinstance(item.get("id"), str):
            continue
        if ev.get("type") == "item.started":
            started.setdefault(item["id"], i)
        elif ev.get("type") == "item.completed":
            ended[item["id"]] = i
            completions[item["id"]] = completions.get(item["id"], 0) + 1
    spans = [(start, ended.get(iid, len(events))) for iid, start in started.items()]
    notes = [f"command {iid} completed {n} times; only Codex writes one" for iid, n in sorted(completions.items()) if n > 1]
    kept = []
    for i, ev in enumerate(events):
        if ev.get("type") in _TURN_LINES and any(start < i < end for start, end in spans):
            notes.append(f"a {ev.get('type')} line arrived while a command was running (event {i + 1}): written by "
                         "the agent, not Codex; ignored")
            continue
        kept.append(ev)
    return kept, notes


def stream_gaps(trace: ExecTrace, *, exit_code: int | None, timed_out: bool) -> list[str]:
    """Notes for an exec stdout that lacks what a finished Codex always writes (its
    thread, a terminal line for every turn), so unknown usage is never silent."""
    if timed_out:
        return []
    notes = []
    if trace.thread_id is None:
        notes.append("stdout has no thread.started: Codex's output is incomplete (something removed or "
                     "consumed lines); usage is unknown for that reason")
    ended = trace.turns_completed + (1 if trace.turn_failed is not None else 0)
    if trace.turns_started > ended and exit_code is not None:
        notes.append(f"stdout shows {trace.turns_started} turn(s) started but {ended} ended although Codex exited "
                     f"{exit_code}: its output is incomplete")
    if trace.bad_lines:
        notes.append(f"stdout has {trace.bad_lines} undecodable line(s): something else wrote into it")
    return notes


def read_exec_stream(text: str) -> ExecTrace:
    """Fold a ``codex exec --json`` stdout into an :class:`ExecTrace`.

    ``usage`` is None when a completed turn's usage is malformed (the caller must then
    treat usage as unknown), and also when no turn completed. Turn lines that cannot be
    Codex's own are left out and noted (:func:`in_turn`).
    """
    decoded, bad = parse_jsonl(text)
    events, integrity = in_turn(decoded)
    thread_id = None
    started = completed = commands = messages = changes = 0
    failed: str | None = None
    usage: dict[str, int] | None = None
    usage_broken = False
    notices: list[str] = []
    for ev in events:
        kind = ev.get("type")
        if kind == "thread.started" and thread_id is None:
            thread_id = ev.get("thread_id") if isinstance(ev.get("thread_id"), str) else None
        elif kind == "turn.started":
            started += 1
        elif kind == "turn.completed":
            completed += 1
            u = _usage_of(ev.get("usage"))
            if u is None:
                usage_broken = True
            else:
                usage = u if usage is None else {k: usage[k] + u[k] for k in USAGE_KEYS}
        elif kind == "turn.failed":
            err = ev.get("error")
            msg = err.get("message") if isinstance(err, Mapping) else None
            failed = msg if isinstance(msg, str) else "turn failed (no message)"
        elif kind == "error":
            msg = ev.get("message")
            notices.append(msg if isinstance(msg, str) else "")
        elif kind == "item.completed":
            item = _item if isinstance(_item := ev.get("item"), Mapping) else {}
            itype = item.get("type")
            if itype == "command_execution":
                commands += 1
            elif itype == "agent_message":
                messages += 1
            elif itype == "file_change":
                changes += 1
    return ExecTrace(
        thread_id=thread_id,
        turns_started=started,
        turns_completed=completed,
        turn_failed=failed,
        usage=None if usage_broken else usage,
        commands=commands,
        agent_messages=messages,
        file_changes=changes,
        notices=tuple(notices),
        bad_lines=bad + (1 if usage_broken else 0),
        events=tuple(events),
        integrity=tuple(integrity),
    )


class Rollout(NamedTuple):
    """One session rollout file, reduced to what accounting and stop rules need."""

    session_id: str | None
    parent_id: str | None  # the spawning thread, for a subagent session
    totals: dict[str, int] | None  # last token_count.info.total_token_usage
    token_counts: int
    completed: bool  # a task_complete record was written
    error_message: str | None
    error_info: object  # task_complete.error.codex_error_info, verbatim
    bad_lines: int
    #: (model, effort) of each ``turn_context`` record, in order (None where not recorded)
    turns: tuple[tuple[str | None, str | None], ...] = ()


def _find_key(obj: object, key: str) -> object:
    """Depth-first search for ``key`` in nested dicts/lists (for session source shapes)."""
    if isinstance(obj, Mapping):
        if key in obj:
            return obj[key]
        for value in obj.values():
            found = _find_key(value, key)
            if found is not None:
                return found
    elif isinstance(obj, list):
        for value in obj:
            found = _find_key(value, key)
            if found is not None:
                return found
    return None


def read_rollout(text: str) -> Rollout:
    """Reduce a rollout's JSON lines to a :class:`Rollout`."""
    records, bad = parse_jsonl(text)
    session_id = parent = None
    totals: dict[str, int] | None = None
    counts = 0
    completed = False
    err_msg: str | None = None
    err_info: object = None
    turns: list[tuple[str | None, str | None]] = []
    for rec in records:
        payload = _payload if isinstance(_payload := rec.get("payload"), Mapping) else {}
        kind = rec.get("type")
        if kind == "session_meta" and session_id is None:
            sid = payload.get("id") or payload.get("session_id")
            session_id = sid if isinstance(sid, str) else None
            found = _find_key(payload.get("source"), "parent_thread_id")
            parent = found if isinstance(found, str) else None
        elif kind == "turn_context":
            turns.append(_turn_model(payload))
        elif kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, Mapping) and info.get("total_token_usage") is not None:
                counts += 1
                t = _usage_of(info.get("total_token_usage"))
                if t is None:
                    bad += 1
                else:
                    totals = t
        elif kind == "event_msg" and payload.get("type") == "task_complete":
            completed = True
            err = payload.get("error")
            if isinstance(err, Mapping):
                msg = err.get("message")
                err_msg = msg if isinstance(msg, str) else None
                err_info = err.get("codex_error_info")
            else:
                err_msg, err_info = None, None
    return Rollout(session_id, parent, totals, counts, completed, err_msg, err_info, bad, tuple(turns))


def _turn_model(payload: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(model, effort) of one ``turn_context``: ``effort``, else the collaboration mode's."""
    model = payload.get("model")
    effort = payload.get("effort")
    if effort is None:
        settings = _find_key(payload.get("collaboration_mode"), "settings")
        if isinstance(settings, Mapping):
            effort = settings.get("reasoning_effort")
    return (model if isinstance(model, str) else None, effort if isinstance(effort, str) else None)


def reachable_sessions(root: str, rollouts: Iterable[Rollout]) -> tuple[list[Rollout], list[str]]:
    """The root session and its reachable descendants, one rollout per session id.

    When a session has several rollout files (resume appends to one, but a copy can
    duplicate it) the one with the most token_count records wins. Returns the sessions
    (root first, then by id) and the problems found (missing root, bad lines).
    """
    best: dict[str, Rollout] = {}
    for r in rollouts:
        if r.session_id is None:
            continue
        cur = best.get(r.session_id)
        if cur is None or r.token_counts > cur.token_counts:
            best[r.session_id] = r
    problems: list[str] = []
    if root not in best:
        return [], [f"no rollout for the root session {root}"]
    keep = {root}
    changed = True
    while changed:
        changed = False
        for sid, r in best.items():
            if sid not in keep and r.parent_id in keep:
                keep.add(sid)
                changed = True
    ordered = [best[root]] + [best[s] for s in sorted(keep - {root})]
    for r in ordered:
        if r.bad_lines:
            problems.append(f"rollout of session {r.session_id} has {r.bad_lines} unreadable record(s)")
    return ordered, problems


def is_reconnect(message: str) -> bool:
    """True for Codex's retry notice ("Reconnecting... n/m (cause)" or "waiting for network")."""
    return bool(_RECONNECT.match(message))


def reconnect_parts(message: str) -> tuple[int, int, str] | None:
    """``(n, m, cause)`` of a counted "Reconnecting... n/m (cause)" notice, else None."""
    m = _RECONNECT_COUNTED.match(message)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), m.group(3)


def is_work_event(ev: Mapping[str, Any]) -> bool:
    """True for an event that shows the agent worked: a command, a message, a file change."""
    if ev.get("type") not in ("item.started", "item.completed"):
        return False
    item = ev.get("item")
    return isinstance(item, Mapping) and item.get("type") in _WORK_ITEMS


def final_and_writes(stdout: str) -> tuple[str | None, list[str]]:
    """The last agent message of an ``exec --json`` stdout and one ``file_change`` per
    file-changing item."""
    final, writes = None, []
    for line in stdout.splitlines():
        try:
            ev = loads_json(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(ev, dict) or ev.get("type") != "item.completed":
            continue
        item = _item if isinstance(_item := ev.get("item"), dict) else {}
        if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
            final = item["text"]
        elif item.get("type") == "file_change":
            writes.append("file_change")
    return final, writes
