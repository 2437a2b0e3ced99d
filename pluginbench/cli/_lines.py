"""Lines for people, written without rich where rich would write them plain.

Human output goes through rich's consoles (:mod:`._console`): colours and, in a
terminal, wrapping and live views. Written to a file or a pipe (not a terminal for rich,
and not a TTY, so our consoles soft-wrap), a console of ours writes each line as its bare
text: no colour, no wrapping, rich's five stripped control codes gone and every other
control character made visible. :func:`say` writes such a line itself, so a run whose
output is a log or a pipe never imports rich (~14 ms of its start). A line rich would
render otherwise (a tab, which it expands to the next tab stop) goes through rich.

A line is pieces of text, each plain or with a rich style (``("complete", "bold green")``):
never markup, so a name or reason from a task or an agent is written exactly as it is.
"""

import os
import sys
from typing import TextIO

from .._parsing import visible

#: A piece of a line: its text, or its text and the rich style it has in a terminal.
Piece = str | tuple[str, str]

#: What rich's ``Text`` drops from every string it is given (``strip_control_codes``):
#: BEL, BS, VT, FF and CR.
_RICH_DROPS = dict.fromkeys(map(ord, "\a\b\v\f\r"))


def is_terminal(stream: TextIO) -> bool:
    """Whether rich takes ``stream`` for a terminal (``Console.is_terminal`` outside IDLE
    and Jupyter): ``TTY_COMPATIBLE`` 0 or 1 decides, then ``FORCE_COLOR`` (set: a terminal
    unless empty), then ``isatty()``."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    return _isatty(stream)


def writes_plain(stream: TextIO) -> bool:
    """Whether our console on ``stream`` writes bare text: rich sees no terminal (so no
    colour) and it is not a TTY (so our console soft-wraps: no width, no wrapping)."""
    return not is_terminal(stream) and not _isatty(stream)


def say(*pieces: Piece, err: bool = False, highlight: bool = False) -> None:
    """Write one line of ``pieces`` to stdout (``err``: stderr), as our rich console would:
    bare where it writes plain text (:func:`writes_plain`), else through it, styled and, with
    ``highlight``, with rich's highlighting of numbers, paths and the like."""
    stream = sys.stderr if err else sys.stdout
    text = "".join(p if isinstance(p, str) else p[0] for p in pieces)
    if "\t" in text or not writes_plain(stream):
        _say_rich(pieces, err=err, highlight=highlight)
        return
    try:
        stream.write(visible(text.translate(_RICH_DROPS)) + "\n")
        stream.flush()
    except BrokenPipeError:
        silence(stream)


def silence(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at /dev/null: a reader gone away (``| head``)
    silences the stream instead of ending the run half done (say's and the consoles' way)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stream.fileno())


def _say_rich(pieces: tuple[Piece, ...], *, err: bool, highlight: bool) -> None:
    from rich.text import Text

    from ._console import console, err_console

    target = err_console if err else console
    line = Text.assemble(*pieces)
    target.print(target.highlighter(line) if highlight else line, highlight=False)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream (rich: not a terminal)
        return False
