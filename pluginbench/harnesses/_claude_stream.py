"""Pure reading of a Claude Code ``--output-format stream-json`` stdout.

:func:`parse_stream` folds the lines into a :class:`StreamSummary` (init events, result
events, retries, rate-limit events, hook runs, denials, tool uses); :func:`provider_stop`
classifies a summary as a provider/account stop or not, per the product rules:

* a ``rate_limit_event`` with ``status: "rejected"`` (unless ``isUsingOverage``), even when
  the session then succeeds;
* a failed ``result`` whose ``api_error_status`` is 429, 401, 403 or 5xx;
* a session cut off (no result) while it was retrying (last event ``system/api_retry``).

Invalid requests (400), max turns, prompt-too-long and unknown errors stay the agent's.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from typing import Any, NamedTuple


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


def parse_stream(lines: list[str] | str) -> StreamSummary:
    """Fold stream-json lines; undecodable lines are counted, never fatal."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    inits, results, retries, limits, denials, tools = [], [], [], [], [], []
    hooks: dict[str, dict[str, Any]] = {}
    compactions = bad = 0
    replied = False
    last: tuple[str, str | None] | None = None
    for line in lines:
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(ev, dict):
            bad += 1
            continue
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
                         tuple(denials), tuple(tools), compactions, last, bad)


def _reset(info: dict[str, Any]) -> str:
    at = info.get("resetsAt")
    if isinstance(at, int | float):
        return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return "unknown"


def provider_stop(summary: StreamSummary, *, timed_out: bool = False) -> str | None:
    """The provider/account cause that stopped this session, or ``None``."""
    for info in summary.rate_limits:
        if info.get("status") == "rejected" and not info.get("isUsingOverage"):
            window = info.get("rateLimitType") or "unknown window"
            return f"usage or rate limit rejected ({window}; resets {_reset(info)})"
    res = summary.result
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
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(ev, dict):
            continue
        if ev.get("type") == "result" and isinstance(ev.get("result"), str):
            final = ev["result"]
        if ev.get("type") == "assistant":
            for block in (ev.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tools.append(str(block.get("name")))
    return final, [t for t in tools if t in WRITING_TOOLS]
