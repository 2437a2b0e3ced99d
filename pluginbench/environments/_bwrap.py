"""Bubblewrap: a cached usability probe and the argv prefix of one sandbox.

The mount layout is a pure function of the host's top-level entries, the host's ``/etc``
entries, the sandbox's own folders, the tool folders and the hidden paths, so it is
tested without starting anything.

Layout, default-deny: the root is an empty tmpfs and only what the agent's tools need
is bound read-only at the same path:

* the system tool and library folders (:data:`SYSTEM_DIRS`: ``/usr``, ``/bin``,
  ``/lib*`` ...; top-level symlinks such as ``/bin -> usr/bin`` on merged-/usr systems
  are recreated as symlinks),
* the few ``/etc`` entries name resolution, TLS, users, the dynamic linker, Debian's
  alternatives and the language runtimes read (:data:`ETC_ENTRIES`), in an ``/etc`` of
  its own that is read-only: the folders bound, the small regular files copied in
  (:func:`etc_copies`; a bind mount each made two dozen mounts per command),
* the tool folders a harness names (``readonly``: the pinned CLI install),

``/proc`` and ``/dev`` are fresh, and the sandbox folders are bound read-write (``/tmp``
is the sandbox's own ``tmp/`` folder). Inside the fresh ``/proc`` the kernel knobs are
read-only (:data:`PROC_READ_ONLY`: ``/proc/sys``, ``sysrq-trigger`` ...; bubblewrap run by
root would leave ``/proc/sys/kernel/core_pattern`` writable, which is host root) and the
kernel-wide files Docker masks are ``/dev/null`` (:data:`PROC_MASKED`). Nothing else of the host exists inside: no
``/srv``, ``/opt``, ``/var``, ``/home``, ``/root``, ``/run``, ``/sys``, no run or cache
folder, no task or treatment source. A hidden path that still falls under a bound folder
(say a cache inside the CLI install) is covered by an empty tmpfs (a file by
``/dev/null``). Every capability is dropped: bubblewrap run by root keeps them
otherwise, and a root process with ``CAP_SYS_ADMIN`` could unmount the tmpfs that hides
a path.

Every sandbox has its own network namespace (``--unshare-net``: loopback only); its one
way out, when its policy has one, is the egress folder bound read-only at
:data:`._egress.INSIDE_DIR` (see :mod:`._egress`). A seccomp filter (:mod:`._seccomp`,
passed by the caller as ``--seccomp FD``) refuses the kernel keyring and the
namespace/mount calls. The caller passes all these options through ``--args FD``, so
the sandbox's ``/proc/1/cmdline`` (bubblewrap's own) names no host path.
"""

import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from ._egress import INSIDE_DIR
from ._local_uid import UID_BASE, USERNS_FLAGS, drops, setpriv_prefix, userns_failure

#: Top-level host folders bound read-only (or recreated as symlinks): tools and libraries.
SYSTEM_DIRS = frozenset({"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"})

#: ``/etc`` entries bound read-only (shell patterns): users and groups, name resolution,
#: CA certificates, time zone, the dynamic linker, Debian's alternatives (``/usr/bin/awk``
#: and friends point there), OS identity, MIME/magic data and the Python/Java runtime
#: configuration. Everything else in ``/etc`` (ssh keys, shadow, package-manager and
#: service configuration) stays out.
ETC_ENTRIES = (
    "passwd", "group", "nsswitch.conf", "hosts", "host.conf", "resolv.conf", "gai.conf",
    "services", "protocols", "networks", "ssl", "ca-certificates", "ca-certificates.conf",
    "pki", "crypto-policies", "localtime", "timezone", "ld.so.cache", "ld.so.conf",
    "ld.so.conf.d", "alternatives", "os-release", "debian_version", "mime.types", "magic",
    "magic.mime", "locale.alias", "shells", "terminfo", "python3*", "java-*",
)

#: :data:`ETC_ENTRIES` as exact names and name prefixes (each pattern is a name or a name
#: ending in one ``*``): a set lookup per name, where matching 150 names against 31 shell
#: patterns one by one was most of the host's CPU per command, and compiling them into one
#: regular expression cost every run ~1.5 ms at start-up
_ETC_NAMES = frozenset(p for p in ETC_ENTRIES if "*" not in p)
_ETC_PREFIXES = tuple(p[:-1] for p in ETC_ENTRIES if "*" in p)

# Top-level names that are the sandbox's own mount points or fresh file systems; a
# workdir there would collide.
SANDBOX_MOUNTS = frozenset(
    {"proc", "dev", "sys", "tmp", "home", "tests", "solution", "logs", "etc", "run"}
)

#: ``/proc`` entries made read-only over the fresh ``/proc`` (Docker's read-only paths)
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
#: ``/proc`` files covered by ``/dev/null`` (Docker's masked files)
PROC_MASKED = ("/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
               "/proc/latency_stats")

NAMESPACE_FLAGS = (
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",  # /proc/self/cgroup names no host cgroup path
    "--unshare-net",
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


def host_etc(etc: str = "/etc") -> list[str]:
    """The names in the host's ``/etc`` that :data:`ETC_ENTRIES` allows, sorted."""
    try:
        names = os.listdir(etc)
    except OSError:
        return []
    return sorted(n for n in names if n in _ETC_NAMES or n.startswith(_ETC_PREFIXES))


#: an allowed ``/etc`` file larger than this is bound rather than copied
ETC_COPY_LIMIT = 1 << 20


def etc_copies(names: Sequence[str], etc: str = "/etc") -> dict[str, bytes]:
    """The contents of those ``names`` in ``etc`` that are readable regular files (a
    symlink followed, as a bind follows it) of at most :data:`ETC_COPY_LIMIT` bytes.

    Each becomes a file of the sandbox's read-only ``/etc`` (``--file``) instead of a
    bind mount: every bind costs bubblewrap a pass over the mount table, and the two
    dozen ``/etc`` files were a third of a command's start. The rest stay binds."""
    out: dict[str, bytes] = {}
    for name in names:
        path = os.path.join(etc, name)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                continue
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue  # swapped for a FIFO or device since the stat
                data = os.read(fd, ETC_COPY_LIMIT + 1)
            finally:
                os.close(fd)
        except OSError:
            continue
        if len(data) <= ETC_COPY_LIMIT:
            out[name] = data
    return out


class HostLayout(NamedTuple):
    """The host listings a sandbox's layout is built from, read once per sandbox."""

    top: list[TopEntry]
    readonly: list[str]
    etc: list[str]
    etc_files: dict[str, bytes]
    proc_entries: list[str]


def read_host_layout(readonly: Sequence[str]) -> HostLayout:
    """:class:`HostLayout` of this host for the tool folders ``readonly``."""
    etc = host_etc()
    return HostLayout(host_top_level(), list(readonly), etc, etc_copies(etc), host_proc_entries())


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root + "/") or root == "/"


def bound_read_only(
    top: Sequence[TopEntry], etc: Sequence[str], readonly: Sequence[str]
) -> list[str]:
    """Every host path bound read-only inside, in mount order."""
    paths = ["/" + t.name for t in top if t.name in SYSTEM_DIRS and t.link is None and t.is_dir]
    paths += ["/etc/" + n for n in etc]
    paths += [p for p in readonly if not any(_under(p, q) for q in paths)]
    return paths


def visible_inside(path: str, bound: Sequence[str]) -> bool:
    """Whether host ``path`` (absolute, symlinks resolved) is reachable through a read-only bind."""
    return any(_under(path, b) for b in bound)


def bwrap_args(
    top: Sequence[TopEntry],
    binds: Sequence[Bind],
    hidden: Sequence[Hidden],
    *,
    chdir: str,
    readonly: Sequence[str] = (),
    etc: Sequence[str] = (),
    egress_dir: str | None = None,
    proc_entries: Sequence[str] = (*PROC_READ_ONLY, *PROC_MASKED),
    etc_files: Sequence[tuple[str, int]] = (),
    userns: bool = False,
    sources: Mapping[str, str] | None = None,
) -> list[str]:
    """Options for ``bwrap`` (without the executable and the ``--`` command).

    ``egress_dir`` (a host folder) is bound read-only at :data:`._egress.INSIDE_DIR`;
    ``proc_entries`` are the entries of :data:`PROC_READ_ONLY`/:data:`PROC_MASKED` the
    host has (a missing one cannot be bound). ``/etc`` is a fresh tmpfs, read-only once
    everything is mounted, holding the ``etc`` entries: those named in ``etc_files`` as
    copies read from the paired file descriptor (``--file``), the others bound.
    ``sources`` names another host path to bind a tool folder from (its mount point in
    :class:`._local_binds.BindNamespace`); the folder still appears at its own path.
    """
    args: list[str] = ["--tmpfs", "/"]
    for t in top:
        if t.name in SYSTEM_DIRS and t.link is not None:
            args += ["--symlink", t.link, "/" + t.name]
    bound = bound_read_only(top, etc, readonly)
    system = [p for p in bound if p.count("/") == 1]
    for path in system:
        args += ["--ro-bind", path, path]
    copied = {name for name, _ in etc_files}
    if etc:
        args += ["--tmpfs", "/etc"]
        for name, fd in etc_files:
            if name in etc:
                args += ["--file", str(fd), "/etc/" + name]
    for name in etc:
        if name not in copied:
            args += ["--ro-bind", "/etc/" + name, "/etc/" + name]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += _proc_guards(proc_entries)
    if egress_dir is not None:
        args += ["--ro-bind", egress_dir, INSIDE_DIR]
    for b in binds:
        args += ["--bind", b.host, b.inside]
    for path in bound[len(system) + len(etc) :]:
        args += ["--ro-bind", (sources or {}).get(path, path), path]
    for h in hidden:
        if not visible_inside(h.path, bound):
            continue  # not there at all inside
        if h.is_dir:
            args += ["--tmpfs", h.path, "--remount-ro", h.path]
        else:
            args += ["--ro-bind", "/dev/null", h.path]
    if etc:  # last, so a tool folder or a hidden path under /etc still had its mount point made
        args += ["--remount-ro", "/etc"]
    args += list(NAMESPACE_FLAGS)
    if userns:  # started as an unprivileged uid: its own user namespace, uid 0 inside
        args += list(USERNS_FLAGS)
    args += ["--chdir", chdir]
    return args


def _proc_guards(present: Sequence[str]) -> list[str]:
    args: list[str] = []
    for path in PROC_READ_ONLY:
        if path in present:
            args += ["--ro-bind", path, path]
    for path in PROC_MASKED:
        if path in present:
            args += ["--ro-bind", "/dev/null", path]
    return args


def host_proc_entries() -> list[str]:
    """The entries of :data:`PROC_READ_ONLY` and :data:`PROC_MASKED` this host has."""
    return [p for p in (*PROC_READ_ONLY, *PROC_MASKED) if os.path.exists(p)]


def workdir_conflict(
    workdir: str, top: Sequence[TopEntry], readonly: Sequence[str] = ()
) -> str | None:
    """Why ``workdir`` cannot be a mount point inside, or ``None`` when it can."""
    if not workdir.startswith("/") or os.path.normpath(workdir) != workdir or workdir == "/":
        return f"workdir {workdir!r} must be a normalized absolute path other than /"
    first = Path(workdir).parts[1]
    if first in SANDBOX_MOUNTS:
        return f"workdir {workdir!r} collides with a sandbox mount"
    if first in SYSTEM_DIRS and any(t.name == first for t in top):
        return f"workdir {workdir!r} lies under the read-only host folder /{first}"
    for path in readonly:
        if _under(path, workdir) or _under(workdir, path):
            return f"workdir {workdir!r} overlaps the read-only tool folder {path}"
    return None


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


#: Pauses before the second and third probe of a failing bwrap. A sandbox start can fail
#: for a moment on a loaded host (a pids or namespace limit reached, EAGAIN); one failed
#: start must not decide that bubblewrap is unusable for the life of a worker process.
PROBE_RETRY_PAUSES = (0.25, 1.0)
#: How long a failed probe stands before bwrap is probed again. A success stands for good.
PROBE_FAILURE_TTL = 30.0

_usable: set[str] = set()
_failed: dict[str, tuple[float, str]] = {}
_probe_lock = threading.Lock()


def _probe_once(executable: str) -> str | None:
    """``None`` when bwrap started a sandbox with our flags, else why not (its own words)."""
    argv = [executable, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    argv += _proc_guards(host_proc_entries())
    argv += list(NAMESPACE_FLAGS)
    if drops():  # as a sandbox starts it: an unprivileged uid in its own user namespace
        off = userns_failure()
        if off is not None:
            return off
        argv = [*setpriv_prefix(UID_BASE), *argv, *USERNS_FLAGS]
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
    except subprocess.TimeoutExpired:
        return "the probe sandbox did not finish in 20 s"
    except OSError as exc:
        return f"{exc.strerror or exc}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1][:300] if said else f"exit status {done.returncode}"


def bwrap_failure(executable: str | None = None) -> str | None:
    """``None`` when ``executable`` (default: ``bwrap`` on PATH) starts a sandbox with our
    flags, its own network namespace included; otherwise why not.

    A failing start is tried three times (:data:`PROBE_RETRY_PAUSES`) before it counts;
    a success is remembered for the process, a failure for :data:`PROBE_FAILURE_TTL`
    seconds. Thread-safe: concurrent callers share one probe.
    """
    executable = executable or find_bwrap()
    if executable is None:
        return "not on PATH"
    if executable in _usable:
        return None
    with _probe_lock:
        if executable in _usable:
            return None
        failed = _failed.get(executable)
        if failed is not None and time.monotonic() - failed[0] < PROBE_FAILURE_TTL:
            return failed[1]
        why = _probe_once(executable)
        for pause in PROBE_RETRY_PAUSES:
            if why is None:
                break
            time.sleep(pause)
            why = _probe_once(executable)
        if why is None:
            _usable.add(executable)
            _failed.pop(executable, None)
            return None
        _failed[executable] = (time.monotonic(), why)
        return why


def prefetch_bwrap() -> None:
    """Probe ``bwrap`` (:func:`bwrap_failure`) in a thread now: a sandbox start of 10-30 ms
    that the caller's imports and checks overlap, so the first :func:`bwrap_usable` call
    finds it answered (or waits for this one probe, never starts a second)."""
    threading.Thread(target=bwrap_failure, name="pluginbench-bwrap-probe", daemon=True).start()


def bwrap_usable() -> bool:
    """Whether ``bwrap`` on PATH starts a sandbox with our flags, its own network
    namespace included (see :func:`bwrap_failure` for how often it is probed)."""
    return bwrap_failure() is None
