"""Blind pairwise judging: ``pluginbench judge prepare | run | tally``.

Pure core: :mod:`._pairs` (matching, anonymized diffs, seeded sides), :mod:`._binding`
(SHA-256 bindings of what a judge saw), :mod:`._verdict` (response schema and parsing),
:mod:`._tally` (unblinding, scoring, per-judge statistics). I/O at the edges:
:mod:`._prepare` (reads runs, writes the prepared directory), :mod:`._call` (one judge
call through the harness adapters in a fresh sandbox), :mod:`._run` (reservation,
checks, saving verdicts), :mod:`._load` (reading a prepared directory for tally).
"""
