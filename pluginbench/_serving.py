"""A socketserver loop that stops the moment it is told to.

``socketserver``'s own ``serve_forever``/``shutdown`` pair stops at the loop's next poll,
so every stop waited out up to a whole ``poll_interval`` (0.05 s for the probe, 0.5 s by
default): wall time a one-attempt run paid at its end. :class:`WakeableServing` serves in
a thread of its own and stops through a pipe it selects on beside the listening socket.
"""

from __future__ import annotations

import os
import selectors
import socketserver
import threading


class WakeableServing:
    """Serve ``server`` (each connection as the server's class handles it) in a daemon
    thread named ``name`` until :meth:`stop`; :meth:`stop` returns once the loop has
    ended, without any poll to wait out. One use: start once, stop once (idempotent)."""

    def __init__(self, server: socketserver.TCPServer, name: str) -> None:
        self._server = server
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(self._server.fileno(), selectors.EVENT_READ)
            sel.register(self._wake_r, selectors.EVENT_READ)
            while True:
                ready = {key.fd for key, _ in sel.select()}
                if self._wake_r in ready:
                    return
                self._server.handle_request()  # readable: accept returns at once

    def stop(self, timeout: float | None = None) -> None:
        """End the loop (at once) and wait up to ``timeout`` seconds for its thread."""
        if self._wake_w < 0:
            return
        os.write(self._wake_w, b"x")
        self._thread.join(timeout)
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self._wake_r = self._wake_w = -1
