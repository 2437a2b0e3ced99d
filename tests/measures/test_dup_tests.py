"""Added test lines that repeat in six-line blocks."""

from __future__ import annotations

from pluginbench.measures._dup_tests import duplicated_test_lines

from ._quality_helpers import QUALITY


def _patch(path: str, lines: list[str]) -> str:
    body = "".join(f"+{line}\n" for line in lines)
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


BLOCK = [f"    assert f({i}) == {i}" for i in range(6)]


def test_the_python_fixture_repeats_one_six_line_body() -> None:
    """The fixture's two classify tests share a six-line body: 12 duplicated added test lines."""
    assert duplicated_test_lines((QUALITY / "python" / "submission.patch").read_text()) == 12


def test_five_repeated_lines_are_not_a_block() -> None:
    """Two copies of five identical lines are below the six-line block: zero."""
    lines = ["def test_a():", *BLOCK[:5], "", "def test_b():", *BLOCK[:5]]
    assert duplicated_test_lines(_patch("tests/test_x.py", lines)) == 0


def test_copies_across_files_count_and_blank_lines_and_indentation_are_ignored() -> None:
    """A seven-line block in two test files, one re-indented with a blank line inside, counts every copy: 14."""
    block = [*BLOCK, "    assert done"]
    other = [line.strip() for line in block]
    other.insert(3, "")
    patch = _patch("tests/test_a.py", ["def test_a():", *block]) + _patch("src/x_test.go", ["func TestA() {", *other])
    assert duplicated_test_lines(patch) == 14


def test_source_files_do_not_count() -> None:
    """The same block repeated in a source file is not a test duplication."""
    patch = _patch("pkg/a.py", ["def a():", *BLOCK, "def b():", *BLOCK])
    assert duplicated_test_lines(patch) == 0


def test_overlapping_windows_of_a_long_repeat_count_each_line_once() -> None:
    """Eight lines repeated twice: windows overlap, yet each of the 16 lines is counted once."""
    block = [f"x{i} = {i}" for i in range(8)]
    assert duplicated_test_lines(_patch("tests/test_a.py", [*block, "y = 0", *block])) == 16
