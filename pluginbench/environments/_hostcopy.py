"""Copy between the host and a sandbox folder without ever following a sandbox symlink.

The sandbox side is written by untrusted processes, so every step below a sandbox
folder goes through directory file descriptors opened with ``O_NOFOLLOW``: a symlink
planted at ``/logs/verifier/reward.txt`` or at a parent folder cannot redirect a read or
a write to the host. Copying out keeps symlinks *as symlinks* (never followed), keeps
only the permission bits of file modes (:data:`EXPORT_MODE_MASK`: setuid, setgid and
sticky bits are stripped, so what an agent leaves is data, never a privilege), and skips
sockets, FIFOs and devices (they carry no content). Files are owned by whoever runs
PluginBench. A copy that leaves out the top-level ``.git`` (a workspace export) leaves
out every nested ``.git`` file or folder too: a ``sub/.git`` with ``gitdir:`` pointing at
another repository would make host-side git read that repository. Such an export names
each thing it left out or changed, with the reason, in ``<dest>.dropped.txt``. The host side
(``host_path``) belongs to the engine and is trusted.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..errors import EnvironmentFailure, ResourceLimitHit

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: the mode bits a copied-out file keeps: read, write and execute, never setuid/setgid/sticky
EXPORT_MODE_MASK = 0o777


def _refuse(what: str, where: str) -> EnvironmentFailure:
    return EnvironmentFailure(f"refused: {what}: {where}")


def _open_dir(base: Path, parts: list[str], *, create: bool) -> int:
    """A descriptor for ``base/parts...`` where no part may be a symlink."""
    fd = os.open(base, _DIR_FLAGS)
    try:
        return _open_dir_at(fd, parts, create=create)
    finally:
        os.close(fd)


def _open_dir_at(fd: int, parts: list[str], *, create: bool) -> int:
    """A new descriptor for ``parts`` below the open folder ``fd``; no part may be a symlink."""
    cur = os.dup(fd)
    try:
        for i, part in enumerate(parts):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=cur)
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=cur)
            except FileNotFoundError as exc:
                raise EnvironmentFailure(
                    f"no such folder in the sandbox: {'/'.join(parts[: i + 1])}"
                ) from exc
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse("not a plain folder", "/".join(parts[: i + 1])) from exc
                raise
            os.close(cur)
            cur = nxt
    except BaseException:
        os.close(cur)
        raise
    return cur


class _Budget:
    """What a bounded copy may still write; a live sandbox can grow files and folders after
    the size check, so the copy counts too and stops at the bound."""

    def __init__(self, limit: int | None, rel: str) -> None:
        self.left = limit
        self.limit = limit
        self.rel = rel

    def take(self, n: int) -> None:
        if self.left is None:
            return
        self.left -= n
        if self.left < 0:
            assert self.limit is not None
            _check_size(self.limit + 1, self.limit, self.rel)


def _copy_bytes(fin: IO[bytes], fout: IO[bytes], budget: _Budget | None) -> None:
    while chunk := fin.read(1 << 20):
        if budget is not None:
            budget.take(len(chunk))
        fout.write(chunk)


def _copy_file_out(dir_fd: int, name: str, dest: Path, budget: _Budget | None = None) -> bool:
    """Copy one regular file; ``False`` (nothing copied) when it is not regular."""
    try:
        src = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return False
        raise
    with open(src, "rb") as fin:
        st = os.fstat(fin.fileno())
        if not stat.S_ISREG(st.st_mode):
            return False
        if dest.is_symlink():
            dest.unlink()
        with open(dest, "wb") as fout:
            _copy_bytes(fin, fout, budget)
    os.chmod(dest, stat.S_IMODE(st.st_mode) & EXPORT_MODE_MASK)
    return True


def _copy_dir_out(dir_fd: int, dest: Path, skip: Callable[[str], bool], dropped: list[str], rel: str = "",
                  budget: _Budget | None = None) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in sorted(os.listdir(dir_fd)):
        if skip(name):
            if rel and name == ".git":
                dropped.append(f"{rel}{name}: {NESTED_GIT}")
            continue
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        target = dest / name
        if stat.S_ISDIR(st.st_mode):
            sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            try:
                _copy_dir_out(sub, target, _nested_git if skip(".git") else _nothing, dropped, f"{rel}{name}/", budget)
            finally:
                os.close(sub)
        elif stat.S_ISLNK(st.st_mode):
            if target.is_symlink() or target.exists():
                target.unlink()
            os.symlink(os.readlink(name, dir_fd=dir_fd), target)
        elif stat.S_ISREG(st.st_mode):
            if _copy_file_out(dir_fd, name, target, budget) and st.st_mode & ~EXPORT_MODE_MASK & 0o7777:
                dropped.append(f"{rel}{name}: {SPECIAL_BITS}")
        else:  # sockets, FIFOs and devices: they have no content to carry
            dropped.append(f"{rel}{name}: {SPECIAL_FILE}")


#: the reasons an export names for what it left out or changed (``<dest>.dropped.txt``)
NESTED_GIT = "a nested .git (a repository or a gitdir pointer) is not exported"
SPECIAL_BITS = "setuid, setgid and sticky bits stripped"
SPECIAL_FILE = "a device, FIFO or socket carries no content and is not exported"


def write_dropped(dest: Path, dropped: list[str]) -> None:
    """``<dest>.dropped.txt`` beside an export: one "<path>: <reason>" line each (none: no file)."""
    report = dest.with_name(dest.name + ".dropped.txt")
    if dropped:
        # A name that is not UTF-8 (kept as surrogates) is written escaped, never a crash that
        # would cost the attempt its submission.
        report.write_text("".join(f"{line}\n" for line in dropped), encoding="utf-8", errors="backslashreplace")
    else:
        report.unlink(missing_ok=True)


def _nothing(_name: str) -> bool:
    return False


def _nested_git(name: str) -> bool:
    """A nested repository's ``.git`` (folder, or file with ``gitdir:``): never exported."""
    return name == ".git"


def _size_at(dir_fd: int, stop_above: int) -> int:
    """The apparent size of the regular files below the open folder ``dir_fd`` (never
    through a symlink), counted until past ``stop_above``."""
    total = 0
    for name in os.listdir(dir_fd):
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
        elif stat.S_ISDIR(st.st_mode):
            sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            try:
                total += _size_at(sub, stop_above - total)
            finally:
                os.close(sub)
        if total > stop_above:
            break
    return total


def _check_size(size: int, limit: int | None, rel: str) -> None:
    if limit is not None and size > limit:
        raise ResourceLimitHit(f"disk: {rel or 'the folder'} is over the {limit // (1024 * 1024)} MB storage bound "
                               "(storage_mb) and is not copied out of the sandbox")


def copy_out(
    base: Path, rel: str, dest: Path, *, skip_top: Callable[[str], bool] = lambda _n: False,
    limit: int | None = None,
) -> None:
    """Copy ``base/rel`` (a sandbox file or folder) to the host path ``dest``.

    With ``limit`` (bytes), a file or folder whose apparent size is over it is refused
    (:class:`ResourceLimitHit`) before anything is written: a sparse file costs the
    sandbox no disk, but its copy would write every byte on the host. The copy counts
    too and stops at the bound (a live sandbox can grow its files after the check);
    what it wrote is then removed."""
    existed = os.path.lexists(dest)
    try:
        _copy_out(base, rel, dest, skip_top, limit)
    except ResourceLimitHit:
        if not existed:  # what this copy wrote before the bound stopped it goes
            if dest.is_dir() and not dest.is_symlink():
                shutil.rmtree(dest, ignore_errors=True)
            else:
                dest.unlink(missing_ok=True)
        raise


def _copy_out(base: Path, rel: str, dest: Path, skip_top: Callable[[str], bool], limit: int | None) -> None:
    parts = [p for p in rel.split("/") if p]
    dropped: list[str] = []
    budget = _Budget(limit, rel) if limit is not None else None
    if not parts:
        fd = _open_dir(base, [], create=False)
        try:
            if limit is not None:
                _check_size(_size_at(fd, limit), limit, rel)
            _copy_dir_out(fd, dest, skip_top, dropped, budget=budget)
        finally:
            os.close(fd)
        if skip_top(".git"):  # a workspace export names what it left out
            write_dropped(dest, dropped)
        return
    parent = _open_dir(base, parts[:-1], create=False)
    try:
        name = parts[-1]
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError as exc:
            raise EnvironmentFailure(f"no such file in the sandbox: {rel}") from exc
        if stat.S_ISLNK(st.st_mode):
            raise _refuse("a symlink is never followed out of a sandbox", rel)
        if stat.S_ISDIR(st.st_mode):
            sub = os.open(name, _DIR_FLAGS, dir_fd=parent)
            try:
                if limit is not None:
                    _check_size(_size_at(sub, limit), limit, rel)
                _copy_dir_out(sub, dest, skip_top, dropped, budget=budget)
            finally:
                os.close(sub)
            if skip_top(".git"):
                write_dropped(dest, dropped)
            return
        if stat.S_ISREG(st.st_mode):
            _check_size(st.st_size, limit, rel)
        if not (stat.S_ISREG(st.st_mode) and _copy_file_out(parent, name, dest, budget)):
            raise _refuse("not a regular file", rel)
    finally:
        os.close(parent)


def plain_files(root: Path, pattern: str = "*") -> list[Path]:
    """The regular files below ``root`` whose path ends with ``pattern`` (as
    :meth:`pathlib.PurePath.match`: ``"*.jsonl"``, ``"chats/*.jsonl"``), sorted, reached
    through no symlink (``root`` included).

    For host-side readers of a folder :func:`copy_out` brought back: the copy keeps the
    sandbox's symlinks as symlinks, and ``rglob`` plus ``copyfile`` would follow one
    planted at ``~/.claude/projects/<slug>/<session>/x.jsonl -> /root/.codex/auth.json``
    (a host file in the evidence) or ``-> /dev/zero`` (a host disk filled)."""
    if root.is_symlink() or not root.is_dir():
        return []
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):  # never descends a symlinked folder
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            path = Path(dirpath, name)
            if path.relative_to(root).match(pattern) and stat.S_ISREG(os.lstat(path).st_mode):
                found.append(path)
    return sorted(found)


def _write_file_in(dir_fd: int, name: str, src: Path, mode: int) -> None:
    try:
        fd = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=dir_fd,
        )
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse("the target is a symlink", name) from exc
        raise
    with open(fd, "wb") as fout, open(src, "rb") as fin:
        shutil.copyfileobj(fin, fout, 1 << 20)
        os.fchmod(fout.fileno(), mode)


def copy_in(src: Path, base: Path, rel: str) -> None:
    """Copy the host file or folder ``src`` to ``base/rel`` (modes kept, symlinks refused)."""
    parts = [p for p in rel.split("/") if p]
    st = os.lstat(src)
    if stat.S_ISLNK(st.st_mode):
        raise _refuse("symlinks are not copied into a sandbox", str(src))
    if stat.S_ISREG(st.st_mode):
        if not parts:
            raise _refuse("a file cannot replace a sandbox folder", str(src))
        parent = _open_dir(base, parts[:-1], create=True)
        try:
            _write_file_in(parent, parts[-1], src, stat.S_IMODE(st.st_mode))
        finally:
            os.close(parent)
        return
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse("not a regular file or folder", str(src))
    from ..tasks import scan_tree  # not at import: `status` asks this package what was left running

    entries = scan_tree(src, context="a folder copied into a sandbox")
    root = _open_dir(base, parts, create=True)
    try:
        for entry in entries:
            *folders, name = entry.relpath.split("/")
            parent = _open_dir_at(root, folders, create=True)
            try:
                _write_file_in(parent, name, src / entry.relpath, entry.mode)
            finally:
                os.close(parent)
    finally:
        os.close(root)
