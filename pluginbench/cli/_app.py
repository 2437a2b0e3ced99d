"""The typer app: every command's parsing, help and usage errors, and the dispatch to it.

Built per command (:func:`build_app`): ``pluginbench run`` imports ``run``'s module only.
A plain ``run`` command line skips this module altogether (:mod:`._run_plain`).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer

from .._gc import end_startup
from . import _coerce
from ._help import HelpWhenBareGroup, reflow_help

_coerce.install()  # str/bool/Path values without importing pydantic (see _coerce)

#: Each command and sub-app: its name, module and attribute. A command's module is imported
#: only when that command runs (``pluginbench run`` does not load ``compare``'s statistics);
#: ``app`` (help, tests, an unknown command) loads them all.
_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("init", "._setup", "init_command"),
    ("check", "._setup", "check_command"),
    ("run", "._run_commands", "run_command"),
    ("status", "._watch", "status_command"),
    ("stop", "._watch", "stop_command"),
    ("report", "._watch", "report_command"),
    ("compare", "._compare", "compare_command"),
    ("calibrate", "._compare", "calibrate_command"),
    ("events", "._watch", "events_command"),
    ("review", "._review", "review_command"),
    ("measure", "._measure", "measure_command"),
    ("demo", "._run_commands", "demo_command"),
    ("doctor", "._doctor", "doctor_command"),
    ("dashboard", "._dashboard", "dashboard_command"),
    ("show", "._show", "show_command"),
    ("bundle", "._bundle", "bundle_command"),
    ("probe", "._probe", "probe_app"),
    ("tasks", "._tasks_mine", "tasks_app"),  # _tasks_mine adds `tasks mine` to _tasks' group
    ("judge", "._judge", "judge_app"),
    ("worker", "._run_commands", "worker_command"),
)


#: commands that end start-up themselves (``_gc.end_startup`` where a run's event loop starts),
#: so the modules they import before it are left out of the cyclic collector's scans too
_OWN_STARTUP = frozenset({"run", "worker", "demo"})


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"pluginbench {__version__}")
        raise typer.Exit(0)


def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Measure whether a guidance package makes a real coding agent do better work."""


def build_app(only: str | None = None) -> typer.Typer:
    """The typer app with every command, or with ``only`` that one (a group all the same)."""
    built = typer.Typer(
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
    for name, module, attribute in _COMMANDS:
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(module, __package__), attribute)
        if isinstance(target, typer.Typer):
            built.add_typer(target, name=name)
        else:
            built.command(name, hidden=name == "worker")(target)
    built.callback()(_root)
    reflow_help(built)
    return built


_full: list[typer.Typer] = []


def full_app() -> typer.Typer:
    """The whole CLI (every command), built on first use."""
    if not _full:
        _full.append(build_app())
    return _full[0]


def main() -> None:
    from ._common import tolerate_unencodable_output

    tolerate_unencodable_output()
    # the click that typer uses (vendored by newer typers): its exception classes, from typer's own surface
    usage_error: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
    click_exception: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    try:
        first = sys.argv[1] if len(sys.argv) > 1 else None
        built = build_app(only=first) if first is not None and any(first == n for n, _, _ in _COMMANDS) \
            else full_app()
        if first not in _OWN_STARTUP:
            end_startup()
        code = built(standalone_mode=False)
    except usage_error as exc:  # a bad option or argument: said like every other bad input
        print(usage_error_text(exc), file=sys.stderr)
        if "--json" in sys.argv[2:]:
            from ._common import print_json_error

            usage: Any = exc
            print_json_error(usage.format_message(), 2, field=_usage_field(exc) or None,
                             fix=f"see `{_usage_command(exc)} --help` for the options and arguments it takes")
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
    field = _usage_field(exc)
    lines = [f"error: {exc.format_message()}"]
    if field:
        lines.append(f"  field: {field}")
    lines.append(f"  fix:   see `{_usage_command(exc)} --help` for the options and arguments it takes")
    return "\n".join(lines)


def _usage_command(exc: Any) -> str:
    """The command a usage error is about (``pluginbench status``)."""
    ctx = getattr(exc, "ctx", None)
    return str(ctx.command_path) if ctx is not None else "pluginbench"


def _usage_field(exc: Any) -> str:
    """The option or argument a usage error names, or ``""``."""
    param = getattr(exc, "param", None)
    field = ""
    if param is not None:
        opts = list(getattr(param, "opts", None) or [])
        field = "/".join(opts) if getattr(param, "param_type_name", "") == "option" else \
            str(getattr(param, "human_readable_name", "") or getattr(param, "name", "") or "")
    return field or str(getattr(exc, "param_hint", None) or getattr(exc, "option_name", None) or "")

