"""Reading one attempt's evidence safely: which ids exist, and a file inside one attempt's
folder, never through a symlink and never outside that folder.

Every path the viewer opens comes through here, so ``show``, the dashboard's attempt page and
its evidence links share one rule: an attempt id names a real folder directly under
``evidence/attempts/`` (or ``evidence/discarded/``); a relative path is a chain of plain
names (no ``..``, no empty or hidden-dot segments such as ``.``), and every component,
from the run directory down, is checked with ``lstat``: a symlink anywhere is refused.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..errors import InputError
from ..rundir import RunDir

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,200}$")

#: Bytes of a text file read for a page or ``show`` (the rest is cut, and says so).
READ_LIMIT = 8 << 20


def valid_id(attempt_id: str) -> bool:
    return bool(_ID.match(attempt_id)) and ".." not in attempt_id


def _no_links(root: Path, target: Path) -> bool:
    """Whether every component from ``root`` to ``target`` exists and none is a symlink."""
    try:
        rel = target.relative_to(root)
    except ValueError:
        return False
    here = root
    for part in ("",) + rel.parts:
        here = here / part if part else here
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return False
        except OSError:
            return False
    return True


def attempt_dir(run_dir: Path, attempt_id: str) -> Path | None:
    """The folder of ``attempt_id`` (live, else discarded), or None when the id is not a
    plain name, has no folder, or any component on the way is a symlink."""
    if not valid_id(attempt_id):
        return None
    rd = RunDir(run_dir)
    for folder in (rd.attempt(attempt_id), rd.discarded(attempt_id)):
        if _no_links(run_dir, folder) and folder.is_dir():
            return folder
    return None


def safe_file(folder: Path, rel: str) -> Path | None:
    """``folder/rel`` when ``rel`` is plain names to a regular file with no symlink on the
    way (``folder`` itself included); None otherwise."""
    parts = rel.split("/")
    if not rel or any(p in ("", ".", "..") or "\\" in p or "\x00" in p for p in parts):
        return None
    target = folder.joinpath(*parts)
    if not _no_links(folder, target):
        return None
    try:
        st = os.lstat(folder)
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(os.lstat(target).st_mode):
            return None
    except OSError:
        return None
    return target


def read_text(folder: Path, rel: str, limit: int = READ_LIMIT) -> str | None:
    """The text of a file in ``folder`` (see :func:`safe_file`), cut at ``limit`` bytes;
    None when it is missing, refused or unreadable."""
    path = safe_file(folder, rel)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    text = data[:limit].decode("utf-8", errors="replace")
    return text + (f"\n… (cut at {limit:,} bytes)" if len(data) > limit else "")


def list_files(folder: Path) -> list[tuple[str, int]]:
    """(relative path, size) of every regular file under ``folder``, sorted; symlinks are
    neither listed nor entered. A name that is not UTF-8 (an agent's file in the export)
    is listed escaped (``bad\\xff.py``): kept as surrogates it could not be written to a page
    or to JSON, and the attempt's page would fail."""
    out: list[tuple[str, int]] = []
    stack = [folder]
    while stack:
        here = stack.pop()
        try:
            with os.scandir(here) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_symlink():
                    continue
                if e.is_dir(follow_symlinks=False):
                    stack.append(Path(e.path))
                elif e.is_file(follow_symlinks=False):
                    rel = Path(e.path).relative_to(folder).as_posix()
                    shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                    out.append((shown, e.stat(follow_symlinks=False).st_size))
            except OSError:
                continue
    return sorted(out)


def require_attempt(run_dir: Path, attempt_id: str) -> Path:
    """:func:`attempt_dir` or bad input naming the id and where ids come from."""
    folder = attempt_dir(run_dir, attempt_id)
    if folder is None:
        raise InputError(f"{run_dir}: no attempt {attempt_id!r} (no plain folder evidence/attempts/{attempt_id})",
                         fix=f"pluginbench show {run_dir} lists the attempt ids")
    return folder
