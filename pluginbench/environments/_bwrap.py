"""Bubblewrap: a cached usability probe and the argv prefix of one sandbox.

The mount layout is a pure function of the host's top-level entries, the sandbox's own
folders and the hidden paths, so it is tested without starting anything.

Layout: every top-level host directory except the reserved ones is bound read-only,
top-level symlinks (``/bin -> usr/bin`` on merged-/usr systems) are recreated as
symlinks, ``/proc`` and ``/dev`` are fresh, and the sandbox folders are bound
read-write. ``/tmp`` is the sandbox's own ``tmp/`` folder (private like a tmpfs, but on
disk and reachable by ``get``). Every capability is dropped: bubblewrap run by root keeps
them otherwise, and a root process with ``CAP_SYS_ADMIN`` could unmount the tmpfs that
hides a path.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

# Top-level names never bound from the host: fresh (/proc, /dev), private (/tmp, the
# homes, /run) or the sandbox's own mount points.
RESERVED = frozenset(
    {"proc", "dev", "sys", "tmp", "home", "root", "run", "app", "tests", "solution", "logs"}
)

NAMESPACE_FLAGS = (
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
)


class TopEntry(NamedTuple):
    """One entry of the host's ``/``: ``link`` is the symlink target, else ``None``."""

    name: str
    is_dir: bool
    link: str | None


class Bind(NamedTuple):
    """A host folder bound read-write at ``inside``."""

    host: str
    inside: str


class Hidden(NamedTuple):
    """A host path covered inside: a directory by an empty tmpfs, a file by /dev/null."""

    path: str
    is_dir: bool


def host_top_level(root: str = "/") -> list[TopEntry]:
    """The host's top-level entries, sorted by name."""
    entries: list[TopEntry] = []
    with os.scandir(root) as it:
        for e in it:
            link = os.readlink(e.path) if e.is_symlink() else None
            entries.append(TopEntry(e.name, e.is_dir(follow_symlinks=False), link))
    return sorted(entries)


def visible_from_host(path: str, top: Sequence[TopEntry]) -> bool:
    """Whether ``path`` (absolute, symlinks resolved) is reachable through a read-only bind."""
    parts = Path(path).parts
    if len(parts) < 2:
        return False
    first = parts[1]
    return any(t.name == first and t.link is None and first not in RESERVED for t in top)


def bwrap_args(
    top: Sequence[TopEntry],
    binds: Sequence[Bind],
    hidden: Sequence[Hidden],
    *,
    network_none: bool,
    chdir: str,
    readonly: Sequence[str] = (),
) -> list[str]:
    """Options for ``bwrap`` (without the executable and the ``--`` command)."""
    args: list[str] = []
    for t in top:
        if t.name in RESERVED:
            continue
        if t.link is not None:
            args += ["--symlink", t.link, "/" + t.name]
        else:
            args += ["--ro-bind", "/" + t.name, "/" + t.name]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for b in binds:
        args += ["--bind", b.host, b.inside]
    for path in readonly:
        if not visible_from_host(path, top):  # e.g. a checkout under /tmp: bind it in
            args += ["--ro-bind", path, path]
    for h in hidden:
        if not visible_from_host(h.path, top):
            continue  # already unreachable inside (under /tmp, /home, /run ...)
        if h.is_dir:
            args += ["--tmpfs", h.path, "--remount-ro", h.path]
        else:
            args += ["--ro-bind", "/dev/null", h.path]
    args += list(NAMESPACE_FLAGS)
    if network_none:
        args.append("--unshare-net")
    args += ["--chdir", chdir]
    return args


def workdir_conflict(workdir: str, top: Sequence[TopEntry]) -> str | None:
    """Why ``workdir`` cannot be a mount point inside, or ``None`` when it can."""
    if not workdir.startswith("/") or os.path.normpath(workdir) != workdir or workdir == "/":
        return f"workdir {workdir!r} must be a normalized absolute path other than /"
    first = Path(workdir).parts[1]
    if first in ("proc", "dev", "sys", "tmp", "home", "tests", "solution", "logs"):
        return f"workdir {workdir!r} collides with a sandbox mount"
    if any(t.name == first and first not in RESERVED for t in top):
        return f"workdir {workdir!r} lies under the read-only host folder /{first}"
    return None


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def _probe(executable: str, network_none: bool) -> bool:
    argv = [executable, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    argv += list(NAMESPACE_FLAGS)
    if network_none:
        argv.append("--unshare-net")
    argv.append("true")
    try:
        done = subprocess.run(
            argv,
            env={"PATH": os.environ.get("PATH", os.defpath)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=20,
            check=False,
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def bwrap_usable(*, network_none: bool = False) -> bool:
    """Whether ``bwrap`` on PATH starts a sandbox with our flags (probed once per binary)."""
    executable = find_bwrap()
    return executable is not None and _probe(executable, network_none)
