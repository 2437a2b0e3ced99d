"""``review``: review every submission of a finished run again, as a named revision."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import RunDirError
from ._common import console, errors_to_exit_codes


@errors_to_exit_codes
def review_command(
    run: Annotated[Path, typer.Argument(help="The run directory (a finished run with a reviewer).")],
    revision: Annotated[str, typer.Option("--revision", help="The new review revision's name (must not exist).")],
    reviewer_harness: Annotated[str | None, typer.Option(
        "--reviewer-harness", help="Review with another reviewer: claude or codex (give model and effort too).")] = None,
    reviewer_model: Annotated[str | None, typer.Option(
        "--reviewer-model", help="Its exact model id (an exact claude-* id for Claude).")] = None,
    reviewer_effort: Annotated[str | None, typer.Option("--reviewer-effort", help="Its effort.")] = None,
    no_select: Annotated[bool, typer.Option(
        "--no-select", help="Record the revision without selecting it: the report keeps its current review.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before starting the review calls.")] = False,
) -> None:
    """Review every submission of a finished run again, as revision NAME.

    Uses the frozen reviewer, criteria, jobs and budget, or another reviewer given by all three
    --reviewer-* options. Owns run.lock; refuses an active run, an existing name, a run without a
    reviewer or whose first review has not finished; checks the reviewer's CLI, credentials and
    sandbox first."""
    from ..actors import plan_review, run_review

    plan = plan_review(run, revision, reviewer_harness, reviewer_model, reviewer_effort)
    calls = len(plan.assigned)
    rv = plan.reviewer
    who = (rv.harness if rv.model in (None, rv.harness) else f"{rv.harness} {rv.model}") + (
        f" ({rv.reasoning})" if rv.reasoning else "")
    console.print(f"review revision {revision}: {calls} review call(s) by {who}", markup=False)
    if not yes:
        if not sys.stdin.isatty():
            raise RunDirError(f"review revision {revision} makes {calls} review call(s) and no answer can be read",
                              fix="pass --yes to start it without asking")
        if not typer.confirm(f"Start {calls} review calls?", default=False):
            raise typer.Exit(1)
    run_review(plan, select=not no_select, progress=lambda line: console.print(line, markup=False))
    console.print(f"review revision {revision} finished" + ("" if no_select else " and selected")
                  + f"; report: {plan.run_dir.report_dir / 'report.html'}", markup=False)
