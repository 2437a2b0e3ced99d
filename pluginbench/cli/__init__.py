"""The ``pluginbench`` command line: parsing and dispatch only.

Commands: init, check, run, status, stop, report, compare, calibrate, events, review, measure, demo, doctor,
dashboard, show, bundle,
probe serve, tasks pick, judge prepare|run|tally (and the hidden worker).
Exit codes: 0 success, 1 a run or check that failed (for compare: a gate failed), 2 bad
input (nothing started), 3 compare: no gate failed but some gate is undetermined.

This package imports no CLI framework itself: the typer app lives in :mod:`._app`, built
when a command line needs it, so a plain ``pluginbench run`` line (:mod:`._run_plain`)
starts its run without importing typer at all.
"""

from __future__ import annotations

from typing import Any

from ._run_plain import run_plain


def main() -> None:
    """Run the command ``sys.argv`` names through the typer app; exits with its code."""
    from ._app import main as app_main

    app_main()


def __getattr__(name: str) -> Any:
    """``app``: the whole CLI (a ``typer.Typer``), built on first use."""
    if name == "app":
        from ._app import full_app

        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main", "run_plain"]
