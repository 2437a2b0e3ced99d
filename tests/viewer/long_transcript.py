"""A synthetic Claude Code stream of many turns (one Bash call each) for paging tests and the bench."""

from __future__ import annotations

import json


def long_stream(turns: int, output_chars: int = 400) -> str:
    lines = []
    for i in range(turns):
        lines.append(json.dumps({"type": "assistant", "message": {
            "id": f"m{i}", "usage": {"input_tokens": 1000 + i, "output_tokens": 20},
            "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"echo step {i}"}}]}}))
        lines.append(json.dumps({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"step {i} " + "x" * output_chars}]}}))
    return "\n".join(lines) + "\n"
