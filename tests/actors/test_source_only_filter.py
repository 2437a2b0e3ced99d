"""The source-only filter: which of the agent's files leave the graded patch, and why."""

from __future__ import annotations

from pluginbench.measures._source_only import filter_patch, is_source_only_test, sections


def diff(path: str, body: str = "+x\n", old: str | None = None) -> str:
    if old is not None:
        return f"diff --git a/{old} b/{path}\nsimilarity index 90%\nrename from {old}\nrename to {path}\n"
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n a\n{body}"


def test_agent_test_files_leave_and_production_code_stays() -> None:
    """Test files and any conftest.py are removed; production code stays byte for byte."""
    patch = diff("calc.py") + diff("tests/check_extra.py") + diff("pkg/conftest.py") + diff("src/test_helpers_impl.go")
    got = filter_patch(patch, diff("calc.py"), ["tests/check_calc.py"])
    assert got.removed_test_files == ["pkg/conftest.py", "tests/check_extra.py"]
    assert got.text == diff("calc.py") + diff("src/test_helpers_impl.go")
    assert not got.nothing_removed and got.unavailable is None


def test_reference_solution_test_edits_are_kept_whole() -> None:
    """A test file the reference solution changes and test.patch does not is kept and listed."""
    patch = diff("core/test_set.py") + diff("tests/test_api.py") + diff("tests/test_new.py")
    solution = diff("core/test_set.py") + diff("tests/test_api.py")
    got = filter_patch(patch, solution, ["tests/test_api.py"])
    assert got.kept_reference_solution_files == ["core/test_set.py"]
    assert got.removed_test_files == ["tests/test_api.py", "tests/test_new.py"]


def test_setup_files_outside_test_dirs_stay_and_are_listed() -> None:
    """Fixtures, test data, examples and shared config outside test dirs stay; tests/fixtures is a test file."""
    patch = diff("src/fixtures/b.css") + diff("tests/fixtures/a.json") + diff("pyproject.toml") + diff("testdata/in.txt")
    got = filter_patch(patch, "", [])
    assert got.removed_test_files == ["tests/fixtures/a.json"]
    assert got.kept_test_setup_files == ["pyproject.toml", "src/fixtures/b.css", "testdata/in.txt"]


def test_nothing_removed_keeps_the_patch_and_lists_trusted_overlap() -> None:
    """Without agent test files nothing is removed, the patch is unchanged, and kept paths that test.patch overwrites are listed."""
    patch = diff("calc.py") + diff("run_tests.py")
    got = filter_patch(patch, diff("calc.py"), ["run_tests.py", "tests/check_calc.py"])
    assert got.nothing_removed and got.text == patch
    assert got.trusted_test_overlap == ["run_tests.py"]


def test_no_solution_patch_or_a_test_rename_is_unavailable() -> None:
    """A task without solution.patch, or a rename between a test file and another file, gives an unavailable grade."""
    assert "no solution/solution.patch" in (filter_patch(diff("a.py"), None, []).unavailable or "")
    renamed = filter_patch(diff("helpers.py", old="tests/helpers.py"), "", [])
    assert "renames tests/helpers.py to helpers.py" in (renamed.unavailable or "")


def test_sections_and_classifier() -> None:
    """Sections split a diff per file; the classifier treats conftest.py and test dirs as tests, testdata alone not."""
    assert [s.path for s in sections(diff("a.py") + diff("b/c.py"))] == ["a.py", "b/c.py"]
    assert is_source_only_test("x/conftest.py") and is_source_only_test("tests/fixtures/a.json")
    assert not is_source_only_test("testdata/in.txt") and not is_source_only_test("src/fixtures/b.css")
