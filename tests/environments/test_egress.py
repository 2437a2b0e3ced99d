"""The network policy values, the seccomp program and the host end of a sandbox's egress."""

from __future__ import annotations

import errno
import os
import socket
import threading
from pathlib import Path

import pytest

from pluginbench.environments import (
    NO_EGRESS,
    Egress,
    EgressProxy,
    LocalEnvironment,
    SandboxSpec,
    _seccomp,
    policy_for,
)
from pluginbench.environments._egress import allowed_host, public_address
from tests._prereq import require


def test_policy_follows_role_and_network_mode():
    """Coding reaches the probe or the model hosts (plus the web unless no-network); a verifier gets nothing
    unless its network_mode is public."""
    hosts = ("api.anthropic.com",)
    assert policy_for("coding", "no-network", probe_port=4000, model_hosts=hosts) == Egress("probe", port=4000)
    assert policy_for("coding", "no-network", probe_port=None, model_hosts=hosts) == Egress("proxy", hosts=hosts)
    assert policy_for("coding", None, probe_port=None, model_hosts=hosts) == Egress("proxy", hosts=hosts, public=True)
    assert policy_for("verifier", None, probe_port=None, model_hosts=()) == NO_EGRESS
    assert policy_for("verifier", "no-network", probe_port=None, model_hosts=()) == NO_EGRESS
    assert policy_for("readiness", "public", probe_port=None, model_hosts=()) == Egress("proxy", public=True)
    assert Egress("probe", port=4000).describe() == "loopback + probe"
    assert NO_EGRESS.describe() == "loopback only" and NO_EGRESS.inside_env() == {}
    assert Egress("proxy", hosts=hosts).inside_env()["HTTPS_PROXY"] == "http://127.0.0.1:3128"


def test_only_public_addresses_and_listed_hosts_pass():
    """Loopback, private, link-local and mapped-private addresses are never public; a host must be listed
    unless the policy allows the web."""
    for addr in ("127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.1.1", "::1", "fe80::1",
                 "::ffff:127.0.0.1", "0.0.0.0", "224.0.0.1", "not-an-ip"):
        assert not public_address(addr), addr
    assert public_address("1.1.1.1") and public_address("2606:4700::1111")
    proxy = Egress("proxy", hosts=("api.anthropic.com",))
    assert allowed_host(proxy, "API.anthropic.com.") and not allowed_host(proxy, "example.com")
    assert allowed_host(Egress("proxy", public=True), "example.com")


def test_ipv6_addresses_carrying_a_private_ipv4_address_are_not_public():
    """NAT64, 6to4, IPv4-compatible and Teredo addresses are public only when the IPv4 address they carry is
    (a host's NAT64 gateway would take 64:ff9b::a9fe:a9fe to 169.254.169.254)."""
    for addr in ("64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b:1::101:101",
                 "2002:7f00:1::", "2002:a00:1::1", "::127.0.0.1", "::a00:1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"):
        assert not public_address(addr), addr
    assert public_address("64:ff9b::101:101") and public_address("2002:101:101::1")


def test_seccomp_program_refuses_keyring_and_foreign_abis():
    """The filter returns EPERM for keyctl/add_key/request_key and unshare, and for any x32 or i386 call; other
    calls are allowed (checked with a BPF interpreter)."""
    prog = _seccomp.program("x86_64")
    x86, i386 = 0xC000003E, 0x40000003
    eperm = _seccomp.RET_ERRNO | errno.EPERM
    for nr in (250, 248, 249, 272):
        assert _seccomp.run(prog, nr, x86) == eperm, nr
    for nr in (0, 1, 59, 231, 251, 308 - 1):
        assert _seccomp.run(prog, nr, x86) == _seccomp.RET_ALLOW, nr
    assert _seccomp.run(prog, 0x40000000 + 1, x86) == eperm
    assert _seccomp.run(prog, 1, i386) == eperm
    arm = _seccomp.program("aarch64")
    assert _seccomp.run(arm, 219, 0xC00000B7) == eperm and _seccomp.run(arm, 63, 0xC00000B7) == _seccomp.RET_ALLOW
    assert len(_seccomp.program_bytes("x86_64")) == 8 * len(prog)


def test_seccomp_program_refuses_a_clone_into_new_namespaces():
    """A clone asking for any new namespace gets EPERM and clone3 ENOSYS (so libc falls back to clone),
    while a plain fork or thread clone is allowed, on both machines (checked with the BPF interpreter)."""
    eperm, enosys = _seccomp.RET_ERRNO | errno.EPERM, _seccomp.RET_ERRNO | errno.ENOSYS
    for machine, arch, clone in (("x86_64", 0xC000003E, 56), ("aarch64", 0xC00000B7, 220)):
        prog = _seccomp.program(machine)
        for flag in (0x10000000, 0x00020000, 0x40000000, 0x20000000 | 17):
            assert _seccomp.run(prog, clone, arch, flag) == eperm, (machine, hex(flag))
        assert _seccomp.run(prog, clone, arch, 0x01200011) == _seccomp.RET_ALLOW  # fork: CHILD_*TID | SIGCHLD
        assert _seccomp.run(prog, clone, arch, 0x003D0F00) == _seccomp.RET_ALLOW  # a pthread
        assert _seccomp.run(prog, 435, arch) == enosys


@pytest.mark.anyio
async def test_a_bubblewrap_sandbox_cannot_clone_into_a_user_namespace(tmp_path):
    """Inside bubblewrap, clone(CLONE_NEWUSER) is refused (a child there held every capability of its
    own namespace), while fork and threads still work."""
    from pluginbench.environments import bwrap_available

    require(bool(bwrap_available()) and _seccomp.supported(), "bubblewrap with the seccomp filter")
    probe = ("import ctypes, os, signal, threading; libc = ctypes.CDLL(None, use_errno=True); "
             "libc.syscall.restype = ctypes.c_long; "
             "pid = libc.syscall(56 if os.uname().machine == 'x86_64' else 220, 0x10020000 | signal.SIGCHLD, 0, 0, 0, 0); "
             "pid == 0 and os._exit(0); pid > 0 and os.waitpid(pid, 0); "
             "t = threading.Thread(target=print, args=('thread',)); t.start(); t.join(); "
             "print('newuser', 'refused' if pid < 0 and ctypes.get_errno() == 1 else 'ALLOWED'); "
             "print('fork', 'ok' if os.fork() or os._exit(0) else '')")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = LocalEnvironment(isolation="bubblewrap", root=tmp_path / "boxes")
    async with env.sandbox(SandboxSpec(run_id="r", attempt_id="a", role="coding", task="t", workspace=ws)) as sb:
        r = await sb.exec(["python3", "-c", probe], timeout=60)
    assert r.stdout.split() == [b"thread", b"newuser", b"refused", b"fork", b"ok"], (r.stdout, r.stderr)


def _ask(proxy: EgressProxy, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(proxy.folder / "egress.sock"))
        s.sendall(request)
        return s.recv(4096)


def test_idle_connections_cannot_exhaust_the_hosts_threads(monkeypatch):
    """A sandbox that opens hundreds of egress connections and sends nothing gets at most
    MAX_CONNECTIONS served at once (one host thread each), the rest closed at once, an idle
    one is dropped after HEAD_SECONDS, and the proxy still answers afterwards."""
    from pluginbench.environments import _egress

    monkeypatch.setattr(_egress, "HEAD_SECONDS", 1.0)
    proxy = EgressProxy(Egress("proxy", hosts=("api.anthropic.com",)))
    before = threading.active_count()
    socks = []
    try:
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX)
            s.connect(str(proxy.folder / "egress.sock"))
            socks.append(s)
        while len(proxy.refused) < min(300 - _egress.MAX_CONNECTIONS, _egress.MAX_REFUSALS_KEPT):
            threading.Event().wait(0.05)
        assert threading.active_count() - before <= _egress.MAX_CONNECTIONS
        assert len(proxy.refused) == _egress.MAX_REFUSALS_KEPT
        socks[-1].settimeout(10)
        assert socks[-1].recv(1) == b""  # closed by the proxy, not left waiting
        socks[0].settimeout(10)
        assert socks[0].recv(1) == b""  # the idle one was dropped at its head deadline
        for s in socks:
            s.close()
        assert b" 403 " in _ask(proxy, b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
    finally:
        for s in socks:
            s.close()
        proxy.close()


def test_connect_proxy_refuses_unlisted_hosts_and_loopback_even_when_public():
    """The host proxy answers 403 to a host off the allow-list and to a name or address that is loopback,
    even with the web allowed, and 405 to anything but CONNECT."""
    listed = EgressProxy(Egress("proxy", hosts=("api.anthropic.com",)))
    public = EgressProxy(Egress("proxy", public=True))
    try:
        assert b" 403 " in _ask(listed, b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n")
        assert b" 405 " in _ask(listed, b"GET http://example.com/ HTTP/1.1\r\n\r\n")
        for target in (b"127.0.0.1:8765", b"localhost:8765", b"[::1]:8765", b"10.0.0.1:443"):
            assert b" 403 " in _ask(public, b"CONNECT " + target + b" HTTP/1.1\r\n\r\n"), target
        assert "example.com is not on the allow-list" in listed.refused
    finally:
        listed.close()
        public.close()
    assert not listed.folder.exists()


def test_probe_forwarder_reaches_only_the_probe_port():
    """A probe policy relays a connection to the host's 127.0.0.1 probe port, byte for byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def echo() -> None:
        conn, _ = server.accept()
        conn.sendall(conn.recv(100).upper())
        conn.close()

    threading.Thread(target=echo, daemon=True).start()
    proxy = EgressProxy(Egress("probe", port=port))
    try:
        assert _ask(proxy, b"hello") == b"HELLO"
    finally:
        proxy.close()
        server.close()


def test_relaying_to_the_probe_loads_no_name_codec() -> None:
    """The forwarder connects to its numeric address directly, so the first relay loads no IDNA codec (a name lookup's cost in every run's first model call)."""
    import subprocess
    import sys

    code = ("import socket, sys, threading\n"
            "from pluginbench.environments import Egress, EgressProxy\n"
            "from tests.environments.test_egress import _ask\n"
            "server = socket.socket(); server.bind(('127.0.0.1', 0)); server.listen()\n"
            "def echo():\n"
            "    conn, _ = server.accept(); conn.sendall(conn.recv(100).upper()); conn.close()\n"
            "threading.Thread(target=echo, daemon=True).start()\n"
            "proxy = EgressProxy(Egress('probe', port=server.getsockname()[1]))\n"
            "print(_ask(proxy, b'hi').decode(), 'encodings.idna' in sys.modules)\n"
            "proxy.close()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["HI", "False"]


@pytest.mark.anyio
async def test_sandbox_reaches_the_probe_but_not_another_host_port(tmp_path: Path):
    """Inside a bubblewrap sandbox with a probe policy the probe's port answers on 127.0.0.1 and a second host
    loopback service is refused; /proc/sys is read-only and keyctl fails with EPERM."""
    from pluginbench.environments import bwrap_available

    require(bwrap_available(), "bubblewrap")
    servers = []
    for reply in (b"probe", b"canary"):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        servers.append(s)

        def serve(sock=s, text=reply) -> None:
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:
                    return
                conn.sendall(text)
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
    probe_port, canary_port = (s.getsockname()[1] for s in servers)
    (tmp_path / "ws").mkdir()
    spec = SandboxSpec(run_id="r", attempt_id="a", role="coding", task="t", workspace=tmp_path / "ws",
                       egress=Egress("probe", port=probe_port))
    script = (
        "import socket,ctypes,errno\n"
        f"for port in ({probe_port},{canary_port}):\n"
        "    try:\n"
        "        s=socket.create_connection(('127.0.0.1',port),timeout=3); print(port, s.recv(10).decode())\n"
        "    except OSError as e: print(port, 'refused', e.errno)\n"
        "try: open('/proc/sys/kernel/core_pattern','a'); print('core_pattern writable')\n"
        "except OSError as e: print('core_pattern', e.errno)\n"
        "l=ctypes.CDLL(None,use_errno=True); r=l.syscall(250,0,-3,1,0,0); print('keyctl', r, ctypes.get_errno())\n"
    )
    try:
        async with LocalEnvironment("bubblewrap", root=tmp_path / "boxes").sandbox(spec) as sb:
            r = await sb.exec(["python3", "-c", script], timeout=60)
    finally:
        for s in servers:
            s.close()
    assert r.exit_code == 0, r.stderr
    # /proc/sys is read-only (EROFS); as root the sandbox is also a uid that may not write it (EACCES)
    core = errno.EACCES if os.geteuid() == 0 else errno.EROFS
    assert r.stdout.decode().splitlines() == [
        f"{probe_port} probe", f"{canary_port} refused {errno.ECONNREFUSED}",
        f"core_pattern {core}", f"keyctl -1 {errno.EPERM}",
    ]
