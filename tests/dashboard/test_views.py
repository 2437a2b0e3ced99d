"""The dashboard's pure core: discovery, page models, plots, HTML and the request guard."""

from __future__ import annotations

import os
from pathlib import Path

from pluginbench.dashboard._app import refusal
from pluginbench.dashboard._discovery import find_runs, run_key
from pluginbench.dashboard._html import results_fragment, run_fragment, runs_fragment
from pluginbench.dashboard._plots import attempts_over_time, heat_grid, token_bars
from pluginbench.dashboard._reader import RunEntry, due
from pluginbench.dashboard._timeline import Timeline
from pluginbench.dashboard._views import RunSource, results_model, run_model, runs_model
from pluginbench.status import status_snapshot
from tests.dashboard._runs import synthetic_run


def _mark_run(p: Path) -> Path:
    p.mkdir(parents=True)
    (p / "evaluation.json").write_text("{}")
    (p / "evaluation-binding.json").write_text("{}")
    return p


def source(root: Path, **kw: object) -> RunSource:
    import json

    results = root / "report" / "results.json"
    return RunSource(
        key=run_key(root), root=str(root),
        status=status_snapshot(root, check_left_running=False),
        settings=json.loads((root / "evaluation.json").read_text()),
        results=json.loads(results.read_text()) if results.exists() else None,
        stale=None, **kw,  # type: ignore[arg-type]
    )


# ---------------------------------------------------------------- discovery


def test_discovery_skips_symlinks_hidden_folders_and_runs_inside_runs(tmp_path: Path) -> None:
    """A run is found by its two files; symlinked and hidden folders and folders inside a run are not searched."""
    a = _mark_run(tmp_path / "runs" / "a")
    _mark_run(tmp_path / "runs" / "a" / "evidence" / "nested")
    _mark_run(tmp_path / "runs" / ".hidden" / "b")
    c = _mark_run(tmp_path / "runs" / "group" / "c")
    elsewhere = _mark_run(tmp_path / "elsewhere" / "d")
    os.symlink(elsewhere, tmp_path / "runs" / "link-to-d")
    os.symlink(tmp_path / "elsewhere", tmp_path / "runs" / "link-dir")
    half = tmp_path / "runs" / "half"
    half.mkdir()
    (half / "evaluation.json").write_text("{}")
    found = find_runs([tmp_path / "runs"])
    assert sorted(found.values()) == sorted([a, c])
    assert set(found) == {run_key(a), run_key(c)}


def test_run_keys_are_url_safe_and_distinct_for_alike_names(tmp_path: Path) -> None:
    """Two runs with the same folder name get different keys without '/', '.' or spaces."""
    k1, k2 = run_key(tmp_path / "x" / "my run..1"), run_key(tmp_path / "y" / "my run..1")
    assert k1 != k2
    for k in (k1, k2):
        assert "/" not in k and "." not in k and " " not in k


# ---------------------------------------------------------------- reading cadence


def test_due_reads_owned_runs_at_most_every_two_seconds_and_others_on_change() -> None:
    """An owned run is due again after 2 s; an unowned one only when a file changed; a failed read retries."""
    e = RunEntry(key="k", root=Path("/r"))
    assert due(e, ((1, 1),), 0.0)
    e.status, e.signature, e.read_at = {"active": True}, ((1, 1),), 10.0
    assert not due(e, ((2, 2),), 11.0)
    assert due(e, ((1, 1),), 12.0)
    e.status = {"active": False}
    assert not due(e, ((1, 1),), 100.0)
    assert due(e, ((1, 2),), 10.1)
    e.stale = "caught mid-write"
    assert not due(e, ((1, 1),), 11.0) and due(e, ((1, 1),), 12.5)


def test_timeline_keeps_a_partial_line_until_its_newline() -> None:
    """Completion times are collected from whole lines only, in log order."""
    t = Timeline()
    t.feed(b'{"type":"attempt.completed","at":"2026-01-01T00:00:01.000Z","seq":1}\n{"type":"attempt.comp')
    assert t.completed == ["2026-01-01T00:00:01.000Z"]
    t.feed(b'leted","at":"2026-01-01T00:00:05.000Z","seq":2}\n')
    assert t.completed == ["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:05.000Z"]


# ---------------------------------------------------------------- page models


def test_runs_page_lists_running_runs_first(tmp_path: Path) -> None:
    """A run a process owns sorts before the others, whatever their names or activity."""
    a = source(synthetic_run(tmp_path / "a", name="alpha"))
    b = source(synthetic_run(tmp_path / "b", name="beta"))
    running = RunSource(**{**{f: getattr(b, f) for f in b.__struct_fields__},
                           "status": {**(b.status or {}), "active": True}})
    rows = runs_model([a, running])
    assert [r.name for r in rows] == ["beta", "alpha"] and rows[0].running
    assert rows[1].completed == 5 and rows[1].total == 8
    assert rows[1].tokens is None  # one attempt's usage is unknown: the total is unknown, not a sum


def test_runs_page_tokens_column_says_it_is_what_the_run_spent(tmp_path: Path) -> None:
    """The Runs table's token column is labelled as the run's spend and its tooltip says reused vanilla attempts are excluded."""
    html = runs_fragment(runs_model([source(synthetic_run(tmp_path / "a", name="alpha"))]))
    assert ">coding tokens spent</th>" in html
    assert "reused from the vanilla cache are excluded" in html


def test_results_filters_narrow_rows_and_blanks_stay_blank(tmp_path: Path) -> None:
    """Each filter keeps only matching rows; an unmeasured value is None (a blank cell), never 0."""
    src = source(synthetic_run(tmp_path / "a"))
    everything = results_model([src], {})
    assert everything.total == len(everything.rows) == 8
    vanilla = results_model([src], {"arm": "vanilla"})
    assert {r.arm for r in vanilla.rows} == {"vanilla"} and len(vanilla.rows) == 4
    one = results_model([src], {"arm": "vanilla", "task": "task-a"})
    assert len(one.rows) == 2
    unknown = next(r for r in one.rows if r.repeat == 1)
    assert unknown.input_tokens is None and "input_tokens" in unknown.reasons
    assert unknown.source_lines_added is None and unknown.reasons["source_lines_added"]
    pending = next(r for r in everything.rows if r.correctness is None)
    assert pending.coding_seconds is None and pending.input_tokens is None
    html = results_fragment(one)
    assert html.count("<tr data-arm=") == 2 and '<td class="blank" title=' in html
    assert not one.mixed and 'id="mixed"' not in html


def test_results_warn_when_rows_span_several_combinations(tmp_path: Path) -> None:
    """Rows of two models make the page say to compare arms within one combination; a filter removes it."""
    a = source(synthetic_run(tmp_path / "a"))
    b = source(synthetic_run(tmp_path / "b", model="model-y"))
    page = results_model([a, b], {})
    assert page.mixed and len(page.combinations) == 2
    assert "compare arms within one combination" in results_fragment(page)
    assert not results_model([a, b], {"model": "model-y"}).mixed


def test_results_mark_reused_vanilla_attempts_and_count_each_once_when_filtered(tmp_path: Path) -> None:
    """A run that reused another run's vanilla attempts lists them marked reused (with their cohort), the page
    says pooled counts can include them twice, and the coded filter counts every attempt once."""
    coded = source(synthetic_run(tmp_path / "a"))
    assert coded.results is not None
    reused_doc = {**coded.results, "attempts": [
        {**a, "reused": True, "origin_cohort": "vanilla/simulated-0123/1"} if a.get("arm") == "vanilla" else a
        for a in coded.results["attempts"]
    ]}
    reusing = RunSource(**{**{f: getattr(coded, f) for f in coded.__struct_fields__},
                           "key": coded.key + "-b", "results": reused_doc})
    pooled = results_model([coded, reusing], {})
    vanilla_rows = [r for r in pooled.rows if r.arm == "vanilla"]
    assert {r.source for r in vanilla_rows} == {"coded", "reused"}
    assert pooled.reused == sum(r.source == "reused" for r in pooled.rows) == 4
    assert {r.origin_cohort for r in pooled.rows if r.source == "reused"} == {"vanilla/simulated-0123/1"}
    html = results_fragment(pooled)
    assert 'id="reused-note"' in html and 'class="src-reused" title="from vanilla/simulated-0123/1"' in html
    once = results_model([coded, reusing], {"source": "coded"})
    assert once.reused == 0 and len(once.rows) == pooled.total - 4
    assert sum(k for arms in once.grid.values() for _, k in [arms.get("vanilla", (0, 0))]) == \
        sum(k for arms in results_model([coded], {}).grid.values() for _, k in [arms.get("vanilla", (0, 0))])
    assert 'id="reused-note"' not in results_fragment(once)


def test_run_page_shows_repeats_totals_and_unowned_running_as_interrupted(tmp_path: Path) -> None:
    """Attempts by task and arm carry each repeat's state or outcome and tokens; an unowned running attempt shows interrupted."""
    root = synthetic_run(tmp_path / "a", report=False)
    from tests.projections.test_report import RunBuilder  # noqa: F401 - the builder wrote the log

    src = source(root)
    model = run_model(src)
    assert model.arms == ["vanilla", "guided"] and model.tasks == ["task-a", "task-b"]
    marks = [r.mark for r in model.cells["task-a"]["vanilla"]]
    assert marks == ["pass", "fail"]
    assert model.cells["task-a"]["vanilla"][0].tokens == 1200
    assert model.grid["task-a"]["guided"] == (2, 2)
    assert model.grid["task-b"].get("guided") in (None, (0, 0))
    assert not model.has_report and model.resume_command
    html = run_fragment(model)
    for part in ('id="attempts"', 'id="totals"', "Discarded attempts", "Revisions", "Check for containers left running"):
        assert part in html
    assert "report.html" not in html


def test_html_escapes_run_values(tmp_path: Path) -> None:
    """A run name with markup is shown as text, not interpreted."""
    src = source(synthetic_run(tmp_path / "a", name="<script>alert(1)</script>"))
    html = runs_fragment(runs_model([src])) + run_fragment(run_model(src))
    assert "<script>alert" not in html and "&lt;script&gt;" in html


# ---------------------------------------------------------------- plots


def test_heat_grid_leaves_cells_without_graded_attempts_blank() -> None:
    """A task × arm with no known outcome is a blank cell, never a 0 % cell."""
    svg = heat_grid(["t1", "t2"], ["vanilla", "g"], {"t1": {"vanilla": (1, 2), "g": (2, 2)}, "t2": {}})
    assert svg.count('class="blank"') == 2 and "50% (1/2)" in svg and "100% (2/2)" in svg
    assert ">0%" not in svg


def test_token_bars_say_unknown_instead_of_drawing_zero() -> None:
    """An arm whose token total is unknown gets the word unknown and no bar."""
    svg = token_bars({"vanilla": {"tokens": {"total_tokens": None}}, "g": {"tokens": {"total_tokens": 500, "lower_bound": True}}})
    assert "unknown" in svg and svg.count('class="bar"') == 1 and "≥ 500" in svg


def test_attempts_over_time_counts_completions() -> None:
    """The time plot ends at the number of completed attempts out of the total."""
    svg = attempts_over_time(["2026-01-01T00:00:00.000Z", "2026-01-01T00:01:00.000Z"], 4)
    assert "2 of 4 complete" in svg and "<script" not in svg


# ---------------------------------------------------------------- the guard


def _scope(method: str = "GET", host: str = "127.0.0.1:8765", path: str = "/", raw: bytes | None = None) -> dict:
    return {"type": "http", "method": method, "path": path, "raw_path": raw or path.encode(),
            "headers": [(b"host", host.encode())]}


def test_guard_allows_only_get_with_a_loopback_host_of_the_port() -> None:
    """GET/HEAD with Host 127.0.0.1:<port> or localhost:<port> pass; other methods, hosts and ports are refused."""
    assert refusal(_scope(), 8765) is None
    assert refusal(_scope("HEAD", "localhost:8765"), 8765) is None
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        assert refusal(_scope(method), 8765)[0] == 405  # type: ignore[index]
    for host in ("evil.example:8765", "127.0.0.1", "localhost:80", "127.0.0.1:8766", "0.0.0.0:8765"):
        assert refusal(_scope(host=host), 8765)[0] == 403  # type: ignore[index]


def test_guard_refuses_dot_dot_and_encoded_traversal() -> None:
    """'..' segments, backslashes and percent-encoded dots or slashes are refused before routing."""
    for path, raw in (("/run/k/../../etc/passwd", None), ("/run/k/../x", b"/run/k/%2e%2e/x"),
                      ("/run/k/a/b", b"/run/k/a%2Fb"), ("/run/k\\x", None)):
        assert refusal(_scope(path=path, raw=raw), 8765)[0] == 400  # type: ignore[index]


def test_run_page_marks_reused_vanilla_attempts(tmp_path: Path) -> None:
    """A repeat imported from the vanilla cache says so, and the page counts the cache's reuse."""
    src = source(synthetic_run(tmp_path / "a"))
    status = dict(src.status or {})
    status["attempts"] = [dict(a, reused=a["arm"] == "vanilla" and a["state"] == "complete") for a in status["attempts"]]
    status["reuse"] = {"vanilla_attempts": 4, "planned_hits": 3, "reused": 3}
    model = run_model(RunSource(**{**{f: getattr(src, f) for f in src.__struct_fields__}, "status": status}))
    assert [r.reused for r in model.cells["task-a"]["vanilla"]] == [True, True]
    html = run_fragment(model)
    assert "(reused)" in html and "3 of 4 vanilla attempts reused (planned hits 3)" in html


def test_guard_refuses_requests_a_browser_marks_cross_site() -> None:
    """A page on another site cannot make the browser fetch dashboard URLs (Sec-Fetch-Site: cross-site)."""
    scope = _scope()
    scope["headers"].append((b"sec-fetch-site", b"cross-site"))
    assert refusal(scope, 8765)[0] == 403  # type: ignore[index]
    scope["headers"][-1] = (b"sec-fetch-site", b"same-origin")
    assert refusal(scope, 8765) is None


def test_run_page_reuses_the_reports_figures_when_a_report_exists(tmp_path: Path) -> None:
    """With report/results.json the Run page carries the report's forest and distribution figures; without one it has none."""
    with_report = run_fragment(run_model(source(synthetic_run(tmp_path / "a"))))
    assert 'id="report-plots"' in with_report and with_report.count('<figure class="plot-figure">') >= 3
    without = run_fragment(run_model(source(synthetic_run(tmp_path / "b", report=False))))
    assert 'id="report-plots"' not in without


def test_results_rows_of_runs_with_one_name_say_which_run_folder(tmp_path: Path) -> None:
    """Two runs of one config share the evaluation name; each Results row also shows its run folder's name (full path on hover)."""
    a = source(synthetic_run(tmp_path / "first"))
    b = source(synthetic_run(tmp_path / "second"))
    html = results_fragment(results_model([a, b], {}))
    assert f'title="{tmp_path / "first"}">first</span>' in html
    assert f'title="{tmp_path / "second"}">second</span>' in html


def test_runs_and_run_views_show_the_reports_verdict(tmp_path: Path) -> None:
    """The Runs table and the Run page show each treatment's headline from results.json verdicts, the same words the
    report prints; a run without a report says so instead of a verdict."""
    import json

    root = synthetic_run(tmp_path / "a")
    doc = json.loads((root / "report" / "results.json").read_text())
    assert doc["verdicts"], "the report carries verdicts"
    headline = doc["verdicts"][0]["headline"]
    from html import escape

    src = source(root)
    assert escape(headline) in runs_fragment(runs_model([src]))
    page = run_fragment(run_model(src))
    assert page.index('id="verdict"') < page.index('id="attempts"') and escape(headline) in page
    bare = source(synthetic_run(tmp_path / "b", report=False))
    assert "no report" in runs_fragment(runs_model([bare]))


def test_a_running_runs_tokens_say_what_the_complete_attempts_spent_so_far(tmp_path: Path) -> None:
    """While attempts run, the Runs row and the arm totals show the complete attempts' tokens
    "so far" with their count, as status does, instead of unknown; a finished run never does."""
    b = source(synthetic_run(tmp_path / "b", name="beta"))
    status = b.status or {}
    tokens = {**(status.get("tokens") or {}), "total_tokens": None, "complete_total_tokens": 1234,
              "complete_attempts": 3, "running_attempts": 2}
    running = RunSource(**{**{f: getattr(b, f) for f in b.__struct_fields__},
                           "status": {**status, "active": True, "tokens": tokens}})
    html = runs_fragment(runs_model([running]))
    assert "1,234 so far (3 complete)" in html
    finished = RunSource(**{**{f: getattr(b, f) for f in b.__struct_fields__},
                            "status": {**status, "active": False, "tokens": tokens}})
    assert "so far" not in runs_fragment(runs_model([finished]))
    from pluginbench.dashboard._html import _tokens

    assert _tokens(tokens) == "1,234 so far (3 complete)"
    assert _tokens({**tokens, "running_attempts": 0}) == "unknown"


def test_run_page_shows_generation_checks_and_votes_beside_coding(tmp_path: Path) -> None:
    """The run page lists what runs beside coding as status says it: a generated arm's sessions, each arm's check
    results, and llm-check votes with a vote cut off by a killed worker marked as a warning."""
    src = source(synthetic_run(tmp_path / "a"))
    status = dict(src.status or {})
    arm = next(iter(status["arms"]))
    status["arms"] = {**status["arms"], arm: {**status["arms"][arm], "checks": {
        "measured": 2, "complete": 2, "checks": {"explains": {"passed": 1, "failed": 1, "unknown": 0}},
        "grader_tokens": 1830, "grader_tokens_reason": None}}}
    tokens = {"calls": 3, "unknown_calls": 1, "input_tokens": None, "cached_input_tokens": None, "output_tokens": None,
              "total_tokens": None, "lower_bound": True}
    status["model_calls"] = {"reviews": {**tokens, "calls": 0, "unknown_calls": 0},
                             "check_votes": {"started": 3, "open": 0, "cast": 2, "passed": 1, "failed": 1,
                                             "no_verdict": 0, "discarded": 1, "tokens": tokens}}
    status["generation"] = {"arms": {arm: {"sessions": 1, "generated": 1, "failed": 0, "killed": 0, "unfinished": 0,
                                           "tokens": 900, "tokens_status": "exact", "tokens_reason": None,
                                           "seconds": 3.0, "seconds_reason": None}}, "unfinished": []}
    html = run_fragment(run_model(RunSource(**{**{f: getattr(src, f) for f in src.__struct_fields__}, "status": status})))
    assert '<ul id="beside-coding">' in html
    assert f"generation {arm}: 1 generated, 0 failed; 900 tokens" in html
    assert f"checks {arm}: 2/2 complete attempts checked: explains 1/2; llm grader 1,830 tokens" in html
    assert "<li class=warn>llm-check votes: 2 cast (1 pass, 1 fail, 0 no verdict), tokens unknown (1 call(s) with " \
           "unknown usage); 1 discarded (cut off by a killed worker" in html
    plain = run_fragment(run_model(src))
    assert "beside-coding" not in plain


def test_a_run_that_lost_a_settings_file_is_still_found(tmp_path: Path) -> None:
    """A folder with events.jsonl beside only one of the two run files is listed (to be shown unreadable), while a lone evaluation.json is not a run."""
    lost = tmp_path / "runs" / "lost"
    lost.mkdir(parents=True)
    (lost / "evaluation-binding.json").write_text("{}")
    (lost / "events.jsonl").write_text("")
    half = tmp_path / "runs" / "half"
    half.mkdir()
    (half / "evaluation.json").write_text("{}")
    assert list(find_runs([tmp_path / "runs"]).values()) == [lost]
