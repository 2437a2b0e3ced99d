"""The terminal view of ``pluginbench status``: what a reader needs to decode the attempt table."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from pluginbench.cli._watch import render_status

_TOKENS = {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 5, "reasoning_output_tokens": 0,
           "total_tokens": 15, "lower_bound": False, "unvalidated": False, "native_session": None}


def _snapshot(attempts: list[dict[str, Any]], active: bool) -> dict[str, Any]:
    return {
        "name": "demo", "phase": "coding" if active else "complete", "harness": "simulated", "model": "simulated-1",
        "backend": "local", "isolation": "bubblewrap", "simulated": True, "probe": False, "active": active,
        "owner": {"pid": 1, "pgid": 1, "started_at": "2026-01-01T00:00:00.000Z"} if active else None,
        "heartbeat": None, "states": {}, "attempts_total": len(attempts), "outcomes": {}, "nodes": None,
        "attempts": attempts, "arms": {"vanilla": {"tokens": _TOKENS}}, "reuse": {}, "tokens": _TOKENS,
        "discarded": [], "stopping": None, "torn_tail_bytes": 0, "error": None, "left_running": None,
        "resume_command": None, "report": None,
    }


def _text(snap: dict[str, Any]) -> str:
    console = Console(record=True, width=120, color_system=None)
    console.print(render_status(snap))
    return console.export_text()


def _attempt(task: str, state: str, outcome: str | None, repeat: int = 1) -> dict[str, Any]:
    return {"task": task, "arm": "vanilla", "repeat": repeat, "state": state, "outcome": outcome}


def test_the_legend_names_each_mark_the_table_shows_and_no_other() -> None:
    """Below the attempt table one line decodes every mark used in it (✓ pass, ∅ empty, … running) and lists no unused mark."""
    out = _text(_snapshot([_attempt("a", "complete", "pass"), _attempt("a", "complete", "empty", 2),
                           _attempt("b", "running", None)], active=True))
    legend = next(line for line in out.splitlines() if "✓ pass" in line)
    assert "∅ empty" in legend and "… running" in legend
    assert "fail" not in legend and "pending" not in legend and "interrupted" not in legend


def test_an_unowned_running_attempt_is_shown_and_decoded_as_interrupted() -> None:
    """With no live owner a running attempt's mark is ! and the legend says interrupted, not running."""
    out = _text(_snapshot([_attempt("a", "running", None)], active=False))
    assert "! interrupted" in out and "running" not in out.split("task")[1]


def _with_measures(active: bool) -> dict[str, Any]:
    snap = _snapshot([_attempt("a", "complete", "pass")], active=active)
    snap["measures"] = {
        "selected": ["coverage", "lines", "time", "tokens"],
        "measurement_revisions": [{"revision": "initial", "status": "not_selected", "selected": False},
                                  {"revision": "cov2", "status": "collecting", "selected": False}],
        "review_revisions": [{"revision": "initial", "status": "running", "selected": True, "reviewed": 1,
                              "assigned": 4, "harness": "codex", "model": "gpt-5.5"}],
        "references": {},
        "not_measured": [{"task": "a", "measure": "coverage", "reason": "not_configured: no coverage profile"}],
    }
    return snap


def test_measures_revisions_and_not_measured_pairs_are_shown() -> None:
    """The view lists the selected measures, each measurement and review revision with its state, and every pair the run does not measure with its reason."""
    out = _text(_with_measures(active=True))
    assert "measures: coverage, lines, time, tokens" in out
    assert "measurement revisions: initial (not_selected), cov2 (collecting)" in out
    assert "review revisions: initial (codex gpt-5.5, 1/4 reviewed, running, selected)" in out
    assert "not measured: coverage on a: not_configured: no coverage profile" in out


def test_unowned_collecting_and_running_revisions_show_as_interrupted() -> None:
    """With no live owner a collecting measurement revision and a running review revision read interrupted."""
    out = _text(_with_measures(active=False))
    assert "cov2 (interrupted)" in out and "1/4 reviewed, interrupted, selected" in out
    assert "collecting" not in out and "running" not in out.split("review revisions")[1]


def test_an_unknown_total_while_an_attempt_runs_says_why() -> None:
    """An arm whose token total is unknown because an attempt is still running gets a note saying so; a finished arm does not."""
    unknown = {**_TOKENS, "input_tokens": None, "cached_input_tokens": None, "output_tokens": None, "total_tokens": None}
    snap = _snapshot([_attempt("a", "running", None)], active=True)
    snap["arms"] = {"vanilla": {"tokens": unknown, "states": {"running": 1}}, "docs": {"tokens": _TOKENS, "states": {"complete": 1}}}
    out = _text(snap)
    assert "while attempts run (vanilla)" in out and "docs" not in out.split("while attempts run")[1].split("\n")[0]
    snap["active"], snap["owner"] = False, None
    assert "while attempts run" not in _text(snap)


def test_tokens_of_complete_attempts_show_while_others_run() -> None:
    """While two of six attempts run, the arm's total cell shows the four complete attempts' tokens so far and the
    count still running, instead of a bare unknown; without a known sum for the complete ones it stays unknown."""
    unknown = {**_TOKENS, "total_tokens": None, "complete_total_tokens": 12345, "complete_attempts": 4,
               "running_attempts": 2}
    snap = _snapshot([_attempt("a", "running", None)], active=True)
    snap["arms"] = {"vanilla": {"tokens": unknown, "states": {"running": 2, "complete": 4}}}
    assert "12,345 so far (4 complete, 2 running)" in _text(snap)
    snap["arms"]["vanilla"]["tokens"] = {**unknown, "complete_total_tokens": None}
    assert "so far (" not in _text(snap)


def test_the_verdict_is_the_first_line_of_a_reported_run(tmp_path: Any) -> None:
    """A run with a report shows the report's one-sentence verdict before the header, tables and report path."""
    (tmp_path / "results.json").write_text(
        '{"verdicts": [{"headline": "td vs vanilla: better: +20 pp", "kind": "better"}]}', encoding="utf-8")
    snap = _snapshot([_attempt("a", "complete", "pass")], active=False)
    snap["report"] = str(tmp_path / "report.html")
    lines = _text(snap).splitlines()
    assert lines[0] == "verdict: td vs vanilla: better: +20 pp"
    assert lines[1].startswith("demo  phase complete")
    assert lines[-1] == f"report: {tmp_path / 'report.html'}"


def test_an_unowned_runs_tokens_so_far_count_interrupted_not_running_attempts() -> None:
    """With no live owner the arm's tokens-so-far cell counts the cut-off attempts as interrupted, as the grid does, never as running."""
    unknown = {**_TOKENS, "total_tokens": None, "complete_total_tokens": 12345, "complete_attempts": 4,
               "running_attempts": 1}
    snap = _snapshot([_attempt("a", "running", None)], active=False)
    snap["arms"] = {"vanilla": {"tokens": unknown, "states": {"running": 1, "complete": 4}}}
    out = _text(snap)
    assert "12,345 so far (4 complete, 1 interrupted)" in out and "1 running" not in out
