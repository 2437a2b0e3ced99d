"""History mining, the pure part: what a candidate's task folder holds and whether it is admitted.

:func:`screen` rejects a candidate from its changed paths alone (no test change, no source
change, a root commit); :func:`decide` turns the per-test outcomes of two runs before the
change (the starting source with the commit's tests) and two runs after it (with the
commit's source change applied too) into the fail-to-pass and pass-to-pass sets, or the
reason the candidate is rejected. :func:`task_files` is the text of every file a mined task
carries besides its trees. No I/O here.
"""

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from ._mine_git import Candidate

#: why a candidate was not admitted (docs/tasks.md#mining-tasks-from-git-history)
RejectCode = Literal[
    "root_commit", "no_test_change", "no_source_change", "tests_fail_after", "tests_pass_before", "flaky",
    "readiness_failed", "unusable_tree", "not_red",
]

GRADER_SOURCE = Path(__file__).with_name("_mine_grade.py")

#: the languages whose tests a mined task's grader runs (docs/tasks.md#mining-tasks-from-git-history)
Language = Literal["python", "go", "javascript", "rust"]
#: the grader's runner for each language (Python's ``auto`` picks pytest or unittest inside the sandbox)
LANGUAGE_RUNNERS: Mapping[Language, tuple[str, ...]] = {
    "python": ("auto", "pytest", "unittest"), "go": ("go",), "javascript": ("node",), "rust": ("cargo",),
}
_PY = (".py",)
_JS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def detect_language(paths: Sequence[str]) -> Language:
    """The language of a repository from its file paths (HEAD's): a root ``go.mod`` is Go, a
    root ``Cargo.toml`` Rust; otherwise JavaScript when it has more JavaScript/TypeScript
    files than Python files and a root ``package.json``, else Python."""
    names = set(paths)
    if "go.mod" in names:
        return "go"
    if "Cargo.toml" in names:
        return "rust"
    py = sum(1 for p in paths if p.endswith(_PY))
    js = sum(1 for p in paths if p.endswith(_JS) and "node_modules/" not in p)
    return "javascript" if "package.json" in names and js > py else "python"


#: JavaScript test frameworks node's built-in runner does not run (they need ``node_modules``)
OTHER_JS_RUNNERS = ("jest", "vitest", "mocha", "ava", "jasmine", "karma")


def other_js_runner(package_json: str) -> str | None:
    """The test framework a ``package.json`` names in its dependencies or its ``test`` script
    that node's built-in runner cannot run (``jest``, ``vitest``, ...), or None."""
    try:
        data = json.loads(package_json)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    deps: set[str] = set()
    for key in ("dependencies", "devDependencies"):
        if isinstance(data.get(key), dict):
            deps |= set(data[key])
    scripts = data.get("scripts")
    test = str(scripts.get("test", "")) if isinstance(scripts, dict) else ""
    words = set(re.split(r"[^A-Za-z0-9_-]+", test))
    return next((name for name in OTHER_JS_RUNNERS if name in deps or name in words), None)


def language_of_runner(runner: str) -> Language | None:
    """The language a non-default runner belongs to (None for ``auto``)."""
    if runner == "auto":
        return None
    for language, runners in LANGUAGE_RUNNERS.items():
        if runner in runners:
            return language
    return None


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """The decision on one candidate: admitted with its test sets, or rejected with why."""

    admitted: bool
    code: RejectCode | None = None
    reason: str | None = None
    f2p: tuple[str, ...] = ()
    p2p: tuple[str, ...] = ()
    flaky: tuple[str, ...] = ()


def reject(code: RejectCode, reason: str, *, flaky: Sequence[str] = ()) -> Verdict:
    return Verdict(admitted=False, code=code, reason=reason, flaky=tuple(flaky))


def screen(c: Candidate) -> Verdict | None:
    """The rejection a candidate earns from its changed paths alone, or None to run it."""
    if c.parent is None:
        return reject("root_commit", "a root commit has no parent to start from")
    if not c.tests:
        return reject("no_test_change", "the change adds or changes no test file")
    if not c.sources:
        kinds = "only tests" if all(ch.kind == "test" for ch in c.changes) else "tests and non-code files"
        return reject("no_source_change", f"the change touches {kinds}: nothing for an agent to implement")
    return None


def _names(tests: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(tests[:most])
    return shown + (f" and {len(tests) - most} more" if len(tests) > most else "")


def decide(before: Sequence[Mapping[str, str]], after: Sequence[Mapping[str, str]]) -> Verdict:
    """Admit or reject from per-test outcomes (``pass``/``fail``/``skip``; a test absent from
    a run did not pass in it) of the runs before and after the change.

    A test that passes after the change in every run is graded: fail-to-pass when it passed
    in no run before, pass-to-pass when it passed in every run before. A test whose outcome
    differs between identical runs (before or after) and that passed in some run after is
    flaky, and any flaky test rejects the candidate: its grade would not be stable.
    """
    tests = sorted({t for run in (*before, *after) for t in run})
    flaky = [t for t in tests
             if any(run.get(t) == "pass" for run in after)
             and (len({run.get(t) == "pass" for run in before}) > 1 or len({run.get(t) == "pass" for run in after}) > 1)]
    if flaky:
        return reject("flaky", f"{len(flaky)} test(s) changed outcome between two identical runs: {_names(flaky)}",
                      flaky=flaky)
    passing_after = [t for t in tests if all(run.get(t) == "pass" for run in after)]
    f2p = tuple(t for t in passing_after if not any(run.get(t) == "pass" for run in before))
    p2p = tuple(t for t in passing_after if all(run.get(t) == "pass" for run in before))
    if not f2p:
        broken = [t for t in tests if all(run.get(t) == "fail" for run in after)
                  and not any(run.get(t) == "pass" for run in before)]
        if broken:
            return reject("tests_fail_after", f"no test goes from failing to passing; {len(broken)} test(s) fail "
                          f"even with the commit's source change applied: {_names(broken)}")
        return reject("tests_pass_before",
                      f"every test that passes after the change ({len(passing_after)}) already passes before it: "
                      "the tests do not need the change")
    return Verdict(admitted=True, f2p=f2p, p2p=p2p)


_SLUG = re.compile(r"[^a-z0-9]+")


def task_id_of(c: Candidate) -> str:
    """A folder name from the subject and the commit: ``add-subtract-1a2b3c4d``."""
    slug = _SLUG.sub("-", c.subject.lower()).strip("-")[:40].rstrip("-") or "change"
    return f"{slug}-{c.commit[:8]}"


def instruction_text(c: Candidate, repo: str) -> str:
    """The prompt: the commit (or merge) message, marked as such."""
    what = "merge commit (a merged pull request)" if c.merge else "commit"
    return (
        f"<!-- Mined by pluginbench tasks mine from {what} {c.commit} of {repo}. The text below is the "
        f"{'merge commit' if c.merge else 'commit'} message as its author wrote it, not an instruction written "
        f"for this task. -->\n\n"
        f"{c.message.strip()}\n"
        + ("\nCommits of this pull request:\n\n" + "".join(f"- {s}\n" for s in c.merged) if c.merged else "")
    )


def grading_config(c: Candidate, f2p: Sequence[str], p2p: Sequence[str], runner: str) -> str:
    """``tests/config.json``: the commit's test files, the graded sets and the runner."""
    return json.dumps({
        "base_commit": c.parent,
        "commit": c.commit,
        "test_files": sorted(ch.path for ch in c.tests if ch.status != "D"),
        "deleted_test_files": sorted(ch.path for ch in c.tests if ch.status == "D"),
        "f2p": list(f2p),
        "p2p": list(p2p),
        "runner": runner,
    }, indent=2, sort_keys=True) + "\n"


def task_toml(c: Candidate, task_id: str, repo: str, image: str | None, test_timeout: int,
              mutation: str | None = None, language: str | None = None) -> str:
    """``task.toml`` of a mined task, with its provenance under ``[metadata]``."""
    def q(text: str) -> str:
        return json.dumps(text)  # a TOML basic string is a JSON string for what we write

    lines = [
        'schema_version = "1.4"',
        f"source = {q(f'pluginbench tasks mine: {repo} {c.commit}')}",
        "",
        "[task]",
        f"name = {q('mined/' + task_id)}",
        f"description = {q(c.subject)}",
        "",
        "[metadata]",
        f"mined_from = {q(repo)}",
        f"commit = {q(c.commit)}",
        f"base_commit = {q(c.parent or '')}",
        f"merge = {'true' if c.merge else 'false'}",
        *([f"language = {q(language)}"] if language else []),
        *([f"mutation = {q(mutation)}", 'instruction_source = "written by pluginbench (seeded bug)"'] if mutation
          else ['instruction_source = "commit message"']),
        "",
        "[agent]",
        f"timeout_sec = {max(test_timeout, 60)}",
        'network_mode = "no-network"',
        "",
        "[verifier]",
        f"timeout_sec = {test_timeout}",
        'network_mode = "no-network"',
        "",
        "[environment]",
        'workdir = "/app"',
    ]
    if image is not None:
        lines.append(f"docker_image = {q(image)}")
    return "\n".join(lines) + "\n"


TEST_SH = """#!/usr/bin/env bash
# The verifier of a task mined by pluginbench tasks mine: grade.py puts the commit's test
# files over the working tree, runs the suite and writes reward.json (exit code ignored).
set -u
TESTS="${TESTS_DIR:-$(cd "$(dirname "$0")" && pwd)}"
exec python3 "$TESTS/grade.py"
"""

SOLVE_SH = """#!/usr/bin/env bash
# The reference solution: the commit's own source change (its test changes are the hidden tests).
set -euo pipefail
cd "${APP_DIR:-/app}"
git apply --binary --whitespace=nowarn "${SOLUTION_DIR:-/solution}/solution.patch"
"""


def readme_text(c: Candidate, repo: str, verdict: Verdict) -> str:
    """The task's README.md: where it came from and how it is graded."""
    return (
        f"# {c.subject}\n\n"
        f"Mined by `pluginbench tasks mine` from {repo}, "
        f"{'merge commit' if c.merge else 'commit'} `{c.commit}` (starting source: its first parent "
        f"`{c.parent}`).\n\n"
        "* `workspace/`: the parent commit's files.\n"
        "* `instruction.md`: the commit message, marked as such.\n"
        "* `solution/solution.patch`: the commit's change to non-test files.\n"
        "* `tests/files/`: the commit's test files, put over the working tree before grading.\n"
        f"* graded: {len(verdict.f2p)} fail-to-pass and {len(verdict.p2p)} pass-to-pass tests "
        "(`tests/config.json`), found by running the suite twice before and twice after the change "
        "in the task's sandbox.\n"
    )


__all__ = [
    "GRADER_SOURCE",
    "LANGUAGE_RUNNERS",
    "Language",
    "SOLVE_SH",
    "TEST_SH",
    "RejectCode",
    "Verdict",
    "decide",
    "detect_language",
    "other_js_runner",
    "grading_config",
    "instruction_text",
    "language_of_runner",
    "readme_text",
    "reject",
    "screen",
    "task_id_of",
    "task_toml",
]
