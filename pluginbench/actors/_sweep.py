"""Temporary files of a run: one per-run temp root, and the sweep a resume does first.

Every temporary file PluginBench writes inside a run folder has a name only its writers
use: ``report/.<file>.<random>.tmp`` (the report's staged files), ``<name>.json.tmp``
beside the JSON file it replaces (the run's settings, an attempt's receipts),
``measure/.<revision>.checking/`` (a measurement request's readiness scratch) and
``evidence/review-packets/<attempt>.tmp/`` (a packet being written). A process killed
while writing one leaves it behind; the next worker holding ``run.lock`` removes them
(:func:`sweep_run`) before anything else, so no later reader mistakes one for evidence.
Agent output (an attempt's ``export/`` and ``artifacts/``) and the frozen inputs are
never swept, whatever their file names.

Temporary folders outside the run (staging, patch bases, transcript copies) go under one
per-run temp root, ``$TMPDIR/pluginbench-run-<run id>/`` (:func:`run_temp`), which the
worker points :mod:`tempfile` at while it owns the run; a resume removes what a killed
worker left there.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..rundir import RunDir

__all__ = ["run_temp", "run_temp_root", "sweep_run"]

#: never swept: agent output and frozen inputs keep any file name they were given
_KEPT_PARTS = frozenset({"export", "artifacts", "frozen"})


def run_temp_root(rd: RunDir) -> Path:
    """The run's own temp root under the system temp folder."""
    return Path(_system_temp()) / f"pluginbench-run-{rd.run_id}"


def _system_temp() -> str:
    """The system temp folder ($TMPDIR, /tmp, ...), even while :func:`run_temp` is active."""
    saved = tempfile.tempdir
    tempfile.tempdir = None
    try:
        return tempfile.gettempdir()
    finally:
        tempfile.tempdir = saved


def _leftovers(rd: RunDir) -> list[Path]:
    root = rd.root
    found = [*root.glob("*.json.tmp"), *(rd.report_dir.glob(".*.tmp") if rd.report_dir.is_dir() else [])]
    found += [p for p in (root / "measure").glob(".*.checking")] if (root / "measure").is_dir() else []
    packets = rd.evidence / "review-packets"
    found += [p for p in packets.glob("*.tmp") if p.is_dir()] if packets.is_dir() else []
    for folder in (rd.evidence / "attempts", rd.evidence / "discarded"):
        if not folder.is_dir():
            continue
        for attempt in folder.iterdir():
            for p in (*attempt.glob("*.json.tmp"), *attempt.glob("*/*.json.tmp")):
                if not _KEPT_PARTS & set(p.relative_to(attempt).parts[:-1]):
                    found.append(p)
    return sorted(found)


def sweep_run(rd: RunDir) -> list[str]:
    """Remove the temporary files and folders a killed process left in the run and in its
    temp root; return what was removed (run-relative paths, and the temp root). Call only
    while holding ``run.lock``."""
    removed = []
    for p in _leftovers(rd):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
        removed.append(str(p.relative_to(rd.root)))
    temp = run_temp_root(rd)
    if temp.exists() and any(temp.iterdir()):
        removed.append(str(temp))
    shutil.rmtree(temp, ignore_errors=True)
    return removed


@contextlib.contextmanager
def run_temp(rd: RunDir) -> Iterator[Path]:
    """Point :mod:`tempfile` at the run's temp root while the body runs, then restore it
    and remove the root (a kill skips that; the next :func:`sweep_run` does it)."""
    root = run_temp_root(rd)
    root.mkdir(parents=True, exist_ok=True)
    saved = tempfile.tempdir
    tempfile.tempdir = str(root)
    try:
        yield root
    finally:
        tempfile.tempdir = saved
        shutil.rmtree(root, ignore_errors=True)
