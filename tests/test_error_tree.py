"""One exception tree: every exception class PluginBench defines lives in pluginbench/errors.py."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pluginbench
from pluginbench import errors


def _modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(pluginbench.__path__, "pluginbench.")]
    return [importlib.import_module(n) for n in sorted(names) if not n.endswith("__main__")]


def _exception_classes(module: ModuleType) -> list[type[BaseException]]:
    return [
        obj for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, BaseException) and obj.__module__ == module.__name__
    ]


def test_every_exception_class_is_defined_in_errors() -> None:
    """No module but pluginbench/errors.py defines an exception class."""
    modules = _modules()
    assert len(modules) > 100, "the package walk found too few modules"
    stray = [
        f"{m.__name__} defines {cls.__name__}: move it to pluginbench/errors.py (under "
        "PluginBenchError, InputError for bad input) and import it from there"
        for m in modules if m is not errors for cls in _exception_classes(m)
    ]
    assert not stray, "\n".join(stray)


def test_every_error_derives_from_the_base() -> None:
    """Every class in errors.py is a PluginBenchError, so one ``except`` catches what PluginBench raises."""
    classes = _exception_classes(errors)
    assert errors.DiscoveryMismatch in classes and errors.ReadinessFailure in classes
    outside = [c.__name__ for c in classes if not issubclass(c, errors.PluginBenchError)]
    assert not outside, f"exception classes outside the tree: {outside}"


def test_both_harnesses_raise_the_one_discovery_mismatch() -> None:
    """Claude Code and Codex raise the same DiscoveryMismatch, whose message names the subject and every problem."""
    from pluginbench.harnesses import _claude, _codex

    assert _claude.DiscoveryMismatch is _codex.DiscoveryMismatch is errors.DiscoveryMismatch
    exc = errors.DiscoveryMismatch("arm guided", ["skill x missing", "stowaway plugin y"])
    assert str(exc) == (
        "arm guided: discovery mismatch, attempt stopped before coding: skill x missing; stowaway plugin y"
    )
    assert exc.subject == "arm guided" and exc.problems == ("skill x missing", "stowaway plugin y")


def test_bad_input_errors_exit_2_and_the_rest_exit_1() -> None:
    """Input errors (scenario, compare refusal, unsafe tree) keep exit code 2; failures keep 1."""
    for cls in (errors.ScenarioError, errors.CompareRefused, errors.UnsafeTree, errors.ConfigError):
        assert cls("x").exit_code == 2, cls
    for cls in (errors.ReadinessFailure, errors.CodexSetupError, errors.PacketError, errors.GitFailed):
        assert cls("x").exit_code == 1, cls
