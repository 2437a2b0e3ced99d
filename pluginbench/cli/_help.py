"""Command help text as the terminal shows it: docstrings reflowed into paragraphs.

Typer's rich help keeps every single line break of a docstring after its first paragraph
and then wraps again at the terminal width, so a docstring wrapped at 90 columns shows as
ragged half-lines on an 80-column terminal. Each command's help is therefore set from its
docstring with the lines of a paragraph joined; Typer wraps that once, to the terminal.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING

import typer
import typer.core

if TYPE_CHECKING:
    # Typer 0.29 ships its own copy of Click; its groups take that copy's Context.
    from typer._click.core import Context as ClickContext

_DOUBLE_BACKTICKS = re.compile(r"``([^`]+)``")
_LIST_ITEM = re.compile(r"^\s*(?:[*-]|\d+\.)\s")


def reflow(doc: str) -> str:
    """Join the lines of each blank-line-separated paragraph with spaces; a paragraph whose
    lines are list items keeps its line breaks. reST ``literals`` become `literals`."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    out: list[str] = []
    for paragraph in paragraphs:
        lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
        if any(_LIST_ITEM.match(line) for line in lines):
            out.append("\n".join(lines))
        else:
            out.append(" ".join(lines))
    return _DOUBLE_BACKTICKS.sub(r"`\1`", "\n\n".join(out))


def reflow_help(app: typer.Typer) -> None:
    """Set the help of every command of ``app`` and of its sub-apps from its reflowed
    docstring (a help given explicitly is reflowed too)."""
    for command in app.registered_commands:
        text = command.help or (command.callback.__doc__ if command.callback else None)
        if text:
            command.help = reflow(text)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            reflow_help(group.typer_instance)


class HelpWhenBareGroup(typer.core.TyperGroup):
    """A command group that, called with no arguments, prints its help and exits 0.

    Click 8.2 turned a bare group call into a usage error (exit 2); asking what a command
    can do is not bad input, so it answers like ``--help`` does.
    """

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        return super().parse_args(ctx, args)
