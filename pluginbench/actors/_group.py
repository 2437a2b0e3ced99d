"""Cross-agent evaluations on disk: one config with ``runner.harnesses`` becomes a folder of
ordinary runs, one per harness (the edge; the expansion is pure, in :mod:`pluginbench.config`).

Every harness's run is a complete run directory with its own Supervisor, log, vanilla,
statistics, gates and stopping: nothing is pooled across harnesses. ``cross-agent.json``
(written once, before any run exists) freezes the config and names the runs; the matrix
report is a fold of the runs' logs (:func:`pluginbench.projections.build_cross_report`).

A treatment one harness cannot deliver (a Claude Code plugin under Codex, any plugin under
Qwen Code) is refused at admission, before anything is written, naming the harness and
its entry: a package × harness matrix with a silently missing cell would read as a result.
"""

import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple

from .. import __version__
from ..config import LoadedConfig, frozen_builtins, harness_entries, per_harness, under_harness
from ..errors import InputError, OutputExistsError, RunDirError
from ..rundir import GroupDir, RunDir
from ..tasks import HarborTask
from ._runfiles import check_inputs, create_run, resolve_paths

#: cross-agent.json's schema version.
GROUP_SCHEMA_VERSION = 1


class GroupRun(NamedTuple):
    """One harness's run in a cross-agent evaluation."""

    harness: str
    model: str | None
    reasoning: str | None
    run: RunDir


class Group(NamedTuple):
    """A cross-agent evaluation's folder as its manifest describes it."""

    dir: GroupDir
    name: str
    runs: tuple[GroupRun, ...]
    manifest: dict[str, Any]


def check_group_inputs(loaded: LoadedConfig) -> dict[str, HarborTask]:
    """Every foreground check of each harness's run (tasks, treatments under that harness's
    admission, CLI, credentials); a refusal names the harness and its entry. Returns the tasks."""
    ev = resolve_paths(loaded)
    tasks: dict[str, HarborTask] = {}
    for i, (name, sub) in enumerate(per_harness(ev)):
        try:
            tasks = check_inputs(sub, loaded.path)
        except InputError as exc:
            raise under_harness(i, name, exc) from None
    return tasks


def create_group(loaded: LoadedConfig, output: Path, *, checked: bool = False) -> Group:
    """Make ``output`` a cross-agent evaluation: every harness's inputs are checked first
    (nothing is written on a refusal; ``checked`` when the caller just did), then
    ``cross-agent.json`` and one run per harness."""
    if not checked:
        check_group_inputs(loaded)
    if output.exists():
        raise OutputExistsError(f"the output folder {output} already exists", file=str(output), field="--output",
                                fix="choose a new folder, or pass the evaluation's folder itself to resume it")
    try:
        output.mkdir(parents=True)
    except FileExistsError:
        raise OutputExistsError(f"the output folder {output} already exists", file=str(output), field="--output",
                                fix="choose a new folder") from None
    except OSError as exc:
        raise RunDirError(f"cannot create the folder {output}: {exc.strerror}", file=str(output), field="--output",
                          fix="choose a writable folder") from None
    gd = GroupDir(output.resolve())
    ev = loaded.evaluation
    settings = json.dumps(frozen_builtins(ev), indent=2, sort_keys=True).encode()
    manifest = {
        "schema_version": GROUP_SCHEMA_VERSION,
        "name": ev.name or loaded.path.parent.name,
        "config_file": str(loaded.path),
        "pluginbench_version": __version__,
        "evaluation_sha256": hashlib.sha256(settings).hexdigest(),
        "evaluation": json.loads(settings),
        "comparison": "within each harness only; arms are never pooled across harnesses",
        "harnesses": [{"harness": e.harness, "model": e.model, "reasoning": e.reasoning, "cli_version": e.cli_version,
                       "run": e.harness} for e in harness_entries(ev)],
    }
    gd.manifest.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for i, (name, sub) in enumerate(per_harness(ev)):
        try:
            create_run(LoadedConfig(sub, loaded.path), gd.run(name).root)
        except InputError as exc:
            raise under_harness(i, name, exc) from None
    return load_group(gd.root)


def load_group(root: Path) -> Group:
    """The cross-agent evaluation at ``root``, checked: a readable manifest whose runs exist."""
    gd = GroupDir(root.resolve())
    try:
        manifest = json.loads(gd.manifest.read_text(encoding="utf-8"))
        entries = manifest["harnesses"]
        runs = tuple(GroupRun(str(e["harness"]), e.get("model"), e.get("reasoning"), gd.run(str(e["run"])))
                     for e in entries)
        name = str(manifest["name"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RunDirError(f"{gd.manifest.name} cannot be read as a cross-agent evaluation: {exc}", file=str(gd.manifest),
                          fix="pass a folder made by `pluginbench run` from a config with runner.harnesses") from None
    for r in runs:
        if r.run.root.parent != gd.root or not r.run.is_run():
            raise RunDirError(f"the {r.harness} harness's run {r.run.root.name}/ is missing or not a run", file=str(r.run.root),
                              field=f"harnesses[{runs.index(r)}].run",
                              fix="the evaluation's folder was changed; restore it or start a new evaluation")
    return Group(gd, name, runs, manifest)


def is_group(path: Path) -> bool:
    """Whether ``path`` is a cross-agent evaluation's folder."""
    return GroupDir(path).is_group()


__all__ = ["GROUP_SCHEMA_VERSION", "Group", "GroupRun", "check_group_inputs", "create_group", "is_group", "load_group"]
