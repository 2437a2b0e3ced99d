"""The in-sandbox end of the egress path (stdlib only; runs under the sandbox's python3).

Usage: ``python3 -I -S _egress_forward.py PORT SOCKET [-- COMMAND...]``.

It listens on the sandbox's own ``127.0.0.1:PORT`` (its network namespace has nothing
but loopback) and relays every connection to the Unix socket ``SOCKET``, bound in from
the host, where PluginBench's allow-list proxy answers. With a command, the listening
socket is open before the command starts (no race), the relay runs in a forked child
with its standard streams on ``/dev/null`` (so it never holds the command's output
open), and this process becomes the command (``execvp``): the command's pid, exit code
and signals are its own. Without a command it serves in the foreground (the docker
backend starts it once per container).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _relay(conn: socket.socket, path: str) -> None:
    try:
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        up.connect(path)
    except OSError:
        conn.close()
        return
    t = threading.Thread(target=_pump, args=(up, conn), daemon=True)
    t.start()
    _pump(conn, up)
    t.join()
    conn.close()
    up.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=_relay, args=(conn, path), daemon=True).start()


def main(argv: list[str]) -> None:
    port, path, command = int(argv[1]), argv[2], argv[4:] if len(argv) > 3 and argv[3] == "--" else []
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    if not command:
        _serve(listener, path)
        return
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            _serve(listener, path)
        finally:
            os._exit(0)
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv)
