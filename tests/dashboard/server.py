"""Starting the real ``pluginbench dashboard`` command for tests, and raw HTTP to it."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def request(port: int, method: str, path: str, host: str | None = None, body: bytes | None = None) -> tuple[int, bytes]:
    """One request with the path sent byte for byte (no normalisation) and an explicit Host."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


@contextmanager
def dashboard(*dirs: Path, port: int | None = None) -> Iterator[int]:
    """The dashboard CLI serving ``dirs``; yields its port; Ctrl-C (SIGINT) stops it cleanly."""
    port = port or free_port()
    proc = subprocess.Popen([sys.executable, "-m", "pluginbench", "dashboard", *map(str, dirs), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ})
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"dashboard exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
            try:
                if request(port, "GET", "/")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("dashboard did not answer within 60 s")
            time.sleep(0.1)
        yield port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
