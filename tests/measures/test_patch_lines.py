"""A patch is read line by line at ``\\n`` only, as git writes it: a form feed, a vertical tab or a
Unicode line separator inside an added line stays in that line, so it can neither pass for a patch
header nor stop or shift a count (str.splitlines splits at all of them)."""

from __future__ import annotations

from pluginbench._parsing import git_lines
from pluginbench.measures._coverage_changed import added_lines
from pluginbench.measures._dup_tests import duplicated_test_lines
from pluginbench.measures._lines import count_lines
from pluginbench.measures._source_only import sections
from pluginbench.measures._tree import changed_paths

BODY = ["# \x0cdiff --git a/../x b/../x", "# \x0bBinary files differ", "x = '\u2028'", "y = 1", "z = 2"]
PATCH = ("diff --git a/pkg/a.py b/pkg/a.py\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n"
         "+++ b/pkg/a.py\n@@ -0,0 +1,5 @@\n" + "".join(f"+{line}\n" for line in BODY))


def test_a_line_holding_a_form_feed_is_one_line_of_the_file_it_is_in() -> None:
    """All five added lines count as source lines of pkg/a.py; no phantom file, header or binary file."""
    counts = count_lines(PATCH)
    assert (counts.source_added, counts.files, counts.binary_files) == (5, 1, 0)
    assert [(s.old, s.new) for s in sections(PATCH)] == [("pkg/a.py", "pkg/a.py")]
    assert "".join(s.text for s in sections(PATCH)) == PATCH
    assert changed_paths(PATCH) == (set(), {"pkg/a.py"})
    assert added_lines(PATCH) == {"pkg/a.py": frozenset({1, 2, 3, 4, 5})}


def test_crlf_lines_count_as_they_did() -> None:
    """A patch of a CRLF file counts its lines as str.splitlines did: the \\r\\n ending is removed whole."""
    crlf = PATCH.replace("+y = 1\n", "+y = 1\r\n").replace("+z = 2\n", "+z = 2\r\n")
    assert count_lines(crlf) == count_lines(PATCH)
    assert git_lines("a\r\nb\x0cc\n\nd") == ["a", "b\x0cc", "", "d"]
    assert "".join(git_lines("a\r\nb\x0cc\n\nd", keepends=True)) == "a\r\nb\x0cc\n\nd"


def test_duplicated_test_lines_see_the_whole_line() -> None:
    """Two test files adding the same lines (one holding a form feed) duplicate all of them, not a split half."""
    block = "".join(f"+    assert f({i}) == {i}  # \x0ccheck\n" for i in range(6))
    patch = "".join(f"diff --git a/tests/test_{n}.py b/tests/test_{n}.py\nnew file mode 100644\n--- /dev/null\n"
                    f"+++ b/tests/test_{n}.py\n@@ -0,0 +1,6 @@\n{block}" for n in ("a", "b"))
    assert duplicated_test_lines(patch) == duplicated_test_lines(patch.replace("\x0c", "")) == 12
