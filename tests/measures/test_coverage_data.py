"""The coverage parsers and the changed-line computation on real coverage.py and LCOV output."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from pluginbench.errors import MeasurementError
from pluginbench.measures._coverage_changed import (
    CoverageContext,
    added_lines,
    changed_coverage,
    redundant_tests,
)
from pluginbench.measures._coverage_data import decode_numbits, parse_coverage_py_json, parse_lcov

DATA = Path(__file__).parents[1] / "data" / "coverage" / "pyrepo"
PATCH = (DATA / "submission.patch").read_text()


def _report(stage: str, fmt: str):
    d = DATA / "reports" / stage
    if fmt == "coverage-py-json":
        return parse_coverage_py_json((d / "coverage.json").read_text())
    return parse_lcov((d / "lcov.info").read_text(), (d / "lcov.info.per-test.json").read_text())


def test_added_lines_are_new_file_line_numbers():
    """A patch's added lines are numbered as in the new file, per changed file."""
    added = added_lines(PATCH)
    assert added["calc/core.py"] == frozenset(range(9, 23))
    assert added["tests/test_clamp.py"] == frozenset(range(1, 14))


@pytest.mark.parametrize("fmt", ["coverage-py-json", "lcov"])
def test_real_reports_give_the_hand_counted_coverage(fmt):
    """coverage.py JSON and its LCOV export of one run give the hand-counted changed-line
    coverage (6 of 10), branch coverage (3 of 6) and one redundant added test."""
    ctx = CoverageContext(fmt, "7.17.3")
    got = changed_coverage(PATCH, _report("before", fmt), _report("after", fmt), ctx)
    assert got["changed_lines_executable"].value == 10
    assert got["changed_lines_covered"].value == 6
    assert got["changed_line_coverage"].value == 0.6
    assert got["changed_branch_coverage"].value == 0.5
    assert got["redundant_added_tests"].value == 1
    assert got["suite_line_rate"].value == round(11 / 16, 6)
    assert got["changed_line_coverage"].language == ("python" if fmt == "coverage-py-json" else "javascript/typescript")


def test_coverage_py_producer_version_and_per_test_contexts_are_read():
    """The report's own coverage.py version is kept and test contexts become per-test lines."""
    r = _report("after", "coverage-py-json")
    assert r.producer_version == "7.17.3"
    assert r.per_test is not None and r.per_test["test_clamp.test_clamp_mid"]["calc/core.py"] == {12, 14, 16}


def test_identical_added_tests_one_is_flagged():
    """Of two identical added tests the first by name is flagged and leaves the pool, the other stays."""
    fp = {"a": frozenset({("f", 1)}), "b": frozenset({("f", 1)}), "old": frozenset()}
    assert redundant_tests(["a", "b"], fp.__getitem__, fp) == ["a"]


def test_an_added_test_that_alone_runs_a_line_is_not_redundant():
    """A test whose added lines no other test runs is kept, smaller ones are checked first."""
    fp = {"big": frozenset({("f", 1), ("f", 2)}), "small": frozenset({("f", 1)})}
    assert redundant_tests(["big", "small"], fp.__getitem__, fp) == ["small"]


def test_missing_added_file_makes_changed_coverage_unknown_not_zero():
    """An added source file missing from the report makes changed-line coverage unknown with a reason."""
    patch = PATCH + (
        "diff --git a/calc/extra.py b/calc/extra.py\nnew file mode 100644\n--- /dev/null\n+++ b/calc/extra.py\n"
        "@@ -0,0 +1,2 @@\n+def extra():\n+    return 1\n")
    ctx = CoverageContext("coverage-py-json", "7.17.3")
    got = changed_coverage(patch, _report("before", ctx.format), _report("after", ctx.format), ctx)
    assert got["changed_line_coverage"].value is None
    assert got["changed_line_coverage"].status == "unknown"
    assert "calc/extra.py missing from the coverage report" in got["changed_line_coverage"].reason


def test_without_per_test_data_redundancy_is_unknown():
    """Without the LCOV per-test sidecar redundant added tests are unknown, with the reason."""
    d = DATA / "reports"
    before = parse_lcov((d / "before" / "lcov.info").read_text())
    after = parse_lcov((d / "after" / "lcov.info").read_text())
    got = changed_coverage(PATCH, before, after, CoverageContext("lcov", "coverage.py 7.17.3"))
    assert got["redundant_added_tests"].value is None
    assert "per-test" in got["redundant_added_tests"].reason
    assert got["changed_line_coverage"].value == 0.6


def test_a_patch_without_source_lines_has_unknown_ratio():
    """A submission that adds only tests has no changed-line coverage ratio (unknown, not 0)."""
    test_only = PATCH[PATCH.index("diff --git a/tests/"):]
    ctx = CoverageContext("coverage-py-json", "7.17.3")
    got = changed_coverage(test_only, _report("before", ctx.format), _report("after", ctx.format), ctx)
    assert got["changed_line_coverage"].value is None
    assert got["changed_lines_executable"].value == 0


def test_numbits_decode_as_coverage_py_encodes():
    """Numbits bit n is line n: 'Bg==' is lines 1 and 2, as the product description says."""
    assert decode_numbits("Bg==", "x") == {1, 2}
    with pytest.raises(MeasurementError, match="invalid base64"):
        decode_numbits("**", "x")


@pytest.mark.parametrize("text, rule", [
    ("DA:1,1\nend_of_record\n", "outside an SF"),
    ("SF:a.js\nDA:x,1\nend_of_record\n", "malformed DA"),
    ("SF:a.js\nDA:1,1\n", "no end_of_record"),
])
def test_malformed_lcov_is_refused_with_the_rule(text, rule):
    """A malformed LCOV report raises a measurement error that names the rule it breaks."""
    with pytest.raises(MeasurementError, match=rule):
        parse_lcov(text)


def test_lcov_sidecar_naming_an_unexecuted_line_is_refused():
    """A per-test sidecar line the report does not record as executed is an error."""
    lcov = (DATA / "reports" / "after" / "lcov.info").read_text()
    bits = base64.b64encode(bytes([0, 0x80])).decode()
    bad = '{"per_test_numbits": {"calc/core.py": {"t": "' + bits + '"}}}'
    with pytest.raises(MeasurementError, match="does not record as executed"):
        parse_lcov(lcov, bad)


def test_duplicate_keys_in_a_sidecar_are_refused():
    """Duplicate keys in a per-test sidecar are an error, not a silent overwrite."""
    lcov = (DATA / "reports" / "after" / "lcov.info").read_text()
    with pytest.raises(MeasurementError, match="duplicate key"):
        parse_lcov(lcov, '{"per_test_numbits": {"calc/core.py": {"t": "BA==", "t": "BA=="}}}')


def test_coverage_py_report_that_contradicts_itself_is_refused():
    """A coverage.py file entry whose summary disagrees with its executed lines is refused."""
    bad = '{"meta": {"version": "7.17.3"}, "files": {"a.py": {"executed_lines": [1], "missing_lines": [], "summary": {"covered_lines": 2}}}}'
    with pytest.raises(MeasurementError, match="summary.covered_lines"):
        parse_coverage_py_json(bad)


GO = Path(__file__).parents[1] / "data" / "coverage" / "gorepo"


def _go_report(stage: str):
    import subprocess
    import tempfile

    from pluginbench.measures._coverage_data import parse_go_coverprofile

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["cp", "-r", f"{GO}/base/.", tmp], check=True)
        if stage == "after":
            subprocess.run(["git", "apply", str(GO / "submission.patch")], cwd=tmp, check=True)
        sources = {str(p.relative_to(tmp)): p.read_text() for p in Path(tmp).rglob("*.go")}
    return parse_go_coverprofile((GO / "reports" / stage / "cover.out").read_text(), sources, "example.com/gorepo")


def test_go_coverprofile_gives_the_hand_counted_line_coverage():
    """A real Go coverprofile gives 6 of 13 executable added lines covered (comment and blank
    lines excluded); branch and per-test coverage stay unknown with reasons."""
    patch = (GO / "submission.patch").read_text()
    ctx = CoverageContext("go-coverprofile", "go1.19.8")
    got = changed_coverage(patch, _go_report("before"), _go_report("after"), ctx)
    assert got["changed_lines_executable"].value == 13
    assert got["changed_lines_covered"].value == 6
    assert got["changed_line_coverage"].value == round(6 / 13, 6)
    assert got["changed_branch_coverage"].value is None and "Go coverprofiles have none" in got["changed_branch_coverage"].reason
    assert got["redundant_added_tests"].value is None
    assert got["changed_line_coverage"].language == "go"


def test_go_profile_naming_a_file_outside_the_module_is_refused():
    """A coverprofile block outside the module path is refused with the rule."""
    from pluginbench.measures._coverage_data import parse_go_coverprofile

    with pytest.raises(MeasurementError, match="outside module"):
        parse_go_coverprofile("mode: set\nother.com/x/a.go:1.1,2.2 1 1\n", {}, "example.com/gorepo")
