"""Resume runs with the versions frozen in ``run.created``, never with whatever the host has now.

A run's comparison is only fair when every attempt ran the same agent CLI under the same
PluginBench. ``create_run`` records both in ``run.created`` (``harness_version``,
``pluginbench_version``); a resume reads them from there and refuses, before anything
starts, when the host's CLI or PluginBench reports another version. The run's
``runner.cli_version`` may be null (the host version was recorded at freeze time): the
frozen value is still the one every later attempt must match.
"""

from __future__ import annotations

from pathlib import Path

from .. import __version__
from ..config import Evaluation
from ..errors import RunDirError
from ..events import RunCreated
from ..harness_registry import harness_class
from ._runfiles import ResolvedCli


def version_mismatch(created: RunCreated, *, host_pluginbench: str, host_cli: str | None) -> tuple[str, str] | None:
    """``(message, fix)`` when the host differs from the frozen versions, else None (pure).

    ``host_cli`` is what the host CLI reports (None when the run's harness needs no CLI)."""
    if created.pluginbench_version and created.pluginbench_version != host_pluginbench:
        return (
            f"the run was frozen by PluginBench {created.pluginbench_version} but this is PluginBench "
            f"{host_pluginbench}",
            f"resume it with PluginBench {created.pluginbench_version}, or start a new evaluation from the "
            f"config with PluginBench {host_pluginbench}",
        )
    if harness_class(created.harness).cli is None:
        return None
    frozen = created.harness_version
    if frozen is None:
        return (
            f"the run recorded no {created.harness} CLI version in run.created, so its attempts cannot be "
            "matched to a CLI",
            "start a new evaluation from the config",
        )
    if host_cli != frozen:
        return (
            f"the run was frozen with {created.harness} CLI {frozen} but the host {created.harness} CLI is "
            f"{host_cli or 'not answering --version'}",
            f"install {created.harness} {frozen} on this host and resume (tools/install-clis.sh installs the "
            f"pinned versions), or start a new evaluation from the config to use {created.harness} {host_cli}",
        )
    return None


def frozen_cli(ev: Evaluation, created: RunCreated, events_file: Path) -> ResolvedCli | None:
    """The CLI a resumed run launches: the host's binary, at exactly the frozen version.

    Raises :class:`RunDirError` (exit 2) naming both versions and the choices when the
    host's PluginBench or CLI differs from ``run.created``. None for harnesses without a CLI."""
    from ..probe import cli_version, find_cli

    path: Path | None = None
    host_cli: str | None = None
    needs_cli = harness_class(ev.runner.harness).cli is not None
    if needs_cli:
        path = find_cli(ev.runner.harness)
        host_cli = cli_version(path) if path is not None else None
    problem = version_mismatch(created, host_pluginbench=__version__, host_cli=host_cli)
    if problem is not None:
        message, fix = problem
        raise RunDirError(message, file=str(events_file), field="run.created", fix=fix)
    if not needs_cli or path is None or created.harness_version is None:
        return None
    return ResolvedCli(path, created.harness_version, created.cli_version_source or "host")
