"""Dead code: Vulture 2.16 on the fixture repositories, and the pure comparison of two scans."""

from __future__ import annotations

from pathlib import Path

from pluginbench.measures._deadcode import Candidate, introduced, parse_vulture
from pluginbench.measures._deadcode_scan import run_vulture, vulture_status
from pluginbench.measures._port import ReadinessInput
from pluginbench.measures._quality import check_dead_code, collect_dead_code
from tests._prereq import require

from ._quality_helpers import QUALITY, fixture_input


def _require_vulture() -> None:
    require(vulture_status()[0] == "vulture 2.16", "Vulture 2.16 (pip install -e '.[dev]')")


def test_python_fixture_introduces_the_unused_import_and_function(tmp_path: Path) -> None:
    """The Python submission adds `import os` and `helper`, both unused: two candidates since the starting scan."""
    _require_vulture()
    got = collect_dead_code(fixture_input(tmp_path, "python"))["dead_code_candidates_added"]
    assert (got.value, got.status, got.language, got.analyzer) == (2, "measured", "python", "vulture 2.16")
    listed = (tmp_path / "attempt" / "measure" / "x" / "introduced.txt").read_text().splitlines()
    assert listed == ["pkg/extra.py:1: unused import 'os'", "pkg/extra.py:4: unused function 'helper'"]


def test_the_starting_source_scans_clean(tmp_path: Path) -> None:
    """Vulture finds nothing unused in the Python fixture's starting source (its tests use every function)."""
    _require_vulture()
    scan = run_vulture(QUALITY / "python" / "start")
    assert scan.candidates == () and scan.unreadable == ()


def test_a_patch_that_changes_no_python_file_introduces_nothing(tmp_path: Path) -> None:
    """A submission touching only a README introduces zero candidates (a complete answer, not unknown)."""
    _require_vulture()
    patch = "diff --git a/README.md b/README.md\nnew file mode 100644\n--- /dev/null\n+++ b/README.md\n@@ -0,0 +1 @@\n+x\n"
    got = collect_dead_code(fixture_input(tmp_path, "python", patch=patch))["dead_code_candidates_added"]
    assert (got.value, got.status) == (0, "measured")


def test_a_syntax_error_in_a_changed_file_is_unknown(tmp_path: Path) -> None:
    """A changed Python file Vulture cannot parse leaves dead code unknown, naming the file."""
    _require_vulture()
    patch = ("diff --git a/pkg/broken.py b/pkg/broken.py\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/broken.py\n"
             "@@ -0,0 +1 @@\n+def broken(:\n")
    got = collect_dead_code(fixture_input(tmp_path, "python", patch=patch))["dead_code_candidates_added"]
    assert got.value is None and got.status == "unknown" and "pkg/broken.py" in (got.reason or "")


def test_languages_without_an_unused_code_analyzer_are_unknown_never_zero(tmp_path: Path) -> None:
    """A Go submission's dead code is unknown with the reason (no Go analyzer in this build)."""
    got = collect_dead_code(fixture_input(tmp_path, "go"))["dead_code_candidates_added"]
    assert got.value is None and "go" in (got.reason or "")


def test_moved_code_is_not_new_and_repeats_count_beyond_the_start() -> None:
    """Candidates match by file and message, not line: a moved one is old; a second copy of an old one is new."""
    before = [Candidate("a.py", "unused function 'f'", 3)]
    after = [Candidate("a.py", "unused function 'f'", 10), Candidate("a.py", "unused function 'f'", 20),
             Candidate("tests/test_a.py", "unused function 'g'", 1)]
    assert introduced(before, after) == [Candidate("a.py", "unused function 'f'", 20)]


def test_vulture_report_lines_parse_and_errors_name_the_file() -> None:
    """Report lines become candidates without the ./ prefix; an invalid-syntax line names an unreadable file."""
    scan = parse_vulture("./pkg/a.py:4: unused function 'helper' (60% confidence)\n"
                         "pkg/b.py:9: unreachable code after 'return' (100% confidence, 2 lines)\n",
                         "pkg/c.py:1: invalid syntax at \"def broken(:\"\n")
    assert scan.candidates == (Candidate("pkg/a.py", "unused function 'helper'", 4),
                               Candidate("pkg/b.py", "unreachable code after 'return'", 9))
    assert scan.unreadable == ("pkg/c.py",)


def test_readiness_is_not_configured_without_python(tmp_path: Path) -> None:
    """Dead-code readiness is ready on the Python fixture and not_configured on the Go one."""
    _require_vulture()
    py = check_dead_code(ReadinessInput("t", tmp_path, QUALITY / "python" / "start", None, None, {}, tmp_path))
    go = check_dead_code(ReadinessInput("t", tmp_path, QUALITY / "go" / "start", None, None, {}, tmp_path))
    assert (py.state, py.tool_version) == ("ready", "vulture 2.16")
    assert go.state == "not_configured"
