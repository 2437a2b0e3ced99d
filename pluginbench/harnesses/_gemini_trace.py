"""Gemini CLI's pinned launch, private settings and reading its own output (pure).

Facts measured on ``@google/gemini-cli`` 0.61.0 against the loopback probe:

* Headless: ``-p PROMPT --output-format stream-json`` prints one JSON event per line
  (``init`` with ``session_id``, ``message``, ``tool_use``, ``tool_result``, ``result`` with
  ``status`` and ``stats``); ``--approval-mode yolo`` runs tools without asking.
* ``GOOGLE_GEMINI_BASE_URL`` (plain http only for loopback) and ``GEMINI_API_KEY`` with
  ``security.auth.selectedType: gemini-api-key`` reach the Gemini API at
  ``{base}/v1beta/models/{model}:streamGenerateContent?alt=sse``; the key travels as
  ``x-goog-api-key``.
* The global context file is ``~/.gemini/GEMINI.md``; its text is sent inside the system
  instruction (``--- Context from: <path> ---``). Skills: ``~/.gemini/skills/<name>/SKILL.md``.
* Usage has two records: the ``result`` event's ``stats`` (``input_tokens`` including
  ``cached``, ``output_tokens`` = candidates, ``total_tokens`` = input + output + thoughts)
  and the chat transcript ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (one
  ``type: gemini`` message per model answer, rewritten under the same ``id``, with
  ``tokens: {input, output, cached, thoughts}``).
* There is no no-model discovery: ``-p "/memory list"`` prints the loaded GEMINI.md files,
  then still sends the prompt to the model (measured). The receipt is therefore the
  labelled ``delivered-home`` listing (see :func:`delivered_receipt`).
"""

import json
from typing import Any, NamedTuple

from .._parsing import json_lines
from ..config import Capabilities
from ..events import Usage

#: The private Gemini CLI folder under HOME.
GEMINI_DIR = ".gemini"
#: The model API a real run reaches.
REAL_BASE_URL = "https://generativelanguage.googleapis.com"
RECEIPT_SCHEMA = "pluginbench.gemini.native-treatment/1"


def settings_json(*, probe: bool, capabilities: Capabilities) -> str:
    """The private ``~/.gemini/settings.json``: API-key auth (no auth prompt), update checks,
    usage statistics and telemetry off, folder trust off (no trust prompt), GEMINI.md as the
    only context file name; sub-agents off removes ``invoke_agent``. ``general.maxAttempts``
    bounds the CLI's own retries of a model request (default 10, with backoff: a plain 429
    retried for minutes, measured): 1 in probe mode, so a scripted error is answered at
    once, 3 in a real run."""
    settings: dict[str, Any] = {
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                    "maxAttempts": 1 if probe else 3},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "context": {"fileName": ["GEMINI.md"]},
    }
    if not capabilities.subagents:
        settings["tools"] = {"exclude": ["invoke_agent"]}
    return json.dumps(settings, indent=2, sort_keys=True) + "\n"


def exec_argv(cli: str, *, model: str, prompt: str) -> list[str]:
    """The pinned headless launch (the prompt last, as ``-p``'s value)."""
    return [cli, "--model", model, "--output-format", "stream-json", "--approval-mode", "yolo", "-p", prompt]


def launch_env(*, home: str, tmp: str, base_url: str, key: str) -> dict[str, str]:
    """The agent process's whole environment: a private HOME and TMPDIR, the endpoint and
    its key (the probe's fake key in probe mode)."""
    return {
        "HOME": home,
        "TMPDIR": tmp,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_API_KEY": key,
        "NO_COLOR": "1",
        "NO_BROWSER": "1",
        # no second node process re-launched with a bigger heap: a third of startup in a sandbox
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }


class Trace(NamedTuple):
    """The facts of one session's stdout."""

    session_id: str | None
    result: dict[str, Any] | None
    error: str | None


def read_stream(stdout: str) -> Trace:
    session, result, error = None, None, None
    for ev in json_lines(stdout)[0]:
        if ev.get("type") == "init":
            session = ev.get("session_id")
        elif ev.get("type") == "result":
            result = ev
            if ev.get("status") != "success":
                err = ev.get("error")
                error = str(err.get("message") if isinstance(err, dict) else err or ev.get("status"))
        elif ev.get("type") == "error" and error is None and ev.get("severity") == "error":
            error = str(ev.get("message"))
    return Trace(session, result, error)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def answers(transcript: str) -> list[dict[str, Any]]:
    """The model answers (``type: gemini`` messages) of a chat transcript, one per ``id``
    (the last write of each), in first-seen order."""
    by_id: dict[str, dict[str, Any]] = {}
    for ev in json_lines(transcript)[0]:
        if ev.get("type") == "gemini" and isinstance(ev.get("id"), str):
            by_id[ev["id"]] = ev
    return list(by_id.values())


def validate_usage(stdout: str, transcript: str, *, timed_out: bool) -> Usage:
    """The session's usage: exact when every answer in the transcript carries token counts
    and their sums equal the ``result`` stats; otherwise unknown with the reason (never 0).

    ``output_tokens`` is what is billed as output: candidates plus thoughts, with the
    thoughts also in ``reasoning_output_tokens``; ``total_tokens`` = input + output."""
    trace = read_stream(stdout)

    def unknown(reason: str) -> Usage:
        return Usage(status="unknown", reason=reason)

    if timed_out:
        return unknown("the session timed out before its result event")
    if trace.session_id is None or trace.result is None:
        return unknown("stdout has no init or result event")
    stats = trace.result.get("stats")
    if not isinstance(stats, dict):
        return unknown("the result event has no stats")
    said = [a for a in answers(transcript)]
    if not said:
        return unknown("the transcript records no model answer")
    sums = {"input": 0, "output": 0, "cached": 0, "thoughts": 0}
    for i, a in enumerate(said):
        tokens = a.get("tokens")
        if not isinstance(tokens, dict) or not _int(tokens.get("input")):
            return unknown(f"model answer {i + 1} carried no usage")
        for key in sums:
            value = _int(tokens.get(key, 0))
            if value is None:
                return unknown(f"model answer {i + 1} has a malformed {key} count")
            sums[key] += value
    for key, stat in (("input", "input_tokens"), ("output", "output_tokens"), ("cached", "cached")):
        if _int(stats.get(stat)) != sums[key]:
            return unknown(f"{stat}: transcript {sums[key]}, result {stats.get(stat)!r} disagree")
    total = _int(stats.get("total_tokens"))
    if total != sums["input"] + sums["output"] + sums["thoughts"]:
        return unknown(f"total_tokens {stats.get('total_tokens')!r} is not input + output + thoughts "
                       f"({sums['input']} + {sums['output']} + {sums['thoughts']})")
    inp, cached, out = sums["input"], sums["cached"], sums["output"] + sums["thoughts"]
    return Usage(status="exact", input_tokens=inp, cached_input_tokens=cached, uncached_input_tokens=inp - cached,
                 output_tokens=out, reasoning_output_tokens=sums["thoughts"], total_tokens=inp + out,
                 reason=f"{len(said)} model answer(s): transcript and result stats agree")


def classify_provider_stop(stdout: str, stderr: str, *, timed_out: bool) -> str | None:
    """The provider's refusal that ended the session (rate limit, quota, auth, 5xx), or None."""
    if timed_out:
        return None
    trace = read_stream(stdout)
    if trace.error is None and (trace.result is not None and trace.result.get("status") == "success"):
        return None
    text = "\n".join(x for x in (trace.error or "", stderr[-4000:]) if x)
    low = text.lower()
    first = (trace.error or "").splitlines()[0][:200] if trace.error else "the CLI stopped on a provider error"
    if "429" in text or "resource_exhausted" in low or "quota" in low:
        return f"rate limited (HTTP 429): {first}"
    for status in ("401", "403"):
        if f"status {status}" in low or f'"code":{status}' in text.replace(" ", "") or f"[{status}]" in text:
            return f"authentication refused (HTTP {status}): {first}"
    for status in ("500", "502", "503", "529"):
        if f'"code":{status}' in text.replace(" ", "") or f"status {status}" in low:
            return f"provider error (HTTP {status}): {first}"
    return None
