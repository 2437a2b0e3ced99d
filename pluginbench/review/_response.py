"""The reviewer's response schema and the pure parser of its final message.

The reviewer must end with one JSON object ``{"findings": [...]}``; each finding has a
severity, a category, a title and optionally a file, a line and a detail. Anything else
(no JSON, extra fields, an unknown severity) is a malformed response: the review fails
with the reason, and is never read as "no findings".
"""

import json
import re
from typing import Literal

import msgspec

from ..errors import MalformedResponse
from ..events import Finding
from ..harness_registry import harness_class

SEVERITIES = ("high", "medium", "low")
CATEGORIES = ("correctness", "tests", "design", "readability", "security", "performance")

Severity = Literal["high", "medium", "low"]
Category = Literal["correctness", "tests", "design", "readability", "security", "performance"]


class _Finding(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    severity: Severity
    category: Category
    title: str
    file: str | None = None
    line: int | None = None
    detail: str = ""


class _Response(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    findings: list[_Finding]


#: The JSON Schema the reviewer is given (saved in every packet, bound by SHA-256).
RESPONSE_SCHEMA: dict[str, object] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "PluginBench review response",
    "type": "object",
    "additionalProperties": False,
    "required": ["findings"],
    "properties": {
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["severity", "category", "title"],
                "properties": {
                    "severity": {"enum": list(SEVERITIES)},
                    "category": {"enum": list(CATEGORIES)},
                    "title": {"type": "string"},
                    "file": {"type": ["string", "null"]},
                    "line": {"type": ["integer", "null"]},
                    "detail": {"type": "string"},
                },
            },
        }
    },
}


def schema_bytes() -> bytes:
    return (json.dumps(RESPONSE_SCHEMA, indent=2, sort_keys=True) + "\n").encode()


_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def parse_response(text: str | None) -> list[Finding]:
    """The findings in a reviewer's final message (a bare JSON object or one fenced block)."""
    if text is None or not text.strip():
        raise MalformedResponse("the reviewer gave no final message")
    fenced = _FENCE.findall(text)
    body = fenced[-1] if fenced else text.strip()
    if not fenced and not body.startswith("{"):
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            raise MalformedResponse(f"the final message holds no JSON object: {text.strip()[:120]!r}")
        body = body[start : end + 1]
    try:
        parsed = msgspec.json.decode(body.encode(), type=_Response)
    except msgspec.DecodeError as exc:
        raise MalformedResponse(f"the final message is not valid review JSON: {exc}") from None
    return [Finding(severity=f.severity, category=f.category, title=f.title, file=f.file, line=f.line,
                    detail=f.detail) for f in parsed.findings]


def final_message(harness: str, stdout_text: str) -> str | None:
    """The reviewer CLI's last assistant message from its saved stdout, as the harness
    reads its own trace (:meth:`~pluginbench.harnesses.HarnessBase.read_final`)."""
    final: str | None = harness_class(harness).read_final(stdout_text)[0]
    return final
