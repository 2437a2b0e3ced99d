"""``run.lock``: who owns a run, proven by a held ``flock`` and a process start time.

The owner writes its pid, process group, start time and run directory into the file
and keeps an exclusive ``flock`` on it for as long as it lives; the kernel drops the
lock when the process dies, however it dies. Readers never trust the file's text alone:
a run is *owned* only while the lock is held **and** the recorded pid still has the
recorded start time (pids are reused).
"""

import errno
import fcntl
import json
import os
from pathlib import Path
from typing import NamedTuple

from ..errors import LockHeldError, RunDirError
from ._log import utc_now

LOCK_NAME = "run.lock"


class Owner(NamedTuple):
    pid: int
    pgid: int
    started_at: str
    start_ticks: int | None
    run_dir: str


def process_start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), else ``None``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name can hold spaces and parentheses; fields resume after the last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[19])


def read_owner_record(run_dir: Path) -> Owner | None:
    """What ``run.lock`` says, whether or not that process is alive."""
    try:
        data = json.loads((run_dir / LOCK_NAME).read_text())
        return Owner(
            pid=int(data["pid"]),
            pgid=int(data["pgid"]),
            started_at=str(data["started_at"]),
            start_ticks=data.get("start_ticks"),
            run_dir=str(data["run_dir"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def lock_is_held(path: Path) -> bool:
    """Whether some process holds a ``flock`` on ``path`` now."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def flock_holders(path: Path) -> set[int] | None:
    """The pids the kernel lists as holding a ``flock`` on ``path`` (``/proc/locks``), or
    None when that cannot be told (no ``/proc/locks``, or the file is not listed there,
    e.g. a holder in another pid namespace)."""
    try:
        st = path.stat()
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    holders: set[int] = set()
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 8364 fe:00:1630227 0 EOF"; "->" marks a waiter
        if len(fields) < 6 or fields[1] != "FLOCK" or "->" in fields[1:3]:
            continue
        try:
            major, minor, inode = fields[5].split(":")
            if (int(major, 16), int(minor, 16), int(inode)) == want:
                holders.add(int(fields[4]))
        except ValueError:
            continue
    return holders or None


def live_owner(run_dir: Path) -> Owner | None:
    """The owner, only when its identity is proven: the lock is held, the recorded pid
    still has the recorded start time (a record without one proves nothing: pids are
    reused), and, where the kernel says who holds the ``flock``, that pid is the holder."""
    path = run_dir / LOCK_NAME
    if not lock_is_held(path):
        return None
    owner = read_owner_record(run_dir)
    if owner is None or owner.start_ticks is None:
        return None
    if process_start_ticks(owner.pid) != owner.start_ticks:
        return None
    holders = flock_holders(path)
    if holders is not None and owner.pid not in holders:
        return None
    return owner


def check_not_moved(run_dir: Path) -> None:
    """Refuse a run whose ``run.lock`` names another directory (it was moved)."""
    record = read_owner_record(run_dir)
    if record is not None and Path(record.run_dir) != run_dir.resolve():
        raise RunDirError(
            f"the run was moved from {record.run_dir}",
            file=str(run_dir / LOCK_NAME),
            fix="a moved run is refused; delete run.lock if you moved it on purpose",
        )


class RunLock:
    """The exclusive lock of one run directory, held by this process until released."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / LOCK_NAME
        self._fd = -1

    def acquire(self) -> Owner:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunDirError(
                f"cannot open run.lock for writing: {exc.strerror or exc}",
                file=str(self.path),
                fix="run.lock must be a file PluginBench can write: remove what stands in its place (it holds "
                "only the owner record)" if exc.errno in (errno.EISDIR, errno.ENXIO, errno.ELOOP)
                else "the run folder must be writable to run, resume, review or measure it (report, status "
                "and events only read); make it writable and try again",
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            owner = read_owner_record(self.run_dir)
            who = f"pid {owner.pid} (started {owner.started_at})" if owner else "another process"
            raise LockHeldError(
                f"the run is owned by {who}",
                file=str(self.path),
                fix=f"wait for it, or stop it with: pluginbench stop {self.run_dir}",
            ) from None
        try:
            check_not_moved(self.run_dir)
        except RunDirError:
            os.close(fd)
            raise
        pid = os.getpid()
        owner = Owner(
            pid=pid,
            pgid=os.getpgid(pid),
            started_at=utc_now(),
            start_ticks=process_start_ticks(pid),
            run_dir=str(self.run_dir.resolve()),
        )
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(owner._asdict(), indent=2).encode() + b"\n", 0)
        os.fsync(fd)
        self._fd = fd
        return owner

    def release(self) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Owner:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
