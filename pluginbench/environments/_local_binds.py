"""Where a sandbox's bubblewrap finds its bind sources once it runs as the sandbox's uid.

bubblewrap started as a sandbox's own uid (:mod:`._local_uid`) resolves every bind source
as that uid: a tool folder under a parent other uids cannot search (the Rust toolchain
under ``/root``, mode 0700), or a sandbox folder under one (pytest's ``/tmp/pytest-of-root``,
which every new pytest session makes 0700 again), is "Permission denied". ``--ro-bind-fd``
does not help: bubblewrap (0.8.0 to 0.11.1) turns ``/proc/self/fd/N`` back into its path
with ``realpath()`` as the unprivileged uid, so the path is walked again.

So root gives every sandbox a mount namespace of its own at its start (``unshare --mount
--propagation slave``). There an empty tmpfs covers :data:`POINT` (an empty root-owned
folder on the host), and root binds, once, the sandbox folder at ``POINT/box``, each tool
folder (resolved) at ``POINT/t<i>`` and the egress folder at ``POINT/e0``. PluginBench keeps
the namespace by a file descriptor (close-on-exec, never passed to a command), and every
command enters it as it drops to the sandbox's uid (``nsenter --mount=/proc/<PluginBench>/fd/<fd>
--setuid N --setgid N``, in place of ``setpriv``); bubblewrap then binds from
:meth:`BindNamespace.source` at the usual places. Only permissions *inside* those folders
still matter, and a tool folder is resolved once per sandbox, not at every command. The
host's mount table never changes; the namespace ends with the descriptor, also when
PluginBench is killed. A tool folder must itself be readable and searchable by other uids
(:func:`uid_problem` says which and what to do before the sandbox starts).
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import EnvironmentFailure

#: the host folder each sandbox's mount namespace covers with a tmpfs holding its bind
#: sources (on the host an empty folder of root's, made at the first sandbox)
POINT = "/tmp/pluginbench-binds"


def unreadable_tool(tools: Sequence[str]) -> tuple[str, str] | None:
    """The first of the tool folders ``tools`` other uids cannot read and search: what is
    wrong, and the command that fixes it; or ``None``."""
    for folder in tools:
        real = os.path.realpath(folder)
        mode = os.stat(real).st_mode
        if mode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
            return (f"the tool folder {real} (mode {stat.S_IMODE(mode):04o}) is not readable by other uids, and "
                    "sandboxes run as a uid of their own that only sees what others may", f"chmod -R o+rX {real}")
    return None


def uid_problem(tools: Sequence[str]) -> str | None:
    """Why a sandbox with the tool folders ``tools`` cannot run as a uid of its own (what
    to change), or ``None``."""
    found = unreadable_tool(tools)
    return f"{found[0]}; {found[1]}" if found is not None else None


def ensure_point(point: str = POINT) -> None:
    """``point`` exists as a folder of root's that no one else may write (made if missing)."""
    try:
        os.mkdir(point, 0o755)
    except FileExistsError:
        pass
    except OSError as exc:
        raise EnvironmentFailure(f"cannot make {point}, where sandboxes find their folders: {exc}") from exc
    st = os.lstat(point)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise EnvironmentFailure(
            f"{point} must be a folder of root's that only root may write (sandboxes mount their folders "
            f"over it); it is not (mode {stat.S_IMODE(st.st_mode):04o}, owner uid {st.st_uid}); remove it")


def plan(folder: str, tools: Sequence[str], others: Sequence[str], point: str = POINT) -> dict[str, str]:
    """Host folder -> its path under ``point``: the sandbox ``folder``, the ``others``, and each tool
    folder (given and resolved path alike, one place per resolved folder); pure but for resolving."""
    moves = {folder: f"{point}/box"}
    moves.update({other: f"{point}/e{i}" for i, other in enumerate(others)})
    reals: dict[str, str] = {}
    for tool in tools:
        real = os.path.realpath(tool)
        reals.setdefault(real, f"{point}/t{len(reals)}")
        moves[tool] = reals[real]
    return moves


def moved(moves: Mapping[str, str], host: str) -> str:
    """Where host path ``host`` is in the namespace of ``moves`` (unchanged when under no moved folder)."""
    for folder, there in sorted(moves.items(), key=lambda m: len(m[0]), reverse=True):
        if host == folder or host.startswith(folder.rstrip("/") + "/"):
            return there + host[len(folder):]
    return host


class BindNamespace:
    """The mount namespace of one sandbox (see the module docstring); ``moves`` maps each
    host folder bound there to its path there."""

    def __init__(self, fd: int, moves: Mapping[str, str]) -> None:
        self.fd = fd
        self.moves = dict(moves)

    def source(self, host: str) -> str:
        """The path of host path ``host`` in this namespace."""
        return moved(self.moves, host)

    @classmethod
    def create(cls, folder: Path, tools: Sequence[str], others: Sequence[str], point: str = POINT) -> BindNamespace:
        """The namespace for the sandbox folder ``folder``, its tool folders ``tools`` and the other
        folders its commands bind (the egress folder)."""
        ensure_point(point)
        moves = plan(str(folder), tools, others, point)
        mounts = {os.path.realpath(host): there for host, there in moves.items()}
        q = shlex.quote
        script = "\n".join([
            "set -e",
            f"mount -t tmpfs -o mode=0755,size=64k,nosuid,nodev,noexec pluginbench-binds {q(point)}",
            f"mkdir -- {' '.join(q(m) for m in mounts.values())}",
            *(f"mount --no-canonicalize --rbind -- {q(src)} {q(dst)}" for src, dst in mounts.items()),
            "echo ready",
            "read _ || true",
        ])
        unshare = shutil.which("unshare") or "unshare"
        argv = [unshare, "--mount", "--propagation", "slave", "--", "sh", "-c", script]
        try:
            holder = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env={"PATH": os.environ.get("PATH", os.defpath)}, start_new_session=True)
        except OSError as exc:
            raise EnvironmentFailure(f"cannot make the sandbox's mount namespace ({unshare}): {exc}") from exc
        assert holder.stdin is not None and holder.stdout is not None and holder.stderr is not None
        fd = -1
        try:
            if holder.stdout.readline() == b"ready\n":
                fd = os.open(f"/proc/{holder.pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            holder.stdin.close()
            said = holder.stderr.read().decode("utf-8", "replace").strip()
            holder.wait()
            holder.stdout.close()
            holder.stderr.close()
        if fd < 0:
            raise EnvironmentFailure(
                f"cannot bind the sandbox's folders ({', '.join(mounts)}) in a mount namespace of its own "
                f"for its uid: {said or f'{unshare} exited {holder.returncode}'}")
        return cls(fd, moves)

    def enter_prefix(self, uid: int, cwd: str) -> list[str]:
        """argv that runs the rest in this namespace as ``uid``/``uid`` without supplementary groups,
        in the host folder ``cwd`` (nsenter opens it as root, before it enters)."""
        nsenter = shutil.which("nsenter") or "nsenter"
        return [nsenter, f"--mount=/proc/{os.getpid()}/fd/{self.fd}", f"--wd={cwd}", f"--setuid={uid}",
                f"--setgid={uid}", "--"]

    def close(self) -> None:
        """Let the namespace go (its binds with it once no command is left in it)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


__all__ = ["POINT", "BindNamespace", "ensure_point", "moved", "plan", "uid_problem", "unreadable_tool"]
