"""The starting source's coverage report, once per task and run.

Every attempt on a task compares its submission's coverage with the same starting source
under the same profile, so a fresh run computes that report once and every later attempt
reuses it. It is kept as evidence in the run directory,
``<shared>/starting-<key>/`` (the raw report, the command's output and ``report.json``,
the parsed report), where ``key`` hashes the task, the frozen task image (or starting
source), the profile and the coverage observer version: a different profile never reads
another's report.

Safe under concurrency and kill -9: a collection writes into its own hidden
``.starting-<key>.<random>.partial`` folder and publishes it with one atomic rename; a
folder without ``report.json`` is never read. Collectors of one worker wait for the one
that is computing it (one lock per key and event loop); two workers racing both compute
and the first rename wins. A killed collection leaves only its partial folder, so a
resumed run computes the report again. Preparation's readiness check, which runs the command
twice on the starting source anyway, publishes its first run the same way
(:func:`publish_starting`), so a fresh run's collectors usually find it there.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
import weakref
from pathlib import Path

import anyio
import anyio.lowlevel
import msgspec

from ._coverage_data import CoverageReport
from ._coverage_profile import CoverageProfile
from ._coverage_run import OpenSandbox, run_coverage

REPORT = "report.json"

_LOCKS: weakref.WeakKeyDictionary[object, dict[str, anyio.Lock]] = weakref.WeakKeyDictionary()


def starting_key(task: str, identity: str, profile: CoverageProfile, observer_version: str) -> str:
    """The cache key: what the starting report depends on."""
    doc = {"task": task, "identity": identity, "profile": msgspec.to_builtins(profile), "observer": observer_version}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:32]


def _lock(key: str) -> anyio.Lock:
    """One lock per key and running event loop (a lock is bound to its loop)."""
    per_loop = _LOCKS.setdefault(anyio.lowlevel.current_token().native_token, {})
    if key not in per_loop:
        per_loop[key] = anyio.Lock()
    return per_loop[key]


def _saved(folder: Path) -> CoverageReport | None:
    try:
        return msgspec.json.decode((folder / REPORT).read_bytes(), type=CoverageReport)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def publish_starting(folder: Path, report: CoverageReport, shared: Path, key: str) -> Path:
    """Publish readiness's first starting-source run (``folder``, its parsed ``report``) as the
    task's starting report, so no collector runs it again; an existing one is kept."""
    final = shared / f"starting-{key}"
    if _saved(final) is not None:
        return final
    shared.mkdir(parents=True, exist_ok=True)
    partial = shared / f".starting-{key}.{uuid.uuid4().hex[:8]}.partial"
    try:
        shutil.copytree(folder, partial)
        (partial / "source.txt").write_text("readiness: the first of its two runs on the starting source\n")
        (partial / REPORT).write_bytes(msgspec.json.encode(report))
        try:
            os.rename(partial, final)
        except OSError:
            if _saved(final) is None:
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return final


async def starting_report(open_sandbox: OpenSandbox, starting: Path, profile: CoverageProfile, shared: Path,
                          key: str) -> tuple[CoverageReport, Path, bool]:
    """(the starting report, its evidence folder, whether it was reused). Raises
    :class:`~pluginbench.errors.MeasurementError` when the command gives no report (not cached,
    so the next attempt tries again)."""
    final = shared / f"starting-{key}"
    got = _saved(final)
    if got is not None:
        return got, final, True
    async with _lock(key):
        got = _saved(final)
        if got is not None:
            return got, final, True
        shared.mkdir(parents=True, exist_ok=True)
        partial = shared / f".starting-{key}.{uuid.uuid4().hex[:8]}.partial"
        try:
            report = await run_coverage(open_sandbox, starting, profile, None, partial)
            (partial / REPORT).write_bytes(msgspec.json.encode(report))
            try:
                os.rename(partial, final)
            except OSError:  # another worker published it first: read theirs
                theirs = _saved(final)
                if theirs is None:
                    raise
                return theirs, final, True
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        return report, final, False
