"""Escape sequences in what tasks and agents wrote reach the terminal as text, never as
commands: no OSC 52 clipboard write, OSC 8 link, screen clear, title or bidi reordering."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

from pluginbench.cli._common import visible
from pluginbench.cli._console import _KeepWorkingConsole
from pluginbench.cli._watch import render_status
from tests.cli.test_status_view import _attempt, _snapshot
from tests.runs_helpers import QUICKSTART, write_config

#: a clipboard write, a hyperlink, a screen clear, a title, a right-to-left override
HOSTILE = ("hostile \x1b]52;c;cHduZWQ=\x1b\\ \x1b]8;;http://evil.invalid/\x1b\\CLICK\x1b]8;;\x1b\\ "
           "\x1b[2J\x1b]0;TITLE\x07 \u202eevil")


def test_visible_writes_control_and_bidi_characters_as_text() -> None:
    """visible() keeps newline and tab and writes ESC, BEL, CR, C1 and bidi overrides as escapes."""
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("\x1b[2J\x07\r\x9b\u202e\u2066") == "\\x1b[2J\\x07\\x0d\\x9b\\u202e\\u2066"


def test_a_terminal_console_keeps_its_own_styles_and_writes_hostile_text_as_text() -> None:
    """On a colour terminal the status view still styles its lines, and a hostile reason prints no ESC of its own."""
    out = io.StringIO()
    term = _KeepWorkingConsole(file=out, force_terminal=True, color_system="standard", width=400)
    snap = _snapshot([_attempt("t", "complete", "pass")], active=False) | {
        "discarded": [{"id": "t__vanilla__r1", "slot": 1, "replaced_by": "t__vanilla__r1b", "reason": HOSTILE}],
        "error": HOSTILE}
    term.print(render_status(snap))
    text = out.getvalue()
    assert "\x1b[1m" in text or "\x1b[1;" in text  # the header's own bold survives
    hostile = [ln for ln in text.splitlines() if "hostile" in ln]
    assert len(hostile) == 2
    for line in hostile:
        body = line[line.index("hostile"):]
        assert "\x1b]" not in body and "\u202e" not in body and "\\x1b]52;c;cHduZWQ=" in body


def test_check_prints_a_task_verifier_s_escape_sequences_as_text(tmp_path: Path) -> None:
    """`pluginbench check` on a task whose test.sh prints escape sequences shows them as text on stderr."""
    task = tmp_path / "tasks" / "t"
    shutil.copytree(QUICKSTART / "tasks" / "word-wrap", task)
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\nprintf 'hostile \\033]52;c;cHduZWQ=\\033\\\\ \\033]8;;http://evil.invalid/\\033\\\\CLICK"
        "\\033]8;;\\033\\\\ \\033[2J \\342\\200\\256evil\\n'\necho 0 > /logs/verifier/reward.txt\n")
    config = write_config(tmp_path, tasks=["t"])
    config.write_text(config.read_text().replace(str(QUICKSTART / "tasks"), str(tmp_path / "tasks")))
    done = subprocess.run([sys.executable, "-m", "pluginbench", "check", str(config)], capture_output=True,
                          timeout=300, check=False)
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    assert b"\x1b" not in done.stdout + done.stderr and "\u202e".encode() not in done.stderr
    assert b"hostile \\x1b]52;c;cHduZWQ=\\x1b\\ " in done.stderr and b"\\u202eevil" in done.stderr
