"""A Docker Engine of its own for each Ray worker node of the test cluster.

On one machine the worker nodes would otherwise share the machine's engine, and "the
image is loaded on the node that runs the attempt" would prove nothing. So the test starts
one more real ``dockerd`` per worker node, each with its own data root (its own image
store), exec root, pid file and Unix socket, and no iptables rules (containers use the host
network or none, as PluginBench's sandboxes do). Needs root, ``dockerd`` and ``ip``; each
engine starts with an empty image store and is stopped and removed afterwards. Each remaps
users (``--userns-remap=default``, the ``dockremap`` ranges tools/start-docker.sh adds), as
PluginBench requires of an engine whose containers run sandboxes.

Each engine gets a bridge of its own (``-b pbdk<name><n>``, made here, deleted after), never
``--bridge=none``: an engine started with ``--bridge=none`` deletes the link named
``docker0`` in the network namespace it runs in, which is the machine's, so the machine's own
engine would lose its default bridge and every Dockerfile ``RUN`` step on it would fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests._prereq import require


class NodeEngine:
    """One extra engine: ``host`` is its ``unix://`` endpoint, ``bridge`` its own bridge link."""

    def __init__(self, name: str, root: Path, proc: subprocess.Popen[bytes], bridge: str) -> None:
        self.name, self.root, self.proc, self.bridge = name, root, proc, bridge
        self.host = f"unix://{root}/docker.sock"

    def docker(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["docker", "-H", self.host, *args], capture_output=True, text=True, timeout=300)

    def answers(self) -> bool:
        try:
            return self.docker("version", "--format", "{{.Server.Version}}").returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def image_ids(self) -> set[str]:
        out = self.docker("images", "-q", "--no-trunc").stdout
        return set(out.split())


def engines_usable() -> bool:
    return os.geteuid() == 0 and all(shutil.which(tool) for tool in ("dockerd", "docker", "ip"))


def host_links() -> set[str]:
    """The network links of the machine's namespace (``docker0`` among them when its engine runs)."""
    return set(os.listdir("/sys/class/net"))


def _bridge_for(name: str) -> str:
    """A bridge link of this engine's own (at most 15 characters, unique per process)."""
    bridge = f"pbdk{name}{os.getpid() % 100000}"[:15]
    subprocess.run(["ip", "link", "del", bridge], capture_output=True, timeout=30)  # a leftover of a killed run
    made = subprocess.run(["ip", "link", "add", "name", bridge, "type", "bridge"], capture_output=True, text=True, timeout=30)
    if made.returncode != 0:
        raise AssertionError(f"cannot make bridge {bridge} for node {name}'s engine: {made.stderr.strip()}")
    return bridge


def _storage_driver() -> str:
    """The machine engine's storage driver (overlay2, or vfs where overlay is unusable)."""
    out = subprocess.run(["docker", "info", "--format", "{{.Driver}}"], capture_output=True, text=True, timeout=60)
    return out.stdout.strip() or "vfs"


def _start(name: str, driver: str) -> NodeEngine:
    root = Path(tempfile.mkdtemp(prefix=f"pbdk-{name}-", dir="/tmp"))  # short: socket path length limit
    root.chmod(0o711)  # the remapped root must be able to pass through the data root's parents
    bridge = _bridge_for(name)
    log = open(root / "dockerd.log", "wb")  # noqa: SIM115 - kept open for the daemon's life
    proc = subprocess.Popen(
        ["dockerd", "--data-root", str(root / "data"), "--exec-root", str(root / "exec"),
         "--pidfile", str(root / "dockerd.pid"), "-H", f"unix://{root}/docker.sock",
         "-b", bridge, "--iptables=false", "--ip-masq=false", f"--storage-driver={driver}",
         "--userns-remap=default"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
    )
    engine = NodeEngine(name, root, proc, bridge)
    deadline = time.monotonic() + 90
    while not engine.answers():
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop(engine)
            raise AssertionError(f"dockerd for node {name} did not start: "
                                 + (root / "dockerd.log").read_text(errors="replace")[-2000:])
        time.sleep(0.5)
    return engine


def _stop(engine: NodeEngine) -> None:
    """Stop the engine we started (by its own pid) and remove its folders."""
    if engine.proc.poll() is None:
        engine.proc.send_signal(signal.SIGTERM)
        try:
            engine.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            engine.proc.kill()
            engine.proc.wait(timeout=30)
    _unmount_under(engine.root)
    shutil.rmtree(engine.root, ignore_errors=True)
    subprocess.run(["ip", "link", "del", engine.bridge], capture_output=True, timeout=30)


def _unmount_under(root: Path) -> None:
    """dockerd leaves mounts under its exec root (``exec/netns/default``, an nsfs bind);
    unmount everything below ``root`` (deepest first) so the folder can be removed."""
    with open("/proc/self/mounts") as fh:
        points = [line.split()[1] for line in fh]
    prefix = str(root) + "/"
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, timeout=30)


@contextmanager
def node_engines(names: tuple[str, ...] = ("a", "b")) -> Iterator[dict[str, NodeEngine]]:
    """One started engine per worker node name; all stopped and removed after."""
    require(engines_usable(), "root, dockerd and ip (iproute2), to give each Ray worker node its own Docker Engine")
    driver = _storage_driver()
    started: dict[str, NodeEngine] = {}
    try:
        for name in names:
            started[name] = _start(name, driver)
        yield started
    finally:
        for engine in started.values():
            _stop(engine)
