"""Harnesses: coding agents behind one port, and the controls that need no model.

:func:`make_harness` builds one by name from the harness registry
(:mod:`pluginbench.harness_registry`): the controls ``nop``, ``oracle`` and ``simulated``
and the real CLIs ``claude`` and ``codex`` are registered there by module path and
imported only when asked for, so the controls work without the real CLIs' dependencies.
A new harness subclasses :class:`HarnessBase` and is registered once
(:func:`register_harness`); see docs/architecture.md ("Writing a harness adapter").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import lazy
from ..harness_registry import (
    CliPin,
    harness_class,
    harness_names,
    register_harness,
    unregister_harness,
)
from ._claude_launch import TOKEN_VARIABLE, check_model, check_operator_env
from ._controls import NopHarness, OracleHarness
from ._idle import offer_while_starting, start_offered, withdraw_offer
from ._launch_identity import delivery_policy, launch_identity, uncacheable_cli
from ._port import (
    NO_MODEL_USAGE,
    AgentRun,
    AttemptContext,
    FrozenTreatment,
    Harness,
    HarnessBase,
    tool_roots,
)
from ._receipt import DiscoveryIdentity, discovery_identity
from ._revalidate import revalidate_usage
from ._secrets import (
    REDACTED,
    redact_secrets,
    redact_text,
    scan_for_secret,
    scan_for_secrets,
    secret_forms,
)

# the simulated agent's names, imported on first use (a run of a real CLI never needs them)
if TYPE_CHECKING:
    from ._simulated import (
        SimPlan,
        SimulatedHarness,
        deliver_claude_layout,
        load_plan,
        usage_from_stream,
    )


def make_harness(name: str, **options: Any) -> Harness:
    """The harness registered as ``name`` (:mod:`pluginbench.harness_registry`), built
    with ``options``.

    Raises :class:`ConfigError` for an unknown name and :class:`PluginBenchError` when
    a harness's adapter cannot be imported.
    """
    harness: Harness = harness_class(name)(**options)
    return harness


__all__ = [
    "NO_MODEL_USAGE",
    "TOKEN_VARIABLE",
    "AgentRun",
    "AttemptContext",
    "CliPin",
    "DiscoveryIdentity",
    "FrozenTreatment",
    "Harness",
    "HarnessBase",
    "NopHarness",
    "OracleHarness",
    "SimPlan",
    "SimulatedHarness",
    "check_model",
    "check_operator_env",
    "deliver_claude_layout",
    "delivery_policy",
    "discovery_identity",
    "harness_class",
    "harness_names",
    "launch_identity",
    "load_plan",
    "make_harness",
    "offer_while_starting",
    "register_harness",
    "revalidate_usage",
    "scan_for_secret",
    "scan_for_secrets",
    "secret_forms",
    "start_offered",
    "redact_secrets",
    "redact_text",
    "REDACTED",
    "tool_roots",
    "uncacheable_cli",
    "unregister_harness",
    "usage_from_stream",
    "withdraw_offer",
]

__getattr__ = lazy(__name__, __file__)
