"""Files removed right after a command, in the command's own bubblewrap launch.

A harness that puts a credential into a sandbox removes it once its CLI ended. A second
sandbox command (``rm -f``) costs a whole launch (cgroup wrapper, prlimit, nsenter,
bwrap); here the command runs under a ``sh`` that removes the files once it exited and
keeps its exit status (``"$@"; s=$?; rm -f -- FILES; exit $s``; a command killed by a
signal gives ``128 + signal`` as bubblewrap itself reports it).

The removal counts only when the host confirms it (:func:`confirmed_absent`), after the
launch ended: with bubblewrap the command's pid namespace ends with it, so no process of
the sandbox is left to put a file back. The agent's code runs under that ``sh`` and may
kill it, make it hang until the deadline, or leave a daemon that writes the file again
after the ``rm``: each leaves the file in place (or the launch unfinished), the host sees
it, and the caller runs its own ``rm`` as before. The host only looks: it never removes
a file inside a sandbox folder, and it follows no symlink an agent could plant.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

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
