"""``pluginbench run`` without typer, for a plain command line.

Importing typer and building the ``run`` command (about 25 ms of CPU) was a tenth of a
one-attempt run's fixed cost. The options of ``run`` are few and simple, so a command
line made only of them is parsed here (:func:`parse_run_args`) and handed to
:func:`._run.run`, inside the same boundary typer puts around a command (:func:`run_plain`).

Anything else goes to typer, which then decides exactly as before: ``--help``, an option
``run`` does not have, an option given twice, a value that starts with ``-`` or is empty,
a ``--cost-ceiling`` that is not a number, a missing or second argument, ``--``, bundled
short flags (``-yv``). So a usage error's message and exit code are always typer's. A test
holds :data:`RUN_OPTIONS` to ``run``'s typer parameters and the two parsers to the same
result on every line this one accepts.
"""

import contextlib
import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, NoReturn


class RunOption(NamedTuple):
    """One option of ``run``: its names, the keyword of :func:`._run.run` it sets, and
    its kind (a flag is set to True; a path or number takes the next argument or ``=``)."""

    names: tuple[str, ...]
    param: str
    kind: Literal["flag", "path", "float"]


#: every option of ``pluginbench run`` (``_run_commands.run_command``'s, in its order)
RUN_OPTIONS: tuple[RunOption, ...] = (
    RunOption(("--output", "-o"), "output", "path"),
    RunOption(("--dry-run",), "dry_run", "flag"),
    RunOption(("--json",), "json_out", "flag"),
    RunOption(("--yes", "-y"), "yes", "flag"),
    RunOption(("--foreground",), "foreground", "flag"),
    RunOption(("--notify",), "notify", "flag"),
    RunOption(("--cost-ceiling",), "cost_ceiling", "float"),
    RunOption(("--verbose", "-v"), "verbose", "flag"),
)
#: the name of ``run``'s one argument, the run's config or folder
TARGET = "target"

_BY_NAME = {name: option for option in RUN_OPTIONS for name in option.names}


def _value(option: RunOption, text: str) -> Path | float | None:
    """``text`` as ``option``'s value, or None when typer should read it (or refuse it)."""
    if not text or text.startswith("-"):
        return None
    if option.kind == "path":
        return Path(text)
    try:
        return float(text)  # click's FLOAT is float(text) too
    except ValueError:
        return None


def parse_run_args(args: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments of :func:`._run.run` for the command line ``args`` (after
    ``run``), or None when it is not a plain line of ``run``'s options (see the module's
    docstring): then only typer parses it. Options left out have their defaults."""
    parsed: dict[str, Any] = {}
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if not token.startswith("-"):
            if not token or TARGET in parsed:
                return None
            parsed[TARGET] = Path(token)
            continue
        name, eq, attached = token.partition("=") if token.startswith("--") else (token, "", "")
        option = _BY_NAME.get(name)
        if option is None or option.param in parsed:
            return None
        if option.kind == "flag":
            if eq:
                return None
            parsed[option.param] = True
            continue
        value = _value(option, attached) if eq else (_value(option, rest.pop(0)) if rest else None)
        if value is None:
            return None
        parsed[option.param] = value
    return parsed if TARGET in parsed else None


def _quiet_streams() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # a closed or replaced stream
            os.dup2(devnull, stream.fileno())
    os.close(devnull)


def run_plain(args: Sequence[str]) -> bool:
    """Run ``pluginbench run`` with ``args`` when :func:`parse_run_args` reads them, and
    end with ``SystemExit`` as the typer app does: the command's code, 130 after Ctrl-C,
    1 with "Aborted!" after end-of-input at a prompt, 1 when stdout's reader went away.
    False, having done nothing, when typer must parse the line."""
    kwargs = parse_run_args(args)
    if kwargs is None:
        return False
    from ._common import tolerate_unencodable_output

    tolerate_unencodable_output()
    from . import _run

    try:
        _run.run(**kwargs)
    except EOFError:
        print(file=sys.stderr)
        _aborted()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        _quiet_streams()  # what is still buffered goes nowhere, as typer's PacifyFlushWrapper does
        raise SystemExit(1) from None
    except Exception as exc:
        # The confirmation prompt imports typer and may end with typer's own Exit or Abort
        # (so may any module that comes to use typer): the code, or "Aborted!" and 1.
        typer: Any = sys.modules.get("typer")
        if typer is not None and isinstance(exc, typer.Exit):
            raise SystemExit(exc.exit_code) from None
        if typer is not None and isinstance(exc, typer.Abort):
            _aborted()
        raise
    raise SystemExit(0)


def _aborted() -> NoReturn:
    print("Aborted!", file=sys.stderr)
    raise SystemExit(1)
