"""Tar archives between the host and a container (pure file work, no Docker calls).

The Engine API copies files in and out as tar streams. Going in, :func:`pack` writes a
host file or folder (checked with :func:`~pluginbench.tasks.scan_tree`: symlinks,
hardlinks and special files refused) as members below a given name, with no directory
members for the parents, so Docker creates missing parents (0755) and leaves existing
ones and their modes alone. Coming out, :func:`unpack` extracts an archive written by an
untrusted container: names that escape are refused, a member below a symlink is refused
(a planted ``app/link -> /etc`` cannot redirect ``app/link/passwd`` to the host), symlinks
are recreated as symlinks and never followed, hardlinks become copies, special files
are skipped, and files keep only their permission bits (setuid, setgid and sticky bits are
stripped). Ownership is never restored: files belong to whoever runs PluginBench. An
extraction that leaves out the top-level ``.git`` (a workspace export) leaves out every
nested ``.git`` file or folder as well (a ``gitdir:`` pointer is never carried out), and
names each thing it left out or changed, with the reason, in ``<dest>.dropped.txt``.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from ..errors import EnvironmentFailure, ResourceLimitHit
from ..tasks import scan_tree
from ._hostcopy import NESTED_GIT, SPECIAL_BITS, SPECIAL_FILE, write_dropped

#: the mode bits an extracted file keeps: never setuid, setgid or sticky
_MODE_MASK = 0o777


def _refuse(what: str, where: str) -> EnvironmentFailure:
    return EnvironmentFailure(f"refused: {what}: {where}")


def _add_file(tf: tarfile.TarFile, name: str, src: Path, mode: int, mtime: float | None) -> None:
    info = tarfile.TarInfo(name)
    st = os.stat(src)
    info.size = st.st_size
    info.mode = mode
    info.mtime = int(st.st_mtime if mtime is None else mtime)
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    with open(src, "rb") as fh:
        tf.addfile(info, fh)


def pack(src: Path, name: str, out: IO[bytes], *, mtime: float | None = None) -> None:
    """Write ``src`` (a file or folder) into ``out`` as a tar whose members sit below ``name``.

    ``name`` is a relative path ("" puts a folder's content at the archive root). A file
    becomes the single member ``name``; a folder becomes ``name/<relpath>`` for each file,
    plus a member for ``name`` itself only when the folder has no files (so it still
    appears). ``mtime`` fixes every member's time (build contexts); default: the file's.
    """
    pack_many([(src, name)], out, mtime=mtime)


def pack_many(
    items: Sequence[tuple[Path, str]], out: IO[bytes], *, mtime: float | None = None
) -> None:
    """:func:`pack` several ``(src, name)`` pairs into one archive (one engine round trip)."""
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for src, name in items:
            _pack_one(tf, src, name.strip("/"), mtime)


def _pack_one(tf: tarfile.TarFile, src: Path, name: str, mtime: float | None) -> None:
    st = os.lstat(src)
    if stat.S_ISLNK(st.st_mode):
        raise _refuse("symlinks are not copied into a sandbox", str(src))
    if stat.S_ISREG(st.st_mode):
        if not name:
            raise _refuse("a file needs a name", str(src))
        _add_file(tf, name, src, stat.S_IMODE(st.st_mode), mtime)
        return
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse("not a regular file or folder", str(src))
    entries = scan_tree(src, context="a folder copied into a sandbox")
    for entry in entries:
        member = f"{name}/{entry.relpath}" if name else entry.relpath
        _add_file(tf, member, src / entry.relpath, entry.mode, mtime)
    if not entries and name:
        info = tarfile.TarInfo(name)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        info.uid = info.gid = 0
        tf.addfile(info)


def _parts(member: str) -> list[str]:
    parts = [p for p in member.split("/") if p not in ("", ".")]
    if member.startswith("/") or ".." in parts or not parts:
        raise _refuse("a name that escapes its folder", member)
    return parts


def _no_symlink_between(dest: Path, rel: list[str]) -> None:
    """Refuse when a folder between ``dest`` and ``dest/rel`` is a symlink (or not a folder)."""
    cur = dest
    for part in rel[:-1]:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            cur.mkdir(mode=0o755)
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise _refuse("a member below a symlink or file", "/".join(rel))


def _write(tf: tarfile.TarFile, member: tarfile.TarInfo, target: Path) -> None:
    src = tf.extractfile(member)
    assert src is not None
    if target.is_symlink():
        target.unlink()
    with src, open(target, "wb") as fout:
        shutil.copyfileobj(src, fout, 1 << 20)
    os.chmod(target, stat.S_IMODE(member.mode) & _MODE_MASK)


def content_size(archive: IO[bytes], stop_above: int) -> int:
    """The apparent size of the regular files a seekable archive holds (a hardlink counts
    its target again, as its copy would), read from the headers alone; the archive is
    rewound. Counting stops once past ``stop_above``."""
    sizes: dict[str, int] = {}
    total = 0
    archive.seek(0)
    with tarfile.open(fileobj=archive, mode="r:") as tf:
        while total <= stop_above and (member := tf.next()) is not None:
            if member.isreg():
                sizes[member.name] = member.size
                total += member.size
            elif member.islnk():
                total += sizes.get(member.linkname, 0)
    archive.seek(0)
    return total


def unpack(
    archive: IO[bytes], dest: Path, *, skip_top: Callable[[str], bool] = lambda _n: False,
    limit: int | None = None,
) -> None:
    """Extract a Docker archive of one sandbox path to exactly ``dest``.

    The first member names the sandbox path (its basename). A file is written to ``dest``;
    a folder's content goes below ``dest``, leaving out top-level names ``skip_top``
    accepts. The sandbox path itself being a symlink or special file is refused. With
    ``limit`` (bytes), the member that would take the files' apparent size past it is
    refused (:class:`ResourceLimitHit`) before it is written.
    """
    top: str | None = None
    written: dict[str, Path] = {}
    skip_git = skip_top(".git")
    dropped: list[str] = []
    total = 0
    with tarfile.open(fileobj=archive, mode="r|") as tf:
        for member in tf:
            parts = _parts(member.name)
            if member.isreg() or member.islnk():
                linked = written.get("/".join(_parts(member.linkname))) if member.islnk() else None
                total += member.size if member.isreg() else linked.stat().st_size if linked is not None else 0
                if limit is not None and total > limit:
                    raise ResourceLimitHit(f"disk: {member.name} takes the copy over the "
                                           f"{limit // (1024 * 1024)} MB storage bound (storage_mb); "
                                           "it is not copied out of the sandbox")
            if top is None:
                top = parts[0]
            if parts[0] != top:
                raise _refuse("an archive with two roots", member.name)
            rel = parts[1:]
            if not rel:
                if member.isdir():
                    dest.mkdir(parents=True, exist_ok=True)
                elif member.isreg():
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    _write(tf, member, dest)
                elif member.issym():
                    raise _refuse("a symlink is never followed out of a sandbox", member.name)
                else:
                    raise _refuse("not a regular file", member.name)
                continue
            if skip_top(rel[0]) or (skip_git and ".git" in rel[1:]):
                if skip_git and ".git" in rel[1:]:
                    at = "/".join(rel[: rel.index(".git", 1) + 1])
                    if f"{at}: {NESTED_GIT}" not in dropped:
                        dropped.append(f"{at}: {NESTED_GIT}")
                continue
            _no_symlink_between(dest, rel)
            target = dest.joinpath(*rel)
            if member.isdir():
                if target.is_symlink() or (target.exists() and not target.is_dir()):
                    raise _refuse("a folder where a link or file is", member.name)
                target.mkdir(mode=0o755, exist_ok=True)
            elif member.isreg():
                _write(tf, member, target)
                written["/".join(parts)] = target
                if member.mode & ~_MODE_MASK & 0o7777:
                    dropped.append(f"{'/'.join(rel)}: {SPECIAL_BITS}")
            elif member.issym():
                if target.is_symlink() or target.exists():
                    target.unlink()
                os.symlink(member.linkname, target)
            elif member.islnk():
                # A hardlink names an earlier member; copy the bytes already written.
                source = written.get("/".join(_parts(member.linkname)))
                if source is None:
                    continue
                if target.is_symlink():
                    target.unlink()
                shutil.copyfile(source, target, follow_symlinks=False)
                os.chmod(target, stat.S_IMODE(member.mode) & _MODE_MASK)
            else:  # devices, FIFOs and sockets carry no content and are skipped
                dropped.append(f"{'/'.join(rel)}: {SPECIAL_FILE}")
    if top is None:
        raise EnvironmentFailure("the engine returned an empty archive")
    if skip_git:  # a workspace export names what it left out
        write_dropped(dest, dropped)
