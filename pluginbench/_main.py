"""The ``pluginbench`` console entry point.

Two command lines skip the CLI framework (typer), whose import and command building cost
more than their own work:

* ``status RUN --json``, what dashboards and scripts poll, often, even on a large run;
* a ``run`` line made only of ``run``'s own options (:mod:`pluginbench.cli._run_plain`),
  where typer was a tenth of a one-attempt run's fixed cost.

Everything else, and any error or unusual line in those two, goes through the typer app,
so messages and exit codes stay the same. A background ``run`` starts its worker here
first (:mod:`pluginbench._worker_start`). The commands that own a run end without the
interpreter's teardown (:mod:`pluginbench._exit`).
"""

from __future__ import annotations

import sys

from ._exit import QUICK_EXIT_COMMANDS, exit_quickly


def _fast_status_json(argv: list[str]) -> bool:
    if len(argv) != 3 or argv[0] != "status" or "--json" not in argv[1:]:
        return False
    run = next(a for a in argv[1:] if a != "--json")
    if run.startswith("-"):
        return False
    from pathlib import Path

    from .rundir import RunDir

    rd = RunDir(Path(run).resolve())
    if not rd.is_run():
        return False
    from .errors import PluginBenchError
    from .status import write_status_json

    try:
        write_status_json(rd.root, sys.stdout.buffer)  # writes nothing before it knows the answer
    except PluginBenchError:
        return False  # let the full CLI print the error and choose the exit code
    sys.stdout.flush()
    return True


def main() -> None:
    from ._gc import pause_startup

    pause_startup()  # the CLI (or the long-running command) turns it back on: _gc.end_startup
    if _fast_status_json(sys.argv[1:]):
        return
    from ._worker_start import start_early

    start_early(sys.argv[1:])  # a background run's worker imports while the CLI below does
    from .cli import main as cli_main

    if not (argv := sys.argv[1:]) or argv[0] not in QUICK_EXIT_COMMANDS:
        cli_main()
        return
    try:
        if argv[0] == "run":
            from .cli import run_plain

            run_plain(argv[1:])  # a plain line of run's options ends here, without typer
        cli_main()
    except SystemExit as exc:
        exit_quickly(exc)  # a run keeps nothing for the interpreter's teardown (pluginbench._exit)
