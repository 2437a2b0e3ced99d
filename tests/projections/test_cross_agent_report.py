"""The cross-agent matrix as a pure fold, its page and the dashboard's matrix; an old single-harness log rebuilds byte-identically."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pluginbench.dashboard._html import cross_fragment
from pluginbench.dashboard._views import RunSource, cross_matrices
from pluginbench.projections import build_report
from pluginbench.projections._cross import cross_csv_text, cross_document, render_cross_html

OLD_RUN = Path(__file__).resolve().parents[1] / "data" / "old-single-harness-run"


def _verdict(treatment: str, kind: str, effect: float | None, status: str = "complete") -> dict[str, Any]:
    return {"treatment": treatment, "against": "vanilla", "kind": kind, "headline": f"{treatment} vs vanilla: {kind}",
            "effect": effect, "low": None if effect is None else effect - 0.1, "high": None if effect is None else effect + 0.1,
            "tasks": 6, "run_status": status}


def _doc(harness: str, verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    attempts = [{"arm": arm, "attempt_id": f"t__{arm}__r1", "task": "t", "repeat": 1, "state": "complete",
                 "outcome": outcome, "tokens": {"total": 100}} for arm, outcome in (("vanilla", "fail"), ("docs", "pass"))]
    return {"run": {"harness": harness, "cli_version": "1.0", "simulated": False, "probe": True},
            "arms": ["vanilla", "docs"], "attempts": attempts, "verdicts": verdicts}


def _harnesses() -> list[dict[str, Any]]:
    return [
        {"harness": "claude", "model": "m1", "reasoning": "low", "run": "claude", "reason": None,
         "doc": _doc("claude", [_verdict("docs", "better", 0.3)])},
        {"harness": "codex", "model": "m2", "reasoning": None, "run": "codex", "reason": None,
         "doc": _doc("codex", [_verdict("docs", "partial", 0.1, status="running")])},
        {"harness": "qwen", "model": "m3", "reasoning": None, "run": "qwen", "doc": None,
         "reason": "the run's log is missing (events.jsonl)"},
    ]


def test_the_matrix_holds_each_harnesss_own_verdict_and_never_pools() -> None:
    """Each cell is that harness's verdict against its own vanilla; a harness without a report is a 'no result' cell."""
    doc = cross_document("pkg", _harnesses(), ["docs"])
    cells = doc["matrix"][0]["cells"]
    assert {h: c["verdict"] for h, c in cells.items()} == {"claude": "better", "codex": "partial", "qwen": "no result"}
    assert (cells["claude"]["effect_pp"], cells["claude"]["against"], cells["codex"]["against"]) == (30.0, "claude/vanilla",
                                                                                                   "codex/vanilla")
    assert "events.jsonl" in cells["qwen"]["headline"] and cells["qwen"]["effect_pp"] is None
    assert [s["sentence"] for s in doc["sentences"]] == [
        "claude (m1): docs vs vanilla: better", "codex (m2): docs vs vanilla: partial",
        "qwen (m3): no result: the run's log is missing (events.jsonl)"]
    per = doc["per_harness"]
    assert [(a["arm"], a["pass_rate"], a["mean_total_tokens"]) for a in per["claude"]["arms"]] == [
        ("vanilla", 0.0, 100.0), ("docs", 1.0, 100.0)]
    assert (per["codex"]["status"], per["qwen"]["status"], per["qwen"]["arms"]) == ("running", "no result", [])


def test_the_page_reads_answer_then_matrix_and_colours_only_decided_cells() -> None:
    """The answer comes first, every matrix cell names its harness, and a partial verdict is never coloured."""
    doc = cross_document("pkg", _harnesses(), ["docs"])
    html = render_cross_html(doc)
    assert html.index('id="answer"') < html.index('id="matrix"') < html.index('id="per-harness"')
    assert '<td data-harness="claude" data-verdict="better"' in html and '<span class="v-better">better</span>' in html
    assert '<td data-harness="codex" data-verdict="partial"' in html and "v-partial" not in html
    assert 'href="codex/report/report.html"' in html
    assert "claude: PROBE RUN (scripted model server, no spend); codex: PROBE RUN" in html  # labelled, never mistaken
    assert render_cross_html(cross_document("pkg", _harnesses(), ["docs"])) == html  # pure: the same bytes again


def test_every_csv_row_names_its_harness() -> None:
    """The CSV has one verdict row per harness and one row per attempt, each with its harness and model."""
    hs = _harnesses()
    doc = cross_document("pkg", hs, ["docs"])
    rows = [r.split(",") for r in cross_csv_text(doc, {h["harness"]: h["doc"] for h in hs}).splitlines()[1:]]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("claude", "m1", "verdict"), ("codex", "m2", "verdict"), ("qwen", "m3", "verdict"),
        ("claude", "m1", "attempt"), ("claude", "m1", "attempt"), ("codex", "m2", "attempt"), ("codex", "m2", "attempt")]


def test_the_dashboard_shows_one_matrix_per_cross_agent_folder() -> None:
    """Runs of one cross-agent folder make one package × harness table; a run on its own makes none."""
    def src(root: str, harness: str, verdicts: list[dict[str, Any]], group: str | None) -> RunSource:
        return RunSource(key=f"k-{harness}", root=root, status={"harness": harness, "name": "pkg", "phase": "complete"},
                         settings={"treatments": {"docs": {}}}, results={"verdicts": verdicts}, stale=None, group=group)

    sources = [src("/r/x/codex", "codex", [_verdict("docs", "worse", -0.2)], "/r/x"),
               src("/r/x/claude", "claude", [_verdict("docs", "better", 0.3)], "/r/x"),
               src("/r/alone", "claude", [_verdict("docs", "better", 0.3)], None)]
    (m,) = cross_matrices(sources)
    assert (m.folder, m.harnesses, m.packages) == ("/r/x", ["claude", "codex"], ["docs"])
    assert m.cells["docs"] == {"claude": ("better", "docs vs vanilla: better"), "codex": ("worse", "docs vs vanilla: worse")}
    html = cross_fragment([m])
    assert 'data-harness="claude" data-verdict="better"' in html and 'data-harness="codex" data-verdict="worse"' in html


def test_an_old_single_harness_log_rebuilds_its_report_byte_identically(tmp_path: Path) -> None:
    """A run written before runner.harnesses existed rebuilds results.json and results.csv to the bytes the older
    PluginBench wrote; report.html (whose layout newer versions extend, e.g. the attempt links) rebuilds to the same
    bytes every time."""
    run = tmp_path / "run"
    shutil.copytree(OLD_RUN, run)
    data = ("results.json", "results.csv")
    before = {f: (run / "report" / f).read_bytes() for f in data}
    shutil.rmtree(run / "report")
    build_report(run)
    assert {f: (run / "report" / f).read_bytes() for f in data} == before
    html = (run / "report" / "report.html").read_bytes()
    shutil.rmtree(run / "report")
    build_report(run)
    assert (run / "report" / "report.html").read_bytes() == html


def test_the_dashboard_reader_marks_a_harness_run_of_a_cross_agent_folder(tmp_path: Path) -> None:
    """A run inside a folder with cross-agent.json is read with that folder as its group; a run on its own has none."""
    import anyio

    from pluginbench.dashboard._reader import RunEntry, refresh

    alone, member = tmp_path / "alone", tmp_path / "cross" / "simulated"
    shutil.copytree(OLD_RUN, alone)
    shutil.copytree(OLD_RUN, member)
    (tmp_path / "cross" / "cross-agent.json").write_text("{}")
    entries = [RunEntry(key="a", root=alone), RunEntry(key="m", root=member)]
    for e in entries:
        anyio.run(refresh, e)
    assert [e.group for e in entries] == [None, str(tmp_path / "cross")]
    assert entries[1].status is not None and entries[1].status["harness"] == "simulated"
