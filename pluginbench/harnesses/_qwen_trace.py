"""Reading Qwen Code's own output (pure): the discovery receipt of ``/context -d``, the
usage of a session validated across its three records, and provider stops.

Usage has three independent records in 0.24.4: the ``stream-json`` ``result`` event's
session total (stdout), the CLI's usage log ``~/.qwen/usage/token-usage-*.jsonl`` (one line
per model answer, with ``sessionId``) and the chat transcript
``~/.qwen/projects/<cwd>/chats/<session>.jsonl`` (one ``qwen-code.api_response`` telemetry
record per answer with its HTTP status and token counts). Usage is ``exact`` only when
every answer the transcript records carries a positive token count, the usage log has one
line per answer, and both sum to the ``result`` total; otherwise ``unknown`` with the
reason (never zero). An answer without usage is recorded by the CLI as zeros, which a
real answer never is: that is how a missing count is seen.
"""

import re
from typing import Any, NamedTuple

from .._parsing import json_lines
from ..events import Usage

_ROW = re.compile(r"^\s*└\s+(.+?)\s{2,}[\d.,]+k?\s+tokens")


class ContextListing(NamedTuple):
    """What ``/context -d`` said the session loads."""

    version: str | None
    memory_files: tuple[str, ...]
    skills: tuple[str, ...]
    model_calls: int  # num_turns of the result (0: answered locally)
    ok: bool


def read_context(stdout: str) -> ContextListing:
    """The memory files and skills listed by ``/context -d`` in a stream-json stdout."""
    version, result, turns, ok = None, "", -1, False
    for ev in json_lines(stdout)[0]:
        if ev.get("type") == "system" and ev.get("subtype") == "init":
            version = ev.get("qwen_code_version")
        elif ev.get("type") == "result":
            n = ev.get("num_turns")
            if n is not None and _int(n) is None:
                continue  # a count of the wrong type or sign: an undecodable line, not the CLI's result
            result = str(ev.get("result") or "")
            turns = n or 0
            ok = not ev.get("is_error")
    memory: list[str] = []
    skills: list[str] = []
    section = None
    for line in result.splitlines():
        if line.startswith("**") and line.endswith("**"):
            section = line.strip("*")
            continue
        m = _ROW.match(line)
        if m and section == "Memory files":
            memory.append(m.group(1).strip())
        elif m and section == "Skills":
            skills.append(m.group(1).strip().removesuffix(" (active)"))
    return ContextListing(version, tuple(memory), tuple(sorted(skills)), turns, ok and bool(result))


#: Memory files Qwen Code writes itself (its model-language instruction), not a treatment's.
CLI_OWNED_MEMORY = ("~/.qwen/output-language.md",)
GLOBAL_GUIDANCE = "~/.qwen/QWEN.md"


def compare(listing: ContextListing, *, guidance: bool, skills: tuple[str, ...],
            vanilla_skills: tuple[str, ...] | None) -> dict[str, Any]:
    """The receipt: what loaded against what was declared. A mismatch: the declared
    QWEN.md missing (or present for vanilla), any other memory file outside the CLI's own
    and the task repository's, a declared skill missing, or (when the CLI's own bundled
    skill list is known from a vanilla discovery) any skill neither bundled nor declared."""
    mismatches: list[str] = []
    if not listing.ok:
        mismatches.append("/context -d gave no listing")
    if listing.model_calls != 0:
        mismatches.append(f"/context -d made {listing.model_calls} model call(s)")
    has_global = GLOBAL_GUIDANCE in listing.memory_files
    if guidance and not has_global:
        mismatches.append(f"the declared guidance {GLOBAL_GUIDANCE} did not load")
    if not guidance and has_global:
        mismatches.append(f"{GLOBAL_GUIDANCE} loaded but the arm declares no guidance")
    task_owned = [m for m in listing.memory_files if not m.startswith("~/") and m != "auto memory"]
    foreign = [m for m in listing.memory_files
               if m not in (GLOBAL_GUIDANCE, *CLI_OWNED_MEMORY) and m not in task_owned]
    mismatches += [f"memory file {m!r} loaded from outside the treatment" for m in foreign]
    mismatches += [f"the declared skill {s!r} did not load" for s in skills if s not in listing.skills]
    if vanilla_skills is not None:
        extra = sorted(set(listing.skills) - set(vanilla_skills) - set(skills))
        mismatches += [f"skill {s!r} loaded from outside the treatment" for s in extra]
    return {
        "schema": "pluginbench.qwen.native-treatment/1",
        "ok": not mismatches,
        "passed": not mismatches,
        "mismatches": mismatches,
        "discovered_cli_version": listing.version,
        "memory_files": list(listing.memory_files),
        "guidance_loaded": has_global,
        "skills_loaded": sorted(s for s in listing.skills if s in skills),
        "cli_skills": sorted(s for s in listing.skills if s not in skills),
        "task_owned": {"memory_files": task_owned},
        "model_calls": listing.model_calls,
    }


class Trace(NamedTuple):
    """The facts of one session's stdout."""

    session_id: str | None
    result: dict[str, Any] | None
    error: str | None


def read_stream(stdout: str) -> Trace:
    session, result, error = None, None, None
    for ev in json_lines(stdout)[0]:
        if ev.get("type") == "system" and ev.get("subtype") == "init":
            session = ev.get("session_id")
        elif ev.get("type") == "result":
            result = ev
            if ev.get("is_error"):
                err = ev.get("error")
                error = str(err.get("message") if isinstance(err, dict) else err or ev.get("subtype"))
                # an empty message still ends in an error: never an empty (false) one
                error = error if error.strip() else str(ev.get("subtype") or "the result event reports an error")
    return Trace(session, result, error)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def api_responses(transcript: str) -> list[dict[str, Any]]:
    """The ``qwen-code.api_response`` telemetry records of a chat transcript, in order."""
    out = []
    for ev in json_lines(transcript)[0]:
        ui = ((ev.get("systemPayload") or {}).get("uiEvent") or {}) if isinstance(ev.get("systemPayload"), dict) else {}
        if isinstance(ui, dict) and ui.get("event.name") == "qwen-code.api_response":
            out.append(ui)
    return out


def validate_usage(stdout: str, usage_log: str, transcript: str, *, timed_out: bool) -> Usage:
    """The session's usage from its three records (see the module docstring)."""
    trace = read_stream(stdout)

    def unknown(reason: str) -> Usage:
        return Usage(status="unknown", reason=reason)

    if timed_out:
        return unknown("the session timed out before its result event")
    if trace.session_id is None or trace.result is None:
        return unknown("stdout has no init or result event")
    answers = api_responses(transcript)
    records = [r for r in json_lines(usage_log)[0] if r.get("sessionId") == trace.session_id]
    raw_total = trace.result.get("usage")
    total: dict[str, Any] = raw_total if isinstance(raw_total, dict) else {}
    if not answers:
        if trace.result.get("num_turns") == 0 and not records:
            return Usage(status="exact", input_tokens=0, cached_input_tokens=0, uncached_input_tokens=0,
                         output_tokens=0, reasoning_output_tokens=0, total_tokens=0,
                         reason="the session made no model call")
        return unknown("the transcript records no model answer")
    for i, a in enumerate(answers):
        if _int(a.get("input_token_count")) in (None, 0) or _int(a.get("output_token_count")) is None:
            return unknown(f"model answer {i + 1} carried no usage (the CLI recorded zeros)")
    if len(records) != len(answers):
        return unknown(f"the usage log has {len(records)} record(s) for {len(answers)} model answer(s)")
    fields = (("inputTokens", "input_token_count", "input_tokens"), ("outputTokens", "output_token_count", "output_tokens"),
              ("cachedTokens", "cached_content_token_count", "cache_read_input_tokens"))
    sums: dict[str, int] = {}
    for log_key, tx_key, result_key in fields:
        log_sum = sum(_int(r.get(log_key)) or 0 for r in records)
        tx_sum = sum(_int(a.get(tx_key)) or 0 for a in answers)
        if log_sum != tx_sum or _int(total.get(result_key)) != tx_sum:
            return unknown(f"{result_key}: usage log {log_sum}, transcript {tx_sum}, result {total.get(result_key)!r} disagree")
        sums[result_key] = tx_sum
    reasoning = sum(_int(a.get("thoughts_token_count")) or 0 for a in answers)
    inp, out, cached = sums["input_tokens"], sums["output_tokens"], sums["cache_read_input_tokens"]
    return Usage(status="exact", input_tokens=inp, cached_input_tokens=cached, uncached_input_tokens=inp - cached,
                 output_tokens=out, reasoning_output_tokens=reasoning, total_tokens=inp + out,
                 reason=f"{len(answers)} model answer(s): usage log, transcript and result agree")


_STATUS = re.compile(r"\[API Error: (\d{3})\b")


def classify_provider_stop(stdout: str, transcript: str, *, timed_out: bool) -> str | None:
    """The provider's refusal that ended the session (rate limit, quota, auth, 5xx), or None."""
    if timed_out:
        return None
    trace = read_stream(stdout)
    if trace.error is None:
        return None
    m = _STATUS.search(trace.error)
    status = int(m.group(1)) if m else None
    if status is None:
        failed = [a for a in api_responses(transcript) if _int(a.get("status_code")) not in (None, 200)]
        status = _int(failed[-1].get("status_code")) if failed else None
    if status == 429 or "quota" in trace.error.lower():
        return f"rate limited (HTTP 429): {trace.error.splitlines()[0][:200]}"
    if status in (401, 403):
        return f"authentication refused (HTTP {status}): {trace.error.splitlines()[0][:200]}"
    if status is not None and status >= 500:
        return f"provider error (HTTP {status}): {trace.error.splitlines()[0][:200]}"
    return None
