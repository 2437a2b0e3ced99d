"""The coverage collector's edge: run a task's coverage command in a fresh sandbox of the
frozen task (the frozen task image on docker, a copy of the frozen starting source on the
local backend, run with the host's tools), on the starting source or on a submission, and
read its report. The sandbox comes from the caller (``open_sandbox``: the measure port's
``open_task_sandbox``, or ``pluginbench measure``'s own), so this module needs no backend.

The command runs without model credentials (sandboxes get only PATH, LANG and the task
paths), from the repository root, with no hidden tests and no reference solution.
PluginBench installs no coverage framework: the frozen image must hold it. The raw report
and its sidecars are kept as ``report.raw`` (and ``report.raw.per-test.json``) in
``out_dir``, with the command's output, before they are parsed.

Readiness (:func:`coverage_readiness`) runs the command twice on the starting source, as
preparation and ``measure`` do: both runs must write a report that parses, states the
declared coverage.py version (coverage.py JSON), and measures the same executable lines.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from .._parsing import file_tail
from ..errors import EnvironmentFailure, MeasurementError, ResourceLimitHit
from ..events import ReadinessRow
from ._coverage_data import (
    CoverageReport,
    go_module_path,
    parse_coverage_py_json,
    parse_go_coverprofile,
    parse_lcov,
)
from ._coverage_profile import CoverageProfile
from ._source_only import without_sections
from ._tree import read_inside

OpenSandbox = Callable[[], AbstractAsyncContextManager[Any]]

#: the most bytes of Go source (``.go`` files and ``go.mod``) read back from a sandbox's
#: workspace: a submission could otherwise make the host read gigabytes
GO_SOURCE_BYTES = 64 * 1024 * 1024

SIDE_SUFFIXES = (".per-test.json", ".go-list.json", ".go-blocks.txt", ".instrumented.txt")
#: the sidecars each report format reads (only these are copied out of the sandbox)
READ_SIDECARS = {"lcov": (".per-test.json",)}

#: the most bytes of one report or sidecar copied out of a sandbox and parsed on the host:
#: the submission's code writes it, and parsing JSON takes about 25 times its size
REPORT_BYTES = 32 * 1024 * 1024


def _refuse_preexisting(starting: Path, profile: CoverageProfile) -> None:
    """The frozen input must not already hold the report or a sidecar (stale attribution)."""
    for suffix in ("", *SIDE_SUFFIXES):
        if (starting / (profile.report_path + suffix)).exists():
            raise MeasurementError(f"the frozen starting source already holds {profile.report_path + suffix}; "
                                   "a stale report would be read as this run's: remove it from the task or "
                                   "write the report elsewhere")


async def run_coverage(open_sandbox: OpenSandbox, starting: Path, profile: CoverageProfile, patch: str | None,
                       out_dir: Path) -> CoverageReport:
    """Run the coverage command once (on the submission when ``patch`` is given) and parse
    its report. Raises :class:`MeasurementError` with the reason when there is none."""
    _refuse_preexisting(starting, profile)
    out_dir.mkdir(parents=True, exist_ok=True)
    if patch:
        patch = coverage_patch(patch, profile.command, starting)
    try:
        async with open_sandbox() as sb:
            if patch:
                with tempfile.TemporaryDirectory(prefix="pluginbench-coverage-") as tmp:
                    staged = Path(tmp) / "model.patch"
                    staged.write_text(patch, encoding="utf-8")
                    await sb.put(staged, f"{sb.paths.tmp}/pluginbench-model.patch")
                applied = await sb.exec(["git", "apply", "--binary", "--whitespace=nowarn",
                                         f"{sb.paths.tmp}/pluginbench-model.patch"], cwd=sb.paths.app, timeout=120)
                if applied.exit_code != 0:
                    raise MeasurementError("the submission's patch does not apply to the starting source: "
                                           + (applied.stderr or applied.stdout).decode(errors="replace")[-300:])
            result = await sb.exec(list(profile.command), cwd=sb.paths.app, timeout=profile.timeout_seconds,
                                   stdout_path=out_dir / "command-stdout.txt",
                                   stderr_path=out_dir / "command-stderr.txt")
            await sb.stop()
            (out_dir / "command-exit.txt").write_text(
                "timed out\n" if result.timed_out else f"{result.exit_code}\n")
            if result.timed_out:
                raise MeasurementError(f"the coverage command timed out after {profile.timeout_seconds} s")
            base = f"{sb.paths.app}/{profile.report_path}"
            try:
                await _get_report(sb, base, out_dir / "report.raw", profile.report_path)
            except (EnvironmentFailure, OSError, FileNotFoundError):
                tail = _tail(out_dir / "command-stderr.txt")
                if not_found(result.exit_code, tail):
                    raise MeasurementError(not_found_message(profile.command, result.exit_code, tail)) from None
                raise MeasurementError(f"the coverage command (exit {result.exit_code}) wrote no {profile.report_path}"
                                       + (f": {tail}" if tail else "")) from None
            for suffix in READ_SIDECARS.get(profile.format, ()):
                # A sidecar is optional: missing, it is left out; too big or not a file, the
                # measurement fails (MeasurementError).
                with contextlib.suppress(EnvironmentFailure, OSError):
                    await _get_report(sb, base + suffix, out_dir / ("report.raw" + suffix),
                                      profile.report_path + suffix)
            sources: dict[str, str] = {}
            if profile.format == "go-coverprofile":
                tree = out_dir / "go-tree"
                await sb.export_workspace(tree)
                try:
                    sources, go_mod = go_sources(tree)
                finally:
                    shutil.rmtree(tree, ignore_errors=True)
    except EnvironmentFailure as exc:
        raise MeasurementError(f"the coverage sandbox failed: {exc}") from None
    (out_dir / "test-command-status.txt").write_text(
        f"exit {result.exit_code}: test outcomes stay separate from coverage availability\n")
    return read_report(out_dir, profile, sources, go_mod if profile.format == "go-coverprofile" else "")


async def _get_report(sb: Any, sandbox_path: str, dest: Path, name: str) -> None:
    """Copy one report file out: at most :data:`REPORT_BYTES`, and only a regular file (a
    folder of symlinks the command left there is removed again, never kept as evidence)."""
    try:
        await sb.get(sandbox_path, dest, limit=REPORT_BYTES)
    except ResourceLimitHit:
        raise MeasurementError(f"{name} is over {REPORT_BYTES // (1024 * 1024)} MiB; a coverage report that "
                               "large is not copied out of the sandbox or read") from None
    st = os.lstat(dest)
    if not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(dest)  # never follows a symlink inside
        else:
            dest.unlink()
        raise MeasurementError(f"{name} is not a regular file; the coverage command must write its report there")


#: coverage.py's own configuration file (a submission's would choose what is measured)
_COVERAGE_CONFIG = frozenset({".coveragerc"})
#: a module a command runs with ``python -m`` (``-m coverage``, ``-m pytest``)
_RUN_MODULE = re.compile(r"(?:^|\s)-m\s*([A-Za-z_][A-Za-z0-9_]*)")


def _shadows(modules: set[str]) -> Callable[[str], bool]:
    """Whether a path is a module or package at the repository root named in ``modules``
    (``python -m`` puts the root first on the import path: it would run instead of the
    installed tool)."""
    def shadows(path: str) -> bool:
        top = path.split("/", 1)[0]
        return top in modules or top.removesuffix(".py") in modules and "/" not in path
    return shadows


def coverage_patch(patch: str, command: Sequence[str], starting: Path) -> str:
    """``patch`` without its file sections that change the coverage command's own files (an
    argument of the command naming a file of the starting source, e.g. ``cover.sh``), a
    root ``.coveragerc``, or a root module or package the starting source does not have,
    named like one the command runs with ``-m`` (a ``coverage/`` package would run instead
    of coverage.py and write any report): the command runs as the task wrote it, so a
    submission cannot rewrite what it reports. The submission's tests (and their
    configuration) stay: they are what the coverage measures."""
    own = {a.removeprefix("./") for a in command[1:] if not a.startswith("-") and ".." not in a.split("/")
           and not a.startswith("/") and (starting / a.removeprefix("./")).is_file()} | _COVERAGE_CONFIG
    # A module the starting source already has at its root is the project's own (``-m
    # mypkg.tests``): the submission's changes to it are what the coverage measures.
    named = {m.group(1) for m in _RUN_MODULE.finditer(" ".join(command))}
    shadows = _shadows({m for m in named if not os.path.lexists(starting / m)
                        and not os.path.lexists(starting / f"{m}.py")})
    return without_sections(patch, lambda path: path in own or shadows(path))


def go_sources(tree: Path, limit: int = GO_SOURCE_BYTES) -> tuple[dict[str, str], str]:
    """The ``.go`` files (repository-relative path → text) and the ``go.mod`` text of an
    exported workspace, read on the host without following any symlink: a symlinked file or
    folder, a FIFO or a device is left out (never a host file, never a read that blocks).
    More than ``limit`` bytes in all is a :class:`MeasurementError`."""
    sources: dict[str, str] = {}
    total = 0

    def read(rel: str) -> str | None:
        nonlocal total
        try:
            st = os.lstat(tree / rel)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        total += st.st_size
        if total > limit:
            raise MeasurementError(f"the workspace's Go sources exceed {limit // (1024 * 1024)} MiB; "
                                   "their coverage is not read")
        data = read_inside(tree, rel)
        return None if data is None else data.decode("utf-8", errors="replace")

    for dirpath, dirnames, filenames in os.walk(tree):  # never into a symlinked folder
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".go"):
                rel = Path(dirpath, name).relative_to(tree).as_posix()
                text = read(rel)
                if text is not None:
                    sources[rel] = text
    return sources, read("go.mod") or ""


#: the shell's exit status for a command it cannot find
NOT_FOUND = 127
#: what a missing program or Python module prints: bubblewrap's failed exec (exit 1), a
#: shell's "not found" (exit 127), ``python3 -m <module>`` without the module (exit 1)
_NOT_FOUND_TEXT = re.compile(r"execvp .*No such file or directory|: not found$|command not found|No module named")


def not_found(exit_code: int | None, tail: str) -> bool:
    """Whether the coverage command failed because the sandbox lacks its program or module."""
    return exit_code == NOT_FOUND or (exit_code not in (None, 0) and bool(_NOT_FOUND_TEXT.search(tail)))


def not_found_message(command: Sequence[str], exit_code: int | None, tail: str) -> str:
    """The sandbox cannot find the coverage tool: names the command, what the sandbox sees, and the fix."""
    return (f"the coverage command {' '.join(command)!r} (exit {exit_code}) found no coverage tool inside the "
            "sandbox" + (f" ({tail})" if tail else "") + ". Under the local backend's bubblewrap isolation the "
            "sandbox sees only the system folders /usr, /bin, /sbin and /lib*, not a virtualenv, a home folder, "
            "/opt or the repository's .venv; fix: install the tool under /usr (e.g. `apt-get install "
            "python3-coverage`, or `pip install --break-system-packages coverage==<tool_version>` as root, which "
            "puts it in /usr/local) and run it as `python3 -m coverage` or by a path under /usr; on docker, "
            "install it in the task image")


def _tail(path: Path) -> str:
    """The last non-empty line of the command's output file, from its end only (the file
    may be as large as the output bound)."""
    lines = [ln.strip() for ln in file_tail(path).splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def read_report(out_dir: Path, profile: CoverageProfile, sources: dict[str, str], go_mod: str) -> CoverageReport:
    """Parse the retained ``report.raw`` (and sidecars) of one collection."""
    raw = out_dir / "report.raw"
    text = raw.read_text(encoding="utf-8", errors="replace")
    where = f"{profile.report_path} ({profile.format})"
    if profile.format == "coverage-py-json":
        report = parse_coverage_py_json(text, where)
        if report.producer_version != profile.tool_version:
            raise MeasurementError(f"{where}: the report was written by coverage.py {report.producer_version}, "
                                   f"the profile declares tool_version {profile.tool_version!r}")
        return report
    if profile.format == "lcov":
        side = out_dir / "report.raw.per-test.json"
        return parse_lcov(text, side.read_text() if side.is_file() else None, root=None, where=where)
    module = go_module_path(go_mod)
    if module is None:
        raise MeasurementError(f"{where}: the repository has no go.mod module line")
    return parse_go_coverprofile(text, sources, module, where)


async def coverage_readiness(open_sandbox: OpenSandbox | None, starting: Path, task_id: str,
                             profile: CoverageProfile | None, why: str,
                             out_dir: Path) -> tuple[ReadinessRow, CoverageReport | None]:
    """Run the command twice on the starting source: ``ready`` with the starting report when
    both runs agree, ``broken`` with the reason otherwise, ``not_configured`` without a profile."""
    if profile is None:
        return ReadinessRow(task=task_id, measure="coverage", state="not_configured", reason=why), None
    if open_sandbox is None:
        return ReadinessRow(task=task_id, measure="coverage", state="broken",
                            reason="no sandbox of the frozen task can be opened"), None
    reports: list[CoverageReport] = []
    for repeat in (1, 2):
        try:
            reports.append(await run_coverage(open_sandbox, starting, profile, None, out_dir / f"starting-{repeat}"))
        except MeasurementError as exc:
            return ReadinessRow(task=task_id, measure="coverage", state="broken",
                                reason=f"starting source, run {repeat}: {exc}"), None
    first, second = ({p: f.executable for p, f in r.files.items()} for r in reports)
    if first != second:
        changed = sorted(p for p in set(first) | set(second) if first.get(p) != second.get(p))
        return ReadinessRow(task=task_id, measure="coverage", state="broken",
                            reason=f"two runs on the starting source measured different lines ({', '.join(changed[:3])})"), None
    return ReadinessRow(task=task_id, measure="coverage", state="ready", reason=None,
                        detail=f"{profile.format} {profile.tool_version} via {why}"), reports[0]
