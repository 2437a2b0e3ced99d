"""Whether two runs may be compared: their saved ``comparison_identity`` must agree.

Checked fields (product description, "Compare runs"): ``runner.harness``,
``runner.model``, ``runner.reasoning``, ``harness_version`` and ``capabilities``; for each
task compared, ``tasks.<task>``, ``task_limits.<task>.effective.agent_timeout_seconds`` and
``network.<task>`` (the sandboxes' network policy), ``verifier_env.<task>`` (what
``tests/test.sh`` got from ``[verifier.env]``: names, literal values, host names) and
``environment_env.<task>`` (what the sandboxes' commands got from ``[environment.env]``);
the measurement scope ``measurement_settings`` (its ``source_scope``, ``test_scope``,
``coverage``, each ``coverage_profiles`` entry both saved, ``fallow_config_sha256`` and
``measurements``); ``effective_observer_scripts.<task>`` and each measure's
``measurement_capabilities.<task>.<measure>.tool_version``; and the reviewer
(``reviewer.harness``, ``reviewer.model``, ``reviewer.reasoning``,
``review_criteria_sha256``). A field only one run saved is not compared, only named.
Guidance packages, jobs, seed, container limits and the Docker runtime may differ.
"""

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

_MISSING = object()
GLOBAL_FIELDS = (
    "runner.harness",
    "runner.model",
    "runner.reasoning",
    "harness_version",
    "capabilities",
    "measurement_settings.source_scope",
    "measurement_settings.test_scope",
    "measurement_settings.coverage",
    "measurement_settings.fallow_config_sha256",
    "measurement_settings.measurements",
    "reviewer.harness",
    "reviewer.model",
    "reviewer.reasoning",
    "review_criteria_sha256",
)
TASK_FIELDS = (
    "tasks.{task}",
    "task_limits.{task}.effective.agent_timeout_seconds",
    "effective_observer_scripts.{task}",
    "network.{task}",
    "verifier_env.{task}",
    "environment_env.{task}",
)
#: Longer values are shown as ``sha256:<12 hex>`` in the refusal.
SHORT = 40


class Difference(NamedTuple):
    """One identity field the two runs saved with different values."""

    field: str
    left: Any
    right: Any


def _get(doc: Mapping[str, Any], path: str) -> Any:
    cur: Any = doc
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur


def _fields(left: Mapping[str, Any], right: Mapping[str, Any], tasks: Iterable[str]) -> list[str]:
    fields = list(GLOBAL_FIELDS)
    profiles_l = _get(left, "measurement_settings.coverage_profiles")
    profiles_r = _get(right, "measurement_settings.coverage_profiles")
    if isinstance(profiles_l, Mapping) and isinstance(profiles_r, Mapping):
        fields += [f"measurement_settings.coverage_profiles.{k}" for k in sorted(set(profiles_l) & set(profiles_r))]
    for task in tasks:
        fields += [f.format(task=task) for f in TASK_FIELDS]
        caps_l = _get(left, f"measurement_capabilities.{task}")
        caps_r = _get(right, f"measurement_capabilities.{task}")
        if isinstance(caps_l, Mapping) and isinstance(caps_r, Mapping):
            fields += [
                f"measurement_capabilities.{task}.{m}.tool_version" for m in sorted(set(caps_l) & set(caps_r))
            ]
    return fields


def compare_identities(
    left: Mapping[str, Any], right: Mapping[str, Any], tasks: Iterable[str]
) -> tuple[list[Difference], list[str]]:
    """Differing fields, and the fields only one of the two runs saved (not compared)."""
    diffs: list[Difference] = []
    one_sided: list[str] = []
    for field in _fields(left, right, sorted(set(tasks))):
        a, b = _get(left, field), _get(right, field)
        if a is _MISSING and b is _MISSING:
            continue
        if a is _MISSING or b is _MISSING:
            one_sided.append(field)
        elif a != b:
            diffs.append(Difference(field, a, b))
    return diffs, one_sided


def shown(value: Any) -> str:
    """A value as the refusal prints it: long values as a short SHA-256."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    if len(text) <= SHORT:
        return text
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:12]
