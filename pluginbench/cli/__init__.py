"""The ``pluginbench`` command line: parsing and dispatch only.

Commands: init, check, run, status, stop, report, compare, calibrate, events, review, measure, demo, doctor,
dashboard, show, bundle,
probe serve, tasks pick, judge prepare|run|tally (and the hidden worker).
Exit codes: 0 success, 1 a run or check that failed (for compare: a gate failed), 2 bad
input (nothing started), 3 compare: no gate failed but some gate is undetermined.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from ._bundle import bundle_command
from ._compare import calibrate_command, compare_command
from ._dashboard import dashboard_command
from ._doctor import doctor_command
from ._help import HelpWhenBareGroup, reflow_help
from ._judge import judge_app
from ._measure import measure_command
from ._probe import probe_app
from ._review import review_command
from ._run import demo_command, run_command, worker_command
from ._setup import check_command, init_command
from ._show import show_command
from ._tasks import tasks_app
from ._tasks_mine import mine_command  # noqa: F401 - registers `tasks mine` on tasks_app
from ._watch import events_command, report_command, status_command, stop_command

app = typer.Typer(
    name="pluginbench",
    help=(
        "Measure whether a guidance package (CLAUDE.md/AGENTS.md, skills, plugins) makes a real "
        "coding agent do better work: the same tasks with vanilla and each treatment, graded by "
        "hidden verifiers, with paired statistics."
    ),
    no_args_is_help=True,
    cls=HelpWhenBareGroup,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("init")(init_command)
app.command("check")(check_command)
app.command("run")(run_command)
app.command("status")(status_command)
app.command("stop")(stop_command)
app.command("report")(report_command)
app.command("compare")(compare_command)
app.command("calibrate")(calibrate_command)
app.command("events")(events_command)
app.command("review")(review_command)
app.command("measure")(measure_command)
app.command("demo")(demo_command)
app.command("doctor")(doctor_command)
app.command("dashboard")(dashboard_command)
app.command("show")(show_command)
app.command("bundle")(bundle_command)
app.add_typer(probe_app, name="probe")
app.add_typer(tasks_app, name="tasks")
app.add_typer(judge_app, name="judge")
app.command("worker", hidden=True)(worker_command)
reflow_help(app)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"pluginbench {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Measure whether a guidance package makes a real coding agent do better work."""


def main() -> None:
    # A terminal or pipe that cannot encode a character (PYTHONIOENCODING=ascii, a C
    # locale) shows it escaped instead of ending the command with a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    # the click that typer uses (vendored by newer typers): its exception classes, from typer's own surface
    usage_error: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
    click_exception: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    try:
        code = app(standalone_mode=False)
    except usage_error as exc:  # a bad option or argument: said like every other bad input
        print(usage_error_text(exc), file=sys.stderr)
        sys.exit(2)
    except click_exception as exc:
        shown: Any = exc
        shown.show()
        sys.exit(shown.exit_code)
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def usage_error_text(exc: Any) -> str:
    """A command-line usage error (unknown option, bad value, missing argument) as PluginBench
    prints bad input: the error, the option or argument as the field, and the fix."""
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "pluginbench"
    param = getattr(exc, "param", None)
    field = ""
    if param is not None:
        opts = list(getattr(param, "opts", None) or [])
        field = "/".join(opts) if getattr(param, "param_type_name", "") == "option" else \
            str(getattr(param, "human_readable_name", "") or getattr(param, "name", "") or "")
    field = field or str(getattr(exc, "param_hint", None) or getattr(exc, "option_name", None) or "")
    lines = [f"error: {exc.format_message()}"]
    if field:
        lines.append(f"  field: {field}")
    lines.append(f"  fix:   see `{command} --help` for the options and arguments it takes")
    return "\n".join(lines)


__all__ = ["app", "main"]
