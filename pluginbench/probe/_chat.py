"""OpenAI Chat Completions answers rendered from a scenario step (pure: returns bytes/dicts).

The API Qwen Code (``--auth-type openai``) and other OpenAI-compatible clients speak:
``POST {base}/v1/chat/completions``. Tool names in a scenario map onto what the request
offers:

* ``shell`` (portable; input ``{command: str | [argv]}``): the offered shell function —
  ``run_shell_command`` (Qwen Code, Gemini CLI), ``bash`` or ``shell`` — with
  ``{command: str}``.
* ``write_file`` / any other name: a function call with the input as JSON arguments.

A step's usage goes into ``usage`` exactly: ``prompt_tokens`` is ``input_tokens`` (OpenAI
counts cached tokens inside the prompt), ``prompt_tokens_details.cached_tokens`` is
``cache_read_input_tokens``, ``completion_tokens`` is ``output_tokens`` and
``completion_tokens_details.reasoning_tokens`` is ``reasoning_tokens``. A stream carries it
in one last chunk with no choices (as OpenAI does with ``stream_options.include_usage``),
then ``data: [DONE]``. ``omit_usage`` sends no usage object; ``raw_usage`` sends it verbatim.
"""

from __future__ import annotations

import json
import shlex
import uuid
from typing import Any

from ._match import offered_tools, substitute_cwd
from ._scenario import Step, StepUsage, ToolCall

_TEXT_CHUNK = 24
#: The shell functions an OpenAI-compatible agent may offer, in preference order.
SHELL_TOOLS = ("run_shell_command", "bash", "shell", "execute_command")


def _hex() -> str:
    return uuid.uuid4().hex[:20]


def _call(call: ToolCall, body: dict[str, Any], cwd: str | None, index: int) -> dict[str, Any]:
    args = substitute_cwd(call.input, cwd)
    name = call.name
    if name == "shell" and isinstance(args, dict):
        offered = offered_tools(body)
        name = next((t for t in SHELL_TOOLS if t in offered), "run_shell_command")
        command = args.get("command", args.get("cmd", ""))
        text = command if isinstance(command, str) else shlex.join(str(c) for c in command or [])
        args = {"command": text, **{k: v for k, v in args.items() if k not in ("command", "cmd")}}
    arguments = args if isinstance(args, str) else json.dumps(args)
    return {"index": index, "id": "call_probe_" + _hex(), "type": "function",
            "function": {"name": name, "arguments": arguments}}


def usage_json(u: StepUsage) -> dict[str, Any]:
    """Chat Completions usage; ``total_tokens`` = prompt + completion (cached inside prompt)."""
    return {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cache_read_input_tokens},
            "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens}}


def step_usage_json(step: Step) -> dict[str, Any] | None:
    """The usage object a step's answer carries: valid, verbatim ``raw_usage``, or None (omitted)."""
    if step.raw_usage is not None:
        return dict(step.raw_usage)
    return None if step.omit_usage else usage_json(step.usage)


def build_message(step: Step, body: dict[str, Any], cwd: str | None) -> dict[str, Any]:
    """The assistant message of a text/tool step (``tool_calls`` only when it calls tools)."""
    message: dict[str, Any] = {"role": "assistant",
                               "content": substitute_cwd(step.text, cwd) if step.text is not None else None}
    if step.calls:
        message["tool_calls"] = [_call(c, body, cwd, i) for i, c in enumerate(step.calls)]
    return message


def completion(message: dict[str, Any], usage: dict[str, Any] | None, model: str) -> dict[str, Any]:
    """A whole (non-streaming) ``chat.completion``."""
    out: dict[str, Any] = {
        "id": "chatcmpl-probe-" + _hex(), "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
    }
    if usage is not None:
        out["usage"] = usage
    return out


def _data(obj: dict[str, Any] | str) -> bytes:
    text = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
    return f"data: {text}\n\n".encode()


def stream_events(message: dict[str, Any], usage: dict[str, Any] | None, model: str) -> list[bytes]:
    """The SSE chunks of ``message``: role, text deltas, one chunk per tool call, the finish
    chunk, the usage chunk (none when ``usage`` is None), ``[DONE]``."""
    cid = "chatcmpl-probe-" + _hex()

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _data({"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model,
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out = [chunk({"role": "assistant", "content": ""})]
    text = message.get("content") or ""
    for j in range(0, len(text), _TEXT_CHUNK):
        out.append(chunk({"content": text[j:j + _TEXT_CHUNK]}))
    for call in message.get("tool_calls") or []:
        out.append(chunk({"tool_calls": [call]}))
    out.append(chunk({}, "tool_calls" if message.get("tool_calls") else "stop"))
    if usage is not None:
        out.append(_data({"id": cid, "object": "chat.completion.chunk", "created": 0, "model": model,
                          "choices": [], "usage": usage}))
    out.append(_data("[DONE]"))
    return out


def dropped_stream_events(model: str) -> list[bytes]:
    """The head of a stream the server then cuts: the role chunk and half a sentence."""
    events = stream_events({"role": "assistant", "content": "The probe cuts this stream here"}, None, model)
    return events[:2]
