"""Blind pairwise judging: ``pluginbench judge prepare | run | tally``.

Pure core: :mod:`._pairs` (matching, anonymized diffs, seeded sides), :mod:`._binding`
(SHA-256 bindings of what a judge saw), :mod:`._verdict` (response schema and parsing),
:mod:`._tally` (unblinding, scoring, per-judge statistics). I/O at the edges:
:mod:`._prepare` (reads runs, writes the prepared directory), :mod:`._call` (one judge
call through the harness adapters in a fresh sandbox), :mod:`._run` (reservation,
checks, saving verdicts), :mod:`._load` (reading a prepared directory for tally).
"""

from ._load import tally_dir
from ._prepare import prepare
from ._run import Prepared, run_judges, save_specs
from ._spec import JudgeSpec, parse_judge
from ._tally import render_text

__all__ = [
    "JudgeSpec",
    "Prepared",
    "parse_judge",
    "prepare",
    "render_text",
    "run_judges",
    "save_specs",
    "tally_dir",
]
