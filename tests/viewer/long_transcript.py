"""A synthetic Claude Code stream of many turns (one Bash call each) for paging tests and the bench."""

from __future__ import annotations

import json
import random

_WORDS = ("test", "ok", "FAILED", "assert", "def", "return", "line", "error", "passed", "import", "module", "value")


def long_stream(turns: int, output_chars: int = 400, *, seed: int | None = None) -> str:
    """``turns`` model turns, each one Bash call and its output (``output_chars`` of x, or of
    seeded random words when ``seed`` is given, which compresses like real output)."""
    rng = random.Random(seed)
    lines = []
    for i in range(turns):
        out = "x" * output_chars if seed is None else " ".join(
            rng.choice(_WORDS) + str(rng.randrange(1000)) for _ in range(output_chars // 8))
        lines.append(json.dumps({"type": "assistant", "message": {
            "id": f"m{i}", "usage": {"input_tokens": 1000 + i, "output_tokens": 20},
            "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"echo step {i}"}}]}}))
        lines.append(json.dumps({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"step {i} " + out}]}}))
    return "\n".join(lines) + "\n"


def subagent_stream(before: int, child_steps: int) -> str:
    """``before`` Bash turns, then a ``Task`` call whose stream subagent makes ``child_steps``
    Bash calls (``child step i``), then the Task's result."""
    lines = long_stream(before, 40).splitlines()
    lines.append(json.dumps({"type": "assistant", "message": {"id": "mt", "content": [
        {"type": "tool_use", "id": "task", "name": "Task", "input": {"prompt": "dig"}}]}}))
    for i in range(child_steps):
        lines.append(json.dumps({"type": "assistant", "parent_tool_use_id": "task", "message": {
            "id": f"c{i}", "content": [{"type": "tool_use", "id": f"ct{i}", "name": "Bash",
                                        "input": {"command": f"child step {i}"}}]}}))
    lines.append(json.dumps({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "task", "content": "dug"}]}}))
    return "\n".join(lines) + "\n"
