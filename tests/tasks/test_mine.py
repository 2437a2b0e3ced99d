"""History mining's pure parts: path kinds, screening, the fail-to-pass decision, the task text; and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pluginbench.tasks import (
    Candidate,
    Change,
    apply_mutation,
    classify_path,
    decide,
    instruction_text,
    mutant_candidate,
    mutant_instruction,
    mutant_task_id,
    mutation_sites,
    reverse_patch,
    screen,
    task_id_of,
    task_toml,
)
from tests._prereq import require

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "mine" / "calc-history.bundle"


@pytest.mark.parametrize(("path", "kind"), [
    ("tests/test_calc.py", "test"),
    ("pkg/tests/helpers.py", "test"),
    ("test_x.py", "test"),
    ("src/parser_test.go", "test"),
    ("web/app.spec.ts", "test"),
    ("conftest.py", "test"),
    ("calc.py", "source"),
    ("src/lib.rs", "source"),
    ("README.md", "other"),
    ("pyproject.toml", "other"),
    ("docs/testing.md", "other"),
])
def test_paths_are_classified_as_test_source_or_other(path: str, kind: str) -> None:
    """A file under a tests folder or named like a test is a test, other code is source, the rest is other."""
    assert classify_path(path) == kind


def _candidate(*changes: tuple[str, str], parent: str | None = "p" * 40, merge: bool = False) -> Candidate:
    return Candidate(commit="c" * 40, parent=parent, merge=merge, subject="Add divide: with care!",
                     message="Add divide: with care!\n\nDividing by zero raises.", author_date="2024-01-01T00:00:00Z",
                     changes=tuple(Change(s, p, classify_path(p)) for s, p in changes),
                     merged=("Add divide", "Refuse zero") if merge else ())


@pytest.mark.parametrize(("changes", "parent", "code"), [
    ((("A", "calc.py"), ("A", "tests/test_calc.py")), None, "root_commit"),
    ((("M", "calc.py"), ("M", "README.md")), "p" * 40, "no_test_change"),
    ((("M", "tests/test_calc.py"),), "p" * 40, "no_source_change"),
    ((("M", "tests/test_calc.py"), ("M", "README.md")), "p" * 40, "no_source_change"),
    ((("M", "calc.py"), ("A", "tests/test_calc.py")), "p" * 40, None),
])
def test_screening_rejects_from_the_changed_paths_alone(changes: tuple[tuple[str, str], ...], parent: str | None,
                                                        code: str | None) -> None:
    """A root commit, a change without tests and one without source are rejected before anything runs."""
    verdict = screen(_candidate(*changes, parent=parent))
    assert (verdict.code if verdict else None) == code
    assert verdict is None or (not verdict.admitted and verdict.reason)


P, F = "pass", "fail"


def test_tests_failing_before_and_passing_after_are_fail_to_pass_and_steady_ones_pass_to_pass() -> None:
    """Fail-to-pass: passes after in every run, in no run before; pass-to-pass: passes in every run; others ungraded."""
    before = [{"t.old": P, "t.broken": F, "t.new": F}, {"t.old": P, "t.broken": F}]  # absent = did not pass
    after = [{"t.old": P, "t.broken": F, "t.new": P, "t.skip": "skip"}] * 2
    verdict = decide(before, after)
    assert verdict.admitted and verdict.f2p == ("t.new",) and verdict.p2p == ("t.old",)


@pytest.mark.parametrize(("before", "after", "code", "words"), [
    ([{"a": P, "b": P}] * 2, [{"a": P, "b": P}] * 2, "tests_pass_before", "already passes before"),
    ([{"a": P, "b": F}] * 2, [{"a": P, "b": F}] * 2, "tests_fail_after", "1 test(s) fail even with"),
    ([{"a": F}] * 2, [{"a": P}, {"a": F}], "flaky", "changed outcome between two identical runs: a"),
    ([{"a": F, "b": P}, {"a": F, "b": F}], [{"a": P, "b": P}] * 2, "flaky", "1 test(s)"),
])
def test_candidates_without_a_stable_fail_to_pass_test_are_rejected_saying_why(
        before: list[dict[str, str]], after: list[dict[str, str]], code: str, words: str) -> None:
    """No test that needs the change, only broken tests, or any test flipping between identical runs rejects."""
    verdict = decide(before, after)
    assert not verdict.admitted and verdict.code == code and words in (verdict.reason or "")


def test_a_flaky_test_that_never_passes_after_does_not_reject() -> None:
    """A test that fails in every run after the change is ungraded, so its flips before do not matter."""
    verdict = decide([{"a": F, "x": P}, {"a": F, "x": F}], [{"a": P, "x": F}] * 2)
    assert verdict.admitted and verdict.f2p == ("a",) and verdict.flaky == ()


def test_the_instruction_is_the_commit_message_marked_as_such() -> None:
    """The prompt is the message as written, preceded by a note that it is a commit message; a merge lists its commits."""
    text = instruction_text(_candidate(("M", "calc.py"), ("A", "tests/t.py"), merge=True), "calc.git")
    assert text.startswith("<!-- Mined by pluginbench tasks mine from merge commit (a merged pull request)")
    assert "not an instruction written for this task" in text and "Dividing by zero raises." in text
    assert text.endswith("- Add divide\n- Refuse zero\n")


def test_task_toml_parses_and_records_provenance() -> None:
    """task.toml is valid TOML naming the repository, commit and base commit, no network, and the image when given."""
    c = _candidate(("M", "calc.py"), ("A", "tests/t.py"))
    assert task_id_of(c) == "add-divide-with-care-cccccccc"
    doc = tomllib.loads(task_toml(c, task_id_of(c), 'calc "x"', "img:1", 120))
    assert doc["metadata"]["commit"] == "c" * 40 and doc["metadata"]["base_commit"] == "p" * 40
    assert doc["metadata"]["mined_from"] == 'calc "x"' and doc["environment"]["docker_image"] == "img:1"
    assert doc["verifier"] == {"timeout_sec": 120, "network_mode": "no-network"}


def _mine(*args: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    from pluginbench.cli import app

    done = CliRunner().invoke(app, ["tasks", "mine", *args])
    return done.exit_code, done.output


@pytest.mark.parametrize(("case", "field", "words"), [
    ("not-a-repo", "REPO", "is not a git repository or bundle"),
    ("missing-repo", "REPO", "does not exist"),
    ("bad-since", "--since", "'no-such-rev' names no commit"),
    ("existing-out", "--out", "already exists"),
    ("no-parent", "--out", "does not exist"),
    ("file-parent", "--out", "is a file, not a folder"),
    ("out-inside-repo", "--out", "is inside the repository"),
    ("runner-of-another-language", "--runner", "runs javascript tests, but the repository is mined as python"),
])
def test_bad_input_exits_2_naming_the_field_and_writes_nothing(tmp_path: Path, case: str, field: str,
                                                                words: str) -> None:
    """Not a repository, a REV naming no commit, an existing, unplaceable or in-repository output: exit 2, the field, the fix, no files."""
    (tmp_path / "plain").mkdir()
    (tmp_path / "exists").mkdir()
    (tmp_path / "a-file").write_text("x")
    out = {"existing-out": tmp_path / "exists", "no-parent": tmp_path / "nope" / "out",
           "file-parent": tmp_path / "a-file" / "out", "out-inside-repo": tmp_path / "plain" / "mined"}.get(case, tmp_path / "out")
    repo = {"not-a-repo": tmp_path / "plain", "missing-repo": tmp_path / "gone",
            "out-inside-repo": tmp_path / "plain"}.get(case, BUNDLE)
    extra = {"bad-since": ["--since", "no-such-rev"],
             "runner-of-another-language": ["--language", "python", "--runner", "node"]}.get(case, [])
    before = sorted(p.name for p in tmp_path.iterdir())
    code, output = _mine(str(repo), "--out", str(out), *extra)
    assert code == 2, output
    assert words in output and f"field: {field}" in output and "fix:" in output
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not any((tmp_path / "exists").iterdir()) and not any((tmp_path / "plain").iterdir())


SOURCE = "def f(a, b):\n    # a < b is a comment\n    if a < b and True:\n        return a + 1\n    return b\n"


def test_mutation_sites_cover_each_operator_once_per_line_and_skip_comments() -> None:
    """Each operator mutates the first match on a code line; comments are skipped; files alternate in the order."""
    sites = mutation_sites({"b.py": SOURCE, "a.py": "x = y == z\n"})
    assert [(m.path, m.line, m.operator) for m in sites] == [
        ("a.py", 1, "comparison_flip"), ("b.py", 3, "comparison_flip"), ("b.py", 3, "boolean_negation"),
        ("b.py", 3, "and_or_swap"), ("b.py", 4, "off_by_one")]
    assert [m.after.strip() for m in sites[1:]] == ["if a >= b and True:", "if a < b and False:", "if a < b or True:",
                                                    "return a - 1"]


def test_the_reverse_patch_undoes_the_mutation_with_git_apply(tmp_path: Path) -> None:
    """The reference solution of a mutant, applied by git to the mutated file, restores HEAD's text."""
    m = mutation_sites({"calc.py": SOURCE})[0]
    mutated = apply_mutation(SOURCE, m)
    (tmp_path / "calc.py").write_text(mutated)
    (tmp_path / "fix.patch").write_text(reverse_patch("calc.py", mutated, SOURCE))
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "calc.py").read_text() == SOURCE


def test_a_mutant_task_is_opaque_and_its_instruction_is_marked_as_pluginbench_s() -> None:
    """The folder name does not point at the bug; the prompt names the failing tests and says who wrote it."""
    m = mutation_sites({"calc.py": SOURCE})[0]
    assert "calc" not in mutant_task_id("h" * 40, m) and mutant_task_id("h" * 40, m).endswith("-hhhhhhhh")
    text = mutant_instruction(m, "calc", ["t.a", "t.b"])
    assert text.startswith("<!-- Written by pluginbench tasks mine for a seeded bug") and "- `t.a`\n- `t.b`\n" in text
    assert "calc.py" not in text
    c = mutant_candidate("h" * 40, m, ["tests/test_b.py", "tests/test_a.py"])
    assert [ch.path for ch in c.tests] == ["tests/test_a.py", "tests/test_b.py"] and c.sources[0].path == "calc.py"


@pytest.mark.docker
def test_an_image_missing_from_the_engine_exits_2_naming_image_and_writes_nothing(tmp_path: Path) -> None:
    """--image naming an image the Docker engine lacks: exit 2 with field --image and the docker pull fix, no output."""
    from tests.cli.test_bad_input_docker import _engine_up

    require(_engine_up(), "a Docker engine")
    code, output = _mine(str(BUNDLE), "--out", str(tmp_path / "out"), "--limit", "1", "--image", "pb-no-such-image:1")
    assert code == 2, output
    assert "field: --image" in output and "docker pull pb-no-such-image:1" in output
    assert list(tmp_path.iterdir()) == []


def test_pytest_junit_reports_become_per_test_outcomes() -> None:
    """The grader reads pytest's JUnit report: a failure or error fails, skipped skips, anything else passes."""
    from pluginbench.tasks._mine_grade import junit_outcomes

    xml = ('<testsuites><testsuite name="pytest"><testcase classname="tests.test_a" name="test_ok" />'
           '<testcase classname="tests.test_a" name="test_bad"><failure message="x">tb</failure></testcase>'
           '<testcase classname="tests.test_b.T" name="test_err"><error message="y" /></testcase>'
           '<testcase classname="tests.test_b.T" name="test_skip"><skipped message="z" /></testcase>'
           '</testsuite></testsuites>')
    assert junit_outcomes(xml) == {"tests.test_a::test_ok": "pass", "tests.test_a::test_bad": "fail",
                                   "tests.test_b.T::test_err": "fail", "tests.test_b.T::test_skip": "skip"}


def test_screened_history_prints_a_table_and_writes_only_the_summary(tmp_path: Path) -> None:
    """Candidates rejected from their paths alone need no sandbox: the table names each reason, --out holds mining.json."""
    from pluginbench.environments import bwrap_available

    require(bwrap_available(), "bubblewrap")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    repo = tmp_path / "calc"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(repo)], check=True, env=env)
    log = subprocess.run(["git", "log", "--format=%H %s"], cwd=repo, check=True, env=env, capture_output=True, text=True)
    by_subject = {s: h for h, s in (line.split(" ", 1) for line in log.stdout.splitlines())}
    subprocess.run(["git", "reset", "-q", "--hard", by_subject["Test add with negative numbers"]], cwd=repo, check=True,
                   env=env)
    code, output = _mine(str(repo), "--out", str(tmp_path / "out"), "--since", by_subject["Add subtract"])
    assert code == 0, output
    assert "3 candidate(s) examined, 0 admitted" in output
    # each once in the progress lines (stderr) and once in the table (stdout)
    assert output.count("no_test_change") == 4 and output.count("no_source_change") == 2
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["mining.json"]
    summary = json.loads((tmp_path / "out" / "mining.json").read_text())
    assert [c["reason"] for c in summary["candidates"]][0] == "the change adds or changes no test file"
    assert all(c["sandbox_runs"] == 0 for c in summary["candidates"])


def test_the_grader_runs_the_installed_pytest_not_one_the_working_tree_holds(tmp_path: Path) -> None:
    """An agent's `pytest.py` (and `xml/`) in the working tree is not the pytest the mined grader runs: a
    failing fail-to-pass test still fails (reward 0) and the planted module never runs."""
    from pluginbench.tasks import _mine_grade

    app, tests, logs = tmp_path / "app", tmp_path / "tests", tmp_path / "logs"
    (tests / "files" / "tests").mkdir(parents=True)
    (app / "tests").mkdir(parents=True)
    (app / "xml").mkdir()
    marker = tmp_path / "planted-ran"
    fake = (f"open({str(marker)!r}, 'a').write(__name__)\n"
            "import sys\nfor a in sys.argv:\n    if a.startswith('--junitxml='):\n"
            "        open(a.split('=', 1)[1], 'w').write('<testsuite><testcase classname=\"tests.test_x\" "
            "name=\"test_real\"/></testsuite>')\n")
    (app / "pytest.py").write_text(fake)
    (app / "xml" / "__init__.py").write_text(fake)
    test = "def test_real():\n    assert False\n"
    (tests / "files" / "tests" / "test_x.py").write_text(test)
    (tests / "config.json").write_text(json.dumps({"test_files": ["tests/test_x.py"], "deleted_test_files": [],
                                                   "runner": "pytest", "f2p": ["tests.test_x::test_real"], "p2p": []}))
    env = {"PATH": os.environ["PATH"], "APP_DIR": str(app), "TESTS_DIR": str(tests), "LOGS_DIR": str(logs)}
    done = subprocess.run([sys.executable, str(Path(_mine_grade.__file__))], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert (logs / "verifier" / "reward.txt").read_text().strip() == "0", done.stdout + done.stderr
    assert json.loads((logs / "verifier" / "tests.json").read_text())["tests.test_x::test_real"] == "fail"
    assert not marker.exists()
