"""Unused-code candidates a submission introduces: a pure comparison of two scans.

A candidate is one finding of the language's unused-code analyzer, identified by its file
and message without the line number (``pkg/a.py``, ``unused function 'helper'``), so code
that only moved within a file is not new. Findings in test files are left out (tests still
count as users of the code). ``dead_code_candidates_added`` is, over every identity, how
many more times it occurs after the patch than before (never negative per identity).
Warnings can include public APIs a user of the package needs.
"""

import contextlib
import json
import posixpath
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from ._lines import is_test_path

_VULTURE_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<message>unused .+?|unreachable code .*?) "
                           r"\((?P<confidence>\d+)% confidence(?:, \d+ lines?)?\)\s*$")
_VULTURE_ERROR = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<message>invalid syntax.*|.*(?:encoding|decode).*)$")


class Candidate(NamedTuple):
    path: str
    message: str  # e.g. "unused function 'helper'"
    line: int


class DeadCodeScan(NamedTuple):
    candidates: tuple[Candidate, ...]
    unreadable: tuple[str, ...]  # files the analyzer could not parse


def parse_vulture(stdout: str, stderr: str = "") -> DeadCodeScan:
    """Vulture's report lines (``path:line: unused function 'x' (60% confidence)``)."""
    found = []
    for line in stdout.splitlines():
        m = _VULTURE_LINE.match(line.strip())
        if m:
            found.append(Candidate(_norm(m["path"]), m["message"], int(m["line"])))
    bad = sorted({_norm(m["path"]) for line in (stdout + "\n" + stderr).splitlines()
                  if (m := _VULTURE_ERROR.match(line.strip())) and not _VULTURE_LINE.match(line.strip())})
    return DeadCodeScan(tuple(found), tuple(bad))


def _norm(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def introduced(before: Iterable[Candidate], after: Iterable[Candidate]) -> list[Candidate]:
    """Candidates after the patch beyond those before it (by file and message), test files
    left out."""
    old = Counter((c.path, c.message) for c in before if not is_test_path(c.path))
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for c in sorted(after, key=lambda c: (c.path, c.line, c.message)):
        if is_test_path(c.path):
            continue
        key = (c.path, c.message)
        seen[key] += 1
        if seen[key] > old[key]:
            out.append(c)
    return out


# ------------------------------------------------------------------ JavaScript / TypeScript

#: knip issue types that are unused code (dependency issues are not)
KNIP_CODE_TYPES = ("files", "exports", "types", "enumMembers", "namespaceMembers", "classMembers", "duplicates")


class KnipScan(NamedTuple):
    candidates: tuple[Candidate, ...]
    unresolved: tuple[tuple[str, str], ...]  # (importing file, import)


def parse_knip(report: dict[str, Any]) -> KnipScan:
    """knip's ``--reporter json`` report: one candidate per unused file, export, type, enum
    or namespace member, class member or duplicate export; unresolved imports apart."""
    found: list[Candidate] = []
    unresolved: list[tuple[str, str]] = []
    for issue in report.get("issues") or []:
        path = _norm(str(issue.get("file", "")))
        for kind in KNIP_CODE_TYPES:
            for item in issue.get(kind) or []:
                items = item if isinstance(item, list) else [item]  # duplicates come as lists
                names = ", ".join(str(i.get("name")) for i in items if isinstance(i, dict))
                line = next((int(i["line"]) for i in items if isinstance(i, dict) and "line" in i), 0)
                found.append(Candidate(path, f"unused {kind} '{names}'", line))
        for item in issue.get("unresolved") or []:
            if isinstance(item, dict):
                unresolved.append((path, str(item.get("name"))))
    return KnipScan(tuple(found), tuple(unresolved))


def duplicate_groups(report: dict[str, Any]) -> set[str]:
    """jscpd's JSON report as groups: the distinct duplicated fragments, whitespace collapsed
    (a fragment copied three times is one group, whatever pairs jscpd lists)."""
    return {" ".join(str(d.get("fragment", "")).split()) for d in report.get("duplicates") or []}


def introduced_groups(before: set[str], after: set[str]) -> list[str]:
    """Duplicate-code groups after the patch that the starting scan did not have."""
    return sorted(after - before)


# ------------------------------------------------------------------ Rust


def parse_cargo_messages(stdout: str) -> tuple[list[Candidate], list[str]]:
    """rustc's ``dead_code``/``unused_*`` warnings (as candidates) and error messages from
    ``cargo check --message-format=json``."""
    found: list[Candidate] = []
    errors: list[str] = []
    for line in stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or msg.get("reason") != "compiler-message":
            continue
        m = msg.get("message") or {}
        if m.get("level") == "error":
            errors.append(str(m.get("message")))
            continue
        code = (m.get("code") or {}).get("code") or ""
        if m.get("level") != "warning" or not (code == "dead_code" or code.startswith("unused_")):
            continue
        spans = [s for s in m.get("spans") or [] if s.get("is_primary")]
        if spans:
            found.append(Candidate(_norm(str(spans[0]["file_name"])), str(m.get("message")),
                                   int(spans[0].get("line_start") or 0)))
    # one warning per (file, message, line), however many targets report it
    return sorted(set(found), key=lambda c: (c.path, c.line, c.message)), errors


# ------------------------------------------------------------------ Go


def parse_staticcheck(stdout: str, root: Path) -> tuple[list[Candidate], list[str]]:
    """staticcheck ``-f json`` lines: U1000 findings as candidates (paths relative to
    ``root``), compile and load errors apart."""
    base = PurePosixPath(str(root))
    found: list[Candidate] = []
    errors: list[str] = []
    for line in stdout.splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if not isinstance(d, dict):
            continue
        loc = d.get("location") or {}
        path = str(loc.get("file") or "")
        with contextlib.suppress(ValueError):  # a path inside the sandbox, never resolved on the host
            path = PurePosixPath(posixpath.normpath(path)).relative_to(base).as_posix()
        if d.get("code") == "U1000":
            found.append(Candidate(path, str(d.get("message")), int(loc.get("line") or 0)))
        else:
            errors.append(f"{path}:{loc.get('line')}: {d.get('message')}")
    return found, errors
