"""The capability policy as each harness applies it: effective values and enforcement.

One policy holds for vanilla and every treatment. What a harness can enforce differs, and
each harness declares it (:meth:`pluginbench.harnesses.HarnessBase.capability_policy`,
read through the harness registry):

* Codex writes it into the private ``config.toml``: ``subagents: false`` turns both native
  agent runtimes off; ``agents.max_threads`` caps concurrently running children;
  ``agents.max_depth`` is a V1-runtime preference only (``not_enforced``); ``child_model``
  is ``not_enforced`` (see ``harnesses/_codex.py``).
* Claude Code disables its ``Agent`` tool for ``subagents: false``; it has no concurrency
  or depth limit, so ``max_threads``/``max_depth`` are refused when set and recorded as
  ``not_enforced``.
* Controls, the simulated agent and any harness that declares nothing start no native
  agent: ``not_applicable`` (:func:`not_applicable_policy`).

The record is pure data built from the harness name and the three settings, so the plan,
the report and cache keys compute the same value from a saved config.
"""

from __future__ import annotations

from typing import Any

from ..harness_registry import harness_class, is_registered
from ._schema import Capabilities

ENFORCED = "enforced"
NOT_ENFORCED = "not_enforced"
NOT_APPLICABLE = "not_applicable"


def capability_entry(value: Any, enforcement: str, how: str) -> dict[str, Any]:
    """One setting of a capability record."""
    return {"value": value, "enforcement": enforcement, "how": how}


def not_applicable_policy(caps: Capabilities) -> dict[str, dict[str, Any]]:
    """The policy of a harness that starts no native agent: every setting ``not_applicable``."""
    how = "the harness starts no native agent"
    return {
        "subagents": capability_entry(caps.subagents, NOT_APPLICABLE, how),
        "max_threads": capability_entry(caps.max_threads, NOT_APPLICABLE, how),
        "max_depth": capability_entry(caps.max_depth, NOT_APPLICABLE, how),
    }


def capability_record(harness: str, caps: Capabilities) -> dict[str, Any]:
    """What ``harness`` does with each setting: ``{key: {value, enforcement, how}}``
    plus ``not_enforced`` (the keys it cannot enforce, sorted). A name no harness is
    registered under (an old run's) starts no native agent."""
    policy = harness_class(harness).capability_policy(caps) if is_registered(harness) else not_applicable_policy(caps)
    record: dict[str, Any] = dict(policy)
    record["not_enforced"] = sorted(k for k, v in policy.items() if v["enforcement"] == NOT_ENFORCED)
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
