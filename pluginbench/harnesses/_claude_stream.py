"""Pure reading of a Claude Code ``--output-format stream-json`` stdout.

:func:`parse_stream` folds the lines into a :class:`StreamSummary` (init events, result
events, retries, rate-limit events, hook runs, denials, tool uses); :func:`provider_stop`
classifies a summary as a provider/account stop or not, per the product rules:

* a ``rate_limit_event`` with ``status: "rejected"`` (unless ``isUsingOverage``), even when
  the session then succeeds;
* a failed ``result`` whose ``api_error_status`` is 429, 401, 403 or 5xx;
* a session cut off (no result) while it was retrying (last event ``system/api_retry``).

Invalid requests (400), max turns, prompt-too-long and unknown errors stay the agent's.

**The agent can write into this stream.** Its commands run as the CLI's own user, so a
command can reopen ``/proc/<cli pid>/fd/1`` and append lines of its own. Two rules keep a
forged line from stopping the run (see docs/harnesses.md, "Evidence the agent cannot
forge"):

* a ``result`` or ``system/api_retry`` line that arrives while one of the session's
  tools is running (between a ``tool_use`` and the *last* ``tool_result`` for it; a
  subagent's own ``Task``/``Agent`` span excepted, since it makes API calls) cannot be
  the CLI's: the CLI is waiting for the tool, not calling the API. It is left out of the
  summary and named in :attr:`StreamSummary.integrity`. (``rate_limit_event`` is not
  judged by position: the real CLI writes it after the response's last block, which may
  be a ``tool_use`` whose tool then runs.)
* a rejected ``rate_limit_event`` is a stop only when the CLI's own terminal ``result``
  corroborates it: a failed result that ended on an API error (``terminal_reason:
  "api_error"`` or an ``api_error_status``). Beside a successful result, or with no result
  at all, it is named by :func:`uncorroborated` and the attempt stays the agent's.
"""

import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any, NamedTuple

import msgspec

from .._parsing import MAX_JSON_DEPTH, loads_json

_DECODE = msgspec.json.Decoder().decode


def loads_line(line: str) -> Any:
    """:func:`~pluginbench._parsing.loads_json` of one line of the CLI's stdout or
    transcripts, decoded by msgspec where it can: wherever msgspec accepts the text it gives
    the value :func:`json.loads` gives, and the text it refuses (``NaN``, a lone surrogate,
    an out-of-range float, malformed JSON) and any line with enough brackets to nest too deep
    go to ``loads_json``, so what is accepted, refused and raised is its own."""
    try:
        value = _DECODE(line)
    except (msgspec.DecodeError, ValueError, RecursionError):
        return loads_json(line)
    if line.count("[") + line.count("{") > MAX_JSON_DEPTH:
        return loads_json(line)
    return value


class HookRun(NamedTuple):
    hook_id: str
    name: str  # e.g. "SessionStart:startup"
    event: str
    started: bool
    exit_code: int | None
    outcome: str | None
    before_first_reply: bool


class StreamSummary(NamedTuple):
    inits: tuple[dict[str, Any], ...]
    results: tuple[dict[str, Any], ...]
    retries: tuple[dict[str, Any], ...]
    rate_limits: tuple[dict[str, Any], ...]
    hooks: tuple[HookRun, ...]
    denials: tuple[dict[str, Any], ...]
    tool_uses: tuple[tuple[str, str | None], ...]  # (tool name, parent_tool_use_id)
    compactions: int
    last_event: tuple[str, str | None] | None  # (type, subtype) of the last line
    bad_lines: int
    #: what in the stream cannot be the CLI's own (lines an agent wrote into it), one note each
    integrity: tuple[str, ...] = ()

    @property
    def result(self) -> dict[str, Any] | None:
        return self.results[-1] if self.results else None

    @property
    def api_retries(self) -> dict[str, int]:
        """How many API calls were retried, by error (``rate_limit``, ``overloaded``…)."""
        return dict(sorted(Counter(str(r.get("error") or r.get("error_status")) for r in self.retries).items()))

    @property
    def announced_wait_ms(self) -> int:
        """The sum of the waits announced before each retry (announced, not measured)."""
        return sum(int(r.get("retry_delay_ms") or 0) for r in self.retries)


#: tools whose span holds a subagent's own API calls (its retries and limits are real)
_AGENT_TOOLS = frozenset({"Task", "Agent"})
_STOP_LINES = frozenset({("system", "api_retry"), ("result", None)})


#: The fields whose type the folds here and in ``_claude_usage`` rely on, with the types the
#: CLI writes: a line with another type in one (``"message": 1``, an ``id`` that is a list)
#: cannot be the CLI's. It is counted as an undecodable line (an integrity note on stdout,
#: usage unknown in a transcript), never an AttributeError that ends the harness's parse.
_EVENT_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("type", str), ("subtype", str), ("message", dict), ("modelUsage", dict), ("rate_limit_info", dict))
_MESSAGE_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("id", str), ("model", str), ("content", (list, str)))


def well_formed(ev: dict[str, Any]) -> bool:
    """Whether every field of :data:`_EVENT_FIELDS` (and the message's) is absent, null or of its type."""
    if not all(ev.get(k) is None or isinstance(ev[k], t) for k, t in _EVENT_FIELDS):
        return False
    msg = ev.get("message")
    return msg is None or all(msg.get(k) is None or isinstance(msg[k], t) for k, t in _MESSAGE_FIELDS)


def _decode(lines: list[str]) -> tuple[list[dict[str, Any]], int]:
    events, bad = [], 0
    for line in lines:
        if not line.strip():
            continue
        try:
            ev = loads_line(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(ev, dict) or not well_formed(ev):
            bad += 1
            continue
        events.append(ev)
    return events, bad


def _blocks(ev: dict[str, Any]) -> list[dict[str, Any]]:
    content = (ev.get("message") or {}).get("content") if isinstance(ev.get("message"), dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def tool_spans(events: list[dict[str, Any]]) -> tuple[list[tuple[int, int]], list[str]]:
    """The ``(start, end)`` event indexes during which a (non-subagent) tool was running:
    from its ``tool_use`` to the last ``tool_result`` for it (to the end when none came),
    and a note per tool that got more than one result (one was written by someone else)."""
    started: dict[str, int] = {}
    names: dict[str, str] = {}
    ended: dict[str, int] = {}
    results: Counter[str] = Counter()
    for i, ev in enumerate(events):
        for block in _blocks(ev):
            if ev.get("type") == "assistant" and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                started.setdefault(block["id"], i)
                names[block["id"]] = str(block.get("name"))
            elif ev.get("type") == "user" and block.get("type") == "tool_result" and isinstance(
                    block.get("tool_use_id"), str):
                ended[block["tool_use_id"]] = i
                results[block["tool_use_id"]] += 1
    spans = [(start, ended.get(tid, len(events))) for tid, start in started.items() if names[tid] not in _AGENT_TOOLS]
    notes = [f"tool {tid} got {n} results; only the CLI writes one" for tid, n in sorted(results.items()) if n > 1]
    return spans, notes


class OpenTools:
    """The session's running tools, line by line as stdout arrives (for the live
    dialogue, which must not end the session on a ``result`` the agent wrote while its
    tool ran). Online it can only close a tool at its first ``tool_result``; the saved
    stream is judged afterwards by :func:`in_turn`, which uses the last."""

    def __init__(self) -> None:
        self._open: set[str] = set()

    def feed(self, line: str) -> dict[str, Any] | None:
        """Track one stdout line; its decoded event, or ``None`` when it is not one."""
        try:
            ev = loads_line(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(ev, dict) or not well_formed(ev):
            return None
        for block in _blocks(ev):
            if ev.get("type") == "assistant" and block.get("type") == "tool_use" and isinstance(block.get("id"), str) \
                    and str(block.get("name")) not in _AGENT_TOOLS:
                self._open.add(block["id"])
            elif ev.get("type") == "user" and block.get("type") == "tool_result":
                self._open.discard(str(block.get("tool_use_id")))
        return ev

    @property
    def running(self) -> bool:
        """A (non-subagent) tool is running now."""
        return bool(self._open)


def in_turn(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """``events`` without the stop lines that arrived while a tool was running, and a
    note for each line left out (see the module docstring)."""
    spans, notes = tool_spans(events)
    kept = []
    for i, ev in enumerate(events):
        key = (str(ev.get("type")), ev.get("subtype") if ev.get("type") == "system" else None)
        if key in _STOP_LINES and any(start < i < end for start, end in spans):
            notes.append(f"a {'/'.join(k for k in key if k)} line arrived while a tool was running (event {i + 1}): "
                         "written by the agent, not the CLI; ignored")
            continue
        kept.append(ev)
    return kept, notes


def decode_stream(lines: list[str] | str) -> tuple[list[dict[str, Any]], int]:
    """The well-formed events of stream-json lines, and how many non-blank lines were not
    (undecodable, or a field of :data:`_EVENT_FIELDS` of another type): what
    :func:`parse_stream` and :func:`~._claude_usage.read_stream_answers` fold, decoded once."""
    return _decode(lines.splitlines() if isinstance(lines, str) else lines)


def parse_stream(lines: list[str] | str) -> StreamSummary:
    """Fold stream-json lines; undecodable lines are counted, never fatal; stop lines
    that cannot be the CLI's are left out and noted (:func:`in_turn`)."""
    return parse_decoded(*decode_stream(lines))


def parse_decoded(decoded: list[dict[str, Any]], bad: int) -> StreamSummary:
    """:func:`parse_stream` of what :func:`decode_stream` returned."""
    inits, results, retries, limits, denials, tools = [], [], [], [], [], []
    hooks: dict[str, dict[str, Any]] = {}
    compactions = 0
    replied = False
    last: tuple[str, str | None] | None = None
    events, integrity = in_turn(decoded)
    for ev in events:
        etype, sub = ev.get("type"), ev.get("subtype")
        last = (str(etype), sub)
        if etype == "system":
            if sub == "init":
                inits.append(ev)
            elif sub == "api_retry":
                retries.append(ev)
            elif sub == "permission_denied":
                denials.append(ev)
            elif sub == "compact_boundary":
                compactions += 1
            elif sub in ("hook_started", "hook_response"):
                h = hooks.setdefault(str(ev.get("hook_id")), {
                    "name": ev.get("hook_name"), "event": ev.get("hook_event"), "started": False,
                    "exit_code": None, "outcome": None, "responses": 0, "before": not replied})
                if sub == "hook_started":
                    h["started"] = True
                else:
                    h["responses"] += 1
                    h["exit_code"] = ev.get("exit_code")
                    h["outcome"] = ev.get("outcome")
        elif etype == "rate_limit_event":
            limits.append(ev.get("rate_limit_info") or {})
        elif etype == "result":
            results.append(ev)
        elif etype == "assistant":
            msg = ev.get("message") or {}
            if msg.get("model") != "<synthetic>" and ev.get("parent_tool_use_id") is None:
                replied = True
            for block in msg.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tools.append((str(block.get("name")), ev.get("parent_tool_use_id")))
    hook_runs = tuple(
        HookRun(hid, str(h["name"]), str(h["event"]), h["started"],
                h["exit_code"], h["outcome"] if h["responses"] == 1 else f"responses={h['responses']}",
                h["before"])
        for hid, h in hooks.items())
    return StreamSummary(tuple(inits), tuple(results), tuple(retries), tuple(limits), hook_runs,
                         tuple(denials), tuple(tools), compactions, last, bad, tuple(integrity))


def _reset(info: dict[str, Any]) -> str:
    at = info.get("resetsAt")
    if isinstance(at, int | float):
        return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return "unknown"


def _rejected(summary: StreamSummary) -> dict[str, Any] | None:
    return next((i for i in summary.rate_limits if i.get("status") == "rejected" and not i.get("isUsingOverage")), None)


def _api_failure(res: dict[str, Any] | None) -> bool:
    """The terminal result is a failure that ended on an API error."""
    return res is not None and bool(res.get("is_error")) and (
        res.get("terminal_reason") == "api_error" or isinstance(res.get("api_error_status"), int))


def uncorroborated(summary: StreamSummary) -> list[str]:
    """Stop signals in the stream that the CLI's own terminal result does not
    corroborate (a rejected rate limit without a result that failed on an API error),
    one note each."""
    info = _rejected(summary)
    if info is None or _api_failure(summary.result):
        return []
    how = "no terminal result" if summary.result is None else "a terminal result that did not fail on an API error"
    return [f"a rejected rate_limit_event ({info.get('rateLimitType') or 'unknown window'}) is not corroborated by "
            f"the CLI ({how}): not a provider stop"]


def provider_stop(summary: StreamSummary, *, timed_out: bool = False) -> str | None:
    """The provider/account cause that stopped this session, or ``None``; only signals
    the CLI's terminal result corroborates (see the module docstring)."""
    info = _rejected(summary)
    res = summary.result
    if info is not None and _api_failure(res):
        window = info.get("rateLimitType") or "unknown window"
        return f"usage or rate limit rejected ({window}; resets {_reset(info)})"
    if res is not None and res.get("is_error"):
        status = res.get("api_error_status")
        if isinstance(status, int):
            text = str(res.get("result") or res.get("api_error_type") or "")[:200]
            if status == 429:
                return f"rate limit: API error 429 after retries ({text})"
            if status in (401, 403):
                return f"authentication failure: API error {status} ({text})"
            if 500 <= status <= 599:
                return f"provider error {status} not recovered by retries ({text})"
    if res is None and summary.last_event == ("system", "api_retry"):
        r = summary.retries[-1]
        how = "timed out" if timed_out else "cut off"
        return (f"session {how} while retrying an API call (attempt {r.get('attempt')}/"
                f"{r.get('max_retries')}, error {r.get('error_status')} {r.get('error')})")
    return None


#: Tools whose use means the session wrote something.
WRITING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


def final_and_writes(stdout: str) -> tuple[str | None, list[str]]:
    """The session's final message (the ``result`` event) and every writing tool it used,
    from its saved stream-json stdout."""
    final, tools = None, []
    for line in stdout.splitlines():
        try:
            ev = loads_line(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(ev, dict) or not well_formed(ev):
            continue
        if ev.get("type") == "result" and isinstance(ev.get("result"), str):
            final = ev["result"]
        if ev.get("type") == "assistant":
            for block in (ev.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tools.append(str(block.get("name")))
    return final, [t for t in tools if t in WRITING_TOOLS]
