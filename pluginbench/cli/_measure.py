"""``measure``: add measures to a finished run from its saved submissions, as a named revision."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import RunDirError
from ._common import console, errors_to_exit_codes


@errors_to_exit_codes
def measure_command(
    run: Annotated[Path, typer.Argument(help="The run directory (a finished run).")],
    measurements: Annotated[str, typer.Option(
        "--measurements", help="The measures to add, comma-separated: any registered measure with a collector "
        "(e.g. cyclomatic,cognitive,dead_code,iterations or coverage).")],
    revision: Annotated[str, typer.Option("--revision", help="The new measurement revision's name (must not exist).")],
    coverage_profiles: Annotated[Path | None, typer.Option(
        "--coverage-profiles", help="A YAML coverage_profiles mapping (language or repository_url -> profile), "
        "added to the run's measurement_settings.coverage_profiles.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before collecting.")] = False,
) -> None:
    """Add measures to a finished run from its saved submissions, as measurement revision NAME.

    No model call; nothing is coded again. Every collector measure the run selects is collected again
    from the hash-checked saved submissions and agent traces, and each task's reference solution is
    measured again with the reference measures (lines, complexity, unused code). Owns run.lock. Refuses an active or unfinished run, an
    existing revision name, an unknown measure or one the run already measures, a measure no task
    can measure, a measure the run measures now that no longer passes its readiness check, and a
    revision that would lose an observation the selected revision has. The new revision is
    selected and the report rebuilt; earlier revisions stay in evidence and measurement_history."""
    from ..actors import plan_measure, run_measure

    plan = plan_measure(run, measurements, revision, coverage_profiles)
    console.print(f"measurement revision {revision}: adds {', '.join(plan.requested)}; collects "
                  f"{', '.join(plan.collect)} on {len(plan.attempts)} saved submission(s) of "
                  f"{len({t for _, t, _ in plan.attempts})} task(s); no model calls", markup=False)
    if not yes:
        if not sys.stdin.isatty():
            raise RunDirError(f"measurement revision {revision} runs collectors on {len(plan.attempts)} submission(s) "
                              "and no answer can be read", fix="pass --yes to start it without asking")
        if not typer.confirm("Start collecting?", default=False):
            raise typer.Exit(1)
    run_measure(plan, progress=lambda line: console.print(line, markup=False))
    console.print(f"measurement revision {revision} collected and selected; report: "
                  f"{plan.run_dir.report_dir / 'report.html'}", markup=False)
