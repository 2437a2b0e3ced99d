"""Creating a run directory, reading its saved settings back, and wiring its engine.

``check_inputs`` is the foreground check ``run`` and ``check`` share: every task id
loads, every treatment path exists and is safe, the sandbox policy allows the harness.
Any failure is an :class:`~pluginbench.errors.InputError` (exit 2) raised before
anything is written. ``create_run`` then freezes the settings (paths made absolute) in
``evaluation.json`` with its SHA-256 in ``evaluation-binding.json`` and records
``run.created`` with the plan.
"""

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from .. import __version__
from .. import measures as measure_registry
from ..cache import vanilla_cache_enabled
from ..config import (
    DatasetSource,
    Evaluation,
    LoadedConfig,
    frozen_builtins,
    llm_check_problem,
    load,
    parse_evaluation,
    validate,
)
from ..environments import backend_of, check_backend_config, host_top_level, workdir_conflict
from ..errors import ConfigError, OutputExistsError, RunDirError, TaskError, TreatmentError
from ..events import EventLog, FrozenPrice, RunCreated, RunLock, StoppingSpec
from ..harness_registry import harness_class, real_harness_names
from ..plan import arms_of, plan_slots
from ..projections import Ledger, RunState
from ..rundir import RunDir, refuse_lost_settings
from ..stats import Prices, bundled_prices, parse_prices
from ..tasks import (
    ENVIRONMENT,
    SOLUTION,
    VERIFIER,
    HarborTask,
    admit_contract,
    load_task,
    resolve_env,
    scan_tree,
)
from ..treatments import GUIDANCE_LIMIT, GUIDANCE_SEPARATOR
from ._remote_tasks import RemoteTasks, freeze_remote, resolve_remote
from ._writer import RunWriter


class ResolvedCli(NamedTuple):
    path: Path
    version: str
    source: str  # runner.cli_version or host
    #: what the host CLI reports now, when it differs from ``version`` (a resume whose coding
    #: images carry the frozen CLI accepts a host update)
    host_version: str | None = None


def resolve_cli(ev: Evaluation) -> ResolvedCli:
    """The agent CLI this run launches, at exactly the pinned version.

    The CLI found in the project's ``.tools/clis`` (installed by ``tools/install-clis.sh``)
    or on PATH, when it reports the pinned ``runner.cli_version`` (an omitted one records the
    host version); another pinned version is taken from the host CLI cache, installed there
    with npm when missing (``actors/_cli_cache.py``), and a refusal names
    ``runner.cli_version`` when it cannot be.
    """
    from ..probe import cli_version, find_cli
    from ._cli_cache import install_cli

    name = ev.runner.harness
    pinned = ev.runner.cli_version
    path = find_cli(name)
    version = cli_version(path) if path is not None else None
    if pinned is not None and pinned != version:
        pin = harness_class(name).cli
        assert pin is not None  # only CLI harnesses are resolved
        path = install_cli(pin, pinned)
        harness_class(name).check_cli(path, pinned)  # what the harness launches behind the path
        return ResolvedCli(path, pinned, "runner.cli_version")
    if path is None:
        raise ConfigError(
            f"the {name} CLI is not installed", field="runner.harness",
            fix="run tools/install-clis.sh (installs every harness's pinned CLI into .tools/clis)",
        )
    if version is None:
        raise ConfigError(f"{path} --version did not answer", field="runner.cli_version", fix="reinstall the CLI")
    harness_class(name).check_cli(path, version)  # what the harness launches behind the path
    return ResolvedCli(path, version, "runner.cli_version" if pinned else "host")


class SavedRun(NamedTuple):
    evaluation: Evaluation
    config_file: str | None
    saved: dict[str, Any]


def resolve_paths(loaded: LoadedConfig) -> Evaluation:
    """The evaluation with every path absolute (relative ones resolve against the config)."""
    ev = loaded.evaluation

    def r(p: str) -> str:
        # abspath, not resolve(): a symlinked input must stay visible so admission refuses it
        return os.path.abspath(loaded.resolve(p))

    tasks = ev.tasks
    if tasks.source is not None:
        tasks = msgspec.structs.replace(tasks, source=r(tasks.source))
    if tasks.registry is not None and "://" not in tasks.registry:  # a registry.json path
        tasks = msgspec.structs.replace(tasks, registry=r(tasks.registry))
    if isinstance(tasks.dataset, DatasetSource) and tasks.dataset.registry and "://" not in tasks.dataset.registry:
        tasks = msgspec.structs.replace(
            tasks, dataset=msgspec.structs.replace(tasks.dataset, registry=r(tasks.dataset.registry)))
    treatments = {
        name: msgspec.structs.replace(
            t, guidance=[r(p) for p in t.guidance], skills=[r(p) for p in t.skills], plugins=[r(p) for p in t.plugins]
        )
        for name, t in ev.treatments.items()
    }
    runner = ev.runner
    if runner.probe is not None:
        runner = msgspec.structs.replace(runner, probe=r(runner.probe))
    reviewer = ev.reviewer
    if reviewer is not None and reviewer.criteria is not None:
        reviewer = msgspec.structs.replace(reviewer, criteria=r(reviewer.criteria))
    prices = r(ev.prices) if ev.prices is not None else None
    return msgspec.structs.replace(ev, tasks=tasks, treatments=treatments, runner=runner, prices=prices,
                                   reviewer=reviewer)


def _unique_keys(path: Path) -> Any:
    """A JSON object hook refusing a key written twice (json keeps the last silently)."""
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ConfigError(f"the price table writes the key {key!r} twice; the second would silently replace the first",
                                  file=str(path), field=key, fix="write each key once")
            out[key] = value
        return out

    return hook


def read_prices(ev: Evaluation) -> Prices | None:
    """The config's price table (``prices``), validated; ``cost_ceiling`` needs a row for the model."""
    if ev.prices is None:
        return None
    path = Path(ev.prices)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique_keys(path))
    except OSError as exc:
        raise ConfigError(f"cannot read the price table {path}: {exc.strerror}", file=str(path), field="prices",
                          fix="point prices at a readable prices.json (see docs/results.md#prices)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"the price table is not valid JSON: {exc}", file=str(path), field="prices",
                          fix="write prices.json as JSON (see docs/results.md#prices)") from None
    prices = parse_prices(raw, str(path))
    model = ev.runner.model or ev.runner.harness
    if ev.cost_ceiling is not None and model not in prices.models:
        raise ConfigError(f"cost_ceiling needs a price for model {model!r}, and the price table has none",
                          file=str(path), field=f"models.{model}",
                          fix=f"add a row for {model} (input_per_million, cached_input_per_million, output_per_million)")
    return prices


def _check_path(raw: str, field: str, config: Path, *, want_dir: bool) -> Path:
    path = Path(raw)
    if path.is_symlink():
        raise TreatmentError(
            f"{path} is a symlink", file=str(config), field=field, fix="point to the real file or folder"
        )
    if not path.exists():
        raise TreatmentError(f"{path} does not exist", file=str(config), field=field, fix="fix the path (relative to the config file)")
    if want_dir and not path.is_dir():
        raise TreatmentError(f"{path} is not a folder", file=str(config), field=field, fix="give the folder")
    if not want_dir and not path.is_file():
        raise TreatmentError(f"{path} is not a regular file", file=str(config), field=field, fix="give a file")
    return path


def _task_folders(ev: Evaluation, config: Path, remote: RemoteTasks | None) -> list[tuple[str, Path, str]]:
    """``(task id, folder, config field)`` per task: ``tasks.source/<id>``, or each link's
    fetched folder (resolved here unless the caller already did)."""
    if ev.tasks.remote:
        if remote is None:
            remote = resolve_remote(ev, config)
        field = "tasks.urls" if ev.tasks.urls is not None else ev.tasks.dataset_field("ids")
        return [(pin.task_id, folder, f"{field}[{i}]") for i, (pin, folder) in enumerate(remote.tasks)]
    source = Path(ev.tasks.source or "")
    if not source.is_dir():
        raise ConfigError(
            f"the task source {source} is not a folder", file=str(config), field="tasks.source",
            fix="point tasks.source at a folder whose subfolders are Harbor tasks",
        )
    folders = []
    for i, task_id in enumerate(ev.tasks.ids or []):
        if not (source / task_id).is_dir():
            raise ConfigError(
                f"task '{task_id}' is not in {source}", file=str(config), field=f"tasks.ids[{i}]",
                fix="check the id; it must name a subfolder of tasks.source",
            )
        folders.append((task_id, source / task_id, f"tasks.ids[{i}]"))
    return folders


def _declared_name(folder: Path) -> str | None:
    """``[task] name`` of a task folder that :func:`load_task` already accepted."""
    import tomllib

    try:
        table = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8")).get("task")
    except (OSError, ValueError):
        return None
    name = table.get("name") if isinstance(table, dict) else None
    return name if isinstance(name, str) and name else None


def _check_text(path: Path, field: str, config: Path) -> None:
    """Guidance is delivered as CLAUDE.md/AGENTS.md: it must be UTF-8 text."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
        ok = b"\0" not in data
    except UnicodeDecodeError:
        ok = False
    if not ok:
        raise TreatmentError(
            f"{path} is not UTF-8 text (binary guidance would be delivered as CLAUDE.md/AGENTS.md)",
            file=str(config), field=field, fix="give a Markdown or text file saved as UTF-8",
        )


def _check_task_checks(ev: Evaluation, folder: Path, config: Path) -> None:
    """A task folder's ``checks.toml`` parses, names no evaluation check again, and its llm
    checks have a reviewer CLI to grade them (exit 2 naming the file and field)."""
    checks = measure_registry.task_checks(folder)  # TaskError naming checks.toml and the field
    if not checks or "checks" not in ev.measurements:
        return
    file = str(folder / measure_registry.TASK_CHECKS)
    declared = {c.get("name") for c in ev.measurement_settings.get("checks") or [] if isinstance(c, dict)}
    for i, c in enumerate(checks):
        if c.name in declared:
            raise TaskError(f"check name '{c.name}' is also declared in measurement_settings.checks", file=file,
                            field=f"checks[{i}].name", fix="rename one of them: each check:<name> is one column")
        if isinstance(c, measure_registry.LlmCheck) and (problem := llm_check_problem(ev)) is not None:
            raise TaskError(problem[0], file=file, field=f"checks[{i}].kind", fix=problem[1])


def check_inputs(
    ev: Evaluation, config: Path, remote: RemoteTasks | None = None
) -> dict[str, HarborTask]:
    """Foreground checks that need no model and start nothing. Returns the loaded tasks.

    ``tasks.urls`` links are resolved and fetched here (through the task cache) unless
    ``remote`` already holds them."""
    harness = harness_class(ev.runner.harness, file=str(config))
    check_backend_config(ev, config)
    vanilla_cache_enabled(ev)  # a PLUGINBENCH_VANILLA_CACHE that is neither off nor on is refused before a run folder exists
    if harness.cli is not None:  # the CLI's --version start overlaps the checks below (resolve_cli waits for it)
        from ..probe import find_cli, prefetch_version

        if (found := find_cli(ev.runner.harness)) is not None:
            prefetch_version(found)
    tasks: dict[str, HarborTask] = {}
    names: dict[str, str] = {}
    bwrap_top = host_top_level() if ev.environment.backend == "local" and effective_isolation(ev) == "bubblewrap" else None
    for task_id, folder, field in _task_folders(ev, config, remote):
        task = load_task(folder, task_id)
        if bwrap_top is not None and (conflict := workdir_conflict(task.workdir, bwrap_top)) is not None:
            raise TaskError(  # bubblewrap mounts these itself; found here, before a run folder exists, not in readiness
                f"task '{task_id}': {conflict}", file=str(folder / "task.toml"), field="environment.workdir",
                fix='give the starting source a folder of its own, e.g. workdir = "/app"')
        name = _declared_name(folder)
        if name is not None:
            if name in names:
                raise TaskError(
                    f"tasks '{names[name]}' and '{task_id}' declare the same [task] name '{name}'",
                    file=str(folder / "task.toml"), field="task.name",
                    fix="list each task once; two copies of one task would be counted as two tasks",
                )
            names[name] = task_id
        scan_tree(folder, context=f"task '{task_id}'")
        admit_contract(task)  # who applies model.patch; an ambiguous or unreviewed contract is refused here
        # refused names, unallowed or unset host variables: exit 2 here, before a run folder exists
        for table, env in ((ENVIRONMENT, task.environment_env), (SOLUTION, task.solution_env),
                           (VERIFIER, task.verifier_env)):
            resolve_env(env, table, allowed=ev.verifier_env_from_host, host=os.environ,
                        file=str(folder / "task.toml"), tid=task_id)
        if backend_of(ev, config).needs_workspace and not task.has_workspace:
            raise TaskError(
                f"task '{task_id}' has no workspace/ folder for the {ev.environment.backend} backend",
                file=str(folder / "workspace"),
                field=field, fix="put the starting source in workspace/, or use environment.backend: docker",
            )
        harness.check_task(task_id, folder)  # what this harness needs of each task
        _check_task_checks(ev, folder, config)
        if not task.has_solution:
            raise TaskError(
                f"task '{task_id}' has no solution/solve.sh", file=str(folder / "solution" / "solve.sh"),
                field=field,
                fix="add the reference solution (readiness runs it: oracle must pass before any agent is coded)",
            )
        tasks[task_id] = task
    for name, t in ev.treatments.items():
        total = 0
        for i, g in enumerate(t.guidance):
            path = _check_path(g, f"treatments.{name}.guidance[{i}]", config, want_dir=False)
            total += path.stat().st_size + (len(GUIDANCE_SEPARATOR) if i else 0)
            _check_text(path, f"treatments.{name}.guidance[{i}]", config)
        if total > GUIDANCE_LIMIT:
            raise TreatmentError(
                f"treatment '{name}' has {total} bytes of guidance, over the {GUIDANCE_LIMIT}-byte limit",
                file=str(config), field=f"treatments.{name}.guidance",
                fix="shorten the guidance or move reference material into a skill",
            )
        for kind in ("skills", "plugins"):
            for i, p in enumerate(getattr(t, kind)):
                path = _check_path(p, f"treatments.{name}.{kind}[{i}]", config, want_dir=True)
                if not scan_tree(path, context=f"{kind[:-1]} {path}", error=TreatmentError):
                    raise TreatmentError(
                        f"{kind[:-1]} folder {path} is empty", file=str(config), field=f"treatments.{name}.{kind}[{i}]",
                        fix=f"point it at the {kind[:-1]}'s folder (with its files), or remove it",
                    )
                if kind == "skills" and not (path / "SKILL.md").is_file():
                    raise TreatmentError(
                        f"skill {path} has no SKILL.md", file=str(path), field=f"treatments.{name}.skills[{i}]",
                        fix="a skill is a folder with SKILL.md at its root",
                    )
    read_prices(ev)
    stopping_price(ev, config)
    backend = backend_of(ev, config)
    if not backend.uses_images:
        limits = [k for k in ("container_cpus", "container_memory_mb") if getattr(ev.environment, k) is not None]
        if limits:
            raise ConfigError(
                f"environment.{limits[0]} limits containers; the {ev.environment.backend} backend runs none and would ignore it",
                file=str(config), field=f"environment.{limits[0]}",
                fix="remove it, or use a backend that runs containers (environment.backend: docker)",
            )
    backend.check_host(ev, config, tasks)
    if harness.cli is not None:
        from ..harnesses import tool_roots

        cli = resolve_cli(ev)
        backend.check_tools(ev, config, tool_roots(cli.path))  # e.g. a CLI folder local sandboxes cannot read
    if ev.runner.probe is not None:
        if not harness.real:
            real = real_harness_names()
            raise ConfigError(
                f"runner.probe applies to the {' and '.join(real)} harnesses only", file=str(config),
                field="runner.probe", fix=f"remove runner.probe, or use harness {' or '.join(real)}",
            )
        _check_path(ev.runner.probe, "runner.probe", config, want_dir=False)
        from ..probe import load_scenario

        load_scenario(Path(ev.runner.probe))
    from ..treatments import admit_shared

    admit_shared(ev.treatments)  # the shared admission rules hold under every harness, the simulated one too
    harness.admit_evaluation(ev, probe=ev.runner.probe is not None)  # treatments and host credentials
    if ev.reviewer is not None:
        from ._reviewer_setup import criteria_bytes, preflight

        criteria_bytes(ev, config)
        preflight(ev.reviewer.harness, ev.reviewer.model, ev.reviewer.reasoning,
                  probe=ev.runner.probe is not None, file=str(config))
    from ..cache import check_cache_root, resolve_cache_root

    _check_cache_usable(resolve_cache_root())
    check_cache_root(resolve_cache_root())
    return tasks


def _check_cache_usable(root: Path) -> None:
    """The cache root is (or can become) a writable folder: found here, before a run folder
    exists, not by the worker mid-run (XDG_CACHE_HOME a file, or under /proc). Folders this
    check made are removed again: a refusal after it leaves nothing behind, and whatever uses
    the cache makes it."""
    made = [p for p in (root, *root.parents) if not p.exists()]
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=root, prefix=".pluginbench-probe-")  # noqa: SIM115 - closed below
        probe.close()
        for folder in made:  # deepest first
            with contextlib.suppress(OSError):
                folder.rmdir()
    except OSError as exc:
        raise ConfigError(f"the cache root {root} cannot be used: {exc.strerror or exc}", file=str(exc.filename or root),
                          field="XDG_CACHE_HOME",
                          fix="point XDG_CACHE_HOME (or PLUGINBENCH_CACHE) at a writable folder") from None


def load_config(path: str | Path) -> LoadedConfig:
    """Read, parse and validate a config: the config layer's rules, then the environment
    block through the backend registry (an unknown backend is a ConfigError, exit 2)."""
    loaded = load(path)
    check_backend_config(loaded.evaluation, loaded.path)
    return loaded


def stopping_price(ev: Evaluation, file: Path | str | None = None) -> FrozenPrice | None:
    """The price row a sequential cost gate (``comparison.stopping.cost_factor``) prices with:
    the model's row of the config's ``prices`` table, else of the bundled table (the one the
    report falls back on); refused (exit 2) when that table has no row for the model."""
    st = ev.stopping
    if st is None or st.cost_factor is None:
        return None
    table, source = read_prices(ev), "run"
    if table is None:
        table, source = bundled_prices(), "bundled"
    model = ev.runner.model or ev.runner.harness
    row = table.models.get(model)
    if row is None:
        which = f"the price table {ev.prices}" if source == "run" else "the bundled price table"
        raise ConfigError(f"comparison.stopping.cost_factor prices every attempt, and {which} has no row for model "
                          f"{model!r}", file=str(file or ev.prices or "evaluation.yaml"),
                          field="comparison.stopping.cost_factor",
                          fix=f"set prices: to a dated prices.json with a row for {model} (see docs/results.md#prices), "
                              "or remove cost_factor")
    return FrozenPrice(model=model, input_per_million=row.input_per_million,
                       cached_input_per_million=row.cached_input_per_million,
                       output_per_million=row.output_per_million, as_of=table.as_of, source=source)


def stopping_spec(ev: Evaluation) -> StoppingSpec | None:
    """``comparison.stopping`` with the run's confidence level, as ``run.created`` freezes it:
    the cost gate's price row frozen with it, the error split over the gates (Bonferroni)."""
    st = ev.stopping
    if st is None:
        return None
    return StoppingSpec(level=ev.statistics.confidence_level, min_tasks=st.min_tasks, max_tasks=st.max_tasks,
                        smallest_effect=st.smallest_effect, token_factor=st.token_factor, ratio_bound=st.ratio_bound,
                        cost_factor=st.cost_factor, price=stopping_price(ev), multiplicity="bonferroni")


def effective_isolation(ev: Evaluation) -> str:
    """The run's isolation label, as its backend says (``bubblewrap``/``none`` on local)."""
    return backend_of(ev).isolation(ev)


def evaluation_bytes(ev: Evaluation, config_file: Path) -> bytes:
    data = frozen_builtins(ev)  # a fixed-size, single-harness run's frozen settings stay as they were
    data["saved"] = {"config_file": str(config_file), "pluginbench_version": __version__}
    return json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"


def output_exists(output: Path) -> OutputExistsError:
    """The refusal of an ``--output`` that already exists."""
    return OutputExistsError(
        f"the output folder {output} already exists", file=str(output), field="--output",
        fix="choose a new folder, or pass the run directory itself to resume it",
    )


def create_run(loaded: LoadedConfig, output: Path) -> RunDir:
    """Make ``output`` a new run: settings, binding, and ``run.created`` with the plan."""
    ev = resolve_paths(loaded)
    remote = resolve_remote(ev, loaded.path) if ev.tasks.remote else None  # resolved once, here
    check_inputs(ev, loaded.path, remote)
    from ..cache import check_output_outside, resolve_cache_root

    check_output_outside(output, resolve_cache_root())
    exists = output_exists(output)
    if output.exists():
        raise exists
    try:
        output.mkdir(parents=True)
    except FileExistsError:
        raise exists from None  # made by another process since the check
    except OSError as exc:
        raise RunDirError(
            f"cannot create the run directory {output}: {exc.strerror}", file=str(output), field="--output",
            fix="choose a writable folder on a filesystem with free space (not /proc, /sys or a read-only mount)",
        ) from None
    rd = RunDir(output.resolve())
    try:
        data = evaluation_bytes(ev, loaded.path)
        rd.evaluation.write_bytes(data)
        rd.binding.write_text(
            json.dumps({"evaluation_sha256": hashlib.sha256(data).hexdigest(), "file": "evaluation.json"}, indent=2) + "\n"
        )
        task_ids = ev.tasks.task_ids()
        if ev.prices is not None:  # the report and the ceiling read the run's own copy
            shutil.copyfile(ev.prices, rd.root / "prices.json")
        if remote is not None:
            freeze_remote(rd, remote)  # the run reads these pins and copies, never the links again
        cli = resolve_cli(ev) if harness_class(ev.runner.harness).cli is not None else None
        reviewer = None
        if ev.reviewer is not None:
            from ._reviewer_setup import criteria_bytes, frozen_spec, preflight

            criteria = criteria_bytes(ev, loaded.path)
            _, reviewer_version = preflight(ev.reviewer.harness, ev.reviewer.model, ev.reviewer.reasoning,
                                            probe=ev.runner.probe is not None, file=str(loaded.path))
            frozen = rd.evidence / "frozen"
            frozen.mkdir(parents=True, exist_ok=True)
            (frozen / "review-criteria.md").write_bytes(criteria)
            reviewer = frozen_spec(ev, criteria, reviewer_version)
        # run.created takes the Supervisor's own path (RunWriter: append, step, ledger) under
        # run.lock: one writer at a time, one way to write. Nothing follows from it until a
        # worker records run.started, so its (empty) commands are not needed here.
        with RunLock(rd.root), EventLog(rd.events) as log, closing(Ledger(rd.ledger)) as ledger:
            RunWriter(log, RunState(), ledger).record(
                RunCreated(
                    name=ev.name or loaded.path.parent.name,
                    evaluation_sha256=hashlib.sha256(data).hexdigest(),
                    harness=ev.runner.harness,
                    model=ev.runner.model or ev.runner.harness,
                    reasoning=ev.runner.reasoning,
                    backend=ev.environment.backend,
                    isolation=effective_isolation(ev),
                    tasks=task_ids,
                    arms=arms_of(ev),
                    repeats=ev.repeats,
                    jobs=ev.jobs,
                    seed=ev.seed,
                    timeout_seconds=ev.timeout_seconds,
                    slots=plan_slots(ev, task_ids),
                    simulated=harness_class(ev.runner.harness).simulated,
                    probe=ev.runner.probe is not None,
                    pluginbench_version=__version__,
                    harness_version=cli.version if cli else None,
                    cli_version_source=cli.source if cli else None,
                    reviewer=reviewer,
                    cost_ceiling=ev.cost_ceiling,
                    max_tokens_per_attempt=ev.runner.max_tokens_per_attempt,
                    stopping=stopping_spec(ev),
                )
            )
    except OSError as exc:
        shutil.rmtree(output, ignore_errors=True)
        raise RunDirError(
            f"cannot write the run directory {output}: {exc.strerror}", file=str(exc.filename or output),
            field="--output", fix="free space or choose another folder; nothing was kept",
        ) from None
    except sqlite3.Error as exc:  # the ledger (written with run.created) on a full or unwritable disk
        shutil.rmtree(output, ignore_errors=True)
        raise RunDirError(
            f"cannot write the run directory {output}: {exc}", file=str(rd.ledger),
            field="--output", fix="free space or choose another folder; nothing was kept",
        ) from None
    except BaseException:
        shutil.rmtree(output, ignore_errors=True)
        raise
    return rd


def load_saved(rd: RunDir) -> SavedRun:
    """The frozen settings of a run, checked against their hash binding."""
    if not rd.is_run():
        refuse_lost_settings(rd)
        raise RunDirError(
            f"{rd.root} is not a run directory", file=str(rd.root),
            fix="pass a folder made by `pluginbench run` (it holds evaluation.json and evaluation-binding.json)",
        )
    data = rd.evaluation.read_bytes()
    fix = "restore the run's evaluation-binding.json; PluginBench never edits it"
    try:
        binding = json.loads(rd.binding.read_text())
    except ValueError as exc:
        raise RunDirError(f"evaluation-binding.json does not parse: {exc}", file=str(rd.binding), fix=fix) from None
    if not isinstance(binding, dict):
        raise RunDirError("evaluation-binding.json is not a JSON object",
                          file=str(rd.binding), fix=fix)
    if binding.get("evaluation_sha256") != hashlib.sha256(data).hexdigest():
        raise RunDirError(
            "evaluation.json does not match its hash binding", file=str(rd.evaluation),
            field="evaluation_sha256", fix="the saved settings were edited; restore them or start a new run",
        )
    raw = json.loads(data)
    saved = raw.pop("saved", {})
    ev = parse_evaluation(raw, rd.evaluation)
    validate(ev, rd.evaluation)
    check_backend_config(ev, rd.evaluation)
    return SavedRun(ev, saved.get("config_file"), saved)


def check_created_binding(rd: RunDir, created: RunCreated, revised_sha256: str | None = None) -> None:
    """The saved settings are the ones ``run.created`` recorded, or the ones the selected
    measurement revision rewrote (``revised_sha256``, from ``measurement_revision.finished``):
    an evaluation.json edited and re-bound after the run began is refused (its plan would
    differ from the log's)."""
    digest = hashlib.sha256(rd.evaluation.read_bytes()).hexdigest()
    if digest != (revised_sha256 or created.evaluation_sha256):
        raise RunDirError(
            "evaluation.json is not the settings this run was created with (its hash differs from run.created)",
            file=str(rd.evaluation), field="evaluation_sha256",
            fix="restore the original evaluation.json and evaluation-binding.json, or start a new run with the new settings",
        )

