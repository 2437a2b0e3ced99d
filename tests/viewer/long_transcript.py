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
