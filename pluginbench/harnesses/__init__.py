"""Harnesses: coding agents behind one port, and the controls that need no model.

:func:`make_harness` builds one by name: the controls ``nop``, ``oracle`` and
``simulated`` live here; the real CLIs ``claude`` and ``codex`` are imported only when
asked for, so the controls work without their dependencies.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import ConfigError, PluginBenchError
from ._claude_launch import TOKEN_VARIABLE, check_model, check_operator_env
from ._controls import NopHarness, OracleHarness
from ._launch_identity import delivery_policy, launch_identity, uncacheable_cli
from ._port import NO_MODEL_USAGE, AgentRun, AttemptContext, FrozenTreatment, Harness, tool_roots
from ._receipt import DiscoveryIdentity, discovery_identity
from ._revalidate import revalidate_usage
from ._secrets import scan_for_secret
from ._simulated import (
    SimPlan,
    SimulatedHarness,
    deliver_claude_layout,
    load_plan,
    usage_from_stream,
)

CONTROLS: dict[str, type[Any]] = {
    "nop": NopHarness,
    "oracle": OracleHarness,
    "simulated": SimulatedHarness,
}
#: name -> (module, class) of the real agent CLIs, imported lazily.
REAL: dict[str, tuple[str, str]] = {
    "claude": ("._claude", "ClaudeHarness"),
    "codex": ("._codex", "CodexHarness"),
}


def make_harness(name: str, **options: Any) -> Harness:
    """The harness called ``name``, built with ``options``.

    Raises :class:`ConfigError` for an unknown name and :class:`PluginBenchError` when
    a real harness's adapter cannot be imported.
    """
    if name in CONTROLS:
        return CONTROLS[name](**options)
    if name in REAL:
        module_name, class_name = REAL[name]
        try:
            module = importlib.import_module(module_name, __package__)
            cls = getattr(module, class_name)
        except (ImportError, AttributeError) as exc:
            raise PluginBenchError(
                f"the {name} harness is not available in this build: cannot load "
                f"{__package__}{module_name}.{class_name} ({exc})"
            ) from exc
        return cls(**options)
    raise ConfigError(
        f"unknown harness '{name}'",
        field="runner.harness",
        fix="use one of: " + ", ".join([*REAL, *CONTROLS]),
    )


__all__ = [
    "NO_MODEL_USAGE",
    "TOKEN_VARIABLE",
    "AgentRun",
    "AttemptContext",
    "DiscoveryIdentity",
    "FrozenTreatment",
    "Harness",
    "NopHarness",
    "OracleHarness",
    "SimPlan",
    "SimulatedHarness",
    "check_model",
    "check_operator_env",
    "deliver_claude_layout",
    "delivery_policy",
    "discovery_identity",
    "launch_identity",
    "load_plan",
    "make_harness",
    "revalidate_usage",
    "scan_for_secret",
    "tool_roots",
    "uncacheable_cli",
    "usage_from_stream",
]
