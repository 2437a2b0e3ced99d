"""results.json ``code_measures`` and report.html's code-quality sections, from attempt rows as the
report writes them: grouped by language and analyzer, never pooled, unknown never 0."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest

from pluginbench.measures._builtin import LINES_OBSERVER_VERSION
from pluginbench.projections._report_code import code_measures_section
from pluginbench.projections._report_quality import (
    code_quality_html,
    not_measured_html,
    revisions_html,
)

RCA, LIZARD = "rust-code-analysis 0.0.4", "lizard 1.24.3"


def _m(value: float | None, language: str | None = None, analyzer: str | None = None, reason: str | None = None,
       unit: str = "points") -> dict[str, Any]:
    out: dict[str, Any] = {"value": value, "unit": unit, "status": "measured" if value is not None else "unknown",
                           "reason": reason}
    if language or analyzer:
        out["language"], out["analyzer"] = language, analyzer
    return out


def _row(aid: str, task: str, arm: str, **measures: dict[str, Any]) -> dict[str, Any]:
    return {"attempt_id": aid, "task": task, "arm": arm, "state": "complete", "ineligible": None,
            "measures": measures}


ROWS = [
    _row("py.v.1", "py-task", "vanilla", cyclomatic_added=_m(10, "python", RCA)),
    _row("py.v.2", "py-task", "vanilla", cyclomatic_added=_m(None, reason="the patch does not apply")),
    _row("py.g.1", "py-task", "guided", cyclomatic_added=_m(2, "python", RCA)),
    _row("py.g.2", "py-task", "guided", cyclomatic_added=_m(4, "python", RCA)),
    _row("go.v.1", "go-task", "vanilla", cyclomatic_added=_m(7, "go", LIZARD)),
    _row("go.g.1", "go-task", "guided", cyclomatic_added=_m(None, "go", LIZARD, reason="lizard crashed")),
    _row("mixed.v.1", "mixed", "vanilla", cyclomatic_added=_m(1, "python", RCA)),
    _row("mixed.v.2", "mixed", "vanilla", cyclomatic_added=_m(5, "go", LIZARD)),
    _row("mixed.g.1", "mixed", "guided", cyclomatic_added=_m(None, reason="two languages: not pooled")),
]
TASKS, ARMS = ["go-task", "mixed", "py-task"], ["vanilla", "guided"]


def _section(rows: list[dict[str, Any]] = ROWS, **kw: Any) -> dict[str, Any]:
    return code_measures_section(None, rows, TASKS, ARMS, ["tokens", "time", "lines", "cyclomatic"], **kw)


def test_code_measures_group_by_language_and_analyzer_and_never_pool() -> None:
    """Python (rust-code-analysis) and Go (lizard) values of one metric get separate groups with their
    own per-task medians and per-arm means of task medians; a task with both languages gets a row in
    each group; nothing is averaged across groups."""
    groups = _section()["cyclomatic_added"]
    assert set(groups) == {f"python|{RCA}", f"go|{LIZARD}", "unknown|unknown"}
    py, go = groups[f"python|{RCA}"], groups[f"go|{LIZARD}"]
    assert (py["language"], py["analyzer"], py["unit"], py["gate_name"]) == (
        "python", RCA, "points", "Net cyclomatic complexity added")
    assert py["per_task"]["py-task"]["guided"]["median"] == 3 and py["per_task"]["py-task"]["guided"]["n"] == 2
    assert py["per_task"]["mixed"]["vanilla"]["median"] == 1 and go["per_task"]["mixed"]["vanilla"]["median"] == 5
    assert py["per_arm"]["vanilla"] == {"median_of_task_medians": 5.5, "mean_of_task_medians": 5.5, "tasks": 2,
                                        "unknown_tasks": [], "not_applicable_tasks": []}
    assert go["per_arm"]["vanilla"]["mean_of_task_medians"] == 6  # (7 + 5) / 2, the Python values never enter
    # a treatment's delta is its median minus vanilla's, over the tasks both have (py-task only here)
    assert (py["per_arm"]["guided"]["delta_vs_vanilla"], py["per_arm"]["guided"]["paired_tasks"]) == (-7, 1)
    assert go["per_arm"]["guided"]["delta_vs_vanilla"] is None and go["per_arm"]["guided"]["paired_tasks"] == 0


def test_an_unknown_value_is_counted_with_its_reason_never_as_zero() -> None:
    """An unknown without a language joins the one group its task has (py-task → Python) with its reason;
    an unknown on a task with two groups goes to unknown|unknown; an arm whose only value is unknown has
    a null median and names the task under unknown_tasks."""
    groups = _section()["cyclomatic_added"]
    cell = groups[f"python|{RCA}"]["per_task"]["py-task"]["vanilla"]
    assert cell == {"median": 10, "status": "measured", "n": 1, "unknown": 1, "not_applicable": 0,
                    "reasons": ["the patch does not apply"], "reference": None, "ratio_to_reference": None}
    go_guided = groups[f"go|{LIZARD}"]["per_task"]["go-task"]["guided"]
    assert go_guided["median"] is None and go_guided["reasons"] == ["lizard crashed"]
    assert groups[f"go|{LIZARD}"]["per_arm"]["guided"]["unknown_tasks"] == ["go-task"]
    assert groups[f"go|{LIZARD}"]["per_arm"]["guided"]["mean_of_task_medians"] is None
    loose = groups["unknown|unknown"]
    assert loose["language"] is None and loose["per_task"]["mixed"]["guided"]["reasons"] == ["two languages: not pooled"]


def test_an_unknown_on_a_task_without_values_takes_the_tasks_language_never_another_group() -> None:
    """A task whose values of a metric are all unknown without a language (coverage not measured on a Go
    task) gets `<its language>|unknown`, the language its other code measures name, and never joins the
    Python group of another task; a task with no language at all gets unknown|unknown."""
    rows = [_row("a", "py-task", "vanilla", cyclomatic_added=_m(4, "python", RCA)),
            _row("b", "go-task", "vanilla", cyclomatic_added=_m(None, reason="not measured: not_configured"),
                 cognitive_added=_m(3, "go", LIZARD)),
            _row("c", "bare", "vanilla", cyclomatic_added=_m(None, reason="patch does not apply"))]
    groups = code_measures_section(None, rows, ["bare", "go-task", "py-task"], ["vanilla"],
                                   ["cyclomatic", "cognitive"])["cyclomatic_added"]
    assert set(groups) == {f"python|{RCA}", "go|unknown", "unknown|unknown"}
    assert groups[f"python|{RCA}"]["per_arm"]["vanilla"] == {
        "median_of_task_medians": 4, "mean_of_task_medians": 4, "tasks": 1, "unknown_tasks": [],
        "not_applicable_tasks": []}
    go = groups["go|unknown"]
    assert (go["language"], go["analyzer"], go["per_arm"]["vanilla"]["unknown_tasks"]) == ("go", None, ["go-task"])
    assert set(groups["unknown|unknown"]["per_task"]) == {"bare"}


def test_a_reference_value_gives_the_ratio_and_a_missing_one_gives_none() -> None:
    """With references[task][metric] measured, each cell carries the reference and median / reference;
    a zero reference gives no ratio (never a division by zero)."""
    refs = {"py-task": {"cyclomatic_added": {"status": "measured", "value": 4, "reason": None}},
            "go-task": {"cyclomatic_added": {"status": "measured", "value": 0, "reason": None}}}
    groups = _section(references=refs)["cyclomatic_added"]
    cell = groups[f"python|{RCA}"]["per_task"]["py-task"]["guided"]
    assert (cell["reference"], cell["ratio_to_reference"]) == (4, 0.75)
    assert groups[f"go|{LIZARD}"]["per_task"]["go-task"]["vanilla"]["ratio_to_reference"] is None


def test_a_language_independent_measure_groups_under_its_observer() -> None:
    """Iterations and duplicated test lines carry no language: they group under `any` and the measure's
    own observer, so the report never says their analyzer is unknown."""
    rows = [_row("a", "py-task", "vanilla",
                 duplicated_test_lines_added=_m(12, unit="lines"),
                 verification_iterations=_m(None, reason="no transcript", unit="iterations"))]
    section = code_measures_section(None, rows, ["py-task"], ["vanilla"], ["lines", "iterations"])
    assert set(section["duplicated_test_lines_added"]) == {f"any|lines observer {LINES_OBSERVER_VERSION}"}
    assert set(section["verification_iterations"]) == {"any|iterations observer 2"}
    assert "source_lines_added" not in section  # plain diff counts stay in per_task


class _Cells(HTMLParser):
    """Every <td> of the code-quality table: its data-* attributes, title and text."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []
        self._cur: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td" and any(k == "data-arm" for k, _ in attrs):
            self._cur = {k: v or "" for k, v in attrs}
            self._cur["text"] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cur is not None:
            self.cells.append(self._cur)
            self._cur = None

    def handle_data(self, data: str) -> None:
        if self._cur is not None:
            self._cur["text"] += data


def test_the_code_quality_table_shows_unknown_with_its_reason_never_zero() -> None:
    """Each group renders its own rows; a known median shows its value and n; an unknown one reads
    'unknown' with the reason in its tooltip and in the numbered list under the table."""
    doc = {"arms": ARMS, "tasks": TASKS, "code_measures": _section()}
    html = code_quality_html(doc)
    parser = _Cells()
    parser.feed(html)
    by = {(c["data-group"], c.get("data-task"), c["data-arm"]): c for c in parser.cells}
    known = by[(f"python|{RCA}", "py-task", "guided")]
    assert known["data-value"] == "3" and "(n=2)" in known["text"]
    unknown = by[(f"go|{LIZARD}", "go-task", "guided")]
    assert unknown["data-value"] == "" and unknown["text"].startswith("unknown") and unknown["title"] == "lizard crashed"
    assert re.fullmatch(r"unknown\[\d+\]", unknown["text"]), unknown["text"]  # no number but the footnote mark
    assert '<li id="code-reason-' in html and "lizard crashed</li>" in html
    summary = by[(f"go|{LIZARD}", None, "vanilla")]
    assert summary["data-value"] == "6"
    guided = by[(f"python|{RCA}", None, "guided")]
    assert guided["data-value"] == "3" and "Δ −7 (too few paired tasks for an interval) vs vanilla" in guided["text"]


def test_revisions_and_not_measured_sections_list_their_rows() -> None:
    """Measurement revisions show each revision's status and why one is not selected; Not measured
    lists task, measure and reason; both say so plainly when empty."""
    doc = {"measurement_history": [
        {"revision": "r1", "status": "selected", "selected": True, "measurements": ["coverage"], "added": ["coverage"],
         "reason": None, "attempts": 4},
        {"revision": "r2", "status": "not_selected", "selected": False, "measurements": ["coverage", "cognitive"],
         "added": ["cognitive"], "reason": "it lost an observation", "attempts": 4}],
        "not_measured": [{"task": "go-task", "measure": "coverage", "reason": "not_configured: no coverage profile"}]}
    html = revisions_html(doc)
    assert 'data-revision="r2"' in html and "it lost an observation" in html and "not_selected" in html
    assert "not_configured: no coverage profile" in not_measured_html(doc)
    assert "No measurement revision" in revisions_html({}) and "Every selected measure" in not_measured_html({})


def _pairs(n: int, delta: float, spread: float = 0.5) -> list[dict[str, Any]]:
    """``n`` tasks where guided's cyclomatic value is vanilla's plus ``delta`` (± a small alternating spread)."""
    rows = []
    for i in range(n):
        base = 10 + i
        shift = delta + (spread if i % 2 else -spread)
        rows += [_row(f"t{i}.v", f"t{i}", "vanilla", cyclomatic_added=_m(base, "python", RCA)),
                 _row(f"t{i}.g", f"t{i}", "guided", cyclomatic_added=_m(base + shift, "python", RCA))]
    return rows


def test_a_paired_code_delta_carries_the_sign_flip_interval_and_reads_in_the_declared_direction() -> None:
    """cyclomatic_added declares lower is better: a consistent −3 over 8 tasks reads better with a 90% sign-flip
    interval below 0, +3 reads worse, ±0.5 noise around 0 reads unclear, and 3 tasks are too few for an interval."""
    from pluginbench import stats

    cases = [(8, -3.0, "better"), (8, 3.0, "worse"), (8, 0.0, "unclear"), (3, -3.0, "unclear")]
    for n, delta, reading in cases:
        rows = _pairs(n, delta)
        tasks = sorted({r["task"] for r in rows})
        arm = code_measures_section(None, rows, tasks, ARMS, ["cyclomatic"], level=0.90)[
            "cyclomatic_added"][f"python|{RCA}"]["per_arm"]["guided"]
        assert arm["better"] == "lower" and arm["reading"] == reading, (n, delta, arm)
        expected = stats.mean_interval(_diffs(rows), 0.90)
        assert arm["delta_vs_vanilla"] == pytest.approx(expected.estimate, abs=1e-6) and arm["paired_tasks"] == n
        assert (arm["delta_low"], arm["delta_high"], arm["delta_status"], arm["delta_level"]) == (
            _round(expected.low), _round(expected.high), expected.status, 0.90)


def _diffs(rows: list[dict[str, Any]]) -> list[float]:
    by = {(r["task"], r["arm"]): r["measures"]["cyclomatic_added"]["value"] for r in rows}
    return [by[(t, "guided")] - by[(t, "vanilla")] for t in sorted({t for t, _ in by})]


def _round(x: float | None) -> float | int | None:
    if x is None:
        return None
    r = round(x, 6)
    return int(r) if r.is_integer() else r


def test_paired_delta_reading_follows_the_direction_table() -> None:
    """higher-is-better flips the reading; a column with no better direction reads descriptive whatever the interval."""
    from pluginbench.projections._report_code import paired_delta

    up = [1.0, 2.0, 1.5, 2.5, 1.0, 2.0, 1.5, 2.0]
    assert paired_delta(up, "higher", 0.9)["reading"] == "better"
    assert paired_delta(up, "lower", 0.9)["reading"] == "worse"
    assert paired_delta(up, None, 0.9)["reading"] == "descriptive"
    assert paired_delta([], "lower", 0.9) | {} == {
        "delta_vs_vanilla": None, "paired_tasks": 0, "delta_low": None, "delta_high": None, "delta_level": 0.9,
        "delta_status": "no_tasks", "better": "lower", "reading": "unclear"}


def test_not_applicable_is_distinct_from_unknown_in_cells_html_and_missing_values() -> None:
    """A duplicate-groups value that does not apply (a Python task) counts as not_applicable, not unknown: its cell
    says so, the arm lists the task under not_applicable_tasks (not unknown_tasks), the page reads "not applicable"
    where a real unknown reads "unknown", and missing_values leaves it out."""
    from pluginbench.projections._report_data import missing_values_for

    na = {"value": None, "unit": "groups", "status": "not_applicable",
          "reason": "duplicate-code groups are measured for JavaScript/TypeScript source (jscpd); the task has none"}
    rows = [_row("a", "py-task", "vanilla", duplicate_groups_added=na),
            _row("b", "py-task", "guided", duplicate_groups_added=na),
            _row("c", "js-task", "vanilla", duplicate_groups_added=_m(None, reason="jscpd crashed", unit="groups")),
            _row("d", "js-task", "guided", duplicate_groups_added=_m(2, "javascript/typescript", "jscpd 4", unit="groups"))]
    groups = code_measures_section(None, rows, ["js-task", "py-task"], ARMS, ["dead_code"])["duplicate_groups_added"]
    cells = {(t, a): c for g in groups.values() for t, per in g["per_task"].items() for a, c in per.items()}
    assert cells[("py-task", "vanilla")] | {"reasons": []} == {
        "median": None, "status": "not_applicable", "n": 0, "unknown": 0, "not_applicable": 1, "reasons": [],
        "reference": None, "ratio_to_reference": None}
    assert cells[("js-task", "vanilla")]["status"] == "unknown" and cells[("js-task", "vanilla")]["unknown"] == 1
    py_group = next(g for g in groups.values() if "py-task" in g["per_task"])
    assert py_group["per_arm"]["vanilla"]["not_applicable_tasks"] == ["py-task"]
    assert py_group["per_arm"]["vanilla"]["unknown_tasks"] == []
    html = code_quality_html({"arms": ARMS, "tasks": ["js-task", "py-task"], "verdicts": [],
                              "code_measures": {"duplicate_groups_added": groups}})
    assert 'data-status="not_applicable"' in html and "not applicable</span>" in html and ">unknown</span>" in html
    full = {"attempt_id": "a", "task": "py-task", "arm": "vanilla", "repeat": 1, "state": "complete",
            "outcome": "pass", "outcome_reason": None, "reward": 1.0, "coding_seconds": 1.0,
            "tokens": {"status": "exact", **{k: 1 for k in ("input", "cached_input", "uncached_input", "output",
                                                             "reasoning_output", "total")}, "reason": None},
            "measures": {"duplicate_groups_added": na, "dead_code_candidates_added": _m(None, reason="vulture failed")}}
    fields = [m["field"] for m in missing_values_for(full, [])]
    assert "measures.dead_code_candidates_added" in fields and "measures.duplicate_groups_added" not in fields


def test_a_partial_run_shows_the_code_delta_uncoloured() -> None:
    """A decided code delta is coloured green in a complete run and plain when a verdict says the run is partial."""
    rows = _pairs(8, -3.0)
    tasks = sorted({r["task"] for r in rows})
    groups = code_measures_section(None, rows, tasks, ARMS, ["cyclomatic"])
    doc = {"arms": ARMS, "tasks": tasks, "code_measures": groups, "verdicts": [{"kind": "better"}]}
    assert 'class="delta delta-better"' in code_quality_html(doc)
    partial = code_quality_html({**doc, "verdicts": [{"kind": "partial"}]})
    assert "delta-better" not in partial and 'class="delta delta-plain" data-delta="-3" data-reading="better"' in partial
