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


def test_sections_read_the_real_paths_of_names_with_spaces_b_slashes_quotes_and_renames(tmp_path) -> None:
    """From a real git diff: a name holding " b/" (split at its middle, not at the first " b/"), C-quoted names
    (non-ASCII, a quote, a tab) and a renamed test file whose paths come from its rename lines; the test files
    among them leave the patch, the production ones stay."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path,
                              check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "old name.py").write_text("def test_a():\n    assert True\n" * 5)
    git("add", "-A")
    git("commit", "-qm", "base")
    names = ["q b/k.py", "tests/a b/test_x.py", "src/tést.py", 'src/we"ird.py', "tests/tab\there_test.py"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "tests" / "new b").mkdir()
    (tmp_path / "tests" / "old name.py").rename(tmp_path / "tests" / "new b" / "name_test.py")
    git("add", "-A")
    patch = git("diff", "--cached", "--binary", "-M")
    got = {(s.old, s.new, s.rename) for s in sections(patch)}
    assert got == {*((n, n, False) for n in names), ("tests/old name.py", "tests/new b/name_test.py", True)}
    filtered = filter_patch(patch, "", [])
    assert filtered.removed_test_files == sorted(["tests/a b/test_x.py", "tests/tab\there_test.py",
                                                  "tests/new b/name_test.py"])
    kept = {s.new for s in sections(filtered.text)}
    assert kept == {"q b/k.py", "src/tést.py", 'src/we"ird.py'}
