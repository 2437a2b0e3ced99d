#!/usr/bin/env python3
"""The verifier of a task mined from git history (``pluginbench tasks mine``).

This file is copied into the task as ``tests/grade.py`` and runs only inside the task's
verifier sandbox (never on the host; PluginBench does not import it). Standard library only.

It puts the commit's test files (``tests/files/``) over the working tree, removes the test
files the commit deleted, runs the whole test suite with the ``runner`` of ``config.json``
and writes each test's outcome to ``$LOGS_DIR/verifier/tests.json``:

* ``auto``/``pytest``/``unittest`` (Python): pytest when the sandbox's ``python3`` has it,
  else unittest discovery; ids ``classname::name`` (pytest) or unittest's test ids;
* ``go``: ``go test -json -vet=off ./...`` offline (no module proxy, the sandbox's own caches);
  ids ``package::TestName`` (subtests ``TestName/sub``);
* ``node``: ``node --test --test-reporter=tap`` once per test file (node's own file
  patterns); ids ``file::test > subtest``;
* ``cargo``: ``cargo test --offline --no-fail-fast``; ids ``target::path::name`` where the
  target is the test binary's source (``src/lib.rs``, ``tests/x.rs``) or ``doc``. The reward is 1 when every fail-to-pass and every
pass-to-pass test of ``tests/config.json`` passed, else 0, in ``reward.json`` with the
counts (``f2p_total``, ``f2p_passed``, ``p2p_total``, ``p2p_passed``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from xml.etree import ElementTree


def _unittest(app: Path, out: Path) -> None:
    """Discover and run unittest tests under ``app``; each test id → pass, fail or skip."""
    sys.path.insert(0, str(app))
    os.chdir(app)
    outcomes: dict[str, str] = {}

    class Recorder(unittest.TestResult):
        def addSuccess(self, test: unittest.TestCase) -> None:  # noqa: N802 - unittest's name
            outcomes[test.id()] = "pass"

        def addFailure(self, test: unittest.TestCase, err: object) -> None:  # noqa: N802
            outcomes[test.id()] = "fail"

        def addError(self, test: unittest.TestCase, err: object) -> None:  # noqa: N802
            outcomes[test.id()] = "fail"

        def addSkip(self, test: unittest.TestCase, reason: str) -> None:  # noqa: N802
            outcomes[test.id()] = "skip"

        def addExpectedFailure(self, test: unittest.TestCase, err: object) -> None:  # noqa: N802
            outcomes[test.id()] = "pass"

        def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:  # noqa: N802
            outcomes[test.id()] = "fail"

    loader = unittest.TestLoader()
    suite = unittest.TestSuite([loader.discover(str(app), pattern="test*.py", top_level_dir=str(app))])
    for name in ("tests", "test"):  # a tests folder that is not a package: discover it on its own
        folder = app / name
        if folder.is_dir() and not (folder / "__init__.py").exists():
            sys.path.insert(0, str(folder))
            suite.addTest(loader.discover(str(folder), pattern="test*.py", top_level_dir=str(folder)))
    suite.run(Recorder())
    out.write_text(json.dumps(outcomes, sort_keys=True))


#: ``python -I -B -c`` of this (then the app folder and pytest's arguments; -B: no bytecode, as
#: PYTHONDONTWRITEBYTECODE asks, which -I ignores): the installed pytest
#: and its JUnit writer imported before the app folder goes first on the import path, so a
#: ``pytest.py`` or ``xml/`` of the working tree is not what runs or writes the report
_PYTEST = ("import sys, pytest, _pytest.junitxml, xml.etree.ElementTree; app = sys.argv[1]; "
           "sys.path.insert(0, app); sys.exit(pytest.main(sys.argv[2:]))")


def _pytest(app: Path, out: Path, env: dict[str, str]) -> None:
    """Run pytest over ``app`` with a JUnit report; each ``class::name`` → pass, fail or skip."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        subprocess.run([sys.executable, "-I", "-B", "-c", _PYTEST, str(app), "-q", "-p", "no:cacheprovider",
                        "-o", "addopts=", f"--junitxml={report}", "--rootdir", str(app)], cwd=app, env=env,
                       check=False, start_new_session=True)
        outcomes = junit_outcomes(report.read_text(encoding="utf-8")) if report.exists() else {}
        out.write_text(json.dumps(outcomes, sort_keys=True))


def junit_outcomes(xml: str) -> dict[str, str]:
    """Each ``<testcase>`` of a JUnit report as ``classname::name`` → pass, fail (a failure or
    error child) or skip (a skipped child)."""
    outcomes: dict[str, str] = {}
    for case in ElementTree.fromstring(xml).iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        tags = {child.tag for child in case}
        outcomes[test_id] = "fail" if tags & {"failure", "error"} else "skip" if "skipped" in tags else "pass"
    return outcomes


#: the environment of a Go or Rust run: offline, every cache inside the sandbox's temp folder
def _tool_env(env: dict[str, str]) -> dict[str, str]:
    tmp = env.get("TMPDIR") or tempfile.gettempdir()
    return dict(env, GOCACHE=f"{tmp}/pb-go-cache", GOPATH=f"{tmp}/pb-go-path", GOMODCACHE=f"{tmp}/pb-go-path/mod",
                GOPROXY="off", GOFLAGS="-mod=mod", GOTOOLCHAIN="local", GOTELEMETRY="off", CGO_ENABLED="0",
                CARGO_HOME=env.get("CARGO_HOME") or f"{tmp}/pb-cargo-home", CARGO_TARGET_DIR=f"{tmp}/pb-cargo-target",
                CARGO_TERM_COLOR="never", CARGO_NET_OFFLINE="true", NO_COLOR="1")


def go_outcomes(stream: str) -> dict[str, str]:
    """``go test -json`` events → ``package::Test`` (subtests ``Test/sub``) → pass, fail or skip."""
    outcomes: dict[str, str] = {}
    for line in stream.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("Test") and event.get("Action") in ("pass", "fail", "skip"):
            outcomes[f"{event.get('Package', '')}::{event['Test']}"] = str(event["Action"])
    return outcomes


_TAP_SUBTEST = re.compile(r"^# Subtest: (.*)$")
_TAP_RESULT = re.compile(r"^(not )?ok \d+(?: - (.*?))?(?: # (SKIP|TODO)\b.*)?$", re.IGNORECASE)


def tap_outcomes(text: str, prefix: str) -> dict[str, str]:
    """Node's TAP (four spaces a level) → ``prefix::test > subtest`` → pass, fail or skip
    (a TODO counts as skip); YAML diagnostic blocks are skipped."""
    outcomes: dict[str, str] = {}
    names: list[str] = []
    in_yaml = False
    for line in text.splitlines():
        body = line.lstrip(" ")
        if in_yaml:
            in_yaml = body != "..."
            continue
        if body == "---":
            in_yaml = True
            continue
        depth = (len(line) - len(body)) // 4
        sub = _TAP_SUBTEST.match(body)
        if sub:
            del names[depth:]
            names.append(sub.group(1))
            continue
        result = _TAP_RESULT.match(body)
        if result:
            path = [*names[:depth], (result.group(2) or "").replace("\\#", "#")]
            outcome = "skip" if result.group(3) else "fail" if result.group(1) else "pass"
            outcomes[f"{prefix}::{' > '.join(path)}"] = outcome
            del names[depth:]
    return outcomes


_CARGO_RUNNING = re.compile(r"^\s*Running (?:unittests )?(\S+)")
_CARGO_DOC = re.compile(r"^\s*Doc-tests (\S+)")
_CARGO_TEST = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)\b")


def cargo_outcomes(text: str) -> dict[str, str]:
    """``cargo test`` output (stdout and stderr together) → ``target::path::name`` → pass,
    fail or skip (ignored); the target is the source of the test binary, or ``doc``."""
    outcomes: dict[str, str] = {}
    target = ""
    for line in text.splitlines():
        running = _CARGO_RUNNING.match(line)
        if running:
            target = running.group(1)
            continue
        if _CARGO_DOC.match(line):
            target = "doc"
            continue
        test = _CARGO_TEST.match(line)
        if test:
            outcomes[f"{target}::{test.group(1)}"] = {"ok": "pass", "FAILED": "fail"}.get(test.group(2), "skip")
    return outcomes


_NODE_DIRS = {"node_modules", ".git"}
_NODE_SUFFIXES = (".js", ".mjs", ".cjs")
_NODE_NAME = re.compile(r"^(test|test-.+|.+[.\-_]test)\.(js|mjs|cjs)$")


def node_test_files(app: Path) -> list[str]:
    """Test files as ``node --test`` finds them: ``*.test.js``, ``*-test.js``, ``*_test.js``,
    ``test-*.js``, ``test.js`` anywhere and every ``.js``/``.mjs``/``.cjs`` under a ``test``
    folder (not under ``node_modules``); sorted paths relative to ``app``."""
    found = []
    for folder, dirs, files in os.walk(app):
        dirs[:] = sorted(d for d in dirs if d not in _NODE_DIRS)
        rel_dir = Path(folder).relative_to(app)
        under_test = "test" in rel_dir.parts
        for name in files:
            if name.endswith(_NODE_SUFFIXES) and (under_test or _NODE_NAME.match(name)):
                found.append((rel_dir / name).as_posix())
    return sorted(found)


def _run_go(app: Path, out: Path, env: dict[str, str]) -> None:
    done = subprocess.run(["go", "test", "-json", "-count=1", "-vet=off", "./..."], cwd=app, env=_tool_env(env),
                          capture_output=True, text=True, check=False, start_new_session=True)
    sys.stderr.write(done.stderr[-4000:])
    out.write_text(json.dumps(go_outcomes(done.stdout), sort_keys=True))


def _run_node(app: Path, out: Path, env: dict[str, str]) -> None:
    outcomes: dict[str, str] = {}
    for rel in node_test_files(app):
        done = subprocess.run(["node", "--test", "--test-reporter=tap", rel], cwd=app, env=dict(env, NO_COLOR="1"),
                              capture_output=True, text=True, check=False, start_new_session=True)
        outcomes.update(tap_outcomes(done.stdout, rel))
    out.write_text(json.dumps(outcomes, sort_keys=True))


def _run_cargo(app: Path, out: Path, env: dict[str, str]) -> None:
    done = subprocess.run(["cargo", "test", "--offline", "--no-fail-fast"], cwd=app, env=_tool_env(env),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False,
                          start_new_session=True)
    out.write_text(json.dumps(cargo_outcomes(done.stdout), sort_keys=True))


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--unittest":
        _unittest(Path(sys.argv[2]), Path(sys.argv[3]))
        return 0
    app = Path(os.environ.get("APP_DIR", "/app"))
    tests = Path(os.environ.get("TESTS_DIR", str(Path(__file__).resolve().parent)))
    verifier = Path(os.environ.get("LOGS_DIR", "/logs")) / "verifier"
    verifier.mkdir(parents=True, exist_ok=True)
    (verifier / "reward.txt").write_text("0\n")  # until every graded test has been seen to pass
    config = json.loads((tests / "config.json").read_text())
    for rel in config["test_files"]:
        target = app / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tests / "files" / rel, target)
    for rel in config["deleted_test_files"]:
        (app / rel).unlink(missing_ok=True)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(app))
    results = verifier / "tests.json"
    runner = config.get("runner", "auto")
    if runner == "auto":
        has_pytest = subprocess.run([sys.executable, "-I", "-c", "import pytest"], env=env, capture_output=True,
                                    check=False, cwd="/", start_new_session=True).returncode == 0
        runner = "pytest" if has_pytest else "unittest"
    if runner == "pytest":
        _pytest(app, results, env)
    elif runner in ("go", "node", "cargo"):
        {"go": _run_go, "node": _run_node, "cargo": _run_cargo}[runner](app, results, env)
    else:
        subprocess.run([sys.executable, str(Path(__file__).resolve()), "--unittest", str(app), str(results)],
                       cwd=app, env=env, check=False, start_new_session=True)
    outcomes: dict[str, str] = json.loads(results.read_text()) if results.exists() else {}
    f2p, p2p = config["f2p"], config["p2p"]
    f2p_passed = sum(1 for t in f2p if outcomes.get(t) == "pass")
    p2p_passed = sum(1 for t in p2p if outcomes.get(t) == "pass")
    reward = int(bool(f2p) and f2p_passed == len(f2p) and p2p_passed == len(p2p))
    (verifier / "reward.json").write_text(json.dumps({
        "reward": reward, "f2p_total": len(f2p), "f2p_passed": f2p_passed,
        "p2p_total": len(p2p), "p2p_passed": p2p_passed,
    }, sort_keys=True))
    print(f"runner {runner}: {len(outcomes)} tests; fail-to-pass {f2p_passed}/{len(f2p)}, "
          f"pass-to-pass {p2p_passed}/{len(p2p)}; reward {reward}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
