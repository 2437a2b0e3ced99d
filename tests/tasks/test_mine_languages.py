"""Mining graders beyond Python: the language of a repository, per-test outcomes from Go's JSON events, node's TAP
and cargo's output, node's test files; and mining the bundled Go and JavaScript histories in bubblewrap."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pluginbench.tasks import detect_language
from pluginbench.tasks._mine_grade import cargo_outcomes, go_outcomes, node_test_files, tap_outcomes
from tests._prereq import require

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize(("paths", "language"), [
    (["go.mod", "calc/calc.go", "tools/gen.py"], "go"),
    (["Cargo.toml", "src/lib.rs", "package.json"], "rust"),
    (["package.json", "calc.js", "test/add.test.js", "scripts/x.py"], "javascript"),
    (["package.json", "web/app.ts", "a.py", "b.py", "c.py"], "python"),  # a Python project with a web tool
    (["calc.js", "test/a.test.js"], "python"),  # no package.json: never guessed as JavaScript
    (["setup.py", "calc.py"], "python"),
    (["sub/go.mod", "sub/x.go"], "python"),  # only a root marker counts
])
def test_the_language_comes_from_root_markers_then_the_majority_of_files(paths: list[str], language: str) -> None:
    """A root go.mod is Go, a root Cargo.toml Rust, a root package.json with more JS/TS than Python files JavaScript,
    anything else Python."""
    assert detect_language(paths) == language


@pytest.mark.parametrize(("package_json", "other"), [
    ('{"devDependencies": {"jest": "^29"}, "scripts": {"test": "jest"}}', "jest"),
    ('{"dependencies": {"left-pad": "1"}, "scripts": {"test": "vitest run"}}', "vitest"),
    ('{"scripts": {"test": "node --test --test-reporter=tap"}}', None),
    ('{"devDependencies": {"jest-junit": "1"}}', None),  # a name that only starts like one
    ("not json", None),
])
def test_a_package_json_naming_another_framework_is_found(package_json: str, other: str | None) -> None:
    """jest, vitest, mocha ... in the dependencies or the test script are frameworks node's runner does not run."""
    from pluginbench.tasks import other_js_runner

    assert other_js_runner(package_json) == other


def test_a_jest_repository_is_refused_unless_the_node_runner_is_asked_for(tmp_path: Path) -> None:
    """Detected as JavaScript with jest in package.json: exit 2 naming --runner; --runner node mines it anyway; a
    Python repository's package.json is never read as a reason to refuse."""
    from pluginbench.actors._mine import MineOptions, choose_runner
    from pluginbench.errors import ConfigError

    files, jest = ["package.json", "a.js", "a.test.js"], '{"devDependencies": {"jest": "29"}}'
    with pytest.raises(ConfigError) as err:
        choose_runner(MineOptions(repo="r", out=tmp_path / "o"), files, jest)
    assert err.value.field == "--runner" and "jest" in err.value.message and "--runner node" in (err.value.fix or "")
    assert choose_runner(MineOptions(repo="r", out=tmp_path / "o", runner="node"), files, jest) == ("javascript", "node")
    assert choose_runner(MineOptions(repo="r", out=tmp_path / "o"), ["package.json", "x.py"], jest) == ("python", "auto")


def test_go_json_events_become_package_and_test_outcomes() -> None:
    """Each test's last pass/fail/skip action counts, subtests keep their path, package-level and output events are
    ignored, and a line that is not JSON (a build error) is skipped."""
    stream = "\n".join(json.dumps(e) for e in [
        {"Action": "run", "Package": "ex/calc", "Test": "TestAdd"},
        {"Action": "output", "Package": "ex/calc", "Test": "TestAdd", "Output": "ok\n"},
        {"Action": "pass", "Package": "ex/calc", "Test": "TestAdd"},
        {"Action": "fail", "Package": "ex/calc", "Test": "TestSub/two"},
        {"Action": "pass", "Package": "ex/calc", "Test": "TestSub/one"},
        {"Action": "fail", "Package": "ex/calc", "Test": "TestSub"},
        {"Action": "skip", "Package": "ex/words", "Test": "TestLater"},
        {"Action": "fail", "Package": "ex/broken"},
    ]) + "\n# ex/broken [build failed]\n"
    assert go_outcomes(stream) == {"ex/calc::TestAdd": "pass", "ex/calc::TestSub": "fail", "ex/calc::TestSub/one": "pass",
                                   "ex/calc::TestSub/two": "fail", "ex/words::TestLater": "skip"}


#: node 18.20 and 20.20 print this for one file (durations and the stack shortened)
TAP = """TAP version 13
# Subtest: add
ok 1 - add
  ---
  duration_ms: 1.0
  ...
# Subtest: group
    # Subtest: inner ok
    ok 1 - inner ok
      ---
      duration_ms: 0.1
      ...
    # Subtest: inner bad
    not ok 2 - inner bad
      ---
      error: |-
        ok 9 - a line of the error that looks like a result
      ...
    1..2
not ok 2 - group
  ---
  failureType: 'subtestsFailed'
  ...
# Subtest: later
ok 3 - later # SKIP
# Subtest: hash \\# name
ok 4 - hash \\# name # TODO not yet
1..4
# pass 2
"""


def test_node_tap_becomes_file_and_nested_test_outcomes() -> None:
    """Nested subtests are named parent > child under the file, SKIP and TODO are skips, an escaped # is kept, and
    text inside a YAML diagnostic block is never read as a result."""
    assert tap_outcomes(TAP, "test/a.test.js") == {
        "test/a.test.js::add": "pass", "test/a.test.js::group": "fail", "test/a.test.js::group > inner ok": "pass",
        "test/a.test.js::group > inner bad": "fail", "test/a.test.js::later": "skip",
        "test/a.test.js::hash # name": "skip",
    }


#: cargo 1.95 on a crate with a unit test module, an integration test and a doc test (backtrace shortened)
CARGO = """    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.57s
     Running unittests src/lib.rs (target/debug/deps/calc-c6626fb655a8d231)
running 2 tests
test tests::later ... ignored
test tests::adds ... ok
test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s
     Running tests/more.rs (target/debug/deps/more-610f748fa03030a4)
running 1 test
test bad ... FAILED
failures:
---- bad stdout ----
thread 'bad' (9873) panicked at tests/more.rs:2:12:
failures:
    bad
test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.33s
error: test failed, to rerun pass `--test more`
   Doc-tests calc
running 1 test
test src/lib.rs - add (line 3) ... ok
"""


def test_cargo_output_becomes_target_and_test_outcomes() -> None:
    """Each test is named by its binary's source (doc tests by doc), ok passes, FAILED fails, ignored is a skip."""
    assert cargo_outcomes(CARGO) == {"src/lib.rs::tests::adds": "pass", "src/lib.rs::tests::later": "skip",
                                     "tests/more.rs::bad": "fail", "doc::src/lib.rs - add (line 3)": "pass"}


def test_node_test_files_follow_node_s_own_patterns(tmp_path: Path) -> None:
    """Named test files anywhere and every script under a test folder are found; node_modules and other files are
    not."""
    for rel in ["calc.js", "calc.test.js", "lib/x-test.mjs", "lib/y_test.cjs", "test-z.js", "test.js",
                "test/helpers.js", "test/deep/more.js", "test/data.json", "node_modules/p/a.test.js", "src/tests.js"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert node_test_files(tmp_path) == ["calc.test.js", "lib/x-test.mjs", "lib/y_test.cjs", "test-z.js",
                                         "test.js", "test/deep/more.js", "test/helpers.js"]


def _mine(tmp: Path, lang: str) -> subprocess.Popen[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache"), "TMPDIR": str(tmp)}
    return subprocess.Popen([sys.executable, "-m", "pluginbench", "tasks", "mine", str(DATA / f"mine-{lang}" /
                             f"calc-{lang}.bundle"), "--out", str(tmp / f"out-{lang}"), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_go_and_javascript_histories_are_mined_with_their_own_test_runners(tmp_path: Path) -> None:
    """Both bundles at once in bubblewrap: the language is detected, the root commit and the commit without tests are
    rejected, 'Add subtract' is admitted with go test -json / node --test outcomes as its fail-to-pass and pass-to-pass
    sets, and the written task names its runner."""
    from pluginbench.environments import bwrap_available

    require(bwrap_available(), "bubblewrap")
    require(shutil.which("go") is not None and shutil.which("node") is not None, "go and node (tools/setup.sh)")
    runs = {lang: _mine(tmp_path, lang) for lang in ("go", "js")}
    done = {lang: p.communicate(timeout=600) for lang, p in runs.items()}
    for lang, p in runs.items():
        assert p.returncode == 0, done[lang][1]
    expected = {
        "go": ("go", "go", ["example.invalid/calc/calc::TestAdd", "example.invalid/calc/calc::TestSubtract",
                            "example.invalid/calc/calc::TestSubtract/negative",
                            "example.invalid/calc/calc::TestSubtract/positive"],
               ["example.invalid/calc/words::TestShout"]),
        "js": ("javascript", "node", ["test/subtract.test.js::subtract", "test/subtract.test.js::subtract > negative",
                                      "test/subtract.test.js::subtract > positive"], ["test/add.test.js::add"]),
    }
    for lang, (language, runner, f2p, p2p) in expected.items():
        report = json.loads(done[lang][0])
        assert (report["language"], report["runner"]) == (language, runner)
        assert [(c["subject"], c["admitted"], c["code"]) for c in report["candidates"]] == [
            ("Start calc with add", False, "root_commit"), ("Describe calc in the README", False, "no_test_change"),
            ("Add subtract", True, None)]
        task = tmp_path / f"out-{lang}" / report["candidates"][2]["task"]
        config = json.loads((task / "tests" / "config.json").read_text())
        assert (config["runner"], config["f2p"], config["p2p"]) == (runner, f2p, p2p)
        assert f'language = "{language}"' in (task / "task.toml").read_text()


@pytest.mark.docker
def test_an_image_without_the_runner_s_toolchain_exits_2_naming_image_and_writes_nothing(tmp_path: Path) -> None:
    """Mining the Go bundle in the base image (python3 and node, no go) asks the sandbox once and exits 2 naming
    --image and the missing go, before any candidate runs or any folder is written."""
    require(shutil.which("docker") is not None and subprocess.run(
        ["docker", "image", "inspect", "pluginbench/base:bookworm"], capture_output=True).returncode == 0,
        "docker engine and pluginbench/base:bookworm (tools/start-docker.sh, tools/build-base-image.sh)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "pluginbench", "tasks", "mine", str(DATA / "mine-go" / "calc-go.bundle"),
                           "--out", str(tmp_path / "out"), "--image", "pluginbench/base:bookworm"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the image pluginbench/base:bookworm has no go" in done.stderr and "field: --image" in done.stderr
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".pluginbench-mine-*"))
