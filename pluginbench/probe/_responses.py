"""OpenAI Responses answers rendered from a scenario step (pure: returns bytes/dicts).

Tool names in a scenario map onto what Codex 0.169.0 offers in the request:

* ``shell`` (portable; input ``{command: str | [argv]}``, ``cmd`` also accepted): the
  offered shell tool — ``exec_command {cmd}`` (unified exec, bundled models such as
  gpt-5.5), else ``shell_command {command: str}``, else ``shell {command: [argv]}``.
* ``apply_patch`` (input: the patch text, or ``{patch|input: text}``): a
  ``custom_tool_call`` when apply_patch is a freeform/custom tool, a ``function_call``
  ``{input}`` when it is a function, else ``apply_patch <<'EOF'`` through the shell tool
  (Codex intercepts that; unknown model slugs get no apply_patch tool).
* any other name: a ``function_call`` with the input as JSON arguments.

Stream: ``response.created``, ``response.in_progress``, per item
``response.output_item.added`` (+ text deltas for messages) ``response.output_item.done``,
then ``response.completed`` whose ``usage`` carries the step's usage exactly (none at all
for ``omit_usage``, ``raw_usage`` verbatim for a malformed one).
"""

from __future__ import annotations

import json
import shlex
import uuid
from typing import Any

from ._match import offered_tools, substitute_cwd, tool_kind
from ._scenario import ErrorSpec, Step, StepUsage, ToolCall

_ERRORS = {
    400: ("invalid_request_error", "invalid_request"), 401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "not_found"), 429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", "server_error"), 502: ("server_error", "server_error"),
    503: ("server_error", "server_error"), 529: ("server_error", "server_error"),
}
_TEXT_CHUNK = 24


def _hex() -> str:
    return uuid.uuid4().hex[:20]


def _shell_item(body: dict[str, Any], command: str | list[str], extra: dict[str, Any]) -> dict[str, Any]:
    offered = offered_tools(body)
    text = command if isinstance(command, str) else shlex.join(command)
    if "exec_command" in offered:
        name, args = "exec_command", {"cmd": text, **extra}
    elif "shell_command" in offered:
        name, args = "shell_command", {"command": text, **extra}
    else:
        argv = command if isinstance(command, list) else ["bash", "-lc", command]
        name, args = "shell", {"command": argv, **extra}
    return {"type": "function_call", "id": "fc_probe_" + _hex(), "call_id": "call_probe_" + _hex(),
            "name": name, "arguments": json.dumps(args), "status": "completed"}


def _call_item(call: ToolCall, body: dict[str, Any], cwd: str | None) -> dict[str, Any]:
    args = substitute_cwd(call.input, cwd)
    if call.name == "shell":
        extra = {k: v for k, v in args.items() if k not in ("command", "cmd", "description")}
        return _shell_item(body, args.get("command", args.get("cmd", "")), extra)
    if call.name == "apply_patch":
        patch = args if isinstance(args, str) else str(args.get("patch", args.get("input", "")))
        kind = tool_kind(body, "apply_patch")
        if kind == "custom":
            return {"type": "custom_tool_call", "id": "ctc_probe_" + _hex(),
                    "call_id": "call_probe_" + _hex(), "name": "apply_patch", "input": patch,
                    "status": "completed"}
        if kind == "function":
            return {"type": "function_call", "id": "fc_probe_" + _hex(),
                    "call_id": "call_probe_" + _hex(), "name": "apply_patch",
                    "arguments": json.dumps({"input": patch}), "status": "completed"}
        return _shell_item(body, f"apply_patch <<'EOF'\n{patch}\nEOF", {})
    return {"type": "function_call", "id": "fc_probe_" + _hex(), "call_id": "call_probe_" + _hex(),
            "name": call.name, "arguments": json.dumps(args), "status": "completed"}


def _message_item(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_probe_" + _hex(), "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def build_items(step: Step, body: dict[str, Any], cwd: str | None) -> list[dict[str, Any]]:
    """The output items of a text/tool step."""
    items = []
    if step.text is not None:
        items.append(_message_item(substitute_cwd(step.text, cwd)))
    items.extend(_call_item(c, body, cwd) for c in step.calls)
    return items


def usage_json(u: StepUsage) -> dict[str, Any]:
    """Responses usage; ``total_tokens`` = input + output (cached counts inside input)."""
    return {"input_tokens": u.input_tokens,
            "input_tokens_details": {"cached_tokens": u.cache_read_input_tokens,
                                     "cache_write_tokens": u.cache_creation_input_tokens},
            "output_tokens": u.output_tokens,
            "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
            "total_tokens": u.input_tokens + u.output_tokens}


def sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _item_events(index: int, item: dict[str, Any], seq: list[int]) -> list[bytes]:
    def ev(data: dict[str, Any]) -> bytes:
        seq[0] += 1
        return sse({**data, "sequence_number": seq[0]})

    if item["type"] != "message":
        return [ev({"type": "response.output_item.added", "output_index": index, "item": item}),
                ev({"type": "response.output_item.done", "output_index": index, "item": item})]
    text = item["content"][0]["text"]
    ref = {"item_id": item["id"], "output_index": index, "content_index": 0}
    out = [ev({"type": "response.output_item.added", "output_index": index,
               "item": dict(item, status="in_progress", content=[])}),
           ev({"type": "response.content_part.added", **ref,
               "part": {"type": "output_text", "text": "", "annotations": []}})]
    for j in range(0, len(text), _TEXT_CHUNK):
        out.append(ev({"type": "response.output_text.delta", **ref, "delta": text[j:j + _TEXT_CHUNK]}))
    out += [ev({"type": "response.output_text.done", **ref, "text": text}),
            ev({"type": "response.content_part.done", **ref, "part": item["content"][0]}),
            ev({"type": "response.output_item.done", "output_index": index, "item": item})]
    return out


def step_usage_json(step: Step) -> dict[str, Any] | None:
    """The usage object a step's answer carries: valid, verbatim ``raw_usage``, or None (omitted)."""
    if step.raw_usage is not None:
        return dict(step.raw_usage)
    return None if step.omit_usage else usage_json(step.usage)


def stream_events(items: list[dict[str, Any]], usage: StepUsage | dict[str, Any] | None,
                  model: str) -> list[bytes]:
    """The full SSE answer for ``items``; ``usage`` None sends ``response.completed`` without one."""
    seq = [-1]
    resp = {"id": "resp_probe_" + _hex(), "object": "response", "created_at": 0,
            "status": "in_progress", "model": model, "output": []}
    out = [sse({"type": "response.created", "sequence_number": 0, "response": resp}),
           sse({"type": "response.in_progress", "sequence_number": 1, "response": resp})]
    seq[0] = 1
    for i, item in enumerate(items):
        out.extend(_item_events(i, item, seq))
    done = dict(resp, status="completed", output=items)
    if usage is not None:
        done["usage"] = usage_json(usage) if isinstance(usage, StepUsage) else usage
    out.append(sse({"type": "response.completed", "sequence_number": seq[0] + 1, "response": done}))
    return out


def dropped_stream_events(model: str) -> list[bytes]:
    """The head of a stream the server then cuts: created, and half a message."""
    events = stream_events([_message_item("The probe cuts this stream here")],
                           StepUsage(input_tokens=0, output_tokens=0), model)
    return events[:5]  # created, in_progress, item added, part added, first delta


def error_body(spec: ErrorSpec) -> dict[str, Any]:
    kind, code = _ERRORS.get(spec.status, ("server_error", "server_error"))
    return {"error": {"message": spec.message, "type": kind, "code": code, "param": None}}


def models_body(models: list[str]) -> dict[str, Any]:
    """A minimal ``GET /v1/models`` list."""
    return {"object": "list",
            "data": [{"id": m, "object": "model", "created": 0, "owned_by": "pluginbench-probe"}
                     for m in models]}
