"""Resource limits per sandbox: memory, CPUs, processes and disk.

:class:`Limits` is what a sandbox may use, from the task's ``[environment]`` settings
(``memory_mb``, ``cpus``, ``storage_mb``, PluginBench's ``pids_limit``) with the defaults
below; :func:`limits_of` builds it (pure). Every backend enforces it and says how
(:attr:`Limits.describe` plus the backend's mechanism, recorded in ``execution.json``):

* **local, as root with a cgroup file system**: one cgroup per sandbox (v2 under
  ``/sys/fs/cgroup/pluginbench/``, v1 under the worker's own cgroup of the ``memory``,
  ``pids`` and, with a CPU cap, ``cpu`` hierarchies) with ``memory.max`` (swap off),
  ``pids.max`` and ``cpu.max``; every command of the sandbox starts inside it
  (:class:`Cgroup`). Without a CPU cap the sandbox stays in the worker's CPU group: a
  group of its own would weigh as one task against every other task of the host, and
  on a busy host each command waited several times its CPU time for a turn. A
  breach (an OOM kill, a refused fork) is read from the cgroup's own event counters,
  which nothing in the sandbox can write, and ends the sandbox's commands at once.
* **local otherwise**: ``prlimit`` per process (``RLIMIT_AS`` for memory; ``RLIMIT_NPROC``
  only for a non-root user, since it counts every process of the uid): weaker (per
  process, not per sandbox) and a breach is not detected; the mechanism says so.
* **docker**: the container's ``Memory`` (swap off), ``NanoCpus`` and ``PidsLimit``; an
  OOM kill is read from the container's state.
* **disk, every backend**: the exported working tree is bounded by ``storage_mb`` in
  apparent size (a sparse 1.5 GiB file counts 1.5 GiB), so it can never become a huge run
  folder, patch or cache entry, and so is everything ``get()`` copies out. No single file
  a sandbox process writes may be bigger than ``storage_mb``: ``RLIMIT_FSIZE`` (soft and
  hard; ``prlimit`` locally, the container's ``Ulimits`` on docker), so the kernel
  refuses a ``fallocate`` of the host's free disk at once (``EFBIG``). The local backend
  also checks the sandbox folder's allocated size every 5 s while commands run. Every
  entry (file, folder, link, FIFO) counts at least :data:`ENTRY_BYTES`, one file system
  block, so empty files cannot use up the host's inodes under the bound: a sandbox holds
  at most ``storage_mb`` × 256 entries (the 10 GiB default: about 2.6 million). What
  remains: many files each under the bound add up past it, on the local backend until
  that check ends the sandbox, on docker until the same 5-second check of the container's
  writable layer kills the command (a local engine; a remote one's until the export)
  (neither host file system here has a per-folder quota: an ext4 overlay2 takes no
  ``StorageOpt`` size).
* **output**: a command's output streamed to a host file stops at ``storage_mb`` or
  :data:`OUTPUT_FILE_BYTES`, the smaller (:class:`CappedFile`; :func:`output_file_cap`);
  output kept in memory at :data:`IN_MEMORY_OUTPUT_BYTES` (:class:`CappedBuffer`, head
  and tail kept).

A breach ends the attempt with the execution outcome ``resource_limit`` and the reason
(see docs/architecture.md, "Limits"); it is never a host outage.
"""

import contextlib
import io
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

#: defaults when a task declares nothing (Harbor's historical defaults for disk)
DEFAULT_MEMORY_MB = 8192
DEFAULT_PIDS = 4096
DEFAULT_STORAGE_MB = 10240


class Limits(NamedTuple):
    """What one sandbox may use; ``cpus`` None means no CPU cap."""

    memory_mb: int = DEFAULT_MEMORY_MB
    cpus: float | None = None
    pids: int = DEFAULT_PIDS
    storage_mb: int = DEFAULT_STORAGE_MB

    def describe(self) -> dict[str, object]:
        return {"memory_mb": self.memory_mb, "cpus": self.cpus, "pids": self.pids, "storage_mb": self.storage_mb}


def limits_of(memory_mb: int | None, cpus: float | None, pids: int | None, storage_mb: int | None) -> Limits:
    """The limits for declared values, each falling back to its default (pure)."""
    return Limits(memory_mb or DEFAULT_MEMORY_MB, cpus, pids or DEFAULT_PIDS, storage_mb or DEFAULT_STORAGE_MB)


def task_limits(memory_mb: int | None, cpus: float | None, pids: int | None, storage_mb: int | None,
                container_cpus: float | None = None, container_memory_mb: int | None = None) -> Limits:
    """A task's sandbox limits: the config's ``environment.container_*`` override the
    task's declaration, as the docker backend applies them (pure)."""
    return limits_of(container_memory_mb if container_memory_mb is not None else memory_mb,
                     container_cpus if container_cpus is not None else cpus, pids, storage_mb)


PID_MAX_FILE = "/proc/sys/kernel/pid_max"


def pids_fit(jobs: int, pids: int, pid_max: int) -> str | None:
    """Why ``jobs`` sandboxes of ``pids`` processes each do not fit under the kernel's
    ``pid_max`` (every pid of the host comes from it), or ``None`` when they do (pure)."""
    if jobs * pids < pid_max:
        return None
    return (f"{jobs} jobs x {pids} processes per sandbox = {jobs * pids} is not under the kernel's "
            f"pid_max ({pid_max}, {PID_MAX_FILE}): sandboxes at their process limit would leave "
            "the host no pids; lower jobs, or raise kernel.pid_max (sysctl -w kernel.pid_max=4194304)")


def read_pid_max(path: str = PID_MAX_FILE) -> int | None:
    """The kernel's ``pid_max``, ``None`` when it cannot be read."""
    try:
        with open(path) as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None


#: What every entry under a sandbox's storage bound counts at least (one file system
#: block): an empty file, a folder or a link takes an inode of the host's, not bytes.
ENTRY_BYTES = 4096


def tree_bytes(root: Path, *, allocated: bool = False, stop_above: int | None = None) -> int:
    """The size of the entries under ``root`` (never following a symlink): apparent sizes,
    or with ``allocated`` the blocks on disk; every entry counts at least
    :data:`ENTRY_BYTES`. Stops counting once past ``stop_above``."""
    total = 0
    stack = [str(root)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                            total += ENTRY_BYTES
                        elif entry.is_file(follow_symlinks=False):
                            st = entry.stat(follow_symlinks=False)
                            total += max(st.st_blocks * 512 if allocated else st.st_size, ENTRY_BYTES)
                        else:  # a link, FIFO, socket or device node: an inode, no data
                            total += ENTRY_BYTES
                    except OSError:
                        continue
                    if stop_above is not None and total > stop_above:
                        return total
        except OSError:
            continue
    return total


def over_storage(root: Path, limits: Limits) -> str | None:
    """The reason ``root`` (an exported tree) exceeds the disk bound, or None."""
    bound = limits.storage_mb * 1024 * 1024
    size = tree_bytes(root, stop_above=bound)
    if size > bound:
        return f"disk: the working tree is over the {limits.storage_mb} MB storage bound (storage_mb)"
    return None


_ROOT = Path("/sys/fs/cgroup")


def _controllers(limits: Limits) -> tuple[str, ...]:
    """The cgroup controllers a sandbox with ``limits`` joins: ``cpu`` only for a CPU cap."""
    return ("memory", "pids", "cpu") if limits.cpus else ("memory", "pids")


class Cgroup:
    """One sandbox's cgroup (v2, or v1's memory/pids/cpu hierarchies); see the module docstring."""

    def __init__(self, dirs: dict[str, Path], version: int, limits: Limits) -> None:
        self.dirs = dirs  # controller ("memory", "pids", "cpu", or "" for v2) -> folder
        self.version = version
        self.limits = limits
        self._seen: list[str] = []

    @property
    def mechanism(self) -> str:
        return f"cgroup v{self.version}"

    @classmethod
    def create(cls, name: str, limits: Limits, root: Path = _ROOT) -> "Cgroup | None":
        """A fresh cgroup for ``name`` with ``limits`` written, or None when this process
        cannot make one (not root, no writable cgroup file system, a controller missing)."""
        if os.geteuid() != 0:
            return None
        try:
            if (root / "cgroup.controllers").is_file():
                return cls._create_v2(name, limits, root)
            return cls._create_v1(name, limits, root)
        except OSError:
            return None

    @classmethod
    def _create_v2(cls, name: str, limits: Limits, root: Path) -> "Cgroup | None":
        wanted = _controllers(limits)
        if not set(wanted) <= set((root / "cgroup.controllers").read_text().split()):
            return None
        parent = root / "pluginbench"
        enable = " ".join("+" + c for c in wanted)
        (root / "cgroup.subtree_control").write_text(enable)
        parent.mkdir(exist_ok=True)
        (parent / "cgroup.subtree_control").write_text(enable)
        folder = parent / name
        folder.mkdir()
        box = cls({"": folder}, 2, limits)
        try:
            (folder / "memory.max").write_text(str(limits.memory_mb * 1024 * 1024))
            with contextlib.suppress(OSError):
                (folder / "memory.swap.max").write_text("0")
            (folder / "pids.max").write_text(str(limits.pids))
            if limits.cpus:
                (folder / "cpu.max").write_text(f"{int(limits.cpus * 100000)} 100000")
        except OSError:
            box.remove()
            return None
        return box

    @classmethod
    def _create_v1(cls, name: str, limits: Limits, root: Path) -> "Cgroup | None":
        own = _own_v1_paths()
        dirs: dict[str, Path] = {}
        for controller in _controllers(limits):
            base = root / controller
            if not (base / "cgroup.procs").is_file() or controller not in own:
                return None
            dirs[controller] = base / own[controller].lstrip("/") / "pluginbench" / name
        box = cls(dirs, 1, limits)
        try:
            for folder in dirs.values():
                folder.mkdir(parents=True)
            mem = dirs["memory"]
            (mem / "memory.limit_in_bytes").write_text(str(limits.memory_mb * 1024 * 1024))
            with contextlib.suppress(OSError):  # absent without swap accounting
                (mem / "memory.memsw.limit_in_bytes").write_text(str(limits.memory_mb * 1024 * 1024))
            (dirs["pids"] / "pids.max").write_text(str(limits.pids))
            if limits.cpus:
                (dirs["cpu"] / "cpu.cfs_period_us").write_text("100000")
                (dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(int(limits.cpus * 100000)))
        except OSError:
            box.remove()
            return None
        return box

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` started inside this cgroup (a shell joins it, then execs the command)."""
        procs = [str(d / "cgroup.procs") for d in self.dirs.values()]
        # The shell exports PWD (the sandbox's host folder); unset it so the sandbox's
        # PID 1 (bubblewrap, exec'd from here) shows no host path in its environment.
        join = ('n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; '
                'unset PWD OLDPWD; exec "$@"')
        return ["/bin/sh", "-c", join, "pluginbench-cgroup", str(len(procs)), *procs, *argv]

    def _read(self, controller: str, name: str) -> str:
        folder = self.dirs.get(controller if self.version == 1 else "")
        if folder is None:
            return ""
        try:
            return (folder / name).read_text()
        except OSError:
            return ""

    def breaches(self) -> list[str]:
        """Every limit hit so far (cumulative, one reason each), from the kernel's counters."""
        found = []
        if self.version == 2:
            mem, pids = _counter(self._read("", "memory.events"), "oom_kill"), _counter(self._read("", "pids.events"), "max")
        else:
            mem = _counter(self._read("memory", "memory.oom_control"), "oom_kill")
            pids = _counter(self._read("pids", "pids.events"), "max")
        if mem:
            found.append(f"memory: a process was killed at the {self.limits.memory_mb} MB limit (memory_mb)")
        if pids:
            found.append(f"processes: a fork was refused at the {self.limits.pids} process limit (pids_limit)")
        return found

    def pids(self) -> set[int]:
        out: set[int] = set()
        for folder in self.dirs.values():
            with contextlib.suppress(OSError, ValueError):
                out |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        return out

    def kill(self) -> None:
        """SIGKILL every process in the cgroup (v2's ``cgroup.kill`` where there is one)."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                (self.dirs[""] / "cgroup.kill").write_text("1")
                return
        for _ in range(20):  # a fork bomb refills the list while it is read
            left = self.pids()
            if not left:
                return
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self, wait: float = 10.0) -> None:
        """Kill what is left and remove the cgroup folders, waiting up to ``wait`` seconds
        for killed processes to be reaped (a folder with a process in it cannot go)."""
        import time

        deadline = time.monotonic() + wait
        left = list(self.dirs.values())
        while left:
            for folder in list(left):
                try:
                    folder.rmdir()
                    left.remove(folder)
                except FileNotFoundError:
                    left.remove(folder)
                except OSError:
                    pass
            if not left or time.monotonic() > deadline:
                return
            self.kill()
            time.sleep(0.05)


def remove_left_behind(prefix: str, root: Path = _ROOT) -> list[str]:
    """Kill and remove every sandbox cgroup whose name starts with ``prefix`` (what a
    killed worker left: its sandboxes never reached their own cleanup); their paths."""
    own = _own_v1_paths()
    parents = [root / "pluginbench"] + [root / c / own.get(c, "/").lstrip("/") / "pluginbench"
                                        for c in ("memory", "pids", "cpu")]
    removed = []
    for parent in parents:
        with contextlib.suppress(OSError):
            for folder in sorted(parent.iterdir()):
                if folder.is_dir() and folder.name.startswith(prefix):
                    box = Cgroup({"": folder} if parent == root / "pluginbench" else {"x": folder}, 1, Limits())
                    box.remove(wait=5.0)
                    if not folder.exists():
                        removed.append(str(folder))
    return removed


def _counter(text: str, key: str) -> int:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return 0


def _own_v1_paths() -> dict[str, str]:
    """This process's cgroup path in each v1 hierarchy (``/proc/self/cgroup``)."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                if controller:
                    out[controller] = parts[2]
    return out


def fsize_prefix(limits: Limits) -> list[str]:
    """The ``prlimit`` prefix that caps every file a sandbox process writes at the storage
    bound (``RLIMIT_FSIZE``, soft and hard: a process cannot raise it, not even as root in
    its user namespace): the kernel refuses a bigger ``fallocate`` (``EFBIG``) or write
    (``SIGXFSZ``) at once, where the size check of :func:`._local_launch.watch_limits`
    runs every few seconds. Per file, not per sandbox: many files below the bound can
    still add up past it until that check ends the sandbox. Empty without ``prlimit``."""
    import shutil

    tool = shutil.which("prlimit")
    return [tool, f"--fsize={limits.storage_mb * 1024 * 1024}", "--"] if tool else []


#: the mechanism label's part for the disk bound of the local backend
LOCAL_DISK_MECHANISM = "disk: RLIMIT_FSIZE per file, the sandbox folder's size checked every 5 s, export size bound"


def rlimit_prefix(limits: Limits) -> tuple[list[str], str]:
    """The ``prlimit`` prefix of the fallback (no cgroup) and its mechanism label; an
    empty prefix when ``prlimit`` is missing. It caps file sizes too (:func:`fsize_prefix`)."""
    import shutil

    tool = shutil.which("prlimit")
    if tool is None:
        return [], "none (no cgroup and no prlimit: limits are not enforced)"
    args = [tool, f"--as={limits.memory_mb * 1024 * 1024}", f"--fsize={limits.storage_mb * 1024 * 1024}"]
    label = "prlimit RLIMIT_AS per process"
    if os.geteuid() != 0:
        args.append(f"--nproc={limits.pids}")
        label += ", RLIMIT_NPROC per user"
    return [*args, "--"], label + " (no cgroup: weaker than per-sandbox limits; a breach is not detected)"


#: What one stream of a command's output kept in memory (not streamed to a file) may hold:
#: half from its start, half from its end. A command in a sandbox can print without end,
#: and every byte kept would be host memory.
IN_MEMORY_OUTPUT_BYTES = 16 * 1024 * 1024

#: the most bytes of one command's output a host file keeps. The host parses such files
#: (a CLI's event stream), and a process in the sandbox can write to the command's output
#: (``/proc/<pid>/fd/1``) as fast as the host reads: at the 10 GiB storage default, a
#: stream that size would be read into the host's memory. A real session's stream is tens
#: of megabytes.
OUTPUT_FILE_BYTES = 256 * 1024 * 1024


def output_file_cap(limits: Limits) -> int:
    """The bytes a command's output file keeps: ``storage_mb`` or :data:`OUTPUT_FILE_BYTES`."""
    return min(limits.storage_mb * 1024 * 1024, OUTPUT_FILE_BYTES)


class CappedBuffer:
    """A command's output kept in memory, bounded at ``limit`` bytes: the first half and
    the last half are kept, and what was left out of the middle is replaced by one line
    saying how much (``bytes(buffer)``). Output within the bound comes back unchanged."""

    def __init__(self, limit: int = IN_MEMORY_OUTPUT_BYTES) -> None:
        self.limit = limit
        self._head_room = limit // 2
        self._tail_room = limit - self._head_room
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def extend(self, data: bytes | bytearray | memoryview) -> None:
        chunk = memoryview(data).cast("B")
        self.total += len(chunk)
        room = self._head_room - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk[-self._tail_room:] if len(chunk) > self._tail_room else chunk
            over = len(self._tail) - self._tail_room
            if over > 0:
                del self._tail[:over]

    def __iadd__(self, data: bytes | bytearray | memoryview) -> "CappedBuffer":
        self.extend(data)
        return self

    @property
    def cut(self) -> bool:
        return self.total > self.limit

    def __bytes__(self) -> bytes:
        if not self.cut:
            return bytes(self._head + self._tail)
        left_out = self.total - len(self._head) - len(self._tail)
        marker = (f"\n[pluginbench: output cut: {left_out} bytes left out of the middle "
                  f"(output kept in memory is bounded at {self.limit} bytes)]\n").encode()
        return bytes(self._head) + marker + bytes(self._tail)


class CappedFile(io.FileIO):
    """A host file a command's output pipe is written to, holding at most ``limit`` bytes
    and then one line saying it was cut: a process in the sandbox can write to the pipe
    (through ``/proc/<pid>/fd/1``) as fast as the host reads, and the evidence file must
    not fill the host's disk. Later bytes are read and dropped, so the writer never blocks."""

    def __init__(self, path: Path | str, limit: int) -> None:
        super().__init__(path, "wb")
        self.limit = limit
        self.written = 0
        self.cut = False

    def write(self, data: object) -> int:
        chunk = memoryview(data).cast("B")  # type: ignore[arg-type]  # any buffer, as FileIO.write takes
        room = self.limit - self.written
        if room > 0:
            part = chunk[:room]
            while part:
                n = super().write(part) or 0
                part = part[n:]
                self.written += n
        if len(chunk) > max(room, 0) and not self.cut:
            self.cut = True
            bound = "the storage bound, storage_mb" if self.limit < OUTPUT_FILE_BYTES else "the output file bound"
            super().write(f"\n[pluginbench: output cut at {self.limit} bytes ({bound})]\n".encode())
        return len(chunk)

