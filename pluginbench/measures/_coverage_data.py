"""Coverage reports as one shape: LCOV, coverage.py JSON and Go coverprofiles (pure parsers).

Each parser turns a report (and its optional per-test sidecar) into a
:class:`CoverageReport`: per repository-relative file, the executable lines, the executed
lines, the branch outcomes per line (``None`` when the format or the run has no branch
data) and function counts. A report that breaks its own format's rules raises
:class:`~pluginbench.errors.MeasurementError` naming the file and the rule; the caller
turns that into an unknown measure with the reason, never a zero.

Per-test data is ``test name -> path -> executed lines``. coverage.py reports carry it as
``per_test_numbits`` (coverage.py numbits, base64: bit ``n`` is line ``n``); LCOV reports
as the ``<report>.per-test.json`` sidecar in the same form. The empty context (code run
outside a test, such as imports at collection) is ignored. Go has none.
"""

import base64
import binascii
import json
import posixpath
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from .._parsing import git_lines
from ..errors import MeasurementError

FORMATS = ("lcov", "coverage-py-json", "go-coverprofile")


class FileCoverage(msgspec.Struct, frozen=True, kw_only=True):
    """One source file's coverage population."""

    executable: frozenset[int]
    covered: frozenset[int]
    #: line -> (branches taken, branches); ``None``: no branch data for this file
    branches: dict[int, tuple[int, int]] | None = None
    #: (functions run, functions); ``None``: unknown (``functions_reason`` says why)
    functions: tuple[int, int] | None = None
    functions_reason: str | None = None


class CoverageReport(msgspec.Struct, frozen=True, kw_only=True):
    format: str
    #: the producer version the report itself states (coverage.py's ``meta.version``); LCOV and
    #: Go reports state none, their version is the profile's declared ``tool_version``
    producer_version: str | None = None
    files: dict[str, FileCoverage]
    #: test -> path -> executed lines; ``None`` with ``per_test_reason`` when there is none
    per_test: dict[str, dict[str, frozenset[int]]] | None = None
    per_test_reason: str | None = None
    #: files that have no line population (Go line directives); their lines stay unknown
    unavailable_lines: frozenset[str] = frozenset()


def decode_numbits(text: str, where: str) -> frozenset[int]:
    """coverage.py numbits (base64): bit ``n`` (byte ``n // 8``, bit ``n % 8``) is line ``n``."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise MeasurementError(f"{where}: invalid base64 numbits {text[:40]!r}") from None
    return frozenset(i * 8 + bit for i, byte in enumerate(raw) for bit in range(8) if byte & (1 << bit))


def _pairs_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise MeasurementError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _load_json(text: str, where: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_pairs_no_duplicates)
    except MeasurementError as exc:
        raise MeasurementError(f"{where}: {exc}") from None
    except ValueError as exc:
        raise MeasurementError(f"{where}: not JSON ({exc})") from None


def _per_test_from_files(numbits: Mapping[str, Any], where: str) -> dict[str, dict[str, frozenset[int]]]:
    """``path -> test -> numbits`` into ``test -> path -> lines`` (the empty context dropped)."""
    if not isinstance(numbits, dict):
        raise MeasurementError(f"{where}: per_test_numbits must map each file to its tests")
    out: dict[str, dict[str, frozenset[int]]] = {}
    for path, tests in numbits.items():
        if not isinstance(tests, dict):
            raise MeasurementError(f"{where}: per_test_numbits[{path!r}] must map test names to numbits")
        for test, bits in tests.items():
            if not isinstance(bits, str):
                raise MeasurementError(f"{where}: per_test_numbits[{path!r}][{test!r}] must be a base64 string")
            if test == "":
                continue
            out.setdefault(test, {})[path] = decode_numbits(bits, f"{where}: per_test_numbits[{path!r}][{test!r}]")
    return out


# --- coverage.py JSON -------------------------------------------------------------------


def parse_coverage_py_json(text: str, where: str = "coverage.py JSON report") -> CoverageReport:
    """A ``coverage json`` report (format 2 or 3), with optional ``per_test_numbits`` and
    ``statement_lines`` (from ``Coverage.analysis2``, see docs/metrics.md)."""
    doc = _load_json(text, where)
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict) or not isinstance(doc.get("meta"), dict):
        raise MeasurementError(f"{where}: not a coverage.py JSON report (needs 'meta' and 'files')")
    meta = doc["meta"]
    version = meta.get("version")
    branch_run = bool(meta.get("branch_coverage"))
    files: dict[str, FileCoverage] = {}
    for path, entry in doc["files"].items():
        if not isinstance(entry, dict):
            raise MeasurementError(f"{where}: files[{path!r}] is not an object")
        try:
            executed = frozenset(int(n) for n in entry.get("executed_lines", []))
            missing = frozenset(int(n) for n in entry.get("missing_lines", []))
        except (TypeError, ValueError):
            raise MeasurementError(f"{where}: files[{path!r}] has a non-integer line number") from None
        if executed & missing:
            raise MeasurementError(f"{where}: files[{path!r}] lists line(s) {sorted(executed & missing)[:5]} "
                                   "as both executed and missing")
        statements = entry.get("statement_lines")
        if statements is not None:
            population = frozenset(int(n) for n in statements)
        else:
            population = executed | missing
        summary = entry.get("summary") or {}
        if "covered_lines" in summary and summary["covered_lines"] != len(executed):
            raise MeasurementError(f"{where}: files[{path!r}] summary.covered_lines {summary['covered_lines']} "
                                   f"!= {len(executed)} executed lines")
        branches: dict[int, tuple[int, int]] | None = None
        if branch_run:
            branches = {}
            for key, taken in (("executed_branches", 1), ("missing_branches", 0)):
                for arc in entry.get(key, []):
                    source = int(arc[0])
                    t, n = branches.get(source, (0, 0))
                    branches[source] = (t + taken, n + 1)
        functions = None
        reason: str | None = "coverage.py JSON has no per-function run counts"
        fn = entry.get("functions")
        if isinstance(fn, dict):
            named = {k: v for k, v in fn.items() if k}
            ran = sum(1 for v in named.values() if (v.get("summary") or {}).get("covered_lines", 0) > 0)
            functions, reason = (ran, len(named)), None
        files[path] = FileCoverage(executable=population, covered=executed & population if statements is not None
                                   else executed, branches=branches, functions=functions, functions_reason=reason)
    per_test = None
    per_test_reason: str | None = "the report has no per_test_numbits (per-test coverage was not recorded)"
    if "per_test_numbits" in doc:
        per_test = _per_test_from_files(doc["per_test_numbits"], where)
        per_test_reason = None
        if not per_test:
            per_test, per_test_reason = None, "per_test_numbits names no test context"
    return CoverageReport(format="coverage-py-json", producer_version=str(version) if version is not None else None,
                          files=files, per_test=per_test, per_test_reason=per_test_reason)


# --- LCOV --------------------------------------------------------------------------------


def _rel(path: str, root: str | None) -> str:
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path[2:] if path.startswith("./") else path


def parse_lcov(text: str, per_test_text: str | None = None, *, root: str | None = None,
               where: str = "LCOV report") -> CoverageReport:
    """An LCOV tracefile (``SF``/``DA``/``BRDA``/``FN``/``FNDA`` records); ``root`` makes
    absolute ``SF`` paths repository-relative. ``per_test_text`` is the optional
    ``<report>.per-test.json`` sidecar."""
    files: dict[str, FileCoverage] = {}
    current: str | None = None
    lines: dict[int, int] = {}
    brda: dict[int, tuple[int, int]] = {}
    has_branch = False
    fn_lines: dict[str, int] = {}
    fn_hits: dict[str, int] = {}
    fn_clash = False
    for number, raw in enumerate(git_lines(text), 1):
        line = raw.strip()
        if not line or line.startswith("TN:"):
            continue
        tag, _, value = line.partition(":")
        if tag == "SF":
            if current is not None:
                raise MeasurementError(f"{where}:{number}: SF before end_of_record of {current!r}")
            current = _rel(value, root)
            lines, brda, has_branch, fn_lines, fn_hits, fn_clash = {}, {}, False, {}, {}, False
            continue
        if line == "end_of_record":
            if current is None:
                raise MeasurementError(f"{where}:{number}: end_of_record without SF")
            if current in files:
                raise MeasurementError(f"{where}:{number}: {current!r} appears twice")
            reason: str | None
            functions, reason = None, "the report records no functions for this file"
            if fn_clash:
                reason = "LCOV function names are shared, so their hit counts cannot be matched to source lines"
            elif fn_lines:
                functions, reason = (sum(1 for n in fn_lines if fn_hits.get(n, 0) > 0), len(fn_lines)), None
            files[current] = FileCoverage(
                executable=frozenset(lines), covered=frozenset(n for n, h in lines.items() if h > 0),
                branches=dict(brda) if has_branch else None, functions=functions, functions_reason=reason)
            current = None
            continue
        if current is None:
            raise MeasurementError(f"{where}:{number}: {tag} record outside an SF ... end_of_record block")
        try:
            if tag == "DA":
                parts = value.split(",")
                n, hits = int(parts[0]), int(parts[1])
                if n < 1 or hits < 0:
                    raise ValueError
                lines[n] = max(lines.get(n, 0), hits)
            elif tag == "BRDA":
                fields = value.split(",", 3)
                if len(fields) != 4:
                    raise ValueError
                n, taken = int(fields[0]), fields[3]
                t, total = brda.get(n, (0, 0))
                brda[n] = (t + (1 if taken not in ("-", "0") else 0), total + 1)
                has_branch = True
            elif tag == "FN":
                start, name = value.split(",", 1)
                if name in fn_lines and fn_lines[name] != int(start):
                    fn_clash = True
                fn_lines[name] = int(start)
            elif tag == "FNDA":
                hits_s, name = value.split(",", 1)
                fn_hits[name] = fn_hits.get(name, 0) + int(hits_s)
        except ValueError:
            raise MeasurementError(f"{where}:{number}: malformed {tag} record {value!r}") from None
    if current is not None:
        raise MeasurementError(f"{where}: {current!r} has no end_of_record")
    per_test, reason = None, "no per-test sidecar (<report_path>.per-test.json) was written"
    if per_test_text is not None:
        side_where = f"{where} per-test sidecar"
        doc = _load_json(per_test_text, side_where)
        if not isinstance(doc, dict) or "per_test_numbits" not in doc:
            raise MeasurementError(f"{side_where}: needs a 'per_test_numbits' object")
        per_test = _per_test_from_files(doc["per_test_numbits"], side_where)
        for test, by_path in per_test.items():
            for path, hit in by_path.items():
                if path not in files:
                    raise MeasurementError(f"{side_where}: {path!r} ({test!r}) is not measured by the report")
                if 0 in hit:
                    raise MeasurementError(f"{side_where}: {path!r} ({test!r}) names line 0, which LCOV cannot record")
                stray = hit - files[path].covered
                if stray:
                    raise MeasurementError(f"{side_where}: {path!r} ({test!r}) names line(s) {sorted(stray)[:5]} "
                                           "the report does not record as executed")
        reason = None
        if not per_test:
            per_test, reason = None, "the per-test sidecar names no test"
    return CoverageReport(format="lcov", files=files, per_test=per_test, per_test_reason=reason)


# --- Go coverprofile ---------------------------------------------------------------------

#: a block: `<import path>/<file>:<line>.<col>,<line>.<col> <statements> <count>`; after a line directive
#: the file is the target's base name (`calc/grammar.y`), not always a `.go` file
_GO_BLOCK = re.compile(r"^(.+):(\d+)\.(\d+),(\d+)\.(\d+) (\d+) (\d+)$")


def _go_code_lines(source: str) -> set[int]:
    """Lines that are neither blank nor comment-only (a line holding only ``}`` counts as code)."""
    out: set[int] = set()
    in_block = False
    for number, raw in enumerate(git_lines(source), 1):
        line = raw.strip()
        code = False
        while line:
            if in_block:
                end = line.find("*/")
                if end < 0:
                    line = ""
                    break
                in_block, line = False, line[end + 2:].strip()
                continue
            if line.startswith("//"):
                break
            if line.startswith("/*"):
                in_block, line = True, line[2:]
                continue
            code = True
            break
        if code:
            out.add(number)
    return out


def go_module_path(go_mod: str) -> str | None:
    for line in git_lines(go_mod):
        m = re.match(r"^\s*module\s+(\S+)", line)
        if m:
            return m.group(1).strip('"')
    return None


def parse_go_coverprofile(text: str, sources: Mapping[str, str], module: str,
                          where: str = "Go coverprofile") -> CoverageReport:
    """A ``go test -coverprofile`` report. ``sources`` maps repository-relative ``.go`` paths to
    their text (to drop blank and comment-only lines) and ``module`` is go.mod's module path,
    which the profile's import-path names start with. Branch and per-test data stay unknown."""
    body = git_lines(text)
    if not body or not body[0].startswith("mode: ") or body[0][6:] not in ("set", "count", "atomic"):
        raise MeasurementError(f"{where}: the first line must be 'mode: set|count|atomic'")
    spans: dict[str, list[tuple[int, int, int, int]]] = {}
    for number, raw in enumerate(body[1:], 2):
        if not raw.strip():
            continue
        m = _GO_BLOCK.match(raw.strip())
        if not m:
            raise MeasurementError(f"{where}:{number}: malformed block {raw[:80]!r}")
        name = m.group(1)
        if not name.startswith(module + "/"):
            raise MeasurementError(f"{where}:{number}: {name!r} is outside module {module!r}")
        path = name[len(module) + 1:]
        start, end, stmts, count = int(m.group(2)), int(m.group(4)), int(m.group(6)), int(m.group(7))
        if end < start:
            raise MeasurementError(f"{where}:{number}: block ends before it starts")
        spans.setdefault(path, []).append((start, end, stmts, count))
    directives = {p: targets for p, src in sources.items() if (targets := go_line_directives(src))}
    unavailable: set[str] = set(directives) | _frozen_files_named(directives, sources)
    attributed: dict[str, list[tuple[int, int, int, int]]] = {}
    for name, blocks in spans.items():
        if name in sources:
            attributed.setdefault(name, []).extend(blocks)
            continue
        holder = _directive_holder(name, directives, where)  # a directive's target, e.g. calc/grammar.y
        unavailable.add(holder)
        attributed.setdefault(holder, []).extend(blocks)
    files: dict[str, FileCoverage] = {}
    for path, blocks in attributed.items():
        if path in unavailable:
            # Go gives the blocks after a directive the target's line numbers: this file has
            # no line population (its added lines make changed-line coverage incomplete)
            files[path] = FileCoverage(executable=frozenset(), covered=frozenset(), branches=None, functions=None,
                                       functions_reason="Go coverprofiles have no function records")
            continue
        code = _go_code_lines(sources[path])
        executable: set[int] = set()
        covered: set[int] = set()
        for start, end, stmts, count in blocks:
            if stmts == 0:
                continue
            span = {n for n in range(start, end + 1) if n in code}
            executable |= span
            if count > 0:
                covered |= span
        files[path] = FileCoverage(executable=frozenset(executable), covered=frozenset(covered), branches=None,
                                   functions=None, functions_reason="Go coverprofiles have no function records")
    return CoverageReport(format="go-coverprofile", files=files, per_test=None,
                          per_test_reason="Go coverprofiles have no per-test data", unavailable_lines=frozenset(unavailable))


#: ``//line target:line[:col]`` at the start of a line; ``/*line target:line[:col]*/`` anywhere
_LINE_COMMENT = re.compile(r"^//line (.+?):(\d+)(?::(\d+))?\s*$")
_BLOCK_LINE = re.compile(r"/\*line (.+?):(\d+)(?::(\d+))?\*/")


def go_line_directives(source: str) -> list[str]:
    """The targets of the line directives Go honors in ``source``: ``//line`` only at the start
    of a line, ``/*line`` anywhere outside strings and other comments, the comment ending in
    ``:line`` or ``:line:col``. (Strings and comments are recognized per line, as Go source is
    written; a ``/*line`` inside a multi-line raw string is an approximation.)"""
    out: list[str] = []
    for raw in git_lines(source):
        m = _LINE_COMMENT.match(raw)
        if m:
            out.append(m.group(1))
            continue
        if "/*line " in raw:
            out.extend(b.group(1) for b in _BLOCK_LINE.finditer(_outside_strings_and_line_comments(raw)))
    return out


def _outside_strings_and_line_comments(line: str) -> str:
    """``line`` with string and rune literals blanked and a trailing ``//`` comment cut."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote is not None:
            if c == "\\" and quote != "`":
                out.append("  ")
                i += 2
                continue
            if c == quote:
                quote = None
            out.append(" ")
        elif c in "\"'`":
            quote = c
            out.append(" ")
        elif line.startswith("//", i):
            break
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _frozen_files_named(directives: Mapping[str, list[str]], sources: Mapping[str, str]) -> set[str]:
    """Frozen ``.go`` files a directive names (cgo's do): they get no line population either."""
    named: set[str] = set()
    for path, targets in directives.items():
        folder = posixpath.dirname(path)
        for target in targets:
            for candidate in (posixpath.normpath(posixpath.join(folder, target)),
                              posixpath.join(folder, posixpath.basename(target))):
                if candidate in sources and candidate != path:
                    named.add(candidate)
    return named


def _directive_holder(name: str, directives: Mapping[str, list[str]], where: str) -> str:
    """The one non-test ``.go`` file of ``name``'s package whose directive names ``name``'s base
    (Go names those blocks ``<package path>/<base name of the target>``)."""
    folder, base = posixpath.split(name)
    holders = sorted(p for p, targets in directives.items()
                     if posixpath.dirname(p) == folder and not p.endswith("_test.go")
                     and any(posixpath.basename(t) == base for t in targets))
    if not holders:
        raise MeasurementError(f"{where}: {name!r} is not a .go file of the measured source and no line directive "
                               "in its package names it")
    if len(holders) > 1:
        raise MeasurementError(f"{where}: {name!r} is named by the line directives of more than one file "
                               f"({', '.join(holders)}); its blocks cannot be attributed")
    return holders[0]
