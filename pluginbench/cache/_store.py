"""The vanilla cache on disk: the root, its refusals, reading, publishing and importing.

The only I/O of the cache. Publishing builds the entry in a hidden temporary folder
beside its final place and renames it into ``vanilla/<key>/<repeat>`` in one step, so a
reader sees a whole entry or none, and two runs racing for the same repeat leave
exactly one (the second rename fails and that run keeps its own attempt uncached).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import uuid
from pathlib import Path
from typing import Any

import msgspec

from ..config import Evaluation
from ..errors import CacheError, InputError
from ..tasks import copy_tree, scan_tree
from ._admit import EntryManifest
from ._key import COHORT_DIR, entry_of

CacheRefused = CacheError
#: ``PLUGINBENCH_VANILLA_CACHE=off`` turns the vanilla cache off for one process (the
#: test suite does this so unrelated tests never share vanilla attempts).
ENV_SWITCH = "PLUGINBENCH_VANILLA_CACHE"
#: Attempt files that are never part of an entry: the private HOME (credentials), and
#: everything the current run redoes (grading, measurements) or adds (reuse receipt).
NOT_PUBLISHED = frozenset({"delivery", "grading", "measurements.json", "reused.json", "execution-current.json"})
#: How deep the root check looks for symlinks: root/<area>/<key>/<repeat>.
CHECK_DEPTH = 4


def resolve_cache_root(environ: dict[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/pluginbench`` or ``~/.cache/pluginbench``, symlinks resolved."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(base) / "pluginbench").resolve()


def vanilla_cache_enabled(ev: Evaluation, environ: dict[str, str] | None = None) -> bool:
    """``runner.vanilla_cache`` (default true), unless the process switch turns it off; a
    switch value that is neither off nor on is refused, never read as on."""
    env = os.environ if environ is None else environ
    switch = env.get(ENV_SWITCH, "").strip().lower()
    if switch not in ("", "0", "off", "false", "no", "1", "on", "true", "yes"):
        raise InputError(f"{ENV_SWITCH}={env.get(ENV_SWITCH)!r} is neither off nor on", field=ENV_SWITCH,
                         fix=f"set {ENV_SWITCH}=off to turn the vanilla cache off for this process, or unset it")
    return bool(ev.runner.vanilla_cache) and switch not in ("0", "off", "false", "no")


def check_cache_root(root: Path) -> None:
    """Refuse a symlink inside the cache root (the root itself may be one: it is resolved)."""

    def walk(folder: Path, depth: int) -> None:
        try:
            children = sorted(os.scandir(folder), key=lambda e: e.name)
        except FileNotFoundError:
            return
        for child in children:
            st = child.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise CacheError(
                    f"{child.path} is a symlink inside the cache root {root}", file=child.path,
                    fix="remove the symlink (or move the real folder to its place); PluginBench never follows "
                    "links inside its cache",
                )
            if stat.S_ISDIR(st.st_mode) and depth < CHECK_DEPTH:
                walk(Path(child.path), depth + 1)

    walk(root, 1)


def check_output_outside(output: Path, root: Path, *, field: str = "--output") -> None:
    """An output folder may neither lie inside the cache root nor contain it."""
    out = output.resolve()
    if out == root or root in out.parents or out in root.parents:
        raise CacheError(
            f"the output folder {out} overlaps the cache root {root}", file=str(output), field=field,
            fix="choose an output folder outside the cache root (and not one that contains it), or set "
            "XDG_CACHE_HOME to move the cache",
        )


def read_manifest(entry: Path) -> EntryManifest | str:
    """The entry's manifest, or why it cannot be read."""
    try:
        return msgspec.json.decode((entry / "entry.json").read_bytes(), type=EntryManifest)
    except FileNotFoundError:
        return "the entry has no entry.json"
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"entry.json is unreadable: {exc}"


def entry_files(folder: Path) -> dict[str, str]:
    """``relpath -> "<octal mode>:<sha256>"`` of every file under ``folder`` (a symlink,
    hardlink or special file is refused with :class:`CacheError`)."""
    entries = scan_tree(folder, context=f"cache entry {folder}", error=CacheError)
    return {e.relpath: f"{e.mode:o}:{e.sha256}" for e in entries}


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _publishable(attempt_dir: Path) -> list[Any]:
    return scan_tree(
        attempt_dir, context=f"attempt {attempt_dir.name}", error=CacheError,
        # ``*.tmp`` are atomic writes in flight (the collector may be writing measurements.json).
        exclude=lambda rel: rel.split("/", 1)[0] in NOT_PUBLISHED or rel.endswith(".tmp"),
    )


def publish_entry(root: Path, manifest: EntryManifest, attempt_dir: Path) -> tuple[str | None, str | None]:
    """Publish one finished vanilla attempt as ``vanilla/<key>/<repeat>``.

    Returns ``(entry relative to the root, None)``, or ``(None, reason)`` when it was not
    published (an entry already exists, or the attempt's files cannot be copied safely).
    """
    cohort = root / COHORT_DIR / manifest.key
    final = cohort / str(manifest.repeat)
    if final.exists():
        return _already(final, manifest)
    cohort.mkdir(parents=True, exist_ok=True)
    # One run has one writer, so a leftover of this run for this repeat is from a killed worker.
    prefix = f".tmp-{manifest.repeat}-{manifest.origin_run}-"
    for stale in cohort.glob(prefix + "*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = cohort / f"{prefix}{uuid.uuid4().hex}"
    try:
        try:
            entries = _publishable(attempt_dir)
        except CacheError as exc:
            return None, f"the attempt's files cannot be cached: {exc.message}"
        copy_tree(attempt_dir, tmp / "attempt", entries)
        full = msgspec.structs.replace(manifest, files=entry_files(tmp / "attempt"))
        data = msgspec.json.format(msgspec.json.encode(full), indent=2) + b"\n"
        with open(tmp / "entry.json", "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.rename(tmp, final)
        except OSError:
            return _already(final, manifest)
        return entry_of(manifest.key, manifest.repeat), None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _already(final: Path, manifest: EntryManifest) -> tuple[str | None, str | None]:
    """An existing entry is this very attempt's (a resume after a kill that hit between
    the rename and its record) or another run's, which is kept."""
    saved = read_manifest(final)
    entry = entry_of(manifest.key, manifest.repeat)
    if not isinstance(saved, str) and (saved.origin_run, saved.origin_attempt) == (manifest.origin_run, manifest.origin_attempt):
        return entry, None
    return None, f"{entry} already exists (published by another run)"


def import_entry(entry: Path, attempt_dir: Path, receipt: dict[str, Any]) -> None:
    """Copy an admitted entry's files into the run's attempt folder, with ``reused.json``."""
    if attempt_dir.exists():
        shutil.rmtree(attempt_dir)
    source = entry / "attempt"
    copy_tree(source, attempt_dir, scan_tree(source, context=f"cache entry {entry}", error=CacheError))
    (attempt_dir / "reused.json").write_text(json.dumps(receipt, indent=2, sort_keys=True) + "\n")
