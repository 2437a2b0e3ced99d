"""Task settings a runner refuses, and the ones a backend ignores (pure).

A ``task.toml`` may carry container settings that would hand the agent or the verifier
the host: ``privileged``, host ``volumes``/``mounts``, ``devices``, added capabilities
(``cap_add``), the host's ``pid``/``ipc``/``userns``/network namespace. PluginBench never
grants them, and a task that asks for one is refused at admission (:func:`refuse`: a
:class:`~pluginbench.errors.TaskError`, exit code 2, naming the file and the field) rather
than run without it in silence: its verifier may count on what it asked for.

Every other setting is either honoured by the backend that runs it or named as ignored
(:func:`declared_settings` lists what a task declares, the backend says what it honours,
and ``pluginbench check`` prints the difference).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import TaskError

#: the tables container settings may sit in
_TABLES = ("environment", "agent", "verifier", "verifier.environment")

#: settings refused whenever they grant anything (any non-empty / true value)
_REFUSED_ANY = {
    "privileged": "a privileged container is the host's root",
    "volumes": "a host volume exposes host folders to the sandbox",
    "mounts": "a host mount exposes host folders to the sandbox",
    "devices": "a host device reaches the host's hardware",
    "cap_add": "an added capability gives back a root power the sandbox drops",
}
#: settings refused when they name the host's namespace
_REFUSED_HOST = {
    "pid": "the host's pid namespace shows and signals host processes",
    "pid_mode": "the host's pid namespace shows and signals host processes",
    "ipc": "the host's ipc namespace shares memory with host processes",
    "ipc_mode": "the host's ipc namespace shares memory with host processes",
    "userns_mode": "the host's user namespace undoes the sandbox's uid mapping",
    "network_mode": "the host's network reaches every service on the host",
}

#: the settings every backend honours (the rest are a backend's own, see
#: :attr:`pluginbench.environments.Backend.task_settings`)
COMMON_SETTINGS = frozenset({
    "environment.workdir", "environment.os", "environment.cpus", "environment.memory_mb",
    "environment.storage_mb", "environment.pids_limit", "environment.build_timeout_sec", "agent.timeout_sec", "verifier.timeout_sec",
    "verifier.environment_mode", "verifier.collect", "verifier.env", "environment.env",
})


def _tables(data: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    out = []
    for name in _TABLES:
        table: Any = data
        for part in name.split("."):
            table = table.get(part) if isinstance(table, Mapping) else None
        if isinstance(table, Mapping):
            out.append((name, table))
    return out


def _is_host(value: object) -> bool:
    return isinstance(value, str) and (value.strip().lower() == "host" or value.strip().lower().startswith(
        ("container:", "service:")))


def refuse(data: Mapping[str, Any], path: Path, tid: str) -> None:
    """Raise :class:`TaskError` for the first refused setting in a parsed task.toml."""
    for table_name, table in _tables(data):
        for key, why in _REFUSED_ANY.items():
            value = table.get(key)
            if value not in (None, False, [], {}, ""):
                raise TaskError(
                    f"task '{tid}': {table_name}.{key} = {value!r} is refused: {why}", file=str(path),
                    field=f"{table_name}.{key}",
                    fix=f"remove {key} from [{table_name}]; PluginBench never grants it, so a verifier "
                        "that needs it cannot be graded here",
                )
        for key, why in _REFUSED_HOST.items():
            value = table.get(key)
            if _is_host(value):
                raise TaskError(
                    f"task '{tid}': {table_name}.{key} = {value!r} is refused: {why}", file=str(path),
                    field=f"{table_name}.{key}",
                    fix=f"remove {key} (or, for network_mode, use \"no-network\" or \"public\")",
                )


def declared_settings(data: Mapping[str, Any]) -> tuple[str, ...]:
    """Every ``table.key`` a parsed task.toml sets in its container tables, sorted
    (nested tables such as ``[verifier.environment]`` are listed by their own keys)."""
    out = set()
    for table_name, table in _tables(data):
        for key, value in table.items():
            if isinstance(value, Mapping) and f"{table_name}.{key}" in _TABLES:
                continue
            out.add(f"{table_name}.{key}")
    return tuple(sorted(out))


def ignored_settings(declared: tuple[str, ...], honoured: frozenset[str]) -> tuple[str, ...]:
    """The declared settings neither :data:`COMMON_SETTINGS` nor ``honoured`` covers."""
    return tuple(s for s in declared if s not in COMMON_SETTINGS and s not in honoured)
