"""What every command shares: consoles, the error boundary, and JSON output."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from ..errors import InputError, PluginBenchError

# Lines written to a file (run.log, a pipe) are not hard-wrapped at 80 columns.
console = Console(soft_wrap=not sys.stdout.isatty())
err_console = Console(stderr=True, soft_wrap=not sys.stderr.isatty())

F = TypeVar("F", bound=Callable[..., Any])


def errors_to_exit_codes(fn: F) -> F:
    """Print a one-screen error and exit 2 for bad input, 1 for other deliberate errors."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            err_console.print(exc.render(), markup=False, highlight=False)
            raise typer.Exit(2) from None
        except PluginBenchError as exc:
            err_console.print(f"error: {exc}", markup=False, highlight=False)
            raise typer.Exit(exc.exit_code) from None

    return wrapper  # type: ignore[return-value]


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
    sys.stdout.flush()
