"""The small, harness-neutral identity of a discovery receipt (``native-treatment.json``).

Claude Code and Codex save receipts of different shapes. A consumer that must bind a
result to what was loaded and how the session was launched (the vanilla cache key, the
comparison identity) reads this instead: the launch argv without anything that differs
per attempt (prompt, session id), the settings discovery used, and digests of the
treatment's components and of the task-owned files. Two attempts with equal identities
loaded the same things under the same launch.
"""

import hashlib
import json
from typing import Any

import msgspec

#: Receipt keys that describe the attempt, not what loaded (left out of the digests).
_PER_ATTEMPT = frozenset({
    "arm", "attempt_id", "seconds", "argv", "exit_code", "problems", "passed", "ok", "mismatches",
    "cache", "installed_plugin_roots", "trees", "launch_argv", "discovery_settings", "task_owned",
    "expected", "environment_problems", "cli_processes", "usage_before_task", "hook_events_before_task",
})


class DiscoveryIdentity(msgspec.Struct, frozen=True, kw_only=True):
    """What loaded and how the session was launched, per receipt."""

    schema: str
    passed: bool
    launch: tuple[str, ...]  # argv after the executable; prompt and session id left out
    discovery_settings: tuple[str, ...]
    components_sha256: str  # the treatment's components as discovered
    task_owned_sha256: str  # the task repository's own files as discovered


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def discovery_identity(receipt: dict[str, Any]) -> DiscoveryIdentity:
    """The identity of a saved receipt of either real harness."""
    argv = list(receipt.get("launch_argv") or receipt.get("argv") or [])
    if "--session-id" in argv:
        i = argv.index("--session-id")
        del argv[i: i + 2]
    components = {k: v for k, v in receipt.items() if k not in _PER_ATTEMPT}
    return DiscoveryIdentity(
        schema=str(receipt.get("schema") or ""),
        passed=bool(receipt.get("passed", receipt.get("ok", False))),
        launch=tuple(str(a) for a in argv),
        discovery_settings=tuple(str(a) for a in receipt.get("discovery_settings") or ()),
        components_sha256=_digest(components),
        task_owned_sha256=_digest(receipt.get("task_owned") or {}),
    )
