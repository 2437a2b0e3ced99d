"""The verdict in the terminal: each treatment's headline, as report.html shows it.

Reads ``report/results.json`` (the edge); the sentences come from :func:`pluginbench.stats.verdicts`
through that document, so ``run``, ``demo``, ``status`` and ``compare`` print the words the report does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..rundir import RunDir
from ._lines import Piece, say

if TYPE_CHECKING:
    from rich.text import Text

STYLE = {"better": "bold green", "worse": "bold red", "equivalent": "bold blue"}


def verdict_piece(v: Mapping[str, Any]) -> Piece:
    """One headline as a line's piece, coloured only when decided (a partial run or unexercised
    package is plain)."""
    text = f"verdict: {v['headline']}"
    style = STYLE.get(v["kind"], "")
    return (text, style) if style else text


def verdict_text(v: Mapping[str, Any]) -> Text:
    """:func:`verdict_piece` as rich text (the status watch view's lines)."""
    from rich.text import Text

    return Text.assemble(verdict_piece(v))


def saved_verdicts(rd: RunDir) -> Sequence[Mapping[str, Any]]:
    """The verdicts of the run's last built report; empty when there is none (or it predates verdicts)."""
    return verdicts_beside(rd.report_dir / "report.html")


def verdicts_beside(report_html: Path) -> Sequence[Mapping[str, Any]]:
    """The verdicts in the results.json beside ``report_html``; empty when unreadable or older."""
    try:
        doc = json.loads((report_html.parent / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    got = doc.get("verdicts") if isinstance(doc, dict) else None
    return got if isinstance(got, list) else []


def print_verdicts(rd: RunDir) -> None:
    """Print every treatment's headline from the run's report, if it has one."""
    for v in saved_verdicts(rd):
        say(verdict_piece(v))
