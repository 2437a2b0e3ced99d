"""Anthropic Messages answers rendered from a scenario step (pure: returns bytes/dicts).

Streaming order, as the real API and Claude Code 2.1.328 expect it: ``message_start``
(input-side usage, ``output_tokens`` ≤ 1), ``ping``, per block ``content_block_start`` /
``content_block_delta`` (``text_delta`` or ``input_json_delta`` chunks) /
``content_block_stop``, then ``message_delta`` carrying the step's usage exactly, and
``message_stop``. Claude Code takes the ``message_delta`` usage as the message's final
usage, so what the probe records as served is what the CLI reports.

Faulty usage (``omit_usage`` / ``raw_usage``): the message has no ``usage`` key at all, or
``raw_usage`` verbatim, in the complete Message, ``message_start`` and ``message_delta``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from ._match import substitute_cwd
from ._scenario import ErrorSpec, Step, StepUsage, ToolCall

_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 502: "api_error",
    503: "api_error", 529: "overloaded_error",
}
_TEXT_CHUNK = 24
_JSON_CHUNK = 48


def _tool_block(call: ToolCall, cwd: str | None) -> dict[str, Any]:
    name, args = call.name, call.input
    if name == "shell":  # the portable name; Claude Code's shell tool is Bash
        name = "Bash"
    if isinstance(args, str):
        args = {"input": args}
    return {"type": "tool_use", "id": "toolu_probe_" + uuid.uuid4().hex[:20], "name": name,
            "input": substitute_cwd(args, cwd)}


def usage_json(u: StepUsage) -> dict[str, int]:
    """The Anthropic usage object of valid step usage."""
    return {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens}


def build_message(step: Step, model: str, cwd: str | None) -> dict[str, Any]:
    """The complete Message object for a text/tool step (the non-streaming answer)."""
    content: list[dict[str, Any]] = []
    if step.text is not None:
        content.append({"type": "text", "text": substitute_cwd(step.text, cwd)})
    content.extend(_tool_block(c, cwd) for c in step.calls)
    message: dict[str, Any] = {
        "id": "msg_probe_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
        "model": model, "content": content,
        "stop_reason": "tool_use" if step.calls else "end_turn", "stop_sequence": None,
    }
    if step.raw_usage is not None:
        message["usage"] = dict(step.raw_usage)
    elif not step.omit_usage:
        message["usage"] = usage_json(step.usage)
    return message


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _block_events(i: int, block: dict[str, Any]) -> list[bytes]:
    if block["type"] == "text":
        text = block["text"]
        out = [sse("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "text", "text": ""}})]
        for j in range(0, len(text), _TEXT_CHUNK):
            out.append(sse("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "text_delta", "text": text[j:j + _TEXT_CHUNK]}}))
    else:
        js = json.dumps(block["input"])
        out = [sse("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "tool_use", "id": block["id"],
                                                             "name": block["name"], "input": {}}})]
        for j in range(0, len(js), _JSON_CHUNK):
            out.append(sse("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta", "partial_json": js[j:j + _JSON_CHUNK]}}))
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    return out


def stream_events(message: dict[str, Any]) -> list[bytes]:
    """The full SSE answer for ``message`` (from :func:`build_message`)."""
    start = dict(message, content=[], stop_reason=None)
    usage = message.get("usage")
    if usage is not None:
        out_tokens = usage.get("output_tokens")
        if isinstance(out_tokens, int) and not isinstance(out_tokens, bool) and out_tokens >= 0:
            start["usage"] = dict(usage, output_tokens=min(1, out_tokens))
        # malformed output counts reach message_start verbatim: the fault is in both events
    delta: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}}
    if usage is not None:
        delta["usage"] = usage
    out = [sse("message_start", {"type": "message_start", "message": start}),
           sse("ping", {"type": "ping"})]
    for i, block in enumerate(message["content"]):
        out.extend(_block_events(i, block))
    out.append(sse("message_delta", delta))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return out


def dropped_stream_events(step: Step, model: str) -> list[bytes]:
    """The head of a stream that the server then cuts: message_start and half a text block."""
    message = build_message(Step(text="The probe cuts this stream here", usage=step.usage),
                            model, None)
    events = stream_events(message)
    return events[:4]  # message_start, ping, content_block_start, first delta


def error_body(spec: ErrorSpec) -> dict[str, Any]:
    return {"type": "error",
            "error": {"type": _ERROR_TYPES.get(spec.status, "api_error"), "message": spec.message}}


def count_tokens_body(body: Any) -> dict[str, int]:
    """A plausible ``count_tokens`` answer (about four characters a token)."""
    return {"input_tokens": max(1, len(json.dumps(body)) // 4)}
