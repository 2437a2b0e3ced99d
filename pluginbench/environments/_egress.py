"""What a sandbox may reach over the network, and the host end that enforces it.

Every isolated sandbox has its own network namespace with loopback only (bubblewrap
``--unshare-net``, docker ``NetworkMode: none``). Egress, when a sandbox has any, takes
one path, the method of Anthropic's sandbox-runtime: a Unix socket bound into the
sandbox at :data:`INSIDE_DIR`, a small forwarder inside listening on the sandbox's own
``127.0.0.1`` (:mod:`._egress_forward`) and, on the host, an :class:`EgressProxy` that
serves the socket under an allow-list. No bridge, no host networking, no address outside
the sandbox's loopback is involved, so nothing else on the host (its loopback services,
the dashboard, other sandboxes) is reachable and no raw socket reaches a wire.

Policies (:class:`Egress`, pure data carried by :class:`~._port.SandboxSpec`):

* ``none``: loopback only (verifier, readiness and parse-only sandboxes by default).
* ``probe``: the sandbox's ``127.0.0.1:port`` reaches the host's ``127.0.0.1:port``,
  the loopback probe model server, and nothing else; the CLI's probe base URL works
  unchanged inside.
* ``proxy``: an HTTP ``CONNECT`` proxy at the sandbox's ``127.0.0.1:PROXY_PORT``
  (``HTTPS_PROXY`` is set for every command) that tunnels only to ``hosts`` (the model
  API hosts of the harness) or, with ``public``, to any host whose every address is a
  public one. Loopback, private, link-local, multicast and reserved addresses are refused
  in every mode, and the connection goes to the address that was checked (no second DNS
  answer can rebind it).
"""

import contextlib
import ipaddress
import os
import select
import shutil
import socket
import socketserver
import tempfile
import threading
from pathlib import Path
from typing import Any, Literal, NamedTuple

from .._serving import WakeableServing

#: where the egress folder (socket and forwarder) appears inside a sandbox
INSIDE_DIR = "/run/pluginbench"
SOCKET_NAME = "egress.sock"
FORWARDER_NAME = "forward.py"
#: the in-sandbox port of the CONNECT proxy (the sandbox's own loopback)
PROXY_PORT = 3128
_HEAD_LIMIT = 16384
#: The most connections one sandbox's egress serves at once (each takes a host thread),
#: and how long a connection may take to send its request head: the sandbox can open
#: sockets without end and leave them idle, which must not exhaust the host's threads.
MAX_CONNECTIONS = 64
HEAD_SECONDS = 30.0
MAX_REFUSALS_KEPT = 100


class Egress(NamedTuple):
    """A sandbox's network policy (see the module docstring)."""

    mode: Literal["none", "probe", "proxy"] = "none"
    #: ``probe``: the probe's port (the same inside and on the host's 127.0.0.1)
    port: int = 0
    #: ``proxy``: host names the tunnel may reach (exact, case-insensitive)
    hosts: tuple[str, ...] = ()
    #: ``proxy``: any public host is allowed too (a task that allows the web)
    public: bool = False

    @property
    def active(self) -> bool:
        return self.mode != "none"

    def describe(self) -> str:
        """The policy in words, stable across runs (no port): the plan and run identity carry it."""
        if self.mode == "probe":
            return "loopback + probe"
        if self.mode == "proxy":
            what = ", ".join(self.hosts) or "no host"
            return f"loopback + proxy to {what}" + (" + public internet" if self.public else "")
        return "loopback only"

    def inside_env(self) -> dict[str, str]:
        """Variables every command of the sandbox gets (the proxy address for ``proxy``)."""
        if self.mode != "proxy":
            return {}
        url = f"http://127.0.0.1:{PROXY_PORT}"
        return {"HTTPS_PROXY": url, "https_proxy": url, "HTTP_PROXY": url, "http_proxy": url,
                "NO_PROXY": "localhost,127.0.0.1", "no_proxy": "localhost,127.0.0.1"}

    def inside_port(self) -> int:
        """The port the in-sandbox forwarder listens on."""
        return self.port if self.mode == "probe" else PROXY_PORT


NO_EGRESS = Egress()


def policy_for(role: str, network_mode: str | None, *, probe_port: int | None,
               model_hosts: tuple[str, ...]) -> Egress:
    """The policy of a sandbox: ``role`` and the task's ``network_mode`` for that phase.

    Coding and review sandboxes reach their model (the probe, else ``model_hosts``) and,
    unless the task says ``no-network``, the public internet (WebFetch/WebSearch stay
    available; a probe run never needs it). Verifier and readiness sandboxes get nothing
    unless the task's ``network_mode`` is ``public``; then the public internet only.
    """
    web = network_mode in (None, "public") if role in ("coding", "review") else network_mode == "public"
    if role in ("coding", "review"):
        if probe_port is not None:
            return Egress("probe", port=probe_port)
        if not model_hosts and not web:
            return NO_EGRESS
        return Egress("proxy", hosts=tuple(model_hosts), public=web)
    return Egress("proxy", public=True) if web else NO_EGRESS


def network_policy(coding: Egress, verifier_mode: str | None) -> dict[str, str]:
    """The policy of a task's coding sandboxes (``coding``) and verifier and readiness
    sandboxes (from the verifier phase's ``network_mode``) in words: the plan, the
    ``task.prepared`` event and ``comparison_identity`` carry it. Pure."""
    verifier = policy_for("verifier", verifier_mode, probe_port=None, model_hosts=())
    return {"coding": coding.describe(), "verifier": verifier.describe()}


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_V4_COMPATIBLE = ipaddress.ip_network("::/96")


def public_address(addr: str) -> bool:
    """Whether ``addr`` is a globally routable unicast address (never loopback or private).

    An IPv6 address that carries an IPv4 one (mapped ``::ffff:a.b.c.d``, NAT64
    ``64:ff9b::a.b.c.d``, 6to4 ``2002:AABB:CCDD::``, Teredo, IPv4-compatible ``::a.b.c.d``)
    is public only when that IPv4 address is: a host's NAT64 or 6to4 gateway would
    otherwise carry ``64:ff9b::a9fe:a9fe`` to 169.254.169.254 or 10.x addresses."""
    try:
        ip = ipaddress.ip_address(addr.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL:
            return False
        inner = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
        if ip in _NAT64 or ip in _V4_COMPATIBLE:
            inner.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        carried = [v4 for v4 in inner if v4 is not None]
        if carried:
            return all(v4.is_global and not v4.is_multicast for v4 in carried)
    return ip.is_global and not ip.is_multicast


def allowed_host(policy: Egress, host: str) -> bool:
    """Whether ``policy`` lets a tunnel be opened to ``host`` (before address checks)."""
    host = host.lower().rstrip(".")
    return policy.public or host in {h.lower() for h in policy.hosts}


class _Handler(socketserver.BaseRequestHandler):
    server: "_Server"

    def handle(self) -> None:
        conn: socket.socket = self.request
        self.server.track(conn)
        try:
            if self.server.policy.mode == "probe":
                up = self._open("127.0.0.1", self.server.policy.port, probe=True)
                if up is not None:
                    _relay(conn, up, b"")
                return
            conn.settimeout(HEAD_SECONDS)
            head = _read_head(conn)
            if head is None:
                return
            conn.settimeout(None)
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split()
            if len(parts) != 3 or parts[0] != "CONNECT":
                self._refuse(conn, "405 Method Not Allowed", f"only CONNECT is served: {line[:80]}")
                return
            host, sep, port_text = parts[1].rpartition(":")
            host = host.strip("[]")
            if not sep or not port_text.isdigit():
                self._refuse(conn, "400 Bad Request", f"no host:port in {parts[1][:80]}")
                return
            if not allowed_host(self.server.policy, host):
                self._refuse(conn, "403 Forbidden", f"{host} is not on the allow-list")
                return
            up = self._open(host, int(port_text), probe=False)
            if up is None:
                self._refuse(conn, "403 Forbidden", f"{host} has no public address")
                return
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            _relay(conn, up, head[head.index(b"\r\n\r\n") + 4:])
        except (OSError, ValueError):
            # OSError: a peer went away. ValueError: close() cut the tunnel while this
            # thread waited on it (select() on a closed socket's fd -1). Either way the
            # tunnel is over; nothing to report.
            pass
        finally:
            self.server.untrack(conn)

    def _open(self, host: str, port: int, *, probe: bool) -> socket.socket | None:
        addrs: list[tuple[int, str]]
        if probe:
            addrs = [(int(socket.AF_INET), "127.0.0.1")]
        else:
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError:
                return None
            found = [(int(i[0]), str(i[4][0])) for i in infos]
            # Every answer must be public: a name with one private answer is refused whole.
            if not found or not all(public_address(a) for _, a in found):
                return None
            addrs = found
        for family, addr in addrs:
            # A socket of the address's own family, not create_connection: its getaddrinfo
            # of an address already numeric loads the IDNA codec (~3 ms) in the first tunnel.
            up = socket.socket(family, socket.SOCK_STREAM)
            try:
                up.settimeout(30)
                up.connect((addr, port))
                up.settimeout(None)
            except OSError:
                up.close()
                continue
            self.server.track(up)
            return up
        return None

    def _refuse(self, conn: socket.socket, status: str, why: str) -> None:
        self.server.note(why)
        body = f"PluginBench egress: {why}\n".encode()
        conn.sendall(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)


def _read_head(conn: socket.socket) -> bytes | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk or len(data) > _HEAD_LIMIT:
            return None
        data += chunk
    return data


def _relay(a: socket.socket, b: socket.socket, pending: bytes) -> None:
    if pending:
        b.sendall(pending)
    open_ends = {a: b, b: a}
    while open_ends:
        ready, _, _ = select.select(list(open_ends), [], [], 300)
        if not ready:
            break
        for src in ready:
            data = src.recv(65536)
            dst = open_ends[src]
            if data:
                dst.sendall(data)
            else:
                del open_ends[src]
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)
    b.close()


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    #: handle_request() never blocks: it runs only once the socket is readable
    timeout = 0

    def __init__(self, path: str, policy: Egress) -> None:
        self.policy = policy
        self.refused: list[str] = []
        self._open: set[socket.socket] = set()
        self._serving = 0
        self._lock = threading.Lock()
        super().__init__(path, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve in a thread of its own, unless :data:`MAX_CONNECTIONS` are open: then the
        connection is closed at once and the refusal noted."""
        with self._lock:
            busy = self._serving >= MAX_CONNECTIONS
            if not busy:
                self._serving += 1
        if busy:
            self.note(f"more than {MAX_CONNECTIONS} connections at once")
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._lock:
                self._serving -= 1

    def note(self, why: str) -> None:
        """Keep why a connection was refused (the first :data:`MAX_REFUSALS_KEPT`: a
        sandbox can be refused without end)."""
        with self._lock:
            if len(self.refused) < MAX_REFUSALS_KEPT:
                self.refused.append(why)

    def track(self, s: socket.socket) -> None:
        with self._lock:
            self._open.add(s)

    def untrack(self, s: socket.socket) -> None:
        with self._lock:
            self._open.discard(s)

    def close_all(self) -> None:
        with self._lock:
            socks, self._open = list(self._open), set()
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


def _short_parent() -> str:
    """A folder for the egress folder whose socket path fits ``sun_path`` (108 bytes): the
    temp dir when short enough (a long ``TMPDIR`` is common in CI), else ``/tmp``."""
    tmp = tempfile.gettempdir()
    return tmp if len(tmp) + len("/pb-egress-XXXXXXXX/" + SOCKET_NAME) < 100 else "/tmp"


class EgressProxy:
    """The host end of one sandbox's egress: a folder holding the Unix socket and the
    forwarder script, served by a thread until :meth:`close`.

    ``folder`` is bound read-only at :data:`INSIDE_DIR` (connecting to a socket needs no
    write access to its file system). ``refused`` lists, in order, why each refused
    tunnel was refused.
    """

    def __init__(self, policy: Egress) -> None:
        if not policy.active:
            raise ValueError("an EgressProxy needs an active policy")
        self.policy = policy
        self.folder = Path(tempfile.mkdtemp(prefix="pb-egress-", dir=_short_parent()))
        os.chmod(self.folder, 0o755)
        shutil.copyfile(Path(__file__).with_name("_egress_forward.py"), self.folder / FORWARDER_NAME)
        os.chmod(self.folder / FORWARDER_NAME, 0o644)
        path = str(self.folder / SOCKET_NAME)
        self._server = _Server(path, policy)
        os.chmod(path, 0o666)  # the image's user (any uid) must be able to connect
        # each connection served by its own thread; close() stops accepting at once
        self._serving = WakeableServing(self._server, "pb-egress")

    @property
    def refused(self) -> list[str]:
        return list(self._server.refused)

    def forwarder_argv(self, python: str = "python3") -> list[str]:
        """The in-sandbox forwarder, to prefix a command with (then ``--`` and the command)."""
        return [python, "-I", "-S", f"{INSIDE_DIR}/{FORWARDER_NAME}", str(self.policy.inside_port()),
                f"{INSIDE_DIR}/{SOCKET_NAME}"]

    def close(self) -> None:
        """Stop serving (at once, no poll to wait out), cut every open tunnel and remove
        the folder."""
        self._serving.stop(timeout=10)
        self._server.close_all()
        self._server.server_close()
        shutil.rmtree(self.folder, ignore_errors=True)
