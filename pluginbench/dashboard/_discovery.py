"""Finding run directories under the folders ``pluginbench dashboard`` was given.

A run directory holds ``evaluation.json`` and ``evaluation-binding.json`` (or ``events.jsonl`` and one of
them: a run that lost the other is listed as unreadable, not hidden). The walk never
follows a symlink (a link to a folder is not entered, a linked run is not a run), skips
hidden folders, and never looks inside a run directory (its evidence holds frozen
folders that must not be mistaken for runs). Each run gets a key for its URLs: a
readable slug of its folder name plus a hash of its absolute path, so two runs named
alike never share a key and a key never contains a path separator or ``..``.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

RUN_MARKERS = ("evaluation.json", "evaluation-binding.json")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def run_key(run_dir: Path) -> str:
    """The URL key of a run: ``<slug>-<10 hex of sha256(absolute path)>``."""
    digest = hashlib.sha256(str(run_dir).encode()).hexdigest()[:10]
    slug = _UNSAFE.sub("-", run_dir.name).strip("-")[:40] or "run"
    return f"{slug}-{digest}"


def _is_run(entries: dict[str, os.DirEntry[str]]) -> bool:
    """Both markers, or an event log beside one of them: a run that lost a settings file is
    listed (as unreadable, saying which) rather than hidden."""
    def has(name: str) -> bool:
        return name in entries and entries[name].is_file(follow_symlinks=False)

    return all(has(m) for m in RUN_MARKERS) or (has("events.jsonl") and any(has(m) for m in RUN_MARKERS))


def find_runs(roots: Iterable[Path]) -> dict[str, Path]:
    """Every run directory under ``roots`` (a root may itself be a run), by key.

    Unreadable folders are skipped silently: the dashboard shows what it can read."""
    found: dict[str, Path] = {}
    stack = [Path(os.path.abspath(r)) for r in roots]
    seen: set[tuple[int, int]] = set()
    while stack:
        folder = stack.pop()
        try:
            st = os.stat(folder, follow_symlinks=False)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            with os.scandir(folder) as it:
                entries = {e.name: e for e in it}
        except OSError:
            continue
        if _is_run(entries):
            found[run_key(folder)] = folder
            continue
        for name in sorted(entries, reverse=True):
            e = entries[name]
            if name.startswith("."):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append(folder / name)
            except OSError:
                continue
    return dict(sorted(found.items(), key=lambda kv: str(kv[1])))
