"""Run every tests/check_*.py module as one package and write a JUnit XML report.

Like a compiled package (Go, Rust, TypeScript), a module of the package that fails to
import fails every test of the package: one broken test file breaks the whole suite.
Usage: python3 run_tests.py REPORT.xml
"""

import importlib
import pathlib
import sys
import traceback
import unittest
import xml.etree.ElementTree as ET


def _cases(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _cases(item)
        else:
            yield item


def main(report):
    root = pathlib.Path(__file__).resolve().parent
    sys.path.insert(0, str(root))
    modules, broken = [], []
    for path in sorted((root / "tests").glob("check_*.py")):
        try:
            modules.append(importlib.import_module(f"tests.{path.stem}"))
        except Exception:
            broken.append(f"{path.name}: {traceback.format_exc().strip().splitlines()[-1]}")
    loader = unittest.TestLoader()
    tests = [t for m in modules for t in _cases(loader.loadTestsFromModule(m))]
    suite = ET.Element("testsuite", name="calc")
    failed = 0
    for test in tests:
        case = ET.SubElement(suite, "testcase", classname=f"{type(test).__module__}.{type(test).__name__}",
                             name=test._testMethodName)
        if broken:
            ET.SubElement(case, "error", message="package build failed: " + "; ".join(broken))
            failed += 1
            continue
        result = unittest.TestResult()
        test.run(result)
        problems = result.failures + result.errors
        if problems:
            ET.SubElement(case, "failure", message=problems[0][1].strip().splitlines()[-1])
            failed += 1
    ET.ElementTree(suite).write(report, encoding="unicode")
    print(f"{len(tests)} tests, {failed} failed" + (f"; broken: {broken}" if broken else ""))


if __name__ == "__main__":
    main(sys.argv[1])
