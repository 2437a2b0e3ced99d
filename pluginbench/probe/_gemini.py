"""Gemini API answers rendered from a scenario step (pure: returns bytes/dicts).

The API Gemini CLI (``gemini-api-key`` auth, ``GOOGLE_GEMINI_BASE_URL``) speaks:
``POST {base}/v1beta/models/{model}:generateContent`` (one JSON answer) and
``:streamGenerateContent?alt=sse`` (``data: {GenerateContentResponse}`` events, no
``[DONE]``). The model is in the path, the key in ``x-goog-api-key``. Tool names in a
scenario map onto the offered ``functionDeclarations``:

* ``shell`` (portable; input ``{command: str | [argv]}``): the offered shell function
  (``run_shell_command`` in Gemini CLI) with ``{command: str}``.
* any other name (``write_file``...): a ``functionCall`` part with the input as ``args``.

A step's usage goes into ``usageMetadata`` exactly: ``promptTokenCount`` is
``input_tokens`` (Gemini counts cached tokens inside the prompt),
``cachedContentTokenCount`` is ``cache_read_input_tokens``, ``candidatesTokenCount`` is
``output_tokens``, ``thoughtsTokenCount`` is ``reasoning_tokens`` and ``totalTokenCount``
their sum (prompt + candidates + thoughts). A stream carries it on its last event only.
``omit_usage`` sends no ``usageMetadata``; ``raw_usage`` sends it verbatim.
"""

from __future__ import annotations

import json
import shlex
import uuid
from typing import Any

from ._match import offered_tools, substitute_cwd
from ._scenario import ErrorSpec, Step, StepUsage, ToolCall

_TEXT_CHUNK = 24
#: The shell functions a Gemini-API agent may offer, in preference order.
SHELL_TOOLS = ("run_shell_command", "shell", "bash")
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 529: "UNAVAILABLE",
}


def model_of(path: str) -> str | None:
    """The model id in a ``/v1beta/models/{model}:{method}`` path, or None."""
    tail = path.split("?", 1)[0].split("/models/", 1)
    if len(tail) != 2:
        return None
    return tail[1].split(":", 1)[0] or None


def method_of(path: str) -> str | None:
    """``generateContent``, ``streamGenerateContent``, ``countTokens``... of a model path."""
    head = path.split("?", 1)[0]
    if "/models/" not in head or ":" not in head.rsplit("/", 1)[-1]:
        return None
    return head.rsplit(":", 1)[1]


def _call(call: ToolCall, body: dict[str, Any], cwd: str | None) -> dict[str, Any]:
    args = substitute_cwd(call.input, cwd)
    name = call.name
    if name == "shell" and isinstance(args, dict):
        offered = offered_tools(body)
        name = next((t for t in SHELL_TOOLS if t in offered), "run_shell_command")
        command = args.get("command", args.get("cmd", ""))
        text = command if isinstance(command, str) else shlex.join(str(c) for c in command or [])
        args = {"command": text, **{k: v for k, v in args.items() if k not in ("command", "cmd")}}
    if not isinstance(args, dict):
        args = {"input": args}
    return {"functionCall": {"name": name, "args": args, "id": "call_probe_" + uuid.uuid4().hex[:16]}}


def usage_json(u: StepUsage) -> dict[str, Any]:
    """``usageMetadata``; ``totalTokenCount`` = prompt + candidates + thoughts (cached inside prompt)."""
    return {"promptTokenCount": u.input_tokens, "candidatesTokenCount": u.output_tokens,
            "cachedContentTokenCount": u.cache_read_input_tokens, "thoughtsTokenCount": u.reasoning_tokens,
            "totalTokenCount": u.input_tokens + u.output_tokens + u.reasoning_tokens}


def step_usage_json(step: Step) -> dict[str, Any] | None:
    """The usage object a step's answer carries: valid, verbatim ``raw_usage``, or None (omitted)."""
    if step.raw_usage is not None:
        return dict(step.raw_usage)
    return None if step.omit_usage else usage_json(step.usage)


def build_parts(step: Step, body: dict[str, Any], cwd: str | None) -> list[dict[str, Any]]:
    """The model content's parts of a text/tool step: the text first, then one
    ``functionCall`` part per tool call."""
    parts: list[dict[str, Any]] = []
    if step.text is not None:
        parts.append({"text": substitute_cwd(step.text, cwd)})
    parts += [_call(c, body, cwd) for c in step.calls]
    return parts


def _response(parts: list[dict[str, Any]], finish: str | None, usage: dict[str, Any] | None,
              model: str, rid: str) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": rid}
    if usage is not None:
        out["usageMetadata"] = usage
    return out


def generate(parts: list[dict[str, Any]], usage: dict[str, Any] | None, model: str) -> dict[str, Any]:
    """A whole (non-streaming) ``GenerateContentResponse``."""
    return _response(parts, "STOP", usage, model, "probe-" + uuid.uuid4().hex[:16])


def _data(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\r\n\r\n"


def stream_events(parts: list[dict[str, Any]], usage: dict[str, Any] | None, model: str) -> list[bytes]:
    """The SSE events of an answer: text in chunks, each function call in its own event,
    the last event carrying ``finishReason: STOP`` and the usage (none when ``usage`` is None)."""
    rid = "probe-" + uuid.uuid4().hex[:16]
    pieces: list[dict[str, Any]] = []
    for part in parts:
        text = part.get("text")
        if isinstance(text, str) and text:
            pieces += [{"text": text[j:j + _TEXT_CHUNK]} for j in range(0, len(text), _TEXT_CHUNK)]
        elif "functionCall" in part:
            pieces.append(part)
    if not pieces:
        pieces = [{"text": ""}]
    out = [_data(_response([p], None, None, model, rid)) for p in pieces[:-1]]
    out.append(_data(_response([pieces[-1]], "STOP", usage, model, rid)))
    return out


def dropped_stream_events(model: str) -> list[bytes]:
    """The head of a stream the server then cuts: half a sentence, no finish, no usage."""
    return [_data(_response([{"text": "The probe cuts this stream here"}], None, None, model, "probe-cut"))]


def error_body(spec: ErrorSpec) -> dict[str, Any]:
    """A Google API error: ``{error: {code, message, status, details}}``. A 429 whose
    message says a quota is exceeded carries a daily ``QuotaFailure`` (as the Gemini API's
    exhausted free tier does; Gemini CLI stops at once on it); another 429 with a
    ``retry_after`` carries ``RetryInfo``."""
    details: list[dict[str, Any]] = []
    if spec.status == 429 and "quota" in spec.message.lower():
        details.append({"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                        "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]})
    if spec.status == 429 and spec.retry_after is not None:
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{spec.retry_after:g}s"})
    return {"error": {"code": spec.status, "message": spec.message,
                      "status": _STATUS_NAMES.get(spec.status, "UNKNOWN"), "details": details}}


def count_tokens_body(body: dict[str, Any]) -> dict[str, Any]:
    """A rough ``countTokens`` answer (4 characters a token), a side request."""
    return {"totalTokens": max(1, len(json.dumps(body)) // 4)}
