"""Bindings: the SHA-256 digests of everything a judge's verdict depends on.

Workspace files are keyed ``files/<path in task-N>``; the starting source (the one link
prepare made, ``source``) is one content digest under ``source``; the rest are metadata
keys: ``brief``, ``judge_spec``, ``seed``, ``key``, ``judge_cli_version``. A nested
symlink in a task folder is refused.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from ..errors import InputError
from ..rundir import sha256_file

SOURCE_LINK = "source"
METADATA_KEYS = ("brief", "judge_spec", "seed", "key", "judge_cli_version")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _walk(root: Path, rel: str, out: dict[str, str], *, task_dir: Path) -> None:
    for child in sorted(os.scandir(root), key=lambda e: e.name):
        child_rel = f"{rel}/{child.name}" if rel else child.name
        st = child.stat(follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise InputError(f"a nested symlink in the prepared task folder: {child_rel}",
                             file=str(task_dir / child_rel),
                             fix="prepare a new directory with `pluginbench judge prepare` (only `source` may link)")
        if stat.S_ISDIR(st.st_mode):
            _walk(Path(child.path), child_rel, out, task_dir=task_dir)
        elif stat.S_ISREG(st.st_mode):
            out[child_rel] = sha256_file(Path(child.path))
        else:
            raise InputError(f"a special file in the prepared task folder: {child_rel}",
                             file=str(task_dir / child_rel), fix="prepare a new directory")


def source_digest(source: Path) -> str:
    """One digest over the starting source's paths and contents (modes left out: the copy is read-only)."""
    files: dict[str, str] = {}
    _walk(source, "", files, task_dir=source)
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(f"{rel}\0{files[rel]}\n".encode())
    return digest.hexdigest()


def workspace_digests(task_dir: Path) -> dict[str, str]:
    """``files/<path>`` for every file of ``task-N/`` and ``source`` for the linked starting source."""
    out: dict[str, str] = {}
    for child in sorted(os.scandir(task_dir), key=lambda e: e.name):
        st = child.stat(follow_symlinks=False)
        if child.name == SOURCE_LINK and stat.S_ISLNK(st.st_mode):
            target = Path(child.path).resolve()
            if not target.is_dir():
                raise InputError("the starting source link points nowhere", file=child.path,
                                 fix="prepare a new directory")
            out[SOURCE_LINK] = source_digest(target)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise InputError(f"a symlink in the prepared task folder: {child.name}", file=child.path,
                             fix="prepare a new directory (only `source` may link)")
        if stat.S_ISDIR(st.st_mode):
            files: dict[str, str] = {}
            _walk(Path(child.path), child.name, files, task_dir=task_dir)
            out.update({f"files/{k}": v for k, v in files.items()})
        elif stat.S_ISREG(st.st_mode):
            out[f"files/{child.name}"] = sha256_file(Path(child.path))
    return out


def make_binding(workspace: Mapping[str, str], *, brief: str, judge_spec: str, seed: int, key: str,
                 judge_cli_version: str | None) -> dict[str, str | None]:
    """The full binding, workspace keys first (all values are hex digests but seed and version)."""
    return {**dict(sorted(workspace.items())), "brief": brief, "judge_spec": judge_spec,
            "seed": str(seed), "key": key, "judge_cli_version": judge_cli_version}


def mismatched_fields(saved: Mapping[str, object], current: Mapping[str, object]) -> list[str]:
    """Binding fields whose saved and current values differ (either side missing counts)."""
    return sorted(k for k in set(saved) | set(current) if saved.get(k) != current.get(k))
