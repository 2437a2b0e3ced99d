"""The rich consoles of every command: stdout's and stderr's.

Imported on first use (``_common`` resolves ``console`` and ``err_console`` lazily), so a
command that writes only plain lines (:func:`._lines.say` to a file or a pipe) never
imports rich."""

import sys
from collections.abc import Iterable

from rich.console import Console
from rich.highlighter import NullHighlighter
from rich.segment import Segment

from .._parsing import visible
from ._lines import silence


class _KeepWorkingConsole(Console):
    """A console whose closed reader (``| head``) silences it instead of ending the process:
    Rich's default raises SystemExit, which inside a review, a measurement revision or a
    foreground run aborts the work half done (and, in a task group, prints a traceback).

    Every text it writes goes through :func:`visible`: names, reasons, verifier output and
    errors come from tasks and agents, and an escape sequence in them must not write the
    clipboard (OSC 52), plant a link (OSC 8), clear or retitle the terminal. Styles and a live
    view's cursor moves are Rich's own segments (``control``), written as they are."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            s if s.control else Segment(visible(s.text), s.style) for s in buffer)

    def on_broken_pipe(self) -> None:
        self.quiet = True
        silence(sys.stderr if self.stderr else sys.stdout)


def make_console(*, stderr: bool = False) -> _KeepWorkingConsole:
    """A console on stdout (``stderr``: stderr) as every command has one: lines written to
    a file (run.log, a pipe) are not hard-wrapped at 80 columns, and ``emoji=False`` keeps a
    name such as ``check:x:`` text, never an emoji."""
    made = _KeepWorkingConsole(stderr=stderr, soft_wrap=not (sys.stderr if stderr else sys.stdout).isatty(),
                               emoji=False)
    if made.color_system is None:
        # Highlighting only adds colours: without a colour system (a file, a pipe, NO_COLOR)
        # it changes nothing written, and its first use compiles rich's patterns (~4 ms).
        made.highlighter = NullHighlighter()
    return made


console = make_console()
err_console = make_console(stderr=True)
