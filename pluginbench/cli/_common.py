"""What every command shares: consoles (made on first use), the error boundary, and JSON output."""

from __future__ import annotations

import errno
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from .._parsing import visible as visible  # re-exported: the CLI's modules import it from here
from ..errors import InputError, PluginBenchError
from ._lines import say as say  # re-exported: the CLI's line writer

if TYPE_CHECKING:
    from ._console import console as console
    from ._console import err_console as err_console


def __getattr__(name: str) -> Any:
    # The rich consoles are made on first use (``._console``): a run writing only plain
    # lines to a file or a pipe never imports rich.
    if name in ("console", "err_console"):
        from . import _console

        return getattr(_console, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


F = TypeVar("F", bound=Callable[..., Any])


def tolerate_unencodable_output() -> None:
    """A terminal or pipe that cannot encode a character (PYTHONIOENCODING=ascii, a C
    locale) shows it escaped instead of ending the command with a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


#: What the user can fix about a path the command was given (or that a run folder holds),
#: by errno: these end as bad input (exit 2) naming the file, never as a traceback.
_PATH_FIXES = {
    errno.EACCES: "make it readable (and its folder writable where PluginBench writes), or run as its owner",
    errno.EPERM: "make it readable (and its folder writable where PluginBench writes), or run as its owner",
    errno.EROFS: "use a folder on a writable file system",
    errno.EISDIR: "pass a file here, not a folder",
    errno.ENOTDIR: "a part of this path is a file, not a folder; fix the path",
    errno.ENAMETOOLONG: "use shorter names (a file name is at most 255 bytes)",
    errno.ELOOP: "the path goes through a symlink loop; remove the loop or use another path",
    errno.ENOENT: "create it, or fix the path",
}


def input_error_of(exc: BaseException) -> InputError | None:
    """The bad-input refusal an unplanned error stands for, or None: an OSError about a
    path the user can fix (permissions, a folder for a file, a name too long, a symlink
    loop), a folder tree nested too deep (RecursionError), found also inside an
    ExceptionGroup (a task group's failure)."""
    if isinstance(exc, InputError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = input_error_of(inner)
            if found is not None:
                return found
        return None
    if isinstance(exc, RecursionError):
        return InputError("a folder tree or document is nested too deeply to read",
                          fix="flatten the deepest folders (a task's files should be at most a few hundred levels deep)")
    if isinstance(exc, OSError) and exc.errno in _PATH_FIXES and not isinstance(exc, BlockingIOError):
        name = exc.filename if exc.filename is not None else None
        return InputError(f"cannot use {name if name is not None else 'a path'}: {exc.strerror or exc}",
                          file=str(name) if name is not None else None, fix=_PATH_FIXES[exc.errno])
    return None


def errors_to_exit_codes(fn: F) -> F:
    """Print a one-screen error and exit 2 for bad input, 1 for other deliberate errors; an
    unplanned OSError about a path the user gave (see :func:`input_error_of`) is bad input.
    The exit leaves as ``SystemExit``: through typer and without it alike."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _json_written
        wants_json = bool(kwargs.get("json_out") or kwargs.get("as_json"))
        _json_written = False
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            say(exc.render(), err=True)
            if wants_json:
                print_json_error(exc.message, 2, file=exc.file, field=exc.field, fix=exc.fix, answered=_json_written)
            raise SystemExit(2) from None
        except PluginBenchError as exc:
            say(f"error: {exc}", err=True)
            if wants_json:
                print_json_error(str(exc), exc.exit_code, answered=_json_written)
            raise SystemExit(exc.exit_code) from None
        except (OSError, RecursionError, BaseExceptionGroup) as exc:
            refusal = input_error_of(exc)
            if refusal is None:
                raise
            say(refusal.render(), err=True)
            if wants_json:
                print_json_error(refusal.message, 2, file=refusal.file, field=refusal.field, fix=refusal.fix,
                                 answered=_json_written)
            raise SystemExit(2) from None

    return wrapper  # type: ignore[return-value]  # functools.wraps keeps the signature; mypy types the wrapper (*args, **kwargs)


_ENCODER = msgspec.json.Encoder(order="sorted")
#: Whether this process has printed its JSON answer (an error after it adds no second object).
_json_written = False


def print_json(data: Any) -> None:
    """Indented JSON with sorted keys (msgspec: a 10,000-attempt status in milliseconds)."""
    sys.stdout.buffer.write(msgspec.json.format(_ENCODER.encode(data), indent=2) + b"\n")
    sys.stdout.flush()
    global _json_written
    _json_written = True


def print_json_error(message: str, exit_code: int, *, file: str | None = None, field: str | None = None,
                     fix: str | None = None, answered: bool = False) -> None:
    """A ``--json`` command's refusal or failure as one JSON object on stdout, so a tool reading
    stdout always gets JSON; the message on stderr is unchanged. Nothing when the command's
    answer was already printed (``answered``)."""
    if not answered:
        print_json({"error": {"message": message, "file": file, "field": field, "fix": fix}, "exit_code": exit_code})


def print_failed_control(row: Any, base: Any = None) -> None:
    """After a failing readiness control: the verifier's last lines and the evidence folder
    (``row`` is a readiness row or ``ReadinessChecked``; ``base`` makes a relative evidence
    path absolute)."""
    get: Callable[[str], Any] = row.get if isinstance(row, dict) else lambda k: getattr(row, k, None)
    if get("ok"):
        return
    tail = get("verifier_tail") or []
    if tail:
        say(f"  the verifier's last {len(tail)} lines:", err=True)
        for line in tail:
            say(f"    {line}", err=True)
    evidence = get("evidence")
    if evidence:
        where = f"{base}/{evidence}" if base is not None else evidence
        say(f"  evidence: {where}", err=True)


def group_harnesses(folder: Any) -> list[str] | None:
    """The harness runs of a cross-agent evaluation's folder (``cross-agent.json``), or None
    when ``folder`` is not one (an unreadable manifest lists none)."""
    import json
    from pathlib import Path

    from ..rundir import GroupDir

    gd = GroupDir(Path(folder))
    if not gd.is_group():
        return None
    try:
        return [str(e["run"]) for e in json.loads(gd.manifest.read_text(encoding="utf-8"))["harnesses"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def refuse_group(folder: Any, why: str) -> None:
    """Refuse a cross-agent evaluation's folder where one run is needed (exit 2), naming
    its harness runs: arms are compared within one harness only."""
    runs = group_harnesses(folder)
    if runs is None:
        return
    raise InputError(f"{folder} is a cross-agent evaluation (one run per harness); {why}", file=str(folder),
                     fix="pass one harness's run: " + (", ".join(f"{folder}/{r}" for r in runs) or f"{folder}/<harness>")
                     + " (status, run and report also take the whole folder)")
