"""The pinned launch of a vanilla attempt, as data for the vanilla cache key. Pure.

Each harness declares its own (:meth:`~pluginbench.harnesses.HarnessBase.launch_identity`,
:attr:`~pluginbench.harnesses.HarnessBase.delivery_policy`,
:meth:`~pluginbench.harnesses.HarnessBase.uncacheable_cli`), derived from the same builders
that make its real launch, with placeholders (``<cli>``, ``<prompt>``...) for per-attempt
values plus the pinned constants a session depends on. When a harness changes its launch,
the key changes with it; admission later checks each saved invocation against the ``argv``
here. A name no harness is registered under (an old cache entry's) gets the neutral defaults.
"""

from __future__ import annotations

from typing import Any

from ..harness_registry import harness_class, is_registered


def delivery_policy(harness: str) -> str:
    """The harness's treatment-delivery policy, ``<name>-v1`` when it declares none."""
    declared = harness_class(harness).delivery_policy if is_registered(harness) else None
    return str(declared or f"{harness}-v1")


def launch_identity(harness: str, model: str | None, reasoning: str | None, *, subagents: bool = True) -> dict[str, Any]:
    """The pinned launch of ``harness`` for this model and effort, placeholders for the rest."""
    if not is_registered(harness):
        return {"argv": []}
    identity: dict[str, Any] = harness_class(harness).launch_identity(model, reasoning, subagents=subagents)
    return identity


def uncacheable_cli(harness: str, cli_version: str | None) -> str | None:
    """Why vanilla attempts of this CLI version are neither reused nor published, or ``None``."""
    if not is_registered(harness):
        return None
    reason: str | None = harness_class(harness).uncacheable_cli(cli_version)
    return reason
