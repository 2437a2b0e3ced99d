"""Execution environments: the sandbox port, the backend port and registry, and the
backends (``local``, ``docker``, and whatever else registers).

:func:`get_backend` finds a backend by name in the registry (``_registry.py``); an
unknown name is a :class:`~pluginbench.errors.ConfigError`. A backend registered lazily
(``"module:Class"``) is imported only when asked for, so the local backend works without
aiodocker being importable.
"""

from __future__ import annotations

from typing import Any

from ._backend import Backend, LeftRunning
from ._bwrap import bwrap_usable, find_bwrap, host_top_level, prefetch_bwrap, workdir_conflict
from ._dialogue import LineChannel
from ._egress import NO_EGRESS, Egress, EgressProxy, network_policy, policy_for
from ._gitbase import BASE_DATE, BASE_IDENTITY, BASE_MESSAGE, GIT_EXCLUDE, NO_MAINTENANCE
from ._gitbase_template import BaseTemplate, copy_git, mark_index_racy, template_for
from ._hostcopy import plain_files
from ._limits import OUTPUT_FILE_BYTES, Limits, limits_of, over_storage, task_limits
from ._local import LocalSandbox
from ._local_apply import GIT_APPLY
from ._local_env import LocalEnvironment
from ._local_paths import left_behind
from ._port import Environment, ExecResult, Role, Sandbox, SandboxPaths, SandboxSpec
from ._registry import (
    BUILTIN_BACKENDS,
    backend_names,
    backend_of,
    backends_table,
    check_backend_config,
    get_backend,
    register_backend,
    unregister_backend,
)


def bwrap_available() -> bool:
    """Whether bubblewrap is on PATH and can create our sandboxes here (probed once)."""
    return bwrap_usable()


def make_environment(backend: str, **kwargs: Any) -> Environment:
    """The environment of the registered ``backend`` built with its own ``kwargs``; an
    unknown backend is a :class:`~pluginbench.errors.ConfigError`."""
    return get_backend(backend).environment(**kwargs)


def left_running(backend: str, run_id: str) -> LeftRunning:
    """What a killed worker of ``run_id`` left on ``backend`` (for ``status``); raises
    when the backend cannot be asked, so the caller can say it could not check."""
    return get_backend(backend).left_running(run_id)


__all__ = [
    "BASE_DATE",
    "BASE_IDENTITY",
    "BASE_MESSAGE",
    "BaseTemplate",
    "BUILTIN_BACKENDS",
    "GIT_EXCLUDE",
    "NO_MAINTENANCE",
    "GIT_APPLY",
    "Backend",
    "Egress",
    "EgressProxy",
    "Environment",
    "ExecResult",
    "LeftRunning",
    "Limits",
    "LineChannel",
    "LocalEnvironment",
    "LocalSandbox",
    "NO_EGRESS",
    "OUTPUT_FILE_BYTES",
    "Role",
    "Sandbox",
    "SandboxPaths",
    "SandboxSpec",
    "backend_names",
    "backend_of",
    "backends_table",
    "bwrap_available",
    "bwrap_usable",
    "prefetch_bwrap",
    "check_backend_config",
    "copy_git",
    "find_bwrap",
    "get_backend",
    "host_top_level",
    "left_behind",
    "left_running",
    "limits_of",
    "make_environment",
    "mark_index_racy",
    "network_policy",
    "policy_for",
    "over_storage",
    "plain_files",
    "register_backend",
    "task_limits",
    "template_for",
    "unregister_backend",
    "workdir_conflict",
]
