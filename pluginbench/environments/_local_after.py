"""Files removed right after a command, in the command's own bubblewrap launch.

A harness that puts a credential into a sandbox removes it once its CLI ended. A second
sandbox command (``rm -f``) costs a whole launch (cgroup wrapper, prlimit, nsenter,
bwrap); here the command runs under a ``sh`` that removes the files once it exited and
keeps its exit status (``"$@"; s=$?; rm -f -- FILES; exit $s``; a command killed by a
signal gives ``128 + signal`` as bubblewrap itself reports it).

The removal counts only when the host confirms it (:func:`confirmed_absent`), after the
launch's pid namespace is gone (:class:`NamespaceWatch`), so no process of the launch is
left to put a file back. bubblewrap's outer process exits as soon as the command did; its
pid 1 inside is killed only then (``--die-with-parent``) and takes the namespace's other
processes with it a moment later, so the end of the launch alone does not say that. The
agent's code runs under that ``sh`` and may kill it, make it hang until the deadline, or
leave a daemon that writes the file again after the ``rm``: each leaves the file in place
(or the launch unfinished), the host sees it, and the caller runs its own ``rm`` as
before. The host only looks: it never removes a file inside a sandbox folder, and it
follows no symlink an agent could plant.
"""

from __future__ import annotations

import json
import os
import select
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio

#: how long the host waits for a launch's pid namespace to be gone once the launch ended
#: (it takes milliseconds; past this, nothing is confirmed and the caller's ``rm`` runs)
NAMESPACE_GONE_SECONDS = 5.0

#: the wrapper's script; ``{files}`` is the shell-quoted list, ``{pwd}`` restores ``PWD``
#: (dash exports one of its own, which the command must not see when it was not given)
_SCRIPT = '{pwd}"$@"; s=$?; rm -f -- {files}; exit "$s"'


def wrapped(argv: Sequence[str], files: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """``argv`` under the ``sh`` that removes ``files`` (sandbox paths) once it exited; the
    command's environment is ``env`` exactly (``PWD`` as given, or none)."""
    script = _SCRIPT.format(pwd=pwd_prefix(env), files=" ".join(shlex.quote(f) for f in files))
    return ["/bin/sh", "-c", script, "pluginbench-after", *argv]


def pwd_prefix(env: Mapping[str, str]) -> str:
    """The ``sh`` words that leave ``PWD`` as ``env`` gives it, or unset (dash exports its own)."""
    return f"PWD={shlex.quote(env['PWD'])}; export PWD; " if "PWD" in env else "unset PWD; "


def confirmed_absent(base: Path, rel: str) -> bool:
    """Whether nothing exists at ``rel`` under the host folder ``base``, every component
    looked up without following a symlink. ``False`` when unsure: a component is a
    symlink or not a folder, or cannot be read (an ``rm -f`` inside is then still due)."""
    parts = [p for p in rel.split("/") if p]
    if not parts:
        return False
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(base, flags)
    except OSError:
        return False
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                return True  # no folder, no file: ``rm -f`` would find nothing either
            except OSError:
                return False  # a symlink (ELOOP), a file (ENOTDIR), unreadable: unsure
            os.close(fd)
            fd = nxt
        try:
            os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return False
    finally:
        os.close(fd)


class NamespaceWatch:
    """Whether every process of one bubblewrap launch's pid namespace is gone.

    bubblewrap writes the host pid of the namespace's pid 1 to ``--info-fd`` before the
    command starts. The kernel reports pid 1's exit (a pidfd turns readable) only after it
    killed and reaped every other process of the namespace, daemons included. :meth:`gone`
    is asked once the launch ended; a pid 1 already reaped is gone. Unsure (no pid read, or
    a pid that another process has taken since: it does not end) is ``False``.
    """

    def __init__(self) -> None:
        # The caller passes write_fd to bubblewrap and closes it after the spawn; it owns
        # the watch and calls close() once the launch is done with.
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)

    def close(self) -> None:
        """Close the read end."""
        os.close(self.read_fd)

    def options(self) -> list[str]:
        """bubblewrap's options that write the pid (pass :attr:`write_fd` and close it after the spawn)."""
        return ["--info-fd", str(self.write_fd)]

    def _pid(self) -> int | None:
        data = b""
        try:
            while chunk := os.read(self.read_fd, 65536):
                data += chunk
        except BlockingIOError:
            pass  # a process may still hold the write end; what bubblewrap wrote is all there
        try:
            pid = json.loads(data)["child-pid"]
        except (ValueError, KeyError, TypeError):
            return None
        return pid if isinstance(pid, int) and pid > 1 else None

    async def gone(self, timeout: float = NAMESPACE_GONE_SECONDS) -> bool:
        """Whether the launch's pid 1 (and so every process it held) has ended, waiting up to ``timeout``."""
        pid = self._pid()
        if pid is None:
            return False
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            return True  # ended and reaped
        except OSError:
            return False
        try:
            deadline = time.monotonic() + timeout
            poll = select.poll()
            poll.register(pidfd, select.POLLIN)
            while not poll.poll(0):
                if time.monotonic() >= deadline:
                    return False
                await anyio.sleep(0.002)
            return True
        finally:
            os.close(pidfd)
