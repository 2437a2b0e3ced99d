"""Every command's ``--help`` as a newcomer reads it in a terminal."""

from __future__ import annotations

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from pluginbench.cli import app
from pluginbench.cli._help import reflow

COMMANDS = [
    ["init"], ["check"], ["run"], ["status"], ["stop"], ["report"], ["compare"], ["calibrate"],
    ["events"], ["review"], ["measure"], ["demo"], ["doctor"], ["dashboard"], ["probe", "serve"],
    ["tasks", "pick"], ["judge", "prepare"], ["judge", "run"], ["judge", "tally"],
]


def _help(args: list[str], columns: int) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": str(columns), "TERM": "dumb"})
    assert result.exit_code == 0, result.output
    return result.output


def test_reflow_joins_paragraph_lines_and_keeps_lists() -> None:
    """A paragraph's wrapped lines become one line, paragraphs and list items keep their breaks, ``x`` becomes `x`."""
    doc = "First line.\n\n    Second paragraph is\n    wrapped here, with ``--flag``.\n\n    * one\n    * two\n"
    assert reflow(doc) == "First line.\n\nSecond paragraph is wrapped here, with `--flag`.\n\n* one\n* two"


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_help_paragraphs_are_not_broken_at_docstring_line_ends(args: list[str]) -> None:
    """On a wide terminal each help paragraph is one line: no docstring line break survives mid-sentence."""
    command = get_command(app)
    for name in args:
        command = command.commands[name]  # type: ignore[attr-defined]
    paragraphs = [p for p in reflow(command.help or "").split("\n\n") if "\n" not in p]
    assert paragraphs, args
    out = _help(args, 5000)
    lines = [line.strip(" │").replace("`", "") for line in out.splitlines()]
    for paragraph in paragraphs:
        assert paragraph.replace("`", "") in lines, (paragraph, out)
    assert "``" not in out


@pytest.mark.parametrize("args", [[], ["tasks"], ["judge"], ["probe"]], ids=lambda a: " ".join(a) or "pluginbench")
def test_a_bare_command_group_prints_its_help_and_exits_0(args: list[str]) -> None:
    """`pluginbench` (or a command group) with no arguments prints the same help as `--help` and exits 0, nothing on stderr."""
    result = CliRunner().invoke(app, args, env={"COLUMNS": "100", "TERM": "dumb"})
    assert result.exit_code == 0, result.output
    assert result.stdout == _help(args, 100)
    assert "Usage: pluginbench" in result.stdout
    assert not result.stderr
