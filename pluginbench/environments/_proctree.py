"""Find and kill process trees through ``/proc`` (Linux).

A tree is the root, its descendants by parent pid, and every process of its session or
process group (the root is started in a new session). Members are frozen with SIGSTOP
until the set stops growing, so nothing forks away between the look and the kill, and
only then killed with SIGKILL; after the kill the session and group are swept again, for a
child forked while its parent's SIGSTOP was still pending. A process that double-forks and leaves the session before
we look escapes this walk; unisolated sandboxes also sweep by marker (:func:`marked`),
and bubblewrap sandboxes live in their own pid namespace, which dies with its init.
"""

import contextlib
import os
import signal
from collections.abc import Iterable
from typing import NamedTuple


class ProcInfo(NamedTuple):
    pid: int
    ppid: int
    pgrp: int
    session: int
    state: str


def _read_stat(pid: int) -> ProcInfo | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name may hold spaces and parentheses: split after the last ')'.
    rest = raw[raw.rfind(")") + 2 :].split()
    if len(rest) < 4:
        return None
    return ProcInfo(pid, int(rest[1]), int(rest[2]), int(rest[3]), rest[0])


def snapshot() -> dict[int, ProcInfo]:
    """Every visible process, by pid."""
    procs: dict[int, ProcInfo] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _read_stat(int(name))
            if info is not None:
                procs[info.pid] = info
    return procs


def _ancestors(procs: dict[int, ProcInfo], pid: int) -> set[int]:
    out: set[int] = set()
    while pid in procs and pid not in out and pid > 1:
        out.add(pid)
        pid = procs[pid].ppid
    return out


def tree(procs: dict[int, ProcInfo], root: int, *, with_session: bool = True) -> set[int]:
    """``root``, its descendants and (``with_session``) its session and process group.

    Pure apart from excluding the calling process and its ancestors, which are never
    part of a sandbox.
    """
    members: set[int] = set()
    if with_session:
        members = {p.pid for p in procs.values() if p.session == root or p.pgrp == root}
    if root in procs:
        members.add(root)
    children: dict[int, list[int]] = {}
    for p in procs.values():
        children.setdefault(p.ppid, []).append(p.pid)
    stack = list(members)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in members:
                members.add(child)
                stack.append(child)
    return members - _ancestors(procs, os.getpid())


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def kill_trees(roots: Iterable[int], extra: Iterable[int] = ()) -> set[int]:
    """Freeze then SIGKILL the trees of ``roots`` plus ``extra`` pids; return the victims."""
    roots = list(roots)
    victims: set[int] = set(extra)
    for pid in victims:
        _signal(pid, signal.SIGSTOP)
    for _ in range(50):
        procs = snapshot()
        found: set[int] = set()
        for root in roots:
            found |= tree(procs, root)
        for pid in list(victims):
            found |= tree(procs, pid, with_session=False)  # descendants of the extras
        new = found - victims
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        victims |= new
    for pid in victims:
        _signal(pid, signal.SIGKILL)
    # A member that was inside fork() when its SIGSTOP arrived can still bring a child
    # into the session after the last look; the child keeps the session and process
    # group, so sweep them until nothing alive is left in them (seen on a loaded host).
    for _ in range(50):
        procs = snapshot()
        late = {pid for root in roots for pid in tree(procs, root) if procs[pid].state not in ("Z", "X")} - victims
        if not late:
            break
        for pid in late:
            _signal(pid, signal.SIGKILL)
        victims |= late
    return victims


def alive(pids: Iterable[int]) -> set[int]:
    """Those of ``pids`` that still exist and are not zombies."""
    out: set[int] = set()
    for pid in pids:
        info = _read_stat(pid)
        if info is not None and info.state not in ("Z", "X"):
            out.add(pid)
    return out


def marked(env_marker: bytes) -> set[int]:
    """Processes whose environment holds the exact entry ``env_marker`` (``K=V``).

    Only the environment counts, not the cwd: a user's shell that merely entered a
    sandbox folder was not started by us and is never killed.
    """
    me = os.getpid()
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if env_marker in fh.read().split(b"\0"):
                    found.add(int(name))
        except OSError:
            continue
    return found
