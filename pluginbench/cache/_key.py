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

import hashlib
from typing import Annotated, Any

import msgspec
from msgspec import Meta

#: Entries live under ``<cache root>/vanilla/<key>/<repeat>``.
COHORT_DIR = "vanilla"
KEY_SCHEMA = "pluginbench-vanilla-v1"


class KeyInputs(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the vanilla key binds, as saved beside each entry."""

    schema: Annotated[str, Meta(description="The key's own format (`pluginbench-vanilla-v1`).")] = KEY_SCHEMA
    launcher_version: Annotated[str, Meta(description="PluginBench's declared version (not the source of its modules).")]
    harness: Annotated[str, Meta(description="`runner.harness`: a Claude entry never satisfies a Codex lookup.")]
    cli_version: Annotated[str | None, Meta(description="The agent CLI version the run resolved; `null` for controls and `simulated`.")]
    model: Annotated[str | None, Meta(description="`runner.model`.")]
    reasoning: Annotated[str | None, Meta(description="`runner.reasoning`.")]
    capabilities: Annotated[dict[str, Any], Meta(description="`capabilities.*` (subagents, max_threads, max_depth).")]
    delivery_policy: Annotated[str, Meta(description="The harness's treatment-delivery policy, e.g. `claude-native-v1`.")]
    launch: Annotated[dict[str, Any], Meta(description="The pinned launch from the harness's own builders, placeholders for per-attempt "
                                                       "values: `argv`, and for Claude the discovery control requests, refused variables, "
                                                       "pinned settings, built-in agents and init tools; for Codex its discovery settings.")]
    transport: Annotated[str, Meta(description="`provider`, or `probe:<SHA-256 of the scenario>`: a probe entry never serves a real run.")]
    task: Annotated[str, Meta(description="The task id.")]
    task_fingerprint: Annotated[str, Meta(description="The frozen task's content fingerprint (instruction, tests, solution, environment).")]
    workdir: Annotated[str, Meta(description="The task's working directory in the sandbox.")]
    backend: Annotated[str, Meta(description="`environment.backend`.")]
    isolation: Annotated[str, Meta(description="The effective isolation (`bubblewrap`, `none`, `docker`).")]
    container_cpus: Annotated[float | None, Meta(description="`environment.container_cpus`.")]
    container_memory_mb: Annotated[int | None, Meta(description="`environment.container_memory_mb`.")]
    timeout_seconds: Annotated[int, Meta(description="`timeout_seconds`.")]
    jobs: Annotated[int, Meta(description="`jobs`.")]
    seed: Annotated[int, Meta(description="`seed`.")]
    repeats: Annotated[int, Meta(description="`repeats`.")]


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
