"""Resume runs with the versions frozen in ``run.created``, never with whatever the host has now.

A run's comparison is only fair when every attempt ran the same agent CLI under the same
PluginBench. ``create_run`` records both in ``run.created`` (``harness_version``,
``pluginbench_version``); a resume reads them from there and refuses, before anything
starts, when PluginBench reports another version. A host CLI that reports another version
is refused where the host binary runs in the sandboxes (the local backend), and accepted
where the backend's coding images carry the frozen CLI (docker, ray with docker sandboxes):
the run keeps coding with the frozen container version, and the change is said and
recorded in ``run.started.accepted``. The run's ``runner.cli_version`` may be null (the
host version was recorded at freeze time): the frozen value is still the one every later
attempt must match.
"""

from __future__ import annotations

from pathlib import Path

from .. import __version__
from ..config import Evaluation
from ..errors import RunDirError
from ..events import RunCreated
from ..harness_registry import harness_class
from ._runfiles import ResolvedCli


def version_mismatch(created: RunCreated, *, host_pluginbench: str, host_cli: str | None,
                     carried: bool = False) -> tuple[str, str] | None:
    """``(message, fix)`` when the host differs from the frozen versions, else None (pure).

    ``host_cli`` is what the host CLI reports (None when the run's harness needs no CLI);
    ``carried``: the backend's coding images carry the frozen CLI, so another host CLI
    version is accepted (the run keeps the frozen container version)."""
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
    if host_cli != frozen and not (carried and host_cli is not None):
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
    from ..environments import backend_of
    from ..probe import cli_version, find_cli
    from ._cli_cache import cached_cli

    path: Path | None = None
    host_cli: str | None = None
    pin = harness_class(ev.runner.harness).cli
    carried = False
    seen = None
    if pin is not None:
        path = find_cli(ev.runner.harness)
        host_cli = seen = cli_version(path) if path is not None else None
        frozen = created.harness_version
        cached = cached_cli(pin, frozen) if frozen is not None and host_cli != frozen else None
        if cached is not None:  # the host CLI cache holds the frozen version (runner.cli_version installed it)
            path, host_cli = cached, frozen
        carried = path is not None and str(backend_of(ev).cli_path(pin, path)) != str(path)
    problem = version_mismatch(created, host_pluginbench=__version__, host_cli=host_cli, carried=carried)
    if problem is not None:
        message, fix = problem
        raise RunDirError(message, file=str(events_file), field="run.created", fix=fix)
    if pin is None or path is None or created.harness_version is None:
        return None
    return ResolvedCli(path, created.harness_version, created.cli_version_source or "host",
                       seen if seen is not None and seen != created.harness_version else None)


def host_cli_update(cli: ResolvedCli | None) -> str | None:
    """The progress line of an accepted host CLI update, or None when the host reports the frozen version."""
    if cli is None or cli.host_version is None:
        return None
    return (f"the host CLI is now {cli.host_version}; this run keeps coding with the frozen CLI {cli.version} "
            "(its coding images, or the host CLI cache, hold it)")
