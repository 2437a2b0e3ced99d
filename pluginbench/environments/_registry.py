"""The backend registry: ``environment.backend`` names → :class:`Backend` adapters.

A backend registers once, either as an instance or lazily as ``"module:Class"`` (the
module is imported the first time the backend is asked for, so a backend with heavy
dependencies costs nothing until a run uses it). Config validation, run creation,
preparation, the worker, ``check``/``doctor`` and ``status`` look backends up here and
never test a backend's name.

An unknown name is a :class:`~pluginbench.errors.ConfigError` (exit code 2) that lists the
registered backends.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, RegistryError
from ._backend import Backend

if TYPE_CHECKING:
    from ..config import Evaluation

_registry: dict[str, Backend | str] = {}


def register_backend(backend: Backend | str, *, name: str | None = None, replace: bool = False) -> None:
    """Register ``backend`` (an instance, or ``"module:Class"`` with ``name``) under its
    name; registering a taken name raises unless ``replace``."""
    if isinstance(backend, str):
        if name is None or ":" not in backend:
            raise RegistryError("a lazy backend is registered as 'module:Class' with name=...")
        key = name
    else:
        key = name or backend.name
    if not key or key != key.strip() or any(c.isspace() for c in key):
        raise RegistryError(f"backend name {key!r} must be one word")
    if key in _registry and not replace:
        raise RegistryError(f"a backend named {key!r} is already registered")
    _registry[key] = backend


def unregister_backend(name: str) -> None:
    """Remove a registration (tests that register a toy backend undo it)."""
    _registry.pop(name, None)


def backend_names() -> tuple[str, ...]:
    """The registered backend names, sorted."""
    return tuple(sorted(_registry))


def get_backend(name: str, *, file: Path | str | None = None, field: str = "environment.backend") -> Backend:
    """The backend registered as ``name``; an unknown name is a :class:`ConfigError`."""
    entry = _registry.get(name)
    if entry is None:
        raise ConfigError(
            f"unknown environment backend {name!r}",
            file=str(file) if file is not None else None, field=field,
            fix="use one of: " + ", ".join(backend_names()),
        )
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = getattr(importlib.import_module(module), attr)()
        if entry.name != name:
            raise RegistryError(f"backend {module}:{attr} is named {entry.name!r}, registered as {name!r}")
        _registry[name] = entry
    return entry


def backend_of(ev: Evaluation, path: Path | str | None = None) -> Backend:
    """The backend an evaluation selects (its variant for the evaluation's settings)."""
    return get_backend(ev.environment.backend, file=path).for_evaluation(ev)


def check_backend_config(ev: Evaluation, path: Path | str) -> Backend:
    """Config validation of the environment block through its backend: the name is
    registered, its settings decode, its cross-field rules hold. Returns the backend."""
    backend = backend_of(ev, path)
    backend.validate(ev, path)
    return backend


def backends_table(names: tuple[str, ...] | None = None) -> str:
    """The registered backends as a Markdown table (generated into docs/configuration.md)."""
    rows = ["| Backend | What it is | `environment.settings` | Tasks need `workspace/` | Task images |",
            "| --- | --- | --- | --- | --- |"]
    for name in names if names is not None else backend_names():
        b = get_backend(name)
        settings = "none" if b.settings_type is None else ", ".join(
            f"`{f}`" for f in b.settings_type.__struct_fields__)
        rows.append(f"| `{name}` | {b.summary} | {settings} | {'yes' if b.needs_workspace else 'no'} | "
                    f"{'yes' if b.uses_images else 'no'} |")
    return "\n".join(rows) + "\n"


# The built-in backends: one registration each.
register_backend("pluginbench.environments._local_backend:LocalBackend", name="local")
register_backend("pluginbench.environments._docker_backend:DockerBackend", name="docker")
register_backend("pluginbench.environments._ray_backend:RayBackend", name="ray")


BUILTIN_BACKENDS = backend_names()

__all__ = [
    "BUILTIN_BACKENDS",
    "backend_names",
    "backend_of",
    "backends_table",
    "check_backend_config",
    "get_backend",
    "register_backend",
    "unregister_backend",
]
