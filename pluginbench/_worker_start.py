"""The background worker of ``run``, started before the CLI is even imported.

``pluginbench run`` (in the background, the default) checks its inputs, creates or checks
the run folder, then hands the run to a worker process in a new session and returns once
that worker owns ``run.lock``. Started only then, the worker's interpreter start and
imports (about 0.4 s) came after all of the foreground's own work. So the console entry
point (:mod:`pluginbench._main`) starts it first, before the CLI's own imports, whenever
the command line asks for a background ``run`` (:func:`start_early`): ``pluginbench
worker -`` imports what owning a run needs, then waits on its stdin for one line naming
the run (:func:`await_start`), while the foreground imports, checks and creates the run
on the other core.

Nothing happens in the waiting worker before that line: it holds no lock, opens no run
folder, writes no file and calls no model. ``run`` takes the handle (:func:`take_early`)
and hands it the run only once the run exists (:meth:`EarlyWorker.hand`); on every other
way out (bad input with exit 2, a dry run, a declined confirmation, a cross-agent config,
a usage error, an error) the worker is killed and reaped before the process exits
(:meth:`EarlyWorker.discard`, also at exit). A foreground killed with ``-9`` closes the
pipe: the waiting worker reads end-of-file and exits 0.
"""

import atexit
import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, NamedTuple

#: the run-directory argument that makes ``pluginbench worker`` wait for its run on stdin
FROM_STDIN = "-"
#: ``run`` options after which no background worker is started
_NO_WORKER = frozenset({"--foreground", "--dry-run", "--json", "--help"})
#: the worker :func:`start_early` started, until ``run`` takes it
_early: "EarlyWorker | None" = None


class WorkerStart(NamedTuple):
    """What the foreground hands the early worker: the run and ``worker``'s own options."""

    run_dir: Path
    notify: bool
    cost_ceiling: float | None
    #: the CLI versions the foreground asked (``probe.VERSIONS_ENV``'s value), never asked again
    versions: str


def encode_start(start: WorkerStart) -> bytes:
    """The one line :func:`read_start` reads back."""
    return (json.dumps({"run_dir": str(start.run_dir), "notify": start.notify,
                        "cost_ceiling": start.cost_ceiling, "versions": start.versions},
                       separators=(",", ":")) + "\n").encode()


def read_start(line: bytes) -> WorkerStart | None:
    """The start line, or ``None`` for end-of-file (the foreground ended without a run).
    A malformed line is a ValueError naming what is wrong (only ``run`` writes it)."""
    if not line:
        return None
    data: Any = json.loads(line)
    if not isinstance(data, dict) or set(data) != {"run_dir", "notify", "cost_ceiling", "versions"}:
        raise ValueError("the start line must be an object with run_dir, notify, cost_ceiling and versions")
    run_dir, notify, ceiling, versions = data["run_dir"], data["notify"], data["cost_ceiling"], data["versions"]
    if not isinstance(run_dir, str) or not os.path.isabs(run_dir):
        raise ValueError("run_dir must be an absolute path")
    if not isinstance(notify, bool) or not isinstance(versions, str):
        raise ValueError("notify must be a boolean and versions a string")
    if ceiling is not None and (isinstance(ceiling, bool) or not isinstance(ceiling, int | float)
                                or not (math.isfinite(ceiling) and ceiling > 0)):
        raise ValueError("cost_ceiling must be null or a positive number")
    return WorkerStart(Path(run_dir), notify, None if ceiling is None else float(ceiling), versions)


def await_start(stdin: IO[bytes]) -> WorkerStart | None:
    """In the early worker: import what owning a run needs, then read the start line from
    ``stdin`` and point file descriptor 0 at ``/dev/null`` (nothing the run starts inherits
    the pipe). ``None``: the foreground ended without handing a run.

    While it waits it also hashes the launcher source and probes bubblewrap in threads
    (both read-only; what any worker does first), so the run finds them answered."""
    # the package import brings the rest of what this early start is for
    from .actors import prefetch_launcher_source
    from .environments import prefetch_bwrap
    from .probe import adopt_versions

    prefetch_launcher_source()
    prefetch_bwrap()
    warm_engine()

    start = read_start(stdin.readline())
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
    finally:
        os.close(devnull)
    if start is not None:
        adopt_versions(start.versions)
    return start


def warm_engine() -> None:
    """Import the engine every run's worker loads (the Supervisor and its actors, the
    event loop's backend) while the foreground is still checking and creating the run,
    on the other core; otherwise they came after the hand-over, before the run could
    start. Importing runs no code of a run and touches no run folder."""
    import anyio._backends._asyncio  # noqa: F401 - the backend ``anyio.run`` loads on its first call

    from .actors import run_worker  # noqa: F401 - the lazy export imports the Supervisor and its actors


class EarlyWorker:
    """The foreground's handle on a worker started before its run exists."""

    def __init__(self, process: subprocess.Popen[bytes], output: IO[bytes]) -> None:
        self.process = process
        #: the worker's own output until it owns the run (read back when it fails to)
        self.output = output
        self.handed = False

    @classmethod
    def start(cls, scope: list[str]) -> "EarlyWorker | None":
        """Start ``pluginbench worker -`` (inside ``scope``, e.g. a systemd user scope) in
        a new session; None when it cannot be started (the run then starts its worker
        the usual way)."""
        try:  # no temporary folder to write to: no early worker (run then says what is wrong)
            output = tempfile.TemporaryFile()  # noqa: SIM115 - kept for the hand-over, closed by discard()
        except OSError:
            return None
        try:
            process = subprocess.Popen(
                # -P: ``-m`` would put the working folder first on the import path, where a
                # ``pluginbench/`` folder of the user's (say, of configs) would stand in for the package
                [*scope, sys.executable, "-P", "-m", "pluginbench", "worker", FROM_STDIN, "--adopt-run-log"],
                stdin=subprocess.PIPE, stdout=output, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True,
            )
        except OSError:
            output.close()
            return None
        return cls(process, output)

    def hand(self, start: WorkerStart) -> bool:
        """Give the waiting worker its run; whether it took the line (False: it is gone,
        the caller starts a worker the usual way)."""
        stdin = self.process.stdin
        if stdin is None or self.process.poll() is not None:
            return False
        try:
            stdin.write(encode_start(start))
            stdin.close()
        except OSError:  # a broken pipe: the worker is gone
            return False
        self.handed = True
        return True

    def discard(self) -> None:
        """Unless it was handed a run: kill the waiting worker and reap it. Idempotent."""
        if not self.handed:
            with _quiet():
                if self.process.stdin is not None:
                    self.process.stdin.close()
            if self.process.poll() is None:
                with _quiet():
                    os.killpg(self.process.pid, 9)  # its own session: anything it started goes too
            with _quiet():
                self.process.wait(timeout=10)
        self.output.close()


def _quiet() -> contextlib.suppress:
    """The OS errors of cleaning up a process that may be gone already, suppressed."""
    return contextlib.suppress(OSError, subprocess.SubprocessError)


def systemd_scope() -> list[str]:
    """``systemd-run --user --scope`` when a user manager answers, so the worker survives
    the launcher's cgroup; nothing otherwise (most containers, macOS)."""
    if not shutil.which("systemd-run") or not os.environ.get("XDG_RUNTIME_DIR"):
        return []
    try:
        ok = subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True, timeout=3,
                            start_new_session=True).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return ["systemd-run", "--user", "--scope", "--quiet", "--collect"] if ok else []


def start_early(argv: list[str]) -> None:
    """At the console entry: start the background worker now when ``argv`` (without the
    program name) is a ``run`` that will want one (no ``--foreground``, ``--dry-run``,
    ``--json`` or ``--help``); ``run`` takes it with :func:`take_early`, and one it never
    took is killed at exit."""
    global _early
    if not argv or argv[0] != "run" or _NO_WORKER.intersection(argv[1:]) or _early is not None:
        return
    _early = EarlyWorker.start(systemd_scope())
    if _early is not None:
        atexit.register(_early.discard)


def take_early() -> EarlyWorker | None:
    """The worker :func:`start_early` started for this command, if any (then no longer held here)."""
    global _early
    early, _early = _early, None
    return early
