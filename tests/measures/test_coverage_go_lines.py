"""Go coverprofiles and ``//line`` directives: blocks Go names after a directive's target are
attributed to the one file whose directive names it, and every file holding a directive (or
named by one) has no line population, so changed-line coverage of added lines there is
unknown with the reason, never a number from the target's line numbers. Real Go 1.19
profiles of tests/data/coverage/golinerepo (and the same renamed the way newer Go names them)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pluginbench.errors import MeasurementError
from pluginbench.measures import CoverageContext, changed_coverage
from pluginbench.measures._coverage_data import go_line_directives, parse_go_coverprofile

GO = Path(__file__).parents[1] / "data" / "coverage" / "golinerepo"
MODULE = "example.com/golinerepo"
CTX = CoverageContext("go-coverprofile", "go1.19.8")


def _sources(tmp: Path, patch: str | None) -> dict[str, str]:
    tree = tmp / (patch or "starting")
    shutil.copytree(GO / "base", tree)
    if patch:
        subprocess.run(["git", "apply", str(GO / f"{patch}.patch")], cwd=tree, check=True)
    return {str(p.relative_to(tree)): p.read_text() for p in tree.rglob("*.go")}


def _report(tmp: Path, naming: str, stage: str, patch: str | None = None):
    text = (GO / "reports" / naming / stage / "cover.out").read_text()
    return parse_go_coverprofile(text, _sources(tmp, patch), MODULE)


@pytest.mark.parametrize("naming", ["go119", "go120-names"])
def test_a_directive_file_has_no_line_population_and_other_files_are_measured(tmp_path: Path, naming: str) -> None:
    """Under either naming, parse.go (which holds `//line grammar.y:3`) has no line population and no lines
    from grammar.y's numbering; calc.go's added Triple is measured as hand-counted (3 of 3 lines)."""
    starting = _report(tmp_path / "s", naming, "starting")
    assert starting.unavailable_lines == frozenset({"calc/parse.go"})
    assert starting.files["calc/parse.go"].executable == frozenset()
    assert "calc/grammar.y" not in starting.files
    assert starting.files["calc/calc.go"].executable == frozenset({4, 5, 6})
    calc = _report(tmp_path / "c", "go119", "calc", "calc")
    got = changed_coverage((GO / "calc.patch").read_text(), starting, calc, CTX)
    assert (got["changed_lines_executable"].value, got["changed_lines_covered"].value) == (3, 3)
    assert got["changed_line_coverage"].value == 1.0


@pytest.mark.parametrize("naming", ["go119", "go120-names"])
def test_added_lines_in_a_directive_file_are_unknown_with_the_reason(tmp_path: Path, naming: str) -> None:
    """Lines added inside Parse (after the directive) make changed-line coverage unknown, naming the file."""
    got = changed_coverage((GO / "parse.patch").read_text(), _report(tmp_path / "s", naming, "starting"),
                           _report(tmp_path / "p", naming, "parse", "parse"), CTX)
    for name in ("changed_line_coverage", "changed_lines_executable", "changed_lines_covered"):
        assert got[name].value is None and got[name].status == "unknown"
        assert got[name].reason == ("incomplete: added lines fall in calc/parse.go, which has no line population "
                                    "(a Go line directive)")


def test_a_name_no_directive_explains_or_two_files_name_is_refused(tmp_path: Path) -> None:
    """A profile name that is no frozen .go file and that no directive in its package names is refused, and so
    is one that the directives of two files name (its blocks cannot be attributed)."""
    sources = _sources(tmp_path, None)
    with pytest.raises(MeasurementError, match="'calc/other.y' is not a .go file of the measured source and no "
                                               "line directive in its package names it"):
        parse_go_coverprofile(f"mode: set\n{MODULE}/calc/other.y:3.0,4.0 1 1\n", sources, MODULE)
    twice = {**sources, "calc/lexer.go": "package calc\n\n//line grammar.y:40\nfunc lex() {}\n"}
    with pytest.raises(MeasurementError, match=r"named by the line directives of more than one file "
                                               r"\(calc/lexer.go, calc/parse.go\)"):
        parse_go_coverprofile(f"mode: set\n{MODULE}/calc/grammar.y:3.0,4.0 1 1\n", twice, MODULE)


def test_a_frozen_file_a_directive_names_loses_its_line_population(tmp_path: Path) -> None:
    """A directive that names a frozen .go file (as cgo's do) leaves that file without a line population too."""
    sources = _sources(tmp_path, None)
    sources["calc/parse.go"] = sources["calc/parse.go"].replace("//line grammar.y:3", "//line calc.go:1")
    report = parse_go_coverprofile((GO / "reports" / "go119" / "starting" / "cover.out").read_text(), sources, MODULE)
    assert report.unavailable_lines == frozenset({"calc/parse.go", "calc/calc.go"})


def test_only_the_directives_go_honors_count() -> None:
    """`//line` counts only at the start of a line and `/*line` anywhere outside strings and comments, each
    ending in :line or :line:col; anything else is an ordinary comment."""
    source = "\n".join([
        "//line a.y:1",
        "  //line indented.y:2",
        "//line nocolon.y",
        'x := "/*line quoted.y:3*/"',
        "y := 1 /*line b.y:4:5*/",
        "z := 2 // /*line commented.y:6*/",
        "//lines c.y:7",
    ])
    assert go_line_directives(source) == ["a.y", "b.y"]
