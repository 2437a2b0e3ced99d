"""The vanilla cache key: a hash of everything a vanilla attempt's result may depend on. Pure.

The key binds the harness, its CLI version, the model and reasoning effort, the
capability settings, the harness's treatment-delivery policy and pinned launch (argv
shapes, refused variables, pinned settings and built-ins, derived from the same code
that builds the real launch), the transport (the provider, or the probe scenario's
content), the launcher's declared version, the task's frozen identity (id, content
fingerprint, workdir), the sandbox resources (backend, isolation, container limits),
the timeout, jobs, seed and repeat count. A Claude entry therefore never satisfies a
Codex lookup. Guidance, reviewer settings and selected measurements are not inputs, so
they never change it. Image IDs are not in the key (they are only known after
preparation); admission compares them instead.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

#: Entries live under ``<cache root>/vanilla/<key>/<repeat>``.
COHORT_DIR = "vanilla"
KEY_SCHEMA = "pluginbench-vanilla-v1"


class KeyInputs(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the vanilla key binds, as saved beside each entry."""

    schema: str = KEY_SCHEMA
    launcher_version: str
    harness: str
    cli_version: str | None
    model: str | None
    reasoning: str | None
    capabilities: dict[str, Any]
    delivery_policy: str
    launch: dict[str, Any]
    transport: str
    task: str
    task_fingerprint: str
    workdir: str
    backend: str
    isolation: str
    container_cpus: float | None
    container_memory_mb: int | None
    timeout_seconds: int
    jobs: int
    seed: int
    repeats: int


_encoder = msgspec.json.Encoder(order="deterministic")


def canonical(inputs: KeyInputs) -> bytes:
    """The inputs as canonical JSON (sorted keys), the bytes the key hashes."""
    return _encoder.encode(inputs)


def vanilla_key(inputs: KeyInputs) -> str:
    """``<harness>-<sha256 of the canonical inputs, 40 hex>``: readable and collision-safe."""
    return f"{inputs.harness}-{hashlib.sha256(canonical(inputs)).hexdigest()[:40]}"


def cohort_of(key: str) -> str:
    """The cohort of ``key``, relative to the cache root (``origin_cohort`` in reports)."""
    return f"{COHORT_DIR}/{key}"


def entry_of(key: str, repeat: int) -> str:
    """One repeat's entry, relative to the cache root."""
    return f"{COHORT_DIR}/{key}/{repeat}"
