"""Complexity measures: the real pinned analyzers on the fixture repositories in tests/data/quality."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pluginbench.measures._complexity import FileScan, FunctionScore, compare
from pluginbench.measures._complexity_scan import analyzer_status, scan_texts
from pluginbench.measures._port import ReadinessInput
from pluginbench.measures._quality import check_complexity, collect_cognitive, collect_cyclomatic
from tests._prereq import require

from ._quality_helpers import QUALITY, fixture_input

# Hand-counted (SonarSource cognitive rules, McCabe cyclomatic = 1 + decisions + boolean operators):
# fixture: (cyclomatic_added, cognitive_added, functions_added, source_files_added, over_15, language, analyzer)
EXPECTED = {
    # sign +1 if (cyc +1, cog +1); classify cyc 10, cog 20 (> 15); helper cyc 3 (comprehension for+if), cog 0;
    # shout cyc 1, cog 0; one new module
    "python": (15, 21, 3, 1, 1, "python", "rust-code-analysis 0.0.4"),
    # Grade: if + && + for + if -> cyc 5, cog 1+1+1+2 = 5; Double in util.go: cyc 1, cog 0
    "go": (6, 5, 2, 1, 0, "go", "lizard 1.24.3"),
    # count_even: for + nested if -> cyc 3, cog 1+2 = 3
    "rust": (3, 3, 1, 0, 0, "rust", "rust-code-analysis 0.0.4"),
    # label: for + nested if with && -> cyc 4, cog 1+2+1 = 4
    "typescript": (4, 4, 1, 0, 0, "typescript", "rust-code-analysis 0.0.4"),
    # total and its copy totalAgain: for + nested if / else if / else -> cyc 4, cog 1+2+1+1 = 5 each
    "javascript": (8, 10, 2, 0, 0, "javascript", "rust-code-analysis 0.0.4"),
}


def _require_analyzers() -> None:
    for lang in ("python", "go"):
        require(analyzer_status(lang)[0] is not None, f"the pinned {lang} complexity analyzer (pip install -e '.[dev]')")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_submission_has_the_hand_counted_complexity(tmp_path: Path, name: str) -> None:
    """Each language's fixture submission adds the hand-counted net cyclomatic and cognitive complexity,
    functions, files and over-15 functions, tagged with its language and analyzer."""
    _require_analyzers()
    cyc = collect_cyclomatic(fixture_input(tmp_path, name))
    cog = collect_cognitive(fixture_input(tmp_path, name))
    got = (cyc["cyclomatic_added"].value, cog["cognitive_added"].value, cyc["functions_added"].value,
           cyc["source_files_added"].value, cog["functions_over_cognitive_15"].value,
           cog["cognitive_added"].language, cog["cognitive_added"].analyzer)
    assert got == EXPECTED[name]
    assert all(m.status == "measured" for m in (*cyc.values(), *cog.values()))


def test_reverting_the_submission_subtracts_what_it_added(tmp_path: Path) -> None:
    """Measured from the submission's tree back to the start, the same complexity comes out negative."""
    _require_analyzers()
    repo = tmp_path / "repo"
    shutil.copytree(QUALITY / "python" / "start", repo)
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path), "PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(tmp_path)}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "start"],
                ["git", "apply", str(QUALITY / "python" / "submission.patch")], ["git", "add", "-A"],
                ["git", "commit", "-qm", "submission"]):
        subprocess.run(cmd, cwd=repo, check=True, env=env)
    reverse = subprocess.run(["git", "diff", "HEAD", "HEAD~1"], cwd=repo, check=True, env=env,
                             capture_output=True, text=True).stdout
    cyc = collect_cyclomatic(fixture_input(tmp_path / "r", "python", patch=reverse, start=repo))
    cog = collect_cognitive(fixture_input(tmp_path / "r", "python", patch=reverse, start=repo))
    assert (cyc["cyclomatic_added"].value, cog["cognitive_added"].value) == (-15, -21)
    assert (cyc["functions_added"].value, cyc["source_files_added"].value) == (0, 0)


def test_a_submission_that_changes_no_function_adds_zero(tmp_path: Path) -> None:
    """A complete scan of a submission that changes only a README adds exactly zero, not unknown."""
    _require_analyzers()
    patch = ("diff --git a/README.md b/README.md\nnew file mode 100644\n--- /dev/null\n+++ b/README.md\n"
             "@@ -0,0 +1 @@\n+hello\n")
    cyc = collect_cyclomatic(fixture_input(tmp_path, "python", patch=patch))
    assert cyc["cyclomatic_added"].value == 0 and cyc["cyclomatic_added"].status == "measured"
    assert cyc["cyclomatic_added"].language == "python"


def test_two_languages_in_one_submission_are_not_pooled(tmp_path: Path) -> None:
    """A submission changing Python and Go source leaves complexity unknown with the reason, never a pooled sum."""
    _require_analyzers()
    patch = (QUALITY / "python" / "submission.patch").read_text() + (
        "diff --git a/x.go b/x.go\nnew file mode 100644\n--- /dev/null\n+++ b/x.go\n@@ -0,0 +1,2 @@\n"
        "+package x\n+func A() {}\n")
    cog = collect_cognitive(fixture_input(tmp_path, "python", patch=patch))
    assert cog["cognitive_added"].value is None and cog["cognitive_added"].status == "unknown"
    assert "go and python" in (cog["cognitive_added"].reason or "")


def test_a_patch_that_does_not_apply_is_unknown(tmp_path: Path) -> None:
    """A patch whose context is not in the starting source gives unknown complexity with git's reason."""
    _require_analyzers()
    patch = ("diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n"
             "@@ -1,2 +1,2 @@\n-def nothing_like_this():\n+def other():\n     return 1\n")
    cyc = collect_cyclomatic(fixture_input(tmp_path, "python", patch=patch))
    assert cyc["cyclomatic_added"].status == "unknown"
    assert "does not apply" in (cyc["cyclomatic_added"].reason or "")


def test_grown_functions_over_15_count_but_unchanged_ones_do_not() -> None:
    """A function above 15 counts when it is new or its score grew, not when it stayed or shrank."""
    def scan(path: str, *fns: tuple[str, int]) -> FileScan:
        return FileScan(path, "python", "a", tuple(FunctionScore(path, n, c, c, True) for n, c in fns))
    before = {"a.py": scan("a.py", ("same", 20), ("grows", 16), ("shrinks", 30))}
    after = {"a.py": scan("a.py", ("same", 20), ("grows", 18), ("shrinks", 25), ("new", 17)),
             "b.py": scan("b.py", ("small", 2))}
    d = compare(before, after)
    assert d.over_limit == ("a.py::grows (18)", "a.py::new (17)")
    assert (d.functions_added, d.source_files_added, d.cognitive_added) == (2, 1, 18 + 25 + 17 + 2 + 20 - 66)


def test_nested_functions_are_counted_once_in_the_sum() -> None:
    """RCA scores an outer function including its nested one; the sum counts only outermost functions."""
    require(importlib.util.find_spec("rust_code_analysis_python") is not None, "rust-code-analysis-python")
    src = "def outer(a):\n    def inner(b):\n        if b:\n            return 1\n        return 0\n    return inner(a)\n"
    scan = scan_texts({"m.py": src})["m.py"]
    by_name = {f.name: f for f in scan.functions}
    assert set(by_name) == {"outer", "outer.inner"}
    assert by_name["outer.inner"].outermost is False
    delta = compare({}, {"m.py": scan})
    assert delta.cyclomatic_added == by_name["outer"].cyclomatic
    assert delta.functions_added == 2


def test_readiness_names_the_languages_it_can_analyze(tmp_path: Path) -> None:
    """Readiness is ready with the analyzer versions for a Go repo, not_configured for a repo with no analyzed source."""
    _require_analyzers()
    ready = check_complexity(ReadinessInput("t", tmp_path, QUALITY / "go" / "start", None, None, {}, tmp_path))
    assert ready.state == "ready" and ready.tool_version == "lizard 1.24.3"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("x\n")
    none = check_complexity(ReadinessInput("t", tmp_path, tmp_path / "docs", None, None, {}, tmp_path))
    assert none.state == "not_configured" and "no Python" in (none.reason or "")


def test_a_file_the_analyzers_cannot_finish_in_time_is_unknown_not_a_stall() -> None:
    """The analyzers parse in a child process with a deadline: 80 KB of nested parentheses (minutes for
    rust-code-analysis) ends at the deadline as an error naming it, and an ordinary file still scans."""
    _require_analyzers()
    deep = "x = " + "(" * 40_000 + "1" + ")" * 40_000 + "\n"
    started = time.monotonic()
    got = scan_texts({"deep.py": deep, "ok.py": "def f(x):\n    return 1 if x else 2\n"}, timeout=2)
    assert time.monotonic() - started < 30
    assert got["deep.py"].functions == () and "did not finish within 2 s" in (got["deep.py"].error or "")
    fine = scan_texts({"ok.py": "def f(x):\n    return 1 if x else 2\n"})["ok.py"]
    assert fine.error is None and [(f.name, f.cyclomatic) for f in fine.functions] == [("f", 2)]


def test_a_file_past_the_analyzers_memory_bound_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """The analyzers' process has its memory bounded: 60,000 arrow functions past a 300 MiB bound end the
    scan as an error naming the bound (not the host's memory)."""
    _require_analyzers()
    from pluginbench.measures import _complexity_scan

    monkeypatch.setattr(_complexity_scan, "SCAN_MEMORY_BYTES", 300 * 1024 * 1024)
    big = "x = [" + ",".join("() => 0" for _ in range(60_000)) + "]\n"
    got = scan_texts({"big.js": big})["big.js"]
    assert got.functions == () and "memory bound is 300 MiB" in (got.error or "")


def test_an_analyzer_out_of_memory_on_one_file_names_the_bound_and_keeps_the_others(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A MemoryError the analyzer raises (rather than the process dying), or one its binding wraps (a
    ValueError("MemoryError: ") from rust-code-analysis, met building its result), is that file's unknown
    value naming the memory bound; any other failure is named as it is; the other files of the same child
    keep their scores."""
    _require_analyzers()
    from pluginbench.measures import _complexity_scan

    spec = importlib.util.spec_from_file_location("complexity_child", _complexity_scan._CHILD)
    assert spec is not None and spec.loader is not None
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)
    real = child.rca

    def rca(path: str, text: str) -> list[object]:
        if path == "big.js":
            raise MemoryError
        if path == "wrapped.js":
            raise ValueError("MemoryError: ")
        if path == "bad.js":
            raise ValueError("unexpected token")
        return real(path, text)

    monkeypatch.setattr(child, "rca", rca)
    for name in ("big.js", "wrapped.js"):
        assert child.score("javascript", name, "x") == {"functions": [], "error": f"ran out of memory on {name}",
                                                        "out_of_memory": True}
    assert child.score("javascript", "bad.js", "x") == {"functions": [], "error": "failed on bad.js: unexpected token"}
    assert child.score("python", "ok.py", "def f():\n    return 1\n")["functions"] == [[["f"], 1, 0, True]]
    # The parent, given such an answer by its child, names the bound on that file only.
    fake = Path(__file__).with_name("_oom_child_fake.py")
    monkeypatch.setattr(_complexity_scan, "_CHILD", fake)
    got = scan_texts({"big.js": "x", "ok.py": "def f():\n    return 1\n"})
    assert got["big.js"].functions == () and (got["big.js"].error or "").endswith(
        "ran out of memory on big.js (their memory bound is 2048 MiB)")
    assert got["ok.py"].error is None and [f.name for f in got["ok.py"].functions] == ["f"]


def test_a_panic_while_the_address_space_reaches_its_bound_is_out_of_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed allocation inside the analyzer's binding can surface as a pyo3 panic ("Python API call
    failed"): a failure while that file took the address space near its bound (within a tenth of it or
    64 MiB) is out of memory; the same panic far from the bound is named as a panic."""
    _require_analyzers()
    from pluginbench.measures import _complexity_scan

    spec = importlib.util.spec_from_file_location("complexity_child", _complexity_scan._CHILD)
    assert spec is not None and spec.loader is not None
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)

    class PanicException(BaseException):  # what pyo3 raises for a Rust panic
        pass

    def rca(path: str, text: str) -> list[object]:
        raise PanicException("Python API call failed")

    monkeypatch.setattr(child, "rca", rca)
    real_reading = child.address_space
    mib, gib = 1024 ** 2, 1024 ** 3
    oom = {"functions": [], "error": "ran out of memory on big.js", "out_of_memory": True}
    panic = {"functions": [], "error": "panicked on big.js: Python API call failed"}
    for before, after, bound, expected in ((100 * mib, 1900 * mib, 2 * gib, oom),  # within a tenth of 2 GiB
                                           (100 * mib, 250 * mib, 300 * mib, oom),  # within 64 MiB of 300 MiB
                                           (100 * mib, 1000 * mib, 2 * gib, panic),
                                           (1900 * mib, 1900 * mib, 2 * gib, panic)):  # an earlier file's peak
        readings = iter([(before, bound), (after, bound)])
        monkeypatch.setattr(child, "address_space", lambda readings=readings: next(readings))
        assert child.score("javascript", "big.js", "x") == expected
    peak, bound = real_reading()  # the real reading: this process's peak, and no bound here
    assert peak > 0 and bound is None
