"""``run``, ``demo`` and the hidden ``worker``: start, resume and own runs.

No CLI framework here: :mod:`._run_commands` declares the three commands' options and
help for typer, and a plain ``run`` line reaches :func:`run` without typer
(:mod:`._run_plain`). A command's exit code leaves as ``SystemExit``."""

from __future__ import annotations

import datetime as _dt
import math
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._worker_start import (
    FROM_STDIN,
    EarlyWorker,
    WorkerStart,
    await_start,
    systemd_scope,
    take_early,
)
from ..config import is_cross_agent
from ..errors import LockHeldError, OutputExistsError, PluginBenchError, RunDirError
from ..events import check_not_moved, live_owner
from ..harness_registry import harness_class, is_registered
from ..projections import read_checked_log
from ..rundir import RunDir
from ._common import (
    errors_to_exit_codes,
    group_harnesses,
    print_failed_control,
    say,
    visible,
)
from ._progress import ForegroundProgress, log_line
from ._verdict_lines import print_verdicts


def _default_output(prefix: str = "") -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{prefix}{stamp}"


def _create(loaded: Any, output: Path | None, prefix: str = "") -> RunDir:
    """A new run at ``output``, or at ``runs/<prefix><timestamp>`` when none was given: two
    runs started in the same second get ``…-2``, ``…-3`` instead of one refusing the other's
    folder (an explicit ``--output`` that exists is still refused)."""
    from ..actors import create_run

    if output is not None:
        _refuse_output(loaded, output, dry_run=False)
        return create_run(loaded, output)
    base = _default_output(prefix)
    refuse_output_inside_inputs(loaded, base)
    for n in range(1, 100):
        candidate = base if n == 1 else base.with_name(f"{base.name}-{n}")
        if candidate.exists():
            continue
        try:
            return create_run(loaded, candidate)
        except OutputExistsError:
            continue  # another run took this name between the check and mkdir
    return create_run(loaded, base)  # 99 runs in one second: refused with the usual message


def _refuse_output(loaded: Any, output: Path, *, dry_run: bool) -> None:
    """Refuse an explicit ``--output`` through a symlink loop or inside the run's inputs; for a
    dry run (which makes nothing) also what making the run would refuse: a folder that exists,
    or one inside the cache root."""
    try:
        output.resolve()
    except RuntimeError:  # pathlib's word for a symlink loop
        raise RunDirError(f"--output {output} goes through a symlink loop", file=str(output), field="--output",
                          fix="remove the loop, or pass another folder") from None
    refuse_output_inside_inputs(loaded, output)
    if dry_run:
        from ..actors import output_exists
        from ..cache import check_output_outside, resolve_cache_root

        check_output_outside(output, resolve_cache_root())
        if output.exists():
            raise output_exists(output)


def _inputs(loaded: Any) -> list[tuple[str, Path]]:
    """The folders a run freezes from (each task folder, skill and plugin), with their field."""
    ev, out = loaded.evaluation, []
    if ev.tasks.source is not None:
        out += [(f"tasks.ids[{i}]", loaded.resolve(ev.tasks.source) / tid) for i, tid in enumerate(ev.tasks.ids or [])]
    for name, t in ev.treatments.items():
        for kind in ("skills", "plugins"):
            out += [(f"treatments.{name}.{kind}[{i}]", loaded.resolve(p)) for i, p in enumerate(getattr(t, kind))]
    return out


def refuse_output_inside_inputs(loaded: Any, output: Path) -> None:
    """A run folder inside a task or a delivered skill/plugin would be frozen into every
    arm's starting source or package (the run's own log included): refused."""
    try:
        out = output.resolve()
    except (OSError, RuntimeError):
        return  # create_run names the path's problem
    for field, folder in _inputs(loaded):
        try:
            root = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if out == root or root in out.parents:
            raise RunDirError(
                f"the run folder {out} would be inside {root}, which the run freezes as an input "
                "(its own files would be copied into every attempt)",
                file=str(loaded.path), field=field, fix="pass an --output outside the task and treatment folders",
            )
    for parent in out.parents:  # another run's evidence is that run's record, never a place for a new run
        if RunDir(parent).is_run():
            raise RunDirError(f"the run folder {out} would be inside the run folder {parent}", file=str(output),
                              field="--output", fix="pass an --output outside every existing run folder")


def _notify(enabled: bool, message: str) -> None:
    if not enabled:
        return
    tool = shutil.which("notify-send") or shutil.which("osascript")
    if tool is None:
        return
    try:
        if tool.endswith("osascript"):
            subprocess.run([tool, "-e", f'display notification "{message}" with title "PluginBench"'], timeout=5, check=False,
                           start_new_session=True)
        else:
            subprocess.run([tool, "PluginBench", message], timeout=5, check=False, start_new_session=True)
    except (OSError, subprocess.SubprocessError):
        pass  # best effort: a notification never changes a run's outcome


def _confirm(real: bool, attempts: int, yes: bool, generations: int = 0) -> None:
    if not real or yes:
        return
    what = f"{attempts} coding attempts" + (f" and {generations} guidance-generating sessions" if generations else "")
    if not sys.stdin.isatty():
        raise RunDirError(
            f"this run makes {what} with a real agent and no answer can be read",
            fix="pass --yes to start it without asking",
        )
    import typer  # only to ask: a run started with --yes never imports the CLI framework

    if not typer.confirm(f"Start {what} with a real agent?", default=False):
        raise SystemExit(1)


def _spawn_worker(rd: RunDir, notify: bool, cost_ceiling: float | None = None,
                  early: EarlyWorker | None = None) -> int:
    """Hand ``rd`` to a background worker (``early``, started at the entry point, or one
    started now the same way, see :mod:`pluginbench._worker_start`) and return its pid once
    it owns ``run.lock``. Until then its output is its own (an unlinked file, read back on
    failure): run.log belongs to whoever owns the run, and a worker that loses the lock race
    must not write its refusal into the winner's log (--adopt-run-log moves it later)."""
    from ..probe import VERSIONS_ENV, versions_env

    start = WorkerStart(rd.root, notify, cost_ceiling, versions_env()[VERSIONS_ENV])
    if early is not None and early.hand(start):
        return _await_owner(rd, early.process, early.output)
    fresh = EarlyWorker.start(systemd_scope())
    if fresh is None:
        raise PluginBenchError(f"cannot start the background worker ({sys.executable} -m pluginbench worker)")
    try:
        fresh.hand(start)  # a worker already gone is reported below, with its output
        return _await_owner(rd, fresh.process, fresh.output)
    finally:
        fresh.discard()


def _await_owner(rd: RunDir, child: subprocess.Popen[bytes], output: Any) -> int:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        owner = live_owner(rd.root)
        if owner is not None and owner.pid == child.pid:
            return child.pid
        if child.poll() is not None:
            owner = live_owner(rd.root)
            if owner is not None and owner.pid != child.pid:
                # Another `run` won the lock between our check and our worker's start.
                raise LockHeldError(
                    f"the run is owned by live pid {owner.pid} (started {owner.started_at}); "
                    "another `pluginbench run` started it first", file=str(rd.lock),
                    fix=f"watch it with: pluginbench status {rd.root} --watch, or stop it with: pluginbench stop {rd.root}",
                )
            if owner is None:
                output.seek(0)
                tail = output.read().decode(errors="replace")[-2000:]
                raise PluginBenchError(f"the background worker exited ({child.returncode}) before owning the run:\n{tail}")
        time.sleep(0.01)
    output.seek(0)
    tail = output.read().decode(errors="replace")[-2000:]
    raise PluginBenchError(f"the background worker did not take {rd.lock} within 60 s:\n{tail}")


def _notifying(observer: Callable[[Any, Any], None], rd: RunDir, notify: bool) -> Callable[[Any, Any], None]:
    """``observer`` plus a notification when preparation passed and coding starts."""

    def observe(state: Any, event: Any) -> None:
        observer(state, event)
        if notify and type(event).__name__ == "CodingStarted":
            _notify(True, f"run {rd.root.name}: readiness passed, coding started")

    return observe


def _run_foreground(rd: RunDir, *, notify: bool, cost_ceiling: float | None = None, verbose: bool = False) -> int:
    from ..actors import run_worker

    read_checked_log(rd)  # a missing, corrupt or damaged log is refused before any progress view starts
    with ForegroundProgress(rd, verbose=verbose) as progress:
        state = run_worker(rd.root, foreground=True, observer=_notifying(progress.observe, rd, notify),
                           cost_ceiling=cost_ceiling)
    return _finish(rd, state, notify)


def _finish(rd: RunDir, state: object, notify: bool) -> int:
    from ..projections import SEQUENTIAL, RunState

    assert isinstance(state, RunState)
    report = rd.report_dir / "report.html"
    pending = [a for a in state.live_attempts() if a.source_only is not None and a.source_only.status == "pending"]
    if pending:
        reasons = sorted({so.reason or "no reason recorded" for a in pending if (so := a.source_only) is not None})
        say(f"{len(pending)} source-only grade(s) pending ({'; '.join(reasons)}); "
            f"pluginbench run {shlex.quote(str(rd.root))} tries them again")
    if state.finished and state.failed is None:  # a finished run whose evidence changed since is failed
        print_verdicts(rd)
        say(("complete", "bold green"), f" report: {report}", highlight=True)
        _notify(notify, f"run {rd.root.name} finished")
        return 0
    if state.failed is not None:
        say(("failed", "bold red"), f": {state.failed}", err=True)
        for checked in state.readiness.values():
            print_failed_control(checked, rd.root)
        if not state.coding:
            say("preparation failed before any coding call; the inputs are frozen in the run, so repair "
                "them and start a new evaluation", err=True)
        else:
            say(f"fix the cause, then resume with: pluginbench run {shlex.quote(str(rd.root))}", err=True)
        _notify(notify, f"run {rd.root.name} failed")
        return 1
    if state.extension_record(SEQUENTIAL) is not None and report.exists():  # stopped because it was decided
        print_verdicts(rd)
        say(("decided", "bold green"), f": {state.stopped or ''}. report: {report}")
        _notify(notify, f"run {rd.root.name} decided")
        return 0
    say(("stopped", "yellow"), f": {state.stopped or ''}. Resume with: pluginbench run {shlex.quote(str(rd.root))}")
    _notify(notify, f"run {rd.root.name} stopped")
    return 0


@errors_to_exit_codes
def run(target: Path, *, output: Path | None = None, dry_run: bool = False, json_out: bool = False, yes: bool = False,
        foreground: bool = False, notify: bool = False, cost_ceiling: float | None = None,
        verbose: bool = False) -> None:
    """``pluginbench run`` with its parsed options (the help is ``_run_commands.run_command``'s):
    exits through ``SystemExit`` with the command's code, bad input as exit 2."""
    early = take_early()  # the background worker the entry point started (pluginbench._worker_start)
    try:
        _run_target(target, output=output, dry_run=dry_run, json_out=json_out, yes=yes, foreground=foreground,
                    notify=notify, cost_ceiling=cost_ceiling, verbose=verbose, early=early)
    finally:
        if early is not None:  # handed the run, or killed and reaped here
            early.discard()


def _run_target(target: Path, *, output: Path | None, dry_run: bool, json_out: bool, yes: bool, foreground: bool,
                notify: bool, cost_ceiling: float | None, verbose: bool, early: EarlyWorker | None) -> None:
    """``run`` (see :func:`run_command`); ``early`` is the worker started before the CLI's
    imports, handed the run when one starts in the background."""
    if not target.is_dir():  # a new run: its sandbox probe overlaps the imports and checks below
        from ..environments import prefetch_bwrap

        prefetch_bwrap()
    if cost_ceiling is not None and not (cost_ceiling > 0 and math.isfinite(cost_ceiling)):
        raise RunDirError(f"--cost-ceiling must be a positive number of dollars, got {cost_ceiling}",
                          field="--cost-ceiling", fix="pass e.g. --cost-ceiling 50")
    if json_out and not dry_run:
        raise RunDirError("--json applies only with --dry-run", field="--json",
                          fix="add --dry-run, or use pluginbench status --json")
    if target.is_dir() and group_harnesses(target) is not None:  # a cross-agent evaluation's folder
        from . import _cross

        _cross.resume(target, flags={"--output": output, "--cost-ceiling": cost_ceiling, "--dry-run": dry_run or None},
                      foreground=foreground, verbose=verbose)
        return
    if target.is_dir():
        rd = RunDir(target.resolve())
        if output is not None:
            raise RunDirError("--output applies only to a config", field="--output", fix="drop --output when resuming")
        contents, saved = resume_checks(rd)
        owner = live_owner(rd.root)
        if owner is not None:
            raise LockHeldError(
                f"the run is owned by live pid {owner.pid} (started {owner.started_at})", file=str(rd.lock),
                fix=f"watch it with: pluginbench status {rd.root} --watch, or stop it with: pluginbench stop {rd.root}",
            )
        if dry_run:
            from ..plan import plan_summary
            from ..projections import fold, load_prices
            from ._plan_lines import print_plan, recorded_cache

            state = fold(contents.events)
            summary = plan_summary(saved.evaluation, saved.evaluation.tasks.task_ids(), load_prices(rd.root)[0],
                                   cost_ceiling if cost_ceiling is not None else state.cost_ceiling)
            summary["network"] = {t: dict(net) for t, p in state.prepared_tasks.items() if (net := p.network)}
            summary["vanilla_cache"] = recorded_cache(state)
            from ..actors import source_only_todo

            summary["resume"] = {
                "source_only_replays": len(source_only_todo(state, next_worker=True)),
                "complete": state.count("complete"),
                "to_code": sum(1 for a in state.live_attempts() if a.state in ("pending", "interrupted") or (a.state == "running" and not a.captured)),
            }
            print_plan(summary, json_out)
            return
        _go(rd, foreground=foreground, notify=notify, cost_ceiling=cost_ceiling, verbose=verbose, early=early)
        return
    if cost_ceiling is not None:
        raise RunDirError("--cost-ceiling applies only when resuming a run directory", field="--cost-ceiling",
                          fix="set cost_ceiling in the config for a new run")
    from ..config import load as load_evaluation

    loaded = load_evaluation(target)  # the config layer's rules; the backend's below, as load_config does
    _from_config(loaded, output, dry_run=dry_run, json_out=json_out, yes=yes, foreground=foreground,
                 notify=notify, verbose=verbose, early=early)


def _from_config(loaded: Any, output: Path | None, *, dry_run: bool, json_out: bool, yes: bool, foreground: bool,
                 notify: bool, verbose: bool, early: EarlyWorker | None) -> None:
    """``run`` of the loaded config ``loaded``: a cross-agent evaluation, a dry run, or a new
    run (checks that need no model, the confirmation, the run folder, then its worker:
    ``early`` when one was started)."""
    _prefetch_cli_version(loaded.evaluation.runner.harness)  # its --version start overlaps the imports below
    from ..actors import check_inputs, resolve_paths
    from ..environments import check_backend_config

    check_backend_config(loaded.evaluation, loaded.path)
    if is_cross_agent(loaded.evaluation):  # runner.harnesses: one run per harness, compared within each
        from . import _cross

        if dry_run:
            _cross.print_cross_plan(_cross.plan_of_config(loaded), json_out)
            return
        if json_out:
            raise RunDirError("--json applies only with --dry-run", field="--json",
                              fix="add --dry-run, or use pluginbench status --json")
        _cross.start(loaded, output, yes=yes, foreground=foreground, verbose=verbose)
        return
    if dry_run:
        ev = resolve_paths(loaded)
        tasks = check_inputs(ev, loaded.path)
        if output is not None:
            _refuse_output(loaded, output, dry_run=True)  # what `run` would refuse, said by the dry run
        from ..actors import plan_decisions, read_prices
        from ..plan import network_plan, plan_summary
        from ._plan_lines import print_plan, sandbox_limits

        summary = plan_summary(ev, ev.tasks.task_ids(), read_prices(ev))
        summary["network"] = network_plan(ev, {t: (task.agent_network_mode, task.verifier_network_mode)
                                               for t, task in tasks.items()})
        summary["limits"] = sandbox_limits(ev, tasks)
        summary["vanilla_cache"] = plan_decisions(ev, tasks)
        from ._setup import measure_readiness, measures_with_checks, print_measure_readiness

        # The selected measures' readiness, as check and preparation decide it: a measure that
        # would stop the run is said here, before anything is paid, with check's exit code.
        measures = measure_readiness(ev, tasks) if measures_with_checks(ev) else None
        if measures is not None:
            summary["measurements"] = measures
        print_plan(summary, json_out)
        if measures is not None and not json_out:
            print_measure_readiness(measures)
        if measures is not None and measures.get("blocking"):
            if not json_out:
                say(f"dry run: {len(measures['blocking'])} measure problem(s) would stop the run; "
                    "fix them (above) or deselect the measure", err=True)
            raise SystemExit(1)
        return
    if json_out:
        raise RunDirError("--json applies only with --dry-run", field="--json", fix="add --dry-run, or use pluginbench status --json")
    ev = loaded.evaluation
    attempts = len(ev.tasks.task_ids()) * (1 + len(ev.treatments)) * ev.repeats
    paid = harness_class(ev.runner.harness).real and ev.runner.probe is None
    if paid:
        check_inputs(resolve_paths(loaded), loaded.path)  # a missing CLI or token is said before asking to pay
    generations = len(ev.tasks.task_ids()) * sum(1 for t in ev.treatments.values() if t.generate is not None)
    _confirm(paid, attempts, yes, generations)
    if foreground:  # this process codes: the worker's source hash is made while the run is created
        from ..actors import prefetch_launcher_source

        prefetch_launcher_source()
    rd = _create(loaded, output)
    _go(rd, foreground=foreground, notify=notify, verbose=verbose, early=early)


def _prefetch_cli_version(harness: str) -> None:
    """Ask ``harness``'s installed CLI for its ``--version`` in a thread now (a Codex start
    is about 0.1 s), so the imports and checks that follow overlap it; the version check
    that needs the answer finds it asked. Nothing for a harness without a CLI."""
    if not is_registered(harness) or harness_class(harness).cli is None:
        return
    from ..probe import find_cli, prefetch_version

    if (found := find_cli(harness)) is not None:
        prefetch_version(found)


def resume_checks(rd: RunDir) -> tuple[Any, Any]:
    """The checks before a run directory is resumed: its settings, log, binding, CLI and
    runtime as recorded, and that it was not moved. Returns the checked log and settings."""
    from ..actors import (
        check_created_binding,
        check_runtime,
        current_runtime,
        frozen_cli,
        host_cli_update,
        load_saved,
    )
    from ..events import MeasurementRevisionFinished, RunCreated

    saved = load_saved(rd)
    contents = read_checked_log(rd)  # refuse a missing, corrupt or damaged log here, not in the background
    from ..cache import vanilla_cache_enabled

    vanilla_cache_enabled(saved.evaluation)  # a bad PLUGINBENCH_VANILLA_CACHE, here and not in the worker's preparation
    created = next((e for e in contents.events if isinstance(e, RunCreated)), None)
    if created is not None:
        revised = [e.evaluation_sha256 for e in contents.events
                   if isinstance(e, MeasurementRevisionFinished) and e.selected]
        # settings edited and re-bound after creation (not by `pluginbench measure`) are refused
        check_created_binding(rd, created, revised[-1] if revised else None)
        # another PluginBench, or another host CLI where the host binary runs, is refused here
        cli = frozen_cli(saved.evaluation, created, rd.events)
        # a changed launcher source or engine platform is refused; the host CLI update is said
        check_runtime(contents.events, current_runtime(saved.evaluation, (cli.host_version or cli.version)
                                                       if cli is not None else None), rd.events,
                      saved.evaluation)
        update = host_cli_update(cli)
        if update is not None:
            print(visible(update))
    check_not_moved(rd.root)
    return contents, saved


def _go(rd: RunDir, *, foreground: bool, notify: bool, cost_ceiling: float | None = None, verbose: bool = False,
        early: EarlyWorker | None = None) -> None:
    if notify and not (shutil.which("notify-send") or shutil.which("osascript")):
        say("warning: --notify: neither notify-send nor osascript is on PATH; no notifications", err=True,
            highlight=True)
    if foreground:
        raise SystemExit(_run_foreground(rd, notify=notify, cost_ceiling=cost_ceiling, verbose=verbose))
    pid = _spawn_worker(rd, notify, cost_ceiling, early)
    say(f"run {rd.root} started in the background (pid {pid})")
    say(f"watch it:  pluginbench status {shlex.quote(str(rd.root))} --watch")


@errors_to_exit_codes
def worker(run_dir: Path, *, notify: bool = False, adopt_run_log: bool = False,
           cost_ceiling: float | None = None) -> None:
    """``pluginbench worker`` (see ``_run_commands.worker_command``)."""
    if str(run_dir) == FROM_STDIN:
        try:
            start = await_start(sys.stdin.buffer)
        except ValueError as exc:
            raise RunDirError(f"the run handed to this worker on stdin is malformed: {exc}",
                              fix="start runs with `pluginbench run`, which writes that line") from None
        if start is None:  # `run` ended without a run for this worker: nothing was written
            raise SystemExit(0)
        run_dir, notify, cost_ceiling = start.run_dir, start.notify, start.cost_ceiling
    from ..actors import run_worker

    if group_harnesses(run_dir) is not None:  # a cross-agent evaluation: each harness's run, then the matrix
        from . import _cross

        raise SystemExit(_cross.worker(run_dir.resolve()))
    rd = RunDir(run_dir.resolve())
    state = run_worker(rd.root, observer=_notifying(log_line, rd, notify), cost_ceiling=cost_ceiling,
                       on_owned=(lambda: _adopt_run_log(rd)) if adopt_run_log else None)
    raise SystemExit(_finish(rd, state, notify))


def _adopt_run_log(rd: RunDir) -> None:
    """Point this process's stdout and stderr at ``run.log`` (appending): called only
    while holding ``run.lock``, so only the owner of a run ever writes its log."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(rd.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
    finally:
        os.close(fd)


@errors_to_exit_codes
def demo(*, output: Path | None = None, verbose: bool = False) -> None:
    """``pluginbench demo`` (see ``_run_commands.demo_command``)."""
    config = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "evaluation.yaml"
    if not config.is_file():
        raise RunDirError(
            "the bundled example is missing", file=str(config),
            fix="run PluginBench from a source checkout (pip install -e .)",
        )
    from ..actors import load_config

    loaded = load_config(config)
    rd = _create(loaded, output, prefix="demo-")
    say(f"demo run: {rd.root}")
    raise SystemExit(_run_foreground(rd, notify=False, verbose=verbose))
