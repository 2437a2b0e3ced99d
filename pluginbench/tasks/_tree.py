"""Safe trees: walk, copy and fingerprint folders that came from users.

Tasks and treatments are frozen by copying them into the run directory. A copied tree
must not smuggle anything in, so :func:`scan_tree` refuses symlinks, hardlinked files,
sockets, devices and FIFOs, and names that would escape (``..``). The fingerprint is a
SHA-256 over every file's relative path, mode bits and content hash, in sorted order,
so it changes when a byte or an executable bit changes and never with mtimes.
"""

import hashlib
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InputError, UnsafeTree

EXCLUDED_NAMES = frozenset({".git"})


class TreeEntry(NamedTuple):
    relpath: str
    mode: int  # permission bits only, e.g. 0o755
    sha256: str
    size: int


#: Folders nested deeper than this are refused: deeper trees are not source code, and the
#: walk (and Python's copy and delete) would end in a RecursionError.
MAX_TREE_DEPTH = 200


def _refuse(path: Path, what: str, kind: type[InputError], context: str) -> InputError:
    return kind(
        f"{context} contains {what}",
        file=str(path),
        fix="replace it with a regular file (symlinks, hardlinks and special files are refused)",
    )


def scan_tree(
    root: Path,
    *,
    context: str = "the folder",
    error: type[InputError] = UnsafeTree,
    exclude: Callable[[str], bool] = lambda rel: False,
) -> list[TreeEntry]:
    """Every regular file under ``root``, sorted, or an error naming the first bad path."""
    entries: list[TreeEntry] = []
    root_st = os.lstat(root)
    if stat.S_ISLNK(root_st.st_mode):
        raise _refuse(root, "a symlink at its root", error, context)

    def walk(folder: Path, rel: str, depth: int = 0) -> None:
        if depth > MAX_TREE_DEPTH:
            raise error(f"{context} nests folders more than {MAX_TREE_DEPTH} levels deep", file=str(folder),
                        field=rel.split("/", 1)[0] or None,
                        fix=f"flatten the tree to at most {MAX_TREE_DEPTH} levels of folders")
        with os.scandir(folder) as it:
            children = sorted(it, key=lambda e: e.name)
        for child in children:
            name = child.name
            child_rel = f"{rel}/{name}" if rel else name
            if name in EXCLUDED_NAMES or exclude(child_rel):
                continue
            if name in ("..", ".") or "/" in name or "\\" in name:
                raise _refuse(Path(child.path), "a name that escapes its folder", error, context)
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise error(
                    f"{context} contains a file name that is not UTF-8: {name.encode('utf-8', 'surrogateescape')!r}",
                    file=str(folder), fix="rename the file to a UTF-8 name (the patch and the evidence need text names)",
                ) from None
            st = child.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise _refuse(Path(child.path), "a symlink", error, context)
            if stat.S_ISDIR(st.st_mode):
                walk(Path(child.path), child_rel, depth + 1)
            elif stat.S_ISREG(st.st_mode):
                if st.st_nlink > 1:
                    raise _refuse(Path(child.path), "a hardlinked file", error, context)
                digest = hashlib.sha256()
                with open(child.path, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(block)
                entries.append(TreeEntry(child_rel, stat.S_IMODE(st.st_mode), digest.hexdigest(), st.st_size))
            else:
                raise _refuse(Path(child.path), "a special file (socket, device or FIFO)", error, context)

    walk(root, "")
    return entries


def fingerprint(entries: list[TreeEntry]) -> str:
    """SHA-256 over sorted (path, mode, content hash) lines."""
    digest = hashlib.sha256()
    for e in sorted(entries):
        digest.update(f"{e.relpath}\0{e.mode:o}\0{e.sha256}\n".encode())
    return digest.hexdigest()


def copy_tree(src: Path, dest: Path, entries: list[TreeEntry]) -> None:
    """Copy exactly ``entries`` (from :func:`scan_tree`) from ``src`` into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for e in entries:
        target = dest / e.relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / e.relpath, target)
        os.chmod(target, e.mode)


def freeze_tree(src: Path, dest: Path, **scan_kwargs: Any) -> tuple[str, list[TreeEntry]]:
    """Scan, copy and fingerprint; verifies the copy against the scan."""
    entries = scan_tree(src, **scan_kwargs)
    copy_tree(src, dest, entries)
    copied = scan_tree(dest, **scan_kwargs)
    if fingerprint(copied) != fingerprint(entries):
        raise UnsafeTree(
            "the folder changed while it was being frozen",
            file=str(src),
            fix="run again when nothing is writing to it",
        )
    return fingerprint(entries), entries
