"""The submission's source tree: the frozen starting source with ``model.patch`` applied.

I/O edge shared by the code-analysis collectors (complexity, dead code). The copy leaves
out ``.git`` and dependency folders; ``git apply`` runs with ``GIT_CEILING_DIRECTORIES``
so a repository around the run folder is never used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..errors import PatchDoesNotApply
from ._source_only import sections

#: folders never analyzed nor copied: version control, dependencies, build output
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache",
                       ".tox", "target", "dist", "build", ".next", "vendor", ".cache"})




def changed_paths(patch: str) -> tuple[set[str], set[str]]:
    """(paths before, paths after) of the files the patch touches (``/dev/null`` excluded)."""
    before: set[str] = set()
    after: set[str] = set()
    for sec in sections(patch):
        text = sec.text
        deleted = "\ndeleted file mode" in text or "\n+++ /dev/null" in text
        created = "\nnew file mode" in text or "\n--- /dev/null" in text
        if not created:
            before.add(sec.old)
        if not deleted:
            after.add(sec.new)
    return before, after


def copy_source(src: Path, dest: Path) -> Path:
    """A copy of ``src`` without :data:`SKIP_DIRS`."""
    shutil.copytree(src, dest, symlinks=True, ignore=lambda _d, names: [n for n in names if n in SKIP_DIRS])
    return dest


def submission_tree(starting: Path, patch: str, dest: Path, only: set[str] | None = None) -> Path:
    """``dest``: a copy of ``starting`` with ``patch`` applied; with ``only``, a copy of just
    those files (the ones the patch changes) before applying it."""
    if dest.exists():
        shutil.rmtree(dest)
    if only is None:
        copy_source(starting, dest)
    else:
        dest.mkdir(parents=True)
        for rel in sorted(only):
            src = starting / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel, follow_symlinks=False)
    if not patch.strip():
        return dest
    patch_file = dest.parent / f"{dest.name}.patch"
    patch_file.write_bytes(patch.encode("utf-8", errors="surrogateescape"))
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(dest.parent.resolve())}
    proc = subprocess.run(["git", "apply", "--binary", "--whitespace=nowarn", str(patch_file.resolve())],
                          cwd=dest, env=env, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL, timeout=120, start_new_session=True)
    patch_file.unlink(missing_ok=True)
    if proc.returncode != 0:
        raise PatchDoesNotApply(f"model.patch does not apply to the starting source: {proc.stderr.strip()[:300]}")
    return dest


def source_files(root: Path, suffixes: frozenset[str]) -> list[str]:
    """Relative paths of files under ``root`` with one of ``suffixes``, sorted, outside
    :data:`SKIP_DIRS`."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if Path(name).suffix in suffixes:
                out.append(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(out)
