"""The in-sandbox end of the egress path (stdlib only; runs under the sandbox's python3).

Usage: ``python3 -I -S _egress_forward.py PORT SOCKET [-- COMMAND...]``.

It listens on the sandbox's own ``127.0.0.1:PORT`` (its network namespace has nothing
but loopback) and relays every connection to the Unix socket ``SOCKET``, bound in from
the host, where PluginBench's allow-list proxy answers. With a command, the listening
socket is open before the command starts (no race), the relay runs in a forked child
with its standard streams on ``/dev/null`` (so it never holds the command's output
open), and this process becomes the command (``execvp``): the command's pid, exit code
and signals are its own. The docker backend starts it once per container with the
command ``true``: that exec ends once the port listens, and the relay lives on under the
container's init. Without a command it serves in the foreground.
"""

from __future__ import annotations

# The C modules under ``socket``, ``threading`` and ``os``: the forwarder starts before
# every command of a local sandbox with egress, and importing the Python wrappers (enum,
# selectors, collections; ``os`` alone pulls stat, posixpath and _collections_abc, which
# ``python3 -S`` does not load) was most of its start-up.
import _socket
import _thread
import posix
import sys


def _pump(src: _socket.socket, dst: _socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:  # noqa: SIM105 - contextlib would be one more import at every start
            dst.shutdown(_socket.SHUT_WR)
        except OSError:
            pass


def _relay(fd: int, path: str) -> None:
    conn = _socket.socket(fileno=fd)
    try:
        up = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        up.connect(path)
    except OSError:
        conn.close()
        return
    back_done = _thread.allocate_lock()
    back_done.acquire()

    def back() -> None:
        try:
            _pump(up, conn)
        finally:
            back_done.release()

    _thread.start_new_thread(back, ())
    _pump(conn, up)
    back_done.acquire()
    conn.close()
    up.close()


def _serve(listener: _socket.socket, path: str) -> None:
    while True:
        fd, _ = listener._accept()  # type: ignore[attr-defined]  # the C socket's accept: (fd, address)
        _thread.start_new_thread(_relay, (fd, path))


def _execvp(command: list[str]) -> None:
    """``os.execvp`` without ``os``: the first ``PATH`` entry that runs ``command[0]``; the
    first error other than not-found, else the last, is raised."""
    enc, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    name = command[0].encode(enc, errors)
    if b"/" in name:
        posix.execv(name, command)
    first: OSError | None = None
    last: OSError | None = None
    for folder in posix.environ.get(b"PATH", b"/bin:/usr/bin").split(b":"):
        try:
            posix.execv(folder + b"/" + name if folder else name, command)
        except (FileNotFoundError, NotADirectoryError) as exc:
            last = exc
        except OSError as exc:
            last = exc
            first = first or exc
    raise first or last or FileNotFoundError(2, "No such file or directory")


def main(argv: list[str]) -> None:
    port, path, command = int(argv[1]), argv[2], argv[4:] if len(argv) > 3 and argv[3] == "--" else []
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    if not command:
        _serve(listener, path)
        return
    if posix.fork() == 0:
        null = posix.open("/dev/null", posix.O_RDWR)
        for fd in (0, 1, 2):
            posix.dup2(null, fd)
        try:
            _serve(listener, path)
        finally:
            posix._exit(0)
    listener.close()
    try:
        _execvp(command)
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
        posix._exit(127)


if __name__ == "__main__":
    main(sys.argv)
