"""The judges' response schema and reading a verdict from a final message (pure)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import VerdictError

VERDICTS = ("A", "B", "tie", "unable")

RESPONSE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "PluginBench pairwise verdict",
    "type": "object",
    "additionalProperties": False,
    "required": ["pair", "verdict", "reason"],
    "properties": {
        "pair": {"type": "string", "description": "The pair's folder name, e.g. task-3."},
        "verdict": {"enum": list(VERDICTS),
                    "description": "The better submission: A, B, tie, or unable when it cannot be judged."},
        "reason": {"type": "string", "description": "One paragraph: why, by the criteria."},
    },
}


def _json_objects(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found: list[Any] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        found.append(value)
        i = text.find("{", end)
    return found


def parse_verdict(final_message: str, *, pair: str) -> dict[str, str]:
    """The last JSON object in the final message, checked against the schema and the pair."""
    objects = [o for o in _json_objects(final_message) if isinstance(o, dict)]
    if not objects:
        raise VerdictError("the final message holds no JSON object")
    obj = objects[-1]
    extra = sorted(set(obj) - set(RESPONSE_SCHEMA["properties"]))
    if extra:
        raise VerdictError(f"unexpected fields in the verdict: {', '.join(extra)}")
    for field in RESPONSE_SCHEMA["required"]:
        if not isinstance(obj.get(field), str):
            raise VerdictError(f"the verdict's {field!r} is missing or not a string")
    if obj["verdict"] not in VERDICTS:
        raise VerdictError(f"verdict {obj['verdict']!r} is not one of {', '.join(VERDICTS)}")
    if obj["pair"] != pair:
        raise VerdictError(f"the verdict names pair {obj['pair']!r}, the call judged {pair!r}")
    return {"pair": obj["pair"], "verdict": obj["verdict"], "reason": obj["reason"]}
