"""Synthetic ``report/results.json`` files in the report's own row shape, for compare tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def identity(**override: Any) -> dict[str, Any]:
    """A comparison identity like the report writes, with dotted-path overrides."""
    ident: dict[str, Any] = {
        "runner": {"harness": "simulated", "model": "simulated-1", "reasoning": "medium"},
        "harness_version": None,
        "capabilities": {"subagents": True},
        "tasks": {},
        "task_limits": {},
        "measurement_settings": {"measurements": ["tokens", "time", "lines"]},
    }
    for dotted, value in override.items():
        node = ident
        *parents, leaf = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return ident


def row(task: str, arm: str, repeat: int, outcome: str | None, tokens: tuple[int, int] | None = (1000, 100)) -> dict[str, Any]:
    complete = outcome is not None
    t = (
        {"input": tokens[0], "output": tokens[1], "cached_input": 0, "uncached_input": tokens[0],
         "reasoning_output": 0, "total": sum(tokens), "status": "exact", "reason": None}
        if tokens else
        {k: None for k in ("input", "output", "cached_input", "uncached_input", "reasoning_output", "total")}
        | {"status": "unknown", "reason": "no usage was recorded"}
    )
    return {
        "attempt_id": f"{task}__{arm}__r{repeat}", "slot": 0, "task": task, "arm": arm, "repeat": repeat,
        "state": "complete" if complete else "pending", "outcome": outcome, "outcome_reason": None,
        "reward": 1.0 if outcome == "pass" else 0.0, "tokens": t, "coding_seconds": 1.0,
        "measures": {"source_lines_added": {"value": 4, "unit": "lines", "status": "measured", "reason": None}},
        "evidence": f"evidence/attempts/{task}__{arm}__r{repeat}",
    }


def write_run(
    root: Path, arms: list[str], tasks: list[str], outcome: Callable[[str, str, int], str | None],
    *, repeats: int = 3, ident: dict[str, Any] | None | bool = True,
    tokens: Callable[[str, str, int], tuple[int, int] | None] = lambda t, a, r: (1000, 100),
) -> Path:
    """A run folder holding only report/results.json (all compare reads)."""
    rows = [row(t, a, r, outcome(t, a, r), tokens(t, a, r)) for t in tasks for a in arms for r in range(1, repeats + 1)]
    doc: dict[str, Any] = {"schema_version": 2, "run": {"name": root.name}, "arms": arms, "tasks": tasks, "attempts": rows}
    if ident is True:
        doc["comparison_identity"] = identity(
            tasks={t: f"sha256:{t}" for t in tasks},
            task_limits={t: {"effective": {"agent_timeout_seconds": 120}} for t in tasks},
        )
    elif isinstance(ident, dict):
        doc["comparison_identity"] = ident
    (root / "report").mkdir(parents=True, exist_ok=True)
    (root / "report" / "results.json").write_text(json.dumps(doc))
    return root
