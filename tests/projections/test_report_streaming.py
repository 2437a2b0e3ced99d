"""The report streams (issue 27, item 3) and writes the bytes it wrote before.

The log is read, checked and folded a line at a time; results.json and results.csv are
written a batch of rows at a time; above ``ATTEMPTS_LISTED_MAX`` attempts report.html
summarises the attempts instead of listing them.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest

from pluginbench.errors import CorruptLogError
from pluginbench.projections import (
    _report_attempts_html,
    _report_cost,
    _report_html,
    _report_plots,
    attempt_rows,
    build_report,
    fold,
    fold_checked_log,
    read_checked_log,
    run_row,
)
from pluginbench.projections import _report_files as report
from pluginbench.rundir import RunDir
from tests.projections._synthetic_run import make_run

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "report_golden"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden files' synthetic run, its report built once."""
    run = make_run(tmp_path_factory.mktemp("synthetic") / "run", tasks=5, repeats=2, running=2)
    build_report(run)
    return run


@pytest.mark.parametrize("name", ["results.json", "results.csv", "report.html"])
def test_the_report_is_byte_identical_to_the_one_built_before_it_streamed(synthetic: Path, name: str) -> None:
    """Each report file of the synthetic run has exactly the bytes main's report code wrote (tests/data/report_golden)."""
    assert (synthetic / "report" / name).read_bytes() == (GOLDEN / name).read_bytes()


#: sha256 of the report files of ``make_run(root, tasks=30, repeats=2, running=0)`` as main's
#: report code wrote them at f48a0cd (before the sign-flip test used numpy): 30 tasks put both
#: paired intervals on the seeded Monte Carlo test. results.json and report.html rebuilt when the
#: power plan took the sign-flip test's own critical value and a t tail (its MDE, tasks needed
#: and the verdict's "detect" and "more tasks" numbers changed, nothing else; results.csv unchanged).
#: results.json and report.html rebuilt when the pass-rate interval shown became the bounded-mean
#: betting interval (branch iciv: summary.pass_rate low/high/method, its p_greater/p_less, the
#: verdict's sentence and p, the page's method line, summary cells and forest plot; results.csv unchanged).
#: report.html rebuilt when the page got its Content-Security-Policy meta (branch iunk): the page
#: without that one element is the earlier a32c1aa0… byte for byte.
#: results.json and report.html rebuilt when the undetermined verdict's "more tasks" count became the
#: bootstrap through the deciding rules (branch imore: "about 311 more" → "about 300 more", its more_tasks).
MONTE_CARLO_GOLDEN = {
    "results.json": "aff3c99404b6aaa28e29f11cb392e29a04ed02de69ffc08b8128d7f0d0b5be52",
    "results.csv": "b05e778a6575ac49742a63344fb498e529d0093f2f0b00a15da1de256f7f9e92",
    "report.html": "5e4c8e23e026b4928b7e3e59a0b8aafb7a829541a4383464f69d6d39db377d24",
}


def test_a_run_past_the_exact_limit_reports_the_bytes_it_reported_before(tmp_path: Path) -> None:
    """A 30-task run (Monte Carlo intervals) writes the report files main's code wrote, byte for byte."""
    run = make_run(tmp_path / "run", tasks=30, repeats=2, running=0)
    build_report(run)
    doc = json.loads((run / "report" / "results.json").read_text())
    assert {k: v["exact"] for k, v in doc["deltas"]["guided"]["summary"].items() if "exact" in v} == {
        "pass_rate": False, "tokens": False}
    assert {n: hashlib.sha256((run / "report" / n).read_bytes()).hexdigest() for n in MONTE_CARLO_GOLDEN} == (
        MONTE_CARLO_GOLDEN)


def test_the_streaming_writers_write_what_the_whole_text_functions_return(
        synthetic: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """write_json and write_csv, with rows in batches of 3 or a small document whole, give json.dumps' indented text and csv_text's rows."""
    doc = json.loads((synthetic / "report" / "results.json").read_text())
    monkeypatch.setattr(report, "_BATCH", 3)
    monkeypatch.setattr(report, "_WHOLE_MAX_ATTEMPTS", -1)  # every document a piece at a time
    deep = {"costs": {"attempts": {f"a{i}": {"usd": i / 3, "n": [i] * 4} for i in range(11)}, "x": [[1]] * 8}}
    for value in (doc, {}, {"attempts": []}, {"attempts": [{"a": [1, {}], "é": "\n"}] * 7, "b": {}}, deep,
                  {"a": {"b": {"c": {"d": list(range(9))}}}}):
        out = io.StringIO()
        report.write_json(out, value)
        assert out.getvalue() == json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
        monkeypatch.setattr(report, "_WHOLE_MAX_ATTEMPTS", 100)  # and written whole: the same text
        whole = io.StringIO()
        report.write_json(whole, value)
        assert whole.getvalue() == out.getvalue()
        monkeypatch.setattr(report, "_WHOLE_MAX_ATTEMPTS", -1)
    out = io.StringIO()
    report.write_csv(out, doc)
    assert out.getvalue() == report.csv_text(doc) == (synthetic / "report" / "results.csv").read_text()


def test_the_streamed_fold_is_the_fold_of_the_checked_log(synthetic: Path) -> None:
    """fold_checked_log gives the state, last event and torn tail of folding read_checked_log's events."""
    with open(synthetic / "events.jsonl", "ab") as fh:
        fh.write(b'{"type": "attempt.comp')  # a torn last line
    try:
        rd = RunDir(synthetic)
        streamed, whole = fold_checked_log(rd), read_checked_log(rd)
        state = fold(whole.events)
        assert (run_row(streamed.state), attempt_rows(streamed.state)) == (run_row(state), attempt_rows(state))
        assert streamed.last == whole.events[-1]
        assert streamed.torn_tail_bytes == len(whole.torn_tail) == 22
    finally:
        data = (synthetic / "events.jsonl").read_bytes()
        (synthetic / "events.jsonl").write_bytes(data[: data.rindex(b"\n") + 1])


@pytest.mark.parametrize("damage", ["unknown attempt", "seq gap", "not json", "version", "ledger ahead"])
def test_a_damaged_log_is_refused_with_the_same_words_by_both_readers(
        synthetic: Path, tmp_path: Path, damage: str) -> None:
    """fold_checked_log refuses each damage with exactly read_checked_log's error (file, line, fix)."""
    run = tmp_path / "run"
    shutil.copytree(synthetic, run)
    lines = (run / "events.jsonl").read_bytes().splitlines(keepends=True)
    if damage == "unknown attempt":
        lines[5] = lines[5].replace(b"task-0__vanilla__r1", b"ghost__vanilla__r9")
    elif damage == "seq gap":
        del lines[6]
    elif damage == "not json":
        lines[4] = b"{not json\n"
    elif damage == "version":
        lines[4] = lines[4].replace(b'"v":1', b'"v":99')
    else:
        del lines[-3:]
        from pluginbench.projections import Ledger

        ledger = Ledger(run / "evidence" / "ledger.sqlite")
        ledger.rebuild(fold_checked_log(RunDir(synthetic)).state)
        ledger.close()
    (run / "events.jsonl").write_bytes(b"".join(lines))
    with pytest.raises(CorruptLogError) as whole:
        read_checked_log(RunDir(run))
    with pytest.raises(CorruptLogError) as streamed:
        fold_checked_log(RunDir(run))
    assert str(streamed.value) == str(whole.value)
    assert streamed.value.field == whole.value.field  # type: ignore[attr-defined]  # InputError carries field


def test_above_the_threshold_the_page_summarises_the_attempts(synthetic: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the threshold every attempt is a table row and a dot; one attempt more, a count table by arm, ranges instead of dots, and a pointer to results.csv."""
    doc = json.loads((synthetic / "report" / "results.json").read_text())
    n = len(doc["attempts"])
    for module in (_report_attempts_html, _report_plots, _report_cost):
        monkeypatch.setattr(module, "ATTEMPTS_LISTED_MAX", n)
    listed = _report_html.render_html(doc)
    assert 'id="attempts-table"' in listed and f"All {n} attempts" in listed
    assert 'class="dot"' in listed and "attempts-summary" not in listed
    for module in (_report_attempts_html, _report_plots, _report_cost):
        monkeypatch.setattr(module, "ATTEMPTS_LISTED_MAX", n - 1)
    summary = _report_html.render_html(doc)
    assert 'id="attempts-table"' not in summary and 'class="dot"' not in summary
    assert 'id="attempts-summary"' in summary and 'href="results.csv"' in summary
    assert f"{n:,} attempts: more than the {n - 1:,} this page lists" in summary
    assert 'class="quartiles"' in summary
    complete = sum(1 for r in doc["attempts"] if r["arm"] == "vanilla" and r["state"] == "complete")
    assert f"<tr><td>vanilla</td><td>{sum(1 for r in doc['attempts'] if r['arm'] == 'vanilla')}</td><td>{complete}</td>" in summary
