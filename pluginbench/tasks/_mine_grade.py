#!/usr/bin/env python3
"""The verifier of a task mined from git history (``pluginbench tasks mine``).

This file is copied into the task as ``tests/grade.py`` and runs only inside the task's
verifier sandbox (never on the host; PluginBench does not import it). Standard library only.

It puts the commit's test files (``tests/files/``) over the working tree, removes the test
files the commit deleted, runs the whole test suite (pytest when the sandbox's ``python3``
has it, else unittest discovery) and writes each test's outcome to
``$LOGS_DIR/verifier/tests.json``. The reward is 1 when every fail-to-pass and every
pass-to-pass test of ``tests/config.json`` passed, else 0, in ``reward.json`` with the
counts (``f2p_total``, ``f2p_passed``, ``p2p_total``, ``p2p_passed``).
"""

from __future__ import annotations

import json
import os
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


def _pytest(app: Path, out: Path, env: dict[str, str]) -> None:
    """Run pytest over ``app`` with a JUnit report; each ``class::name`` → pass, fail or skip."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                        f"--junitxml={report}", "--rootdir", str(app)], cwd=app, env=env, check=False,
                       start_new_session=True)
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
        has_pytest = subprocess.run([sys.executable, "-c", "import pytest"], env=env, capture_output=True,
                                    check=False, start_new_session=True).returncode == 0
        runner = "pytest" if has_pytest else "unittest"
    if runner == "pytest":
        _pytest(app, results, env)
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
