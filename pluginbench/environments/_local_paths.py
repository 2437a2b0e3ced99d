"""The local backend's host paths: a sandbox's ``PATH``, its tool folders, and the
anonymous files bubblewrap reads its options from."""

from __future__ import annotations

import os
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


__all__ = ["SYSTEM_PATH", "sandbox_path", "tool_folders"]
