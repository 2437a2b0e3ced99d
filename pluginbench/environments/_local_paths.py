"""The local backend's host paths: a sandbox's ``PATH``, its tool folders, the
anonymous files bubblewrap reads its options from, and the sandbox folders (their names,
those a killed worker left, their removal)."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import _bwrap

#: the system folders every sandbox's PATH starts with
SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def sandbox_path(tools: Sequence[str], host_path: str | None = None) -> str:
    """``PATH`` inside: the system folders, then the host ``PATH`` entries that lie in a
    bound tool folder (a pinned node next to the CLI); no other host folder."""
    host = (host_path if host_path is not None else os.environ.get("PATH", "")).split(os.pathsep)
    extra = [d for d in host if d and d not in SYSTEM_PATH and any(_bwrap._under(d, t) for t in tools)]
    return os.pathsep.join([*SYSTEM_PATH, *dict.fromkeys(extra)])


def _memfd(name: str, data: bytes) -> int:
    """An anonymous file holding ``data``, positioned at its start (close-on-exec;
    ``pass_fds`` hands it to bubblewrap alone)."""
    fd = os.memfd_create(name)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def tool_folders(paths: Sequence[Path]) -> list[str]:
    """The existing tool folders of a spec, each at its given and at its resolved path
    (a checkout reached through a symlink), in order, without duplicates."""
    out: list[str] = []
    for p in paths:
        real = os.path.realpath(p)
        if not os.path.isdir(real):
            continue
        for path in (os.path.abspath(p), real):
            if path not in out:
                out.append(path)
    return out


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:40] or "_"


def _rmtree(path: Path) -> None:
    """Remove ``path`` entirely, also folders a process made read-only (never follows links)."""

    def make_writable(func: object, p: str, exc: object) -> None:
        parent = os.path.dirname(p)
        os.chmod(parent, 0o700)
        if os.path.isdir(p) and not os.path.islink(p):
            os.chmod(p, 0o700)
            shutil.rmtree(p)
        else:
            os.unlink(p)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=make_writable)
    else:
        shutil.rmtree(path, onerror=make_writable)


def left_behind(run_id: str, root: Path | None = None) -> list[Path]:
    """Sandbox folders of ``run_id`` that still exist (a worker was killed mid-attempt)."""
    parent = root if root is not None else Path(tempfile.gettempdir())
    prefix = f"pluginbench-{_safe_name(run_id)}-"
    return [f for f in sorted(parent.glob(prefix + "*")) if f.is_dir() and not f.is_symlink()]


__all__ = ["SYSTEM_PATH", "left_behind", "sandbox_path", "tool_folders"]
