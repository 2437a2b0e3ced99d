"""The worker: take ``run.lock``, recover the log, and drive the Supervisor to an end.

Used both by the background process (``pluginbench worker``, started by ``run`` in a
new session) and by ``run --foreground``/``demo`` in the terminal. The lock is taken
before the log is opened, so there is never a second writer; it is released when the
process ends, however it ends.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio

from .._gc import end_startup
from .._parsing import visible
from ..config import Evaluation
from ..errors import PluginBenchError
from ..events import EventLog, RunCreated, RunFailed, RunLock
from ..harness_registry import harness_class
from ..projections import SEQUENTIAL, Ledger, RunState, fold, read_checked_log
from ..rundir import RunDir
from ._actor_ext import SetupContext
from ._context import Engine, Outbox, cache_root
from ._extensions import setup_extensions
from ._frozen_versions import frozen_cli
from ._remote_tasks import task_sources as task_sources_of
from ._runfiles import ResolvedCli, check_created_binding, load_saved, resolve_cli
from ._runtime import check_runtime, current_runtime, prefetch_launcher_source
from ._supervisor import Observer, Supervisor
from ._sweep import run_temp, sweep_run


def _harness(ev: Evaluation, probe_base_url: str | None, created: RunCreated | None = None,
             events_file: Path | None = None) -> tuple[Any, ResolvedCli | None]:
    cls = harness_class(ev.runner.harness)
    if cls.cli is None:
        return cls.for_run(ev, cli_path=None, cli_version=None, probe_base_url=probe_base_url), None
    # A run launches the CLI version frozen in run.created (refusing a host that differs where
    # the host binary runs; accepting it where the coding images carry the frozen one),
    # never the one the host happens to report now.
    cli = (frozen_cli(ev, created, events_file or Path("events.jsonl")) if created is not None else None) or resolve_cli(ev)
    from ..environments import backend_of

    # where the pinned install runs inside the backend's sandboxes (a coding image carries it)
    cli_path: Any = backend_of(ev).cli_path(cls.cli, cli.path)
    return cls.for_run(ev, cli_path=cli_path, cli_version=cli.version, probe_base_url=probe_base_url), cli


def _environment(ev: Evaluation, run_id: str) -> Any:
    from ..environments import backend_of

    return backend_of(ev).make(ev, run_id)


@contextlib.contextmanager
def _probe(ev: Evaluation, rd: RunDir) -> Iterator[str | None]:
    """The loopback model server of a probe run, with its receipt saved as evidence:
    every request it answered (appended per worker) and the usage it served."""
    if ev.runner.probe is None:
        yield None
        return

    from ..probe import ProbeServer, load_scenario

    folder = rd.evidence / "probe"
    folder.mkdir(parents=True, exist_ok=True)
    # written as each request settles (appended per process), so a killed worker keeps its receipt
    with ProbeServer(load_scenario(Path(ev.runner.probe)), log=folder / "requests.jsonl", log_bodies=False) as server:
        try:
            yield server.base_url
        finally:
            server.wait_idle()


def build_engine(rd: RunDir, ev: Evaluation, probe_base_url: str | None, created: RunCreated | None = None) -> Engine:
    task_sources = task_sources_of(rd, ev)  # links: the run's own pinned copies, never resolved again
    hidden = {rd.root, cache_root(), *(p.parent.resolve() for p in task_sources.values())}
    for t in ev.treatments.values():
        for p in (*t.guidance, *t.skills, *t.plugins):
            hidden.add(Path(p).resolve().parent if p in t.guidance else Path(p).resolve())
    extensions = setup_extensions(SetupContext(ev, created, probe_base_url, tuple(sorted(hidden))))
    harness, cli = _harness(ev, probe_base_url, created, rd.events)
    engine = Engine(
        run_dir=rd,
        run_id=rd.run_id,
        evaluation=ev,
        environment=_environment(ev, rd.run_id),
        harness=harness,
        task_sources=task_sources,
        outbox=Outbox(None),  # type: ignore[arg-type]  # the Supervisor wires its inbox in
        hidden=tuple(sorted(hidden)),
        extensions=extensions,
    )
    engine.runtime = current_runtime(ev, (cli.host_version or cli.version) if cli is not None else None)
    if cli is not None and cli.path.parent.name == ".bin" and cli.path.parent.parent.name == "node_modules":
        engine.cli_root = cli.path.parents[2]
    return engine


def run_worker(
    run_dir: Path,
    *,
    foreground: bool = False,
    observer: Observer | None = None,
    handle_signals: bool = True,
    cost_ceiling: float | None = None,
    on_owned: Callable[[], None] | None = None,
) -> RunState:
    """Own the run until it finishes, stops or fails; return the final state.

    ``cost_ceiling`` replaces the run's dollar ceiling from this worker on (``run.started``).
    ``on_owned`` runs once ``run.lock`` is held, before anything else is written."""
    prefetch_launcher_source()  # hashed while the run is loaded, locked and recovered
    rd = RunDir(run_dir.resolve())
    saved = load_saved(rd)
    with RunLock(rd.root):
        if on_owned is not None:
            on_owned()
        read_checked_log(rd)  # a lost, emptied or damaged log is refused, never recreated or recoded
        swept = sweep_run(rd)
        if swept:
            print(visible(f"removed {len(swept)} temporary file(s) left by a process that ended: {', '.join(swept)}"),
                  flush=True)
        with EventLog(rd.events) as log, run_temp(rd):
            return _own(rd, saved, log, foreground=foreground, observer=observer, handle_signals=handle_signals,
                        cost_ceiling=cost_ceiling)


def _own(rd: RunDir, saved: Any, log: EventLog, *, foreground: bool, observer: Observer | None,
         handle_signals: bool, cost_ceiling: float | None = None) -> RunState:
    state = fold(log.recovered)
    if state.created is not None:
        check_created_binding(rd, state.created, state.revised_evaluation_sha256)
    abandoned = [r.revision for r in state.measurement_revisions.values() if not r.finished]
    try:
        final = _supervise(rd, saved, log, state, foreground=foreground, observer=observer,
                           handle_signals=handle_signals, cost_ceiling=cost_ceiling)
        if abandoned and final.finished:
            log.close()  # the measurement writes through its own writer, under this lock
            from ._measure_again import measure_again  # only for a run with an abandoned revision

            measure_again(rd, abandoned)
            final = fold(read_checked_log(rd).events)
        if final.stopped is not None and final.extension_record(SEQUENTIAL) is not None:
            # decided and stopped: the report says so now (as `pluginbench report` would build it)
            from ..projections import build_report

            build_report(rd.root)
        return final
    except BaseException as exc:
        full = disk_full(exc)
        if full is not None:
            raise _record_disk_full(rd, log, state, full) from None
        io = _io_failure(exc)
        if io is None:
            raise
        raise _record_io_failure(rd, log, state, io) from None


def _supervise(rd: RunDir, saved: Any, log: EventLog, state: RunState, *, foreground: bool,
               observer: Observer | None, handle_signals: bool, cost_ceiling: float | None = None) -> RunState:
    ledger = Ledger(rd.ledger)  # the Supervisor's writer rebuilds it first when it lags the log
    try:
        resumed = state.workers > 0
        with _probe(saved.evaluation, rd) as probe_url:
            engine = build_engine(rd, saved.evaluation, probe_url, state.created)
            if resumed and engine.runtime is not None:
                # a changed launcher or engine platform is refused; a recorded-only change is said
                engine.accepted = check_runtime(log.recovered, engine.runtime, rd.events, saved.evaluation)
                for change in engine.accepted:
                    print(visible(f"accepted a runtime change since the run last coded: {change}"), flush=True)
            supervisor = Supervisor(
                engine, log, ledger, state, observer=observer, handle_signals=handle_signals,
                cost_ceiling=cost_ceiling,
            )

            async def main() -> RunState:
                # A cluster backend says which worker nodes take attempts (and their jobs) now.
                find = getattr(engine.environment, "cluster_nodes", None)
                if find is not None:
                    engine.cluster_nodes = await anyio.to_thread.run_sync(find)
                return await supervisor.run(resumed=resumed, foreground=foreground)

            end_startup()  # the collector, paused while the command started (pluginbench._gc)
            return anyio.run(main, backend="asyncio")
    finally:
        ledger.close()


def disk_full(exc: BaseException) -> str | None:
    """The path a "no space left" error was writing (``"?"`` when unnamed), searched
    through exception groups and causes; ``None`` when the failure is something else."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return str(e.filename) if e.filename else "?"
        if isinstance(e, sqlite3.Error) and "database or disk is full" in str(e):
            return "evidence/ledger.sqlite"
        if isinstance(e, BaseExceptionGroup):
            stack.extend(e.exceptions)
        for nxt in (e.__cause__, e.__context__):
            if nxt is not None:
                stack.append(nxt)
    return None


def _mount_of(path: Path) -> Path:
    p = path.resolve()
    while not os.path.ismount(p) and p != p.parent:
        p = p.parent
    return p


def _append_failed(log: EventLog, state: RunState, cause: str) -> bool:
    """Append ``run.failed`` unless the run already failed; whether the log has it now.

    The one write outside the Supervisor's writer (documented and tested): the disk is full
    or a file of the run cannot be written, so only the log gets run.failed; the ledger,
    behind by then, is rebuilt by the next worker."""
    if state.failed is not None:
        return True
    try:
        state.apply(log.append(RunFailed(error=cause)))
    except OSError:
        return False
    return True


def _io_failure(exc: BaseException) -> OSError | None:
    """The file-system error (a read-only or unwritable run folder, a vanished file) that
    ended the worker, searched through exception groups and causes; None for anything else
    (a bug keeps its traceback)."""
    seen: set[int] = set()
    stack = [exc]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.EIO):
            return e
        if isinstance(e, BaseExceptionGroup):
            stack.extend(e.exceptions)
        for nxt in (e.__cause__, e.__context__):
            if nxt is not None:
                stack.append(nxt)
    return None


def _record_io_failure(rd: RunDir, log: EventLog, state: RunState, exc: OSError) -> PluginBenchError:
    """Record ``run.failed`` for a file the worker could not write or read (when the log
    still takes a line) and say which file and how to go on."""
    where = f" {exc.filename}" if exc.filename else ""
    cause = f"cannot use{where}: {exc.strerror or exc}"
    recorded = _append_failed(log, state, cause)
    return PluginBenchError(
        f"the worker stopped: {cause}; "
        + ("the failure is recorded in events.jsonl" if recorded else "not even run.failed could be written to events.jsonl")
        + "; every complete event is kept. Make the run folder writable (or restore the file), then resume with: "
        f"pluginbench run {shlex.quote(str(rd.root))}"
    )


def _record_disk_full(rd: RunDir, log: EventLog, state: RunState, writing: str) -> PluginBenchError:
    """Record ``run.failed`` for a full disk when the log still takes a line, and say so."""
    mount = _mount_of(rd.root)
    cause = f"no space left on {mount} (while writing {writing})"
    recorded = _append_failed(log, state, cause)
    return PluginBenchError(
        f"{cause}; "
        + ("the failure is recorded in events.jsonl" if recorded else "not even run.failed fit in events.jsonl")
        + f"; every complete event is kept. Free space on {mount}, then resume with: "
        f"pluginbench run {shlex.quote(str(rd.root))}"
    )
