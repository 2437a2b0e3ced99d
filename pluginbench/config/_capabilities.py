"""The capability policy as each harness applies it: effective values and enforcement.

One policy holds for vanilla and every treatment. What a harness can enforce differs:

* Codex writes it into the private ``config.toml``: ``subagents: false`` turns both native
  agent runtimes off (``features.multi_agent``, ``features.multi_agent_v2``);
  ``agents.max_threads`` caps concurrently running children (default and ceiling 4);
  ``agents.max_depth`` (default 1) is a preference of the V1 runtime only, and the model
  may select the V2 runtime, which has no depth limit, so it is ``not_enforced``;
  ``child_model`` (children inherit the runner's model and effort): on V2 the spawn tool's
  model/effort fields are hidden, which is not a lock, so it is ``not_enforced`` and an
  attempt with a child on another model or effort is ineligible (``_codex_children``).
* Claude Code disables its ``Agent`` tool for ``subagents: false``; it has no concurrency
  or depth limit, so ``max_threads``/``max_depth`` are refused when set (see
  :mod:`._load`) and recorded as ``not_enforced``.
* Controls and the simulated agent start no native agent: ``not_applicable``.

The record is pure data built from the harness name and the three settings, so the plan,
the report and cache keys compute the same value from a saved config.
"""

from __future__ import annotations

from typing import Any

from ._schema import Capabilities

#: The most concurrently running Codex children, and the default.
CODEX_MAX_THREADS = 4
#: Codex's depth preference when none is set.
CODEX_DEFAULT_MAX_DEPTH = 1

ENFORCED = "enforced"
NOT_ENFORCED = "not_enforced"
NOT_APPLICABLE = "not_applicable"


def codex_settings(caps: Capabilities) -> tuple[bool, int, int]:
    """(subagents, max_threads, max_depth) as the private Codex config carries them."""
    threads = CODEX_MAX_THREADS if caps.max_threads is None else min(caps.max_threads, CODEX_MAX_THREADS)
    depth = CODEX_DEFAULT_MAX_DEPTH if caps.max_depth is None else caps.max_depth
    return caps.subagents, threads, depth


def _entry(value: Any, enforcement: str, how: str) -> dict[str, Any]:
    return {"value": value, "enforcement": enforcement, "how": how}


def capability_record(harness: str, caps: Capabilities) -> dict[str, Any]:
    """What ``harness`` does with each setting: ``{key: {value, enforcement, how}}``
    plus ``not_enforced`` (the keys it cannot enforce, sorted)."""
    record: dict[str, Any]
    if harness == "codex":
        subagents, threads, depth = codex_settings(caps)
        record = {
            "subagents": _entry(subagents, ENFORCED, "features.multi_agent and features.multi_agent_v2 = false"
                                if not subagents else "native agents on (both runtimes allowed)"),
            "max_threads": _entry(threads, ENFORCED, f"agents.max_threads = {threads} (at most {CODEX_MAX_THREADS})"),
            "max_depth": _entry(depth, NOT_ENFORCED, f"agents.max_depth = {depth} is a V1-runtime preference; "
                                "the V2 runtime a model may select has no depth limit"),
            "child_model": _entry(
                "inherit", NOT_ENFORCED if subagents else NOT_APPLICABLE,
                "V2 only: features.multi_agent_v2.expose_spawn_agent_model_overrides = false hides the spawn "
                "tool's model and effort fields; this is not a lock (V1's spawn tool keeps them), so an attempt "
                "with any child on another model or effort records no model and is ineligible"
                if subagents else "native agents are off"),
        }
    elif harness == "claude":
        record = {
            "subagents": _entry(caps.subagents, ENFORCED, "the Agent tool is disallowed"
                                if not caps.subagents else "the Agent tool is allowed"),
            "max_threads": _entry(caps.max_threads, NOT_ENFORCED, "Claude Code has no concurrency limit"),
            "max_depth": _entry(caps.max_depth, NOT_ENFORCED, "Claude Code has no depth limit"),
        }
    else:
        how = "the harness starts no native agent"
        record = {
            "subagents": _entry(caps.subagents, NOT_APPLICABLE, how),
            "max_threads": _entry(caps.max_threads, NOT_APPLICABLE, how),
            "max_depth": _entry(caps.max_depth, NOT_APPLICABLE, how),
        }
    record["not_enforced"] = sorted(k for k, v in record.items() if v["enforcement"] == NOT_ENFORCED)
    return record


def capability_record_of(config: dict[str, Any]) -> dict[str, Any]:
    """:func:`capability_record` from a saved config mapping (``evaluation.json``)."""
    runner = config.get("runner") or {}
    raw = config.get("capabilities") or {}
    caps = Capabilities(
        subagents=bool(raw.get("subagents", True)),
        max_threads=raw.get("max_threads"),
        max_depth=raw.get("max_depth"),
    )
    return capability_record(str(runner.get("harness") or ""), caps)
