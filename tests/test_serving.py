"""The socketserver loop that stops at once (pluginbench._serving)."""

from __future__ import annotations

import socket
import socketserver
import threading

from pluginbench._serving import WakeableServing


class _Echo(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.wfile.write(self.rfile.readline().upper())


def _server() -> socketserver.ThreadingTCPServer:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    return server


def test_serves_each_connection_until_stopped_and_then_accepts_none():
    """Connections are served while it runs; after stop its thread has ended and nothing is accepted."""
    server = _server()
    serving = WakeableServing(server, "test-serving")
    try:
        for word in (b"one\n", b"two\n"):
            with socket.create_connection(server.server_address, timeout=5) as conn:
                conn.sendall(word)
                assert conn.makefile("rb").readline() == word.upper()
        serving.stop(timeout=5)
        assert not any(t.name == "test-serving" and t.is_alive() for t in threading.enumerate())
    finally:
        server.server_close()
    try:
        socket.create_connection(server.server_address, timeout=1).close()
    except OSError:
        pass
    else:
        raise AssertionError("a closed server still accepted a connection")


def test_a_second_stop_does_nothing():
    """stop() is idempotent: the second call neither raises nor writes to a closed pipe."""
    server = _server()
    serving = WakeableServing(server, "test-serving-2")
    serving.stop(timeout=5)
    serving.stop(timeout=5)
    server.server_close()
    assert not serving._thread.is_alive()
