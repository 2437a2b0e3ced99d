"""Changed-line and changed-branch coverage, redundant added tests, whole-suite diagnostics
(pure): a submission's patch and the coverage reports of its starting source and of the
submission, in, :class:`~pluginbench.events.Measure` values out.

* ``changed_line_coverage``: of the submission's added source lines that the report counts
  as executable, the share its tests executed. Unknown (never 0) when the submission adds
  no executable source line, when an added source file is missing from the report (the
  report is incomplete: configure coverage to report every source file), or when added
  lines fall in a file without a line population (Go line directives).
* ``changed_branch_coverage``: branches that start on added lines, taken / all. Unknown
  when the report has no branch data for a changed file, or no branch starts there.
* ``redundant_added_tests``: an added test (a per-test context of the submission's report
  that the starting source's report does not have) is redundant when the added source
  lines it executes are all executed by the union of the other tests, existing tests
  included. Smallest footprint first (then by name); a flagged test leaves the pool, so of
  two identical added tests one is flagged. Needs per-test data in both reports.
* ``suite_line_rate``, ``suite_branch_rate``, ``suite_function_rate``: the whole suite on
  the submission, diagnostics only (JSON/CSV; no gate should use them).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable

from .._parsing import git_lines
from ..events import Measure
from ._coverage_data import CoverageReport
from ._lines import is_test_path

#: file extensions each format is expected to measure (a source file added with one of these
#: must appear in the report); LCOV also expects every extension its report already holds
FORMAT_EXTENSIONS = {
    "coverage-py-json": (".py",),
    "go-coverprofile": (".go",),
    "lcov": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"),
}
FORMAT_LANGUAGE = {"coverage-py-json": "python", "go-coverprofile": "go", "lcov": "javascript/typescript"}

COVERAGE_METRICS = (
    "changed_line_coverage",
    "changed_branch_coverage",
    "changed_lines_executable",
    "changed_lines_covered",
    "redundant_added_tests",
    "suite_line_rate",
    "suite_branch_rate",
    "suite_function_rate",
)
METRIC_UNITS = {
    "changed_line_coverage": "ratio",
    "changed_branch_coverage": "ratio",
    "changed_lines_executable": "lines",
    "changed_lines_covered": "lines",
    "redundant_added_tests": "tests",
    "suite_line_rate": "ratio",
    "suite_branch_rate": "ratio",
    "suite_function_rate": "ratio",
}

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def added_lines(patch: str) -> dict[str, frozenset[int]]:
    """Each changed file's added lines, by their line number in the new file (deleted files
    and binary changes have none)."""
    out: dict[str, set[int]] = {}
    path: str | None = None
    new_line = 0
    in_hunk = False
    for line in git_lines(patch):
        if line.startswith("diff --git "):
            path, in_hunk = None, False
            m = re.match(r"diff --git a/(.*) b/(.*)$", line)
            if m:
                path = m.group(2)
            continue
        if not in_hunk and line.startswith("+++ "):
            target = line[4:]
            path = None if target == "/dev/null" else (target[2:] if target.startswith("b/") else target)
            continue
        m = _HUNK.match(line)
        if m:
            in_hunk, new_line = True, int(m.group(1))
            continue
        if not in_hunk or path is None:
            continue
        if line.startswith("+"):
            out.setdefault(path, set()).add(new_line)
            new_line += 1
        elif line.startswith(" ") or line == "":
            new_line += 1
        elif line.startswith("\\"):
            continue
    return {p: frozenset(v) for p, v in out.items() if v}


def in_scope(path: str, scope: Iterable[str] | None) -> bool:
    """``scope`` globs (``fnmatch``; ``dir/`` or ``dir/**`` means everything under ``dir``); no scope is everything."""
    if not scope:
        return True
    for pattern in scope:
        if pattern.endswith("/"):
            pattern += "**"
        if fnmatch.fnmatchcase(path, pattern) or (pattern.endswith("/**") and path.startswith(pattern[:-2])):
            return True
    return False


class CoverageContext:
    """What one coverage collection knows besides the reports: the format and declared tool
    version (for the analyzer label), the profile's scopes."""

    def __init__(self, fmt: str, tool_version: str, source_scope: list[str] | None = None,
                 test_scope: list[str] | None = None) -> None:
        self.format = fmt
        self.tool_version = tool_version
        self.source_scope = source_scope
        self.test_scope = test_scope

    @property
    def language(self) -> str:
        return FORMAT_LANGUAGE[self.format]

    @property
    def analyzer(self) -> str:
        return f"{self.format} {self.tool_version}"

    def is_test(self, path: str) -> bool:
        if self.test_scope:
            return in_scope(path, self.test_scope)
        return is_test_path(path)

    def measure(self, name: str, value: float | int | None, reason: str | None = None) -> Measure:
        unit = METRIC_UNITS[name]
        if value is None:
            return Measure(value=None, unit=unit, status="unknown", reason=reason or "not measured",
                           language=self.language, analyzer=self.analyzer)
        return Measure(value=value, unit=unit, language=self.language, analyzer=self.analyzer)

    def unknown_all(self, reason: str) -> dict[str, Measure]:
        return {name: self.measure(name, None, reason) for name in COVERAGE_METRICS}


def _ratio(num: int, den: int) -> float:
    return round(num / den, 6)


def changed_coverage(patch: str, before: CoverageReport | None, after: CoverageReport,
                     ctx: CoverageContext) -> dict[str, Measure]:
    """Every coverage metric of one submission (see the module docstring)."""
    added = {p: lines for p, lines in added_lines(patch).items()
             if not ctx.is_test(p) and in_scope(p, ctx.source_scope)}
    expected_ext = set(FORMAT_EXTENSIONS[ctx.format])
    if ctx.format == "lcov":
        expected_ext |= {"." + p.rsplit(".", 1)[-1] for p in after.files if "." in p.rsplit("/", 1)[-1]}
    measured_added = {p: lines for p, lines in added.items()
                      if any(p.endswith(e) for e in expected_ext) and not p.endswith(".d.ts")}
    out: dict[str, Measure] = {}
    missing = sorted(p for p in measured_added if p not in after.files)
    no_lines = sorted(p for p in measured_added if p in after.unavailable_lines)
    executable = covered = 0
    taken = branches = 0
    branch_unknown: list[str] = []
    for path, lines in measured_added.items():
        fc = after.files.get(path)
        if fc is None:
            continue
        executable += len(lines & fc.executable)
        covered += len(lines & fc.covered)
        if fc.branches is None:
            if lines & fc.executable:
                branch_unknown.append(path)
            continue
        for line in lines:
            t, n = fc.branches.get(line, (0, 0))
            taken, branches = taken + t, branches + n
    incomplete = None
    if missing:
        incomplete = (f"incomplete: added source file(s) {', '.join(missing[:5])} missing from the coverage report "
                      "(configure coverage to report every source file, e.g. coverage.py --source=<package> or c8 --all)")
    elif no_lines:
        incomplete = f"incomplete: added lines fall in {', '.join(no_lines[:5])}, which has no line population (a Go line directive)"
    if incomplete:
        for name in ("changed_line_coverage", "changed_lines_executable", "changed_lines_covered"):
            out[name] = ctx.measure(name, None, incomplete)
    else:
        out["changed_lines_executable"] = ctx.measure("changed_lines_executable", executable)
        out["changed_lines_covered"] = ctx.measure("changed_lines_covered", covered)
        out["changed_line_coverage"] = (ctx.measure("changed_line_coverage", _ratio(covered, executable)) if executable
                                        else ctx.measure("changed_line_coverage", None,
                                                         "the submission adds no executable source line"))
    if incomplete:
        out["changed_branch_coverage"] = ctx.measure("changed_branch_coverage", None, incomplete)
    elif branch_unknown:
        out["changed_branch_coverage"] = ctx.measure(
            "changed_branch_coverage", None, f"the report has no branch data for {', '.join(sorted(branch_unknown)[:5])}"
            + (" (Go coverprofiles have none)" if ctx.format == "go-coverprofile" else " (enable branch coverage)"))
    elif branches == 0:
        out["changed_branch_coverage"] = ctx.measure("changed_branch_coverage", None,
                                                     "no branch starts on an added source line")
    else:
        out["changed_branch_coverage"] = ctx.measure("changed_branch_coverage", _ratio(taken, branches))
    out["redundant_added_tests"] = _redundancy(added, before, after, ctx, incomplete)
    out.update(suite_rates(after, ctx))
    return out


def suite_rates(report: CoverageReport, ctx: CoverageContext) -> dict[str, Measure]:
    """Whole-suite line, branch and function rates of one report (diagnostics)."""
    files = [f for p, f in report.files.items() if in_scope(p, ctx.source_scope) and p not in report.unavailable_lines]
    out: dict[str, Measure] = {}
    lines = sum(len(f.executable) for f in files)
    hit = sum(len(f.covered & f.executable) for f in files)
    out["suite_line_rate"] = (ctx.measure("suite_line_rate", _ratio(hit, lines)) if lines
                              else ctx.measure("suite_line_rate", None, "the report has no executable line"))
    if any(f.branches is None for f in files) or not files:
        out["suite_branch_rate"] = ctx.measure("suite_branch_rate", None, "the report has no branch data")
    else:
        n = sum(t for f in files for _, t in (f.branches or {}).values())
        t = sum(k for f in files for k, _ in (f.branches or {}).values())
        out["suite_branch_rate"] = (ctx.measure("suite_branch_rate", _ratio(t, n)) if n
                                    else ctx.measure("suite_branch_rate", None, "the report has no branch"))
    unknown_fn = [f.functions_reason for f in files if f.functions is None]
    if unknown_fn or not files:
        out["suite_function_rate"] = ctx.measure("suite_function_rate", None,
                                                 unknown_fn[0] if unknown_fn else "the report has no file")
    else:
        total = sum(f.functions[1] for f in files if f.functions)
        ran = sum(f.functions[0] for f in files if f.functions)
        out["suite_function_rate"] = (ctx.measure("suite_function_rate", _ratio(ran, total)) if total
                                      else ctx.measure("suite_function_rate", None, "the report has no function"))
    return out


def redundant_tests(added_tests: Iterable[str], footprint: Callable[[str], frozenset[tuple[str, int]]],
                    all_tests: Iterable[str]) -> list[str]:
    """The redundant added tests: smallest footprint first, by name on ties; each flagged
    test leaves the pool."""
    pool = {t: footprint(t) for t in all_tests}
    flagged: list[str] = []
    for test in sorted(added_tests, key=lambda t: (len(pool[t]), t)):
        others: set[tuple[str, int]] = set()
        for other, lines in pool.items():
            if other != test:
                others |= lines
        if pool[test] <= others:
            flagged.append(test)
            del pool[test]
    return flagged


def _redundancy(added: dict[str, frozenset[int]], before: CoverageReport | None, after: CoverageReport,
                ctx: CoverageContext, incomplete: str | None) -> Measure:
    name = "redundant_added_tests"
    if after.per_test is None:
        return ctx.measure(name, None, f"submission: {after.per_test_reason}; redundant added tests need per-test coverage")
    if before is None or before.per_test is None:
        reason = before.per_test_reason if before is not None else "no coverage report of the starting source"
        return ctx.measure(name, None, f"starting source: {reason}; both snapshots need per-test data")
    if incomplete:
        return ctx.measure(name, None, incomplete)
    new_tests = sorted(set(after.per_test) - set(before.per_test))
    after_per_test = after.per_test  # narrowed to not None above; a closure would lose that

    def footprint(test: str) -> frozenset[tuple[str, int]]:
        return frozenset((p, n) for p, lines in after_per_test[test].items() for n in lines & added.get(p, frozenset()))

    return ctx.measure(name, len(redundant_tests(new_tests, footprint, after.per_test)))
