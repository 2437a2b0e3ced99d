"""The host uid a bubblewrap sandbox runs as when PluginBench runs as root.

bubblewrap started by root without a user namespace leaves the sandbox's processes host
uid 0: the kernel's per-user counters (inotify instances and watches, user namespaces,
``RLIMIT_NPROC``...) are then shared with every root process of the host, and an agent
holding 128 inotify instances leaves the host's root none. So root starts bubblewrap as
an unprivileged uid of the sandbox's own (:func:`sandbox_uid`, through ``setpriv``) with
``--unshare-user --uid 0 --gid 0``: the agent still sees uid 0 inside, its counters are
charged to that uid alone, and files it writes are owned by that uid on the host (the
host, root, still reads them).

The uid is one per sandbox, from :data:`UID_BASE` ... ``UID_BASE + UID_COUNT - 1``,
chosen from the sandbox folder's unique name (a CRC, deterministic): sandboxes do not share
counters either, and the range lies above the ranges systemd and ``/etc/subuid`` hand out.
:func:`make_folder` draws another folder name while a live sandbox folder beside it owns
that uid, so two sandboxes under one parent never share one (sandboxes under different
parents could, one chance in 65536: they would share counters with each other, never with
the host). A non-root PluginBench runs bubblewrap as itself, as before.

bubblewrap run as that uid resolves its bind sources as that uid; :mod:`._local_binds`
binds the sandbox folder, the tool folders and the egress folder where it reaches them
(a mount namespace of the sandbox's own), so only what is inside them must be readable by
others (and the egress socket connectable: it is mode 0666).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zlib
from pathlib import Path

from ..errors import EnvironmentFailure

#: first host uid of the sandbox range (above systemd's container range, which ends at 1879048191)
UID_BASE = 1_900_000_000
#: how many uids the range holds
UID_COUNT = 1 << 16
#: bubblewrap's options making a user namespace with uid/gid 0 inside mapped to the caller
USERNS_FLAGS = ("--unshare-user", "--uid", "0", "--gid", "0")


def drops() -> bool:
    """Whether sandboxes run as a uid of their own (only root can start them as another uid)."""
    return os.geteuid() == 0


def sandbox_uid(name: str) -> int:
    """The host uid (and gid) of the sandbox whose folder is called ``name`` (pure)."""
    return UID_BASE + zlib.crc32(name.encode()) % UID_COUNT


#: how many folder names :func:`make_folder` draws before it gives up
MAKE_FOLDER_TRIES = 64


def make_folder(parent: Path, prefix: str, drop: bool) -> Path:
    """A new sandbox folder ``parent/<prefix>-XXXXXXXX``. With ``drop``, owned by its
    :func:`sandbox_uid`, which no other ``pluginbench-*`` folder in ``parent`` owns."""
    if not drop:
        return Path(tempfile.mkdtemp(prefix=prefix + "-", dir=parent))
    taken: set[int] = set()
    with os.scandir(parent) as it:
        for entry in it:
            if entry.name.startswith("pluginbench-"):
                try:
                    taken.add(entry.stat(follow_symlinks=False).st_uid)
                except OSError:
                    continue  # a sandbox closing meanwhile
    for _ in range(MAKE_FOLDER_TRIES):
        root = Path(tempfile.mkdtemp(prefix=prefix + "-", dir=parent))
        uid = sandbox_uid(root.name)
        if uid not in taken:
            os.lchown(root, uid, uid)  # claimed at once: a sandbox starting beside it sees the uid taken
            return root
        root.rmdir()
    raise EnvironmentFailure(f"no sandbox uid left free in {MAKE_FOLDER_TRIES} draws: {len(taken)} sandbox "
                             f"folders in {parent} own uids already; end some runs or remove stale folders")


def setpriv_prefix(uid: int) -> list[str]:
    """argv that runs the rest as ``uid``/``uid`` with no supplementary groups."""
    setpriv = shutil.which("setpriv") or "setpriv"
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]


def chown_tree(path: Path, uid: int) -> None:
    """``path`` and everything under it owned by ``uid`` (symlinks themselves, never followed)."""
    os.lchown(path, uid, uid)
    if path.is_dir() and not path.is_symlink():
        for top, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                os.lchown(os.path.join(top, name), uid, uid)


def chown_down(base: Path, rel: str, uid: int) -> None:
    """Every path from ``base/<first part of rel>`` down to ``base/rel``, and all under it, owned by ``uid``."""
    parts = [p for p in rel.split("/") if p]
    for i in range(1, len(parts)):
        os.lchown(base.joinpath(*parts[:i]), uid, uid)
    chown_tree(base.joinpath(*parts) if parts else base, uid)


#: (sysctl, value that turns unprivileged user namespaces off, the value that turns them on)
USERNS_SYSCTLS = (
    ("kernel.unprivileged_userns_clone", "0", "1"),
    ("user.max_user_namespaces", "0", "65536"),
    ("kernel.apparmor_restrict_unprivileged_userns", "1", "0"),
)


def userns_failure(proc_sys: str = "/proc/sys") -> str | None:
    """Why unprivileged user namespaces are off on this host (the sysctl that says so and
    what to do), or ``None`` when none of :data:`USERNS_SYSCTLS` turns them off."""
    for name, off, on in USERNS_SYSCTLS:
        try:
            value = Path(proc_sys, *name.split(".")).read_text().strip()
        except OSError:
            continue
        if value == off:
            return (f"unprivileged user namespaces are off ({name} = {off}) and local sandboxes run as "
                    f"an unprivileged uid of their own; enable them (sysctl -w {name}={on}) or use "
                    "environment.backend: docker")
    return None
