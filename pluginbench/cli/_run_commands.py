"""``run``, ``demo`` and the hidden ``worker`` as typer commands: their options and help.

Each hands its parsed options to :mod:`._run`, which does the work without typer. The
options of ``run`` are also what :mod:`._run_plain` parses without typer; a test holds the
two to the same table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _run


def run_command(
    target: Annotated[Path, typer.Argument(help="evaluation.yaml/.json to start a run, or a run directory (or a cross-agent evaluation's folder) to resume it.")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="The new run directory (default runs/<timestamp>). Only with a config.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the whole plan (attempts, order, arms, budgets) and start nothing.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="With --dry-run: the full plan as JSON.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before starting paid coding attempts.")] = False,
    foreground: Annotated[bool, typer.Option("--foreground", help="Run in this terminal with a progress view instead of in the background.")] = False,
    notify: Annotated[bool, typer.Option("--notify", help="Desktop notification when coding starts and when the run ends (best effort).")] = False,
    cost_ceiling: Annotated[float | None, typer.Option("--cost-ceiling", help="Resuming only: the run's new dollar ceiling (recorded in run.started), e.g. after a cost_ceiling stop.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="With --foreground: also print each task's readiness and vanilla-cache lookup and each attempt's cache line (run.log always has them).")] = False,
) -> None:
    """Start an evaluation from a config, or resume a run directory.

    Checks everything that needs no model in the foreground, then starts the run in the
    background and returns once the background worker owns run.lock, printing the
    `status --watch` command. Every setting lives in the config; a run directory
    resumes with its saved settings. Completed attempts are never coded again.

    A config with runner.harnesses (a cross-agent evaluation) becomes a folder with one
    run per harness, run one after another and compared within each harness only; pass
    that folder to resume it (see docs/cross-agent.md).
    """
    _run.run(target, output=output, dry_run=dry_run, json_out=json_out, yes=yes, foreground=foreground,
             notify=notify, cost_ceiling=cost_ceiling, verbose=verbose)


def worker_command(
    run_dir: Annotated[Path, typer.Argument(help="The run directory to own.")],
    notify: Annotated[bool, typer.Option("--notify")] = False,
    adopt_run_log: Annotated[bool, typer.Option("--adopt-run-log", help="Send output to run.log once the run is owned.")] = False,
    cost_ceiling: Annotated[float | None, typer.Option("--cost-ceiling")] = None,
) -> None:
    """Own a run in this process until it ends (started by `run` in a new session; with
    `-` for the run directory, `run` hands the run over on stdin once it exists)."""
    _run.worker(run_dir, notify=notify, adopt_run_log=adopt_run_log, cost_ceiling=cost_ceiling)


def demo_command(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Run directory (default runs/demo-<timestamp>).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also print each task's readiness and vanilla-cache lookup and each attempt's cache line.")] = False,
) -> None:
    """Run the bundled quickstart evaluation in the foreground and print where the report is.

    Six small Python tasks, vanilla plus one guidance treatment, three repeats each,
    coded by PluginBench's deterministic simulated agent on the local backend. It
    spends nothing and needs no credentials; the report says prominently that the
    agent was simulated.
    """
    _run.demo(output=output, verbose=verbose)
