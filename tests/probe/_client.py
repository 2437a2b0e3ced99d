"""A tiny stdlib HTTP client for the probe tests: JSON posts and SSE parsing."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from pluginbench.probe import PROBE_ANTHROPIC_KEY


class Reply:
    def __init__(self, status: int, headers: dict[str, str], raw: bytes, error: str | None):
        self.status, self.headers, self.raw, self.error = status, headers, raw, error

    def json(self) -> Any:
        return json.loads(self.raw)

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        """SSE events as (event name, parsed data), in order."""
        out = []
        for block in self.raw.decode().split("\n\n"):
            name, data = None, []
            for line in block.splitlines():
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
            if data:
                out.append((name or "", json.loads("\n".join(data))))
        return out


def request(base_url: str, method: str, path: str, body: Any = None,
            headers: dict[str, str] | None = None) -> Reply:
    """One request on a fresh connection; a cut stream yields what arrived plus ``error``."""
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)  # generous: CI shares 2 cores
    hdrs = {"x-api-key": PROBE_ANTHROPIC_KEY, "content-type": "application/json"}
    hdrs.update(headers or {})
    data = json.dumps(body).encode() if body is not None else None
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        raw, error = b"", None
        try:
            raw = resp.read()
        except http.client.IncompleteRead as exc:
            raw, error = exc.partial, "incomplete"
        except OSError as exc:
            error = type(exc).__name__
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, raw, error)
    finally:
        conn.close()


def anthropic_body(messages: list[dict[str, Any]], *, tools: bool = True, stream: bool = True,
                   model: str = "claude-sonnet-4-5", system: str = "You are a probe test.") -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "max_tokens": 1000, "stream": stream,
                            "system": [{"type": "text", "text": system}], "messages": messages}
    if tools:
        body["tools"] = [{"name": n, "input_schema": {"type": "object"}} for n in ("Bash", "Write")]
    return body


def responses_body(inp: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                   model: str = "gpt-5.5") -> dict[str, Any]:
    if tools is None:
        tools = [{"type": "function", "name": "exec_command", "parameters": {}},
                 {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}}]
    return {"model": model, "stream": True, "input": inp, "tools": tools}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def rinput(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}
