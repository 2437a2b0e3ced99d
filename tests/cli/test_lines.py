"""say() writes what our rich console writes, without rich where rich writes plain text (issue 27, startup)."""

from __future__ import annotations

import io
import random
import subprocess
import sys

import pytest
from rich.console import Console
from rich.text import Text

from pluginbench.cli._console import make_console
from pluginbench.cli._lines import Piece, is_terminal, say, writes_plain

_ENV = ("TTY_COMPATIBLE", "FORCE_COLOR")
_ALPHABET = ([chr(i) for i in range(0x250)] + list("[]\\/ \n日本😀\u200b\u2028\u2029\x85\ufeff\u202e")
             + ["[bold]", "[/]", "\\[", ":x:", "[link=x]"])
_STYLES = ("bold green", "red", "yellow", "magenta", "bold red")


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _through_rich(monkeypatch: pytest.MonkeyPatch, pieces: tuple[Piece, ...]) -> str:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    make_console().print(Text.assemble(*pieces), highlight=False)
    return stream.getvalue()


def _said(monkeypatch: pytest.MonkeyPatch, pieces: tuple[Piece, ...]) -> str:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    say(*pieces)
    return stream.getvalue()


def _random_pieces(rng: random.Random) -> tuple[Piece, ...]:
    pieces: list[Piece] = []
    for _ in range(rng.randint(1, 4)):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 24)))
        pieces.append((text, rng.choice(_STYLES)) if rng.random() < 0.3 else text)
    return tuple(pieces)


def test_plain_lines_are_byte_for_byte_what_our_console_writes_to_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    """For 3,000 random lines (control characters, markup-like brackets, backslashes, wide and combining characters, line separators, styles), say() to a pipe writes exactly what our rich console writes there."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    rng = random.Random(27)
    for _ in range(3000):
        pieces = _random_pieces(rng)
        assert _said(monkeypatch, pieces) == _through_rich(monkeypatch, pieces), pieces


@pytest.mark.parametrize("pieces", [("a\tb",), ("name\t", ("pass", "green"), "\t(x)"), ("\t",)])
def test_a_line_with_a_tab_is_written_by_rich_with_its_tab_stops(monkeypatch: pytest.MonkeyPatch,
                                                                 pieces: tuple[Piece, ...]) -> None:
    """A tab (rich expands it to the next tab stop) sends the line through rich, so it still matches the console."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    written = _said(monkeypatch, pieces)
    assert written == _through_rich(monkeypatch, pieces)
    assert "\t" not in written


@pytest.mark.parametrize("tty", [True, False])
@pytest.mark.parametrize("compatible", [None, "", "0", "1", "2"])
@pytest.mark.parametrize("force", [None, "", "1", "0"])
def test_the_terminal_test_is_the_one_rich_uses(monkeypatch: pytest.MonkeyPatch, tty: bool, compatible: str | None,
                                         force: str | None) -> None:
    """is_terminal agrees with rich's Console.is_terminal for TTY_COMPATIBLE, FORCE_COLOR and isatty in every combination, and writes_plain only off a terminal and off a TTY."""
    for name, value in zip(_ENV, (compatible, force), strict=True):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    stream = _Stream(tty)
    assert is_terminal(stream) == Console(file=stream).is_terminal
    assert writes_plain(stream) == (not is_terminal(stream) and not tty)


def test_in_a_terminal_a_line_is_styled_by_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """With FORCE_COLOR the line goes through rich: the styled piece carries its colour codes, the text is unchanged."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    stream = _Stream(False)
    monkeypatch.setattr(sys, "stdout", stream)
    import pluginbench.cli._console as consoles

    monkeypatch.setattr(consoles, "console", make_console())
    say(("complete", "bold green"), " report: [x]")
    written = stream.getvalue()
    assert "\x1b[" in written
    assert "complete" in written and " report: [x]" in written


def test_a_plain_line_imports_no_rich() -> None:
    """say() to a pipe, and to stderr, loads no rich module."""
    code = ("import sys; from pluginbench.cli._lines import say; say('a [b]', ('c', 'red')); say('e', err=True); "
            "print(sorted(m for m in sys.modules if m == 'rich' or m.startswith('rich.')))")
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["a [b]c", "[]"]
    assert done.stderr == "e\n"
