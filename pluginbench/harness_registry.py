"""The harness registry: ``runner.harness`` (and ``reviewer.harness``) names → adapter classes.

A harness adapter is a class that subclasses
:class:`pluginbench.harnesses.HarnessBase` and declares everything the engine asks about
it (see the port, ``pluginbench/harnesses/_port.py``): whether it is a real agent CLI, its
pinned CLI (:class:`CliPin`: npm package, version, ``--help`` flags), its config rules,
its admission and credential checks, how the worker builds it for a run, its doctor
checks, its secrets and read-only tool folders. It is registered once::

    from pluginbench.harness_registry import register_harness

    @register_harness
    class MyHarness(HarnessBase):
        name = "mine"
        ...

or lazily as ``"module:Class"`` with ``name=`` (the module is imported the first time the
harness is asked for, so a harness's dependencies cost nothing until a run uses it: the
built-in ones at the end of this module). Config validation, run creation, the worker,
preparation, ``doctor``, the docker coding image and ``tools/install-clis.sh``
(``python -m pluginbench.harness_registry pins``) look harnesses up here and never test a
harness's name.

This module sits at the bottom of the layering (it imports only :mod:`pluginbench.errors`)
so that ``config`` can read it; the adapters it names are imported by name, on demand.
"""

import importlib
import sys
from typing import Any, NamedTuple

import msgspec

from .errors import ConfigError, PluginBenchError


class CliPin(msgspec.Struct, frozen=True, kw_only=True):
    """A real harness's agent CLI: the npm package ``tools/install-clis.sh`` installs at
    exactly ``version`` into ``.tools/clis``, the executable it puts in ``node_modules/.bin``,
    and what ``doctor`` asks of its ``--help``."""

    #: the executable's name (``.tools/clis/node_modules/.bin/<command>``, or on PATH)
    command: str
    #: the npm package, e.g. ``@anthropic-ai/claude-code``
    package: str
    #: the pinned (qualified) version
    version: str
    #: the arguments after the executable that print the launch flags
    help_argv: tuple[str, ...] = ("--help",)
    #: the flags the pinned launch uses; ``doctor`` checks each is in the help text
    launch_flags: tuple[str, ...] = ()
    #: the oldest ``node`` major version the package runs on, when its executable is a node
    #: script that the task image's own ``node`` may be too old for: the docker coding image
    #: then carries the host's ``node`` (at least this major) privately for this CLI alone
    node_major: int | None = None

    @property
    def npm_folder(self) -> str:
        """The folder under ``node_modules`` the package's tree (and its platform
        packages) lives in: its npm scope, or the package itself when unscoped."""
        return self.package.split("/", 1)[0]


class SpecProblem(NamedTuple):
    """What is wrong with a harness/model/effort choice (runner or reviewer)."""

    message: str
    field: str  # the sub-field: harness, model or reasoning
    fix: str


_registry: dict[str, Any] = {}


def register_harness(adapter: Any = None, *, name: str | None = None, replace: bool = False) -> Any:
    """Register a harness adapter class under its ``name`` (usable as a class decorator),
    or ``"module:Class"`` lazily with ``name=``. Registering a taken name raises unless
    ``replace``. Returns what it was given."""
    if isinstance(adapter, str):
        if name is None or ":" not in adapter:
            raise ValueError("a lazy harness is registered as 'module:Class' with name=...")
        key = name
    elif adapter is None:
        raise ValueError("register_harness needs an adapter class or 'module:Class'")
    else:
        key = name or str(getattr(adapter, "name", "") or "")
    if not key or key != key.strip() or any(c.isspace() for c in key):
        raise ValueError(f"harness name {key!r} must be one word")
    if key in _registry and not replace:
        raise ValueError(f"a harness named {key!r} is already registered")
    _registry[key] = adapter
    return adapter


def unregister_harness(name: str) -> None:
    """Remove a registration (a test that registers a toy harness undoes it)."""
    _registry.pop(name, None)


def harness_names() -> tuple[str, ...]:
    """Every registered harness name, in registration order (the built-ins first)."""
    return tuple(_registry)


def is_registered(name: str) -> bool:
    return name in _registry


def harness_class(name: str, *, file: str | None = None, field: str = "runner.harness") -> Any:
    """The adapter class registered as ``name``.

    An unknown name is a :class:`ConfigError` (exit 2) that lists the registered ones; a
    lazily registered adapter whose module cannot be imported is a
    :class:`PluginBenchError` naming it."""
    entry = _registry.get(name)
    if entry is None:
        raise ConfigError(f"unknown harness '{name}'", file=file, field=field,
                          fix="use one of: " + ", ".join(harness_names()))
    if isinstance(entry, str):
        module_name, _, attr = entry.partition(":")
        try:
            entry = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise PluginBenchError(
                f"the {name} harness is not available in this build: cannot load {entry} ({exc})"
            ) from exc
        if entry.name != name:
            raise ValueError(f"harness {module_name}:{attr} is named {entry.name!r}, registered as {name!r}")
        _registry[name] = entry
    return entry


def harness_classes() -> dict[str, Any]:
    """Every registered adapter class by name (imports the lazy ones)."""
    return {name: harness_class(name) for name in harness_names()}


def cli_pins() -> dict[str, CliPin]:
    """The pinned CLI of every registered harness that has one, by harness name."""
    return {name: cls.cli for name, cls in harness_classes().items() if cls.cli is not None}


def is_simulated(name: str) -> bool:
    """Whether ``name`` is a registered stand-in agent whose results are labelled
    SIMULATED (False for a name no harness is registered under)."""
    return is_registered(name) and bool(harness_class(name).simulated)


def runs_no_agent_cli(name: str) -> bool:
    """Whether ``name`` is a registered harness with no agent CLI at all (the simulated
    agent, the oracle and nop controls), so a CLI version does not apply to it."""
    return is_registered(name) and harness_class(name).cli is None


def real_harness_names() -> tuple[str, ...]:
    """The registered harnesses that drive a real agent CLI."""
    return tuple(name for name, cls in harness_classes().items() if cls.real)


# The built-in harnesses: one registration each.
register_harness("pluginbench.harnesses._claude:ClaudeHarness", name="claude")
register_harness("pluginbench.harnesses._codex:CodexHarness", name="codex")
register_harness("pluginbench.harnesses._qwen:QwenHarness", name="qwen")
register_harness("pluginbench.harnesses._opencode:OpencodeHarness", name="opencode")
register_harness("pluginbench.harnesses._gemini:GeminiHarness", name="gemini")
register_harness("pluginbench.harnesses._simulated:SimulatedHarness", name="simulated")
register_harness("pluginbench.harnesses._controls:NopHarness", name="nop")
register_harness("pluginbench.harnesses._controls:OracleHarness", name="oracle")


def _main(argv: list[str]) -> int:
    """``python -m pluginbench.harness_registry pins``: one line per pinned CLI,
    ``<command> <npm package> <version>`` (what ``tools/install-clis.sh`` installs)."""
    if argv != ["pins"]:
        print("usage: python -m pluginbench.harness_registry pins", file=sys.stderr)
        return 2
    from pluginbench import harness_registry  # the imported module, not this __main__ copy

    for pin in harness_registry.cli_pins().values():
        print(pin.command, pin.package, pin.version)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))


__all__ = [
    "CliPin",
    "SpecProblem",
    "cli_pins",
    "harness_class",
    "harness_classes",
    "harness_names",
    "is_registered",
    "is_simulated",
    "runs_no_agent_cli",
    "real_harness_names",
    "register_harness",
    "unregister_harness",
]
